/* qdot_x86.c — the x86-64 kernels of qdot.h. The build baseline is x86-64-v2, so each family is
   compiled for its ISA by target attribute (the scheme of matmul_avx512.c) and handed out only
   when CPUID says the CPU has it. The kernel bodies are in qdot_x86_kern.h, included once per
   family: AVX2 sums four u8×s8 products with VPMADDUBSW (pairs into int16) + VPMADDWD (pairs of
   those into int32); AVX-512 VNNI does it in one VPDPBUSD (256-bit, EVEX: avx512vl), and adds
   int16 pair products to an int32 accumulator in one VPDPWSSD (madd16_acc). Q8_0 and Q4_K also
   have 512-bit kernels for the VNNI family, below. */
#include "core/cpu/qdot.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#include "core/cpu/matmul_x86.h"
#include "core/quant.h"

/* ---- AVX2 ---------------------------------------------------------------------------------- */
#define KTGT __attribute__((target("avx2,fma,f16c")))
#define KFN(name) name##_avx2
KTGT __attribute__((always_inline)) static inline __m256i sum_u8s8(__m256i u, __m256i s)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
/* acc + pairs of int16 products summed into int32 */
KTGT __attribute__((always_inline)) static inline __m256i madd16_acc(__m256i acc, __m256i a, __m256i b)
{
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}
#include "core/cpu/qdot_x86_kern.h"
#undef sum_u8s8
#undef madd16_acc
#undef KTGT
#undef KFN

/* ---- AVX-512 VNNI --------------------------------------------------------------------------- */
#define KTGT __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))
#define KFN(name) name##_vnni
#define sum_u8s8 sum_u8s8_vnni
#define madd16_acc madd16_acc_vnni
#define QDOT_NO_Q8_0 /* Q8_0 has its 512-bit kernel below */
KTGT __attribute__((always_inline)) static inline __m256i sum_u8s8_vnni(__m256i u, __m256i s)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
}
/* the same in one VPDPWSSD */
KTGT __attribute__((always_inline)) static inline __m256i madd16_acc_vnni(__m256i acc, __m256i a, __m256i b)
{
    return _mm256_dpwssd_epi32(acc, a, b);
}
#include "core/cpu/qdot_x86_kern.h"
#undef QDOT_NO_Q8_0
#undef sum_u8s8
#undef madd16_acc
#undef KTGT
#undef KFN

/* rows_q4_K with 512-bit vectors (AVX-512 BW + VNNI): a 64-value group's low and high nibbles
   are one zmm, paired with the group's 64 contiguous activations, so each row takes a superblock
   in 4 VPMADDUBSW + 4 VPDPWSSD instead of 8 + 8 (several rows make this kernel compute-bound:
   the weights are read once, the arithmetic is per row). Folding the zmm's halves gives exactly
   the int32 lanes of the 256-bit kernel (integer sums in another order), so each result is
   dot_q4_K's bit for bit. */
#define KTGT512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
KTGT512 __attribute__((always_inline)) static inline void rows_q4_K_n_zmm(const void *w, const char *xv, size_t x_rb,
                                                                           int64_t nb, float *out, const int nx)
{
    const block_q4_K *b = w;
    const __m512i m4 = _mm512_set1_epi8(0xF);
    __m256 acc[QDOT_MAX_ROWS];
    __m128 accm[QDOT_MAX_ROWS];
    for (int r = 0; r < nx; r++)
        acc[r] = _mm256_setzero_ps(), accm[r] = _mm_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        /* the 8 six-bit scales into int16 lanes 0..7 and the 8 mins into lanes 8..15, as dot_q4_K */
        const __m256i sm = scales_mins_k4_vnni(b[i].scales);
        const __m128i mins = _mm256_extracti128_si256(sm, 1);
        const __m512i scales = _mm512_broadcast_i32x4(_mm256_castsi256_si128(sm));
        const float d = _cvtsh_ss(b[i].d), dmin = _cvtsh_ss(b[i].dmin);
        __m512i q[4], sc[4];
        for (int g = 0; g < 4; g++) {
            /* low half: sub-block 2g's scale in every int16 lane; high half: sub-block 2g+1's */
            const __m512i idx = _mm512_inserti64x4(_mm512_set1_epi16((short)((4 * g + 1) << 8 | 4 * g)),
                                                   _mm256_set1_epi16((short)((4 * g + 3) << 8 | (4 * g + 2))), 1);
            sc[g] = _mm512_shuffle_epi8(scales, idx);
            const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)(b[i].qs + 32 * g)));
            /* low nibbles in the low half, high nibbles in the high half */
            q[g] = _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), m4);
        }
        for (int r = 0; r < nx; r++) {
            const block_q8k *x = (const block_q8k *)(const void *)(xv + (size_t)r * x_rb) + i;
            const __m256i bs = _mm256_loadu_si256((const __m256i *)(const void *)x->bsums);
            const __m128i pair = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
            accm[r] = _mm_fmadd_ps(_mm_set1_ps(dmin * x->d), _mm_cvtepi32_ps(_mm_madd_epi16(mins, pair)), accm[r]);
            __m512i sumi = _mm512_setzero_si512();
            for (int g = 0; g < 4; g++)
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(q[g], _mm512_loadu_si512(x->qs + 64 * g)), sc[g]);
            const __m256i s8 = _mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1));
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s8), _mm256_set1_ps(d * x->d), acc[r]);
        }
    }
    for (int r = 0; r < nx; r++) {
        __m128 m = _mm_add_ps(accm[r], _mm_movehl_ps(accm[r], accm[r]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[r] = hsum_vnni(acc[r]) - _mm_cvtss_f32(m);
    }
}

KTGT512 static void rows_q4_K_zmm(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: rows_q4_K_n_zmm(w, x, x_rb, nb, out, 1); break;
    case 2: rows_q4_K_n_zmm(w, x, x_rb, nb, out, 2); break;
    case 3: rows_q4_K_n_zmm(w, x, x_rb, nb, out, 3); break;
    default: rows_q4_K_n_zmm(w, x, x_rb, nb, out, 4); break;
    }
}

