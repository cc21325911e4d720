/* turn.c — a chat turn (include/seer.h "chat"): the conversation rendered as the template does, what
   the state lacks of it fed, and the reply begun and ended; seer_chat_feed, seer_chat_settle and
   seer_chat_generate.
   Multi-turn chats never re-process earlier turns: the context remembers the exact rendered text
   its state holds, renders the whole conversation again each turn as the template does (spec
   §6.2) and feeds only the new suffix. One turn does render differently later: the template drops
   an assistant turn's reasoning (or empty think block) once a user message follows it. A hybrid
   model's GDN state cannot be rolled back token by token, so the context keeps a copy of its state
   where the latest reply began (the turn point, seer_context.turn) and the next turn goes back
   there, feeding that reply again in its final form, then the new message (docs/MODEL.md §6.2).
   The messages and the reply's opening go in one pass, the turn point copied out inside it
   (joint_begin).
   Divisions: rendering · the prompt · feeding · the reply. */
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "api/snapshot.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"

/* ---- rendering ------------------------------------------------------------------------------ */

/* Renders history[0..n) as the template does (spec §6.2): an assistant turn before the last user
   query without its reasoning (chat_prompt goes back to the turn point for it). */
static int render(const seer_context *c, size_t n, bool gen_prompt, bool think, char **out, size_t *len,
                  chat_range **ranges, size_t *n_ranges)
{
    size_t n_parts = 0;
    for (size_t i = 0; i < n; i++)
        n_parts += c->hist[i].n_images + c->hist[i].n_videos ? c->hist[i].n_images + c->hist[i].n_videos + 1 : 0;
    chat_message *msgs = seer_calloc(n ? n : 1, sizeof *msgs);
    chat_part *parts = seer_calloc(n_parts ? n_parts : 1, sizeof *parts);
    if (!msgs || !parts) {
        free(msgs), free(parts);
        return seer_err(SEER_ENOMEM, "no memory to render the chat");
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        const struct chat_msg *h = &c->hist[i];
        msgs[i] = (chat_message){.role = h->role, .content = h->content};
        if (!h->n_images && !h->n_videos)
            continue;
        /* images first, then videos, then the text, as in HF's examples (spec §6.2 image parts) */
        msgs[i].parts = parts + k;
        msgs[i].n_parts = h->n_images + h->n_videos + 1;
        for (size_t j = 0; j < h->n_images; j++)
            parts[k++] = (chat_part){.type = CHAT_PART_IMAGE};
        for (size_t j = 0; j < h->n_videos; j++)
            parts[k++] = (chat_part){.type = CHAT_PART_VIDEO};
        parts[k++] = (chat_part){.type = CHAT_PART_TEXT, .text = h->content};
    }
    chat_params p = chat_params_default();
    p.add_generation_prompt = gen_prompt;
    p.enable_thinking = think;
    p.preserve_thinking = false; /* the template's own default: earlier turns drop their reasoning
                                    (spec §6.2); the turn point (seer_context.turn) re-feeds them */
    p.scalar_args_as_json = c->m->tmpl_info.scalar_args_as_json;
    int rc = chat_render_ranges(msgs, n, &p, out, len, ranges, n_ranges);
    free(msgs);
    free(parts);
    return rc;
}

/* Tokenizes text[from..len) of a rendered conversation: special tokens are parsed in the
   template's markup only, never inside message text (`ranges`, from chat_render_ranges), so a
   message cannot close its turn or open another one (a prompt injection). Between special tokens
   the text is pre-tokenized as one piece, as HF does, so a message without special tokens gets
   the ids HF's apply_chat_template would give. */
