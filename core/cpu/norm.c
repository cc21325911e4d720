/* norm.c — CPU row normalisations (core/ops.h): RMSNorm with optional (w + w_shift) scale
   (spec §2.3), gated RMSNorm of the GDN output (spec §2.3, §2.5 step 9), LayerNorm with bias
   (spec §4.5) and the L2 norm of q/k (spec §2.5 step 6). Row statistics are summed in double so
   rows of 4096+ values keep full f32 accuracy; the per-element work stays in f32 as in HF. */
#include <math.h>
#include <stdint.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/vmath.h"
#include "core/util.h"
#include "seer.h"

/* Σ x² in double. Four partial sums break the add dependency chain (the loop would otherwise
   wait on each double add); the order differs from a plain loop only far below f32 precision. */
static double sum_sq(const float *x, int64_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += (double)x[j] * x[j];
        s1 += (double)x[j + 1] * x[j + 1];
        s2 += (double)x[j + 2] * x[j + 2];
        s3 += (double)x[j + 3] * x[j + 3];
    }
    for (; j < n; j++)
        s0 += (double)x[j] * x[j];
    return (s0 + s1) + (s2 + s3);
}

/* One context serves all four ops; each leaves the fields it does not use NULL/0. */
struct norm_ctx {
    const tensor *z;       /* gate of rmsnorm_gated */
    const float *w, *b;    /* scale and bias vectors {ne0}; w NULL = 1 */
    float w_shift, eps;
};

static void rmsnorm_row(const void *p, int64_t r, const float *x, float *y, int64_t n)
{
    const struct norm_ctx *c = p;
    (void)r;
    /* spec §2.3: x · rsqrt(mean(x²) + eps), then the weight (1 + w for HF's zero-centred
       weights, which the caller asks for with w_shift = 1) */
    float rs = (float)(1.0 / sqrt(sum_sq(x, n) / (double)n + (double)c->eps));
    if (c->w) {
        for (int64_t j = 0; j < n; j++)
            y[j] = (x[j] * rs) * (c->w[j] + c->w_shift);
    } else {
        for (int64_t j = 0; j < n; j++)
            y[j] = x[j] * rs;
    }
}

int cpu_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps)
{
    struct norm_ctx c = {.w = w ? (const float *)w->data : NULL, .w_shift = w_shift, .eps = eps};
    cpu_run_rows(be, out, x, rmsnorm_row, &c);
    return SEER_OK;
}

static void rmsnorm_gated_row(const void *p, int64_t r, const float *x, float *y, int64_t n)
{
    const struct norm_ctx *c = p;
    const float *z = (const float *)cpu_row_at(c->z, r);
    /* spec §2.3 gated form: w is a plain scale (not 1 + w), the gate is silu(z) */
    float rs = (float)(1.0 / sqrt(sum_sq(x, n) / (double)n + (double)c->eps));
    float g[256]; /* silu(z) a piece at a time: y may be x, so it cannot hold the gate */
    for (int64_t j0 = 0; j0 < n; j0 += 256) {
        const int64_t m = MIN(256, n - j0);
        vm_silu(g, z + j0, m);
        for (int64_t j = 0; j < m; j++)
            y[j0 + j] = (x[j0 + j] * rs) * c->w[j0 + j] * g[j];
    }
}

int cpu_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps)
{
    struct norm_ctx c = {.z = z, .w = (const float *)w->data, .eps = eps};
    cpu_run_rows(be, out, x, rmsnorm_gated_row, &c);
    return SEER_OK;
}

static void layernorm_row(const void *p, int64_t r, const float *x, float *y, int64_t n)
{
    const struct norm_ctx *c = p;
    (void)r;
    double mean = 0;
    for (int64_t j = 0; j < n; j++)
        mean += x[j];
    mean /= (double)n;
    /* two passes: the variance of centred values does not cancel catastrophically the way
       E[x²] − mean² does when |mean| ≫ std (vision activations carry large offsets) */
    double var = 0;
    for (int64_t j = 0; j < n; j++) {
        double d = (double)x[j] - mean;
        var += d * d;
    }
    var /= (double)n; /* biased variance, as torch.nn.LayerNorm (spec §4.5) */
    double rs = 1.0 / sqrt(var + (double)c->eps);
    for (int64_t j = 0; j < n; j++)
        y[j] = (float)(((double)x[j] - mean) * rs) * c->w[j] + c->b[j];
}

int cpu_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps)
{
    struct norm_ctx c = {.w = (const float *)w->data, .b = (const float *)b->data, .eps = eps};
    cpu_run_rows(be, out, x, layernorm_row, &c);
    return SEER_OK;
}

static void l2norm_row(const void *p, int64_t r, const float *x, float *y, int64_t n)
{
    const struct norm_ctx *c = p;
    (void)r;
    /* spec §2.5 step 6: eps goes inside the rsqrt, added to the sum (not the mean) */
    float rs = (float)(1.0 / sqrt(sum_sq(x, n) + (double)c->eps));
    for (int64_t j = 0; j < n; j++)
        y[j] = x[j] * rs;
}

int cpu_l2norm(backend *be, tensor *out, const tensor *x, float eps)
{
    struct norm_ctx c = {.eps = eps};
    cpu_run_rows(be, out, x, l2norm_row, &c);
    return SEER_OK;
}
