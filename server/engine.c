/* engine.c — the slots of `seer serve` (server/server.h). Two threads drive one model:
     the feeder takes queued jobs while a slot is free, restores the longest cached prefix into the
     slot's context and adds the request's messages; media not in the cache it feeds itself
     (seer_chat_feed: the tower's work stays off the decoder's thread), saving a snapshot after
     the last message's media, where a later request can share it (docs/SERVING.md "Prefix cache");
     the decoder adds every ready slot to one seer_batch and steps it: each step decodes one token
     of every reply and feeds up to 128 rows of the text prompts still to feed (the messages and
     the assistant's opening), so several requests' prompts share a pass over the weights and the
     decoding replies wait a step, not a prompt; the turn point (after the last message) is copied
     out in the step that crosses it and cached when the reply ends. It hands text to the jobs as
     it comes and finishes them as they end.
   The two take turns on the device: the library releases it between a prompt's micro-batches
   (on_progress runs unlocked) and between tower blocks, first come first served, and the feeder's
   on_progress waits there for one decode step whenever replies are decoding, so a long media
   prompt delays the others by about one micro-batch (an image by one tower block) per token, not
   by the whole prompt. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util.h"
#include "server/server.h"

enum slot_state { SLOT_FREE, SLOT_FEEDING, SLOT_READY, SLOT_DECODING };

struct slot {
    engine *e;
    seer_context *ctx;
    struct job *job;
    enum slot_state state;
    seer_generate_params gp;
    int64_t cached, fed;      /* prompt tokens restored from the cache, and fed by the feeder */
    double t_feed;            /* when feeding began */
    bool save_turn;           /* the batch feeds the prompt: cache its turn point under turn_key after */
    struct cache_key turn_key;
};

struct engine {
    seer_model *m;
    const struct serve_options *o;
    struct metrics *met;
    prefix_cache *cache;
    seer_batch *batch;
    struct slot *slots;
    struct slot **ready;      /* [n_slots]: the decoder's slots joining the batch at the next step */
    int n_slots;
    pthread_mutex_t mu;       /* the queue, the slots' states, steps, stopping */
    pthread_cond_t cv;        /* any of them changed */
    struct job **queue;       /* ring of max_queue */
    int q_head, q_len;
    unsigned long long steps; /* decode steps done */
    int decoding;             /* replies in the batch */
    bool stopping;            /* no new jobs; threads end when idle */
    atomic_bool aborting;     /* grace over: cancel everything (read unlocked by the callbacks) */
    pthread_t feeder, decoder;
};

void srv_deadline(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += ms % 1000 * 1000000L;
    if (ts->tv_nsec >= 1000000000L)
        ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

/* ---- jobs ------------------------------------------------------------------------------------- */

struct job *job_new(void)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 1;
    j->http_status = 200;
    return j;
}

void job_release(struct job *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    int left = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (left)
        return;
    for (size_t i = 0; j->media && i < j->req.n_messages; i++)
        media_set_free(&j->media[i]);
    free(j->media);
    srv_request_free(&j->req);
    free(j->text);
    free(j->reasoning);
    srv_logprobs_free(&j->logprobs);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* Appends streamed bytes under the job's lock and wakes its request thread. */
static int job_append(struct job *j, char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    int rc = 0;
    pthread_mutex_lock(&j->mu);
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *len + n + 1)
            c *= 2;
        char *p = realloc(*buf, c);
        if (!p)
            rc = -1;
        else
            *buf = p, *cap = c;
    }
    if (!rc) {
        memcpy(*buf + *len, s, n);
        *len += n;
        (*buf)[*len] = '\0';
        if (!j->t_first)
            j->t_first = cli_time_now();
    }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

static int on_text(const char *s, size_t n, void *user)
{
    struct slot *sl = user;
    struct job *j = sl->job;
    return job_append(j, &j->text, &j->text_len, &j->text_cap, s, n) || atomic_load(&j->cancelled) ||
           atomic_load(&sl->e->aborting);
}

