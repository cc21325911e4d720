/* Tests core/cpu/qdot_q6r.c, the Q6_K decode products with 16 weight rows interleaved as vector
   lanes, where this CPU has AVX-512 VNNI (a visible skip elsewhere): the layout keeps every block
   (q6r_block against the file's bytes, q6r_dequant against dequantize_row, bit for bit); the
   kernel, for 1..4 activation rows, gives the bits of the arithmetic qdot_q6r.c's header states,
   computed here in scalar C from the Q8_K-rounded activations (exact int sums per sub-block of 16,
   then f32 products and fmaf in the stated order), and that arithmetic is the product (against
   double sums); through the backend (layout_checks.h): each activation row's results the same
   alone and beside others (3, 8, 13 and 31 rows: groups of 4 and a tail), a prefill-sized product
   (40 rows: the AVX-512 int8 tiles, which unpack the layout) the bits it gives on the file's
   layout, op_get_rows the file's rows, and the f32 path. Weights are random block bytes (every
   6-bit value and scale), K = 1280 (5 superblocks), M = 48 (3 units). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_q6r.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

#include "layout_checks.h"

#define K 1280
#define M 48
#define NSB (K / QK_K)
#define ROW_BYTES (NSB * sizeof(block_q6_K))

/* Value l (0..255) of a Q6_K block as stored (unsigned 6 bits; the weight is this − 32), read as
   ggml's dequantize_row_q6_K lays a block out. */
static int q6_value(const block_q6_K *b, int l)
{
    const int h = l / 128, k = (l % 128) / 32, i = l % 32;
    const uint8_t ql = b->ql[64 * h + 32 * (k % 2) + i], qh = b->qh[32 * h + i];
    return ((k < 2 ? ql & 15 : ql >> 4) | ((qh >> (2 * k)) & 3) << 4);
}

/* The stated arithmetic for weight row w (file layout) and one Q8_K activation row. */
static float ref_canonical(const block_q6_K *w, const block_q8k *x)
{
    float acc = 0.0f;
    for (int i = 0; i < NSB; i++) {
        const float d = f16_to_f32(w[i].d);
        float t = 0.0f;
        for (int h = 0; h < 2; h++)
            for (int tq = 0; tq < 2; tq++)
                for (int k = 0; k < 4; k++) {
                    const int j = 8 * h + 2 * k + tq;
                    int32_t isum = -32 * x[i].bsums[j];
                    for (int l = 16 * j; l < 16 * j + 16; l++)
                        isum += q6_value(&w[i], l) * x[i].qs[l];
                    t = fmaf((float)isum, d * (float)w[i].scales[j], t);
                }
        acc = fmaf(t, x[i].d, acc);
    }
    return acc;
}

static float ref_canonical_row(const void *w, const void *xq) { return ref_canonical(w, xq); }

static void rand_matrix(uint8_t *wb)
{
    for (size_t i = 0; i < (size_t)M * ROW_BYTES; i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int i = 0; i < NSB; i++) {
            block_q6_K *b = (block_q6_K *)(void *)(wb + m * ROW_BYTES) + i;
            b->d = f32_to_f16(test_randf(-0.002f, 0.002f));
        }
}


/* The kernel on a matrix laid out in plain memory. */
static void test_kernel(void)
{
    enum { NX = Q6R_MAX_X };
    uint8_t *wb = malloc((size_t)M * ROW_BYTES), *orig = malloc((size_t)M * ROW_BYTES);
    rand_matrix(wb);
    memcpy(orig, wb, (size_t)M * ROW_BYTES);
    tensor w;
    tensor_init4(&w, DT_Q6_K, K, M, 1, 1);
    w.data = wb;
    ok(q6r_layout_fits(&w) && q6r_layout(&w) && w.layout == TL_Q6_K_R16, "a %dx%d Q6_K matrix takes the layout", M, K);

    bool same = true, same_f = true;
    float a[K], b[K];
    for (int m = 0; m < M; m++) {
        for (int i = 0; i < NSB; i++) {
            block_q6_K blk;
            q6r_block(&w, m, i, &blk);
            same = same && !memcmp(&blk, orig + m * ROW_BYTES + i * sizeof blk, sizeof blk);
        }
        dequantize_row(DT_Q6_K, orig + m * ROW_BYTES, a, K);
        q6r_dequant(&w, m, 0, b, K);
        same_f = same_f && layout_same_bits(a, b, K);
        q6r_dequant(&w, m, 2 * QK_K, b, 2 * QK_K); /* from the middle */
        same_f = same_f && layout_same_bits(a + 2 * QK_K, b, 2 * QK_K);
    }
    ok(same, "q6r_block gives back every superblock's bytes");
    ok(same_f, "q6r_dequant gives dequantize_row's values of every row, bit for bit");

    const size_t xrb = qdot_act_row_bytes(DT_Q4_K, K);
    char *xq = malloc(NX * xrb);
    float *x = malloc(NX * K * sizeof *x), ref[NX][M];
    test_fill_normal(x, NX * K, 1.0f);
    for (int n = 0; n < NX; n++) {
        qdot_quantize_act(DT_Q4_K, x + n * K, xq + n * xrb, K);
        for (int m = 0; m < M; m++)
            ref[n][m] = ref_canonical((const block_q6_K *)(const void *)(orig + m * ROW_BYTES),
                                      (const block_q8k *)(const void *)(xq + n * xrb));
    }
    /* meaning, not only bits: against double sums of the file's values and the rounded activations */
    const double e = layout_err_vs_double(DT_Q6_K, orig, ROW_BYTES, K, M, DT_Q4_K, xq, xrb, NX, &ref[0][0]);
    ok(e <= 1e-5, "the stated arithmetic is the product: rel-L2 %.2e ≤ 1e-5 against double sums (f32 roundings only)", e);

    layout_check_units("", q6r_unit, &w, xq, xrb, NX, &ref[0][0]);
    free(wb);
    free(orig);
    free(xq);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static const struct layout_test backend_case = {DT_Q6_K, K, M, ROW_BYTES, rand_matrix, TL_Q6_K_R16,
                                                "interleaves a copied Q6_K matrix", "the interleaved rows",
                                                ref_canonical_row, 31, DT_Q4_K};

int main(void)
{
    test_seed();
    if (!q6r_ready())
        return plan_skip_all("no AVX-512 VNNI here (or SEER_NO_Q6K_R16 is set)");
    test_kernel();
    layout_test_backend(&backend_case, 1);
    layout_test_backend(&backend_case, 2);
    return done_testing();
}
