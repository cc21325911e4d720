/* bench.c — `seer bench`: prefill and decode speed of a Qwen3.5 text model, and peak memory.
     seer bench -m MODEL [options]                     a GGUF file or HF directory
     seer bench --preset 0.8b --dtype q8_0 [-o FILE]   a random model of a real shape (lm/randmodel.h),
                                                       generated first (to FILE, else a temporary file)
   Prefill: a random prompt of each -p length through a fresh state (chunked GDN, micro-batches
   of -ub tokens), timed per repetition. Decode: -n single-token steps, each feeding the previous
   step's greedy token, after untimed warm-up steps, from a fresh state (llama-bench's "tg").
   With --parallel N, N sequences decode together, one token each per pass over the weights
   (qwen35_decode_batch), and the decode rate counts the tokens of all N.
   A warm-up pass first touches every weight, so page faults of the mapped file are not timed.
   Results go to stdout (a table, or one JSON object with --json); progress and logs to stderr. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/device.h"
#include "core/cpu/cpu.h"
#include "core/error.h"
#include "core/io.h"
#include "core/log.h"
#include "core/util.h"
#include "lm/qwen35.h"
#include "lm/randmodel.h"
#include "cli/gen.h"
#include "seer.h"
#include "tools/bench/bench.h"
#include "vulkan/vulkan.h"

#define MAX_PROMPTS 16
/* Sequences --parallel may decode together: each has its own GDN state and KV cache (tens of MiB
   for the 0.8B shape), and a batch this wide is long past where the weight read stops dominating. */
#define MAX_PARALLEL 64

#define STR_(x) #x
#define STR(x) STR_(x)

enum {
    B_MODEL, B_PRESET, B_DTYPE, B_OUT, B_SEED, B_THREADS, B_PROMPTS, B_DECODE, B_REPS, B_WARMUP, B_UBATCH,
    B_DEVICE, B_EXACT, B_CACHE, B_WEIGHTS, B_DEPTH, B_PARALLEL, B_JSON, B_HELP
};
static const struct cli_opt bench_opts[] = {
    {{"-m"}, "MODEL", "GGUF text model or Hugging Face model directory", B_MODEL},
    {{"--preset"}, "SIZE", "generate a random-weight model of a released size first", B_PRESET},
    {{"--dtype"}, "T", "its matrix dtype: f32, f16, bf16, q8_0, q4_k, or q4_k_m (llama.cpp's mix of Q4_K, Q5_K "
                       "and Q6_K) (default q8_0)", B_DTYPE},
    {{"-o"}, "FILE", "keep the generated model at FILE (default: a temporary file, removed)", B_OUT},
    {{"--seed"}, "N", "its random seed (default 1)", B_SEED},
    {{"-t"}, "N", "CPU threads (default: all online CPUs)", B_THREADS},
    {{"-p"}, "N[,N...]", "prompt lengths to time prefill on (default 512,2048; 0: none)", B_PROMPTS},
    {{"-n"}, "N", "decode steps to time (default 128; 0: none)", B_DECODE},
    {{"--reps"}, "N", "repetitions of each test (default 3)", B_REPS},
    {{"--warmup"}, "N", "untimed decode steps before each decode test (default 2)", B_WARMUP},
    {{"-ub"}, "N", "tokens per forward micro-batch in prefill (default 512)", B_UBATCH},
    {{"--device"}, "D", "auto (default; or $SEER_DEVICE), cpu, vulkan or vulkan:N", B_DEVICE},
    {{"--exact"}, NULL, "f32 activations in every matmul (default: 8-bit as llama.cpp on the CPU; int8 dot or "
                        "fp16 on GPUs with them)", B_EXACT},
    {{"--cache-type"}, "T", "KV cache f16 (default), f32 or q8_0", B_CACHE},
    {{"--weights"}, "W", "CPU: auto (default), copy (into memory, large pages) or map (read in place)", B_WEIGHTS},
    {{"-d"}, "N", "decode tests start after N prompt tokens (untimed; default 0)", B_DEPTH},
    {{"--parallel"}, "N", "N sequences decode together, 1.." STR(MAX_PARALLEL) " (default 1); tg counts all their "
                          "tokens", B_PARALLEL},
    {{"--json"}, NULL, "print one JSON object instead of the table", B_JSON},
    {{"-h", "--help"}, NULL, "this help", B_HELP},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: seer bench (-m MODEL | --preset %s [--dtype T] [-o FILE] [--seed N]) [options]\n",
            randmodel_preset_names());
    cli_opt_help(f, bench_opts, ARRAY_LEN(bench_opts));
    fputs("  seer bench --tokenizer -m MODEL [-f FILE]: encoding speed instead (--help there)\n"
          "  seer bench --video FILE -m MODEL: one video's time by stage instead (--help there)\n"
          "  seer bench --image WxH (-m MMPROJ | --preset 0.8b): the vision tower by image size (--help there)\n",
          f);
}

