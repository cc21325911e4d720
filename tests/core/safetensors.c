/* Tests core/safetensors.c: single files (F32/F16/BF16, shapes reversed to ne order, rank 0 and
   rank 5 folding, __metadata__ ignored, data read through the mapping), every truncation, corrupt
   headers (length past the file, bad JSON, bad offsets, size mismatch, unknown dtypes, misaligned
   data, duplicates), sharded checkpoints (index, missing shard file, name in two shards, name
   missing from its shard) and the model-directory opener; allocation and I/O failures injected.
   Each failure must give the right code and one line naming the file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/io.h"
#include "core/safetensors.h"
#include "core/util.h"
#include "support/gguf_write.h"
#include "support/testutil.h"
#include "tap.h"

static const char *tmp(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", test_tmp_dir(), name);
    return buf[k];
}

static bool good_msg(const char *path, const char *needle)
{
    const char *m = seer_last_error();
    return strstr(m, path) && !strchr(m, '\n') && (!needle || strstr(m, needle));
}

/* path is what is opened; `named` is the file the message must name (a shard may be at fault). */
static void expect_err_at(int (*open_fn)(const char *, safetensors **), const char *path, const char *named, int want,
                          const char *needle, const char *what)
{
    safetensors *st = NULL;
    seer_err_clear();
    int rc = open_fn(path, &st);
    ok(rc == want && st == NULL && good_msg(named, needle), "%s -> %s: %s", what, seer_strerror(want),
       seer_last_error());
    safetensors_free(st);
}

static void expect_err(const char *path, int want, const char *needle, const char *what)
{
    expect_err_at(safetensors_open, path, path, want, needle, what);
}

/* Raw header (padded with spaces to a multiple of 8, so the data section starts aligned) + data_len
   bytes of pattern data. */
static void raw(const char *path, const char *header, size_t data_len)
{
    uint8_t data[256];
    char h[1024];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 5 + 1);
    snprintf(h, sizeof h - 8, "%s", header);
    while (strlen(h) % 8)
        strcat(h, " ");
    st_write_raw(path, strlen(h), h, data, data_len);
}

static void test_valid(void)
{
    float a[3 * 5];
    uint16_t h[7], b[2 * 3 * 2 * 4 * 4];
    for (size_t i = 0; i < ARRAY_LEN(a); i++)
        a[i] = test_randf(1, 2);
    for (size_t i = 0; i < ARRAY_LEN(h); i++)
        h[i] = (uint16_t)(test_rand_u64() | 1);
    for (size_t i = 0; i < ARRAY_LEN(b); i++)
        b[i] = (uint16_t)(test_rand_u64() | 1);
    float scalar = 3.5f;
    const struct st_entry e[] = {
        {"w.f32", "F32", 2, {5, 3}, a},
        {"w.f16", "F16", 1, {7}, h},
        {"w.conv3d", "BF16", 5, {2, 3, 2, 4, 4}, b},
        {"w.scalar", "F32", 0, {0}, &scalar},
    };
    const char *path = tmp("valid.safetensors");
    st_write(path, e, 4);
    safetensors *st = NULL;
    if (!ok(safetensors_open(path, &st) == SEER_OK, "valid file opens: %s", seer_last_error()))
        return;
    ok(safetensors_n_tensors(st) == 4 && safetensors_n_files(st) == 1 && !strcmp(safetensors_path(st), path),
       "4 tensors, 1 file (__metadata__ ignored)");
    int64_t i = safetensors_find(st, "w.f32");
    const tensor *t = i >= 0 ? safetensors_tensor(st, i) : NULL;
    ok(t && t->type == DT_F32 && t->ne[0] == 3 && t->ne[1] == 5 && t->ne[2] == 1 && !memcmp(t->data, a, sizeof a),
       "F32 [5, 3] -> ne {3, 5}, data through the mapping");
    i = safetensors_find(st, "w.f16");
    t = i >= 0 ? safetensors_tensor(st, i) : NULL;
    ok(t && t->type == DT_F16 && t->ne[0] == 7 && t->ne[1] == 1 && !memcmp(t->data, h, sizeof h), "F16 [7]");
    i = safetensors_find(st, "w.conv3d");
    t = i >= 0 ? safetensors_tensor(st, i) : NULL;
    int64_t shape[SAFETENSORS_MAX_DIMS];
    int rank = i >= 0 ? safetensors_tensor_shape(st, i, shape) : -1;
    ok(t && t->type == DT_BF16 && t->ne[0] == 16 && t->ne[1] == 2 && t->ne[2] == 3 && t->ne[3] == 2 &&
           tensor_nbytes(t) == sizeof b && !memcmp(t->data, b, sizeof b),
       "BF16 rank 5 [2,3,2,4,4] folds to ne {16, 2, 3, 2}");
    ok(rank == 5 && shape[0] == 2 && shape[4] == 4, "stored shape stays [2, 3, 2, 4, 4]");
    i = safetensors_find(st, "w.scalar");
    t = i >= 0 ? safetensors_tensor(st, i) : NULL;
    ok(t && t->ne[0] == 1 && safetensors_tensor_shape(st, i, shape) == 0 && *(const float *)t->data == 3.5f,
       "rank 0 -> ne {1}");
    ok(safetensors_find(st, "w.f3") < 0 && safetensors_find(st, "__metadata__") < 0, "absent names are -1");
    ok(!strcmp(safetensors_tensor_file(st, 0), path), "tensor_file names the file");
    safetensors_free(st);
    safetensors_free(NULL);

    /* every truncation of this file fails cleanly */
    FILE *fp = fopen(path, "rb");
    uint8_t buf[4096];
    size_t full = fp ? fread(buf, 1, sizeof buf, fp) : 0;
    if (fp)
        fclose(fp);
    size_t bad = 0;
    for (size_t len = 0; len < full; len++) {
        write_file(tmp("trunc.safetensors"), buf, len);
        st = NULL;
        int rc = safetensors_open(tmp("trunc.safetensors"), &st);
        if (rc != SEER_EFORMAT || st || !good_msg(tmp("trunc.safetensors"), NULL)) {
            if (bad++ < 3)
                diag("prefix %zu: rc %d: %s", len, rc, seer_last_error());
            safetensors_free(st);
        }
    }
    ok(full > 100 && bad == 0, "all %zu truncations are EFORMAT naming the file", full);
}

