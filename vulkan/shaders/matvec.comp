#version 450
// matvec.comp — out[n][m] = Σ_k w[m][k]·x[n][k] for a few x rows (core/ops.h op_matmul with
// N <= 8: decode and short prompts; on CPU devices also prefill, in groups of NX x rows along
// grid z), f32 accumulate, weights of any dtype read in place (weights.glsl; quantised ones in
// their GGUF blocks, dequantised bit-exactly per element).
// Bindings: 0 w, 1 x f32 (rows by x_s1..3 strides), 2 out f32, 3 and 4 the epilogue's bias and
// residual (common/epilogue.glsl, applied as each output is stored). Push: MatmulPush (N = NX).
// Each workgroup owns NR weight rows: its invocations walk the rows' 8-element chunks in
// strides of WG (consecutive invocations, consecutive memory; Q4_K/Q5_K: whole 32-element
// sub-blocks, whose scales are decoded once), dequantise each chunk once and use it for all N
// x rows; the partial sums meet in a shared-memory tree (log2 WG barriers), or,
// built with SG_REDUCE (the *_sg variants, for devices with subgroup arithmetic), in subgroupAdd
// then one barrier and a sum over the workgroup's subgroups: far fewer barriers per workgroup,
// which is what decode's many small workgroups pay for.
// WIDE (float weights; blobs matvec_sg_wide, _f16_wide, _bf16_wide): x rows and weight rows read
// as 16-byte pieces (weights.glsl w_chunk8_wide), a quarter to an eighth of the loads; the host
// takes it where K is a multiple of 8 and every row starts on 16 bytes (op_matmul.c wide_float_ok).
// Assumes: WG (spec 0, = local_size_x) is a power of two (the tree halves it) — the host picks it
//   from the device limits; the plain build works with any subgroup size (no subgroup
//   operations), the SG_REDUCE build with any too (it reads gl_NumSubgroups). NR (spec 1) >= 1;
//   NX (spec 2) = p.N, 1..8.
//   The grid's x and y are 2-D over weight rows (index.glsl linear_group_id), ceil(M / NR)
//   workgroups; z counts groups of NX x rows (a prefill on devices where caps.matvec_prefill).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(SG_REDUCE)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint NR = 2;
layout(constant_id = 2) const uint NX = 1; // x rows, = p.N (the host keeps one pipeline per N)

layout(std430, binding = 1) readonly buffer X { float x[]; };
#if defined(WIDE)
layout(std430, binding = 1) readonly buffer XPieces { vec4 x_pieces[]; };
#endif
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatmulPush p; };
#include "common/epilogue.glsl"

shared float red[NR * NX * WG];