struct opts {
    const char *model, *preset, *out;
    enum dtype dtype;
    enum randmodel_mix mix; /* --dtype q4_k_m */
    uint64_t seed;
    int threads;
    int64_t prompts[MAX_PROMPTS];
    int n_prompts;
    int64_t n_decode, n_ubatch, depth;
    int reps, warmup;
    int parallel; /* sequences decoding together in the decode test */
    const char *device;
    bool json;
    bool exact;
    enum dtype cache_type;
    enum cpu_weights weights;
};

struct result {
    char test[48];
    bool prefill;
    int64_t n_tokens;
    double *secs; /* per repetition */
    int reps;
};

/* ---- arguments ------------------------------------------------------------------------------- */

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_dtype(const char *s, enum dtype *t)
{
    static const struct { const char *name; enum dtype t; } names[] = {
        {"f32", DT_F32}, {"f16", DT_F16}, {"bf16", DT_BF16}, {"q8_0", DT_Q8_0}, {"q4_k", DT_Q4_K}, {"q4_K", DT_Q4_K},
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i].name)) {
            *t = names[i].t;
            return true;
        }
    return false;
}

static bool parse_prompts(const char *s, struct opts *o)
{
    o->n_prompts = 0;
    for (const char *p = s; *p;) {
        char num[32];
        size_t n = strcspn(p, ",");
        int64_t v;
        if (n == 0 || n >= sizeof num || o->n_prompts == MAX_PROMPTS)
            return false;
        memcpy(num, p, n);
        num[n] = '\0';
        if (!parse_i64(num, 0, 1 << 20, &v))
            return false;
        if (v > 0)
            o->prompts[o->n_prompts++] = v;
        p += n + (p[n] == ',');
    }
    return true;
}

