/* snapshot.c — a context copied to host memory and back (include/seer.h "snapshots and partial
   feeding", api/snapshot.h). What a context is: its sequence state on the device (per attention layer
   the K and V rows in use, per Gated DeltaNet layer the conv window and recurrent state, and the
   positions with their rope delta) and, on the host, what makes the next call continue it exactly
   (the last logits, the pending stop token, the fed ids, the history and the text the state holds).
   Only rows [0, n_past) of each KV cache are copied, in the cache's own type, so a snapshot costs
   what the conversation holds, not n_ctx. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/snapshot.h"
#include "core/error.h"
#include "core/util.h"

struct seer_snapshot {
    const seer_model *m;
    enum dtype kv_type;
    bool kv;                 /* KV rows saved (a public snapshot); else a rollback point */
    int64_t n_past, pos_next;
    unsigned char *dev;      /* every layer's saved bytes, back to back */
    size_t *off;             /* [2·n_layer + 1]: layer il's two tensors (K and V, or conv and ssm)
                                lie at dev + off[2il] and dev + off[2il + 1] */
    float *logits;           /* [n_vocab] */
    int32_t *pending, *fed;
    size_t n_pending, n_fed;
    struct chat_msg *hist;
    size_t n_hist;
    char *fed_text;
    size_t fed_len;
    size_t bytes;            /* host memory held, for seer_snapshot_bytes (its turn's included) */
    seer_snapshot *turn;     /* a public snapshot: the context's turn point then (seer_context.turn),
                                shared, not copied: snapshots are immutable */
    atomic_int refs;         /* owners: the taker, and contexts and snapshots holding it as a turn */
};

/* The two device tensors of layer il and how many of their bytes a snapshot holds: the first `rows`
   token rows of K and V ({hd, nkv, n_ctx}: a row is nb[2] bytes), or all of the conv and ssm state. */
static void layer_parts(const seer_model *m, const qwen35_state *st, int64_t il, int64_t rows, tensor *t[2],
                        size_t n[2])
{
    if (m->lm->layers[il].is_attn) { /* a recurrent-only state (a mark) has no KV cache: rows 0 */
        t[0] = rows ? &st->k_cache[il] : NULL, t[1] = rows ? &st->v_cache[il] : NULL;
        n[0] = rows ? (size_t)rows * t[0]->nb[2] : 0, n[1] = rows ? (size_t)rows * t[1]->nb[2] : 0;
    } else {
        t[0] = &st->conv_state[il], t[1] = &st->ssm_state[il];
        n[0] = tensor_nbytes(t[0]), n[1] = tensor_nbytes(t[1]);
    }
}

/* Copies the device half between st and s (to_host: read), under the model's device lock; reading,
   the recurrent layers' bytes come from rec's host copy instead when rec is given (a turn point). */
static int copy_device(const seer_model *m, const qwen35_state *st, const seer_snapshot *s, bool to_host,
                       const seer_snapshot *rec)
{
    int rc = SEER_OK;
    api_device_lock((seer_model *)m);
    for (int64_t il = 0; il < m->lm->cfg.n_layer && rc == SEER_OK; il++) {
        tensor *t[2];
        size_t n[2];
        layer_parts(m, st, il, s->kv ? s->n_past : 0, t, n);
        for (int k = 0; k < 2 && rc == SEER_OK; k++)
            if (n[k] && rec && !m->lm->layers[il].is_attn)
                memcpy(s->dev + s->off[2 * il + k], rec->dev + rec->off[2 * il + k], n[k]);
            else if (n[k])
                rc = to_host ? backend_tensor_get(t[k], s->dev + s->off[2 * il + k], 0, n[k])
                             : backend_tensor_set(t[k], s->dev + s->off[2 * il + k], 0, n[k]);
    }
    api_device_unlock((seer_model *)m);
    return rc;
}

/* NULL is fine whatever n (a copy that failed is NULL). */
static void hist_free(struct chat_msg *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++)
        free(h[i].role), free(h[i].content);
    free(h);
}

