/* matmul.c — CPU op_matmul (out = x·wᵀ for weights of any dtype, f32 activations) and
   op_get_rows (embedding lookup); contracts in core/ops.h. Three ways to a product:
     - decode (few activation rows) on x86-64 with AVX2: each weight row is read once and
       dequantised in registers for up to 4 activation rows (matmul_x86.c), rows split over threads;
       this is memory-bound, so it must stream the weights at full bandwidth;
     - prefill (many rows) on the same CPUs: strips of 16 weight rows × KCP columns are dequantised
       into f32 and multiplied with up to NCH activation rows by the f32 GEMM kernel of gemm_f32.c;
     - elsewhere (other dtypes or CPUs): the portable tiles below, which dequantise a KC chunk of a
       weight row into stack scratch and reuse it for a tile of activation rows.
   op_linear adds its epilogue (bias, activation, residual) to the prefill kernel's copy of each
   output block, and after the product on the other ways.
   Divisions: portable dot kernels · portable matmul · epilogue · SIMD matmul · op entry · get_rows */
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/gemm_f32.h"
#include "core/cpu/matmul_x86.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_amx.h"
#include "core/cpu/qdot_q4r.h"
#include "core/cpu/qdot_q6r.h"
#include "core/cpu/qdot_q8r.h"
#include "core/error.h"
#include "core/quant.h"
#include "core/util.h"

/* KC: one dequantised weight chunk (8 KiB) stays in L1 while the tile's x rows stream past it;
   a multiple of every block size (256 is the largest) so a chunk starts on a block boundary.
   TN: activation rows sharing a chunk (two passes of the 4-row kernel); TM: weight rows per
   tile, shrunk when there are too few tiles to keep every thread busy. */
#define KC 2048
#define TN 8
#define TM 16

_Static_assert(KC % QK_K == 0 && KC % QK8_0 == 0, "K chunks must hold whole blocks");

/* ---- dot kernels -------------------------------------------------------------------------- */
/* Four-lane f32 vectors (GCC/Clang vector extensions): SSE on x86-64, NEON on ARM, scalar code
   elsewhere; other compilers get the plain loops. Wider generic vectors are not used: without
   AVX GCC keeps them in memory. Each lane sums at most KC/8 = 256 products before the chunk's
   total goes into a double, which keeps K = 12288 well inside 1e-4 relative error. */
#if defined(__GNUC__)
/* v4u is the same vector with alignment 4, so a load from any float address is allowed (x rows
   and chunk offsets need not be 16-byte aligned); GCC and Clang let a vector of float alias
   float data. */
typedef float v4f __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4)));
#define LOAD4(p) ((v4f)(*(const v4u *)(const void *)(p)))
/* lanes of two vectors summed pairwise: (a0+b0)+(a1+b1) + (a2+b2)+(a3+b3) */
static inline float hsum2(v4f a, v4f b)
{
    const v4f s = a + b;
    return (s[0] + s[1]) + (s[2] + s[3]);
}
#endif

/* Σ w[i]·x[i] over n elements; four independent accumulators hide the add latency. */
static float dot1(const float *w, const float *x, int64_t n)
{
    int64_t i = 0;
    float s = 0;
#if defined(__GNUC__)
    v4f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (; i + 16 <= n; i += 16) {
        a0 += LOAD4(w + i) * LOAD4(x + i);
        a1 += LOAD4(w + i + 4) * LOAD4(x + i + 4);
        a2 += LOAD4(w + i + 8) * LOAD4(x + i + 8);
        a3 += LOAD4(w + i + 12) * LOAD4(x + i + 12);
    }
    s = hsum2(a0 + a2, a1 + a3);
#endif
    for (; i < n; i++)
        s += w[i] * x[i];
    return s;
}

/* Four dot products sharing w: each w vector is loaded once for four x rows (8 accumulators,
   2 w vectors and a temporary fit the 16 SSE/NEON registers). */
static void dot4(const float *w, const float *const *x, int64_t n, float *s)
{
    int64_t i = 0;
    s[0] = s[1] = s[2] = s[3] = 0;
#if defined(__GNUC__)
    v4f a00 = {0}, a01 = {0}, a10 = {0}, a11 = {0}, a20 = {0}, a21 = {0}, a30 = {0}, a31 = {0};
    for (; i + 8 <= n; i += 8) {
        const v4f w0 = LOAD4(w + i), w1 = LOAD4(w + i + 4);
        a00 += w0 * LOAD4(x[0] + i);
        a01 += w1 * LOAD4(x[0] + i + 4);
        a10 += w0 * LOAD4(x[1] + i);
        a11 += w1 * LOAD4(x[1] + i + 4);
        a20 += w0 * LOAD4(x[2] + i);
        a21 += w1 * LOAD4(x[2] + i + 4);
        a30 += w0 * LOAD4(x[3] + i);
        a31 += w1 * LOAD4(x[3] + i + 4);
    }
    s[0] = hsum2(a00, a01);
    s[1] = hsum2(a10, a11);
    s[2] = hsum2(a20, a21);
    s[3] = hsum2(a30, a31);
#endif
    for (; i < n; i++)
        for (int r = 0; r < 4; r++)
            s[r] += w[i] * x[r][i];
}

/* ---- portable matmul ------------------------------------------------------------------------------- */

struct mm_ctx {
    const tensor *w, *x;
    tensor *out;
    int64_t K, M, N;    /* w{K,M}, x{K,N} with N = x->ne[1]·ne[2]·ne[3] flattened */
    int64_t tm;         /* weight rows per tile */
    int64_t n_mt, n_nt; /* tiles along M and along N */
};

