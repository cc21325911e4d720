/* qwen35.c — the Qwen3.5 decoder's forward pass (spec §2.1–§2.2, §2.7, §3.2), read top to bottom:
   per micro-batch, embed → for each layer (GDN or attention mixer, then MLP) → final norm → head.
   Also the per-sequence state: KV cache for attention layers, conv + recurrent state for GDN
   layers (spec §2.5 "State to keep"). Divisions: state · forward. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/ops.h"
#include "core/util.h"
#include "lm/layers.h"
#include "lm/plan.h"

/* Rows of logits computed per head matmul: bounds the logits buffer to V·32 floats however
   large the micro-batch (a 248320-entry vocabulary makes each row ~1 MB). */
#define LOGIT_ROWS 32

/* ---- state ----------------------------------------------------------------------------------- */

size_t qwen35_scratch_bytes(const struct qwen35_config *c, int64_t n_ubatch, size_t alignment)
{
    /* f32 values per token for one layer: the GDN mixer's u, mix, conv, z, o, q, k, beta, g and
       out, or the attention mixer's, plus the MLP's; the head's final norm fits in it too. Slack
       covers the per-tensor alignment. */
    const int64_t H = c->n_embd, CD = qwen35_conv_dim(c), VD = qwen35_value_dim(c), KD = qwen35_key_dim(c);
    const int64_t qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim;
    const int64_t gdn = 2 * H + 2 * CD + 2 * VD + 2 * KD + 2 * c->ssm_n_v_heads;
    const int64_t att = 2 * H + 5 * qd + 2 * kvd;
    const int64_t per_tok = MAX(gdn, att) + 2 * H + 2 * c->n_ff;
    return (size_t)(per_tok * n_ubatch) * 4 + 64 * alignment;
}

static int state_tensor(qwen35_state *st, backend *be, tensor *t, int64_t ne0, int64_t ne1, int64_t ne2,
                        enum dtype type)
{
    backend_buffer *b;
    int rc;
    if (!tensor_init4(t, type, ne0, ne1, ne2, 1))
        return seer_err(SEER_EINVAL, "state tensor {%lld,%lld,%lld} is too large", (long long)ne0,
                        (long long)ne1, (long long)ne2);
    if ((rc = backend_tensor_alloc(be, t, &b)))
        return rc;
    st->bufs[st->n_bufs++] = b;
    return SEER_OK;
}

/* Zero recurrent and conv state (spec §2.5: both start at zero), empty KV. */
int qwen35_state_reset(const qwen35_model *m, qwen35_state *st)
{
    size_t max_bytes = 0;
    for (int64_t il = 0; il < m->cfg.n_layer; il++)
        if (!m->layers[il].is_attn)
            max_bytes = MAX(max_bytes, MAX(tensor_nbytes(&st->ssm_state[il]), tensor_nbytes(&st->conv_state[il])));
    void *zeros = seer_calloc(1, max_bytes);
    if (!zeros)
        return seer_err(SEER_ENOMEM, "no memory to reset the state");
    int rc = SEER_OK;
    for (int64_t il = 0; il < m->cfg.n_layer && rc == SEER_OK; il++) {
        if (m->layers[il].is_attn)
            continue;
        rc = backend_tensor_set(&st->ssm_state[il], zeros, 0, tensor_nbytes(&st->ssm_state[il]));
        if (rc == SEER_OK)
            rc = backend_tensor_set(&st->conv_state[il], zeros, 0, tensor_nbytes(&st->conv_state[il]));
    }
    free(zeros);
    st->n_past = 0;
    st->pos_next = 0;
    return rc;
}

