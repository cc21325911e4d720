#version 450
// get_rows.comp — embedding lookup (core/ops.h op_get_rows): out[n] = table[ids[n]] as f32, the
// table of any weight dtype read in place (weights.glsl; quantised rows dequantised bit-exactly
// as core/quant.c does, so out equals the CPU's element for element).
// Bindings: 0 table, 1 ids i32, 2 out f32. Push: GetRowsPush. One invocation per 8 elements of
// an out row. The table may span several storage windows: the host binds table rows
// [v_lo, v_hi) and each dispatch writes only the rows whose id falls there.
// Assumes: WG (spec 0) any size; 2-D grid (index.glsl), n_ids·ceil(H/8) invocations < 2^32.
//   An id outside [0, V) cannot be reported from here: its row is written as zeros (by the
//   dispatch with zero_bad set) rather than read out of bounds.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { GetRowsPush p; };

void main()
{
    const uint n_chunks = (p.H + 7u) / 8u;
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    const uint n = e / n_chunks, k0 = 8u * (e % n_chunks);
    if (n >= p.n_ids)
        return;
    const int id = ids[p.ids_base + n];
    const uint ob = p.out_base + n * p.out_stride + k0;
    float v[8];
    if (id < 0 || uint(id) >= p.V) {
        if (p.zero_bad == 0u)
            return;
        for (uint i = 0u; i < 8u; i++)
            v[i] = 0.0;
    } else {
        if (uint(id) < p.v_lo || uint(id) >= p.v_hi)
            return; // another window's dispatch writes this row
        w_chunk8(p.t_base + uint(id) * p.t_stride, k0, p.H, v);
    }
    for (uint i = 0u; i < 8u; i++)
        if (k0 + i < p.H)
            o[ob + i] = v[i];
}
