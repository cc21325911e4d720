/* reply.c — one reply being generated (api/reply.h): prefill, then sample → stream → stop checks
   token by token, then the result. The model is fed by the caller between reply_next and reply_fed
   (one token alone, or together with other replies' tokens in a seer_batch), so this file never
   decides how tokens reach the decoder, only which. Divisions: parameters · text · the reply. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "core/error.h"
#include "core/util.h"
#include "lm/json_schema.h"

/* ---- parameters ----------------------------------------------------------------------------- */

seer_generate_params seer_generate_params_default(void)
{
    return (seer_generate_params){
        .sampling = {.temperature = 1.0f, .top_k = 20, .top_p = 1.0f, .min_p = 0.0f, .repeat_penalty = 1.0f,
                     .presence_penalty = 2.0f, .seed = 0},
        .max_tokens = 1024,
        .think = -1,
    };
}

void seer_result_clear(seer_result *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->tokens);
    free(r->thinking);
    free(r->logprobs);
    free(r->text_ends);
    free(r->top_ids);
    free(r->top_logprobs);
    memset(r, 0, sizeof *r);
}

/* ---- text ----------------------------------------------------------------------------------- */

int sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    size_t need;
    if (!size_add(b->n, n + 1, &need) || !seer_grow(&b->s, &b->cap, need, 1, 64))
        return seer_err(SEER_ENOMEM, "no memory for generated text");
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return SEER_OK;
}

/* The reasoning without the whitespace around it (the template writes "<think>\n…\n</think>",
   spec §6.2), in a new string. */
static char *think_trimmed(const struct sbuf *b, size_t *len)
{
    size_t a = 0, e = b->n;
    while (a < e && memchr(" \t\r\n", b->s[a], 4)) /* memchr: a U+0000 in the text is not space */
        a++;
    while (e > a && memchr(" \t\r\n", b->s[e - 1], 4))
        e--;
    char *t = seer_malloc(e - a + 1);
    if (t) {
        if (e > a)
            memcpy(t, b->s + a, e - a);
        t[e - a] = '\0';
    }
    *len = e - a;
    return t;
}

/* Adds decoded text; returns 1 when a stop string completed (text cut before it), 2 when the
   callback cancelled, 0 to go on, or a negative error. */
static int visible_add(struct visible *v, const char *s, size_t n, bool final)
{
    int rc;
    if (v->reasoning) {
        if ((rc = sbuf_add(&v->think, s, n)))
            return rc;
        if (v->p->on_thinking) {
            /* streamed as it comes, without the newline the template writes after <think> */
            const char *t = s;
            size_t tn = n;
            while (!v->think_started && tn && (*t == '\n' || *t == ' ' || *t == '\r' || *t == '\t'))
                t++, tn--;
            v->think_started |= tn > 0;
            if (tn && v->p->on_thinking(t, tn, v->p->user_data))
                return 2;
        }
    }
    if (v->hiding)
        return 0;
    if (v->strip_lead) {
        while (n && (*s == '\n' || *s == ' ' || *s == '\r' || *s == '\t'))
            s++, n--;
        if (n)
            v->strip_lead = false;
    }
    size_t before = v->text.n;
    if ((rc = sbuf_add(&v->text, s, n)))
        return rc;
    int stopped = 0;
    for (size_t i = 0; i < v->p->n_stop; i++) {
        const char *st = v->p->stop[i];
        size_t sl = strlen(st);
        if (!sl)
            continue;
        /* search only where a match could end in the new bytes */
        size_t from = before >= sl ? before - sl + 1 : 0;
        const char *hit = NULL;
        for (size_t k = from; k + sl <= v->text.n && !hit; k++)
            if (!memcmp(v->text.s + k, st, sl))
                hit = v->text.s + k;
        if (hit) {
            v->text.n = (size_t)(hit - v->text.s);
            v->text.s[v->text.n] = '\0';
            stopped = 1;
        }
    }
    size_t safe = stopped || final ? v->text.n : (v->text.n > v->max_stop ? v->text.n - v->max_stop : 0);
    /* never split a UTF-8 character when holding back */
    while (safe > v->streamed && safe < v->text.n && ((unsigned char)v->text.s[safe] & 0xC0) == 0x80)
        safe--;
    if (safe > v->streamed && v->p->on_text) {
        if (v->p->on_text(v->text.s + v->streamed, safe - v->streamed, v->p->user_data))
            return v->streamed = safe, 2;
    }
    if (safe > v->streamed)
        v->streamed = safe;
    return stopped;
}

