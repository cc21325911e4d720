/* tests/vulkan/ops_light.c — the light Vulkan ops (vulkan/op_elementwise.c, op_norm.c,
   op_rope.c): unary (silu, gelu tanh, gelu erf, sigmoid, softplus, exp), scale, cpy (f32 → f32,
   f16, bf16), softmax, rmsnorm_gated, layernorm, l2norm, rope_text and rope_vision. Each runs on
   random data at awkward sizes (1 element; rows not multiples of any workgroup; thousands of
   rows), strided views and in place, and is compared with a naive double-precision reference
   written here from core/ops.h and the spec, and with the CPU backend.
   Tolerance: relative L2 <= 1e-4 everywhere. The paths are f32; the shaders' exp/erfc/sin/cos
   (shaders/common/math.glsl) are within ~1e-7 relative (erfc's fit 1.2e-7) and reductions sum
   in another order, which stays near 1e-6. cpy's f16/bf16 results are compared bit for bit with
   core/fp16.h, including ties, subnormals, overflow to inf and NaN, and the bytes around a
   strided destination must be left as they were.
   Everything again with the storage window overridden to 32 KiB (tensors split across windows).
   Validation layer on: zero errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

#define TOL 1e-4 /* relative L2, see the header comment */

static backend *cpu_be;

static void check(const char *what, const float *vk, const float *cpu, const double *ref, size_t n)
{
    double e = rel_l2_d(vk, ref, n);
    ok(e <= TOL, "%s: vulkan vs double reference, rel L2 %.2e <= 1e-4", what, e);
    e = rel_l2(vk, cpu, n);
    ok(e <= TOL, "%s: vulkan vs cpu, rel L2 %.2e <= 1e-4", what, e);
}

/* ---- a generic row op harness ------------------------------------------------------------ */

/* x (and the optional second input y, shaped as x) are {ne0, ne1, ne2, ne3} views with `pad`
   floats after each row of a contiguous parent; the op writes out (contiguous), or x itself when
   `in_place`. The reference fills ref[] from the same rows, packed. */
struct rows_case {
    const char *name;
    int64_t ne[4];
    int64_t pad;
    bool in_place;
};

typedef int (*run_fn)(backend *be, tensor *out, const tensor *x, const tensor *y, const tensor *vec, void *arg);
typedef void (*ref_fn)(const float *x, const float *y, const float *vec, int64_t ne0, double *out, void *arg);