static int tokenize_markup(const tokenizer *tok, const char *text, size_t len, size_t from, const chat_range *ranges,
                           size_t n_ranges, int32_t **ids, size_t *n_ids)
{
    size_t *plain = seer_malloc((n_ranges ? n_ranges : 1) * 2 * sizeof *plain), k = 0;
    if (!plain)
        return seer_err(SEER_ENOMEM, "no memory to tokenize the chat");
    for (size_t i = 0; i < n_ranges; i++)
        if (ranges[i].end > from && ranges[i].start < len) { /* a text cut short (seer_chat_feed) ends at len */
            plain[2 * k] = MAX(ranges[i].start, from) - from;
            plain[2 * k + 1] = MIN(ranges[i].end, len) - from;
            k++;
        }
    tok_ids v = {0};
    int rc = tok_encode_ranges(tok, text + from, len - from, true, plain, k, &v);
    free(plain);
    if (rc)
        return rc;
    *ids = v.ids;
    *n_ids = v.n;
    return SEER_OK;
}

/* ---- the prompt ----------------------------------------------------------------------------- */

/* Where a prompt ends: a reply's (FEED_REPLY: the whole conversation and the assistant's opening) or
   seer_chat_feed's (enum seer_feed). */
#define FEED_REPLY (-1)

static bool in_ranges(const chat_range *r, size_t n, size_t at)
{
    for (size_t i = 0; i < n; i++)
        if (at >= r[i].start && at < r[i].end)
            return true;
    return false;
}

/* Renders the conversation up to `until`. A cut falls right after a special token (<|im_end|>\n's
   newline then starts the next piece alone, or <|vision_end|>), which the tokenizer never merges
   with what follows, so the cut's ids are a prefix of the whole rendering's ids. */
static int render_until(const seer_context *c, int until, bool think, char **out, size_t *len, chat_range **ranges,
                        size_t *n_ranges)
{
    static const char im_start[] = "<|im_start|>", vision_end[] = "<|vision_end|>";
    int rc = render(c, c->n_hist, until == FEED_REPLY, think, out, len, ranges, n_ranges);
    if (rc || until != SEER_FEED_MEDIA || !c->n_hist)
        return rc;
    /* The last message begins at the last <|im_start|> of the template's own markup (not one written
       in a message), and its media come before its text: the last <|vision_end|> after that. The
       messages before it are not rendered alone: the template refuses a conversation without a user
       message, and a system prompt alone is a prefix worth feeding. */
    const struct chat_msg *last = &c->hist[c->n_hist - 1];
    size_t cut = 0;
    for (size_t i = 0; i + strlen(im_start) <= *len; i++)
        if (!memcmp(*out + i, im_start, strlen(im_start)) && !in_ranges(*ranges, *n_ranges, i))
            cut = i;
    for (size_t i = cut; last->n_images + last->n_videos && i + strlen(vision_end) <= *len; i++)
        if (!memcmp(*out + i, vision_end, strlen(vision_end)) && !in_ranges(*ranges, *n_ranges, i))
            cut = i + strlen(vision_end);
    *len = cut;
    (*out)[cut] = '\0';
    return SEER_OK;
}

/* The prompt the next reply (until FEED_REPLY) or seer_chat_feed feeds: renders the conversation and
   expands what the context has not seen yet into *fused — encoding its media, or (measure) only
   counting them. *full (the whole rendering up to `until`, for api_chat_end) is set even on failure
   (maybe NULL). Leaves the queues alone. */
