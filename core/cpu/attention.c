/* attention.c — CPU op_attention (core/ops.h): softmax(scale·q·kᵀ, masked)·v per query head,
   for the text decoder's full-attention layers (spec §2.6 step 6: GQA, query head h reads kv
   head h/(nh/nkv), causal mask) and the vision tower (spec §4.5 step 4: attention within each
   image's segment). K and V are f32, f16 or q8_0 and read through their strides (views of a KV
   cache); f16 and q8_0 rows are widened a key block at a time, never the whole cache, except that
   decode tiles (a few rows) read f16 or q8_0 K/V in place (scores_direct, pv_direct).
   Keys are visited in blocks with an online softmax (running max and sum per query row), so
   the T×Tk score matrix never exists; a block's scores and its P·V update are small GEMMs over
   a tile of (query, head) rows that share one kv head. Tiles run on the backend's pool; a decode
   step over a long cache splits each kv head's keys into ranges, whose partial sums are joined at
   the end (combine_split).
   A backend that is not exact, on CPUs with AVX512-BF16, runs both products on bf16 operands where
   the caller accepts it (attn_mask.bf16: the vision tower; gemm_bf16.h): Q·scale, K, the
   probabilities and V rounded to bf16; the scores, the softmax and the accumulators in f32 — the
   precision Hugging Face runs the model in (docs/MODEL.md §9). */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/gemm_bf16.h"
#include "core/cpu/gemm_f32.h"
#include "core/cpu/matmul_x86.h"
#include "core/cpu/vexp.h"
#include "core/error.h"
#include "core/quant.h"
#include "core/util.h"
#include "seer.h"

/* Keys per block: one block's scores (KB × rows) and its K, V rows stay in L1/L2. */
#define KB 64
/* Most rows a tile may have to read an f16 or q8_0 cache in place (scores_direct, pv_direct) */
#define IN_PLACE_ROWS 8
/* Keys per range of a decode step's split (cpu_attention) */
#define SPLIT_KEYS 1024
/* Target (query, head) rows per tile: enough rows to amortise each K/V block over a GEMM. */
#define TILE_ROWS 64
/* The bf16 path rounds K and V to pairs once per call, for all tiles, up to this many bytes (the
   largest vision tower image, 16384 patches of the 9B's 16 heads of 72, takes 75 MiB); past it,
   as for a long text context, each tile rounds the block it reads. Once per call instead of per
   tile: 13 % of a 1280x1664 image's tower time (docs/PERFORMANCE.md). */
#define KV_PAIRS_MAX ((size_t)128 << 20)

struct attn_ctx {
    const tensor *q, *k, *v;  /* q{hd,nh,T} f32; k, v{hd,nkv,Tk} f32, f16 or q8_0, any row strides */
    tensor *out;              /* {hd,nh,T} contiguous f32 */
    float scale;
    bool causal;
    int64_t q_pos0;           /* causal: key index of query 0 */
    const int32_t *seg;       /* segments: id per token, T == Tk */
    const int64_t *seg_lo, *seg_hi; /* segments: first/last index holding each token's id */
    int64_t hd, nh, nkv, T, Tk;
    int64_t r;                /* query heads per kv head */
    int64_t nhp;              /* query heads per tile (r split into r/nhp parts) */
    int64_t qt;               /* queries per tile */
    int64_t n_tiles, n_items; /* tiles per (kv head, head part); items in all */
    int64_t n_split, split_keys; /* one tile per kv head, its keys in n_split ranges of split_keys */
    float *part;              /* split: per (kv head, range) the tile's acc {R×hd}, m {R}, l {R} */
    bool kv_direct;           /* f32 K/V whose strides are whole floats: read in place */
    bool q8_simd;             /* q8_0 K/V widened by matmul_x86.h's AVX2 dequantiser */
    bool vsoft;               /* the online softmax in AVX2 lanes (softmax_avx2) */
    bool bf16;                /* the products on bf16 pairs (not exact, AVX512-BF16, hd even) */
    bool kv_in_place;         /* f16 or q8_0 K/V read in place by decode tiles (scores_direct, pv_direct) */
    size_t kv_row_bytes;      /* in-place reading: bytes of one K/V row of hd values */
    const uint32_t *kp_all;   /* bf16 path, when it fits KV_PAIRS_MAX: every key as pairs along hd,
                                 {hd/2, Tk, nkv}, and every value as pairs of keys, {hd, tk2, nkv} */
    const uint32_t *vp_all;
    int64_t tk2;              /* pairs of keys: Tk/2 rounded up */
    int64_t ld;               /* row stride of a tile's scores: its largest R rounded up to 8 lanes */
    float *scratch;
    size_t scratch_floats;    /* per thread */
    atomic_llong next;        /* next work item (dynamic: causal tiles differ in cost) */
};

/* ---- key/value rows ---------------------------------------------------------------------------- */

static inline const char *kv_row(const tensor *t, int64_t g, int64_t j)
{
    return (const char *)t->data + g * t->nb[1] + j * t->nb[2];
}

/* Keys [j0, j0+n) of kv head g as f32 rows: in place for f32 with float-multiple strides,
   else converted into buf {n×hd} (KB rows: an L1/L2-sized tile). *ld receives the row stride
   in floats. */
