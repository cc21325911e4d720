/* qwen35.h — the Qwen3.5 text decoder (spec §2–§3): weights in one internal form whatever file
   they came from, the per-sequence state (KV cache of the full-attention layers, conv and
   recurrent state of the GDN layers), and the forward pass.

   Internal form (lm/load.c converts to it):
     - RMSNorm weights are f32 with the zero-centred +1 folded in (spec §2.3), as GGUF stores them;
       the gated GDN norm weight is a plain f32 scale.
     - ssm_a is f32 −exp(A_log) (spec §2.5 step 4); dt_bias f32; conv weight f32 {K, conv_dim}.
     - Matrices keep the file's dtype and are used in place where the backend can (CPU + mmap).
     - Value heads stay in the file's order: HF checkpoints group value heads by key head
       (v-head j reads key head j/(Hv/Hk)); llama.cpp GGUFs tile them (j reads j mod Hk,
       spec §11.4 item 6). `v_tiled` tells the GDN op which; every V-side tensor of one file is
       in one order, so nothing is reordered (reordering ssm_out's input columns is impossible
       for K-quant blocks that span two heads). */
#ifndef SEER_LM_QWEN35_H
#define SEER_LM_QWEN35_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/backend.h"
#include "core/gguf.h"
#include "core/safetensors.h"
#include "lm/config.h"

struct qwen35_layer {
    bool is_attn;
    tensor attn_norm;  /* f32 {H} (+1 folded) */
    tensor post_norm;  /* f32 {H} (+1 folded) */
    tensor ffn_gate;   /* {H, I} */
    tensor ffn_up;     /* {H, I} */
    tensor ffn_down;   /* {I, H} */
    /* Gated DeltaNet (spec §2.5) */
    tensor ssm_qkv;    /* {H, conv_dim}: q | k | v blocks */
    tensor ssm_z;      /* {H, value_dim} output gate */
    tensor ssm_beta;   /* {H, Hv} */
    tensor ssm_alpha;  /* {H, Hv} */
    tensor ssm_conv;   /* f32 {K, conv_dim} */
    tensor ssm_dt;     /* f32 {Hv} */
    tensor ssm_a;      /* f32 {Hv} = −exp(A_log) */
    tensor ssm_norm;   /* f32 {dv} gated RMSNorm scale */
    tensor ssm_out;    /* {value_dim, H} */
    /* gated full attention (spec §2.6) */
    tensor attn_q;     /* {H, 2·nh·hd}: per head [q | gate] */
    tensor attn_k;     /* {H, nkv·hd} */
    tensor attn_v;     /* {H, nkv·hd} */
    tensor attn_o;     /* {nh·hd, H} */
    tensor q_norm;     /* f32 {hd} (+1 folded) */
    tensor k_norm;     /* f32 {hd} (+1 folded) */
};

typedef struct qwen35_model {
    struct qwen35_config cfg;
    backend *be;
    bool v_tiled;            /* value heads in llama.cpp's tiled order (GGUF with Hv > Hk) */
    tensor tok_embd;         /* {H, V} */
    tensor output_norm;      /* f32 {H} (+1 folded) */
    const tensor *output;    /* {H, V}: &output_own, or &tok_embd when tied */
    tensor output_own;
    struct qwen35_layer *layers; /* [n_layer] */
    /* ownership: buffers holding weights, and the file handles whose mappings they may borrow */
    backend_buffer **bufs;
    size_t n_bufs, cap_bufs;
    gguf *gguf_file;         /* the GGUF the model came from, or NULL */
    safetensors *st_file;    /* the HF directory's safetensors, or NULL */
} qwen35_model;

struct segment;

/* Per-sequence state. Positions continue across calls: a second call continues the sequence
   (multi-turn chat never re-processes earlier turns). After an image, MRoPE positions run ahead
   of or behind the token count; pos_next − n_past is the rope delta later text keeps (spec §3.2). */
