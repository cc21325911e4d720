/* Tests api/batch.c (include/seer.h "several replies at once") on a tiny random Qwen3.5
   (tests/reference/gen_tiny.py, fresh seed): replies stepped together in one batch give each context
   exactly the reply seer_chat_generate gives it alone — greedy tokens, text and stop reason — while
   replies join (added between steps) and leave (different max_tokens, a stop string, the end of the
   turn); the chat history a batch reply leaves makes the next turn equal to the one after a reply
   generated alone; raw prompts longer than a step's prompt rows are fed over several steps beside a
   decoding reply, each reply still equal to its alone run; a prompt cancelled by on_progress
   finishes at once (when added, or in the step that fed its part); errors (a context twice, a
   full batch, a prompt too long) add nothing. On the HF directory (f32 path) and the f16 GGUF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

#define N_CTX 4

static const char *const prompts[N_CTX] = {
    "Describe a quiet harbour at dawn.",
    "List three prime numbers and explain why.",
    "x",
    "Write the word banana backwards, then forwards, then backwards again, slowly.",
};
static const int64_t max_tokens[N_CTX] = {24, 9, 17, 30};

static int new_chat(seer_model *m, const char *prompt, seer_context **c)
{
    int rc = seer_context_create(m, &(seer_context_params){.n_ctx = 512, .n_batch = 64}, c);
    if (!rc && (rc = seer_chat_add(*c, "user", prompt)))
        seer_context_free(*c);
    return rc;
}

static bool same_result(const seer_result *a, const seer_result *b)
{
    return a->n_tokens == b->n_tokens && a->stop == b->stop && a->prompt_tokens == b->prompt_tokens &&
           (!a->n_tokens || !memcmp(a->tokens, b->tokens, a->n_tokens * sizeof *a->tokens)) &&
           !strcmp(a->text, b->text);
}

static int cancel_prompt(int64_t done, int64_t total, int64_t gen, void *user)
{
    (void)done, (void)total, (void)gen, (void)user;
    return 1;
}

/* Alone vs together: context i joins after i steps (join), leaves at its own end (leave). Reply 0
   has a stop string taken from the middle of its own text. */