/* Returns -1 when the arguments are fine, else the exit status to return. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (struct opts){
        .dtype = DT_Q8_0, .seed = 1, .threads = cpus > 0 && cpus < 1024 ? (int)cpus : 1,
        .prompts = {512, 2048}, .n_prompts = 2, .n_decode = 128, .n_ubatch = 512, .reps = 3, .warmup = 2,
        .cache_type = DT_F16, .device = cli_default_device(), .parallel = 1,
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        const struct cli_opt *opt = cli_opt_find(bench_opts, ARRAY_LEN(bench_opts), argc, argv, &i, &v);
        int64_t x;
        bool ok = !opt || !opt->arg || v;
        if (!opt) {
            fprintf(stderr, "seer bench: unknown option '%s'\n", a);
            usage(stderr);
            return CLI_USAGE;
        }
        switch (ok ? opt->key : -1) {
        case B_HELP: usage(stdout); return CLI_OK;
        case B_JSON: o->json = true; break;
        case B_EXACT: o->exact = true; break;
        case B_MODEL: o->model = v; break;
        case B_PRESET: o->preset = v; break;
        case B_OUT: o->out = v; break;
        case B_DTYPE: {
            const bool km = !strcmp(v, "q4_k_m") || !strcmp(v, "Q4_K_M");
            o->mix = km ? RANDMODEL_Q4_K_M : RANDMODEL_UNIFORM;
            ok = km ? (o->dtype = DT_Q4_K, true) : parse_dtype(v, &o->dtype);
            break;
        }
        case B_SEED: ok = parse_i64(v, 0, INT64_MAX, &x), o->seed = (uint64_t)x; break;
        case B_THREADS: ok = parse_i64(v, 1, 1024, &x), o->threads = (int)x; break;
        case B_PROMPTS: ok = parse_prompts(v, o); break;
        case B_DECODE: ok = parse_i64(v, 0, 1 << 20, &o->n_decode); break;
        case B_REPS: ok = parse_i64(v, 1, 1000, &x), o->reps = (int)x; break;
        case B_WARMUP: ok = parse_i64(v, 0, 1000, &x), o->warmup = (int)x; break;
        case B_DEPTH: ok = parse_i64(v, 0, 1 << 24, &o->depth); break;
        case B_PARALLEL: ok = parse_i64(v, 1, MAX_PARALLEL, &x), o->parallel = (int)x; break;
        case B_UBATCH: ok = parse_i64(v, 1, 1 << 16, &o->n_ubatch); break;
        case B_DEVICE: o->device = v; break;
        case B_WEIGHTS: ok = cpu_weights_parse(v, &o->weights); break;
        case B_CACHE:
            ok = parse_dtype(v, &o->cache_type) &&
                 (o->cache_type == DT_F16 || o->cache_type == DT_F32 || o->cache_type == DT_Q8_0);
            break;
        default: break;
        }
        if (!ok) {
            fprintf(stderr, "seer bench: bad or missing value for %s\n", a);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!!o->model == !!o->preset) {
        fprintf(stderr, "seer bench: give exactly one of -m MODEL and --preset SIZE\n");
        usage(stderr);
        return CLI_USAGE;
    }
    if (o->model && o->out) {
        fprintf(stderr, "seer bench: -o only applies to --preset\n");
        return CLI_USAGE;
    }
    struct randmodel_shape shape;
    if (o->preset && randmodel_preset(o->preset, &shape)) { /* a usage error, found before any work */
        fprintf(stderr, "seer bench: %s\n", seer_last_error());
        return CLI_USAGE;
    }
    return -1;
}

/* ---- measuring ------------------------------------------------------------------------------- */

static int argmax(const float *v, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return (int)best;
}

/* Decode steps from the current state, feeding each step's greedy token to the next. */
static int decode_steps(const qwen35_model *m, qwen35_state *st, int32_t *tok, int64_t n, float *logits)
{
    for (int64_t i = 0; i < n; i++) {
        int rc = qwen35_eval(m, st, tok, 1, QWEN35_LOGITS_LAST, logits, false);
        if (rc)
            return rc;
        *tok = argmax(logits, m->cfg.n_vocab);
    }
    return SEER_OK;
}

/* Decode steps of n sequences together (seqs[0] lends the workspace), each feeding its own greedy
   token to its next step. */
static int decode_steps_batch(const qwen35_model *m, qwen35_state **seqs, int n, int32_t *toks, int64_t steps,
                              float *logits)
{
    const int64_t V = m->cfg.n_vocab;
    for (int64_t s = 0; s < steps; s++) {
        int rc = qwen35_decode_batch(m, seqs[0], seqs, toks, n, logits);
        if (rc)
            return rc;
        for (int i = 0; i < n; i++)
            toks[i] = argmax(logits + i * V, V);
    }
    return SEER_OK;
}

/* One repetition of the decode test with o->parallel sequences (seqs[0] is st): fresh states,
   the -d prompt and the warm-up untimed, then o->n_decode steps of all of them timed. */
