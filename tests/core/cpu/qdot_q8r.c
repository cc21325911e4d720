/* Tests core/cpu/qdot_q8r.c, the Q8_0 products with 16 weight rows interleaved as vector lanes,
   where this CPU has AVX-512 VNNI (a visible skip elsewhere): the layout keeps every block
   (q8r_dequant against dequantize_row, bit for bit, from the start and from the middle of a row);
   the kernel, for 1..8 activation rows, gives the bits of the arithmetic qdot_q8r.c's header
   states, computed here in scalar C from the rounded activations (exact int sums per block, then
   f32 products and fmaf in the stated order), and that arithmetic is the product (against double
   sums); through the backend (layout_checks.h): op_matmul on a matrix the backend interleaved
   gives every activation row the same bits whatever the number of rows beside it, a
   prefill-sized product (the AVX-512 int8 tiles, which read the layout in place) gives the bits
   it gives on the file's layout, op_get_rows reads the file's rows, and the f32 path still reads
   it. Weights are random bytes with random f16 scales, K = 1344 (42 blocks: not a multiple of the
   tiles' 256-value chunks), M = 48 (3 units; a 32-row tile and a 16-row one). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_amx.h"
#include "core/cpu/qdot_q8r.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

#include "layout_checks.h"

#define K 1344
#define M 48
#define NB (K / QK8_0)
#define ROW_BYTES (NB * sizeof(block_q8_0))

/* Activation row parts in qdot.h's Q8_0 form (written independently of qdot_q8r.c's reading). */
static const float *act_steps(const char *xq) { return (const float *)(const void *)(xq + NB * sizeof(block_q8x)); }
static const int8_t *act_values(const char *xq) { return (const int8_t *)(const void *)(act_steps(xq) + 9 * NB); }

/* The stated arithmetic for weight row w (file layout) and one rounded activation row. */
static float ref_canonical(const block_q8_0 *w, const char *xq)
{
    const float *xd = act_steps(xq);
    const int8_t *xv = act_values(xq);
    float acc = 0.0f;
    for (int j = 0; j < NB; j++) {
        int32_t isum = 0;
        for (int l = 0; l < QK8_0; l++)
            isum += w[j].qs[l] * xv[QK8_0 * j + l];
        acc = fmaf((float)isum, f16_to_f32(w[j].d) * xd[j], acc);
    }
    return acc;
}

static float ref_canonical_row(const void *w, const void *xq) { return ref_canonical(w, xq); }

static void rand_matrix(uint8_t *wb)
{
    for (size_t i = 0; i < (size_t)M * ROW_BYTES; i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int j = 0; j < NB; j++) {
            block_q8_0 *b = (block_q8_0 *)(void *)(wb + m * ROW_BYTES) + j;
            b->d = f32_to_f16(test_randf(-0.01f, 0.01f));
        }
}


/* The kernel on a matrix laid out in plain memory. */
static void test_kernel(void)
{
    enum { NX = 8 };
    uint8_t *wb = aligned_alloc(64, (size_t)M * ROW_BYTES), *orig = malloc((size_t)M * ROW_BYTES);
    rand_matrix(wb);
    memcpy(orig, wb, (size_t)M * ROW_BYTES);
    tensor w;
    tensor_init4(&w, DT_Q8_0, K, M, 1, 1);
    w.data = wb;
    ok(q8r_layout_fits(&w) && q8r_layout(&w) && w.layout == TL_Q8_0_R16, "a %dx%d Q8_0 matrix takes the layout", M, K);
    tensor odd;
    tensor_init4(&odd, DT_Q8_0, K - QK8_0, M, 1, 1);
    ok(!q8r_layout_fits(&odd), "an odd number of blocks per row does not fit the layout");

    bool same_f = true;
    float a[K], b[K];
    for (int m = 0; m < M; m++) {
        dequantize_row(DT_Q8_0, orig + m * ROW_BYTES, a, K);
        q8r_dequant(&w, m, 0, b, K);
        same_f = same_f && layout_same_bits(a, b, K);
        q8r_dequant(&w, m, 5 * QK8_0, b, 3 * QK8_0); /* from the middle */
        same_f = same_f && layout_same_bits(a + 5 * QK8_0, b, 3 * QK8_0);
    }
    ok(same_f, "q8r_dequant gives dequantize_row's values of every row, bit for bit");

    const size_t xrb = qdot_act_row_bytes(DT_Q8_0, K);
    char *xq = malloc(NX * xrb);
    float *x = malloc(NX * K * sizeof *x), ref[NX][M];
    test_fill_normal(x, NX * K, 1.0f);
    for (int n = 0; n < NX; n++) {
        qdot_quantize_act(DT_Q8_0, x + n * K, xq + n * xrb, K);
        for (int m = 0; m < M; m++)
            ref[n][m] = ref_canonical((const block_q8_0 *)(const void *)(orig + m * ROW_BYTES), xq + n * xrb);
    }
    /* meaning, not only bits: against double sums of the file's values and the rounded activations */
    const double e = layout_err_vs_double(DT_Q8_0, orig, ROW_BYTES, K, M, DT_Q8_0, xq, xrb, NX, &ref[0][0]);
    ok(e <= 1e-5, "the stated arithmetic is the product: rel-L2 %.2e ≤ 1e-5 against double sums (f32 roundings only)", e);

    layout_check_units("", q8r_unit, &w, xq, xrb, NX, &ref[0][0]);
    free(wb);
    free(orig);
    free(xq);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static const struct layout_test backend_case = {DT_Q8_0, K, M, ROW_BYTES, rand_matrix, TL_Q8_0_R16,
                                                "interleaves a copied Q8_0 matrix", "the interleaved rows",
                                                ref_canonical_row, 31, DT_Q8_0};

int main(void)
{
    test_seed();
    if (!q8r_ready())
        return plan_skip_all("no AVX-512 VNNI here (or SEER_NO_Q8_0_R16 is set)");
    if (qamx_ready())
        return plan_skip_all("this CPU has AMX tiles: its Q8_0 matrices take qdot_amx.c's layout");
    test_kernel();
    layout_test_backend(&backend_case, 1);
    layout_test_backend(&backend_case, 2);
    return done_testing();
}