/* ---- the reply ------------------------------------------------------------------------------ */

static int pending_push(seer_context *c, int32_t id)
{
    if (!seer_grow(&c->pending, &c->cap_pending, c->n_pending + 1, sizeof *c->pending, 4))
        return seer_err(SEER_ENOMEM, "no memory");
    c->pending[c->n_pending++] = id;
    return SEER_OK;
}

/* Text prefill, micro-batch by micro-batch when the caller follows progress (the same micro-batches
   qwen35_eval makes, so the same numbers). Returns 1 when on_progress asked to stop; the state then
   holds *n_done of the n tokens. */
static int prefill_text(seer_context *c, const int32_t *feed, size_t n, const seer_generate_params *p, size_t *n_done,
                        const struct qwen35_mark *mark)
{
    qwen35_state *st = c->st;
    const size_t step = p->on_progress ? (size_t)st->n_ubatch : n;
    *n_done = 0;
    while (*n_done < n) {
        size_t k = MIN(step, n - *n_done);
        bool last = *n_done + k == n;
        float *all = api_all_logits_next(c); /* seer_golden's every position */
        const size_t V = (size_t)c->m->lm->cfg.n_vocab;
        const enum qwen35_logits mode = all ? QWEN35_LOGITS_ALL : last ? QWEN35_LOGITS_LAST : QWEN35_LOGITS_NONE;
        struct qwen35_mark here = mark ? *mark : (struct qwen35_mark){0};
        here.at -= (int64_t)*n_done; /* the mark's place in this micro-batch, when it lies there */
        const bool marked = mark && here.at >= 1 && here.at <= (int64_t)k;
        int rc = qwen35_eval_mark(c->m->lm, st, feed + *n_done, (int64_t)k, mode, all ? all : c->logits, true,
                                  marked ? &here : NULL);
        if (rc)
            return rc;
        if (all && last)
            memcpy(c->logits, all + (k - 1) * V, V * sizeof *c->logits);
        *n_done += k;
        if (p->on_progress && api_progress_unlocked(c->m, p, (int64_t)*n_done, (int64_t)n) && !last)
            return 1;
    }
    return SEER_OK;
}

/* Structured output (p->grammar or p->json_schema): compiles the grammar and starts a matcher over
   the context's token trie (built once per context: sorting 248k pieces costs tens of ms).
   Special tokens and the think tags are never part of the output; the end-of-turn ids are allowed
   exactly when the output is complete. *gm stays NULL when nothing is asked. */
static int grammar_start(seer_context *c, const seer_generate_params *p, grammar **g, grammar_matcher **gm)
{
    const seer_model *m = c->m;
    char *text = NULL;
    int rc;
    if (!p->grammar && !p->json_schema)
        return SEER_OK;
    if (p->grammar && p->json_schema)
        return seer_err(SEER_EINVAL, "a grammar and a JSON schema cannot both constrain one answer");
    if (p->json_schema && (rc = json_schema_to_gbnf(p->json_schema, strlen(p->json_schema), &text)))
        return rc;
    rc = grammar_parse(text ? text : p->grammar, strlen(text ? text : p->grammar),
                       p->grammar ? "the grammar" : "the JSON schema's grammar", g);
    free(text);
    if (rc)
        return rc;
    if (!c->gvocab) {
        size_t n = (size_t)m->n_vocab_real;
        const char **pieces = seer_calloc(n ? n : 1, sizeof *pieces);
        size_t *lens = seer_calloc(n ? n : 1, sizeof *lens);
        int32_t think_start = tok_token_to_id(m->tok, "<think>", 7);
        if (!pieces || !lens)
            rc = seer_err(SEER_ENOMEM, "no memory for the grammar's vocabulary");
        for (size_t i = 0; !rc && i < n; i++)
            if (!tok_is_special(m->tok, (int32_t)i) && (int32_t)i != m->id_think_end && (int32_t)i != think_start)
                pieces[i] = tok_piece(m->tok, (int32_t)i, &lens[i]);
        if (!rc)
            rc = grammar_vocab_create(pieces, lens, n, &c->gvocab);
        free(pieces), free(lens);
    }
    const int32_t ends[2] = {m->id_im_end, m->id_endoftext};
    if (!rc)
        rc = grammar_matcher_create(*g, c->gvocab, ends, ends[1] >= 0 && ends[1] != ends[0] ? 2 : 1, gm);
    if (rc) {
        grammar_free(*g);
        *g = NULL;
    }
    return rc;
}

