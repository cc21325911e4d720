/* layout_checks.h — the backend-level checks shared by the tests of the CPU's several-row weight
   layouts (tests/core/cpu/qdot_amx.c: Q8_0 on AMX tiles; qdot_q4r.c: Q4_K interleaved). Each takes
   a matrix the backend laid out and the file's bytes it came from, and holds the laid-out matrix to
   what the file's layout gives: the batch's promise (a row's results alone are its results beside
   others), prefill's kernel, get_rows, and the f32 path; layout_test_backend runs them all on a
   fresh backend. */
#ifndef SEER_TESTS_CORE_CPU_LAYOUT_CHECKS_H
#define SEER_TESTS_CORE_CPU_LAYOUT_CHECKS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/cpu/qdot.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"

#define LAYOUT_NMAX 40 /* activation rows: prefill's kernel takes 16 or more (Q8_0 interleaved: 32) */

struct layout_case {
    backend *be;        /* not exact */
    const tensor *w;    /* {K, M} laid out by backend_weight_prepare */
    const uint8_t *wb;  /* the same matrix in the file's layout, row_bytes per row */
    size_t row_bytes;
    const float *x;     /* LAYOUT_NMAX rows of K activations */
    const char *layout; /* "the tile layout", "the interleaved rows" */
    int nt;             /* the backend's threads */
    int own_max;        /* the most activation rows the layout's own kernel takes */
};

static inline bool layout_same_bits(const float *a, const float *b, size_t n)
{
    return a && b && memcmp(a, b, n * sizeof *a) == 0;
}

/* ---- the kernels on a matrix laid out in plain memory ---- */

/* A layout's several-row kernel (q4r_unit, q6r_unit, q8r_unit). */
typedef void (*layout_unit_fn)(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out,
                               size_t out_stride);

/* Value k of a row of activations rounded by qdot_quantize_act(act, ...): Q8_K blocks for DT_Q4_K,
   else 32-value block_q8x (read from the blocks, not the tails the kernels read). */
static inline double layout_act_value(enum dtype act, const char *xq, int64_t k)
{
    if (act == DT_Q4_K) {
        const block_q8k *b = (const block_q8k *)(const void *)xq + k / 256;
        return (double)b->d * b->qs[k % 256];
    }
    const block_q8x *b = (const block_q8x *)(const void *)xq + k / QDOT_BLOCK;
    return (double)b->d * b->qs[k % QDOT_BLOCK];
}

/* Relative L2 of ref (nx rows of M results, the stated arithmetic) against double sums of the
   file's values (dequantize_row of wb's rows, row_bytes apart) times the rounded activations. */
static inline double layout_err_vs_double(enum dtype t, const uint8_t *wb, size_t row_bytes, int64_t K, int64_t M,
                                          enum dtype act, const char *xq, size_t xrb, int nx, const float *ref)
{
    float *wf = malloc((size_t)K * sizeof *wf);
    double num = 0, den = 0;
    for (int64_t m = 0; m < M && wf; m++) {
        dequantize_row(t, wb + (size_t)m * row_bytes, wf, K);
        for (int n = 0; n < nx; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)wf[k] * layout_act_value(act, xq + (size_t)n * xrb, k);
            num += (ref[n * M + m] - s) * (ref[n * M + m] - s);
            den += s * s;
        }
    }
    free(wf);
    return wf ? sqrt(num / den) : INFINITY;
}

/* The kernel over every unit of w (units of 16 rows) for 1..nx_max activation rows (xq, xrb bytes
   apart) gives ref (nx_max rows of M) bit for bit. */
static inline void layout_check_units(const char *what, layout_unit_fn fn, const tensor *w, const char *xq, size_t xrb,
                                      int nx_max, const float *ref)
{
    const int64_t M = w->ne[1];
    float *got = malloc((size_t)(nx_max * M) * sizeof *got);
    for (int nx = 1; nx <= nx_max && got; nx++) {
        memset(got, 0, (size_t)(nx_max * M) * sizeof *got);
        for (int64_t u = 0; u < M / 16; u++)
            fn(w, u, xq, xrb, nx, got + u * 16, (size_t)M);
        ok(layout_same_bits(got, ref, (size_t)(nx * M)), "%skernel, %d activation row(s): the stated arithmetic bit for bit",
           what, nx);
    }
    free(got);
}

