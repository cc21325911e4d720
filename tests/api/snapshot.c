/* Tests seer_context_save / seer_context_restore (include/seer.h "snapshots and partial feeding",
   api/snapshot.c) through the API, on a tiny random Qwen3.5 with a vision tower (gen_tiny.py, fresh
   seed, HF directory), on the CPU and then on Vulkan when there is a device (lavapipe in CI; a skip
   otherwise, a failure with SEER_REQUIRE_VULKAN=1):
   - after a first chat turn, a snapshot restored into a larger context, and into a context that held
     another conversation, gives turn 2 exactly as the original context gives it: the same greedy
     tokens and the same last logits (TOL_EXACT);
   - a conversation fed up to its image (seer_chat_feed SEER_FEED_MEDIA) and saved, or a chat turn in
     a q8_0 cache: a restored context answers as the original;
   - a context too small for the snapshot, or of another KV cache type: SEER_EINVAL with a message,
     the context unchanged; queued images: save refuses; bytes > 0 and growing with the tokens held;
   - two threads restoring one snapshot at once into two contexts give the original's answer;
   - allocations failing one at a time (CPU): SEER_ENOMEM, nothing half made or changed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/util.h"
#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

/* A restored context runs the very computation the saved one would (the same state bytes, the same
   micro-batches): the logits should be identical; 1e-6 relative L2 allows only for nothing. */
#define TOL_EXACT 1e-6
#define N_GEN 6

static char png[700];
static seer_model *model;
static const char *dev;

struct answer {
    int rc;
    int32_t tokens[N_GEN];
    size_t n_tokens;
    float *logits;
};

static void answer_free(struct answer *a)
{
    free(a->logits);
    memset(a, 0, sizeof *a);
}

/* Adds turn 2's question to c (unless `asked`) and answers it greedily into *a. */
static void turn2(seer_context *c, bool asked, struct answer *a)
{
    seer_result r = {0};
    seer_generate_params p = test_greedy(N_GEN);
    memset(a, 0, sizeof *a);
    a->rc = asked ? SEER_OK : seer_chat_add(c, "user", "Now say it backwards, please.");
    if (!a->rc)
        a->rc = seer_chat_generate(c, &p, &r);
    if (!a->rc) {
        const size_t V = (size_t)model->lm->cfg.n_vocab;
        a->n_tokens = r.n_tokens < N_GEN ? r.n_tokens : N_GEN;
        memcpy(a->tokens, r.tokens, a->n_tokens * sizeof *a->tokens);
        if ((a->logits = malloc(V * sizeof *a->logits)))
            memcpy(a->logits, c->logits, V * sizeof *a->logits);
    } else {
        diag("%s: turn 2: %s", dev, seer_last_error());
    }
    seer_result_clear(&r);
}

static bool same_answer(const struct answer *a, const struct answer *b, double *e)
{
    *e = a->logits && b->logits ? rel_l2(b->logits, a->logits, (size_t)model->lm->cfg.n_vocab) : 1e9;
    /* no tokens is an answer too: a random model may end its turn at once (seed 650364625's image
       question); the logits that chose that are still compared */
    return a->rc == SEER_OK && b->rc == SEER_OK && a->n_tokens == b->n_tokens &&
           !memcmp(a->tokens, b->tokens, a->n_tokens * sizeof *a->tokens) && *e <= TOL_EXACT;
}

static seer_context *context(int64_t n_ctx, const char *cache_type)
{
    seer_context *c = NULL;
    if (seer_context_create(model, &(seer_context_params){.n_ctx = n_ctx, .n_batch = 16, .cache_type = cache_type},
                            &c) != SEER_OK)
        diag("%s: context: %s", dev, seer_last_error());
    return c;
}

/* One chat turn on c: a system prompt, a question, a greedy answer. */
static int turn1(seer_context *c, const char *question)
{
    seer_result r = {0};
    seer_generate_params p = test_greedy(N_GEN);
    int rc = seer_chat_add(c, "system", "You are brief.");
    if (!rc && !(rc = seer_chat_add(c, "user", question)))
        rc = seer_chat_generate(c, &p, &r);
    seer_result_clear(&r);
    return rc;
}

struct worker {
    const seer_snapshot *snap;
    seer_context *c;
    struct answer a;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int rc = seer_context_restore(w->c, w->snap);
    if (rc)
        w->a.rc = rc;
    else
        turn2(w->c, false, &w->a);
    return NULL;
}

