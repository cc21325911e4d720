/* Tests core/gguf_write.c through core/gguf.h's reader: metadata of every value type (and arrays
   of each, strings with odd bytes, empty arrays) and tensors of every storable dtype with 1–4
   dims, random contents written in uneven pieces, at the default and a custom alignment, read back
   exactly (values, shapes, types, aligned offsets, bytes, file size). Then the atomic-write
   contract: a failing write(2) at every step, failed allocations, an unwritable directory,
   finishing early, writing past a tensor, and freeing an unfinished writer all leave no output
   file and no temporary file, and an existing file keeps its old contents until finish. Misuse
   (duplicate keys/tensors, bad shapes and alignments) is refused without breaking the writer.
   gguf_writer_kv_bytes (what the tests' own GGUF builder takes its values from) byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/gguf.h"
#include "core/gguf_write.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

static char dir[512];

/* Tensor "a" of the small test file: 6 MB, more than the writer's 4 MiB buffer, so a good run
   makes several write(2) calls (header, the big tensor directly, the buffered rest). */
#define A_ELEMS 1500000
static uint8_t zeros[A_ELEMS * 4 + 1];

static const char *path_in(const char *d, const char *name)
{
    static char buf[8][700];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", d, name);
    return buf[k];
}

/* Entries in directory d (not counting . and ..). */
static int dir_entries(const char *d)
{
    DIR *dp = opendir(d);
    int n = 0;
    if (!dp)
        return -1;
    for (struct dirent *e; (e = readdir(dp));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dp);
    return n;
}

/* ---- round trip ---------------------------------------------------------------------------- */

#define N_T 8
struct tcase {
    const char *name;
    enum dtype type;
    int n_dims;
    int64_t ne[4];
    uint8_t *bytes;
    size_t n;
};

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)test_rand_u64();
}

/* Tensors of every dtype the writer stores, 1–4 dims, awkward sizes. */
static void make_tensors(struct tcase *t)
{
    const struct tcase tpl[N_T] = {
        {"f32.vec", DT_F32, 1, {7, 1, 1, 1}, NULL, 0},
        {"f16.mat", DT_F16, 2, {37, 3, 1, 1}, NULL, 0},
        {"bf16.cube", DT_BF16, 3, {5, 2, 3, 1}, NULL, 0},
        {"q8_0.mat", DT_Q8_0, 2, {96, 5, 1, 1}, NULL, 0},
        {"q4_0.mat", DT_Q4_0, 2, {64, 3, 1, 1}, NULL, 0},
        {"q4_K.4d", DT_Q4_K, 4, {256, 2, 1, 2}, NULL, 0},
        {"q5_K.mat", DT_Q5_K, 2, {512, 1, 1, 1}, NULL, 0},
        {"q6_K.mat", DT_Q6_K, 2, {256, 3, 1, 1}, NULL, 0},
    };
    for (int i = 0; i < N_T; i++) {
        t[i] = tpl[i];
        tensor d;
        tensor_init(&d, t[i].type, t[i].n_dims, t[i].ne);
        t[i].n = tensor_nbytes(&d);
        t[i].bytes = malloc(t[i].n);
        fill_random(t[i].bytes, t[i].n);
    }
}

