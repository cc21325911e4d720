/* Tests core/cpu/elementwise.c through op_*: add/mul with every broadcast pattern, the unary
   activations (softplus threshold, GELU tanh vs erf), scale, f32 → f32/f16/bf16 copies between
   strided layouts, and softmax; each against a double-precision reference written here from the
   formulas in core/backend.h / core/ops.h, on random data at awkward sizes, plus strided views,
   in-place calls and 1- vs 2-thread bitwise equality. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "views.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static backend *be1, *be2; /* 1 and 2 threads */

static const int64_t sizes0[] = {1, 7, 100, 128, 256, 4097};
static const int64_t rows[] = {1, 3, 33};

static float *rand_normal(size_t n, float scale)
{
    float *x = malloc(n * sizeof *x);
    test_fill_normal(x, n, scale);
    return x;
}

/* ---- unary ---------------------------------------------------------------------------------- */

/* The formulas of core/backend.h enum unary_op, in double. The GELUs use the identities
   1 + tanh u = 2 / (1 + e^(−2u)) and 1 + erf z = erfc(−z) so the reference itself stays exact in
   the far negative tail, where 1 + tanh / 1 + erf cancel even in double. */
static double ref_unary(enum unary_op op, double x)
{
    const double k = sqrt(2.0 / 3.14159265358979323846);
    switch (op) {
    case UNARY_SILU: return x / (1.0 + exp(-x));
    case UNARY_GELU_TANH: return 0.5 * x * (2.0 / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x))));
    case UNARY_GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UNARY_SOFTPLUS: return x > 20.0 ? x : log1p(exp(x));
    case UNARY_EXP: return exp(x);
    default: return NAN;
    }
}

static const char *unary_names[UNARY_COUNT] = {"silu", "gelu_tanh", "gelu_erf", "sigmoid", "softplus", "exp"};

/* Runs op on x (n values, shape {n0, n/n0}) and returns the output. */
static float *run_unary(backend *be, enum unary_op op, const float *x, int64_t n0, int64_t n1)
{
    tensor *tx = test_tensor(be, DT_F32, n0, n1, 1, 1, x);
    tensor *ty = test_tensor(be, DT_F32, n0, n1, 1, 1, NULL);
    int rc = op_unary(be, op, ty, tx);
    float *y = rc == SEER_OK ? test_tensor_read(ty) : NULL;
    test_tensor_free(tx);
    test_tensor_free(ty);
    return y;
}