static void check_together(seer_model *m, const char *what)
{
    seer_context *alone[N_CTX] = {0}, *ctx[N_CTX] = {0};
    seer_result ra[N_CTX] = {{0}}, rb[N_CTX] = {{0}};
    seer_generate_params p[N_CTX];
    char stop[64] = "";
    const char *stops[1] = {stop};
    int rc = SEER_OK;
    /* a stop string for reply 0: four bytes from the middle of what it says without one */
    seer_context *pre;
    seer_result rp = {0};
    seer_generate_params p0 = test_greedy(max_tokens[0]);
    if (!(rc = new_chat(m, prompts[0], &pre))) {
        rc = seer_chat_generate(pre, &p0, &rp);
        seer_context_free(pre);
    }
    if (!rc && rp.text && strlen(rp.text) >= 8)
        snprintf(stop, sizeof stop, "%.4s", rp.text + strlen(rp.text) / 2);
    seer_result_clear(&rp);
    for (int i = 0; i < N_CTX && !rc; i++) {
        p[i] = test_greedy(max_tokens[i]);
        if (i == 0 && stop[0])
            p[0].stop = stops, p[0].n_stop = 1;
        if (!(rc = new_chat(m, prompts[i], &alone[i])))
            rc = seer_chat_generate(alone[i], &p[i], &ra[i]);
    }
    if (!ok(rc == SEER_OK, "%s: %d replies generated alone: %s", what, N_CTX, seer_last_error()))
        goto done;
    if (stop[0])
        ok(ra[0].stop == SEER_STOP_STRING, "%s: reply 0 alone ends at its stop string (%zu bytes; stop %d)", what, strlen(stop),
           ra[0].stop);
    seer_batch *b;
    if (!ok(seer_batch_create(m, N_CTX, &b) == SEER_OK, "%s: batch of %d created", what, N_CTX))
        goto done;
    int added = 0, taken = 0, steps = 0, max_active = 0;
    while (taken < N_CTX && steps < 200) {
        if (added < N_CTX && added <= steps) { /* one joins per step */
            if ((rc = new_chat(m, prompts[added], &ctx[added])) ||
                (rc = seer_batch_add_chat(b, ctx[added], &p[added])))
                break;
            added++;
        }
        max_active = seer_batch_active(b) > max_active ? seer_batch_active(b) : max_active;
        if ((rc = seer_batch_step(b)))
            break;
        steps++;
        seer_context *c;
        seer_result r;
        int st;
        while (seer_batch_take(b, &c, &r, &st)) {
            int i = 0;
            while (i < N_CTX && ctx[i] != c)
                i++;
            if (i == N_CTX || st) {
                diag("take: unknown context or status %d: %s", st, seer_last_error());
                seer_result_clear(&r);
                rc = SEER_EINVAL;
                break;
            }
            rb[i] = r;
            taken++;
        }
        if (rc)
            break;
    }
    ok(rc == SEER_OK && taken == N_CTX, "%s: all %d replies taken after %d steps (%s)", what, N_CTX, steps,
       rc ? seer_last_error() : "ok");
    ok(max_active >= 3, "%s: up to %d replies decoded in one step", what, max_active);
    for (int i = 0; i < N_CTX; i++)
        if (!ok(rb[i].text && same_result(&ra[i], &rb[i]),
                "%s: reply %d together == alone: %zu tokens, stop %d (alone %zu, stop %d)", what, i,
                rb[i].n_tokens, rb[i].stop, ra[i].n_tokens, ra[i].stop))
            diag("alone '%s' / together '%s'", ra[i].text ? ra[i].text : "", rb[i].text ? rb[i].text : "");
    /* the next turn continues the history a batch reply left as it continues one generated alone */
    seer_result n1 = {0}, n2 = {0};
    seer_generate_params p2 = test_greedy(10);
    rc = seer_chat_add(alone[0], "user", "And then?");
    rc = rc ? rc : seer_chat_add(ctx[0], "user", "And then?");
    rc = rc ? rc : seer_chat_generate(alone[0], &p2, &n1);
    rc = rc ? rc : seer_chat_generate(ctx[0], &p2, &n2);
    ok(rc == SEER_OK && same_result(&n1, &n2), "%s: the next turn after a batch reply == after a reply alone (%zu tokens)",
       what, n2.n_tokens);
    seer_result_clear(&n1), seer_result_clear(&n2);
    seer_batch_free(b);
done:
    for (int i = 0; i < N_CTX; i++) {
        seer_result_clear(&ra[i]), seer_result_clear(&rb[i]);
        seer_context_free(alone[i]), seer_context_free(ctx[i]);
    }
}

/* on_progress of a prompt fed by the steps: counts the calls before the prompt was complete, and
   cancels at the first one when asked. */
struct progress {
    int partial, complete;
    bool cancel;
};

static int count_progress(int64_t done, int64_t total, int64_t gen, void *user)
{
    struct progress *pr = user;
    if (gen == 0 && done < total)
        pr->partial++;
    else if (gen == 0)
        pr->complete++;
    return pr->cancel;
}

/* Raw prompts longer than a step's prompt rows (api/batch.c: 128), added together while another
   reply decodes: the steps feed them in chunks beside the decoding reply (on_progress sees the
   prompt part-fed between steps), and every reply equals seer_generate_text's alone; a prompt
   whose on_progress cancels in a step finishes cut short, and the others go on. */
