/* mlp.c — the dense SwiGLU MLP of every Qwen3.5 layer (spec §2.4), pre-normed with
   post_attention_layernorm (spec §2.2 step 2). */
#include "core/ops.h"
#include "lm/layers.h"

int mlp_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b)
{
    const struct qwen35_layer *ly = &m->layers[il];
    const struct qwen35_config *c = &m->cfg;
    backend *be = m->be;
    arena *a = b->scratch;
    tensor u, gate, up, down;
    int rc;
    if ((rc = arena_tensor(a, &u, DT_F32, c->n_embd, b->T, 1, 1)) ||
        (rc = arena_tensor(a, &gate, DT_F32, c->n_ff, b->T, 1, 1)) ||
        (rc = arena_tensor(a, &up, DT_F32, c->n_ff, b->T, 1, 1)) ||
        (rc = arena_tensor(a, &down, DT_F32, c->n_embd, b->T, 1, 1)))
        return rc;
    if ((rc = op_rmsnorm(be, &u, x, &ly->post_norm, 0.0f, c->rms_eps)) ||
        (rc = op_matmul_n(be, 2, (tensor *[]){&gate, &up}, (const tensor *[]){&ly->ffn_gate, &ly->ffn_up}, &u)) ||
        (rc = op_silu(be, &gate, &gate)) || (rc = op_mul(be, &gate, &gate, &up)) ||
        (rc = op_matmul(be, &down, &ly->ffn_down, &gate)))
        return rc;
    return op_add(be, x, x, &down);
}