/* A copy of h[0..n) with its own strings; *bytes grows by what it holds. NULL when out of memory. */
static struct chat_msg *hist_dup(const struct chat_msg *h, size_t n, size_t *bytes)
{
    struct chat_msg *d = seer_calloc(n ? n : 1, sizeof *d);
    for (size_t i = 0; d && i < n; i++) {
        d[i] = (struct chat_msg){seer_strdup(h[i].role), seer_strdup(h[i].content), h[i].n_images, h[i].n_videos};
        if (!d[i].role || !d[i].content) {
            hist_free(d, i + 1);
            return NULL;
        }
        *bytes += sizeof *d + strlen(h[i].role) + strlen(h[i].content) + 2;
    }
    return d;
}

/* A copy of n bytes (n may be 0: a 1-byte block, so NULL means only "no memory"). */
static void *mem_dup(const void *p, size_t n)
{
    void *d = seer_malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

/* Another owner of s (NULL is fine). Atomic: contexts on several threads may restore one snapshot. */
static seer_snapshot *ref(seer_snapshot *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void seer_snapshot_free(seer_snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) > 1)
        return;
    seer_snapshot_free(s->turn);
    free(s->dev), free(s->off), free(s->logits), free(s->pending), free(s->fed), free(s->fed_text);
    hist_free(s->hist, s->n_hist);
    free(s);
}

/* What a snapshot copies: the device state st (with kv, its first n_past KV rows; the recurrent
   layers from rec's host copy instead when rec is given) at n_past and pos_next, and these host parts. */
struct snap_src {
    const qwen35_state *st;
    const seer_snapshot *rec;
    int64_t n_past, pos_next;
    const float *logits;
    const int32_t *pending, *fed;
    size_t n_pending, n_fed;
    const struct chat_msg *hist;
    size_t n_hist;
    const char *text;
    size_t len;
};

static int take(const seer_context *c, const struct snap_src *src, bool kv, seer_snapshot **out)
{
    const seer_model *m = c->m;
    const int64_t L = m->lm->cfg.n_layer, V = m->lm->cfg.n_vocab;
    seer_snapshot *s = seer_calloc(1, sizeof *s);
    if (!s)
        goto oom;
    *s = (seer_snapshot){.m = m, .kv_type = c->st->kv_type, .kv = kv, .n_past = src->n_past, .pos_next = src->pos_next,
                         .n_pending = src->n_pending, .n_fed = src->n_fed, .n_hist = src->n_hist, .fed_len = src->len,
                         .refs = 1};
    if (!(s->off = seer_malloc((size_t)(2 * L + 1) * sizeof *s->off)))
        goto oom;
    s->off[0] = 0;
    for (int64_t il = 0; il < L; il++) {
        tensor *t[2];
        size_t n[2];
        layer_parts(m, src->st, il, kv ? src->n_past : 0, t, n);
        s->off[2 * il + 1] = s->off[2 * il] + n[0];
        s->off[2 * il + 2] = s->off[2 * il + 1] + n[1];
    }
    s->bytes = sizeof *s + s->off[2 * L] + (size_t)(2 * L + 1) * sizeof *s->off + (size_t)V * sizeof *s->logits +
               (src->n_pending + src->n_fed) * sizeof(int32_t) + src->len + 1;
    if (!(s->dev = seer_malloc(s->off[2 * L] ? s->off[2 * L] : 1)) ||
        !(s->logits = mem_dup(src->logits, (size_t)V * sizeof *s->logits)) ||
        !(s->pending = mem_dup(src->pending, src->n_pending * sizeof *s->pending)) ||
        !(s->fed = mem_dup(src->fed, src->n_fed * sizeof *s->fed)) ||
        !(s->hist = hist_dup(src->hist, src->n_hist, &s->bytes)) ||
        (src->text && !(s->fed_text = mem_dup(src->text, src->len + 1))))
        goto oom;
    int rc = copy_device(m, src->st, s, true, src->rec);
    if (rc) {
        seer_snapshot_free(s);
        return rc;
    }
    *out = s;
    return SEER_OK;
oom:
    seer_snapshot_free(s);
    return seer_err(SEER_ENOMEM, "no memory for a snapshot of %lld tokens", (long long)src->n_past);
}

