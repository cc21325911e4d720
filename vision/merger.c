/* merger.c — the patch merger that turns the vision tower's patches into text-width tokens
   (spec §4.6): LayerNorm per patch (before grouping, use_postshuffle_norm = False), then each run
   of M² consecutive patches — one M×M block, already adjacent in the block-major row order of
   spec §4.1 — is one M²·Dv vector, then fc1 → exact erf GELU → fc2, both with bias. */
#include "core/error.h"
#include "core/ops.h"
#include "vision/vit.h"

int vit_merger_forward(const vit_model *m, const tensor *h, tensor *norm, tensor *fc1, tensor *out)
{
    const struct vit_config *c = &m->cfg;
    const int64_t Dv = c->n_embd, M2 = c->merge_size * c->merge_size, N = h->ne[1];
    backend *be = m->be;
    int rc;
    /* 1. LayerNorm over Dv (eps spec §4.5/§4.6: 1e-6 from the config) */
    if ((rc = op_layernorm(be, norm, h, &m->merge_ln_w, &m->merge_ln_b, c->eps)))
        return rc;
    /* 2. group: the contiguous {Dv, N} rows read as {M²·Dv, N/M²} — a view, nothing moves */
    tensor grouped = tensor_view(norm, 2, (int64_t[]){M2 * Dv, N / M2}, (size_t[]){4, (size_t)(M2 * Dv) * 4}, 0);
    /* 3. fc1 + bias → GELU (exact erf here, not the blocks' tanh form: spec §4.6) → fc2 + bias */
    const struct linear_epilogue e1 = {.bias = &m->merge_fc1_b, .act = true, .unary = UNARY_GELU_ERF, .bf16 = true},
                                  e2 = {.bias = &m->merge_fc2_b, .bf16 = true};
    if ((rc = op_linear(be, fc1, &m->merge_fc1_w, &grouped, &e1)))
        return rc;
    return op_linear(be, out, &m->merge_fc2_w, fc1, &e2);
}
