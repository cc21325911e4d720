#version 450
// matmul.comp — out[n][m] = Σ_k w[m][k]·x[n][k] (core/ops.h op_matmul, several x rows), tiled:
// each workgroup computes a BM×BN block of out through BK-deep slices of w and x staged in
// shared memory; each invocation owns a TM×TN register tile. f32 accumulate.
// Bindings: 0 w (weights.glsl: f32/f16/bf16 elements, or GGUF blocks dequantised per 8-element
// chunk as the tile is loaded), 1 x f32 (rows by x_s1..3 strides), 2 out f32 contiguous.
// Push: MatmulPush. Grid: x = M tiles, y = N tiles (the host keeps both within the limits).
// Assumes: WG (spec 0) == (BM/TM)·(BN/TN) with BM % TM == 0, BN % TN == 0 (spec 1, 2; the host
//   derives WG from them); BK (spec 3) any, and a multiple of 8 for quantised weights. M, N, K
//   need not be multiples of anything: loads outside the matrix read 0 and stores outside are
//   skipped. No subgroup operations.
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

// k-major, so the invocations of a row of the thread grid read consecutive words
shared float sw[BK * BM];
shared float sx[BK * BN];

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint TX = BM / TM, TY = BN / TN; // invocations along m and n
    const uint tm = tid % TX, tn = tid / TX;
    const uint m_tile = gl_WorkGroupID.x * BM, n_tile = gl_WorkGroupID.y * BN;

    float acc[TM * TN];
    for (uint i = 0u; i < TM * TN; i++)
        acc[i] = 0.0;

    for (uint k0 = 0u; k0 < p.K; k0 += BK) {
#if defined(W_QUANT)
        // 8-element chunks, dequantised once each; K is whole blocks, a multiple of 32, so with
        // BK % 8 == 0 a chunk is either wholly inside the row or wholly past it
        for (uint e = tid; e < BM * (BK / 8u); e += WG) {
            uint ml = e / (BK / 8u), kc = 8u * (e % (BK / 8u)), m = m_tile + ml;
            float v[8];
            if (m < p.M && k0 + kc < p.K)
                w_chunk8(p.w_base + m * p.w_stride, k0 + kc, p.K, v);
            else
                for (uint i = 0u; i < 8u; i++)
                    v[i] = 0.0;
            for (uint i = 0u; i < 8u; i++)
                sw[(kc + i) * BM + ml] = v[i];
        }
#else
        for (uint e = tid; e < BM * BK; e += WG) {
            uint ml = e / BK, kk = e % BK, m = m_tile + ml, k = k0 + kk;
            sw[kk * BM + ml] = (m < p.M && k < p.K) ? w_load(p.w_base + m * p.w_stride + k) : 0.0;
        }
#endif
        for (uint e = tid; e < BN * BK; e += WG) {
            uint nl = e / BK, kk = e % BK, n = n_tile + nl, k = k0 + kk;
            float v = 0.0;
            if (n < p.N && k < p.K)
                v = x[row_offset(p.r0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3) + k];
            sx[kk * BN + nl] = v;
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
                o[p.out_base + n * p.out_stride + m] = acc[i * TN + j];
        }
    }
}
