/* Tests op_attention on a CPU backend that is not exact with a mask that accepts bf16 (as the vision
   tower's; core/cpu/attention.c's bf16 path on CPUs with AVX512-BF16, gemm_bf16.c): against a float64
   reference written here (softmax(scale·q·kᵀ, masked)·v, spec §2.6 step 6 and §4.5 step 4) within the
   bf16 rounding of its operands; the path really runs (its result is not the exact path's); 1 and 3
   threads give the same bits; a mask that does not accept bf16 (the text model's) keeps f32. Shapes:
   the vision tower's (head dim 64 and 72, two images as segments, a last key block of odd length)
   and causal GQA as the text model's (head dim 256, after cached keys); calls of many query tiles (K
   and V rounded once for all) and of one. Fresh random q, k, v each run (the seed is printed). On a
   CPU without AVX512-BF16 the not-exact backend runs the f32 path: the bf16 checks are skipped, said. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_ops.h"
#include "core/cpu/cpu.h"
#include "core/cpu/matmul_x86.h"
#include "core/ops.h"
#include "support/testutil.h"
#include "tap.h"

/* not exact vs the reference: q·scale, k, the probabilities and v rounded to bf16 (≤ 2^-9 relative
   each); measured 1–2e-3 on these inputs */
#define TOL_BF16 6e-3
/* the exact path vs the reference: f32 rounding */
#define TOL_F32 2e-5
/* the bf16 path's result differs from the exact one by far more than this (~1e-3) */
#define MIN_APART 1e-5

struct shape {
    const char *what;
    int64_t hd, nh, nkv, T, q_pos0; /* q_pos0 < 0: segments (two images, split at T/3) */
};

/* out[(t·nh + h)·hd + e] in float64 */
static void reference(const struct shape *s, const float *q, const float *k, const float *v, const int32_t *seg,
                      int64_t Tk, float scale, double *out)
{
    double *p = malloc((size_t)Tk * sizeof *p);
    for (int64_t t = 0; t < s->T; t++)
        for (int64_t h = 0; h < s->nh; h++) {
            const int64_t g = h / (s->nh / s->nkv);
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < Tk; j++) {
                const bool vis = s->q_pos0 >= 0 ? j <= s->q_pos0 + t : seg[j] == seg[t];
                double d = 0;
                for (int64_t e = 0; e < s->hd; e++)
                    d += (double)q[(t * s->nh + h) * s->hd + e] * k[(j * s->nkv + g) * s->hd + e];
                p[j] = vis ? d * scale : -INFINITY;
                mx = fmax(mx, p[j]);
            }
            for (int64_t j = 0; j < Tk; j++)
                sum += (p[j] = exp(p[j] - mx));
            for (int64_t e = 0; e < s->hd; e++) {
                double o = 0;
                for (int64_t j = 0; j < Tk; j++)
                    o += p[j] * v[(j * s->nkv + g) * s->hd + e];
                out[(t * s->nh + h) * s->hd + e] = o / sum;
            }
        }
    free(p);
}

static int run(backend *be, bool exact, tensor *o, const tensor *q, const tensor *k, const tensor *v,
               const struct attn_mask *mask, float scale, float *got)
{
    backend_cpu_set_exact(be, exact);
    return op_attention(be, o, q, k, v, scale, mask) || backend_tensor_get_f32(o, got);
}

