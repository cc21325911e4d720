/* rows_rope.h — rows of tests/ops/backend_ops.c for text MRoPE (spec §3.3) and vision 2-D RoPE
   (spec §4.4). Case: ne {hd, nh, T}; p[0] the position bound; p[1] the text parameter set;
   p[2] the layout: 0 contiguous; 1 x a view whose heads are 3 floats apart and tokens 8 more;
   2 out a swapped view; 3 x the q half of a [q | gate] projection (spec §2.6 step 1), rotated in
   place with the gate halves left as they were (the gap check sees them). Parents: 0 x, 1 out,
   2 positions. Text positions: T below the bound, H and W offset from it independently (as image
   tokens are, spec §3.2) so the three axes differ; vision rows and columns below 48, row != col.
   Beyond 1000 the reference forms the angle in f32 as spec §3.3 says HF does (inv_freq rounded to
   f32, an f32 product); below it everything is double, whose angles differ by < 3e-6 rad. */

static const struct rope_text_params rope_sets[] = {
    {64, 1e7f, {11, 11, 10}}, /* spec §3.3 */
    {40, 1e4f, {3, 5, 2}},    /* 42 dims pass through at hd 82 */
    {20, 1e4f, {3, 3, 2}},    /* section bounds bite: i = 8 is T */
};
#define ROPE_VISION_THETA 1e4f

enum { ROPE_CONTIG, ROPE_PADDED, ROPE_OUT_SWAPPED, ROPE_QGATE };

static void make_rope(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    const int64_t hd = c->ne[0], nh = c->ne[1], T = c->ne[2];
    const bool vision = r->arg;
    switch (c->p[2]) {
    case ROPE_PADDED: op_add_input(d, DT_F32, ((hd + 3) * nh + 8) * T, 1, 1, 1, fill_normal); break;
    case ROPE_QGATE: op_add_input(d, DT_F32, 2 * hd, nh, T, 1, fill_normal); break;
    default: op_add_input(d, DT_F32, hd, nh, T, 1, fill_normal);
    }
    if (c->p[2] == ROPE_OUT_SWAPPED)
        op_add_swapped(d, (int64_t[]){hd, nh, T, 1}, NULL);
    else
        op_add_input(d, DT_F32, hd, nh, T, 1, NULL);
    const int axes = vision ? 2 : 3;
    int32_t *pos = malloc((size_t)(axes * T) * sizeof *pos);
    for (int64_t t = 0; t < T; t++) {
        if (vision) {
            pos[t] = (int32_t)(test_rand_u64() % 48);
            pos[T + t] = (pos[t] + 1 + (int32_t)(test_rand_u64() % 47)) % 48;
        } else {
            pos[t] = (int32_t)(test_rand_u64() % (uint64_t)c->p[0]);
            pos[T + t] = pos[t] + 1 + (int32_t)(test_rand_u64() % 40);
            pos[2 * T + t] = pos[t] + 41 + (int32_t)(test_rand_u64() % 40);
        }
    }
    op_add_i32(d, T, axes, pos);
    free(pos);
    d->n_out = (size_t)(hd * nh * T);
}

static void rope_views(const struct op_case *c, const tensor *xp, const tensor *op, tensor *x, tensor *out)
{
    const int64_t hd = c->ne[0], nh = c->ne[1], T = c->ne[2], ne[4] = {hd, nh, T, 1};
    const size_t hs = (size_t)(hd + 3) * 4, ts = hs * (size_t)nh + 32;
    switch (c->p[2]) {
    case ROPE_PADDED: *x = tensor_view(xp, 3, ne, (size_t[]){4, hs, ts}, 0); break;
    case ROPE_QGATE: *x = tensor_view(xp, 3, ne, (size_t[]){4, xp->nb[1], xp->nb[2]}, 0); break;
    default: *x = *xp;
    }
    *out = c->flags & OPC_IN_PLACE ? *x : c->p[2] == ROPE_OUT_SWAPPED ? op_swapped_view(op, ne) : *op;
}

static void ref_rope(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    tensor xp = op_host_parent(d, 0), op = op_host_parent(d, 1), x, out;
    rope_views(c, &xp, &op, &x, &out);
    float *xv = malloc(d->n_out * sizeof *xv);
    op_gather_vals(&d->in[0], &xp, &x, xv);
    const int32_t *pos = (const int32_t *)d->in[2].bytes;
    if (r->arg)
        ref_rope_vision(xv, c->ne[0], c->ne[1], c->ne[2], pos, ROPE_VISION_THETA, false, want);
    else
        ref_rope_text(xv, c->ne[0], c->ne[1], c->ne[2], pos, &rope_sets[c->p[1]], c->p[0] > 1000, want);
    free(xv);
}

