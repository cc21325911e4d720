/* randmodel.h — random-weight Qwen3.5 text models of the real shapes (spec §1.1), written as GGUF
   files with llama.cpp's conventions (spec §11.2–§11.4: `qwen35.*` keys, `blk.N.*` names, norms
   stored +1, ssm_a = −exp(A_log), conv1d {K, conv_dim}; the same keys tests/reference/hf2gguf.py
   writes), so seer and llama.cpp can be benchmarked on the same file without downloading weights.
   The tokenizer section is a valid byte-level BPE vocabulary of the real size (the 256 GPT-2 byte
   characters, merges, the 33 Qwen added tokens at their real ids, padding rows up to 248320) that
   llama.cpp accepts. The MTP block is not written (llama.cpp's converter can drop it too).

   Weights: 2-D matrices in the requested dtype (F32, F16, BF16, Q8_0 or Q4_K, or llama.cpp's
   Q4_K_M mix of Q4_K, Q5_K and Q6_K); norms, conv
   kernels and per-head vectors stay F32 as llama.cpp's converter keeps them. Values have the
   scales of tests/reference/gen_tiny.py (linear layers gain/sqrt(fan_in), O(1) activations,
   realistic GDN decay ranges), drawn from a seeded generator per row, so a file depends only on
   its shape, dtype and seed — not on the thread count. Generation streams: one slab of rows is
   generated and quantised on all threads, written, and reused; a 9B file needs tens of MB. */
#ifndef SEER_LM_RANDMODEL_H
#define SEER_LM_RANDMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

struct randmodel_shape {
    int64_t n_layer;        /* decoder layers (MTP excluded) */
    int64_t n_embd;         /* H */
    int64_t n_ff;           /* I */
    int64_t n_head, n_head_kv, head_dim;
    int64_t ssm_n_k_heads;  /* Hk */
    int64_t ssm_n_v_heads;  /* Hv */
    int64_t ssm_d_state;    /* dk = dv (GGUF has one ssm.state_size, spec §11.2) */
    int64_t ssm_conv_kernel;
    int64_t n_vocab;        /* embedding rows: 248320 in every released size */
    int64_t n_bpe_tokens;   /* byte-level BPE tokens before the 33 added tokens (248044 real) */
    int full_attention_interval; /* layer i is attention iff (i+1) % interval == 0 (spec §2.2) */
    int n_rot;              /* rotated dims per head (head_dim/4 = 64 real) */
    int sections[3];        /* MRoPE sections (11, 11, 10 real, spec §3.3) */
    bool tie;               /* tied LM head (no output.weight) */
};

/* Fills *s with a released size: "0.8b", "2b", "4b" or "9b" (spec §1.1). SEER_EINVAL otherwise. */
int randmodel_preset(const char *name, struct randmodel_shape *s);
/* Names accepted by randmodel_preset, for usage text: "0.8b|2b|4b|9b". */
const char *randmodel_preset_names(void);
/* Checks the shape is one seer and llama.cpp can load, and that `wtype` can hold its matrices
   (quantised rows must be whole blocks: multiples of 256 for Q4_K). SEER_EINVAL with a message. */
int randmodel_check(const struct randmodel_shape *s, enum dtype wtype);

/* How the matrices are typed: all as wtype, or as llama.cpp's Q4_K_M (wtype DT_Q4_K): Q6_K for the
   tied embedding (or output), for ffn_down in the layers llama.cpp's use_more_bits picks and for
   attn_v in the attention layers it picks; Q5_K for attn_qkv; Q4_K for the rest
   (llama-quant.cpp's choices, as its published Q4_K_M files have them). */
enum randmodel_mix { RANDMODEL_UNIFORM, RANDMODEL_Q4_K_M };

struct randmodel_params {
    enum dtype wtype;   /* matrix dtype: DT_F32, DT_F16, DT_BF16, DT_Q8_0 or DT_Q4_K */
    enum randmodel_mix mix; /* RANDMODEL_UNIFORM unless set */
    uint64_t seed;
    int n_threads;      /* ≥ 1: quantisation threads */
    const char *name;   /* general.name; NULL: "seer-random" */
};

/* Writes the model to `path` atomically (a temporary file renamed at the end; no partial file is
   left on failure). Errors: SEER_EINVAL (shape/dtype), SEER_EIO, SEER_ENOMEM. */
int randmodel_write(const char *path, const struct randmodel_shape *s, const struct randmodel_params *p);

/* Bytes the file will have (0 if the shape or p is invalid): lets a caller check free space first. */
uint64_t randmodel_file_size(const struct randmodel_shape *s, const struct randmodel_params *p);

#endif