void reply_init(struct reply *rp)
{
    memset(rp, 0, sizeof *rp);
}

/* What every reply starts from, fed or not. */
static void reply_setup(struct reply *rp, seer_context *c, const seer_generate_params *p, bool think_open)
{
    reply_init(rp);
    rp->c = c;
    rp->p = *p;
    rp->g_on = !think_open;
    rp->vis = (struct visible){.p = &rp->p, .reasoning = think_open, .hiding = think_open && !p->show_thinking,
                               .strip_lead = true};
    for (size_t i = 0; i < p->n_stop; i++)
        rp->vis.max_stop = MAX(rp->vis.max_stop, strlen(p->stop[i]));
    tok_stream_init(&rp->ts, c->m->tok, true);
}

/* With a thinking budget, the ids that close the think block as the template writes it
   ("<think>\n{reasoning}\n</think>\n\n", spec §6.2), forced once the budget is spent. */
static int budget_start(struct reply *rp)
{
    static const char close[] = "\n</think>\n\n";
    if (rp->p.thinking_budget <= 0)
        return SEER_OK;
    tok_ids v = {0};
    int rc = tok_encode(rp->c->m->tok, close, sizeof close - 1, true, &v);
    if (rc)
        return rc;
    if (v.n > ARRAY_LEN(rp->close_ids))
        rc = seer_err(SEER_EUNSUPPORTED, "thinking_budget: the tokenizer writes \"\\n</think>\\n\\n\" as %zu ids", v.n);
    else
        memcpy(rp->close_ids, v.ids, v.n * sizeof *v.ids), rp->n_close = v.n;
    free(v.ids);
    return rc;
}

void reply_cut(struct reply *rp, seer_context *c, const seer_generate_params *p)
{
    reply_setup(rp, c, p, false);
    rp->t0 = seer_time_now();
    rp->r.stop = SEER_STOP_CANCELED;
    rp->r.prompt_cut = 1;
    rp->done = true;
}

/* The prompt's n_done tokens of feed are in the state (all of them, or the part before on_progress
   cut it): the context and the result say so (added to what api_chat_begin counts of the messages
   fed before the turn point), and decoding starts. */
static void prompt_fed(struct reply *rp, const int32_t *feed, size_t n_done, bool cut, double t0)
{
    seer_context *c = rp->c;
    seer_result *r = &rp->r;
    r->prefill_seconds += seer_time_now() - t0;
    r->prompt_tokens += (int64_t)n_done;
    memcpy(c->fed + c->n_fed, feed, n_done * sizeof *feed);
    c->n_fed += n_done;
    c->n_pending = 0;
    rp->t0 = seer_time_now();
    r->stop = SEER_STOP_LENGTH;
    if (cut) { /* cancelled during the prompt: nothing sampled, the state holds part of it */
        r->stop = SEER_STOP_CANCELED;
        r->prompt_cut = 1;
        rp->done = true;
    }
}

