/* Tests seer_chat_feed and images given as encoded bytes (include/seer.h "snapshots and partial
   feeding", seer_image_input.data; api/generate.c, api/vision.c) through the API, on a tiny random
   Qwen3.5 with a vision tower (gen_tiny.py, fresh seed, HF directory, CPU) and a random-noise PNG:
   - the PNG as a file and as bytes in memory: the same seer_image_measure and the same greedy
     answer; random bytes fail with one line naming the image; data with pixels is refused;
   - feeding every message (first turn and second turn), or up to the last message's image, then
     generating (seer_chat_generate, or a seer_batch) gives what generating alone gives: the same greedy tokens, the same ids in the state
     (so the cut's tokenisation is a prefix of the whole rendering's), the last logits within
     TOL_LOGITS, and prompt_tokens = alone's − the tokens fed;
   - SEER_FEED_MEDIA with no media in the last message feeds what SEER_FEED_MESSAGES feeds without it;
   - SEER_FEED_REPLY (the messages and the assistant's opening, in one pass for text: the
     turn point copied out inside it) then the reply, alone or stepped in a seer_batch as the server
     steps it, gives what generating alone gives, the reply feeding nothing (prompt_tokens 0); with
     an image in the last message (two passes) too;
   - seer_context_save_turn after SEER_FEED_REPLY against seer_context_save after
     SEER_FEED_MESSAGES: the same tokens, text and history held, and each restored into a fresh
     context gives the reply alone's tokens and logits; refused before there is a turn point;
   - seer_chat_generate itself (the one pass) against the two passes of SEER_FEED_MESSAGES first
     is the first check above, on turn 2, whose turn point the rewind of a third turn uses
     (third_turn);
   - on_progress cancelling the feed (text, then with an image, then SEER_FEED_REPLY): SEER_ECANCELED,
     and the generation that follows is still the one alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

/* Feeding in two calls changes only where the prompt's micro-batches (and so the chunked GDN
   form's chunks) split, which reorders f32 sums: ≤ 1e-5 relative L2 on the last logits. */
#define TOL_LOGITS 1e-5
#define N_GEN 6

static char png[700];
static seer_model *model;
static unsigned char *png_bytes;
static size_t png_size;

static const seer_context_params small_batches = {.n_ctx = 1024, .n_batch = 8}; /* prompts span micro-batches */

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) != (size_t)len)
        free(b), b = NULL;
    if (f)
        fclose(f);
    *n = len > 0 ? (size_t)len : 0;
    return b;
}

/* One conversation: turn 1 (system, user), answered; then turn 2 (user, with the image when
   `image`). `feed` (-1 = none) is fed before turn 2's reply; on_progress (or NULL) cancels it. */
struct run {
    int rc, feed_rc;
    int64_t n_fed, prompt_tokens;
    int32_t tokens[N_GEN];
    size_t n_tokens;
    float *logits;
    seer_context *c;
};

static int cancel_first(int64_t done, int64_t total, int64_t gen, void *user)
{
    (void)done, (void)total, (void)gen;
    ++*(int *)user;
    return 1;
}

/* Turn 2's reply: seer_chat_generate, or (batch) a batch of one, as a server steps it. */
static int reply(seer_context *c, const seer_generate_params *p, bool batch, seer_result *r)
{
    seer_batch *b = NULL;
    seer_context *done = NULL;
    int rc, st = SEER_OK;
    if (!batch)
        return seer_chat_generate(c, p, r);
    if ((rc = seer_batch_create(model, 1, &b)) || (rc = seer_batch_add_chat(b, c, p)))
        goto out;
    while (!rc && seer_batch_active(b) > 0)
        rc = seer_batch_step(b);
    if (!rc && (!seer_batch_take(b, &done, r, &st) || done != c))
        rc = SEER_EINVAL;
    if (!rc)
        rc = st;
out:
    seer_batch_free(b);
    return rc;
}

