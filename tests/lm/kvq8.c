/* Tests the q8_0 KV cache (issue #13 item 3: qwen35_state_create_kv with DT_Q8_0, op_cpy to q8_0
   and op_attention reading q8_0 K/V) on a tiny random model of the real architecture
   (lm/randmodel.h: head dim 256 as every Qwen3.5 size, GQA 2:1, every 2nd layer attention), fresh
   seed each run, f32 weights on the exact CPU path so the cache is the only rounding:
     - a 40-token prompt (micro-batches of 16, so the cache is written in pieces) and 32 decode
       steps with an f32 cache give the reference; the same tokens fed through a q8_0 cache give
       logits within TOL_Q8 of it at every step and the same greedy tokens, a difference excused
       only at a near tie (the f32 run's top-2 probabilities within TIE, the rule of
       tests/lm/oracle.c, or its two tokens' logits closer than twice the largest move of any logit
       at that step: the cache's rounding, bounded by TOL_Q8, can swap them);
     - the memory plan (qwen35_state_bytes_kv) and the cache tensors count 34 bytes per 32 values;
     - a head dim that is not a whole number of 32-value blocks, and cache types other than
       f32/f16/q8_0, are refused with SEER_EUNSUPPORTED naming the reason;
     - Vulkan (lavapipe) when a device is present: the q8_0 run there vs the CPU's (TOL_VK says
       why 5e-4 and not 1e-4), greedy tokens equal up to a near tie. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/device.h"
#include "core/cpu/cpu.h"
#include "core/util.h"
#include "lm/qwen35.h"
#include "lm/randmodel.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

#define N_PROMPT 40
#define N_STEPS 32
#define N_UBATCH 16
/* q8_0 vs f32 cache, logits relative L2 per step. Each cached value moves by up to half a step
   (amax/254 of its block, ~0.4 % of the block's largest value); through the two attention layers
   the logits moved by at most 2.4e-3 in 70 runs (typically 1.5e-3; an f16 cache: ~6e-5), so 1e-2
   leaves room for unlucky seeds and still fails a wrong scale or block order (those move the
   logits by 1e-1 and more). */
#define TOL_Q8 1e-2
/* A different greedy token is excused where the f32 run's two best tokens are this close in
   probability (tests/lm/oracle.c's near tie for f32 paths). */
#define TIE 2e-3
/* Vulkan vs CPU, both with a q8_0 cache. With f32 caches the two agree to ~2e-6 here, and fed the
   same bytes their q8_0 ops agree to ~1e-7 (tests/ops: cpy_q8_0 bit for bit, attention); but K and
   V come out of each backend's projections ~1e-6 apart, and where a value sits that close to a
   rounding boundary the two caches hold neighbouring q: a whole step (~0.8 % of its block's
   largest value) on a few of the ~150,000 cached values. That put the logits 2e-5 .. 1.4e-4
   apart in 70 runs, so the spec's 1e-4 for f32 paths cannot hold here; 5e-4 does, with a margin,
   and a shader reading a value or a scale from the wrong byte fails it by far (tried: ~3e-1). */
#define TOL_VK 5e-4

static const struct randmodel_shape shape = {
    .n_layer = 4, .n_embd = 256, .n_ff = 512, .n_head = 4, .n_head_kv = 2, .head_dim = 256,
    .ssm_n_k_heads = 2, .ssm_n_v_heads = 4, .ssm_d_state = 64, .ssm_conv_kernel = 4,
    .n_vocab = 384, .n_bpe_tokens = 300, .full_attention_interval = 2, .n_rot = 64,
    .sections = {11, 11, 10}, .tie = true,
};

static int32_t argmax(const float *v, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return (int32_t)best;
}

/* Prompt, then N_STEPS tokens fed one at a time: tok[s] (or, when `greedy`, the argmax of the
   previous logits, written to tok[s]). lg holds N_STEPS + 1 rows: the prompt's last, then each
   step's. */
static int trajectory(const qwen35_model *m, enum dtype kv, const int32_t *prompt, int32_t *tok, bool greedy,
                      float *lg)
{
    const int64_t V = m->cfg.n_vocab;
    qwen35_state *st = NULL;
    int rc = qwen35_state_create_kv(m, N_PROMPT + N_STEPS + 1, N_UBATCH, kv, &st);
    rc = rc ? rc : qwen35_eval(m, st, prompt, N_PROMPT, QWEN35_LOGITS_LAST, lg, true);
    for (int s = 0; s < N_STEPS && rc == SEER_OK; s++) {
        const float *prev = lg + (size_t)s * (size_t)V;
        if (greedy)
            tok[s] = argmax(prev, V);
        rc = qwen35_eval(m, st, &tok[s], 1, QWEN35_LOGITS_LAST, lg + (size_t)(s + 1) * (size_t)V, false);
    }
    qwen35_state_free(st);
    return rc;
}