/* Values k0..k0+n−1 (whole blocks) of weight row r as f32, in whatever layout the backend gave w. */
static void dequant_any(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n)
{
    switch (w->layout) {
    case TL_Q8_0_T16: qamx_dequant(w, r, k0, dst, n); break;
    case TL_Q4_K_R16: case TL_Q5_K_R16: q4r_dequant(w, r, k0, dst, n); break;
    case TL_Q8_0_R16: q8r_dequant(w, r, k0, dst, n); break;
    case TL_Q6_K_R16: q6r_dequant(w, r, k0, dst, n); break;
    default: {
        const struct dtype_info *di = dtype_info(w->type);
        const char *row = (const char *)w->data + (size_t)r * w->nb[1];
        dequantize_row(w->type, row + (size_t)(k0 / di->block_elems) * (size_t)di->block_bytes, dst, n);
    }
    }
}

/* x row n of the flattened {ne1,ne2,ne3} index; any row strides. */
static const float *x_row(const tensor *x, int64_t n)
{
    const int64_t i1 = n % x->ne[1], i2 = (n / x->ne[1]) % x->ne[2], i3 = n / (x->ne[1] * x->ne[2]);
    return (const float *)((const char *)x->data + i1 * x->nb[1] + i2 * x->nb[2] + i3 * x->nb[3]);
}

/* Computes out rows [n0,n1) × columns [m0,m1). A row's result depends only on its position in
   its TN tile (dot4 or dot1), never on m0/m1, so any thread count gives identical floats. */
static void mm_tile(const struct mm_ctx *c, int64_t m0, int64_t m1, int64_t n0, int64_t n1)
{
    const tensor *w = c->w;
    const struct dtype_info *di = dtype_info(w->type);
    const int nn = (int)(n1 - n0);
    float wbuf[KC];
    double acc[TM][TN];
    const float *xr[TN];
    memset(acc, 0, sizeof acc);
    for (int j = 0; j < nn; j++)
        xr[j] = x_row(c->x, n0 + j);

    for (int64_t kc = 0; kc < c->K; kc += KC) {
        const int64_t len = MIN(KC, c->K - kc);
        const size_t chunk_off = (size_t)(kc / di->block_elems) * (size_t)di->block_bytes;
        for (int64_t m = m0; m < m1; m++) {
            const char *wrow = (const char *)w->data + (size_t)m * w->nb[1];
            const float *wc;
            if (w->type == DT_F32) {
                wc = (const float *)(wrow + chunk_off);
            } else {
                dequant_any(w, m, kc, wbuf, len);
                wc = wbuf;
            }
            double *a = acc[m - m0];
            int j = 0;
            for (; j + 4 <= nn; j += 4) {
                const float *xp[4] = {xr[j] + kc, xr[j + 1] + kc, xr[j + 2] + kc, xr[j + 3] + kc};
                float s[4];
                dot4(wc, xp, len, s);
                for (int r = 0; r < 4; r++)
                    a[j + r] += s[r];
            }
            for (; j < nn; j++)
                a[j] += dot1(wc, xr[j] + kc, len);
        }
    }

    /* out is contiguous {M, N}: row n starts at n·M */
    float *out = c->out->data;
    for (int j = 0; j < nn; j++)
        for (int64_t m = m0; m < m1; m++)
            out[(n0 + j) * c->M + m] = (float)acc[m - m0][j];
}

/* Tiles are numbered M-major, so a thread's contiguous share covers few weight rows and all of
   their activation tiles: each weight row is read from memory by one thread. */
static void mm_worker(void *ctx, int ith, int nth)
{
    const struct mm_ctx *c = ctx;
    long long lo, hi;
    threadpool_range(c->n_mt * c->n_nt, ith, nth, &lo, &hi);
    for (long long t = lo; t < hi; t++) {
        const int64_t mt = t / c->n_nt, nt = t % c->n_nt;
        const int64_t m0 = mt * c->tm, n0 = nt * TN;
        mm_tile(c, m0, MIN(m0 + c->tm, c->M), n0, MIN(n0 + TN, c->N));
    }
}

static void matmul_portable(threadpool *pool, tensor *out, const tensor *w, const tensor *x)
{
    struct mm_ctx c = {
        .w = w, .x = x, .out = out,
        .K = w->ne[0], .M = w->ne[1], .N = x->ne[1] * x->ne[2] * x->ne[3],
    };
    c.n_nt = (c.N + TN - 1) / TN;
    /* Decode (N = 1) has one activation tile: split M finer until there are ~4 tiles per
       thread, so two threads share even a 17-row weight. */
    const int64_t want = 4 * (int64_t)threadpool_size(pool);
    c.tm = TM;
    while (c.tm > 1 && ((c.M + c.tm - 1) / c.tm) * c.n_nt < want)
        c.tm /= 2;
    c.n_mt = (c.M + c.tm - 1) / c.tm;
    threadpool_run(pool, mm_worker, &c);
}

/* Makes room for `need` bytes of rounded activations in the backend's kept buffer. */
static char *qbuf_get(struct cpu_ctx *cc, size_t need)
{
    if (need > cc->qbuf_bytes) {
        void *nbuf = realloc(cc->qbuf, need);
        if (!nbuf)
            return NULL;
        cc->qbuf = nbuf;
        cc->qbuf_bytes = need;
    }
    return cc->qbuf;
}

/* ---- SIMD matmul (x86-64 with AVX2+FMA+F16C) ------------------------------------------------ */
/* ---- op_linear's epilogue ------------------------------------------------------------------- */

