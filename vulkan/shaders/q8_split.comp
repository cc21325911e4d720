#version 450
// q8_split.comp — rearranges Q8_0 weight rows in place into the split layout (TL_Q8_0_SPLIT,
// core/tensor.h) that the Q8_0 readers built with SPLIT take (matvec_dot.comp's wide build,
// matmul.comp, get_rows.comp): a row of 34-byte blocks [f16 d, int8 qs[32]] becomes the row's K
// int8 values, then its K/32 scales. Each row keeps its bytes and its place, so strides and
// storage windows are unchanged. Made once per matrix as the model loads (op_matmul.c,
// vk_weight_prepare); the values are moved, never converted.
// One workgroup per row: it reads the row whole into shared memory, then writes it back
// rearranged; no other workgroup touches that row, so in place is safe.
// Bindings: 0 the weights (read and written), as words. Push: MatmulPush — M rows, the first at
// byte w_base of the window, every w_stride bytes; K values per row.
// Assumes: K a multiple of 64 (the scales fill whole words), rows of at most ROW_WORDS words
// (16 KiB: Vulkan's guaranteed shared memory; K up to 15,360), rows on 4-byte boundaries.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(std430, binding = 0) buffer W { uint w[]; };
layout(push_constant) uniform PC { MatmulPush p; };

#define ROW_WORDS 4096u
shared uint row[ROW_WORDS];

// little-endian bytes of the row as read: 4 at byte a (a even), 2 at byte a (a even)
uint row_u32(uint a)
{
    const uint lo = row[a >> 2];
    return (a & 2u) == 0u ? lo : (lo >> 16) | (row[(a >> 2) + 1u] << 16);
}

uint row_u16(uint a) { return (row[a >> 2] >> ((a & 2u) << 3)) & 0xffffu; }

void main()
{
    const uint r = linear_group_id();
    if (r >= p.M)
        return; // uniform across the workgroup
    const uint tid = gl_LocalInvocationID.x, nb = p.K / 32u, nw = nb * 34u / 4u;
    const uint w0 = (p.w_base + r * p.w_stride) >> 2;
    for (uint i = tid; i < nw; i += WG)
        row[i] = w[w0 + i];
    barrier();
    for (uint i = tid; i < nw; i += WG) {
        // words 0 .. 8nb−1: block i/8's values, 4 at a time; then the scales of blocks 2s, 2s+1.
        // Both sides are read in bounds (a select: SIMD-lane implementations run both anyway).
        const uint j = min(i, 8u * nb - 1u), s = 2u * (i - min(i, 8u * nb));
        w[w0 + i] = i < 8u * nb ? row_u32(34u * (j / 8u) + 2u + 4u * (j % 8u))
                                : row_u16(34u * s) | (row_u16(34u * s + 34u) << 16);
    }
}
