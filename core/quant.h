/* quant.h — GGUF quantised block formats, bit-exact with GGUF's definition (ggml-common.h).
   Each block covers QK elements of one row; d/dmin are IEEE half.
     Q8_0  (32 elems, 34 B):  f16 d; int8 qs[32];                     x = d*q
     Q4_0  (32 elems, 18 B):  f16 d; u8 qs[16];   x[i] = d*((qs[i]&15)-8), x[i+16] = d*((qs[i]>>4)-8)
     Q4_K (256 elems, 144 B): f16 d, dmin; u8 scales[12]; u8 qs[128]   8 sub-blocks of 32,
                              6-bit scale/min per sub-block packed in scales (get_scale_min_k4)
     Q5_K (256 elems, 176 B): f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
     Q6_K (256 elems, 210 B): u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d
   All functions work on whole rows: n must be a multiple of the block size. */
#ifndef SEER_CORE_QUANT_H
#define SEER_CORE_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

#define QK8_0 32
#define QK4_0 32
#define QK_K 256
#define K_SCALE_SIZE 12

typedef struct { uint16_t d; int8_t qs[QK8_0]; } block_q8_0;
typedef struct { uint16_t d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
typedef struct { uint16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; } block_q4_K;
typedef struct { uint16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; } block_q5_K;
typedef struct { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; uint16_t d; } block_q6_K;

_Static_assert(sizeof(block_q8_0) == 34, "q8_0 block layout");
_Static_assert(sizeof(block_q4_0) == 18, "q4_0 block layout");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K block layout");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K block layout");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K block layout");

/* Converts n elements of any dtype (F32, F16, BF16 or a quantised type) starting at src to f32.
   For quantised types src points at a block boundary and n is a multiple of the block size. */
void dequantize_row(enum dtype t, const void *src, float *dst, int64_t n);

/* Quantisers (f32 -> blocks). Q8_0: round-to-nearest with d = amax/127 (GGUF's reference).
   Q4_K: per-sub-block scale/min search as in GGUF's reference quantiser. n multiple of block. */
void quantize_row_q8_0(const float *src, void *dst, int64_t n);
void quantize_row_q4_K(const float *src, void *dst, int64_t n);
/* Q5_K: Q4_K's search with 31 levels. Q6_K: plain rounding per 16 values (not GGUF's search;
   core/quant.c says why that is enough for its uses). */
void quantize_row_q5_K(const float *src, void *dst, int64_t n);
void quantize_row_q6_K(const float *src, void *dst, int64_t n);
/* Converts n f32 values to dtype t (F32/F16/BF16/Q8_0/Q4_K/Q5_K/Q6_K); false for other types. */
bool quantize_row(enum dtype t, const float *src, void *dst, int64_t n);

/* The Q4_K/Q5_K 6-bit scale and min of sub-block j (0..7) from the packed 12 bytes. */
static inline void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m)
{
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
    }
}

/* Group g (sub-blocks 2g and 2g+1, 64 weights) of a Q4_K/Q5_K block: each sub-block's scale d·sc
   and min dmin·m, from the block's d, dmin and packed scales. */
static inline void get_scale_min_k4_pair(const uint8_t *scales, int g, float d, float dmin, float *d1, float *m1,
                                         float *d2, float *m2)
{
    uint8_t sc, m;
    get_scale_min_k4(2 * g, scales, &sc, &m);
    *d1 = d * sc;
    *m1 = dmin * m;
    get_scale_min_k4(2 * g + 1, scales, &sc, &m);
    *d2 = d * sc;
    *m2 = dmin * m;
}

#endif