/* out = act(product + bias) + res (struct linear_epilogue), on host pointers. */
struct epi {
    const float *bias;     /* [M] or NULL */
    cpu_unary_row_fn act;  /* or NULL */
    const float *res;      /* {M, N} row-major, or NULL */
    int64_t M;
    bool bf16;             /* the caller accepts bf16 operands (struct linear_epilogue) */
};

/* Columns [m0, m0 + n) of output row `row`: p holds the product (and is overwritten), o gets the
   result (o may be p). The order of op_matmul, op_add, op_unary, op_add: the same floats. */
static void epi_cols(const struct epi *e, float *o, float *p, int64_t row, int64_t m0, int64_t n)
{
    if (e->bias)
        for (int64_t j = 0; j < n; j++)
            p[j] += e->bias[m0 + j];
    if (e->act)
        e->act(p, p, n);
    if (e->res) {
        const float *r = e->res + row * e->M + m0;
        for (int64_t j = 0; j < n; j++)
            o[j] = p[j] + r[j];
    } else if (o != p) {
        memcpy(o, p, (size_t)n * sizeof *o);
    }
}

struct epi_job {
    const struct epi *e;
    float *out;
    int64_t N;
};

static void epi_worker(void *ctx, int ith, int nth)
{
    const struct epi_job *j = ctx;
    long long lo, hi;
    threadpool_range(j->N, ith, nth, &lo, &hi);
    for (long long n = lo; n < hi; n++)
        epi_cols(j->e, j->out + n * j->e->M, j->out + n * j->e->M, n, 0, j->e->M);
}

#ifdef SEER_MM_X86

/* Activation rows from which the panel product beats re-reading weight rows in the dot kernel
   (measured on Zen 4: below this the panel packing is not paid back). */
#define GEMM_MIN_N 16
/* A work unit is MB weight rows (the width of gemm_worker's accumulator block); K is walked in
   chunks of KCP, a multiple of every block size so chunks start on block boundaries. */
#define MB 64
#define KCP 256
_Static_assert(KCP % QK_K == 0 && KCP % QK8_0 == 0, "panel chunks must hold whole blocks");

struct simd_ctx {
    const tensor *w;
    tensor *out;
    const float *x0;    /* first activation row */
    int64_t x_rs;       /* activation row stride in floats */
    int64_t K, M, N;
    int64_t n_units;    /* work units: weight rows (dot) or panels of MB rows (gemm) */
    bool bf16_ok;       /* the caller accepts bf16 operands (op_linear's epilogue says so) */
    bool bf16;          /* dot: the not-exact bf16 rule (x0 holds the rounded rows, bf16_rule) */
    const struct epi *epi; /* op_linear's epilogue, applied by gemm_worker, or NULL */
};

/* Decode: weight rows [lo,hi) against every activation row, 4 rows per pass. */
static void dot_worker(void *ctx, int ith, int nth)
{
    const struct simd_ctx *c = ctx;
    const tensor *w = c->w;
    float *out = c->out->data;
    long long lo, hi;
    threadpool_range(c->n_units, ith, nth, &lo, &hi);
    for (int64_t n0 = 0; n0 < c->N; n0 += MM_X86_MAX_NX) {
        const int nx = (int)MIN(MM_X86_MAX_NX, c->N - n0);
        const float *xr[MM_X86_MAX_NX];
        for (int r = 0; r < nx; r++)
            xr[r] = c->x0 + (n0 + r) * c->x_rs;
        for (long long m = lo; m < hi; m++) {
            float s[MM_X86_MAX_NX];
            mm_x86_dot(w->type, c->bf16, (const char *)w->data + (size_t)m * w->nb[1], xr, nx, c->K, s);
            for (int r = 0; r < nx; r++)
                out[(n0 + r) * c->M + m] = s[r];
        }
    }
}

/* Prefill: per panel of MB weight rows, per NCH activation rows, per KCP chunk of K, dequantise the
   chunk transposed, a strip of NS weight rows at a time (strip[k][j] = w[m0+s+j][kc+k], contiguous:
   the f32 kernel's 16-column blocks then read B as one sequential stream that stays in L1, right after
   it is written), and add x·strip into acc, a contiguous NCH×MB block that holds the outputs until the last chunk and
   is then copied into out. acc rather than out itself: out's rows are M floats apart, a multiple of
   4 KiB for the tower's widths (3072 floats), so the rows of a block landed in a few cache sets and
   were fetched from L3 at every chunk (the kernel's stores were 8–12 % of the tower's time;
   docs/PERFORMANCE.md). A panel chunk is dequantised once per NCH rows, ≈ 2 % of the products.
   Each output element gets its K/KCP partial sums in a fixed order, so any thread count gives
   identical floats. */
