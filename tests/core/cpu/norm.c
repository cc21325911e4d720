/* Tests core/cpu/norm.c through op_*: RMSNorm (no weight, w_shift 0 and 1 — spec §2.3), gated
   RMSNorm (spec §2.3), LayerNorm with bias (spec §4.5) and the L2 norm (spec §2.5 step 6), each
   against a double-precision reference written here from the spec formulas, on random rows of
   awkward lengths, strided views, in place, 1 vs 2 threads, long rows whose sums an f32
   accumulator would get wrong, and rows small enough that where eps is added matters. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "views.h"

static backend *be1, *be2; /* 1 and 2 threads */

enum norm_kind { RMS, RMS_W0, RMS_W1, GATED, LAYER, L2, NORM_KINDS };
static const char *kind_names[] = {"rmsnorm (no w)", "rmsnorm (w, shift 0)", "rmsnorm (w, shift 1)",
                                   "rmsnorm_gated", "layernorm", "l2norm"};

static const float eps = 1e-6f; /* every norm's eps in spec §9 */

/* Reference in double, row by row, from the spec formulas. */
static void ref_norm(enum norm_kind k, const float *x, const float *z, const float *w, const float *b, int64_t n0,
                     int64_t nrows, double *out)
{
    for (int64_t r = 0; r < nrows; r++) {
        const float *xr = x + r * n0;
        double s = 0, mean = 0, var = 0;
        for (int64_t j = 0; j < n0; j++) {
            s += (double)xr[j] * xr[j];
            mean += xr[j];
        }
        mean /= (double)n0;
        for (int64_t j = 0; j < n0; j++)
            var += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        var /= (double)n0;
        for (int64_t j = 0; j < n0; j++) {
            double v = xr[j], o;
            switch (k) {
            case RMS: o = v / sqrt(s / n0 + eps); break;                       /* x·rsqrt(mean x² + eps) */
            case RMS_W0: o = v / sqrt(s / n0 + eps) * w[j]; break;
            case RMS_W1: o = v / sqrt(s / n0 + eps) * (1.0 + w[j]); break;      /* zero-centred (1 + w) */
            case GATED: {
                double zz = z[r * n0 + j];
                o = v / sqrt(s / n0 + eps) * w[j] * (zz / (1.0 + exp(-zz))); /* · w · silu(z) */
                break;
            }
            case LAYER: o = (v - mean) / sqrt(var + eps) * w[j] + b[j]; break; /* biased variance */
            default: o = v / sqrt(s + eps); break;                             /* L2: Σx², not the mean */
            }
            out[r * n0 + j] = o;
        }
    }
}

static int call_norm(backend *be, enum norm_kind k, tensor *out, const tensor *x, const tensor *z, const tensor *w,
                     const tensor *b)
{
    switch (k) {
    case RMS: return op_rmsnorm(be, out, x, NULL, 0.0f, eps);
    case RMS_W0: return op_rmsnorm(be, out, x, w, 0.0f, eps);
    case RMS_W1: return op_rmsnorm(be, out, x, w, 1.0f, eps);
    case GATED: return op_rmsnorm_gated(be, out, x, z, w, eps);
    case LAYER: return op_layernorm(be, out, x, w, b, eps);
    default: return op_l2norm(be, out, x, eps);
    }
}

/* Runs norm k on x (shape ne) and returns the result. mode 0: contiguous; 1: x, z and out strided
   views (also checks nothing outside out was written, via *outside_ok); 2: in place (out = x). */
