/* Tests `seer bench` (tools/bench/bench.c) as a user runs it, on a tiny random model written by
   lm/randmodel.c: with a tiny prompt (-p 16 -n 4) it exits 0 and prints the table (model, shape,
   device, one line per test with positive tokens/s, peak RSS) on stdout and nothing but logs on
   stderr; --json prints exactly one JSON object with the same tests and fields; two prompt
   lengths give two prefill lines. A missing model exits 1 with stdout empty and one "seer: …"
   line naming it; usage errors exit 2. --parallel N times N sequences decoding together: the tg
   result counts N tokens per step. No timing is asserted (only that times are positive). */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm/randmodel.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static char model[700];

/* A test line "NAME tokens/s +- min max reps" with a positive rate and `reps` repetitions. */
static bool table_line(const char *out, const char *name, int reps)
{
    char key[40];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(out, key);
    double tps, sd, lo, hi;
    int n;
    return p && sscanf(p + strlen(key), "%lf %lf %lf %lf %d", &tps, &sd, &lo, &hi, &n) == 5 && tps > 0 && lo > 0 &&
           hi >= lo && n == reps;
}

static void test_table(void)
{
    char args[1200];
    snprintf(args, sizeof args, "bench -m '%s' --device cpu -t 2 -p 16 -n 4 --reps 2", model);
    struct test_run r = test_seer(args);
    ok(r.status == 0, "bench -p 16 -n 4: exit 0%s%s", r.status ? ", stderr: " : "", r.status ? r.err : "");
    ok(strstr(r.out, "model     ") && strstr(r.out, model) && strstr(r.out, "shape     qwen35, 4 layers, hidden 256") &&
       strstr(r.out, "q8_0 weights") && strstr(r.out, "device    cpu (2 threads)") && strstr(r.out, "peak RSS  ") &&
       table_line(r.out, "pp16", 2) && table_line(r.out, "tg4", 2),
       "the table names the model, shape, device, pp16 and tg4 with positive tokens/s over 2 reps, and peak RSS");
    ok(!strstr(r.err, "pp16") && !strstr(r.err, "tokens/s"), "stderr holds no results");
    if (r.status || !table_line(r.out, "pp16", 2))
        diag("stdout:\n%s\nstderr:\n%s", r.out, r.err);
    test_run_free(&r);

    snprintf(args, sizeof args, "-v bench -m '%s' -t 1 -p 8,24 -n 0 --reps 1", model);
    r = test_seer(args);
    ok(r.status == 0 && table_line(r.out, "pp8", 1) && table_line(r.out, "pp24", 1) && !strstr(r.out, "\ntg") &&
       strstr(r.err, "pp24 rep 1/1") && !strstr(r.out, "rep 1/1"),
       "-p 8,24 -n 0: two prefill lines, no decode line; -v progress goes to stderr only");
    test_run_free(&r);
}