static void test_unary(void)
{
    for (int op = 0; op < UNARY_COUNT; op++) {
        int all = 1;
        double worst = 0;
        for (size_t a = 0; a < ARRAY_LEN(sizes0); a++)
            for (size_t b = 0; b < ARRAY_LEN(rows); b++) {
                int64_t n0 = sizes0[a], n1 = rows[b];
                size_t n = (size_t)(n0 * n1);
                float *x = rand_normal(n, 3.0f); /* spans the curved parts of every activation */
                float *y = run_unary(be1, (enum unary_op)op, x, n0, n1);
                double *ref = malloc(n * sizeof *ref);
                for (size_t i = 0; i < n; i++)
                    ref[i] = ref_unary((enum unary_op)op, x[i]);
                double e = y ? rel_l2_d(y, ref, n) : INFINITY;
                worst = fmax(worst, e);
                all &= e <= 1e-5;
                free(x), free(y), free(ref);
            }
        /* tolerance 1e-5: f32 libm calls are within a few ulp (~1e-7 relative) */
        ok(all, "unary %s vs double reference, ne0 1..4097 x rows 1..33 (worst rel L2 %.2e <= 1e-5)",
           unary_names[op], worst);
    }

    /* softplus threshold (spec §2.5 step 4): above 20 the input itself, which also avoids
       log1p(exp(x)) overflowing f32 for x ≳ 88 */
    float xs[] = {20.5f, 21.0f, 25.0f, 88.5f, 100.0f, 1000.0f, 19.0f, -30.0f};
    float *y = run_unary(be1, UNARY_SOFTPLUS, xs, 8, 1);
    int thr = y != NULL;
    for (int i = 0; thr && i < 6; i++)
        thr &= y[i] == xs[i];
    ok(thr, "softplus returns x exactly for x > 20 (20.5 .. 1000, no overflow to inf)");
    ok(y && fabs(y[6] - log1p(exp(19.0))) <= 1e-6 * 19.0 && fabs(y[7] - log1p(exp(-30.0))) <= 1e-6 * 1e-13,
       "softplus below the threshold is log(1+e^x) (19 -> %.9g, -30 -> %.3g)", y ? y[6] : 0, y ? y[7] : 0);
    free(y);

    /* GELU tanh and erf are distinct approximations (spec §4.5 vs §4.6): each must match its own
       formula (1e-5) and differ from the other's by much more than that */
    int64_t n = 4097;
    float *x = malloc((size_t)n * sizeof *x);
    test_fill_uniform(x, (size_t)n, -4.0f, 4.0f);
    double *rt = malloc((size_t)n * sizeof *rt), *re = malloc((size_t)n * sizeof *re);
    for (int64_t i = 0; i < n; i++) {
        rt[i] = ref_unary(UNARY_GELU_TANH, x[i]);
        re[i] = ref_unary(UNARY_GELU_ERF, x[i]);
    }
    float *yt = run_unary(be1, UNARY_GELU_TANH, x, n, 1), *ye = run_unary(be1, UNARY_GELU_ERF, x, n, 1);
    double tt = rel_l2_d(yt, rt, (size_t)n), te = rel_l2_d(yt, re, (size_t)n);
    double ee = rel_l2_d(ye, re, (size_t)n), et = rel_l2_d(ye, rt, (size_t)n);
    ok(tt <= 1e-5 && ee <= 1e-5 && te > 5e-5 && et > 5e-5,
       "gelu_tanh matches tanh form (%.1e) not erf form (%.1e); gelu_erf matches erf (%.1e) not tanh (%.1e)", tt, te,
       ee, et);
    free(x), free(rt), free(re), free(yt), free(ye);
    /* the negative tail, element by element: values down to ~1e-20 must keep f32 relative
       accuracy (a plain 1 + tanh / 1 + erf in f32 returns 0 or a few-ulp residue there) */
    float tail[64];
    for (int i = 0; i < 64; i++)
        tail[i] = -3.0f - 5.0f * (float)i / 63.0f; /* -3 .. -8 */
    yt = run_unary(be1, UNARY_GELU_TANH, tail, 64, 1), ye = run_unary(be1, UNARY_GELU_ERF, tail, 64, 1);
    double worst = 0;
    for (int i = 0; i < 64; i++) {
        double a = ref_unary(UNARY_GELU_TANH, tail[i]), b = ref_unary(UNARY_GELU_ERF, tail[i]);
        worst = fmax(worst, fmax(fabs(yt[i] - a) / fabs(a), fabs(ye[i] - b) / fabs(b)));
    }
    /* tolerance 1e-5 per element: a few f32 roundings; the cancelling form errs by ~1e-1 */
    ok(worst <= 1e-5, "gelu tanh/erf for x in [-8,-3]: worst element relative error %.1e <= 1e-5", worst);
    free(yt), free(ye);
}

/* ---- binary --------------------------------------------------------------------------------- */

/* out = a op b with b broadcast in each dim where b->ne is 1 (core/ops.h op_add). */
static void ref_binary(enum binary_op op, const int64_t *ne, const float *a, const int64_t *nbe, const float *b,
                       double *out)
{
    size_t n = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++, n++) {
                    int64_t j0 = nbe[0] == 1 ? 0 : i0, j1 = nbe[1] == 1 ? 0 : i1;
                    int64_t j2 = nbe[2] == 1 ? 0 : i2, j3 = nbe[3] == 1 ? 0 : i3;
                    double bv = b[((j3 * nbe[2] + j2) * nbe[1] + j1) * nbe[0] + j0];
                    out[n] = op == BINARY_ADD ? (double)a[n] + bv : (double)a[n] * bv;
                }
}

static int64_t prod4(const int64_t *ne) { return ne[0] * ne[1] * ne[2] * ne[3]; }

