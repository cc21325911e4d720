#version 450
// matvec_dot.comp — the not-exact decode matmul with integer dot products: out[n][m] =
// Σ_blocks d_x·(a·Σ(q_w·q_x) − b·Σq_x) over 32-element blocks (weights w = a·q_w − b per block or
// sub-block; b = 0 but for the K-quants' minimums), Q8_0, Q4_0, Q4_K, Q5_K or Q6_K weights (W_*)
// read in place in their GGUF blocks, activations already rounded to int8 blocks by
// quantize_act.comp (the CPU's core/cpu/qdot.h scheme, so each block's integer sum equals the
// CPU's and only f32 summation order differs). Each 4-byte word of weights meets a word of
// activations in one OpSDot (VK_KHR_shader_integer_dot_product, PackedVectorFormat4x8Bit): 4
// multiply-adds per instruction on devices that accelerate it (op_matmul.c takes this kernel only
// there, unless forced), against 4 dequantising conversions, multiplies and fmas of matvec.comp.
// Q4_0's nibbles n become the signed bytes n − 8 in place: (n + 120) ^ 128 per byte, no carries
// (n + 120 <= 135); Q6_K's 6-bit values n the bytes n − 32 as (n + 96) ^ 128; its two 16-element
// scales weigh the two halves' integer sums (the CPU folds them into the weights: the same
// integer). Q4_K's and Q5_K's 4- and 5-bit values are non-negative bytes as they are. Q4_K meets
// activations rounded per 256 values as the CPU rounds them for it (llama.cpp's Q8_K: one scale
// per 256, quantize_act.comp's Q8K build), the others per 32.
// Bindings: 0 w, 1 the rounded activations (quantize_act.comp's words: 9 per 32 values, Q4_K 65
// per 256), 2 out f32.
// Push: MatmulPush (N = NX; x_base: the activations' first word). Shape as matvec.comp: NR weight
// rows per workgroup, its WG invocations walk the rows' blocks in strides of WG, partial sums
// meet in subgroupAdd, then one barrier and a sum over the subgroups (built only with the
// subgroup reduction: the host refuses the kernel on devices without subgroup arithmetic).
// Assumes: K a multiple of 32; NX = p.N, 1..8; WG (spec 0) any size; any subgroup size.
// WIDE (Q4_K and Q5_K: blobs matvec_dot_q4_k_wide, _q5_k_wide): the weights are read as 16-byte
// pieces (uvec4) of a second view of binding 0 instead of 4-byte words at byte addresses. A
// superblock is 9 pieces (Q5_K 11): d, dmin and the 12 scale bytes; Q5_K's two of high bits;
// the nibbles. Sub-block j takes the first piece and two of nibbles (Q5_K also both high-bit
// ones): 3 loads where the word reads take 13 (3 scale bytes, d, dmin, 8 words; Q5_K 5 for 21).
// Consecutive invocations take consecutive sub-blocks as above, so a subgroup's loads cover
// whole superblocks side by side (coalesced on GPUs); each invocation forms the same integer
// block sums in the same order, only the loads differ. Assumes in addition: every row starts on
// a 16-byte boundary of the window and the window on one of the buffer (op_matmul.c checks both
// and otherwise runs the word-reading build). Q8_0's 34-byte blocks keep no such alignment from
// block to block, so its wide build (W_Q8_0 with SPLIT) reads the split layout that the backend
// makes at load (TL_Q8_0_SPLIT, q8_split.comp): block b is pieces 2b and 2b + 1 of the row and
// the f16 at byte K + 2b, 3 loads where the word reads take 9 (two of them per misaligned word).
// Q4_0 (18 bytes) and Q6_K (210) have no wide build.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_spirv_intrinsics : require
// the plain build (blob matvec_dot) is Q8_0's; variants.cmake adds the others
#if !defined(W_Q8_0) && !defined(W_Q4_0) && !defined(W_Q4_K) && !defined(W_Q5_K) && !defined(W_Q6_K)
#define W_Q8_0 1
#endif
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"
#if defined(WIDE)
#if !defined(W_Q4_K) && !defined(W_Q5_K) && !(defined(W_Q8_0) && defined(SPLIT))
#error "WIDE: Q4_K and Q5_K (their blocks are whole 16-byte pieces), and Q8_0 in the split layout"
#endif
// the same binding as weights.glsl's uint view (descriptor aliasing): the rows in 16-byte pieces
layout(std430, binding = 0) readonly buffer WeightsWide { uvec4 wq4[]; };
#endif

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

#if defined(WIDE)
// The scale and min of sub-block j as dq_scale (the same products, `precise` as there) from the
// superblock's first piece: x = f16 d | f16 dmin << 16, y z w = scales[0..3], [4..7], [8..11].
// get_scale_min_k4 reads scales[j], [j + 4] for j < 4 and scales[j + 4], [j − 4], [j] above: the
// bytes j & 3 of y, z, w either way, so no component is indexed by a variable.
void dq_scale_wide(uvec4 hd, uint j, out float d1, out float m1)
{
    const uint s = 8u * (j & 3u), y = (hd.y >> s) & 0xffu, z = (hd.z >> s) & 0xffu, w = (hd.w >> s) & 0xffu;
    const bool lo = j < 4u;
    const uint sc = lo ? y & 63u : (w & 15u) | ((y >> 6) << 4), m = lo ? z & 63u : (w >> 4) | ((z >> 6) << 4);
    precise const float d = half_bits_to_float(hd.x & 0xffffu) * float(sc);
    precise const float mm = half_bits_to_float(hd.x >> 16) * float(m);
    d1 = d;
    m1 = mm;
}
#endif