#define NS 16
#define NCH 192
static void gemm_worker(void *ctx, int ith, int nth)
{
    const struct simd_ctx *c = ctx;
    const tensor *w = c->w;
    const struct dtype_info *di = dtype_info(w->type);
    float strip[KCP * NS] __attribute__((aligned(64)));
    float tmp[KCP * NS] __attribute__((aligned(64)));
    float acc[NCH * MB] __attribute__((aligned(64)));
    long long lo, hi;
    threadpool_range(c->n_units, ith, nth, &lo, &hi);
    for (long long u = lo; u < hi; u++) {
        const int64_t m0 = u * MB, mb = MIN(MB, c->M - m0);
        for (int64_t n0 = 0; n0 < c->N; n0 += NCH) {
            const int64_t nr = MIN(NCH, c->N - n0);
            for (int64_t kc = 0; kc < c->K; kc += KCP) {
                const int64_t len = MIN(KCP, c->K - kc);
                const size_t off = (size_t)(kc / di->block_elems) * (size_t)di->block_bytes;
                for (int64_t s = 0; s < mb; s += NS) {
                    const int ns = (int)MIN(NS, mb - s);
                    mm_x86_dequant_strip(w->type, (const char *)w->data + (size_t)(m0 + s) * w->nb[1] + off,
                                         w->nb[1], ns, len, tmp, strip);
                    const struct cpu_gemm g = {
                        .M = nr, .N = ns, .K = len, .alpha = 1.0f, .cb = kc ? 1.0f : 0.0f,
                        .A = c->x0 + n0 * c->x_rs + kc, .a_rs = c->x_rs, .a_cs = 1, .B = strip,
                        .ldb = ns, .C = acc + s, .ldc = MB, .tri = CPU_TRI_NONE,
                    };
                    cpu_gemm_f32(&g);
                }
            }
            float *out = (float *)c->out->data + n0 * c->M + m0;
            for (int64_t n = 0; n < nr; n++) {
                if (c->epi) /* while the block is in L2: no pass over out of its own */
                    epi_cols(c->epi, out + n * c->M, acc + n * MB, n0 + n, m0, mb);
                else
                    memcpy(out + n * c->M, acc + n * MB, (size_t)mb * sizeof *out);
            }
        }
    }
}

/* AVX-512 prefill: tiles of MM512_TILE weight rows split over the threads. */
struct tile_ctx {
    const struct mm_job *job;
    int64_t n_tiles;
};

static void tile_worker(void *ctx, int ith, int nth)
{
    const struct tile_ctx *c = ctx;
    uint8_t scratch[40 << 10] __attribute__((aligned(64)));
    long long lo, hi;
    ASSERT1(mm_avx512_scratch_bytes() <= sizeof scratch);
    threadpool_range(c->n_tiles, ith, nth, &lo, &hi);
    for (long long t = lo; t < hi; t++)
        mm_avx512_tile(c->job, t * MM512_TILE, scratch);
}

/* Rounds the activations to int16 (exact) or int8 blocks, or to bf16, rows split over the threads. */
static void quant_worker(void *ctx, int ith, int nth)
{
    const struct mm_job *j = ctx;
    long long lo, hi;
    threadpool_range(j->N, ith, nth, &lo, &hi);
    if (j->xbf)
        mm_avx512_round_bf16(j->x, j->x_rs, lo, hi, j->K, (uint16_t *)j->xbf);
    else if (j->xq8)
        mm_avx512_quantize_rows_i8(j->x, j->x_rs, lo, hi, j->K, (int8_t *)j->xq8, (float *)j->xs, (float *)j->xsum,
                                   (int32_t *)j->xqsum, (int32_t *)j->xqsum16);
    else
        mm_avx512_quantize_rows(j->x, j->x_rs, lo, hi, j->K, (int16_t *)j->xq, (float *)j->xs, (float *)j->xsum);
}

/* Not exact, where the caller accepts it, F16/BF16 weights meet activations rounded to bf16 where
   the CPU multiplies bf16 (and K is whole 32-blocks: every real matrix), whatever the number of
   rows: an image's products give the same values in one call or several (up to the order of f32
   sums). */
static bool bf16_rule(const struct simd_ctx *c, bool exact)
{
    return !exact && c->bf16_ok && mm_avx512_bf16_type(c->w->type) && c->K % 32 == 0 &&
           mm_avx512_bf16_available();
}

/* Returns false when the rounded activations' buffer cannot grow (the caller falls back to f32).
   `exact`: int16 activations (within the f32 tolerance); else int8, as decode rounds them, or bf16
   (bf16_rule). The rounded rows go to the backend's kept buffer (qbuf_get): allocated per product,
   the kernel's first touch of fresh pages (clear_page) was 1.6–4.6 % of the vision tower's time. */
static bool matmul_avx512(struct cpu_ctx *cc, const struct simd_ctx *c, bool exact)
{
    struct mm_job j = {
        .type = c->w->type, .w = c->w->data, .w_rs = c->w->nb[1], .K = c->K, .M = c->M, .N = c->N,
        .x = c->x0, .x_rs = c->x_rs, .out = c->out->data, .t16 = c->w->layout == TL_Q8_0_T16 ? c->w : NULL,
        .r16 = c->w->layout == TL_Q4_K_R16 || c->w->layout == TL_Q5_K_R16 ? c->w : NULL,
        .q8r = c->w->layout == TL_Q8_0_R16 ? c->w : NULL, .q6r = c->w->layout == TL_Q6_K_R16 ? c->w : NULL,
    };
    threadpool *pool = cc->pool;
    void *buf;
    size_t nb;
    if (bf16_rule(c, exact)) {
        if (!size_mul((size_t)c->N, (size_t)c->K * sizeof(uint16_t), &nb) || !(buf = qbuf_get(cc, nb)))
            return false;
        j.xbf = buf;
        threadpool_run(pool, quant_worker, &j);
    } else if (mm_avx512_int16_type(j.type) || (!exact && mm_avx512_u8_type(j.type))) {
        /* per block: scale and f32 sum, and (int8) the sum of the rounded values, for Q6_K per 16
           values too (after them) */
        size_t nq, ns;
        if (!size_mul((size_t)c->N, (size_t)c->K * (exact ? sizeof(int16_t) : 1), &nq) ||
            !size_mul((size_t)c->N, (size_t)(c->K / 32) * (j.type == DT_Q6_K ? 5 : 3) * sizeof(float), &ns) ||
            !size_add(nq, ns, &nb) || !(buf = qbuf_get(cc, nb)))
            return false;
        if (exact)
            j.xq = buf;
        else
            j.xq8 = buf;
        j.xs = (const float *)(const void *)((const char *)buf + nq);
        j.xsum = j.xs + c->N * (c->K / 32);
        j.xqsum = (const int32_t *)(const void *)(j.xsum + c->N * (c->K / 32));
        if (j.type == DT_Q6_K)
            j.xqsum16 = j.xqsum + c->N * (c->K / 32);
        threadpool_run(pool, quant_worker, &j);
    }
    struct tile_ctx t = {&j, (c->M + MM512_TILE - 1) / MM512_TILE};
    threadpool_run(pool, tile_worker, &t);
    return true;
}

