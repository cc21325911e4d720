/* Tests core/cpu/gemm_f32.c: both kernels (the one picked at run time and the portable one)
   against a naive double product, at awkward sizes (1, not multiples of 4/8/16), with
   transposed A, padded leading dimensions, both triangle options, accumulate/overwrite, and
   C not read when cb == 0; and the f16 row widener on every half bit pattern. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/gemm_f32.h"
#include "core/fp16.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

/* rel-L2 bound: f32 products summed over K ≤ 130 terms round near 1e-7; 1e-5 is well clear
   of that and far below any indexing mistake. The error is taken relative to the terms' magnitude
   (|cb·C| + |alpha|·Σ|a·b| per element), not to the result: cb·C and alpha·AB may cancel, and a
   small matrix (1×1, or C's lower triangle of a few rows) then has a result far smaller than its
   rounding (seed 263429517: 2.3e-5 relative to the result). */
#define TOL 1e-5

static const int64_t sizes[][3] = {{1, 1, 1},   {3, 5, 7},    {4, 8, 16},  {5, 17, 9},  {7, 4, 1},
                                   {2, 12, 3},  {13, 33, 64}, {64, 64, 128}, {130, 129, 65}, {9, 21, 130}};

/* Worst rel-L2 over all sizes and (alpha, cb) for one kernel / triangle / A orientation; also
   flags a NaN leaking from an unread C. */
static double run_all(void (*kernel)(const struct cpu_gemm *), enum cpu_tri tri, bool trans, bool *nan_leak)
{
    static const float coef[][2] = {{1.0f, 0.0f}, {-0.75f, 0.0f}, {1.0f, 1.0f}, {0.5f, -1.25f}};
    double worst = 0;
    for (size_t si = 0; si < ARRAY_LEN(sizes); si++) {
        int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
        if (tri == CPU_TRI_A_LOWER) /* A square-ish lower triangular: K ≥ M is what callers use */
            K = MAX(K, M);
        int64_t lda = (trans ? M : K) + 2, ldb = N + 3, ldc = N + 5;
        size_t na = (size_t)((trans ? K : M) * lda), nb = (size_t)(K * ldb), nc = (size_t)(M * ldc);
        float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = malloc(nc * sizeof *C);
        float *got = malloc((size_t)(M * N) * sizeof *got);
        double *want = malloc((size_t)(M * N) * sizeof *want), *mag = malloc((size_t)(M * N) * sizeof *mag);
        for (size_t ci = 0; ci < ARRAY_LEN(coef); ci++) {
            float alpha = coef[ci][0], cb = coef[ci][1];
            test_fill_normal(A, na, 1.0f);
            test_fill_normal(B, nb, 1.0f);
            test_fill_normal(C, nc, 1.0f);
            int64_t a_rs = trans ? 1 : lda, a_cs = trans ? lda : 1;
            if (tri == CPU_TRI_A_LOWER)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t p = i + 1; p < K; p++)
                        A[i * a_rs + p * a_cs] = 0.0f;
            if (cb == 0.0f)
                for (size_t i = 0; i < nc; i++)
                    C[i] = NAN; /* must not be read */
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double s = 0, sa = 0;
                    for (int64_t p = 0; p < K; p++) {
                        s += (double)A[i * a_rs + p * a_cs] * B[p * ldb + j];
                        sa += fabs((double)A[i * a_rs + p * a_cs] * B[p * ldb + j]);
                    }
                    want[i * N + j] = (cb == 0.0f ? 0.0 : (double)cb * C[i * ldc + j]) + alpha * s;
                    mag[i * N + j] = (cb == 0.0f ? 0.0 : fabs((double)cb * C[i * ldc + j])) + fabs(alpha) * sa;
                }
            struct cpu_gemm g = {.M = M, .N = N, .K = K, .alpha = alpha, .cb = cb, .A = A, .a_rs = a_rs,
                                 .a_cs = a_cs, .B = B, .ldb = ldb, .C = C, .ldc = ldc, .tri = tri};
            kernel(&g);
            /* C_LOWER: only j ≤ i is defined; compare the rest as equal to the reference */
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    bool defined = tri != CPU_TRI_C_LOWER || j <= i;
                    got[i * N + j] = defined ? C[i * ldc + j] : (float)want[i * N + j];
                    if (defined && isnan(got[i * N + j]))
                        *nan_leak = true;
                }
            double err = 0, scale = 0;
            for (int64_t i = 0; i < M * N; i++)
                err += ((double)got[i] - want[i]) * ((double)got[i] - want[i]), scale += mag[i] * mag[i];
            double e = sqrt(err / scale);
            if (!(e <= worst))
                worst = e; /* NaN propagates */
        }
        free(A), free(B), free(C), free(got), free(want), free(mag);
    }
    return worst;
}

int main(void)
{
    plan_no_plan();
    test_seed();
    static const char *tri_name[] = {"full", "A lower", "C lower"};
    void (*kernels[])(const struct cpu_gemm *) = {cpu_gemm_f32, cpu_gemm_f32_v4};
    static const char *kname[] = {"dispatched kernel", "portable kernel"};
    diag("dispatched kernel on this CPU: %s",
#if defined(__x86_64__)
         __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "AVX2+FMA" : "portable"
#else
         "portable"
#endif
    );
    for (int k = 0; k < 2; k++)
        for (int tri = 0; tri < 3; tri++)
            for (int trans = 0; trans < 2; trans++) {
                bool leak = false;
                double e = run_all(kernels[k], (enum cpu_tri)tri, trans, &leak);
                ok(e <= TOL && !leak, "%s, %s, A %s: worst rel-L2 %.2e (<= %.0e)%s", kname[k], tri_name[tri],
                   trans ? "transposed" : "row-major", e, TOL, leak ? ", NaN from an unread C" : "");
            }

    /* every half bit pattern (incl. subnormals, inf, NaN) from an odd address; then a length
       that is not a multiple of 8 so the tail runs too */
    uint16_t *h = malloc((65536 + 1) * sizeof *h);
    float *f = malloc(65536 * sizeof *f);
    for (int i = 0; i < 65536; i++)
        h[i + 1] = (uint16_t)i;
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? 13 : 65536;
        cpu_f16_to_f32_row(f, h + 1 + pass * 30000, n);
        for (int i = 0; i < n; i++) {
            float w = f16_to_f32(h[1 + pass * 30000 + i]);
            if (!(isnan(w) ? isnan(f[i]) : memcmp(&w, &f[i], sizeof w) == 0))
                bad++;
        }
    }
    ok(bad == 0, "cpu_f16_to_f32_row matches f16_to_f32 on all 65536 halves and a 13-long tail (%d differ)", bad);
    free(h), free(f);
    return done_testing();
}