static void check_prompts_in_steps(seer_model *m, const char *what)
{
    enum { N = 3 };
    char text[N][8192];
    seer_context *alone[N] = {0}, *ctx[N] = {0};
    seer_result ra[N] = {{0}}, rb[N] = {{0}};
    struct progress pr[N] = {{0}};
    seer_generate_params p[N];
    int rc = SEER_OK;
    /* the first prompt longer than three steps of 512 rows (a step's rows when no reply decodes: the
       short reply may end at once, seed 30378884), so that it is fed part-way at least twice */
    for (int i = 0; i < N; i++) {
        const int words = i == 0 ? 1200 : i == 1 ? 200 : 5;
        size_t at = 0;
        for (int w = 0; w < words; w++)
            at += (size_t)snprintf(text[i] + at, sizeof text[i] - at, "%s%d", w ? " " : "", (w * 7 + i) % 97);
        p[i] = test_greedy(i == 2 ? 40 : 8);
        p[i].on_progress = count_progress;
        p[i].user_data = &pr[i];
    }
    const seer_context_params cp = {.n_ctx = 4096, .n_batch = 64};
    for (int i = 0; i < N && !rc; i++)
        if (!(rc = seer_context_create(m, &cp, &alone[i])))
            rc = seer_generate_text(alone[i], text[i], &p[i], &ra[i]);
    seer_batch *b = NULL;
    for (int i = 0; i < N && !rc; i++)
        rc = seer_context_create(m, &cp, &ctx[i]);
    rc = rc ? rc : seer_batch_create(m, N, &b);
    if (!ok(rc == SEER_OK, "%s: %d raw prompts generated alone, a batch of %d: %s", what, N, N, rc ? seer_last_error() : "ok"))
        goto done;
    memset(pr, 0, sizeof pr);
    /* the short one first, so that it decodes while the long ones are fed */
    rc = seer_batch_add_text(b, ctx[2], text[2], &p[2]);
    for (int s = 0; s < 3 && !rc; s++)
        rc = seer_batch_step(b);
    rc = rc ? rc : seer_batch_add_text(b, ctx[0], text[0], &p[0]);
    rc = rc ? rc : seer_batch_add_text(b, ctx[1], text[1], &p[1]);
    for (int s = 0; s < 200 && !rc && seer_batch_active(b); s++)
        rc = seer_batch_step(b);
    seer_context *c;
    seer_result r;
    int st, taken = 0;
    while (seer_batch_take(b, &c, &r, &st)) {
        for (int i = 0; i < N; i++)
            if (c == ctx[i] && !st)
                rb[i] = r, taken++;
    }
    ok(rc == SEER_OK && taken == N, "%s: the %d replies taken (%s)", what, taken, rc ? seer_last_error() : "ok");
    ok(pr[0].partial >= 2 && pr[1].partial >= 1 && pr[0].complete == 1 && pr[1].complete == 1,
       "%s: the long prompts fed over several steps (on_progress part-way %d and %d times, then once complete)", what,
       pr[0].partial, pr[1].partial);
    for (int i = 0; i < N; i++)
        ok(rb[i].text && same_result(&ra[i], &rb[i]),
           "%s: raw prompt %d fed in the steps == alone: %zu tokens, stop %d, %lld prompt tokens (alone %zu, %d, %lld)",
           what, i, rb[i].n_tokens, rb[i].stop, (long long)rb[i].prompt_tokens, ra[i].n_tokens, ra[i].stop,
           (long long)ra[i].prompt_tokens);
    /* cancelled in a step: the reply ends cut short; the decoding one goes on */
    for (int i = 0; i < N; i++)
        seer_context_reset(ctx[i]), seer_result_clear(&rb[i]);
    memset(pr, 0, sizeof pr);
    pr[0].cancel = true;
    rc = seer_batch_add_text(b, ctx[2], text[2], &p[2]);
    rc = rc ? rc : seer_batch_step(b);
    rc = rc ? rc : seer_batch_add_text(b, ctx[0], text[0], &p[0]);
    rc = rc ? rc : seer_batch_step(b);
    /* the other reply may end within these two steps too when a random model ends its turn at once
       (alone it gave ra[2].n_tokens): its result is set aside, and it must go on only when it did alone */
    int got = 0, st0 = -1;
    seer_result r0 = {0};
    while (!rc && seer_batch_take(b, &c, &r, &st)) {
        if (c == ctx[0] && !got)
            got = 1, r0 = r, st0 = st;
        else
            seer_result_clear(&r);
    }
    ok(got == 1 && st0 == SEER_OK && r0.stop == SEER_STOP_CANCELED && r0.prompt_cut && r0.prompt_tokens > 0 &&
           r0.prompt_tokens < ra[0].prompt_tokens && (ra[2].n_tokens <= 2 || seer_batch_active(b) == 1),
       "%s: a prompt cancelled by on_progress in a step ends cut short after %lld of %lld tokens, the other reply "
       "goes on (%zu tokens alone)", what, got ? (long long)r0.prompt_tokens : -1LL, (long long)ra[0].prompt_tokens,
       ra[2].n_tokens);
    seer_result_clear(&r0);
done:
    seer_batch_free(b);
    for (int i = 0; i < N; i++) {
        seer_result_clear(&ra[i]), seer_result_clear(&rb[i]);
        seer_context_free(alone[i]), seer_context_free(ctx[i]);
    }
}

