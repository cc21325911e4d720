/* qwen35.c — the Qwen3.5 decoder's forward pass (spec §2.1–§2.2, §2.7, §3.2), read top to bottom:
   per micro-batch, input embeddings → for each layer (GDN or attention mixer, then MLP) → final
   norm → head. Also the per-sequence state: KV cache for attention layers, conv + recurrent state
   for GDN layers (spec §2.5 "State to keep"), and what it occupies on the device.
   Divisions: state · forward. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/ops.h"
#include "core/util.h"
#include "lm/layers.h"

/* Rows of logits computed per head matmul: bounds the logits buffer to V·32 floats however
   large the micro-batch (a 248320-entry vocabulary makes each row ~1 MB). */
#define LOGIT_ROWS 32

/* ---- state ----------------------------------------------------------------------------------- */

/* Bytes of the per-layer scratch arena for micro-batches of n_ubatch tokens. */
static uint64_t scratch_bytes(const struct qwen35_config *c, int64_t n_ubatch, size_t alignment)
{
    /* f32 values per token for one layer: the GDN mixer's u, mix, conv, z, o, q, k, beta, g and
       out, or the attention mixer's, plus the MLP's; the head's final norm fits in it too. Slack
       covers the per-tensor alignment. */
    const int64_t H = c->n_embd, CD = qwen35_conv_dim(c), VD = qwen35_value_dim(c), KD = qwen35_key_dim(c);
    const int64_t qd = c->n_head * c->head_dim, kvd = c->n_head_kv * c->head_dim;
    const int64_t gdn = 2 * H + 2 * CD + 2 * VD + 2 * KD + 2 * c->ssm_n_v_heads;
    const int64_t att = 2 * H + 5 * qd + 2 * kvd;
    const int64_t per_tok = MAX(gdn, att) + 2 * H + 2 * c->n_ff;
    return (uint64_t)(per_tok * n_ubatch) * 4 + 64 * (uint64_t)alignment;
}

void qwen35_state_bytes_kv(const struct qwen35_config *c, enum dtype kv_type, int64_t n_ubatch, size_t alignment,
                           struct qwen35_state_bytes *out)
{
    const uint64_t n_attn = (uint64_t)qwen35_n_attn_layers(c), n_gdn = (uint64_t)c->n_layer - n_attn;
    const uint64_t ub = (uint64_t)n_ubatch, a = (uint64_t)alignment;
    /* a cache row is one head's head_dim values: whole blocks (q8_0: 34 bytes per 32 values) */
    const struct dtype_info *ti = dtype_info(kv_type);
    const uint64_t row_bytes = (uint64_t)(c->head_dim / ti->block_elems) * (uint64_t)ti->block_bytes;
    out->kv_per_1k = n_attn * 2 * (uint64_t)c->n_head_kv * row_bytes * 1024;
    out->gdn = n_gdn * ((uint64_t)(c->ssm_n_v_heads * c->ssm_d_k * c->ssm_d_v) +
                        (uint64_t)(qwen35_conv_dim(c) * (c->ssm_conv_kernel - 1))) * 4;
    /* the arena, then x, logits, ids and pos (each its own buffer, rounded to the alignment) */
    out->scratch = scratch_bytes(c, n_ubatch, alignment) + (uint64_t)c->n_embd * ub * 4 +
                   (uint64_t)c->n_vocab * MIN(ub, LOGIT_ROWS) * 4 + ub * 4 + ub * 12 + 4 * a;
}