static void rows_case(backend *vk, const struct rows_case *c, const float *xdata, const float *ydata,
                      const float *vecdata, run_fn run, ref_fn ref_row, void *arg, const char *tag)
{
    char what[200];
    const int64_t *ne = c->ne, rowp = ne[0] + c->pad, rows = ne[1] * ne[2] * ne[3], n = ne[0] * rows;
    snprintf(what, sizeof what, "%s%s {%lld,%lld,%lld,%lld}%s%s", tag, c->name, (long long)ne[0], (long long)ne[1],
             (long long)ne[2], (long long)ne[3], c->pad ? " strided" : "", c->in_place ? " in place" : "");
    double *ref = calloc((size_t)n, sizeof *ref);
    for (int64_t r = 0; r < rows; r++)
        ref_row(xdata + r * rowp, ydata ? ydata + r * rowp : NULL, vecdata, ne[0], ref + r * ne[0], arg);
    backend *bes[2] = {vk, cpu_be};
    float *got[2] = {NULL, NULL};
    int rc[2] = {SEER_ENOMEM, SEER_ENOMEM};
    for (int b = 0; b < 2; b++) {
        tensor *xp = vk_test_tensor(bes[b], DT_F32, rowp, ne[1], ne[2], ne[3], xdata);
        tensor *yp = ydata ? vk_test_tensor(bes[b], DT_F32, rowp, ne[1], ne[2], ne[3], ydata) : NULL;
        tensor *vec = vecdata ? vk_test_tensor(bes[b], DT_F32, 2 * ne[0], 1, 1, 1, vecdata) : NULL;
        tensor *out = c->in_place ? NULL : vk_test_tensor(bes[b], DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        if (xp && (yp || !ydata) && (vec || !vecdata) && (out || c->in_place)) {
            const size_t nb[4] = {4, xp->nb[1], xp->nb[2], xp->nb[3]};
            tensor xv = tensor_view(xp, 4, ne, nb, 0), yv = ydata ? tensor_view(yp, 4, ne, nb, 0) : xv;
            rc[b] = run(bes[b], c->in_place ? &xv : out, &xv, ydata ? &yv : NULL, vec, arg);
            if (rc[b] == SEER_OK) {
                float *all = vk_test_read_f32(c->in_place ? xp : out);
                const int64_t stride = c->in_place ? rowp : ne[0];
                got[b] = malloc((size_t)n * sizeof(float));
                for (int64_t r = 0; r < rows; r++)
                    memcpy(got[b] + r * ne[0], all + r * stride, (size_t)ne[0] * sizeof(float));
                free(all);
            } else {
                diag("%s on %s: %s", what, backend_name(bes[b]), seer_last_error());
            }
        }
        vk_test_tensor_free(xp);
        vk_test_tensor_free(yp);
        vk_test_tensor_free(vec);
        vk_test_tensor_free(out);
    }
    if (ok(rc[0] == SEER_OK && got[0], "%s: vulkan runs", what) && ok(rc[1] == SEER_OK && got[1], "%s: cpu runs", what))
        check(what, got[0], got[1], ref, (size_t)n);
    free(got[0]);
    free(got[1]);
    free(ref);
}

/* Shape lists: the usual awkward ones, and big ones for the 32 KiB window (240 KB of x spans
   eight windows, padded rows included). */
static const struct rows_case usual_shapes[] = {
    {NULL, {1000, 5, 1, 1}, 0, false}, {NULL, {1, 1, 1, 1}, 0, false}, {NULL, {4097, 3, 1, 1}, 0, false},
    {NULL, {37, 5, 3, 2}, 0, false},   {NULL, {37, 5, 3, 2}, 3, false}, {NULL, {128, 2000, 1, 1}, 0, false},
    {NULL, {1000, 5, 1, 1}, 0, true},  {NULL, {37, 5, 3, 2}, 3, true},
};
static const struct rows_case split_shapes[] = {{NULL, {1000, 60, 1, 1}, 0, false}, {NULL, {1000, 60, 1, 1}, 3, true}};

typedef void (*fill_fn)(float *x, size_t n);

static void fill_normal(float *x, size_t n) { test_fill_normal(x, n, 1.0f); }

struct op_desc {
    const char *name;
    run_fn run;
    ref_fn ref;
    fill_fn fill;      /* x */
    bool two_inputs;   /* y shaped as x (normal values) */
    bool vectors;      /* two f32{ne0} vectors in one tensor of 2·ne0 (uniform in [-1, 1)) */
    void *arg;
};

/* Runs op `d` over `list` with fresh inputs for each shape. */
static void run_cases(backend *vk, const struct op_desc *d, const struct rows_case *list, size_t count, const char *tag)
{
    for (size_t i = 0; i < count; i++) {
        struct rows_case c = list[i];
        c.name = d->name;
        size_t n = (size_t)((c.ne[0] + c.pad) * c.ne[1] * c.ne[2] * c.ne[3]);
        float *x = malloc(n * sizeof *x), *y = d->two_inputs ? malloc(n * sizeof *y) : NULL;
        float *vec = d->vectors ? malloc((size_t)(2 * c.ne[0]) * sizeof *vec) : NULL;
        d->fill(x, n);
        if (y)
            fill_normal(y, n);
        if (vec)
            test_fill_uniform(vec, (size_t)(2 * c.ne[0]), -1.0f, 1.0f);
        rows_case(vk, &c, x, y, vec, d->run, d->ref, d->arg, tag);
        free(x);
        free(y);
        free(vec);
    }
}

static void run_usual(backend *vk, const struct op_desc *d, bool split, const char *tag)
{
    if (split)
        run_cases(vk, d, split_shapes, ARRAY_LEN(split_shapes), tag);
    else
        run_cases(vk, d, usual_shapes, ARRAY_LEN(usual_shapes), tag);
}

/* ---- unary and scale --------------------------------------------------------------------- */

static const char *const unary_names[UNARY_COUNT] = {"silu", "gelu_tanh", "gelu_erf", "sigmoid", "softplus", "exp"};

static double unary_ref(int op, double x)
{
    switch (op) {
    case UNARY_SILU: return x / (1.0 + exp(-x));
    case UNARY_GELU_TANH: return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case UNARY_GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UNARY_SOFTPLUS: return x > 20.0 ? x : log1p(exp(x)); /* PyTorch threshold (spec §2.5 step 4) */
    default: return exp(x);
    }
}

#define SCALE_OP UNARY_COUNT /* the test's id for op_scale */
#define SCALE_S (-0.3125f)

static int run_unary(backend *be, tensor *out, const tensor *x, const tensor *y, const tensor *vec, void *arg)
{
    (void)y, (void)vec;
    int op = *(int *)arg;
    return op == SCALE_OP ? op_scale(be, out, x, SCALE_S) : op_unary(be, (enum unary_op)op, out, x);
}

static void ref_unary(const float *x, const float *y, const float *vec, int64_t ne0, double *out, void *arg)
{
    (void)y, (void)vec;
    int op = *(int *)arg;
    for (int64_t i = 0; i < ne0; i++)
        out[i] = op == SCALE_OP ? (double)SCALE_S * x[i] : unary_ref(op, x[i]);
}

/* Inputs over [-30, 30] reach every branch: silu/sigmoid's overflow side, gelu's far tails,
   softplus's threshold; exp stays within [-12, 12] so one value cannot hold all of the L2 norm. */
static void fill_wide(float *x, size_t n) { test_fill_uniform(x, n, -30.0f, 30.0f); }
static void fill_exp(float *x, size_t n) { test_fill_uniform(x, n, -12.0f, 12.0f); }

static void test_unary(backend *vk, bool split, const char *tag)
{
    static int ops[SCALE_OP + 1];
    for (int op = 0; op <= SCALE_OP; op++) {
        ops[op] = op;
        struct op_desc d = {op == SCALE_OP ? "scale" : unary_names[op], run_unary, ref_unary,
                            op == UNARY_EXP ? fill_exp : fill_normal, false, false, &ops[op]};
        run_usual(vk, &d, split, tag);
        if (!split && op != UNARY_EXP && op != SCALE_OP) {
            char name[64];
            snprintf(name, sizeof name, "%s on [-30,30]", d.name);
            d.name = name;
            d.fill = fill_wide;
            run_cases(vk, &d, &(struct rows_case){NULL, {3001, 2, 1, 1}, 0, false}, 1, tag);
        }
    }
}

/* ---- softmax ----------------------------------------------------------------------------- */

#define SOFTMAX_SCALE 0.125f

static int run_softmax(backend *be, tensor *out, const tensor *x, const tensor *y, const tensor *vec, void *arg)
{
    (void)y, (void)vec, (void)arg;
    return op_softmax(be, out, x, SOFTMAX_SCALE);
}

static void ref_softmax(const float *x, const float *y, const float *vec, int64_t ne0, double *out, void *arg)
{
    (void)y, (void)vec, (void)arg;
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < ne0; i++)
        m = fmax(m, (double)SOFTMAX_SCALE * x[i]);
    if (m == -INFINITY) { /* all masked: zeros (core/ops.h, as the CPU) */
        memset(out, 0, (size_t)ne0 * sizeof *out);
        return;
    }
    for (int64_t i = 0; i < ne0; i++)
        sum += exp((double)SOFTMAX_SCALE * x[i] - m);
    for (int64_t i = 0; i < ne0; i++)
        out[i] = exp((double)SOFTMAX_SCALE * x[i] - m) / sum;
}

