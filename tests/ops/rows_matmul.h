/* rows_matmul.h — rows of tests/ops/backend_ops.c for op_matmul and op_get_rows over every
   weight dtype. References work on the weight values as the backends read them: F16/BF16
   rounded by op_ref.c's own encoders, block types dequantised by core/quant.c (checked bit for
   bit against llama.cpp's gguf-py in tests/core/quant_oracle.c).
   matmul — case p {K, M, N, layout}: 0 contiguous; 1 (views) w a view starting one block into a
   parent whose rows are one block longer, x a 3-D view {K, N, 2} of rows 5 floats apart starting
   one row in; 2 x rows 13 floats apart, the padding NaN (never to be read); 3 x a 3-D view
   {K, N, 2} whose rows are K + 4 apart and planes 4 rows + 7 apart, 8 bytes in; 4 w a view 8 bytes
   into a parent whose rows are one block longer (block types: rows off every 16-byte boundary,
   which Vulkan's wide Q4_K and Q5_K builds must not take; the parent's values (`val`) then those
   of the view's rows) or, for float types, 8 elements longer (rows 16 bytes apart when K is a
   multiple of 8, each 8 bytes off: the float wide builds, matvec.comp WIDE, must not take them).
   Parents: 0 w, 1 x, 2 out. Errors are measured against
   Σ|w||x| per output (backend_ops.c's err_of), not the sums, which may cancel: f32 accumulation
   against double reads up to ~6e-6 of it; 1e-4 is the f32 bound.
   linear — op_linear: case p {K, M, N, parts}, parts a set of LIN_* (bias, GELU tanh or erf,
   residual); the weight dtype in .type; N below and above the CPU's panel threshold (16), M not a
   multiple of its 64-row units, so both the epilogue the prefill kernel applies while copying out
   and the pass after the other ways are checked. Parents: 0 w, 1 x, 2 bias, 3 res, 4 out.
   get_rows — case p {H, V, N}; OPC_STRIDED: out rows 3 floats apart. Each row must equal the
   table row's values bit for bit; ids include 0 and V − 1. Block tables are random blocks of
   tests/core/quant_blocks.h (any finite f16 scale, subnormals too). Parents: 0 table, 1 ids,
   2 out. */
#include "core/quant_blocks.h"

/* Random blocks whose f16 scales are finite, of random sign, and sized so values stay around 1
   (so a dot product is not ruled by one block). */
static unsigned char *moderate_blocks(enum dtype t, int64_t ne0, int64_t rows)
{
    size_t row_bytes = 0;
    dtype_row_bytes(t, ne0, &row_bytes);
    const size_t bytes = row_bytes * (size_t)rows, bb = (size_t)dtype_info(t)->block_bytes;
    unsigned char *raw = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        raw[i] = (unsigned char)test_rand_u64();
    size_t d_at = 0, dmin_at = SIZE_MAX;
    float scale = 0.01f;
    switch (t) {
    case DT_Q8_0: scale = 1.0f / 64; break;
    case DT_Q4_0: scale = 1.0f / 6; break;
    case DT_Q4_K: case DT_Q5_K: dmin_at = 2; scale = 1.0f / 256; break;
    case DT_Q6_K: d_at = 208; scale = 1.0f / 512; break;
    default: break;
    }
    for (size_t b = 0; b < bytes / bb; b++) {
        unsigned char *blk = raw + b * bb;
        uint16_t h = ref_f16_bits(test_randf(0.5f, 1.5f) * scale * (test_rand_u64() & 1 ? -1.0f : 1.0f));
        memcpy(blk + d_at, &h, 2);
        if (dmin_at != SIZE_MAX) {
            h = ref_f16_bits(test_randf(0.0f, 1.0f) * scale);
            memcpy(blk + dmin_at, &h, 2);
        }
    }
    return raw;
}

static bool is_blocks(enum dtype t) { return dtype_info(t)->block_elems > 1; }

enum { MM_CONTIG, MM_VIEWS, MM_XPAD, MM_X3D, MM_WOFF };
#define MM_WOFF_BYTES 8 /* where MM_WOFF's weight view starts in its parent's rows */