/* The reply's prompt tokens, first N_GEN tokens and the context's last logits, kept in r. */
static void keep_reply(struct run *r, const seer_result *res)
{
    r->prompt_tokens = res->prompt_tokens;
    r->n_tokens = res->n_tokens < N_GEN ? res->n_tokens : N_GEN;
    memcpy(r->tokens, res->tokens, r->n_tokens * sizeof *r->tokens);
    if ((r->logits = malloc((size_t)model->lm->cfg.n_vocab * sizeof *r->logits)))
        memcpy(r->logits, r->c->logits, (size_t)model->lm->cfg.n_vocab * sizeof *r->logits);
}

static void run_conv(bool image, int feed, bool cancel, bool batch, struct run *out)
{
    seer_result r = {0};
    seer_generate_params p = test_greedy(N_GEN);
    int calls = 0;
    memset(out, 0, sizeof *out);
    out->feed_rc = -100;
    int rc = seer_context_create(model, &small_batches, &out->c);
    if (!rc && !(rc = seer_chat_add(out->c, "system", "You answer in one short sentence.")) &&
        !(rc = seer_chat_add(out->c, "user", "What is the colour of a clear sky at noon?")) &&
        !(rc = seer_chat_generate(out->c, &p, &r))) {
        seer_image_input img = {.path = png};
        rc = image ? seer_chat_add_images(out->c, "user", &img, 1, "And what does this picture show?")
                   : seer_chat_add(out->c, "user", "And at sunset, in a few words?");
    }
    seer_result_clear(&r);
    if (!rc && feed >= 0) {
        seer_generate_params fp = p;
        if (cancel)
            fp.on_progress = cancel_first, fp.user_data = &calls;
        out->feed_rc = seer_chat_feed(out->c, &fp, (enum seer_feed)feed, &out->n_fed);
        if (cancel && !(out->feed_rc == SEER_ECANCELED && calls == 1))
            diag("cancelled feed: rc %d after %d progress calls (%s)", out->feed_rc, calls, seer_last_error());
    }
    if (!rc && !(rc = reply(out->c, &p, batch, &r)))
        keep_reply(out, &r);
    if (rc)
        diag("conversation: %s", seer_last_error());
    out->rc = rc;
    seer_result_clear(&r);
}

static void run_free(struct run *r)
{
    seer_context_free(r->c);
    free(r->logits);
}

/* Both replies ran, with the same greedy tokens, the same ids in the state and the last logits
   within TOL_LOGITS (*e). A random model may end its turn at once: two empty replies are the same
   reply (the logits that chose the end are still compared). */
static bool same_reply(const struct run *a, const struct run *b, double *e)
{
    const size_t V = (size_t)model->lm->cfg.n_vocab;
    bool ids = a->c->n_fed == b->c->n_fed && !memcmp(a->c->fed, b->c->fed, a->c->n_fed * sizeof *a->c->fed);
    *e = a->logits && b->logits ? rel_l2(b->logits, a->logits, V) : 1e9;
    return a->rc == SEER_OK && b->rc == SEER_OK && a->n_tokens == b->n_tokens &&
           !memcmp(a->tokens, b->tokens, a->n_tokens * sizeof *a->tokens) && ids && *e <= TOL_LOGITS;
}

/* b (fed, then generated) against a (generated alone). */
static void same_as_alone(const struct run *a, const struct run *b, const char *what)
{
    double e;
    const bool same = same_reply(a, b, &e); /* before ok(): its arguments' order is unspecified */
    ok(same && b->feed_rc == SEER_OK && b->n_fed > 0 && b->prompt_tokens == a->prompt_tokens - b->n_fed,
       "%s: fed %lld tokens, then the reply: %zu greedy tokens as alone, the same %zu ids in the state, logits rel L2 "
       "%.1e (<= %.0e), prompt_tokens %lld = %lld - %lld",
       what, (long long)b->n_fed, b->n_tokens, b->c->n_fed, e, TOL_LOGITS, (long long)b->prompt_tokens,
       (long long)a->prompt_tokens, (long long)b->n_fed);
}

/* Turn 3 of r's conversation (greedy): its tokens, and its last logits against those of `ref` (also
   run here when r is the reference). Turn 2's reply renders differently once turn 3 follows, so this
   turn goes back to turn 2's turn point (seer_context.turn) and feeds from there. */