static int chat_prompt(seer_context *c, const seer_generate_params *p, int until, bool measure, char **full,
                       size_t *full_len, struct api_fused *fused, size_t *pending)
{
    char *prev = NULL;
    size_t prev_len;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    chat_range *ranges = NULL;
    size_t n_ranges = 0;
    int rc;
    *full = NULL;
    if ((rc = render_until(c, until, api_think_on(c, p), full, full_len, &ranges, &n_ranges))) {
        free(ranges);
        return rc;
    }
    /* The new text: what the rendering adds after the text the state already holds. */
    const char *suffix = *full, *turn_text = NULL;
    size_t turn_len = 0;
    if (c->turn)
        turn_text = api_snapshot_text(c->turn, &turn_len);
    *pending = c->n_pending;
    if (c->fed_text && *full_len >= c->fed_len && !memcmp(*full, c->fed_text, c->fed_len)) {
        suffix = *full + c->fed_len;
    } else if (turn_text && *full_len >= turn_len && !memcmp(*full, turn_text, turn_len)) {
        /* The latest assistant turn renders differently now that a message follows it (its
           reasoning, or the empty think block, dropped: spec §6.2): back to where it began, and
           feed it again as the template renders it. A measure only counts from there. */
        if (!measure && (rc = api_snapshot_rewind(c, c->turn)))
            goto done;
        *pending = api_snapshot_pending(c->turn);
        suffix = *full + turn_len;
    } else if (c->fed_text) {
        /* The model's last reply renders differently from how it was generated (e.g. whitespace
           the template trims): keep the state and append the new turns after it. */
        size_t n_old = c->n_hist;
        while (n_old > 0 && strcmp(c->hist[n_old - 1].role, "assistant"))
            n_old--;
        if ((rc = render(c, n_old, false, false, &prev, &prev_len, NULL, NULL)))
            goto done;
        if (prev_len > *full_len || memcmp(*full, prev, prev_len)) {
            rc = seer_err(SEER_EINVAL, "the conversation history was changed: start a new context");
            goto done;
        }
        suffix = *full + prev_len;
        LOG_DEBUG("chat", "last reply re-renders differently; appending %zu bytes after the state",
                  *full_len - prev_len);
    }
    if ((rc = tokenize_markup(c->m->tok, *full, *full_len, (size_t)(suffix - *full), ranges, n_ranges, &ids, &n_ids)))
        goto done;
    /* the new turns' image placeholders take the queued images, in order, then the videos theirs */
    rc = api_fuse(c->m, ids, n_ids, &c->images, measure, fused);
    if (!rc)
        rc = api_fuse_videos(c->m, fused, &c->videos, p, measure);
done:
    free(prev), free(ids), free(ranges);
    return rc;
}

int seer_chat_measure(seer_context *c, const seer_generate_params *params, int64_t *prompt_tokens)
{
    const seer_generate_params p = params ? *params : seer_generate_params_default();
    struct api_fused fused = {0};
    char *full = NULL;
    size_t full_len = 0;
    size_t pending = 0;
    int rc = chat_prompt(c, &p, FEED_REPLY, true, &full, &full_len, &fused, &pending);
    if (!rc)
        *prompt_tokens = (int64_t)(pending + fused.n_ids);
    free(full);
    api_fused_clear(&fused);
    return rc;
}

static int feed_reply(seer_context *c, const seer_generate_params *p, seer_result *r);

/* seer_chat_feed, with what the feed cost in *r (prompt tokens, prefill and media timings). */
static int feed(seer_context *c, const seer_generate_params *params, enum seer_feed until, seer_result *r)
{
    const seer_generate_params p = *params;
    struct api_fused fused = {0};
    struct reply rp;
    seer_snapshot *back = NULL;
    char *full = NULL, *cut = NULL;
    size_t full_len = 0, cut_len = 0, pending;
    reply_init(&rp);
    int rc = api_can_generate(c);
    if (!rc && until == SEER_FEED_REPLY)
        return feed_reply(c, &p, r);
    if (!rc && until != SEER_FEED_MESSAGES && until != SEER_FEED_MEDIA)
        rc = seer_err(SEER_EINVAL, "seer_chat_feed: %d is not a seer_feed", (int)until);
    /* the cut must lie on the way to the reply's prompt, or the reply could not continue it */
    if (!rc && !(rc = render(c, c->n_hist, true, api_think_on(c, &p), &full, &full_len, NULL, NULL)) &&
        !(rc = chat_prompt(c, &p, until, false, &cut, &cut_len, &fused, &pending)) &&
        (cut_len > full_len || memcmp(full, cut, cut_len)))
        rc = seer_err(SEER_EINVAL, "seer_chat_feed: the template renders the conversation differently when the "
                      "assistant's turn follows: feed it by generating");
    const bool any = fused.n_ids + c->n_pending > 0;
    /* a cancelled or failed feed puts the state back: the rollback point skips the KV rows, which
       rows past its n_past never have to be */
    if (!rc && any && !(rc = api_snapshot_take(c, false, &back))) {
        seer_generate_params fp = p;
        fp.grammar = fp.json_schema = NULL; /* nothing is sampled */
        rc = reply_end(&rp, reply_begin(&rp, c, fused.ids, fused.n_ids, &fp, false, &fused, false, NULL), r);
        if (!rc && r->prompt_cut)
            rc = seer_err(SEER_ECANCELED, "seer_chat_feed: cancelled by on_progress");
        if (rc)
            api_snapshot_put(c, back);
    }
    if (!rc) {
        api_images_clear(&c->images);
        api_videos_clear(&c->videos);
        free(c->fed_text);
        c->fed_text = cut;
        c->fed_len = cut_len;
        cut = NULL;
    }
    seer_snapshot_free(back);
    api_fused_clear(&fused);
    free(full), free(cut);
    return rc;
}