static int decode_parallel(const qwen35_model *m, qwen35_state **seqs, const struct opts *o, const int32_t *prompt,
                           float *logits, double *secs)
{
    int32_t toks[MAX_PARALLEL];
    int rc;
    for (int i = 0; i < o->parallel; i++) {
        if ((rc = qwen35_state_reset(m, seqs[i])))
            return rc;
        if (o->depth > 0 && (rc = qwen35_eval(m, seqs[i], prompt, o->depth, QWEN35_LOGITS_NONE, NULL, true)))
            return rc;
        /* different first tokens, so the sequences do not compute the same thing */
        toks[i] = (int32_t)(((int64_t)prompt[0] + 7919 * (int64_t)i) % m->cfg.n_vocab);
    }
    if ((rc = decode_steps_batch(m, seqs, o->parallel, toks, o->warmup, logits)))
        return rc;
    const double t0 = seer_time_now();
    if ((rc = decode_steps_batch(m, seqs, o->parallel, toks, o->n_decode, logits)))
        return rc;
    *secs = seer_time_now() - t0;
    return SEER_OK;
}

static int run_tests(const qwen35_model *m, qwen35_state **seqs, const struct opts *o, struct result *res,
                     int n_res, const int32_t *prompt, float *logits)
{
    qwen35_state *st = seqs[0];
    int rc;
    /* Warm-up: one prompt token and the decode warm-up read every weight once. */
    int32_t tok = prompt[0];
    const double w0 = seer_time_now();
    if ((rc = qwen35_state_reset(m, st)) || (rc = decode_steps(m, st, &tok, 1 + o->warmup, logits)))
        return rc;
    LOG_INFO("bench", "warm-up: %.2f s", seer_time_now() - w0);
    for (int k = 0; k < n_res; k++) {
        struct result *r = &res[k];
        for (int rep = 0; rep < r->reps; rep++) {
            if (!r->prefill && o->parallel > 1) {
                if ((rc = decode_parallel(m, seqs, o, prompt, logits, &r->secs[rep])))
                    return rc;
                LOG_INFO("bench", "%s rep %d/%d: %.3f s, %.2f tokens/s (%d sequences)", r->test, rep + 1, r->reps,
                         r->secs[rep], (double)r->n_tokens / r->secs[rep], o->parallel);
                continue;
            }
            if ((rc = qwen35_state_reset(m, st)))
                return rc;
            tok = prompt[0];
            /* decode at depth: the KV cache holds o->depth tokens before the timed steps */
            if (!r->prefill && o->depth > 0 &&
                (rc = qwen35_eval(m, st, prompt, o->depth, QWEN35_LOGITS_LAST, logits, true)))
                return rc;
            if (!r->prefill && (rc = decode_steps(m, st, &tok, o->warmup, logits)))
                return rc;
            const double t0 = seer_time_now();
            if (r->prefill)
                rc = qwen35_eval(m, st, prompt, r->n_tokens, QWEN35_LOGITS_LAST, logits, true);
            else
                rc = decode_steps(m, st, &tok, r->n_tokens, logits);
            if (rc)
                return rc;
            r->secs[rep] = seer_time_now() - t0;
            LOG_INFO("bench", "%s rep %d/%d: %.3f s, %.2f tokens/s", r->test, rep + 1, r->reps, r->secs[rep],
                     (double)r->n_tokens / r->secs[rep]);
        }
    }
    return SEER_OK;
}

struct stats {
    double mean, sd, min, max; /* tokens per second */
};

static struct stats stats_of(const struct result *r)
{
    struct stats s = {0, 0, INFINITY, 0};
    for (int i = 0; i < r->reps; i++) {
        const double tps = (double)r->n_tokens / r->secs[i];
        s.mean += tps / r->reps;
        s.min = MIN(s.min, tps);
        s.max = MAX(s.max, tps);
    }
    for (int i = 0; i < r->reps; i++) {
        const double d = (double)r->n_tokens / r->secs[i] - s.mean;
        s.sd += d * d;
    }
    s.sd = r->reps > 1 ? sqrt(s.sd / (r->reps - 1)) : 0.0;
    return s;
}

/* Peak resident set size in bytes (mapped weight pages that were touched count, as for any
   program reading a mapped model). */
static uint64_t peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024; /* KiB on Linux */
}

/* ---- output ---------------------------------------------------------------------------------- */

static void json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* The memory roofline of decode on the CPU (bench_membw.c): read bandwidth, the bytes a step reads,
   and the tokens/s they allow one sequence; zero where it does not apply (a GPU, no decode test). */