/* Every metadata type, with values at the edges of their ranges. */
static int add_metadata(gguf_writer *w)
{
    const uint8_t u8 = 255;
    const int8_t i8 = -128;
    const uint16_t u16 = 65535;
    const int16_t i16 = -32768;
    const int64_t i64 = INT64_MIN + 1;
    const double f64 = -1.5e300;
    const int32_t arr_i32[5] = {-1, 0, 1, INT32_MAX, INT32_MIN};
    const uint64_t arr_u64[2] = {0, UINT64_MAX};
    const float arr_f32[3] = {1.5f, -0.0f, 3e38f};
    const bool arr_b[4] = {true, false, false, true};
    const char *strs[4] = {"a", "", "héllo wörld", "<|im_end|>"};
    const char odd[5] = {'x', '\0', 'y', '\n', 'z'};
    int rc;
    if ((rc = gguf_writer_add_str(w, "general.architecture", "test")) ||
        (rc = gguf_writer_add_scalar(w, "t.u8", GGUF_TYPE_UINT8, &u8)) ||
        (rc = gguf_writer_add_scalar(w, "t.i8", GGUF_TYPE_INT8, &i8)) ||
        (rc = gguf_writer_add_scalar(w, "t.u16", GGUF_TYPE_UINT16, &u16)) ||
        (rc = gguf_writer_add_scalar(w, "t.i16", GGUF_TYPE_INT16, &i16)) ||
        (rc = gguf_writer_add_u32(w, "t.u32", 4000000000u)) || (rc = gguf_writer_add_i32(w, "t.i32", -7)) ||
        (rc = gguf_writer_add_u64(w, "t.u64", UINT64_MAX)) ||
        (rc = gguf_writer_add_scalar(w, "t.i64", GGUF_TYPE_INT64, &i64)) ||
        (rc = gguf_writer_add_f32(w, "t.f32", 0.1f)) ||
        (rc = gguf_writer_add_scalar(w, "t.f64", GGUF_TYPE_FLOAT64, &f64)) ||
        (rc = gguf_writer_add_bool(w, "t.bool", true)) || (rc = gguf_writer_add_strn(w, "t.odd", odd, 5)) ||
        (rc = gguf_writer_add_array(w, "t.arr_i32", GGUF_TYPE_INT32, 5, arr_i32)) ||
        (rc = gguf_writer_add_array(w, "t.arr_u64", GGUF_TYPE_UINT64, 2, arr_u64)) ||
        (rc = gguf_writer_add_array(w, "t.arr_f32", GGUF_TYPE_FLOAT32, 3, arr_f32)) ||
        (rc = gguf_writer_add_array(w, "t.arr_bool", GGUF_TYPE_BOOL, 4, arr_b)) ||
        (rc = gguf_writer_add_array(w, "t.arr_empty", GGUF_TYPE_UINT8, 0, NULL)) ||
        (rc = gguf_writer_add_str_array(w, "t.arr_str", 4, strs, NULL)))
        return rc;
    return SEER_OK;
}

static void check_metadata(const gguf *g)
{
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    int64_t i64;
    float f32;
    double f64;
    bool b;
    const char *s;
    size_t len;
    ok(gguf_get_u32(g, "t.u8", &u32) == SEER_OK && u32 == 255 && gguf_kv_type(g, gguf_find_key(g, "t.u8")) ==
       GGUF_TYPE_UINT8, "u8 255");
    ok(gguf_get_i32(g, "t.i8", &i32) == SEER_OK && i32 == -128 && gguf_kv_type(g, gguf_find_key(g, "t.i8")) ==
       GGUF_TYPE_INT8, "i8 -128");
    ok(gguf_get_u32(g, "t.u16", &u32) == SEER_OK && u32 == 65535, "u16 65535");
    ok(gguf_get_i32(g, "t.i16", &i32) == SEER_OK && i32 == -32768, "i16 -32768");
    ok(gguf_get_u32(g, "t.u32", &u32) == SEER_OK && u32 == 4000000000u, "u32 4e9");
    ok(gguf_get_i32(g, "t.i32", &i32) == SEER_OK && i32 == -7, "i32 -7");
    ok(gguf_get_u64(g, "t.u64", &u64) == SEER_OK && u64 == UINT64_MAX, "u64 max");
    ok(gguf_get_i64(g, "t.i64", &i64) == SEER_OK && i64 == INT64_MIN + 1, "i64 min+1");
    ok(gguf_get_f32(g, "t.f32", &f32) == SEER_OK && f32 == 0.1f, "f32 0.1");
    ok(gguf_get_f64(g, "t.f64", &f64) == SEER_OK && f64 == -1.5e300, "f64 -1.5e300");
    ok(gguf_get_bool(g, "t.bool", &b) == SEER_OK && b, "bool true");
    ok(gguf_get_str(g, "general.architecture", &s, &len) == SEER_OK && !strcmp(s, "test") && len == 4, "string");
    ok(gguf_get_str(g, "t.odd", &s, &len) == SEER_OK && len == 5 && !memcmp(s, "x\0y\nz", 5),
       "string with NUL and newline bytes keeps its 5 bytes");
    int64_t a[8];
    size_t n;
    ok(gguf_get_arr_i64(g, "t.arr_i32", a, 8, &n) == SEER_OK && n == 5 && a[0] == -1 && a[3] == INT32_MAX &&
       a[4] == INT32_MIN, "i32 array");
    enum gguf_type et;
    uint64_t cnt;
    const void *raw;
    uint64_t u2[2];
    ok(gguf_get_arr_data(g, "t.arr_u64", &et, &cnt, &raw) == SEER_OK && et == GGUF_TYPE_UINT64 && cnt == 2 &&
       (memcpy(u2, raw, sizeof u2), u2[0] == 0 && u2[1] == UINT64_MAX), "u64 array");
    float fa[4];
    ok(gguf_get_arr_f32(g, "t.arr_f32", fa, 4, &n) == SEER_OK && n == 3 && fa[0] == 1.5f && signbit(fa[1]) &&
       fa[2] == 3e38f, "f32 array (with -0)");
    ok(gguf_get_arr_i64(g, "t.arr_bool", a, 8, &n) == SEER_OK && n == 4 && a[0] == 1 && a[1] == 0 && a[3] == 1,
       "bool array");
    ok(gguf_get_arr_info(g, "t.arr_empty", &et, &cnt) == SEER_OK && et == GGUF_TYPE_UINT8 && cnt == 0, "empty array");
    const char *want[4] = {"a", "", "héllo wörld", "<|im_end|>"};
    int good = gguf_get_arr_info(g, "t.arr_str", &et, &cnt) == SEER_OK && et == GGUF_TYPE_STRING && cnt == 4;
    for (uint64_t i = 0; good && i < 4; i++)
        good = gguf_get_arr_str(g, "t.arr_str", i, &s, &len) == SEER_OK && len == strlen(want[i]) &&
               !memcmp(s, want[i], len);
    ok(good, "string array (empty and UTF-8 entries)");
}

