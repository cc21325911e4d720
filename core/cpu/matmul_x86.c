/* matmul_x86.c — AVX2+FMA+F16C kernels of matmul_x86.h: fused dequantise-and-dot for decode
   (a weight row is read once, converted 8 lanes at a time in registers, and multiplied with up to
   four activation rows) and SIMD dequantisation of weight panels for the blocked product in
   matmul.c. Block layouts are GGUF's (core/quant.h). Divisions: CPU check · loaders · dot · dequant */
#include "core/cpu/matmul_x86.h"

#ifdef SEER_MM_X86
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#include "core/fp16.h"
#include "core/quant.h"
#include "core/util.h"

#define TGT __attribute__((target("avx2,fma,f16c")))
#define INL __attribute__((target("avx2,fma,f16c"), always_inline)) static inline
/* Fixed-count loops over lanes and rows must be unrolled so the accumulator arrays live in
   registers (GCC at -O2 keeps them on the stack otherwise). */
#define UNROLL _Pragma("GCC unroll 8")

/* ---- CPU check ---------------------------------------------------------------------------- */

bool mm_x86_available(void)
{
    /* 0 unknown, 1 no, 2 yes; racing first calls store the same value. CPUID traps to the
       hypervisor in a VM, so it runs once, not per call. F16C is CPUID.1:ECX bit 29 (Clang 14
       has no "f16c" for __builtin_cpu_supports). */
    static atomic_int state;
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        unsigned a, b, c, d;
        const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
        s = f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 2 : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

bool mm_avx512_available(void)
{
    static atomic_int state; /* 0 unknown, 1 no, 2 yes */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        s = mm_x86_available() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")
                ? 2
                : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

bool mm_avx512_bf16_available(void)
{
    static atomic_int state; /* 0 unknown, 1 no, 2 yes */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        /* AVX512_BF16 is CPUID.(EAX=7,ECX=1):EAX bit 5 (older compilers' __builtin_cpu_supports
           lack the name) */
        unsigned a, b, c, d;
        const bool bf16 = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
        s = bf16 && mm_avx512_available() ? 2 : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

bool mm_x86_type(enum dtype t)
{
    return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_Q8_0 || t == DT_Q4_K;
}

/* ---- loaders: 8 weights as f32 lanes ------------------------------------------------------ */

INL __m256 ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p)); }

/* bf16 is the high half of an f32 */
INL __m256 ld_bf16(const uint16_t *p)
{
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* f32 lanes rounded to bf16 values (to nearest even; finite inputs): add 0x7fff plus the lowest
   kept bit, clear the low half */
INL __m256 round_bf16(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7fff)), odd);
    return _mm256_castsi256_ps(_mm256_and_si256(r, _mm256_set1_epi32((int)0xffff0000u)));
}

INL __m256 ld_i8(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}

/* Group g (64 weights, 32 bytes) of Q4_K block b, whose d and dmin are given: lo[i] = weights
   8i..8i+7 (low nibbles, first sub-block), hi[i] = weights 32+8i.. (high nibbles, second
   sub-block), each as q·d − m. */
INL void ld_q4k_group(const block_q4_K *b, int g, float d, float dmin, __m256 *lo, __m256 *hi)
{
    float d1f, m1f, d2f, m2f;
    get_scale_min_k4_pair(b->scales, g, d, dmin, &d1f, &m1f, &d2f, &m2f);
    const __m256 d1 = _mm256_set1_ps(d1f), m1 = _mm256_set1_ps(m1f), d2 = _mm256_set1_ps(d2f), m2 = _mm256_set1_ps(m2f);
    const __m256i mask = _mm256_set1_epi32(0xF);
    const uint8_t *q = b->qs + 32 * g;
    UNROLL
    for (int i = 0; i < 4; i++) {
        const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(q + 8 * i)));
        lo[i] = _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, mask)), d1, m1);
        hi[i] = _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), d2, m2);
    }
}

/* ---- dot ---------------------------------------------------------------------------------- */

/* Accumulators per activation row: four chains for one or two rows (the FMA latency needs that
   many in flight), two for three or four rows (register budget: 16 ymm). */
#define NACC(nx) ((nx) <= 2 ? 4 : 2)

/* acc[r] += w[0..3] · x[r][k .. k+32) */
INL void fma32(__m256 acc[][4], const float *const *x, const int nx, int64_t k, const __m256 *w)
{
    UNROLL
    for (int r = 0; r < nx; r++) {
        const float *xr = x[r] + k;
        UNROLL
        for (int i = 0; i < 4; i++) {
            const int a = NACC(nx) == 4 ? i : (i & 1);
            acc[r][a] = _mm256_fmadd_ps(w[i], _mm256_loadu_ps(xr + 8 * i), acc[r][a]);
        }
    }
}

