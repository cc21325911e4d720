/* gemm_bf16.h — the small product of blocked attention (attention.c) on bfloat16 pairs, for a CPU
   backend that is not exact on CPUs with AVX512-BF16: one VDPBF16PS multiplies 16 lanes × 2 pairs
   of bf16 values into f32 lanes, twice the f32 FMA rate. Operands are stored as pairs: a uint32_t
   holds two bf16 values, the low half the first (element 2p), the high half the second (2p+1), so
   the product's inner dimension runs over pairs. Each product of two bf16 values is exact in f32;
   what the path loses is the rounding of its operands to bf16 (2^-9 relative at most, to nearest
   even). Single-threaded, like gemm_f32.h: callers split the work. x86-64 only (SEER_MM_X86); every
   call needs mm_avx512_bf16_available() (matmul_x86.h) first. */
#ifndef SEER_CORE_CPU_GEMM_BF16_H
#define SEER_CORE_CPU_GEMM_BF16_H

#include <stdbool.h>
#include <stdint.h>

/* C{M×N} (+)= A{M×K2 pairs}·B{K2 pairs×N}: C(i,j) = Σ_p Σ_h A(i,p)_h·B(p,j)_h over the two halves h
   of each pair, with A(i,p) = A[i·a_rs + p·a_cs], B(p,j) = B[p·ldb + j] and C row-major with
   leading dimension ldc (floats). acc: add to what C holds, else overwrite it. Sums run in f32 lanes
   over p in order, so a row's results do not depend on M or on the other rows. */
struct cpu_gemm_bf16 {
    int64_t M, N, K2;
    const uint32_t *A;
    int64_t a_rs, a_cs;
    const uint32_t *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    bool acc;
};
void cpu_gemm_bf16(const struct cpu_gemm_bf16 *g);

/* dst[i] = the pair (r0[i], r1[i]) rounded to bf16, for i < n: two f32 rows interleaved (r1 NULL:
   zeros in the high halves). */
void cpu_bf16_pairs_of_rows(uint32_t *dst, const float *r0, const float *r1, int64_t n);
/* dst[p] = the pair (src[2p], src[2p+1]) rounded to bf16, for p < n/2 (n even): one f32 row as it
   lies. */
void cpu_bf16_pairs_of_row(uint32_t *dst, const float *src, int64_t n);

#endif