int seer_chat_feed(seer_context *c, const seer_generate_params *params, enum seer_feed until, int64_t *n_fed)
{
    const seer_generate_params p = params ? *params : seer_generate_params_default();
    seer_result r = {0};
    int rc = feed(c, &p, until, &r);
    if (!rc && n_fed)
        *n_fed = r.prompt_tokens;
    seer_result_clear(&r);
    return rc;
}

/* Appends an empty user message, feeds up to where it would begin (SEER_FEED_MEDIA with no media)
   — the reply in its final form: chat_prompt goes back to the turn point when the reply renders
   differently now — and removes the message again. Qwen3.5's template decides how an
   assistant turn renders by where the last user message is (spec §6.2), not by what it says, so
   the next user message renders the same prefix; one that does not (a tool response) finds
   fed_text unmatched and goes back to the turn point as before. */
int seer_chat_settle(seer_context *c, const seer_generate_params *params, int64_t *n_fed)
{
    if (n_fed)
        *n_fed = 0;
    if (!c->turn || !c->n_hist || strcmp(c->hist[c->n_hist - 1].role, "assistant"))
        return SEER_OK;
    int rc = api_chat_add(c, "user", "", 0);
    if (rc)
        return rc;
    rc = seer_chat_feed(c, params, SEER_FEED_MEDIA, n_fed);
    c->n_hist--;
    free(c->hist[c->n_hist].role), free(c->hist[c->n_hist].content);
    return rc;
}

/* What feeding the messages cost, added to the reply's own prefill (one call, one prompt). */
static void add_prefill(seer_result *into, const seer_result *from)
{
    into->prompt_tokens += from->prompt_tokens;
    into->prefill_seconds += from->prefill_seconds;
    into->vision_seconds += from->vision_seconds;
    into->video_demux_seconds += from->video_demux_seconds;
    into->video_decode_seconds += from->video_decode_seconds;
    into->video_resize_seconds += from->video_resize_seconds;
    into->video_patchify_seconds += from->video_patchify_seconds;
    into->video_encode_seconds += from->video_encode_seconds;
    into->video_frames += from->video_frames;
    into->video_pairs += from->video_pairs;
    into->video_frames_decoded += from->video_frames_decoded;
    into->video_seeks += from->video_seeks;
    into->video_tokens += from->video_tokens;
}

/* The messages fed (feed), then the state kept there as the turn point (seer_context.turn): the
   next turn comes back to it when this one renders differently once a message follows. A feed
   the template cannot cut there (it renders the conversation differently when a reply follows)
   leaves the whole prompt to the reply and no turn point. A cancelled feed ends the reply as a
   prompt cut short does. */