INL float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* One body per dtype, `nx` a constant after inlining (dot_nx instantiates 1..4); rb: F16 weights
   rounded to bf16 (mm_x86_dot's bf16, only for K in whole 32-blocks, so the tail loop never has it). */
INL void dot_body(enum dtype t, const bool rb, const void *w, const float *const *x, const int nx, int64_t K,
                  float *out)
{
    __m256 acc[MM_X86_MAX_NX][4];
    float tail[MM_X86_MAX_NX] = {0};
    UNROLL
    for (int r = 0; r < nx; r++)
        UNROLL
        for (int a = 0; a < 4; a++)
            acc[r][a] = _mm256_setzero_ps();
    int64_t k = 0;
    switch (t) {
    case DT_Q8_0: {
        const block_q8_0 *b = w;
        for (; k < K; k += QK8_0, b++) {
            /* Σ q·x over the block in two partial chains, then one multiply-add by the block
               scale: 6 vector operations per block and row instead of a multiply per lane. */
            const __m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
            __m256 v[4];
            UNROLL
            for (int i = 0; i < 4; i++)
                v[i] = ld_i8(b->qs + 8 * i);
            UNROLL
            for (int r = 0; r < nx; r++) {
                const float *xr = x[r] + k;
                __m256 p0 = _mm256_mul_ps(v[0], _mm256_loadu_ps(xr));
                __m256 p1 = _mm256_mul_ps(v[1], _mm256_loadu_ps(xr + 8));
                p0 = _mm256_fmadd_ps(v[2], _mm256_loadu_ps(xr + 16), p0);
                p1 = _mm256_fmadd_ps(v[3], _mm256_loadu_ps(xr + 24), p1);
                acc[r][0] = _mm256_fmadd_ps(d, p0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(d, p1, acc[r][1]);
            }
        }
        break;
    }
    case DT_Q4_K: {
        const block_q4_K *b = w;
        for (; k < K; k += QK_K, b++) {
            const float d = _cvtsh_ss(b->d), dmin = _cvtsh_ss(b->dmin);
            for (int g = 0; g < QK_K / 64; g++) {
                __m256 lo[4], hi[4];
                ld_q4k_group(b, g, d, dmin, lo, hi);
                fma32(acc, x, nx, k + 64 * g, lo);
                fma32(acc, x, nx, k + 64 * g + 32, hi);
            }
        }
        break;
    }
    case DT_F16:
    case DT_BF16:
    case DT_F32: {
        const uint16_t *h = w;
        const float *f = w;
        for (; k + 32 <= K; k += 32) {
            __m256 v[4];
            UNROLL
            for (int i = 0; i < 4; i++)
                v[i] = t == DT_F16 ? (rb ? round_bf16(ld_f16(h + k + 8 * i)) : ld_f16(h + k + 8 * i))
                       : t == DT_BF16 ? ld_bf16(h + k + 8 * i)
                                      : _mm256_loadu_ps(f + k + 8 * i);
            fma32(acc, x, nx, k, v);
        }
        for (; k < K; k++) { /* rows that are not a multiple of 32 */
            const float wv = t == DT_F16 ? f16_to_f32(h[k]) : t == DT_BF16 ? bf16_to_f32(h[k]) : f[k];
            UNROLL
            for (int r = 0; r < nx; r++)
                tail[r] += wv * x[r][k];
        }
        break;
    }
    default:
        break;
    }
    UNROLL
    for (int r = 0; r < nx; r++) {
        const __m256 s = _mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]), _mm256_add_ps(acc[r][2], acc[r][3]));
        out[r] = hsum(s) + tail[r];
    }
}

/* Instantiations per dtype and row count, so each inner loop is straight-line code. */
#define DOT_FN(name, T, RB)                                                                                  \
    TGT static void name(const void *w, const float *const *x, int nx, int64_t K, float *out)               \
    {                                                                                                        \
        switch (nx) {                                                                                        \
        case 1: dot_body(T, RB, w, x, 1, K, out); break;                                                     \
        case 2: dot_body(T, RB, w, x, 2, K, out); break;                                                     \
        case 3: dot_body(T, RB, w, x, 3, K, out); break;                                                     \
        default: dot_body(T, RB, w, x, 4, K, out); break;                                                    \
        }                                                                                                    \
    }
DOT_FN(dot_f32, DT_F32, false)
DOT_FN(dot_f16, DT_F16, false)
DOT_FN(dot_f16_bf16, DT_F16, true)
DOT_FN(dot_bf16, DT_BF16, false)
DOT_FN(dot_q8_0, DT_Q8_0, false)
DOT_FN(dot_q4_k, DT_Q4_K, false)
#undef DOT_FN