static int64_t mm_n2(const struct op_case *c) { return c->p[3] == MM_VIEWS || c->p[3] == MM_X3D ? 2 : 1; }

static void make_matmul(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t K = c->p[0], M = c->p[1], N = c->p[2], n2 = mm_n2(c), qk = dtype_info(c->type)->block_elems;
    const int64_t pk = c->p[3] == MM_VIEWS ? K + qk /* weight parent row length */
                       : c->p[3] == MM_WOFF ? K + (is_blocks(c->type) ? qk : 8) : K;
    if (c->p[3] == MM_WOFF && is_blocks(c->type)) {
        /* the view's rows: moderate blocks, MM_WOFF_BYTES into the parent's */
        size_t prow = 0, row = 0;
        dtype_row_bytes(c->type, pk, &prow), dtype_row_bytes(c->type, K, &row);
        unsigned char *raw = moderate_blocks(c->type, pk, M), *blocks = moderate_blocks(c->type, K, M);
        for (int64_t m = 0; m < M; m++)
            memcpy(raw + (size_t)m * prow + MM_WOFF_BYTES, blocks + (size_t)m * row, row);
        float *val = op_add_blocks(d, c->type, pk, M, raw);
        for (int64_t m = 0; m < M; m++)
            dequantize_row(c->type, blocks + (size_t)m * row, val + m * pk, K);
        free(blocks);
    } else if (is_blocks(c->type))
        op_add_blocks(d, c->type, pk, M, moderate_blocks(c->type, pk, M));
    else
        op_add_input(d, c->type, pk, M, 1, 1, fill_normal);
    switch (c->p[3]) {
    case MM_VIEWS: op_add_input(d, DT_F32, K + 5, N * n2 + 1, 1, 1, fill_normal); break;
    case MM_XPAD: {
        float *x = op_add_input(d, DT_F32, K + 13, N, 1, 1, fill_normal);
        for (int64_t n = 0; n < N; n++)
            for (int64_t p = K; p < K + 13; p++)
                x[n * (K + 13) + p] = NAN;
        op_sync_f32(&d->in[1]);
        break;
    }
    case MM_X3D: op_add_input(d, DT_F32, (4 * (K + 4) + 7) * n2 + 2, 1, 1, 1, fill_normal); break;
    default: op_add_input(d, DT_F32, K, N, 1, 1, fill_normal);
    }
    op_add_input(d, DT_F32, M, N, n2, 1, NULL);
    d->n_out = (size_t)(M * N * n2);
}

static void matmul_views(const struct op_case *c, const tensor *wp, const tensor *xp, tensor *w, tensor *x)
{
    const int64_t K = c->p[0], M = c->p[1], N = c->p[2], n2 = mm_n2(c);
    const size_t lead = c->p[3] == MM_VIEWS ? (size_t)dtype_info(c->type)->block_bytes
                        : c->p[3] == MM_WOFF ? MM_WOFF_BYTES : 0;
    *w = tensor_view(wp, 2, (int64_t[]){K, M}, (size_t[]){wp->nb[0], wp->nb[1]}, lead);
    const int64_t ne[3] = {K, N, n2};
    switch (c->p[3]) {
    case MM_VIEWS: {
        const size_t row = (size_t)(K + 5) * 4;
        *x = tensor_view(xp, 3, ne, (size_t[]){4, row, row * (size_t)N}, row);
        break;
    }
    case MM_XPAD: *x = tensor_view(xp, 2, ne, (size_t[]){4, (size_t)(K + 13) * 4}, 0); break;
    case MM_X3D: {
        const size_t row = (size_t)(K + 4) * 4;
        *x = tensor_view(xp, 3, ne, (size_t[]){4, row, 4 * row + 28}, 8);
        break;
    }
    default: *x = *xp;
    }
}

