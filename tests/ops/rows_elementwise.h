/* rows_elementwise.h — rows of tests/ops/backend_ops.c for the per-element and per-row ops:
   unary activations, scale, softmax (and, through the same "map" machinery, the norms of
   rows_norm.h), add/mul with every broadcast pattern, and cpy f32 → f32/f16/bf16 and → q8_0. */

/* ---- map ops: out{ne} = f(x{ne}) row by row --------------------------------------------------- */

/* Parents: 0 x, 1 out, 2 z (gated norm), 3 w, 4 b; with OPC_STRIDED x, z and out are the
   swapped views of op_test.h; with OPC_IN_PLACE out is x's view. */
enum map_op {
    MAP_SCALE = UNARY_COUNT, /* 0 .. UNARY_COUNT−1: op_unary */
    MAP_SOFTMAX,
    MAP_RMS,    /* no weight */
    MAP_RMS_W0, /* w, shift 0 */
    MAP_RMS_W1, /* w, shift 1: the zero-centred (1 + w) of spec §2.3 */
    MAP_GATED,
    MAP_LAYER,
    MAP_L2,
};

#define NORM_EPS 1e-6f /* every norm's eps (spec §9) */

/* Softmax masks (case p[0]): 1, a causal-like pattern of −inf (row r keeps its first r mod ne0 + 1
   entries on every 5th row, every 7th row all masked); 2, the first parent row all −inf and every
   3rd value after it. */
static void softmax_mask(struct op_in *in, int mode)
{
    const int64_t ne0 = in->ne[0], rows = in->ne[1] * in->ne[2] * in->ne[3];
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < ne0; i++) {
            int64_t at = r * ne0 + i;
            if (mode == 1 ? r % 7 == 3 || (r % 5 == 1 && i > r % ne0) : at < ne0 || (at - ne0) % 3 == 0)
                in->val[at] = -INFINITY;
        }
    op_sync_f32(in);
}

static void make_map(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    const int64_t *ne = c->ne;
    op_fill fill = c->fill ? c->fill : r->fill;
    /* z, w and b are one-element stand-ins where the op reads none */
    const bool z = r->arg == MAP_GATED, w = r->arg >= MAP_RMS_W0 && r->arg <= MAP_LAYER;
    if (c->flags & OPC_STRIDED) {
        op_add_swapped(d, ne, fill);
        op_add_swapped(d, ne, NULL);
        op_add_swapped(d, z ? ne : (const int64_t[]){1, 1, 1, 1}, fill_normal);
    } else {
        op_add_input(d, DT_F32, ne[0], ne[1], ne[2], ne[3], fill);
        op_add_input(d, DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        op_add_input(d, DT_F32, z ? ne[0] : 1, z ? ne[1] : 1, z ? ne[2] : 1, z ? ne[3] : 1, fill_normal);
    }
    op_add_input(d, DT_F32, w ? ne[0] : 1, 1, 1, 1, fill_half);
    op_add_input(d, DT_F32, w ? ne[0] : 1, 1, 1, 1, fill_half);
    if (r->arg == MAP_SOFTMAX && c->p[0])
        softmax_mask(&d->in[0], (int)c->p[0]);
    for (size_t k = 0; k < d->in[2].nbytes / 4; k++) /* z ~ N(0, 2): the gate's spread */
        d->in[2].val[k] *= 2.0f;
    op_sync_f32(&d->in[2]);
    d->n_out = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]);
    /* a case without a scale gets a random one, the same on every backend */
    double *s = malloc(sizeof *s);
    *s = c->s != 0 ? c->s : r->arg == MAP_SOFTMAX ? test_randf(0.05f, 2.0f) : test_randf(-3.0f, 3.0f);
    d->aux = s;
}

static tensor map_view(const struct op_case *c, const tensor *parent)
{
    return c->flags & OPC_STRIDED ? op_swapped_view(parent, c->ne) : *parent;
}

