/* Tests the whole Qwen3.5 text model on the Vulkan backend (lavapipe in CI) against the CPU backend,
   on tiny random checkpoints of the real architecture (tests/reference/gen_tiny.py, fresh seed) in
   both formats (HF bf16 directory, GGUF f16 with llama.cpp's conventions incl. tiled V heads):
   prefill logits (a prompt spanning two micro-batches and the GDN chunk edge) and 16 greedy decode
   steps must agree within 1e-4 relative L2, with identical greedy tokens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "lm/qwen35.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "vulkan/vulkan.h"

/* Vulkan vs CPU logits: ≤ 1e-4 relative L2 (both f32 paths; only the summation order differs). */
#define TOL 1e-4
#define N_PROMPT 80
#define N_DECODE 16

/* Greedy run: prefill logits (all rows) into pre, then N_DECODE greedy tokens and their logits. */
static int greedy_run(backend *be, const char *path, const int32_t *prompt, float **pre, float **steps,
                      int32_t *toks, int64_t *V)
{
    qwen35_model *m;
    qwen35_state *st;
    int rc = qwen35_load(path, be, &m);
    if (rc)
        return rc;
    *V = m->cfg.n_vocab;
    *pre = malloc(sizeof(float) * (size_t)(*V * N_PROMPT));
    *steps = malloc(sizeof(float) * (size_t)(*V * N_DECODE));
    rc = qwen35_state_create(m, N_PROMPT + N_DECODE + 1, 48, &st);
    rc = rc ? rc : qwen35_eval(m, st, prompt, N_PROMPT, QWEN35_LOGITS_ALL, *pre, true);
    const float *last = *pre + (N_PROMPT - 1) * *V;
    for (int i = 0; i < N_DECODE && rc == SEER_OK; i++) {
        int64_t am = 0;
        for (int64_t v = 1; v < *V; v++)
            if (last[v] > last[am])
                am = v;
        toks[i] = (int32_t)am;
        float *row = *steps + (int64_t)i * *V;
        rc = qwen35_eval(m, st, &toks[i], 1, QWEN35_LOGITS_LAST, row, true);
        last = row;
    }
    qwen35_state_free(st);
    qwen35_free(m);
    return rc;
}

/* A model that does not fit the device's free memory is refused before any weight is loaded, with
   the plan's numbers in the message (lm/plan.c); a device reporting 1 MiB stands in for a small GPU. */