static int on_thinking(const char *s, size_t n, void *user)
{
    struct slot *sl = user;
    struct job *j = sl->job;
    return job_append(j, &j->reasoning, &j->reasoning_len, &j->reasoning_cap, s, n) ||
           atomic_load(&j->cancelled) || atomic_load(&sl->e->aborting);
}

/* Between two prompt micro-batches (the device released) and after each token. While replies are
   decoding, the feeder waits here for one of their steps (at most 100 ms, so a stalled decoder
   cannot hold it), which alternates the two on the device. */
static int on_progress(int64_t done, int64_t total, int64_t generated, void *user)
{
    struct slot *sl = user;
    engine *e = sl->e;
    (void)total;
    if (atomic_load(&sl->job->cancelled) || atomic_load(&e->aborting))
        return 1;
    if (generated == 0 && done < total && sl->state == SLOT_FEEDING) {
        pthread_mutex_lock(&e->mu);
        if (e->decoding > 0) {
            unsigned long long s0 = e->steps;
            struct timespec until;
            srv_deadline(&until, 100);
            while (e->steps == s0 && e->decoding > 0 && !atomic_load(&e->aborting))
                if (pthread_cond_timedwait(&e->cv, &e->mu, &until) == ETIMEDOUT)
                    break;
        }
        pthread_mutex_unlock(&e->mu);
    }
    return 0;
}

static int on_video_progress(const char *path, int64_t done, int64_t pairs, void *user)
{
    (void)path;
    return on_progress(done, pairs + 1, 0, user); /* pairs + 1: never "done" while encoding */
}

/* Ends a job: the output fields under its lock, its request thread woken, the engine's reference
   dropped. status 200 with stop/usage, or an error status with *err. */
static void job_finish(struct job *j, int status, const struct srv_error *err)
{
    pthread_mutex_lock(&j->mu);
    j->http_status = status;
    if (err)
        j->err = *err;
    j->done = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    job_release(j);
}

/* A library failure as the HTTP error it is: media that cannot be read or decoded 422, media the
   model cannot take 415, other bad input 400, memory 503, the device 500; cancelled is 499 (nginx's
   "client closed request": the client is gone, so it is counted, never sent). */
static void fail_from_library(struct job *j, int rc, const char *what)
{
    struct srv_error err = {0};
    const char *msg = seer_last_error();
    if (rc == SEER_ECANCELED || atomic_load(&j->cancelled))
        srv_fail(&err, 499, NULL, "cancelled");
    else if (rc == SEER_ENOMEM)
        srv_fail(&err, 503, NULL, "%s: out of memory: %s", what, msg);
    else if (rc == SEER_EDECODE || rc == SEER_EFORMAT || rc == SEER_EIO)
        srv_fail(&err, 422, NULL, "%s: %s", what, msg);
    else if (rc == SEER_EUNSUPPORTED)
        srv_fail(&err, 415, NULL, "%s: %s", what, msg);
    else if (rc == SEER_EINVAL)
        srv_fail(&err, 400, NULL, "%s: %s", what, msg);
    else
        srv_fail(&err, 500, NULL, "%s: %s", what, msg);
    job_finish(j, err.status, &err);
}

/* ---- the feeder ------------------------------------------------------------------------------- */

static void slot_params(struct slot *sl, const struct job *j)
{
    const struct serve_options *o = sl->e->o;
    seer_generate_params *gp = &sl->gp;
    *gp = o->gp;
    gp->sampling = j->req.sampling;
    if (j->req.max_tokens > 0)
        gp->max_tokens = j->req.max_tokens;
    gp->stop = (const char *const *)j->req.stop;
    gp->n_stop = j->req.n_stop;
    gp->grammar = j->req.grammar;
    gp->json_schema = j->req.json_schema;
    if (j->req.think >= 0)
        gp->think = j->req.think;
    if (j->req.thinking_budget > 0)
        gp->thinking_budget = j->req.thinking_budget;
    gp->show_thinking = 0;
    gp->logprobs = j->req.logprobs;
    gp->top_logprobs = j->req.top_logprobs;
    gp->on_text = on_text;
    gp->on_thinking = on_thinking;
    gp->on_progress = on_progress;
    gp->on_video_progress = on_video_progress;
    gp->user_data = sl;
}

