/* attention.c — the gated full-attention mixer of every 4th Qwen3.5 layer (spec §2.6): per-head
   [q | gate] projection, q/k RMSNorm, partial interleaved MRoPE (spec §3.3), KV cache append,
   causal GQA attention, sigmoid output gate. */
#include <math.h>

#include "core/error.h"
#include "core/ops.h"
#include "lm/layers.h"

int attn_forward(const qwen35_model *m, qwen35_state *st, int il, tensor *x, const struct batch *b)
{
    const struct qwen35_layer *ly = &m->layers[il];
    const struct qwen35_config *c = &m->cfg;
    backend *be = m->be;
    arena *a = &st->scratch;
    const int64_t T = b->T, H = c->n_embd, nh = c->n_head, nkv = c->n_head_kv, hd = c->head_dim;
    tensor u, qg, qn, kn, vv, att, sg, out;
    int rc;
    if (b->n_past + T > st->n_ctx)
        return seer_err(SEER_EINVAL, "context full: %lld + %lld tokens exceed the context size %lld",
                        (long long)b->n_past, (long long)T, (long long)st->n_ctx);
    if ((rc = arena_tensor(a, &u, DT_F32, H, T, 1, 1)) ||
        (rc = arena_tensor(a, &qg, DT_F32, 2 * hd * nh, T, 1, 1)) ||
        (rc = arena_tensor(a, &qn, DT_F32, hd, nh, T, 1)) || (rc = arena_tensor(a, &kn, DT_F32, hd, nkv, T, 1)) ||
        (rc = arena_tensor(a, &vv, DT_F32, hd, nkv, T, 1)) || (rc = arena_tensor(a, &att, DT_F32, hd, nh, T, 1)) ||
        (rc = arena_tensor(a, &sg, DT_F32, hd, nh, T, 1)) || (rc = arena_tensor(a, &out, DT_F32, H, T, 1, 1)))
        return rc;

    /* steps 1–2: projections; q and gate interleave per head in blocks of hd (spec §2.6 step 1) */
    tensor k2 = tensor_view(&kn, 2, (int64_t[]){nkv * hd, T}, (size_t[]){4, (size_t)(nkv * hd) * 4}, 0);
    tensor v2 = tensor_view(&vv, 2, (int64_t[]){nkv * hd, T}, (size_t[]){4, (size_t)(nkv * hd) * 4}, 0);
    if ((rc = op_rmsnorm(be, &u, x, &ly->attn_norm, 0.0f, c->rms_eps)) ||
        (rc = op_matmul(be, &qg, &ly->attn_q, &u)) || (rc = op_matmul(be, &k2, &ly->attn_k, &u)) ||
        (rc = op_matmul(be, &v2, &ly->attn_v, &u)))
        return rc;
    const size_t qrow = (size_t)(2 * hd * nh) * 4;
    tensor q = tensor_view(&qg, 3, (int64_t[]){hd, nh, T}, (size_t[]){4, (size_t)(2 * hd) * 4, qrow}, 0);
    tensor gate = tensor_view(&qg, 3, (int64_t[]){hd, nh, T}, (size_t[]){4, (size_t)(2 * hd) * 4, qrow},
                              (size_t)hd * 4);

    /* steps 3–4: per-head RMSNorm over all hd dims, then MRoPE on the first n_rot dims */
    const struct rope_text_params rp = {
        .n_rot = c->n_rot,
        .theta = c->rope_theta,
        .sections = {c->mrope_sections[0], c->mrope_sections[1], c->mrope_sections[2]},
    };
    if ((rc = op_rmsnorm(be, &qn, &q, &ly->q_norm, 0.0f, c->rms_eps)) ||
        (rc = op_rmsnorm(be, &kn, &kn, &ly->k_norm, 0.0f, c->rms_eps)) ||
        (rc = op_rope_text(be, &qn, &qn, b->pos, &rp)) || (rc = op_rope_text(be, &kn, &kn, b->pos, &rp)))
        return rc;

    /* step 5: append this batch's k and v to the layer's cache */
    const tensor *kc = &st->k_cache[il], *vc = &st->v_cache[il];
    tensor kdst = tensor_view(kc, 3, (int64_t[]){hd, nkv, T}, kc->nb + 0, (size_t)b->n_past * kc->nb[2]);
    tensor vdst = tensor_view(vc, 3, (int64_t[]){hd, nkv, T}, vc->nb + 0, (size_t)b->n_past * vc->nb[2]);
    if ((rc = op_cpy(be, &kdst, &kn)) || (rc = op_cpy(be, &vdst, &vv)))
        return rc;

    /* step 6: causal GQA attention over every cached token, scores scaled by hd^-1/2 */
    const int64_t Tk = b->n_past + T;
    tensor kall = tensor_view(kc, 3, (int64_t[]){hd, nkv, Tk}, kc->nb + 0, 0);
    tensor vall = tensor_view(vc, 3, (int64_t[]){hd, nkv, Tk}, vc->nb + 0, 0);
    const struct attn_mask mask = {.kind = ATTN_CAUSAL, .q_pos0 = b->n_past};
    if ((rc = op_attention(be, &att, &qn, &kall, &vall, 1.0f / sqrtf((float)hd), &mask)))
        return rc;

    /* steps 7–9: sigmoid output gate, o_proj, residual */
    tensor att2 = tensor_view(&att, 2, (int64_t[]){nh * hd, T}, (size_t[]){4, (size_t)(nh * hd) * 4}, 0);
    if ((rc = op_sigmoid(be, &sg, &gate)) || (rc = op_mul(be, &att, &att, &sg)) ||
        (rc = op_matmul(be, &out, &ly->attn_o, &att2)))
        return rc;
    return op_add(be, x, x, &out);
}