int qwen35_state_create(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, qwen35_state **out)
{
    const struct qwen35_config *c = &m->cfg;
    if (n_ctx < 1 || n_ubatch < 1)
        return seer_err(SEER_EINVAL, "context size %lld and micro-batch %lld must be positive", (long long)n_ctx,
                        (long long)n_ubatch);
    n_ubatch = MIN(n_ubatch, n_ctx);
    int rc = qwen35_plan_check_state(c, m->be, n_ctx, n_ubatch);
    if (rc)
        return rc;
    qwen35_state *st = seer_calloc(1, sizeof *st);
    const size_t L = (size_t)c->n_layer;
    rc = SEER_ENOMEM;
    if (!st)
        return seer_err(SEER_ENOMEM, "no memory for a sequence state");
    st->n_ctx = n_ctx;
    st->n_ubatch = n_ubatch;
    st->k_cache = seer_calloc(L, sizeof(tensor));
    st->v_cache = seer_calloc(L, sizeof(tensor));
    st->conv_state = seer_calloc(L, sizeof(tensor));
    st->ssm_state = seer_calloc(L, sizeof(tensor));
    st->bufs = seer_calloc(2 * L + 4, sizeof(backend_buffer *));
    if (!st->k_cache || !st->v_cache || !st->conv_state || !st->ssm_state || !st->bufs) {
        seer_err(SEER_ENOMEM, "no memory for a sequence state");
        goto fail;
    }
    for (int64_t il = 0; il < c->n_layer; il++) {
        if (m->layers[il].is_attn)
            rc = state_tensor(st, m->be, &st->k_cache[il], c->head_dim, c->n_head_kv, n_ctx, DT_F32) ||
                         state_tensor(st, m->be, &st->v_cache[il], c->head_dim, c->n_head_kv, n_ctx, DT_F32)
                     ? SEER_ENOMEM
                     : SEER_OK;
        else
            rc = state_tensor(st, m->be, &st->conv_state[il], qwen35_conv_dim(c), c->ssm_conv_kernel - 1, 1,
                              DT_F32) ||
                         state_tensor(st, m->be, &st->ssm_state[il], c->ssm_d_v, c->ssm_d_k, c->ssm_n_v_heads,
                                      DT_F32)
                     ? SEER_ENOMEM
                     : SEER_OK;
        if (rc)
            goto fail;
    }
    if ((rc = state_tensor(st, m->be, &st->x, c->n_embd, n_ubatch, 1, DT_F32)) ||
        (rc = state_tensor(st, m->be, &st->logits, c->n_vocab, MIN(n_ubatch, LOGIT_ROWS), 1, DT_F32)) ||
        (rc = state_tensor(st, m->be, &st->ids, n_ubatch, 1, 1, DT_I32)) ||
        (rc = state_tensor(st, m->be, &st->pos, n_ubatch, 3, 1, DT_I32)))
        goto fail;
    if ((rc = arena_init(&st->scratch, m->be, qwen35_scratch_bytes(c, n_ubatch, m->be->alignment))))
        goto fail;
    if ((rc = qwen35_state_reset(m, st)))
        goto fail;
    *out = st;
    return SEER_OK;
fail:
    rc = rc ? rc : SEER_ENOMEM;
    qwen35_state_free(st);
    return rc;
}

void qwen35_state_free(qwen35_state *st)
{
    if (!st)
        return;
    arena_deinit(&st->scratch);
    for (int i = 0; st->bufs && i < st->n_bufs; i++)
        backend_buffer_free(st->bufs[i]);
    free(st->bufs);
    free(st->k_cache);
    free(st->v_cache);
    free(st->conv_state);
    free(st->ssm_state);
    free(st);
}

/* ---- forward ----------------------------------------------------------------------------------- */

/* Final RMSNorm and LM head (spec §2.7) for rows [r0, r0+n) of the micro-batch, into dst. */
static int head_rows(const qwen35_model *m, qwen35_state *st, int64_t r0, int64_t n, float *dst)
{
    const struct qwen35_config *c = &m->cfg;
    tensor z, xr = tensor_view(&st->x, 2, (int64_t[]){c->n_embd, n}, st->x.nb, (size_t)r0 * st->x.nb[1]);
    tensor lg = tensor_view(&st->logits, 2, (int64_t[]){c->n_vocab, n}, st->logits.nb, 0);
    int rc;
    arena_reset(&st->scratch);
    if ((rc = arena_tensor(&st->scratch, &z, DT_F32, c->n_embd, n, 1, 1)) ||
        (rc = op_rmsnorm(m->be, &z, &xr, &m->output_norm, 0.0f, c->rms_eps)) ||
        (rc = op_matmul(m->be, &lg, m->output, &z)) || (rc = backend_sync(m->be)))
        return rc;
    return backend_tensor_get(&lg, dst, 0, (size_t)(n * c->n_vocab) * sizeof(float));
}