int api_snapshot_take(const seer_context *c, bool kv, seer_snapshot **out)
{
    const struct snap_src src = {.st = c->st, .n_past = c->st->n_past, .pos_next = c->st->pos_next,
                                 .logits = c->logits, .pending = c->pending, .n_pending = c->n_pending,
                                 .fed = c->fed, .n_fed = c->n_fed, .hist = c->hist, .n_hist = c->n_hist,
                                 .text = c->fed_text, .len = c->fed_len};
    int rc = take(c, &src, kv, out);
    if (!rc && kv && c->turn) { /* so that the restored conversation's next turn can go back there too */
        (*out)->turn = ref(c->turn);
        (*out)->bytes += c->turn->bytes;
    }
    return rc;
}

int api_snapshot_take_mark(const seer_context *c, const qwen35_state *rec, const float *logits, size_t n_fed,
                           const char *text, size_t len, seer_snapshot **out)
{
    const struct snap_src src = {.st = rec, .n_past = rec->n_past, .pos_next = rec->pos_next, .logits = logits,
                                 .fed = c->fed, .n_fed = n_fed, .hist = c->hist, .n_hist = c->n_hist,
                                 .text = text, .len = len};
    return take(c, &src, false, out);
}

size_t api_snapshot_fed(const seer_snapshot *s)
{
    return s->n_fed;
}

/* api_snapshot_put, or with keep_history api_snapshot_rewind. */
static int put(seer_context *c, const seer_snapshot *s, bool keep_history)
{
    qwen35_state *st = c->st;
    const int64_t V = c->m->lm->cfg.n_vocab;
    /* the host half is built first, so running out of memory leaves c as it was */
    size_t ignored = 0;
    struct chat_msg *hist = keep_history ? NULL : hist_dup(s->hist, s->n_hist, &ignored);
    char *text = s->fed_text ? mem_dup(s->fed_text, s->fed_len + 1) : NULL;
    if ((!keep_history && !hist) || (s->fed_text && !text) ||
        !seer_grow(&c->pending, &c->cap_pending, s->n_pending, sizeof *c->pending, 4) ||
        (!keep_history && !seer_grow(&c->hist, &c->cap_hist, s->n_hist, sizeof *c->hist, 8))) {
        hist_free(hist, s->n_hist);
        free(text);
        return seer_err(SEER_ENOMEM, "no memory to restore a snapshot");
    }
    int rc = copy_device(c->m, st, s, false, NULL);
    if (rc) { /* a half-written state describes nothing: start over */
        hist_free(hist, s->n_hist);
        free(text);
        seer_context_reset(c);
        return rc;
    }
    st->n_past = s->n_past;
    st->pos_next = s->pos_next;
    if (keep_history) {
        free(c->fed_text);
    } else {
        api_history_clear(c);
        if (s->kv) { /* another conversation's queued media; a rollback keeps its own for the next try */
            api_images_clear(&c->images);
            api_videos_clear(&c->videos);
        }
        memcpy(c->hist, hist, s->n_hist * sizeof *hist);
        free(hist); /* its strings now belong to c->hist */
        c->n_hist = s->n_hist;
        if (s->kv) { /* the restored conversation's turn point replaces c's */
            seer_snapshot_free(c->turn);
            c->turn = ref(s->turn);
        }
    }
    c->fed_text = text;
    c->fed_len = s->fed_len;
    memcpy(c->logits, s->logits, (size_t)V * sizeof *c->logits);
    if (s->n_pending)
        memcpy(c->pending, s->pending, s->n_pending * sizeof *c->pending);
    c->n_pending = s->n_pending;
    if (s->n_fed)
        memcpy(c->fed, s->fed, s->n_fed * sizeof *c->fed);
    c->n_fed = s->n_fed;
    return SEER_OK;
}

int api_snapshot_put(seer_context *c, const seer_snapshot *s)
{
    return put(c, s, false);
}

int api_snapshot_rewind(seer_context *c, const seer_snapshot *s)
{
    return put(c, s, true);
}

const char *api_snapshot_text(const seer_snapshot *s, size_t *len)
{
    *len = s->fed_len;
    return s->fed_text;
}