static float *run_norm(backend *be, enum norm_kind k, const int64_t *ne, const float *x, const float *z,
                       const float *w, const float *b, int mode, int *outside_ok)
{
    size_t n = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]);
    float *y = malloc(n * sizeof *y);
    tensor *tw = test_tensor(be, DT_F32, ne[0], 1, 1, 1, w), *tb = test_tensor(be, DT_F32, ne[0], 1, 1, 1, b);
    int rc;
    if (outside_ok)
        *outside_ok = 1;
    if (mode == 1) {
        struct sview vx, vz, vy;
        sview_make(&vx, be, ne), sview_make(&vz, be, ne), sview_make(&vy, be, ne);
        view_set(&vx.v, x), view_set(&vz.v, z);
        rc = call_norm(be, k, &vy.v, &vx.v, &vz.v, tw, tb);
        view_get(&vy.v, y);
        if (outside_ok)
            *outside_ok = sview_outside_untouched(&vy);
        sview_free(&vx), sview_free(&vz), sview_free(&vy);
    } else {
        tensor *tx = test_tensor(be, DT_F32, ne[0], ne[1], ne[2], ne[3], x);
        tensor *tz = test_tensor(be, DT_F32, ne[0], ne[1], ne[2], ne[3], z);
        tensor *ty = mode == 2 ? tx : test_tensor(be, DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        rc = call_norm(be, k, ty, tx, tz, tw, tb);
        memcpy(y, ty->data, n * sizeof *y);
        if (ty != tx)
            test_tensor_free(ty);
        test_tensor_free(tx), test_tensor_free(tz);
    }
    test_tensor_free(tw), test_tensor_free(tb);
    if (rc != SEER_OK) {
        diag("%s: %s", kind_names[k], seer_last_error());
        free(y);
        return NULL;
    }
    return y;
}

static float *rand_vec(size_t n, float offset, float scale)
{
    float *x = malloc(n * sizeof *x);
    test_fill_normal(x, n, scale);
    for (size_t i = 0; i < n; i++)
        x[i] += offset;
    return x;
}

/* One case: returns rel L2 of the op vs the reference (INFINITY on failure). */
static double norm_case(enum norm_kind k, const int64_t *ne, float offset, float scale, int mode, int *outside_ok)
{
    size_t n = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]);
    float *x = rand_vec(n, offset, scale), *z = rand_vec(n, 0.0f, 2.0f);
    float *w = rand_vec((size_t)ne[0], 0.0f, 0.5f), *b = rand_vec((size_t)ne[0], 0.0f, 0.5f);
    double *ref = malloc(n * sizeof *ref);
    ref_norm(k, x, z, w, b, ne[0], (int64_t)n / ne[0], ref);
    float *y = run_norm(be1, k, ne, x, z, w, b, mode, outside_ok);
    double e = y ? rel_l2_d(y, ref, n) : INFINITY;
    free(x), free(z), free(w), free(b), free(ref), free(y);
    return e;
}

static void test_sweep(void)
{
    static const int64_t sizes0[] = {1, 7, 100, 128, 256, 4097};
    static const int64_t rows[][3] = {{1, 1, 1}, {3, 1, 1}, {33, 1, 1}, {3, 2, 2}};
    static const char *modes[] = {"contiguous", "strided views", "in place"};
    for (int k = 0; k < NORM_KINDS; k++)
        for (int mode = 0; mode < 3; mode++) {
            double worst = 0;
            int outside = 1;
            for (size_t a = 0; a < ARRAY_LEN(sizes0); a++)
                for (size_t r = 0; r < ARRAY_LEN(rows); r++) {
                    int64_t ne[4] = {sizes0[a], rows[r][0], rows[r][1], rows[r][2]};
                    int o;
                    /* layernorm rows get a large common offset: the mean must cancel cleanly */
                    worst = fmax(worst, norm_case((enum norm_kind)k, ne, k == LAYER ? 30.0f : 0.0f, 1.5f, mode, &o));
                    outside &= o;
                }
            /* tolerance 1e-5: a few f32 roundings per element (~3e-7) on sums kept exact */
            ok(worst <= 1e-5 && outside, "%s, %s: ne0 1..4097 x rows 1..33 vs double (worst rel L2 %.2e <= 1e-5)%s",
               kind_names[k], modes[mode], worst, outside ? "" : " [wrote outside the view]");
        }
}

