/* Tests core/quant.c against llama.cpp's own definition of the GGUF block formats: gguf-py's numpy
   decoders (tests/oracle/ggml_dequant.py, from the llama.cpp source that npm node-llama-cpp ships).
   tests/core/quant.c checks the decoders against references written here from the layouts; this
   test closes the loop with code seer's authors did not write, so a misread layout cannot pass
   both. For Q8_0, Q4_0, Q4_K, Q5_K and Q6_K: random block bytes with random finite half scales
   (subnormal to 65504),
   and (Q8_0, Q4_K, Q5_K, Q6_K) the blocks seer's quantisers write for random rows; every element must be
   bit-identical to gguf-py's float32 result. Needs the npm oracle (npm install in tests/oracle)
   and python3-numpy: skipped visibly without them, failed when SEER_REQUIRE_ORACLES=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quant.h"
#include "core/tensor.h"
#include "quant_blocks.h"
#include "support/testutil.h"
#include "tap.h"

#define ORACLE_DIR SEER_SOURCE_DIR "/tests/oracle"
#define BUNDLE ORACLE_DIR "/node_modules/node-llama-cpp/llama/gitRelease.bundle"
#define N_BLOCKS 2048
/* A broken test environment (no memory, unwritable temp dir): stop the program, failing. */
#define BAIL(...) (printf("Bail out! " __VA_ARGS__), printf("\n"), exit(2))

/* gguf-py's decoding of `bytes` (n_blocks blocks of t) into out; false when the script fails. */
static bool oracle_dequant(enum dtype t, const uint8_t *bytes, size_t n_blocks, float *out, const char *tag)
{
    char in_path[600], out_path[600], cmd[2048];
    const size_t bb = dtype_info(t)->block_bytes, n = n_blocks * dtype_info(t)->block_elems;
    snprintf(in_path, sizeof in_path, "%s/%s.bin", test_tmp_dir(), tag);
    snprintf(out_path, sizeof out_path, "%s/%s.f32", test_tmp_dir(), tag);
    FILE *f = fopen(in_path, "wb");
    if (!f || fwrite(bytes, bb, n_blocks, f) != n_blocks || fclose(f) != 0)
        BAIL("cannot write %s", in_path);
    char name[16];
    snprintf(name, sizeof name, "%s", dtype_name(t));
    for (char *c = name; *c; c++) /* gguf-py's names: Q8_0, Q4_K */
        *c = *c == 'q' ? 'Q' : *c == 'k' ? 'K' : *c;
    snprintf(cmd, sizeof cmd, "python3 '%s/ggml_dequant.py' %s '%s' '%s'", ORACLE_DIR, name, in_path, out_path);
    if (system(cmd) != 0)
        return false;
    f = fopen(out_path, "rb");
    size_t got = f ? fread(out, sizeof *out, n, f) : 0;
    if (f)
        fclose(f);
    return got == n;
}

/* Elements whose bits differ between seer's and gguf-py's decoding of the same bytes. */
static size_t compare(enum dtype t, const uint8_t *bytes, size_t n_blocks, const char *tag, size_t *first)
{
    const size_t n = n_blocks * dtype_info(t)->block_elems;
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    size_t bad = (size_t)-1;
    if (!want || !got)
        BAIL("out of memory");
    if (oracle_dequant(t, bytes, n_blocks, want, tag)) {
        dequantize_row(t, bytes, got, (int64_t)n);
        bad = 0;
        for (size_t i = 0; i < n; i++)
            if (memcmp(&want[i], &got[i], 4)) {
                if (!bad)
                    *first = i, diag("%s element %zu: gguf-py %.9g, seer %.9g", tag, i, want[i], got[i]);
                bad++;
            }
    }
    free(want);
    free(got);
    return bad;
}

int main(void)
{
    plan_no_plan();
    test_seed();
    FILE *b = fopen(BUNDLE, "rb");
    if (!b) {
        const char *req = getenv("SEER_REQUIRE_ORACLES");
        const char *why = "llama.cpp source bundle missing (npm install --ignore-scripts --omit=optional in tests/oracle)";
        if (req && !strcmp(req, "1"))
            ok(0, "gguf-py oracle required (SEER_REQUIRE_ORACLES=1): %s", why);
        else
            skip(why, "seer's block decoders vs gguf-py");
        return done_testing();
    }
    fclose(b);

    static const enum dtype types[] = {DT_Q8_0, DT_Q4_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const enum dtype t = types[i];
        const size_t bb = dtype_info(t)->block_bytes;
        uint8_t *bytes = malloc(N_BLOCKS * bb);
        if (!bytes)
            BAIL("out of memory");
        quant_test_random_blocks(t, bytes, N_BLOCKS);
        char tag[32];
        snprintf(tag, sizeof tag, "random-%s", dtype_name(t));
        size_t first = 0, bad = compare(t, bytes, N_BLOCKS, tag, &first);
        ok(bad == 0, "%s: %d random blocks decode bit-identically to gguf-py (%zu elements differ)", dtype_name(t),
           N_BLOCKS, bad);
        free(bytes);
    }

    /* What seer's quantisers write must be what llama.cpp reads: quantise random rows with seer,
       decode with both. */
    static const enum dtype quantisers[] = {DT_Q8_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};
    const int64_t row = 4096, n_rows = 64;
    float *x = malloc((size_t)(row * n_rows) * sizeof *x);
    for (int64_t i = 0; x && i < row * n_rows; i++)
        x[i] = (float)test_randn() * (i % 97 == 0 ? 8.0f : 1.0f); /* outliers, as real weights have */
    for (size_t i = 0; x && i < sizeof quantisers / sizeof quantisers[0]; i++) {
        const enum dtype t = quantisers[i];
        const struct dtype_info *di = dtype_info(t);
        const size_t n_blocks = (size_t)(row * n_rows) / di->block_elems;
        uint8_t *bytes = malloc(n_blocks * di->block_bytes);
        if (!bytes)
            BAIL("out of memory");
        for (int64_t r = 0; r < n_rows; r++)
            quantize_row(t, x + r * row, bytes + (size_t)r * (size_t)(row / di->block_elems) * di->block_bytes, row);
        char tag[32];
        snprintf(tag, sizeof tag, "quantised-%s", dtype_name(t));
        size_t first = 0, bad = compare(t, bytes, n_blocks, tag, &first);
        ok(bad == 0, "%s: seer's quantiser output decodes bit-identically in gguf-py (%zu of %zu elements differ)",
           dtype_name(t), bad, n_blocks * di->block_elems);
        free(bytes);
    }
    free(x);
    return done_testing();
}
