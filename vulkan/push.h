/* push.h — push-constant layouts, mirrored field for field by vulkan/shaders/common/push.glsl
   (std430: 4-byte scalars, tightly packed; the _Static_asserts pin the sizes both sides agree on).
   All indices are in the bound array's element unit (f32: 4 bytes, f16/bf16 weights: 2 bytes)
   relative to the descriptor window, modulo 2^32 (see struct vk_binding). Sizes stay within the
   128 bytes every Vulkan device offers (maxPushConstantsSize minimum). */
#ifndef SEER_VULKAN_PUSH_H
#define SEER_VULKAN_PUSH_H

#include <stdint.h>

/* matvec.comp: out[m] = Σ_k w[m][k]·x[k] for the M weight rows of this dispatch. */
struct vk_push_matvec {
    uint32_t M, K;
    uint32_t w_base, w_stride; /* row m of w starts at w_base + m·w_stride */
    uint32_t x_base;           /* x[k] at x_base + k */
    uint32_t out_base;         /* out[m] at out_base + m */
};
_Static_assert(sizeof(struct vk_push_matvec) == 24, "mirror of MatvecPush in push.glsl");

/* matmul.comp: out[n][m] for M weight rows and N rows of x (x rows r0 .. r0+N-1 of the whole
   tensor, split into (i1, i2, i3) with x_ne1, x_ne2). out is contiguous. */
struct vk_push_matmul {
    uint32_t M, K, N;
    uint32_t w_base, w_stride;
    uint32_t x_base, x_s1, x_s2, x_s3, x_ne1, x_ne2, r0;
    uint32_t out_base, out_stride; /* out[n][m] at out_base + n·out_stride + m (n local) */
};
_Static_assert(sizeof(struct vk_push_matmul) == 56, "mirror of MatmulPush in push.glsl");

/* norm.comp: rmsnorm over rows r0 .. r0+n_rows-1, row r = (i1, i2, i3) by ne1, ne2. */
struct vk_push_norm {
    uint32_t ne0, ne1, ne2, r0, n_rows;
    uint32_t x_base, x_s1, x_s2, x_s3;
    uint32_t o_base, o_s1, o_s2, o_s3;
    uint32_t w_base, has_w;
    float w_shift, eps;
};
_Static_assert(sizeof(struct vk_push_norm) == 68, "mirror of NormPush in push.glsl");

/* elementwise.comp: out = a (op) b over rows r0 .. r0+n_rows-1 of a; b's strides are 0 on the
   dimensions it broadcasts (b_s0 is 0 or 1). */
struct vk_push_binary {
    uint32_t ne0, ne1, ne2, r0, n_rows;
    uint32_t a_base, a_s1, a_s2, a_s3;
    uint32_t b_base, b_s0, b_s1, b_s2, b_s3;
    uint32_t o_base, o_s1, o_s2, o_s3;
};
_Static_assert(sizeof(struct vk_push_binary) == 72, "mirror of BinaryPush in push.glsl");

#endif
