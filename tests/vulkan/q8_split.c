/* tests/vulkan/q8_split.c — Q8_0 matrices in the split layout (TL_Q8_0_SPLIT: vulkan/op_matmul.c
   vk_weight_prepare, shaders/q8_split.comp) and the three kernels that read it, on fresh random
   weights and activations:
     - the rearranged bytes, read back, are each row's 32-value blocks' int8 values followed by
       their f16 scales, as written out here from the GGUF blocks (also across 32 KiB storage
       windows, where the rearranging and the products run window by window);
     - decode (1–8 x rows): the wide integer-dot build over the split rows gives the very bits of
       the word-reading build over the file's rows (the same integer block sums, the same order);
     - 13 x rows (prefill: the wide build in groups of 8 on CPU implementations, matmul.comp's
       split build on GPUs): within the 8-bit rounding of the activations of the exact f32 product;
     - a backend set exact after loading reads the split rows with matmul.comp's split build:
       within 1e-4 relative L2 of the CPU's f32 product (summation order only);
     - get_rows over the split rows: the same bits as over the file's rows;
     - what stays in the file's layout: K not a multiple of 256, a backend forced to the
       word-reading build, an exact backend, F16 weights.
   The validation layer is on: zero errors. Without a Vulkan device with integer dot products and
   subgroup arithmetic (the wide build's needs) everything is skipped visibly, unless
   SEER_REQUIRE_VULKAN=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

/* 13 x rows through 8-bit activations against the f32 product: each activation is rounded to a
   step of 1/127 of its block's largest (~2.5σ here), an error of ~0.57 % of σ, and the products
   come out 5–6e-3 off (relative L2, measured 4.9e-3 to 5.8e-3); a wrong scale, sign or block is
   off by order 1. */
#define TOL_8BIT 1.5e-2
/* f32 products that differ from the CPU's in summation order only */
#define TOL_F32 1e-4

#define M_ROWS 37 /* not a multiple of any workgroup's rows */

static backend *wide_be, *word_be, *exact_be, *window_be, *cpu_be;

static backend *open_vk(enum vk_matvec_force force, uint64_t window, bool exact, const char *what)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.enable_validation = true;
    p.force_matvec = force;
    p.max_storage_range_override = window;
    backend *be = NULL;
    if (!ok(backend_vulkan_create(&p, &be) == SEER_OK, "vulkan backend: %s", what))
        return NULL;
    backend_vulkan_set_exact(be, exact);
    return be;
}

/* The split rows written out from the GGUF blocks: per row, the blocks' 32 values, then their scales. */
static void split_expected(const uint8_t *file, uint8_t *out, int64_t K, int64_t M)
{
    const size_t nb = (size_t)K / 32, row = nb * 34;
    for (int64_t m = 0; m < M; m++)
        for (size_t b = 0; b < nb; b++) {
            const uint8_t *blk = file + (size_t)m * row + 34 * b;
            memcpy(out + (size_t)m * row + 32 * b, blk + 2, 32);
            memcpy(out + (size_t)m * row + 32 * nb + 2 * b, blk, 2);
        }
}

/* out = x · wᵀ on w's backend, read back (NULL on failure, reported) */
static float *product(tensor *w, const float *xv, int64_t N)
{
    backend *be = w->buf->be;
    const int64_t K = w->ne[0], M = w->ne[1];
    tensor *x = test_tensor(be, DT_F32, K, N, 1, 1, xv), *out = test_tensor(be, DT_F32, M, N, 1, 1, NULL);
    float *r = NULL;
    int rc = x && out ? op_matmul(be, out, w, x) : SEER_ENOMEM;
    if (rc == SEER_OK)
        r = test_tensor_read(out);
    else
        diag("op_matmul on %s: %s", backend_name(be), seer_last_error());
    test_tensor_free(x);
    test_tensor_free(out);
    return r;
}

static float *lookup(tensor *table, const int32_t *ids, int64_t n)
{
    backend *be = table->buf->be;
    tensor *it = calloc(1, sizeof *it), *out = test_tensor(be, DT_F32, table->ne[0], n, 1, 1, NULL);
    backend_buffer *buf = NULL;
    float *r = NULL;
    int rc = it && out && tensor_init4(it, DT_I32, n, 1, 1, 1) ? backend_tensor_alloc(be, it, &buf) : SEER_ENOMEM;
    if (rc == SEER_OK)
        rc = backend_tensor_set(it, ids, 0, (size_t)n * sizeof *ids);
    if (rc == SEER_OK)
        rc = op_get_rows(be, out, table, it);
    if (rc == SEER_OK)
        r = test_tensor_read(out);
    else
        diag("op_get_rows on %s: %s", backend_name(be), seer_last_error());
    backend_buffer_free(buf);
    free(it);
    test_tensor_free(out);
    return r;
}

