#version 450
// matvec_fp16.comp — the not-exact decode matmul in f16 arithmetic: out[n][m] = Σ_k w[m][k]·x[n][k]
// for Q8_0 (W_Q8_0) or Q4_0 (W_Q4_0) weights read in place, each weight dequantised in f16
// (f16(q)·f16(d): q and d are exact in f16, their product rounded once) and multiplied with the
// activations rounded to f16, four lanes to an f16vec4.
// Why this shape: decode reads every weight once, so what a GPU gains is fewer instructions per
// weight byte (it keeps more loads in flight at the same occupancy) and fewer registers. Packed
// f16 math does two multiply-adds per instruction on the GPUs that have it (AMD's v_pk_fma_f16,
// NVIDIA's HFMA2, Intel Xe, Arm Mali and Qualcomm Adreno), and the f16 activations a workgroup
// reuses across its NR weight rows take half the registers of matvec.comp's f32 ones. The sums
// stay in f16 for one 32-element block only (8 products per lane; each block's f16 sum is then
// added in f32), so the rounding error stays near f16's 2^-11 relative step of the terms
// (tests/ops/backend_ops.c bounds it at 2e-3 of Σ|w||x|) instead of growing with K, and a lane's
// partial sum is at most 8·max|w|·max|x|: far inside f16's 65504 for weights of magnitude ≲ 1
// and activations ≲ 10^3. Values below f16's normal range (6.1e-5) may be flushed to zero where
// the device does not preserve f16 denormals (an absolute error below 6.1e-5 per weight or
// activation; matvec.comp is the kernel for exactness).
// Bindings: 0 w, 1 x f32 (rows by x_s1..3 strides), 2 out f32. Push: MatmulPush (N = NX). Shape as
// matvec.comp (NR weight rows per workgroup, each invocation a whole 32-element block per step),
// built only with the subgroup reduction (the host refuses it without subgroup arithmetic).
// Assumes: K a multiple of 32; NX = p.N, 1..8; WG (spec 0) any size; any subgroup size;
// shaderFloat16.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// the plain build (blob matvec_fp16) is Q8_0's; variants.cmake adds Q4_0's
#if !defined(W_Q4_0)
#define W_Q8_0 1
#endif
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint NR = 8;
layout(constant_id = 2) const uint NX = 1;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatmulPush p; };

shared float red[NR * NX * WG];

// The four signed bytes of a word (Q8_0) as f16 integers.
f16vec4 bytes_i8(uint w)
{
    return f16vec4(ivec4(bitfieldExtract(int(w), 0, 8), bitfieldExtract(int(w), 8, 8), bitfieldExtract(int(w), 16, 8),
                         bitfieldExtract(int(w), 24, 8)));
}

// The nibbles at bit `sh` of a word's four bytes, less 8 (Q4_0), as f16 integers.
f16vec4 nibbles(uint w, uint sh)
{
    return f16vec4(ivec4(uvec4(w >> sh, w >> (sh + 8u), w >> (sh + 16u), w >> (sh + 24u)) & 15u) - 8);
}

void main()
{
    const uint m0 = linear_group_id() * NR;
    if (m0 >= p.M)
        return; // uniform across the workgroup
    const uint tid = gl_LocalInvocationID.x, nb = p.K / 32u;
    uint xo[NX], wrow[NR];
    [[unroll]] for (uint n = 0u; n < NX; n++)
        xo[n] = row_offset(p.r0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    [[unroll]] for (uint r = 0u; r < NR; r++)
        wrow[r] = p.w_base + min(m0 + r, p.M - 1u) * p.w_stride;
    float acc[NR * NX];
    [[unroll]] for (uint i = 0u; i < NR * NX; i++)
        acc[i] = 0.0;

    for (uint b = tid; b < nb; b += WG) {
        f16vec4 xh[NX * 8u];
        [[unroll]] for (uint n = 0u; n < NX; n++)
            [[unroll]] for (uint i = 0u; i < 8u; i++)
            {
                const uint a = xo[n] + 32u * b + 4u * i; // rows may start anywhere: scalar loads
                xh[n * 8u + i] = f16vec4(vec4(x[a], x[a + 1u], x[a + 2u], x[a + 3u]));
            }
        [[unroll]] for (uint r = 0u; r < NR; r++) {
            const uint bb = wrow[r] + b * QBYTES;
            const float16_t d = float16_t(half_bits_to_float(q_u16(bb))); // exact: an f16 value
            f16vec4 wv[8];
#if defined(W_Q8_0)
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                wv[i] = bytes_i8(q_u32(bb + 2u + 4u * i)) * d;
#else
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                const uint u = q_u32(bb + 2u + 4u * i);
                wv[i] = nibbles(u, 0u) * d;
                wv[i + 4u] = nibbles(u, 4u) * d;
            }
#endif
            [[unroll]] for (uint n = 0u; n < NX; n++) {
                f16vec4 h = f16vec4(0.0hf);
                [[unroll]] for (uint i = 0u; i < 8u; i++)
                    h = fma(wv[i], xh[n * 8u + i], h);
                const f16vec2 h2 = h.xy + h.zw;
                acc[r * NX + n] += float(h2.x) + float(h2.y);
            }
        }
    }

    const uint n_rows = min(NR, p.M - m0);
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
            o[p.out_base + n * p.out_stride + m0 + r] = s;
        }
    }
}