/* Q8_0 with 512-bit vectors (AVX-512 VNNI): blocks j and j+1 in one zmm, the low half block j's
   8 int32 lanes, the high half block j+1's, so the zmm accumulator is the 256-bit kernels' acc0
   (even blocks) and acc1 (odd blocks) side by side, updated by the same operations: the result is
   dot_q8_0_avx2's bit for bit. Per pair of blocks and row that leaves one VPDPBUSD (w + 128 against
   x, the lanes starting at −128·Σx, qdot.h), a convert, a permute of the scale products and a
   multiply-add; with 4 rows the 256-bit kernel was bound by this arithmetic, not by the weights. */
KTGT512 __attribute__((always_inline)) static inline void rows_q8_0_n_zmm(const void *w, const char *xv, size_t x_rb,
                                                                           int64_t nb, float *out, const int nx)
{
    const block_q8_0 *b = w;
    const __m512i off = _mm512_set1_epi8((char)0x80);
    const float *xd[QDOT_MAX_ROWS];
    const int32_t *xc[QDOT_MAX_ROWS];
    const int8_t *xq[QDOT_MAX_ROWS];
    __m512 acc[QDOT_MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++) {
        xd[r] = (const float *)(const void *)((const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + nb);
        xc[r] = (const int32_t *)(const void *)(xd[r] + nb);
        xq[r] = (const int8_t *)(const void *)(xc[r] + 8 * nb);
        acc[r] = _mm512_setzero_ps();
    }
    int64_t j = 0;
    for (; j + 8 <= nb; j += 8) {
        const __m256 wd = _mm256_cvtph_ps(_mm_set_epi16((short)b[j + 7].d, (short)b[j + 6].d, (short)b[j + 5].d,
                                                        (short)b[j + 4].d, (short)b[j + 3].d, (short)b[j + 2].d,
                                                        (short)b[j + 1].d, (short)b[j].d));
        __m512 S[QDOT_MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
            S[r] = _mm512_castps256_ps512(_mm256_mul_ps(wd, _mm256_loadu_ps(xd[r] + j)));
#pragma GCC unroll 1
        for (int k = 0; k < 8; k += 2) {
            q8_ahead_vnni(&b[j + k]);
            const __m512i wz = _mm512_inserti64x4(
                _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)b[j + k].qs)),
                _mm256_loadu_si256((const __m256i *)(const void *)b[j + k + 1].qs), 1);
            const __m512i wx = _mm512_xor_si512(wz, off);
            /* lanes 0..7 take scale product k, lanes 8..15 product k + 1 */
            const __m512i idx = _mm512_set_epi32(k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k, k, k, k, k,
                                                 k, k, k);
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++) {
                const __m512i isum = _mm512_dpbusd_epi32(_mm512_loadu_si512(xc[r] + 8 * (j + k)), wx,
                                                         _mm512_loadu_si512(xq[r] + 32 * (j + k)));
                acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_permutexvar_ps(idx, S[r]), acc[r]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++) {
        __m256 lo = _mm512_castps512_ps256(acc[r]), hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r]), 1));
        for (int64_t t = j; t < nb; t++) { /* the last nb % 8 blocks one at a time, each into its half */
            const __m256i wq = _mm256_loadu_si256((const __m256i *)(const void *)b[t].qs);
            const __m256i isum = _mm256_dpbusd_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(xc[r] + 8 * t)),
                                                     _mm256_xor_si256(wq, _mm512_castsi512_si256(off)),
                                                     _mm256_loadu_si256((const __m256i *)(const void *)(xq[r] + 32 * t)));
            const __m256 s = _mm256_set1_ps(_cvtsh_ss(b[t].d) * xd[r][t]);
            if (t % 2)
                hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), s, hi);
            else
                lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), s, lo);
        }
        out[r] = hsum_vnni(_mm256_add_ps(lo, hi));
    }
}

