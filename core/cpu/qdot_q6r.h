/* qdot_q6r.h — Q6_K decode products with the weight rows as vector lanes: the 8-bit matmul path
   of core/cpu/matmul.c for Q6_K matrices that the CPU backend interleaved 16 rows at a time when
   it copied them (TL_Q6_K_R16, core/tensor.h). Why and how: qdot_q6r.c. */
#ifndef SEER_CORE_CPU_QDOT_Q6R_H
#define SEER_CORE_CPU_QDOT_Q6R_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quant.h"
#include "core/tensor.h"

/* Weight rows per unit (one 512-bit vector of lanes), and activation rows per kernel call (four
   sub-block sums per row stay in registers). */
#define Q6R_ROWS 16
#define Q6R_MAX_X 4

/* The CPU has AVX-512 F/BW/VL/VNNI and F16C, and SEER_NO_Q6K_R16 is unset or empty (set, it keeps
   the file's layout and its kernels, e.g. to compare the two). */
bool q6r_ready(void);
/* Whether a Q6_K matrix can take the layout: contiguous, 2-D, rows a multiple of Q6R_ROWS. */
bool q6r_layout_fits(const tensor *w);
/* Rearranges w's bytes in place (q6r_layout_fits(w) must hold) and sets w->layout; false when
   the scratch of one unit cannot be allocated (w is then unchanged). */
bool q6r_layout(tensor *w);
/* Superblock i of row r of an interleaved matrix, as the file holds it (prefill's packing reads
   it this way). */
void q6r_block(const tensor *w, int64_t r, int64_t i, block_q6_K *out);
/* Values k0..k0+n−1 (whole superblocks) of row r as f32, equal to dequantize_row on the file's
   layout. */
void q6r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n);
/* Σ w·x for the Q6R_ROWS rows of unit u of w and nx ≤ Q6R_MAX_X activation rows in Q8_K form
   (qdot_quantize_act(DT_Q4_K, ...), x_rb bytes apart): out[n·out_stride + r]. Each row's result
   is the same whatever nx is. */
void q6r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride);

#endif
