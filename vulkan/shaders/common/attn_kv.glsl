// attn_kv.glsl — the attention kernels' K and V bindings (1, 2) and their readers, by the KV cache's
// dtype (attention.comp, attention_tiled.comp): k_at/v_at(row, d) is element d of the K/V row that
// starts at `row` (in the binding's units: floats, halves, or bytes for q8_0), widened to f32.
#if defined(KV_F16)
// f16 K/V as 32-bit words of two halves (element e in the low half when e is even)
layout(std430, binding = 1) readonly buffer K { uint kw[]; };
layout(std430, binding = 2) readonly buffer V { uint vw[]; };
float k_at(uint row, uint d)
{
    const vec2 h = unpackHalf2x16(kw[(row + d) >> 1]);
    return ((row + d) & 1u) != 0u ? h.y : h.x;
}
float v_at(uint row, uint d)
{
    const vec2 h = unpackHalf2x16(vw[(row + d) >> 1]);
    return ((row + d) & 1u) != 0u ? h.y : h.x;
}
#elif defined(KV_Q8_0)
// q8_0 K/V (core/quant.h: 34-byte blocks, f16 d then int8 q[32]; value d·q) as 32-bit words,
// rows addressed in bytes: rows start on even bytes (ops.c), so a block's d is one half of a word.
// d is decoded exactly, subnormals too: unpackHalf2x16 may flush them, and a block whose largest
// value is below 127·2^-14 ≈ 7.8e-3 has a subnormal d.
float half_exact(uint h)
{
    const float m = float(h & 0x3ffu) * 5.9604644775390625e-8; // subnormal: m·2^-24, exact
    return (h & 0x7c00u) != 0u ? unpackHalf2x16(h).x : (h & 0x8000u) != 0u ? -m : m;
}
#define Q8_0_AT(W, row, d)                                                                         \
    const uint b = row + (d >> 5) * 34u, a = b + 2u + (d & 31u);                                   \
    const uint h = (W[b >> 2] >> ((b & 2u) << 3)) & 0xffffu;                                       \
    return float(bitfieldExtract(int(W[a >> 2]), int((a & 3u) << 3), 8)) * half_exact(h);
layout(std430, binding = 1) readonly buffer K { uint kw[]; };
layout(std430, binding = 2) readonly buffer V { uint vw[]; };
float k_at(uint row, uint d) { Q8_0_AT(kw, row, d) }
float v_at(uint row, uint d) { Q8_0_AT(vw, row, d) }
#else
layout(std430, binding = 1) readonly buffer K { float kf[]; };
layout(std430, binding = 2) readonly buffer V { float vf[]; };
float k_at(uint row, uint d) { return kf[row + d]; }
float v_at(uint row, uint d) { return vf[row + d]; }
#endif