/* Writes the tensors' bytes in pieces of random sizes (1 byte up to the rest of the tensor). */
static int write_pieces(gguf_writer *w, struct tcase *t)
{
    for (int i = 0; i < N_T; i++)
        for (size_t off = 0; off < t[i].n;) {
            size_t k = 1 + (size_t)(test_rand_u64() % (uint64_t)(t[i].n - off));
            int rc = gguf_writer_write(w, t[i].bytes + off, k);
            if (rc)
                return rc;
            off += k;
        }
    return SEER_OK;
}

static void test_round_trip(size_t alignment)
{
    struct tcase t[N_T];
    make_tensors(t);
    const char *path = path_in(dir, alignment == 32 ? "rt32.gguf" : "rt.gguf");
    gguf_writer *w = NULL;
    int rc = gguf_writer_create(&w);
    if (rc == SEER_OK && alignment != 32)
        rc = gguf_writer_set_alignment(w, alignment);
    if (rc == SEER_OK)
        rc = add_metadata(w);
    for (int i = 0; i < N_T && rc == SEER_OK; i++)
        rc = gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne);
    const uint64_t want_size = rc == SEER_OK ? gguf_writer_file_size(w) : 0;
    if (rc == SEER_OK && (rc = gguf_writer_begin(w, path)) == SEER_OK && (rc = write_pieces(w, t)) == SEER_OK)
        rc = gguf_writer_finish(w);
    gguf_writer_free(w);
    ok(rc == SEER_OK, "alignment %zu: write succeeds (%s)", alignment, rc ? seer_last_error() : "ok");

    gguf *g = NULL;
    rc = gguf_open(path, &g);
    ok(rc == SEER_OK, "alignment %zu: the reader accepts the file (%s)", alignment, rc ? seer_last_error() : "ok");
    if (rc) {
        for (int i = 0; i < N_T; i++)
            free(t[i].bytes);
        return;
    }
    ok(gguf_version(g) == 3 && gguf_alignment(g) == alignment && gguf_file_size(g) == want_size &&
       gguf_data_offset(g) % alignment == 0,
       "alignment %zu: version 3, alignment read back, file is the predicted %llu bytes", alignment,
       (unsigned long long)want_size);
    check_metadata(g);
    int good = gguf_n_tensors(g) == N_T;
    for (int i = 0; i < N_T && good; i++) {
        const int64_t k = gguf_find_tensor(g, t[i].name);
        const tensor *d = k >= 0 ? gguf_tensor(g, k) : NULL;
        good = d && d->type == t[i].type && gguf_tensor_n_dims(g, k) == t[i].n_dims &&
               gguf_tensor_offset(g, k) % alignment == 0 && tensor_nbytes(d) == t[i].n &&
               !memcmp(d->data, t[i].bytes, t[i].n);
        for (int j = 0; d && j < 4; j++)
            good = good && d->ne[j] == t[i].ne[j];
        if (!good)
            diag("tensor %s differs", t[i].name);
    }
    ok(good, "alignment %zu: %d tensors (every dtype, 1-4 dims) have their shapes, types, aligned offsets and bytes",
       alignment, N_T);
    gguf_free(g);
    for (int i = 0; i < N_T; i++)
        free(t[i].bytes);
}

