/* vmath.c — SiLU and sigmoid rows (vmath.h): AVX2 + FMA lanes where the CPU has them (compiled by
   target attribute, called after mm_x86_available(), as in matmul_x86.c), libm's expf elsewhere. */
#include "core/cpu/vmath.h"

#include <math.h>
#include <string.h>

#include "core/cpu/matmul_x86.h"

#ifdef SEER_MM_X86
#include <immintrin.h>

#define V8 __attribute__((target("avx2,fma")))

/* The largest x with round(x·log2 e) ≤ 127. */
#define EXP_HI 88.376f

/* e^x, x = n·ln2 + r with n = round(x·log2 e) and |r| ≤ ln2/2; ln2 is split in two (0.693359375
   has few mantissa bits, so n times it is exact) to keep r accurate, e^r is the degree-6
   polynomial of Cephes' expf (relative error below 2e-7 on that interval), and 2^n is written
   into the exponent field. x is clamped to [−87.3, EXP_HI] so that 2^n stays a normal number;
   logistic8 takes care of the range beyond. */
V8 static inline __m256 exp8(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(EXP_HI));
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

/* silu ? x / (1 + e^−x) : 1 / (1 + e^−x), on 8 lanes. Beyond the clamp e^−x is taken as
   infinite, as libm's expf overflows there (from −x = 88.72): the result is then 0 (or −0), not
   the ~1e-37 the clamped value would give. For −x below −87.3, 1 + e^−x is 1 in f32 anyway. */
V8 static inline __m256 logistic8(__m256 x, int silu)
{
    const __m256 one = _mm256_set1_ps(1.0f), nx = _mm256_xor_ps(x, _mm256_set1_ps(-0.0f));
    const __m256 big = _mm256_cmp_ps(nx, _mm256_set1_ps(EXP_HI), _CMP_GT_OQ);
    const __m256 e = _mm256_blendv_ps(exp8(nx), _mm256_set1_ps(INFINITY), big);
    return _mm256_div_ps(silu ? x : one, _mm256_add_ps(one, e));
}

/* Whole groups of 8 from memory; the rest through a zero-padded group, so every element takes the
   same instructions wherever it sits in the row. */
V8 static void logistic_avx2(float *y, const float *x, int64_t n, int silu)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(y + j, logistic8(_mm256_loadu_ps(x + j), silu));
    if (j < n) {
        float t[8] = {0};
        memcpy(t, x + j, (size_t)(n - j) * sizeof(float));
        _mm256_storeu_ps(t, logistic8(_mm256_loadu_ps(t), silu));
        memcpy(y + j, t, (size_t)(n - j) * sizeof(float));
    }
}
#endif

static void logistic_row(float *y, const float *x, int64_t n, int silu)
{
#ifdef SEER_MM_X86
    if (mm_x86_available()) {
        logistic_avx2(y, x, n, silu);
        return;
    }
#endif
    for (int64_t j = 0; j < n; j++)
        y[j] = (silu ? x[j] : 1.0f) / (1.0f + expf(-x[j]));
}

void vm_silu(float *y, const float *x, int64_t n) { logistic_row(y, x, n, 1); }
void vm_sigmoid(float *y, const float *x, int64_t n) { logistic_row(y, x, n, 0); }