static int add_message(seer_context *ctx, const struct srv_message *msg, const struct media_set *ms,
                       const char *text)
{
    if (ms->n_images || ms->n_videos)
        return seer_chat_add_media(ctx, msg->role, ms->images, ms->n_images, ms->videos, ms->n_videos, text);
    return seer_chat_add(ctx, msg->role, text);
}

/* The context as it is now, or (turn) at its turn point, cached under key. */
static void save(engine *e, seer_context *ctx, struct cache_key key, bool turn)
{
    seer_snapshot *snap;
    if (e->cache && (turn ? seer_context_save_turn(ctx, &snap) : seer_context_save(ctx, &snap)) == SEER_OK)
        cache_put(e->cache, key, snap);
}

/* The context limit, before any work: 0, or -1 after finishing the job with 400
   context_length_exceeded. */
static int fits(struct slot *sl, int64_t need)
{
    const int64_t n_ctx = sl->e->o->cp.n_ctx;
    if (n_ctx <= 0 || need + 1 <= n_ctx)
        return 0;
    struct srv_error err = {0};
    srv_fail(&err, 400, "messages", "the prompt needs %lld tokens but a slot's context holds %lld (seer serve -c): shorten it",
             (long long)need, (long long)n_ctx);
    snprintf(err.code, sizeof err.code, "context_length_exceeded");
    job_finish(sl->job, 400, &err);
    return -1;
}

/* A raw prompt: measured here, fed by seer_batch_add_text. */
static int feed_completion(struct slot *sl)
{
    int64_t measured = 0;
    int rc = seer_context_reset(sl->ctx);
    if (!rc)
        rc = seer_text_measure(sl->ctx, sl->job->req.prompt, NULL, 0, &measured);
    if (rc) {
        fail_from_library(sl->job, rc, "the prompt");
        return -1;
    }
    return fits(sl, measured);
}

/* A chat's prompt fed, from the longest cached prefix on (file comment): 0, or -1 after finishing
   the job with its error. keys: [2 (n + 1)] scratch. */