typedef struct qwen35_state {
    int64_t n_ctx;       /* KV capacity in tokens */
    int64_t n_past;      /* tokens processed so far */
    int64_t pos_next;    /* MRoPE position of the next token (n_past + rope_delta, spec §3.2) */
    int64_t n_ubatch;    /* tokens per micro-batch */
    enum dtype kv_type;           /* of the KV cache: F32, F16 or Q8_0 (qwen35_state_create_kv) */
    tensor *k_cache, *v_cache;    /* per layer (attention layers only): kv_type {hd, nkv, n_ctx} */
    tensor *conv_state;           /* per layer (GDN layers only): f32 {conv_dim, K−1} */
    tensor *ssm_state;            /* per layer (GDN layers only): f32 {dv, dk, Hv} */
    tensor x;                     /* residual stream f32 {H, n_ubatch} */
    tensor logits;                /* f32 {V, n_ubatch} */
    tensor ids, pos;              /* i32 {n_ubatch}, i32 {n_ubatch, 3} */
    int32_t *pos_host;            /* [3·n_ubatch]: one micro-batch's positions, staged for `pos` */
    struct segment *seg;          /* [n_ubatch]: which sequence each run of rows belongs to (lm/layers.h) */
    float **head_dst;             /* [n_ubatch]: where each row the head reads puts its logits */
    arena scratch;                /* per-layer intermediates, reset after each layer */
    backend_buffer **bufs;
    int n_bufs;
} qwen35_state;

/* Which logits a forward call returns. */
enum qwen35_logits { QWEN35_LOGITS_NONE, QWEN35_LOGITS_LAST, QWEN35_LOGITS_ALL };

/* Loads a GGUF text model or an HF model directory onto `be` (borrowed; must outlive the model).
   Checks the configuration and every tensor's shape first. */
int qwen35_load(const char *path, backend *be, qwen35_model **out);
/* The configuration alone (seer_model_params.vocab_only): cfg, and for a GGUF the open file whose
   metadata holds the tokenizer; no weight is read or placed (layers NULL, be NULL), and an HF
   directory's safetensors are not opened. */
int qwen35_load_config(const char *path, qwen35_model **out);
void qwen35_free(qwen35_model *m);

/* What a sequence state occupies on the device (qwen35_state_create allocates exactly these;
   lm/plan.c adds them up with the weights). */
struct qwen35_state_bytes {
    uint64_t kv_per_1k;  /* K and V of every attention layer for 1024 tokens (spec §2.6), in the
                            cache type asked for */
    uint64_t gdn;        /* recurrent state [Hv, dk, dv] + conv window of every GDN layer (f32, §2.5) */
    uint64_t scratch;    /* per-layer arena, residual stream, logits rows, ids and positions */
};
/* Sizes for micro-batches of n_ubatch tokens on a backend aligning tensors to `alignment`, with
   an f32 KV cache (qwen35_state_create's) or one of kv_type (qwen35_state_create_kv's). */
void qwen35_state_bytes(const struct qwen35_config *c, int64_t n_ubatch, size_t alignment,
                        struct qwen35_state_bytes *out);
void qwen35_state_bytes_kv(const struct qwen35_config *c, enum dtype kv_type, int64_t n_ubatch, size_t alignment,
                           struct qwen35_state_bytes *out);

/* n_ctx: KV capacity; n_ubatch: tokens per forward micro-batch (≥ 1). SEER_ENOMEM with the numbers,
   before anything is allocated, when the state does not fit the backend's free memory. */
int qwen35_state_create(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, qwen35_state **out);
/* The same with the KV cache in kv_type: F32 (what the fidelity tests use), F16 (half the memory;
   keys and values rounded to 11 significant bits, as llama.cpp's default cache) or Q8_0 (about a
   quarter: 32 values per f16 scale and 32 int8, as llama.cpp's q8_0 cache; head dim a multiple of
   32) — each read by every backend's attention op in place. Other types: SEER_EUNSUPPORTED. */
int qwen35_state_create_kv(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, enum dtype kv_type,
                           qwen35_state **out);
/* Only the conv windows and recurrent states of the GDN layers (no KV cache, no workspace): where
   qwen35_eval_mark copies a sequence's state mid-pass. Freed by qwen35_state_free. */
int qwen35_state_create_recurrent(const qwen35_model *m, qwen35_state **out);
void qwen35_state_free(qwen35_state *st);
/* Back to an empty sequence (zero recurrent and conv state, n_past = 0). */
int qwen35_state_reset(const qwen35_model *m, qwen35_state *st);

/* The decoder's input is a sequence of embedding rows: token rows come from qwen35_embed, image
   and video rows from the vision merger (spec §4.6), so both enter the decoder the same way. */

