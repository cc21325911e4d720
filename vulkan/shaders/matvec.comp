#version 450
// matvec.comp — out[n][m] = Σ_k w[m][k]·x[n][k] for a few x rows (core/ops.h op_matmul with
// N <= 8: decode and short prompts), f32 accumulate, weights of any dtype read in place
// (weights.glsl; quantised ones in their GGUF blocks, dequantised bit-exactly per element).
// Bindings: 0 w, 1 x f32 (rows by x_s1..3 strides), 2 out f32. Push: MatmulPush (N <= NMAX).
// Each workgroup owns NR weight rows: its invocations walk the rows' 8-element chunks in
// strides of WG (consecutive invocations, consecutive memory), dequantise each chunk once and
// use it for all N x rows; the partial sums meet in a shared-memory tree (log2 WG barriers), or,
// built with SG_REDUCE (the *_sg variants, for devices with subgroup arithmetic), in subgroupAdd
// then one barrier and a sum over the workgroup's subgroups: far fewer barriers per workgroup,
// which is what decode's many small workgroups pay for.
// Assumes: WG (spec 0, = local_size_x) is a power of two (the tree halves it) — the host picks it
//   from the device limits; the plain build works with any subgroup size (no subgroup
//   operations), the SG_REDUCE build with any too (it reads gl_NumSubgroups). NR (spec 1) >= 1.
//   The grid is 2-D (index.glsl linear_group_id), ceil(M / NR) workgroups.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(SG_REDUCE)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

#define NMAX 8u

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint NR = 2;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatmulPush p; };

shared float red[NR * NMAX * WG];

void main()
{
    const uint m0 = linear_group_id() * NR;
    if (m0 >= p.M)
        return; // uniform across the workgroup, so the barriers below stay in uniform control flow
    const uint tid = gl_LocalInvocationID.x;
    const uint n_rows = min(NR, p.M - m0);
    // Every loop over rows (NR), x rows (NMAX) and chunk elements (8) is unrolled, so acc, xo and
    // v index registers with constants: a dynamically indexed private array lives in memory on
    // most GPUs (and is gathered lane by lane on CPU implementations), which made this kernel
    // many times slower. Rows past n_rows or x rows past p.N are masked, not skipped.
    uint xo[NMAX];
    [[unroll]] for (uint n = 0u; n < NMAX; n++)
        xo[n] = n < p.N ? row_offset(p.r0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3) : 0u;
    float acc[NR * NMAX];
    [[unroll]] for (uint i = 0u; i < NR * NMAX; i++)
        acc[i] = 0.0;

    const uint n_chunks = (p.K + 7u) / 8u;
    for (uint ch = tid; ch < n_chunks; ch += WG) {
        const uint k0 = 8u * ch;
        [[unroll]] for (uint r = 0u; r < NR; r++) {
            if (r < n_rows) {
                float v[8];
                w_chunk8(p.w_base + (m0 + r) * p.w_stride, k0, p.K, v);
                [[unroll]] for (uint n = 0u; n < NMAX; n++) {
                    if (n < p.N) {
                        float s = acc[r * NMAX + n];
#if defined(W_QUANT)
                        [[unroll]] for (uint i = 0u; i < 8u; i++) // whole blocks: no tail
                            s = fma(v[i], x[xo[n] + k0 + i], s);
#else
                        // the row's tail: w_chunk8 gives 0, and x past K is neither read nor used
                        [[unroll]] for (uint i = 0u; i < 8u; i++)
                            s = fma(v[i], k0 + i < p.K ? x[xo[n] + min(k0 + i, p.K - 1u)] : 0.0, s);
#endif
                        acc[r * NMAX + n] = s;
                    }
                }
            }
        }
    }

#if defined(SG_REDUCE)
    // p.N is uniform, so every invocation takes part in each subgroupAdd
    [[unroll]] for (uint r = 0u; r < NR; r++)
        [[unroll]] for (uint n = 0u; n < NMAX; n++)
            if (n < p.N) {
                const float s = subgroupAdd(acc[r * NMAX + n]);
                if (subgroupElect())
                    red[(r * NMAX + n) * WG + gl_SubgroupID] = s;
            }
    barrier();
    for (uint i = tid; i < NR * NMAX; i += WG) {
        const uint r = i / NMAX, n = i % NMAX;
        if (r < n_rows && n < p.N) {
            float s = 0.0;
            for (uint g = 0u; g < gl_NumSubgroups; g++)
                s += red[i * WG + g];
            o[p.out_base + n * p.out_stride + m0 + r] = s;
        }
    }
#else
    [[unroll]] for (uint i = 0u; i < NR * NMAX; i++)
        red[i * WG + tid] = acc[i];
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            for (uint r = 0u; r < n_rows; r++)
                for (uint n = 0u; n < p.N; n++)
                    red[(r * NMAX + n) * WG + tid] += red[(r * NMAX + n) * WG + tid + s];
        barrier();
    }
    for (uint i = tid; i < NR * NMAX; i += WG) {
        const uint r = i / NMAX, n = i % NMAX;
        if (r < n_rows && n < p.N)
            o[p.out_base + n * p.out_stride + m0 + r] = red[i * WG];
    }
#endif
}