static int feed_chat(struct slot *sl, struct cache_key *keys)
{
    engine *e = sl->e;
    struct job *j = sl->job;
    seer_context *ctx = sl->ctx;
    const struct srv_request *r = &j->req;
    const size_t n = r->n_messages;
    int64_t fed = 0, measured = 0;
    int rc;

    /* candidates in prefix order: messages 0..k for k < n-1, the last message's media, all */
    struct cache_key mkey, *cand = keys + n + 1;
    bool has_mkey;
    media_prefix_keys(r, j->media, keys, &mkey, &has_mkey);
    size_t nc = 0, i_media = (size_t)-1;
    for (size_t k = 0; k + 1 < n; k++)
        cand[nc++] = keys[k];
    if (has_mkey)
        i_media = nc, cand[nc++] = mkey;
    cand[nc++] = keys[n - 1];
    const int hit = e->cache ? cache_restore_longest(e->cache, cand, nc, ctx, &sl->cached) : -1;
    if (hit < 0 && (rc = seer_context_reset(ctx)))
        goto fail;
    if (e->cache)
        atomic_fetch_add(hit < 0 ? &e->met->cache_misses : &e->met->cache_hits, 1);
    /* what the restored snapshot holds: messages 0..done-1, the last of them (media_open) with its
       media and without its text */
    const bool all = hit >= 0 && (size_t)hit == nc - 1, media_open = hit >= 0 && (size_t)hit == i_media;
    const size_t done = hit < 0 ? 0 : all || media_open ? n : (size_t)hit + 1;
    /* the last message's media go in first with no text, to be fed and saved apart */
    const bool split = !all && !media_open && has_mkey && e->cache;
    for (size_t k = done; k < n; k++)
        if ((rc = add_message(ctx, &r->messages[k], &j->media[k], split && k == n - 1 ? "" : r->messages[k].text)))
            goto fail;
    if (media_open && (rc = seer_chat_append_text(ctx, r->messages[n - 1].text)))
        goto fail;
    /* the split message is measured without its text, which then adds exactly its own tokens (the
       text follows <|vision_end|>, a special token) */
    if ((rc = seer_chat_measure(ctx, &sl->gp, &measured)))
        goto fail;
    if (split) {
        int32_t *ids;
        size_t n_ids;
        const char *t = r->messages[n - 1].text;
        if ((rc = seer_tokenize(e->m, t, strlen(t), 0, &ids, &n_ids)))
            goto fail;
        seer_free(ids);
        measured += (int64_t)n_ids;
    }
    if (fits(sl, sl->cached + measured))
        return -1;
    if (split) {
        if ((rc = seer_chat_feed(ctx, &sl->gp, SEER_FEED_MEDIA, &fed)))
            goto fail;
        sl->fed += fed;
        save(e, ctx, mkey, false);
        if ((rc = seer_chat_append_text(ctx, r->messages[n - 1].text)))
            goto fail;
    }
    /* The messages and the assistant's opening in one pass; the cache keeps the state between
       them (the turn point), where a later turn of the same chat continues (the opening is this
       reply's alone). Text left to feed goes to the batch's steps, beside the other slots' tokens
       and prompts (several prompts share a pass over the weights, and the decoding slots wait a
       step, not a prompt); the turn point is cached when the reply ends. Media still queued
       (earlier messages' images, or the last one's uncached) are fed here. */
    bool media_left = false;
    for (size_t k = done; k < n; k++)
        media_left |= (j->media[k].n_images || j->media[k].n_videos) && !(split && k == n - 1);
    if (!all && !media_left) {
        sl->save_turn = e->cache != NULL, sl->turn_key = keys[n - 1];
    } else if (!all) {
        if ((rc = seer_chat_feed(ctx, &sl->gp, SEER_FEED_REPLY, &fed)))
            goto fail;
        sl->fed += fed;
        save(e, ctx, keys[n - 1], true);
    }
    return 0;
fail:
    fail_from_library(j, rc, "the prompt");
    return -1;
}

/* The prompt of slot sl's job fed: 0, or -1 after finishing the job with its error. */
static int feed_job(struct slot *sl)
{
    struct job *j = sl->job;
    slot_params(sl, j);
    sl->cached = sl->fed = 0;
    sl->save_turn = false;
    if (j->req.endpoint == SRV_COMPLETION)
        return feed_completion(sl);
    struct cache_key *keys = malloc(2 * (j->req.n_messages + 1) * sizeof *keys);
    if (!keys) {
        fail_from_library(j, SEER_ENOMEM, "the prompt");
        return -1;
    }
    int rc = feed_chat(sl, keys);
    free(keys);
    return rc;
}