/* ---- atomic writes and failures ------------------------------------------------------------ */

/* Builds a small writer for `path` (a few keys, three tensors) up to begin. */
static int small_writer(gguf_writer **out, const char *path, bool begin)
{
    gguf_writer *w = NULL;
    int rc = gguf_writer_create(&w);
    const char *toks[2] = {"x", "y"};
    if (rc == SEER_OK)
        rc = gguf_writer_add_str(w, "general.architecture", "test");
    if (rc == SEER_OK)
        rc = gguf_writer_add_str_array(w, "t.toks", 2, toks, NULL);
    if (rc == SEER_OK)
        rc = gguf_writer_add_tensor(w, "a", DT_F32, 1, (int64_t[]){A_ELEMS});
    if (rc == SEER_OK)
        rc = gguf_writer_add_tensor(w, "b", DT_Q8_0, 2, (int64_t[]){64, 4});
    if (rc == SEER_OK)
        rc = gguf_writer_add_tensor(w, "c", DT_F16, 1, (int64_t[]){3});
    if (rc == SEER_OK && begin)
        rc = gguf_writer_begin(w, path);
    if (rc) {
        gguf_writer_free(w);
        return rc;
    }
    *out = w;
    return SEER_OK;
}

static int write_all(gguf_writer *w)
{
    int rc = SEER_OK;
    for (int64_t i = 0; i < gguf_writer_n_tensors(w) && rc == SEER_OK; i++)
        rc = gguf_writer_write(w, zeros, gguf_writer_tensor_nbytes(w, i));
    return rc ? rc : gguf_writer_finish(w);
}