int reply_begin(struct reply *rp, seer_context *c, const int32_t *prompt, size_t n_prompt,
                const seer_generate_params *p, bool think_open, const struct api_fused *fused, bool defer,
                const struct reply_turn *turn)
{
    seer_model *m = c->m;
    seer_result *r = &rp->r;
    const int64_t V = m->lm->cfg.n_vocab;
    const bool fed = turn && turn->fed;
    const size_t n_feed = (fed ? 0 : c->n_pending) + n_prompt;
    /* the tokens before the turn point are the messages': the sampler's penalties count the reply's
       own prompt only, as when the messages were fed apart */
    const size_t quiet = turn && !fed ? (size_t)turn->mark.at : 0;
    int32_t *feed = NULL;
    int rc;
    reply_setup(rp, c, p, think_open);
    if (n_feed == 0)
        return seer_err(SEER_EINVAL, "nothing to generate from: the prompt is empty");
    if (quiet >= n_feed || (turn && !fed && fused && (fused->n_images || fused->n_videos)))
        return seer_err(SEER_EINVAL, "reply_begin: a turn point after %zu of %zu tokens of a text prompt",
                        quiet, n_feed);
    if (p->top_logprobs < 0 || p->top_logprobs > SEER_TOP_LOGPROBS_MAX)
        return seer_err(SEER_EINVAL, "top_logprobs %d: 0 to %d", p->top_logprobs, SEER_TOP_LOGPROBS_MAX);
    r->n_top = !p->logprobs ? 0 : p->top_logprobs < (int64_t)m->n_vocab_real ? p->top_logprobs : (int)m->n_vocab_real;
    if (!fed && c->st->n_past + (int64_t)n_feed > c->st->n_ctx)
        return seer_err(SEER_EINVAL, "the prompt does not fit: it needs %lld context tokens (%zu new after %lld used) "
                        "but the context holds %lld: raise -c (n_ctx) to at least %lld, or start over",
                        (long long)c->st->n_past + (long long)n_feed, n_feed, (long long)c->st->n_past,
                        (long long)c->st->n_ctx, (long long)c->st->n_past + (long long)n_feed);
    feed = seer_malloc(n_feed * sizeof *feed);
    if (!feed || !seer_grow(&r->tokens, &rp->cap_gen, 64, sizeof *r->tokens, 64)) {
        free(feed);
        return seer_err(SEER_ENOMEM, "no memory for the prompt");
    }
    if (c->n_pending) /* pending is NULL until the first stop token: memcpy(dst, NULL, 0) is undefined */
        memcpy(feed, c->pending, c->n_pending * sizeof *feed);
    memcpy(feed + c->n_pending, prompt, n_prompt * sizeof *feed);
    sampler_params sp = sampler_params_default();
    sp.temperature = p->sampling.temperature;
    sp.top_k = p->sampling.top_k;
    sp.top_p = p->sampling.top_p;
    sp.min_p = p->sampling.min_p;
    sp.repetition_penalty = p->sampling.repeat_penalty;
    sp.presence_penalty = p->sampling.presence_penalty;
    sp.frequency_penalty = p->sampling.frequency_penalty;
    sp.seed = p->sampling.seed;
    sp.n_vocab_valid = (int32_t)m->n_vocab_real;
    if ((rc = sampler_create(&sp, (int32_t)V, &rp->smp)) || (rc = sampler_accept_prompt(rp->smp, feed + quiet, n_feed - quiet)) ||
        (rc = grammar_start(c, p, &rp->gram, &rp->gm)) || (think_open && (rc = budget_start(rp))))
        goto done;
    if (rp->gm && !rp->g_on) {
        /* The turn may not end inside the reasoning: an answer is owed, and it must be complete. */
        size_t n_words = ((size_t)V + 31) / 32;
        if (!(rp->free_mask = seer_malloc(n_words * sizeof *rp->free_mask))) {
            rc = seer_err(SEER_ENOMEM, "no memory for the grammar's mask");
            goto done;
        }
        memset(rp->free_mask, 0xFF, n_words * sizeof *rp->free_mask);
        rp->free_mask[m->id_im_end >> 5] &= ~(1u << (m->id_im_end & 31));
        if (m->id_endoftext >= 0)
            rp->free_mask[m->id_endoftext >> 5] &= ~(1u << (m->id_endoftext & 31));
    }

    if (fed) { /* in the state already, its logits in c->logits: decoding starts */
        rp->t0 = seer_time_now();
        r->stop = SEER_STOP_LENGTH;
        goto done;
    }
    const bool media = fused && (fused->n_images || fused->n_videos);
    if (defer && !media && !c->all_logits) { /* a batch feeds it in its passes (reply_prompt_left) */
        rp->feed = feed, rp->n_feed = n_feed, rp->t_feed = seer_time_now();
        c->n_pending = 0; /* they are in feed now */
        return SEER_OK;
    }
    double t0 = seer_time_now();
    size_t n_done = n_feed;
    api_device_lock(m);
    if (media)
        rc = api_prefill_fused(c, feed, n_feed, fused, p, c->logits, &n_done);
    else
        rc = prefill_text(c, feed, n_feed, p, &n_done, turn ? &turn->mark : NULL);
    api_device_unlock(m);
    r->vision_seconds = fused ? fused->seconds : 0;
    if (fused) {
        const struct api_video_timings *vt = &fused->video;
        r->video_demux_seconds = vt->demux, r->video_decode_seconds = vt->decode;
        r->video_resize_seconds = vt->convert, r->video_patchify_seconds = vt->patchify;
        r->video_encode_seconds = vt->encode;
        r->video_frames = vt->frames, r->video_pairs = vt->pairs, r->video_tokens = vt->tokens;
        r->video_frames_decoded = vt->frames_decoded, r->video_seeks = vt->seeks;
    }
    if (rc >= 0)
        prompt_fed(rp, feed, n_done, rc == 1, t0);
    r->prefill_seconds += r->vision_seconds;
    rc = rc < 0 ? rc : SEER_OK;
done:
    free(feed);
    return rc;
}