int qwen35_eval(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n, const int32_t *pos,
                enum qwen35_logits which, float *logits, bool chunked)
{
    const struct qwen35_config *c = &m->cfg;
    int32_t *pbuf = NULL;
    int rc = SEER_OK;
    if (n < 1)
        return seer_err(SEER_EINVAL, "qwen35_eval: no tokens");
    if (st->n_past + n > st->n_ctx)
        return seer_err(SEER_EINVAL, "context full: %lld + %lld tokens exceed the context size %lld",
                        (long long)st->n_past, (long long)n, (long long)st->n_ctx);
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->n_vocab)
            return seer_err(SEER_EINVAL, "token id %d at position %lld is outside the vocabulary (%lld)", ids[i],
                            (long long)i, (long long)c->n_vocab);
    if (!(pbuf = seer_malloc((size_t)st->n_ubatch * 3 * sizeof *pbuf)))
        return seer_err(SEER_ENOMEM, "no memory for positions");
    for (int64_t s = 0; s < n && rc == SEER_OK; s += st->n_ubatch) {
        const int64_t T = MIN(st->n_ubatch, n - s);
        /* positions (spec §3.2): given per axis for multimodal prompts, else the text rule */
        int64_t pmax = st->pos_next - 1;
        for (int a = 0; a < 3; a++)
            for (int64_t t = 0; t < T; t++) {
                int64_t p = pos ? pos[a * n + s + t] : st->pos_next + t;
                pbuf[a * T + t] = (int32_t)p;
                pmax = MAX(pmax, p);
            }
        tensor idt = st->ids, post = st->pos;
        tensor_init4(&idt, DT_I32, T, 1, 1, 1);
        tensor_init4(&post, DT_I32, T, 3, 1, 1);
        tensor x = tensor_view(&st->x, 2, (int64_t[]){c->n_embd, T}, st->x.nb, 0);
        if ((rc = backend_tensor_place(&idt, st->ids.buf, st->ids.offset)) ||
            (rc = backend_tensor_place(&post, st->pos.buf, st->pos.offset)) ||
            (rc = backend_tensor_set(&idt, ids + s, 0, (size_t)T * 4)) ||
            (rc = backend_tensor_set(&post, pbuf, 0, (size_t)T * 12)) ||
            (rc = op_get_rows(m->be, &x, &m->tok_embd, &idt)))
            break;
        const struct batch b = {.T = T, .n_past = st->n_past, .pos = &post, .chunked = chunked};
        for (int il = 0; il < c->n_layer && rc == SEER_OK; il++) {
            /* The arena's memory is reused layer after layer; on Vulkan the backend orders the
               next layer's writes after this layer's reads (its barriers cover WAR hazards). */
            arena_reset(&st->scratch);
            rc = m->layers[il].is_attn ? attn_forward(m, st, il, &x, &b) : gdn_forward(m, st, il, &x, &b);
            if (rc == SEER_OK)
                rc = mlp_forward(m, st, il, &x, &b);
        }
        if (rc)
            break;
        st->n_past += T;
        st->pos_next = pmax + 1;
        if (which == QWEN35_LOGITS_ALL) {
            for (int64_t r = 0; r < T && rc == SEER_OK; r += LOGIT_ROWS)
                rc = head_rows(m, st, r, MIN(LOGIT_ROWS, T - r), logits + (s + r) * c->n_vocab);
        } else if (which == QWEN35_LOGITS_LAST && s + T == n) {
            rc = head_rows(m, st, T - 1, 1, logits);
        }
    }
    if (rc == SEER_OK)
        rc = backend_sync(m->be);
    free(pbuf);
    return rc;
}