static void ref_map(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    const int64_t ne0 = c->ne[0], rows = c->ne[1] * c->ne[2] * c->ne[3];
    float *x = malloc(d->n_out * sizeof *x), *z = malloc(d->n_out * sizeof *z);
    tensor p0 = op_host_parent(d, 0), p2 = op_host_parent(d, 2), xv = map_view(c, &p0), zv = map_view(c, &p2);
    op_gather_vals(&d->in[0], &p0, &xv, x);
    if (r->arg == MAP_GATED)
        op_gather_vals(&d->in[2], &p2, &zv, z);
    const float *w = d->in[3].val, *b = d->in[4].val;
    const double s = *(double *)d->aux;
    double *out = want;
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * ne0, *zr = z + i * ne0;
        double *o = out + i * ne0;
        switch (r->arg) {
        case MAP_SCALE:
            for (int64_t k = 0; k < ne0; k++)
                o[k] = s * xr[k];
            break;
        case MAP_SOFTMAX: ref_softmax_row(xr, ne0, (double)(float)s, o); break;
        case MAP_RMS: ref_norm_row(REF_RMS, xr, NULL, NULL, NULL, 0, NORM_EPS, ne0, o); break;
        case MAP_RMS_W0: ref_norm_row(REF_RMS, xr, NULL, w, NULL, 0, NORM_EPS, ne0, o); break;
        case MAP_RMS_W1: ref_norm_row(REF_RMS, xr, NULL, w, NULL, 1, NORM_EPS, ne0, o); break;
        case MAP_GATED: ref_norm_row(REF_RMS_GATED, xr, zr, w, NULL, 0, NORM_EPS, ne0, o); break;
        case MAP_LAYER: ref_norm_row(REF_LAYER, xr, NULL, w, b, 0, NORM_EPS, ne0, o); break;
        case MAP_L2: ref_norm_row(REF_L2, xr, NULL, NULL, NULL, 0, NORM_EPS, ne0, o); break;
        default:
            for (int64_t k = 0; k < ne0; k++)
                o[k] = ref_unary((enum unary_op)r->arg, xr[k]);
        }
    }
    free(x), free(z);
}

static int run_map(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    tensor x = map_view(c, b->t[0]), z = r->arg == MAP_GATED ? map_view(c, b->t[2]) : *b->t[2];
    tensor out = c->flags & OPC_IN_PLACE ? x : map_view(c, b->t[1]);
    backend *be = b->be;
    const float s = (float)*(double *)b->d->aux;
    tensor *w = b->t[3], *bias = b->t[4];
    int rc;
    switch (r->arg) {
    case MAP_SCALE: rc = op_scale(be, &out, &x, s); break;
    case MAP_SOFTMAX: rc = op_softmax(be, &out, &x, s); break;
    case MAP_RMS: rc = op_rmsnorm(be, &out, &x, NULL, 0.0f, NORM_EPS); break;
    case MAP_RMS_W0: rc = op_rmsnorm(be, &out, &x, w, 0.0f, NORM_EPS); break;
    case MAP_RMS_W1: rc = op_rmsnorm(be, &out, &x, w, 1.0f, NORM_EPS); break;
    case MAP_GATED: rc = op_rmsnorm_gated(be, &out, &x, &z, w, NORM_EPS); break;
    case MAP_LAYER: rc = op_layernorm(be, &out, &x, w, bias, NORM_EPS); break;
    case MAP_L2: rc = op_l2norm(be, &out, &x, NORM_EPS); break;
    default: rc = op_unary(be, (enum unary_op)r->arg, &out, &x);
    }
    return rc ? rc : op_read_view(b, c->flags & OPC_IN_PLACE ? 0 : 1, &out, got);
}

/* Shape lists shared by the map rows. SWEEP: ne0 1..4097 (odd, a power of two, one past
   4096) × 1, 3 and 33 rows, in one layout. */
#define SWEEP_N0(n0, fl)                                                                                             \
    {NE(n0, 1, 1, 1), .flags = (fl)}, {NE(n0, 3, 1, 1), .flags = (fl)}, {NE(n0, 33, 1, 1), .flags = (fl)}
#define SWEEP(fl) SWEEP_N0(1, fl), SWEEP_N0(7, fl), SWEEP_N0(100, fl), SWEEP_N0(128, fl), SWEEP_N0(256, fl),         \
                  SWEEP_N0(4097, fl)
/* The Vulkan shapes: rows longer than a workgroup, 1 element, 2000 rows, 4-D, strided, in place;
   and two that span eight 32 KiB windows (240 KB of x, padded rows included). */