size_t reply_prompt_left(const struct reply *rp, const int32_t **ids)
{
    *ids = rp->feed ? rp->feed + rp->n_fed_early : NULL;
    return rp->feed ? rp->n_feed - rp->n_fed_early : 0;
}

struct qwen35_mark reply_prompt_mark(const struct reply *rp, size_t k)
{
    const struct held_turn *h = rp->held;
    if (!rp->feed || !h || h->passed || h->mark.at <= (int64_t)rp->n_fed_early ||
        h->mark.at > (int64_t)(rp->n_fed_early + k))
        return (struct qwen35_mark){0};
    struct qwen35_mark here = h->mark;
    here.at -= (int64_t)rp->n_fed_early;
    return here;
}

int reply_prompt_fed(struct reply *rp, size_t k)
{
    const seer_generate_params *p = &rp->p;
    if (reply_prompt_mark(rp, k).rec) /* these k rows crossed the held turn point */
        rp->held->passed = true;
    rp->n_fed_early += k;
    const bool last = rp->n_fed_early == rp->n_feed;
    const bool stop = p->on_progress && p->on_progress((int64_t)rp->n_fed_early, (int64_t)rp->n_feed, 0, p->user_data);
    if (last || stop) { /* on_progress cancels only an unfinished prompt, as in prefill_text */
        prompt_fed(rp, rp->feed, rp->n_fed_early, !last, rp->t_feed);
        seer_freep(&rp->feed);
    }
    return !last && stop;
}

/* The reply ends with `why`; `id` (the stop token, or the last token sampled) is not fed now: the
   context keeps it pending, and the next call feeds it first. */
static int reply_stop(struct reply *rp, enum seer_stop_reason why, int32_t id)
{
    rp->r.stop = why;
    rp->done = true;
    int rc = id >= 0 ? pending_push(rp->c, id) : SEER_OK;
    return rc ? rc : 1;
}

/* seer_generate_params.logprobs: token id's log-probability under the raw logits (the model's own
   distribution, whatever the sampler then made of it), as OpenAI's logprobs and hOCR's x_wconf mean
   it, and with top_logprobs the n_top most probable tokens of the step. Its text end is filled once
   the token's piece is in the visible text. */