static void threads(const seer_snapshot *snap, const struct answer *orig)
{
    struct worker w[2] = {{snap, context(256, NULL), {0}}, {snap, context(300, NULL), {0}}};
    pthread_t t[2];
    int started = 0;
    for (int k = 0; k < 2; k++)
        started += w[k].c && pthread_create(&t[k], NULL, worker_main, &w[k]) == 0;
    if (ok(started == 2, "%s: two threads started", dev))
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
    double e0 = 1e9, e1 = 1e9;
    const bool same = started == 2 && same_answer(orig, &w[0].a, &e0) && same_answer(orig, &w[1].a, &e1);
    ok(same,
       "%s: two threads restoring one snapshot at once: both answer as the original (rel L2 %.1e, %.1e)", dev, e0, e1);
    for (int k = 0; k < 2; k++)
        answer_free(&w[k].a), seer_context_free(w[k].c);
}

/* Errors, each leaving the context unchanged; and what a snapshot costs. */
static void refusals(const seer_snapshot *snap, const seer_context *orig)
{
    seer_context *small = context(seer_snapshot_tokens(snap) - 1, NULL), *f32 = context(256, "f32");
    int rc1 = small ? seer_context_restore(small, snap) : -100;
    char msg1[512];
    snprintf(msg1, sizeof msg1, "%s", seer_last_error());
    int rc2 = f32 ? seer_context_restore(f32, snap) : -100;
    ok(rc1 == SEER_EINVAL && strstr(msg1, "n_ctx") && small->n_hist == 0 && small->st->n_past == 0,
       "%s: into a context of %lld tokens: SEER_EINVAL, unchanged (%s)", dev, (long long)seer_snapshot_tokens(snap) - 1,
       msg1);
    ok(rc2 == SEER_EINVAL && strstr(seer_last_error(), "f16") && strstr(seer_last_error(), "f32") && f32->n_hist == 0,
       "%s: into an f32 cache: SEER_EINVAL naming both types (%s)", dev, seer_last_error());
    seer_snapshot *later = NULL;
    int rc = seer_context_save(orig, &later);
    ok(rc == SEER_OK && seer_snapshot_bytes(snap) > 0 && seer_snapshot_tokens(later) > seer_snapshot_tokens(snap) &&
           seer_snapshot_bytes(later) > seer_snapshot_bytes(snap),
       "%s: %lld tokens hold %zu bytes, %lld tokens %zu", dev, (long long)seer_snapshot_tokens(snap),
       seer_snapshot_bytes(snap), (long long)seer_snapshot_tokens(later), seer_snapshot_bytes(later));
    seer_snapshot_free(later);
    seer_image_input img = {.path = png};
    seer_snapshot *queued = NULL;
    rc = seer_chat_add_images(small, "user", &img, 1, "What is it?");
    ok(rc == SEER_OK && seer_context_save(small, &queued) == SEER_EINVAL && !queued &&
           strstr(seer_last_error(), "queued"),
       "%s: an image queued but not fed: save refuses (%s)", dev, seer_last_error());
    seer_context_free(small);
    seer_context_free(f32);
    seer_snapshot_free(NULL);
}

/* Every allocation of a save, then of a restore, failing in turn: SEER_ENOMEM and nothing half made
   (a failed restore leaves the context as it was: its history and state kept); then both succeed, and
   the restored context answers as the original (*orig) after turn 1 (`turn1_snap`). */
static void out_of_memory(const seer_snapshot *turn1_snap, const struct answer *orig)
{
    seer_snapshot *snap = NULL;
    seer_context *from = context(256, NULL), *to = context(256, NULL);
    struct answer a = {0};
    int rc = from && to ? seer_context_restore(from, turn1_snap) : -100, fails = 0, bad = 0;
    if (!rc)
        rc = turn1(to, "Something else entirely.");
    const size_t hist = to ? to->n_hist : 0;
    const int64_t past = to ? to->st->n_past : 0;
    for (long n = 1; !rc && n < 100; n++, fails++) {
        seer_alloc_fail_after(n);
        rc = seer_context_save(from, &snap);
        seer_alloc_fail_after(0);
        bad += rc != SEER_OK && (rc != SEER_ENOMEM || snap);
        rc = rc == SEER_ENOMEM ? SEER_OK : rc ? rc : 1;
    }
    for (long n = 1; rc == 1 && n < 100; n++, fails++) {
        seer_alloc_fail_after(n);
        rc = seer_context_restore(to, snap);
        seer_alloc_fail_after(0);
        bad += rc != SEER_OK && (rc != SEER_ENOMEM || to->n_hist != hist || to->st->n_past != past);
        rc = rc == SEER_ENOMEM ? 1 : rc;
    }
    if (!rc)
        turn2(to, false, &a);
    double e = 1e9;
    const bool same = same_answer(orig, &a, &e);
    ok(!rc && !bad && fails > 2 && same,
       "%s: %d allocations failing one at a time in save and restore: SEER_ENOMEM, nothing changed (%d wrong); then "
       "the same answer (rel L2 %.1e)", dev, fails, bad, e);
    answer_free(&a);
    seer_snapshot_free(snap);
    seer_context_free(from);
    seer_context_free(to);
}