#define USUAL(fill_)                                                                                                 \
    {NE(1000, 5, 1, 1), .fill = fill_}, {NE(1, 1, 1, 1), .fill = fill_}, {NE(4097, 3, 1, 1), .fill = fill_},         \
        {NE(37, 5, 3, 2), .fill = fill_}, {NE(37, 5, 3, 2), .flags = OPC_STRIDED, .fill = fill_},                    \
        {NE(128, 2000, 1, 1), .fill = fill_}, {NE(1000, 5, 1, 1), .flags = OPC_IN_PLACE, .fill = fill_},             \
        {NE(37, 5, 3, 2), .flags = OPC_STRIDED | OPC_IN_PLACE, .fill = fill_},                                       \
        {NE(1000, 60, 1, 1), .flags = OPC_SPLIT, .fill = fill_},                                                     \
        {NE(1000, 60, 1, 1), .flags = OPC_SPLIT | OPC_STRIDED | OPC_IN_PLACE, .fill = fill_}

/* unary: the sweep on N(0, 3) (the curved parts of every activation), the usual shapes, the
   pool at {4097, 33}; all but exp again on [-30, 30] */
#define UNARY_CASES SWEEP(0), USUAL(NULL), {NE(4097, 33, 1, 1), .flags = OPC_THREADS}
static const struct op_case unary_cases[] = {UNARY_CASES};
static const struct op_case unary_wide_cases[] = {UNARY_CASES, {NE(3001, 2, 1, 1), .fill = fill_wide}};

#define UNARY_TOL 1e-5 /* f32 libm calls within a few ulp (~1e-7 relative) */
#define UNARY_WHY "f32 libm within a few ulp"
#define UNARY_ROW(name, op, fill_, cases)                                                                            \
    static const struct op_row row_##name = {#name, op, make_map, ref_map, run_map, fill_, OP_L2, UNARY_TOL,         \
                                             UNARY_WHY, OP_CASES(cases), NULL, NULL}
UNARY_ROW(silu, UNARY_SILU, fill_normal3, unary_wide_cases);
UNARY_ROW(gelu_tanh, UNARY_GELU_TANH, fill_normal3, unary_wide_cases);
UNARY_ROW(gelu_erf, UNARY_GELU_ERF, fill_normal3, unary_wide_cases);
UNARY_ROW(sigmoid, UNARY_SIGMOID, fill_normal3, unary_wide_cases);
UNARY_ROW(softplus, UNARY_SOFTPLUS, fill_normal3, unary_wide_cases);
UNARY_ROW(exp, UNARY_EXP, fill_exp, unary_cases);

static const struct op_case scale_cases[] = {
    {NE(100, 3, 2, 1), .flags = OPC_STRIDED},
    {NE(100, 3, 2, 1), .flags = OPC_STRIDED | OPC_IN_PLACE},
    USUAL(NULL),
    {NE(4097, 33, 1, 1), .flags = OPC_THREADS, .s = 0.3},
};
static const struct op_row row_scale = {"scale", MAP_SCALE, make_map, ref_map, run_map, fill_normal, OP_L2, 1e-6,
                                        "one f32 rounding per element", OP_CASES(scale_cases), NULL, NULL};