static void test_json(void)
{
    char args[1200];
    snprintf(args, sizeof args, "bench -m '%s' --device cpu -t 2 -p 16 -n 4 --reps 1 --json", model);
    struct test_run r = test_seer(args);
    json_error_t err;
    json_t *j = r.status == 0 ? json_loads(r.out, 0, &err) : NULL; /* the whole of stdout is one value */
    ok(j && json_is_object(j), "--json: exit 0 and stdout is exactly one JSON object");
    json_t *res = json_object_get(j, "results");
    bool good = json_is_array(res) && json_array_size(res) == 2;
    const char *tests[2] = {"pp16", "tg4"}, *kinds[2] = {"prefill", "decode"};
    const int ntok[2] = {16, 4};
    for (size_t i = 0; good && i < 2; i++) {
        json_t *t = json_array_get(res, i);
        good = !strcmp(json_string_value(json_object_get(t, "test")), tests[i]) &&
               !strcmp(json_string_value(json_object_get(t, "kind")), kinds[i]) &&
               json_integer_value(json_object_get(t, "n_tokens")) == ntok[i] &&
               json_integer_value(json_object_get(t, "reps")) == 1 &&
               json_real_value(json_object_get(t, "tokens_per_s")) > 0 &&
               json_array_size(json_object_get(t, "seconds")) == 1 &&
               json_real_value(json_array_get(json_object_get(t, "seconds"), 0)) > 0;
    }
    ok(good && !strcmp(json_string_value(json_object_get(j, "model")), model) &&
       !strcmp(json_string_value(json_object_get(j, "weights")), "q8_0") &&
       json_integer_value(json_object_get(j, "n_layer")) == 4 && json_integer_value(json_object_get(j, "threads")) == 2 &&
       json_integer_value(json_object_get(j, "peak_rss_bytes")) > 0 &&
       json_integer_value(json_object_get(j, "file_bytes")) > 0,
       "--json: model, weights, shape, threads, peak_rss_bytes, and pp16/tg4 with tokens_per_s and seconds");
    if (!good)
        diag("stdout:\n%s\nstderr:\n%s", r.out, r.err);
    /* the roofline: a read rate no machine is below (100 MB/s), a step reading at least half the file
       (the weights, but for an untied embedding) and at most the file plus the recurrent state (a few
       MiB for this shape), and the ceiling their quotient */
    const double bw = json_number_value(json_object_get(j, "read_bandwidth_bytes_per_s")),
                 fb = (double)json_integer_value(json_object_get(j, "file_bytes")),
                 sb = (double)json_integer_value(json_object_get(j, "decode_step_bytes")),
                 ceil_tps = json_number_value(json_object_get(j, "decode_ceiling_tokens_per_s"));
    ok(bw > 1e8 && sb >= fb / 2 && sb <= fb + 64.0 * (1 << 20) && fabs(ceil_tps * sb - bw) <= 1e-6 * bw,
       "--json: read bandwidth %.2f GB/s, a decode step reads %.0f bytes of a %.0f-byte file, ceiling %.1f tokens/s",
       bw / 1e9, sb, fb, ceil_tps);
    /* the rate is measured before the tests and after them, and the ceiling takes the higher */
    const double before = json_number_value(json_object_get(j, "read_bandwidth_before_bytes_per_s")),
                 after = json_number_value(json_object_get(j, "read_bandwidth_after_bytes_per_s"));
    ok(before > 1e8 && after > 1e8 && bw == fmax(before, after),
       "--json: read bandwidth %.2f GB/s before the tests, %.2f after, and the ceiling's is the higher", before / 1e9,
       after / 1e9);
    /* The read loop's 256 MiB buffer is not the model's memory: a decode run's peak RSS is a
       prefill-only run's plus the decode state of this tiny model (well under 64 MiB). */
    const double rss_decode = (double)json_integer_value(json_object_get(j, "peak_rss_bytes"));
    json_decref(j);
    test_run_free(&r);
    snprintf(args, sizeof args, "bench -m '%s' --device cpu -t 2 -p 16 -n 0 --reps 1 --json", model);
    r = test_seer(args);
    j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    const double rss_prefill = (double)json_integer_value(json_object_get(j, "peak_rss_bytes"));
    ok(rss_prefill > 0 && !json_object_get(j, "read_bandwidth_bytes_per_s") &&
           fabs(rss_decode - rss_prefill) < 64.0 * (1 << 20),
       "--json: peak RSS %.1f MiB with a decode test, %.1f MiB without (no read loop): the read loop's buffer is not "
       "counted",
       rss_decode / (1 << 20), rss_prefill / (1 << 20));
    json_decref(j);
    test_run_free(&r);
}

/* decode_step_bytes of `-n 4 --json` runs after `depth` prompt tokens, in cache type ct; 0 on failure */
static double step_bytes_at(int depth, const char *ct)
{
    char args[1200];
    snprintf(args, sizeof args, "bench -m '%s' --device cpu -t 1 -p 0 -n 4 --reps 1 -d %d --cache-type %s --json", model,
             depth, ct);
    struct test_run r = test_seer(args);
    json_t *j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    const double sb = (double)json_integer_value(json_object_get(j, "decode_step_bytes"));
    json_decref(j);
    test_run_free(&r);
    return sb;
}

/* A step at depth d also reads the K and V rows of the d tokens cached before it: the tiny model's 2
   attention layers of 1 kv head of 128 hold 2·2·128·2 = 1,024 bytes a token in f16, 2·2·(4·34) = 544
   in q8_0 (4 blocks of 34 bytes per row). */
static void test_depth_bytes(void)
{
    const struct {
        const char *ct;
        double per_token;
    } cases[] = {{"f16", 1024}, {"q8_0", 544}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double b0 = step_bytes_at(0, cases[i].ct), b40 = step_bytes_at(40, cases[i].ct);
        ok(b0 > 0 && b40 - b0 == 40 * cases[i].per_token,
           "--json -d 40 --cache-type %s: a decode step reads %.0f bytes more than at -d 0 (want 40 x %.0f)", cases[i].ct,
           b40 - b0, cases[i].per_token);
    }
}

