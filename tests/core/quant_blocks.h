/* quant_blocks.h — random GGUF blocks for the quant tests (tests/core/quant.c, quant_oracle.c):
   random bytes in every field, then finite halves (any sign, exponent 0..30 so subnormals too,
   any mantissa) where the layout holds its f16 scales. */
#ifndef SEER_TESTS_QUANT_BLOCKS_H
#define SEER_TESTS_QUANT_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/quant.h"
#include "core/tensor.h"
#include "support/testutil.h"

static inline uint16_t quant_test_rand_half(void)
{
    uint16_t h = (uint16_t)(test_rand_u64() & 0xffff);
    if (((h >> 10) & 31) == 31)
        h &= (uint16_t)~(1u << 14); /* exponent 31 → 15: finite */
    return h;
}

static inline void quant_test_random_blocks(enum dtype t, uint8_t *buf, int nb)
{
    const int bb = dtype_info(t)->block_bytes;
    for (int i = 0; i < nb * bb; i++)
        buf[i] = (uint8_t)test_rand_u64();
    for (int b = 0; b < nb; b++) {
        uint8_t *p = buf + b * bb;
        uint16_t h0 = quant_test_rand_half(), h1 = quant_test_rand_half();
        switch (t) {
        case DT_Q8_0: memcpy(p + offsetof(block_q8_0, d), &h0, 2); break;
        case DT_Q4_0: memcpy(p + offsetof(block_q4_0, d), &h0, 2); break;
        case DT_Q4_K: memcpy(p + offsetof(block_q4_K, d), &h0, 2), memcpy(p + offsetof(block_q4_K, dmin), &h1, 2); break;
        case DT_Q5_K: memcpy(p + offsetof(block_q5_K, d), &h0, 2), memcpy(p + offsetof(block_q5_K, dmin), &h1, 2); break;
        case DT_Q6_K: memcpy(p + offsetof(block_q6_K, d), &h0, 2); break;
        default: break;
        }
    }
}

#endif