static void test_corrupt(void)
{
    const char *p = tmp("bad.safetensors");
    write_file(p, "\x10\0\0", 3);
    expect_err(p, SEER_EFORMAT, "too short", "file shorter than the 8-byte length");
    st_write_raw(p, 1000, "{}", NULL, 0);
    expect_err(p, SEER_EFORMAT, "header length 1000 runs past", "header length beyond the file");
    st_write_raw(p, UINT64_MAX, "{}", NULL, 0);
    expect_err(p, SEER_EFORMAT, "runs past", "header length 2^64-1 (no wrap-around)");
    raw(p, "{\"a\": {\"dtype\": \"F32\",", 0);
    expect_err(p, SEER_EFORMAT, "bad JSON header", "truncated JSON");
    raw(p, "[1, 2]", 0);
    expect_err(p, SEER_EFORMAT, "not an object", "JSON header is an array");
    raw(p, "{\"a\": 5}", 0);
    expect_err(p, SEER_EFORMAT, "tensor 'a'", "entry is not an object");
    raw(p, "{\"a\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "\"dtype\"", "missing dtype");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "\"shape\"", "missing shape");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 4);
    expect_err(p, SEER_EFORMAT, "data_offsets", "data_offsets with one entry");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", 16);
    expect_err(p, SEER_EFORMAT, "[8, 4]", "begin > end");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 4);
    expect_err(p, SEER_EFORMAT, "outside the 4-byte data section", "end past the data section");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 12]}}", 16);
    expect_err(p, SEER_EFORMAT, "span 12 bytes but its shape and dtype need 8", "size mismatch");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [-8, 0]}}", 16);
    expect_err(p, SEER_EFORMAT, "non-negative", "negative offset");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 18446744073709551615]}}", 16);
    expect_err(p, SEER_EFORMAT, "JSON", "offset 2^64-1 (beyond JSON integers)");
    raw(p, "{\"emb\": {\"dtype\": \"I64\", \"shape\": [2], \"data_offsets\": [0, 16]}}", 16);
    expect_err(p, SEER_EUNSUPPORTED, "tensor 'emb' has dtype I64", "dtype I64");
    raw(p, "{\"q\": {\"dtype\": \"F8_E4M3\", \"shape\": [2], \"data_offsets\": [0, 2]}}", 16);
    expect_err(p, SEER_EUNSUPPORTED, "dtype F8_E4M3", "dtype F8_E4M3");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [2, 6]}}", 16);
    expect_err(p, SEER_EUNSUPPORTED, "not aligned", "misaligned F32 data");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [3, 0], \"data_offsets\": [0, 0]}}", 0);
    expect_err(p, SEER_EUNSUPPORTED, "empty", "zero dimension");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EUNSUPPORTED, "9 dimensions", "rank 9");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "overflows", "shape product overflows");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2.5], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "shape entry 0", "fractional dimension");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
           " \"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", 8);
    expect_err(p, SEER_EFORMAT, "duplicate", "duplicate tensor names in one header");
    raw(p, "{\"\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "length 0", "empty tensor name");
    raw(p, "{\"a\\nb\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4);
    expect_err(p, SEER_EFORMAT, "'a?b' contains a control character", "newline in a tensor name");
    expect_err(tmp("nope.safetensors"), SEER_EIO, "cannot open", "missing file");
    /* issue 12: aliasing tensors, and a size message whose product wrapped to 0 */
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
           " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 8);
    expect_err(p, SEER_EFORMAT, "overlap", "two tensors at the same bytes");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
           " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [12, 20]}}", 20);
    expect_err(p, SEER_EFORMAT, "tensors 'a' and 'b' overlap", "a tensor starting inside another");
    raw(p, "{\"a\": {\"dtype\": \"F32\", \"shape\": [4611686018427387904], \"data_offsets\": [0, 16]}}", 16);
    expect_err(p, SEER_EFORMAT, "4611686018427387904 elements of 4 bytes overflow", "shape [2^62] of F32: no wrapped number");
}

