/* vmath.c — SiLU, sigmoid and GELU-tanh rows (vmath.h): AVX2 + FMA lanes where the CPU has them (compiled by
   target attribute, called after mm_x86_available(), as in matmul_x86.c), libm's expf elsewhere. */
#include "core/cpu/vmath.h"

#include <math.h>
#include <string.h>

#include "core/cpu/matmul_x86.h"
#include "core/cpu/vexp.h"

#ifdef SEER_MM_X86
#include <immintrin.h>

#define V8 __attribute__((target("avx2,fma")))

enum logistic { L_SIGMOID, L_SILU, L_GELU_TANH };

/* 2·sqrt(2/pi): GELU-tanh's 0.5x(1 + tanh u), u = sqrt(2/pi)(x + 0.044715x³), is x / (1 + e^(−2u)) */
#define GELU_K2 (2.0f * 0.7978845608028654f)

/* x / (1 + e^−t) (SiLU: t = x; GELU-tanh: t = 2u) or 1 / (1 + e^−x) (sigmoid), on 8 lanes. Beyond
   the clamp e^−t is taken as infinite, as libm's expf overflows there (from −t = 88.72): the result
   is then 0 (or −0), not the ~1e-37 the clamped value would give. For −t below −87.3, 1 + e^−t is
   1 in f32 anyway. GELU in the exp form, not 1 + tanh u: for x ≲ −3, 1 + tanh u cancels to a
   handful of f32 ulps, which would leave only a few correct bits in the small negative tail. */
V8 static inline __m256 logistic8(__m256 x, enum logistic f)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 t = x;
    if (f == L_GELU_TANH)
        t = _mm256_mul_ps(_mm256_set1_ps(GELU_K2),
                          _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x), _mm256_mul_ps(x, x), x));
    const __m256 nt = _mm256_xor_ps(t, _mm256_set1_ps(-0.0f));
    const __m256 big = _mm256_cmp_ps(nt, _mm256_set1_ps(VEXP_HI), _CMP_GT_OQ);
    const __m256 e = _mm256_blendv_ps(vexp8(nt), _mm256_set1_ps(INFINITY), big);
    return _mm256_div_ps(f == L_SIGMOID ? one : x, _mm256_add_ps(one, e));
}

/* Whole groups of 8 from memory; the rest through a zero-padded group, so every element takes the
   same instructions wherever it sits in the row. */
V8 static void logistic_avx2(float *y, const float *x, int64_t n, enum logistic f)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(y + j, logistic8(_mm256_loadu_ps(x + j), f));
    if (j < n) {
        float t[8] = {0};
        memcpy(t, x + j, (size_t)(n - j) * sizeof(float));
        _mm256_storeu_ps(t, logistic8(_mm256_loadu_ps(t), f));
        memcpy(y + j, t, (size_t)(n - j) * sizeof(float));
    }
}
#endif

static void logistic_row(float *y, const float *x, int64_t n, enum logistic f)
{
#ifdef SEER_MM_X86
    if (mm_x86_available()) {
        logistic_avx2(y, x, n, f);
        return;
    }
#endif
    for (int64_t j = 0; j < n; j++) {
        const float v = x[j], t = f == L_GELU_TANH ? GELU_K2 * (v + 0.044715f * v * v * v) : v;
        y[j] = (f == L_SIGMOID ? 1.0f : v) / (1.0f + expf(-t));
    }
}

void vm_silu(float *y, const float *x, int64_t n) { logistic_row(y, x, n, L_SILU); }
void vm_sigmoid(float *y, const float *x, int64_t n) { logistic_row(y, x, n, L_SIGMOID); }
void vm_gelu_tanh(float *y, const float *x, int64_t n) { logistic_row(y, x, n, L_GELU_TANH); }
