/* layers.h — the three blocks of a Qwen3.5 decoder layer, each in its own file, called by the
   layer loop in lm/qwen35.c. Each reads the residual stream x {H, T}, adds its output to it in
   place, and takes its intermediates from the batch's scratch arena.

   A micro-batch's rows belong to one or more segments: each segment is a run of consecutive rows
   of one sequence (one segment of T rows for a prompt; n segments of one row when n sequences
   decode together, issue #13 item 5). Row-wise work — norms, every weight matmul, rope, gates,
   the MLP — runs once over all rows, so the weights are read once for every sequence; only what
   touches a sequence's own state (the causal conv, the delta rule, the KV append and attention)
   loops over the segments on views of their rows. */
#ifndef SEER_LM_LAYERS_H
#define SEER_LM_LAYERS_H

#include "lm/qwen35.h"

/* Rows [r0, r0 + T) of the micro-batch, all of sequence `st`, which held n_past tokens before them. */
struct segment {
    qwen35_state *st;  /* its KV cache, conv window and recurrent state are read and updated */
    int64_t r0, T;
    int64_t n_past;
    qwen35_state *mark; /* or NULL: receives st's conv windows and recurrent states as they are after
                           these rows (qwen35_eval_mark; the next segment continues st) */
};

/* Everything one block needs about the current micro-batch. */
struct batch {
    int64_t T;                 /* rows in this micro-batch, all segments together */
    const tensor *pos;         /* i32 {T, 3} MRoPE positions of every row (spec §3.2) */
    bool chunked;              /* GDN form for segments of more than one row */
    arena *scratch;            /* intermediates, reset by the caller between layers */
    const struct segment *seg; /* [n_seg], consecutive, covering rows 0..T */
    int n_seg;
};

/* Rows of segment s in t, whose dimension `dim` indexes the batch's rows (a view, same strides). */
static inline tensor segment_rows(const tensor *t, int dim, const struct segment *s)
{
    int64_t ne[4] = {t->ne[0], t->ne[1], t->ne[2], t->ne[3]};
    ne[dim] = s->T;
    return tensor_view(t, dim + 1, ne, t->nb, (size_t)s->r0 * t->nb[dim]);
}

/* Gated DeltaNet mixer (spec §2.5): x += out_proj(gated_norm(GDN(conv(in_proj(norm(x)))))). */
int gdn_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b);
/* Gated full attention (spec §2.6): x += o_proj(attn(rope(norm(q)), rope(norm(k)), v) ⊙ σ(gate)). */
int attn_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b);
/* SwiGLU MLP (spec §2.4): x += down(silu(gate(norm(x))) ⊙ up(norm(x))). */
int mlp_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b);

#endif
