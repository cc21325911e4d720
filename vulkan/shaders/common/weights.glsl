// weights.glsl — the weight matrix at binding 0 and its loaders, one build per weight dtype
// (vulkan/shaders/variants.cmake): W_F16 or W_BF16 defined, else f32.
// F16 and BF16 are read as 32-bit words holding two values (element i in the low half when i is
// even), so the plain path needs neither 16-bit storage nor shaderFloat16. BF16 is the high half
// of an f32 (design.md "Compute layer"). Indices are in weight elements (2 bytes for f16/bf16).
//   float w_load(uint i)   element i
//   vec2  w_load2(uint i)  elements i, i+1; i must be even

#if defined(W_F16) || defined(W_BF16)
layout(std430, binding = 0) readonly buffer Weights { uint w_words[]; };
#else
layout(std430, binding = 0) readonly buffer Weights { float w_f32[]; };
#endif

#if defined(W_F16)
float w_load(uint i)
{
    vec2 v = unpackHalf2x16(w_words[i >> 1]);
    return (i & 1u) != 0u ? v.y : v.x;
}
vec2 w_load2(uint i) { return unpackHalf2x16(w_words[i >> 1]); }
#elif defined(W_BF16)
float w_load(uint i)
{
    uint word = w_words[i >> 1];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xffff0000u) : (word << 16));
}
vec2 w_load2(uint i)
{
    uint word = w_words[i >> 1];
    return vec2(uintBitsToFloat(word << 16), uintBitsToFloat(word & 0xffff0000u));
}
#else
float w_load(uint i) { return w_f32[i]; }
vec2 w_load2(uint i) { return vec2(w_f32[i], w_f32[i + 1u]); }
#endif
