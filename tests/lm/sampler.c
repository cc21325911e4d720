/* Tests lm/sampler.c against naive double-precision references on fresh random logits: greedy is the
   argmax, the padding mask (spec §2.7/§10.9), top-k = 1 equals greedy, seeded determinism, draws at
   temperature 1 match the softmax (chi-square and total-variation bounds stated below), top-p keeps
   exactly the minimal prefix whose mass is ≥ p, min-p's threshold is relative to the largest
   probability, penalties change exactly the tokens they should, errors and allocation failures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "lm/sampler.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

#define QWEN_VOCAB 248320 /* spec §1.1 vocab_size */
#define QWEN_VALID 248077 /* spec §6.1 tokenizer length */

static sampler *make(sampler_params p, int32_t n_vocab)
{
    sampler *s = NULL;
    if (sampler_create(&p, n_vocab, &s) != SEER_OK)
        diag("sampler_create: %s", seer_last_error());
    return s;
}

static float *rand_logits(size_t n, float scale)
{
    float *l = malloc(n * sizeof(float));
    test_fill_normal(l, n, scale);
    return l;
}

static int32_t ref_argmax(const float *l, int32_t n)
{
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (l[i] > l[best])
            best = i;
    return best;
}

/* ---- reference distribution: penalties already applied; top-k → top-p → min-p → temperature ---- */

static const float *cmp_logits;
static int cmp_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (cmp_logits[x] != cmp_logits[y])
        return cmp_logits[x] > cmp_logits[y] ? -1 : 1;
    return x < y ? -1 : 1;
}

/* Fills prob[0..n) in double and kept[0..n) (the surviving ids; may be NULL). Returns false when the
   top-p cut is within 1e-6 of a boundary, where float and double could legitimately disagree (the
   caller draws again). */