static void *feeder_main(void *arg)
{
    engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        struct slot *sl = NULL;
        while (!atomic_load(&e->aborting) && (e->q_len == 0 || !sl)) {
            sl = NULL;
            for (int i = 0; i < e->n_slots && !sl; i++)
                if (e->slots[i].state == SLOT_FREE)
                    sl = &e->slots[i];
            if (e->q_len > 0 && sl)
                break;
            if (e->stopping && e->q_len == 0)
                break;
            pthread_cond_wait(&e->cv, &e->mu);
        }
        if (atomic_load(&e->aborting) || (e->stopping && e->q_len == 0))
            break;
        struct job *j = e->queue[e->q_head];
        e->q_head = (e->q_head + 1) % e->o->max_queue;
        e->q_len--;
        atomic_store(&e->met->queued, e->q_len);
        sl->job = j;
        sl->state = SLOT_FEEDING;
        atomic_fetch_add(&e->met->busy_slots, 1);
        pthread_mutex_unlock(&e->mu);

        double t0 = cli_time_now();
        /* a job whose client left while it was queued is finished here too: feed_job, which
           finishes the jobs it fails, never saw it, and the engine's reference (with the
           request's media) leaked */
        const bool left = atomic_load(&j->cancelled);
        int rc = left ? -1 : feed_job(sl);
        /* rc first: a job feed_job failed is finished, and may be freed already */
        if (left || (rc == 0 && atomic_load(&j->cancelled))) {
            struct srv_error err = {0};
            srv_fail(&err, 499, NULL, "cancelled");
            job_finish(j, 499, &err);
            rc = -1;
        }
        atomic_fetch_add(&e->met->prefill_ns, (long long)((cli_time_now() - t0) * 1e9));
        pthread_mutex_lock(&e->mu);
        if (rc) {
            sl->job = NULL;
            sl->state = SLOT_FREE;
            atomic_fetch_sub(&e->met->busy_slots, 1);
        } else {
            sl->state = SLOT_READY;
        }
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ---- the decoder ------------------------------------------------------------------------------ */

static struct slot *slot_of(engine *e, const seer_context *ctx)
{
    for (int i = 0; i < e->n_slots; i++)
        if (e->slots[i].ctx == ctx)
            return &e->slots[i];
    return NULL;
}

/* A token's bytes (seer_detokenize of the one id) into t. */
static int token_bytes(const seer_model *m, int32_t id, float logprob, struct srv_token_lp *t)
{
    t->logprob = logprob;
    return seer_detokenize(m, &id, 1, &t->bytes, &t->len);
}

/* The result's logprobs as the response writes them (server/request.h). */
static int logprobs_of(const seer_model *m, const seer_result *res, struct srv_logprobs *lp)
{
    const size_t n = res->n_tokens, nt = (size_t)res->n_top;
    lp->n = n, lp->n_top = res->n_top;
    lp->tok = calloc(n ? n : 1, sizeof *lp->tok);
    lp->top = nt ? calloc(n > 0 ? n * nt : 1, sizeof *lp->top) : NULL;
    lp->text_offset = calloc(n ? n : 1, sizeof *lp->text_offset);
    if (!lp->tok || (nt && !lp->top) || !lp->text_offset || (n && !res->logprobs))
        return SEER_ENOMEM; /* fail_from_library's 503 "out of memory" */
    int rc = SEER_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        lp->text_offset[i] = i ? res->text_ends[i - 1] : 0;
        rc = token_bytes(m, res->tokens[i], res->logprobs[i], &lp->tok[i]);
        for (size_t k = 0; k < nt && !rc; k++)
            rc = token_bytes(m, res->top_ids[i * nt + k], res->top_logprobs[i * nt + k], &lp->top[i * nt + k]);
    }
    return rc;
}

