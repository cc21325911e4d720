/* gemm_f32.h — a small f32 matrix product for the CPU ops built from tiles of a few hundred
   rows: the chunked Gated DeltaNet (gdn.c, spec §2.5 step 8) and blocked attention
   (attention.c, spec §2.6). Single-threaded: callers split work across the pool themselves.
   Also the 4-lane vector type those files share (GCC/Clang vector extension, as the build's
   flags already assume GCC or Clang), and an f16 row widener. */
#ifndef SEER_CORE_CPU_GEMM_F32_H
#define SEER_CORE_CPU_GEMM_F32_H

#include <stdint.h>
#include <string.h>

/* Four floats: one SSE register on x86-64 (the build baseline), NEON on ARM. Unaligned
   loads/stores go through memcpy, which compiles to a single movups. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f ld4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st4(float *p, v4f v) { memcpy(p, &v, sizeof v); }

/* y[0..n) = s·x[0..n) (y may be x). Plain loops are not vectorised at -O2 (GCC's very-cheap
   cost model wants trip counts known to be multiples of the vector width). */
static inline void cpu_vscale(float *y, const float *x, float s, int64_t n)
{
    int64_t e = 0;
    for (; e + 4 <= n; e += 4)
        st4(y + e, s * ld4(x + e));
    for (; e < n; e++)
        y[e] = s * x[e];
}

/* Which triangle a product may skip. A_LOWER: A(i,p) == 0 for p > i (stored as zeros), so a
   block of rows stops at its last row's diagonal. C_LOWER: only C(i,j) with j ≤ i is wanted;
   column blocks wholly above the diagonal are left unwritten. */
enum cpu_tri { CPU_TRI_NONE, CPU_TRI_A_LOWER, CPU_TRI_C_LOWER };

/* C{M×N} = cb·C + alpha·A·B with A(i,p) = A[i·a_rs + p·a_cs] (a transposed operand is the
   same matrix with its strides swapped), B{K×N} and C{M×N} row-major with leading dimensions
   ldb, ldc (in floats). cb == 0 means C is not read (it may hold garbage). */
struct cpu_gemm {
    int64_t M, N, K;
    float alpha, cb;
    const float *A;
    int64_t a_rs, a_cs;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    enum cpu_tri tri;
};

/* Runs the AVX2+FMA kernel when the CPU has it (checked at run time), else a 4-lane one. */
void cpu_gemm_f32(const struct cpu_gemm *g);
/* dst[0..n) = the IEEE halves src[0..n) widened (F16C when the CPU has it). */
void cpu_f16_to_f32_row(float *dst, const uint16_t *src, int64_t n);
/* The portable kernel alone, so tests cover it on machines that pick the AVX2 one. */
void cpu_gemm_f32_v4(const struct cpu_gemm *g);

#endif