static void fill_normal4(float *x, size_t n) { op_fill_normal(x, n, 4.0f); }
static void fill_normal8(float *x, size_t n) { op_fill_normal(x, n, 8.0f); }
static void fill_near1000(float *x, size_t n)
{
    op_fill_normal(x, n, 2.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 1000.0f;
}

/* Scores near 1000 overflow exp without the max subtracted; their f32 product s·x carries ~3e-5
   absolute error into each exponent, hence 1e-4 there. */
#define SOFTMAX_USUAL(fl, p0)                                                                                        \
    {NE(1000, 5, 1, 1), PAR(p0), .flags = (fl), .s = 0.125, .fill = fill_normal8},                                   \
        {NE(1, 1, 1, 1), PAR(p0), .flags = (fl), .s = 0.125, .fill = fill_normal8},                                  \
        {NE(4097, 3, 1, 1), PAR(p0), .flags = (fl), .s = 0.125, .fill = fill_normal8},                               \
        {NE(37, 5, 3, 2), PAR(p0), .flags = (fl), .s = 0.125, .fill = fill_normal8},                                 \
        {NE(128, 2000, 1, 1), PAR(p0), .flags = (fl), .s = 0.125, .fill = fill_normal8}
static const struct op_case softmax_cases[] = {
    SWEEP(0), SWEEP(OPC_STRIDED), SWEEP(OPC_IN_PLACE),
    {NE(100, 3, 2, 1), .s = 1.0, .fill = fill_near1000, .tol = 1e-4, .why = "s·x near 1000 in f32"},
    {NE(100, 3, 2, 1), PAR(2), .s = 0.5, .fill = fill_near1000, .tol = 1e-4, .why = "s·x near 1000 in f32"},
    /* the Vulkan shapes: scores ×8 under a causal-like mask, scale 1/8 */
    SOFTMAX_USUAL(0, 1), SOFTMAX_USUAL(OPC_STRIDED, 1),
    {NE(1000, 5, 1, 1), PAR(1), .flags = OPC_IN_PLACE, .s = 0.125, .fill = fill_normal8},
    {NE(37, 5, 3, 2), PAR(1), .flags = OPC_STRIDED | OPC_IN_PLACE, .s = 0.125, .fill = fill_normal8},
    {NE(1000, 60, 1, 1), PAR(1), .flags = OPC_SPLIT, .s = 0.125, .fill = fill_normal8},
    {NE(1000, 60, 1, 1), PAR(1), .flags = OPC_SPLIT | OPC_STRIDED | OPC_IN_PLACE, .s = 0.125, .fill = fill_normal8},
    {NE(4097, 33, 1, 1), .flags = OPC_THREADS, .s = 0.7},
};
static const struct op_row row_softmax = {"softmax", MAP_SOFTMAX, make_map, ref_map, run_map, fill_normal4, OP_L2,
                                          1e-5, "expf and the f32 product s·x (|s·x| <~ 40) within ~1e-6",
                                          OP_CASES(softmax_cases), NULL, NULL};

/* ---- add / mul -------------------------------------------------------------------------------- */

/* Parents: 0 a, 1 out, 2 b (shape p); with OPC_STRIDED all three are swapped views. */
static void make_binary(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t *ne = c->ne, *bn = c->p;
    if (c->flags & OPC_STRIDED) {
        op_add_swapped(d, ne, fill_normal);
        op_add_swapped(d, ne, NULL);
        op_add_swapped(d, bn, fill_normal);
    } else {
        op_add_input(d, DT_F32, ne[0], ne[1], ne[2], ne[3], fill_normal);
        op_add_input(d, DT_F32, ne[0], ne[1], ne[2], ne[3], NULL);
        op_add_input(d, DT_F32, bn[0], bn[1], bn[2], bn[3], fill_normal);
    }
    d->n_out = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]);
}

static tensor binary_view(const struct op_case *c, const tensor *parent, const int64_t *ne)
{
    return c->flags & OPC_STRIDED ? op_swapped_view(parent, ne) : *parent;
}

static void ref_binary_row(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    const size_t nb = (size_t)(c->p[0] * c->p[1] * c->p[2] * c->p[3]);
    float *a = malloc(d->n_out * sizeof *a), *b = malloc(nb * sizeof *b);
    tensor p0 = op_host_parent(d, 0), p2 = op_host_parent(d, 2);
    tensor av = binary_view(c, &p0, c->ne), bv = binary_view(c, &p2, c->p);
    op_gather_vals(&d->in[0], &p0, &av, a);
    op_gather_vals(&d->in[2], &p2, &bv, b);
    ref_binary((enum binary_op)r->arg, c->ne, a, c->p, b, want);
    free(a), free(b);
}

static int run_binary(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    tensor a = binary_view(c, b->t[0], c->ne), bb = binary_view(c, b->t[2], c->p);
    tensor out = c->flags & OPC_IN_PLACE ? a : binary_view(c, b->t[1], c->ne);
    int rc = r->arg == BINARY_ADD ? op_add(b->be, &out, &a, &bb) : op_mul(b->be, &out, &a, &bb);
    return rc ? rc : op_read_view(b, c->flags & OPC_IN_PLACE ? 0 : 1, &out, got);
}

