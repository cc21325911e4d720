/* qdot_q4r.h — Q4_K and Q5_K decode products with the weight rows as vector lanes: the 8-bit
   matmul path of core/cpu/matmul.c for Q4_K and Q5_K matrices that the CPU backend interleaved 16
   rows at a time when it copied them (TL_Q4_K_R16, TL_Q5_K_R16, core/tensor.h). Why and how:
   qdot_q4r.c. */
#ifndef SEER_CORE_CPU_QDOT_Q4R_H
#define SEER_CORE_CPU_QDOT_Q4R_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quant.h"
#include "core/tensor.h"

/* Weight rows per unit (one 512-bit vector of f32 lanes), and activation rows per kernel call. */
#define Q4R_ROWS 16
#define Q4R_MAX_X 8

/* The CPU has AVX-512 F/BW/VL/VNNI and F16C, and SEER_NO_Q4K_R16 is unset or empty (set, it keeps
   the file's layout and its kernels, e.g. to compare the two). */
bool q4r_ready(void);
/* Whether a Q4_K or Q5_K matrix can take the layout: contiguous, 2-D, rows a multiple of Q4R_ROWS. */
bool q4r_layout_fits(const tensor *w);
/* Rearranges w's bytes in place (q4r_layout_fits(w) must hold) and sets w->layout; false when
   the scratch of one unit cannot be allocated (w is then unchanged). */
bool q4r_layout(tensor *w);
/* Superblock i of row r of an interleaved matrix, as the file holds it (a block_q4_K or block_q5_K
   by w's type; get_rows and the f32 path read it this way, through q4r_dequant). */
void q4r_block(const tensor *w, int64_t r, int64_t i, void *out);
/* Values k0..k0+n−1 (whole superblocks) of row r as f32, equal to dequantize_row on the file's
   layout. */
void q4r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n);
/* Σ w·x for the Q4R_ROWS rows of unit u of w and nx ≤ Q4R_MAX_X activation rows in Q8_K form
   (qdot_quantize_act(DT_Q4_K, ...), x_rb bytes apart): out[n·out_stride + r]. Each row's result
   is the same whatever nx is. */
void q4r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride);
/* Sub-block j of superblock i of unit u's rows as prefill's int8 panel holds it (matmul_avx512.c):
   q[c][r] = row r's values 4c..4c+3 of the sub-block (unsigned nibbles), d[r] = d·sc_j and m[r] =
   dmin·m_j (the same products as dequantize_row's). The unit's interleaving is the panel's, so this
   is 8 vector stores. */
void q4r_panel_sub(const tensor *w, int64_t u, int64_t i, int j, uint8_t q[8][Q4R_ROWS][4], float *d, float *m);

#endif
