#version 450
// unary.comp — out = f(x) elementwise (core/ops.h op_unary, op_scale): OP (spec 1) is an enum
// unary_op (0 silu, 1 gelu tanh, 2 gelu erf, 3 sigmoid, 4 softplus, 5 exp) or 6 for scale by p.s,
// in common/math.glsl's m_unary (the forms core/cpu/elementwise.c uses).
// Bindings: 0 x f32, 1 out f32. Push: RowsPush (s: the scale factor).
// Assumes: WG (spec 0) any size. One invocation per element, 2-D grid; the host keeps
//   n_rows·ne0 below 2^31. out may alias x: each element is read and written by one invocation.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint OP = 0;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { RowsPush p; };

void main()
{
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    if (e >= p.n_rows * p.ne0)
        return;
    const uint r = p.r0 + e / p.ne0, i0 = e % p.ne0;
    const float v = x[row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3) + i0];
    o[row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3) + i0] = m_unary(OP, v, p.s);
}