/* A reply taken from the batch: the job finished with its usage, the slot freed. */
static void reply_done(engine *e, struct slot *sl, seer_result *res, int status)
{
    struct job *j = sl->job;
    if (status != SEER_OK) {
        fail_from_library(j, status, "the reply");
    } else {
        pthread_mutex_lock(&j->mu);
        j->stop = res->stop;
        j->usage.cached_tokens = sl->cached;
        j->usage.prompt_tokens = sl->cached + sl->fed + res->prompt_tokens;
        j->usage.completion_tokens = (int64_t)res->n_tokens;
        if (j->req.logprobs && (status = logprobs_of(e->m, res, &j->logprobs)))
            srv_logprobs_free(&j->logprobs);
        pthread_mutex_unlock(&j->mu);
        atomic_fetch_add(&e->met->prompt_tokens, sl->fed + res->prompt_tokens);
        atomic_fetch_add(&e->met->cached_tokens, sl->cached);
        atomic_fetch_add(&e->met->generated_tokens, (long long)res->n_tokens);
        pthread_mutex_lock(&e->mu);
        const bool cut = atomic_load(&e->aborting) && res->stop == SEER_STOP_CANCELED;
        pthread_mutex_unlock(&e->mu);
        /* before the job ends, so that the chat's next turn, sent once this answer arrives, finds it */
        if (sl->save_turn && !res->prompt_cut)
            save(e, sl->ctx, sl->turn_key, true);
        if (status != SEER_OK) {
            fail_from_library(j, status, "the reply's logprobs");
        } else if (atomic_load(&j->cancelled)) {
            struct srv_error err = {0};
            srv_fail(&err, 499, NULL, "cancelled");
            job_finish(j, 499, &err);
        } else if (cut) {
            /* SIGTERM's grace ran out mid-reply: an error (a stream's error event), never a
               finish_reason "stop" that passes a truncated answer off as complete */
            struct srv_error err = {0};
            srv_fail(&err, 503, NULL, "the server stopped before the reply ended (seer serve --grace)");
            job_finish(j, 503, &err);
        } else {
            job_finish(j, 200, NULL);
        }
    }
    seer_result_clear(res);
    pthread_mutex_lock(&e->mu);
    sl->job = NULL;
    sl->state = SLOT_FREE;
    e->decoding--;
    atomic_fetch_sub(&e->met->busy_slots, 1);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static void *decoder_main(void *arg)
{
    engine *e = arg;
    for (;;) {
        /* every slot the feeder has made ready joins before the step, so that their prompts share
           its pass (up to the batch's prompt rows) */
        pthread_mutex_lock(&e->mu);
        int n_ready = 0;
        for (;;) {
            for (int i = 0; i < e->n_slots; i++)
                if (e->slots[i].state == SLOT_READY) {
                    e->ready[n_ready++] = &e->slots[i];
                    e->slots[i].state = SLOT_DECODING;
                    e->decoding++;
                }
            if (n_ready || e->decoding > 0)
                break;
            bool busy = e->q_len > 0;
            for (int i = 0; i < e->n_slots; i++)
                busy |= e->slots[i].state != SLOT_FREE;
            if ((e->stopping && !busy) || atomic_load(&e->aborting))
                break;
            pthread_cond_wait(&e->cv, &e->mu);
        }
        if (!n_ready && e->decoding == 0) {
            pthread_mutex_unlock(&e->mu);
            break;
        }
        pthread_mutex_unlock(&e->mu);

        double t0 = cli_time_now();
        for (int k = 0; k < n_ready; k++) {
            struct slot *sl = e->ready[k];
            const struct job *j = sl->job;
            int rc = j->req.endpoint == SRV_COMPLETION ? seer_batch_add_text(e->batch, sl->ctx, j->req.prompt, &sl->gp)
                                                       : seer_batch_add_chat(e->batch, sl->ctx, &sl->gp);
            if (rc) {
                seer_result none = {0};
                reply_done(e, sl, &none, rc);
            }
        }
        /* a step carries the replies' tokens and up to a few hundred prompt rows: its time is split
           between the two rates by rows (the /metrics prefill and decode rates) */
        const int64_t left = seer_batch_prompt_left(e->batch), replies = seer_batch_active(e->batch);
        double t_step = cli_time_now(), prompt_share = 0;
        if (replies > 0) {
            seer_batch_step(e->batch); /* a failure ends the step's replies with it: taken below */
            const int64_t rows = MAX(left - seer_batch_prompt_left(e->batch), 0);
            prompt_share = (cli_time_now() - t_step) * (double)rows / (double)(rows + replies);
            atomic_fetch_add(&e->met->prefill_ns, (long long)(prompt_share * 1e9));
        }
        seer_context *ctx;
        seer_result res;
        int status;
        while (seer_batch_take(e->batch, &ctx, &res, &status)) {
            struct slot *sl = slot_of(e, ctx);
            if (status != SEER_OK && status != SEER_ECANCELED && sl)
                seer_context_reset(ctx); /* a failed step leaves the state undefined */
            if (sl)
                reply_done(e, sl, &res, status);
        }
        atomic_fetch_add(&e->met->decode_ns, (long long)((cli_time_now() - t0 - prompt_share) * 1e9));
        pthread_mutex_lock(&e->mu);
        e->steps++;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    return NULL;
}

/* ---- life ------------------------------------------------------------------------------------- */

int engine_create(seer_model *m, const struct serve_options *o, struct metrics *met, engine **out)
{
    engine *e = calloc(1, sizeof *e);
    int rc = SEER_ENOMEM;
    if (!e)
        return rc;
    e->m = m, e->o = o, e->met = met;
    e->n_slots = o->n_slots;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->slots = calloc((size_t)o->n_slots, sizeof *e->slots);
    e->ready = calloc((size_t)o->n_slots, sizeof *e->ready);
    e->queue = calloc((size_t)o->max_queue, sizeof *e->queue);
    if (!e->slots || !e->ready || !e->queue)
        goto fail;
    for (int i = 0; i < o->n_slots; i++) {
        e->slots[i].e = e;
        if ((rc = seer_context_create(m, &o->cp, &e->slots[i].ctx)))
            goto fail;
    }
    if ((rc = seer_batch_create(m, o->n_slots, &e->batch)))
        goto fail;
    if (o->cache_ram > 0 && !(e->cache = cache_create(o->cache_ram))) {
        rc = SEER_ENOMEM;
        goto fail;
    }
    atomic_store(&met->n_slots, o->n_slots);
    if (pthread_create(&e->feeder, NULL, feeder_main, e)) {
        rc = SEER_ENOMEM;
        goto fail;
    }
    if (pthread_create(&e->decoder, NULL, decoder_main, e)) {
        pthread_mutex_lock(&e->mu);
        atomic_store(&e->aborting, true), e->stopping = true;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->feeder, NULL);
        rc = SEER_ENOMEM;
        goto fail;
    }
    *out = e;
    return SEER_OK;
fail:
    seer_batch_free(e->batch);
    for (int i = 0; e->slots && i < o->n_slots; i++)
        seer_context_free(e->slots[i].ctx);
    cache_free(e->cache);
    free(e->slots);
    free(e->ready);
    free(e->queue);
    free(e);
    return rc;
}

int engine_submit(engine *e, struct job *j, struct srv_error *err)
{
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        pthread_mutex_unlock(&e->mu);
        return srv_fail(err, 503, NULL, "the server is shutting down");
    }
    if (e->q_len >= e->o->max_queue) {
        pthread_mutex_unlock(&e->mu);
        return srv_fail(err, 503, NULL, "the queue is full (%d requests waiting): try again later", e->o->max_queue);
    }
    pthread_mutex_lock(&j->mu);
    j->refs++;
    j->t_submit = cli_time_now();
    pthread_mutex_unlock(&j->mu);
    e->queue[(e->q_head + e->q_len) % e->o->max_queue] = j;
    e->q_len++;
    atomic_store(&e->met->queued, e->q_len);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return 0;
}

