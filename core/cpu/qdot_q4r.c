/* qdot_q4r.c — Q4_K and Q5_K decode products with the weight rows as vector lanes (see qdot_q4r.h).

   Why. The file's Q4_K kernels put the 256 values of a superblock along the vector lanes: per
   weight row and activation row they unpack and scale the sub-blocks, then reduce lanes to one
   number. With several activation rows (sequences decoding together) that per-pair work made
   the product compute-bound: four rows cost ~2.1× one (0.8B, 1 thread, perf: 70 % of a 4-sequence
   step in the Q4_K kernel). Here 16 weight rows are interleaved so that one 512-bit vector holds
   the same 4 values of all 16 rows: VPDPBUSD against the activation's 4 values broadcast gives 16
   rows' partial sums at once, the scales and minimums are vectors of the 16 rows (unpacked once
   per superblock for every activation row), and the results need no lane reduction.

   Layout (TL_Q4_K_R16). Per unit of 16 rows and superblock i, 2304 bytes = 16 × 144, units in
   (unit, superblock) order, so the matrix keeps its size and each thread's units are one
   sequential stream:
     d[16], dmin[16]   the rows' f16 factors
     planes[12][16]    byte p of each row's 12 packed 6-bit scales/mins (get_scale_min_k4's input)
     qs[32][64]        chunk 8g + t, bytes 4r .. 4r+3: row r's qs[32g + 4t .. 32g + 4t + 3], whose
                       low nibbles are values 64g + 4t + b and high nibbles values 64g + 32 + 4t + b
   A chunk's low nibbles meet the activations of sub-block 2g, its high nibbles those of 2g + 1.
   Q5_K (TL_Q5_K_R16; 2816 bytes = 16 × 176) has the same fields and, between planes and qs,
     qh[8][64]         chunk c, bytes 4r .. 4r+3: row r's qh[4c .. 4c+3], whose bit j is the fifth
                       bit of value 4c + b of sub-block j
   so a value is its nibble plus 16 × that bit, and the arithmetic below is the same (q_k 0..31).
   Q5_K took 18 % of a one-sequence Q4_K_M step on its file kernel (llama.cpp's mix keeps the GDN
   layers' attn_qkv in it; 0.8B, 1 thread, perf; docs/PERFORMANCE.md).

   Arithmetic, per row r, activation row x (Q8_K: d_x, qs, bsums) and superblock:
     isum_j = Σ_{k in sub-block j} q_k·x_k  (int32, exact)
     t = 0;  for g = 0..3: t = fma(isum_2g, d·sc_2g, t); t = fma(isum_2g+1, d·sc_2g+1, t)
     for j = 0..7: t = fma(−(dmin·m_j), bsum_j, t)      (bsum_j = bsums[2j] + bsums[2j+1])
     acc = fma(t, d_x, acc)
   with d·sc and dmin·m each one f32 product; acc starts at 0 and is the result. Every step is per
   lane, so a row's result does not depend on the rows beside it or on how many activation rows
   pass (tests/core/cpu/qdot_q4r.c checks this against the same steps in scalar C). It differs
   from the file layout's kernels (and llama.cpp's) in f32 rounding only. */
#include "core/cpu/qdot_q4r.h"

#include <stdlib.h>
#include <string.h>

#include "core/cpu/qdot.h"

/* A unit's superblock: Q4_K's 2304 bytes, or Q5_K's 2816 with qh between the planes and qs. */
#define HEAD_BYTES (4 * Q4R_ROWS + K_SCALE_SIZE * Q4R_ROWS)
#define QH_BYTES (8 * 64)
_Static_assert(HEAD_BYTES + 32 * 64 == Q4R_ROWS * sizeof(block_q4_K) &&
                   HEAD_BYTES + QH_BYTES + 32 * 64 == Q4R_ROWS * sizeof(block_q5_K),
               "a unit is 16 superblocks' bytes");

/* Pointers into one unit's superblock (qh NULL for Q4_K). */
typedef struct {
    uint16_t *d, *dmin;
    uint8_t (*planes)[Q4R_ROWS];
    uint8_t (*qh)[64];
    uint8_t (*qs)[64];
} r16_view;

static int64_t n_super(const tensor *w) { return w->ne[0] / QK_K; }