struct roofline {
    double bandwidth;  /* bytes/s: the higher of before and after */
    double before, after; /* the read rate measured before the tests and after them */
    uint64_t step_bytes;
    int64_t kv_tokens; /* cached tokens a timed step reads, on average */
    double ceiling;    /* tokens/s */
};

static void print_results(const struct opts *o, const char *path, const qwen35_model *m, uint64_t file_bytes,
                          const struct result *res, int n_res, const struct roofline *rf)
{
    const struct qwen35_config *c = &m->cfg;
    const char *wt = dtype_name(m->layers[0].ffn_gate.type);
    const uint64_t rss = peak_rss_bytes();
    if (o->json) {
        printf("{\"model\": ");
        json_str(path);
        printf(", \"file_bytes\": %llu, \"weights\": \"%s\", \"n_layer\": %lld, \"n_embd\": %lld, \"n_vocab\": %lld, "
               "\"device\": ", (unsigned long long)file_bytes, wt, (long long)c->n_layer, (long long)c->n_embd,
               (long long)c->n_vocab);
        json_str(m->be->description);
        printf(", \"threads\": %d, \"n_ubatch\": %lld, \"parallel\": %d, \"results\": [", o->threads,
               (long long)o->n_ubatch, o->parallel);
        for (int k = 0; k < n_res; k++) {
            const struct stats s = stats_of(&res[k]);
            printf("%s{\"test\": \"%s\", \"kind\": \"%s\", \"n_tokens\": %lld, \"reps\": %d, \"tokens_per_s\": %.3f, "
                   "\"stddev\": %.3f, \"min\": %.3f, \"max\": %.3f, \"seconds\": [", k ? ", " : "", res[k].test,
                   res[k].prefill ? "prefill" : "decode", (long long)res[k].n_tokens, res[k].reps, s.mean, s.sd,
                   s.min, s.max);
            for (int i = 0; i < res[k].reps; i++)
                printf("%s%.6f", i ? ", " : "", res[k].secs[i]);
            printf("]}");
        }
        printf("], \"peak_rss_bytes\": %llu", (unsigned long long)rss);
        if (rf->bandwidth > 0)
            printf(", \"read_bandwidth_bytes_per_s\": %.0f, \"read_bandwidth_before_bytes_per_s\": %.0f, "
                   "\"read_bandwidth_after_bytes_per_s\": %.0f, \"decode_step_bytes\": %llu, "
                   "\"decode_ceiling_tokens_per_s\": %.3f", rf->bandwidth, rf->before, rf->after,
                   (unsigned long long)rf->step_bytes, rf->ceiling);
        printf("}\n");
        return;
    }
    printf("model     %s\n", path);
    printf("shape     qwen35, %lld layers, hidden %lld, vocab %lld, %s weights, %.1f MiB\n", (long long)c->n_layer,
           (long long)c->n_embd, (long long)c->n_vocab, wt, (double)file_bytes / (1 << 20));
    printf("device    %s, micro-batch %lld, KV cache %s%s, parallel %d\n", m->be->description,
           (long long)o->n_ubatch, dtype_name(o->cache_type), o->exact ? ", exact" : "", o->parallel);
    printf("%-8s %10s %8s %10s %10s %5s\n", "test", "tokens/s", "+-", "min", "max", "reps");
    for (int k = 0; k < n_res; k++) {
        const struct stats s = stats_of(&res[k]);
        printf("%-8s %10.2f %8.2f %10.2f %10.2f %5d", res[k].test, s.mean, s.sd, s.min, s.max, res[k].reps);
        if (!res[k].prefill && rf->ceiling > 0 && o->parallel == 1)
            printf("   %.0f %% of the memory ceiling", 100 * s.mean / rf->ceiling);
        printf("\n");
    }
    printf("peak RSS  %.1f MiB\n", (double)rss / (1 << 20));
    if (rf->bandwidth > 0) {
        printf("memory    read %.1f GB/s with %d threads; a decode step reads %.1f MiB (weights, recurrent "
               "state, %lld cached tokens): ceiling %.1f tokens/s\n", rf->bandwidth / 1e9, o->threads,
               (double)rf->step_bytes / (1 << 20), (long long)rf->kv_tokens, rf->ceiling);
        /* a fifth apart: more than one machine's run-to-run spread, so the rate moved in the run */
        if (MAX(rf->before, rf->after) > 1.2 * MIN(rf->before, rf->after))
            printf("          the read rate moved during the run (%.1f GB/s before the tests, %.1f after): "
                   "the share of the ceiling is uncertain\n", rf->before / 1e9, rf->after / 1e9);
    }
}

