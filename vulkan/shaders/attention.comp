#version 450
// attention.comp — flash-style attention (core/ops.h op_attention): softmax(scale·q·kᵀ, masked)·v
// with GQA (query head h reads kv head h/(nh/nkv), spec §2.6 step 6), a causal mask with q_pos0,
// or the segment mask of the vision tower (spec §4.5 step 4). Keys are visited in blocks of BK
// with an online softmax (running max m and sum l per row, the accumulator rescaled by
// e^{m_old − m_new} when the max grows), so the score matrix never exists.
// A workgroup owns BR rows of one kv head — row ρ = t·r + hh is query t, head g·r + hh, so the r
// heads sharing a kv head reuse each K/V block — and one key range (split-K, grid z): with one
// range it writes out; with several it leaves (acc, m, l) per row for attention_combine.comp.
// Bindings: 0 q f32, 1 k, 2 v (f32, or words of f16 pairs with KV_F16, or words of q8_0 blocks
//   with KV_Q8_0, whose bases and strides are then in bytes), 3 out f32, 4 seg i32 (a dummy when
//   causal), 5 partials f32 (a dummy without split-K). Push: AttnPush. K/V blocks are widened to
//   f32 into shared memory as they are visited, never the whole cache.
// Grid: x = row tiles of this dispatch's queries, y = kv heads, z = key ranges.
// Assumes: WG (spec 0) a multiple of BR (spec 2); TPR = WG/BR invocations per row, each holding
//   NO = HDM/TPR ≤ 32 output dims (HDM, spec 1, ≥ hd) and NS = ⌈BK/TPR⌉ ≤ 8 scores (BK, spec 3)
//   — the host's spec builder guarantees both. No subgroup operations (any subgroup size). out
//   may alias q: a row's q is read only by the workgroups that own the row, before any writes.
//   Every row of a causal or segment mask sees at least one key (itself), so l > 0 at the end
//   of a single key range; a range may see nothing (m stays NEG, l = 0) and the combine skips it.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint HDM = 128;
layout(constant_id = 2) const uint BR = 32;
layout(constant_id = 3) const uint BK = 16;
const uint TPR = WG / BR;
const uint NO = HDM / TPR;
const uint NS = (BK + TPR - 1u) / TPR;
const uint LKV = HDM + 1u; // padded K/V row: the keys of one score step sit in different banks
const uint LP = BK + 1u;
#define MAX_NO 32u
#define MAX_NS 8u
// Masked scores: finite, so no inf − inf can arise; e^{NEG − m} is 0 for any real score m.
#define NEG (-1.0e30)
#define NEG_HALF (-5.0e29)

layout(std430, binding = 0) readonly buffer Q { float qb[]; };
#include "common/attn_kv.glsl"
layout(std430, binding = 3) writeonly buffer O { float ob[]; };
layout(std430, binding = 4) readonly buffer Seg { int seg[]; };
layout(std430, binding = 5) writeonly buffer Part { float part[]; };
layout(push_constant) uniform PC { AttnPush p; };

shared float sq[BR * HDM];  // scale·q of the tile's rows (0 past hd and for absent rows)
shared float skv[BK * LKV]; // the K block, then the V block
shared float sp[BR * LP];   // scores, then probabilities
shared float sm[BR], sl[BR], sc[BR]; // running max, running sum, this block's rescale
shared int srow[BR];        // causal: last key the row sees (−1: absent row); segments: its id
shared int svalid[BR];
shared int skey[BK];        // segments: the block's key ids
shared uint sany[2];        // segments: some row sees some key of the block (by block parity)