static r16_view view_of(char *b, bool q5)
{
    r16_view v = {(uint16_t *)(void *)b, (uint16_t *)(void *)(b + 2 * Q4R_ROWS),
                  (uint8_t(*)[Q4R_ROWS])(void *)(b + 4 * Q4R_ROWS), NULL, NULL};
    if (q5)
        v.qh = (uint8_t(*)[64])(void *)(b + HEAD_BYTES);
    v.qs = (uint8_t(*)[64])(void *)(b + HEAD_BYTES + (q5 ? QH_BYTES : 0));
    return v;
}

static r16_view unit_at(const tensor *w, int64_t u, int64_t i)
{
    const size_t bytes = (size_t)Q4R_ROWS * dtype_info(w->type)->block_bytes;
    return view_of((char *)w->data + ((size_t)u * (size_t)n_super(w) + (size_t)i) * bytes, w->type == DT_Q5_K);
}

bool q4r_layout_fits(const tensor *w)
{
    return (w->type == DT_Q4_K || w->type == DT_Q5_K) && w->layout == TL_ROWS && tensor_is_contiguous(w) &&
           w->ne[2] == 1 && w->ne[3] == 1 && w->ne[1] % Q4R_ROWS == 0;
}

bool q4r_layout(tensor *w)
{
    const int64_t nsb = n_super(w);
    const bool q5 = w->type == DT_Q5_K;
    const size_t rb = w->nb[1], unit = (size_t)Q4R_ROWS * rb, sb = (size_t)dtype_info(w->type)->block_bytes;
    char *scratch = malloc(unit);
    if (!scratch)
        return false;
    for (int64_t u = 0; u < w->ne[1] / Q4R_ROWS; u++) {
        char *dst = (char *)w->data + (size_t)u * unit; /* the same bytes */
        memcpy(scratch, dst, unit);
        for (int r = 0; r < Q4R_ROWS; r++)
            for (int64_t i = 0; i < nsb; i++) {
                /* Q5_K is Q4_K's fields with qh before qs */
                const char *b = scratch + (size_t)r * rb + (size_t)i * sb;
                const block_q4_K *b4 = (const block_q4_K *)(const void *)b;
                const block_q5_K *b5 = (const block_q5_K *)(const void *)b;
                const r16_view o = view_of(dst + (size_t)i * Q4R_ROWS * sb, q5);
                o.d[r] = b4->d, o.dmin[r] = b4->dmin;
                for (int p = 0; p < K_SCALE_SIZE; p++)
                    o.planes[p][r] = b4->scales[p];
                for (int c = 0; c < 32; c++) /* chunk 8g + t holds qs[32g + 4t ..] */
                    memcpy(&o.qs[c][4 * r], (q5 ? b5->qs : b4->qs) + 4 * c, 4);
                for (int c = 0; c < 8 && q5; c++)
                    memcpy(&o.qh[c][4 * r], b5->qh + 4 * c, 4);
            }
    }
    free(scratch);
    w->layout = q5 ? TL_Q5_K_R16 : TL_Q4_K_R16;
    return true;
}

void q4r_block(const tensor *w, int64_t r, int64_t i, void *out)
{
    const r16_view s = unit_at(w, r / Q4R_ROWS, i);
    const int lane = (int)(r % Q4R_ROWS);
    block_q4_K *b4 = out;
    block_q5_K *b5 = out;
    b4->d = s.d[lane], b4->dmin = s.dmin[lane];
    for (int p = 0; p < K_SCALE_SIZE; p++)
        b4->scales[p] = s.planes[p][lane];
    for (int c = 0; c < 32; c++)
        memcpy((s.qh ? b5->qs : b4->qs) + 4 * c, &s.qs[c][4 * lane], 4);
    for (int c = 0; c < 8 && s.qh; c++)
        memcpy(b5->qh + 4 * c, &s.qh[c][4 * lane], 4);
}