static bool same_bits(const float *a, const float *b, size_t n) { return a && b && !memcmp(a, b, n * sizeof *a); }

static void check_k(int64_t K)
{
    const int64_t M = M_ROWS, nmax = 13;
    const size_t row = (size_t)K / 32 * 34, bytes = row * (size_t)M;
    float *wv = malloc(sizeof(float) * (size_t)(K * M)), *xv = malloc(sizeof(float) * (size_t)(K * nmax));
    uint8_t *file = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    test_fill_normal(wv, (size_t)(K * M), 1.0f);
    test_fill_normal(xv, (size_t)(K * nmax), 1.0f);
    quantize_row_q8_0(wv, file, K * M);
    split_expected(file, want, K, M);

    tensor *ws = test_tensor(wide_be, DT_Q8_0, K, M, 1, 1, wv), *wd = test_tensor(word_be, DT_Q8_0, K, M, 1, 1, wv);
    tensor *ww = test_tensor(window_be, DT_Q8_0, K, M, 1, 1, wv), *wc = test_tensor(cpu_be, DT_Q8_0, K, M, 1, 1, wv);
    if (!ws || !wd || !ww || !wc)
        goto out;
    int rc = backend_weight_prepare(ws), rc_w = backend_weight_prepare(ww), rc_d = backend_weight_prepare(wd);
    ok(rc == SEER_OK && ws->layout == TL_Q8_0_SPLIT, "K %lld: a Q8_0 matrix is split for the wide build (%s)",
       (long long)K, rc ? seer_last_error() : "ok");
    ok(rc_d == SEER_OK && wd->layout == TL_ROWS, "K %lld: not for the word-reading build", (long long)K);
    ok(backend_tensor_get(ws, got, 0, bytes) == SEER_OK && !memcmp(got, want, bytes),
       "K %lld: each row holds its 32-value blocks' int8 values, then their f16 scales", (long long)K);
    ok(rc_w == SEER_OK && ww->layout == TL_Q8_0_SPLIT && backend_tensor_get(ww, got, 0, bytes) == SEER_OK &&
           !memcmp(got, want, bytes),
       "K %lld: the same in 32 KiB storage windows (%zu rows each)", (long long)K, (size_t)(32 << 10) / row);

    /* decode: bit for bit the word-reading build's */
    static const int64_t ns[] = {1, 3, 8};
    for (size_t i = 0; i < ARRAY_LEN(ns); i++) {
        float *a = product(ws, xv, ns[i]), *b = product(wd, xv, ns[i]), *c = product(ww, xv, ns[i]);
        ok(same_bits(a, b, (size_t)(M * ns[i])), "K %lld, %lld x rows: the wide build over split rows gives the word "
           "build's bits", (long long)K, (long long)ns[i]);
        ok(same_bits(c, a, (size_t)(M * ns[i])), "K %lld, %lld x rows: the same bits across 32 KiB windows",
           (long long)K, (long long)ns[i]);
        free(a), free(b), free(c);
    }
    /* prefill, and exact reads, against the CPU's f32 product */
    float *ref = product(wc, xv, nmax), *pre = product(ws, xv, nmax);
    double e = ref && pre ? rel_l2(pre, ref, (size_t)(M * nmax)) : 1;
    ok(e <= TOL_8BIT, "K %lld, 13 x rows: within the 8-bit activations' rounding of the f32 product: rel L2 %.2e "
       "(<= %.1e)", (long long)K, e, TOL_8BIT);
    backend_vulkan_set_exact(wide_be, true);
    float *x1 = product(ws, xv, 1), *x13 = product(ws, xv, nmax);
    backend_vulkan_set_exact(wide_be, false);
    double e1 = x1 && ref ? rel_l2(x1, ref, (size_t)M) : 1, e13 = x13 && ref ? rel_l2(x13, ref, (size_t)(M * nmax)) : 1;
    ok(e1 <= TOL_F32 && e13 <= TOL_F32, "K %lld: set exact after loading, matmul.comp reads the split rows: rel L2 "
       "%.2e (1 row), %.2e (13 rows) (<= %.0e)", (long long)K, e1, e13, TOL_F32);
    free(ref), free(pre), free(x1), free(x13);

    /* get_rows: the file's rows' bits (repeats, first and last rows) */
    int32_t ids[9] = {0, (int32_t)M - 1, 5, 5, 17, 0, 36, 2, 30};
    float *g = lookup(ws, ids, 9), *h = lookup(wd, ids, 9), *gw = lookup(ww, ids, 9);
    ok(same_bits(g, h, (size_t)K * 9) && same_bits(gw, h, (size_t)K * 9),
       "K %lld: get_rows over split rows gives the file's rows' bits (also across windows)", (long long)K);
    free(g), free(h), free(gw);
out:
    test_tensor_free(ws), test_tensor_free(wd), test_tensor_free(ww), test_tensor_free(wc);
    free(wv), free(xv), free(file), free(want), free(got);
}