static const float *kv_block(const struct attn_ctx *c, const tensor *t, int64_t g, int64_t j0, int64_t n,
                             float *buf, int64_t *ld)
{
    if (c->kv_direct) {
        *ld = (int64_t)(t->nb[2] / sizeof(float));
        return (const float *)kv_row(t, g, j0);
    }
    for (int64_t j = 0; j < n; j++) {
        const char *src = kv_row(t, g, j0 + j);
        float *dst = buf + j * c->hd;
        if (t->type == DT_F16) {
            cpu_f16_to_f32_row(dst, (const uint16_t *)(const void *)src, c->hd);
        } else if (t->type == DT_Q8_0) {
            /* hd/32 blocks: d·q per value, the same products either way */
#ifdef SEER_MM_X86
            if (c->q8_simd) {
                mm_x86_dequant(DT_Q8_0, src, dst, c->hd);
                continue;
            }
#endif
            dequantize_row(DT_Q8_0, src, dst, c->hd);
        } else {
            memcpy(dst, src, (size_t)c->hd * sizeof(float));
        }
    }
    *ld = c->hd;
    return buf;
}

/* ---- one tile ------------------------------------------------------------------------------------
   Rows ρ = tt·nh_t + hh for query t0+tt and head h0+hh. Per row: running max m, running sum l
   of exp(s − m) and acc = Σ exp(s − m)·v, rescaled by exp(m_old − m_new) when the max grows
   (the standard streaming softmax; every exponent is ≤ 0, so nothing overflows). */

struct tile_bufs {
    float *qt;   /* {hd×R}: Qᵀ·scale (GEMM path) or {R×hd}: Q·scale (dot path) */
    float *acc;  /* {R×hd} */
    float *m, *l, *corr; /* {ld}: running max and sum, and the block's rescaling factor, per row */
    float *st;   /* {KB×ld}: scores of the block, transposed, then the probabilities */
    float *kb, *vb; /* {KB×hd}: converted K/V rows */
    bool *allow; /* {KB×qt}: mask of the block per query */
    /* the bf16 path's operands, as pairs (gemm_bf16.h); empty when the path does not run */
    uint32_t *qp; /* {hd/2×ld}: Q·scale, pairs along hd, a lane per row */
    uint32_t *kp; /* {KB×hd/2}: the block's keys, pairs along hd (none when K is rounded once) */
    uint32_t *vp; /* {KB/2×hd}: the block's values, pairs of keys (likewise) */
    uint32_t *pp; /* {KB/2×ld}: the probabilities, pairs of keys, a lane per row */
};

/* Lays a tile's buffers out from `base` (NULL: only count) for c's shape and paths; returns the
   size in floats, 0 on overflow. */
static size_t tile_layout(float *base, const struct attn_ctx *c, struct tile_bufs *b)
{
    const int64_t hd = c->hd, R = c->nhp * c->qt, ld = c->ld;
    const bool bf = c->bf16, tile_pairs = c->bf16 && !c->kp_all;
    size_t n = 0, hR, kh, kq, hl;
    if (!size_mul((size_t)hd, (size_t)R, &hR) || !size_mul(KB, (size_t)hd, &kh) ||
        !size_mul(KB, (size_t)c->qt, &kq) || !size_mul((size_t)(hd / 2), (size_t)ld, &hl))
        return 0;
    float *qp, *kp, *vp, *pp; /* uint32_t arrays, laid out as floats of the same size */
    float **fp[] = {&b->qt, &b->acc, &b->m, &b->l, &b->corr, &b->st, &b->kb, &b->vb, &qp, &kp, &vp, &pp};
    size_t nf[] = {hR, hR, (size_t)ld, (size_t)ld, (size_t)ld, KB * (size_t)ld, kh, kh,
                   bf ? hl : 0, tile_pairs ? kh / 2 : 0, tile_pairs ? kh / 2 : 0, bf ? KB / 2 * (size_t)ld : 0};
    for (size_t i = 0; i < ARRAY_LEN(nf); i++) {
        *fp[i] = base ? base + n : NULL;
        if (!size_add(n, nf[i], &n))
            return 0;
    }
    b->qp = (uint32_t *)(void *)qp, b->kp = (uint32_t *)(void *)kp;
    b->vp = (uint32_t *)(void *)vp, b->pp = (uint32_t *)(void *)pp;
    b->allow = base ? (bool *)(void *)(base + n) : NULL;
    return size_add(n, kq / sizeof(float) + 1, &n) ? n : 0;
}

/* Scores for few rows (R < 4, e.g. decoding with nh == nkv): dot products along hd, so the
   vector width is used without needing 4 rows. st[j·ld + ρ] = k_j · q_ρ. */
static void scores_dot(const float *k, int64_t ldk, int64_t n, const float *q, int64_t R, int64_t hd, float *st,
                       int64_t ld)
{
    for (int64_t j = 0; j < n; j++) {
        const float *kj = k + j * ldk;
        for (int64_t rho = 0; rho < R; rho++) {
            const float *qr = q + rho * hd;
            v4f a0 = {0}, a1 = {0};
            int64_t e = 0;
            for (; e + 8 <= hd; e += 8)
                a0 += ld4(kj + e) * ld4(qr + e), a1 += ld4(kj + e + 4) * ld4(qr + e + 4);
            v4f a = a0 + a1;
            float s = (a[0] + a[1]) + (a[2] + a[3]);
            for (; e < hd; e++)
                s += kj[e] * qr[e];
            st[j * ld + rho] = s;
        }
    }
}

/* The online softmax of one key block for rows [0, R): st{n×ld} holds the scores (masked ones −∞)
   and receives the probabilities; m and l are updated and corr[ρ] = e^(m_old − m_new) is what the
   row's accumulator must be scaled by. A row that has seen no visible key keeps m = −∞, l = 0 and
   gets zeros (its corr is 0: the accumulator is zero anyway). Portable form: libm's expf. */