static void ref_matmul_row(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t K = c->p[0], M = c->p[1], NN = c->p[2] * mm_n2(c), pk = d->in[0].ne[0];
    const int64_t lead = c->p[3] == MM_VIEWS ? dtype_info(c->type)->block_elems
                         : c->p[3] == MM_WOFF && !is_blocks(c->type) ? MM_WOFF_BYTES / dtype_info(c->type)->block_bytes
                                                                     : 0;
    float *w = malloc((size_t)(K * M) * sizeof *w), *x = malloc((size_t)(K * NN) * sizeof *x);
    for (int64_t m = 0; m < M; m++)
        memcpy(w + m * K, d->in[0].val + m * pk + lead, (size_t)K * sizeof *w);
    tensor wp = op_host_parent(d, 0), xp = op_host_parent(d, 1), wv, xv;
    matmul_views(c, &wp, &xp, &wv, &xv);
    op_gather_vals(&d->in[1], &xp, &xv, x);
    ref_matmul(w, x, K, M, NN, want);
    free(w), free(x);
}

static int run_matmul(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    tensor w, x;
    matmul_views(c, b->t[0], b->t[1], &w, &x);
    int rc = op_matmul(b->be, b->t[2], &w, &x);
    return rc ? rc : op_read_view(b, 2, b->t[2], got);
}

/* The CPU kernel's sweep (CPU only): M 1, 3, 17, 251 × N 1, 2, 5, 64, 67 for each K (its tiles
   are 16 weight rows × 8 activation rows, its K chunks 2048); MN_SMALL leaves out M·N > 6510
   where K = 12288 keeps the reference cheap. */
#define MNC(t, K, M, N) {PAR(K, M, N), .type = t, .flags = OPC_CPU_ONLY}
#define MN_M(t, K, M) MNC(t, K, M, 1), MNC(t, K, M, 2), MNC(t, K, M, 5)
#define MN_SMALL(t, K) MN_M(t, K, 1), MN_M(t, K, 3), MN_M(t, K, 17), MN_M(t, K, 251), MNC(t, K, 1, 64),              \
                       MNC(t, K, 1, 67), MNC(t, K, 3, 64), MNC(t, K, 3, 67), MNC(t, K, 17, 64), MNC(t, K, 17, 67)
#define MN(t, K) MN_SMALL(t, K), MNC(t, K, 251, 64), MNC(t, K, 251, 67)
/* The Vulkan shapes for each dtype: a K awkward for it (odd; an odd number of blocks, so Q8_0,
   Q4_0 and Q6_K rows are not 4-byte multiples) against M = 37 and N = 1, 3, 8 (matvec) and 67
   (tiled); 2500 weight rows (the lm head); 2100 tokens (a long prefill); one block; K = 5 blocks of
   256 or 5·64; views; and, for the 32 KiB window, ~160 KB of weight rows (Ms) against N = 1 and
   67 (x of 214..268 KB), and views. */
#define MMP(t, K, M, N, lay) {PAR(K, M, N, lay), .type = t, .flags = OPC_PLAIN}
#define MMS(t, K, M, N, lay) {PAR(K, M, N, lay), .type = t, .flags = OPC_SPLIT}
#define MM_VK(t, K, qk, Ms)                                                                                          \
    MMP(t, K, 37, 1, 0), MMP(t, K, 37, 3, 0), MMP(t, K, 37, 8, 0), MMP(t, K, 37, 67, 0), MMP(t, K, 2500, 1, 0),      \
        MMP(t, K, 23, 2100, 0), MMP(t, qk, 1, 1, 0), MMP(t, 5 * ((qk) == 1 ? 64 : 256), 130, 9, 0),                  \
        MMP(t, K, 19, 3, MM_VIEWS), MMP(t, K, 19, 67, MM_VIEWS), MMS(t, K, Ms, 1, 0), MMS(t, K, Ms, 67, 0),          \
        MMS(t, K, Ms, 5, MM_VIEWS)
/* Q4_K and Q5_K decode as Vulkan's wide int-dot builds (matvec_dot.comp WIDE) read them: each
   x-row count they have a build for, at one superblock and at 16 per row, M = 37 (not a multiple
   of the 8 rows per workgroup); and rows off 16-byte boundaries, which the host must give the
   word-reading builds */
