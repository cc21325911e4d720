#version 450
// matmul.comp — out[n][m] = Σ_k w[m][k]·x[n][k] (core/ops.h op_matmul, several x rows), tiled:
// each workgroup computes a BM×BN block of out through BK-deep slices of w and x staged in
// shared memory; each invocation owns a TM×TN register tile. f32 accumulate.
// Bindings: 0 w (weights.glsl: f32/f16/bf16 elements, or GGUF blocks dequantised per 8-element
// chunk as the tile is loaded), 1 x f32 (rows by x_s1..3 strides), 2 out f32 contiguous, 3 and 4
// the epilogue's bias and residual (common/epilogue.glsl, applied as each output is stored).
// Push: MatmulPush. Grid: x = M tiles, y = N tiles (the host keeps both within the limits).
// Assumes: WG (spec 0) == (BM/TM)·(BN/TN) with BM % TM == 0, BN % TN == 0 (spec 1, 2; the host
//   derives WG from them); BK (spec 3) a multiple of 8 dividing WG, with BM·BK and BN·BK
//   multiples of WG (every invocation stages the same number of elements: the loops below have
//   constant trip counts). M, N, K need not be multiples of anything: loads outside the matrix
//   are clamped in bounds and replaced by 0 (a select, no branch around the load: lavapipe and
//   other SIMD-lane implementations run both sides of a branch), stores outside are skipped.
//   No subgroup operations.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

#define TM 4
#define TN 4

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 16;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatmulPush p; };
#include "common/epilogue.glsl"

// k-major, so the invocations of a row of the thread grid read consecutive words
shared float sw[BK * BM];
shared float sx[BK * BN];

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint TX = BM / TM, TY = BN / TN; // invocations along m and n
    const uint tm = tid % TX, tn = tid / TX;
    const uint m_tile = gl_WorkGroupID.x * BM, n_tile = gl_WorkGroupID.y * BN;

    // What this invocation stages is the same in every K slice: element kk = tid % BK of rows
    // tid / BK + j·(WG / BK). The x rows' offsets (divisions) are computed once, here.
    const uint kk_own = tid % BK, XJ = BN * BK / WG, RS = WG / BK;
    uint xoff[XJ];
    bool xin[XJ];
    for (uint j = 0u; j < XJ; j++) {
        const uint n = n_tile + tid / BK + j * RS;
        xin[j] = n < p.N;
        xoff[j] = row_offset(p.r0 + min(n, p.N - 1u), p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    }

    float acc[TM * TN];
    for (uint i = 0u; i < TM * TN; i++)
        acc[i] = 0.0;

    for (uint k0 = 0u; k0 < p.K; k0 += BK) {
#if defined(W_QUANT)
        // 8-element chunks, dequantised once each; K is whole blocks, a multiple of 32, so with
        // BK % 8 == 0 a chunk is either wholly inside the row or wholly past it
        const uint CK = BK / 8u;
        for (uint j = 0u; j < BM * CK / WG; j++) {
            const uint e = tid + j * WG, ml = e / CK, kc = 8u * (e % CK), m = m_tile + ml;
            const bool in_w = m < p.M && k0 + kc < p.K;
            float v[8];
            w_chunk8(p.w_base + min(m, p.M - 1u) * p.w_stride, min(k0 + kc, p.K - 8u), p.K, v);
            for (uint i = 0u; i < 8u; i++)
                sw[(kc + i) * BM + ml] = in_w ? v[i] : 0.0;
        }
#else
        for (uint j = 0u; j < BM * BK / WG; j++) {
            const uint ml = tid / BK + j * RS, m = m_tile + ml, k = k0 + kk_own;
            const float w = w_load(p.w_base + min(m, p.M - 1u) * p.w_stride + min(k, p.K - 1u));
            sw[kk_own * BM + ml] = (m < p.M && k < p.K) ? w : 0.0;
        }
#endif
        for (uint j = 0u; j < XJ; j++) {
            const uint k = k0 + kk_own;
            const float v = x[xoff[j] + min(k, p.K - 1u)];
            sx[kk_own * BN + tid / BK + j * RS] = (xin[j] && k < p.K) ? v : 0.0;
        }
        barrier(); // tiles written -> tiles read
        for (uint kk = 0u; kk < BK; kk++) {
            float a[TM], b[TN];
            for (uint i = 0u; i < TM; i++)
                a[i] = sw[kk * BM + tm + i * TX];
            for (uint j = 0u; j < TN; j++)
                b[j] = sx[kk * BN + tn + j * TY];
            for (uint i = 0u; i < TM; i++)
                for (uint j = 0u; j < TN; j++)
                    acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
        }
        barrier(); // tiles read -> next slice overwrites them
    }

    for (uint i = 0u; i < TM; i++) {
        uint m = m_tile + tm + i * TX;
        for (uint j = 0u; j < TN; j++) {
            uint n = n_tile + tn + j * TY;
            if (m < p.M && n < p.N)
                o[p.out_base + n * p.out_stride + m] = ep_apply(acc[i * TN + j], m, n);
        }
    }
}