static void check_errors(seer_model *m)
{
    seer_batch *b;
    seer_context *c1, *c2, *c3;
    seer_generate_params p = test_greedy(5);
    if (!ok(seer_batch_create(m, 2, &b) == SEER_OK && !new_chat(m, "hello", &c1) && !new_chat(m, "hi", &c2) &&
            !new_chat(m, "hey", &c3), "batch of 2 and three contexts"))
        return;
    seer_batch *bad;
    ok(seer_batch_create(m, 0, &bad) == SEER_EINVAL && seer_batch_create(m, SEER_BATCH_MAX + 1, &bad) == SEER_EINVAL,
       "a batch of 0 or of more than %d replies is refused: %s", SEER_BATCH_MAX, seer_last_error());
    ok(seer_batch_add_chat(b, c1, &p) == SEER_OK && seer_batch_active(b) == 1, "a reply added");
    ok(seer_batch_add_chat(b, c1, &p) == SEER_EINVAL && seer_batch_active(b) == 1,
       "the same context twice is refused: %s", seer_last_error());
    ok(seer_batch_add_chat(b, c2, &p) == SEER_OK, "a second reply added");
    ok(seer_batch_add_chat(b, c3, &p) == SEER_EINVAL && strstr(seer_last_error(), "take finished"),
       "a third in a batch of 2 is refused: %s", seer_last_error());
    seer_context *cx;
    seer_result r;
    int st;
    ok(seer_batch_take(b, &cx, &r, &st) == 0, "nothing to take before a reply ends");
    /* a prompt that does not fit: refused, nothing added, the batch goes on */
    seer_context *small;
    char longp[4096];
    memset(longp, 'a', sizeof longp - 1);
    for (size_t i = 0; i + 1 < sizeof longp; i += 4)
        longp[i] = ' ';
    longp[sizeof longp - 1] = '\0';
    seer_batch *b2;
    int rc = seer_context_create(m, &(seer_context_params){.n_ctx = 64, .n_batch = 16}, &small);
    rc = rc ? rc : seer_batch_create(m, 2, &b2);
    rc = rc ? rc : seer_chat_add(small, "user", longp);
    ok(rc == SEER_OK && seer_batch_add_chat(b2, small, &p) == SEER_EINVAL && strstr(seer_last_error(), "-c") &&
       seer_batch_active(b2) == 0, "a prompt too long for its context is refused, nothing added: %s", seer_last_error());
    /* a chat prompt is fed by the steps (nothing at add); one longer than a step's 512 prompt rows
       (no other reply decoding, a micro-batch of 512: a step carries whole micro-batches of a
       prompt, one a step), cancelled by on_progress, ends cut short in the first step */
    seer_generate_params pc = test_greedy(5);
    pc.on_progress = cancel_prompt;
    seer_context *mid = NULL;
    char words[4000] = "";
    for (int i = 0; i < 150; i++)
        strcat(words, i % 3 ? "river stone " : "cloud lamp ");
    rc = seer_context_create(m, &(seer_context_params){.n_ctx = 2048, .n_batch = 512}, &mid);
    rc = rc ? rc : seer_chat_add(mid, "user", words);
    rc = rc ? rc : seer_batch_add_chat(b2, mid, &pc);
    seer_snapshot *held = NULL;
    const int64_t past_added = !rc && !seer_context_save(mid, &held) ? seer_snapshot_tokens(held) : -1;
    seer_snapshot_free(held);
    int active = seer_batch_active(b2);
    const int64_t left_added = seer_batch_prompt_left(b2);
    rc = rc ? rc : seer_batch_step(b2);
    int got = seer_batch_take(b2, &cx, &r, &st);
    ok(rc == SEER_OK && past_added == 0 && active == 1 && got == 1 && cx == mid && st == SEER_OK &&
           r.stop == SEER_STOP_CANCELED && r.prompt_cut && r.prompt_tokens == 512 && left_added > 512 &&
           seer_batch_prompt_left(b2) == 0,
       "a chat prompt is left to the steps (%lld tokens fed when added, %lld left to feed), and cancelled by on_progress "
       "it ends cut short in the first step (stop %d, prompt_cut %d, %lld prompt tokens; %lld left)",
       (long long)past_added, (long long)left_added, r.stop, r.prompt_cut, (long long)r.prompt_tokens,
       (long long)seer_batch_prompt_left(b2));
    seer_context_free(mid);
    seer_result_clear(&r);
    int steps = 0;
    while (seer_batch_active(b) && steps++ < 20)
        seer_batch_step(b);
    int n_taken = 0;
    while (seer_batch_take(b, &cx, &r, &st) == 1) {
        n_taken += st == SEER_OK && r.n_tokens <= 5;
        seer_result_clear(&r);
    }
    ok(n_taken == 2, "both replies end within max_tokens and are taken once each (%d)", n_taken);
    /* freed with a reply still generating: it ends as cancelled (no leak under ASan) */
    seer_context_reset(c3);
    seer_chat_add(c3, "user", "again");
    ok(seer_batch_add_chat(b, c3, &p) == SEER_OK && seer_batch_step(b) == SEER_OK, "a reply left in the batch");
    seer_batch_free(b);
    seer_batch_free(b2);
    ok(seer_batch_size_default(m, NULL) >= 1 && seer_batch_size_default(m, NULL) <= SEER_BATCH_MAX,
       "default batch size %d for this device", seer_batch_size_default(m, NULL));
    seer_context_free(c1), seer_context_free(c2), seer_context_free(c3), seer_context_free(small);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    char dir[600], cmd[2048], path[700];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny-gqa --seed %llu >/dev/null",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)(seed % 1000000));
    if (!ok(system(cmd) == 0, "tiny model generated"))
        return done_testing();
    seer_set_log_level(SEER_LOG_ERROR);
    const char *files[2] = {"hf", "model-f16.gguf"};
    for (int f = 0; f < 2; f++) {
        seer_model_params mp = seer_model_params_default();
        mp.device = "cpu";
        mp.n_threads = 2;
        seer_model *m;
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        if (!ok(seer_model_load(path, &mp, &m) == SEER_OK, "%s loads: %s", files[f], seer_last_error()))
            continue;
        check_together(m, files[f]);
        check_prompts_in_steps(m, files[f]);
        if (f == 0)
            check_errors(m);
        seer_model_free(m);
    }
    return done_testing();
}
