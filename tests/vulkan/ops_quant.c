/* tests/vulkan/ops_quant.c — op_matmul and op_get_rows on the Vulkan backend for every weight
   dtype (F32 F16 BF16 Q8_0 Q4_0 Q4_K Q5_K Q6_K), weights in GGUF block layout read in place.
   Weights are random bytes with random finite scales (every bit pattern of a block's quants and
   packed scales is a valid block), so all code paths of the dequantisers see data. References:
   core/quant.c's dequantize_row (bit-exact with GGUF) for the weight values, then
     matmul: a double-precision Σ_k w[m][k]·x[n][k] — Vulkan vs it and vs the CPU backend,
             rel L2 <= 1e-4 (f32 accumulation in another order: ~1e-6 at these K);
     get_rows: Vulkan's rows must equal the dequantised rows bit for bit (quant.glsl forms each
             element with core/quant.c's float operations), and the CPU's.
   Shapes: N = 1, 3, 8 (matvec kernel) and 67 (tiled); M not a multiple of any tile, thousands of
   weight rows; K so that Q8_0/Q4_0/Q6_K rows are not 4-byte multiples (blocks straddle words);
   weight views starting one block into their buffer (unaligned), strided 3-D x. Everything again
   on a backend whose storage window is overridden to 32 KiB, so weights, x and the table are
   split across windows. Validation layer on: zero errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

#define TOL 1e-4 /* relative L2, see the header comment */

static backend *cpu_be;

static const enum dtype all_types[] = {DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};

/* A row length for dtype t that is awkward for it: odd for plain types, an odd number of blocks
   (Q8_0 25·34 = 850, Q4_0 450, Q6_K 3·210 = 630 bytes: not multiples of 4). */
static int64_t awkward_k(enum dtype t)
{
    int be = dtype_info(t)->block_elems;
    return be == 1 ? 999 : be == 32 ? 800 : 768;
}

/* Random bytes for `n_elems` elements of dtype t laid out as rows of `ne0`: plain types get
   normal values, quantised ones random blocks whose f16 scales are finite, of random sign and a
   size that keeps the values around 1. */
static unsigned char *random_weights(enum dtype t, int64_t ne0, int64_t rows, size_t *bytes)
{
    size_t row_bytes = 0;
    dtype_row_bytes(t, ne0, &row_bytes);
    *bytes = row_bytes * (size_t)rows;
    unsigned char *raw = malloc(*bytes + 4);
    const struct dtype_info *di = dtype_info(t);
    if (!di->quantized) {
        for (size_t i = 0; i < (size_t)(ne0 * rows); i++) {
            float v = (float)test_randn();
            uint16_t h = t == DT_F16 ? f32_to_f16(v) : f32_to_bf16(v);
            if (t == DT_F32)
                memcpy(raw + 4 * i, &v, 4);
            else
                memcpy(raw + 2 * i, &h, 2);
        }
        return raw;
    }
    for (size_t i = 0; i < *bytes; i++)
        raw[i] = (unsigned char)test_rand_u64();
    /* where each block keeps its f16 scales, and how large they should be */
    size_t d_at = 0, dmin_at = SIZE_MAX;
    float scale = 0.01f;
    switch (t) {
    case DT_Q8_0: scale = 1.0f / 64; break;
    case DT_Q4_0: scale = 1.0f / 6; break;
    case DT_Q4_K: case DT_Q5_K: dmin_at = 2; scale = 1.0f / 256; break;
    case DT_Q6_K: d_at = 208; scale = 1.0f / 512; break;
    default: break;
    }
    for (size_t b = 0; b < *bytes / (size_t)di->block_bytes; b++) {
        unsigned char *blk = raw + b * (size_t)di->block_bytes;
        uint16_t d = f32_to_f16(test_randf(0.5f, 1.5f) * scale * (test_rand_u64() & 1 ? -1.0f : 1.0f));
        memcpy(blk + d_at, &d, 2);
        if (dmin_at != SIZE_MAX) {
            uint16_t m = f32_to_f16(test_randf(0.0f, 1.0f) * scale);
            memcpy(blk + dmin_at, &m, 2);
        }
    }
    return raw;
}

