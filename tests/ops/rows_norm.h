/* rows_norm.h — rows of tests/ops/backend_ops.c for the norms (spec §2.3, §4.5, §2.5 step 6):
   rmsnorm without a weight and with w_shift 0 and 1, rmsnorm_gated, layernorm, l2norm. They run
   on the map machinery of rows_elementwise.h (parents x, out, z, w, b). */

static void fill_n15(float *x, size_t n) { op_fill_normal(x, n, 1.5f); }
/* layernorm rows carry a large common offset, as vision activations do: the mean must cancel */
static void fill_off30(float *x, size_t n)
{
    op_fill_normal(x, n, 1.5f);
    for (size_t i = 0; i < n; i++)
        x[i] += 30.0f;
}
/* one row of 2^20 + 3 values around 40: f32 running sums typically miss the row statistic by
   ~sqrt(n)·2^-24 ≈ 6e-5 relative, so a 1e-6 bound shows whether it is accumulated exactly */
static void fill_long(float *x, size_t n)
{
    op_fill_normal(x, n, 3.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 40.0f;
}
/* mean(x²) ~ eps: tells eps inside the rsqrt from eps outside, and (L2) added to the sum from
   added to the mean — misplacing it changes the result by > 1e-1 */
static void fill_tiny(float *x, size_t n) { op_fill_normal(x, n, 1e-3f); }
static void fill_off1(float *x, size_t n)
{
    op_fill_normal(x, n, 2.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 1.0f;
}

/* The CPU sweep (ne0 1..4097 × rows 1..33 and a 4-D {ne0, 3, 2, 2}) in each layout, the long and
   the tiny rows, the pool at {4097, 33}, then the Vulkan shapes (rmsnorm's own list and the
   usual one of the light ops). */
#define NORM_SWEEP_N0(n0, fl) SWEEP_N0(n0, fl), {NE(n0, 3, 2, 2), .flags = (fl)}
#define NORM_SWEEP(fl) NORM_SWEEP_N0(1, fl), NORM_SWEEP_N0(7, fl), NORM_SWEEP_N0(100, fl), NORM_SWEEP_N0(128, fl),   \
                       NORM_SWEEP_N0(256, fl), NORM_SWEEP_N0(4097, fl)
#define NORM_COMMON                                                                                                  \
    NORM_SWEEP(0), NORM_SWEEP(OPC_STRIDED), NORM_SWEEP(OPC_IN_PLACE),                                                \
        {NE(1048579, 1, 1, 1), .fill = fill_long, .tol = 1e-6,                                                       \
         .why = "a few f32 roundings on an exactly accumulated row statistic"},                                      \
        {NE(128, 3, 1, 1), .fill = fill_tiny}, {NE(4097, 33, 1, 1), .flags = OPC_THREADS, .fill = fill_off1}
static const struct op_case rmsnorm_cases[] = {
    NORM_COMMON,
    {NE(1000, 5, 1, 1)}, {NE(1, 1, 1, 1)}, {NE(4097, 3, 1, 1)}, {NE(64, 7, 3, 2)}, {NE(64, 3000, 1, 1)},
    {NE(64, 7, 3, 2), .flags = OPC_STRIDED}, {NE(1000, 5, 1, 1), .flags = OPC_IN_PLACE},
    {NE(64, 7, 3, 2), .flags = OPC_STRIDED | OPC_IN_PLACE},
    {NE(1000, 60, 1, 1), .flags = OPC_SPLIT}, {NE(1000, 60, 1, 1), .flags = OPC_SPLIT | OPC_STRIDED},
};
static const struct op_case norm_cases[] = {NORM_COMMON, USUAL(NULL)};

/* 1e-5: a few f32 roundings per element (~3e-7) on row statistics kept exact */
#define NORM_ROW(name, arg, fill_, cases)                                                                            \
    static const struct op_row row_##name = {#name, arg, make_map, ref_map, run_map, fill_, OP_L2, 1e-5,             \
                                             "a few f32 roundings per element", OP_CASES(cases), NULL, NULL}
NORM_ROW(rmsnorm, MAP_RMS, fill_n15, rmsnorm_cases);
NORM_ROW(rmsnorm_w0, MAP_RMS_W0, fill_n15, rmsnorm_cases);
NORM_ROW(rmsnorm_w1, MAP_RMS_W1, fill_n15, rmsnorm_cases);
NORM_ROW(rmsnorm_gated, MAP_GATED, fill_n15, norm_cases);
NORM_ROW(layernorm, MAP_LAYER, fill_off30, norm_cases);
NORM_ROW(l2norm, MAP_L2, fill_n15, norm_cases);

static const struct op_row *const norm_rows[] = {
    &row_rmsnorm, &row_rmsnorm_w0, &row_rmsnorm_w1, &row_rmsnorm_gated, &row_layernorm, &row_l2norm,
};