/* b as the full shape, a row vector, a scalar per row, a row per ne2 slice, one scalar */
#define PATS(n0, n1, n2, n3, fl)                                                                                     \
    {NE(n0, n1, n2, n3), PAR(n0, n1, n2, n3), .flags = (fl)}, {NE(n0, n1, n2, n3), PAR(n0, 1, 1, 1), .flags = (fl)}, \
        {NE(n0, n1, n2, n3), PAR(1, n1, n2, n3), .flags = (fl)},                                                     \
        {NE(n0, n1, n2, n3), PAR(n0, 1, n2, 1), .flags = (fl)},                                                      \
        {NE(n0, n1, n2, n3), PAR(1, 1, 1, 1), .flags = (fl)}
#define BIN_SWEEP(fl) PATS(7, 3, 2, 2, fl), PATS(4097, 3, 1, 1, fl), PATS(1, 33, 1, 1, fl), PATS(100, 5, 3, 2, fl),  \
                      PATS(128, 1, 1, 1, fl)
static const struct op_case binary_cases[] = {
    BIN_SWEEP(0), BIN_SWEEP(OPC_STRIDED), BIN_SWEEP(OPC_IN_PLACE),
    /* the Vulkan shapes: a{37,5,3,2} against eight b shapes, 1000×67, in place, split windows */
    {NE(37, 5, 3, 2), PAR(37, 5, 3, 2)}, {NE(37, 5, 3, 2), PAR(37, 1, 1, 1)}, {NE(37, 5, 3, 2), PAR(1, 5, 1, 1)},
    {NE(37, 5, 3, 2), PAR(1, 1, 3, 1)}, {NE(37, 5, 3, 2), PAR(37, 1, 3, 1)}, {NE(37, 5, 3, 2), PAR(1, 1, 1, 1)},
    {NE(37, 5, 3, 2), PAR(37, 5, 1, 2)}, {NE(37, 5, 3, 2), PAR(1, 5, 3, 2)}, {NE(1000, 67, 1, 1), PAR(1000, 67, 1, 1)},
    {NE(37, 5, 3, 2), PAR(37, 1, 1, 1), .flags = OPC_IN_PLACE},
    {NE(1000, 60, 1, 1), PAR(1000, 60, 1, 1), .flags = OPC_SPLIT},
    {NE(1000, 60, 1, 1), PAR(1000, 1, 1, 1), .flags = OPC_SPLIT | OPC_IN_PLACE},
    {NE(4097, 33, 1, 1), PAR(4097, 1, 1, 1), .flags = OPC_THREADS},
};
static const struct op_row row_add = {"add", BINARY_ADD, make_binary, ref_binary_row, run_binary, fill_normal, OP_L2,
                                      1e-6, "one f32 rounding per element", OP_CASES(binary_cases), NULL, NULL};
static const struct op_row row_mul = {"mul", BINARY_MUL, make_binary, ref_binary_row, run_binary, fill_normal, OP_L2,
                                      1e-6, "one f32 rounding per element", OP_CASES(binary_cases), NULL, NULL};

/* ---- cpy -------------------------------------------------------------------------------------- */

/* Values with a known f16/bf16 rounding story: signed zeros, f16 subnormals (2^-24 and the tie
   2^-25), the largest f16 and the first value that overflows it, ties between neighbours
   (1 + 2^-11, 1 + 3·2^-11; bf16: 1 + 2^-8), infinities and NaN; the rest normal values of
   magnitude 1e-6 .. 1e4 (f16 subnormals up to both ends of its range). */
static const float cpy_specials[] = {0.0f,           -0.0f,          5.9604645e-8f, 2.9802322e-8f, 1e-8f,
                                     6.1e-5f,        65504.0f,       65520.0f,      -1e10f,        1.00048828125f,
                                     1.00146484375f, 1.00390625f,    1.01171875f,   INFINITY,      -INFINITY,
                                     NAN};
static void fill_cpy(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(test_randn() * pow(10.0, test_randf(-6.0f, 4.0f)));
    for (size_t i = 0; i < ARRAY_LEN(cpy_specials) && i < n; i++)
        x[i * 7 % n] = cpy_specials[i];
}