// Block b (32 elements) of the weight row at byte `row` as 8 words of signed bytes: w = a·q − bm
// per element, except Q6_K, whose halves (words 0..3, 4..7) take a·s_lo and a·s_hi (bm = 0).
void w_block(uint row, uint b, out uint ww[8], out float a, out float bm, out int s_lo, out int s_hi)
{
    bm = 0.0;
    s_lo = 1;
    s_hi = 1;
#if defined(W_Q8_0) && defined(WIDE)
    // the split layout: the row's values in pieces, two per block, then its scales at byte K
    const uint pq = (row >> 4) + 2u * b;
    a = half_bits_to_float(q_u16(row + p.K + 2u * b));
    const uvec4 q0 = wq4[pq], q1 = wq4[pq + 1u];
    ww = uint[](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
#elif defined(W_Q8_0)
    const uint bb = row + b * QBYTES;
    a = half_bits_to_float(q_u16(bb));
    [[unroll]] for (uint i = 0u; i < 8u; i++)
        ww[i] = q_u32(bb + 2u + 4u * i);
#elif defined(W_Q4_0)
    // bytes 0..15 hold elements 0..15 in their low nibbles and 16..31 in their high ones
    const uint bb = row + b * QBYTES;
    a = half_bits_to_float(q_u16(bb));
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        const uint u = q_u32(bb + 2u + 4u * i);
        ww[i] = ((u & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
        ww[i + 4u] = (((u >> 4) & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
    }
#elif defined(WIDE)
    // pieces of the superblock from pb: 0 the scales; Q5_K: 1 and 2 its qh; pq and pq + 1
    // sub-block j's nibbles
    const uint pb = (row >> 4) + (b / 8u) * (QBYTES / 16u), j = b % 8u, sh = (j & 1u) * 4u;
    const uint pq = pb + QS_AT / 16u + 2u * (j >> 1);
    dq_scale_wide(wq4[pb], j, a, bm);
    uvec4 q0 = (wq4[pq] >> sh) & 0x0f0f0f0fu, q1 = (wq4[pq + 1u] >> sh) & 0x0f0f0f0fu;
#if defined(W_Q5_K)
    q0 |= ((wq4[pb + 1u] >> j) & 0x01010101u) << 4;
    q1 |= ((wq4[pb + 2u] >> j) & 0x01010101u) << 4;
#endif
    ww = uint[](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
#elif defined(W_Q4_K) || defined(W_Q5_K)
    // sub-block j of the superblock: nibbles of qs[32(j/2) ..] (high ones for odd j); Q5_K: bit j
    // of qh[i] above them
    const uint bb = row + (b / 8u) * QBYTES, j = b % 8u, sh = (j & 1u) * 4u;
    dq_scale(bb, j, a, bm);
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        ww[i] = (q_u32(bb + QS_AT + 32u * (j >> 1) + 4u * i) >> sh) & 0x0f0f0f0fu;
#if defined(W_Q5_K)
        ww[i] |= ((q_u32(bb + 16u + 4u * i) >> j) & 0x01010101u) << 4;
#endif
    }
#else // W_Q6_K: half h, quarter t (quant.glsl's layout notes)
    const uint bb = row + (b / 8u) * QBYTES, h = (b % 8u) / 4u, t = b % 4u;
    const uint qa = bb + 64u * h + 32u * (t & 1u), nsh = 4u * (t >> 1), ha = bb + 128u + 32u * h;
    a = half_bits_to_float(q_u16(bb + 208u));
    s_lo = bitfieldExtract(int(q_byte(bb + 192u + 8u * h + 2u * t)), 0, 8);
    s_hi = bitfieldExtract(int(q_byte(bb + 193u + 8u * h + 2u * t)), 0, 8);
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        const uint q = ((q_u32(qa + 4u * i) >> nsh) & 0x0f0f0f0fu) | (((q_u32(ha + 4u * i) >> (2u * t)) & 0x03030303u) << 4);
        ww[i] = (q + 0x60606060u) ^ 0x80808080u;
    }
#endif
}

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
#if defined(QSUB)
        float xs[NX]; // Σq_x of the block, for the minimum
#endif
        [[unroll]] for (uint n = 0u; n < NX; n++) {
#if defined(W_Q4_K) // 256-value activation blocks: 64 words, then the scale
            const uint a0 = p.x_base + 65u * (n * (nb / 8u) + b / 8u), a = a0 + 8u * (b % 8u);
            xd[n] = uintBitsToFloat(xq[a0 + 64u]);
#else
            const uint a = p.x_base + 9u * (n * nb + b);
            xd[n] = uintBitsToFloat(xq[a + 8u]);
#endif
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                xw[n * 8u + i] = xq[a + i];
#if defined(QSUB)
            int s = 0;
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                s += sdot(xw[n * 8u + i], 0x01010101u, 0);
            xs[n] = float(s);
#endif
        }
        [[unroll]] for (uint r = 0u; r < NR; r++) {
            uint ww[8];
            float a, bm;
            int s_lo, s_hi;
            w_block(wrow[r], b, ww, a, bm, s_lo, s_hi);
            [[unroll]] for (uint n = 0u; n < NX; n++) {
                int lo = 0, hi = 0;
                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                    lo += sdot(ww[i], xw[n * 8u + i], 0);
                    hi += sdot(ww[i + 4u], xw[n * 8u + 4u + i], 0);
                }
#if defined(W_Q6_K)
                const int s = s_lo * lo + s_hi * hi;
#else
                const int s = lo + hi;
#endif
#if defined(QSUB)
                acc[r * NX + n] += xd[n] * (a * float(s) - bm * xs[n]);
#else
                acc[r * NX + n] += (a * xd[n]) * float(s);
#endif
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