static int turn_point(seer_context *c, const seer_generate_params *p, struct reply *rp, seer_result *fr)
{
    seer_snapshot *t;
    int rc = feed(c, p, SEER_FEED_MESSAGES, fr);
    if (rc == SEER_ECANCELED && fr->prompt_cut) { /* on_progress; on_video_progress's is an error */
        reply_cut(rp, c, p);
        return SEER_OK;
    }
    seer_snapshot_free(c->turn);
    c->turn = NULL;
    if (rc == SEER_EINVAL) /* no cut on the way to the reply: the reply feeds it all */
        return SEER_OK;
    if (rc || (rc = api_snapshot_take(c, false, &t)))
        return rc;
    c->turn = t;
    return SEER_OK;
}

/* Cancelled inside the new prompt: the state holds a part of a turn that no rendering describes.
   Forgets the state (the next turn feeds the whole conversation again) and, with `message`, the
   unanswered message. */
static int forget_cut(seer_context *c, bool message)
{
    api_device_lock(c->m);
    int rc = qwen35_state_reset(c->m->lm, c->st);
    api_device_unlock(c->m);
    seer_snapshot_free(c->turn);
    c->turn = NULL;
    if (rc)
        return rc;
    c->n_fed = 0;
    c->n_pending = 0;
    seer_freep(&c->fed_text);
    c->fed_len = 0;
    while (message && c->n_hist && (!strcmp(c->hist[c->n_hist - 1].role, "user") || !strcmp(c->hist[c->n_hist - 1].role, "tool"))) {
        c->n_hist--;
        free(c->hist[c->n_hist].role), free(c->hist[c->n_hist].content);
    }
    return SEER_OK;
}

/* The reply's whole prompt is in the state already (seer_chat_feed with SEER_FEED_REPLY): the text
   the state holds is the rendering up to the reply, nothing is pending or queued. */
static bool prompt_in_state(const seer_context *c, const char *full, size_t full_len)
{
    return c->turn && !c->n_pending && !c->images.n && !c->videos.n && c->fed_text && c->fed_len == full_len &&
           !memcmp(c->fed_text, full, full_len);
}

/* The turn point the one pass copied out (rec, logits: the state after n_at fed ids) becomes the
   context's, described by the rendering `*cut` (taken on success). */
static int turn_keep(seer_context *c, const qwen35_state *rec, const float *logits, size_t n_at, char **cut,
                     size_t cut_len)
{
    seer_snapshot *t;
    int rc = api_snapshot_take_mark(c, rec, logits, n_at, *cut, cut_len, &t);
    if (rc)
        return rc;
    seer_snapshot_free(c->turn);
    c->turn = t;
    free(c->fed_text);
    c->fed_text = *cut, c->fed_len = cut_len, *cut = NULL;
    return SEER_OK;
}

/* The messages not yet fed and the assistant's opening in one pass, the state at the turn point
   copied out on the way (qwen35_eval_mark): a chat turn costs one pass over the weights where
   turn_point and the reply's opening cost two (docs/PERFORMANCE.md "The opening in the messages'
   pass"). Text only: queued images or videos go the two-pass way. With `defer` (a seer_batch) the
   pass is the batch's: the reply holds the mark (rp->held) for the step that crosses it, and
   api_chat_prompt_done keeps the turn point. Returns 1, with the reply not begun, when the
   conversation takes the two-pass way (nothing changed but a rewind to the turn point, which that
   way makes too). */
