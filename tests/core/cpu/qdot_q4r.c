/* Tests core/cpu/qdot_q4r.c, the Q4_K decode products with 16 weight rows interleaved as vector
   lanes, where this CPU has AVX-512 VNNI (a visible skip elsewhere): the layout keeps every block
   (q4r_block against the file's bytes, q4r_dequant against dequantize_row, bit for bit); the
   kernel, for 1..8 activation rows, gives the bits of the arithmetic qdot_q4r.c's header states,
   computed here in scalar C from the rounded activations (exact int sums per sub-block, then f32
   products and fmaf in the stated order), and that arithmetic is the product (against double
   sums); op_matmul on a matrix the backend interleaved gives every activation row the same bits
   whatever the number of rows beside it (3, 8, 13 against 1: groups of 8 and a tail) on 1 and 2
   threads, a prefill-sized product (40 rows: the AVX-512 int8 tiles) gives the bits it gives on
   the file's layout, op_get_rows reads the file's rows, and the f32 path still reads it (exact
   set after loading, within the f32 tolerance). Weights are random block bytes (every nibble and
   6-bit scale), K = 1280 (5 superblocks), M = 48 (3 units). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_q4r.h"
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
#define ROW_BYTES (NSB * sizeof(block_q4_K))

/* The stated arithmetic for weight row w (file layout) and one Q8_K activation row. */
static float ref_canonical(const block_q4_K *w, const block_q8k *x)
{
    float acc = 0.0f;
    for (int i = 0; i < NSB; i++) {
        const float d = f16_to_f32(w[i].d), dmin = f16_to_f32(w[i].dmin);
        float t = 0.0f;
        for (int j = 0; j < 8; j++) { /* sub-block j: nibbles of qs[32(j/2) ..], high ones for odd j */
            int32_t isum = 0;
            for (int l = 0; l < 32; l++)
                isum += ((w[i].qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15) * x[i].qs[32 * j + l];
            uint8_t sc, mn;
            get_scale_min_k4(j, w[i].scales, &sc, &mn);
            t = fmaf((float)isum, d * (float)sc, t);
        }
        for (int j = 0; j < 8; j++) {
            uint8_t sc, mn;
            get_scale_min_k4(j, w[i].scales, &sc, &mn);
            t = fmaf(-(dmin * (float)mn), (float)(x[i].bsums[2 * j] + x[i].bsums[2 * j + 1]), t);
        }
        acc = fmaf(t, x[i].d, acc);
    }
    return acc;
}

/* ref_canonical on a row of the file's bytes and rounded activations (layout_check_all). */
static float ref_canonical_row(const void *w, const void *xq) { return ref_canonical(w, xq); }

static void rand_matrix(uint8_t *wb)
{
    for (size_t i = 0; i < (size_t)M * ROW_BYTES; i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int i = 0; i < NSB; i++) {
            block_q4_K *b = (block_q4_K *)(void *)(wb + m * ROW_BYTES) + i;
            b->d = f32_to_f16(test_randf(0.0f, 0.002f));
            b->dmin = f32_to_f16(test_randf(0.0f, 0.002f));
        }
}

static bool same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

/* The kernel on a matrix laid out in plain memory. */
static void test_kernel(void)
{
    enum { NX = 8 };
    uint8_t *wb = malloc((size_t)M * ROW_BYTES), *orig = malloc((size_t)M * ROW_BYTES);
    rand_matrix(wb);
    memcpy(orig, wb, (size_t)M * ROW_BYTES);
    tensor w;
    tensor_init4(&w, DT_Q4_K, K, M, 1, 1);
    w.data = wb;
    ok(q4r_layout_fits(&w) && q4r_layout(&w) && w.layout == TL_Q4_K_R16, "a %dx%d Q4_K matrix takes the layout", M, K);

    bool same = true, same_f = true;
    float a[K], b[K];
    for (int m = 0; m < M; m++) {
        for (int i = 0; i < NSB; i++) {
            block_q4_K blk;
            q4r_block(&w, m, i, &blk);
            same = same && !memcmp(&blk, orig + m * ROW_BYTES + i * sizeof blk, sizeof blk);
        }
        dequantize_row(DT_Q4_K, orig + m * ROW_BYTES, a, K);
        q4r_dequant(&w, m, 0, b, K);
        same_f = same_f && same_bits(a, b, K);
        q4r_dequant(&w, m, 2 * QK_K, b, 2 * QK_K); /* from the middle */
        same_f = same_f && same_bits(a + 2 * QK_K, b, 2 * QK_K);
    }
    ok(same, "q4r_block gives back every superblock's bytes");
    ok(same_f, "q4r_dequant gives dequantize_row's values of every row, bit for bit");

    const size_t xrb = qdot_act_row_bytes(DT_Q4_K, K);
    char *xq = malloc(NX * xrb);
    float *x = malloc(NX * K * sizeof *x), ref[NX][M], got[NX][M];
    test_fill_normal(x, NX * K, 1.0f);
    for (int n = 0; n < NX; n++) {
        qdot_quantize_act(DT_Q4_K, x + n * K, xq + n * xrb, K);
        for (int m = 0; m < M; m++)
            ref[n][m] = ref_canonical((const block_q4_K *)(const void *)(orig + m * ROW_BYTES),
                                      (const block_q8k *)(const void *)(xq + n * xrb));
    }
    /* meaning, not only bits: against the double product of the same integers and factors */
    double num = 0, den = 0;
    for (int n = 0; n < NX; n++)
        for (int m = 0; m < M; m++) {
            const block_q4_K *wr = (const block_q4_K *)(const void *)(orig + m * ROW_BYTES);
            const block_q8k *xr = (const block_q8k *)(const void *)(xq + n * xrb);
            double s = 0;
            for (int i = 0; i < NSB; i++)
                for (int j = 0; j < 8; j++) {
                    uint8_t sc, mn;
                    get_scale_min_k4(j, wr[i].scales, &sc, &mn);
                    for (int l = 0; l < 32; l++) {
                        const int q = (wr[i].qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
                        const double wv = (double)f16_to_f32(wr[i].d) * sc * q - (double)f16_to_f32(wr[i].dmin) * mn;
                        s += wv * xr[i].d * xr[i].qs[32 * j + l];
                    }
                }
            num += (ref[n][m] - s) * (ref[n][m] - s);
            den += s * s;
        }
    const double e = sqrt(num / den);
    ok(e <= 1e-5, "the stated arithmetic is the product: rel-L2 %.2e ≤ 1e-5 against double sums (f32 roundings only)", e);

    for (int nx = 1; nx <= NX; nx++) {
        memset(got, 0, sizeof got);
        for (int u = 0; u < M / Q4R_ROWS; u++)
            q4r_unit(&w, u, xq, xrb, nx, &got[0][0] + u * Q4R_ROWS, M);
        ok(same_bits(&got[0][0], &ref[0][0], (size_t)nx * M), "kernel, %d activation row(s): the stated arithmetic bit for bit",
           nx);
    }
    free(wb);
    free(orig);
    free(xq);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static const struct layout_test backend_case = {DT_Q4_K, K, M, ROW_BYTES, rand_matrix, TL_Q4_K_R16, "interleaves a copied Q4_K matrix", "the interleaved rows", ref_canonical_row, 15, DT_Q4_K};

int main(void)
{
    test_seed();
    if (!q4r_ready())
        return plan_skip_all("no AVX-512 VNNI here (or SEER_NO_Q4K_R16 is set)");
    test_kernel();
    layout_test_backend(&backend_case, 1);
    layout_test_backend(&backend_case, 2);
    return done_testing();
}
