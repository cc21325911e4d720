/* matmul_x86.h — the x86-64 SIMD kernels behind CPU op_matmul (core/cpu/matmul.c) for F32, F16,
   BF16, Q8_0 and Q4_K weights: AVX2 fused dequantise-and-dot for decode (matmul_x86.c) and AVX-512
   register-blocked tiles for prefill (matmul_avx512.c). The build baseline is x86-64-v2 (SSE
   only), so the kernels are compiled for the wider ISAs by target attribute and only called after
   mm_x86_available() / mm_avx512_available() have checked the CPU at run time (the scheme of
   core/cpu/gemm_f32.c). On other machines everything here is absent and matmul.c keeps its
   portable path. */
#ifndef SEER_CORE_CPU_MATMUL_X86_H
#define SEER_CORE_CPU_MATMUL_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define SEER_MM_X86 1

/* Most activation rows one dot call takes: each weight vector is dequantised once and used for
   all of them (decode has 1; a few more share the weight traffic). */
#define MM_X86_MAX_NX 4

/* True when the CPU has AVX2, FMA and F16C (checked once). */
bool mm_x86_available(void);
/* True when `t` has kernels here (F32, F16, BF16, Q8_0, Q4_K). */
bool mm_x86_type(enum dtype t);
/* out[r] = Σ_k w[k]·x[r][k] for r < nx (1..MM_X86_MAX_NX): w is one row of K elements of type t
   in GGUF layout (K whole blocks), x[r] f32 rows of K. Sums run in f32 lanes over the whole row
   (each lane adds ≤ K/32 block partials of ≤ 4 products); ≤ 1e-6 relative error at K = 12288.
   bf16 (K a multiple of 32): F16 weights are rounded to bf16 as they are read (to nearest even),
   so that with x rows rounded by mm_x86_round_bf16 the products are those of the bf16 tiles
   (matmul_avx512.c) for the rows a prefill would give them: the not-exact path's rule at every row
   count. */
void mm_x86_dot(enum dtype t, bool bf16, const void *w, const float *const *x, int nx, int64_t K, float *out);
/* dst (N rows of K, contiguous) = rows [0,N) of x (stride x_rs) rounded to bf16 values (to nearest
   even), kept as f32. */
void mm_x86_round_bf16(const float *x, int64_t x_rs, int64_t N, int64_t K, float *dst);
/* dst[0..n) = the n elements at src (whole blocks) as f32, the same values dequantize_row gives
   up to one rounding of the Q4_K scale-and-offset (done as one fused multiply-add). */
void mm_x86_dequant(enum dtype t, const void *src, float *dst, int64_t n);
/* The prefill panel's strip: ns (<= 16) rows of type t, row_bytes apart from `rows`, each of len
   elements (whole blocks), dequantised (through tmp, ns*len floats) and stored transposed:
   strip[k*ns + j] = row j's element k. 8x8 blocks move in registers; a scalar scatter cost as
   much as the product itself on short prompts. */
void mm_x86_dequant_strip(enum dtype t, const void *rows, size_t row_bytes, int ns, int64_t len, float *tmp,
                          float *strip);

/* ---- AVX-512 tiles (matmul_avx512.c) ------------------------------------------------------- */

/* A tile is MM512_TILE weight rows; K is walked in chunks of MM512_KC (whole blocks of any type). */
#define MM512_TILE 32
#define MM512_KC 256

/* One product for the tile kernels. F32/F16/BF16 weights use x (f32 path); Q8_0/Q4_K use the
   activations rounded to int16 per 32-element block by mm_avx512_quantize_rows (xq != NULL). */
struct mm_job {
    enum dtype type;
    const uint8_t *w;   /* weight row 0 */
    size_t w_rs;        /* bytes between weight rows */
    int64_t K, M, N;
    const float *x;     /* activation row 0 (f32 path) */
    int64_t x_rs;       /* floats between activation rows */
    const int16_t *xq;  /* int16 path: N rows of K values */
    const float *xs;    /* N × K/32 block scales (x ≈ xq·scale) */
    const float *xsum;  /* N × K/32 block sums of x (Q4_K's min term) */
    const int8_t *xq8;  /* int8 path (not exact, instead of xq): N rows of K values, scales in xs */
    const int32_t *xqsum; /* int8 path: N × K/32 block sums of xq8 (Q8_0's offset term) */
    const int32_t *xqsum16; /* int8 path, Q6_K: N × K/16 sums of xq8 per 16 values (its offset term) */
    const tensor *t16;  /* int8 path: Q8_0 weights in the AMX layout (TL_Q8_0_T16, read through
                           qamx_block; w and w_rs unused), else NULL */
    const tensor *r16;  /* int8 path: Q4_K or Q5_K weights interleaved (TL_Q4_K_R16, TL_Q5_K_R16,
                           read through q4r_panel_sub; w and w_rs unused), else NULL */
    const tensor *q8r;  /* int8 path: Q8_0 weights interleaved (TL_Q8_0_R16, read in place
                           without packing; w and w_rs unused), else NULL */
    const tensor *q6r;  /* int8 path: Q6_K weights interleaved (TL_Q6_K_R16, read through
                           q6r_block; w and w_rs unused), else NULL */
    const uint16_t *xbf; /* bf16 path (not exact, F16/BF16 weights): N rows of K activations
                           rounded to bf16 by mm_avx512_round_bf16 */
    float *out;         /* out[n·M + m], contiguous */
};

/* True when the CPU also has AVX-512 F, BW, VL and VNNI (checked once). */
bool mm_avx512_available(void);
/* True for the weight types that take the int16 path (Q8_0, Q4_K). */
bool mm_avx512_int16_type(enum dtype t);
/* True for the weight types that take the int8 path (those, Q5_K and Q6_K). */
bool mm_avx512_u8_type(enum dtype t);
/* Rounds activation rows [n0,n1) (row stride x_rs floats, K a multiple of 32) into xq (N×K),
   xs and xsum (N×K/32). */
void mm_avx512_quantize_rows(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, int16_t *xq,
                             float *xs, float *xsum);
/* The same rounded to int8 (scale amax/127, as llama.cpp rounds activations for its integer dot
   products), with the block sums of the rounded values in xqsum and, unless NULL, the sums of
   each 16 in xqsum16 (N×K/16): the not-exact path. */
void mm_avx512_quantize_rows_i8(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, int8_t *xq,
                                float *xs, float *xsum, int32_t *xqsum, int32_t *xqsum16);
/* True when the CPU also has AVX512-BF16 (VDPBF16PS; checked once). */
bool mm_avx512_bf16_available(void);
/* True for the weight types that take the bf16 path when not exact (F16, BF16). */
bool mm_avx512_bf16_type(enum dtype t);
/* Rows [n0,n1) of x (row stride x_rs floats, K a multiple of 32) rounded to bf16 (to nearest
   even) into xb (N×K): the bf16 path's activations. */
void mm_avx512_round_bf16(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, uint16_t *xb);
/* Bytes of 64-byte-aligned scratch one mm_avx512_tile call needs (~33 KiB). */
size_t mm_avx512_scratch_bytes(void);
/* Output columns [m0, m0 + MM512_TILE) ∩ [0, M) for every activation row. */
void mm_avx512_tile(const struct mm_job *j, int64_t m0, void *scratch);
#endif

#endif
