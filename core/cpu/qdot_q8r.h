/* qdot_q8r.h — Q8_0 products with the weight rows as vector lanes: the 8-bit matmul path of
   core/cpu/matmul.c for Q8_0 matrices that the CPU backend interleaved 16 rows at a time when it
   copied them (TL_Q8_0_R16, core/tensor.h), on AVX-512 VNNI CPUs without AMX tiles. Why and how:
   qdot_q8r.c. */
#ifndef SEER_CORE_CPU_QDOT_Q8R_H
#define SEER_CORE_CPU_QDOT_Q8R_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

/* Weight rows per unit (one 512-bit vector of lanes), and activation rows per kernel call. */
#define Q8R_ROWS 16
#define Q8R_MAX_X 8

/* The CPU has AVX-512 F/BW/VL/VNNI and F16C, and SEER_NO_Q8_0_R16 is unset or empty (set, it keeps
   the file's layout and its kernels, e.g. to compare the two). */
bool q8r_ready(void);
/* Whether a Q8_0 matrix can take the layout: contiguous, 2-D, rows a multiple of Q8R_ROWS, an
   even number of blocks per row (so every unit starts on a 64-byte line). */
bool q8r_layout_fits(const tensor *w);
/* Rearranges w's bytes in place (q8r_layout_fits(w) must hold) and sets w->layout; false when the
   scratch of one unit cannot be allocated (w is then unchanged). */
bool q8r_layout(tensor *w);
/* Values k0..k0+n−1 (whole blocks) of row r as f32, equal to dequantize_row on the file's layout
   (get_rows and the f32 path read the matrix this way). */
void q8r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n);
/* Unit u's first byte, and where block j's quads (16 rows × 32 values, q + 128, as prefill's int8
   panel holds a block: matmul_avx512.c reads them there, unpacked) and its 16 f16 scales lie from
   it (qdot_q8r.c's layout: blocks in pairs, each pair's scales after its quads). */
#define Q8R_PAIR_BYTES (2 * (512 + 2 * Q8R_ROWS)) /* two blocks: 2 × 512 quad bytes, then 2 × 16 f16 scales */
const uint8_t *q8r_unit_base(const tensor *w, int64_t u);
static inline size_t q8r_quads_at(int64_t j) { return (size_t)(j >> 1) * Q8R_PAIR_BYTES + (size_t)(j & 1) * 512; }
static inline size_t q8r_scales_at(int64_t j)
{
    return (size_t)(j >> 1) * Q8R_PAIR_BYTES + 1024 + (size_t)(j & 1) * 32;
}
/* Σ w·x for the Q8R_ROWS rows of unit u of w and nx ≤ Q8R_MAX_X activation rows in Q8_0 form
   (qdot_quantize_act(DT_Q8_0, ...), x_rb bytes apart): out[n·out_stride + r]. Each row's result
   is the same whatever nx is. */
void q8r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride);

#endif
