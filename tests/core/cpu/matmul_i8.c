/* Tests the int8 prefill products of core/cpu/matmul_avx512.c (op_matmul with ≥ 16 activation rows
   on a CPU backend that is not exact, Q8_0, Q4_K, Q5_K and Q6_K weights): against a double reference
   written here from the rule the header states — activations rounded per 32-element block to
   q = round(x/s), s = amax/127; Q8_0: Σ d·Σq_w·q_x·s; Q4_K/Q5_K: per sub-block d·sc·Σq_w·q_x·s −
   dmin·m·Σx (the min term on the exact activations); Q6_K: per 16 values d·sc·Σ(q_w − 32)·q_x·s —
   relative to Σ|w·x| so cancellation hides nothing; 1 and 3 threads give the same bits; and the
   not-exact result stays within the 8-bit rounding of the exact one. On a
   CPU without AVX-512 VNNI the same products run the other kernels and must still meet the exact
   bound below (the reference then does not apply: skipped, said). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/matmul_x86.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "support/testutil.h"
#include "tap.h"

/* vs the reference: exact int32 block products scaled in f32, ≤ K/32 roundings of ~6e-8 */
#define TOL 1e-5
/* not exact vs exact: the int8 rounding of the activations (≤ 1/254 of a block's largest value) */
#define TOL_EXACT 2e-2

static double rel(const float *got, const double *want, const double *mag, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        e += (got[i] - want[i]) * (got[i] - want[i]);
        m += mag[i] * mag[i];
    }
    return sqrt(e / (m > 0 ? m : 1));
}

/* out[n·M + m] and the magnitude Σ|w·x| of each, from the raw blocks. */
static void reference(enum dtype t, const uint8_t *w, size_t w_rs, const float *x, int64_t K, int64_t M, int64_t N,
                      double *out, double *mag)
{
    for (int64_t n = 0; n < N; n++) {
        const float *xr = x + n * K;
        for (int64_t m = 0; m < M; m++) {
            const uint8_t *row = w + (size_t)m * w_rs;
            double acc = 0, am = 0;
            for (int64_t b = 0; b < K / 32; b++) {
                const float *xb = xr + 32 * b;
                float amax = 0;
                for (int i = 0; i < 32; i++)
                    amax = fmaxf(amax, fabsf(xb[i]));
                const double s = amax / 127.0f;
                double dot = 0, xsum = 0, wmin = 0, wd[32];
                int qw[32];
                if (t == DT_Q8_0) {
                    const block_q8_0 *blk = (const block_q8_0 *)(const void *)row + b;
                    for (int i = 0; i < 32; i++)
                        qw[i] = blk->qs[i], wd[i] = f16_to_f32(blk->d);
                } else if (t == DT_Q6_K) { /* sub-block j = 4h + t: dequant_q6_K's element l + 32t of half h */
                    const block_q6_K *blk = (const block_q6_K *)(const void *)row + (32 * b) / QK_K;
                    const int j = (int)((32 * b) % QK_K / 32), h = j / 4, tt = j % 4;
                    for (int i = 0; i < 32; i++) {
                        const int lo = (blk->ql[64 * h + 32 * (tt % 2) + i] >> (4 * (tt / 2))) & 0xF;
                        qw[i] = (lo | (((blk->qh[32 * h + i] >> (2 * tt)) & 3) << 4)) - 32;
                        wd[i] = (double)f16_to_f32(blk->d) * blk->scales[8 * h + 2 * tt + i / 16];
                    }
                } else { /* Q4_K, Q5_K (bit `sub` of qh[i] the fifth) */
                    const block_q4_K *b4 = (const block_q4_K *)(const void *)row + (32 * b) / QK_K;
                    const block_q5_K *b5 = (const block_q5_K *)(const void *)row + (32 * b) / QK_K;
                    const int sub = (int)((32 * b) % QK_K / 32);
                    const uint8_t *scales = t == DT_Q4_K ? b4->scales : b5->scales;
                    const uint8_t *qs = t == DT_Q4_K ? b4->qs : b5->qs;
                    uint8_t sc, mn;
                    get_scale_min_k4(sub, scales, &sc, &mn);
                    for (int i = 0; i < 32; i++) {
                        qw[i] = (qs[32 * (sub / 2) + i] >> (4 * (sub % 2))) & 0xF;
                        if (t == DT_Q5_K)
                            qw[i] |= ((b5->qh[i] >> sub) & 1) << 4;
                        wd[i] = (double)f16_to_f32(t == DT_Q4_K ? b4->d : b5->d) * sc;
                    }
                    wmin = (double)f16_to_f32(t == DT_Q4_K ? b4->dmin : b5->dmin) * mn;
                }
                for (int i = 0; i < 32; i++) {
                    const double q = amax > 0 ? nearbyint(xb[i] * (127.0f / amax)) : 0;
                    dot += wd[i] * qw[i] * q;
                    xsum += xb[i];
                    am += fabs((wd[i] * qw[i] - wmin) * xb[i]);
                }
                acc += dot * s - wmin * xsum;
            }
            out[n * M + m] = acc;
            mag[n * M + m] = am;
        }
    }
}