KTGT512 static void rows_q8_0_zmm(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: rows_q8_0_n_zmm(w, x, x_rb, nb, out, 1); break;
    case 2: rows_q8_0_n_zmm(w, x, x_rb, nb, out, 2); break;
    case 3: rows_q8_0_n_zmm(w, x, x_rb, nb, out, 3); break;
    default: rows_q8_0_n_zmm(w, x, x_rb, nb, out, 4); break;
    }
}

/* One row: the same kernel, so a sequence alone and in a batch get the same bits. */
KTGT512 static float dot_q8_0_zmm(const void *w, const void *x, int64_t nb)
{
    float out;
    rows_q8_0_n_zmm(w, x, 0, nb, &out, 1);
    return out;
}

/* lo in lanes 0..7, hi in lanes 8..15 (a pair of blocks' scale products; F has no 32x8 insert) */
KTGT512 __attribute__((always_inline)) static inline __m512 halves_ps(float lo, float hi)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(lo)), _mm256_castps_pd(_mm256_set1_ps(hi)), 1));
}

/* Q6_K with 512-bit vectors (AVX-512 BW + VNNI): the 32-value blocks 2p and 2p+1 of a superblock in
   one zmm — the low nibbles of 64 contiguous ql bytes are blocks 4h and 4h+1, their high nibbles
   4h+2 and 4h+3, each with its two qh bits shifted per half (VPSRLVW) — so a pair of blocks and a
   row cost one VPDPBUSD (x + 128 against q, the lanes starting at −128·Σq, computed once per
   superblock for every row), a convert and a multiply-add by the scale products (d·x_d)·s, the 16
   six-bit scales permuted into lanes once per superblock. The 256-bit kernel (qdot_x86_kern.h)
   spent half again per block assembling its two scale products (0.8B Q4_K_M, 1 thread: the Q6_K
   head took 44 % of a decode step there, against a third of llama.cpp's shorter step). Its own
   order of f32 sums: rows and one row share this body, so they agree bit for bit. */
KTGT512 __attribute__((always_inline)) static inline void rows_q6_K_n_zmm(const void *w, const char *xv, size_t x_rb,
                                                                           int64_t nb, float *out, const int nx)
{
    const block_q6_K *b = w;
    const __m512i m4 = _mm512_set1_epi8(0xF), m3 = _mm512_set1_epi8(3), c32 = _mm512_set1_epi8(32);
    const __m512i u128 = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    /* qh's bits for the low half's block and the high half's: shifts 0 and 2 (low nibbles), 4 and 6 */
    const __m512i shift[2] = {_mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),
                              _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1)};
    __m512 acc[QDOT_MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const float d = _cvtsh_ss(b[i].d);
        const __m128i s8 = _mm_loadu_si128((const __m128i *)(const void *)b[i].scales);
        const __m512 scf = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(s8));
        __m512i q[4], base[4];
        __m512 sc[4];
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m512i ql = _mm512_loadu_si512(b[i].ql + 64 * h);
            const __m256i qh32 = _mm256_loadu_si256((const __m256i *)(const void *)(b[i].qh + 32 * h));
            const __m512i qh = _mm512_broadcast_i64x4(qh32);
