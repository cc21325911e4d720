/* batch.c — several replies per pass over the weights (include/seer.h "several replies at once",
   issue #13 item 5). Decoding one token reads every weight once; with n replies in the batch the
   same read serves n tokens (qwen35_decode_batch), while each reply keeps its own context: KV
   cache, recurrent state, positions, sampler, grammar and stop rules (api/reply.c). A prompt with
   images or videos is fed when its reply is added (the tower's work is its own); a text prompt — for
   seer_batch_add_chat, the messages the context has not seen and the assistant's opening — is left
   to the steps, which feed it beside the other replies' tokens, up to BATCH_PROMPT_ROWS rows a step
   (BATCH_PROMPT_ROWS_ALONE when no reply decodes; qwen35_feed_batch): several prompts share a pass
   over the weights, and a long one delays the others' next token by one step of that size, never
   by the whole prompt. A chat prompt's turn point (after the messages, before the opening) is
   copied out in the step whose rows cross it (the step's marks), so the context keeps it as
   seer_chat_generate's one pass does. Slots are a fixed array: a reply's visible-text state points
   into its slot, so slots never move. */
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "core/error.h"
#include "core/util.h"

/* Prompt rows one step may carry besides the replies' own tokens. On a 2-core CPU a 128-row pass of
   the 0.8B model is about half a second — a fair pause for the replies decoding beside it, and
   enough rows that the products run near their prefill rate (docs/PERFORMANCE.md). A step in which
   no reply decodes has no one to keep waiting: its prompts take up to BATCH_PROMPT_ROWS_ALONE rows,
   the micro-batch a prompt fed alone gets by default (seer_context_params.n_batch), whose larger
   products run faster (0.8B Q8_0, 2 threads: 128 rows ~300, 512 rows ~340 tokens/s). */
#define BATCH_PROMPT_ROWS 128
#define BATCH_PROMPT_ROWS_ALONE 512

enum slot_state { SLOT_FREE, SLOT_ACTIVE, SLOT_DONE };

struct slot {
    enum slot_state state;
    seer_context *c;
    struct reply rp;
    bool chat;             /* added by seer_batch_add_chat: ends through api_chat_end */
    char *full;            /* chat: the rendering the history takes at the end */
    size_t full_len;
    seer_result res;       /* SLOT_DONE: the result and status seer_batch_take hands over */
    int status;
    char *error;           /* the message of a failed status */
    uint64_t finished;     /* SLOT_DONE: order of finishing (take hands out the oldest first) */
};

struct seer_batch {
    seer_model *m;
    int max;
    struct slot *slots;    /* [max] */
    qwen35_state *ws;      /* workspace of a step: rows for `max` tokens and BATCH_PROMPT_ROWS_ALONE */
    float *logits;         /* [max · n_vocab]: the step's logits, row per reply in it */
    qwen35_state **seqs;   /* [max] per step: the states fed, their rows' counts, their slots */
    int64_t *counts;
    struct slot **rows;
    int32_t *ids;          /* [max + BATCH_PROMPT_ROWS_ALONE]: the step's tokens, reply after reply */
    struct qwen35_mark *marks; /* [max]: a chat prompt's turn point crossed in the step (rec NULL: none) */
    uint64_t n_finished;
};

