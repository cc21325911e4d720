/* Tests core/cpu/qdot.c and qdot_x86.c: the activation rounding against its stated bound, every
   kernel family present on this CPU (portable, AVX2, AVX-512 VNNI) for every weight type against
   a double product of dequantize_row's weights (core/quant.c, the GGUF reference decoding) and
   the rounded activations, and op_matmul's rounded path (backend_cpu_set_exact(be, false)) at
   odd row counts on 1 and 2 threads. Weights are random block bytes (every bit pattern a file
   may hold, int8 −128 included) with scales set to sane halves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/matmul_x86.h"
#include "core/cpu/qdot.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

/* Kernel vs the double reference, relative to Σ|w·x| (so cancellation cannot hide an error):
   the kernels sum exact int32 block products scaled in f32, ≤ K/32 roundings of ~6e-8. */
#define TOL 1e-5

static const enum dtype types[] = {DT_Q8_0, DT_Q4_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};
static const int64_t Ks[] = {256, 1024, 3584};

static uint16_t rand_half(float lo, float hi) { return f32_to_f16(test_randf(lo, hi)); }

/* A row of K values of type t: random bytes, then each block's f16 scales overwritten. */
static void *rand_row(enum dtype t, int64_t K)
{
    const struct dtype_info *di = dtype_info(t);
    const size_t n = (size_t)(K / di->block_elems) * di->block_bytes;
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)test_rand_u64();
    for (int64_t b = 0; b < K / di->block_elems; b++) {
        void *blk = p + (size_t)b * di->block_bytes;
        switch (t) {
        case DT_Q8_0: ((block_q8_0 *)blk)->d = rand_half(-0.02f, 0.02f); break;
        case DT_Q4_0: ((block_q4_0 *)blk)->d = rand_half(-0.02f, 0.02f); break;
        case DT_Q4_K:
            ((block_q4_K *)blk)->d = rand_half(0.0f, 0.01f);
            ((block_q4_K *)blk)->dmin = rand_half(0.0f, 0.01f);
            break;
        case DT_Q5_K:
            ((block_q5_K *)blk)->d = rand_half(0.0f, 0.01f);
            ((block_q5_K *)blk)->dmin = rand_half(0.0f, 0.01f);
            break;
        default: ((block_q6_K *)blk)->d = rand_half(-0.001f, 0.001f); break;
        }
    }
    return p;
}

/* Activation i of a row rounded for type t's kernels (qdot_quantize_act's format), as a double. */
static double act(enum dtype t, const void *xq, int64_t i)
{
    if (t == DT_Q4_K) {
        const block_q8k *b = (const block_q8k *)xq + i / 256;
        return (double)b->d * b->qs[i % 256];
    }
    const block_q8x *b = (const block_q8x *)xq + i / 32;
    return (double)b->d * b->qs[i % 32];
}

/* Σ w·x in double over dequantised weights and rounded activations; *mag = Σ|w·x|. */
static double ref_dot(enum dtype t, const void *w, const void *xq, int64_t K, double *mag)
{
    float *wf = malloc((size_t)K * sizeof *wf);
    double s = 0, a = 0;
    dequantize_row(t, w, wf, K);
    for (int64_t i = 0; i < K; i++) {
        const double p = (double)wf[i] * act(t, xq, i);
        s += p;
        a += fabs(p);
    }
    free(wf);
    *mag = a;
    return s;
}