/* One binary case; mode 0: contiguous, 1: a, b and out strided views, 2: in place (out = a). */
static double binary_case(enum binary_op op, const int64_t *ne, const int64_t *nbe, int mode, int *outside_ok)
{
    size_t n = (size_t)prod4(ne), nb = (size_t)prod4(nbe);
    float *a = rand_normal(n, 1.0f), *b = rand_normal(nb, 1.0f), *y = malloc(n * sizeof *y);
    double *ref = malloc(n * sizeof *ref);
    ref_binary(op, ne, a, nbe, b, ref);
    int rc;
    *outside_ok = 1;
    if (mode == 1) {
        struct sview va, vb, vy;
        sview_make(&va, be1, ne), sview_make(&vb, be1, nbe), sview_make(&vy, be1, ne);
        view_set(&va.v, a), view_set(&vb.v, b);
        rc = op == BINARY_ADD ? op_add(be1, &vy.v, &va.v, &vb.v) : op_mul(be1, &vy.v, &va.v, &vb.v);
        view_get(&vy.v, y);
        *outside_ok = sview_outside_untouched(&vy);
        sview_free(&va), sview_free(&vb), sview_free(&vy);
    } else {
        tensor *ta = test_tensor(be1, DT_F32, ne[0], ne[1], ne[2], ne[3], a);
        tensor *tb = test_tensor(be1, DT_F32, nbe[0], nbe[1], nbe[2], nbe[3], b);
        tensor *ty = mode == 2 ? ta : test_tensor(be1, DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        rc = op == BINARY_ADD ? op_add(be1, ty, ta, tb) : op_mul(be1, ty, ta, tb);
        float *r = test_tensor_read(ty);
        memcpy(y, r, n * sizeof *y);
        free(r);
        if (ty != ta)
            test_tensor_free(ty);
        test_tensor_free(ta), test_tensor_free(tb);
    }
    double e = rc == SEER_OK ? rel_l2_d(y, ref, n) : INFINITY;
    free(a), free(b), free(y), free(ref);
    return e;
}

static void test_binary(void)
{
    static const int64_t shapes[][4] = {{7, 3, 2, 2}, {4097, 3, 1, 1}, {1, 33, 1, 1}, {100, 5, 3, 2}, {128, 1, 1, 1}};
    static const char *mode_names[] = {"contiguous", "strided views", "in place"};
    for (int op = 0; op < BINARY_COUNT; op++)
        for (int mode = 0; mode < 3; mode++) {
            int all = 1, outside = 1, cases = 0;
            double worst = 0;
            for (size_t s = 0; s < ARRAY_LEN(shapes); s++) {
                const int64_t *ne = shapes[s];
                /* b patterns: full shape, a row vector, a scalar per row, a row per ne2 slice, one scalar */
                int64_t pats[5][4] = {{ne[0], ne[1], ne[2], ne[3]}, {ne[0], 1, 1, 1}, {1, ne[1], ne[2], ne[3]},
                                      {ne[0], 1, ne[2], 1}, {1, 1, 1, 1}};
                for (int p = 0; p < 5; p++) {
                    int o;
                    double e = binary_case((enum binary_op)op, ne, pats[p], mode, &o);
                    worst = fmax(worst, e);
                    all &= e <= 1e-6;
                    outside &= o;
                    cases++;
                }
            }
            /* tolerance 1e-6: one f32 rounding per element (<= 6e-8 relative) */
            ok(all && outside, "%s, %s: %d shapes x broadcast patterns vs double reference (worst %.2e <= 1e-6)%s",
               op == BINARY_ADD ? "add" : "mul", mode_names[mode], cases, worst,
               outside ? "" : " [wrote outside the output view]");
        }
}

/* ---- scale ---------------------------------------------------------------------------------- */

static void test_scale(void)
{
    int64_t ne[4] = {100, 3, 2, 1};
    size_t n = (size_t)prod4(ne);
    float *x = rand_normal(n, 2.0f), *y = malloc(n * sizeof *y);
    double *ref = malloc(n * sizeof *ref);
    float s = test_randf(-3.0f, 3.0f);
    for (size_t i = 0; i < n; i++)
        ref[i] = (double)x[i] * s;
    struct sview vx, vy;
    sview_make(&vx, be1, ne), sview_make(&vy, be1, ne);
    view_set(&vx.v, x);
    int rc = op_scale(be1, &vy.v, &vx.v, s);
    view_get(&vy.v, y);
    double e = rc == SEER_OK ? rel_l2_d(y, ref, n) : INFINITY;
    ok(e <= 1e-6 && sview_outside_untouched(&vy), "scale on strided views vs double (rel L2 %.2e <= 1e-6, one rounding)",
       e);
    rc = op_scale(be1, &vx.v, &vx.v, s); /* in place */
    view_get(&vx.v, y);
    e = rc == SEER_OK ? rel_l2_d(y, ref, n) : INFINITY;
    ok(e <= 1e-6, "scale in place (rel L2 %.2e <= 1e-6)", e);
    sview_free(&vx), sview_free(&vy);
    free(x), free(y), free(ref);
}

/* ---- cpy -------------------------------------------------------------------------------------- */

/* Independent decoders (IEEE binary16; bfloat16 = top half of an f32). */
static double dec_f16(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static double dec_bf16(uint16_t h)
{
    uint32_t w = (uint32_t)h << 16;
    float f;
    memcpy(&f, &w, 4);
    return f;
}

/* True when bits h is a nearest representable value to v: neither magnitude neighbour is closer. */
static int is_nearest(enum dtype t, uint16_t h, double v)
{
    double (*dec)(uint16_t) = t == DT_F16 ? dec_f16 : dec_bf16;
    uint16_t sign = h & 0x8000, mag = h & 0x7fff, inf = t == DT_F16 ? 0x7c00 : 0x7f80;
    double d = fabs(dec(h) - v);
    if (mag >= inf)
        return 0;
    if (mag > 0 && fabs(dec((uint16_t)(sign | (mag - 1))) - v) < d)
        return 0;
    if (mag + 1 < inf && fabs(dec((uint16_t)(sign | (mag + 1))) - v) < d)
        return 0;
    return 1;
}

/* Copies a strided f32 view into a strided view of a dt base (padded rows, dims 1/2 swapped, like
   writing K into a cache laid out differently) and checks every element and the gaps. */
static void cpy_case(backend *be, enum dtype dt, const int64_t *ne, int *elems_ok, int *outside_ok, uint16_t **raw_out)
{
    size_t n = (size_t)prod4(ne), esz = dt == DT_F32 ? 4 : 2;
    float *x = malloc(n * sizeof *x);
    /* magnitudes 1e-6 .. 1e4 reach f16 subnormals and both ends of its range */
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(test_randn() * pow(10.0, test_randf(-6.0f, 4.0f)));
    struct sview vx;
    sview_make(&vx, be, ne);
    view_set(&vx.v, x);
    tensor *base = test_tensor(be, dt, ne[0] + 3, ne[2], ne[1], ne[3], NULL);
    size_t nbytes = tensor_nbytes(base);
    memset(base->data, 0xA5, nbytes); /* sentinel bytes */
    size_t nb[4] = {esz, base->nb[2], base->nb[1], base->nb[3]};
    tensor dst = tensor_view(base, 4, ne, nb, 2 * esz);
    int rc = op_cpy(be, &dst, &vx.v);
    *elems_ok = rc == SEER_OK;
    size_t k = 0;
    if (raw_out)
        *raw_out = malloc(n * 2);
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++, k++) {
                    char *p = (char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3] + i0 * esz;
                    if (dt == DT_F32) {
                        float f;
                        memcpy(&f, p, 4);
                        *elems_ok &= f == x[k];
                    } else {
                        uint16_t h;
                        memcpy(&h, p, 2);
                        *elems_ok &= is_nearest(dt, h, x[k]);
                        if (raw_out)
                            (*raw_out)[k] = h;
                    }
                    memset(p, 0xA5, esz); /* restore the sentinel to check the gaps below */
                }
    *outside_ok = 1;
    for (size_t i = 0; i < nbytes; i++)
        *outside_ok &= ((unsigned char *)base->data)[i] == 0xA5;
    sview_free(&vx);
    test_tensor_free(base);
    free(x);
}

static void test_cpy(void)
{
    static const enum dtype dts[] = {DT_F32, DT_F16, DT_BF16};
    static const int64_t shapes[][4] = {{1, 1, 1, 1}, {7, 3, 2, 1}, {256, 2, 5, 1}, {100, 3, 2, 2}, {4097, 1, 3, 1}};
    for (size_t d = 0; d < ARRAY_LEN(dts); d++) {
        int all = 1, outside = 1;
        for (size_t s = 0; s < ARRAY_LEN(shapes); s++) {
            int e, o;
            cpy_case(be1, dts[d], shapes[s], &e, &o, NULL);
            all &= e;
            outside &= o;
        }
        /* exact: f32 copies bit for bit; f16/bf16 must be a nearest representable value */
        ok(all, "cpy f32 -> %s between strided views: every element %s", dtype_name(dts[d]),
           dts[d] == DT_F32 ? "identical" : "rounded to a nearest representable value");
        ok(outside, "cpy f32 -> %s wrote nothing outside the destination view", dtype_name(dts[d]));
    }
    /* in place f32 -> f32 (dst == src) leaves the data as it was */
    int64_t ne[4] = {100, 3, 2, 1};
    size_t n = 600;
    float *x = rand_normal(n, 1.0f), *y = malloc(n * sizeof *y);
    struct sview v;
    sview_make(&v, be1, ne);
    view_set(&v.v, x);
    int rc = op_cpy(be1, &v.v, &v.v);
    view_get(&v.v, y);
    ok(rc == SEER_OK && memcmp(x, y, n * sizeof *x) == 0, "cpy onto itself is a no-op");
    sview_free(&v);
    free(x), free(y);
}

/* ---- softmax ---------------------------------------------------------------------------------- */

/* p_j = exp(s·x_j − max) / Σ exp(s·x_k − max) per row, in double; −inf entries give 0, an all −inf
   row gives zeros (the implementation's documented choice). */
static void ref_softmax(const float *x, int64_t n0, int64_t nrows, double s, double *out)
{
    for (int64_t r = 0; r < nrows; r++) {
        const float *xr = x + r * n0;
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n0; j++)
            m = fmax(m, s * xr[j]);
        for (int64_t j = 0; j < n0; j++)
            sum += m == -INFINITY ? 0 : exp(s * xr[j] - m);
        for (int64_t j = 0; j < n0; j++)
            out[r * n0 + j] = m == -INFINITY ? 0 : exp(s * xr[j] - m) / sum;
    }
}