void q4r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n)
{
    for (int64_t k = 0; k < n; k += QK_K) {
        block_q5_K b; /* the larger of the two */
        q4r_block(w, r, (k0 + k) / QK_K, &b);
        dequantize_row(w->type, &b, dst + k, QK_K);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "core/cpu/matmul_x86.h"

bool q4r_ready(void)
{
    const char *off = getenv("SEER_NO_Q4K_R16");
    return (!off || !*off) && mm_avx512_available();
}

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define UNROLL _Pragma("GCC unroll 8")

/* The 16 rows' d·sc_j and dmin·m_j as f32 lanes, from the planes (get_scale_min_k4 on 16 rows). */
T512 __attribute__((always_inline)) static inline void sub_scales(const r16_view *s, int j, __m512 *dsc, __m512 *dmn)
{
    const __m128i m63 = _mm_set1_epi8(63), m15 = _mm_set1_epi8(15), m3 = _mm_set1_epi8(3);
#define PLANE(k) _mm_loadu_si128((const __m128i *)(const void *)s->planes[k])
    __m128i sc, mn;
    if (j < 4) {
        sc = _mm_and_si128(PLANE(j), m63);
        mn = _mm_and_si128(PLANE(j + 4), m63);
    } else { /* low 4 bits from byte j + 4, high 2 from the top of bytes j − 4 (scale), j (min) */
        sc = _mm_or_si128(_mm_and_si128(PLANE(j + 4), m15),
                          _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(PLANE(j - 4), 6), m3), 4));
        mn = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(PLANE(j + 4), 4), m15),
                          _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(PLANE(j), 6), m3), 4));
    }
#undef PLANE
    *dsc = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->d)),
                         _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(sc)));
    *dmn = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->dmin)),
                         _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(mn)));
}

/* Chunk c of sub-block j's values (its nibbles of qs chunk 8(j/2) + c, and for Q5_K bit j of the
   qh chunk c as the fifth bit). */
T512 __attribute__((always_inline)) static inline __m512i sub_values(const r16_view *s, int j, int c, const bool q5)
{
    const __m512i v = _mm512_loadu_si512(s->qs[8 * (j / 2) + c]);
    const __m512i lo = _mm512_and_si512(_mm512_srli_epi16(v, 4 * (j % 2)), _mm512_set1_epi8(0x0F));
    if (!q5)
        return lo;
    /* the bytes whose bit j is set get 16 added: two instructions where shifting the bit into
       place and merging it took four, which bound Q5_K at one thread (ops_bench --decode) */
    const __mmask64 high = _mm512_test_epi8_mask(_mm512_loadu_si512(s->qh[c]), _mm512_set1_epi8((char)(1 << j)));
    return _mm512_mask_add_epi8(lo, high, lo, _mm512_set1_epi8(0x10));
}

T512 void q4r_panel_sub(const tensor *w, int64_t u, int64_t i, int j, uint8_t q[8][Q4R_ROWS][4], float *d, float *m)
{
    const r16_view s = unit_at(w, u, i);
    for (int c = 0; c < 8; c++)
        _mm512_storeu_si512(q[c], sub_values(&s, j, c, s.qh != NULL));
    __m512 dsc, dmn;
    sub_scales(&s, j, &dsc, &dmn);
    _mm512_storeu_ps(d, dsc);
    _mm512_storeu_ps(m, dmn);
}

/* The header's arithmetic for nx activation rows (a constant after inlining, so the accumulators
   stay in registers and the rows' VPDPBUSD chains interleave). */
