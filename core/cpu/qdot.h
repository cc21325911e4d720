/* qdot.h — matrix-vector products with activations rounded to 8 bits (the non-exact CPU matmul
   path of core/cpu/matmul.c). Decode reads every weight once per token, so its cost is the weight
   stream plus the arithmetic to consume it; with f32 activations each quantised weight must be
   widened to f32 (4 instructions per 8 weights), with 8-bit activations the integer blocks are
   multiplied as they are (one VPDPBUSD, or VPMADDUBSW+VPMADDWD, per 32 products). This is the
   scheme of llama.cpp's CPU backend, so its results are compared with llama.cpp's, not with the
   f32 references (tests/lm/qdot_oracle.c).

   Activations: per 32 consecutive values, q = round-to-nearest-even(127·x/amax) and d = amax/127
   rounded to f16 — llama.cpp's Q8_0 activation blocks, so on Q8_0 and Q4_0 files both engines
   multiply the same integers — hence |x − d·q| ≤ d·(1/2 + 127·2^-11) (about 1/225 of the block's
   largest value); a zero block has d = 0. s = d·Σq is kept for the weight formats with an offset
   (Q4_0's −8, the K-quants' mins).

   Every weight format is read as 32-value sub-blocks w = a·q − b (Q6_K: a per 16 values) and the
   block product is a·dx·Σq·xq − b·s, Σq·xq an exact int32.

   Q4_K weights instead meet llama.cpp's Q8_K activations: one f32 step per 256 values (q =
   round(−127·x/max), max the value of largest magnitude) and sums of q per 16. The 6-bit sub-block
   scales and mins then stay integers through the superblock (Σ sc·Σq·xq and Σ m·Σq in int32) and
   one f32 multiply-add per 256 weights remains — the per-32 f32 steps cost a float multiply-add
   per sub-block, which left Q4_K at half of Q8_0's weights per second. Kernels: AVX-512 VNNI (256-bit
   VPDPBUSD; Q8_0 two blocks per 512-bit vector), AVX2 (VPMADDUBSW), portable C; qdot_kernel() picks
   one from CPUID once. */
#ifndef SEER_CORE_CPU_QDOT_H
#define SEER_CORE_CPU_QDOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

#define QDOT_BLOCK 32

/* 32 activations: x[i] ≈ d·qs[i]; s = d·Σqs. */
typedef struct {
    float d, s;
    int8_t qs[QDOT_BLOCK];
} block_q8x;

/* 256 activations (Q8_K): x[i] ≈ d·qs[i]; bsums[j] = Σ qs[16j..16j+15]. */
typedef struct {
    float d;
    int8_t qs[256];
    int16_t bsums[16];
} block_q8k;

/* Σ w·x over one row of nb 32-value blocks: w in GGUF layout of the kernel's type, x the row's
   rounded activations in the format qdot_quantize_act writes for that type. */
typedef float (*qdot_fn)(const void *w, const void *x, int64_t nb);

/* Σ w·x_r for the nx ≤ QDOT_MAX_ROWS activation rows x_r = x + r·x_rb (several sequences decoding
   together, issue #13 item 5): the weight row is read and unpacked once for all of them, and
   out[r] equals the qdot_fn of that type and family on row r bit for bit. */
#define QDOT_MAX_ROWS 4
typedef void (*qdot_rows_fn)(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out);

/* True for the weight types with kernels: Q8_0, Q4_0, Q4_K, Q5_K, Q6_K. */
bool qdot_type(enum dtype t);
/* The fastest kernel this CPU runs for type t (qdot_type(t) must hold). */
qdot_fn qdot_kernel(enum dtype t);
/* The several-row kernel of qdot_kernel(t)'s family, or NULL where there is none (then each row
   goes through qdot_kernel(t)): Q8_0 and the K-quants on AVX2 and AVX-512 VNNI. */
qdot_rows_fn qdot_rows_kernel(enum dtype t);
/* Whether qdot_kernel(t) and qdot_rows_kernel(t) fetch their weight stream ahead themselves, so
   the caller adds no prefetch hints of its own (x86 Q8_0). */
bool qdot_streams(enum dtype t);
/* Which kernel family qdot_kernel() chose: "avx512-vnni", "avx2" or "portable". */
const char *qdot_isa(void);
/* Rounds n values (a multiple of 32) into n/32 blocks. */
void qdot_quantize(const float *x, block_q8x *out, int64_t n);
/* Rounds n values (a multiple of 256) into n/256 Q8_K blocks. */
void qdot_quantize_q8k(const float *x, block_q8k *out, int64_t n);
/* The activations type t's kernels read: bytes for a row of K, and the rounding into them. Q4_K:
   K/256 block_q8k. The others: K/32 block_q8x; for Q8_0 followed by float xd[K/32] (each block's
   d, contiguous so the x86 kernels form weight step × activation step 8 blocks at a time),
   int32_t xc[K/32][8], −128 × the sum of each 4 consecutive qs (the AVX-512 VNNI kernel's lanes
   start there, reading w + 128), int8_t xq[K/32][32], the blocks' qs contiguous (that kernel
   reads two blocks per 512-bit load), and int32_t xb[K/32], −128 × each block's Σq (the
   interleaved rows' kernel starts there: qdot_q8r.c). */
size_t qdot_act_row_bytes(enum dtype t, int64_t K);
void qdot_quantize_act(enum dtype t, const float *x, void *out, int64_t K);

/* ---- the kernel families, for tests that compare them ---- */
enum qdot_isa { QDOT_PORTABLE, QDOT_AVX2, QDOT_VNNI };
/* Kernel of family `isa` for type t, NULL when absent on this build or CPU. */
qdot_fn qdot_kernel_isa(enum dtype t, enum qdot_isa isa);
/* x86-64 tables (qdot_x86.c): NULL entries where the CPU lacks the ISA. */
qdot_fn qdot_x86_kernel(enum dtype t, bool vnni);
qdot_rows_fn qdot_x86_rows_kernel(enum dtype t, bool vnni);
/* qdot_quantize_q8k on AVX2 (the same bits); call only where mm_x86_available(). */
void qdot_quantize_q8k_avx2(const float *x, block_q8k *out, int64_t n);
/* The portable qdot_quantize_q8k, which the AVX2 one must equal (tests). */
void qdot_quantize_q8k_portable(const float *x, block_q8k *out, int64_t n);

#endif