#define MMW(t, K)                                                                                                    \
    MMP(t, K, 37, 1, 0), MMP(t, K, 37, 2, 0), MMP(t, K, 37, 3, 0), MMP(t, K, 37, 4, 0), MMP(t, K, 37, 5, 0),         \
        MMP(t, K, 37, 6, 0), MMP(t, K, 37, 7, 0), MMP(t, K, 37, 8, 0), MMP(t, K, 37, 3, MM_WOFF),                    \
        MMP(t, K, 9, 8, MM_WOFF)
/* ops.c's plain-dtype list: not multiples of any tile (64×64×16) or workgroup; odd K for odd
   f16 starts; 1×1×1; a 2048-deep dot product; 2500 tokens; views; 32 KiB windows. K = 1000, 64,
   2048 and 96 are whole 16-byte pieces, which the float wide builds (matvec.comp WIDE) read where
   the rows are aligned; weight rows off 16 bytes (MM_WOFF) and x rows off them (MM_XPAD) must
   take the word-reading builds instead. */
#define MM_PLAIN(t)                                                                                                  \
    MMP(t, 1000, 37, 1, 0), MMP(t, 1000, 37, 3, 0), MMP(t, 1000, 37, 67, 0), MMP(t, 1, 1, 1, 0),                     \
        MMP(t, 999, 5, 1, 0), MMP(t, 999, 70, 9, 0), MMP(t, 257, 130, 2, 0), MMP(t, 64, 64, 64, 0),                  \
        MMP(t, 2048, 300, 1, 0), MMP(t, 96, 70, 2500, 0), MMP(t, 301, 19, 1, MM_VIEWS), MMP(t, 301, 19, 7, MM_VIEWS), \
        MMP(t, 96, 37, 8, MM_WOFF), MMP(t, 96, 37, 67, MM_WOFF), MMP(t, 96, 17, 8, MM_XPAD),                         \
        MMP(t, 96, 17, 67, MM_XPAD), MMS(t, 1000, 37, 1, 0), MMS(t, 1000, 37, 67, 0), MMS(t, 999, 70, 9, MM_VIEWS)
static const struct op_case matmul_cases[] = {
    MN(DT_F32, 1), MN(DT_F32, 7), MN(DT_F32, 2049), MN_SMALL(DT_F32, 12288),
    MN(DT_F16, 1), MN(DT_F16, 37), MN(DT_F16, 2050),
    MN(DT_BF16, 3), MN(DT_BF16, 100), MN(DT_BF16, 2063),
    MN(DT_Q8_0, 32), MN(DT_Q8_0, 96), MN(DT_Q8_0, 32 * 67),
    MN(DT_Q4_0, 32), MN(DT_Q4_0, 160), MN(DT_Q4_0, 32 * 67),
    MN(DT_Q4_K, 256), MN(DT_Q4_K, 768), MN(DT_Q4_K, 256 * 9),
    MN(DT_Q5_K, 256), MN(DT_Q5_K, 1280), MN(DT_Q5_K, 256 * 9),
    MN(DT_Q6_K, 256), MN(DT_Q6_K, 768), MN(DT_Q6_K, 256 * 9),
    {PAR(256 * 48, 17, 5), .type = DT_Q4_K, .flags = OPC_CPU_ONLY},
    {PAR(96, 17, 67, MM_XPAD), .type = DT_F32}, {PAR(96, 17, 67, MM_XPAD), .type = DT_Q8_0},
    {PAR(512, 17, 67, MM_XPAD), .type = DT_Q4_K}, {PAR(64, 5, 3, MM_X3D), .type = DT_F32},
    {PAR(2049, 251, 1), .type = DT_F32, .flags = OPC_THREADS},
    {PAR(512, 17, 67), .type = DT_Q4_K, .flags = OPC_THREADS},
    {PAR(96, 251, 5), .type = DT_Q8_0, .flags = OPC_THREADS}, {PAR(256, 3, 64), .type = DT_Q6_K, .flags = OPC_THREADS},
    MM_PLAIN(DT_F32), MM_PLAIN(DT_F16), MM_PLAIN(DT_BF16),
    MM_VK(DT_F32, 999, 1, 43), MM_VK(DT_F16, 999, 1, 83), MM_VK(DT_BF16, 999, 1, 83),
    MM_VK(DT_Q8_0, 800, 32, 191), MM_VK(DT_Q4_0, 800, 32, 358), MM_VK(DT_Q4_K, 768, 256, 373),
    MM_VK(DT_Q5_K, 768, 256, 306), MM_VK(DT_Q6_K, 768, 256, 256), MMW(DT_Q4_K, 256),
    MMW(DT_Q4_K, 4096), MMW(DT_Q5_K, 256), MMW(DT_Q5_K, 4096),
};
static const struct op_row row_matmul = {"matmul", 0, make_matmul, ref_matmul_row, run_matmul, fill_shifted, OP_L2,
                                         1e-4, "f32 accumulation in another order: up to ~6e-6 of Σ|w||x|",
                                         OP_CASES(matmul_cases), NULL, "K M N layout"};

