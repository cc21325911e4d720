/* Tests core/cpu/matmul.c: op_matmul for every weight dtype at awkward shapes against a double
   product of the dequantised weights (so only accumulation error is measured), strided and 3-D
   activations, 1/2/3 threads agreeing, and op_get_rows for every dtype (exactly the
   dequantised row) with out-of-range ids rejected. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

/* f32 accumulation over K against a double reference: each output is a sum of K products, and
   the kernel sums ≤ 256 of them per f32 lane before moving to double, so relative error stays
   near 1e-6 even at K = 12288. 1e-4 is the project's f32 bound. */
#define MATMUL_TOL 1e-4

/* A finite half of moderate size (2^-6 .. 2^2), random sign and mantissa, so a block's scale
   is sane and outputs do not overflow. */
static uint16_t rand_scale_half(void)
{
    const uint16_t e = (uint16_t)(9 + test_rand_u64() % 8);
    return (uint16_t)((test_rand_u64() & 0x8000) | (e << 10) | (test_rand_u64() & 0x3ff));
}

/* Random bytes for a whole tensor of `type`, with valid scale halves in every block; for plain
   types random finite values. */
static void random_weight_bytes(enum dtype type, uint8_t *buf, size_t nbytes, int64_t n_elems)
{
    const struct dtype_info *di = dtype_info(type);
    if (type == DT_F32) {
        test_fill_normal((float *)buf, (size_t)n_elems, 1.0f);
        return;
    }
    if (type == DT_F16 || type == DT_BF16) {
        for (int64_t i = 0; i < n_elems; i++) {
            const float v = (float)test_randn();
            ((uint16_t *)buf)[i] = type == DT_F16 ? f32_to_f16(v) : f32_to_bf16(v);
        }
        return;
    }
    for (size_t i = 0; i < nbytes; i++)
        buf[i] = (uint8_t)test_rand_u64();
    for (size_t off = 0; off < nbytes; off += (size_t)di->block_bytes) {
        uint8_t *p = buf + off;
        switch (type) {
        case DT_Q8_0: { uint16_t d = rand_scale_half(); memcpy(p, &d, 2); break; }
        case DT_Q4_0: { uint16_t d = rand_scale_half(); memcpy(p, &d, 2); break; }
        case DT_Q4_K: ((block_q4_K *)p)->d = rand_scale_half(); ((block_q4_K *)p)->dmin = rand_scale_half(); break;
        case DT_Q5_K: ((block_q5_K *)p)->d = rand_scale_half(); ((block_q5_K *)p)->dmin = rand_scale_half(); break;
        case DT_Q6_K: ((block_q6_K *)p)->d = rand_scale_half(); break;
        default: break;
        }
    }
}

/* A weight tensor {K, M} of `type` holding `bytes` (contiguous), on be. */
static tensor *tensor_with_bytes(backend *be, enum dtype type, int64_t ne0, int64_t ne1, const uint8_t *bytes)
{
    tensor *t = test_tensor(be, type, ne0, ne1, 1, 1, NULL);
    if (backend_tensor_set(t, bytes, 0, tensor_nbytes(t)) != SEER_OK) {
        diag("tensor_set: %s", seer_last_error());
        exit(2);
    }
    return t;
}

/* out[n][m] = Σ_k wd[m][k]·x[n][k] in double. */
static double *ref_matmul(const float *wd, const float *x, int64_t K, int64_t M, int64_t N)
{
    double *r = malloc((size_t)(M * N) * sizeof *r);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)wd[m * K + k] * x[n * K + k];
            r[n * M + m] = s;
        }
    return r;
}

/* Runs one matmul case on be: random weights of `type`, x {K, N} normal. With `pad` > 0 the x
   rows sit `pad` floats apart beyond K (a strided view). Returns rel-L2 against the reference. */
