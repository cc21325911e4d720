#version 450
// conv.comp — causal depthwise conv over time with a carried state (core/ops.h op_conv1d_causal,
// spec §2.5 step 2, no activation): out[t][c] = Σ_{k<K} w[c][k]·h[t+k][c], h = [state rows; x rows]
// (cross-correlation: tap K−1 multiplies the current token); afterwards state = h rows T..T+K−2.
// Bindings: 0 x f32 (token rows by x_s1), 1 w f32 {K,C}, 2 state f32 {C,K−1} (read and written),
//   3 out f32 {C,T} contiguous. Push: ConvPush. Grid: x = channel groups of WG, y = blocks of TB
//   tokens of this dispatch's range [t0, t0+n). One invocation per (channel, token block).
// Assumes: WG (spec 0) any; TB (spec 1) ≥ K−1 (host), so only the call's first token block reads
//   the state (tokens t < K−1). With write_state, the invocations of this dispatch's first block
//   write the new state after their outputs. In a call of one dispatch they are the only readers
//   of the old state, and they fill rows upwards (row r takes h row T+r > r, never overwritten
//   yet). A call split across windows reads the state in its first dispatch and writes it in its
//   last, whose first token is ≥ K−1 (host), so the new state comes from x alone.
//   out must not alias x (ops.h).
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint TB = 16;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer S { float st[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { ConvPush p; };

// Row j of h for channel c: the carried inputs first, then x.
float h_at(uint j, uint c)
{
    const uint km1 = p.K - 1u;
    return j < km1 ? st[p.s_base + j * p.C + c] : x[p.x_base + (j - km1) * p.x_s1 + c];
}

void main()
{
    const uint c = gl_GlobalInvocationID.x;
    if (c >= p.C)
        return; // no barriers in this shader
    const uint t_begin = p.t0 + gl_WorkGroupID.y * TB, t_end = min(t_begin + TB, p.t0 + p.n);
    const uint wrow = p.w_base + c * p.K;
    for (uint t = t_begin; t < t_end; t++) {
        float acc = 0.0;
        for (uint k = 0u; k < p.K; k++)
            acc = fma(w[wrow + k], h_at(t + k, c), acc);
        o[p.o_base + t * p.C + c] = acc;
    }
    if (p.write_state != 0u && gl_WorkGroupID.y == 0u) {
        for (uint r = 0u; r + 1u < p.K; r++)
            st[p.s_base + r * p.C + c] = h_at(p.T + r, c);
    }
}