/* Scores ×8 (so scale·x is normal), with a causal-mask pattern of −inf: row r of each block of
   rows keeps its first r+1 entries… and every 7th row is masked whole. */
static size_t softmax_fill_ne0 = 1;
static void fill_scores(float *x, size_t n)
{
    test_fill_normal(x, n, 8.0f);
    size_t ne0 = softmax_fill_ne0;
    for (size_t r = 0; r < n / ne0; r++)
        for (size_t i = 0; i < ne0; i++)
            if (r % 7 == 3 || (r % 5 == 1 && i > r % ne0))
                x[r * ne0 + i] = -INFINITY;
}

static void test_softmax(backend *vk, bool split, const char *tag)
{
    struct op_desc d = {"softmax", run_softmax, ref_softmax, fill_scores, false, false, NULL};
    const struct rows_case *list = split ? split_shapes : usual_shapes;
    size_t count = split ? ARRAY_LEN(split_shapes) : ARRAY_LEN(usual_shapes);
    for (size_t i = 0; i < count; i++) {
        softmax_fill_ne0 = (size_t)(list[i].ne[0] + list[i].pad); /* the fill sees padded rows */
        run_cases(vk, &d, &list[i], 1, tag);
    }
}

/* ---- norms ------------------------------------------------------------------------------- */