static void third_turn(struct run *r, struct run *ref, const char *what)
{
    seer_result res = {0};
    seer_generate_params p = test_greedy(N_GEN);
    int rc = r->rc ? r->rc : seer_chat_add(r->c, "user", "Thanks. One more word?");
    if (!rc && !(rc = seer_chat_generate(r->c, &p, &res))) {
        r->n_tokens = res.n_tokens < N_GEN ? res.n_tokens : N_GEN;
        memcpy(r->tokens, res.tokens, r->n_tokens * sizeof *r->tokens);
        memcpy(r->logits, r->c->logits, (size_t)model->lm->cfg.n_vocab * sizeof *r->logits);
    }
    seer_result_clear(&res);
    r->rc = rc;
    if (r == ref)
        return;
    double e;
    const bool same = same_reply(ref, r, &e);
    ok(same, "turn 3 after %s: %zu greedy tokens as the reference's, the same %zu ids, logits rel L2 %.1e (<= %.0e) %s",
       what, r->n_tokens, r->c ? r->c->n_fed : 0, e, TOL_LOGITS, rc ? seer_last_error() : "");
}

/* A fresh context restored from s answers turn 2 as `alone` did. */
/* A fresh context restored from s, and its greedy reply, in *r. */
static void restored_run(const seer_snapshot *s, struct run *r)
{
    seer_result res = {0};
    seer_generate_params p = test_greedy(N_GEN);
    memset(r, 0, sizeof *r);
    r->rc = seer_context_create(model, &small_batches, &r->c);
    if (!r->rc && !(r->rc = seer_context_restore(r->c, s)) && !(r->rc = reply(r->c, &p, false, &res)))
        keep_reply(r, &res);
    seer_result_clear(&res);
}

static void restored_reply(const seer_snapshot *s, const struct run *alone, const char *what)
{
    struct run r;
    restored_run(s, &r);
    double e;
    const bool same = same_reply(alone, &r, &e);
    ok(same, "%s, restored into a fresh context: the reply alone's %zu tokens, the same ids, logits rel L2 %.1e %s",
       what, r.n_tokens, e, r.rc ? seer_last_error() : "");
    run_free(&r);
}

/* seer_context_save_turn after SEER_FEED_REPLY against seer_context_save after SEER_FEED_MESSAGES. */
static void turn_snapshots(const struct run *alone)
{
    struct run a, b;
    seer_snapshot *sa = NULL, *sb = NULL;
    run_conv(false, -1, false, false, &a); /* only to get both contexts to turn 2 the same way */
    run_conv(false, -1, false, false, &b);
    seer_context *c = NULL;
    int rc = seer_context_create(model, NULL, &c);
    ok(!rc && seer_context_save_turn(c, &sa) == SEER_EINVAL && !sa, "seer_context_save_turn with no turn point: "
       "SEER_EINVAL (%s)", seer_last_error());
    seer_context_free(c);
    /* back to turn 2 unanswered in both: the history without its reply, state fed from scratch */
    for (struct run *r = &a; r; r = r == &a ? &b : NULL) {
        seer_context_free(r->c);
        r->c = NULL;
        seer_result res = {0};
        seer_generate_params p = test_greedy(N_GEN);
        rc = seer_context_create(model, &small_batches, &r->c);
        if (!rc && !(rc = seer_chat_add(r->c, "system", "You answer in one short sentence.")) &&
            !(rc = seer_chat_add(r->c, "user", "What is the colour of a clear sky at noon?")) &&
            !(rc = seer_chat_generate(r->c, &p, &res)))
            rc = seer_chat_add(r->c, "user", "And at sunset, in a few words?");
        seer_result_clear(&res);
        if (!rc)
            rc = seer_chat_feed(r->c, &p, r == &a ? SEER_FEED_REPLY : SEER_FEED_MESSAGES, NULL);
        if (!rc)
            rc = r == &a ? seer_context_save_turn(r->c, &sa) : seer_context_save(r->c, &sb);
        r->rc = rc;
    }
    const bool made = ok(!a.rc && !b.rc, "the turn point saved after SEER_FEED_REPLY, the state after SEER_FEED_MESSAGES "
                         "%s", a.rc || b.rc ? seer_last_error() : "");
    if (made) {
        ok(seer_snapshot_tokens(sa) == seer_snapshot_tokens(sb) && seer_snapshot_tokens(sa) < (int64_t)a.c->n_fed,
           "both hold %lld tokens, %lld fewer than the context after SEER_FEED_REPLY (the assistant's opening)",
           (long long)seer_snapshot_tokens(sa), (long long)a.c->n_fed - (long long)seer_snapshot_tokens(sa));
        restored_reply(sa, alone, "seer_context_save_turn");
        restored_reply(sb, alone, "seer_context_save");
    }
    seer_snapshot_free(sa), seer_snapshot_free(sb);
    run_free(&a), run_free(&b);
}