/* Embeds n token ids (each checked against the vocabulary first) into emb, f32 {H, ≥n} on m->be:
   row t = tok_embd[ids[t]] (spec §2.1). The ids pass through st's staging tensor, n_ubatch at a
   time; st's sequence is not changed. */
int qwen35_embed(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n, tensor *emb);

/* Runs the n rows of emb (f32 {H, n} on m->be) through the decoder, continuing the state, in
   micro-batches of st->n_ubatch. `pos` gives the three MRoPE axes per row as pos[a*n + t] (spec
   §3.2), or NULL for text positions continuing from st->pos_next; afterwards st->pos_next is one
   past the largest position used. Logits (n_vocab floats per returned row) go to `logits` (LAST:
   n_vocab floats; ALL: n·n_vocab; NONE: may be NULL). `chunked` selects the GDN form for
   multi-row calls (the recurrent form is always used for a single row). */
int qwen35_forward(const qwen35_model *m, qwen35_state *st, const tensor *emb, const int32_t *pos,
                   enum qwen35_logits which, float *logits, bool chunked);

/* Text only: qwen35_embed then qwen35_forward with text positions, micro-batch by micro-batch,
   embedding straight into the residual stream (no buffer of n rows). */
int qwen35_eval(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n,
                enum qwen35_logits which, float *logits, bool chunked);

/* A point inside a qwen35_eval_mark call: what the state was after the first `at` ids. */
struct qwen35_mark {
    int64_t at;          /* 1..n */
    qwen35_state *rec;   /* gets the conv windows and recurrent states then (qwen35_state_create_recurrent),
                            and the n_past and pos_next they go with */
    float *logits;       /* gets the logits of id at−1 (n_vocab floats) */
};
/* qwen35_eval, also copying out the state at mk's point (or none: mk NULL) without a pass of its
   own: the rows before and after it are two segments of the same micro-batch (lm/layers.h). The KV
   rows before the point are the state's own rows [0, rec->n_past), which later rows never change,
   so a caller can rebuild the whole state there (a chat's turn point, api/generate.c). */
int qwen35_eval_mark(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n,
                     enum qwen35_logits which, float *logits, bool chunked, const struct qwen35_mark *mk);

/* Feeds several sequences in one pass over the weights (issue #13 item 5; a batch's prompts and
   replies together): sequence seqs[i] takes counts[i] ≥ 1 token ids (counts NULL: one each), the
   ids of sequence i following those of sequence i−1 in `ids`, at its own next text positions
   (pos_next onward on all three MRoPE axes, spec §3.2), and the logits of its last row (n_vocab
   floats) go to logits + i*n_vocab. Each sequence keeps its own KV cache, conv and recurrent
   state. `ws` lends its workspace (scratch arena, residual stream, logits staging, ids, positions)
   and needs ws->n_ubatch >= the rows of all sequences together; it may be one of seqs. Sequences
   must be distinct, each with room for its rows; all are checked before any state changes.
   One sequence of one row is the same computation as qwen35_eval of one token; a sequence of
   several rows takes the chunked GDN form, as a prompt does.
   Every weight matrix is read once for all rows; only the conv window, the delta rule and the
   attention over each sequence's own cache run per sequence. Sequences may differ in n_past,
   rope delta and KV cache type, and may join or leave between calls (any set of states created
   for m). `marks` (NULL, or [n] where a NULL rec means none): sequence i's state after its first
   marks[i].at rows (1..counts[i]) is copied out as qwen35_eval_mark copies it, within the same
   pass (a batch feeding a chat prompt past its turn point, api/batch.c). Errors: SEER_EINVAL
   (arguments; nothing changed), or a backend error mid-pass, after which the sequences' states
   (and the marks') are undefined (reset them). */
int qwen35_feed_batch(const qwen35_model *m, qwen35_state *ws, qwen35_state *const *seqs, const int32_t *ids,
                      const int64_t *counts, int n, float *logits, const struct qwen35_mark *marks);
/* One token for each of n sequences: qwen35_feed_batch with counts NULL. */
int qwen35_decode_batch(const qwen35_model *m, qwen35_state *ws, qwen35_state *const *seqs,
                        const int32_t *ids, int n, float *logits);

#endif