static void softmax_rows(float *st, int64_t ld, int64_t n, int64_t R, float *m, float *l, float *corr)
{
    for (int64_t rho = 0; rho < R; rho++) {
        float mb = -INFINITY;
        for (int64_t j = 0; j < n; j++)
            mb = MAX(mb, st[j * ld + rho]);
        const float mnew = MAX(m[rho], mb);
        if (mnew == -INFINITY) { /* nothing visible to this row yet */
            for (int64_t j = 0; j < n; j++)
                st[j * ld + rho] = 0.0f;
            corr[rho] = 0.0f;
            continue;
        }
        float sum = 0.0f;
        corr[rho] = m[rho] == -INFINITY ? 0.0f : expf(m[rho] - mnew);
        for (int64_t j = 0; j < n; j++) {
            const float s = st[j * ld + rho], p = s == -INFINITY ? 0.0f : expf(s - mnew);
            st[j * ld + rho] = p;
            sum += p;
        }
        l[rho] = l[rho] * corr[rho] + sum;
        m[rho] = mnew;
    }
}

#ifdef SEER_MM_X86
/* softmax_rows on 8 rows at a time: the scores are stored key-major (st[j·ld + ρ]), so a row group
   is one vector per key and the max and sum run down the keys with no horizontal reduction; e^x is
   vexp8's polynomial (within 3e-7 of expf). `masked`: the block has −∞ scores, which must give
   exactly 0 (vexp8 clamps to 1.2e-38). Lanes past R (up to ld) hold finite padding, never read. */
__attribute__((target("avx2,fma"))) static void softmax_avx2(float *st, int64_t ld, int64_t n, int64_t R, float *m,
                                                             float *l, float *corr, bool masked)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    for (int64_t r0 = 0; r0 < R; r0 += 8) {
        __m256 mb = ninf;
        for (int64_t j = 0; j < n; j++)
            mb = _mm256_max_ps(mb, _mm256_loadu_ps(st + j * ld + r0));
        const __m256 mo = _mm256_loadu_ps(m + r0), mn = _mm256_max_ps(mo, mb);
        /* −∞ lanes subtract 0 instead (every score there is −∞ and is masked to 0 below) */
        const __m256 sub = _mm256_and_ps(mn, _mm256_cmp_ps(mn, ninf, _CMP_NEQ_OQ));
        const __m256 cr = _mm256_and_ps(vexp8(_mm256_sub_ps(mo, sub)), _mm256_cmp_ps(mo, ninf, _CMP_NEQ_OQ));
        __m256 sum0 = _mm256_setzero_ps(), sum1 = sum0;
        int64_t j = 0;
        for (; j + 2 <= n; j += 2) { /* two independent sums hide the add latency */
            float *s0 = st + j * ld + r0, *s1 = s0 + ld;
            __m256 x0 = _mm256_loadu_ps(s0), x1 = _mm256_loadu_ps(s1);
            __m256 p0 = vexp8(_mm256_sub_ps(x0, sub)), p1 = vexp8(_mm256_sub_ps(x1, sub));
            if (masked)
                p0 = _mm256_and_ps(p0, _mm256_cmp_ps(x0, ninf, _CMP_NEQ_OQ)),
                p1 = _mm256_and_ps(p1, _mm256_cmp_ps(x1, ninf, _CMP_NEQ_OQ));
            _mm256_storeu_ps(s0, p0), _mm256_storeu_ps(s1, p1);
            sum0 = _mm256_add_ps(sum0, p0), sum1 = _mm256_add_ps(sum1, p1);
        }
        if (j < n) {
            float *s0 = st + j * ld + r0;
            __m256 x0 = _mm256_loadu_ps(s0), p0 = vexp8(_mm256_sub_ps(x0, sub));
            if (masked)
                p0 = _mm256_and_ps(p0, _mm256_cmp_ps(x0, ninf, _CMP_NEQ_OQ));
            _mm256_storeu_ps(s0, p0);
            sum0 = _mm256_add_ps(sum0, p0);
        }
        _mm256_storeu_ps(l + r0, _mm256_fmadd_ps(_mm256_loadu_ps(l + r0), cr, _mm256_add_ps(sum0, sum1)));
        _mm256_storeu_ps(m + r0, mn);
        _mm256_storeu_ps(corr + r0, cr);
    }
}
/* ---- decode tiles over an f16 or q8_0 cache --------------------------------------------------------
   A decode tile has few rows (one token's query heads of a kv head: 4 for every Qwen3.5 size), so
   widening each block of keys into an f32 buffer was not paid back: that buffer (64 keys of head
   dim 256: 64 KiB, past L1) was written and read again for 4 rows, and the scores ran in the GEMM's
   4-column remainder. These read the cache's rows where they are, widening 8 values at a time into
   registers, and fetch the keys ahead: 0.8B Q8_0, 2 threads, f16 cache, after 8,000 tokens, decode
   went from 21–23 to 27–28 tokens/s (docs/PERFORMANCE.md). */
#define KV_X86 __attribute__((target("avx2,fma,f16c")))
/* -O2 does not unroll the loops over the register tile: its sums would live on the stack */
#define UNROLL _Pragma("GCC unroll 8")

/* Values e .. e+7 (e % 8 == 0) of a K/V row as f32: IEEE halves, or Q8_0 blocks (an f16 step d
   and 32 int8 q: d·q, the product dequantize_row forms). */
KV_X86 __attribute__((always_inline)) static inline __m256 kv8(const char *row, int64_t e, bool q8)
{
    if (!q8)
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(row + 2 * e)));
    const block_q8_0 *b = (const block_q8_0 *)(const void *)row + e / QK8_0;
    const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b->qs + e % QK8_0)));
    return _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(b->d)), _mm256_cvtepi32_ps(q));
}