static int run_rope(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    tensor x, out;
    rope_views(c, b->t[0], b->t[1], &x, &out);
    int rc = r->arg ? op_rope_vision(b->be, &out, &x, b->t[2], ROPE_VISION_THETA)
                    : op_rope_text(b->be, &out, &x, b->t[2], &rope_sets[c->p[1]]);
    return rc ? rc : op_read_view(b, c->flags & OPC_IN_PLACE ? 0 : 1, &out, got);
}

/* The CPU sweep: nh 1 and 3 × T 1, 7, 33: Qwen's parameters at positions up to 40000 and below
   60, and n_rot 20 of hd 36 — contiguous, into a swapped view, in place. */
#define ROPE_T(nh, T, lay, fl)                                                                                       \
    {NE(256, nh, T, 1), PAR(40000, 0, lay), .flags = (fl)}, {NE(256, nh, T, 1), PAR(60, 0, lay), .flags = (fl)},     \
        {NE(36, nh, T, 1), PAR(60, 2, lay), .flags = (fl)}
#define ROPE_SWEEP(lay, fl) ROPE_T(1, 1, lay, fl), ROPE_T(1, 7, lay, fl), ROPE_T(1, 33, lay, fl),                    \
                            ROPE_T(3, 1, lay, fl), ROPE_T(3, 7, lay, fl), ROPE_T(3, 33, lay, fl)
static const struct op_case rope_text_cases[] = {
    ROPE_SWEEP(ROPE_CONTIG, 0), ROPE_SWEEP(ROPE_OUT_SWAPPED, 0), ROPE_SWEEP(ROPE_CONTIG, OPC_IN_PLACE),
    {NE(256, 3, 5, 1), PAR(5000, 0, ROPE_QGATE), .flags = OPC_IN_PLACE},
    {NE(256, 8, 33, 1), PAR(40000, 0, 0), .flags = OPC_THREADS},
    /* the Vulkan shapes: 192 dims passing through, positions up to 2^18, n_rot = hd on one token,
       42 dims passing through in a padded view, in place; 160 KB of x across 32 KiB windows */
    {NE(256, 3, 5, 1), PAR(4096, 0, 0)}, {NE(256, 3, 5, 1), PAR(262144, 0, 0)}, {NE(64, 4, 1, 1), PAR(100, 0, 0)},
    {NE(82, 2, 9, 1), PAR(3000, 1, ROPE_PADDED)},
    {NE(256, 3, 17, 1), PAR(30000, 0, ROPE_PADDED), .flags = OPC_IN_PLACE},
    {NE(256, 4, 40, 1), PAR(5000, 0, 0), .flags = OPC_SPLIT},
};
#define ROPE_V(lay, fl, dh)                                                                                          \
    {NE(dh, 3, 1, 1), PAR(0, 0, lay), .flags = (fl)}, {NE(dh, 3, 7, 1), PAR(0, 0, lay), .flags = (fl)},              \
                            {NE(dh, 3, 33, 1), PAR(0, 0, lay), .flags = (fl)}
#define ROPE_VSWEEP(lay, fl) ROPE_V(lay, fl, 4), ROPE_V(lay, fl, 64), ROPE_V(lay, fl, 72)
static const struct op_case rope_vision_cases[] = {
    ROPE_VSWEEP(ROPE_CONTIG, 0), ROPE_VSWEEP(ROPE_OUT_SWAPPED, 0), ROPE_VSWEEP(ROPE_CONTIG, OPC_IN_PLACE),
    {NE(64, 8, 132, 1), .flags = OPC_THREADS},
    /* the Vulkan shapes: 36 pairs (three dispatches), one patch, dh 4, padded in place, split */
    {NE(72, 2, 7, 1)}, {NE(64, 3, 1, 1)}, {NE(4, 1, 5, 1)},
    {NE(72, 2, 7, 1), PAR(0, 0, ROPE_PADDED), .flags = OPC_IN_PLACE},
    {NE(72, 8, 70, 1), PAR(0, 0, ROPE_PADDED), .flags = OPC_SPLIT | OPC_IN_PLACE},
};

/* 1e-5: with the angle rounded as the reference rounds it only cos/sin and two f32 products
   differ (~1e-7); double angles below position 140 differ by < 1e-5 rad */
static const struct op_row row_rope_text = {"rope_text", 0, make_rope, ref_rope, run_rope, fill_normal, OP_L2, 1e-5,
                                            "cos/sin and f32 products",
                                            OP_CASES(rope_text_cases), "hd nh T", "max_pos params layout"};
static const struct op_row row_rope_vision = {"rope_vision", 1, make_rope, ref_rope, run_rope, fill_normal, OP_L2,
                                              1e-5, "positions < 48: angle rounding < 3e-6 rad",
                                              OP_CASES(rope_vision_cases), "dh nh N", "_ _ layout"};

static const struct op_row *const rope_rows[] = {&row_rope_text, &row_rope_vision};
