/* Tests core/cpu/qdot_amx.c, the Q8_0 products on AMX tiles, where this CPU has them (a visible
   skip elsewhere): the tile layout keeps every value (qamx_dequant against dequantize_row, bit for
   bit); the tiles (every group size NP) and the one-row AVX-512 kernel give the bits of the
   arithmetic the file's header states, computed here in scalar C from the rounded activations
   (exact int sums, then f32 multiply and fmaf per block, two accumulators); op_matmul on a matrix
   the backend laid out gives every activation row the same bits whatever the number of rows
   beside it (3, 8, 13 against 1; the batch's promise) on 1 and 2 threads, a prefill-sized product
   (20 rows: the AVX-512 int8 tiles) gives the bits it gives on the file's layout, op_get_rows reads
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

static void rand_matrix(uint8_t *wb)
{
    for (size_t i = 0; i < (size_t)M * ROW_BYTES; i++)
        wb[i] = (uint8_t)test_rand_u64();
    for (int m = 0; m < M; m++)
        for (int j = 0; j < NB; j++)
            ((block_q8_0 *)(void *)(wb + m * ROW_BYTES))[j].d = f32_to_f16(test_randf(-0.02f, 0.02f));
}

static bool same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

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
        same = same_bits(a, b, K);
        qamx_dequant(&w, m, 64 * 3 + 32, b, 96); /* an odd block start, across a pair */
        same = same && same_bits(a + 64 * 3 + 32, b, 96);
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
    ok(same_bits(&got[0][0], &ref[0][0], NX * M), "one-row AVX-512 kernel: the stated arithmetic bit for bit (8 rows)");

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
        ok(same_bits(&got[0][0], &ref[0][0], (size_t)nx * M), "tiles, %d row(s) in a group of %d: bit for bit", nx,
           np);
    }
    free(wb);
    free(orig);
    free(xq);
    free(pack);
    free(x);
}