T512 __attribute__((always_inline)) static inline void unit_n(const tensor *w, int64_t u, const char *x, size_t x_rb,
                                                              float *out, size_t out_stride, const int nx, const bool q5)
{
    const int64_t nsb = n_super(w);
    const size_t unit_bytes = (size_t)Q4R_ROWS * (q5 ? sizeof(block_q5_K) : sizeof(block_q4_K));
    char *const base = (char *)w->data + (size_t)u * (size_t)nsb * unit_bytes; /* unit_at's, with q5 a constant */
    __m512 acc[Q4R_MAX_X];
    UNROLL
    for (int n = 0; n < nx; n++)
        acc[n] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nsb; i++) {
        const r16_view s = view_of(base + (size_t)i * unit_bytes, q5);
        /* No software prefetch: a thread's units are one sequential stream, which the hardware
           prefetcher follows. The unit two ahead into L1 had helped a little once (10.1 → 10.6
           GB/s for one row); on this project's AVX-512 VM it cost a quarter: Q4_K 23 against 31,
           Q5_K 22 against 25 GB/s (ops_bench --decode, alternating; docs/PERFORMANCE.md, "Decode
           products: one stream per thread, no software prefetch"). */
        __m512 dsc[8], dmn[8], t[Q4R_MAX_X];
        UNROLL
        for (int j = 0; j < 8; j++)
            sub_scales(&s, j, &dsc[j], &dmn[j]);
        UNROLL
        for (int n = 0; n < nx; n++)
            t[n] = _mm512_setzero_ps();
        for (int g = 0; g < 4; g++) {
            __m512i a0[Q4R_MAX_X], a1[Q4R_MAX_X];
            UNROLL
            for (int n = 0; n < nx; n++)
                a0[n] = a1[n] = _mm512_setzero_si512();
            UNROLL
            for (int c = 0; c < 8; c++) {
                const __m512i lo = sub_values(&s, 2 * g, c, q5), hi = sub_values(&s, 2 * g + 1, c, q5);
                UNROLL
                for (int n = 0; n < nx; n++) {
                    const block_q8k *xb = (const block_q8k *)(const void *)(x + (size_t)n * x_rb) + i;
                    int32_t q0, q1;
                    memcpy(&q0, xb->qs + 64 * g + 4 * c, 4);
                    memcpy(&q1, xb->qs + 64 * g + 32 + 4 * c, 4);
                    a0[n] = _mm512_dpbusd_epi32(a0[n], lo, _mm512_set1_epi32(q0));
                    a1[n] = _mm512_dpbusd_epi32(a1[n], hi, _mm512_set1_epi32(q1));
                }
            }
            UNROLL
            for (int n = 0; n < nx; n++) {
                t[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a0[n]), dsc[2 * g], t[n]);
                t[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1[n]), dsc[2 * g + 1], t[n]);
            }
        }
        UNROLL
        for (int n = 0; n < nx; n++) {
            const block_q8k *xb = (const block_q8k *)(const void *)(x + (size_t)n * x_rb) + i;
            for (int j = 0; j < 8; j++)
                t[n] = _mm512_fnmadd_ps(dmn[j], _mm512_set1_ps((float)(xb->bsums[2 * j] + xb->bsums[2 * j + 1])), t[n]);
            acc[n] = _mm512_fmadd_ps(t[n], _mm512_set1_ps(xb->d), acc[n]);
        }
    }
    UNROLL
    for (int n = 0; n < nx; n++)
        _mm512_storeu_ps(out + (size_t)n * out_stride, acc[n]);
}

#define Q4R_CASES(q5)                                                                                      \
    switch (nx) {                                                                                          \
    case 1: unit_n(w, u, xc, x_rb, out, out_stride, 1, q5); break;                                        \
    case 2: unit_n(w, u, xc, x_rb, out, out_stride, 2, q5); break;                                        \
    case 3: unit_n(w, u, xc, x_rb, out, out_stride, 3, q5); break;                                        \
    case 4: unit_n(w, u, xc, x_rb, out, out_stride, 4, q5); break;                                        \
    case 5: unit_n(w, u, xc, x_rb, out, out_stride, 5, q5); break;                                        \
    case 6: unit_n(w, u, xc, x_rb, out, out_stride, 6, q5); break;                                        \
    case 7: unit_n(w, u, xc, x_rb, out, out_stride, 7, q5); break;                                        \
    default: unit_n(w, u, xc, x_rb, out, out_stride, 8, q5); break;                                       \
    }

T512 void q4r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    const char *xc = x;
    if (w->type == DT_Q5_K) {
        Q4R_CASES(true)
    } else {
        Q4R_CASES(false)
    }
}
#undef Q4R_CASES
#else
bool q4r_ready(void) { return false; }
void q4r_panel_sub(const tensor *w, int64_t u, int64_t i, int j, uint8_t q[8][Q4R_ROWS][4], float *d, float *m)
{
    (void)w, (void)u, (void)i, (void)j, (void)q, (void)d, (void)m;
}
/* unreachable: no matrix takes the layout where q4r_ready() is false */
void q4r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    (void)w, (void)u, (void)x, (void)x_rb, (void)nx, (void)out, (void)out_stride;
}
#endif