static int logprob_push(struct reply *rp, const float *logits, int32_t id)
{
    seer_result *r = &rp->r;
    const int32_t V = (int32_t)rp->c->m->n_vocab_real;
    const int n_top = r->n_top;
    const size_t i = r->n_tokens, slots = (i + 1) * (size_t)n_top;
    if (!seer_grow(&r->logprobs, &rp->cap_lp, i + 1, sizeof *r->logprobs, 64) ||
        !seer_grow(&r->text_ends, &rp->cap_te, i + 1, sizeof *r->text_ends, 64) ||
        (n_top && (!seer_grow(&r->top_ids, &rp->cap_ti, slots, sizeof *r->top_ids, 64) ||
                   !seer_grow(&r->top_logprobs, &rp->cap_tl, slots, sizeof *r->top_logprobs, 64))))
        return seer_err(SEER_ENOMEM, "no memory for log-probabilities");
    float mx = logits[0];
    for (int32_t k = 1; k < V; k++)
        mx = logits[k] > mx ? logits[k] : mx;
    double sum = 0;
    for (int32_t k = 0; k < V; k++)
        sum += exp((double)(logits[k] - mx));
    const double lse = (double)mx + log(sum);
    r->logprobs[i] = (float)((double)logits[id] - lse);
    /* the n_top best, kept sorted by insertion: a logit below the worst kept costs one compare */
    int32_t *top = r->top_ids ? r->top_ids + i * (size_t)n_top : NULL;
    int have = 0;
    for (int32_t k = 0; k < V && n_top; k++) {
        if (have == n_top && logits[k] <= logits[top[have - 1]])
            continue; /* equal: the lower id, kept already, stays ahead */
        int at = have < n_top ? have++ : n_top - 1;
        for (; at > 0 && logits[k] > logits[top[at - 1]]; at--)
            top[at] = top[at - 1];
        top[at] = k;
    }
    for (int k = 0; k < have; k++)
        r->top_logprobs[i * (size_t)n_top + (size_t)k] = (float)((double)logits[top[k]] - lse);
    return SEER_OK;
}

int reply_next(struct reply *rp, int32_t *out)
{
    seer_context *c = rp->c;
    const seer_model *m = c->m;
    seer_result *r = &rp->r;
    int32_t id;
    int rc;
    if (rp->done)
        return 1;
    if (rp->gm && rp->g_on && grammar_matcher_finished(rp->gm))
        /* the answer is complete and only the end of turn may follow: the model's choice is forced,
           so take it now (an answer that ends exactly at -n is not "length") */
        return reply_stop(rp, SEER_STOP_EOS, m->id_im_end);
    /* max_tokens < 0: until the end of the turn or of the context */
    if (rp->p.max_tokens >= 0 && r->n_tokens >= (size_t)rp->p.max_tokens)
        return reply_stop(rp, SEER_STOP_LENGTH, -1);
    /* the thinking budget spent: the block is closed as the template closes it, then the answer
       is sampled (the closing's last "\n\n" before any grammar: the template writes it) */
    const bool forcing = rp->n_close && rp->i_close < rp->n_close &&
                         (rp->i_close > 0 || (rp->vis.reasoning && rp->think_tokens >= rp->p.thinking_budget));
    if (forcing) {
        id = rp->close_ids[rp->i_close++];
    } else {
        if (rp->gm) {
            const uint32_t *mask = rp->free_mask;
            if (rp->g_on && (rc = grammar_matcher_mask(rp->gm, &mask)))
                return rc;
            sampler_set_allowed(rp->smp, mask);
        }
        if ((rc = sampler_sample(rp->smp, c->logits, &id)))
            return rc;
        if (rp->gm && rp->g_on && (rc = grammar_matcher_accept(rp->gm, id)))
            return rc;
        rp->think_tokens += rp->vis.reasoning;
    }
    if (id == m->id_im_end || id == m->id_endoftext)
        return reply_stop(rp, SEER_STOP_EOS, id);
    if (!seer_grow(&r->tokens, &rp->cap_gen, r->n_tokens + 1, sizeof *r->tokens, 64))
        return seer_err(SEER_ENOMEM, "no memory for generated tokens");
    if (rp->p.logprobs && (rc = logprob_push(rp, c->logits, id)))
        return rc;
    r->tokens[r->n_tokens++] = id;
    if ((rc = sampler_accept(rp->smp, id)))
        return rc;
    const char *piece;
    size_t plen;
    if ((rc = tok_stream_push(&rp->ts, id, &piece, &plen)))
        return rc;
    int v;
    if (id == m->id_think_end && rp->vis.reasoning) {
        /* the answer starts after </think> (spec §6.2); the tag itself is shown only with the reasoning */
        rp->vis.reasoning = false;
        v = visible_add(&rp->vis, piece, plen, false);
        rp->vis.hiding = false;
        rp->g_on = true;
    } else {
        v = visible_add(&rp->vis, piece, plen, false);
    }
    if (rp->p.logprobs)
        r->text_ends[r->n_tokens - 1] = rp->vis.text.n;
    if (v == 0 && rp->p.on_progress &&
        rp->p.on_progress(r->prompt_tokens, r->prompt_tokens, (int64_t)r->n_tokens, rp->p.user_data))
        v = 2;
    if (v < 0)
        return v;
    if (v > 0)
        return reply_stop(rp, v == 1 ? SEER_STOP_STRING : SEER_STOP_CANCELED, id);
    if (c->st->n_past + 1 > c->st->n_ctx)
        return reply_stop(rp, SEER_STOP_CONTEXT, id);
    *out = id;
    return 0;
}