/* Runs the SIMD paths when they apply: a dtype with kernels, and activation rows at one stride
   (the flattened {ne1,ne2,ne3} index is then row·x_rs). Returns false to use the portable path.
   `epi` (or NULL): op_linear's epilogue, which the prefill kernel applies as it copies its blocks
   out (*epi_done set then); the caller applies it otherwise. */
static bool matmul_simd(struct cpu_ctx *cc, tensor *out, const tensor *w, const tensor *x, const struct epi *epi,
                        bool *epi_done)
{
    threadpool *pool = cc->pool;
    const bool exact = cc->exact;
    if (!mm_x86_available() || !(mm_x86_type(w->type) || mm_avx512_u8_type(w->type)))
        return false;
    if ((x->ne[2] > 1 && x->nb[2] != x->nb[1] * (size_t)x->ne[1]) ||
        (x->ne[3] > 1 && x->nb[3] != x->nb[2] * (size_t)x->ne[2]) || x->nb[1] % sizeof(float))
        return false;
    struct simd_ctx c = {
        .w = w, .out = out, .x0 = x->data, .x_rs = (int64_t)(x->nb[1] / sizeof(float)),
        .K = w->ne[0], .M = w->ne[1], .N = x->ne[1] * x->ne[2] * x->ne[3], .bf16_ok = epi && epi->bf16,
    };
    /* another layout, or Q5_K/Q6_K (which have no f32 SIMD kernels): prefill's int8 tiles read
       it; the rest is the portable path's */
    if (w->layout != TL_ROWS || !mm_x86_type(w->type))
        return !exact && c.N >= GEMM_MIN_N && mm_avx512_available() && matmul_avx512(cc, &c, false);
    if (c.N < GEMM_MIN_N) {
        size_t need;
        float *xb;
        /* the rows rounded once, for every thread (out of memory: the unrounded ones) */
        if (bf16_rule(&c, exact) && size_mul((size_t)(c.N * c.K), sizeof *xb, &need) &&
            (xb = (float *)(void *)qbuf_get(cc, need))) {
            mm_x86_round_bf16(c.x0, c.x_rs, c.N, c.K, xb);
            c.x0 = xb, c.x_rs = c.K, c.bf16 = true;
        }
        c.n_units = c.M;
        threadpool_run(pool, dot_worker, &c);
    } else if (!mm_avx512_available() || !matmul_avx512(cc, &c, exact)) {
        c.n_units = (c.M + MB - 1) / MB;
        c.epi = epi;
        *epi_done = epi != NULL;
        threadpool_run(pool, gemm_worker, &c);
    }
    return true;
}
#endif /* SEER_MM_X86 */

/* ---- rounded-activation matmul (not exact) --------------------------------------------------- */

/* Weight rows per work unit: 16 outputs are one 64-byte line of an output row, so two threads
   never write the same cache line. */
#define Q_ROWS 16
_Static_assert(Q_ROWS == QAMX_ROWS && Q_ROWS == Q4R_ROWS && Q_ROWS == Q8R_ROWS && Q_ROWS == Q6R_ROWS &&
                   Q4R_MAX_X == Q8R_MAX_X,
               "a work unit is one unit of the AMX, Q4_K, Q8_0 and Q6_K layouts");

/* The dtype whose rounded-activation form w's kernels read (qdot_act_row_bytes): its own, but
   Q8_K (Q4_K's) for interleaved Q6_K and Q5_K, whose kernels take the per-16 sums Q8_K carries. */
static enum dtype act_type(const tensor *w)
{
    return w->layout == TL_Q6_K_R16 || w->layout == TL_Q5_K_R16 ? DT_Q4_K : w->type;
}
/* Weight rows ahead of the one being multiplied that q_worker prefetches (below). */
#define Q_AHEAD_NEAR 1
#define Q_AHEAD_FAR 4

struct q_ctx {
    qdot_fn fn;
    qdot_rows_fn rows; /* several activation rows per weight-row pass, or NULL */
    const tensor *w;
    const char *xq;      /* N rows of rounded activations, x_rb bytes apart (qdot_quantize_act) */
    size_t x_rb;
    int64_t nb, M, N;
    float *out;
    const char *pack; /* w in the AMX layout and N > 1: groups of qamx_np(N) rows laid out for the tiles */
    int np;
};

/* The AMX layout: each unit's 16 rows meet every group of activation rows while they are in cache. */
static void q_units_amx(const struct q_ctx *c, long long lo, long long hi)
{
    const size_t group = qamx_pack_bytes(c->nb);
    if (c->N == 1) {
        for (long long u = lo; u < hi; u++)
            qamx_unit1(c->w, u, c->xq, c->out + u * QAMX_ROWS);
        return;
    }
    qamx_begin(c->np);
    for (long long u = lo; u < hi; u++)
        for (int64_t n0 = 0; n0 < c->N; n0 += c->np)
            qamx_unit(c->w, u, c->pack + (size_t)(n0 / c->np) * group, (int)MIN(c->np, c->N - n0), c->np,
                      c->out + n0 * c->M + u * QAMX_ROWS, (size_t)c->M);
    qamx_end();
}

