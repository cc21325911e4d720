#version 450
// softmax.comp — row softmax of scale·x (core/ops.h op_softmax), the row max subtracted first
// so no exponent is positive; a row that is all −inf has no distribution and is written as
// zeros, as core/cpu/elementwise.c does (keeps NaN out of later sums).
// Bindings: 0 x f32, 1 out f32. Push: RowsPush (s: the scale).
// Assumes: WG (spec 0) is a power of two (tree reductions). One workgroup per row (2-D grid).
//   out may alias x: each element's input is read by the invocation that later writes it, and
//   every read of the row happens before the barrier that precedes the first write.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { RowsPush p; };

shared float partial[WG];

// Σ or max over the workgroup of each invocation's v (called in uniform control flow)
float reduce(float v, bool take_max)
{
    const uint tid = gl_LocalInvocationID.x;
    partial[tid] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            partial[tid] = take_max ? max(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
        barrier();
    }
    const float r = partial[0];
    barrier(); // everyone has read partial[0] before the next reduction overwrites it
    return r;
}

void main()
{
    const uint rl = linear_group_id();
    if (rl >= p.n_rows)
        return; // uniform across the workgroup
    const uint r = p.r0 + rl, tid = gl_LocalInvocationID.x;
    const uint xo = row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    const uint oo = row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3);
    const float NEG_INF = uintBitsToFloat(0xff800000u);
    float m = NEG_INF;
    for (uint i = tid; i < p.ne0; i += WG)
        m = max(m, p.s * x[xo + i]);
    m = reduce(m, true);
    float sum = 0.0;
    if (m != NEG_INF)
        for (uint i = tid; i < p.ne0; i += WG)
            sum += m_exp(p.s * x[xo + i] - m);
    sum = reduce(sum, false);
    const float inv = m == NEG_INF ? 0.0 : 1.0 / sum; // sum >= 1: the max's own term is e^0
    for (uint i = tid; i < p.ne0; i += WG)
        o[oo + i] = m == NEG_INF ? 0.0 : m_exp(p.s * x[xo + i] - m) * inv;
}
