#version 450
// gdn_recurrent.comp — Gated DeltaNet token by token (core/ops.h op_gdn_recurrent, spec §2.5
// steps 5–7) for decoding. Per token, with α = e^g and the old state S:
//   Sᵀk, Sᵀq in one read pass;  δ = β(v − α·Sᵀk);  o = α·Sᵀq + (k·q)·δ;  S ← αS + k δᵀ
// — spec step 7's S ← αS; δ = β(v − Sᵀk); S += kδᵀ; o = Sᵀq rearranged so the state is read once
// and written once per token (the algebra of core/cpu/gdn.c).
// Bindings: 0 q, 1 k {dk,Hk,T}, 2 v {dv,Hv,T}, 3 g, 4 beta {Hv,T}, 5 state {dv,dk,Hv} (read and
//   written), 6 out {dv,Hv,T} contiguous; all f32. Push: GdnPush (T: tokens of this dispatch).
// Grid: x = blocks of CB = WG/nl value columns, y = value heads. Value columns are independent,
//   so a workgroup owns its columns' state for the whole dispatch: the nl invocations ("lanes") of
//   column c hold S[i][c] for i ≡ lane (mod nl) in registers — at most RPL (spec 1) each, and the
//   host picks nl (a power of two dividing WG) with nl·RPL ≥ dk. Column sums over the lanes go
//   through shared memory, double-buffered by token parity, so one barrier per token suffices.
// Assumes: WG (spec 0) a multiple of nl; no subgroup operations (any subgroup size). out may
//   alias v: every lane of column c reads v[t][j][c] before the token's barrier, lane 0 writes
//   out[t][j][c] after it. out must not alias q or k (host).
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/gdn_chunk.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint RPL = 16;

layout(std430, binding = 0) readonly buffer Q { float qb[]; };
layout(std430, binding = 1) readonly buffer K { float kb[]; };
layout(std430, binding = 2) readonly buffer V { float vb[]; };
layout(std430, binding = 3) readonly buffer G { float gb[]; };
layout(std430, binding = 4) readonly buffer B { float bb[]; };
layout(std430, binding = 5) buffer S { float st[]; };
layout(std430, binding = 6) writeonly buffer O { float ob[]; };
layout(push_constant) uniform PC { GdnPush p; };

shared float red[2 * 3 * WG]; // [parity][Sᵀk, Sᵀq, k·q][invocation]

void main()
{
    const uint tid = gl_LocalInvocationID.x, nl = p.nl, cb = WG / nl;
    const uint lane = tid / cb, cl = tid % cb;
    const uint c = gl_WorkGroupID.x * cb + cl, j = gl_WorkGroupID.y;
    const bool col = c < p.dv; // columns past dv only join the barriers
    const uint hk = key_head(j, p.Hk, p.tiled, p.ratio);
    const uint sbase = p.s_base + j * p.dk * p.dv + c;

    float s[RPL];
    for (uint r = 0u; r < RPL; r++) {
        const uint i = lane + nl * r;
        s[r] = (col && i < p.dk) ? st[sbase + i * p.dv] : 0.0;
    }
    for (uint t = 0u; t < p.T; t++) {
        const uint par = (t & 1u) * 3u * WG;
        const uint qo = p.q_base + hk * p.q_s1 + t * p.q_s2, ko = p.k_base + hk * p.k_s1 + t * p.k_s2;
        float ks = 0.0, qs = 0.0, kq = 0.0;
        for (uint r = 0u; r < RPL; r++) {
            const uint i = lane + nl * r;
            if (i < p.dk) {
                const float ki = kb[ko + i], qi = qb[qo + i] * p.scale;
                ks = fma(s[r], ki, ks);
                qs = fma(s[r], qi, qs);
                kq = fma(ki, qi, kq);
            }
        }
        const float vc = col ? vb[p.v_base + j * p.v_s1 + t * p.v_s2 + c] : 0.0;
        const float alpha = gdn_decay(gb[p.g_base + t * p.g_s1 + j]), beta = bb[p.b_base + t * p.b_s1 + j];
        red[par + tid] = ks;
        red[par + WG + tid] = qs;
        red[par + 2u * WG + tid] = kq;
        barrier(); // partials written -> summed per column
        float KS = 0.0, QS = 0.0, KQ = 0.0;
        for (uint l = 0u; l < nl; l++) {
            KS += red[par + l * cb + cl];
            QS += red[par + WG + l * cb + cl];
            KQ += red[par + 2u * WG + l * cb + cl];
        }
        const float delta = beta * (vc - alpha * KS);
        if (lane == 0u && col)
            ob[p.o_base + (t * p.Hv + j) * p.dv + c] = alpha * QS + KQ * delta;
        for (uint r = 0u; r < RPL; r++) {
            const uint i = lane + nl * r;
            if (i < p.dk)
                s[r] = fma(alpha, s[r], kb[ko + i] * delta);
        }
    }
    for (uint r = 0u; r < RPL; r++) {
        const uint i = lane + nl * r;
        if (col && i < p.dk)
            st[sbase + i * p.dv] = s[r];
    }
}