/* Weight rows of this thread's units, each against every activation row (a weight row stays in
   L1 while the activation rows pass it). With a several-row kernel the row is also unpacked once
   per QDOT_MAX_ROWS activation rows: batched decode (issue #13 item 5) is then bound by the
   weight stream, not by unpacking it once per sequence. */
static void q_units(const struct q_ctx *c, long long lo, long long hi)
{
    if (c->w->layout == TL_Q8_0_T16) {
        q_units_amx(c, lo, hi);
        return;
    }
    /* a unit is Q_ROWS rows; activation rows 8 at a time */
    if (c->w->layout == TL_Q4_K_R16 || c->w->layout == TL_Q5_K_R16 || c->w->layout == TL_Q8_0_R16) {
        for (long long u = lo; u < hi; u++)
            for (int64_t n0 = 0; n0 < c->N; n0 += Q4R_MAX_X) {
                const char *x = c->xq + (size_t)n0 * c->x_rb;
                const int nx = (int)MIN(Q4R_MAX_X, c->N - n0);
                float *out = c->out + n0 * c->M + u * Q4R_ROWS;
                if (c->w->layout != TL_Q8_0_R16)
                    q4r_unit(c->w, u, x, c->x_rb, nx, out, (size_t)c->M);
                else
                    q8r_unit(c->w, u, x, c->x_rb, nx, out, (size_t)c->M);
            }
        return;
    }
    if (c->w->layout == TL_Q6_K_R16) { /* activation rows 4 at a time */
        for (long long u = lo; u < hi; u++)
            for (int64_t n0 = 0; n0 < c->N; n0 += Q6R_MAX_X)
                q6r_unit(c->w, u, c->xq + (size_t)n0 * c->x_rb, c->x_rb, (int)MIN(Q6R_MAX_X, c->N - n0),
                         c->out + n0 * c->M + u * Q6R_ROWS, (size_t)c->M);
        return;
    }
    const int64_t m1 = MIN(hi * Q_ROWS, c->M);
    const size_t rb = (size_t)(c->nb * QDOT_BLOCK / dtype_info(c->w->type)->block_elems) *
                      (size_t)dtype_info(c->w->type)->block_bytes;
    const bool hints = !qdot_streams(c->w->type); /* else the kernel streams ahead itself */
    for (int64_t m = lo * Q_ROWS; m < m1; m++) {
        const char *wr = (const char *)c->w->data + (size_t)m * c->w->nb[1];
        /* Rows ahead are fetched while this one is multiplied: a row is 0.5–4 KB, too short for
           the hardware prefetcher, which also stops at every 4 KiB page of the mapped file. One
           burst of prefetches into L1 for the next row (5.9 → 8.3 GB/s on a 260 MB Q4_K matrix)
           left the core waiting in the burst for line-fill buffers, so memory and arithmetic did
           not overlap; hints to L2 (prefetcht2) for the rows Q_AHEAD_NEAR and Q_AHEAD_FAR ahead
           keep more lines in flight (0.8B, 1 thread, CPU ms per decode token: Q8_0 96 → 73–76,
           Q4_K 57 → 48–51; one distance alone, or L1 hints, gained half of it or less; 2 and 8
           rows ahead did as well). */
        for (int a = 0; a < 2; a++) {
            const int64_t ahead = a ? Q_AHEAD_FAR : Q_AHEAD_NEAR;
            if (hints && m + ahead < m1)
                for (size_t off = 0; off < rb; off += 64)
                    __builtin_prefetch(wr + (size_t)ahead * c->w->nb[1] + off, 0, 1);
        }
        if (!c->rows || c->N == 1) {
            for (int64_t n = 0; n < c->N; n++)
                c->out[n * c->M + m] = c->fn(wr, c->xq + (size_t)n * c->x_rb, c->nb);
            continue;
        }
        for (int64_t n0 = 0; n0 < c->N; n0 += QDOT_MAX_ROWS) {
            const int nx = (int)MIN(QDOT_MAX_ROWS, c->N - n0);
            float s[QDOT_MAX_ROWS];
            c->rows(wr, c->xq + (size_t)n0 * c->x_rb, c->x_rb, nx, c->nb, s);
            for (int r = 0; r < nx; r++)
                c->out[(n0 + r) * c->M + m] = s[r];
        }
    }
}

/* The product's work units, Q_ROWS weight rows each. */
static int64_t q_n_units(const struct q_ctx *c) { return (c->M + Q_ROWS - 1) / Q_ROWS; }

/* One product as a job: its units from a shared queue (threads.h). */
struct q_job {
    struct q_ctx q;
    threadpool_queue units;
};

static void q_worker(void *ctx, int ith, int nth)
{
    struct q_job *j = ctx;
    long long lo, hi;
    (void)ith, (void)nth;
    while (threadpool_queue_take(&j->units, &lo, &hi))
        q_units(&j->q, lo, hi);
}

#ifdef SEER_MM_X86
/* Activation rows from which prefill's blocked products beat the 8-bit dot kernels. With AVX-512
   (Zen 4) that is GEMM_MIN_N. With AVX2 alone the dot kernels keep up for longer (2-core AMD EPYC
   without AVX-512, 2026-11-27, 0.8B Q8_0, prefill tokens/s, dot kernels vs blocked: 16 rows 67 vs
   38, 48 rows 73 vs 68, 63 rows 76 vs 72, 80 rows 69 vs 65, 96 rows 58 vs 77, 128 rows 63 vs 91).
   Sixteen sequences decoding together are such a product: 20.6 → 43.6 tokens/s there. */