static double run_case(backend *be, enum dtype type, int64_t K, int64_t M, int64_t N, int64_t pad)
{
    size_t row_bytes;
    dtype_row_bytes(type, K, &row_bytes);
    uint8_t *wb = malloc(row_bytes * (size_t)M);
    random_weight_bytes(type, wb, row_bytes * (size_t)M, K * M);
    float *wd = malloc((size_t)(K * M) * sizeof *wd);
    for (int64_t m = 0; m < M; m++)
        dequantize_row(type, wb + (size_t)m * row_bytes, wd + m * K, K);

    float *x = malloc((size_t)(K * N) * sizeof *x);
    test_fill_normal(x, (size_t)(K * N), 1.0f);
    float *xp = malloc((size_t)((K + pad) * N) * sizeof *xp);
    for (int64_t n = 0; n < N; n++) {
        memcpy(xp + n * (K + pad), x + n * K, (size_t)K * sizeof *x);
        for (int64_t p = 0; p < pad; p++)
            xp[n * (K + pad) + K + p] = NAN; /* must never be read */
    }

    tensor *w = tensor_with_bytes(be, type, K, M, wb);
    tensor *xt = test_tensor(be, DT_F32, K + pad, N, 1, 1, xp);
    tensor xv = *xt;
    if (pad) {
        const int64_t ne[2] = {K, N};
        const size_t nb[2] = {4, (size_t)(K + pad) * 4};
        xv = tensor_view(xt, 2, ne, nb, 0);
    }
    tensor *out = test_tensor(be, DT_F32, M, N, 1, 1, NULL);
    double err = INFINITY;
    if (op_matmul(be, out, w, &xv) != SEER_OK) {
        diag("op_matmul: %s", seer_last_error());
    } else {
        float *got = test_tensor_read(out);
        double *ref = ref_matmul(wd, x, K, M, N);
        err = rel_l2_d(got, ref, (size_t)(M * N));
        free(got);
        free(ref);
    }
    test_tensor_free(w);
    test_tensor_free(xt);
    test_tensor_free(out);
    free(wb);
    free(wd);
    free(x);
    free(xp);
    return err;
}

static void test_shapes(backend *be)
{
    /* K: not powers of two, crossing the kernel's 2048-element chunk and its 8/16-lane steps;
       for block types whole blocks only. M and N include 1 and values that leave partial
       tiles (tiles are 16 weight rows × 8 activation rows, split 4 rows per kernel pass). */
    static const struct { enum dtype t; int64_t K[4]; } ks[] = {
        {DT_F32, {1, 7, 2049, 12288}},
        {DT_F16, {1, 37, 2050, 0}},
        {DT_BF16, {3, 100, 2063, 0}},
        {DT_Q8_0, {32, 96, 32 * 67, 0}},
        {DT_Q4_0, {32, 160, 32 * 67, 0}},
        {DT_Q4_K, {256, 768, 256 * 9, 0}},
        {DT_Q5_K, {256, 1280, 256 * 9, 0}},
        {DT_Q6_K, {256, 768, 256 * 9, 0}},
    };
    static const int64_t Ms[] = {1, 3, 17, 251};
    static const int64_t Ns[] = {1, 2, 5, 64, 67};
    for (size_t ti = 0; ti < ARRAY_LEN(ks); ti++) {
        for (int ki = 0; ki < 4 && ks[ti].K[ki]; ki++) {
            const int64_t K = ks[ti].K[ki];
            double worst = 0;
            char where[96] = "";
            for (size_t mi = 0; mi < ARRAY_LEN(Ms); mi++)
                for (size_t ni = 0; ni < ARRAY_LEN(Ns); ni++) {
                    const int64_t M = Ms[mi], N = Ns[ni];
                    /* keep the double reference affordable at the largest K */
                    if (K * M * N > 80000000)
                        continue;
                    const double e = run_case(be, ks[ti].t, K, M, N, 0);
                    if (!(e <= worst)) {
                        worst = e;
                        snprintf(where, sizeof where, "M=%lld N=%lld", (long long)M, (long long)N);
                    }
                }
            ok(worst <= MATMUL_TOL,
               "matmul %s K=%lld, M∈{1,3,17,251} × N∈{1,2,5,64,67} (K·M·N ≤ 8e7): worst rel-L2 %.2e ≤ 1e-4 (%s)",
               dtype_name(ks[ti].t), (long long)K, worst, where);
        }
    }
    /* the largest K with many rows and tokens at once */
    double e = run_case(be, DT_F32, 12288, 17, 67, 0);
    ok(e <= MATMUL_TOL, "matmul f32 K=12288 M=17 N=67: rel-L2 %.2e ≤ 1e-4", e);
    e = run_case(be, DT_Q4_K, 256 * 48, 17, 5, 0);
    ok(e <= MATMUL_TOL, "matmul q4_K K=12288 M=17 N=5: rel-L2 %.2e ≤ 1e-4", e);
}

