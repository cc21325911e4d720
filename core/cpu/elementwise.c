/* elementwise.c — CPU elementwise ops (core/ops.h): add/mul with b broadcast, the unary
   activations (SiLU, GELU tanh/erf for spec §4.5/§4.6, sigmoid, softplus for spec §2.5 step 4,
   exp), scale, f32 → f32/f16/bf16/q8_0 copies between strided layouts, and row softmax.
   Divisions: work splitting, binary, unary, scale, cpy, softmax. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/vmath.h"
#include "core/fp16.h"
#include "core/quant.h"
#include "core/util.h"
#include "seer.h"

/* ---- work splitting ------------------------------------------------------------------------ */

/* Elementwise ops split the flat element range [0, nelements) rather than rows, so a single long
   row (a decode-step activation) still spreads over all threads. Each thread walks the pieces of
   the rows its range covers: row r, columns [j0, j1). */
typedef void (*segment_fn)(void *ctx, int64_t r, int64_t j0, int64_t j1);

struct flat_job {
    segment_fn seg;
    void *ctx;
    int64_t ne0, n;
};

static void flat_worker(void *p, int ith, int nth)
{
    const struct flat_job *job = p;
    long long lo, hi;
    threadpool_range(job->n, ith, nth, &lo, &hi);
    while (lo < hi) {
        int64_t r = lo / job->ne0, j0 = lo - r * job->ne0;
        int64_t j1 = MIN(job->ne0, j0 + (hi - lo));
        job->seg(job->ctx, r, j0, j1);
        lo += j1 - j0;
    }
}

/* cost: how many additions one element's work is worth, for the parallel threshold. */
static void run_flat_cost(backend *be, const tensor *shape, segment_fn seg, void *ctx, double cost)
{
    struct flat_job job = {seg, ctx, shape->ne[0], tensor_nelements(shape)};
    cpu_run(be, flat_worker, &job, cpu_parallel(be, (double)job.n * cost, CPU_PAR_MIN_ELEMS));
}

static void run_flat(backend *be, const tensor *shape, segment_fn seg, void *ctx)
{
    run_flat_cost(be, shape, seg, ctx, 1.0);
}

/* ---- binary: out = a (+|*) b, b broadcast ---------------------------------------------------- */

struct binary_ctx {
    enum binary_op op;
    tensor *out;
    const tensor *a, *b;
};

static void binary_seg(void *p, int64_t r, int64_t j0, int64_t j1)
{
    const struct binary_ctx *c = p;
    const tensor *b = c->b;
    int64_t i1 = r % c->a->ne[1], i23 = r / c->a->ne[1], i2 = i23 % c->a->ne[2], i3 = i23 / c->a->ne[2];
    /* b's dims are a's or 1 (checked by ops.c); a 1 broadcasts by staying at index 0 */
    const float *brow = (const float *)((const char *)b->data + (b->ne[1] == 1 ? 0 : i1) * b->nb[1] +
                                        (b->ne[2] == 1 ? 0 : i2) * b->nb[2] + (b->ne[3] == 1 ? 0 : i3) * b->nb[3]);
    const float *x = (const float *)cpu_row_at(c->a, r);
    float *y = (float *)cpu_row_at(c->out, r);
    if (b->ne[0] == 1) {
        float s = brow[0];
        if (c->op == BINARY_ADD)
            for (int64_t j = j0; j < j1; j++)
                y[j] = x[j] + s;
        else
            for (int64_t j = j0; j < j1; j++)
                y[j] = x[j] * s;
    } else if (c->op == BINARY_ADD) {
        for (int64_t j = j0; j < j1; j++)
            y[j] = x[j] + brow[j];
    } else {
        for (int64_t j = j0; j < j1; j++)
            y[j] = x[j] * brow[j];
    }
}

int cpu_binary(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b)
{
    struct binary_ctx c = {op, out, a, b};
    run_flat(be, a, binary_seg, &c);
    return SEER_OK;
}

/* ---- unary (SiLU, the sigmoid and GELU-tanh: vmath.c) ---------------------------------------- */

/* 0.5x(1 + erf(x/√2)) evaluated as 0.5x·erfc(−x/√2) (the same function), which stays accurate in
   the negative tail where 1 + erf cancels. */
static void gelu_erf_row(float *y, const float *x, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        y[j] = 0.5f * x[j] * erfcf(-x[j] * 0.7071067811865476f);
}

/* PyTorch's softplus returns x itself above threshold 20 (spec §2.5 step 4), where log1p(e^x)
   equals x to f32 precision anyway; matching the rule keeps results identical to HF. */
static void softplus_row(float *y, const float *x, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        y[j] = x[j] > 20.0f ? x[j] : log1pf(expf(x[j]));
}

static void exp_row(float *y, const float *x, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        y[j] = expf(x[j]);
}

static const cpu_unary_row_fn unary_rows[UNARY_COUNT] = {
    [UNARY_SILU] = vm_silu,       [UNARY_GELU_TANH] = vm_gelu_tanh, [UNARY_GELU_ERF] = gelu_erf_row,
    [UNARY_SIGMOID] = vm_sigmoid, [UNARY_SOFTPLUS] = softplus_row,   [UNARY_EXP] = exp_row,
};

