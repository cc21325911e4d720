#version 450
// attention_tiled.comp — op_attention (core/ops.h) for many query rows: the vision tower (spec §4.5
// step 4, per-segment bidirectional) and prompt prefill (spec §2.6 step 6, causal GQA over the
// cache). The same contract, bindings, push constants, masks and split-K partials as
// attention.comp, which keeps decode (a few rows per kv head); this one is shaped like a matrix
// product, because at large T attention is two of them per key block:
//   S = (scale·Q)·Kᵀ, a BR×BK tile: each invocation owns TR rows × TK keys in registers, so per
//     head dim it loads TR + TK shared values for TR·TK products (attention.comp: two per product);
//   the online softmax (running max m and sum l per row, the accumulator rescaled by e^{m_old −
//     m_new}) computed by every invocation on its own scores, the row maxima and sums combined
//     through shared partials (LK per row), not by one invocation per row;
//   O += P·V, each invocation owning TRO rows × TD dims of the output in registers.
// Shared memory is read in 16-byte pieces: q and K rows as 4 dims each, so a score costs a quarter
// of the reads; probabilities as 4 keys and V as 4 dims, so P·V does too. On lavapipe every load
// is a loop over the SIMD lanes, so the count of loads is what the kernel pays (docs/PERFORMANCE.md,
// "The tower on Vulkan"); on GPUs the pieces are 128-bit shared loads. The score phase puts
// consecutive invocations on consecutive q rows (padded one piece apart, so they fall in
// different banks) and the P·V phase on consecutive dims (consecutive pieces).
// A workgroup owns BR rows (row ρ = t·r + hh: query t, head g·r + hh of kv head g) and one key
// range (grid z); grid x = row tiles, y = kv heads, as attention.comp.
// Assumes: WG = 128 (spec 0) = LR·LK with LR = 16; HDM (spec 1) ≥ hd and a multiple of 64 (so
//   each invocation's TD dims are whole pieces); BR (spec 2) a multiple of 16, BK (spec 3) a
//   multiple of 8; TR·TK ≤ 16 and TRO·TD ≤ 32 (the host's tile table, pipeline.c
//   attn_tiled_tile, keeps to them and sizes the arrays below). No subgroup operations.
//   out may alias q (rows are read by the workgroups that own them before any write). Every row
//   of a causal or segment mask sees itself, so l > 0 at the end of a single key range; a range
//   may see nothing (m stays NEG, l = 0), which attention_combine.comp skips.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint HDM = 64;
layout(constant_id = 2) const uint BR = 32;
layout(constant_id = 3) const uint BK = 32;
const uint LR = 16u;       // invocations along rows (scores) and along dims (P·V)
const uint LK = WG / LR;   // invocations along keys (scores) and along rows (P·V)
const uint TR = BR / LR;   // rows per invocation, scores
const uint TK = BK / LK;   // keys per invocation, scores
const uint TRO = BR / LK;  // rows per invocation, P·V
const uint TD = HDM / LR;  // dims per invocation, P·V
const uint HD4 = HDM / 4u; // pieces per q, K or V row
const uint TD4 = TD / 4u;  // pieces per invocation, P·V
const uint QS4 = HD4 + 1u; // q rows one piece apart: the score phase's rows fall in different banks
const uint PS4 = BK / 4u + 1u; // probability rows likewise (written across rows)
#define MAX_TR 4u
#define MAX_TK 4u
#define MAX_TRO 4u
#define MAX_TD4 4u
// Masked scores: finite, so no inf − inf can arise; e^{NEG − m} is 0 for any real score m.
#define NEG (-1.0e30)
#define NEG_HALF (-5.0e29)

layout(std430, binding = 0) readonly buffer Q { float qb[]; };
#include "common/attn_kv.glsl"
layout(std430, binding = 3) writeonly buffer O { float ob[]; };
layout(std430, binding = 4) readonly buffer Seg { int seg[]; };
layout(std430, binding = 5) writeonly buffer Part { float part[]; };
layout(push_constant) uniform PC { AttnPush p; };

