// weights.glsl — the weight matrix at binding 0 and its loaders, one build per weight dtype
// (vulkan/shaders/variants.cmake): W_F16, W_BF16, W_Q8_0, W_Q4_0, W_Q4_K, W_Q5_K or W_Q6_K
// defined, else f32.
// F16 and BF16 are read as 32-bit words holding two values (element i in the low half when i is
// even), so the plain path needs neither 16-bit storage nor shaderFloat16. BF16 is the high half
// of an f32 (docs/ARCHITECTURE.md, "Tensors"). Quantised types stay in their GGUF blocks (quant.glsl).
// Indices are in weight elements for f32/f16/bf16 (4 or 2 bytes) and in bytes for quantised
// types (W_QUANT defined), whose rows are whole blocks.
//   float w_load(uint i)    element i                         (f32/f16/bf16 only)
//   vec2  w_load2(uint i)   elements i, i+1; i must be even   (f32/f16/bf16 only)
//   w_chunk8(row, k0, K, v) elements k0 .. k0+7 of the row starting at `row`, k0 a multiple of 8;
//                           those at k >= K read 0 (quantised rows never have such a tail)
// SPLIT (with W_Q8_0): the rows are in the split layout (TL_Q8_0_SPLIT, core/tensor.h;
// q8_split.comp makes it): the row's K int8 values, then its K/32 f16 scales, the row on a
// 4-byte boundary. The elements are the same products as dq8's, bit for bit.

#if defined(W_Q8_0) || defined(W_Q4_0) || defined(W_Q4_K) || defined(W_Q5_K) || defined(W_Q6_K)
#define W_QUANT 1
layout(std430, binding = 0) readonly buffer Weights { uint wq[]; };
#include "common/quant.glsl"
#elif defined(W_F16) || defined(W_BF16)
layout(std430, binding = 0) readonly buffer Weights { uint w_words[]; };
// the two values of a word: element 2j in the low half
vec2 w_pair(uint word)
{
#if defined(W_F16)
    return unpackHalf2x16(word);
#else
    return vec2(uintBitsToFloat(word << 16), uintBitsToFloat(word & 0xffff0000u));
#endif
}
#else
layout(std430, binding = 0) readonly buffer Weights { float w_f32[]; };
#endif

#if defined(WIDE) && !defined(W_QUANT) // (matvec_dot.comp reads its quantised blocks' pieces itself)
// WIDE: the same rows as 16-byte pieces, for w_chunk8_wide(e, v): elements e .. e+7 from the
// binding's start, e a multiple of 8 (the host checks that the window, the first row and the row
// stride are on 16 bytes). One load fetches 8 f16/bf16 values or 4 f32, where w_chunk8 loads a
// word at a time: on lavapipe every load is a loop over the SIMD lanes, so the count of loads,
// not of values, is what a product pays (docs/PERFORMANCE.md, "The tower on Vulkan").
#if defined(W_F16) || defined(W_BF16)
layout(std430, binding = 0) readonly buffer WeightPieces { uvec4 w_pieces[]; };
void w_chunk8_wide(uint e, out float v[8])
{
    const uvec4 u = w_pieces[e >> 3];
    const vec2 a = w_pair(u.x), b = w_pair(u.y), c = w_pair(u.z), d = w_pair(u.w);
    v = float[8](a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y);
}
#else
layout(std430, binding = 0) readonly buffer WeightPieces { vec4 w_pieces[]; };
void w_chunk8_wide(uint e, out float v[8])
{
    const vec4 a = w_pieces[e >> 2], b = w_pieces[(e >> 2) + 1u];
    v = float[8](a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
#endif
#endif

#if defined(SPLIT)
void w_chunk8(uint row, uint k0, uint K, out float v[8])
{
    const uint w = (row + k0) >> 2;
    dq8_words(wq[w], wq[w + 1u], half_bits_to_float(q_u16(row + K + 2u * (k0 / 32u))), v);
}
#elif defined(W_QUANT)
void w_chunk8(uint row, uint k0, uint K, out float v[8])
{
    dq8(row + (k0 / QK) * QBYTES, (k0 % QK) / 8u, v);
}
#else
#if defined(W_F16) || defined(W_BF16)
float w_load(uint i)
{
    const vec2 v = w_pair(w_words[i >> 1]);
    return (i & 1u) != 0u ? v.y : v.x;
}
vec2 w_load2(uint i) { return w_pair(w_words[i >> 1]); }
#else
float w_load(uint i) { return w_f32[i]; }
vec2 w_load2(uint i) { return vec2(w_f32[i], w_f32[i + 1u]); }
#endif

void w_chunk8(uint row, uint k0, uint K, out float v[8])
{
    // loads in bounds, then a select: no branch around a load (SIMD-lane implementations such
    // as lavapipe run both sides of every branch under a mask)
    for (uint i = 0u; i < 8u; i++) {
        const float w = w_load(row + min(k0 + i, K - 1u));
        v[i] = k0 + i < K ? w : 0.0;
    }
}
#endif