/* An index naming n distinct shard files (none of which exists) for n tensors. */
static void write_wide_index(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return; /* the open then fails with SEER_EIO, and the check below reports it */
    fputs("{\"weight_map\": {", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, i);
    fputs("}}", f);
    fclose(f);
}

static double index_time(const char *path, int *rc)
{
    double best = 1e9;
    for (int k = 0; k < 3; k++) {
        safetensors *st = NULL;
        double t0 = test_cpu_seconds();
        *rc = safetensors_open_index(path, &st);
        best = MIN(best, test_cpu_seconds() - t0);
        safetensors_free(st);
    }
    return best;
}

/* issue 12: 80,000 distinct shards took 28 s (a quadratic de-duplication ran before the shard
   limit). Now the limit is met before any file is opened, and finding the shards is linear: ten
   times the names take about ten times as long (the factor allowed, 40, catches the quadratic
   100 with room for a loaded machine). */
static void test_wide_index(void)
{
    const char *big = tmp("wide.index.json"), *small = tmp("narrow.index.json"), *over = tmp("over.index.json");
    write_wide_index(over, SAFETENSORS_MAX_SHARDS + 1);
    expect_err_at(safetensors_open_index, over, over, SEER_EFORMAT, "more than 65536 shard files (SAFETENSORS_MAX_SHARDS)",
                  "an index naming 65,537 shard files is refused before opening any");
    write_wide_index(big, 60000);
    write_wide_index(small, 6000);
    int rc_big, rc_small;
    double t_big = index_time(big, &rc_big), t_small = index_time(small, &rc_small);
    ok(rc_big == SEER_EIO && rc_small == SEER_EIO && t_big < 40 * t_small + 0.05,
       "60,000 distinct shards: %.3f s to reach the first missing shard, 6,000: %.3f s", t_big, t_small);
}

