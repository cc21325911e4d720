/* attention.c — the gated full-attention mixer of every 4th Qwen3.5 layer (spec §2.6): per-head
   [q | gate] projection, q/k RMSNorm, partial interleaved MRoPE (spec §3.3), KV cache append,
   causal GQA attention (per sequence of the batch, each over its own cache), sigmoid output gate. */
#include <math.h>

#include "core/error.h"
#include "core/ops.h"
#include "lm/layers.h"

/* Steps 5–6 for segment s: its rows of k and v go into its sequence's cache after the n_past
   tokens already there, and its queries attend to the cache up to themselves (q_pos0 = n_past). */
static int attend(backend *be, const struct segment *s, int il, tensor *att, const tensor *qn, const tensor *kn,
                  const tensor *vv, float scale)
{
    const tensor *kc = &s->st->k_cache[il], *vc = &s->st->v_cache[il];
    const int64_t hd = kc->ne[0], nkv = kc->ne[1], Tk = s->n_past + s->T;
    tensor q = segment_rows(qn, 2, s), k = segment_rows(kn, 2, s), v = segment_rows(vv, 2, s);
    tensor o = segment_rows(att, 2, s);
    tensor kdst = tensor_view(kc, 3, (int64_t[]){hd, nkv, s->T}, kc->nb, (size_t)s->n_past * kc->nb[2]);
    tensor vdst = tensor_view(vc, 3, (int64_t[]){hd, nkv, s->T}, vc->nb, (size_t)s->n_past * vc->nb[2]);
    int rc;
    if ((rc = op_cpy(be, &kdst, &k)) || (rc = op_cpy(be, &vdst, &v)))
        return rc;
    tensor kall = tensor_view(kc, 3, (int64_t[]){hd, nkv, Tk}, kc->nb, 0);
    tensor vall = tensor_view(vc, 3, (int64_t[]){hd, nkv, Tk}, vc->nb, 0);
    const struct attn_mask mask = {.kind = ATTN_CAUSAL, .q_pos0 = s->n_past};
    return op_attention(be, &o, &q, &kall, &vall, scale, &mask);
}

int attn_forward(const qwen35_model *m, int il, tensor *x, const struct batch *b)
{
    const struct qwen35_layer *ly = &m->layers[il];
    const struct qwen35_config *c = &m->cfg;
    backend *be = m->be;
    arena *a = b->scratch;
    const int64_t T = b->T, H = c->n_embd, nh = c->n_head, nkv = c->n_head_kv, hd = c->head_dim;
    tensor u, qg, qn, kn, vv, att, sg, out;
    int rc;
    for (int s = 0; s < b->n_seg; s++)
        if (b->seg[s].n_past + b->seg[s].T > b->seg[s].st->n_ctx)
            return seer_err(SEER_EINVAL, "context full: %lld + %lld tokens exceed the context size %lld",
                            (long long)b->seg[s].n_past, (long long)b->seg[s].T, (long long)b->seg[s].st->n_ctx);
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
        (rc = op_matmul_n(be, 3, (tensor *[]){&qg, &k2, &v2}, (const tensor *[]){&ly->attn_q, &ly->attn_k, &ly->attn_v},
                          &u)))
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

    /* steps 5–6 per sequence: append its rows' k and v to its cache, then causal GQA attention
       over every token of that cache, scores scaled by hd^-1/2 */
    for (int s = 0; s < b->n_seg; s++)
        if ((rc = attend(be, &b->seg[s], il, &att, &qn, &kn, &vv, 1.0f / sqrtf((float)hd))))
            return rc;

    /* steps 7–9: sigmoid output gate, o_proj, residual */
    tensor att2 = tensor_view(&att, 2, (int64_t[]){nh * hd, T}, (size_t[]){4, (size_t)(nh * hd) * 4}, 0);
    if ((rc = op_sigmoid(be, &sg, &gate)) || (rc = op_mul(be, &att, &att, &sg)) ||
        (rc = op_matmul(be, &out, &ly->attn_o, &att2)))
        return rc;
    return op_add(be, x, x, &out);
}
