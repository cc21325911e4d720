#version 450
// attention_combine.comp — the last step of split-K attention (core/ops.h op_attention): merges
// the n_split partial results attention.comp left per row, each (acc[hd], m, l) with
// acc = Σ e^{s−m}·v and l = Σ e^{s−m} over one key range, into
//   out = Σ_s e^{m_s − M}·acc_s / Σ_s e^{m_s − M}·l_s,   M = max_s m_s.
// A range that saw no key has m = NEG (−1e30) and l = 0: its weight e^{NEG − M} is 0.
// Bindings: 0 partials f32, 1 out f32 (contiguous rows of hd). Push: AttnCombinePush.
// Grid: one workgroup per row (2-D, index.glsl), WG (spec 0) invocations over the dims. Any
// subgroup size; every invocation recomputes M and the weights (n_split is small).
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) writeonly buffer O { float ob[]; };
layout(push_constant) uniform PC { AttnCombinePush p; };

void main()
{
    const uint row = linear_group_id();
    if (row >= p.n_rows)
        return; // uniform across the workgroup; no barriers here
    const uint stride = p.hd + 2u, base = p.p_base + row * p.n_split * stride;
    float M = -1.0e30;
    for (uint s = 0u; s < p.n_split; s++)
        M = max(M, part[base + s * stride + p.hd]);
    float L = 0.0;
    for (uint s = 0u; s < p.n_split; s++)
        L += exp(part[base + s * stride + p.hd] - M) * part[base + s * stride + p.hd + 1u];
    const float inv = 1.0 / L;
    for (uint d = gl_LocalInvocationID.x; d < p.hd; d += WG) {
        float acc = 0.0;
        for (uint s = 0u; s < p.n_split; s++)
            acc = fma(exp(part[base + s * stride + p.hd] - M), part[base + s * stride + d], acc);
        ob[p.o_base + row * p.hd + d] = acc * inv;
    }
}
