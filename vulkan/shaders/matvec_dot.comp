#version 450
// matvec_dot.comp — the not-exact decode matmul with integer dot products: out[n][m] =
// Σ_blocks d_w·d_x·Σ(q_w·q_x) over 32-element blocks, Q8_0 (W_Q8_0) or Q4_0 (W_Q4_0) weights
// read in place in their GGUF blocks, activations already rounded to int8 blocks by
// quantize_act.comp (the CPU's core/cpu/qdot.h scheme, so each block's integer sum equals the
// CPU's and only f32 summation order differs). Each 4-byte word of weights meets a word of
// activations in one OpSDot (VK_KHR_shader_integer_dot_product, PackedVectorFormat4x8Bit): 4
// multiply-adds per instruction on devices that accelerate it (op_matmul.c takes this kernel only
// there, unless forced), against 4 dequantising conversions, multiplies and fmas of matvec.comp.
// Q4_0's nibbles n become the signed bytes n − 8 in place: (n + 120) ^ 128 per byte, no carries
// (n + 120 <= 135).
// Bindings: 0 w, 1 the rounded activations (quantize_act.comp's nine words per block), 2 out f32.
// Push: MatmulPush (N = NX; x_base: the activations' first word). Shape as matvec.comp: NR weight
// rows per workgroup, its WG invocations walk the rows' blocks in strides of WG, partial sums
// meet in subgroupAdd, then one barrier and a sum over the subgroups (built only with the
// subgroup reduction: the host refuses the kernel on devices without subgroup arithmetic).
// Assumes: K a multiple of 32; NX = p.N, 1..8; WG (spec 0) any size; any subgroup size.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_spirv_intrinsics : require
// the plain build (blob matvec_dot) is Q8_0's; variants.cmake adds Q4_0's
#if !defined(W_Q4_0)
#define W_Q8_0 1
#endif
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

// OpSDot (4450) with the packed 4x8-bit operand format (0); capabilities DotProduct (6019) and
// DotProductInput4x8BitPacked (6018). Debian 12's glslc predates GL_EXT_integer_dot_product.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot(uint a, uint b, spirv_literal int fmt);

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint NR = 8;
layout(constant_id = 2) const uint NX = 1;

layout(std430, binding = 1) readonly buffer XQ { uint xq[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatmulPush p; };

shared float red[NR * NX * WG];

void main()
{
    const uint m0 = linear_group_id() * NR;
    if (m0 >= p.M)
        return; // uniform across the workgroup
    const uint tid = gl_LocalInvocationID.x, nb = p.K / 32u;
    uint wrow[NR];
    [[unroll]] for (uint r = 0u; r < NR; r++)
        wrow[r] = p.w_base + min(m0 + r, p.M - 1u) * p.w_stride; // missing rows: computed, not written
    float acc[NR * NX];
    [[unroll]] for (uint i = 0u; i < NR * NX; i++)
        acc[i] = 0.0;

    for (uint b = tid; b < nb; b += WG) {
        uint xw[NX * 8u];
        float xd[NX];
        [[unroll]] for (uint n = 0u; n < NX; n++) {
            const uint a = p.x_base + 9u * (n * nb + b);
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                xw[n * 8u + i] = xq[a + i];
            xd[n] = uintBitsToFloat(xq[a + 8u]);
        }
        [[unroll]] for (uint r = 0u; r < NR; r++) {
            const uint bb = wrow[r] + b * QBYTES;
            const float d = half_bits_to_float(q_u16(bb));
            uint ww[8];
#if defined(W_Q8_0)
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                ww[i] = q_u32(bb + 2u + 4u * i);
#else
            // bytes 0..15 hold elements 0..15 in their low nibbles and 16..31 in their high ones
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                const uint u = q_u32(bb + 2u + 4u * i);
                ww[i] = ((u & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
                ww[i + 4u] = (((u >> 4) & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
            }
#endif
            [[unroll]] for (uint n = 0u; n < NX; n++) {
                int s = 0;
                [[unroll]] for (uint i = 0u; i < 8u; i++)
                    s += sdot(ww[i], xw[n * 8u + i], 0);
                acc[r * NX + n] += (d * xd[n]) * float(s);
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