void qwen35_state_bytes(const struct qwen35_config *c, int64_t n_ubatch, size_t alignment,
                        struct qwen35_state_bytes *out)
{
    qwen35_state_bytes_kv(c, DT_F32, n_ubatch, alignment, out);
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

/* Refuses, before anything is allocated, a state larger than the backend's free memory. */
static int state_fits(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, enum dtype kv_type)
{
    struct qwen35_state_bytes b;
    uint64_t free_bytes, total_bytes;
    if (backend_memory(m->be, &free_bytes, &total_bytes) != SEER_OK) {
        seer_err_clear(); /* a backend that cannot tell is not refused */
        return SEER_OK;
    }
    qwen35_state_bytes_kv(&m->cfg, kv_type, n_ubatch, m->be->alignment, &b);
    const uint64_t need = b.kv_per_1k * (((uint64_t)n_ctx + 1023) / 1024) + b.gdn + b.scratch;
    if (need <= free_bytes)
        return SEER_OK;
    return seer_err(SEER_ENOMEM,
                    "a context of %lld tokens does not fit on %s: needs %.0f MiB (KV %.1f MiB per 1K tokens, GDN "
                    "state %.1f MiB, scratch %.0f MiB) but %.0f MiB are free; ask for a smaller context (-c)",
                    (long long)n_ctx, m->be->description, mib(need), mib(b.kv_per_1k), mib(b.gdn),
                    mib(b.scratch), mib(free_bytes));
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

/* Per layer: K and V caches for attention, conv window and recurrent state for GDN. */
static int layer_state(const qwen35_model *m, qwen35_state *st, int64_t il)
{
    const struct qwen35_config *c = &m->cfg;
    int rc;
    if (m->layers[il].is_attn) {
        if ((rc = state_tensor(st, m->be, &st->k_cache[il], c->head_dim, c->n_head_kv, st->n_ctx, st->kv_type)))
            return rc;
        return state_tensor(st, m->be, &st->v_cache[il], c->head_dim, c->n_head_kv, st->n_ctx, st->kv_type);
    }
    if ((rc = state_tensor(st, m->be, &st->conv_state[il], qwen35_conv_dim(c), c->ssm_conv_kernel - 1, 1, DT_F32)))
        return rc;
    return state_tensor(st, m->be, &st->ssm_state[il], c->ssm_d_v, c->ssm_d_k, c->ssm_n_v_heads, DT_F32);
}

int qwen35_state_create(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, qwen35_state **out)
{
    return qwen35_state_create_kv(m, n_ctx, n_ubatch, DT_F32, out);
}

int qwen35_state_create_kv(const qwen35_model *m, int64_t n_ctx, int64_t n_ubatch, enum dtype kv_type,
                           qwen35_state **out)
{
    const struct qwen35_config *c = &m->cfg;
    if (kv_type != DT_F32 && kv_type != DT_F16 && kv_type != DT_Q8_0)
        return seer_err(SEER_EUNSUPPORTED, "KV cache type %s is not supported (f16, f32 or q8_0)", dtype_name(kv_type));
    if (c->head_dim % dtype_info(kv_type)->block_elems != 0) /* q8_0: whole 32-value blocks per head row */
        return seer_err(SEER_EUNSUPPORTED, "a %s KV cache needs a head dim multiple of %d (this model's is %lld)",
                        dtype_name(kv_type), dtype_info(kv_type)->block_elems, (long long)c->head_dim);
    /* positions travel as i32 (spec §3.2), so no sequence is longer than INT32_MAX */
    if (n_ctx < 1 || n_ctx > INT32_MAX || n_ubatch < 1)
        return seer_err(SEER_EINVAL, "context size %lld (1..%d) and micro-batch %lld (≥ 1) are out of range",
                        (long long)n_ctx, INT32_MAX, (long long)n_ubatch);
    n_ubatch = MIN(n_ubatch, n_ctx);
    int rc = state_fits(m, n_ctx, n_ubatch, kv_type);
    if (rc)
        return rc;
    qwen35_state *st = seer_calloc(1, sizeof *st);
    const size_t L = (size_t)c->n_layer;
    if (!st)
        return seer_err(SEER_ENOMEM, "no memory for a sequence state");
    st->n_ctx = n_ctx;
    st->n_ubatch = n_ubatch;
    st->kv_type = kv_type;
    st->k_cache = seer_calloc(L, sizeof(tensor));
    st->v_cache = seer_calloc(L, sizeof(tensor));
    st->conv_state = seer_calloc(L, sizeof(tensor));
    st->ssm_state = seer_calloc(L, sizeof(tensor));
    st->bufs = seer_calloc(2 * L + 4, sizeof(backend_buffer *));
    st->pos_host = seer_calloc((size_t)n_ubatch * 3, sizeof *st->pos_host);
    st->seg = seer_calloc((size_t)n_ubatch, sizeof *st->seg);
    st->head_dst = seer_calloc((size_t)n_ubatch, sizeof *st->head_dst);
    if (!st->k_cache || !st->v_cache || !st->conv_state || !st->ssm_state || !st->bufs || !st->pos_host ||
        !st->seg || !st->head_dst) {
        rc = seer_err(SEER_ENOMEM, "no memory for a sequence state");
        goto fail;
    }
    for (int64_t il = 0; il < c->n_layer; il++)
        if ((rc = layer_state(m, st, il)))
            goto fail;
    if ((rc = state_tensor(st, m->be, &st->x, c->n_embd, n_ubatch, 1, DT_F32)))
        goto fail;
    if ((rc = state_tensor(st, m->be, &st->logits, c->n_vocab, MIN(n_ubatch, LOGIT_ROWS), 1, DT_F32)))
        goto fail;
    if ((rc = state_tensor(st, m->be, &st->ids, n_ubatch, 1, 1, DT_I32)))
        goto fail;
    if ((rc = state_tensor(st, m->be, &st->pos, n_ubatch, 3, 1, DT_I32)))
        goto fail;
    if ((rc = arena_init(&st->scratch, m->be, (size_t)scratch_bytes(c, n_ubatch, m->be->alignment))))
        goto fail;
    if ((rc = qwen35_state_reset(m, st)))
        goto fail;
    *out = st;
    return SEER_OK;
fail:
    qwen35_state_free(st);
    return rc;
}

int qwen35_state_create_recurrent(const qwen35_model *m, qwen35_state **out)
{
    const size_t L = (size_t)m->cfg.n_layer;
    int rc = SEER_OK;
    qwen35_state *st = seer_calloc(1, sizeof *st);
    if (!st || !(st->conv_state = seer_calloc(L, sizeof(tensor))) || !(st->ssm_state = seer_calloc(L, sizeof(tensor))) ||
        !(st->bufs = seer_calloc(2 * L, sizeof(backend_buffer *)))) {
        qwen35_state_free(st);
        return seer_err(SEER_ENOMEM, "no memory for a recurrent state");
    }
    for (int64_t il = 0; il < m->cfg.n_layer && rc == SEER_OK; il++)
        if (!m->layers[il].is_attn)
            rc = layer_state(m, st, il);
    if (rc) {
        qwen35_state_free(st);
        return rc;
    }
    *out = st;
    return SEER_OK;
}

void qwen35_state_free(qwen35_state *st)
{
    if (!st)
        return;
    arena_deinit(&st->scratch);
    for (int i = 0; st->bufs && i < st->n_bufs; i++)
        backend_buffer_free(st->bufs[i]);
    free(st->bufs);
    free(st->pos_host);
    free(st->seg);
    free(st->head_dst);
    free(st->k_cache);
    free(st->v_cache);
    free(st->conv_state);
    free(st->ssm_state);
    free(st);
}

/* ---- forward ----------------------------------------------------------------------------------- */

/* Final RMSNorm and LM head (spec §2.7) for rows [r0, r0+n) of ws's micro-batch, into dst. */
/* The logits of rows [r0, r0 + n) (n ≤ LOGIT_ROWS), left in ws->logits' first n rows. */
static int head_compute(const qwen35_model *m, qwen35_state *ws, int64_t r0, int64_t n, tensor *lg)
{
    const struct qwen35_config *c = &m->cfg;
    tensor z, xr = tensor_view(&ws->x, 2, (int64_t[]){c->n_embd, n}, ws->x.nb, (size_t)r0 * ws->x.nb[1]);
    *lg = tensor_view(&ws->logits, 2, (int64_t[]){c->n_vocab, n}, ws->logits.nb, 0);
    int rc;
    arena_reset(&ws->scratch);
    if ((rc = arena_tensor(&ws->scratch, &z, DT_F32, c->n_embd, n, 1, 1)) ||
        (rc = op_rmsnorm(m->be, &z, &xr, &m->output_norm, 0.0f, c->rms_eps)) || (rc = op_matmul(m->be, lg, m->output, &z)))
        return rc;
    return backend_sync(m->be);
}

static int head_rows(const qwen35_model *m, qwen35_state *ws, int64_t r0, int64_t n, float *dst)
{
    tensor lg;
    int rc = head_compute(m, ws, r0, n, &lg);
    return rc ? rc : backend_tensor_get(&lg, dst, 0, (size_t)(n * m->cfg.n_vocab) * sizeof(float));
}

/* Logits of rows [0, T), LOGIT_ROWS at a time, into dst (T rows of n_vocab floats). */
static int head_all(const qwen35_model *m, qwen35_state *ws, int64_t T, float *dst)
{
    int rc = SEER_OK;
    for (int64_t r = 0; r < T && rc == SEER_OK; r += LOGIT_ROWS)
        rc = head_rows(m, ws, r, MIN(LOGIT_ROWS, T - r), dst + r * m->cfg.n_vocab);
    return rc;
}

/* Logits of rows [0, T), row r into dst[r] (n_vocab floats each). */
static int head_scattered(const qwen35_model *m, qwen35_state *ws, int64_t T, float *const *dst)
{
    const size_t row = (size_t)m->cfg.n_vocab * sizeof(float);
    int rc = SEER_OK;
    for (int64_t r = 0; r < T && rc == SEER_OK; r += LOGIT_ROWS) {
        tensor lg;
        const int64_t n = MIN(LOGIT_ROWS, T - r);
        rc = head_compute(m, ws, r, n, &lg);
        for (int64_t i = 0; i < n && rc == SEER_OK; i++)
            rc = backend_tensor_get(&lg, dst[r + i], (size_t)i * row, row);
    }
    return rc;
}

/* Rows [0, T) of the residual stream ws->x {H, T}. */
static tensor residual(const qwen35_model *m, qwen35_state *ws, int64_t T)
{
    return tensor_view(&ws->x, 2, (int64_t[]){m->cfg.n_embd, T}, ws->x.nb, 0);
}

static int check_ids(const struct qwen35_config *c, const int32_t *ids, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->n_vocab)
            return seer_err(SEER_EINVAL, "token id %d at position %lld is outside the vocabulary (%lld)", ids[i],
                            (long long)i, (long long)c->n_vocab);
    return SEER_OK;
}

static int check_room(const qwen35_state *st, int64_t n)
{
    if (n < 1)
        return seer_err(SEER_EINVAL, "qwen35: nothing to run (%lld rows)", (long long)n);
    if (n > st->n_ctx - st->n_past)
        return seer_err(SEER_EINVAL, "context full: %lld + %lld tokens exceed the context size %lld",
                        (long long)st->n_past, (long long)n, (long long)st->n_ctx);
    return SEER_OK;
}

/* The layer loop (spec §2.2) over one micro-batch of T rows whose input embeddings are already in
   ws->x {H, T} and whose positions are staged in ws->pos_host[a*T + t]; the rows belong to the
   segments seg[0..n_seg), each continuing its own sequence. Positions and n_past are the
   caller's to advance. */
static int run_layers(const qwen35_model *m, qwen35_state *ws, int64_t T, const struct segment *seg, int n_seg,
                      bool chunked)
{
    tensor post = ws->pos, x = residual(m, ws, T);
    tensor_init4(&post, DT_I32, T, 3, 1, 1);
    int rc;
    if ((rc = backend_tensor_place(&post, ws->pos.buf, ws->pos.offset)) ||
        (rc = backend_tensor_set(&post, ws->pos_host, 0, (size_t)T * 12)))
        return rc;
    const struct batch b = {
        .T = T, .pos = &post, .chunked = chunked, .scratch = &ws->scratch, .seg = seg, .n_seg = n_seg,
    };
    for (int il = 0; il < m->cfg.n_layer && rc == SEER_OK; il++) {
        /* The arena's memory is reused layer after layer; on Vulkan the backend orders the next
           layer's writes after this layer's reads (its barriers cover WAR hazards). */
        arena_reset(&ws->scratch);
        rc = m->layers[il].is_attn ? attn_forward(m, il, &x, &b) : gdn_forward(m, il, &x, &b);
        if (rc == SEER_OK)
            rc = mlp_forward(m, il, &x, &b);
    }
    return rc;
}

/* One micro-batch of T rows of one sequence whose input embeddings are already in x {H, T}.
   `pos`: the rows' positions as pos[a*stride + t] (spec §3.2), or NULL for text positions from
   st->pos_next. `logits`: where this micro-batch's logits go (ALL: T rows; LAST: the last row),
   or NULL. `mk` (or NULL): its point `at` lies in 1..T of these rows. */
static int forward_ubatch(const qwen35_model *m, qwen35_state *st, int64_t T, const int32_t *pos, int64_t stride,
                          enum qwen35_logits which, float *logits, bool chunked, const struct qwen35_mark *mk)
{
    int64_t pmax = st->pos_next - 1, pmark = pmax;
    for (int a = 0; a < 3; a++)
        for (int64_t t = 0; t < T; t++) {
            int64_t p = pos ? pos[a * stride + t] : st->pos_next + t;
            st->pos_host[a * T + t] = (int32_t)p;
            pmax = MAX(pmax, p);
            if (mk && t < mk->at)
                pmark = MAX(pmark, p);
        }
    /* the mark splits the rows into two segments of the same sequence, run one after the other
       inside each layer, the state copied out between them (lm/layers.h) */
    struct segment seg[2] = {{.st = st, .r0 = 0, .T = T, .n_past = st->n_past}};
    int n_seg = 1;
    if (mk) {
        seg[0].T = mk->at, seg[0].mark = mk->rec;
        if (mk->at < T)
            seg[n_seg++] = (struct segment){.st = st, .r0 = mk->at, .T = T - mk->at, .n_past = st->n_past + mk->at};
    }
    int rc = run_layers(m, st, T, seg, n_seg, chunked);
    if (rc)
        return rc;
    if (mk) {
        mk->rec->n_past = st->n_past + mk->at;
        mk->rec->pos_next = pmark + 1;
        if ((rc = head_rows(m, st, mk->at - 1, 1, mk->logits)))
            return rc;
    }
    st->n_past += T;
    st->pos_next = pmax + 1;
    if (which == QWEN35_LOGITS_ALL)
        rc = head_all(m, st, T, logits);
    else if (which == QWEN35_LOGITS_LAST && logits)
        rc = head_rows(m, st, T - 1, 1, logits);
    return rc;
}

int qwen35_embed(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n, tensor *emb)
{
    const struct qwen35_config *c = &m->cfg;
    if (emb->type != DT_F32 || emb->ne[0] != c->n_embd || emb->ne[1] < n || n < 0)
        return seer_err(SEER_EINVAL, "qwen35_embed: %lld ids need f32 rows {%lld, ≥%lld}", (long long)n,
                        (long long)c->n_embd, (long long)n);
    int rc = check_ids(c, ids, n);
    for (int64_t s = 0; s < n && rc == SEER_OK; s += st->n_ubatch) {
        const int64_t T = MIN(st->n_ubatch, n - s);
        tensor idt = st->ids;
        tensor rows = tensor_view(emb, 2, (int64_t[]){c->n_embd, T}, emb->nb, (size_t)s * emb->nb[1]);
        tensor_init4(&idt, DT_I32, T, 1, 1, 1);
        if ((rc = backend_tensor_place(&idt, st->ids.buf, st->ids.offset)) ||
            (rc = backend_tensor_set(&idt, ids + s, 0, (size_t)T * 4)))
            break;
        rc = op_get_rows(m->be, &rows, &m->tok_embd, &idt);
    }
    return rc;
}

int qwen35_forward(const qwen35_model *m, qwen35_state *st, const tensor *emb, const int32_t *pos,
                   enum qwen35_logits which, float *logits, bool chunked)
{
    const struct qwen35_config *c = &m->cfg;
    const int64_t n = emb->ne[1];
    int rc;
    if (emb->type != DT_F32 || emb->ne[0] != c->n_embd || emb->ne[2] != 1 || emb->ne[3] != 1)
        return seer_err(SEER_EINVAL, "qwen35_forward: input embeddings must be f32 {%lld, n}", (long long)c->n_embd);
    if ((rc = check_room(st, n)))
        return rc;
    for (int64_t s = 0; s < n && rc == SEER_OK; s += st->n_ubatch) {
        const int64_t T = MIN(st->n_ubatch, n - s);
        tensor x = residual(m, st, T);
        tensor src = tensor_view(emb, 2, (int64_t[]){c->n_embd, T}, emb->nb, (size_t)s * emb->nb[1]);
        if ((rc = op_cpy(m->be, &x, &src)))
            break;
        float *lg = which == QWEN35_LOGITS_ALL ? logits + s * c->n_vocab : s + T == n ? logits : NULL;
        rc = forward_ubatch(m, st, T, pos ? pos + s : NULL, n, which, lg, chunked, NULL);
    }
    if (rc == SEER_OK)
        rc = backend_sync(m->be);
    return rc;
}

int qwen35_eval_mark(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n,
                     enum qwen35_logits which, float *logits, bool chunked, const struct qwen35_mark *mk)
{
    const struct qwen35_config *c = &m->cfg;
    /* every id is checked before the first micro-batch changes the state */
    int rc = check_room(st, n);
    if (rc == SEER_OK)
        rc = check_ids(c, ids, n);
    if (rc == SEER_OK && mk && (mk->at < 1 || mk->at > n || !mk->rec || !mk->logits))
        rc = seer_err(SEER_EINVAL, "qwen35_eval_mark: a mark after %lld of %lld rows (1..n) with a state and logits",
                      (long long)mk->at, (long long)n);
    for (int64_t s = 0; s < n && rc == SEER_OK; s += st->n_ubatch) {
        const int64_t T = MIN(st->n_ubatch, n - s);
        tensor x = residual(m, st, T);
        if ((rc = qwen35_embed(m, st, ids + s, T, &x)))
            break;
        float *lg = which == QWEN35_LOGITS_ALL ? logits + s * c->n_vocab : s + T == n ? logits : NULL;
        struct qwen35_mark here = mk ? *mk : (struct qwen35_mark){0};
        here.at -= s; /* in this micro-batch's rows when 1..T */
        rc = forward_ubatch(m, st, T, NULL, T, which, lg, chunked, mk && here.at >= 1 && here.at <= T ? &here : NULL);
    }
    if (rc == SEER_OK)
        rc = backend_sync(m->be);
    return rc;
}

int qwen35_eval(const qwen35_model *m, qwen35_state *st, const int32_t *ids, int64_t n,
                enum qwen35_logits which, float *logits, bool chunked)
{
    return qwen35_eval_mark(m, st, ids, n, which, logits, chunked, NULL);
}

/* Everything qwen35_feed_batch refuses, found before any state changes. */
static int check_batch(const qwen35_model *m, const qwen35_state *ws, qwen35_state *const *seqs, const int32_t *ids,
                       const int64_t *counts, int n, const float *logits, const struct qwen35_mark *marks)
{
    if (!ws || !seqs || !ids || !logits || n < 1 || n > ws->n_ubatch)
        return seer_err(SEER_EINVAL, "qwen35_feed_batch: %d sequences need 1..%lld (the workspace's micro-batch) "
                        "and non-NULL arguments", n, ws ? (long long)ws->n_ubatch : 0LL);
    int64_t rows = 0;
    for (int i = 0; i < n; i++) {
        const qwen35_state *s = seqs[i];
        const int64_t k = counts ? counts[i] : 1;
        if (!s)
            return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequence %d is NULL", i);
        for (int j = 0; j < i; j++)
            if (seqs[j] == s)
                return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequences %d and %d are the same state", j, i);
        if (k < 1 || k > ws->n_ubatch - rows)
            return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequence %d's %lld rows: each needs 1 or more, and all "
                            "together at most %lld (the workspace's micro-batch)", i, (long long)k,
                            (long long)ws->n_ubatch);
        if (k > s->n_ctx - s->n_past)
            return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequence %d is full (%lld + %lld tokens, context %lld)", i,
                            (long long)s->n_past, (long long)k, (long long)s->n_ctx);
        /* positions travel as i32 (spec §3.2) */
        if (s->pos_next > INT32_MAX - k)
            return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequence %d's positions from %lld exceed %d", i,
                            (long long)s->pos_next, INT32_MAX);
        if (marks && marks[i].rec && (marks[i].at < 1 || marks[i].at > k || !marks[i].logits))
            return seer_err(SEER_EINVAL, "qwen35_feed_batch: sequence %d's mark after %lld of its %lld rows (1..%lld) "
                            "with logits", i, (long long)marks[i].at, (long long)k, (long long)k);
        for (int64_t t = rows; t < rows + k; t++)
            if (ids[t] < 0 || ids[t] >= m->cfg.n_vocab)
                return seer_err(SEER_EINVAL, "qwen35_feed_batch: token id %d of sequence %d is outside the vocabulary "
                                "(%lld)", ids[t], i, (long long)m->cfg.n_vocab);
        rows += k;
    }
    return SEER_OK;
}