/* A conversation saved from one context of `cache_type` and restored into another that held a
   conversation of its own; then the original and the restored context answer. `image`: the
   conversation is a question about the image fed up to the image (seer_chat_feed SEER_FEED_MEDIA),
   whose positions and rope delta must travel with the state; else a chat turn, in a q8_0 cache
   whose 34-byte blocks must be copied as stored. */
static void copy_to_another(const char *cache_type, bool image)
{
    seer_context *a = context(512, cache_type), *b = context(512, cache_type);
    seer_image_input img = {.path = png};
    seer_snapshot *snap = NULL;
    struct answer ra = {0}, rb = {0};
    int64_t fed = 0;
    int rc = a && b ? turn1(b, "Something else entirely.") : -100;
    if (!rc && image && !(rc = seer_chat_add_images(a, "user", &img, 1, "What is in the picture?")))
        rc = seer_chat_feed(a, NULL, SEER_FEED_MEDIA, &fed);
    else if (!rc && !image)
        rc = turn1(a, "Name a fruit.");
    if (!rc && !(rc = seer_context_save(a, &snap)) && !(rc = seer_context_restore(b, snap))) {
        turn2(a, image, &ra);
        turn2(b, image, &rb);
    }
    double e = 1e9;
    const bool same = same_answer(&ra, &rb, &e);
    ok(rc == SEER_OK && same && (!image || fed > 0),
       "%s: %s, saved (%s cache), restored into another context: the same answer (rel L2 %.1e) (%s)", dev,
       image ? "fed up to its image" : "a chat turn", cache_type, e, rc ? seer_last_error() : "ok");
    answer_free(&ra), answer_free(&rb);
    seer_snapshot_free(snap);
    seer_context_free(a);
    seer_context_free(b);
}

static void run_on(const char *hf, const char *device)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = device;
    mp.n_threads = 2;
    dev = device;
    if (seer_model_load(hf, &mp, &model) != SEER_OK) {
        const char *req = getenv("SEER_REQUIRE_VULKAN");
        if (!strcmp(device, "cpu") || (req && !strcmp(req, "1")))
            ok(0, "%s: model loaded: %s", device, seer_last_error());
        else
            skip("no Vulkan device on this machine", "snapshots on Vulkan");
        return;
    }
    diag("%s", seer_model_device(model));
    seer_context *orig = context(256, NULL), *big = context(1024, NULL), *other = context(256, NULL);
    seer_snapshot *snap = NULL;
    struct answer a0 = {0}, a1 = {0}, a2 = {0};
    int rc = orig && big && other ? turn1(orig, "Name a colour.") : -100;
    if (!rc && !(rc = seer_context_save(orig, &snap)) && !(rc = turn1(other, "Count to five, slowly and aloud."))) {
        turn2(orig, false, &a0);
        rc = seer_context_restore(big, snap);
    }
    if (!ok(rc == SEER_OK && a0.rc == SEER_OK, "%s: turn 1, saved (%lld tokens, %zu bytes), turn 2 on the original: %s",
            device, (long long)seer_snapshot_tokens(snap), seer_snapshot_bytes(snap), rc ? seer_last_error() : "ok"))
        goto done;
    double e = 1e9;
    turn2(big, false, &a1);
    bool same = same_answer(&a0, &a1, &e);
    ok(same, "%s: restored into a larger context: turn 2 as the original (rel L2 %.1e <= %.0e)",
       device, e, TOL_EXACT);
    rc = seer_context_restore(other, snap);
    turn2(other, false, &a2);
    same = same_answer(&a0, &a2, &e);
    ok(rc == SEER_OK && same,
       "%s: restored into a context that held another conversation: the same (rel L2 %.1e)", device, e);
    refusals(snap, orig);
    if (!strcmp(device, "cpu")) /* the hook counts the library's allocations, not a driver's */
        out_of_memory(snap, &a0);
    copy_to_another("f16", true);
    copy_to_another("q8_0", false);
    threads(snap, &a0);
done:
    answer_free(&a0), answer_free(&a1), answer_free(&a2);
    seer_snapshot_free(snap);
    seer_context_free(orig), seer_context_free(big), seer_context_free(other);
    seer_model_free(model);
    model = NULL;
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!if_python_pil())
        return plan_skip_all("a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    char hf[700];
    if (!ok(if_tiny_vision(seed, 90, 70, hf, png, sizeof png) == 0, "tiny model and image made (seed %llu)",
            (unsigned long long)seed))
        return done_testing();
    seer_set_log_level(SEER_LOG_ERROR);
    run_on(hf, "cpu");
#if SEER_HAVE_VULKAN
    run_on(hf, "vulkan");
#else
    skip("built without Vulkan (SEER_VULKAN=OFF)", "snapshots on Vulkan");
#endif
    return done_testing();
}