/* Lane i of the result = the sum of a[i]'s 8 lanes. */
KV_X86 static inline __m256 hsum8x8(const __m256 a[8])
{
    const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
    const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

/* st[j·ld + ρ] = k_j · q_ρ for keys j < n (rows ldk bytes apart, rb bytes each) and rows ρ < R (f32
   rows hd apart, hd % 8 == 0). Two keys by four rows at a time: eight independent sums, reduced
   together. Rows past R (up to the next multiple of 4, within ld) receive a copy of row R−1's
   scores. The values of the same keys (rows ldv apart) are fetched for pv_direct. */
KV_X86 __attribute__((always_inline)) static inline void scores_body(const char *k, int64_t ldk, int64_t rb,
                                                                       int64_t n, const char *v, int64_t ldv,
                                                                       const float *q, int64_t R, int64_t hd,
                                                                       float *st, int64_t ld, bool q8)
{
    for (int64_t j = 0; j < n; j += 2) {
        const char *k0 = k + j * ldk, *k1 = j + 1 < n ? k0 + ldk : k0;
        for (int64_t l = 0; l < rb; l += 64) { /* the keys 8 ahead, and this pair's values */
            _mm_prefetch(k0 + 8 * ldk + l, _MM_HINT_T0);
            _mm_prefetch(k0 + 9 * ldk + l, _MM_HINT_T0);
            _mm_prefetch(v + j * ldv + l, _MM_HINT_T0);
            _mm_prefetch(v + (j + 1) * ldv + l, _MM_HINT_T0);
        }
        for (int64_t r0 = 0; r0 < R; r0 += 4) {
            const float *qr[4];
            UNROLL
            for (int i = 0; i < 4; i++)
                qr[i] = q + MIN(r0 + i, R - 1) * hd;
            __m256 a[8];
            UNROLL
            for (int i = 0; i < 8; i++)
                a[i] = _mm256_setzero_ps();
            for (int64_t e = 0; e < hd; e += 8) {
                const __m256 x0 = kv8(k0, e, q8), x1 = kv8(k1, e, q8);
                UNROLL
                for (int i = 0; i < 4; i++) {
                    const __m256 qv = _mm256_loadu_ps(qr[i] + e);
                    a[i] = _mm256_fmadd_ps(x0, qv, a[i]);
                    a[4 + i] = _mm256_fmadd_ps(x1, qv, a[4 + i]);
                }
            }
            const __m256 s = hsum8x8(a);
            _mm_storeu_ps(st + j * ld + r0, _mm256_castps256_ps128(s));
            if (j + 1 < n)
                _mm_storeu_ps(st + (j + 1) * ld + r0, _mm256_extractf128_ps(s, 1));
        }
    }
}

KV_X86 static void scores_direct(const char *k, int64_t ldk, int64_t rb, int64_t n, const char *v, int64_t ldv,
                                 const float *q, int64_t R, int64_t hd, float *st, int64_t ld, bool q8)
{
    if (q8)
        scores_body(k, ldk, rb, n, v, ldv, q, R, hd, st, ld, true);
    else
        scores_body(k, ldk, rb, n, v, ldv, q, R, hd, st, ld, false);
}

/* acc[ρ·hd + e] += Σ_{j<n} st[j·ld + ρ]·v_j[e] for rows ρ < R, values in rows ldv bytes apart,
   hd % 8 == 0: four rows by 16 (or 8) values in registers while the keys stream past. */
KV_X86 __attribute__((always_inline)) static inline void pv_body(const float *st, int64_t ld, int64_t n,
                                                                   const char *v, int64_t ldv, int64_t R, int64_t hd,
                                                                   float *acc, bool q8)
{
    for (int64_t r0 = 0; r0 < R; r0 += 4) {
        const int64_t nr = MIN(4, R - r0);
        int64_t e = 0;
        for (; e + 16 <= hd; e += 16) {
            __m256 a[8];
            UNROLL
            for (int i = 0; i < 4; i++) {
                const float *ar = acc + MIN(r0 + i, R - 1) * hd + e;
                a[2 * i] = _mm256_loadu_ps(ar), a[2 * i + 1] = _mm256_loadu_ps(ar + 8);
            }
            for (int64_t j = 0; j < n; j++) {
                const __m256 x0 = kv8(v + j * ldv, e, q8), x1 = kv8(v + j * ldv, e + 8, q8);
                UNROLL
                for (int i = 0; i < 4; i++) {
                    const __m256 p = _mm256_broadcast_ss(st + j * ld + r0 + i);
                    a[2 * i] = _mm256_fmadd_ps(p, x0, a[2 * i]);
                    a[2 * i + 1] = _mm256_fmadd_ps(p, x1, a[2 * i + 1]);
                }
            }
            UNROLL
            for (int i = 0; i < nr; i++) {
                float *ar = acc + (r0 + i) * hd + e;
                _mm256_storeu_ps(ar, a[2 * i]), _mm256_storeu_ps(ar + 8, a[2 * i + 1]);
            }
        }
        for (; e < hd; e += 8) {
            __m256 a[4];
            UNROLL
            for (int i = 0; i < 4; i++)
                a[i] = _mm256_loadu_ps(acc + MIN(r0 + i, R - 1) * hd + e);
            for (int64_t j = 0; j < n; j++) {
                const __m256 x = kv8(v + j * ldv, e, q8);
                UNROLL
                for (int i = 0; i < 4; i++)
                    a[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(st + j * ld + r0 + i), x, a[i]);
            }
            UNROLL
            for (int i = 0; i < nr; i++)
                _mm256_storeu_ps(acc + (r0 + i) * hd + e, a[i]);
        }
    }
}

KV_X86 static void pv_direct(const float *st, int64_t ld, int64_t n, const char *v, int64_t ldv, int64_t R,
                             int64_t hd, float *acc, bool q8)
{
    if (q8)
        pv_body(st, ld, n, v, ldv, R, hd, acc, true);
    else
        pv_body(st, ld, n, v, ldv, R, hd, acc, false);
}
#endif

/* Whether every query of the tile and every key of [j0, j0+n) are in one segment (the usual case in
   the tower: one image), so the block needs no mask. */
static bool seg_block_full(const struct attn_ctx *c, int64_t t0, int64_t nq, int64_t j0, int64_t n)
{
    const int32_t id = c->seg[t0];
    for (int64_t tt = 1; tt < nq; tt++)
        if (c->seg[t0 + tt] != id)
            return false;
    for (int64_t j = 0; j < n; j++)
        if (c->seg[j0 + j] != id)
            return false;
    return true;
}

/* Keys [ka, kb) only (of those the tile's queries see); part: leave acc, m and l there unnormalised
   (a range of a split) instead of writing out. */
static void run_tile(const struct attn_ctx *c, const struct tile_bufs *b, int64_t g, int64_t h0, int64_t nh_t,
                     int64_t t0, int64_t nq, int64_t ka, int64_t kb, float *part)
{
    const int64_t hd = c->hd, R = nh_t * nq;
    const bool direct = c->kv_in_place && R <= IN_PLACE_ROWS;
    const bool dot = R < 4 && !direct, bf = c->bf16 && !dot;

    /* Q rows, pre-scaled; copied before any output is written (out may alias q, ops.h) */
    for (int64_t tt = 0; tt < nq; tt++)
        for (int64_t hh = 0; hh < nh_t; hh++) {
            const float *src = (const float *)(const void *)((const char *)c->q->data + (h0 + hh) * c->q->nb[1] +
                                                              (t0 + tt) * c->q->nb[2]);
            int64_t rho = tt * nh_t + hh;
            for (int64_t e = 0; e < hd; e++) {
                if (dot || direct)
                    b->qt[rho * hd + e] = src[e] * c->scale;
                else
                    b->qt[e * R + rho] = src[e] * c->scale;
            }
        }
    /* lanes past R are padding for the 8-row softmax: finite, so they never make a NaN */
    const int64_t ld = dot ? R : c->ld;
#ifdef SEER_MM_X86
    if (bf)
        for (int64_t p = 0; p < hd / 2; p++)
            cpu_bf16_pairs_of_rows(b->qp + p * ld, b->qt + 2 * p * R, b->qt + (2 * p + 1) * R, R);
#endif
    for (int64_t rho = 0; rho < ld; rho++)
        b->m[rho] = rho < R ? -INFINITY : 0.0f, b->l[rho] = 0.0f;
    memset(b->acc, 0, (size_t)(R * hd) * sizeof(float));
    if (ld > R)
        memset(b->st, 0, (size_t)(KB * ld) * sizeof(float));

    /* keys any query of the tile may see */
    int64_t jlo = 0, jhi;
    if (c->causal) {
        jhi = c->q_pos0 + t0 + nq; /* query t sees keys 0..q_pos0+t */
    } else {
        jlo = c->Tk, jhi = 0;
        for (int64_t tt = 0; tt < nq; tt++)
            jlo = MIN(jlo, c->seg_lo[t0 + tt]), jhi = MAX(jhi, c->seg_hi[t0 + tt] + 1);
        if (bf) /* key pairs start on even keys; the key before the segment is masked */
            jlo &= ~(int64_t)1;
    }
    jlo = MAX(jlo, ka), jhi = MIN(jhi, kb);

    for (int64_t j0 = jlo; j0 < jhi; j0 += KB) {
        int64_t n = MIN(KB, jhi - j0);
        /* which (query, key) pairs of the block are visible; a query that sees none skips it */
        bool full = c->causal ? j0 + n - 1 <= c->q_pos0 + t0 : seg_block_full(c, t0, nq, j0, n), any = full;
        for (int64_t tt = 0; tt < nq && !full; tt++)
            for (int64_t j = 0; j < n; j++) {
                bool ok = c->causal ? j0 + j <= c->q_pos0 + t0 + tt : c->seg[j0 + j] == c->seg[t0 + tt];
                b->allow[tt * KB + j] = ok;
                any |= ok;
            }
        if (!any)
            continue;

        int64_t ldk = 0, ldv = 0;
        const float *kr = (bf && c->kp_all) || direct ? NULL : kv_block(c, c->k, g, j0, n, b->kb, &ldk);
        if (direct) {
#ifdef SEER_MM_X86
            scores_direct(kv_row(c->k, g, j0), (int64_t)c->k->nb[2], (int64_t)c->kv_row_bytes, n, kv_row(c->v, g, j0),
                          (int64_t)c->v->nb[2], b->qt, R, hd, b->st, ld, c->k->type == DT_Q8_0);
#endif
        } else if (dot) {
            scores_dot(kr, ldk, n, b->qt, R, hd, b->st, ld);
#ifdef SEER_MM_X86
        } else if (bf) {
            const uint32_t *kp = c->kp_all ? c->kp_all + (g * c->Tk + j0) * (hd / 2) : b->kp;
            for (int64_t j = 0; !c->kp_all && j < n; j++)
                cpu_bf16_pairs_of_row(b->kp + j * (hd / 2), kr + j * ldk, hd);
            const struct cpu_gemm_bf16 sg = {.M = n, .N = R, .K2 = hd / 2, .A = kp, .a_rs = hd / 2, .a_cs = 1,
                                             .B = b->qp, .ldb = ld, .C = b->st, .ldc = ld};
            cpu_gemm_bf16(&sg);
#endif
        } else {
            /* Sᵀ{n×R} = K{n×hd}·(Q·scale)ᵀ{hd×R} */
            struct cpu_gemm sg = {.M = n, .N = R, .K = hd, .alpha = 1.0f, .cb = 0.0f, .A = kr, .a_rs = ldk,
                                  .a_cs = 1, .B = b->qt, .ldb = R, .C = b->st, .ldc = ld, .tri = CPU_TRI_NONE};
            cpu_gemm_f32(&sg);
        }
        for (int64_t tt = 0; tt < nq && !full; tt++)
            for (int64_t j = 0; j < n; j++)
                if (!b->allow[tt * KB + j])
                    for (int64_t hh = 0; hh < nh_t; hh++)
                        b->st[j * ld + tt * nh_t + hh] = -INFINITY;

        /* online softmax per row over this block's visible keys, then the rows' rescaling */
#ifdef SEER_MM_X86
        if (c->vsoft && !dot)
            softmax_avx2(b->st, ld, n, R, b->m, b->l, b->corr, !full);
        else
#endif
            softmax_rows(b->st, ld, n, R, b->m, b->l, b->corr);
        for (int64_t rho = 0; rho < R; rho++)
            if (b->corr[rho] != 1.0f)
                cpu_vscale(b->acc + rho * hd, b->acc + rho * hd, b->corr[rho], hd);

        /* acc{R×hd} += P{R×n}·V{n×hd}; P is st read transposed */
#ifdef SEER_MM_X86
        if (direct) {
            pv_direct(b->st, ld, n, kv_row(c->v, g, j0), (int64_t)c->v->nb[2], R, hd, b->acc,
                      c->v->type == DT_Q8_0);
            continue;
        }
#endif
        const float *vr = bf && c->vp_all ? NULL : kv_block(c, c->v, g, j0, n, b->vb, &ldv);
#ifdef SEER_MM_X86
        if (bf) { /* pairs of keys from j0 (even): an odd block's last pair has a zero probability for
                     its second key, whatever that key's value */
            for (int64_t p = 0; 2 * p < n; p++) {
                const bool two = 2 * p + 1 < n;
                if (!c->vp_all)
                    cpu_bf16_pairs_of_rows(b->vp + p * hd, vr + 2 * p * ldv, two ? vr + (2 * p + 1) * ldv : NULL, hd);
                cpu_bf16_pairs_of_rows(b->pp + p * ld, b->st + 2 * p * ld, two ? b->st + (2 * p + 1) * ld : NULL, R);
            }
            const uint32_t *vp = c->vp_all ? c->vp_all + (g * c->tk2 + j0 / 2) * hd : b->vp;
            const struct cpu_gemm_bf16 pg = {.M = R, .N = hd, .K2 = (n + 1) / 2, .A = b->pp, .a_rs = 1, .a_cs = ld,
                                             .B = vp, .ldb = hd, .C = b->acc, .ldc = hd, .acc = true};
            cpu_gemm_bf16(&pg);
            continue;
        }
#endif
        struct cpu_gemm pg = {.M = R, .N = hd, .K = n, .alpha = 1.0f, .cb = 1.0f, .A = b->st, .a_rs = 1,
                              .a_cs = ld, .B = vr, .ldb = ldv, .C = b->acc, .ldc = hd, .tri = CPU_TRI_NONE};
        cpu_gemm_f32(&pg);
    }

    if (part) {
        memcpy(part, b->acc, (size_t)(R * hd) * sizeof(float));
        memcpy(part + R * hd, b->m, (size_t)R * sizeof(float));
        memcpy(part + R * hd + R, b->l, (size_t)R * sizeof(float));
        return;
    }
    for (int64_t tt = 0; tt < nq; tt++)
        for (int64_t hh = 0; hh < nh_t; hh++) {
            int64_t rho = tt * nh_t + hh;
            float *o = (float *)c->out->data + ((t0 + tt) * c->nh + h0 + hh) * hd;
            /* every row sees at least its own key (causal: key q_pos0+t; segments: itself), so l > 0 */
            cpu_vscale(o, b->acc + rho * hd, 1.0f / b->l[rho], hd);
        }
}

/* Work item → (kv head, head part, query tile); threads take items from a shared counter
   because causal tiles near the end of the sequence cost more than early ones. */
static void attn_worker(void *p, int ith, int nth)
{
    struct attn_ctx *c = p;
    (void)nth;
    struct tile_bufs b;
    int64_t n_parts = c->r / c->nhp;
    tile_layout(c->scratch + (size_t)ith * c->scratch_floats, c, &b);
    for (;;) {
        long long it = atomic_fetch_add(&c->next, 1);
        if (it >= c->n_items)
            break;
        if (c->n_split > 1) { /* (kv head, key range): the tile of all the kv head's rows */
            const int64_t g = it / c->n_split, sp = it % c->n_split, ka = sp * c->split_keys, R = c->r * c->T;
            run_tile(c, &b, g, g * c->r, c->r, 0, c->T, ka, ka + c->split_keys,
                     c->part + (size_t)it * (size_t)(R * (c->hd + 2)));
            continue;
        }
        /* last tiles first: the longest causal rows start early and the short ones fill in */
        int64_t tile = c->n_tiles - 1 - it % c->n_tiles, rest = it / c->n_tiles;
        int64_t part = rest % n_parts, g = rest / n_parts;
        int64_t t0 = tile * c->qt;
        run_tile(c, &b, g, g * c->r + part * c->nhp, c->nhp, t0, MIN(c->qt, c->T - t0), 0, c->Tk, NULL);
    }
}

#ifdef SEER_MM_X86
/* Fills kp_all and vp_all: items are (kv head, block of KB keys), each thread converting through its
   own tile buffers. */
static void pairs_worker(void *p, int ith, int nth)
{
    struct attn_ctx *c = p;
    struct tile_bufs b;
    const int64_t hd = c->hd, nblk = (c->Tk + KB - 1) / KB;
    long long lo, hi;
    tile_layout(c->scratch + (size_t)ith * c->scratch_floats, c, &b);
    threadpool_range(c->nkv * nblk, ith, nth, &lo, &hi);
    for (long long it = lo; it < hi; it++) {
        const int64_t g = it / nblk, j0 = it % nblk * KB, n = MIN(KB, c->Tk - j0);
        int64_t ldk, ldv;
        const float *kr = kv_block(c, c->k, g, j0, n, b.kb, &ldk), *vr = kv_block(c, c->v, g, j0, n, b.vb, &ldv);
        uint32_t *kp = (uint32_t *)c->kp_all + (g * c->Tk + j0) * (hd / 2);
        uint32_t *vp = (uint32_t *)c->vp_all + (g * c->tk2 + j0 / 2) * hd;
        for (int64_t j = 0; j < n; j++)
            cpu_bf16_pairs_of_row(kp + j * (hd / 2), kr + j * ldk, hd);
        for (int64_t q = 0; 2 * q < n; q++)
            cpu_bf16_pairs_of_rows(vp + q * hd, vr + 2 * q * ldv, 2 * q + 1 < n ? vr + (2 * q + 1) * ldv : NULL, hd);
    }
}
#endif

/* Joins a split's ranges per row: with M the largest running max and w_s = e^(m_s − M) (0 for a range
   where the row saw no key), out = Σ w_s acc_s / Σ w_s l_s — the online softmax's own rescaling. */
static void combine_split(const struct attn_ctx *c)
{
    const int64_t hd = c->hd, R = c->r * c->T, stride = R * (hd + 2);
    for (int64_t g = 0; g < c->nkv; g++)
        for (int64_t rho = 0; rho < R; rho++) {
            const float *p0 = c->part + g * c->n_split * stride;
            float mx = -INFINITY, l = 0.0f;
            for (int64_t sp = 0; sp < c->n_split; sp++)
                mx = MAX(mx, p0[sp * stride + R * hd + rho]);
            const int64_t tt = rho / c->r, hh = rho % c->r;
            float *o = (float *)c->out->data + (tt * c->nh + g * c->r + hh) * hd;
            memset(o, 0, (size_t)hd * sizeof(float));
            for (int64_t sp = 0; sp < c->n_split; sp++) {
                const float *ps = p0 + sp * stride, m = ps[R * hd + rho];
                if (m == -INFINITY)
                    continue;
                const float w = expf(m - mx);
                l += w * ps[R * hd + R + rho];
                for (int64_t e = 0; e < hd; e++)
                    o[e] += w * ps[rho * hd + e];
            }
            cpu_vscale(o, o, 1.0f / l, hd); /* every row sees its own key in some range, so l > 0 */
        }
}

/* ---- segments -------------------------------------------------------------------------------- */

struct seg_pos { int32_t id; int32_t pos; };

static int seg_cmp(const void *a, const void *b)
{
    const struct seg_pos *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* lo[i]/hi[i]: first and last index whose id equals seg[i] (ids need not be contiguous runs). */
static int seg_ranges(const int32_t *seg, int64_t T, int64_t *lo, int64_t *hi)
{
    struct seg_pos *sp = seer_malloc((size_t)T * sizeof *sp);
    if (!sp)
        return seer_err(SEER_ENOMEM, "op_attention: no memory to index %lld segment ids", (long long)T);
    for (int64_t i = 0; i < T; i++)
        sp[i] = (struct seg_pos){seg[i], (int32_t)i};
    qsort(sp, (size_t)T, sizeof *sp, seg_cmp);
    for (int64_t a = 0; a < T;) {
        int64_t e = a;
        while (e + 1 < T && sp[e + 1].id == sp[a].id)
            e++;
        for (int64_t i = a; i <= e; i++)
            lo[sp[i].pos] = sp[a].pos, hi[sp[i].pos] = sp[e].pos;
        a = e + 1;
    }
    free(sp);
    return SEER_OK;
}

/* ---- entry point ----------------------------------------------------------------------------- */

int cpu_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, float scale,
                  const struct attn_mask *mask)
{
    threadpool *pool = cpu_pool(be);
    struct attn_ctx c = {.q = q, .k = k, .v = v, .out = out, .scale = scale, .causal = mask->kind == ATTN_CAUSAL,
                         .q_pos0 = mask->q_pos0, .hd = q->ne[0], .nh = q->ne[1], .T = q->ne[2],
                         .nkv = k->ne[1], .Tk = k->ne[2]};
    int64_t *ranges = NULL;
    c.r = c.nh / c.nkv;
    /* segment positions are stored as int32 */
    if (c.T > INT32_MAX || c.Tk > INT32_MAX)
        return seer_err(SEER_EINVAL, "op_attention: %lld queries / %lld keys: too many", (long long)c.T,
                        (long long)c.Tk);
    /* f32 K/V are read in place when every row starts on a float boundary (always, for views
       made by tensor_view of f32 tensors); anything else is copied row by row */
    c.kv_direct = k->type == DT_F32 && (uintptr_t)k->data % sizeof(float) == 0 &&
                  (uintptr_t)v->data % sizeof(float) == 0 && k->nb[1] % sizeof(float) == 0 &&
                  k->nb[2] % sizeof(float) == 0 && v->nb[1] % sizeof(float) == 0 && v->nb[2] % sizeof(float) == 0;
#ifdef SEER_MM_X86
    c.q8_simd = k->type == DT_Q8_0 && mm_x86_available();
    c.vsoft = mm_x86_available();
    c.bf16 = mask->bf16 && !((struct cpu_ctx *)be->ctx)->exact && c.hd % 2 == 0 && mm_avx512_bf16_available();
    /* K and V of one type, packed along hd, rows on 2-byte boundaries (a KV cache's views are) */
    c.kv_in_place = !c.bf16 && (k->type == DT_F16 || k->type == DT_Q8_0) && v->type == k->type &&
                    c.hd % (k->type == DT_Q8_0 ? QK8_0 : 8) == 0 && mm_x86_available() &&
                    dtype_row_bytes(k->type, c.hd, &c.kv_row_bytes);
    for (int i = 0; i < 2 && c.kv_in_place; i++) {
        const tensor *t = i ? v : k;
        c.kv_in_place = t->nb[0] == (size_t)dtype_info(t->type)->block_bytes && (uintptr_t)t->data % 2 == 0 &&
                        t->nb[1] % 2 == 0 && t->nb[2] % 2 == 0;
    }
#endif
    if (!c.causal) {
        c.seg = (const int32_t *)mask->seg->data;
        ranges = seer_malloc(2 * (size_t)c.T * sizeof *ranges);
        if (!ranges)
            return seer_err(SEER_ENOMEM, "op_attention: no memory for segment ranges of %lld tokens", (long long)c.T);
        int rc = seg_ranges(c.seg, c.T, ranges, ranges + c.T);
        if (rc) {
            free(ranges);
            return rc;
        }
        c.seg_lo = ranges, c.seg_hi = ranges + c.T;
    }

    /* Tiles: all r query heads of a kv head share each K/V block; split the heads only when
       there would otherwise be fewer items than threads (decoding one token). */
    int nth = threadpool_size(pool);
    bool par = cpu_parallel(be, (double)c.T * (double)c.Tk * (double)(c.nh * c.hd), CPU_PAR_MIN_WORK);
    c.nhp = c.r, c.n_split = 1;
    /* One tile per kv head (decode) over a long cache: each kv head's keys in equal ranges of at
       most SPLIT_KEYS, each range one item over all the head's rows, so threads beyond the kv heads
       share the keys rather than the rows (which would have each read all of the head's keys). The
       ranges depend on the keys only, so the result is the same on any number of threads. */
    if (c.causal && c.T * c.r <= TILE_ROWS)
        c.n_split = (c.Tk + SPLIT_KEYS - 1) / SPLIT_KEYS;
    if (c.n_split > 1) {
        c.split_keys = (c.Tk + c.n_split - 1) / c.n_split;
        c.qt = c.T, c.n_tiles = 1, c.n_items = c.nkv * c.n_split;
    }
    for (; c.n_split == 1;) {
        c.qt = MAX(1, MIN(c.T, TILE_ROWS / c.nhp));
        c.n_tiles = (c.T + c.qt - 1) / c.qt;
        c.n_items = c.nkv * (c.r / c.nhp) * c.n_tiles;
        if (!par || c.n_items >= nth || c.nhp == 1)
            break;
        int64_t d = c.nhp - 1; /* next smaller divisor of r */
        while (c.r % d)
            d--;
        c.nhp = d;
    }
    uint32_t *pairs = NULL;
#ifdef SEER_MM_X86
    size_t pb;
    c.tk2 = (c.Tk + 1) / 2;
    /* one tile per head (T ≤ TILE_ROWS) has nothing to share; out of memory, the tiles convert */
    if (c.bf16 && c.T > TILE_ROWS && size_mul((size_t)c.Tk, (size_t)(c.hd / 2), &pb) &&
        size_add(pb, (size_t)(c.tk2 * c.hd), &pb) && size_mul(pb, (size_t)c.nkv * sizeof *pairs, &pb) &&
        pb <= KV_PAIRS_MAX && (pairs = seer_malloc(pb)))
        c.kp_all = pairs, c.vp_all = pairs + c.nkv * c.Tk * (c.hd / 2);
#endif
    struct tile_bufs tb;
    c.ld = (c.nhp * c.qt + 7) / 8 * 8;
    size_t per = tile_layout(NULL, &c, &tb), total, part_floats = 0;
    /* each thread's area rounded to 64 bytes so threads do not share cache lines; then a split's parts */
    if (per == 0 || !size_align(per, 16, &c.scratch_floats) ||
        !size_mul(c.scratch_floats, par ? (size_t)nth : 1, &total) ||
        (c.n_split > 1 && !size_mul((size_t)c.n_items, (size_t)(c.r * c.T * (c.hd + 2)), &part_floats)) ||
        !size_add(total, part_floats, &total) || !size_mul(total, sizeof(float), &total)) {
        free(pairs), free(ranges);
        return seer_err(SEER_EINVAL, "op_attention: scratch size overflows (head_dim %lld)", (long long)c.hd);
    }
    c.scratch = seer_aligned_alloc(64, total);
    if (!c.scratch) {
        free(pairs), free(ranges);
        return seer_err(SEER_ENOMEM, "op_attention: no memory for %zu bytes of scratch", total);
    }
    c.part = c.scratch + c.scratch_floats * (par ? (size_t)nth : 1);
#ifdef SEER_MM_X86
    if (pairs) /* through the threads' tile buffers (kb, vb) */
        cpu_run(be, pairs_worker, &c, par);
#endif
    atomic_init(&c.next, 0);
    if (par)
        threadpool_run(pool, attn_worker, &c);
    else
        attn_worker(&c, 0, 1);
    if (c.n_split > 1)
        combine_split(&c);
    free(pairs);
    seer_aligned_free(c.scratch);
    free(ranges);
    return SEER_OK;
}