/* A tensor {ne0, ne1} of dtype t on `be` holding `raw` bytes. NULL (and a failed test) on error. */
static tensor *raw_tensor(backend *be, enum dtype t, int64_t ne0, int64_t ne1, const void *raw)
{
    tensor *x = calloc(1, sizeof *x);
    backend_buffer *buf = NULL;
    if (!x || !tensor_init4(x, t, ne0, ne1, 1, 1)) {
        ok(0, "raw tensor shape");
        free(x);
        return NULL;
    }
    snprintf(x->name, sizeof x->name, "t_%s_%lld", dtype_name(t), (long long)ne0);
    int rc = backend_tensor_alloc(be, x, &buf);
    if (rc == SEER_OK && raw)
        rc = backend_tensor_set(x, raw, 0, tensor_nbytes(x));
    if (rc != SEER_OK) {
        ok(0, "raw tensor on %s: %s", backend_name(be), seer_last_error());
        backend_buffer_free(buf);
        free(x);
        return NULL;
    }
    return x;
}

static void tensor_free_(tensor *t)
{
    if (t) {
        backend_buffer_free(t->buf);
        free(t);
    }
}

/* ---- matmul ------------------------------------------------------------------------------ */

/* out[n][m] = Σ_k w[m][k]·x[n][k]. With `views`, w is a view starting one block into a parent
   whose rows are one block longer, and x a 3-D view {K, N, 2} of padded rows. */
static void matmul_case(backend *vk, enum dtype t, int64_t K, int64_t M, int64_t N, bool views, const char *tag)
{
    char what[160];
    snprintf(what, sizeof what, "%smatmul %s K=%lld M=%lld N=%lld%s", tag, dtype_name(t), (long long)K, (long long)M,
             (long long)N, views ? " (views)" : "");
    const int64_t qk = dtype_info(t)->block_elems, pk = views ? K + qk : K; /* parent row length */
    const int64_t xpad = views ? 5 : 0, n2 = views ? 2 : 1, xrow = K + xpad, NN = N * n2;
    size_t bytes, prow_bytes, row_bytes;
    unsigned char *raw = random_weights(t, pk, M, &bytes);
    dtype_row_bytes(t, pk, &prow_bytes);
    dtype_row_bytes(t, K, &row_bytes);
    const size_t lead = views ? (size_t)dtype_info(t)->block_bytes : 0;
    float *wd = malloc((size_t)(K * M) * sizeof *wd), *x = malloc((size_t)(xrow * (NN + 1)) * sizeof *x);
    for (int64_t m = 0; m < M; m++)
        dequantize_row(t, raw + lead + (size_t)m * prow_bytes, wd + m * K, K);
    test_fill_normal(x, (size_t)(xrow * (NN + 1)), 1.0f);
    double *ref = calloc((size_t)(M * NN), sizeof *ref);
    for (int64_t n = 0; n < NN; n++)
        for (int64_t m = 0; m < M; m++) {
            double s = 0;
            const float *xn = x + (n + (views ? 1 : 0)) * xrow;
            for (int64_t k = 0; k < K; k++)
                s += (double)wd[m * K + k] * xn[k];
            ref[n * M + m] = s;
        }
    backend *bes[2] = {vk, cpu_be};
    float *got[2] = {NULL, NULL};
    int rc[2] = {SEER_ENOMEM, SEER_ENOMEM};
    for (int b = 0; b < 2; b++) {
        tensor *wp = raw_tensor(bes[b], t, pk, M, raw);
        tensor *xp = vk_test_tensor(bes[b], DT_F32, xrow, NN + 1, 1, 1, x);
        tensor *out = vk_test_tensor(bes[b], DT_F32, M, N, n2, 1, NULL);
        if (wp && xp && out) {
            tensor wv = tensor_view(wp, 2, (int64_t[]){K, M}, (size_t[]){wp->nb[0], prow_bytes}, lead);
            tensor xv = tensor_view(xp, 3, (int64_t[]){K, N, n2}, (size_t[]){4, (size_t)xrow * 4, (size_t)(xrow * N) * 4},
                                    views ? (size_t)xrow * 4 : 0);
            rc[b] = op_matmul(bes[b], out, &wv, &xv);
            if (rc[b] == SEER_OK)
                got[b] = vk_test_read_f32(out);
            else
                diag("%s on %s: %s", what, backend_name(bes[b]), seer_last_error());
        }
        tensor_free_(wp);
        tensor_free_(xp);
        tensor_free_(out);
    }
    if (ok(rc[0] == SEER_OK && got[0], "%s: vulkan op_matmul runs", what)) {
        double e = rel_l2_d(got[0], ref, (size_t)(M * NN));
        ok(e <= TOL, "%s: vulkan vs double reference, rel L2 %.2e <= 1e-4", what, e);
        if (ok(rc[1] == SEER_OK && got[1], "%s: cpu op_matmul runs", what)) {
            e = rel_l2(got[0], got[1], (size_t)(M * NN));
            ok(e <= TOL, "%s: vulkan vs cpu, rel L2 %.2e <= 1e-4", what, e);
        }
    }
    free(got[0]);
    free(got[1]);
    free(raw);
    free(wd);
    free(x);
    free(ref);
}