static void test_rounding(void)
{
    const int64_t K = 1024;
    float *x = malloc(K * sizeof *x);
    block_q8x *q = malloc((K / 32) * sizeof *q);
    test_fill_normal(x, K, 3.0f);
    memset(x + 64, 0, 32 * sizeof *x); /* one all-zero block */
    qdot_quantize(x, q, K);
    double worst = 0;
    bool sums = true, zero = q[2].d == 0 && q[2].s == 0;
    for (int64_t b = 0; b < K / 32; b++) {
        int s = 0;
        for (int i = 0; i < 32; i++) {
            const double e = fabs(x[32 * b + i] - (double)q[b].d * q[b].qs[i]);
            if (q[b].d > 0)
                worst = fmax(worst, e / q[b].d);
            s += q[b].qs[i];
        }
        sums &= fabsf(q[b].s - q[b].d * (float)s) <= 1e-6f * fabsf(q[b].d * (float)s) + 1e-30f;
    }
    /* round to nearest: ≤ half a step, plus |q| ≤ 127 times the f16 rounding of d (2^-11 relative) */
    ok(worst <= 0.5 + 127.0 / 2048 + 1e-4, "rounding error ≤ d·(1/2 + 127·2^-11) per value (worst %.6f·d)", worst);
    ok(sums, "s = d·Σq in every block");
    ok(zero, "an all-zero block has d = 0, s = 0");

    /* Q8_K (Q4_K's activations): 256-value blocks, step from the largest magnitude, sums per 16 */
    block_q8k *k8 = malloc((K / 256) * sizeof *k8);
    qdot_quantize_q8k(x, k8, K);
    double worst8 = 0;
    bool bsums = true;
    for (int64_t b = 0; b < K / 256; b++)
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int i = 16 * j; i < 16 * j + 16; i++) {
                worst8 = fmax(worst8, fabs(x[256 * b + i] - (double)k8[b].d * k8[b].qs[i]) / fabsf(k8[b].d));
                s += k8[b].qs[i];
            }
            bsums &= s == k8[b].bsums[j];
        }
    ok(worst8 <= 0.5 + 1e-4, "Q8_K rounding error ≤ |d|/2 per value (worst %.6f·|d|)", worst8);
    ok(bsums, "Q8_K bsums[j] = Σ of its 16 values");
    free(k8);
    free(x);
    free(q);
}

/* The AVX2 Q8_K rounding must give the portable one's bytes (a Q4_K decode reads whichever the
   CPU has): random blocks, an all-zero block, one whose largest magnitude appears twice with
   both signs (the first one sets the sign of the step), one of exact halves (ties to even). */
static void test_rounding_q8k_avx2(void)
{
#ifdef SEER_MM_X86
    if (!mm_x86_available()) {
        skip("this CPU lacks AVX2 + FMA", "Q8_K rounding: AVX2 = portable");
        return;
    }
    const int64_t K = 256 * 12;
    float *x = malloc(K * sizeof *x);
    block_q8k *a = malloc((K / 256) * sizeof *a), *b = malloc((K / 256) * sizeof *b);
    test_fill_normal(x, K, 2.0f);
    memset(x + 256, 0, 256 * sizeof *x);
    x[512 + 17] = -9.0f, x[512 + 200] = 9.0f;
    for (int i = 0; i < 256; i++) /* step 1 (max −127): products k + 1/2 */
        x[768 + i] = i == 5 ? -127.0f : (float)(i % 100 - 50) + 0.5f;
    qdot_quantize_q8k_portable(x, a, K);
    qdot_quantize_q8k_avx2(x, b, K);
    ok(!memcmp(a, b, (K / 256) * sizeof *a), "Q8_K rounding: AVX2 gives the portable bytes (%lld blocks, ties "
                                              "of sign and of halves, a zero block)", (long long)(K / 256));
    ok(a[2].d > 0 && a[2].qs[17] == -127 && a[2].qs[200] == 127 && a[3].qs[0] == -50 && a[3].qs[1] == -48,
       "Q8_K: the first largest value (−9 before 9) sets the step's sign; halves round to even");
    free(x);
    free(a);
    free(b);
#else
    skip("not an x86-64 build", "Q8_K rounding: AVX2 = portable");
#endif
}

static void test_kernels(void)
{
    static const char *const isa_name[] = {"portable", "avx2", "avx512-vnni"};
    for (int isa = QDOT_PORTABLE; isa <= QDOT_VNNI; isa++) {
        for (size_t ti = 0; ti < ARRAY_LEN(types); ti++) {
            const enum dtype t = types[ti];
            qdot_fn fn = qdot_kernel_isa(t, (enum qdot_isa)isa);
            if (!fn) {
                skip("this CPU or build lacks the ISA", isa_name[isa]);
                continue;
            }
            double worst = 0;
            for (size_t ki = 0; ki < ARRAY_LEN(Ks); ki++) {
                const int64_t K = Ks[ki];
                for (int rep = 0; rep < 4; rep++) {
                    void *w = rand_row(t, K);
                    float *x = malloc(K * sizeof *x);
                    void *xq = malloc(qdot_act_row_bytes(t, K));
                    test_fill_normal(x, K, rep == 3 ? 1e3f : 1.0f);
                    qdot_quantize_act(t, x, xq, K);
                    double mag;
                    const double ref = ref_dot(t, w, xq, K, &mag);
                    const double got = fn(w, xq, K / 32);
                    worst = fmax(worst, fabs(got - ref) / (mag > 0 ? mag : 1));
                    free(w);
                    free(x);
                    free(xq);
                }
            }
            ok(worst <= TOL, "%s %s: |dot − ref| / Σ|w·x| = %.2e ≤ %.0e (K = 256, 1024, 3584)", isa_name[isa],
               dtype_info(t)->name, worst, TOL);
        }
    }
}