/* ---- linear ----------------------------------------------------------------------------------- */

enum { LIN_BIAS = 1, LIN_GELU = 2, LIN_ERF = 4, LIN_RES = 8 };

static void make_linear(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t K = c->p[0], M = c->p[1], N = c->p[2];
    if (is_blocks(c->type))
        op_add_blocks(d, c->type, K, M, moderate_blocks(c->type, K, M));
    else
        op_add_input(d, c->type, K, M, 1, 1, fill_normal);
    op_add_input(d, DT_F32, K, N, 1, 1, fill_normal);
    op_add_input(d, DT_F32, M, 1, 1, 1, fill_normal);
    op_add_input(d, DT_F32, M, N, 1, 1, fill_normal3);
    op_add_input(d, DT_F32, M, N, 1, 1, NULL);
    d->n_out = (size_t)(M * N);
}

static void ref_linear(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t K = c->p[0], M = c->p[1], N = c->p[2], parts = c->p[3];
    double *y = want;
    ref_matmul(d->in[0].val, d->in[1].val, K, M, N, y);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            double v = y[n * M + m] + (parts & LIN_BIAS ? d->in[2].val[m] : 0.0);
            v = parts & LIN_GELU ? ref_unary(UNARY_GELU_TANH, v) : parts & LIN_ERF ? ref_unary(UNARY_GELU_ERF, v) : v;
            y[n * M + m] = v + (parts & LIN_RES ? d->in[3].val[n * M + m] : 0.0);
        }
}

static int run_linear(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    const int64_t parts = c->p[3];
    const struct linear_epilogue ep = {
        .bias = parts & LIN_BIAS ? b->t[2] : NULL, .act = (parts & (LIN_GELU | LIN_ERF)) != 0,
        .unary = parts & LIN_ERF ? UNARY_GELU_ERF : UNARY_GELU_TANH, .res = parts & LIN_RES ? b->t[3] : NULL,
    };
    int rc = op_linear(b->be, b->t[4], b->t[0], b->t[1], &ep);
    return rc ? rc : op_read_view(b, 4, b->t[4], got);
}

/* Every set of parts the tower uses (bias; bias + GELU tanh; bias + GELU erf, the merger's; bias +
   residual) and all four at once, on F16 (the tower's weights), F32 and Q8_0, N = 5 and 67, M = 70
   (a 64-row unit and a 6-row one); the bare product; one case whose rows span 32 KiB windows. */
#define LIN(t, K, M, N) {PAR(K, M, N, LIN_BIAS), .type = t}, {PAR(K, M, N, LIN_BIAS | LIN_GELU), .type = t},                                  {PAR(K, M, N, LIN_BIAS | LIN_ERF), .type = t}, {PAR(K, M, N, LIN_BIAS | LIN_RES), .type = t},                         {PAR(K, M, N, LIN_BIAS | LIN_GELU | LIN_RES), .type = t}
static const struct op_case linear_cases[] = {
    LIN(DT_F16, 96, 70, 5), LIN(DT_F16, 300, 70, 67), LIN(DT_F32, 37, 70, 67), LIN(DT_Q8_0, 64, 70, 67),
    {PAR(300, 70, 67, 0), .type = DT_F16}, {PAR(300, 130, 67, LIN_RES), .type = DT_F16, .flags = OPC_THREADS},
    {PAR(1000, 37, 67, LIN_BIAS | LIN_GELU | LIN_RES), .type = DT_F32, .flags = OPC_SPLIT},
};
static const struct op_row row_linear = {"linear", 0, make_linear, ref_linear, run_linear, fill_normal, OP_L2,
                                         1e-4, "op_matmul's tolerance; the epilogue adds f32 rounding and "
                                         "vmath.c's GELU (within 3e-7)", OP_CASES(linear_cases), NULL,
                                         "K M N parts"};