static void check(backend *be1, backend *be3, const struct shape *s, bool bf16)
{
    const int64_t Tk = s->q_pos0 >= 0 ? s->q_pos0 + s->T : s->T;
    tensor q, k, v, o, seg;
    backend_buffer *b[5];
    tensor_init4(&q, DT_F32, s->hd, s->nh, s->T, 1);
    tensor_init4(&k, DT_F32, s->hd, s->nkv, Tk, 1);
    tensor_init4(&v, DT_F32, s->hd, s->nkv, Tk, 1);
    tensor_init4(&o, DT_F32, s->hd, s->nh, s->T, 1);
    tensor_init4(&seg, DT_I32, s->T, 1, 1, 1);
    const size_t nq = (size_t)(s->hd * s->nh * s->T), nk = (size_t)(s->hd * s->nkv * Tk);
    float *qf = malloc(nq * sizeof *qf), *kf = malloc(nk * sizeof *kf), *vf = malloc(nk * sizeof *vf);
    float *r1 = malloc(nq * sizeof *r1), *r3 = malloc(nq * sizeof *r3), *re = malloc(nq * sizeof *re);
    double *want = malloc(nq * sizeof *want);
    int32_t *ids = malloc((size_t)s->T * sizeof *ids);
    for (size_t i = 0; i < nq; i++) /* scores of a few units: a softmax with clear winners */
        qf[i] = test_randf(-1.0f, 1.0f) * 3.0f;
    for (size_t i = 0; i < nk; i++)
        kf[i] = test_randf(-1.0f, 1.0f), vf[i] = test_randf(-1.0f, 1.0f);
    for (int64_t t = 0; t < s->T; t++)
        ids[t] = t < s->T / 3 ? 7 : 2;
    const float scale = 1.0f / sqrtf((float)s->hd);
    struct attn_mask mask = s->q_pos0 >= 0 ? (struct attn_mask){.kind = ATTN_CAUSAL, .q_pos0 = s->q_pos0, .bf16 = true}
                                           : (struct attn_mask){.kind = ATTN_SEGMENTS, .seg = &seg, .bf16 = true};
    struct attn_mask f32_mask = mask;
    f32_mask.bf16 = false;
    float *rn = malloc(nq * sizeof *rn);
    int rc = backend_tensor_alloc(be1, &q, &b[0]) || backend_tensor_alloc(be1, &k, &b[1]) ||
             backend_tensor_alloc(be1, &v, &b[2]) || backend_tensor_alloc(be1, &o, &b[3]) ||
             backend_tensor_alloc(be1, &seg, &b[4]) || backend_tensor_set_f32(&q, qf) ||
             backend_tensor_set_f32(&k, kf) || backend_tensor_set_f32(&v, vf);
    if (!rc)
        memcpy(seg.data, ids, (size_t)s->T * sizeof *ids);
    rc = rc || run(be1, false, &o, &q, &k, &v, &mask, scale, r1) || run(be3, false, &o, &q, &k, &v, &mask, scale, r3) ||
         run(be1, true, &o, &q, &k, &v, &mask, scale, re) || run(be1, false, &o, &q, &k, &v, &f32_mask, scale, rn);
    if (ok(rc == 0, "%s: attention ran", s->what)) {
        reference(s, qf, kf, vf, ids, Tk, scale, want);
        const double eb = rel_l2_d(r1, want, nq), ee = rel_l2_d(re, want, nq);
        ok(ee <= TOL_F32, "%s: exact vs reference %.2e <= %.0e", s->what, ee, TOL_F32);
        if (bf16) {
            ok(eb <= TOL_BF16, "%s: bf16 path vs reference %.2e <= %.0e", s->what, eb, TOL_BF16);
            const double apart = rel_l2(r1, re, nq);
            ok(apart > MIN_APART, "%s: the bf16 path ran (%.2e from the exact result)", s->what, apart);
        } else {
            skip("no AVX512-BF16 here: the bf16 attention does not run", "bf16 path vs reference");
            ok(eb <= TOL_F32, "%s: not exact keeps f32 here, %.2e <= %.0e", s->what, eb, TOL_F32);
        }
        ok(!memcmp(r1, r3, nq * sizeof *r1), "%s: 1 and 3 threads give the same bits", s->what);
        ok(rel_l2_d(rn, want, nq) <= TOL_F32, "%s: not accepting bf16 keeps f32, %.2e <= %.0e", s->what,
           rel_l2_d(rn, want, nq), TOL_F32);
    }
    for (int i = 0; i < 5; i++)
        backend_buffer_free(b[i]);
    free(qf), free(kf), free(vf), free(r1), free(r3), free(re), free(rn), free(want), free(ids);
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
    diag("AVX512-BF16 attention: %s", bf16 ? "yes" : "no");
    const struct shape shapes[] = {
        {"tower hd 64, two images, 149 patches", 64, 4, 4, 149, -1},
        {"tower hd 72, two images, 100 patches", 72, 3, 3, 100, -1},
        {"text hd 256, GQA 8/2, 67 queries after 30 cached keys", 256, 8, 2, 67, 30},
        {"text hd 64, GQA 4/1, 130 queries", 64, 4, 1, 130, 0},
        /* one tile per head: the tiles round their own key blocks */
        {"tower hd 64, two images, 51 patches", 64, 2, 2, 51, -1},
        {"text hd 256, GQA 8/2, 5 queries after 100 cached keys", 256, 8, 2, 5, 100},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        check(be1, be3, &shapes[i], bf16);
    backend_free(be1), backend_free(be3);
    return done_testing();
}