static bool ref_dist(const float *l, int32_t n, int32_t top_k, double top_p, double min_p, double temp, double *prob,
                     bool *kept)
{
    if (n <= 0)
        return false;
    int32_t *ord = malloc((size_t)n * sizeof *ord);
    for (int32_t i = 0; i < n; i++)
        ord[i] = i;
    cmp_logits = l;
    qsort(ord, (size_t)n, sizeof *ord, cmp_desc);
    int32_t k = top_k > 0 && top_k < n ? top_k : n;
    double lmax = l[ord[0]], z = 0;
    for (int32_t i = 0; i < k; i++)
        z += exp(l[ord[i]] - lmax);
    int32_t keep = k;
    bool clear = true;
    if (top_p < 1) {
        double cum = 0;
        for (int32_t i = 0; i < k; i++) {
            cum += exp(l[ord[i]] - lmax) / z;
            if (fabs(cum - top_p) < 1e-6)
                clear = false;
            if (cum >= top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    /* min-p: p_i / p_max = exp(l_i − lmax) ≥ min_p, i.e. l_i − lmax ≥ ln(min_p) */
    int32_t keep_m = 0;
    const double log_min_p = min_p > 0 ? log(min_p) : -INFINITY;
    while (keep_m < keep && (double)l[ord[keep_m]] - lmax >= log_min_p)
        keep_m++;
    for (int32_t i = 0; i < keep; i++)
        if (fabs((double)l[ord[i]] - lmax - log_min_p) < 1e-5)
            clear = false;
    keep = keep_m;
    memset(prob, 0, (size_t)n * sizeof *prob);
    if (kept)
        memset(kept, 0, (size_t)n * sizeof *kept);
    double zt = 0;
    for (int32_t i = 0; i < keep; i++) {
        zt += (prob[ord[i]] = exp((l[ord[i]] - lmax) / temp));
        if (kept)
            kept[ord[i]] = true;
    }
    for (int32_t i = 0; i < keep; i++)
        prob[ord[i]] /= zt;
    free(ord);
    return clear;
}

/* Compares the sampler's distribution with ref_dist: same support, probabilities within rel L2 1e-5
   (float probabilities of a double reference). */
static bool check_dist(sampler_params p, const float *l, int32_t n_vocab, int32_t n_valid, const char *name)
{
    sampler *s = make(p, n_vocab);
    double *ref = malloc((size_t)n_valid * sizeof *ref);
    bool *kept = malloc((size_t)n_valid * sizeof *kept), *got_kept = calloc((size_t)n_valid, sizeof *got_kept);
    bool clear = ref_dist(l, n_valid, p.top_k, p.top_p, p.min_p, p.temperature, ref, kept);
    const int32_t *ids;
    const float *probs;
    size_t n = 0;
    int rc = s ? sampler_distribution(s, l, &ids, &probs, &n) : SEER_EINVAL;
    float *got = calloc((size_t)n_valid, sizeof *got);
    size_t support = 0;
    bool in_range = true;
    for (size_t i = 0; rc == SEER_OK && i < n; i++) {
        if (ids[i] < 0 || ids[i] >= n_valid) {
            in_range = false;
            continue;
        }
        got[ids[i]] = probs[i];
        got_kept[ids[i]] = true;
    }
    bool same_support = true;
    for (int32_t i = 0; i < n_valid; i++) {
        support += kept[i];
        same_support &= kept[i] == got_kept[i];
    }
    double err = rel_l2_d(got, ref, (size_t)n_valid);
    bool pass = rc == SEER_OK && in_range && same_support && n == support && err <= 1e-5;
    if (clear)
        ok(pass, "%s: %zu kept (ref %zu), rel L2 %.2e <= 1e-5", name, n, support, err);
    free(got);
    free(got_kept);
    free(kept);
    free(ref);
    sampler_free(s);
    return clear;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_params(void)
{
    struct {
        const char *field;
        sampler_params p;
        int32_t n_vocab;
    } bad[] = {
        { "temperature", { .temperature = -1, .top_p = 1, .repetition_penalty = 1 }, 10 },
        { "temperature", { .temperature = NAN, .top_p = 1, .repetition_penalty = 1 }, 10 },
        { "top_k", { .temperature = 1, .top_k = -2, .top_p = 1, .repetition_penalty = 1 }, 10 },
        { "top_p", { .temperature = 1, .top_p = 0, .repetition_penalty = 1 }, 10 },
        { "top_p", { .temperature = 1, .top_p = 1.5f, .repetition_penalty = 1 }, 10 },
        { "min_p", { .temperature = 1, .top_p = 1, .min_p = -0.1f, .repetition_penalty = 1 }, 10 },
        { "repetition_penalty", { .temperature = 1, .top_p = 1, .repetition_penalty = 0 }, 10 },
        { "presence", { .temperature = 1, .top_p = 1, .repetition_penalty = 1, .presence_penalty = INFINITY }, 10 },
        { "penalty_window", { .temperature = 1, .top_p = 1, .repetition_penalty = 1, .penalty_window = -1 }, 10 },
        { "n_vocab_valid", { .temperature = 1, .top_p = 1, .repetition_penalty = 1, .n_vocab_valid = 11 }, 10 },
        { "n_vocab", { .temperature = 1, .top_p = 1, .repetition_penalty = 1 }, 0 },
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        sampler *s = (sampler *)&bad[i]; /* any non-NULL value: must stay untouched */
        int rc = sampler_create(&bad[i].p, bad[i].n_vocab, &s);
        ok(rc == SEER_EINVAL && s == (sampler *)&bad[i] && strstr(seer_last_error(), bad[i].field),
           "rejects bad %s: %s", bad[i].field, seer_last_error());
    }
    sampler_params d = sampler_params_default();
    ok(d.temperature == 1 && d.top_k == 0 && d.top_p == 1 && d.min_p == 0 && d.repetition_penalty == 1 &&
           d.presence_penalty == 0 && d.frequency_penalty == 0 && d.n_vocab_valid == 0,
       "defaults: plain sampling at temperature 1");
    sampler_free(NULL);
}

static void test_greedy_and_mask(void)
{
    sampler_params p = sampler_params_default();
    p.temperature = 0;
    const int32_t sizes[] = { 1, 7, 1000, QWEN_VOCAB };
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        int32_t n = sizes[k];
        float *l = rand_logits((size_t)n, 3.0f);
        sampler *s = make(p, n);
        int32_t id = -1;
        ok(s && sampler_sample(s, l, &id) == SEER_OK && id == ref_argmax(l, n), "greedy is the argmax (n = %d)", n);
        sampler_free(s);
        free(l);
    }
    float tie[6] = { 0.5f, 2.0f, -1.0f, 2.0f, 1.0f, 2.0f };
    sampler *s = make(p, 6);
    int32_t id = -1;
    ok(s && sampler_sample(s, tie, &id) == SEER_OK && id == 1, "greedy tie goes to the lowest id");
    sampler_free(s);

    /* Padding rows hold the largest logits (and even NaN): never picked, never checked. */
    const int32_t n_vocab = 1000, n_valid = 937;
    float *l = rand_logits((size_t)n_vocab, 2.0f);
    for (int32_t i = n_valid; i < n_vocab; i++)
        l[i] = (i % 2) ? 100.0f : NAN;
    p.n_vocab_valid = n_valid;
    s = make(p, n_vocab);
    ok(s && sampler_sample(s, l, &id) == SEER_OK && id == ref_argmax(l, n_valid), "greedy ignores padding rows");
    sampler_free(s);
    p.temperature = 1.5f;
    p.seed = test_rand_u64();
    s = make(p, n_vocab);
    int bad = 0, rc = SEER_OK;
    for (int t = 0; t < 3000 && rc == SEER_OK; t++) {
        rc = sampler_sample(s, l, &id);
        bad += id >= n_valid;
    }
    ok(rc == SEER_OK && bad == 0, "3000 draws at temperature 1.5 never pick a padding id");
    sampler_free(s);
    free(l);

    /* The real sizes: 248320 logits, 248077 valid (spec §1.1, §6.1). */
    l = rand_logits(QWEN_VOCAB, 2.0f);
    l[QWEN_VALID + 5] = 1e6f;
    p.temperature = 0;
    p.n_vocab_valid = QWEN_VALID;
    s = make(p, QWEN_VOCAB);
    ok(s && sampler_sample(s, l, &id) == SEER_OK && id == ref_argmax(l, QWEN_VALID) && id < QWEN_VALID,
       "Qwen3.5 sizes: padding row 248082 is masked");
    sampler_free(s);
    free(l);
}

static void test_top_k1_and_determinism(void)
{
    sampler_params p = sampler_params_default();
    p.top_k = 1;
    p.temperature = 5.0f;
    p.seed = test_rand_u64();
    sampler *s = make(p, 517);
    int same = 0;
    for (int t = 0; t < 200; t++) {
        float *l = rand_logits(517, 1.0f);
        int32_t id = -1;
        same += sampler_sample(s, l, &id) == SEER_OK && id == ref_argmax(l, 517);
        free(l);
    }
    ok(same == 200, "top-k = 1 at temperature 5 equals greedy in 200/200 cases (%d)", same);
    sampler_free(s);

    /* Same seed, same calls → same tokens; reset replays; another seed differs. A flat distribution
       over 1000 ids makes 300 equal draws from different seeds impossible in practice (p ~ 1e-900). */
    const int T = 300, n = 1000;
    float *l = rand_logits((size_t)n, 0.1f);
    p = sampler_params_default();
    p.seed = test_rand_u64();
    sampler *a = make(p, n), *b = make(p, n);
    p.seed ^= 0x5DEECE66Dull;
    sampler *c = make(p, n);
    int32_t ta[300], tb[300], tc[300], tr[300];
    for (int t = 0; t < T; t++)
        if (sampler_sample(a, l, &ta[t]) || sampler_sample(b, l, &tb[t]) || sampler_sample(c, l, &tc[t]))
            break;
    sampler_reset(a);
    for (int t = 0; t < T; t++)
        sampler_sample(a, l, &tr[t]);
    ok(!memcmp(ta, tb, sizeof ta), "two samplers with the same seed give the same 300 tokens");
    ok(!memcmp(ta, tr, sizeof ta), "sampler_reset replays the same tokens");
    ok(memcmp(ta, tc, sizeof ta) != 0, "a different seed gives different tokens");
    sampler_free(a);
    sampler_free(b);
    sampler_free(c);
    free(l);
}

/* Upper α quantile of chi-square with k degrees of freedom (Wilson–Hilferty; z = normal quantile). */
static double chi2_quantile(int k, double z)
{
    double h = 2.0 / (9.0 * k);
    return k * pow(1 - h + z * sqrt(h), 3);
}

/* N draws against the reference distribution. Bounds, each with false-alarm probability ≤ 1e-6 so
   a fresh seed every run does not make the test flaky:
   - Pearson chi-square with k−1 dof below its 1 − 1e-6 quantile (z = 4.753); every expected count
     here is ≥ 50 (checked), well inside the chi-square approximation's usual ≥ 5 rule;
   - total variation ≤ λ/2 with λ = sqrt(2 (k ln 2 + ln 1e6) / N), from the Bretagnolle–Huber–Carol
     inequality P(‖f − p‖₁ ≥ λ) ≤ 2^k exp(−N λ² / 2). */
static void draw_test(sampler_params p, const float *l, int32_t n_vocab, int32_t n_valid, int N, const char *name)
{
    double *ref = malloc((size_t)n_valid * sizeof *ref);
    ref_dist(l, n_valid, p.top_k, p.top_p, p.min_p, p.temperature, ref, NULL);
    sampler *s = make(p, n_vocab);
    long *cnt = calloc((size_t)n_valid, sizeof *cnt);
    int out_of_support = 0;
    for (int t = 0; t < N; t++) {
        int32_t id = -1;
        if (sampler_sample(s, l, &id) != SEER_OK || id < 0 || id >= n_valid || ref[id] == 0) {
            out_of_support++;
            continue;
        }
        cnt[id]++;
    }
    double chi2 = 0, l1 = 0, min_expected = 1e300;
    int k = 0;
    for (int32_t i = 0; i < n_valid; i++) {
        if (ref[i] == 0)
            continue;
        k++;
        double e = ref[i] * N;
        min_expected = MIN(min_expected, e);
        chi2 += (cnt[i] - e) * (cnt[i] - e) / e;
        l1 += fabs(cnt[i] / (double)N - ref[i]);
    }
    double q = chi2_quantile(k - 1, 4.753), lambda = sqrt(2 * (k * log(2.0) + log(1e6)) / N);
    ok(out_of_support == 0 && min_expected >= 50 && chi2 <= q && l1 / 2 <= lambda / 2,
       "%s: %d draws over %d tokens: chi2 %.1f <= %.1f, TV %.4f <= %.4f", name, N, k, chi2, q, l1 / 2, lambda / 2);
    free(cnt);
    free(ref);
    sampler_free(s);
}

static void test_statistics(void)
{
    /* 33 valid ids (+4 padding rows), logits in [-1, 1): every probability is ≥ e^-2/33 ≈ 0.0041, so
       with 20000 draws every expected count is ≥ 82. */
    const int32_t n_vocab = 37, n_valid = 33;
    float l[37];
    test_fill_uniform(l, 37, -1.0f, 1.0f);
    for (int32_t i = n_valid; i < n_vocab; i++)
        l[i] = 50.0f;
    sampler_params p = sampler_params_default();
    p.n_vocab_valid = n_valid;
    p.seed = test_rand_u64();
    draw_test(p, l, n_vocab, n_valid, 20000, "temperature 1 matches softmax");
    /* Temperature and top-k together: 12 survivors at T = 0.6, logits spread over [-0.6, 0.6). */
    float l2[101];
    test_fill_uniform(l2, 101, -0.6f, 0.6f);
    p = sampler_params_default();
    p.temperature = 0.6f;
    p.top_k = 12;
    p.seed = test_rand_u64();
    draw_test(p, l2, 101, 101, 20000, "top-k 12 at temperature 0.6");
}

static void test_filters(void)
{
    sampler_params p;
    /* top-p without top-k (the heap path), several awkward sizes and p values. */
    const int32_t sizes[] = { 1, 2, 61, 5003 };
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        for (int rep = 0; rep < 3; rep++) {
            int32_t n = sizes[k];
            float *l = rand_logits((size_t)n, 1.0f);
            p = sampler_params_default();
            p.top_p = test_randf(0.3f, 0.97f);
            p.temperature = test_randf(0.3f, 2.0f);
            char name[96];
            snprintf(name, sizeof name, "top-p %.3f (n = %d, T = %.2f) keeps the minimal prefix", (double)p.top_p, n,
                     (double)p.temperature);
            if (!check_dist(p, l, n, n, name))
                rep--; /* boundary within 1e-6: draw new logits */
            free(l);
        }
    }
    /* top-k then top-p on the renormalised top-k set, then min-p. */
    for (int rep = 0; rep < 4; rep++) {
        float *l = rand_logits(3001, 1.0f);
        p = sampler_params_default();
        p.top_k = 1 + (int32_t)(test_rand_u64() % 400);
        p.top_p = test_randf(0.5f, 0.99f);
        p.min_p = rep % 2 ? test_randf(0.01f, 0.3f) : 0.0f;
        p.temperature = test_randf(0.2f, 1.5f);
        char name[128];
        snprintf(name, sizeof name, "top-k %d + top-p %.3f + min-p %.3f at T %.2f", (int)p.top_k, (double)p.top_p,
                 (double)p.min_p, (double)p.temperature);
        if (!check_dist(p, l, 3001, 3001, name))
            rep--;
        free(l);
    }
    /* min-p alone (linear path) and with top-p (heap path): p_i ≥ min_p · p_max, at any temperature. */
    for (int rep = 0; rep < 2; rep++) {
        float *l = rand_logits(4099, 1.5f);
        p = sampler_params_default();
        p.min_p = test_randf(0.02f, 0.5f);
        p.top_p = rep ? 0.9f : 1.0f;
        p.temperature = 0.7f;
        char name[96];
        snprintf(name, sizeof name, "min-p %.3f%s keeps p >= min_p * p_max", (double)p.min_p, rep ? " + top-p 0.9" : "");
        if (!check_dist(p, l, 4099, 4099, name))
            rep--;
        free(l);
    }
    /* Ties: 10 equal logits; top-p 0.45 needs 5 of mass 0.1 each, or after top-k 8 (renormalised)
       4 of mass 0.125. Lower ids win ties, on both the quickselect and the top-k path. */
    for (int with_k = 0; with_k < 2; with_k++) {
        float flat[10] = { 0 };
        test_fill_uniform(flat, 1, 0.5f, 1.5f);
        for (int i = 1; i < 10; i++)
            flat[i] = flat[0];
        p = sampler_params_default();
        p.top_p = 0.45f;
        p.top_k = with_k ? 8 : 0;
        sampler *s = make(p, 10);
        const int32_t *ids;
        const float *probs;
        size_t n = 0;
        int rc = sampler_distribution(s, flat, &ids, &probs, &n);
        int mask = 0;
        for (size_t i = 0; rc == SEER_OK && i < n; i++)
            mask |= 1 << ids[i];
        size_t want = with_k ? 4 : 5;
        ok(rc == SEER_OK && n == want && mask == (1 << want) - 1 && fabsf(probs[0] - 1.0f / (float)want) < 1e-6f,
           "ties go to the lowest ids (%s): kept %zu, mask 0x%x", with_k ? "top-k 8" : "no top-k", n, mask);
        sampler_free(s);
    }
    /* Qwen3.5 sizes with the card's style of settings: 248320 logits, 248077 valid. */
    float *l = rand_logits(QWEN_VOCAB, 3.0f);
    for (int32_t i = QWEN_VALID; i < QWEN_VOCAB; i++)
        l[i] = 30.0f;
    p = sampler_params_default();
    p.n_vocab_valid = QWEN_VALID;
    p.top_k = 20;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.temperature = 0.7f;
    check_dist(p, l, QWEN_VOCAB, QWEN_VALID, "248320 logits: top-k 20, top-p 0.95, min-p 0.05, T 0.7");
    p.top_k = 0;
    p.min_p = 0;
    p.top_p = 0.5f;
    check_dist(p, l, QWEN_VOCAB, QWEN_VALID, "248320 logits: top-p 0.5 without top-k");
    p.top_k = 20;
    p.top_p = 0.95f;
    sampler *s = make(p, QWEN_VOCAB);
    double t0 = seer_time_now();
    int32_t id;
    for (int t = 0; t < 100; t++)
        sampler_sample(s, l, &id);
    diag("248320-entry vocabulary, top-k 20 + top-p: %.3f ms per token", (seer_time_now() - t0) * 10.0);
    sampler_free(s);
    free(l);
}

static void test_penalties(void)
{
    const int32_t n = 501;
    float *l = rand_logits((size_t)n, 2.0f), *got = malloc(n * sizeof(float));
    l[7] = 0.0f; /* zero stays zero under the repetition penalty */
    sampler_params p = sampler_params_default();
    p.repetition_penalty = test_randf(1.1f, 2.0f);
    p.presence_penalty = test_randf(0.5f, 2.0f);
    p.frequency_penalty = test_randf(0.1f, 0.5f);
    sampler *s = make(p, n);
    const int32_t prompt[] = { 3, 7, 7, 100, 250, 500 };
    const int32_t gen[] = { 100, 42, 42, 42, 0 };
    int rc = sampler_accept_prompt(s, prompt, ARRAY_LEN(prompt));
    for (size_t i = 0; i < ARRAY_LEN(gen); i++)
        rc |= sampler_accept(s, gen[i]);
    memcpy(got, l, n * sizeof(float));
    sampler_penalize(s, got);
    /* Reference: repetition over prompt ∪ generated; presence/frequency over generated counts. */
    int wrong = 0, changed = 0;
    for (int32_t i = 0; i < n; i++) {
        bool seen = false;
        int gc = 0;
        for (size_t j = 0; j < ARRAY_LEN(prompt); j++)
            seen |= prompt[j] == i;
        for (size_t j = 0; j < ARRAY_LEN(gen); j++)
            gc += gen[j] == i;
        seen |= gc > 0;
        double want = l[i];
        if (seen)
            want = want < 0 ? want * p.repetition_penalty : want / p.repetition_penalty;
        if (gc)
            want -= p.presence_penalty + p.frequency_penalty * gc;
        changed += got[i] != l[i];
        if (seen ? fabs(got[i] - want) > 1e-5 * fmax(1.0, fabs(want)) : got[i] != l[i])
            wrong++;
    }
    ok(rc == SEER_OK && wrong == 0 && changed == 7 - (l[7] == 0.0f),
       "penalties change exactly the 7 seen tokens (less the zero logit), HF/OpenAI semantics (%d wrong, %d changed)",
       wrong, changed);
    /* A rejected prompt leaves the history alone. */
    const int32_t bad_prompt[] = { 1, 2, 501 };
    float *again = malloc(n * sizeof(float));
    memcpy(again, l, n * sizeof(float));
    rc = sampler_accept_prompt(s, bad_prompt, 3);
    sampler_penalize(s, again);
    ok(rc == SEER_EINVAL && !memcmp(again, got, n * sizeof(float)), "bad prompt id rejected, nothing recorded: %s",
       seer_last_error());
    ok(sampler_accept(s, -1) == SEER_EINVAL && sampler_accept(s, n) == SEER_EINVAL, "bad generated id rejected");
    sampler_free(s);

    /* Window of 4: only the last 4 accepted tokens count. */
    p.penalty_window = 4;
    s = make(p, n);
    const int32_t seq[] = { 10, 11, 12, 10, 13, 14 }; /* window keeps 12, 10, 13, 14 */
    for (size_t i = 0; i < ARRAY_LEN(seq); i++)
        sampler_accept(s, seq[i]);
    memcpy(got, l, n * sizeof(float));
    sampler_penalize(s, got);
    double w10 = l[10] < 0 ? l[10] * p.repetition_penalty : l[10] / p.repetition_penalty;
    w10 -= p.presence_penalty + p.frequency_penalty * 1; /* the first 10 left the window */
    ok(got[11] == l[11] && fabs(got[10] - w10) <= 1e-5 * fmax(1, fabs(w10)) && got[12] != l[12] && got[14] != l[14],
       "penalty window 4: token 11 left it, token 10 counts once");
    sampler_free(s);

    /* A presence penalty moves greedy off a token it would otherwise repeat. */
    p = sampler_params_default();
    p.temperature = 0;
    p.presence_penalty = 1000;
    s = make(p, n);
    int32_t first = ref_argmax(l, n), id = -1;
    sampler_accept(s, first);
    ok(sampler_sample(s, l, &id) == SEER_OK && id != first, "presence penalty steers greedy away from token %d",
       (int)first);
    sampler_reset(s);
    ok(sampler_sample(s, l, &id) == SEER_OK && id == first, "sampler_reset forgets the history");
    sampler_free(s);
    free(again);
    free(got);
    free(l);
}

static void test_errors(void)
{
    sampler_params p = sampler_params_default();
    p.seed = test_rand_u64();
    sampler *s = make(p, 13);
    float l[13];
    test_fill_normal(l, 13, 1.0f);
    int32_t id = 77;
    l[5] = NAN;
    ok(sampler_sample(s, l, &id) == SEER_EINVAL && id == 77 && strstr(seer_last_error(), "NaN"),
       "NaN logit rejected: %s", seer_last_error());
    l[5] = INFINITY;
    ok(sampler_sample(s, l, &id) == SEER_EINVAL && strstr(seer_last_error(), "+inf"), "+inf logit rejected");
    for (int i = 0; i < 13; i++)
        l[i] = -INFINITY;
    ok(sampler_sample(s, l, &id) == SEER_EINVAL && strstr(seer_last_error(), "finite"), "all -inf rejected");
    l[4] = 0.0f;
    l[9] = 0.0f;
    int bad = 0;
    for (int t = 0; t < 200; t++)
        bad += sampler_sample(s, l, &id) != SEER_OK || (id != 4 && id != 9);
    ok(bad == 0, "-inf logits are never sampled");
    sampler_free(s);

    int fails = 0, others = 0;
    p.repetition_penalty = 1.3f;
    p.penalty_window = 8;
    for (long k = 1; k < 32; k++) {
        seer_alloc_fail_after(k);
        s = NULL;
        int rc = sampler_create(&p, 1000, &s);
        seer_alloc_fail_after(0);
        if (rc == SEER_OK) {
            sampler_free(s);
            break;
        }
        if (rc == SEER_ENOMEM && s == NULL)
            fails++;
        else
            others++;
    }
    ok(fails >= 8 && others == 0, "every allocation in sampler_create can fail cleanly (%d, %d wrong)", fails, others);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    test_params();
    test_greedy_and_mask();
    test_top_k1_and_determinism();
    test_statistics();
    test_filters();
    test_penalties();
    test_errors();
    return done_testing();
}