static void test_sharded(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sharded", test_tmp_dir());
    mkdir(dir, 0755);
    char s1[600], s2[600], idx[600];
    snprintf(s1, sizeof s1, "%s/model-00001-of-00002.safetensors", dir);
    snprintf(s2, sizeof s2, "%s/model-00002-of-00002.safetensors", dir);
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", dir);
    const struct st_entry e1[] = {{"x", "F32", 2, {2, 3}, NULL}, {"y", "BF16", 1, {5}, NULL}};
    const struct st_entry e2[] = {{"z", "F16", 3, {1, 2, 3}, NULL}};
    st_write(s1, e1, 2);
    st_write(s2, e2, 1);
    const char *good_index = "{\"metadata\": {\"total_size\": 46}, \"weight_map\": {"
                             "\"x\": \"model-00001-of-00002.safetensors\", \"y\": \"model-00001-of-00002.safetensors\","
                             "\"z\": \"model-00002-of-00002.safetensors\"}}";
    write_text(idx, good_index);
    safetensors *st = NULL;
    int rc = safetensors_open_index(idx, &st);
    ok(rc == SEER_OK && safetensors_n_tensors(st) == 3 && safetensors_n_files(st) == 2, "index: 3 tensors in 2 shards");
    if (st) {
        int64_t z = safetensors_find(st, "z");
        ok(z >= 0 && !strcmp(safetensors_tensor_file(st, z), s2) && safetensors_tensor(st, z)->ne[0] == 3 &&
               safetensors_tensor(st, z)->ne[2] == 1,
           "z comes from shard 2 with ne {3, 2, 1}");
        safetensors_free(st);
    }
    st = NULL;
    ok(safetensors_open_dir(dir, &st) == SEER_OK && safetensors_n_tensors(st) == 3, "directory opener uses the index");
    safetensors_free(st);

    write_text(idx, "{\"weight_map\": {\"x\": \"model-00001-of-00002.safetensors\", \"z\": \"model-00003.safetensors\"}}");
    expect_err_at(safetensors_open_index, idx, "model-00003.safetensors", SEER_EIO, "cannot open",
                  "index names a missing shard file");
    write_text(idx, "{\"weight_map\": {\"x\": \"model-00002-of-00002.safetensors\", \"z\": \"model-00002-of-00002.safetensors\"}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "tensor 'x' is listed for shard model-00002",
                  "name missing from the shard that the index names");
    write_text(idx, "{\"weight_map\": {\"x\": \"model-00001-of-00002.safetensors\", \"w\": \"model-00001-of-00002.safetensors\"}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "'w' is listed", "index entry absent from every shard");
    write_text(idx, "{\"weight_map\": {\"x\": \"../model-00001-of-00002.safetensors\"}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "plain file name", "shard path escaping the directory");
    write_text(idx, "{\"metadata\": {}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "weight_map", "index without weight_map");
    write_text(idx, "{\"weight_map\": {}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "no tensors", "empty weight_map");
    write_text(idx, "{\"weight_map\": ");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "bad JSON", "index with bad JSON");
    write_text(idx, "{\"weight_map\": {\"x\": 3}}");
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "'x'", "weight_map value not a string");
    /* the same name in both shards */
    const struct st_entry e2dup[] = {{"z", "F16", 1, {4}, NULL}, {"y", "F32", 1, {2}, NULL}};
    st_write(s2, e2dup, 2);
    write_text(idx, good_index);
    expect_err_at(safetensors_open_index, idx, idx, SEER_EFORMAT, "tensor 'y' appears in both",
                  "a name in two shards");
    expect_err_at(safetensors_open_dir, dir, dir, SEER_EFORMAT, "appears in both", "same, through the directory");

    char empty[512];
    snprintf(empty, sizeof empty, "%s/empty", test_tmp_dir());
    mkdir(empty, 0755);
    expect_err_at(safetensors_open_dir, empty, empty, SEER_EIO, "no model.safetensors", "directory without weights");
    char single[600];
    snprintf(single, sizeof single, "%s/model.safetensors", empty);
    st_write(single, e1, 2);
    st = NULL;
    ok(safetensors_open_dir(empty, &st) == SEER_OK && safetensors_n_tensors(st) == 2,
       "directory opener uses model.safetensors");
    safetensors_free(st);
}

/* Random byte changes in the header (fresh seed each run): a file either opens with every tensor
   inside the data section, or is refused with a one-line message naming it. */
static void test_random_corruption(void)
{
    const struct st_entry e[] = {{"x", "F32", 2, {2, 3}, NULL}, {"y", "BF16", 1, {5}, NULL}, {"z", "F16", 1, {1}, NULL}};
    const char *path = tmp("fuzz.safetensors");
    st_write(path, e, 3);
    FILE *fp = fopen(path, "rb");
    uint8_t orig[2048];
    size_t len = fp ? fread(orig, 1, sizeof orig, fp) : 0;
    if (fp)
        fclose(fp);
    uint64_t hlen;
    memcpy(&hlen, orig, 8);
    int opened = 0, failed = 0, bad = 0;
    for (int it = 0; it < 400; it++) {
        uint8_t buf[2048];
        memcpy(buf, orig, len);
        int n_flips = 1 + (int)(test_rand_u64() % 3);
        for (int k = 0; k < n_flips; k++) {
            size_t at = (size_t)(test_rand_u64() % (8 + hlen));
            /* mostly JSON-ish characters, so the parser gets past the first byte often */
            static const char pool[] = "0123456789[]{},:\"-. eEFBI";
            buf[at] = test_rand_u64() % 4 ? (uint8_t)pool[test_rand_u64() % (sizeof pool - 1)]
                                          : (uint8_t)(test_rand_u64() >> 56);
        }
        write_file(path, buf, len);
        safetensors *st = NULL;
        int rc = safetensors_open(path, &st);
        if (rc == SEER_OK) {
            opened++;
            const uint8_t *lo = NULL, *hi = NULL;
            for (int64_t i = 0; i < safetensors_n_tensors(st); i++) {
                const tensor *t = safetensors_tensor(st, i);
                const uint8_t *a = t->data, *b = a + tensor_nbytes(t);
                lo = !lo || a < lo ? a : lo;
                hi = !hi || b > hi ? b : hi;
            }
            bad += lo && (size_t)(hi - lo) > len;
            safetensors_free(st);
        } else {
            failed++;
            bad += st != NULL || !good_msg(path, NULL);
        }
    }
    ok(len > 0 && bad == 0, "400 random header corruptions: %d opened consistently, %d refused with a message", opened,
       failed);
}

static void test_injection(void)
{
    const char *path = tmp("inject.safetensors");
    const struct st_entry e[] = {{"x", "F32", 2, {2, 3}, NULL}, {"y", "BF16", 1, {5}, NULL}, {"z", "F16", 1, {1}, NULL}};
    st_write(path, e, 3);
    int n_nomem = 0, bad = 0;
    long n;
    for (n = 1; n < 200; n++) {
        safetensors *st = NULL;
        seer_alloc_fail_after(n);
        int rc = safetensors_open(path, &st);
        seer_alloc_fail_after(0);
        if (rc == SEER_OK) {
            safetensors_free(st);
            break;
        }
        n_nomem++;
        bad += rc != SEER_ENOMEM || st || !good_msg(path, "out of memory");
    }
    ok(n_nomem >= 3 && bad == 0 && n < 200, "each of the first %d allocations failing gives ENOMEM, then it opens",
       n_nomem);
    int io_bad = 0;
    for (long k = 1; k <= 3; k++) {
        safetensors *st = NULL;
        io_fail_after(k);
        int rc = safetensors_open(path, &st);
        io_fail_after(0);
        io_bad += rc != SEER_EIO || st || !good_msg(path, "Input/output error");
        safetensors_free(st);
    }
    ok(io_bad == 0, "failing open, fstat or mmap gives EIO naming the file");
    /* index read failures (open, fstat, read of the JSON) */
    char dir[512], idx[600], s1[600];
    snprintf(dir, sizeof dir, "%s/inj", test_tmp_dir());
    mkdir(dir, 0755);
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", dir);
    snprintf(s1, sizeof s1, "%s/a.safetensors", dir);
    st_write(s1, e, 3);
    write_text(idx, "{\"weight_map\": {\"x\": \"a.safetensors\", \"y\": \"a.safetensors\"}}");
    io_bad = 0;
    /* index: open, fstat (its size, checked before reading), open, fstat, read; shard: open, fstat, mmap */
    for (long k = 1; k <= 8; k++) {
        safetensors *st = NULL;
        io_fail_after(k);
        int rc = safetensors_open_index(idx, &st);
        io_fail_after(0);
        io_bad += rc != SEER_EIO || st || !good_msg(k <= 5 ? idx : s1, "Input/output error");
        safetensors_free(st);
    }
    ok(io_bad == 0, "failing each system call of a sharded open gives EIO naming the right file");
}

int main(void)
{
    plan_no_plan();
    test_seed();
    test_valid();
    test_corrupt();
    test_sharded();
    test_wide_index();
    test_random_corruption();
    test_injection();
    return done_testing();
}