/* A single row of 2^20 + 3 values with a large offset, checked element by element: the row
   statistic must be accurate to ~1e-7, which f32 running sums typically miss (their rounding errors
   random-walk to ~sqrt(n)·2^-24 ≈ 6e-5 relative here, ~3e-5 with four partial sums). */
static void test_long_rows(void)
{
    int64_t ne[4] = {1048579, 1, 1, 1};
    size_t n = 1048579;
    for (int k = 0; k < NORM_KINDS; k++) {
        float *x = rand_vec(n, 40.0f, 3.0f), *z = rand_vec(n, 0.0f, 2.0f);
        float *w = rand_vec(n, 0.0f, 0.5f), *b = rand_vec(n, 0.0f, 0.5f);
        double *ref = malloc(n * sizeof *ref);
        ref_norm((enum norm_kind)k, x, z, w, b, ne[0], 1, ref);
        float *y = run_norm(be1, (enum norm_kind)k, ne, x, z, w, b, 0, NULL);
        double worst = y ? 0 : INFINITY, e = y ? rel_l2_d(y, ref, n) : INFINITY, rms = 0;
        for (size_t i = 0; i < n; i++)
            rms += ref[i] * ref[i];
        rms = sqrt(rms / (double)n);
        /* error relative to the element, or to the row's RMS for elements near zero (layernorm's
           + b can cancel, where a relative error says nothing about the row statistic) */
        for (size_t i = 0; y && i < n; i++)
            worst = fmax(worst, fabs(y[i] - ref[i]) / fmax(fabs(ref[i]), rms));
        /* tolerance 1e-6 per element: at most ~6 f32 roundings (<= 6e-8 each) on an exact row
           statistic */
        ok(worst <= 1e-6 && e <= 1e-6, "%s on one row of 2^20+3 values (offset 40): worst element error %.2e <= 1e-6",
           kind_names[k], worst);
        free(x), free(z), free(w), free(b), free(ref), free(y);
    }
}

/* Rows with mean(x²) ~ eps: distinguishes eps inside the rsqrt from eps outside, and (for L2)
   eps added to the sum from eps added to the mean. */
static void test_small_rows(void)
{
    int64_t ne[4] = {128, 3, 1, 1};
    for (int k = 0; k < NORM_KINDS; k++) {
        int o; /* (layernorm: var ~ 1e-6 ~ eps likewise) */
        double e = norm_case((enum norm_kind)k, ne, 0.0f, 1e-3f, 0, &o);
        /* tolerance 1e-5 as in the sweep; misplacing eps changes the result by >1e-1 here */
        ok(e <= 1e-5, "%s with mean(x^2) ~ eps (x ~ 1e-3): rel L2 %.2e <= 1e-5", kind_names[k], e);
    }
}

static void test_threads(void)
{
    int64_t ne[4] = {4097, 33, 1, 1};
    size_t n = 4097 * 33;
    float *x = rand_vec(n, 1.0f, 2.0f), *z = rand_vec(n, 0.0f, 2.0f);
    float *w = rand_vec(4097, 0.0f, 0.5f), *b = rand_vec(4097, 0.0f, 0.5f);
    for (int k = 0; k < NORM_KINDS; k++) {
        float *y1 = run_norm(be1, (enum norm_kind)k, ne, x, z, w, b, 0, NULL);
        float *y2 = run_norm(be2, (enum norm_kind)k, ne, x, z, w, b, 0, NULL);
        ok(y1 && y2 && memcmp(y1, y2, n * sizeof *y1) == 0, "%s on {4097,33}: 1 and 2 threads give identical bits",
           kind_names[k]);
        free(y1), free(y2);
    }
    free(x), free(z), free(w), free(b);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    if (backend_cpu_create(1, &be1) != SEER_OK || backend_cpu_create(2, &be2) != SEER_OK) {
        ok(0, "cpu backends: %s", seer_last_error());
        return done_testing();
    }
    test_sweep();
    test_long_rows();
    test_small_rows();
    test_threads();
    backend_free(be1);
    backend_free(be2);
    return done_testing();
}
