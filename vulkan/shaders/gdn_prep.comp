#version 450
// gdn_prep.comp — the state-independent half of the chunked Gated DeltaNet (core/ops.h
// op_gdn_chunked, spec §2.5 step 8), for every (chunk, value head) of a batch at once: nothing
// here depends on the carried state, so all chunks run in parallel. Per chunk of L ≤ 64 tokens:
//   D_im = e^{Γ_i − Γ_m} (m ≤ i), A_im = β_i (k_i·k_m) D_im (m < i), Tinv = (I + A)⁻¹,
//   W = Tinv·(β e^Γ ⊙ K), U = Tinv·(β ⊙ V), P = (scale·Q·Kᵀ) ⊙ D, and the row factors
// into one scratch block (layout in common/gdn_chunk.glsl); gdn_state.comp then walks the chunks.
// Bindings: 0 q, 1 k {dk,Hk,T}, 2 v {dv,Hv,T}, 3 g, 4 beta {Hv,T} (f32, bases at the batch's
//   first token), 5 scratch f32 (written). Push: GdnPush (T: the batch's tokens).
// Grid: x = chunks of the batch, y = value heads. 256 invocations (local_size_x below; the host's
//   supports() asks for 256), and about 17.6 KiB of shared memory.
// Numerics (all f32): every exponent is a sum of g's over exactly the range it spans, never a
//   difference of two prefix sums, so strong decays (Γ down to −640 inside a chunk) cost no
//   accuracy on the factors that matter; each exponent is ≤ 0 (g ≤ 0) and nothing overflows.
//   Tinv by forward substitution, one column per invocation, no barriers inside.
// Assumes: any subgroup size (no subgroup operations); dk, dv any.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/gdn_chunk.glsl"

#define WG 256u
#define DS 32u                                  // dk slice staged per step of K·Kᵀ and Q·Kᵀ
#define LDS (DS + 1u)                           // padded: rows of a slice start in different banks
#define NTRI (GDN_CH * (GDN_CH - 1u) / 2u)      // strictly lower triangle, packed

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Q { float qb[]; };
layout(std430, binding = 1) readonly buffer K { float kb[]; };
layout(std430, binding = 2) readonly buffer V { float vb[]; };
layout(std430, binding = 3) readonly buffer G { float gb[]; };
layout(std430, binding = 4) readonly buffer B { float bb[]; };
layout(std430, binding = 5) writeonly buffer Scr { float scr[]; };
layout(push_constant) uniform PC { GdnPush p; };

// K and Q slices {CH×LDS} each while the products run; then A at 0 and Tinv at NTRI, both
// strictly lower and packed, (i, m < i) at i(i−1)/2 + m (Tinv's unit diagonal is implicit).
shared float sh[2u * GDN_CH * LDS];
shared float sg[GDN_CH], sbeta[GDN_CH], srk[GDN_CH]; // g, β, β·e^Γ per row

uint tri(uint i, uint m) { return i * (i - 1u) / 2u + m; }

// Tinv[i][m] for m ≤ i
float tinv(uint i, uint m) { return i == m ? 1.0 : sh[NTRI + tri(i, m)]; }