size_t api_snapshot_pending(const seer_snapshot *s)
{
    return s->n_pending;
}

/* ---- forgetting ------------------------------------------------------------------------------ */
/* Here rather than in api/generate.c: restoring replaces the history and, when the device copy
   fails, forgets the state, while api/generate.c takes and puts snapshots; files never call each
   other in both directions (scripts/call-cycles.sh). */

void api_history_clear(seer_context *c)
{
    for (size_t i = 0; i < c->n_hist; i++)
        free(c->hist[i].role), free(c->hist[i].content);
    c->n_hist = 0;
    seer_freep(&c->fed_text);
    c->fed_len = 0;
}

int seer_context_reset(seer_context *c)
{
    api_history_clear(c);
    seer_snapshot_free(c->turn);
    c->turn = NULL;
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    c->n_pending = 0;
    c->n_fed = 0;
    if (!c->st)
        return SEER_OK;
    api_device_lock(c->m);
    int rc = qwen35_state_reset(c->m->lm, c->st);
    api_device_unlock(c->m);
    return rc;
}

/* ---- the public functions ------------------------------------------------------------------- */

int seer_context_save(const seer_context *c, seer_snapshot **out)
{
    if (!c || !out)
        return seer_err(SEER_EINVAL, "seer_context_save: a context and an out pointer are required");
    int rc = api_model_weights(c->m, "seer_context_save");
    if (rc)
        return rc;
    if (c->images.n || c->videos.n)
        return seer_err(SEER_EINVAL, "seer_context_save: %zu images and %zu videos are queued but not fed: a snapshot "
                        "holds only what the state holds (seer_chat_feed or generate first)", c->images.n, c->videos.n);
    return api_snapshot_take(c, true, out);
}

int seer_context_save_turn(const seer_context *c, seer_snapshot **out)
{
    if (!c || !out)
        return seer_err(SEER_EINVAL, "seer_context_save_turn: a context and an out pointer are required");
    if (!c->turn)
        return seer_err(SEER_EINVAL, "seer_context_save_turn: no turn point yet (a reply, or seer_chat_feed with "
                        "SEER_FEED_REPLY, makes one)");
    /* The turn point holds the recurrent half and the host half; its KV rows are the context's own
       first n_past rows, which everything fed since was appended after (include/seer.h). */
    const seer_snapshot *t = c->turn;
    const struct snap_src src = {.st = c->st, .rec = t, .n_past = t->n_past, .pos_next = t->pos_next,
                                 .logits = t->logits, .pending = t->pending, .n_pending = t->n_pending,
                                 .fed = t->fed, .n_fed = t->n_fed, .hist = t->hist, .n_hist = t->n_hist,
                                 .text = t->fed_text, .len = t->fed_len};
    return take(c, &src, true, out);
}

int seer_context_restore(seer_context *c, const seer_snapshot *s)
{
    if (!c || !s)
        return seer_err(SEER_EINVAL, "seer_context_restore: a context and a snapshot are required");
    int rc = api_model_weights(c->m, "seer_context_restore");
    if (rc)
        return rc;
    if (s->m != c->m || !s->kv)
        return seer_err(SEER_EINVAL, "seer_context_restore: the snapshot was saved from a context of another model");
    if (s->kv_type != c->st->kv_type)
        return seer_err(SEER_EINVAL, "seer_context_restore: the snapshot's KV cache is %s, the context's %s",
                        dtype_name(s->kv_type), dtype_name(c->st->kv_type));
    if (s->n_past > c->st->n_ctx || (int64_t)s->n_fed > c->st->n_ctx)
        return seer_err(SEER_EINVAL, "seer_context_restore: the snapshot holds %lld tokens but the context only %lld "
                        "(n_ctx)", (long long)s->n_past, (long long)c->st->n_ctx);
    return api_snapshot_put(c, s);
}

size_t seer_snapshot_bytes(const seer_snapshot *s)
{
    return s ? s->bytes : 0;
}

int64_t seer_snapshot_tokens(const seer_snapshot *s)
{
    return s ? s->n_past : 0;
}
