/* gdn.c — the Gated DeltaNet mixer of Qwen3.5's linear-attention layers (spec §2.5), for a
   micro-batch of T rows, continuing each segment's sequence's conv and recurrent state. */
#include <math.h>

#include "core/ops.h"
#include "lm/layers.h"

/* L2-norm epsilon of q and k, added inside the rsqrt (spec §2.5 step 6). */
#define GDN_L2_EPS 1e-6f

int gdn_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b)
{
    const struct qwen35_layer *ly = &m->layers[il];
    const struct qwen35_config *c = &m->cfg;
    backend *be = m->be;
    arena *a = b->scratch;
    const int64_t T = b->T, H = c->n_embd, Hk = c->ssm_n_k_heads, Hv = c->ssm_n_v_heads;
    const int64_t dk = c->ssm_d_k, dv = c->ssm_d_v, KD = qwen35_key_dim(c), VD = qwen35_value_dim(c);
    const int64_t CD = qwen35_conv_dim(c);
    tensor u, mix, z, beta, g, conv, qn, kn, o, out;
    int rc;
    if ((rc = arena_tensor(a, &u, DT_F32, H, T, 1, 1)) || (rc = arena_tensor(a, &mix, DT_F32, CD, T, 1, 1)) ||
        (rc = arena_tensor(a, &z, DT_F32, dv, Hv, T, 1)) || (rc = arena_tensor(a, &beta, DT_F32, Hv, T, 1, 1)) ||
        (rc = arena_tensor(a, &g, DT_F32, Hv, T, 1, 1)) || (rc = arena_tensor(a, &conv, DT_F32, CD, T, 1, 1)) ||
        (rc = arena_tensor(a, &qn, DT_F32, dk, Hk, T, 1)) || (rc = arena_tensor(a, &kn, DT_F32, dk, Hk, T, 1)) ||
        (rc = arena_tensor(a, &o, DT_F32, dv, Hv, T, 1)) || (rc = arena_tensor(a, &out, DT_F32, H, T, 1, 1)))
        return rc;

    /* step 1: projections of the normed input (z is read per v-head: shape it {dv, Hv, T}) */
    tensor z2 = tensor_view(&z, 2, (int64_t[]){VD, T}, (size_t[]){4, (size_t)VD * 4}, 0);
    if ((rc = op_rmsnorm(be, &u, x, &ly->attn_norm, 0.0f, c->rms_eps)) ||
        (rc = op_matmul_n(be, 4, (tensor *[]){&mix, &z2, &beta, &g},
                          (const tensor *[]){&ly->ssm_qkv, &ly->ssm_z, &ly->ssm_beta, &ly->ssm_alpha}, &u)))
        return rc;

    /* step 2: causal depthwise conv over time with each sequence's carried window, then SiLU */
    for (int s = 0; s < b->n_seg; s++) {
        const struct segment *sg = &b->seg[s];
        tensor cs = segment_rows(&conv, 1, sg), ms = segment_rows(&mix, 1, sg);
        if ((rc = op_conv1d_causal(be, &cs, &ms, &ly->ssm_conv, &sg->st->conv_state[il])) ||
            (sg->mark && (rc = op_cpy(be, &sg->mark->conv_state[il], &sg->st->conv_state[il]))))
            return rc;
    }
    if ((rc = op_silu(be, &conv, &conv)))
        return rc;

    /* step 3: q | k | v are consecutive blocks of each token's conv output */
    const size_t row = (size_t)CD * 4;
    tensor q = tensor_view(&conv, 3, (int64_t[]){dk, Hk, T}, (size_t[]){4, (size_t)dk * 4, row}, 0);
    tensor k = tensor_view(&conv, 3, (int64_t[]){dk, Hk, T}, (size_t[]){4, (size_t)dk * 4, row}, (size_t)KD * 4);
    tensor v = tensor_view(&conv, 3, (int64_t[]){dv, Hv, T}, (size_t[]){4, (size_t)dv * 4, row}, (size_t)KD * 8);

    /* step 4: beta = σ(b); g = −exp(A_log)·softplus(a + dt_bias), with ssm_a = −exp(A_log) */
    if ((rc = op_sigmoid(be, &beta, &beta)) || (rc = op_add(be, &g, &g, &ly->ssm_dt)) ||
        (rc = op_unary(be, UNARY_SOFTPLUS, &g, &g)) || (rc = op_mul(be, &g, &g, &ly->ssm_a)))
        return rc;

    /* step 6: L2-normalise q and k; the 1/sqrt(dk) query scale is applied inside the GDN op */
    if ((rc = op_l2norm(be, &qn, &q, GDN_L2_EPS)) || (rc = op_l2norm(be, &kn, &k, GDN_L2_EPS)))
        return rc;

    /* steps 5, 7, 8: the delta rule over each segment's rows with its sequence's state,
       recurrent for one token (decode) */
    const float scale = 1.0f / sqrtf((float)dk);
    const enum gdn_head_order order = m->v_tiled ? GDN_V_TILED : GDN_V_GROUPED;
    for (int s = 0; s < b->n_seg; s++) {
        const struct segment *sg = &b->seg[s];
        tensor os = segment_rows(&o, 2, sg), qs = segment_rows(&qn, 2, sg), ks = segment_rows(&kn, 2, sg);
        tensor vs = segment_rows(&v, 2, sg), gs = segment_rows(&g, 1, sg), bs = segment_rows(&beta, 1, sg);
        tensor *state = &sg->st->ssm_state[il];
        if (sg->T > 1 && b->chunked)
            rc = op_gdn_chunked(be, &os, &qs, &ks, &vs, &gs, &bs, state, scale, order);
        else
            rc = op_gdn_recurrent(be, &os, &qs, &ks, &vs, &gs, &bs, state, scale, order);
        if (rc || (sg->mark && (rc = op_cpy(be, &sg->mark->ssm_state[il], state))))
            return rc;
    }

    /* steps 9–10: per-head gated RMSNorm with z, then out_proj and the residual add */
    tensor o2 = tensor_view(&o, 2, (int64_t[]){VD, T}, (size_t[]){4, (size_t)VD * 4}, 0);
    if ((rc = op_rmsnorm_gated(be, &o, &o, &z, &ly->ssm_norm, c->rms_eps)) ||
        (rc = op_matmul(be, &out, &ly->ssm_out, &o2)))
        return rc;
    return op_add(be, x, x, &out);
}