static int joint_begin(seer_context *c, const seer_generate_params *p, struct reply *rp, char **full, size_t *full_len,
                       bool defer)
{
    struct api_fused fc = {0}, ff = {0};
    char *cut = NULL;
    size_t cut_len = 0, pending;
    qwen35_state *rec = NULL;
    float *lg = NULL;
    struct held_turn *held = NULL;
    int rc = c->images.n || c->videos.n ? 1 : SEER_OK;
    /* a template that cannot render the messages alone, or not as a prefix of the reply's prompt,
       leaves it to turn_point (which then keeps no turn point) */
    if (!rc && chat_prompt(c, p, SEER_FEED_MESSAGES, false, &cut, &cut_len, &fc, &pending)) {
        seer_err_clear();
        rc = 1;
    }
    if (!rc)
        rc = chat_prompt(c, p, FEED_REPLY, false, full, full_len, &ff, &pending);
    const size_t at = c->n_pending + fc.n_ids;
    if (!rc && (at == 0 || cut_len > *full_len || memcmp(cut, *full, cut_len) || fc.n_ids > ff.n_ids ||
                (fc.n_ids && memcmp(fc.ids, ff.ids, fc.n_ids * sizeof *fc.ids))))
        rc = 1;
    if (!rc && (!(lg = seer_malloc((size_t)c->m->lm->cfg.n_vocab * sizeof *lg)) ||
                (defer && !(held = seer_calloc(1, sizeof *held)))))
        rc = seer_err(SEER_ENOMEM, "no memory for the turn point's logits");
    if (!rc) {
        api_device_lock(c->m);
        rc = qwen35_state_create_recurrent(c->m->lm, &rec);
        api_device_unlock(c->m);
    }
    const size_t n_fed = c->n_fed;
    const struct qwen35_mark mark = {.at = (int64_t)at, .rec = rec, .logits = lg};
    if (!rc) {
        const struct reply_turn turn = {.mark = mark};
        rc = reply_begin(rp, c, ff.ids, ff.n_ids, p, api_think_on(c, p), &ff, defer, &turn);
    }
    if (!rc && rp->feed) { /* deferred: the batch's */
        *held = (struct held_turn){.mark = mark, .n_fed = n_fed, .text = cut, .len = cut_len};
        rp->held = held;
        held = NULL, rec = NULL, lg = NULL, cut = NULL;
    } else if (!rc && !rp->r.prompt_cut && (rc = turn_keep(c, rec, lg, n_fed + at, &cut, cut_len))) {
        /* passed the mark (a cut prompt is forgotten by api_chat_end), but no room to keep it: the
           state is past what fed_text says, so the next turn starts over */
        forget_cut(c, false);
    }
    if (rc == 1) {
        seer_freep(full);
        *full_len = 0;
    }
    if (rec) {
        api_device_lock(c->m);
        qwen35_state_free(rec);
        api_device_unlock(c->m);
    }
    free(lg), free(cut), free(held);
    api_fused_clear(&fc), api_fused_clear(&ff);
    return rc;
}

void api_chat_prompt_done(seer_context *c, struct reply *rp)
{
    struct held_turn *h = rp->held;
    if (!h || !h->passed || rp->r.prompt_cut)
        return;
    if (turn_keep(c, h->mark.rec, h->mark.logits, h->n_fed + (size_t)h->mark.at, &h->text, h->len)) {
        /* the reply goes on; the context keeps no turn point (a later turn feeds from fed_text) */
        seer_err_clear();
        seer_snapshot_free(c->turn);
        c->turn = NULL;
    }
}

/* The first half of seer_chat_generate: the messages fed up to the turn point, then the reply's
   opening (chat_prompt), and the reply (rp) begun — in one pass when the messages are text
   (joint_begin), and not at all when seer_chat_feed fed them already. */