cpu_unary_row_fn cpu_unary_row(enum unary_op op) { return unary_rows[op]; }

struct unary_ctx {
    cpu_unary_row_fn fn;
    tensor *out;
    const tensor *x;
};

static void unary_seg(void *p, int64_t r, int64_t j0, int64_t j1)
{
    const struct unary_ctx *c = p;
    c->fn((float *)cpu_row_at(c->out, r) + j0, (const float *)cpu_row_at(c->x, r) + j0, j1 - j0);
}

int cpu_unary(backend *be, enum unary_op op, tensor *out, const tensor *x)
{
    struct unary_ctx c = {unary_rows[op], out, x}; /* op < UNARY_COUNT: checked by ops.c */
    /* an exponential per element, even in vmath.c's lanes, costs several additions: a 4-sequence
       decode step's SiLU over the GDN conv (4 × 6144 values, 0.8B) ran on one thread before */
    run_flat_cost(be, x, unary_seg, &c, 4.0);
    return SEER_OK;
}

/* ---- scale ------------------------------------------------------------------------------------ */

struct scale_ctx {
    tensor *out;
    const tensor *x;
    float s;
};

static void scale_seg(void *p, int64_t r, int64_t j0, int64_t j1)
{
    const struct scale_ctx *c = p;
    const float *x = (const float *)cpu_row_at(c->x, r);
    float *y = (float *)cpu_row_at(c->out, r);
    for (int64_t j = j0; j < j1; j++)
        y[j] = x[j] * c->s;
}

int cpu_scale(backend *be, tensor *out, const tensor *x, float s)
{
    struct scale_ctx c = {out, x, s};
    run_flat(be, x, scale_seg, &c);
    return SEER_OK;
}

/* ---- cpy: f32 → f32 / f16 / bf16 / q8_0 ------------------------------------------------------- */

struct cpy_ctx {
    tensor *dst;
    const tensor *src;
};

static void cpy_seg(void *p, int64_t r, int64_t j0, int64_t j1)
{
    const struct cpy_ctx *c = p;
    const float *x = (const float *)cpu_row_at(c->src, r);
    char *d = cpu_row_at(c->dst, r);
    switch (c->dst->type) {
    case DT_F16: {
        uint16_t *y = (uint16_t *)d;
        for (int64_t j = j0; j < j1; j++)
            y[j] = f32_to_f16(x[j]);
        break;
    }
    case DT_BF16: {
        uint16_t *y = (uint16_t *)d;
        for (int64_t j = j0; j < j1; j++)
            y[j] = f32_to_bf16(x[j]);
        break;
    }
    default: /* DT_F32: ops.c admits only these three here (Q8_0 goes to cpy_q8_0_seg) */
        /* memmove: a copy onto itself (dst == src) is legal and must stay a no-op */
        memmove((float *)d + j0, x + j0, (size_t)(j1 - j0) * sizeof(float));
        break;
    }
}

/* Q8_0 destination (a q8_0 KV cache): blocks [b0, b1) of row r, each 32 values quantised
   together by core/quant.c's quantize_row_q8_0 (llama.cpp's reference rounding). Each block goes
   through an aligned copy: a view may start its rows on an odd byte, where d cannot be stored as
   a uint16_t. */
static void cpy_q8_0_seg(void *p, int64_t r, int64_t b0, int64_t b1)
{
    const struct cpy_ctx *c = p;
    const float *x = (const float *)cpu_row_at(c->src, r);
    char *y = cpu_row_at(c->dst, r);
    for (int64_t b = b0; b < b1; b++) {
        block_q8_0 blk;
        quantize_row_q8_0(x + b * QK8_0, &blk, QK8_0);
        memcpy(y + b * (int64_t)sizeof blk, &blk, sizeof blk);
    }
}

int cpu_cpy(backend *be, tensor *dst, const tensor *src)
{
    struct cpy_ctx c = {dst, src};
    if (dst->type == DT_Q8_0) {
        /* the flat split runs over blocks, so no block is cut between two threads */
        tensor blocks = *src;
        blocks.ne[0] = src->ne[0] / QK8_0;
        run_flat(be, &blocks, cpy_q8_0_seg, &c);
        return SEER_OK;
    }
    run_flat(be, src, cpy_seg, &c);
    return SEER_OK;
}

/* ---- softmax ---------------------------------------------------------------------------------- */

static void softmax_row(const void *p, int64_t r, const float *x, float *y, int64_t n)
{
    const float scale = *(const float *)p;
    (void)r;
    float m = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        m = fmaxf(m, scale * x[j]);
    if (m == -INFINITY) {
        /* every entry masked: no distribution exists; zeros keep NaN out of later sums */
        memset(y, 0, (size_t)n * sizeof *y);
        return;
    }
    /* subtracting the max keeps every exponent ≤ 0, so nothing overflows; the sum is kept in
       double so long rows (thousands of keys) lose nothing to accumulation order */
    double sum = 0;
    for (int64_t j = 0; j < n; j++) {
        float e = expf(scale * x[j] - m);
        y[j] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < n; j++)
        y[j] *= inv;
}

int cpu_softmax(backend *be, tensor *out, const tensor *x, float scale)
{
    cpu_run_rows(be, out, x, softmax_row, &scale);
    return SEER_OK;
}
