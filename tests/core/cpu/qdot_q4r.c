/* Tests core/cpu/qdot_q4r.c, the Q4_K and Q5_K decode products with 16 weight rows interleaved as
   vector lanes, where this CPU has AVX-512 VNNI (a visible skip elsewhere), for each type: the
   layout keeps every block (q4r_block against the file's bytes, q4r_dequant against
   dequantize_row, bit for bit); the kernel, for 1..8 activation rows, gives the bits of the
   arithmetic qdot_q4r.c's header states, computed here in scalar C from the rounded activations
   (exact int sums per sub-block, then f32 products and fmaf in the stated order), and that
   arithmetic is the product (against double sums of dequantize_row's values); op_matmul on a
   matrix the backend interleaved gives every activation row the same bits whatever the number of
   rows beside it (3, 8, 13, 15 against 1: groups of 8 and a tail) on 1 and 2 threads, a
   prefill-sized product (40 rows: the AVX-512 int8 tiles) gives the bits it gives on the file's
   layout, op_get_rows reads the file's rows, and the f32 path still reads it (exact set after
   loading, within the f32 tolerance). Weights are random block bytes (every nibble, fifth bit and
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

static enum dtype T; /* the type under test: DT_Q4_K or DT_Q5_K */

static size_t row_bytes(void) { return NSB * (size_t)dtype_info(T)->block_bytes; }

/* Superblock i of a row: Q5_K is Q4_K's d, dmin, scales, then qh before qs. */
static const block_q4_K *head(const uint8_t *row, int i) { return (const block_q4_K *)(const void *)(row + i * dtype_info(T)->block_bytes); }

/* Value l (0..31) of sub-block j of superblock i, unsigned: a nibble of qs[32(j/2) + l], high ones for
   odd j, and for Q5_K bit j of qh[l] as 16 (as ggml's dequantize_row_q5_K reads a block). */
static int q_value(const uint8_t *row, int i, int j, int l)
{
    if (T == DT_Q4_K)
        return (head(row, i)->qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
    const block_q5_K *b = (const block_q5_K *)(const void *)head(row, i);
    return ((b->qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15) | ((b->qh[l] >> j) & 1) << 4;
}

/* The stated arithmetic for weight row w (file layout) and one Q8_K activation row. */
static float ref_canonical(const uint8_t *w, const block_q8k *x)
{
    float acc = 0.0f;
    for (int i = 0; i < NSB; i++) {
        const block_q4_K *h = head(w, i);
        const float d = f16_to_f32(h->d), dmin = f16_to_f32(h->dmin);
        float t = 0.0f;
        for (int j = 0; j < 8; j++) {
            int32_t isum = 0;
            for (int l = 0; l < 32; l++)
                isum += q_value(w, i, j, l) * x[i].qs[32 * j + l];
            uint8_t sc, mn;
            get_scale_min_k4(j, h->scales, &sc, &mn);
            t = fmaf((float)isum, d * (float)sc, t);
        }
        for (int j = 0; j < 8; j++) {
            uint8_t sc, mn;
            get_scale_min_k4(j, h->scales, &sc, &mn);
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
    for (size_t i = 0; i < (size_t)M * row_bytes(); i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int i = 0; i < NSB; i++) {
            block_q4_K *b = (block_q4_K *)(void *)(wb + m * row_bytes() + i * dtype_info(T)->block_bytes);
            b->d = f32_to_f16(test_randf(0.0f, 0.002f));
            b->dmin = f32_to_f16(test_randf(0.0f, 0.002f));
        }
}


/* The kernel on a matrix laid out in plain memory. */
static void test_kernel(void)
{
    enum { NX = 8 };
    const size_t rb = row_bytes(), bb = (size_t)dtype_info(T)->block_bytes;
    const char *tn = dtype_info(T)->name;
    uint8_t *wb = malloc((size_t)M * rb), *orig = malloc((size_t)M * rb);
    rand_matrix(wb);
    memcpy(orig, wb, (size_t)M * rb);
    tensor w;
    tensor_init4(&w, T, K, M, 1, 1);
    w.data = wb;
    ok(q4r_layout_fits(&w) && q4r_layout(&w) && w.layout == (T == DT_Q4_K ? TL_Q4_K_R16 : TL_Q5_K_R16),
       "%s: a %dx%d matrix takes the layout", tn, M, K);

    bool same = true, same_f = true;
    float a[K], b[K];
    for (int m = 0; m < M; m++) {
        for (int i = 0; i < NSB; i++) {
            block_q5_K blk; /* the larger of the two */
            q4r_block(&w, m, i, &blk);
            same = same && !memcmp(&blk, orig + m * rb + i * bb, bb);
        }
        dequantize_row(T, orig + m * rb, a, K);
        q4r_dequant(&w, m, 0, b, K);
        same_f = same_f && layout_same_bits(a, b, K);
        q4r_dequant(&w, m, 2 * QK_K, b, 2 * QK_K); /* from the middle */
        same_f = same_f && layout_same_bits(a + 2 * QK_K, b, 2 * QK_K);
    }
    ok(same, "%s: q4r_block gives back every superblock's bytes", tn);
    ok(same_f, "%s: q4r_dequant gives dequantize_row's values of every row, bit for bit", tn);

    const size_t xrb = qdot_act_row_bytes(DT_Q4_K, K);
    char *xq = malloc(NX * xrb);
    float *x = malloc(NX * K * sizeof *x), ref[NX][M];
    test_fill_normal(x, NX * K, 1.0f);
    for (int n = 0; n < NX; n++) {
        qdot_quantize_act(DT_Q4_K, x + n * K, xq + n * xrb, K);
        for (int m = 0; m < M; m++)
            ref[n][m] = ref_canonical(orig + m * rb, (const block_q8k *)(const void *)(xq + n * xrb));
    }
    /* meaning, not only bits: against double sums of the file's values and the rounded activations */
    const double e = layout_err_vs_double(T, orig, rb, K, M, DT_Q4_K, xq, xrb, NX, &ref[0][0]);
    ok(e <= 1e-5, "%s: the stated arithmetic is the product: rel-L2 %.2e ≤ 1e-5 against double sums (f32 roundings only)",
       tn, e);

    char what[16];
    snprintf(what, sizeof what, "%s: ", tn);
    layout_check_units(what, q4r_unit, &w, xq, xrb, NX, &ref[0][0]);
    free(wb);
    free(orig);
    free(xq);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static void test_backend(void)
{
    const bool q4 = T == DT_Q4_K;
    const struct layout_test c = {T, K, M, row_bytes(), rand_matrix, q4 ? TL_Q4_K_R16 : TL_Q5_K_R16,
                                  q4 ? "interleaves a copied Q4_K matrix" : "interleaves a copied Q5_K matrix",
                                  q4 ? "the interleaved Q4_K rows" : "the interleaved Q5_K rows", ref_canonical_row, 15,
                                  DT_Q4_K};
    layout_test_backend(&c, 1);
    layout_test_backend(&c, 2);
}

int main(void)
{
    test_seed();
    if (!q4r_ready())
        return plan_skip_all("no AVX-512 VNNI here (or SEER_NO_Q4K_R16 is set)");
    static const enum dtype types[] = {DT_Q4_K, DT_Q5_K};
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        T = types[i];
        test_kernel();
        test_backend();
    }
    return done_testing();
}