int seer_batch_create(seer_model *m, int max_replies, seer_batch **out)
{
    if (!m || max_replies < 1 || max_replies > SEER_BATCH_MAX)
        return seer_err(SEER_EINVAL, "seer_batch_create: %d replies at once: give 1..%d", max_replies,
                        SEER_BATCH_MAX);
    int rc = api_model_weights(m, "seer_batch_create");
    if (rc)
        return rc;
    const size_t V = (size_t)m->lm->cfg.n_vocab, n = (size_t)max_replies;
    seer_batch *b = seer_calloc(1, sizeof *b);
    if (!b)
        return seer_err(SEER_ENOMEM, "no memory for a batch");
    b->m = m;
    b->max = max_replies;
    b->slots = seer_calloc(n, sizeof *b->slots);
    b->logits = seer_malloc(n * V * sizeof *b->logits);
    b->seqs = seer_calloc(n, sizeof *b->seqs);
    b->counts = seer_calloc(n, sizeof *b->counts);
    b->rows = seer_calloc(n, sizeof *b->rows);
    b->marks = seer_calloc(n, sizeof *b->marks);
    b->ids = seer_calloc(n + BATCH_PROMPT_ROWS_ALONE, sizeof *b->ids);
    rc = !b->slots || !b->logits || !b->seqs || !b->counts || !b->ids || !b->rows || !b->marks
                 ? seer_err(SEER_ENOMEM, "no memory for a batch of %d replies", max_replies)
                 : SEER_OK;
    /* The workspace holds no sequence, only rows for every reply's token and the prompt rows (a
       state's micro-batch is at most its context, hence a context of as many tokens: a few hundred
       KiB of unused cache beside the scratch of a 512-row micro-batch). */
    if (rc == SEER_OK) {
        const int64_t rows = max_replies + BATCH_PROMPT_ROWS_ALONE;
        api_device_lock(m);
        rc = qwen35_state_create(m->lm, rows, rows, &b->ws);
        api_device_unlock(m);
    }
    if (rc) {
        seer_batch_free(b);
        return rc;
    }
    *out = b;
    return SEER_OK;
}

/* Ends a slot's reply with rc (SEER_OK, or the error that ended it) and queues its result. */
static void slot_finish(seer_batch *b, struct slot *s, int rc)
{
    s->status = s->chat ? api_chat_end(s->c, rc, &s->rp, s->full, s->full_len, &s->res)
                        : reply_end(&s->rp, rc, &s->res);
    s->full = NULL;
    if (s->status)
        s->error = seer_strdup(seer_last_error());
    s->state = SLOT_DONE;
    s->finished = b->n_finished++;
}

void seer_batch_free(seer_batch *b)
{
    if (!b)
        return;
    for (int i = 0; b->slots && i < b->max; i++) {
        struct slot *s = &b->slots[i];
        if (s->state == SLOT_ACTIVE) {
            s->rp.r.stop = SEER_STOP_CANCELED;
            slot_finish(b, s, SEER_OK);
        }
        if (s->state == SLOT_DONE)
            seer_result_clear(&s->res), free(s->error);
    }
    api_device_lock(b->m);
    qwen35_state_free(b->ws);
    api_device_unlock(b->m);
    free(b->slots);
    free(b->logits);
    free(b->seqs);
    free(b->counts);
    free(b->ids);
    free(b->rows);
    free(b->marks);
    free(b);
}

int seer_batch_size_default(const seer_model *m, const seer_context_params *params)
{
    const seer_context_params p = params ? *params : seer_context_params_default();
    const qwen35_model *lm = m->lm;
    if (m->vocab_only) /* no device to fill */
        return 1;
    const bool cpu = !strcmp(backend_name(lm->be), "cpu");
    const enum dtype kv = !p.cache_type ? DT_F16
                          : !strcmp(p.cache_type, "f32")  ? DT_F32
                          : !strcmp(p.cache_type, "q8_0") ? DT_Q8_0
                                                          : DT_F16;
    const int64_t n_ctx = p.n_ctx > 0 ? p.n_ctx : 4096, n_batch = p.n_batch > 0 ? p.n_batch : 512;
    struct qwen35_state_bytes sb;
    uint64_t free_bytes, total;
    /* CPU: four rows cost about one weight pass with the file's layouts; past that the integer dot
       products, not the memory, set the pace. The several-row layouts (Q8_0 on AMX tiles, Q4_K
       interleaved: core/cpu/qdot_amx.c, qdot_q4r.c) take 8 for about the same: 0.8B, 2 threads,
       8 sequences decode 1.27× (Q4_K) and 1.35× (Q8_0) the tokens/s of 4 (docs/PERFORMANCE.md).
       The probe is ffn_up, in the dtype of most matrices in mixed files (Q4_K_M). A GPU has the
       arithmetic for 8. */
    const bool rows_layout = lm->layers[0].ffn_up.layout != TL_ROWS;
    int n = cpu && !rows_layout ? 4 : 8;
    qwen35_state_bytes_kv(&lm->cfg, kv, n_batch, lm->be->alignment, &sb);
    const uint64_t per = sb.kv_per_1k * (((uint64_t)n_ctx + 1023) / 1024) + sb.gdn + sb.scratch;
    if (backend_memory(lm->be, &free_bytes, &total) == SEER_OK && per > 0)
        n = (int)MIN((uint64_t)n, MAX(free_bytes / 2 / per, 1));
    else
        seer_err_clear(); /* a backend that cannot tell keeps the device's number */
    return n;
}