#pragma GCC unroll 2
            for (int hi = 0; hi < 2; hi++) {
                const int p = 2 * h + hi;
                const __m512i lo = _mm512_and_si512(hi ? _mm512_srli_epi16(ql, 4) : ql, m4);
                const __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(qh, shift[hi]), m3);
                q[p] = _mm512_sub_epi8(_mm512_or_si512(lo, _mm512_slli_epi16(hb, 4)), c32);
                base[p] = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, u128, q[p]));
                /* lanes 4j..4j+3 hold values 16j..16j+15 of the pair: scale 4p + j */
                sc[p] = _mm512_permutexvar_ps(_mm512_set_epi32(4 * p + 3, 4 * p + 3, 4 * p + 3, 4 * p + 3, 4 * p + 2,
                                                               4 * p + 2, 4 * p + 2, 4 * p + 2, 4 * p + 1, 4 * p + 1,
                                                               4 * p + 1, 4 * p + 1, 4 * p, 4 * p, 4 * p, 4 * p),
                                              scf);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < nx; r++) {
            const block_q8x *x = (const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + 8 * i;
#pragma GCC unroll 4
            for (int p = 0; p < 4; p++) {
                const __m512i xz = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)x[2 * p].qs)),
                    _mm256_loadu_si256((const __m256i *)(const void *)x[2 * p + 1].qs), 1);
                const __m512i isum = _mm512_dpbusd_epi32(base[p], _mm512_xor_si512(xz, u128), q[p]);
                const __m512 dx = halves_ps(d * x[2 * p].d, d * x[2 * p + 1].d);
                acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dx, sc[p]), acc[r]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        out[r] = _mm512_reduce_add_ps(acc[r]);
}

KTGT512 static void rows_q6_K_zmm(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: rows_q6_K_n_zmm(w, x, x_rb, nb, out, 1); break;
    case 2: rows_q6_K_n_zmm(w, x, x_rb, nb, out, 2); break;
    case 3: rows_q6_K_n_zmm(w, x, x_rb, nb, out, 3); break;
    default: rows_q6_K_n_zmm(w, x, x_rb, nb, out, 4); break;
    }
}

KTGT512 static float dot_q6_K_zmm(const void *w, const void *x, int64_t nb)
{
    float out;
    rows_q6_K_n_zmm(w, x, 0, nb, &out, 1);
    return out;
}

/* Q5_K with 512-bit vectors (AVX-512 BW + VNNI): sub-blocks 2g and 2g+1 — the low and high nibbles
   of the same 32 qs bytes, with bits 2g and 2g+1 of qh — in one zmm against the two blocks'
   activations, one VPDPBUSD per pair and row; the zmm accumulator is the 256-bit kernel's even and
   odd accumulators side by side, and the mins are summed as there. Rows and one row share this
   body, so they agree bit for bit. */
KTGT512 __attribute__((always_inline)) static inline void rows_q5_K_n_zmm(const void *w, const char *xv, size_t x_rb,
                                                                           int64_t nb, float *out, const int nx)
{
    const block_q5_K *b = w;
    const __m512i m4 = _mm512_set1_epi8(0xF), one = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    __m512 acc[QDOT_MAX_ROWS];
    float mins[QDOT_MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        acc[r] = _mm512_setzero_ps(), mins[r] = 0;
    for (int64_t i = 0; i < nb / 8; i++) {
        float sc[8], mn[8];
        k_scales_vnni(b[i].scales, _cvtsh_ss(b[i].d), _cvtsh_ss(b[i].dmin), sc, mn);
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)b[i].qh));
        __m512i u[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            const __m256i qs = _mm256_loadu_si256((const __m256i *)(const void *)(b[i].qs + 32 * g));
            const __m512i v = _mm512_broadcast_i64x4(qs);
            /* low half: the low nibbles and qh bit 2g; high half: the high nibbles and bit 2g + 1 */
            const __m512i sh =
                _mm512_inserti64x4(_mm512_set1_epi16((short)(2 * g)), _mm256_set1_epi16((short)(2 * g + 1)), 1);
            const __m512i h = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, sh), one), 4);
            u[g] = _mm512_or_si512(_mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), m4), h);
        }
#pragma GCC unroll 4
        for (int r = 0; r < nx; r++) {
            const block_q8x *x = (const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + 8 * i;
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++) {
                const __m512i xz = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)x[2 * g].qs)),
                    _mm256_loadu_si256((const __m256i *)(const void *)x[2 * g + 1].qs), 1);
                const __m512 s = halves_ps(sc[2 * g] * x[2 * g].d, sc[2 * g + 1] * x[2 * g + 1].d);
                acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(zero, u[g], xz)), s, acc[r]);
                mins[r] += mn[2 * g] * x[2 * g].s + mn[2 * g + 1] * x[2 * g + 1].s;
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        out[r] = _mm512_reduce_add_ps(acc[r]) - mins[r];
}