static void test_matmul(backend *vk, const char *tag, bool split)
{
    static const int64_t Ns[] = {1, 3, 8, 67};
    for (size_t i = 0; i < ARRAY_LEN(all_types); i++) {
        enum dtype t = all_types[i];
        const int64_t K = awkward_k(t), qk = dtype_info(t)->block_elems;
        if (split) {
            /* 32 KiB windows: ~160 KB of weight rows span five or six windows (each a whole
               number of rows, hence few rows for f32), x of 67 rows (214..268 KB) seven to nine */
            size_t row_bytes;
            dtype_row_bytes(t, K, &row_bytes);
            const int64_t M = (int64_t)(160000 / row_bytes) + 3;
            matmul_case(vk, t, K, M, 1, false, tag);
            matmul_case(vk, t, K, M, 67, false, tag);
            matmul_case(vk, t, K, M, 5, true, tag);
            continue;
        }
        for (size_t n = 0; n < ARRAY_LEN(Ns); n++)
            matmul_case(vk, t, K, 37, Ns[n], false, tag);
        matmul_case(vk, t, K, 2500, 1, false, tag);  /* thousands of rows: the lm-head shape */
        matmul_case(vk, t, K, 23, 2100, false, tag); /* thousands of tokens: a long prefill */
        matmul_case(vk, t, qk == 1 ? 1 : qk, 1, 1, false, tag); /* one block, one row */
        matmul_case(vk, t, 5 * (qk == 1 ? 64 : 256), 130, 9, false, tag); /* K = 1280: deeper dot */
        matmul_case(vk, t, K, 19, 3, true, tag);
        matmul_case(vk, t, K, 19, 67, true, tag);
    }
}

/* ---- get_rows ---------------------------------------------------------------------------- */

/* out[n] = table[ids[n]] for n < N with ids drawn from [0, V), the first and last row included.
   With `strided`, out is a view with 3 floats of padding per row. */
static void get_rows_case(backend *vk, enum dtype t, int64_t H, int64_t V, int64_t N, bool strided, const char *tag)
{
    char what[160];
    snprintf(what, sizeof what, "%sget_rows %s H=%lld V=%lld N=%lld%s", tag, dtype_name(t), (long long)H, (long long)V,
             (long long)N, strided ? " (strided out)" : "");
    size_t bytes, row_bytes;
    unsigned char *raw = random_weights(t, H, V, &bytes);
    dtype_row_bytes(t, H, &row_bytes);
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    for (int64_t n = 0; n < N; n++)
        ids[n] = n == 0 ? (int32_t)(V - 1) : n == 1 ? 0 : (int32_t)(test_rand_u64() % (uint64_t)V);
    const int64_t orow = H + (strided ? 3 : 0);
    float *want = malloc((size_t)(H * N) * sizeof *want);
    for (int64_t n = 0; n < N; n++)
        dequantize_row(t, raw + (size_t)ids[n] * row_bytes, want + n * H, H);
    backend *bes[2] = {vk, cpu_be};
    float *got[2] = {NULL, NULL};
    int rc[2] = {SEER_ENOMEM, SEER_ENOMEM};
    for (int b = 0; b < 2; b++) {
        tensor *tb = raw_tensor(bes[b], t, H, V, raw);
        tensor *it = raw_tensor(bes[b], DT_I32, N, 1, ids);
        tensor *op = vk_test_tensor(bes[b], DT_F32, orow, N, 1, 1, NULL);
        if (tb && it && op) {
            tensor ov = tensor_view(op, 2, (int64_t[]){H, N}, (size_t[]){4, (size_t)orow * 4}, 0);
            rc[b] = op_get_rows(bes[b], &ov, tb, it);
            if (rc[b] == SEER_OK) {
                float *all = vk_test_read_f32(op);
                got[b] = malloc((size_t)(H * N) * sizeof(float));
                for (int64_t n = 0; n < N; n++)
                    memcpy(got[b] + n * H, all + n * orow, (size_t)H * sizeof(float));
                free(all);
            } else {
                diag("%s on %s: %s", what, backend_name(bes[b]), seer_last_error());
            }
        }
        tensor_free_(tb);
        tensor_free_(it);
        tensor_free_(op);
    }
    if (ok(rc[0] == SEER_OK && got[0], "%s: vulkan op_get_rows runs", what)) {
        size_t bad = 0;
        for (int64_t i = 0; i < H * N; i++)
            bad += memcmp(&got[0][i], &want[i], 4) != 0;
        ok(bad == 0, "%s: vulkan equals core/quant.c's dequantisation bit for bit (%zu of %lld differ)", what, bad,
           (long long)(H * N));
        if (ok(rc[1] == SEER_OK && got[1], "%s: cpu op_get_rows runs", what))
            ok(!memcmp(got[0], got[1], (size_t)(H * N) * 4), "%s: vulkan equals cpu bit for bit", what);
    }
    free(got[0]);
    free(got[1]);
    free(raw);
    free(ids);
    free(want);
}