enum { NORM_GATED, NORM_LAYER, NORM_L2 };
#define NORM_EPS 1e-6f /* spec §2.3 / §4.5 / §2.5 step 6 use 1e-6 */

static int run_norm(backend *be, tensor *out, const tensor *x, const tensor *y, const tensor *vec, void *arg)
{
    int which = *(int *)arg;
    if (which == NORM_L2)
        return op_l2norm(be, out, x, NORM_EPS);
    /* the two vectors of `vec`: w in the first half, b in the second */
    tensor w = tensor_view(vec, 1, (int64_t[]){x->ne[0]}, (size_t[]){4}, 0);
    tensor b = tensor_view(vec, 1, (int64_t[]){x->ne[0]}, (size_t[]){4}, (size_t)x->ne[0] * 4);
    if (which == NORM_GATED)
        return op_rmsnorm_gated(be, out, x, y, &w, NORM_EPS);
    return op_layernorm(be, out, x, &w, &b, NORM_EPS);
}

static void ref_norm(const float *x, const float *z, const float *vec, int64_t ne0, double *out, void *arg)
{
    int which = *(int *)arg;
    double mean = 0, ss = 0;
    if (which == NORM_LAYER) {
        for (int64_t i = 0; i < ne0; i++)
            mean += x[i];
        mean /= (double)ne0;
    }
    for (int64_t i = 0; i < ne0; i++)
        ss += ((double)x[i] - mean) * ((double)x[i] - mean);
    double rs = 1.0 / sqrt((which == NORM_L2 ? ss : ss / (double)ne0) + NORM_EPS);
    for (int64_t i = 0; i < ne0; i++) {
        double v = ((double)x[i] - mean) * rs;
        if (which == NORM_GATED)
            v *= vec[i] * (z[i] / (1.0 + exp(-(double)z[i])));
        else if (which == NORM_LAYER)
            v = v * vec[i] + vec[ne0 + i];
        out[i] = v;
    }
}

