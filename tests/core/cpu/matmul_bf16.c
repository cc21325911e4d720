/* Tests the bf16 products of a CPU backend that is not exact (op_linear with the epilogue's bf16, as
   the vision tower calls it; F16 and BF16 weights, on CPUs with AVX512-BF16): the prefill tiles of
   core/cpu/matmul_avx512.c (≥ 16 activation rows) and the dot kernels of matmul_x86.c under the same
   rule (fewer rows, so an image's products do not depend on a call's row count): against a
   double reference written here from the rule the file states — weights and activations rounded to
   bf16 to nearest even, each product of two bf16 values exact, the sums in f32 — relative to Σ|w·x|
   so cancellation hides nothing; 1 and 3 threads give the same bits; and the not-exact result stays
   within the bf16 rounding of the exact one (the bound docs/ARCHITECTURE.md states for the path);
   a product that does not accept bf16 (op_matmul: the text model's) keeps f32 when not exact.
   A K that is not whole 32-blocks keeps the f32 path: within f32 rounding of the exact result. On
   a CPU without AVX512-BF16 the products run the f32 kernels and the reference does not apply
   (skipped, said). Fresh random weights and activations every run (the seed is printed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/matmul_x86.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "support/testutil.h"
#include "tap.h"

/* vs the reference: exact products summed in f32 lanes, ≤ K/2 roundings of 6e-8 of the running sum */
#define TOL 1e-5
/* not exact vs exact: both operands rounded to 8 significant bits (≤ 2^-9 relative each, ~1.6e-3
   rel-L2 on random data) */
#define TOL_EXACT 5e-3
/* a K the bf16 path does not take: the same f32 products in another order */
#define TOL_F32 1e-5

/* f32 → bf16 → f32, to nearest even (no NaN in these inputs) */
static double round_bf16(float f)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    w = (w + 0x7fffu + ((w >> 16) & 1)) & 0xffff0000u;
    memcpy(&f, &w, 4);
    return f;
}