/* K not a multiple of 256 (rows off 16 bytes), and F16 weights: left as they are, and still right */
static void check_left_alone(void)
{
    const int64_t K = 96, M = M_ROWS;
    float *wv = malloc(sizeof(float) * (size_t)(K * M));
    test_fill_normal(wv, (size_t)(K * M), 1.0f);
    tensor *q = test_tensor(wide_be, DT_Q8_0, K, M, 1, 1, wv), *f = test_tensor(wide_be, DT_F16, 256, 8, 1, 1, wv);
    if (q && f) {
        ok(backend_weight_prepare(q) == SEER_OK && q->layout == TL_ROWS, "K 96: a Q8_0 matrix stays in the file's rows");
        ok(backend_weight_prepare(f) == SEER_OK && f->layout == TL_ROWS, "an F16 matrix stays in the file's rows");
    }
    test_tensor_free(q), test_tensor_free(f);
    free(wv);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    struct vk_backend_params p = vk_backend_params_default();
    p.force_matvec = VK_MATVEC_INT_DOT_WIDE;
    int rc = backend_vulkan_create(&p, &wide_be);
    if (rc != SEER_OK) {
        if (vk_test_required() && rc != SEER_EUNSUPPORTED)
            ok(0, "SEER_REQUIRE_VULKAN=1 but no Vulkan backend: %s", seer_last_error());
        else
            skip(seer_last_error(), "split Q8_0 rows need a Vulkan device with integer dot products");
        return done_testing();
    }
    backend_free(wide_be);
    wide_be = open_vk(VK_MATVEC_INT_DOT_WIDE, 0, false, "int-dot wide forced, not exact");
    word_be = open_vk(VK_MATVEC_INT_DOT, 0, false, "int-dot (word-reading) forced, not exact");
    exact_be = open_vk(VK_MATVEC_AUTO, 0, true, "exact");
    window_be = open_vk(VK_MATVEC_INT_DOT_WIDE, 32 << 10, false, "int-dot wide, 32 KiB storage windows");
    if (!ok(backend_cpu_create(2, &cpu_be) == SEER_OK, "cpu backend") || !wide_be || !word_be || !exact_be || !window_be)
        goto done;
    static const int64_t ks[] = {256, 1024, 4096};
    for (size_t i = 0; i < ARRAY_LEN(ks); i++)
        check_k(ks[i]);
    check_left_alone();
    float wv[256 * 4];
    test_fill_normal(wv, ARRAY_LEN(wv), 1.0f);
    tensor *t = test_tensor(exact_be, DT_Q8_0, 256, 4, 1, 1, wv);
    ok(t && backend_weight_prepare(t) == SEER_OK && t->layout == TL_ROWS, "an exact backend's Q8_0 matrix stays in the file's rows");
    test_tensor_free(t);
    backend *all[] = {wide_be, word_be, exact_be, window_be};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        ok(backend_vulkan_validation_errors(all[i]) == 0, "%s: zero validation errors (%llu)", all[i]->description,
           (unsigned long long)backend_vulkan_validation_errors(all[i]));
done:
    backend_free(wide_be), backend_free(word_be), backend_free(exact_be), backend_free(window_be), backend_free(cpu_be);
    return done_testing();
}

#else
int main(void)
{
    plan_no_plan();
    skip("built without Vulkan (SEER_VULKAN=OFF)", "split Q8_0 rows");
    return done_testing();
}
#endif
