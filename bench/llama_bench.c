/* llama_bench.c — times llama.cpp on the CPU the way `seer bench` times seer (tools/bench/bench.c), calling
   the libllama that npm node-llama-cpp 3.22.1 ships prebuilt, directly and with a ggml thread pool
   attached, as llama.cpp's own llama-bench does. Through node-llama-cpp (bench/llama_bench.mjs) no
   pool is attached and every llama_decode call starts and joins its worker threads, which costs
   ~15–18 ms per call here: fine at 1 thread, unfair at 2. bench/llama_bench.sh builds and runs it.
     llama_bench BINS_DIR -m MODEL.gguf [-t 2] [-p 512,2048] [-n 128] [--reps 3] [--warmup 2]
   ppN: a fresh sequence, N prompt ids (tools/bench/bench.c's xorshift sequence) in batches of 512, only the
   last position's logits computed; tgN: a fresh sequence, --warmup untimed then N timed
   single-token greedy steps. A first untimed pass touches every weight. The table on stdout has
   the shape of `seer bench`'s; llama.cpp's logs go to stderr. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

#define MAX_PROMPTS 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (level >= GGML_LOG_LEVEL_WARN)
        fputs(text, stderr);
}

static int greedy(struct llama_context *ctx, int n_vocab)
{
    const float *l = llama_get_logits_ith(ctx, -1);
    int best = 0;
    for (int i = 1; i < n_vocab; i++)
        if (l[i] > l[best])
            best = i;
    return best;
}

static int decode_steps(struct llama_context *ctx, int n_vocab, llama_token *tok, int n)
{
    for (int i = 0; i < n; i++) {
        if (llama_decode(ctx, llama_batch_get_one(tok, 1)))
            return -1;
        *tok = greedy(ctx, n_vocab);
    }
    return 0;
}

static void report(const char *test, int n_tokens, const double *secs, int reps)
{
    double tps[64], mean = 0, sd = 0, lo = INFINITY, hi = 0;
    for (int r = 0; r < reps; r++) {
        tps[r] = n_tokens / secs[r];
        mean += tps[r] / reps;
        lo = fmin(lo, tps[r]), hi = fmax(hi, tps[r]);
    }
    for (int r = 0; r < reps && reps > 1; r++)
        sd += (tps[r] - mean) * (tps[r] - mean) / (reps - 1);
    printf("%-8s %10.2f %8.2f %10.2f %10.2f %5d\n", test, mean, sqrt(sd), lo, hi, reps);
}

int main(int argc, char **argv)
{
    const char *bins = argc > 1 ? argv[1] : NULL, *model_path = NULL;
    int threads = 2, n_gen = 128, reps = 3, warmup = 2, n_prompts = 2;
    int prompts[MAX_PROMPTS] = {512, 2048};
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "-m"))
            model_path = v;
        else if (!strcmp(k, "-t"))
            threads = atoi(v);
        else if (!strcmp(k, "-n"))
            n_gen = atoi(v);
        else if (!strcmp(k, "--reps"))
            reps = atoi(v);
        else if (!strcmp(k, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(k, "-p")) {
            n_prompts = 0;
            for (char *s = (char *)v; *s && n_prompts < MAX_PROMPTS; s += strcspn(s, ","), s += *s == ',')
                if (atoi(s) > 0)
                    prompts[n_prompts++] = atoi(s);
        } else {
            fprintf(stderr, "llama_bench: unknown option %s\n", k);
            return 2;
        }
    }
    if (!bins || !model_path || threads < 1 || reps < 1 || reps > 64 || n_gen < 0 || warmup < 0) {
        fprintf(stderr, "usage: llama_bench BINS_DIR -m MODEL [-t N] [-p N,N] [-n N] [--reps N] [--warmup N]\n");
        return 2;
    }
    llama_log_set(quiet, NULL);
    ggml_backend_load_all_from_path(bins);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "llama_bench: %s: cannot load\n", model_path);
        return 1;
    }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    int max_p = 1;
    for (int i = 0; i < n_prompts; i++)
        max_p = prompts[i] > max_p ? prompts[i] : max_p;
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)((max_p > 1 + warmup + n_gen ? max_p : 1 + warmup + n_gen) + 16);
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED; /* as bench/llama_bench.mjs */
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "llama_bench: cannot create a context\n");
        return 1;
    }
    /* The pool: the CPU backend's own functions, reached through its registry (the backends are
       loaded as modules, so the symbols are not linked in). */
    ggml_backend_reg_t cpu = ggml_backend_reg_by_name("CPU");
    struct ggml_threadpool *(*pool_new)(struct ggml_threadpool_params *) =
        cpu ? (struct ggml_threadpool *(*)(struct ggml_threadpool_params *))ggml_backend_reg_get_proc_address(
                  cpu, "ggml_threadpool_new")
            : NULL;
    void (*pool_free)(struct ggml_threadpool *) =
        cpu ? (void (*)(struct ggml_threadpool *))ggml_backend_reg_get_proc_address(cpu, "ggml_threadpool_free") : NULL;
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    struct ggml_threadpool *pool = pool_new ? pool_new(&tpp) : NULL;
    if (!pool) {
        fprintf(stderr, "llama_bench: no ggml thread pool\n");
        return 1;
    }
    llama_attach_threadpool(ctx, pool, pool);

    llama_token *prompt = malloc((size_t)max_p * sizeof *prompt);
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < max_p; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        prompt[i] = (llama_token)(x % (unsigned long long)n_vocab);
    }
    llama_memory_t mem = llama_get_memory(ctx);
    llama_token tok = prompt[0];
    if (decode_steps(ctx, n_vocab, &tok, 1 + warmup)) /* touches every weight */
        return fprintf(stderr, "llama_bench: decode failed\n"), 1;
    printf("model     %s\nengine    llama.cpp (libllama of node-llama-cpp 3.22.1, ggml thread pool), %d threads, "
           "batch 512\n",
           model_path, threads);
    printf("%-8s %10s %8s %10s %10s %5s\n", "test", "tokens/s", "+-", "min", "max", "reps");
    double secs[64];
    char name[32];
    for (int k = 0; k < n_prompts; k++) {
        for (int r = 0; r < reps; r++) {
            llama_memory_clear(mem, true);
            const double t0 = now();
            for (int i = 0; i < prompts[k]; i += 512) {
                const int n = prompts[k] - i < 512 ? prompts[k] - i : 512;
                if (llama_decode(ctx, llama_batch_get_one(prompt + i, n)))
                    return fprintf(stderr, "llama_bench: prefill failed\n"), 1;
            }
            secs[r] = now() - t0;
        }
        snprintf(name, sizeof name, "pp%d", prompts[k]);
        report(name, prompts[k], secs, reps);
    }
    for (int r = 0; r < reps && n_gen > 0; r++) {
        llama_memory_clear(mem, true);
        tok = prompt[0];
        if (decode_steps(ctx, n_vocab, &tok, warmup))
            return 1;
        const double t0 = now();
        if (decode_steps(ctx, n_vocab, &tok, n_gen))
            return 1;
        secs[r] = now() - t0;
    }
    if (n_gen > 0) {
        snprintf(name, sizeof name, "tg%d", n_gen);
        report(name, n_gen, secs, reps);
    }
    free(prompt);
    llama_free(ctx);
    pool_free(pool);
    llama_model_free(model);
    return 0;
}
