/* reply.h — one reply being generated (api/reply.c), as a step machine: begin (feed the prompt),
   then next/fed once per token, then end. seer_generate_* and seer_chat_generate run it to the end
   in one call (api/generate.c); a seer_batch (api/batch.c) steps several at once, decoding every
   reply's token in one pass over the weights. */
#ifndef SEER_API_REPLY_H
#define SEER_API_REPLY_H

#include <stdbool.h>

#include "api/internal.h"
#include "lm/grammar.h"
#include "lm/sampler.h"

/* Growable byte string. */
struct sbuf {
    char *s;
    size_t n, cap;
};
int sbuf_add(struct sbuf *b, const char *s, size_t n);

/* Visible-text bookkeeping: reasoning hidden until </think>, stop strings searched in the answer,
   and a tail that could begin a stop string held back from the stream. */
struct visible {
    const seer_generate_params *p;
    struct sbuf text;   /* visible answer so far */
    struct sbuf think;  /* the reasoning, kept apart for seer_result.thinking */
    size_t streamed;    /* bytes of text already given to on_text */
    bool reasoning;     /* inside the think block the prompt opened */
    bool hiding;        /* ... and it is not shown */
    bool strip_lead;    /* drop whitespace at the start of the answer (after </think>) */
    bool think_started; /* on_thinking has had the reasoning's first visible byte */
    size_t max_stop;
};

struct reply {
    seer_context *c;
    seer_generate_params p;     /* the caller's, copied (what it points to stays the caller's) */
    seer_result r;              /* filled as tokens come; handed over by reply_end */
    size_t cap_gen, cap_lp, cap_te, cap_ti, cap_tl; /* r.tokens, r.logprobs, r.text_ends, r.top_ids, r.top_logprobs */
    sampler *smp;
    grammar *gram;
    grammar_matcher *gm;        /* constrains the answer (after </think> when thinking) */
    uint32_t *free_mask;        /* while reasoning under a grammar: every id but the end of turn */
    bool g_on;                  /* the grammar applies now */
    tok_stream ts;
    struct visible vis;
    double t0;                  /* start of decoding */
    bool done;                  /* r.stop is final: no token is owed to the model */
    int64_t think_tokens;       /* reasoning tokens sampled so far (p.thinking_budget) */
    int32_t close_ids[8];       /* the budget spent: "\n</think>\n\n" as ids, forced one by one */
    size_t n_close, i_close;    /* its length; how many were forced (0 until the budget is spent) */
    int32_t *feed;              /* a deferred prompt (reply_begin's `defer`) not yet fed in full, else NULL */
    size_t n_feed, n_fed_early; /* its tokens; how many a batch has fed so far */
    double t_feed;              /* when it was deferred (its prefill_seconds count from there) */
    struct held_turn *held;     /* a turn point inside the deferred prompt (api/turn.c), or NULL */
};

/* A chat's turn point inside a deferred prompt: the batch passes the mark in the step whose rows
   cross it (reply_prompt_mark, qwen35_feed_batch), and api_chat_prompt_done makes the context's
   turn point of it once the whole prompt is in. The reply owns it (reply_end frees it). */
struct held_turn {
    struct qwen35_mark mark;    /* at: tokens of the deferred prompt before the point; rec and logits owned */
    bool passed;                /* a step fed past it: rec and logits hold the state there */
    size_t n_fed;               /* the context's fed ids before the prompt */
    char *text;                 /* the rendering up to the turn point */
    size_t len;
};

/* A chat's turn point inside the reply's prompt (api_chat_begin): the first mark.at tokens (the
   pending ones, then the messages) go in the same pass as the assistant's opening, the state after
   them copied to the mark (qwen35_eval_mark), and the sampler sees only the rest, as when the
   messages were fed apart. With `fed`, the whole prompt is in the state already (seer_chat_feed
   with SEER_FEED_REPLY) and its logits in c->logits: only the sampler sees it. */
struct reply_turn {
    struct qwen35_mark mark;
    bool fed;
};