void mm_x86_dot(enum dtype t, bool bf16, const void *w, const float *const *x, int nx, int64_t K, float *out)
{
    switch (t) {
    case DT_F32: dot_f32(w, x, nx, K, out); break;
    case DT_F16: (bf16 ? dot_f16_bf16 : dot_f16)(w, x, nx, K, out); break;
    case DT_BF16: dot_bf16(w, x, nx, K, out); break;
    case DT_Q8_0: dot_q8_0(w, x, nx, K, out); break;
    case DT_Q4_K: dot_q4_k(w, x, nx, K, out); break;
    default: break;
    }
}

TGT void mm_x86_round_bf16(const float *x, int64_t x_rs, int64_t N, int64_t K, float *dst)
{
    for (int64_t n = 0; n < N; n++) {
        const float *xr = x + n * x_rs;
        float *d = dst + n * K;
        int64_t k = 0;
        for (; k + 8 <= K; k += 8)
            _mm256_storeu_ps(d + k, round_bf16(_mm256_loadu_ps(xr + k)));
        for (; k < K; k++)
            d[k] = bf16_to_f32(f32_to_bf16(xr[k]));
    }
}

/* ---- dequant ------------------------------------------------------------------------------ */

/* f16 and bf16 rows; t is a constant at each call, so the ternaries fold as in the dot kernels. */
INL void dequant_half(enum dtype t, const uint16_t *h, float *dst, int64_t n)
{
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(dst + k, t == DT_F16 ? ld_f16(h + k) : ld_bf16(h + k));
    for (; k < n; k++)
        dst[k] = t == DT_F16 ? f16_to_f32(h[k]) : bf16_to_f32(h[k]);
}

TGT static void dequant_simd(enum dtype t, const void *src, float *dst, int64_t n)
{
    int64_t k = 0;
    switch (t) {
    case DT_Q8_0:
        for (const block_q8_0 *b = src; k < n; k += QK8_0, b++) {
            const __m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
            UNROLL
            for (int i = 0; i < 4; i++)
                _mm256_storeu_ps(dst + k + 8 * i, _mm256_mul_ps(ld_i8(b->qs + 8 * i), d));
        }
        break;
    case DT_Q4_K:
        for (const block_q4_K *b = src; k < n; k += QK_K, b++) {
            const float d = _cvtsh_ss(b->d), dmin = _cvtsh_ss(b->dmin);
            for (int g = 0; g < QK_K / 64; g++) {
                __m256 lo[4], hi[4];
                ld_q4k_group(b, g, d, dmin, lo, hi);
                UNROLL
                for (int i = 0; i < 4; i++) {
                    _mm256_storeu_ps(dst + k + 64 * g + 8 * i, lo[i]);
                    _mm256_storeu_ps(dst + k + 64 * g + 32 + 8 * i, hi[i]);
                }
            }
        }
        break;
    case DT_F16: dequant_half(DT_F16, src, dst, n); break;
    case DT_BF16: dequant_half(DT_BF16, src, dst, n); break;
    case DT_F32:
        memcpy(dst, src, (size_t)n * sizeof *dst);
        break;
    default:
        break;
    }
}

void mm_x86_dequant(enum dtype t, const void *src, float *dst, int64_t n) { dequant_simd(t, src, dst, n); }

/* The 8x8 block at src (rows `ld` floats apart) transposed to dst (rows `ldd` apart). */
INL void transpose8(const float *src, int64_t ld, float *dst, int64_t ldd)
{
    __m256 r[8], t[8], u[8];
    UNROLL
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(src + i * ld);
    UNROLL
    for (int i = 0; i < 8; i += 2)
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    UNROLL
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44), u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    UNROLL
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
}

TGT void mm_x86_dequant_strip(enum dtype t, const void *rows, size_t row_bytes, int ns, int64_t len, float *tmp,
                              float *strip)
{
    for (int j = 0; j < ns; j++)
        dequant_simd(t, (const char *)rows + (size_t)j * row_bytes, tmp + j * len, len);
    const int ns8 = len % 8 ? 0 : ns / 8 * 8;
    for (int j0 = 0; j0 < ns8; j0 += 8)
        for (int64_t k0 = 0; k0 < len; k0 += 8)
            transpose8(tmp + j0 * len + k0, len, strip + k0 * ns + j0, ns);
    for (int j = ns8; j < ns; j++) /* a strip's last rows past a multiple of 8 */
        for (int64_t k = 0; k < len; k++)
            strip[k * ns + j] = tmp[j * len + k];
}

#endif /* SEER_MM_X86 */
