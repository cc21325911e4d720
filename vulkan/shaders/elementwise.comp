#version 450
// elementwise.comp — out = a + b or a · b (core/ops.h op_add/op_mul), b broadcast.
// Bindings: 0 a f32, 1 b f32, 2 out f32. Push: BinaryPush: b's strides are 0 on the dims it
// broadcasts (b_s0 is 0 or 1), so one index formula serves every broadcast pattern.
// Assumes: OP (spec 1) is 0 (add) or 1 (mul), as enum binary_op. WG (spec 0) any size. One
//   invocation per element, 2-D grid; the host keeps n_rows·ne0 below 2^31.
//   out may alias a (or b of a's shape): each element is read and written by one invocation.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint OP = 0;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { BinaryPush p; };

void main()
{
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    if (e >= p.n_rows * p.ne0)
        return;
    const uint r = p.r0 + e / p.ne0, i0 = e % p.ne0;
    const float av = a[row_offset(r, p.ne1, p.ne2, p.a_base, p.a_s1, p.a_s2, p.a_s3) + i0];
    const float bv = b[row_offset(r, p.ne1, p.ne2, p.b_base, p.b_s1, p.b_s2, p.b_s3) + i0 * p.b_s0];
    o[row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3) + i0] = OP == 0u ? av + bv : av * bv;
}