/* LayerNorm inputs carry a large common offset (vision activations do): mean 50, spread 1 */
static void fill_offset(float *x, size_t n)
{
    test_fill_normal(x, n, 1.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 50.0f;
}

static void test_norms(backend *vk, bool split, const char *tag)
{
    static int which[3] = {NORM_GATED, NORM_LAYER, NORM_L2};
    const struct op_desc ds[3] = {
        {"rmsnorm_gated", run_norm, ref_norm, fill_normal, true, true, &which[0]},
        {"layernorm", run_norm, ref_norm, fill_offset, false, true, &which[1]},
        {"l2norm", run_norm, ref_norm, fill_normal, false, false, &which[2]},
    };
    for (int i = 0; i < 3; i++)
        run_usual(vk, &ds[i], split, tag);
}

/* ---- cpy --------------------------------------------------------------------------------- */

/* Values with a known f16/bf16 rounding story: signed zeros, f16 subnormals (2^-24 and the tie
   2^-25), the largest f16 and the first value that overflows it, ties between neighbours
   (1 + 2^-11, 1 + 3·2^-11; bf16: 1 + 2^-8), infinities and NaN. */
static const float specials[] = {0.0f,          -0.0f,         5.9604645e-8f, 2.9802322e-8f, 1e-8f,
                                 6.1e-5f,       65504.0f,      65520.0f,      -1e10f,        1.00048828125f,
                                 1.00146484375f, 1.00390625f,  1.01171875f,   INFINITY,      -INFINITY,
                                 NAN};

static uint16_t half_bits(enum dtype t, float v) { return t == DT_F16 ? f32_to_f16(v) : f32_to_bf16(v); }

/* dst is a {ne0, ne1, ne2} view of a parent filled with a sentinel, starting `off` elements in,
   rows `ds1` elements apart and planes ne1·ds1 + 1 apart: for f16/bf16 an odd off or ds1 puts
   rows on half words, whose other half belongs to a neighbour or to nobody. src is a view with 3
   floats of padding per row. Both backends' parent images must equal the expected one: each
   element converted by core/fp16.h, every other byte still the sentinel. */
static void cpy_case(backend *vk, enum dtype t, const int64_t ne[3], int64_t off, int64_t ds1, bool in_place,
                     const char *tag)
{
    char what[200];
    snprintf(what, sizeof what, "%scpy f32 -> %s {%lld,%lld,%lld} dst offset %lld row stride %lld%s", tag, dtype_name(t),
             (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)off, (long long)ds1,
             in_place ? " in place" : "");
    const int64_t srow = ne[0] + 3, n_src = srow * ne[1] * ne[2], ds2 = ds1 * ne[1] + 1;
    const int64_t n_dst = off + ds2 * ne[2] + 2; /* parent elements */
    const size_t es = t == DT_F32 ? 4 : 2;
    float *src = malloc((size_t)n_src * sizeof *src);
    test_fill_normal(src, (size_t)n_src, 100.0f);
    for (size_t i = 0; i < ARRAY_LEN(specials) && i < (size_t)n_src; i++)
        src[i * 7 % n_src] = specials[i];
    /* the sentinel: 0xA5 bytes (an f16/bf16 −0.0219/−2.9e-16, an f32 −2.9e-16) */
    unsigned char *sentinel = malloc((size_t)n_dst * es), *want = malloc((size_t)n_dst * es), *got[2] = {NULL, NULL};
    memset(sentinel, 0xA5, (size_t)n_dst * es);
    memcpy(want, sentinel, (size_t)n_dst * es);
    for (int64_t i2 = 0; i2 < ne[2]; i2++)
        for (int64_t i1 = 0; i1 < ne[1]; i1++)
            for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                float v = src[(i2 * ne[1] + i1) * srow + i0];
                size_t at = (size_t)(off + i2 * ds2 + i1 * ds1 + i0) * es;
                if (t == DT_F32) {
                    memcpy(want + at, &v, 4);
                } else {
                    uint16_t h = half_bits(t, v);
                    memcpy(want + at, &h, 2);
                }
            }
    backend *bes[2] = {vk, cpu_be};
    int rc[2] = {SEER_ENOMEM, SEER_ENOMEM};
    for (int b = 0; b < 2; b++) {
        tensor *sp = vk_test_tensor(bes[b], DT_F32, n_src, 1, 1, 1, src), *dp = NULL;
        backend_buffer *buf = NULL;
        tensor dpt;
        if (in_place) {
            dp = sp;
        } else if (tensor_init4(&dpt, t, n_dst, 1, 1, 1) && backend_tensor_alloc(bes[b], &dpt, &buf) == SEER_OK &&
                   backend_tensor_set(&dpt, sentinel, 0, (size_t)n_dst * es) == SEER_OK) {
            dp = &dpt;
        } else {
            ok(0, "%s: dst parent on %s: %s", what, backend_name(bes[b]), seer_last_error());
        }
        if (sp && dp) {
            tensor sv = tensor_view(sp, 3, ne, (size_t[]){4, (size_t)srow * 4, (size_t)(srow * ne[1]) * 4}, 0);
            tensor dv = in_place ? sv
                                 : tensor_view(dp, 3, ne, (size_t[]){es, (size_t)ds1 * es, (size_t)ds2 * es}, (size_t)off * es);
            rc[b] = op_cpy(bes[b], &dv, &sv);
            if (rc[b] == SEER_OK) {
                size_t bytes = in_place ? (size_t)n_src * 4 : (size_t)n_dst * es;
                got[b] = malloc(bytes);
                if (backend_tensor_get(dp, got[b], 0, bytes) != SEER_OK)
                    rc[b] = SEER_EIO;
            } else {
                diag("%s on %s: %s", what, backend_name(bes[b]), seer_last_error());
            }
        }
        vk_test_tensor_free(sp);
        backend_buffer_free(buf);
    }
    if (ok(rc[0] == SEER_OK && got[0], "%s: vulkan runs", what) && ok(rc[1] == SEER_OK && got[1], "%s: cpu runs", what)) {
        if (in_place) { /* a copy onto itself leaves the bits as they were */
            ok(!memcmp(got[0], src, (size_t)n_src * 4), "%s: vulkan leaves src bit for bit", what);
            ok(!memcmp(got[1], src, (size_t)n_src * 4), "%s: cpu leaves src bit for bit", what);
        } else {
            size_t bad = 0;
            for (int64_t i = 0; i < n_dst; i++)
                bad += memcmp(got[0] + i * es, want + i * es, es) != 0;
            ok(bad == 0, "%s: vulkan's buffer equals the expected image bit for bit (%zu of %lld elements differ)", what,
               bad, (long long)n_dst);
            ok(!memcmp(got[0], got[1], (size_t)n_dst * es), "%s: vulkan equals cpu bit for bit", what);
        }
    }
    free(got[0]);
    free(got[1]);
    free(want);
    free(sentinel);
    free(src);
}

