#version 450
// gdn_state.comp — the state-carrying half of the chunked Gated DeltaNet (core/ops.h
// op_gdn_chunked, spec §2.5 step 8): walks the chunks of a batch in order with the state S
// {dk×dv} of one value head, using the blocks gdn_prep.comp left in the scratch:
//   V' = U − W·S;   O = (e^Γ ⊙ scale·Q)·S + P·V';   S ← e^{Γ_L}·S + (e^{Γ_L − Γ} ⊙ K)ᵀ·V'
// Every value column c of S, V', O depends only on the same column, so a workgroup owns CB
// columns of one head and the columns of all heads run in parallel; only the chunks are serial.
// Bindings: 0 q, 1 k {dk,Hk,T} (bases at the batch's first token), 2 scratch (read), 3 state
//   {dv,dk,Hv} (read and written), 4 out {dv,Hv,T} contiguous. Push: GdnPush.
// Grid: x = blocks of CB value columns, y = value heads. 256 invocations = CB columns × 16 row
//   lanes; the state block {dk×CB} and V' {CH×CB} live in shared memory (20 KiB at dk ≤ DKM).
// Assumes: dk ≤ DKM (host); any subgroup size. out may alias v (v was read by gdn_prep.comp in an
//   earlier dispatch); out must not alias q or k (host).
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/gdn_chunk.glsl"

#define WG 256u
#define CB 16u          // value columns per workgroup
#define RL (WG / CB)    // row lanes
#define DKM 256u        // largest dk
#define NR (GDN_CH / RL) // chunk rows per invocation
#define ND (DKM / RL)    // state rows per invocation

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Q { float qb[]; };
layout(std430, binding = 1) readonly buffer K { float kb[]; };
layout(std430, binding = 2) readonly buffer Scr { float scr[]; };
layout(std430, binding = 3) buffer S { float st[]; };
layout(std430, binding = 4) writeonly buffer O { float ob[]; };
layout(push_constant) uniform PC { GdnPush p; };

shared float sS[DKM * CB];    // S[d][c] of this block's columns
shared float sV[GDN_CH * CB]; // V'[i][c]

void main()
{
    const uint tid = gl_LocalInvocationID.x, tc = tid % CB, tr = tid / CB;
    const uint c = gl_WorkGroupID.x * CB + tc, j = gl_WorkGroupID.y;
    const bool col = c < p.dv; // columns past dv compute zeros and write nothing
    const uint hk = key_head(j, p.Hk, p.tiled, p.ratio);
    const uint sbase = p.s_base + j * p.dk * p.dv + c;
    const uint off_u = gdn_off_u(p.dk), off_p = gdn_off_p(p.dk, p.dv);
    const uint off_fq = gdn_off_fq(p.dk, p.dv), off_fk = gdn_off_fk(p.dk, p.dv), off_dec = gdn_off_dec(p.dk, p.dv);

    for (uint d = tr; d < p.dk; d += RL)
        sS[d * CB + tc] = col ? st[sbase + d * p.dv] : 0.0;
    barrier(); // state block loaded -> read by every row lane

    const uint n_chunks = (p.T + GDN_CH - 1u) / GDN_CH;
    for (uint n = 0u; n < n_chunks; n++) {
        const uint t0 = n * GDN_CH, L = min(GDN_CH, p.T - t0);
        const uint blk = p.scr_base + (n * p.Hv + j) * p.per;
        const uint qo = p.q_base + hk * p.q_s1 + t0 * p.q_s2, ko = p.k_base + hk * p.k_s1 + t0 * p.k_s2;

        // W·S and Q·S for rows i = tr + RL·a
        float x1[NR], x2[NR];
        for (uint a = 0u; a < NR; a++) {
            x1[a] = 0.0;
            x2[a] = 0.0;
        }
        for (uint d = 0u; d < p.dk; d++) {
            const float s = sS[d * CB + tc];
            for (uint a = 0u; a < NR; a++) {
                const uint i = tr + RL * a;
                if (i < L) {
                    x1[a] = fma(scr[blk + i * p.dk + d], s, x1[a]);
                    x2[a] = fma(qb[qo + i * p.q_s2 + d], s, x2[a]);
                }
            }
        }
        // V' = U − W·S
        for (uint a = 0u; a < NR; a++) {
            const uint i = tr + RL * a;
            if (i < L) {
                const float u = col ? scr[blk + off_u + i * p.dv + c] : 0.0;
                sV[i * CB + tc] = u - x1[a];
                x2[a] *= scr[blk + off_fq + i];
            }
        }
        barrier(); // V' written and S read -> O and the state update

        // O = e^Γ·scale·Q·S + P·V'
        for (uint a = 0u; a < NR; a++) {
            const uint i = tr + RL * a;
            if (i < L) {
                float o = x2[a];
                for (uint m = 0u; m <= i; m++)
                    o = fma(scr[blk + off_p + i * GDN_CH + m], sV[m * CB + tc], o);
                if (col)
                    ob[p.o_base + ((t0 + i) * p.Hv + j) * p.dv + c] = o;
            }
        }
        // S ← e^{Γ_L}·S + (e^{Γ_L − Γ} ⊙ K)ᵀ·V' for state rows d = tr + RL·a (own entries only)
        const float dec = scr[blk + off_dec];
        float acc[ND];
        for (uint a = 0u; a < ND; a++) {
            const uint d = tr + RL * a;
            acc[a] = d < p.dk ? dec * sS[d * CB + tc] : 0.0;
        }
        for (uint i = 0u; i < L; i++) {
            const float f = scr[blk + off_fk + i] * sV[i * CB + tc];
            for (uint a = 0u; a < ND; a++) {
                const uint d = tr + RL * a;
                if (d < p.dk)
                    acc[a] = fma(kb[ko + i * p.k_s2 + d], f, acc[a]);
            }
        }
        for (uint a = 0u; a < ND; a++) {
            const uint d = tr + RL * a;
            if (d < p.dk)
                sS[d * CB + tc] = acc[a];
        }
        barrier(); // S updated and V' read -> next chunk
    }
    for (uint d = tr; d < p.dk; d += RL)
        if (col)
            st[sbase + d * p.dv] = sS[d * CB + tc];
}