/* Two layouts. Default: src a {ne0, ne1, ne2} view with 3 floats of padding per row; dst a view
   of a flat parent, starting p[0] elements in, rows p[1] elements apart and planes
   ne1·p[1] + 1 apart (for f16/bf16 an odd start or stride puts rows on half words whose other
   half belongs to a neighbour or to nobody). OPC_ALT: both are swapped views (dst of a
   {ne0 + 3, ne2, ne1, ne3} parent). In place: dst is src's view. Parents: 0 src, 1 dst. */
static void cpy_views(const struct op_case *c, const tensor *sp, const tensor *dp, tensor *sv, tensor *dv)
{
    const int64_t *ne = c->ne;
    const size_t es = dtype_info(c->type)->block_bytes;
    if (c->flags & OPC_ALT) {
        *sv = op_swapped_view(sp, ne);
        const size_t nb[4] = {es, dp->nb[2], dp->nb[1], dp->nb[3]};
        *dv = c->flags & OPC_IN_PLACE ? *sv : tensor_view(dp, 4, ne, nb, 2 * es);
        return;
    }
    const size_t srow = (size_t)(ne[0] + 3) * 4, ds1 = (size_t)c->p[1], ds2 = ds1 * (size_t)ne[1] + 1;
    *sv = tensor_view(sp, 4, ne, (size_t[]){4, srow, srow * (size_t)ne[1], srow * (size_t)(ne[1] * ne[2])}, 0);
    const size_t dnb[4] = {es, ds1 * es, ds2 * es, ds2 * es * (size_t)ne[2]};
    *dv = c->flags & OPC_IN_PLACE ? *sv : tensor_view(dp, 4, ne, dnb, (size_t)c->p[0] * es);
}

static void make_cpy(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t *ne = c->ne;
    if (c->flags & OPC_ALT) {
        op_add_swapped(d, ne, fill_cpy);
        op_add_input(d, c->type, ne[0] + 3, ne[2], ne[1], ne[3], NULL);
    } else {
        op_add_input(d, DT_F32, ne[0] + 3, ne[1], ne[2], ne[3], fill_cpy);
        op_add_input(d, c->type, c->p[0] + (c->p[1] * ne[1] + 1) * ne[2] * ne[3] + 2, 1, 1, 1, NULL);
    }
    d->n_out = d->in[c->flags & OPC_IN_PLACE ? 0 : 1].nbytes;
}

/* The destination parent's expected bytes: the sentinel, each element converted where the view
   puts it (ref_f16_bits / ref_bf16_bits, independent of core/fp16.h); in place, src unchanged. */
static void ref_cpy(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    if (c->flags & OPC_IN_PLACE) {
        memcpy(want, d->in[0].bytes, d->n_out);
        return;
    }
    tensor sp = op_host_parent(d, 0), dp = op_host_parent(d, 1), sv, dv;
    cpy_views(c, &sp, &dp, &sv, &dv);
    float *src = malloc((size_t)tensor_nelements(&sv) * sizeof *src);
    op_gather_vals(&d->in[0], &sp, &sv, src);
    memset(want, OP_SENTINEL, d->n_out);
    size_t n = 0;
    for (int64_t i3 = 0; i3 < dv.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dv.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dv.ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dv.ne[0]; i0++, n++) {
                    unsigned char *at = (unsigned char *)want + op_view_index(&dp, &dv, i0, i1, i2, i3) * dv.nb[0];
                    uint16_t h = c->type == DT_F16 ? ref_f16_bits(src[n]) : ref_bf16_bits(src[n]);
                    if (c->type == DT_F32)
                        memcpy(at, &src[n], 4);
                    else
                        memcpy(at, &h, 2);
                }
    free(src);
}

static int run_cpy(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    tensor sv, dv;
    cpy_views(c, b->t[0], b->t[1], &sv, &dv);
    int rc = op_cpy(b->be, &dv, &sv);
    return rc ? rc : op_read_bytes(b, c->flags & OPC_IN_PLACE ? 0 : 1, got);
}