/* A free slot for ctx, or NULL with the error set. */
static struct slot *slot_for(seer_batch *b, seer_context *c)
{
    struct slot *free_slot = NULL;
    if (!c || c->m != b->m) {
        seer_err(SEER_EINVAL, "seer_batch: the context is not one of the batch's model");
        return NULL;
    }
    for (int i = 0; i < b->max; i++) {
        struct slot *s = &b->slots[i];
        if (s->state != SLOT_FREE && s->c == c) {
            seer_err(SEER_EINVAL, "seer_batch: this context's reply is already in the batch%s",
                     s->state == SLOT_DONE ? " (finished: take it first)" : "");
            return NULL;
        }
        if (s->state == SLOT_FREE && !free_slot)
            free_slot = s;
    }
    if (!free_slot)
        seer_err(SEER_EINVAL, "seer_batch: the batch holds %d replies already: take finished ones first", b->max);
    return free_slot;
}

/* After begin: active, or finished already (a prompt cancelled by on_progress). */
static int slot_started(seer_batch *b, struct slot *s, seer_context *c, int rc)
{
    s->c = c;
    if (rc) { /* nothing was added: the context is left as a failed seer_chat_generate leaves it */
        seer_result r;
        if (s->chat)
            api_chat_end(c, rc, &s->rp, s->full, s->full_len, &r);
        else
            reply_end(&s->rp, rc, &r);
        memset(s, 0, sizeof *s);
        return rc;
    }
    s->state = SLOT_ACTIVE;
    if (s->rp.done)
        slot_finish(b, s, SEER_OK);
    return SEER_OK;
}

int seer_batch_add_chat(seer_batch *b, seer_context *c, const seer_generate_params *params)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct slot *s = slot_for(b, c);
    if (!s)
        return SEER_EINVAL;
    s->chat = true;
    return slot_started(b, s, c, api_chat_begin(c, &p, &s->rp, &s->full, &s->full_len, true));
}

int seer_batch_add_text(seer_batch *b, seer_context *c, const char *prompt, const seer_generate_params *params)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct slot *s = slot_for(b, c);
    if (!s)
        return SEER_EINVAL;
    if (!prompt)
        return seer_err(SEER_EINVAL, "seer_batch_add_text: no prompt");
    s->chat = false;
    return slot_started(b, s, c, api_text_begin(c, prompt, &p, &s->rp, true));
}

