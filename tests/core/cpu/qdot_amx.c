/* Tests core/cpu/qdot_amx.c, the Q8_0 products on AMX tiles, where this CPU has them (a visible
   skip elsewhere): the tile layout keeps every value (qamx_dequant against dequantize_row, bit for
   bit); the tiles (every group size NP) and the one-row AVX-512 kernel give the bits of the
   arithmetic the file's header states, computed here in scalar C from the rounded activations
   (exact int sums, then f32 multiply and fmaf per block, two accumulators); op_matmul on a matrix
   the backend laid out gives every activation row the same bits whatever the number of rows
   beside it (3, 8, 13 against 1; the batch's promise) on 1 and 2 threads, a prefill-sized product
   (40 rows: the AVX-512 int8 tiles) gives the bits it gives on the file's layout, op_get_rows reads
   it as the file's layout, and the f32 path still reads it (exact set after loading, within the f32
   tolerance). Weights are random block bytes (int8 −128 included), K = 1088 (17 pairs of blocks:
   the odd tail). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_amx.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

#include "layout_checks.h"

#define K 1088
#define M 48
#define NB (K / 32)
#define ROW_BYTES (NB * sizeof(block_q8_0))

/* The stated arithmetic for weight row w (file layout) and one rounded activation row. */
static float ref_canonical(const block_q8_0 *w, const block_q8x *x)
{
    float acc[2] = {0.0f, 0.0f};
    for (int j = 0; j < NB; j++) {
        int32_t isum = 0;
        for (int i = 0; i < 32; i++)
            isum += w[j].qs[i] * x[j].qs[i];
        const float t = (float)isum * x[j].d;
        acc[j % 2] = fmaf(t, f16_to_f32(w[j].d), acc[j % 2]);
    }
    return acc[0] + acc[1];
}

/* ref_canonical on a row of the file's bytes and rounded activations (layout_check_all). */
static float ref_canonical_row(const void *w, const void *xq) { return ref_canonical(w, xq); }

static void rand_matrix(uint8_t *wb)
{
    for (size_t i = 0; i < (size_t)M * ROW_BYTES; i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int j = 0; j < NB; j++)
            ((block_q8_0 *)(void *)(wb + m * ROW_BYTES))[j].d = f32_to_f16(test_randf(-0.02f, 0.02f));
}


/* The kernels on a matrix laid out in plain memory. */
static void test_kernels(void)
{
    enum { NX = 8 };
    uint8_t *wb = malloc((size_t)M * ROW_BYTES), *orig = malloc((size_t)M * ROW_BYTES);
    rand_matrix(wb);
    memcpy(orig, wb, (size_t)M * ROW_BYTES);
    tensor w;
    tensor_init4(&w, DT_Q8_0, K, M, 1, 1);
    w.data = wb;
    ok(qamx_layout_fits(&w) && qamx_layout(&w) && w.layout == TL_Q8_0_T16, "a %dx%d Q8_0 matrix takes the tile layout",
       M, K);

    bool same = true;
    float a[K], b[K];
    for (int m = 0; m < M && same; m++) {
        dequantize_row(DT_Q8_0, orig + m * ROW_BYTES, a, K);
        qamx_dequant(&w, m, 0, b, K);
        same = layout_same_bits(a, b, K);
        qamx_dequant(&w, m, 64 * 3 + 32, b, 96); /* an odd block start, across a pair */
        same = same && layout_same_bits(a + 64 * 3 + 32, b, 96);
    }
    ok(same, "qamx_dequant gives dequantize_row's values of every row, bit for bit");

    const size_t xrb = qdot_act_row_bytes(DT_Q8_0, K);
    char *xq = malloc(NX * xrb), *pack = aligned_alloc(64, (qamx_pack_bytes(NB) + 63) / 64 * 64);
    float *x = malloc(NX * K * sizeof *x), ref[NX][M], got[NX][M];
    test_fill_normal(x, NX * K, 1.0f);
    for (int n = 0; n < NX; n++) {
        qdot_quantize_act(DT_Q8_0, x + n * K, xq + n * xrb, K);
        for (int m = 0; m < M; m++)
            ref[n][m] = ref_canonical((const block_q8_0 *)(const void *)(orig + m * ROW_BYTES),
                                      (const block_q8x *)(const void *)(xq + n * xrb));
    }
    /* meaning, not only bits: against the double product of the same integers */
    double num = 0, den = 0;
    for (int n = 0; n < NX; n++)
        for (int m = 0; m < M; m++) {
            double s = 0;
            const block_q8_0 *wr = (const block_q8_0 *)(const void *)(orig + m * ROW_BYTES);
            const block_q8x *xr = (const block_q8x *)(const void *)(xq + n * xrb);
            for (int j = 0; j < NB; j++)
                for (int i = 0; i < 32; i++)
                    s += (double)f16_to_f32(wr[j].d) * wr[j].qs[i] * xr[j].d * xr[j].qs[i];
            num += (ref[n][m] - s) * (ref[n][m] - s);
            den += s * s;
        }
    const double e = sqrt(num / den);
    ok(e <= 1e-6, "the stated arithmetic is the product: rel-L2 %.2e ≤ 1e-6 against double sums (f32 roundings only)", e);

    for (int n = 0; n < NX; n++)
        for (int u = 0; u < M / QAMX_ROWS; u++)
            qamx_unit1(&w, u, xq + n * xrb, got[n] + u * QAMX_ROWS);
    ok(layout_same_bits(&got[0][0], &ref[0][0], NX * M), "one-row AVX-512 kernel: the stated arithmetic bit for bit (8 rows)");

    static const int groups[][2] = {{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {8, 8}}; /* nx, np */
    for (size_t g = 0; g < ARRAY_LEN(groups); g++) {
        const int nx = groups[g][0], np = groups[g][1];
        ok(qamx_np(nx) == np, "qamx_np(%d) = %d", nx, np);
        memset(got, 0, sizeof got);
        qamx_pack(xq, xrb, nx, np, NB, pack);
        qamx_begin(np);
        for (int u = 0; u < M / QAMX_ROWS; u++)
            qamx_unit(&w, u, pack, nx, np, &got[0][0] + u * QAMX_ROWS, M);
        qamx_end();
        ok(layout_same_bits(&got[0][0], &ref[0][0], (size_t)nx * M), "tiles, %d row(s) in a group of %d: bit for bit", nx,
           np);
    }
    free(wb);
    free(orig);
    free(xq);
    free(pack);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static const struct layout_test backend_case = {DT_Q8_0, K, M, ROW_BYTES, rand_matrix, TL_Q8_0_T16, "lays a copied Q8_0 matrix out for the tiles", "the tile layout", ref_canonical_row, 15, DT_Q8_0};

int main(void)
{
    test_seed();
    if (!qamx_ready())
        return plan_skip_all("no AMX-INT8 here (or the kernel refused the tile state, or SEER_NO_AMX is set)");
    test_kernels();
    layout_test_backend(&backend_case, 1);
    layout_test_backend(&backend_case, 2);
    return done_testing();
}
