#version 450
// cpy.comp — dst = src converted to dst's dtype (core/ops.h op_cpy): DST (spec 1) 0 f32, 1 f16,
// 2 bf16, rounded to nearest even bit for bit as core/fp16.h (math.glsl). Any strides both sides.
// Bindings: 0 src f32, 1 dst as 32-bit words. Push: RowsPush (x_* src, o_* dst in dst elements).
// f16/bf16: two elements share a word, and a strided dst row may share its first or last word
// with bytes that are not ours (a neighbouring row, or whatever lies beside a cache view). So one
// invocation owns one word of a row: a word wholly inside the row is stored, a word the row only
// half covers gets its half through atomicAnd/atomicOr, which leave the other half untouched
// even when another invocation writes it at the same time.
// Assumes: WG (spec 0) any size; 2-D grid. f32: ne0 invocations a row; f16/bf16: ne0/2 + 1 (the
//   row's words whatever its parity). n_rows times that stays below 2^31 (the host splits).
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

void main()
{
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    const uint per_row = DST == 0u ? p.ne0 : p.ne0 / 2u + 1u;
    if (e >= p.n_rows * per_row)
        return;
    const uint r = p.r0 + e / per_row, j = e % per_row;
    const uint xs = row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    const uint ds = row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3);
    if (DST == 0u) {
        o[ds + j] = floatBitsToUint(x[xs + j]);
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