static int64_t qdot_gemm_min_n(void) { return mm_avx512_available() ? GEMM_MIN_N : 80; }
/* The same for Q8_0 and Q6_K interleaved (qdot_q8r.c, qdot_q6r.c), whose kernels need no packing:
   16 sequences decode 172 → 190–199 tokens/s (Q8_0) on the kernel rather than the tiles, Q4_K_M
   even; from 64 rows on the two are even (0.8B, 2 threads, Zen 4, pp64–pp256; docs/PERFORMANCE.md).
   Below it a sequence gets the same bits alone as beside up to 31 others. */
#define R16_GEMM_MIN_N 32
#endif

/* Whether the 8-bit path takes w with N activation rows. */
static bool qdot_applies(const struct cpu_ctx *cc, const tensor *w, int64_t N)
{
    if (cc->exact || !qdot_type(w->type) || w->ne[0] % QDOT_BLOCK)
        return false;
#ifdef SEER_MM_X86
    if (N >= (w->layout == TL_Q8_0_R16 || w->layout == TL_Q6_K_R16 ? R16_GEMM_MIN_N : qdot_gemm_min_n()) && mm_x86_available() &&
        (mm_x86_type(w->type) || (mm_avx512_u8_type(w->type) && mm_avx512_available())))
        return false; /* prefill: the blocked SIMD products are faster */
#endif
    return true;
}


/* Bytes of x's 8-bit form for w's kernels: the rounded rows and, for the AMX layout, after them
   their groups laid out for the tiles. */
static bool q_act_bytes(const tensor *w, int64_t N, size_t *bytes)
{
    const int64_t K = w->ne[0], np = qamx_np(N);
    size_t rows, packs;
    if (!size_mul((size_t)N, qdot_act_row_bytes(act_type(w), K), &rows))
        return false;
    rows = (rows + 63) / 64 * 64;
    if (w->layout != TL_Q8_0_T16 || N == 1)
        return *bytes = rows, true;
    return size_mul((size_t)((N + np - 1) / np), qamx_pack_bytes(K / QDOT_BLOCK), &packs) &&
           size_add(rows, packs, bytes);
}

/* The product's work: x rounded for w's kernels into xq (already done when `rounded`, by a matrix
   of the same type and layout), then laid out for the tiles. */
static struct q_ctx q_setup(const tensor *out, const tensor *w, const tensor *x, char *xq, bool rounded)
{
    const int64_t K = w->ne[0], N = x->ne[1] * x->ne[2] * x->ne[3], nb = K / QDOT_BLOCK;
    const size_t x_rb = qdot_act_row_bytes(act_type(w), K);
    struct q_ctx c = {qdot_kernel(w->type), qdot_rows_kernel(w->type), w, xq, x_rb, nb, w->ne[1], N, out->data,
                      NULL, qamx_np(N)};
    for (int64_t n = 0; n < N && !rounded; n++)
        qdot_quantize_act(act_type(w), x_row(x, n), xq + (size_t)n * x_rb, K);
    if (w->layout == TL_Q8_0_T16 && N > 1) {
        char *pack = xq + ((size_t)N * x_rb + 63) / 64 * 64;
        for (int64_t n0 = 0; n0 < N && !rounded; n0 += c.np)
            qamx_pack(xq + (size_t)n0 * x_rb, x_rb, (int)MIN(c.np, N - n0), c.np, nb,
                      pack + (size_t)(n0 / c.np) * qamx_pack_bytes(nb));
        c.pack = pack;
    }
    return c;
}

/* Rounds x once into the backend's kept buffer, then the integer products. Used for decode-sized
   products of every qdot type, and for all sizes of the types without an f32 SIMD path. Returns
   false when it does not apply (or the buffer cannot grow: the caller falls back to f32). */
static bool matmul_qdot(backend *be, tensor *out, const tensor *w, const tensor *x)
{
    struct cpu_ctx *cc = be->ctx;
    const int64_t N = x->ne[1] * x->ne[2] * x->ne[3];
    size_t need;
    char *xq;
    if (!qdot_applies(cc, w, N) || !q_act_bytes(w, N, &need) || !(xq = qbuf_get(cc, need)))
        return false;
    struct q_job j = {.q = q_setup(out, w, x, xq, false)};
    threadpool_queue_init(&j.units, q_n_units(&j.q), threadpool_size(cpu_pool(be)), 1);
    cpu_run(be, q_worker, &j, cpu_parallel(be, (double)j.q.M * (double)w->ne[0] * (double)N, CPU_PAR_MIN_WORK));
    return true;
}

/* op_matmul_n on the 8-bit path: x rounded once per activation format (matrices of one weight type
   share it), then one job over all the matrices' row units. */
struct qn_ctx {
    int n;
    struct q_ctx q[OP_MATMUL_N_MAX];
    int64_t first[OP_MATMUL_N_MAX + 1]; /* matrix i's units are [first[i], first[i+1]) */
    threadpool_queue units;             /* over all of them */
};

static void qn_worker(void *ctx, int ith, int nth)
{
    struct qn_ctx *c = ctx;
    long long lo, hi;
    (void)ith, (void)nth;
    while (threadpool_queue_take(&c->units, &lo, &hi))
        for (int i = 0; i < c->n; i++) {
            const long long a = MAX(lo, c->first[i]), b = MIN(hi, c->first[i + 1]);
            if (a < b)
                q_units(&c->q[i], a - c->first[i], b - c->first[i]);
        }
}

