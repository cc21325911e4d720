/* qdot_x86.c — the x86-64 kernels of qdot.h. The build baseline is x86-64-v2, so each family is
   compiled for its ISA by target attribute (the scheme of matmul_avx512.c) and handed out only
   when CPUID says the CPU has it. The kernel bodies are in qdot_x86_kern.h, included once per
   family: AVX2 sums four u8×s8 products with VPMADDUBSW (pairs into int16) + VPMADDWD (pairs of
   those into int32); AVX-512 VNNI does it in one VPDPBUSD (256-bit, EVEX: avx512vl), and adds
   int16 pair products to an int32 accumulator in one VPDPWSSD (madd16_acc). */
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
#undef sum_u8s8
#undef madd16_acc
#undef KTGT
#undef KFN

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

qdot_fn qdot_x86_kernel(enum dtype t, bool vnni)
{
    if (vnni ? !have_vnni() : !mm_x86_available())
        return NULL;
    switch (t) {
    case DT_Q8_0: return vnni ? dot_q8_0_vnni : dot_q8_0_avx2;
    case DT_Q4_0: return vnni ? dot_q4_0_vnni : dot_q4_0_avx2;
    case DT_Q4_K: return vnni ? dot_q4_K_vnni : dot_q4_K_avx2;
    case DT_Q5_K: return vnni ? dot_q5_K_vnni : dot_q5_K_avx2;
    case DT_Q6_K: return vnni ? dot_q6_K_vnni : dot_q6_K_avx2;
    default: return NULL;
    }
}

qdot_rows_fn qdot_x86_rows_kernel(enum dtype t, bool vnni)
{
    if (vnni ? !have_vnni() : !mm_x86_available())
        return NULL;
    switch (t) {
    case DT_Q8_0: return vnni ? rows_q8_0_vnni : rows_q8_0_avx2;
    case DT_Q4_K: return vnni ? rows_q4_K_vnni : rows_q4_K_avx2;
    default: return NULL;
    }
}
#endif