/* --parallel 3: one decode result of 3 × 5 tokens whose rate is those tokens over each timed
   repetition's seconds; the table says parallel 3; with -d each sequence first takes the prompt. */
static void test_parallel(void)
{
    char args[1200];
    snprintf(args, sizeof args, "-v bench -m '%s' --device cpu -t 2 -p 0 -n 5 --reps 2 --parallel 3 --json", model);
    struct test_run r = test_seer(args);
    json_t *j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    json_t *res = json_object_get(j, "results"), *t = json_array_get(res, 0), *secs = json_object_get(t, "seconds");
    double want = 0; /* the mean of tokens / seconds over the repetitions */
    for (size_t i = 0; i < json_array_size(secs); i++)
        want += 15.0 / json_real_value(json_array_get(secs, i)) / 2;
    const double got = json_real_value(json_object_get(t, "tokens_per_s"));
    ok(j && json_integer_value(json_object_get(j, "parallel")) == 3 && json_array_size(res) == 1 &&
           !strcmp(json_string_value(json_object_get(t, "test")), "tg5") &&
           json_integer_value(json_object_get(t, "n_tokens")) == 15 && json_array_size(secs) == 2 && got > 0 &&
           /* 1 %: the seconds are printed to 1 µs of a few ms; a wrong count is off by 3× */
           fabs(got - want) <= 1e-2 * want,
       "--parallel 3 -n 5: \"parallel\": 3, tg5 counts 15 tokens, tokens_per_s %.3f = 15 / seconds (%.3f)", got,
       want);
    ok(r.status == 0 && strstr(r.err, "(3 sequences)"), "-v: each repetition says it decoded 3 sequences");
    if (!j)
        diag("stdout:\n%s\nstderr:\n%s", r.out, r.err);
    json_decref(j);
    test_run_free(&r);

    snprintf(args, sizeof args, "bench -m '%s' --device cpu -t 1 -p 0 -n 3 -d 7 --reps 1 --parallel 2", model);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.out, ", parallel 2\n") && table_line(r.out, "tg3@d7", 1),
       "--parallel 2 -d 7: the table says parallel 2 and times tg3@d7 %s", r.status ? r.err : "");
    test_run_free(&r);
}

/* $SEER_DEVICE picks the device when --device is absent; here the Vulkan backend (lavapipe in CI). */
static void test_vulkan(void)
{
    char args[1200];
    snprintf(args, sizeof args, "SEER_DEVICE=vulkan %s/seer bench -m '%s' -p 16 -n 2 --reps 1 --json", SEER_BINARY_DIR,
             model);
    struct test_run r = test_run_cmd(args);
    const char *req = getenv("SEER_REQUIRE_VULKAN");
    if (r.status != 0 && strstr(r.err, "no Vulkan device") && !(req && !strcmp(req, "1"))) {
        skip("no Vulkan device on this machine", "SEER_DEVICE=vulkan seer bench");
        test_run_free(&r);
        return;
    }
    json_t *j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    const char *dev = json_string_value(json_object_get(j, "device"));
    json_t *res = json_object_get(j, "results");
    ok(dev && !strncmp(dev, "vulkan", 6) && json_array_size(res) == 2 &&
           json_real_value(json_object_get(json_array_get(res, 1), "tokens_per_s")) > 0,
       "SEER_DEVICE=vulkan: bench runs on the Vulkan backend (%s), pp16 and tg2 timed", dev ? dev : r.err);
    json_decref(j);
    test_run_free(&r);
}

/* --tokenizer: the built-in text has the asked size (to within one sample), and on a file it counts
   exactly the tokens `seer tokenize` gives for that file. */