static bool matmul_n_qdot(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x)
{
    struct cpu_ctx *cc = be->ctx;
    const int64_t N = x->ne[1] * x->ne[2] * x->ne[3];
    size_t at[OP_MATMUL_N_MAX], need = 0, bytes;
    int owner[OP_MATMUL_N_MAX]; /* the matrix whose rounding of x matrix i reads */
    for (int i = 0; i < n; i++) {
        if (!qdot_applies(cc, ws[i], N))
            return false;
        owner[i] = i;
        for (int j = 0; j < i && owner[i] == i; j++)
            if (ws[j]->type == ws[i]->type && ws[j]->layout == ws[i]->layout)
                owner[i] = j;
        if (owner[i] == i) {
            if (!q_act_bytes(ws[i], N, &bytes))
                return false;
            at[i] = need;
            need += (bytes + 63) / 64 * 64;
        }
    }
    char *buf = qbuf_get(cc, need);
    if (!buf)
        return false;
    struct qn_ctx c = {.n = n};
    double work = 0;
    for (int i = 0; i < n; i++) {
        c.q[i] = q_setup(outs[i], ws[i], x, buf + at[owner[i]], owner[i] != i);
        c.first[i + 1] = c.first[i] + q_n_units(&c.q[i]);
        work += (double)c.q[i].M * (double)ws[i]->ne[0] * (double)N;
    }
    threadpool_queue_init(&c.units, c.first[n], threadpool_size(cpu_pool(be)), 1);
    cpu_run(be, qn_worker, &c, cpu_parallel(be, work, CPU_PAR_MIN_WORK));
    return true;
}

/* ---- op entry ----------------------------------------------------------------------------- */

/* The product by the first way that applies (file comment); with `epi`, *epi_done tells whether
   the prefill kernel applied it. */
static int matmul_ways(backend *be, tensor *out, const tensor *w, const tensor *x, const struct epi *epi,
                       bool *epi_done)
{
    threadpool *pool = cpu_pool(be);
    *epi_done = false;
    if (!w->data || !x->data || !out->data)
        return seer_err(SEER_EINVAL, "op_matmul: a tensor has no host memory (w '%s', x '%s', out '%s')", w->name,
                        x->name, out->name);
    if (matmul_qdot(be, out, w, x))
        return SEER_OK;
#ifdef SEER_MM_X86
    if (matmul_simd(be->ctx, out, w, x, epi, epi_done))
        return SEER_OK;
#else
    (void)epi;
#endif
    matmul_portable(pool, out, w, x);
    return SEER_OK;
}

int cpu_matmul(backend *be, tensor *out, const tensor *w, const tensor *x)
{
    bool done;
    return matmul_ways(be, out, w, x, NULL, &done);
}

int cpu_linear(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep)
{
    const struct epi e = {
        .bias = ep->bias ? ep->bias->data : NULL, .act = ep->act ? cpu_unary_row(ep->unary) : NULL,
        .res = ep->res ? ep->res->data : NULL, .M = w->ne[1], .bf16 = ep->bf16,
    };
    bool done;
    int rc = matmul_ways(be, out, w, x, &e, &done);
    if (rc == SEER_OK && !done) {
        struct epi_job j = {&e, out->data, tensor_nelements(out) / e.M};
        cpu_run(be, epi_worker, &j, cpu_parallel(be, 4.0 * (double)tensor_nelements(out), CPU_PAR_MIN_ELEMS));
    }
    return rc;
}

int cpu_matmul_n(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x)
{
    if (!x->data)
        return seer_err(SEER_EINVAL, "op_matmul_n: x '%s' has no host memory", x->name);
    for (int i = 0; i < n; i++)
        if (!ws[i]->data || !outs[i]->data)
            return seer_err(SEER_EINVAL, "op_matmul_n: w '%s' or out '%s' has no host memory", ws[i]->name,
                            outs[i]->name);
    if (matmul_n_qdot(be, n, outs, ws, x))
        return SEER_OK;
    /* prefill and the exact path: their products take no shared pass (the tiles pack each matrix) */
    int rc = SEER_OK;
    for (int i = 0; i < n && rc == SEER_OK; i++)
        rc = cpu_matmul(be, outs[i], ws[i], x);
    return rc;
}

/* ---- get_rows ----------------------------------------------------------------------------- */

struct gr_ctx {
    tensor *out;
    const tensor *table, *ids;
};

static int32_t row_id(const tensor *ids, int64_t n)
{
    int32_t id;
    memcpy(&id, (const char *)ids->data + (size_t)n * ids->nb[0], sizeof id);
    return id;
}

static void gr_worker(void *ctx, int ith, int nth)
{
    const struct gr_ctx *c = ctx;
    long long lo, hi;
    threadpool_range(c->ids->ne[0], ith, nth, &lo, &hi);
    for (long long n = lo; n < hi; n++) {
        float *dst = (float *)((char *)c->out->data + (size_t)n * c->out->nb[1]);
        dequant_any(c->table, row_id(c->ids, n), 0, dst, c->table->ne[0]);
    }
}

int cpu_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids)
{
    if (!out->data || !table->data || !ids->data)
        return seer_err(SEER_EINVAL, "op_get_rows: a tensor has no host memory (table '%s')", table->name);
    /* Ids come from the tokenizer or the user: check them all before writing anything. */
    for (int64_t n = 0; n < ids->ne[0]; n++) {
        const int32_t id = row_id(ids, n);
        if (id < 0 || id >= table->ne[1])
            return seer_err(SEER_EINVAL, "op_get_rows: id %d at position %lld is outside table '%s' of %lld rows",
                            (int)id, (long long)n, table->name, (long long)table->ne[1]);
    }
    struct gr_ctx c = {out, table, ids};
    /* a handful of rows is cheaper on one thread than waking the pool */
    if (ids->ne[0] < 16)
        gr_worker(&c, 0, 1);
    else
        threadpool_run(cpu_pool(be), gr_worker, &c);
    return SEER_OK;
}