int qwen35_feed_batch(const qwen35_model *m, qwen35_state *ws, qwen35_state *const *seqs, const int32_t *ids,
                      const int64_t *counts, int n, float *logits, const struct qwen35_mark *marks)
{
    int rc = check_batch(m, ws, seqs, ids, counts, n, logits, marks);
    if (rc)
        return rc;
    /* sequence i's rows follow sequence i−1's, at its own next text positions (all three axes
       equal, spec §3.2); positions are staged as pos_host[a*T + row], so T comes first. A marked
       sequence's rows are two segments, its state copied out between them (lm/layers.h). */
    int64_t T = 0;
    int n_seg = 0;
    for (int i = 0; i < n; i++) {
        const int64_t k = counts ? counts[i] : 1, at = marks && marks[i].rec ? marks[i].at : k;
        ws->seg[n_seg++] = (struct segment){.st = seqs[i], .r0 = T, .T = at, .n_past = seqs[i]->n_past,
                                            .mark = marks ? marks[i].rec : NULL};
        if (at < k)
            ws->seg[n_seg++] = (struct segment){.st = seqs[i], .r0 = T + at, .T = k - at, .n_past = seqs[i]->n_past + at};
        T += k;
    }
    for (int s = 0; s < n_seg; s++) {
        const struct segment *sg = &ws->seg[s];
        for (int64_t t = 0; t < sg->T; t++)
            for (int a = 0; a < 3; a++)
                ws->pos_host[a * T + sg->r0 + t] = (int32_t)(sg->st->pos_next + sg->n_past - sg->st->n_past + t);
    }
    tensor x = residual(m, ws, T);
    if ((rc = qwen35_embed(m, ws, ids, T, &x)) || (rc = run_layers(m, ws, T, ws->seg, n_seg, true)))
        return rc;
    /* The head reads each sequence's last row, and a marked one's row at−1 before it, moved up to
       rows 0, 1, … in order: the h-th row read lies at or past row h, and every later one past the
       rows written before it. A mark at the last row shares its logits. */
    const size_t rb = ws->x.nb[1], V = (size_t)m->cfg.n_vocab;
    float **dst = ws->head_dst;
    int64_t nh = 0, r0 = 0;
    for (int i = 0; i < n && rc == SEER_OK; i++) {
        const int64_t k = counts ? counts[i] : 1;
        const bool marked = marks && marks[i].rec;
        int64_t src[2] = {r0 + (marked ? marks[i].at : k) - 1, r0 + k - 1};
        float *to[2] = {marked ? marks[i].logits : logits + i * V, logits + i * V};
        for (int h = marked && marks[i].at < k ? 0 : 1; h < 2 && rc == SEER_OK; h++, nh++) {
            dst[nh] = to[h];
            if (src[h] != nh) {
                tensor d = tensor_view(&ws->x, 1, (int64_t[]){m->cfg.n_embd}, ws->x.nb, (size_t)nh * rb);
                tensor sv = tensor_view(&ws->x, 1, (int64_t[]){m->cfg.n_embd}, ws->x.nb, (size_t)src[h] * rb);
                rc = op_cpy(m->be, &d, &sv);
            }
        }
        r0 += k;
    }
    if (rc == SEER_OK)
        rc = head_scattered(m, ws, nh, dst);
    for (int i = 0; i < n && rc == SEER_OK; i++) {
        const int64_t k = counts ? counts[i] : 1;
        if (marks && marks[i].rec) {
            marks[i].rec->n_past = seqs[i]->n_past + marks[i].at;
            marks[i].rec->pos_next = seqs[i]->pos_next + marks[i].at;
            if (marks[i].at == k)
                memcpy(marks[i].logits, logits + i * V, V * sizeof *logits);
        }
        seqs[i]->n_past += k;
        seqs[i]->pos_next += k;
    }
    return rc;
}

int qwen35_decode_batch(const qwen35_model *m, qwen35_state *ws, qwen35_state *const *seqs,
                        const int32_t *ids, int n, float *logits)
{
    return qwen35_feed_batch(m, ws, seqs, ids, NULL, n, logits, NULL);
}