int api_chat_begin(seer_context *c, const seer_generate_params *p, struct reply *rp, char **full,
                   size_t *full_len, bool defer)
{
    struct api_fused fused = {0};
    seer_result fr = {0};
    size_t pending;
    reply_init(rp);
    *full = NULL;
    int rc = api_can_generate(c);
    if (rc || (rc = render(c, c->n_hist, true, api_think_on(c, p), full, full_len, NULL, NULL)))
        return rc;
    if (prompt_in_state(c, *full, *full_len)) {
        /* the ids since the turn point are the opening, which the sampler sees as if fed now */
        const size_t from = api_snapshot_fed(c->turn);
        const struct reply_turn fed = {.fed = true};
        return reply_begin(rp, c, c->fed + from, c->n_fed - from, p, api_think_on(c, p), NULL, defer, &fed);
    }
    seer_freep(full);
    if ((rc = joint_begin(c, p, rp, full, full_len, defer)) != 1)
        return rc;
    rc = turn_point(c, p, rp, &fr);
    if (!rc && !rp->done)
        rc = chat_prompt(c, p, FEED_REPLY, false, full, full_len, &fused, &pending);
    if (!rc && rp->done) /* cancelled while feeding the messages: api_chat_end forgets them */
        rc = render(c, c->n_hist, true, api_think_on(c, p), full, full_len, NULL, NULL);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    if (!rc && !rp->done)
        rc = reply_begin(rp, c, fused.ids, fused.n_ids, p, api_think_on(c, p), &fused, defer, NULL);
    add_prefill(&rp->r, &fr);
    seer_result_clear(&fr);
    api_fused_clear(&fused);
    return rc;
}

/* seer_chat_feed with SEER_FEED_REPLY: the reply begun as seer_chat_generate begins it (one pass
   when the messages are text), not sampled; the state then holds the whole rendering up to the
   reply, which api_chat_begin finds (prompt_in_state). A cancel forgets the state, not the
   messages: the next reply feeds the whole conversation. */
static int feed_reply(seer_context *c, const seer_generate_params *p, seer_result *r)
{
    seer_generate_params fp = *p;
    fp.grammar = fp.json_schema = NULL; /* nothing is sampled */
    struct reply rp;
    char *full = NULL;
    size_t full_len = 0;
    int rc = reply_end(&rp, api_chat_begin(c, &fp, &rp, &full, &full_len, false), r);
    if (!rc && r->prompt_cut) {
        if (!(rc = forget_cut(c, false)))
            rc = seer_err(SEER_ECANCELED, "seer_chat_feed: cancelled by on_progress");
    } else if (!rc) {
        free(c->fed_text);
        c->fed_text = full, c->fed_len = full_len, full = NULL;
    }
    free(full);
    return rc;
}

/* The second half: ends the reply into *r and appends it to the history (or, when the prompt was
   cancelled, forgets the unanswered message). Takes `full`. */
int api_chat_end(seer_context *c, int rc, struct reply *rp, char *full, size_t full_len, seer_result *r)
{
    char *gen = NULL;
    size_t gen_len;
    struct sbuf fed = {0};
    if ((rc = reply_end(rp, rc, r)))
        goto done;
    if (r->prompt_cut) {
        rc = forget_cut(c, true);
        goto done;
    }
    /* What the state now holds: the rendered prompt, then every generated token and the pending
       stop token, decoded exactly (special tokens included). */
    if ((rc = tok_decode(c->m->tok, r->tokens, r->n_tokens, false, &gen, &gen_len)) ||
        (rc = sbuf_add(&fed, full, full_len)) || (rc = sbuf_add(&fed, gen, gen_len)))
        goto done;
    for (size_t i = 0; i < c->n_pending && rc == SEER_OK; i++) {
        size_t pl;
        const char *piece = tok_piece(c->m->tok, c->pending[i], &pl);
        if (piece)
            rc = sbuf_add(&fed, piece, pl);
    }
    if (rc == SEER_OK && (rc = seer_chat_add(c, "assistant", gen)) == SEER_OK) {
        free(c->fed_text);
        c->fed_text = fed.s;
        c->fed_len = fed.n;
        fed.s = NULL;
    }
done:
    if (rc)
        seer_result_clear(r);
    free(full), free(gen), free(fed.s);
    return rc;
}

int seer_chat_generate(seer_context *c, const seer_generate_params *params, seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct reply rp;
    char *full;
    size_t full_len = 0;
    int rc = api_chat_begin(c, &p, &rp, &full, &full_len, false);
    return api_chat_end(c, api_reply_alone(&rp, rc), &rp, full, full_len, r);
}
