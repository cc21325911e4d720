/* vexp.h — e^x on 8 f32 lanes (AVX2 + FMA) and 16 (AVX-512F), inline for the loops that need it in
   registers: the SiLU/sigmoid/GELU rows (vmath.c) and attention's online softmax (attention.c). The
   callers compile them into functions with the same target attribute and call those only after a
   CPUID check (mm_x86_available(), mm_avx512_available()).

   x = n·ln2 + r with n = round(x·log2 e) and |r| ≤ ln2/2; ln2 is split in two (0.693359375 has few
   mantissa bits, so n times it is exact) to keep r accurate, e^r is the degree-6 polynomial of
   Cephes' expf (below 2e-7 relative on that interval), and 2^n is written into the exponent field.
   Relative error against expf: at most 3e-7 on [−87.3, 88.376] (tests/core/cpu/vmath.c checks it
   over that whole range, which covers the softmax's s − max ≤ 0 and GELU's −2u). x is clamped to
   that interval so 2^n stays a normal number: below it the result is e^−87.3 ≈ 1.2e-38 rather than
   a denormal or 0, above it e^88.376; callers that need 0 or ∞ there mask it themselves. */
#ifndef SEER_CORE_CPU_VEXP_H
#define SEER_CORE_CPU_VEXP_H

#include "core/cpu/matmul_x86.h"

#ifdef SEER_MM_X86
#include <immintrin.h>

/* The largest x with round(x·log2 e) ≤ 127, and the lower clamp. */
#define VEXP_HI 88.376f
#define VEXP_LO -87.3f

__attribute__((target("avx2,fma"))) static inline __m256 vexp8(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(VEXP_LO)), _mm256_set1_ps(VEXP_HI));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* The same steps on 16 lanes: the same polynomial, so the same values as vexp8 lane for lane. */
__attribute__((target("avx512f"))) static inline __m512 vexp16(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(VEXP_LO)), _mm512_set1_ps(VEXP_HI));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}
#endif

#endif