/* ---- the command ----------------------------------------------------------------------------- */

/* Generates the preset model to o->out, or to a file in a new temporary directory (*tmp_dir). */
static int generate(const struct opts *o, char *path, size_t cap, char *tmp_dir, size_t tmp_cap)
{
    struct randmodel_shape s;
    int rc = randmodel_preset(o->preset, &s);
    if (rc)
        return rc;
    const char *wt = o->mix == RANDMODEL_Q4_K_M ? "q4_K_M" : dtype_name(o->dtype);
    if (o->out) {
        snprintf(path, cap, "%s", o->out);
    } else {
        const char *t = getenv("TMPDIR");
        snprintf(tmp_dir, tmp_cap, "%s/seer-bench-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmp_dir)) {
            rc = seer_err(SEER_EIO, "%s: cannot create a temporary directory: %s", tmp_dir, strerror(errno));
            tmp_dir[0] = '\0';
            return rc;
        }
        snprintf(path, cap, "%s/qwen35-%s-%s.gguf", tmp_dir, o->preset, wt);
    }
    char name[64];
    snprintf(name, sizeof name, "seer-random-%s-%s", o->preset, wt);
    const struct randmodel_params p = {
        .wtype = o->dtype, .mix = o->mix, .seed = o->seed, .n_threads = o->threads, .name = name};
    fprintf(stderr, "seer bench: writing a random %s model (%s, %.1f MiB) to %s\n", o->preset, wt,
            (double)randmodel_file_size(&s, &p) / (1 << 20), path);
    const double t0 = seer_time_now();
    if ((rc = randmodel_write(path, &s, &p)))
        return rc;
    fprintf(stderr, "seer bench: generated in %.1f s\n", seer_time_now() - t0);
    return SEER_OK;
}