/* Zeroes rp: reply_end may then be called on it whatever happens next. */
void reply_init(struct reply *rp);
/* Feeds `prompt` (after the context's pending tokens) and prepares sampling; the logits of the last
   prompt token are then in c->logits. `think_open`: the prompt opened a think block (its text goes
   to result.thinking, and to the answer only with show_thinking). `fused` (or NULL): the images and
   videos whose expanded placeholders the prompt holds. A prompt cancelled by on_progress ends the
   reply here (rp->done). `defer` (a seer_batch): a prompt without images or videos is not fed
   here but held for the batch to feed in its passes with other replies' tokens (reply_prompt_left,
   reply_prompt_fed); the reply is sampled only after that. `turn` (or NULL): a turn point in a text
   prompt fed now (not deferred), or a prompt fed already. */
int reply_begin(struct reply *rp, seer_context *c, const int32_t *prompt, size_t n_prompt,
                const seer_generate_params *p, bool think_open, const struct api_fused *fused, bool defer,
                const struct reply_turn *turn);
/* The deferred prompt's tokens still to feed (*ids: the next), 0 when none is held. */
size_t reply_prompt_left(const struct reply *rp, const int32_t **ids);
/* The held turn point's mark when it lies inside the next k tokens of the deferred prompt (at
   counted from the first of them), else a mark with no state (rec NULL). */
struct qwen35_mark reply_prompt_mark(const struct reply *rp, size_t k);
/* The next k of them were fed into the context's state; when they complete the prompt, the logits
   of its last token must be in c->logits, and decoding starts. Calls on_progress as a prompt fed
   alone does; returns 1 when it cancelled the unfinished prompt (the reply is then done, as a
   prompt cut short), else 0. A reply that ends with its prompt unfinished (reply_end) is cut there.
   Feeding past the held turn point's mark (with reply_prompt_mark's mark in the same pass) marks
   it passed. */
int reply_prompt_fed(struct reply *rp, size_t k);
/* Samples the next token from c->logits. 0: *id is part of the reply and must be fed to the model,
   then reply_fed; 1: the reply ended (rp->r.stop says why); < 0: an error. */
int reply_next(struct reply *rp, int32_t *id);
/* A reply whose prompt was cancelled before any of it was fed: done, as reply_begin leaves one
   whose on_progress stopped the prompt (prompt_cut), ready for reply_end. */
void reply_cut(struct reply *rp, seer_context *c, const seer_generate_params *p);
/* *id (from reply_next) was fed: the context's logits now follow it. */
void reply_fed(struct reply *rp, int32_t id);
/* Completes the result into *r when rc is SEER_OK (r zeroed otherwise) and frees what rp holds.
   Returns rc, or the error met while completing. */
int reply_end(struct reply *rp, int rc, seer_result *r);

/* The two halves of seer_chat_generate (api/generate.c), for callers that feed the reply themselves:
   begin renders the conversation, feeds what the context has not seen and begins rp; *full (the
   whole rendering) is set even on failure and is taken by end, which ends the reply into *r and
   appends it to the history (or forgets a message whose prompt was cancelled). `defer` as for
   reply_begin: the opening (and any text after the turn point) is left to the batch. */
int api_chat_begin(seer_context *c, const seer_generate_params *p, struct reply *rp, char **full, size_t *full_len,
                   bool defer);
int api_chat_end(seer_context *c, int rc, struct reply *rp, char *full, size_t full_len, seer_result *r);
/* A batch fed the whole deferred prompt of a chat reply: the turn point held in it (if any, and
   passed) becomes the context's (seer_context_save_turn), as api_chat_begin makes it when it feeds
   the prompt itself. Without memory for it the context keeps none; the reply goes on either way. */
void api_chat_prompt_done(seer_context *c, struct reply *rp);
/* api/generate.c's helpers for api/turn.c: whether a reply opens a reasoning block (think, or with
   -1 the template's default); SEER_OK when the context can generate (a vocab_only model's cannot);
   a message appended to the history (n_images image parts before its text); a begun reply fed one
   token at a time until it ends (returns rc or the first error). */
bool api_think_on(const seer_context *c, const seer_generate_params *p);
int api_can_generate(const seer_context *c);
int api_chat_add(seer_context *c, const char *role, const char *content, size_t n_images);
int api_reply_alone(struct reply *rp, int rc);
/* seer_generate_text's first half: a raw continuation (no template; special tokens parsed). */
int api_text_begin(seer_context *c, const char *prompt, const seer_generate_params *p, struct reply *rp, bool defer);

#endif