static void test_tokenizer(void)
{
    char args[2400], path[800];
    snprintf(args, sizeof args, "bench --tokenizer -m '%s' --size 65536 --reps 2 --json", model);
    struct test_run r = test_seer(args);
    json_t *j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    json_int_t bytes = json_integer_value(json_object_get(j, "bytes"));
    ok(j && bytes > 65536 - 200 && bytes <= 65536 && json_integer_value(json_object_get(j, "tokens")) > 0 &&
           json_real_value(json_object_get(j, "mib_per_second")) > 0 && json_integer_value(json_object_get(j, "reps")) == 2,
       "--tokenizer --size 65536: one JSON object, %lld bytes encoded, tokens and MiB/s reported", (long long)bytes);
    if (!j)
        diag("stdout:\n%s\nstderr:\n%s", r.out, r.err);
    json_decref(j);
    test_run_free(&r);

    snprintf(path, sizeof path, "%s/text.txt", test_tmp_dir());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("Hello, world! 12345 \xc3\xa9t\xc3\xa9\n  indented\ttabs\r\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "bench --tokenizer -m '%s' -f '%s' --reps 1 --json", model, path);
    r = test_seer(args);
    j = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    test_run_free(&r);
    snprintf(args, sizeof args, "tokenize -m '%s' -f '%s' --json", model, path);
    r = test_seer(args);
    json_t *ids = r.status == 0 ? json_loads(r.out, 0, NULL) : NULL;
    ok(j && ids && json_integer_value(json_object_get(j, "tokens")) == (json_int_t)json_array_size(ids) &&
           json_integer_value(json_object_get(j, "bytes")) == 43,
       "--tokenizer -f FILE: the same token count as seer tokenize (%zu)", json_array_size(ids));
    json_decref(j), json_decref(ids);
    test_run_free(&r);
}

static void test_errors(void)
{
    char args[1200], missing[800];
    snprintf(missing, sizeof missing, "%s/missing.gguf", test_tmp_dir());
    snprintf(args, sizeof args, "bench -m '%s' -p 16 -n 4", missing);
    struct test_run r = test_seer(args);
    ok(r.status == 1 && !*r.out && test_count_lines(r.err) == 1 && !strncmp(r.err, "seer: ", 6) &&
       strstr(r.err, missing), "a missing model: exit 1, stdout empty, one stderr line naming it: %s", r.err);
    test_run_free(&r);
    static const char *const bad[] = {
        "bench", "bench -m a.gguf --preset 0.8b", "bench -m a.gguf -p x", "bench -m a.gguf -n -1",
        "bench -m a.gguf --frobnicate", "bench -m a.gguf -t 0", "bench -m a.gguf -o out.gguf",
        "bench --preset 0.8b --dtype q6_k", "bench -m a.gguf --parallel 0", "bench -m a.gguf --parallel 65",
        "bench -m a.gguf --parallel x",
    };
    int n_ok = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = test_seer(bad[i]);
        n_ok += r.status == 2 && !*r.out && *r.err;
        if (r.status != 2)
            diag("'%s' exited %d", bad[i], r.status);
        test_run_free(&r);
    }
    ok(n_ok == (int)(sizeof bad / sizeof bad[0]), "%d usage errors exit 2 with usage on stderr, stdout empty",
       (int)(sizeof bad / sizeof bad[0]));
    r = test_seer("bench --preset 7b -p 0 -n 0");
    ok(r.status == 2 && !*r.out && strstr(r.err, "0.8b|2b|4b|9b"),
       "an unknown preset is a usage error: exit 2 naming the valid ones");
    test_run_free(&r);
    r = test_seer("bench --help");
    ok(r.status == 0 && strstr(r.out, "--preset") && !*r.err, "--help: usage on stdout, exit 0");
    test_run_free(&r);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    snprintf(model, sizeof model, "%s/tiny-q8_0.gguf", test_tmp_dir());
    /* 4 layers (two of each mixer), hidden 256, a 384-token vocabulary with its tokenizer */
    const struct randmodel_shape s = {
        .n_layer = 4, .n_embd = 256, .n_ff = 512, .n_head = 2, .n_head_kv = 1, .head_dim = 128,
        .ssm_n_k_heads = 2, .ssm_n_v_heads = 4, .ssm_d_state = 64, .ssm_conv_kernel = 4,
        .n_vocab = 384, .n_bpe_tokens = 300, .full_attention_interval = 2, .n_rot = 32,
        .sections = {6, 5, 5}, .tie = true,
    };
    const struct randmodel_params p = {.wtype = DT_Q8_0, .seed = test_rand_u64(), .n_threads = 2};
    if (randmodel_write(model, &s, &p) != SEER_OK) {
        ok(0, "writing the tiny model: %s", seer_last_error());
        return done_testing();
    }
    test_table();
    test_json();
    test_depth_bytes();
    test_parallel();
    test_vulkan();
    test_tokenizer();
    test_errors();
    return done_testing();
}