/* mode 0 contiguous, 1 strided views, 2 in place. */
static double softmax_case(const float *x, const int64_t *ne, float s, int mode)
{
    size_t n = (size_t)prod4(ne);
    double *ref = malloc(n * sizeof *ref);
    float *y = malloc(n * sizeof *y);
    ref_softmax(x, ne[0], ne[1] * ne[2] * ne[3], s, ref);
    int rc, outside = 1;
    if (mode == 1) {
        struct sview vx, vy;
        sview_make(&vx, be1, ne), sview_make(&vy, be1, ne);
        view_set(&vx.v, x);
        rc = op_softmax(be1, &vy.v, &vx.v, s);
        view_get(&vy.v, y);
        outside = sview_outside_untouched(&vy);
        sview_free(&vx), sview_free(&vy);
    } else {
        tensor *tx = test_tensor(be1, DT_F32, ne[0], ne[1], ne[2], ne[3], x);
        tensor *ty = mode == 2 ? tx : test_tensor(be1, DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        rc = op_softmax(be1, ty, tx, s);
        float *r = test_tensor_read(ty);
        memcpy(y, r, n * sizeof *y);
        free(r);
        if (ty != tx)
            test_tensor_free(ty);
        test_tensor_free(tx);
    }
    double e = rc == SEER_OK && outside ? rel_l2_d(y, ref, n) : INFINITY;
    free(ref), free(y);
    return e;
}

static void test_softmax(void)
{
    for (int mode = 0; mode < 3; mode++) {
        double worst = 0;
        for (size_t a = 0; a < ARRAY_LEN(sizes0); a++)
            for (size_t b = 0; b < ARRAY_LEN(rows); b++) {
                int64_t ne[4] = {sizes0[a], rows[b], 1, 1};
                float *x = rand_normal((size_t)prod4(ne), 4.0f);
                worst = fmax(worst, softmax_case(x, ne, test_randf(0.05f, 2.0f), mode));
                free(x);
            }
        /* tolerance 1e-5: expf and the f32 product s·x (|s·x| <~ 40) are within ~1e-6 */
        ok(worst <= 1e-5, "softmax (%s) ne0 1..4097 x rows 1..33 vs double (worst rel L2 %.2e <= 1e-5)",
           mode == 0 ? "contiguous" : mode == 1 ? "strided views, gaps untouched" : "in place", worst);
    }
    /* logits near 1000: exp would overflow without the max subtracted */
    int64_t ne[4] = {100, 3, 2, 1};
    size_t n = 600;
    float *x = rand_normal(n, 2.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 1000.0f;
    double e = softmax_case(x, ne, 1.0f, 0);
    /* tolerance 1e-4: the f32 product s·x near 1000 carries ~3e-5 absolute error into each exponent */
    ok(e <= 1e-4, "softmax of values near 1000 is finite and right (rel L2 %.2e <= 1e-4)", e);
    /* masked entries: −inf gives 0; a fully masked row gives zeros rather than NaN */
    for (size_t i = 0; i < 100; i++)
        x[i] = -INFINITY; /* row 0 all masked */
    for (size_t i = 100; i < n; i += 3)
        x[i] = -INFINITY;
    ne[0] = 100;
    e = softmax_case(x, ne, 0.5f, 0);
    ok(e <= 1e-4, "softmax with -inf entries and an all -inf row matches (rel L2 %.2e <= 1e-4, same offsets)", e);
    free(x);
}

/* ---- 1 vs 2 threads --------------------------------------------------------------------------- */

/* Runs one op on a fresh {4097,33} input on backend be (large enough to use the pool) and
   returns the output as raw floats. which: 0 add (row broadcast), 1 silu, 2 gelu_erf, 3 scale,
   4 softmax, 5 cpy to f16 (bits returned in the float buffer's bytes). */
static float *thread_run(backend *be, int which, const float *x, const float *brow)
{
    int64_t n0 = 4097, n1 = 33;
    tensor *tx = test_tensor(be, DT_F32, n0, n1, 1, 1, x);
    tensor *ty = test_tensor(be, which == 5 ? DT_F16 : DT_F32, n0, n1, 1, 1, NULL);
    tensor *tb = test_tensor(be, DT_F32, n0, 1, 1, 1, brow);
    int rc = which == 0   ? op_add(be, ty, tx, tb)
             : which == 1 ? op_silu(be, ty, tx)
             : which == 2 ? op_unary(be, UNARY_GELU_ERF, ty, tx)
             : which == 3 ? op_scale(be, ty, tx, 0.3f)
             : which == 4 ? op_softmax(be, ty, tx, 0.7f)
                          : op_cpy(be, ty, tx);
    float *y = calloc((size_t)(n0 * n1), sizeof *y);
    if (rc == SEER_OK)
        memcpy(y, ty->data, tensor_nbytes(ty));
    test_tensor_free(tx), test_tensor_free(ty), test_tensor_free(tb);
    return rc == SEER_OK ? y : (free(y), NULL);
}

static void test_threads(void)
{
    static const char *names[] = {"add", "silu", "gelu_erf", "scale", "softmax", "cpy f16"};
    size_t n = 4097 * 33;
    float *x = rand_normal(n, 2.0f), *b = rand_normal(4097, 1.0f);
    for (int w = 0; w < 6; w++) {
        float *y1 = thread_run(be1, w, x, b), *y2 = thread_run(be2, w, x, b);
        ok(y1 && y2 && memcmp(y1, y2, n * sizeof *y1) == 0, "%s on {4097,33}: 1 and 2 threads give identical bits",
           names[w]);
        free(y1), free(y2);
    }
    free(x), free(b);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    if (backend_cpu_create(1, &be1) != SEER_OK || backend_cpu_create(2, &be2) != SEER_OK) {
        ok(0, "cpu backends: %s", seer_last_error());
        return done_testing();
    }
    test_unary();
    test_binary();
    test_scale();
    test_cpy();
    test_softmax();
    test_threads();
    backend_free(be1);
    backend_free(be2);
    return done_testing();
}