static void image_bytes(void)
{
    seer_image_input file = {.path = png}, mem = {.data = png_bytes, .data_size = png_size};
    seer_image_info fi = {0}, mi = {0};
    int rc1 = seer_image_measure(model, &file, &fi), rc2 = seer_image_measure(model, &mem, &mi);
    ok(rc1 == SEER_OK && rc2 == SEER_OK && !memcmp(&fi, &mi, sizeof fi) && fi.tokens > 0,
       "the PNG as a file and as %zu bytes: the same measure (%dx%d, %lld tokens)", png_size, mi.width, mi.height,
       (long long)mi.tokens);
    int32_t toks[2][N_GEN];
    size_t nt[2] = {0};
    int rcs[2] = {-100, -100};
    for (int k = 0; k < 2; k++) {
        seer_context *c = NULL;
        seer_result r = {0};
        seer_generate_params p = test_greedy(N_GEN);
        if (!(rcs[k] = seer_context_create(model, NULL, &c)) &&
            !(rcs[k] = seer_chat_add_images(c, "user", k ? &mem : &file, 1, "Describe it.")) &&
            !(rcs[k] = seer_chat_generate(c, &p, &r))) {
            nt[k] = r.n_tokens < N_GEN ? r.n_tokens : N_GEN;
            memcpy(toks[k], r.tokens, nt[k] * sizeof **toks);
        }
        seer_result_clear(&r);
        seer_context_free(c);
    }
    ok(!rcs[0] && !rcs[1] && nt[0] > 0 && nt[0] == nt[1] && !memcmp(toks[0], toks[1], nt[0] * sizeof **toks),
       "the same greedy answer (%zu tokens) about the file and the bytes", nt[0]);

    unsigned char junk[512];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)test_rand_u64();
    seer_image_input bad = {.data = junk, .data_size = sizeof junk}, named = bad;
    named.path = "upload-3.png";
    seer_context *c = NULL;
    int rc = seer_context_create(model, NULL, &c), rc_bad = -100, rc_named = -100;
    char msg[512] = "";
    if (!rc) {
        rc_bad = seer_chat_add_images(c, "user", &bad, 1, "x");
        snprintf(msg, sizeof msg, "%s", seer_last_error());
        rc_named = seer_chat_add_images(c, "user", &named, 1, "x");
    }
    ok(rc_bad != SEER_OK && strstr(msg, "image data") && !strchr(msg, '\n') && c && c->n_hist == 0,
       "random bytes: refused in one line naming the image, nothing added (%d: %s)", rc_bad, msg);
    ok(rc_named != SEER_OK && strstr(seer_last_error(), "upload-3.png"), "with a path, the message names it (%s)",
       seer_last_error());
    seer_image_input both = {.data = png_bytes, .data_size = png_size, .rgb = png_bytes, .width = 2, .height = 2};
    rc = seer_image_measure(model, &both, &mi);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), "exactly one"), "data and rgb together: SEER_EINVAL (%s)",
       seer_last_error());
    seer_context_free(c);
}

/* A first turn whose message is longer than a batch step's prompt rows (512 with no other reply
   decoding), so that the turn point falls in a later step than the prompt's first: the reply stepped in a seer_batch is the
   one alone, and the turn point it kept, saved (seer_context_save_turn) and restored into a fresh
   context, answers as alone too. */
