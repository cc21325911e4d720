/* push.h — push-constant layouts, mirrored field for field by vulkan/shaders/common/push.glsl
   (std430: 4-byte scalars, tightly packed; the _Static_asserts pin the sizes both sides agree on).
   All indices are in the bound array's element unit (f32: 4 bytes, f16/bf16 weights: 2 bytes)
   relative to the descriptor window, modulo 2^32 (see struct vk_binding). Sizes stay within the
   128 bytes every Vulkan device offers (maxPushConstantsSize minimum). */
#ifndef SEER_VULKAN_PUSH_H
#define SEER_VULKAN_PUSH_H

#include <stdint.h>

/* matmul.comp and matvec.comp (N <= 8): out[n][m] for M weight rows and N rows of x (x rows
   r0 .. r0+N-1 of the whole tensor, split into (i1, i2, i3) with x_ne1, x_ne2). out is
   contiguous. Weight indices are in elements for f32/f16/bf16 and in bytes for quantised
   weights (row m starts at w_base + m·w_stride). */
struct vk_push_matmul {
    uint32_t M, K, N;
    uint32_t w_base, w_stride;
    uint32_t x_base, x_s1, x_s2, x_s3, x_ne1, x_ne2, r0;
    uint32_t out_base, out_stride; /* out[n][m] at out_base + n·out_stride + m (n local) */
    /* op_linear's epilogue in matvec.comp and matmul.comp (shaders/common/epilogue.glsl; the
       other kernels taking these push constants ignore it): VK_EP_* bits, the unary op, the
       bias's element of m = 0 (binding 3) and the residual's of out_base (binding 4) */
    uint32_t ep, ep_act, b_base, r_base;
};
_Static_assert(sizeof(struct vk_push_matmul) == 72, "mirror of MatmulPush in push.glsl");
enum { VK_EP_BIAS = 1, VK_EP_ACT = 2, VK_EP_RES = 4 };

/* norm.comp: a norm over rows r0 .. r0+n_rows-1, row r = (i1, i2, i3) by ne1, ne2. `a` is the
   third input: z (strided like x) for gated RMSNorm, b (strides 0) for LayerNorm. */
struct vk_push_norm {
    uint32_t ne0, ne1, ne2, r0, n_rows;
    uint32_t x_base, x_s1, x_s2, x_s3;
    uint32_t o_base, o_s1, o_s2, o_s3;
    uint32_t w_base, has_w;
    float w_shift, eps;
    uint32_t a_base, a_s1, a_s2, a_s3;
};
_Static_assert(sizeof(struct vk_push_norm) == 84, "mirror of NormPush in push.glsl");

/* elementwise.comp: out = a (op) b over rows r0 .. r0+n_rows-1 of a; b's strides are 0 on the
   dimensions it broadcasts (b_s0 is 0 or 1). */
struct vk_push_binary {
    uint32_t ne0, ne1, ne2, r0, n_rows;
    uint32_t a_base, a_s1, a_s2, a_s3;
    uint32_t b_base, b_s0, b_s1, b_s2, b_s3;
    uint32_t o_base, o_s1, o_s2, o_s3;
};
_Static_assert(sizeof(struct vk_push_binary) == 72, "mirror of BinaryPush in push.glsl");

/* get_rows.comp: out row n (of this dispatch's n_ids) = table row ids[ids_base + n], written
   only when that id lies in the bound table rows [v_lo, v_hi); ids outside [0, V) give zeros
   when zero_bad is set. Table indices as for matmul weights (elements, or bytes if quantised). */
struct vk_push_get_rows {
    uint32_t H, n_ids, V, v_lo, v_hi, zero_bad;
    uint32_t t_base, t_stride;
    uint32_t ids_base;
    uint32_t out_base, out_stride;
};
_Static_assert(sizeof(struct vk_push_get_rows) == 44, "mirror of GetRowsPush in push.glsl");

/* unary.comp, softmax.comp, cpy.comp: one input x, one output o, over rows r0 .. r0+n_rows-1;
   s is the scale (op_scale, op_softmax). cpy indexes o in dst elements (2 bytes for f16/bf16). */
struct vk_push_rows {
    uint32_t ne0, ne1, ne2, r0, n_rows;
    uint32_t x_base, x_s1, x_s2, x_s3;
    uint32_t o_base, o_s1, o_s2, o_s3;
    float s;
};
_Static_assert(sizeof(struct vk_push_rows) == 56, "mirror of RowsPush in push.glsl");

