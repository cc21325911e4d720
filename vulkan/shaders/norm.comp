#version 450
// norm.comp — RMSNorm per row (core/ops.h op_rmsnorm, spec §2.3):
//   out = x · rsqrt(mean(x²) + eps) · (w + w_shift), or without w (has_w = 0) scale 1.
// Bindings: 0 x f32, 1 w f32{ne0} (a dummy when has_w = 0), 2 out f32. Push: NormPush.
// Assumes: WG (spec 0) is a power of two (tree reduction). One workgroup per row (2-D grid).
//   out may alias x: each invocation reads x[i] before writing out[i], for the same i only.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { NormPush p; };

shared float partial[WG];

void main()
{
    const uint rl = linear_group_id();
    if (rl >= p.n_rows)
        return; // uniform across the workgroup
    const uint r = p.r0 + rl, tid = gl_LocalInvocationID.x;
    const uint xo = row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    const uint oo = row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3);
    float ss = 0.0;
    for (uint i = tid; i < p.ne0; i += WG) {
        float v = x[xo + i];
        ss = fma(v, v, ss);
    }
    partial[tid] = ss;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        barrier();
    }
    const float scale = inversesqrt(partial[0] / float(p.ne0) + p.eps);
    for (uint i = tid; i < p.ne0; i += WG) {
        float v = x[xo + i] * scale;
        if (p.has_w != 0u)
            v *= w[p.w_base + i] + p.w_shift;
        o[oo + i] = v;
    }
}