static void test_strided(backend *be)
{
    static const enum dtype types[] = {DT_F32, DT_Q8_0, DT_Q4_K};
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        const int64_t K = types[i] == DT_Q4_K ? 512 : 96;
        const double e = run_case(be, types[i], K, 17, 67, 13);
        ok(e <= MATMUL_TOL, "matmul %s with x rows 13 floats apart (NaN padding unread): rel-L2 %.2e ≤ 1e-4",
           dtype_name(types[i]), e);
    }

    /* 3-D x {K, 3, 2} as a view whose planes are not adjacent: out {M, 3, 2} */
    const int64_t K = 64, M = 5, n1 = 3, n2 = 2, row = K + 4, plane = 4 * row + 7;
    float *xbig = malloc((size_t)(plane * n2) * sizeof *xbig);
    test_fill_normal(xbig, (size_t)(plane * n2), 1.0f);
    float *wf = malloc((size_t)(K * M) * sizeof *wf);
    test_fill_normal(wf, (size_t)(K * M), 1.0f);
    tensor *w = test_tensor(be, DT_F32, K, M, 1, 1, wf);
    tensor *xt = test_tensor(be, DT_F32, plane * n2, 1, 1, 1, xbig);
    const int64_t ne[3] = {K, n1, n2};
    const size_t nb[3] = {4, (size_t)row * 4, (size_t)plane * 4};
    tensor xv = tensor_view(xt, 3, ne, nb, 8);
    tensor *out = test_tensor(be, DT_F32, M, n1, n2, 1, NULL);
    int rc = op_matmul(be, out, w, &xv);
    float *got = rc == SEER_OK ? test_tensor_read(out) : NULL;
    double num = 0, den = 0;
    for (int64_t i2 = 0; got && i2 < n2; i2++)
        for (int64_t i1 = 0; i1 < n1; i1++)
            for (int64_t m = 0; m < M; m++) {
                const float *xr = xbig + 2 + i2 * plane + i1 * row; /* 8-byte view offset */
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)wf[m * K + k] * xr[k];
                const double d = got[(i2 * n1 + i1) * M + m] - s;
                num += d * d;
                den += s * s;
            }
    ok(rc == SEER_OK && sqrt(num / den) <= MATMUL_TOL, "matmul with 3-D strided x {64,3,2}: rel-L2 %.2e ≤ 1e-4",
       got ? sqrt(num / den) : INFINITY);
    free(got);
    free(xbig);
    free(wf);
    test_tensor_free(w);
    test_tensor_free(xt);
    test_tensor_free(out);
}

/* Same weights and x on pools of 1, 2 and 3 threads. Each output is summed in an order fixed
   by its activation tile alone, so the answers should be identical; ≤ 1e-6 is the bound. */
static void test_threads(void)
{
    static const struct { enum dtype t; int64_t K, M, N; } cases[] = {
        {DT_F32, 2049, 251, 1}, {DT_Q4_K, 512, 17, 67}, {DT_Q8_0, 96, 251, 5}, {DT_Q6_K, 256, 3, 64},
    };
    backend *bes[3];
    for (int i = 0; i < 3; i++)
        if (backend_cpu_create(i + 1, &bes[i]) != SEER_OK) {
            diag("backend_cpu_create(%d): %s", i + 1, seer_last_error());
            exit(2);
        }
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        const int64_t K = cases[c].K, M = cases[c].M, N = cases[c].N;
        size_t row_bytes;
        dtype_row_bytes(cases[c].t, K, &row_bytes);
        uint8_t *wb = malloc(row_bytes * (size_t)M);
        random_weight_bytes(cases[c].t, wb, row_bytes * (size_t)M, K * M);
        float *x = malloc((size_t)(K * N) * sizeof *x);
        test_fill_normal(x, (size_t)(K * N), 1.0f);
        float *res[3];
        for (int i = 0; i < 3; i++) {
            tensor *w = tensor_with_bytes(bes[i], cases[c].t, K, M, wb);
            tensor *xt = test_tensor(bes[i], DT_F32, K, N, 1, 1, x);
            tensor *out = test_tensor(bes[i], DT_F32, M, N, 1, 1, NULL);
            if (op_matmul(bes[i], out, w, xt) != SEER_OK)
                diag("op_matmul: %s", seer_last_error());
            res[i] = test_tensor_read(out);
            test_tensor_free(w);
            test_tensor_free(xt);
            test_tensor_free(out);
        }
        const double e2 = rel_l2(res[1], res[0], (size_t)(M * N)), e3 = rel_l2(res[2], res[0], (size_t)(M * N));
        ok(e2 <= 1e-6 && e3 <= 1e-6,
           "matmul %s K=%lld M=%lld N=%lld: 2 and 3 threads match 1 (rel-L2 %.1e, %.1e ≤ 1e-6)",
           dtype_name(cases[c].t), (long long)K, (long long)M, (long long)N, e2, e3);
        for (int i = 0; i < 3; i++)
            free(res[i]);
        free(wb);
        free(x);
    }
    for (int i = 0; i < 3; i++)
        backend_free(bes[i]);
}