/* ---- get_rows --------------------------------------------------------------------------------- */

static void make_get_rows(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t H = c->p[0], V = c->p[1], N = c->p[2];
    if (is_blocks(c->type)) {
        size_t row_bytes = 0;
        dtype_row_bytes(c->type, H, &row_bytes);
        unsigned char *raw = malloc(row_bytes * (size_t)V);
        quant_test_random_blocks(c->type, raw, (int)(row_bytes * (size_t)V / (size_t)dtype_info(c->type)->block_bytes));
        op_add_blocks(d, c->type, H, V, raw);
    } else {
        op_add_input(d, c->type, H, V, 1, 1, fill_unit); /* a lookup: any values; uniform ones are cheap */
    }
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    for (int64_t n = 0; n < N; n++)
        ids[n] = n == 0 ? (int32_t)(V - 1) : n == 1 ? 0 : (int32_t)(test_rand_u64() % (uint64_t)V);
    op_add_i32(d, N, 1, ids);
    free(ids);
    op_add_input(d, DT_F32, H + (c->flags & OPC_STRIDED ? 3 : 0), N, 1, 1, NULL);
    d->n_out = (size_t)(H * N) * sizeof(float);
}

static void ref_get_rows(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t H = c->p[0], N = c->p[2];
    const int32_t *ids = (const int32_t *)d->in[1].bytes;
    for (int64_t n = 0; n < N; n++)
        memcpy((float *)want + n * H, d->in[0].val + ids[n] * H, (size_t)H * sizeof(float));
}

static int run_get_rows(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    tensor out = tensor_view(b->t[2], 2, (int64_t[]){c->p[0], c->p[2]}, (size_t[]){4, b->t[2]->nb[1]}, 0);
    int rc = op_get_rows(b->be, &out, b->t[0], b->t[1]);
    return rc ? rc : op_read_view(b, 2, &out, got);
}

/* The CPU list: 1 id (decode) and 40 (more than the 16 that wake the pool) from 29 rows; the
   Vulkan list: N = 1, 3, 8, 67 from 3000 rows of an awkward length, a strided out, and 400-row
   tables across 32 KiB windows (6..50 of them). */
#define GR(t, Hc, Hv)                                                                                                \
    {PAR(Hc, 29, 1), .type = t}, {PAR(Hc, 29, 40), .type = t}, {PAR(Hv, 3000, 1), .type = t},                        \
        {PAR(Hv, 3000, 3), .type = t}, {PAR(Hv, 3000, 8), .type = t}, {PAR(Hv, 3000, 67), .type = t},                \
        {PAR(Hv, 7, 8), .type = t, .flags = OPC_STRIDED}, {PAR(Hv, 400, 67), .type = t, .flags = OPC_SPLIT},         \
        {PAR(Hv, 400, 3), .type = t, .flags = OPC_SPLIT | OPC_STRIDED}
static const struct op_case get_rows_cases[] = {
    GR(DT_F32, 37, 999), GR(DT_F16, 37, 999), GR(DT_BF16, 5, 999), GR(DT_Q8_0, 96, 800),
    GR(DT_Q4_0, 160, 800), GR(DT_Q4_K, 512, 768), GR(DT_Q5_K, 256, 768), GR(DT_Q6_K, 768, 768),
};
static const struct op_row row_get_rows = {"get_rows", 0, make_get_rows, ref_get_rows, run_get_rows, fill_normal,
                                           OP_BITS, 0, "a lookup: the table's values bit for bit",
                                           OP_CASES(get_rows_cases), NULL, "H V N"};

static const struct op_row *const matmul_rows[] = {&row_matmul, &row_linear, &row_get_rows};