int cli_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--tokenizer"))
            return cli_bench_tokenizer(argc, argv);
        else if (!strcmp(argv[i], "--video"))
            return cli_bench_video(argc, argv);
        else if (!strcmp(argv[i], "--image"))
            return cli_bench_image(argc, argv);
    struct opts o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;
    char path[4096], tmp_dir[4096] = "";
    backend *be = NULL;
    qwen35_model *m = NULL;
    qwen35_state *seqs[MAX_PARALLEL] = {0};
    int32_t *prompt = NULL;
    float *logits = NULL;
    struct result res[MAX_PROMPTS + 1];
    int n_res = 0, rc;
    double *secs = NULL;
    uint64_t file_bytes = 0;

    if (o.preset)
        rc = generate(&o, path, sizeof path, tmp_dir, sizeof tmp_dir);
    else
        rc = (snprintf(path, sizeof path, "%s", o.model), SEER_OK);
    if (rc == SEER_OK && io_path_kind(path) == IO_FILE)
        rc = io_file_size(path, &file_bytes);
    if (rc == SEER_OK)
        rc = backend_open(o.device, o.threads, &be);
    if (rc == SEER_OK) {
        backend_cpu_set_exact(be, o.exact);
        backend_vulkan_set_exact(be, o.exact);
        backend_cpu_set_weights(be, o.weights);
        rc = qwen35_load(path, be, &m);
    }
    if (rc)
        goto done;

    int64_t max_p = 0;
    for (int i = 0; i < o.n_prompts; i++)
        max_p = MAX(max_p, o.prompts[i]);
    /* the first state lends the batch its workspace: its micro-batch holds all the sequences */
    const int64_t n_ctx = MAX(MAX(max_p, o.depth + 1 + o.warmup + o.n_decode) + 1, o.parallel);
    max_p = MAX(max_p, o.depth);
    secs = calloc((size_t)(MAX_PROMPTS + 1) * (size_t)o.reps, sizeof *secs);
    prompt = malloc((size_t)MAX(max_p, 1) * sizeof *prompt);
    logits = malloc((size_t)m->cfg.n_vocab * (size_t)o.parallel * sizeof *logits);
    if (!secs || !prompt || !logits) {
        rc = seer_err(SEER_ENOMEM, "out of memory");
        goto done;
    }
    /* Random ids over the real vocabulary (fixed seed: every run times the same prompt). */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < MAX(max_p, 1); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        prompt[i] = (int32_t)(x % (uint64_t)m->cfg.n_vocab);
    }
    for (int i = 0; i < o.n_prompts; i++, n_res++) {
        res[n_res] = (struct result){.prefill = true, .n_tokens = o.prompts[i], .reps = o.reps,
                                     .secs = secs + (size_t)n_res * (size_t)o.reps};
        snprintf(res[n_res].test, sizeof res[n_res].test, "pp%lld", (long long)o.prompts[i]);
    }
    if (o.n_decode > 0) {
        /* n_decode steps of every sequence: the rate counts all their tokens */
        res[n_res] = (struct result){.prefill = false, .n_tokens = o.n_decode * o.parallel, .reps = o.reps,
                                     .secs = secs + (size_t)n_res * (size_t)o.reps};
        if (o.depth > 0)
            snprintf(res[n_res].test, sizeof res[n_res].test, "tg%lld@d%lld", (long long)o.n_decode,
                     (long long)o.depth);
        else
            snprintf(res[n_res].test, sizeof res[n_res].test, "tg%lld", (long long)o.n_decode);
        n_res++;
    }
    if ((rc = qwen35_state_create_kv(m, n_ctx, MAX(o.n_ubatch, o.parallel), o.cache_type, &seqs[0])))
        goto done;
    /* the others only prefill the -d prompt on their own: a small micro-batch (less scratch) without it */
    for (int i = 1; i < o.parallel; i++)
        if ((rc = qwen35_state_create_kv(m, n_ctx, o.depth > 0 ? o.n_ubatch : 1, o.cache_type, &seqs[i])))
            goto done;
    /* The read rate before the tests and after them: a shared machine's rate can move within a
       run (on this project's 2-core VM the two threads' rate jumps between about 34 and 62 GB/s:
       docs/PERFORMANCE.md), and the two figures show when it did. 256 MiB: far past any last-level
       cache, so the reads come from DRAM as the weights' do. */
    struct roofline rf = {0};
    const bool roofline = o.n_decode > 0 && !strcmp(backend_name(be), "cpu") && file_bytes > 0;
    if (roofline)
        rf.before = bench_read_bandwidth(o.threads, (size_t)256 << 20, 5);
    if ((rc = run_tests(m, seqs, &o, res, n_res, prompt, logits)))
        goto done;
    if (roofline) {
        rf.after = bench_read_bandwidth(o.threads, (size_t)256 << 20, 5);
        rf.bandwidth = rf.before > 0 && rf.after > 0 ? MAX(rf.before, rf.after) : 0;
        /* the timed steps see depth + warm-up + 1 .. + n_decode tokens: their mean */
        rf.kv_tokens = o.depth + o.warmup + (o.n_decode + 1) / 2;
        rf.step_bytes = bench_decode_bytes(m, seqs[0], file_bytes, rf.kv_tokens);
        rf.ceiling = rf.bandwidth > 0 ? rf.bandwidth / (double)rf.step_bytes : 0;
    }
    print_results(&o, path, m, file_bytes, res, n_res, &rf);

done:
    for (int i = 0; i < o.parallel; i++)
        qwen35_state_free(seqs[i]);
    qwen35_free(m);
    if (be)
        backend_free(be);
    if (tmp_dir[0]) {
        remove(path);
        rmdir(tmp_dir);
    }
    free(secs);
    free(prompt);
    free(logits);
    if (rc)
        return cli_fail(rc);
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}