void main()
{
    const uint tid = gl_LocalInvocationID.x, row = tid / TPR, lane = tid % TPR;
    const uint g = gl_WorkGroupID.y, split = gl_WorkGroupID.z;
    const uint r = p.nh / p.nkv, n_rows = p.nt * r, rho0 = gl_WorkGroupID.x * BR;
    const bool causal = p.causal != 0u;

    for (uint e = tid; e < BR * HDM; e += WG) {
        const uint rho = rho0 + e / HDM, d = e % HDM;
        float x = 0.0;
        if (rho < n_rows && d < p.hd)
            x = qb[p.q_base + (g * r + rho % r) * p.q_s1 + (rho / r) * p.q_s2 + d] * p.scale;
        sq[e] = x;
    }
    if (tid < BR) {
        const uint rho = rho0 + tid, t = rho / r;
        const bool valid = rho < n_rows;
        svalid[tid] = valid ? 1 : 0;
        if (causal)
            srow[tid] = valid ? int(p.q_pos0 + p.t0 + t) : -1;
        else
            srow[tid] = valid ? seg[p.seg_base + p.t0 + t] : 0;
        sm[tid] = NEG;
        sl[tid] = 0.0;
    }
    if (tid < 2u)
        sany[tid] = 0u;

    // this workgroup's keys: its split's range, cut at the last key its last row may see
    uint klo = split * p.kps, khi = min(p.Tk, klo + p.kps);
    if (causal) {
        const uint last = min(rho0 + BR, n_rows) - 1u;
        khi = min(khi, p.q_pos0 + p.t0 + last / r + 1u);
    }
    barrier(); // q tile and row state written -> read

    float acc[MAX_NO];
    for (uint i = 0u; i < NO; i++)
        acc[i] = 0.0;
    uint blk = 0u;
    for (uint j0 = klo; j0 < khi; j0 += BK, blk++) {
        const uint nk = min(BK, khi - j0);
        if (!causal) {
            // Skip blocks no row of the tile sees (other images' segments). The flag of the
            // next block's parity is cleared here: its last reader passed this block's start.
            const uint par = blk & 1u;
            if (tid < BK)
                skey[tid] = tid < nk ? seg[p.seg_base + j0 + tid] : 0;
            if (tid == 0u)
                sany[par ^ 1u] = 0u;
            barrier(); // key ids written -> compared
            bool any = false;
            for (uint s = 0u; s < NS; s++) {
                const uint jj = lane + TPR * s;
                if (jj < nk && svalid[row] != 0 && skey[jj] == srow[row])
                    any = true;
            }
            if (any)
                atomicOr(sany[par], 1u);
            barrier(); // flag set -> read by all
            if (sany[par] == 0u)
                continue; // uniform: every invocation read the same flag
        }
        for (uint e = tid; e < BK * HDM; e += WG) {
            const uint jj = e / HDM, d = e % HDM;
            skv[jj * LKV + d] = (jj < nk && d < p.hd) ? k_at(p.k_base + g * p.k_s1 + (j0 + jj) * p.k_s2, d) : 0.0;
        }
        barrier(); // K block written -> scores

        for (uint s = 0u; s < NS; s++) {
            const uint jj = lane + TPR * s;
            if (jj < BK) {
                float x = 0.0;
                for (uint d = 0u; d < p.hd; d++)
                    x = fma(sq[row * HDM + d], skv[jj * LKV + d], x);
                bool vis = jj < nk && svalid[row] != 0;
                vis = vis && (causal ? int(j0 + jj) <= srow[row] : skey[jj] == srow[row]);
                sp[row * LP + jj] = vis ? x : NEG;
            }
        }
        barrier(); // scores written, K block read -> softmax, V block

        if (tid < BR) {
            float mb = NEG;
            for (uint jj = 0u; jj < BK; jj++)
                mb = max(mb, sp[tid * LP + jj]);
            float corr = 1.0;
            if (mb > NEG_HALF) {
                const float mn = max(sm[tid], mb);
                corr = exp(sm[tid] - mn);
                float sum = 0.0;
                for (uint jj = 0u; jj < BK; jj++) {
                    const float x = sp[tid * LP + jj];
                    const float pr = x > NEG_HALF ? exp(x - mn) : 0.0;
                    sp[tid * LP + jj] = pr;
                    sum += pr;
                }
                sl[tid] = sl[tid] * corr + sum;
                sm[tid] = mn;
            } else {
                for (uint jj = 0u; jj < BK; jj++)
                    sp[tid * LP + jj] = 0.0;
            }
            sc[tid] = corr;
        }
        for (uint e = tid; e < BK * HDM; e += WG) {
            const uint jj = e / HDM, d = e % HDM;
            skv[jj * LKV + d] = (jj < nk && d < p.hd) ? v_at(p.v_base + g * p.v_s1 + (j0 + jj) * p.v_s2, d) : 0.0;
        }
        barrier(); // probabilities and V block written -> accumulate

        const float corr = sc[row];
        for (uint i = 0u; i < NO; i++)
            acc[i] *= corr;
        for (uint jj = 0u; jj < nk; jj++) {
            const float pr = sp[row * LP + jj];
            for (uint i = 0u; i < NO; i++)
                acc[i] = fma(pr, skv[jj * LKV + lane + TPR * i], acc[i]);
        }
        barrier(); // V block and probabilities read -> next block
    }

    const uint rho = rho0 + row;
    if (rho >= n_rows)
        return;
    const uint t = rho / r, h = g * r + rho % r;
    if (p.n_split == 1u) {
        const float inv = 1.0 / sl[row];
        for (uint i = 0u; i < NO; i++) {
            const uint d = lane + TPR * i;
            if (d < p.hd)
                ob[p.o_base + (t * p.nh + h) * p.hd + d] = acc[i] * inv;
        }
    } else {
        const uint pb = p.p_base + ((t * p.nh + h) * p.n_split + split) * (p.hd + 2u);
        for (uint i = 0u; i < NO; i++) {
            const uint d = lane + TPR * i;
            if (d < p.hd)
                part[pb + d] = acc[i];
        }
        if (lane == 0u) {
            part[pb + p.hd] = sm[row];
            part[pb + p.hd + 1u] = sl[row];
        }
    }
}