prefix_cache *engine_cache(engine *e)
{
    return e->cache;
}

void engine_stop(engine *e, int grace)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    e->stopping = true;
    pthread_cond_broadcast(&e->cv);
    struct timespec until;
    srv_deadline(&until, (long)grace * 1000);
    for (;;) {
        bool busy = e->q_len > 0;
        for (int i = 0; i < e->n_slots; i++)
            busy |= e->slots[i].state != SLOT_FREE;
        if (!busy || pthread_cond_timedwait(&e->cv, &e->mu, &until) == ETIMEDOUT)
            break;
    }
    atomic_store(&e->aborting, true); /* what is left is cancelled at its next token or micro-batch */
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->feeder, NULL);
    pthread_join(e->decoder, NULL);
    /* jobs still queued never reached a slot */
    for (; e->q_len > 0; e->q_len--, e->q_head = (e->q_head + 1) % e->o->max_queue) {
        struct srv_error err = {0};
        srv_fail(&err, 503, NULL, "the server stopped before this request reached a slot");
        job_finish(e->queue[e->q_head], 503, &err);
    }
}

void engine_free(engine *e)
{
    if (!e)
        return;
    seer_batch_free(e->batch);
    for (int i = 0; i < e->n_slots; i++)
        seer_context_free(e->slots[i].ctx);
    cache_free(e->cache);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e->slots);
    free(e->ready);
    free(e->queue);
    free(e);
}
