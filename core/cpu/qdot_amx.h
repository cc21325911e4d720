/* qdot_amx.h — Q8_0 products on AMX tiles (Intel Sapphire Rapids and later): the 8-bit matmul path
   of core/cpu/matmul.c for Q8_0 weight matrices that the CPU backend laid out for the tiles when
   it copied them (TL_Q8_0_T16, core/tensor.h). Why and how: qdot_amx.c. */
#ifndef SEER_CORE_CPU_QDOT_AMX_H
#define SEER_CORE_CPU_QDOT_AMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor.h"

/* Weight rows per tile unit, and activation rows (sequences, or prompt positions) per pass. */
#define QAMX_ROWS 16
#define QAMX_MAX_X 8

/* The CPU has AMX-INT8 and the kernel lets this process use the tile state (asked once), and
   SEER_NO_AMX is unset (it keeps the AVX kernels, e.g. to compare the two). */
bool qamx_ready(void);

/* Whether a Q8_0 matrix can take the tile layout: contiguous, 2-D, rows a multiple of
   QAMX_ROWS, an even number of blocks per row. */
bool qamx_layout_fits(const tensor *w);
/* Rearranges w's bytes in place into the tile layout (qamx_layout_fits(w) must hold) and sets
   w->layout; false when the scratch of one unit cannot be allocated (w is then unchanged). */
bool qamx_layout(tensor *w);
/* Block j of row r of a tile-laid-out matrix: its 32 values (returned) and f16 scale (*d). Inline:
   prefill's packing reads every block this way (qdot_amx.c has the layout). */
#define QAMX_PAIR_BYTES 1088
static inline const int8_t *qamx_block(const tensor *w, int64_t r, int64_t j, uint16_t *d)
{
    const char *pair = (const char *)w->data +
                       ((size_t)(r / QAMX_ROWS) * (size_t)(w->ne[0] / 64) + (size_t)(j / 2)) * QAMX_PAIR_BYTES;
    const int rr = (int)(r % QAMX_ROWS);
    memcpy(d, pair + 1024 + 2 * (2 * rr + j % 2), 2);
    return (const int8_t *)pair + 64 * rr + 32 * (j % 2);
}
/* Values k0..k0+n−1 (whole blocks) of row r of a tile-laid-out matrix as f32, equal to what
   dequantize_row gives for the file's layout (get_rows, and the f32 path's fallback). */
void qamx_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n);

/* A product with N activation rows takes them in groups of np = qamx_np(N) ∈ {1, 2, 4, 8} (the
   last group padded with zeros). The results do not depend on np. */
int qamx_np(int64_t N);
/* Activations: one group of nx ≤ np rows rounded by qdot_quantize_act(DT_Q8_0, ...), x_rb bytes
   apart, nb blocks each, laid out for the tiles into pack (qamx_pack_bytes(nb) bytes). */
size_t qamx_pack_bytes(int64_t nb);
void qamx_pack(const void *xq, size_t x_rb, int nx, int np, int64_t nb, void *pack);

/* Σ w·x for the QAMX_ROWS rows of unit u of w and a packed group's nx rows: out[n·out_stride + r].
   Between qamx_begin(np) and qamx_end on the calling thread (the tile configuration and state). */
void qamx_begin(int np);
void qamx_unit(const tensor *w, int64_t u, const void *pack, int nx, int np, float *out, size_t out_stride);
void qamx_end(void);
/* The same for one activation row (qdot_quantize_act's form, no packing), without the tiles. */
void qamx_unit1(const tensor *w, int64_t u, const void *x, float *out);

#endif