static void check(backend *be1, backend *be3, enum dtype t, int64_t K, int64_t M, int64_t N, bool vnni)
{
    tensor w, x, o1, o3;
    tensor_init4(&w, t, K, M, 1, 1);
    tensor_init4(&x, DT_F32, K, N, 1, 1);
    tensor_init4(&o1, DT_F32, M, N, 1, 1);
    o3 = o1;
    backend_buffer *bw, *bx, *b1, *b3;
    float *wf = malloc((size_t)(K * M) * sizeof *wf), *xf = malloc((size_t)(K * N) * sizeof *xf);
    float *r1 = malloc((size_t)(M * N) * sizeof *r1), *r3 = malloc((size_t)(M * N) * sizeof *r3);
    float *re = malloc((size_t)(M * N) * sizeof *re);
    double *want = malloc((size_t)(M * N) * sizeof *want), *mag = malloc((size_t)(M * N) * sizeof *mag);
    for (int64_t i = 0; i < K * M; i++)
        wf[i] = test_randf(-1.0f, 1.0f);
    for (int64_t i = 0; i < K * N; i++) /* blocks of very different sizes */
        xf[i] = test_randf(-1.0f, 1.0f) * (i % 96 < 32 ? 40.0f : 1.0f);
    int rc = backend_tensor_alloc(be1, &w, &bw) || backend_tensor_alloc(be1, &x, &bx) ||
             backend_tensor_alloc(be1, &o1, &b1) || backend_tensor_alloc(be3, &o3, &b3) ||
             backend_tensor_set_f32(&w, wf) || backend_tensor_set_f32(&x, xf);
    backend_cpu_set_exact(be1, false), backend_cpu_set_exact(be3, false);
    rc = rc || op_matmul(be1, &o1, &w, &x) || op_matmul(be3, &o3, &w, &x) || backend_tensor_get_f32(&o1, r1) ||
         backend_tensor_get_f32(&o3, r3);
    backend_cpu_set_exact(be1, true), backend_cpu_set_exact(be3, true);
    rc = rc || op_matmul(be1, &o1, &w, &x) || backend_tensor_get_f32(&o1, re);
    if (ok(rc == 0, "%s K %lld M %lld N %lld: products ran", dtype_name(t), (long long)K, (long long)M, (long long)N)) {
        reference(t, w.data, w.nb[1], xf, K, M, N, want, mag);
        if (vnni)
            ok(rel(r1, want, mag, (size_t)(M * N)) <= TOL, "%s K %lld M %lld N %lld: int8 products vs reference, "
               "%.2e <= %.0e", dtype_name(t), (long long)K, (long long)M, (long long)N,
               rel(r1, want, mag, (size_t)(M * N)), TOL);
        else
            skip("no AVX-512 VNNI here: the int8 tile kernel does not run", "int8 products vs reference");
        ok(!memcmp(r1, r3, (size_t)(M * N) * sizeof *r1), "%s: 1 and 3 threads give the same bits", dtype_name(t));
        double e = 0, m = 0;
        for (int64_t i = 0; i < M * N; i++)
            e += (double)(r1[i] - re[i]) * (r1[i] - re[i]), m += (double)re[i] * re[i];
        ok(sqrt(e / m) <= TOL_EXACT, "%s: not exact vs exact %.2e <= %.0e", dtype_name(t), sqrt(e / m), TOL_EXACT);
    }
    backend_buffer_free(bw), backend_buffer_free(bx), backend_buffer_free(b1), backend_buffer_free(b3);
    free(wf), free(xf), free(r1), free(r3), free(re), free(want), free(mag);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *be1, *be3;
    if (!test_cpu_pair(&be1, &be3))
        return done_testing();
#ifdef SEER_MM_X86
    const bool vnni = mm_avx512_available();
#else
    const bool vnni = false;
#endif
    diag("AVX-512 VNNI int8 tiles: %s", vnni ? "yes" : "no");
    const int64_t shapes[][3] = {{256, 33, 16}, {768, 70, 23}, {2048, 17, 64}, {256, 1, 40}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        check(be1, be3, DT_Q8_0, shapes[i][0], shapes[i][1], shapes[i][2], vnni);
        check(be1, be3, DT_Q4_K, shapes[i][0], shapes[i][1], shapes[i][2], vnni);
        if (shapes[i][0] % QK_K == 0) {
            check(be1, be3, DT_Q5_K, shapes[i][0], shapes[i][1], shapes[i][2], vnni);
            check(be1, be3, DT_Q6_K, shapes[i][0], shapes[i][1], shapes[i][2], vnni);
        }
    }
    backend_free(be1), backend_free(be3);
    return done_testing();
}