/* The x86 Q8_0 kernels compute the same exact integer lanes two ways (AVX2: |w| and signed x,
   256-bit; VNNI: w + 128 and a correction, two blocks per 512-bit vector) and scale them alike, so
   the families agree bit for bit. K = 8256 is 258 blocks: 32 groups of 8 and two left over. */
static void test_q8_0_families(void)
{
    const int64_t K = 8256, nb = K / 32;
    qdot_fn avx2 = qdot_kernel_isa(DT_Q8_0, QDOT_AVX2), vnni = qdot_kernel_isa(DT_Q8_0, QDOT_VNNI);
    if (!avx2 || !vnni) {
        skip("this CPU lacks AVX2 or AVX-512 VNNI", "Q8_0 AVX2 vs VNNI bit for bit");
        return;
    }
    qdot_rows_fn rows = qdot_x86_rows_kernel(DT_Q8_0, true);
    const size_t x_rb = qdot_act_row_bytes(DT_Q8_0, K);
    float *x = malloc(K * sizeof *x);
    char *xq = malloc(3 * x_rb);
    int same = 0, rows_same = 0, n = 0;
    double worst = 0;
    for (int rep = 0; rep < 4; rep++) {
        void *w = rand_row(DT_Q8_0, K);
        for (int r = 0; r < 3; r++) {
            test_fill_normal(x, K, r == 1 ? 1e3f : 1.0f);
            qdot_quantize_act(DT_Q8_0, x, xq + r * x_rb, K);
        }
        float got[3];
        rows(w, xq, x_rb, 3, nb, got);
        for (int r = 0; r < 3; r++, n++) {
            const float a = avx2(w, xq + r * x_rb, nb), v = vnni(w, xq + r * x_rb, nb);
            double mag;
            const double ref = ref_dot(DT_Q8_0, w, xq + r * x_rb, K, &mag);
            worst = fmax(worst, fabs(v - ref) / (mag > 0 ? mag : 1));
            same += !memcmp(&a, &v, sizeof a);
            rows_same += !memcmp(&got[r], &v, sizeof v);
        }
        free(w);
    }
    ok(same == n && worst <= TOL, "Q8_0 K=8256: AVX2 and AVX-512 VNNI equal bit for bit (%d of %d), %.2e of Σ|w·x| "
       "from the reference", same, n, worst);
    ok(rows_same == n, "Q8_0 K=8256: the 3-row VNNI kernel equals the one-row kernel bit for bit (%d of %d)",
       rows_same, n);
    free(x);
    free(xq);
}

/* Every several-row kernel (Q8_0, Q4_K, Q5_K, Q6_K; AVX2 and AVX-512 VNNI) gives each of 1–4 activation
   rows the one-row kernel's bits: a sequence decoded in a batch must read what it reads alone. */