static void long_turn_in_batch(void)
{
    struct run ra = {0}, rb = {0};
    struct sbuf_words { char s[4000]; } msg = {{0}};
    static const char *words[] = {"river", "stone", "cloud", "lamp", "green", "quiet", "north", "paper"};
    size_t n = 0;
    for (int i = 0; i < 125 && n + 16 < sizeof msg.s; i++)
        n += (size_t)snprintf(msg.s + n, sizeof msg.s - n, "%s ", words[test_rand_u64() % (sizeof words / sizeof *words)]);
    seer_snapshot *sa = NULL, *sb = NULL;
    for (struct run *r = &ra; r; r = r == &ra ? &rb : NULL) {
        seer_result res = {0};
        seer_generate_params p = test_greedy(N_GEN);
        r->rc = seer_context_create(model, &small_batches, &r->c);
        if (!r->rc && !(r->rc = seer_chat_add(r->c, "user", msg.s)) && !(r->rc = reply(r->c, &p, r == &rb, &res))) {
            keep_reply(r, &res);
            r->rc = seer_context_save_turn(r->c, r == &ra ? &sa : &sb);
        }
        seer_result_clear(&res);
    }
    double e;
    const bool same = same_reply(&ra, &rb, &e);
    ok(same && ra.prompt_tokens > 530 && rb.prompt_tokens == ra.prompt_tokens,
       "a %lld-token first turn stepped in a seer_batch: the reply alone's %zu tokens, logits rel L2 %.1e (<= %.0e) %s",
       (long long)rb.prompt_tokens, rb.n_tokens, e, TOL_LOGITS, rb.rc ? seer_last_error() : "");
    if (ok(sa && sb && seer_snapshot_tokens(sa) == seer_snapshot_tokens(sb) && seer_snapshot_tokens(sb) > 512,
           "its turn point kept by the batch: %lld tokens, as alone's %lld", sb ? (long long)seer_snapshot_tokens(sb) : -1LL,
           sa ? (long long)seer_snapshot_tokens(sa) : -1LL)) {
        /* a fresh context from the batch's turn point answers as one from alone's */
        struct run ref;
        restored_run(sa, &ref);
        restored_reply(sb, &ref, "the batch's turn point");
        run_free(&ref);
    }
    seer_snapshot_free(sa), seer_snapshot_free(sb);
    run_free(&ra), run_free(&rb);
}