/* Through the backend, as a loaded model meets it. */
static void test_backend(int nt)
{
    backend *be;
    if (backend_cpu_create(nt, &be) != SEER_OK) {
        ok(0, "cpu backend with %d threads", nt);
        return;
    }
    backend_cpu_set_exact(be, false);
    uint8_t *wb = malloc((size_t)M * ROW_BYTES);
    rand_matrix(wb);
    tensor *w = test_tensor(be, DT_Q8_0, K, M, 1, 1, NULL);
    backend_tensor_set(w, wb, 0, (size_t)M * ROW_BYTES);
    backend_weight_prepare(w);
    ok(w->layout == TL_Q8_0_T16, "%d thread(s): backend_weight_prepare lays a copied Q8_0 matrix out for the tiles",
       nt);

    enum { NMAX = 20 };
    float *x = malloc(NMAX * K * sizeof *x);
    test_fill_normal(x, NMAX * K, 1.0f);
    float *alone[NMAX]; /* each row's results computed alone (N = 1) */
    for (int n = 0; n < NMAX; n++) {
        tensor *x1 = test_tensor(be, DT_F32, K, 1, 1, 1, x + n * K), *o1 = test_tensor(be, DT_F32, M, 1, 1, 1, NULL);
        op_matmul(be, o1, w, x1);
        alone[n] = test_tensor_read(o1);
        test_tensor_free(x1);
        test_tensor_free(o1);
    }
    static const int Ns[] = {3, 8, 13};
    for (size_t i = 0; i < ARRAY_LEN(Ns); i++) {
        const int N = Ns[i];
        tensor *xt = test_tensor(be, DT_F32, K, N, 1, 1, x), *ot = test_tensor(be, DT_F32, M, N, 1, 1, NULL);
        const int rc = op_matmul(be, ot, w, xt);
        float *got = test_tensor_read(ot);
        bool same = rc == SEER_OK;
        for (int n = 0; n < N && same; n++)
            same = same_bits(got + n * M, alone[n], M);
        ok(same, "%d thread(s): op_matmul with %d rows: each row's results equal its own alone, bit for bit", nt, N);
        free(got);
        test_tensor_free(xt);
        test_tensor_free(ot);
    }

    /* prefill-sized: the AVX-512 int8 tiles read the tile layout, and give what they give on the
       file's layout */
    tensor *wr = test_tensor(be, DT_Q8_0, K, M, 1, 1, NULL);
    backend_tensor_set(wr, wb, 0, (size_t)M * ROW_BYTES);
    tensor *xt = test_tensor(be, DT_F32, K, NMAX, 1, 1, x), *o1 = test_tensor(be, DT_F32, M, NMAX, 1, 1, NULL),
           *o2 = test_tensor(be, DT_F32, M, NMAX, 1, 1, NULL);
    const int rc1 = op_matmul(be, o1, w, xt), rc2 = op_matmul(be, o2, wr, xt);
    float *g1 = test_tensor_read(o1), *g2 = test_tensor_read(o2);
    ok(rc1 == SEER_OK && rc2 == SEER_OK && wr->layout == TL_ROWS && same_bits(g1, g2, (size_t)NMAX * M),
       "%d thread(s): op_matmul with %d rows (prefill's kernel) gives the same bits on both layouts", nt, NMAX);
    free(g1);
    free(g2);
    test_tensor_free(wr);
    test_tensor_free(xt);
    test_tensor_free(o1);
    test_tensor_free(o2);

    /* the canonical arithmetic through the op too */
    char *xq = malloc(qdot_act_row_bytes(DT_Q8_0, K));
    bool canon = true;
    for (int n = 0; n < NMAX && canon; n++) {
        qdot_quantize_act(DT_Q8_0, x + n * K, xq, K);
        for (int m = 0; m < M && canon; m++) {
            const float r = ref_canonical((const block_q8_0 *)(const void *)(wb + m * ROW_BYTES), (const block_q8x *)(void *)xq);
            canon = memcmp(&r, &alone[n][m], sizeof r) == 0;
        }
    }
    ok(canon, "%d thread(s): op_matmul of one row is the stated arithmetic, bit for bit", nt);

    /* get_rows: the file's values */
    int32_t ids[5] = {0, 47, 16, 31, 5};
    tensor *it = test_tensor(be, DT_I32, 5, 1, 1, 1, NULL), *rt = test_tensor(be, DT_F32, K, 5, 1, 1, NULL);
    backend_tensor_set(it, ids, 0, sizeof ids);
    const int rc = op_get_rows(be, rt, w, it);
    float *rows = test_tensor_read(rt), want[K];
    bool same = rc == SEER_OK;
    for (int i = 0; i < 5 && same; i++) {
        dequantize_row(DT_Q8_0, wb + ids[i] * ROW_BYTES, want, K);
        same = same_bits(rows + i * K, want, K);
    }
    ok(same, "%d thread(s): op_get_rows on the tile layout gives the file's rows, bit for bit", nt);
    free(rows);
    test_tensor_free(it);
    test_tensor_free(rt);

    /* exact set after loading: the f32 path reads the tile layout (slowly, but right) */
    backend_cpu_set_exact(be, true);
    xt = test_tensor(be, DT_F32, K, 3, 1, 1, x);
    tensor *ot = test_tensor(be, DT_F32, M, 3, 1, 1, NULL);
    const int rc3 = op_matmul(be, ot, w, xt);
    float *got = test_tensor_read(ot), *wf = malloc((size_t)K * sizeof *wf);
    double ref[3 * M];
    for (int m = 0; m < M; m++) {
        dequantize_row(DT_Q8_0, wb + m * ROW_BYTES, wf, K);
        for (int n = 0; n < 3; n++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)wf[k] * x[n * K + k];
            ref[n * M + m] = s;
        }
    }
    const double e = rel_l2_d(got, ref, 3 * M);
    ok(rc3 == SEER_OK && e <= 1e-5, "%d thread(s): exact op_matmul on the tile layout: rel-L2 %.2e ≤ 1e-5 (f32 path)", nt, e);
    free(got);
    free(wf);
    test_tensor_free(xt);
    test_tensor_free(ot);

    for (int n = 0; n < NMAX; n++)
        free(alone[n]);
    free(xq);
    free(x);
    free(wb);
    test_tensor_free(w);
    backend_free(be);
}

int main(void)
{
    test_seed();
    if (!qamx_ready())
        return plan_skip_all("no AMX-INT8 here (or the kernel refused the tile state, or SEER_NO_AMX is set)");
    test_kernels();
    test_backend(1);
    test_backend(2);
    return done_testing();
}
