/* gemm_bf16.c — the bf16 product of gemm_bf16.h and its operand packing, in AVX-512 with
   AVX512-BF16 (compiled by target attribute; called only after mm_avx512_bf16_available()). A block
   of up to 6 rows × 64 columns of C lives in 24 zmm accumulators; per pair p it loads the 4 zmm of
   B's row p once and multiplies them with each row's broadcast A(i,p): B's 64 columns stay in L1
   while every row of A streams past. */
#include "core/cpu/gemm_bf16.h"
#include "core/cpu/matmul_x86.h"

#ifdef SEER_MM_X86
#include <immintrin.h>

#include "core/util.h"

#define TBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define IBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"), always_inline)) static inline
#define UNROLL _Pragma("GCC unroll 8")

/* rows per block, and zmm of 16 columns per block */
#define GB_ROWS 6
#define GB_ZMM 4

static inline __mmask16 lanes(int64_t n) { return (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1); }

/* Rows [i0, i0 + nr) × columns [j0, j0 + 16·nz), the last zmm cut to the lanes in `last`. */
IBF void block(const struct cpu_gemm_bf16 *g, int64_t i0, const int nr, int64_t j0, const int nz, __mmask16 last)
{
    __m512 c[GB_ROWS][GB_ZMM];
    float *crow = g->C + i0 * g->ldc + j0;
    UNROLL
    for (int r = 0; r < nr; r++)
        UNROLL
        for (int z = 0; z < nz; z++)
            c[r][z] = g->acc ? _mm512_maskz_loadu_ps(z == nz - 1 ? last : 0xFFFF, crow + r * g->ldc + 16 * z)
                             : _mm512_setzero_ps();
    const uint32_t *a = g->A + i0 * g->a_rs, *b = g->B + j0;
    for (int64_t p = 0; p < g->K2; p++, b += g->ldb) {
        __m512bh bz[GB_ZMM];
        UNROLL
        for (int z = 0; z < nz; z++)
            bz[z] = (__m512bh)_mm512_maskz_loadu_epi32(z == nz - 1 ? last : 0xFFFF, b + 16 * z);
        UNROLL
        for (int r = 0; r < nr; r++) {
            const __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[r * g->a_rs + p * g->a_cs]);
            UNROLL
            for (int z = 0; z < nz; z++)
                c[r][z] = _mm512_dpbf16_ps(c[r][z], bz[z], av);
        }
    }
    UNROLL
    for (int r = 0; r < nr; r++)
        UNROLL
        for (int z = 0; z < nz; z++)
            _mm512_mask_storeu_ps(crow + r * g->ldc + 16 * z, z == nz - 1 ? last : 0xFFFF, c[r][z]);
}

/* An instance per row count and zmm count, so each keeps its accumulators in registers. */
#define BLOCK_NZ(nr)                                                                                      \
    switch (nz) {                                                                                         \
    case 1: block(g, i0, nr, j0, 1, last); break;                                                         \
    case 2: block(g, i0, nr, j0, 2, last); break;                                                         \
    case 3: block(g, i0, nr, j0, 3, last); break;                                                         \
    default: block(g, i0, nr, j0, 4, last); break;                                                        \
    }

TBF static void run_block(const struct cpu_gemm_bf16 *g, int64_t i0, int nr, int64_t j0, int nz, __mmask16 last)
{
    switch (nr) {
    case 1: BLOCK_NZ(1) break;
    case 2: BLOCK_NZ(2) break;
    case 3: BLOCK_NZ(3) break;
    case 4: BLOCK_NZ(4) break;
    case 5: BLOCK_NZ(5) break;
    default: BLOCK_NZ(6) break;
    }
}
#undef BLOCK_NZ

TBF void cpu_gemm_bf16(const struct cpu_gemm_bf16 *g)
{
    for (int64_t j0 = 0; j0 < g->N; j0 += 16 * GB_ZMM) {
        const int64_t nj = MIN(16 * GB_ZMM, g->N - j0);
        const int nz = (int)((nj + 15) / 16);
        for (int64_t i0 = 0; i0 < g->M; i0 += GB_ROWS)
            run_block(g, i0, (int)MIN(GB_ROWS, g->M - i0), j0, nz, lanes(nj - 16 * (nz - 1)));
    }
}

TBF void cpu_bf16_pairs_of_rows(uint32_t *dst, const float *r0, const float *r1, int64_t n)
{
    /* VCVTNE2PS2BF16 gives r0's 16 values in words 0..15 and r1's in 16..31; word 2i of the result
       takes word i, word 2i+1 takes word 16+i */
    static const uint16_t interleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                            8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i idx = _mm512_loadu_si512(interleave);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(n - i);
        const __m512 a = _mm512_maskz_loadu_ps(m, r0 + i);
        const __m512 b = r1 ? _mm512_maskz_loadu_ps(m, r1 + i) : _mm512_setzero_ps();
        _mm512_mask_storeu_epi32(dst + i, m, _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(b, a)));
    }
}

TBF void cpu_bf16_pairs_of_row(uint32_t *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i += 32) {
        const int64_t left = n - i;
        const __m512 a = _mm512_maskz_loadu_ps(lanes(left), src + i);
        const __m512 b = left > 16 ? _mm512_maskz_loadu_ps(lanes(left - 16), src + i + 16) : _mm512_setzero_ps();
        _mm512_mask_storeu_epi32(dst + i / 2, lanes(left / 2), (__m512i)_mm512_cvtne2ps_pbh(b, a));
    }
}
#endif