shared vec4 sq4[BR * QS4];      // scale·q, row-major pieces (0 past hd and for absent rows)
shared vec4 sk4[BK * HD4];      // the K block, key-major pieces
shared vec4 sv4[BK * HD4];      // the V block, key-major pieces
shared vec4 sp4[BR * PS4];      // probabilities of the block, row-major pieces of 4 keys
shared float spart[2 * LK * BR]; // per (key lane, row): the block's partial max, then partial sum
shared float smax[2 * BR];      // running max per row, by block parity (read old, write new)
shared int srow[BR];            // causal: last key the row sees (−1: absent row); segments: its id
shared int svalid[BR];
shared int skey[BK];            // segments: the block's key ids
shared uint sany[2];            // segments: some row sees some key of the block (by block parity)

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint tr = tid % LR, tk = tid / LR; // scores: rows tr + LR·i, keys tk + LK·j
    const uint dl = tid % LR, rg = tid / LR; // P·V: dims dl·TD + i, rows rg + LK·j
    const uint g = gl_WorkGroupID.y, split = gl_WorkGroupID.z;
    const uint r = p.nh / p.nkv, n_rows = p.nt * r, rho0 = gl_WorkGroupID.x * BR;
    const bool causal = p.causal != 0u;

    for (uint e = tid; e < BR * HD4; e += WG) {
        const uint rho = rho0 + e / HD4, q0 = p.q_base + (g * r + rho % r) * p.q_s1 + (rho / r) * p.q_s2;
        vec4 x = vec4(0.0);
        for (uint c = 0u; c < 4u; c++) {
            const uint d = 4u * (e % HD4) + c;
            if (rho < n_rows && d < p.hd)
                x[c] = qb[q0 + d] * p.scale;
        }
        sq4[(e / HD4) * QS4 + e % HD4] = x;
    }
    if (tid < BR) {
        const uint rho = rho0 + tid, t = rho / r;
        const bool valid = rho < n_rows;
        svalid[tid] = valid ? 1 : 0;
        if (causal)
            srow[tid] = valid ? int(p.q_pos0 + p.t0 + t) : -1;
        else
            srow[tid] = valid ? seg[p.seg_base + p.t0 + t] : 0;
        smax[tid] = NEG;
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

    // the score rows' state, read once: it does not change from block to block
    int rvalid[MAX_TR], rid[MAX_TR];
    for (uint i = 0u; i < TR; i++)
        rvalid[i] = svalid[tr + LR * i], rid[i] = srow[tr + LR * i];
    const uint HU4 = (p.hd + 3u) / 4u; // pieces holding the head's dims (the rest are 0)

    vec4 acc[MAX_TRO * MAX_TD4];
    float m_run[MAX_TRO], l_run[MAX_TRO];
    for (uint j = 0u; j < TRO; j++) {
        m_run[j] = NEG;
        l_run[j] = 0.0;
        for (uint i = 0u; i < TD4; i++)
            acc[j * MAX_TD4 + i] = vec4(0.0);
    }
    uint blk = 0u, mp = 0u;
    for (uint j0 = klo; j0 < khi; j0 += BK, blk++) {
        const uint nk = min(BK, khi - j0), par = blk & 1u;
        int kid[MAX_TK] = int[MAX_TK](0, 0, 0, 0); // segments: this invocation's keys' ids
        if (!causal) {
            // Skip blocks no row of the tile sees (other images' segments). The flag of the next
            // block's parity is cleared here: its last reader passed this block's start.
            if (tid < BK)
                skey[tid] = tid < nk ? seg[p.seg_base + j0 + tid] : 0;
            if (tid == 0u)
                sany[par ^ 1u] = 0u;
            barrier(); // key ids written -> compared
            bool any = false;
            for (uint j = 0u; j < TK; j++)
                kid[j] = skey[tk + LK * j];
            for (uint i = 0u; i < TR; i++)
                for (uint j = 0u; j < TK; j++)
                    any = any || (tk + LK * j < nk && rvalid[i] != 0 && kid[j] == rid[i]);
            if (any)
                atomicOr(sany[par], 1u);
            barrier(); // flag set -> read by all
            if (sany[par] == 0u)
                continue; // uniform: every invocation read the same flag
        }
        for (uint e = tid; e < BK * HD4; e += WG) {
            const uint jj = e / HD4, key = j0 + min(jj, nk - 1u);
            const uint kr = p.k_base + g * p.k_s1 + key * p.k_s2, vr = p.v_base + g * p.v_s1 + key * p.v_s2;
            vec4 kx, vx;
            for (uint c = 0u; c < 4u; c++) {
                const uint d = 4u * (e % HD4) + c;
                const bool in_kv = jj < nk && d < p.hd;
                const float kk = k_at(kr, min(d, p.hd - 1u)), vv = v_at(vr, min(d, p.hd - 1u));
                kx[c] = in_kv ? kk : 0.0;
                vx[c] = in_kv ? vv : 0.0;
            }
            sk4[e] = kx;
            sv4[e] = vx;
        }
        barrier(); // K and V blocks written -> scores

        float s[MAX_TR * MAX_TK];
        for (uint i = 0u; i < TR * TK; i++)
            s[i] = 0.0;
        for (uint d4 = 0u; d4 < HU4; d4++) {
            vec4 qv[MAX_TR], kv[MAX_TK];
            for (uint i = 0u; i < TR; i++)
                qv[i] = sq4[(tr + LR * i) * QS4 + d4];
            for (uint j = 0u; j < TK; j++)
                kv[j] = sk4[(tk + LK * j) * HD4 + d4];
            for (uint i = 0u; i < TR; i++)
                for (uint j = 0u; j < TK; j++) {
                    const vec4 a = qv[i], b = kv[j];
                    s[i * MAX_TK + j] = fma(a.w, b.w, fma(a.z, b.z, fma(a.y, b.y, fma(a.x, b.x, s[i * MAX_TK + j]))));
                }
        }
        for (uint i = 0u; i < TR; i++) {
            float mx = NEG;
            for (uint j = 0u; j < TK; j++) {
                const uint jj = tk + LK * j;
                bool vis = jj < nk && rvalid[i] != 0;
                vis = vis && (causal ? int(j0 + jj) <= rid[i] : kid[j] == rid[i]);
                s[i * MAX_TK + j] = vis ? s[i * MAX_TK + j] : NEG;
                mx = max(mx, s[i * MAX_TK + j]);
            }
            spart[tk * BR + tr + LR * i] = mx;
        }
        barrier(); // partial maxima written -> the rows' maxima

        // smax[mp·BR..] holds the rows' maxima before this block, smax[(mp ^ 1)·BR..] gets them after
        for (uint i = 0u; i < TR; i++) {
            const uint row = tr + LR * i;
            float mb = NEG;
            for (uint c = 0u; c < LK; c++)
                mb = max(mb, spart[c * BR + row]);
            const float mo = smax[mp * BR + row], mn = mb > NEG_HALF ? max(mo, mb) : mo;
            float sum = 0.0;
            for (uint j = 0u; j < TK; j++) {
                const float x = s[i * MAX_TK + j];
                const float pr = x > NEG_HALF ? exp(x - mn) : 0.0;
                const uint jj = tk + LK * j;
                sp4[row * PS4 + jj / 4u][jj % 4u] = pr;
                sum += pr;
            }
            spart[LK * BR + tk * BR + row] = sum;
            if (tk == 0u)
                smax[(mp ^ 1u) * BR + row] = mn;
        }
        barrier(); // probabilities, partial sums and new maxima written -> P·V

        for (uint j = 0u; j < TRO; j++) {
            const uint row = rg + LK * j;
            const float mn = smax[(mp ^ 1u) * BR + row];
            const float corr = exp(m_run[j] - mn); // 1 while the row has seen nothing (NEG − NEG)
            float sum = 0.0;
            for (uint c = 0u; c < LK; c++)
                sum += spart[LK * BR + c * BR + row];
            l_run[j] = l_run[j] * corr + sum;
            m_run[j] = mn;
            for (uint i = 0u; i < TD4; i++)
                acc[j * MAX_TD4 + i] *= corr;
        }
        // keys in pieces of 4: past nk a piece holds probabilities 0 and V rows of 0
        for (uint k4 = 0u; k4 < (nk + 3u) / 4u; k4++) {
            vec4 pr[MAX_TRO];
            for (uint j = 0u; j < TRO; j++)
                pr[j] = sp4[(rg + LK * j) * PS4 + k4];
            for (uint c = 0u; c < 4u; c++)
                for (uint i = 0u; i < TD4; i++) {
                    const vec4 vv = sv4[(4u * k4 + c) * HD4 + dl * TD4 + i];
                    for (uint j = 0u; j < TRO; j++)
                        acc[j * MAX_TD4 + i] = fma(vec4(pr[j][c]), vv, acc[j * MAX_TD4 + i]);
                }
        }
        mp ^= 1u; // only blocks not skipped move the maxima
        barrier(); // blocks, probabilities and sums read -> the next block overwrites them
    }

    for (uint j = 0u; j < TRO; j++) {
        const uint rho = rho0 + rg + LK * j;
        if (rho >= n_rows)
            continue;
        const uint t = rho / r, h = g * r + rho % r;
        if (p.n_split == 1u) {
            const float inv = 1.0 / l_run[j];
            for (uint i = 0u; i < TD; i++) {
                const uint d = dl * TD + i;
                if (d < p.hd)
                    ob[p.o_base + (t * p.nh + h) * p.hd + d] = acc[j * MAX_TD4 + i / 4u][i % 4u] * inv;
            }
        } else {
            const uint pb = p.p_base + ((t * p.nh + h) * p.n_split + split) * (p.hd + 2u);
            for (uint i = 0u; i < TD; i++) {
                const uint d = dl * TD + i;
                if (d < p.hd)
                    part[pb + d] = acc[j * MAX_TD4 + i / 4u][i % 4u];
            }
            if (dl == 0u) {
                part[pb + p.hd] = m_run[j];
                part[pb + p.hd + 1u] = l_run[j];
            }
        }
    }
}