static void test_write_faults(void)
{
    char sub[600];
    snprintf(sub, sizeof sub, "%s/faults", dir);
    mkdir(sub, 0755);
    const char *path = path_in(sub, "out.gguf");
    int n_ok = 0, n_fail = 0, n_clean = 0;
    for (long k = 1; k <= 12; k++) {
        gguf_writer *w;
        if (small_writer(&w, path, false) != SEER_OK) {
            diag("small_writer: %s", seer_last_error());
            continue;
        }
        gguf_writer_fail_after(k);
        int rc = gguf_writer_begin(w, path);
        if (rc == SEER_OK)
            rc = write_all(w);
        gguf_writer_fail_after(0);
        gguf_writer_free(w);
        if (rc == SEER_OK) {
            n_ok++;
            remove(path);
            continue;
        }
        n_fail++;
        n_clean += rc == SEER_EIO && strstr(seer_last_error(), path) && strstr(seer_last_error(), "No space") &&
                   dir_entries(sub) == 0;
    }
    ok(n_fail >= 2 && n_fail == n_clean,
       "a write(2) failing at each of %d steps gives SEER_EIO naming the file and leaves the directory empty "
       "(%d clean; %d later steps succeeded)", n_fail, n_clean, n_ok);

    /* an existing file keeps its contents until finish replaces it */
    FILE *f = fopen(path, "wb");
    fputs("old contents", f);
    fclose(f);
    gguf_writer *w;
    int rc = small_writer(&w, path, true);
    char buf[32] = "";
    f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    ok(rc == SEER_OK && got == 12 && !strcmp(buf, "old contents") && dir_entries(sub) == 2,
       "while writing, the old file is untouched and the new data is in one temporary file beside it");
    gguf_writer_fail_after(3);
    rc = rc ? rc : write_all(w);
    gguf_writer_fail_after(0);
    gguf_writer_free(w);
    f = fopen(path, "rb");
    got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[got] = '\0';
    ok(rc == SEER_EIO && !strcmp(buf, "old contents") && dir_entries(sub) == 1,
       "a failed write keeps the old file and removes the temporary one");
    rc = small_writer(&w, path, true);
    rc = rc ? rc : write_all(w);
    gguf_writer_free(w);
    gguf *g = NULL;
    ok(rc == SEER_OK && gguf_open(path, &g) == SEER_OK && gguf_n_tensors(g) == 3 && dir_entries(sub) == 1,
       "a successful finish replaces it with the new file");
    gguf_free(g);
    remove(path);

    /* misuse during output: the writer fails and cleans up */
    rc = small_writer(&w, path, true);
    int rc2 = rc ? rc : gguf_writer_write(w, zeros, A_ELEMS * 4 + 1);
    char msg[300];
    snprintf(msg, sizeof msg, "%s", seer_last_error());
    ok(rc2 == SEER_EINVAL && strstr(msg, "'a'") && dir_entries(sub) == 0 && gguf_writer_write(w, zeros, 1) == SEER_EINVAL,
       "a write running past a tensor is SEER_EINVAL naming it, the temporary file is gone, the writer stays failed: %s",
       msg);
    gguf_writer_free(w);
    rc = small_writer(&w, path, true);
    rc2 = rc ? rc : gguf_writer_write(w, zeros, A_ELEMS * 4);
    rc2 = rc2 ? rc2 : gguf_writer_finish(w);
    ok(rc2 == SEER_EINVAL && strstr(seer_last_error(), "'b'") && dir_entries(sub) == 0,
       "finishing before every tensor is written is SEER_EINVAL naming the first incomplete one: %s",
       seer_last_error());
    gguf_writer_free(w);
    rc = small_writer(&w, path, true);
    rc2 = rc ? rc : gguf_writer_write(w, zeros, 100);
    gguf_writer_free(w);
    ok(rc2 == SEER_OK && dir_entries(sub) == 0, "freeing an unfinished writer removes its temporary file");

    /* allocation failures at every step of declaring and beginning */
    int n_alloc_fail = 0, n_alloc_clean = 0;
    for (long k = 1; k <= 40; k++) {
        seer_alloc_fail_after(k);
        rc = small_writer(&w, path, true);
        seer_alloc_fail_after(0);
        if (rc == SEER_OK) {
            gguf_writer_free(w);
            remove(path);
            break;
        }
        n_alloc_fail++;
        n_alloc_clean += rc == SEER_ENOMEM && dir_entries(sub) == 0;
    }
    ok(n_alloc_fail >= 5 && n_alloc_fail == n_alloc_clean,
       "each of the %d allocations failing gives SEER_ENOMEM and creates no file", n_alloc_fail);

    /* an unwritable destination */
    const char *nodir = path_in(sub, "missing/dir/out.gguf");
    rc = small_writer(&w, nodir, true);
    ok(rc == SEER_EIO && strstr(seer_last_error(), nodir) && dir_entries(sub) == 0,
       "a directory that does not exist: SEER_EIO naming the path (%s)", seer_last_error());
    char file_as_dir[700];
    snprintf(file_as_dir, sizeof file_as_dir, "%s/plain/out.gguf", sub);
    f = fopen(path_in(sub, "plain"), "wb");
    fclose(f);
    rc = small_writer(&w, file_as_dir, true);
    ok(rc == SEER_EIO && dir_entries(sub) == 1, "a path through a regular file: SEER_EIO, nothing created");
    remove(path_in(sub, "plain"));
}

/* ---- misuse while declaring ----------------------------------------------------------------- */