static void test_cpy(backend *vk, bool split, const char *tag)
{
    static const enum dtype types[] = {DT_F32, DT_F16, DT_BF16};
    for (size_t t = 0; t < ARRAY_LEN(types); t++) {
        if (split) { /* 32 KiB windows: 240 KB of src, 120..240 KB of dst */
            cpy_case(vk, types[t], (int64_t[]){1000, 60, 1}, 1, 1001, false, tag);
            continue;
        }
        cpy_case(vk, types[t], (int64_t[]){37, 5, 3}, 1, 39, false, tag);   /* odd start, odd stride */
        cpy_case(vk, types[t], (int64_t[]){37, 5, 3}, 0, 37, false, tag);   /* rows share words */
        cpy_case(vk, types[t], (int64_t[]){36, 4, 2}, 2, 36, false, tag);   /* word-aligned rows */
        cpy_case(vk, types[t], (int64_t[]){1, 1, 1}, 3, 1, false, tag);
        cpy_case(vk, types[t], (int64_t[]){2, 3, 1}, 1, 2, false, tag);     /* every row on two half words */
        cpy_case(vk, types[t], (int64_t[]){4097, 67, 1}, 1, 4099, false, tag);
    }
    if (!split)
        cpy_case(vk, DT_F32, (int64_t[]){37, 5, 3}, 0, 37, true, tag);
}

/* ---- rope -------------------------------------------------------------------------------- */