#define CPY_CASES(t)                                                                                                 \
    {NE(37, 5, 3, 1), PAR(1, 39), .type = t}, {NE(37, 5, 3, 1), PAR(0, 37), .type = t},                              \
        {NE(36, 4, 2, 1), PAR(2, 36), .type = t}, {NE(1, 1, 1, 1), PAR(3, 1), .type = t},                            \
        {NE(2, 3, 1, 1), PAR(1, 2), .type = t}, {NE(4097, 67, 1, 1), PAR(1, 4099), .type = t},                       \
        {NE(1000, 60, 1, 1), PAR(1, 1001), .type = t, .flags = OPC_SPLIT}, /* 240 KB of src, 120..240 KB of dst */   \
        {NE(1, 1, 1, 1), .type = t, .flags = OPC_ALT}, {NE(7, 3, 2, 1), .type = t, .flags = OPC_ALT},                \
        {NE(256, 2, 5, 1), .type = t, .flags = OPC_ALT}, {NE(100, 3, 2, 2), .type = t, .flags = OPC_ALT},            \
        {NE(4097, 1, 3, 1), .type = t, .flags = OPC_ALT}
static const struct op_case cpy_cases[] = {
    CPY_CASES(DT_F32), CPY_CASES(DT_F16), CPY_CASES(DT_BF16),
    {NE(37, 5, 3, 1), PAR(0, 37), .type = DT_F32, .flags = OPC_IN_PLACE},
    {NE(100, 3, 2, 1), .type = DT_F32, .flags = OPC_ALT | OPC_IN_PLACE},
    {NE(4097, 33, 1, 1), PAR(0, 4097), .type = DT_F16, .flags = OPC_THREADS},
};
static const struct op_row row_cpy = {"cpy", 0, make_cpy, ref_cpy, run_cpy, fill_cpy, OP_BITS, 0,
                                      "conversion is exact: nearest even, bit for bit",
                                      OP_CASES(cpy_cases), NULL, "dst_offset dst_row_stride"};

/* ---- cpy to q8_0 (a q8_0 KV cache) ------------------------------------------------------------ */

/* src as the cpy row's (a view with 3 floats of padding per row; OPC_ALT: the swapped view); dst a
   view of a flat q8_0 parent, starting p[0] whole 34-byte blocks and p[2] bytes in (an odd start
   too), rows p[1] blocks apart and planes ne1·p[1] + 1 blocks apart (an odd block count puts rows
   2 bytes off a 32-bit word, so the shader's partial words and a neighbour's bytes are
   exercised). Parents: 0 src, 1 dst. */
static void cpy_q8_views(const struct op_case *c, const tensor *sp, const tensor *dp, tensor *sv, tensor *dv)
{
    const int64_t *ne = c->ne;
    const size_t srow = (size_t)(ne[0] + 3) * 4, ds1 = (size_t)c->p[1] * 34, ds2 = ds1 * (size_t)ne[1] + 34;
    const size_t snb[4] = {4, srow, srow * (size_t)ne[1], srow * (size_t)(ne[1] * ne[2])};
    *sv = c->flags & OPC_ALT ? op_swapped_view(sp, ne) : tensor_view(sp, 4, ne, snb, 0);
    *dv = tensor_view(dp, 4, ne, (size_t[]){34, ds1, ds2, ds2 * (size_t)ne[2]}, (size_t)(c->p[0] * 34 + c->p[2]));
}