/* ---- through the backend ---- */

/* out = x[0..n) · wᵀ on the case's backend, read back (NULL when the op failed). */
static inline float *layout_product(const struct layout_case *c, const tensor *w, const float *x, int n)
{
    const int64_t K = w->ne[0], M = w->ne[1];
    tensor *xt = test_tensor(c->be, DT_F32, K, n, 1, 1, x), *ot = test_tensor(c->be, DT_F32, M, n, 1, 1, NULL);
    float *r = op_matmul(c->be, ot, w, xt) == SEER_OK ? test_tensor_read(ot) : NULL;
    test_tensor_free(xt);
    test_tensor_free(ot);
    return r;
}

/* Each activation row's results computed alone (N = 1), into alone[LAYOUT_NMAX] (the caller frees
   them), then 3, 8, 13 and own_max rows at once: each row's results must be its own alone, bit for
   bit. */
static inline void layout_check_batch(const struct layout_case *c, float **alone)
{
    const int64_t K = c->w->ne[0], M = c->w->ne[1];
    for (int n = 0; n < LAYOUT_NMAX; n++)
        alone[n] = layout_product(c, c->w, c->x + n * K, 1);
    const int Ns[] = {3, 8, 13, c->own_max};
    for (size_t i = 0; i < ARRAY_LEN(Ns); i++) {
        const int N = Ns[i];
        float *got = layout_product(c, c->w, c->x, N);
        bool same = got != NULL;
        for (int n = 0; n < N && same; n++)
            same = layout_same_bits(got + n * M, alone[n], (size_t)M);
        ok(same, "%d thread(s): op_matmul with %d rows: each row's results equal its own alone, bit for bit", c->nt, N);
        free(got);
    }
}

/* A prefill-sized product (the AVX-512 int8 tiles, which read the layout) gives the bits it gives
   on the file's layout. */
static inline void layout_check_prefill(const struct layout_case *c)
{
    const int64_t K = c->w->ne[0], M = c->w->ne[1];
    tensor *wr = test_tensor(c->be, c->w->type, K, M, 1, 1, NULL);
    backend_tensor_set(wr, c->wb, 0, (size_t)M * c->row_bytes);
    float *g1 = layout_product(c, c->w, c->x, LAYOUT_NMAX), *g2 = layout_product(c, wr, c->x, LAYOUT_NMAX);
    ok(wr->layout == TL_ROWS && layout_same_bits(g1, g2, (size_t)LAYOUT_NMAX * (size_t)M),
       "%d thread(s): op_matmul with %d rows (prefill's kernel) gives the same bits on both layouts", c->nt,
       LAYOUT_NMAX);
    free(g1);
    free(g2);
    test_tensor_free(wr);
}

/* op_get_rows gives the file's rows, bit for bit. */
static inline void layout_check_get_rows(const struct layout_case *c)
{
    const int64_t K = c->w->ne[0], M = c->w->ne[1];
    const int32_t ids[5] = {0, (int32_t)M - 1, 16, 31, 5};
    tensor *it = test_tensor(c->be, DT_I32, 5, 1, 1, 1, NULL), *rt = test_tensor(c->be, DT_F32, K, 5, 1, 1, NULL);
    backend_tensor_set(it, ids, 0, sizeof ids);
    const int rc = op_get_rows(c->be, rt, c->w, it);
    float *rows = test_tensor_read(rt), *want = malloc((size_t)K * sizeof *want);
    bool same = rc == SEER_OK;
    for (int i = 0; i < 5 && same; i++) {
        dequantize_row(c->w->type, c->wb + (size_t)ids[i] * c->row_bytes, want, K);
        same = layout_same_bits(rows + i * K, want, (size_t)K);
    }
    ok(same, "%d thread(s): op_get_rows on %s gives the file's rows, bit for bit", c->nt, c->layout);
    free(rows);
    free(want);
    test_tensor_free(it);
    test_tensor_free(rt);
}

/* Exact set after loading: the f32 path reads the layout (slowly, but right), within 1e-5 of a
   double product of the file's values. Leaves the backend exact. */