static void test_rows_kernels(void)
{
#ifdef SEER_MM_X86
    static const enum dtype rt[] = {DT_Q8_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};
    static const char *const isa_name[] = {"avx2", "avx512-vnni"};
    const int64_t K = 3584, nb = K / 32;
    for (int v = 0; v < 2; v++)
        for (size_t ti = 0; ti < ARRAY_LEN(rt); ti++) {
            const enum dtype t = rt[ti];
            qdot_fn one = qdot_x86_kernel(t, v);
            qdot_rows_fn rows = qdot_x86_rows_kernel(t, v);
            if (!one || !rows) {
                skip("this CPU lacks the ISA", isa_name[v]);
                continue;
            }
            const size_t x_rb = qdot_act_row_bytes(t, K);
            float *x = malloc(K * sizeof *x);
            char *xq = malloc(QDOT_MAX_ROWS * x_rb);
            int same = 0, n = 0;
            for (int rep = 0; rep < 3; rep++) {
                void *w = rand_row(t, K);
                for (int r = 0; r < QDOT_MAX_ROWS; r++) {
                    test_fill_normal(x, K, r == 2 ? 1e3f : 1.0f);
                    qdot_quantize_act(t, x, xq + r * x_rb, K);
                }
                for (int nx = 1; nx <= QDOT_MAX_ROWS; nx++) {
                    float got[QDOT_MAX_ROWS];
                    rows(w, xq, x_rb, nx, nb, got);
                    for (int r = 0; r < nx; r++, n++) {
                        const float want = one(w, xq + r * x_rb, nb);
                        same += !memcmp(&got[r], &want, sizeof want);
                    }
                }
                free(w);
            }
            ok(same == n, "%s %s: the several-row kernel gives each of 1–%d rows the one-row kernel's bits (%d of %d)",
               isa_name[v], dtype_info(t)->name, QDOT_MAX_ROWS, same, n);
            free(x);
            free(xq);
        }
#else
    skip("not an x86-64 build", "several-row kernels against the one-row kernels");
#endif
}

/* op_matmul not exact: out[n][m] against the portable kernel's own block formula (reference
   above), for M not a multiple of the 16-row work unit (large enough to be split over threads) and N = 1 (decode) and 5. */
static void test_matmul(backend *be, const char *what)
{
    const int64_t K = 512, M = 301; /* M·K > CPU_PAR_MIN_WORK: 2 threads split the rows */
    for (size_t ti = 0; ti < ARRAY_LEN(types); ti++) {
        const enum dtype t = types[ti];
        const struct dtype_info *di = dtype_info(t);
        const size_t row = (size_t)(K / di->block_elems) * di->block_bytes;
        uint8_t *wb = malloc(row * M);
        for (int64_t m = 0; m < M; m++) {
            void *r = rand_row(t, K);
            memcpy(wb + m * row, r, row);
            free(r);
        }
        tensor *w = test_tensor(be, t, K, M, 1, 1, NULL);
        backend_tensor_set(w, wb, 0, row * M);
        for (int64_t N = 1; N <= 5; N += 4) {
            float *x = malloc((size_t)(K * N) * sizeof *x), *ref = malloc((size_t)(M * N) * sizeof *ref);
            void *xq = malloc(qdot_act_row_bytes(t, K));
            test_fill_normal(x, (size_t)(K * N), 1.0f);
            for (int64_t n = 0; n < N; n++) {
                qdot_quantize_act(t, x + n * K, xq, K);
                for (int64_t m = 0; m < M; m++) {
                    double mag;
                    ref[n * M + m] = (float)ref_dot(t, wb + m * row, xq, K, &mag);
                }
            }
            tensor *xt = test_tensor(be, DT_F32, K, N, 1, 1, x), *ot = test_tensor(be, DT_F32, M, N, 1, 1, NULL);
            const int rc = op_matmul(be, ot, w, xt);
            float *got = test_tensor_read(ot);
            const double e = rel_l2(got, ref, (size_t)(M * N));
            ok(rc == SEER_OK && e <= TOL, "%s op_matmul %s K=%lld M=%lld N=%lld: rel-L2 %.2e ≤ %.0e", what, di->name,
               (long long)K, (long long)M, (long long)N, e, TOL);
            free(got);
            test_tensor_free(xt);
            test_tensor_free(ot);
            free(x);
            free(ref);
            free(xq);
        }
        test_tensor_free(w);
        free(wb);
    }
}

int main(void)
{
    test_seed();
    diag("qdot kernels chosen here: %s", qdot_isa());
    test_rounding();
    test_rounding_q8k_avx2();
    test_kernels();
    test_q8_0_families();
    test_rows_kernels();
    for (int nt = 1; nt <= 2; nt++) {
        backend *be;
        if (backend_cpu_create(nt, &be) != SEER_OK)
            return plan_skip_all("cpu backend");
        backend_cpu_set_exact(be, false);
        test_matmul(be, nt == 1 ? "1 thread" : "2 threads");
        backend_free(be);
    }
    return done_testing();
}