static void make_cpy_q8(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t *ne = c->ne;
    if (c->flags & OPC_ALT)
        op_add_swapped(d, ne, fill_normal);
    else
        op_add_input(d, DT_F32, ne[0] + 3, ne[1], ne[2], ne[3], fill_normal);
    /* the dst parent: whole blocks, sentinel bytes */
    const int64_t blocks = c->p[0] + (c->p[1] * ne[1] + 1) * ne[2] * ne[3] + 1;
    struct op_in *in = &d->in[d->n_in++];
    *in = (struct op_in){DT_Q8_0, {32 * blocks, 1, 1, 1}, NULL, calloc((size_t)(32 * blocks), sizeof(float)),
                         (size_t)blocks * 34};
    d->n_out = in->nbytes;
    /* row (0,0,0) of the view: block 0 all zero (d = 0), block 1 tiny (a subnormal f16 step),
       block 2 steps of exactly 1 (amax 127) with halves, where round-half-away and
       round-half-even differ; the other blocks N(0, s²) with s from 1e-3 to 1e3 per block */
    tensor sp = op_host_parent(d, 0), dp = op_host_parent(d, 1), sv, dv;
    cpy_q8_views(c, &sp, &dp, &sv, &dv);
    static const float halves[] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -126.5f, 3.5f, 64.5f};
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t b = 0; b < ne[0] / 32; b++) {
                    const bool first = i1 == 0 && i2 == 0 && i3 == 0;
                    float s = (float)pow(10.0, test_randf(-3.0f, 3.0f));
                    if (first && b < 2)
                        s = b == 0 ? 0.0f : 1e-6f;
                    for (int64_t j = 0; j < 32; j++) {
                        float *x = &d->in[0].val[op_view_index(&sp, &sv, 32 * b + j, i1, i2, i3)];
                        *x = first && b == 2 ? (j < (int64_t)ARRAY_LEN(halves) ? halves[j] : (float)(j - 60))
                                             : *x * s;
                    }
                }
    op_sync_f32(&d->in[0]);
}

/* The dst parent's expected bytes: the sentinel, and each row of the view quantised where the
   view puts it by ref_quantize_q8_0 (tests/support/op_ref.c, not core/quant.c). */
static void ref_cpy_q8(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    tensor sp = op_host_parent(d, 0), dp = op_host_parent(d, 1), sv, dv;
    cpy_q8_views(c, &sp, &dp, &sv, &dv);
    float *src = malloc((size_t)tensor_nelements(&sv) * sizeof *src);
    op_gather_vals(&d->in[0], &sp, &sv, src);
    memset(want, OP_SENTINEL, d->n_out);
    size_t n = 0;
    for (int64_t i3 = 0; i3 < dv.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dv.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dv.ne[1]; i1++, n += (size_t)dv.ne[0])
                ref_quantize_q8_0(src + n, dv.ne[0],
                                  (unsigned char *)want + dv.offset + i1 * dv.nb[1] + i2 * dv.nb[2] + i3 * dv.nb[3]);
    free(src);
}

static int run_cpy_q8(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    tensor sv, dv;
    cpy_q8_views(c, b->t[0], b->t[1], &sv, &dv);
    int rc = op_cpy(b->be, &dv, &sv);
    return rc ? rc : op_read_bytes(b, 1, got);
}

static const struct op_case cpy_q8_cases[] = {
    {NE(256, 2, 3, 1), PAR(0, 8)},   /* three tokens of a cache {hd 256, nkv 2}: rows back to back */
    {NE(32, 1, 1, 1), PAR(1, 1)},    /* one block, 2 bytes off a word */
    {NE(96, 5, 3, 1), PAR(1, 4)},    /* a spare block between rows, odd plane starts */
    {NE(96, 5, 3, 1), PAR(1, 4, 1)}, /* the same on odd bytes: d straddles two words */
    {NE(256, 3, 2, 1), PAR(0, 8, 3)},
    {NE(256, 4, 7, 2), PAR(3, 9)},
    {NE(4096, 67, 1, 1), PAR(1, 129)},
    {NE(1024, 60, 1, 1), PAR(1, 33), .flags = OPC_SPLIT}, /* 240 KB of src, 64 KB of dst */
    {NE(4096, 33, 1, 1), PAR(0, 128), .flags = OPC_THREADS},
    {NE(96, 3, 2, 1), PAR(2, 3), .flags = OPC_ALT}, {NE(256, 2, 5, 1), PAR(0, 8), .flags = OPC_ALT},
};
static const struct op_row row_cpy_q8 = {"cpy_q8_0", 0, make_cpy_q8, ref_cpy_q8, run_cpy_q8, fill_normal, OP_BITS, 0,
                                         "one f32 division, product and rounding per value, as the reference",
                                         OP_CASES(cpy_q8_cases), NULL, "dst_offset dst_row_stride dst_bytes"};

static const struct op_row *const elementwise_rows[] = {
    &row_silu, &row_gelu_tanh, &row_gelu_erf, &row_sigmoid, &row_softplus, &row_exp,
    &row_scale, &row_softmax, &row_add, &row_mul, &row_cpy, &row_cpy_q8,
};