static void test_get_rows(backend *be)
{
    static const struct { enum dtype t; int64_t H; } cases[] = {
        {DT_F32, 37}, {DT_F16, 37}, {DT_BF16, 5}, {DT_Q8_0, 96},
        {DT_Q4_0, 160}, {DT_Q4_K, 512}, {DT_Q5_K, 256}, {DT_Q6_K, 768},
    };
    const int64_t V = 29;
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        const int64_t H = cases[c].H;
        size_t row_bytes;
        dtype_row_bytes(cases[c].t, H, &row_bytes);
        uint8_t *tb = malloc(row_bytes * (size_t)V);
        random_weight_bytes(cases[c].t, tb, row_bytes * (size_t)V, H * V);
        tensor *table = tensor_with_bytes(be, cases[c].t, H, V, tb);
        /* 1 id (single-token decode) and 40 (more than the 16 that wakes the thread pool),
           with repeats and both ends of the vocabulary */
        static const int64_t Ns[] = {1, 40};
        for (size_t ni = 0; ni < ARRAY_LEN(Ns); ni++) {
            const int64_t N = Ns[ni];
            float *idf = malloc((size_t)N * sizeof *idf);
            for (int64_t n = 0; n < N; n++)
                idf[n] = (float)(n == 1 ? V - 1 : n == 2 ? 0 : (int64_t)(test_rand_u64() % (uint64_t)V));
            tensor *ids = test_tensor(be, DT_I32, N, 1, 1, 1, idf);
            tensor *out = test_tensor(be, DT_F32, H, N, 1, 1, NULL);
            int rc = op_get_rows(be, out, table, ids);
            float *got = rc == SEER_OK ? test_tensor_read(out) : NULL;
            float *want = malloc((size_t)H * sizeof *want);
            int bad = rc == SEER_OK ? 0 : 1;
            for (int64_t n = 0; got && n < N; n++) {
                dequantize_row(cases[c].t, tb + (size_t)idf[n] * row_bytes, want, H);
                if (memcmp(want, got + n * H, (size_t)H * sizeof *want) != 0)
                    bad++;
            }
            ok(bad == 0, "get_rows %s H=%lld N=%lld: every row equals dequantize_row of its table row",
               dtype_name(cases[c].t), (long long)H, (long long)N);
            free(got);
            free(want);
            free(idf);
            test_tensor_free(ids);
            test_tensor_free(out);
        }
        test_tensor_free(table);
        free(tb);
    }

    /* out-of-range ids: V and −1 */
    tensor *table = test_tensor(be, DT_F32, 8, 4, 1, 1, NULL);
    float zero8[32];
    test_fill_normal(zero8, 32, 1.0f);
    backend_tensor_set_f32(table, zero8);
    static const float bad_ids[2][3] = {{0, 4, 1}, {-1, 0, 2}};
    for (int i = 0; i < 2; i++) {
        tensor *ids = test_tensor(be, DT_I32, 3, 1, 1, 1, bad_ids[i]);
        tensor *out = test_tensor(be, DT_F32, 8, 3, 1, 1, NULL);
        const int rc = op_get_rows(be, out, table, ids);
        const char *msg = seer_last_error();
        ok(rc == SEER_EINVAL && msg && strstr(msg, "op_get_rows") && strstr(msg, i ? "-1" : "4"),
           "get_rows id %s is SEER_EINVAL with a message naming it (\"%s\")", i ? "-1" : "4 (= V)", msg ? msg : "");
        test_tensor_free(ids);
        test_tensor_free(out);
    }
    test_tensor_free(table);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *be;
    if (backend_cpu_create(2, &be) != SEER_OK) {
        diag("backend_cpu_create: %s", seer_last_error());
        return 1;
    }
    test_shapes(be);
    test_strided(be);
    test_threads();
    test_get_rows(be);
    backend_free(be);
    return done_testing();
}