static inline void layout_check_exact(const struct layout_case *c)
{
    const int64_t K = c->w->ne[0], M = c->w->ne[1];
    backend_cpu_set_exact(c->be, true);
    float *got = layout_product(c, c->w, c->x, 3), *wf = malloc((size_t)K * sizeof *wf);
    double *ref = malloc(3 * (size_t)M * sizeof *ref);
    for (int64_t m = 0; m < M; m++) {
        dequantize_row(c->w->type, c->wb + (size_t)m * c->row_bytes, wf, K);
        for (int n = 0; n < 3; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)wf[k] * c->x[n * K + k];
            ref[n * M + m] = s;
        }
    }
    const double e = got ? rel_l2_d(got, ref, 3 * (size_t)M) : 1.0;
    ok(got && e <= 1e-5, "%d thread(s): exact op_matmul on %s: rel-L2 %.2e ≤ 1e-5 (f32 path)", c->nt, c->layout, e);
    free(got);
    free(wf);
    free(ref);
}

/* Every check above, and between them: each row's result alone is `ref` (the layout's arithmetic
   stated in scalar C, on the file's row and the activations rounded for type t), bit for bit. */
static inline void layout_check_all(const struct layout_case *c, enum dtype t,
                                    float (*ref)(const void *w_row, const void *xq))
{
    const int64_t K = c->w->ne[0], M = c->w->ne[1];
    float *alone[LAYOUT_NMAX];
    layout_check_batch(c, alone);
    char *xq = malloc(qdot_act_row_bytes(t, K));
    bool canon = xq != NULL;
    for (int n = 0; n < LAYOUT_NMAX && canon; n++) {
        qdot_quantize_act(t, c->x + n * K, xq, K);
        for (int64_t m = 0; m < M && canon; m++) {
            const float r = ref(c->wb + (size_t)m * c->row_bytes, xq);
            canon = alone[n] && memcmp(&r, &alone[n][m], sizeof r) == 0;
        }
    }
    ok(canon, "%d thread(s): op_matmul of one row is the stated arithmetic, bit for bit", c->nt);
    layout_check_prefill(c);
    layout_check_get_rows(c);
    layout_check_exact(c);
    for (int n = 0; n < LAYOUT_NMAX; n++)
        free(alone[n]);
    free(xq);
}

/* One backend of nt threads, as a loaded model meets the layout: a random matrix of type t ({K, M},
   row_bytes per row, filled by `fill`) copied in and laid out by backend_weight_prepare as `want`
   (`prepared` says so in the test's words), then layout_check_all. */
struct layout_test {
    enum dtype t;
    int64_t K, M;
    size_t row_bytes;
    void (*fill)(uint8_t *wb);
    enum tensor_layout want;
    const char *prepared, *layout;
    float (*ref)(const void *w_row, const void *xq);
    int own_max; /* layout_case's */
    enum dtype act; /* the activations' rounding: the qdot_quantize_act type the kernels read */
};

static inline void layout_test_backend(const struct layout_test *lt, int nt)
{
    backend *be;
    if (backend_cpu_create(nt, &be) != SEER_OK) {
        ok(0, "cpu backend with %d threads", nt);
        return;
    }
    backend_cpu_set_exact(be, false);
    uint8_t *wb = malloc((size_t)lt->M * lt->row_bytes);
    lt->fill(wb);
    tensor *w = test_tensor(be, lt->t, lt->K, lt->M, 1, 1, NULL);
    backend_tensor_set(w, wb, 0, (size_t)lt->M * lt->row_bytes);
    ok(backend_weight_prepare(w) == SEER_OK && w->layout == lt->want, "%d thread(s): backend_weight_prepare %s", nt,
       lt->prepared);
    float *x = malloc((size_t)(LAYOUT_NMAX * lt->K) * sizeof *x);
    test_fill_normal(x, (size_t)(LAYOUT_NMAX * lt->K), 1.0f);
    const struct layout_case lc = {be, w, wb, lt->row_bytes, x, lt->layout, nt, lt->own_max};
    layout_check_all(&lc, lt->act, lt->ref);
    free(x);
    free(wb);
    test_tensor_free(w);
    backend_free(be);
}

#endif