void reply_fed(struct reply *rp, int32_t id)
{
    rp->c->fed[rp->c->n_fed++] = id;
}

int reply_end(struct reply *rp, int rc, seer_result *out)
{
    seer_result *r = &rp->r;
    if (rp->feed) { /* ended before a batch fed all its prompt: the state holds the part it fed */
        prompt_fed(rp, rp->feed, rp->n_fed_early, true, rp->t_feed);
        seer_freep(&rp->feed);
    }
    if (rc == SEER_OK) {
        const char *tail;
        size_t tlen;
        r->decode_seconds = seer_time_now() - rp->t0;
        if ((rc = tok_stream_flush(&rp->ts, &tail, &tlen)) == SEER_OK && r->stop != SEER_STOP_STRING &&
            r->stop != SEER_STOP_CANCELED) {
            int v = visible_add(&rp->vis, tail, tlen, true);
            rc = v < 0 ? v : SEER_OK;
            /* the last token's unfinished character, flushed as U+FFFD, may complete a stop string:
               the text is cut there like any other, so the reply ended at it */
            if (v == 1)
                r->stop = SEER_STOP_STRING;
        }
    }
    if (rc == SEER_OK) {
        r->text = rp->vis.text.s ? rp->vis.text.s : seer_strdup("");
        r->text_len = rp->vis.text.s ? rp->vis.text.n : 0;
        /* the stream's held-back tail (a character's first bytes) came from the last token; a stop
           string may have cut the text before later tokens' ends */
        for (size_t i = 0; r->text_ends && i < r->n_tokens; i++)
            r->text_ends[i] = i + 1 == r->n_tokens || r->text_ends[i] > r->text_len ? r->text_len : r->text_ends[i];
        rp->vis.text.s = NULL;
        r->reasoning_cut = rp->vis.reasoning && (r->stop == SEER_STOP_LENGTH || r->stop == SEER_STOP_CONTEXT);
        r->thinking = think_trimmed(&rp->vis.think, &r->thinking_len);
        if (!r->text || !r->thinking)
            rc = seer_err(SEER_ENOMEM, "no memory");
    }
    if (rp->held) {
        api_device_lock(rp->c->m);
        qwen35_state_free(rp->held->mark.rec);
        api_device_unlock(rp->c->m);
        free(rp->held->mark.logits), free(rp->held->text), free(rp->held);
    }
    tok_stream_deinit(&rp->ts);
    grammar_matcher_free(rp->gm);
    grammar_free(rp->gram);
    free(rp->free_mask);
    sampler_free(rp->smp);
    free(rp->vis.text.s);
    free(rp->vis.think.s);
    if (rc)
        seer_result_clear(r);
    *out = *r;
    reply_init(rp);
    return rc;
}
