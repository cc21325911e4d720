#version 450
// cpy.comp — dst = src converted to dst's dtype (core/ops.h op_cpy): DST (spec 1) 0 f32, 1 f16,
// 2 bf16, rounded to nearest even bit for bit as core/fp16.h (math.glsl); 3 q8_0 (a q8_0 KV
// cache), one invocation per 32-value block, rounded as core/quant.c's quantize_row_q8_0 (below).
// Any strides both sides.
// Bindings: 0 src f32, 1 dst as 32-bit words. Push: RowsPush (x_* src, o_* dst in dst elements;
// for q8_0 in bytes).
// f16/bf16: two elements share a word, and a strided dst row may share its first or last word
// with bytes that are not ours (a neighbouring row, or whatever lies beside a cache view). So one
// invocation owns one word of a row: a word wholly inside the row is stored, a word the row only
// half covers gets its half through atomicAnd/atomicOr, which leave the other half untouched
// even when another invocation writes it at the same time.
// q8_0: a 34-byte block rarely starts on a word, so its first and last words are shared with the
// neighbouring blocks (or foreign bytes); those get their bytes through atomicAnd/atomicOr as above.
// Assumes: WG (spec 0) any size; 2-D grid. f32: ne0 invocations a row; f16/bf16: ne0/2 + 1 (the
//   row's words whatever its parity); q8_0: ne0/32 (ne0 a multiple of 32, ops.c). n_rows times
//   that stays below 2^31 (the host splits).
//   dst may alias src only for f32 (each element read and written by one invocation).
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint DST = 0;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
layout(push_constant) uniform PC { RowsPush p; };

uint conv(float v) { return DST == 1u ? f32_to_f16_bits(v) : f32_to_bf16_bits(v); }

// roundf: to nearest, halves away from zero (GLSL's round() leaves halves to the implementation);
// v − trunc(v) is exact in f32
float round_away(float v)
{
    const float t = trunc(v);
    return abs(v - t) >= 0.5 ? t + sign(v) : t;
}

// Block b of the row at src float xs, stored at dst byte ds + 34b: d = amax/127 kept as f16, q =
// round(x·(1/d)) with the f32 d, as quantize_row_q8_0 (llama.cpp's reference). The divisions
// are exact on lavapipe (LLVM's fdiv); Vulkan allows 2.5 ulp, so another device may differ in a
// rare last bit of d or a q at a rounding tie (tests/ops: cpy_q8_0 compares bytes).
void cpy_q8_0(uint xs, uint ds)
{
    float amax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        const float a = abs(x[xs + j]);
        amax = amax > a ? amax : a; // core/util.h's MAX(amax, a), NaN included
    }
    precise const float d = amax / 127.0;
    precise const float id = d != 0.0 ? 1.0 / d : 0.0;
    uint bytes[9]; // the block's 34 bytes, packed from its own byte 0
    bytes[0] = f32_to_f16_bits(d);
    for (uint j = 0u; j < 32u; j++) {
        precise const float v = x[xs + j] * id;
        const float qf = round_away(v);
        // finite inputs land in [-127, 127]; the clamp mirrors core/quant.c for NaN/inf
        const int q = qf >= -127.0 && qf <= 127.0 ? int(qf) : qf > 0.0 ? 127 : qf < 0.0 ? -127 : 0;
        const uint at = j + 2u;
        if ((at & 3u) == 0u)
            bytes[at >> 2] = 0u;
        bytes[at >> 2] |= (uint(q) & 0xffu) << ((at & 3u) << 3);
    }
    // dst words w0 .. w1 hold bytes ds .. ds+33: byte k of word w is block byte 4w + k − ds
    const uint w0 = ds >> 2, w1 = (ds + 33u) >> 2;
    for (uint w = w0; w <= w1; w++) {
        uint val = 0u, mask = 0u;
        for (uint k = 0u; k < 4u; k++) {
            const uint bi = 4u * w + k - ds; // wraps above 33 for bytes before ds
            if (bi < 34u) {
                val |= ((bytes[bi >> 2] >> ((bi & 3u) << 3)) & 0xffu) << (k << 3);
                mask |= 0xffu << (k << 3);
            }
        }
        if (mask == 0xffffffffu) {
            o[w] = val;
        } else {
            atomicAnd(o[w], ~mask);
            atomicOr(o[w], val & mask);
        }
    }
}

void main()
{
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    const uint per_row = DST == 0u ? p.ne0 : DST == 3u ? p.ne0 / 32u : p.ne0 / 2u + 1u;
    if (e >= p.n_rows * per_row)
        return;
    const uint r = p.r0 + e / per_row, j = e % per_row;
    const uint xs = row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    const uint ds = row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3);
    if (DST == 0u) {
        o[ds + j] = floatBitsToUint(x[xs + j]);
        return;
    }
    if (DST == 3u) {
        cpy_q8_0(xs + 32u * j, ds + 34u * j);
        return;
    }
    // word j of the row: dst elements 2W, 2W+1 are row elements i0, i0 + 1
    const uint W = (ds >> 1) + j, i0 = 2u * W - ds;
    const bool lo_in = i0 < p.ne0, hi_in = i0 + 1u < p.ne0; // i0 wraps to ~0 when it is -1
    if (lo_in && hi_in) {
        o[W] = conv(x[xs + i0]) | (conv(x[xs + i0 + 1u]) << 16);
    } else if (lo_in) {
        atomicAnd(o[W], 0xffff0000u);
        atomicOr(o[W], conv(x[xs + i0]));
    } else if (hi_in) {
        atomicAnd(o[W], 0x0000ffffu);
        atomicOr(o[W], conv(x[xs + i0 + 1u]) << 16);
    }
}