/* got vs want row by row: worst relative L2, and greedy tokens that differ outside a near tie. */
static void compare(const float *got, const float *want, int64_t V, double *worst, int *mismatch, int *ties)
{
    *worst = 0, *mismatch = 0, *ties = 0;
    for (int s = 0; s <= N_STEPS; s++) {
        const float *g = got + (size_t)s * (size_t)V, *w = want + (size_t)s * (size_t)V;
        *worst = MAX(*worst, rel_l2(g, w, (size_t)V));
        const int32_t ig = argmax(g, V), iw = argmax(w, V);
        if (ig != iw) {
            double p1, p2, moved = 0, *pw = malloc(sizeof(double) * (size_t)V);
            softmax_d(w, pw, V);
            top2_d(pw, V, &p1, &p2);
            free(pw);
            for (int64_t i = 0; i < V; i++)
                moved = MAX(moved, fabs((double)g[i] - (double)w[i]));
            const double gap = (double)w[iw] - (double)w[ig]; /* the f32 run's logits of the two picks */
            if (p1 - p2 <= TIE || gap <= 2 * moved)
                ++*ties;
            else
                ++*mismatch, diag("step %d: greedy %d vs %d, top-2 gap %.2e > %.0e, logit gap %.2e > 2 x %.2e moved",
                                  s, ig, iw, p1 - p2, TIE, gap, moved);
        }
    }
}

static qwen35_model *load(backend *be, const struct randmodel_shape *s, const char *name, uint64_t seed)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), name);
    const struct randmodel_params p = {.wtype = DT_F32, .seed = seed, .n_threads = 2};
    qwen35_model *m = NULL;
    int rc = randmodel_write(path, s, &p);
    rc = rc ? rc : qwen35_load(path, be, &m);
    ok(rc == SEER_OK, "%s loads on %s %s", name, backend_name(be), rc ? seer_last_error() : "");
    return m;
}

/* 34 bytes per 32 values in the plan and in the tensors the state really holds. */
static void check_bytes(const qwen35_model *m)
{
    const struct qwen35_config *c = &m->cfg;
    const uint64_t n_attn = (uint64_t)qwen35_n_attn_layers(c);
    const uint64_t want = n_attn * 2 * (uint64_t)c->n_head_kv * (uint64_t)(c->head_dim / 32 * 34) * 1024;
    struct qwen35_state_bytes b8, b32;
    qwen35_state_bytes_kv(c, DT_Q8_0, N_UBATCH, m->be->alignment, &b8);
    qwen35_state_bytes_kv(c, DT_F32, N_UBATCH, m->be->alignment, &b32);
    ok(b8.kv_per_1k == want && b32.kv_per_1k * 34 == want * 128,
       "plan: q8_0 KV %llu bytes per 1K tokens = 34/128 of f32's %llu", (unsigned long long)b8.kv_per_1k,
       (unsigned long long)b32.kv_per_1k);
    qwen35_state *st = NULL;
    int rc = qwen35_state_create_kv(m, 1000, N_UBATCH, DT_Q8_0, &st);
    uint64_t held = 0;
    bool q8 = true;
    for (int64_t il = 0; rc == SEER_OK && il < c->n_layer; il++)
        if (st->k_cache[il].ne[0]) { /* attention layers only */
            held += tensor_nbytes(&st->k_cache[il]) + tensor_nbytes(&st->v_cache[il]);
            q8 &= st->k_cache[il].type == DT_Q8_0 && st->v_cache[il].type == DT_Q8_0;
        }
    ok(rc == SEER_OK && held == want * 1000 / 1024 && q8,
       "a 1000-token q8_0 state holds %llu cache bytes (want %llu) %s", (unsigned long long)held,
       (unsigned long long)(want * 1000 / 1024), rc ? seer_last_error() : "");
    qwen35_state_free(st);
}

static void check_refusals(backend *cpu, const qwen35_model *m, uint64_t seed)
{
    qwen35_state *st = NULL;
    int rc = qwen35_state_create_kv(m, 64, N_UBATCH, DT_Q4_0, &st);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "q8_0") && !st,
       "a q4_0 cache is refused, naming the supported types: %s", seer_last_error());
    /* head dim 48: one and a half blocks */
    struct randmodel_shape odd = shape;
    odd.head_dim = 48, odd.n_rot = 16, odd.sections[0] = 3, odd.sections[1] = 3, odd.sections[2] = 2;
    qwen35_model *mo = load(cpu, &odd, "kvq8-hd48.gguf", seed);
    if (!mo)
        return;
    rc = qwen35_state_create_kv(mo, 64, N_UBATCH, DT_Q8_0, &st);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "head dim multiple of 32") && !st,
       "head dim 48 with a q8_0 cache is refused: %s", seer_last_error());
    rc = qwen35_state_create_kv(mo, 64, N_UBATCH, DT_F16, &st);
    ok(rc == SEER_OK, "head dim 48 with an f16 cache is fine %s", rc ? seer_last_error() : "");
    qwen35_state_free(st);
    qwen35_free(mo);
}