static void feeding(void)
{
    struct run alone, fed, alone_img, fed_img, cut, cut_img, batched;
    run_conv(false, -1, false, false, &alone);
    run_conv(false, SEER_FEED_MESSAGES, false, false, &fed);
    same_as_alone(&alone, &fed, "turn 2, SEER_FEED_MESSAGES");
    run_conv(true, -1, false, false, &alone_img);
    run_conv(true, SEER_FEED_MEDIA, false, false, &fed_img);
    same_as_alone(&alone_img, &fed_img, "turn 2 with an image, SEER_FEED_MEDIA");
    run_conv(true, SEER_FEED_MEDIA, false, true, &batched);
    same_as_alone(&alone_img, &batched, "the same, the reply stepped in a seer_batch");
    ok(fed_img.n_fed + 8 < alone_img.prompt_tokens, "SEER_FEED_MEDIA left the text and the turn's end (%lld of %lld)",
       (long long)fed_img.n_fed, (long long)alone_img.prompt_tokens);
    double e;
    run_conv(false, SEER_FEED_MESSAGES, true, false, &cut);
    bool same = same_reply(&alone, &cut, &e);
    ok(cut.feed_rc == SEER_ECANCELED && same && cut.prompt_tokens == alone.prompt_tokens,
       "on_progress cancels the feed (SEER_ECANCELED); the reply then feeds the whole turn and is the one alone "
       "(logits rel L2 %.1e)", e);
    run_conv(true, SEER_FEED_MEDIA, true, false, &cut_img);
    same = same_reply(&alone_img, &cut_img, &e);
    ok(cut_img.feed_rc == SEER_ECANCELED && same &&
           cut_img.prompt_tokens == alone_img.prompt_tokens,
       "a cancelled feed of an image: the queued image is kept, and the reply is the one alone (logits rel L2 %.1e)", e);

    struct run rep, rep_batch, rep_img, rep_cut;
    run_conv(false, SEER_FEED_REPLY, false, false, &rep);
    same_as_alone(&alone, &rep, "turn 2, SEER_FEED_REPLY");
    ok(rep.prompt_tokens == 0, "after SEER_FEED_REPLY the reply fed nothing (prompt_tokens %lld)",
       (long long)rep.prompt_tokens);
    run_conv(false, SEER_FEED_REPLY, false, true, &rep_batch);
    same_as_alone(&alone, &rep_batch, "turn 2, SEER_FEED_REPLY, the reply stepped in a seer_batch");
    run_conv(true, SEER_FEED_REPLY, false, false, &rep_img);
    same_as_alone(&alone_img, &rep_img, "turn 2 with an image, SEER_FEED_REPLY (two passes)");
    run_conv(false, SEER_FEED_REPLY, true, false, &rep_cut);
    same = same_reply(&alone, &rep_cut, &e);
    ok(rep_cut.feed_rc == SEER_ECANCELED && same && rep_cut.prompt_tokens > alone.prompt_tokens &&
           rep_cut.c->n_hist == alone.c->n_hist,
       "SEER_FEED_REPLY cancelled: SEER_ECANCELED, the messages kept, and the reply feeds the whole conversation and "
       "is the one alone (logits rel L2 %.1e; %lld prompt tokens against %lld)", e, (long long)rep_cut.prompt_tokens,
       (long long)alone.prompt_tokens);
    run_free(&rep), run_free(&rep_batch), run_free(&rep_img), run_free(&rep_cut);
    turn_snapshots(&alone);
    struct run alone_batch;
    run_conv(false, -1, false, true, &alone_batch);
    same = same_reply(&alone, &alone_batch, &e);
    ok(same && alone_batch.prompt_tokens == alone.prompt_tokens,
       "turn 2 stepped in a seer_batch (its messages fed in the steps): the reply alone's, logits rel L2 %.1e", e);
    third_turn(&fed, &fed, "");
    third_turn(&alone, &fed, "turn 2's messages and opening in one pass (its turn point copied inside it)");
    third_turn(&alone_batch, &fed, "turn 2 stepped in a seer_batch (its turn point copied in a step)");
    run_free(&alone_batch);
    long_turn_in_batch();

    /* SEER_FEED_MEDIA without media in the last message = everything before it (the template wants a
       user message, so a system prompt alone is fed this way) */
    seer_context *b = NULL;
    int64_t nb = -1;
    static const char sys_turn[] = "<|im_start|>system\nBe terse.<|im_end|>\n";
    int rc = seer_context_create(model, NULL, &b);
    if (!rc && !(rc = seer_chat_add(b, "system", "Be terse.")) && !(rc = seer_chat_add(b, "user", "Hello there.")))
        rc = seer_chat_feed(b, NULL, SEER_FEED_MEDIA, &nb);
    ok(rc == SEER_OK && nb > 0 && nb == (int64_t)b->n_fed && b->fed_len == strlen(sys_turn) &&
           !memcmp(b->fed_text, sys_turn, b->fed_len),
       "SEER_FEED_MEDIA with a text-only last message feeds the system turn alone (%lld tokens) (%s)", (long long)nb,
       rc ? seer_last_error() : "ok");
    ok(seer_chat_feed(b, NULL, (enum seer_feed)7, NULL) == SEER_EINVAL, "an unknown seer_feed: SEER_EINVAL");
    seer_context_free(b);
    run_free(&alone), run_free(&fed), run_free(&alone_img), run_free(&fed_img), run_free(&cut), run_free(&cut_img);
    run_free(&batched);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!if_python_pil())
        return plan_skip_all("a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    char hf[700];
    bool made = if_tiny_vision(seed, 90, 70, hf, png, sizeof png) == 0 && (png_bytes = read_all(png, &png_size));
    if (!ok(made, "tiny model and image made (seed %llu)", (unsigned long long)seed))
        return done_testing();
    seer_set_log_level(SEER_LOG_ERROR);
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.n_threads = 2;
    if (!ok(seer_model_load(hf, &mp, &model) == SEER_OK, "model loads: %s", seer_last_error()))
        return done_testing();
    image_bytes();
    feeding();
    seer_model_free(model);
    free(png_bytes);
    return done_testing();
}