KTGT512 static void rows_q5_K_zmm(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: rows_q5_K_n_zmm(w, x, x_rb, nb, out, 1); break;
    case 2: rows_q5_K_n_zmm(w, x, x_rb, nb, out, 2); break;
    case 3: rows_q5_K_n_zmm(w, x, x_rb, nb, out, 3); break;
    default: rows_q5_K_n_zmm(w, x, x_rb, nb, out, 4); break;
    }
}

KTGT512 static float dot_q5_K_zmm(const void *w, const void *x, int64_t nb)
{
    float out;
    rows_q5_K_n_zmm(w, x, 0, nb, &out, 1);
    return out;
}

/* ---- Q8_K rounding ------------------------------------------------------------------------------ */

/* qdot_quantize_q8k's arithmetic on 8 lanes, to the bit: the step from the first value of largest
   magnitude (NaNs skipped, as the scalar comparison does), the same product rounded to nearest
   even, exact integer sums. A 4-sequence Q4_K decode step rounded its activations one value at a
   time on the caller's thread, 5 % of that thread's time while the other waited. */
__attribute__((target("avx2,fma"))) void qdot_quantize_q8k_avx2(const float *x, block_q8k *out, int64_t n)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); /* undoes the packs' lane order */
    for (int64_t b = 0; b < n / 256; b++) {
        const float *v = x + b * 256;
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < 256; i += 8) /* max(a, b) returns b where a is NaN */
            m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(v + i)), m);
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h);
        memset(&out[b], 0, sizeof out[b]);
        if (amax == 0)
            continue;
        float max = 0;
        for (int i = 0; i < 256; i += 8) {
            const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(v + i));
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                max = v[i + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 is = _mm256_set1_ps(iscale);
        for (int i = 0; i < 256; i += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; k++) {
                const __m256 r = _mm256_round_ps(_mm256_mul_ps(is, _mm256_loadu_ps(v + i + 8 * k)),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(r), _mm256_set1_epi32(127));
            }
            const __m256i h2 = _mm256_hadd_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
            const __m256i h4 = _mm256_hadd_epi32(h2, h2);
            const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h4), _mm256_extracti128_si256(h4, 1));
            out[b].bsums[i / 16] = (int16_t)_mm_cvtsi128_si32(s);
            out[b].bsums[i / 16 + 1] = (int16_t)_mm_extract_epi32(s, 1);
            const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            _mm256_storeu_si256((__m256i *)(void *)(out[b].qs + i), _mm256_permutevar8x32_epi32(p, perm));
        }
        out[b].d = 1 / iscale;
    }
}

/* ---- choice ----------------------------------------------------------------------------------- */

static bool have_vnni(void)
{
    static atomic_int state; /* 0 unknown, 1 no, 2 yes */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        s = mm_x86_available() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512vnni")
                ? 2
                : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

static bool have_bw(void)
{
    static atomic_int state; /* 0 unknown, 1 no, 2 yes */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        s = have_vnni() && __builtin_cpu_supports("avx512bw") ? 2 : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

qdot_fn qdot_x86_kernel(enum dtype t, bool vnni)
{
    if (vnni ? !have_vnni() : !mm_x86_available())
        return NULL;
    switch (t) {
    case DT_Q8_0: return vnni ? dot_q8_0_zmm : dot_q8_0_avx2;
    case DT_Q4_0: return vnni ? dot_q4_0_vnni : dot_q4_0_avx2;
    case DT_Q4_K: return vnni ? dot_q4_K_vnni : dot_q4_K_avx2;
    case DT_Q5_K: return vnni ? (have_bw() ? dot_q5_K_zmm : dot_q5_K_vnni) : dot_q5_K_avx2;
    case DT_Q6_K: return vnni ? (have_bw() ? dot_q6_K_zmm : dot_q6_K_vnni) : dot_q6_K_avx2;
    default: return NULL;
    }
}

qdot_rows_fn qdot_x86_rows_kernel(enum dtype t, bool vnni)
{
    if (vnni ? !have_vnni() : !mm_x86_available())
        return NULL;
    switch (t) {
    case DT_Q8_0: return vnni ? rows_q8_0_zmm : rows_q8_0_avx2;
    case DT_Q4_K: return vnni ? (have_bw() ? rows_q4_K_zmm : rows_q4_K_vnni) : rows_q4_K_avx2;
    case DT_Q5_K: return vnni ? (have_bw() ? rows_q5_K_zmm : rows_q5_K_vnni) : rows_q5_K_avx2;
    case DT_Q6_K: return vnni ? (have_bw() ? rows_q6_K_zmm : rows_q6_K_vnni) : rows_q6_K_avx2;
    default: return NULL;
    }
}
#endif