int main(void)
{
    plan_no_plan();
    const uint64_t seed = test_seed();
    backend *cpu = NULL;
    if (!ok(backend_cpu_create(2, &cpu) == SEER_OK, "cpu backend"))
        return done_testing();
    qwen35_model *m = load(cpu, &shape, "kvq8.gguf", seed);
    if (!m) {
        backend_free(cpu);
        return done_testing();
    }
    const int64_t V = m->cfg.n_vocab;
    const size_t rows = (size_t)(N_STEPS + 1) * (size_t)V;
    float *ref = malloc(rows * sizeof(float)), *q8 = malloc(rows * sizeof(float)), *f16 = malloc(rows * sizeof(float));
    int32_t prompt[N_PROMPT], tok[N_STEPS];
    for (int i = 0; i < N_PROMPT; i++)
        prompt[i] = (int32_t)(test_rand_u64() % (uint64_t)V);

    int rc = trajectory(m, DT_F32, prompt, tok, true, ref);
    rc = rc ? rc : trajectory(m, DT_Q8_0, prompt, tok, false, q8);
    rc = rc ? rc : trajectory(m, DT_F16, prompt, tok, false, f16);
    if (ok(rc == SEER_OK, "cpu: %d-token prompt and %d steps with f32, q8_0 and f16 caches %s", N_PROMPT, N_STEPS,
           rc ? seer_last_error() : "")) {
        double worst, worst16;
        int mismatch, ties, m16, t16;
        compare(f16, ref, V, &worst16, &m16, &t16);
        diag("f16 cache vs f32 cache: worst logits rel L2 %.2e (for scale)", worst16);
        compare(q8, ref, V, &worst, &mismatch, &ties);
        ok(worst <= TOL_Q8, "cpu: q8_0 cache vs f32 cache over %d steps: worst logits rel L2 %.2e <= %.0e",
           N_STEPS + 1, worst, TOL_Q8);
        ok(mismatch == 0, "cpu: q8_0 greedy tokens = f32's (%d differ outside a near tie, %d at one)", mismatch,
           ties);
        ok(worst > 0, "cpu: the q8_0 cache does round (logits differ from f32's by %.2e)", worst);
    }
    check_bytes(m);
    check_refusals(cpu, m, seed);
    qwen35_free(m);

    backend *vk = NULL;
    rc = backend_open("vulkan", 0, &vk);
    const char *req = getenv("SEER_REQUIRE_VULKAN");
    if (rc != SEER_OK && !(req && !strcmp(req, "1"))) {
        char why[600];
        snprintf(why, sizeof why, "no usable Vulkan device: %s", seer_last_error());
        skip(why, "vulkan: q8_0 cache vs the CPU's");
    } else if (ok(rc == SEER_OK, "vulkan backend %s", rc ? seer_last_error() : backend_name(vk)) &&
               (m = load(vk, &shape, "kvq8.gguf", seed))) {
        float *vq = malloc(rows * sizeof(float)), *vf = malloc(rows * sizeof(float));
        rc = trajectory(m, DT_Q8_0, prompt, tok, false, vq);
        rc = rc ? rc : trajectory(m, DT_F32, prompt, tok, false, vf);
        double worst = INFINITY, worst32 = INFINITY;
        int mismatch = 0, ties = 0, m32, t32;
        if (rc == SEER_OK) {
            compare(vf, ref, V, &worst32, &m32, &t32);
            diag("vulkan vs cpu with f32 caches: worst logits rel L2 %.2e (for scale)", worst32);
            compare(vq, q8, V, &worst, &mismatch, &ties);
        }
        ok(rc == SEER_OK && worst <= TOL_VK && mismatch == 0,
           "vulkan q8_0 cache vs cpu q8_0 cache: worst logits rel L2 %.2e <= %.0e, greedy tokens equal (%d at a "
           "near tie) %s", worst, TOL_VK, ties, rc ? seer_last_error() : "");
        free(vq), free(vf);
        qwen35_free(m);
    }
    if (vk)
        backend_free(vk);
    backend_free(cpu);
    free(ref), free(q8), free(f16);
    return done_testing();
}