static void check(backend *be1, backend *be3, enum dtype t, int64_t K, int64_t M, int64_t N, bool bf16)
{
    tensor w, x, o1, o3;
    tensor_init4(&w, t, K, M, 1, 1);
    tensor_init4(&x, DT_F32, K, N, 1, 1);
    tensor_init4(&o1, DT_F32, M, N, 1, 1);
    o3 = o1;
    backend_buffer *bw, *bx, *b1, *b3;
    const size_t nw = (size_t)(K * M), no = (size_t)(M * N);
    float *wf = malloc(nw * sizeof *wf), *xf = malloc((size_t)(K * N) * sizeof *xf);
    float *r1 = malloc(no * sizeof *r1), *r3 = malloc(no * sizeof *r3), *re = malloc(no * sizeof *re);
    float *rm = malloc(no * sizeof *rm);
    const struct linear_epilogue bf = {.bf16 = true};
    double *ref = malloc(no * sizeof *ref);
    for (size_t i = 0; i < nw; i++)
        wf[i] = test_randf(-1.0f, 1.0f);
    for (int64_t i = 0; i < K * N; i++) /* rows of very different sizes */
        xf[i] = test_randf(-1.0f, 1.0f) * (i / K % 3 == 0 ? 40.0f : 1.0f);
    int rc = backend_tensor_alloc(be1, &w, &bw) || backend_tensor_alloc(be1, &x, &bx) ||
             backend_tensor_alloc(be1, &o1, &b1) || backend_tensor_alloc(be3, &o3, &b3) ||
             backend_tensor_set_f32(&w, wf) || backend_tensor_set_f32(&x, xf) ||
             backend_tensor_get_f32(&w, wf); /* the weights as stored (f16 or bf16) */
    backend_cpu_set_exact(be1, false), backend_cpu_set_exact(be3, false);
    rc = rc || op_linear(be1, &o1, &w, &x, &bf) || op_linear(be3, &o3, &w, &x, &bf) ||
         backend_tensor_get_f32(&o1, r1) || backend_tensor_get_f32(&o3, r3) || op_matmul(be1, &o1, &w, &x) ||
         backend_tensor_get_f32(&o1, rm);
    backend_cpu_set_exact(be1, true), backend_cpu_set_exact(be3, true);
    rc = rc || op_linear(be1, &o1, &w, &x, &bf) || backend_tensor_get_f32(&o1, re);
    const char *tn = dtype_name(t);
    const long long k = (long long)K, m = (long long)M, n = (long long)N;
    if (ok(rc == 0, "%s K %lld M %lld N %lld: products ran", tn, k, m, n)) {
        const bool path = bf16 && K % 32 == 0;
        double err = 0, am = 0;
        for (int64_t r = 0; r < N; r++)
            for (int64_t c = 0; c < M; c++) {
                double s = 0, se = 0, a = 0;
                for (int64_t i = 0; i < K; i++) {
                    const float wv = wf[c * K + i], xv = xf[r * K + i];
                    s += round_bf16(wv) * round_bf16(xv);
                    se += (double)wv * xv;
                    a += fabs((double)wv * xv);
                }
                ref[r * M + c] = se;
                const double d = r1[r * M + c] - (path ? s : se);
                err += d * d, am += a * a;
            }
        const double e = sqrt(err / am);
        if (path)
            ok(e <= TOL, "%s K %lld M %lld N %lld: bf16 products vs reference, %.2e <= %.0e", tn, k, m, n, e, TOL);
        else if (bf16)
            ok(e <= TOL_F32, "%s K %lld M %lld N %lld: K not whole 32-blocks keeps f32, %.2e <= %.0e", tn, k, m,
               n, e, TOL_F32);
        else
            skip("no AVX512-BF16 here: the bf16 tile kernel does not run", "bf16 products vs reference");
        ok(!memcmp(r1, r3, no * sizeof *r1), "%s: 1 and 3 threads give the same bits", tn);
        const double ex = rel_l2_d(r1, ref, no);
        ok(ex <= TOL_EXACT, "%s: not exact vs the exact products %.2e <= %.0e", tn, ex, TOL_EXACT);
        ok(rel_l2_d(re, ref, no) <= TOL_F32, "%s: the exact path keeps f32, %.2e <= %.0e", tn, rel_l2_d(re, ref, no),
           TOL_F32);
        ok(rel_l2_d(rm, ref, no) <= TOL_F32, "%s: op_matmul (bf16 not accepted) keeps f32 when not exact, %.2e <= %.0e",
           tn, rel_l2_d(rm, ref, no), TOL_F32);
    }
    backend_buffer_free(bw), backend_buffer_free(bx), backend_buffer_free(b1), backend_buffer_free(b3);
    free(wf), free(xf), free(r1), free(r3), free(re), free(rm), free(ref);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *be1, *be3;
    if (!test_cpu_pair(&be1, &be3))
        return done_testing();
#ifdef SEER_MM_X86
    const bool bf16 = mm_avx512_bf16_available();
#else
    const bool bf16 = false;
#endif
    diag("AVX512-BF16 tiles: %s", bf16 ? "yes" : "no");
    /* a partial tile (M 33, 70, 17), a partial last chunk (K 96, 800), a K that is not 32-blocks (100),
       and decode's row counts (1, 5, 15: the dot kernels) */
    const int64_t shapes[][3] = {{256, 33, 16}, {768, 70, 23}, {96, 17, 64}, {800, 40, 20}, {100, 20, 18},
                                 {256, 33, 1}, {800, 21, 5}, {96, 40, 15}, {100, 9, 3}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        check(be1, be3, DT_F16, shapes[i][0], shapes[i][1], shapes[i][2], bf16);
        check(be1, be3, DT_BF16, shapes[i][0], shapes[i][1], shapes[i][2], bf16);
    }
    backend_free(be1), backend_free(be3);
    return done_testing();
}