/* rope.comp: rows r0 .. r0+n_rows-1 of x{hd, nh, T} (r = h + nh·t); pairs i0 .. i0+n_pairs-1
   (packed: i0 | n_pairs << 16) with freq[j] and axis (axes >> 2j) & 3 of pair i0 + j; then the
   n_copy dims past 2·half pass through (half_copy = half | n_copy << 16). pos[a·T + t]. */
#define VK_ROPE_PAIRS 16
struct vk_push_rope {
    uint32_t nh, T, r0, n_rows;
    uint32_t x_base, x_s1, x_s2;
    uint32_t o_base, o_s1, o_s2;
    uint32_t pos_base, pairs, half_copy, axes;
    float freq[VK_ROPE_PAIRS];
};
_Static_assert(sizeof(struct vk_push_rope) == 120, "mirror of RopePush in push.glsl");

/* conv.comp: causal depthwise conv over tokens [t0, t0+n) of a call of T tokens. x[t][c] at
   x_base + t·x_s1 + c; w[c][k] at w_base + c·K + k; state row r at s_base + r·C; out[t][c] at
   o_base + t·C + c. write_state: this dispatch's first token block writes the new state. */
struct vk_push_conv {
    uint32_t C, K, T, t0, n;
    uint32_t x_base, x_s1;
    uint32_t w_base, s_base, o_base;
    uint32_t write_state;
};
_Static_assert(sizeof(struct vk_push_conv) == 44, "mirror of ConvPush in push.glsl");

/* gdn_recurrent.comp, gdn_prep.comp, gdn_state.comp: the GDN tensors of one dispatch's tokens
   (bases already moved to its first token). q/k element (d, h, t) at base + h·s1 + t·s2 + d,
   likewise v; g/beta (j, t) at base + t·s1 + j; state head j at s_base + j·dk·dv; out (c, j, t)
   at o_base + (t·Hv + j)·dv + c. Value head j reads key head j mod Hk when tiled, else j/ratio.
   Recurrent: nl lanes per value column. Chunked: the scratch block of (chunk n, head j) starts
   at scr_base + (n·Hv + j)·per (gdn_chunk.glsl). */
struct vk_push_gdn {
    uint32_t dk, dv, Hk, Hv, T, tiled, ratio, nl, per;
    uint32_t q_base, q_s1, q_s2, k_base, k_s1, k_s2, v_base, v_s1, v_s2;
    uint32_t g_base, g_s1, b_base, b_s1;
    uint32_t scr_base, s_base, o_base;
    float scale;
};
_Static_assert(sizeof(struct vk_push_gdn) == 104, "mirror of GdnPush in push.glsl");

/* attention.comp: queries t0 .. t0+nt-1 of the call (q_base and o_base at query t0; t below
   counts from there), all Tk keys. q (d, h, t) at q_base + h·q_s1 + t·q_s2 + d; k, v (d, g, j)
   at base + g·s1 + j·s2 + d; out (d, h, t) at o_base + (t·nh + h)·hd + d; seg[t0 + t] at
   seg_base + t0 + t. causal: query t sees keys ≤ q_pos0 + t0 + t. Keys are split in n_split
   ranges of kps; with more than one, each range leaves (acc[hd], m, l) per row at
   p_base + (row·n_split + s)·(hd+2) for attention_combine.comp, row = t·nh + h. */
struct vk_push_attn {
    uint32_t hd, nh, nkv, Tk, t0, nt;
    uint32_t q_base, q_s1, q_s2, k_base, k_s1, k_s2, v_base, v_s1, v_s2;
    uint32_t o_base, seg_base, causal, q_pos0;
    uint32_t n_split, kps, p_base;
    float scale;
};
_Static_assert(sizeof(struct vk_push_attn) == 92, "mirror of AttnPush in push.glsl");

/* attention_combine.comp: out row (t·nh + h) from its n_split partials (layout above). */
struct vk_push_attn_combine {
    uint32_t hd, n_rows, n_split, p_base, o_base;
};
_Static_assert(sizeof(struct vk_push_attn_combine) == 20, "mirror of AttnCombinePush in push.glsl");

#endif