static void test_refused(uint64_t seed)
{
    char dir[600], cmd[2048], path[700];
    snprintf(dir, sizeof dir, "%s/refused", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu >/dev/null 2>&1",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)seed);
    snprintf(path, sizeof path, "%s/model-f16.gguf", dir);
    struct vk_backend_params vp = vk_backend_params_default();
    vp.memory_limit_override = 1 << 20;
    backend *small = NULL;
    if (!ok(system(cmd) == 0 && backend_vulkan_create(&vp, &small) == SEER_OK, "a device with a 1 MiB limit"))
        return;
    qwen35_model *m = (qwen35_model *)0x1;
    int rc = qwen35_load(path, small, &m);
    const char *e = seer_last_error();
    ok(rc == SEER_ENOMEM && m == (qwen35_model *)0x1 && strstr(e, "model-f16.gguf") && strstr(e, "does not fit") &&
           strstr(e, "weights") && strstr(e, "KV") && strstr(e, "GDN state") && strstr(e, "MiB are free"),
       "a model larger than free device memory is refused with the numbers: %s", e);
    if (rc == SEER_OK)
        qwen35_free(m);
    backend_free(small);

    /* a device where the model fits but a context of 1M tokens (512 MiB of KV) does not */
    vp.memory_limit_override = 64 << 20;
    if (!ok(backend_vulkan_create(&vp, &small) == SEER_OK, "a device with a 64 MiB limit"))
        return;
    rc = qwen35_load(path, small, &m);
    if (ok(rc == SEER_OK, "the model loads within 64 MiB (%s)", rc ? seer_last_error() : "ok")) {
        qwen35_state *st = (qwen35_state *)0x1;
        rc = qwen35_state_create(m, 1 << 20, 512, &st);
        e = seer_last_error();
        ok(rc == SEER_ENOMEM && st == (qwen35_state *)0x1 && strstr(e, "1048576 tokens does not fit") &&
               strstr(e, "KV") && strstr(e, "MiB are free"),
           "a context larger than free device memory is refused with the numbers: %s", e);
        qwen35_state *fits = NULL;
        rc = qwen35_state_create(m, 4096, 512, &fits);
        ok(rc == SEER_OK, "a 4096-token context fits (%s)", rc ? seer_last_error() : "ok");
        qwen35_state_free(fits);
        qwen35_free(m);
    }
    backend_free(small);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    const char *req = getenv("SEER_REQUIRE_VULKAN");
    struct vk_backend_params vp = vk_backend_params_default();
    backend *cpu, *vk;
    if (backend_vulkan_create(&vp, &vk) != SEER_OK) {
        if (req && !strcmp(req, "1"))
            return ok(0, "SEER_REQUIRE_VULKAN=1 but no Vulkan backend: %s", seer_last_error()), done_testing();
        return plan_skip_all("no Vulkan device (install mesa-vulkan-drivers for lavapipe)");
    }
    diag("vulkan: %s", vk->description);
    if (backend_cpu_create(2, &cpu) != SEER_OK)
        return ok(0, "cpu backend"), done_testing();
    static const char *presets[] = {"tiny", "tiny-gqa"};
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        char dir[600], cmd[2048], path[700];
        snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), presets[p]);
        snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset %s --seed %llu >/dev/null 2>&1",
                 test_src_path("tests/reference/gen_tiny.py"), dir, presets[p], (unsigned long long)(seed + p));
        if (!ok(system(cmd) == 0, "%s: generated", presets[p]))
            continue;
        static const char *files[] = {"hf", "model-f16.gguf"};
        for (size_t f = 0; f < 2; f++) {
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            int32_t prompt[N_PROMPT], tc[N_DECODE], tv[N_DECODE];
            float *pc = NULL, *sc = NULL, *pv = NULL, *sv = NULL;
            int64_t V = 0;
            for (int i = 0; i < N_PROMPT; i++)
                prompt[i] = (int32_t)(test_rand_u64() % 256);
            int rc = greedy_run(cpu, path, prompt, &pc, &sc, tc, &V);
            if (!ok(rc == SEER_OK, "%s %s: cpu run (%s)", presets[p], files[f], rc ? seer_last_error() : "ok"))
                goto next;
            rc = greedy_run(vk, path, prompt, &pv, &sv, tv, &V);
            if (!ok(rc == SEER_OK, "%s %s: vulkan run (%s)", presets[p], files[f], rc ? seer_last_error() : "ok"))
                goto next;
            double e1 = rel_l2(pv, pc, (size_t)(V * N_PROMPT)), e2 = rel_l2(sv, sc, (size_t)(V * N_DECODE));
            ok(e1 <= TOL, "%s %s: prefill logits of %d tokens, vulkan vs cpu rel L2 %.2e (<= %.0e)", presets[p],
               files[f], N_PROMPT, e1, TOL);
            ok(e2 <= TOL, "%s %s: %d decode steps, rel L2 %.2e (<= %.0e)", presets[p], files[f], N_DECODE, e2, TOL);
            ok(!memcmp(tc, tv, sizeof tc), "%s %s: identical greedy continuations", presets[p], files[f]);
        next:
            free(pc), free(sc), free(pv), free(sv);
        }
    }
    ok(backend_vulkan_validation_errors(vk) == 0, "no validation errors");
    test_refused(seed);
    backend_free(vk);
    backend_free(cpu);
    return done_testing();
}