void main()
{
    const uint tid = gl_LocalInvocationID.x, n = gl_WorkGroupID.x, j = gl_WorkGroupID.y;
    const uint t0 = n * GDN_CH, L = min(GDN_CH, p.T - t0);
    const uint hk = key_head(j, p.Hk, p.tiled, p.ratio);
    const uint blk = p.scr_base + (n * p.Hv + j) * p.per;
    const uint qo = p.q_base + hk * p.q_s1 + t0 * p.q_s2, ko = p.k_base + hk * p.k_s1 + t0 * p.k_s2;
    const uint vo = p.v_base + j * p.v_s1 + t0 * p.v_s2;

    if (tid < GDN_CH) {
        sg[tid] = tid < L ? gb[p.g_base + (t0 + tid) * p.g_s1 + j] : 0.0;
        sbeta[tid] = tid < L ? bb[p.b_base + (t0 + tid) * p.b_s1 + j] : 0.0;
    }
    barrier(); // g, β -> row factors

    // Row factors e^{Γ_i} (Γ_i = Σ_{l≤i} g_l) and e^{Γ_L − Γ_i} = e^{Σ_{l>i} g_l}
    if (tid < L) {
        float gi = 0.0, gr = 0.0;
        for (uint l = 0u; l <= tid; l++)
            gi += sg[l];
        for (uint l = tid + 1u; l < L; l++)
            gr += sg[l];
        const float eg = gdn_decay(gi);
        srk[tid] = sbeta[tid] * eg;
        scr[blk + gdn_off_fq(p.dk, p.dv) + tid] = p.scale * eg;
        scr[blk + gdn_off_fk(p.dk, p.dv) + tid] = gdn_decay(gr);
        if (tid == L - 1u)
            scr[blk + gdn_off_dec(p.dk, p.dv)] = eg;
    }

    // K·Kᵀ and Q·Kᵀ over dk slices: invocation (ti, tm) owns i = ti + 16a, m = tm + 16b
    const uint ti = tid % 16u, tm = tid / 16u;
    float kk[16], qk[16];
    for (uint e = 0u; e < 16u; e++) {
        kk[e] = 0.0;
        qk[e] = 0.0;
    }
    for (uint d0 = 0u; d0 < p.dk; d0 += DS) {
        for (uint e = tid; e < GDN_CH * DS; e += WG) {
            const uint i = e / DS, dd = e % DS, d = d0 + dd;
            const bool in_range = i < L && d < p.dk;
            sh[i * LDS + dd] = in_range ? kb[ko + i * p.k_s2 + d] : 0.0;
            sh[GDN_CH * LDS + i * LDS + dd] = in_range ? qb[qo + i * p.q_s2 + d] : 0.0;
        }
        barrier(); // slices written -> read
        for (uint dd = 0u; dd < DS; dd++) {
            float ka[4], qa[4], km[4];
            for (uint a = 0u; a < 4u; a++) {
                ka[a] = sh[(ti + 16u * a) * LDS + dd];
                qa[a] = sh[GDN_CH * LDS + (ti + 16u * a) * LDS + dd];
                km[a] = sh[(tm + 16u * a) * LDS + dd];
            }
            for (uint a = 0u; a < 4u; a++)
                for (uint b = 0u; b < 4u; b++) {
                    kk[a * 4u + b] = fma(ka[a], km[b], kk[a * 4u + b]);
                    qk[a * 4u + b] = fma(qa[a], km[b], qk[a * 4u + b]);
                }
        }
        barrier(); // slices read -> overwritten (next slice, or A below)
    }

    // A into shared memory, P into the scratch; D_im = e^{Σ_{m<l≤i} g_l}
    for (uint a = 0u; a < 4u; a++)
        for (uint b = 0u; b < 4u; b++) {
            const uint i = ti + 16u * a, m = tm + 16u * b;
            if (i < L && m <= i) {
                float x = 0.0;
                for (uint l = m + 1u; l <= i; l++)
                    x += sg[l];
                const float D = m == i ? 1.0 : gdn_decay(x);
                if (m < i)
                    sh[tri(i, m)] = sbeta[i] * kk[a * 4u + b] * D;
                scr[blk + gdn_off_p(p.dk, p.dv) + i * GDN_CH + m] = p.scale * qk[a * 4u + b] * D;
            }
        }
    barrier(); // A written -> forward substitution

    // Tinv = (I + A)⁻¹, column e by invocation e: x_e = 1, x_i = −Σ_{e≤m<i} A_im·x_m
    if (tid < L) {
        const uint e = tid;
        for (uint i = e + 1u; i < L; i++) {
            float acc = sh[tri(i, e)];
            for (uint m = e + 1u; m < i; m++)
                acc = fma(sh[tri(i, m)], sh[NTRI + tri(m, e)], acc);
            sh[NTRI + tri(i, e)] = -acc;
        }
    }
    barrier(); // Tinv written -> W, U

    // W = Tinv·(β e^Γ ⊙ K), U = Tinv·(β ⊙ V): invocation (tr, tc) owns rows i = tr + 8a and
    // columns ≡ tc (mod 32), so neighbouring invocations read neighbouring elements of K, V
    const uint tc = tid % 32u, tr = tid / 32u;
    for (uint d = tc; d < p.dk; d += 32u) {
        float acc[8];
        for (uint a = 0u; a < 8u; a++)
            acc[a] = 0.0;
        for (uint m = 0u; m < L; m++) {
            const float y = srk[m] * kb[ko + m * p.k_s2 + d];
            for (uint a = 0u; a < 8u; a++) {
                const uint i = tr + 8u * a;
                if (i >= m && i < L)
                    acc[a] = fma(tinv(i, m), y, acc[a]);
            }
        }
        for (uint a = 0u; a < 8u; a++) {
            const uint i = tr + 8u * a;
            if (i < L)
                scr[blk + i * p.dk + d] = acc[a];
        }
    }
    for (uint c = tc; c < p.dv; c += 32u) {
        float acc[8];
        for (uint a = 0u; a < 8u; a++)
            acc[a] = 0.0;
        for (uint m = 0u; m < L; m++) {
            const float y = sbeta[m] * vb[vo + m * p.v_s2 + c];
            for (uint a = 0u; a < 8u; a++) {
                const uint i = tr + 8u * a;
                if (i >= m && i < L)
                    acc[a] = fma(tinv(i, m), y, acc[a]);
            }
        }
        for (uint a = 0u; a < 8u; a++) {
            const uint i = tr + 8u * a;
            if (i < L)
                scr[blk + gdn_off_u(p.dk) + i * p.dv + c] = acc[a];
        }
    }
}