void main()
{
    const uint m0 = linear_group_id() * NR;
    if (m0 >= p.M)
        return; // uniform across the workgroup, so the barriers below stay in uniform control flow
    const uint tid = gl_LocalInvocationID.x;
    // Straight-line code: every loop over rows (NR), x rows (NX) and chunk elements (8) has a
    // constant trip count and is unrolled, so acc, xo and v index registers with constants, and
    // nothing inside is conditional. A dynamically indexed private array lives in memory on most
    // GPUs, and implementations that run invocations as SIMD lanes (lavapipe) execute both sides
    // of every branch under a mask: with NX fixed to the call's N (instead of 8 masked x rows)
    // and the last workgroup's missing rows clamped to row M-1 (computed, never written), a
    // decode step does no masked-off work.
    const uint z0 = gl_WorkGroupID.z * NX; // this workgroup's x rows: z0 .. z0+NX-1 of the dispatch
    uint xo[NX], wrow[NR];
    [[unroll]] for (uint n = 0u; n < NX; n++)
        xo[n] = row_offset(p.r0 + z0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    [[unroll]] for (uint r = 0u; r < NR; r++)
        wrow[r] = p.w_base + min(m0 + r, p.M - 1u) * p.w_stride;
    float acc[NR * NX];
    [[unroll]] for (uint i = 0u; i < NR * NX; i++)
        acc[i] = 0.0;

#if defined(QSUB)
    // Q4_K/Q5_K: a step is one 32-element sub-block, its 6-bit scale, min and two f16 factors
    // decoded once for its four 8-element chunks (per chunk they cost about as much as the chunk)
    const uint n_steps = p.K / 32u, per = 4u;
#else
    const uint n_steps = (p.K + 7u) / 8u, per = 1u;
#endif
    for (uint st = tid; st < n_steps; st += WG) {
#if defined(QSUB)
        const uint kb = 32u * st, blk = (kb / QK) * QBYTES, j = (kb % QK) / 32u;
        float d1[NR], m1[NR];
        [[unroll]] for (uint r = 0u; r < NR; r++)
            dq_scale(wrow[r] + blk, j, d1[r], m1[r]);
#endif
        [[unroll]] for (uint c = 0u; c < per; c++) {
            const uint k0 = 8u * (per * st + c);
            float xv[NX * 8u];
#if defined(WIDE)
            [[unroll]] for (uint n = 0u; n < NX; n++) { // K % 8 == 0: no tail
                const uint q = (xo[n] + k0) >> 2;
                const vec4 a = x_pieces[q], b = x_pieces[q + 1u];
                xv[n * 8u + 0u] = a.x, xv[n * 8u + 1u] = a.y, xv[n * 8u + 2u] = a.z, xv[n * 8u + 3u] = a.w;
                xv[n * 8u + 4u] = b.x, xv[n * 8u + 5u] = b.y, xv[n * 8u + 6u] = b.z, xv[n * 8u + 7u] = b.w;
            }
#else
            [[unroll]] for (uint n = 0u; n < NX; n++)
                [[unroll]] for (uint i = 0u; i < 8u; i++)
#if defined(W_QUANT)
                    xv[n * 8u + i] = x[xo[n] + k0 + i]; // whole blocks: no tail
#else
                {   // the row's tail: w_chunk8 gives 0 there, and x is read in bounds, then zeroed
                    // (a select after the load, not a branch around it)
                    const float xx = x[xo[n] + min(k0 + i, p.K - 1u)];
                    xv[n * 8u + i] = k0 + i < p.K ? xx : 0.0;
                }
#endif
#endif
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                float v[8];
#if defined(QSUB)
                dq8_sub(wrow[r] + blk, j, c, d1[r], m1[r], v);
#elif defined(WIDE)
                w_chunk8_wide(wrow[r] + k0, v);
#else
                w_chunk8(wrow[r], k0, p.K, v);
#endif
                [[unroll]] for (uint n = 0u; n < NX; n++) {
                    float s = acc[r * NX + n];
                    [[unroll]] for (uint i = 0u; i < 8u; i++)
                        s = fma(v[i], xv[n * 8u + i], s);
                    acc[r * NX + n] = s;
                }
            }
        }
    }

    const uint n_rows = min(NR, p.M - m0);
#if defined(SG_REDUCE)
    [[unroll]] for (uint i = 0u; i < NR * NX; i++) {
        const float s = subgroupAdd(acc[i]);
        if (subgroupElect())
            red[i * WG + gl_SubgroupID] = s;
    }
    barrier();
    for (uint i = tid; i < NR * NX; i += WG) {
        const uint r = i / NX, n = i % NX;
        if (r < n_rows) {
            float s = 0.0;
            for (uint g = 0u; g < gl_NumSubgroups; g++)
                s += red[i * WG + g];
            o[p.out_base + (z0 + n) * p.out_stride + m0 + r] = ep_apply(s, m0 + r, z0 + n);
        }
    }
#else
    [[unroll]] for (uint i = 0u; i < NR * NX; i++)
        red[i * WG + tid] = acc[i];
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            [[unroll]] for (uint i = 0u; i < NR * NX; i++)
                red[i * WG + tid] += red[i * WG + tid + s];
        barrier();
    }
    for (uint i = tid; i < NR * NX; i += WG) {
        const uint r = i / NX, n = i % NX;
        if (r < n_rows)
            o[p.out_base + (z0 + n) * p.out_stride + m0 + r] = ep_apply(red[i * WG], m0 + r, z0 + n);
    }
#endif
}