int seer_batch_step(seer_batch *b)
{
    const size_t V = (size_t)b->m->lm->cfg.n_vocab;
    int n = 0, rc;
    int64_t r = 0, room;
    /* each reply samples from its context's logits; those that go on give the step a token */
    for (int i = 0; i < b->max; i++) {
        struct slot *s = &b->slots[i];
        const int32_t *left;
        if (s->state != SLOT_ACTIVE || reply_prompt_left(&s->rp, &left))
            continue;
        if ((rc = reply_next(&s->rp, &b->ids[r])) != 0) {
            slot_finish(b, s, rc < 0 ? rc : SEER_OK);
            continue;
        }
        b->seqs[n] = s->c->st, b->counts[n] = 1, b->marks[n] = (struct qwen35_mark){0}, b->rows[n++] = s, r++;
    }
    /* then the prompts still to feed, in slot order, as many rows as the step has room for. A prompt
       fed alone goes through the model in pieces of its context's micro-batch from its first token
       (prefill_text, qwen35_eval), and where a piece ends changes the bits (the attention tiles and
       the Gated DeltaNet's chunks see other rows together), so a step carries at most one whole
       piece of each prompt; one that does not fit the room left waits for a later step (the first
       slot with prompt rows always has room for a piece of BATCH_PROMPT_ROWS or fewer). Only a
       piece larger than a step's whole room (a micro-batch above BATCH_PROMPT_ROWS, such as the
       default 512, beside decoding replies) is cut, and that prompt's reply may then differ from
       its reply alone by the rounding of its prompt. */
    const int64_t budget = n > 0 ? BATCH_PROMPT_ROWS : BATCH_PROMPT_ROWS_ALONE;
    room = budget;
    for (int i = 0; i < b->max && room > 0; i++) {
        struct slot *s = &b->slots[i];
        const int32_t *left;
        const int64_t n_left = s->state == SLOT_ACTIVE ? (int64_t)reply_prompt_left(&s->rp, &left) : 0;
        if (n_left == 0)
            continue;
        const int64_t piece = s->c->st->n_ubatch, to_end = piece - (int64_t)s->rp.n_fed_early % piece;
        int64_t k = MIN(n_left, to_end);
        if (k > room)
            k = piece <= budget ? 0 : room;
        if (k == 0)
            continue;
        memcpy(b->ids + r, left, (size_t)k * sizeof *b->ids);
        b->marks[n] = reply_prompt_mark(&s->rp, (size_t)k);
        b->seqs[n] = s->c->st, b->counts[n] = k, b->rows[n++] = s, r += k, room -= k;
    }
    if (n == 0)
        return SEER_OK;
    api_device_lock(b->m);
    rc = qwen35_feed_batch(b->m->lm, b->ws, b->seqs, b->ids, b->counts, n, b->logits, b->marks);
    api_device_unlock(b->m);
    for (int k = 0, at = 0; k < n; at += (int)b->counts[k++]) {
        struct slot *s = b->rows[k];
        const int32_t *left;
        const bool prompt = reply_prompt_left(&s->rp, &left) > 0;
        if (rc) { /* the device failed: every reply of the step ends with the error */
            slot_finish(b, s, rc);
            continue;
        }
        /* a prompt's logits matter once it is fed in full; a reply's after every token */
        if (!prompt || (size_t)b->counts[k] == reply_prompt_left(&s->rp, &left))
            memcpy(s->c->logits, b->logits + (size_t)k * V, V * sizeof *b->logits);
        if (!prompt)
            reply_fed(&s->rp, b->ids[at]);
        else if (reply_prompt_fed(&s->rp, (size_t)b->counts[k]))
            slot_finish(b, s, SEER_OK); /* on_progress cancelled it: a prompt cut short */
        else if (s->chat && !reply_prompt_left(&s->rp, &left))
            api_chat_prompt_done(s->c, &s->rp); /* its turn point, passed in this step or before */
    }
    return rc;
}

int seer_batch_active(const seer_batch *b)
{
    int n = 0;
    for (int i = 0; i < b->max; i++)
        n += b->slots[i].state == SLOT_ACTIVE;
    return n;
}

int64_t seer_batch_prompt_left(const seer_batch *b)
{
    int64_t n = 0;
    for (int i = 0; i < b->max; i++) {
        const int32_t *ids;
        if (b->slots[i].state == SLOT_ACTIVE)
            n += (int64_t)reply_prompt_left(&b->slots[i].rp, &ids);
    }
    return n;
}

int seer_batch_take(seer_batch *b, seer_context **ctx, seer_result *result, int *status)
{
    struct slot *oldest = NULL;
    for (int i = 0; i < b->max; i++) {
        struct slot *s = &b->slots[i];
        if (s->state == SLOT_DONE && (!oldest || s->finished < oldest->finished))
            oldest = s;
    }
    if (!oldest)
        return 0;
    *ctx = oldest->c;
    *result = oldest->res;
    *status = oldest->status;
    if (oldest->status) /* the message, as the failing call would have left it */
        seer_err(oldest->status, "%s", oldest->error ? oldest->error : seer_strerror(oldest->status));
    free(oldest->error);
    memset(oldest, 0, sizeof *oldest);
    return 1;
}
