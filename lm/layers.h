/* layers.h — the three blocks of a Qwen3.5 decoder layer, each in its own file, called by the
   layer loop in lm/qwen35.c. Each reads the residual stream x {H, T}, adds its output to it in
   place, and takes its intermediates from the state's arena. */
#ifndef SEER_LM_LAYERS_H
#define SEER_LM_LAYERS_H

#include "lm/qwen35.h"

/* Everything one block needs about the current micro-batch. */
struct batch {
    int64_t T;        /* tokens in this micro-batch */
    int64_t n_past;   /* tokens already in the sequence before it */
    const tensor *pos; /* i32 {T, 3} MRoPE positions (spec §3.2) */
    bool chunked;     /* GDN form for T > 1 */
};

/* Gated DeltaNet mixer (spec §2.5): x += out_proj(gated_norm(GDN(conv(in_proj(norm(x)))))). */
int gdn_forward(const qwen35_model *m, qwen35_state *st, int il, tensor *x, const struct batch *b);
/* Gated full attention (spec §2.6): x += o_proj(attn(rope(norm(q)), rope(norm(k)), v) ⊙ σ(gate)). */
int attn_forward(const qwen35_model *m, qwen35_state *st, int il, tensor *x, const struct batch *b);
/* SwiGLU MLP (spec §2.4): x += down(silu(gate(norm(x))) ⊙ up(norm(x))). */
int mlp_forward(const qwen35_model *m, qwen35_state *st, int il, tensor *x, const struct batch *b);

#endif