/* Ids outside [0, V) cannot be reported from a shader: those rows come out as zeros, the others
   as usual, and nothing is read out of bounds (the validation layer would see it). */
static void get_rows_bad_ids(backend *vk)
{
    const int64_t H = 64, V = 10;
    size_t bytes;
    unsigned char *raw = random_weights(DT_Q8_0, H, V, &bytes);
    const int32_t ids[4] = {3, -1, 10, 9};
    tensor *tb = raw_tensor(vk, DT_Q8_0, H, V, raw), *it = raw_tensor(vk, DT_I32, 4, 1, ids);
    tensor *out = vk_test_tensor(vk, DT_F32, H, 4, 1, 1, NULL);
    if (tb && it && out) {
        int rc = op_get_rows(vk, out, tb, it);
        float *got = rc ? NULL : vk_test_read_f32(out);
        float want[2][64];
        dequantize_row(DT_Q8_0, raw + 3 * 68, want[0], H);
        dequantize_row(DT_Q8_0, raw + 9 * 68, want[1], H);
        bool zeros = got != NULL;
        for (int64_t i = 0; got && i < 2 * H; i++)
            zeros &= got[H + i] == 0.0f;
        ok(rc == SEER_OK && zeros && !memcmp(got, want[0], sizeof want[0]) && !memcmp(got + 3 * H, want[1], sizeof want[1]),
           "get_rows with ids -1 and V: those rows are zeros, the valid ones exact (%s)", rc ? seer_last_error() : "ok");
        free(got);
    }
    tensor_free_(tb);
    tensor_free_(it);
    tensor_free_(out);
    free(raw);
}

static void test_get_rows(backend *vk, const char *tag, bool split)
{
    static const int64_t Ns[] = {1, 3, 8, 67};
    for (size_t i = 0; i < ARRAY_LEN(all_types); i++) {
        enum dtype t = all_types[i];
        const int64_t H = awkward_k(t);
        if (split) { /* 32 KiB windows: a 400-row table spans 6..50 windows */
            get_rows_case(vk, t, H, 400, 67, false, tag);
            get_rows_case(vk, t, H, 400, 3, true, tag);
            continue;
        }
        for (size_t n = 0; n < ARRAY_LEN(Ns); n++)
            get_rows_case(vk, t, H, 3000, Ns[n], false, tag);
        get_rows_case(vk, t, H, 7, 8, true, tag);
    }
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *vk;
    int status;
    if (!vk_test_open(&vk, &cpu_be, &status))
        return status;
    test_matmul(vk, "", false);
    test_get_rows(vk, "", false);
    get_rows_bad_ids(vk);
    vk_test_validation_check(vk, "quantised ops");
    backend_free(vk);

    /* the kernels that need no optional feature, where the default device has faster ones */
    if ((vk = vk_test_backend_with(0, true))) {
        test_matmul(vk, "plain: ", false);
        vk_test_validation_check(vk, "plain quantised ops");
        backend_free(vk);
    }
    if ((vk = vk_test_backend(32 << 10))) {
        test_matmul(vk, "split: ", true);
        test_get_rows(vk, "split: ", true);
        vk_test_validation_check(vk, "split quantised ops");
        backend_free(vk);
    }
    backend_free(cpu_be);
    return done_testing();
}

#else
int main(void) { return plan_skip_all("built without Vulkan (SEER_VULKAN=OFF)"); }
#endif