static tensor *i32_tensor(backend *be, int64_t ne0, int64_t ne1, const int32_t *v)
{
    tensor *t = calloc(1, sizeof *t);
    backend_buffer *buf = NULL;
    if (!t || !tensor_init4(t, DT_I32, ne0, ne1, 1, 1) || backend_tensor_alloc(be, t, &buf) != SEER_OK ||
        backend_tensor_set(t, v, 0, (size_t)(ne0 * ne1) * 4) != SEER_OK) {
        ok(0, "i32 tensor on %s: %s", backend_name(be), seer_last_error());
        backend_buffer_free(buf);
        free(t);
        return NULL;
    }
    return t;
}

/* x{hd, nh, T}: text (vision == false, p used) or vision (theta used). With `pad`, x is a view
   whose heads are 3 floats apart and tokens 8 more; `in_place` writes x itself. Positions:
   text axis 0 up to `max_pos` (large ones test the sin/cos reduction), axes 1–2 below 100;
   vision rows/cols below 64. The reference forms the f32 angle as the spec (§3.3, §4.4) and
   the CPU do (f32 inv_freq rounded from double, f32 product) and takes cos/sin in double. */
static void rope_case(backend *vk, bool vision, int64_t hd, int64_t nh, int64_t T, const struct rope_text_params *p,
                      float theta, int32_t max_pos, bool pad, bool in_place, const char *tag)
{
    char what[200];
    const int n_axes = vision ? 2 : 3;
    const int64_t half = vision ? hd / 2 : p->n_rot / 2, quarter = hd / 4;
    snprintf(what, sizeof what, "%srope_%s hd=%lld nh=%lld T=%lld %s=%d max pos %d%s%s", tag, vision ? "vision" : "text",
             (long long)hd, (long long)nh, (long long)T, vision ? "theta" : "n_rot", vision ? (int)theta : p->n_rot,
             (int)max_pos, pad ? " strided" : "", in_place ? " in place" : "");
    const int64_t hs = hd + (pad ? 3 : 0), ts = hs * nh + (pad ? 8 : 0), n_x = ts * T, n = hd * nh * T;
    float *x = malloc((size_t)n_x * sizeof *x);
    test_fill_normal(x, (size_t)n_x, 1.0f);
    int32_t *pos = malloc((size_t)(n_axes * T) * sizeof *pos);
    for (int64_t i = 0; i < n_axes * T; i++)
        pos[i] = (int32_t)(test_rand_u64() % (uint64_t)(vision ? 64 : i < T ? max_pos : 100));
    double *ref = calloc((size_t)n, sizeof *ref);
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < nh; h++) {
            const float *xh = x + t * ts + h * hs;
            double *rh = ref + (t * nh + h) * hd;
            for (int64_t i = 0; i < hd; i++)
                rh[i] = xh[i];
            for (int64_t i = 0; i < half; i++) {
                float freq;
                int axis;
                if (vision) {
                    int64_t j = i < quarter ? i : i - quarter;
                    freq = (float)pow(theta, -2.0 * (double)j / (double)half);
                    axis = i < quarter ? 0 : 1;
                } else {
                    freq = (float)pow(p->theta, -2.0 * (double)i / (double)p->n_rot);
                    int a = (int)(i % 3);
                    axis = (a == 1 || a == 2) && i < 3 * p->sections[a] ? a : 0;
                }
                float ang = (float)pos[axis * T + t] * freq;
                double c = cos((double)ang), s = sin((double)ang);
                rh[i] = xh[i] * c - (double)xh[i + half] * s;
                rh[i + half] = xh[i + half] * c + (double)xh[i] * s;
            }
        }
    backend *bes[2] = {vk, cpu_be};
    float *got[2] = {NULL, NULL};
    int rc[2] = {SEER_ENOMEM, SEER_ENOMEM};
    for (int b = 0; b < 2; b++) {
        tensor *xp = vk_test_tensor(bes[b], DT_F32, n_x, 1, 1, 1, x), *pt = i32_tensor(bes[b], T, n_axes, pos);
        tensor *out = in_place ? NULL : vk_test_tensor(bes[b], DT_F32, hd, nh, T, 1, NULL);
        if (xp && pt && (out || in_place)) {
            tensor xv = tensor_view(xp, 3, (int64_t[]){hd, nh, T}, (size_t[]){4, (size_t)hs * 4, (size_t)ts * 4}, 0);
            tensor *o = in_place ? &xv : out;
            rc[b] = vision ? op_rope_vision(bes[b], o, &xv, pt, theta) : op_rope_text(bes[b], o, &xv, pt, p);
            if (rc[b] == SEER_OK) {
                float *all = vk_test_read_f32(in_place ? xp : out);
                got[b] = malloc((size_t)n * sizeof(float));
                for (int64_t t = 0; t < T; t++)
                    for (int64_t h = 0; h < nh; h++)
                        memcpy(got[b] + (t * nh + h) * hd, all + (in_place ? t * ts + h * hs : (t * nh + h) * hd),
                               (size_t)hd * sizeof(float));
                free(all);
            } else {
                diag("%s on %s: %s", what, backend_name(bes[b]), seer_last_error());
            }
        }
        vk_test_tensor_free(xp);
        vk_test_tensor_free(pt);
        vk_test_tensor_free(out);
    }
    if (ok(rc[0] == SEER_OK && got[0], "%s: vulkan runs", what) && ok(rc[1] == SEER_OK && got[1], "%s: cpu runs", what))
        check(what, got[0], got[1], ref, (size_t)n);
    free(got[0]);
    free(got[1]);
    free(x);
    free(pos);
    free(ref);
}

