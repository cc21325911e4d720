/* fp16.h — IEEE half and bfloat16 conversions (round to nearest even on the way down).
   BF16 is the high half of an f32, so widening is a shift (docs/ARCHITECTURE.md, "Tensors"). */
#ifndef SEER_CORE_FP16_H
#define SEER_CORE_FP16_H

#include <stdint.h>
#include <string.h>

static inline float fp32_from_bits(uint32_t w) { float f; memcpy(&f, &w, 4); return f; }
static inline uint32_t fp32_to_bits(float f) { uint32_t w; memcpy(&w, &f, 4); return w; }

static inline float bf16_to_f32(uint16_t h) { return fp32_from_bits((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t w = fp32_to_bits(f);
    if ((w & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a (quiet) NaN */
        return (uint16_t)((w >> 16) | 0x40);
    w += 0x7fffu + ((w >> 16) & 1); /* round to nearest even */
    return (uint16_t)(w >> 16);
}

static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        if (man == 0)
            return fp32_from_bits(sign);
        /* subnormal: value = man * 2^-24 */
        float f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    if (exp == 31)
        return fp32_from_bits(sign | 0x7f800000u | (man << 13));
    return fp32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t w = fp32_to_bits(f);
    uint32_t sign = (w >> 16) & 0x8000;
    uint32_t aw = w & 0x7fffffffu;
    if (aw > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00); /* NaN */
    if (aw >= 0x477ff000u)                 /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (aw < 0x38800000u) { /* result is subnormal or zero: round man*2^-24 to an integer */
        float a = fp32_from_bits(aw);
        /* adding 0.5 (2^-1) forces rounding at the 2^-24 position with round-to-nearest-even */
        float r = a + 0.5f;
        return (uint16_t)(sign | (fp32_to_bits(r) - 0x3f000000u));
    }
    uint32_t mant_odd = (aw >> 13) & 1;
    aw += 0xc8000fffu + mant_odd; /* rebias exponent (-112<<23) and round to nearest even */
    return (uint16_t)(sign | (aw >> 13));
}

#endif