static void test_misuse(void)
{
    gguf_writer *w;
    if (gguf_writer_create(&w) != SEER_OK)
        return;
    const uint32_t v = 1;
    ok(gguf_writer_add_u32(w, "k", 1) == SEER_OK && gguf_writer_add_u32(w, "k", 2) == SEER_EINVAL &&
       strstr(seer_last_error(), "'k'"), "a duplicate key is refused");
    ok(gguf_writer_add_u32(w, "", 1) == SEER_EINVAL, "an empty key is refused");
    ok(gguf_writer_add_scalar(w, "s", GGUF_TYPE_STRING, &v) == SEER_EINVAL &&
       gguf_writer_add_array(w, "a", GGUF_TYPE_ARRAY, 1, &v) == SEER_EINVAL,
       "strings and nested arrays are refused as scalars / array elements");
    ok(gguf_writer_add_tensor(w, "t", DT_Q4_K, 2, (int64_t[]){100, 2}) == SEER_EINVAL,
       "a Q4_K row of 100 elements (not whole blocks) is refused");
    ok(gguf_writer_add_tensor(w, "t", DT_I32, 1, (int64_t[]){4}) == SEER_EINVAL, "I32 cannot be stored");
    ok(gguf_writer_add_tensor(w, "t", DT_F32, 5, (int64_t[]){1, 1, 1, 1, 1}) == SEER_EINVAL &&
       gguf_writer_add_tensor(w, "t", DT_F32, 1, (int64_t[]){0}) == SEER_EINVAL,
       "5 dimensions and an empty dimension are refused");
    ok(gguf_writer_add_tensor(w, "t", DT_F32, 1, (int64_t[]){4}) == SEER_OK &&
       gguf_writer_add_tensor(w, "t", DT_F16, 1, (int64_t[]){4}) == SEER_EINVAL, "a duplicate tensor is refused");
    ok(gguf_writer_set_alignment(w, 64) == SEER_EINVAL, "alignment after a tensor is refused");
    gguf_writer_free(w);
    gguf_writer_create(&w);
    ok(gguf_writer_set_alignment(w, 48) == SEER_EINVAL && gguf_writer_set_alignment(w, 0) == SEER_EINVAL &&
       gguf_writer_set_alignment(w, 16) == SEER_OK, "alignment must be a power of two");
    ok(gguf_writer_write(w, &v, 4) == SEER_EINVAL && gguf_writer_finish(w) == SEER_EINVAL,
       "write and finish before begin are refused");
    gguf_writer_free(w);
    gguf_writer_free(NULL);
    ok(1, "gguf_writer_free(NULL) is a no-op");

    /* a file with no tensors and no metadata is still valid */
    const char *path = path_in(dir, "empty.gguf");
    gguf_writer_create(&w);
    int rc = gguf_writer_begin(w, path);
    rc = rc ? rc : gguf_writer_finish(w);
    gguf_writer_free(w);
    gguf *g = NULL;
    ok(rc == SEER_OK && gguf_open(path, &g) == SEER_OK && gguf_n_tensors(g) == 0 && gguf_n_kv(g) == 0,
       "an empty file (header only) round-trips");
    gguf_free(g);
}

/* gguf_writer_kv_bytes gives the entries exactly as the file stores them: key as a GGUF string
   (u64 length, bytes), type id, value; a refused key adds nothing. */
static void test_kv_bytes(void)
{
    gguf_writer *w;
    size_t len;
    if (gguf_writer_create(&w)) {
        ok(0, "kv_bytes: writer created");
        return;
    }
    gguf_writer_kv_bytes(w, &len);
    ok(len == 0, "kv_bytes: none before any metadata");
    gguf_writer_add_u32(w, "ab", 0x01020304);
    gguf_writer_add_str(w, "ab", "refused: a duplicate");
    gguf_writer_add_bool(w, "c", true);
    static const uint8_t want[] = {2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', GGUF_TYPE_UINT32, 0, 0, 0, 4, 3, 2, 1,
                                   1, 0, 0, 0, 0, 0, 0, 0, 'c', GGUF_TYPE_BOOL, 0, 0, 0, 1};
    const uint8_t *p = gguf_writer_kv_bytes(w, &len);
    ok(len == sizeof want && !memcmp(p, want, len), "kv_bytes: two entries byte for byte (%zu bytes)", len);
    gguf_writer_free(w);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    test_round_trip(32);
    test_round_trip(64);
    test_write_faults();
    test_misuse();
    test_kv_bytes();
    return done_testing();
}