static void test_rope(backend *vk, bool split, const char *tag)
{
    const struct rope_text_params qwen = {64, 1e7f, {11, 11, 10}}; /* spec §3.3 */
    const struct rope_text_params odd = {40, 1e4f, {3, 5, 2}};
    if (split) { /* 32 KiB windows: 160 KB of x, 1 KiB a head */
        rope_case(vk, false, 256, 4, 40, &qwen, 0, 5000, false, false, tag);
        rope_case(vk, true, 72, 8, 70, NULL, 1e4f, 0, true, true, tag);
        return;
    }
    rope_case(vk, false, 256, 3, 5, &qwen, 0, 4096, false, false, tag);   /* 192 dims pass through */
    rope_case(vk, false, 256, 3, 5, &qwen, 0, 262144, false, false, tag); /* positions up to 2^18 */
    rope_case(vk, false, 64, 4, 1, &qwen, 0, 100, false, false, tag);     /* n_rot = head dim, one token */
    rope_case(vk, false, 82, 2, 9, &odd, 0, 3000, true, false, tag);      /* 42 dims pass through, strided */
    rope_case(vk, false, 256, 3, 17, &qwen, 0, 30000, true, true, tag);
    rope_case(vk, true, 72, 2, 7, NULL, 1e4f, 0, false, false, tag);      /* 36 pairs: three dispatches */
    rope_case(vk, true, 64, 3, 1, NULL, 1e4f, 0, false, false, tag);
    rope_case(vk, true, 4, 1, 5, NULL, 1e4f, 0, false, false, tag);
    rope_case(vk, true, 72, 2, 7, NULL, 1e4f, 0, true, true, tag);
}

/* ---- main -------------------------------------------------------------------------------- */


static void all_ops(backend *vk, bool split, const char *tag)
{
    test_unary(vk, split, tag);
    test_softmax(vk, split, tag);
    test_norms(vk, split, tag);
    test_cpy(vk, split, tag);
    test_rope(vk, split, tag);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *vk;
    int status;
    if (!vk_test_open(&vk, &cpu_be, &status))
        return status;
    all_ops(vk, false, "");
    vk_test_validation_check(vk, "light ops");
    backend_free(vk);

    if ((vk = vk_test_backend(32 << 10))) {
        all_ops(vk, true, "split: ");
        vk_test_validation_check(vk, "split light ops");
        backend_free(vk);
    }
    backend_free(cpu_be);
    return done_testing();
}

#else
int main(void) { return plan_skip_all("built without Vulkan (SEER_VULKAN=OFF)"); }
#endif
