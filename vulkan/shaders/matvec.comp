#version 450
// matvec.comp — out[m] = Σ_k w[m][k]·x[k] (core/ops.h op_matmul with one x row), f32 accumulate.
// Bindings: 0 w (weights.glsl: f32, or f16/bf16 words), 1 x f32, 2 out f32. Push: MatvecPush.
// Assumes: WG (spec 0, = local_size_x) is a power of two (the tree reduction halves it) — the
//   host picks it from the device limits; any subgroup size works (no subgroup operations).
//   One workgroup per weight row, launched as a 2-D grid (index.glsl linear_group_id).
//   Rows of w may start on odd f16/bf16 elements: those take the one-at-a-time loop.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { MatvecPush p; };

shared float partial[WG];

void main()
{
    const uint m = linear_group_id();
    if (m >= p.M)
        return; // uniform across the workgroup, so the barriers below stay in uniform control flow
    const uint tid = gl_LocalInvocationID.x;
    const uint wrow = p.w_base + m * p.w_stride;
    float acc = 0.0;
    if ((wrow & 1u) == 0u) {
        // pairs: one 32-bit word per two f16/bf16 weights
        for (uint k = 2u * tid; k + 1u < p.K; k += 2u * WG) {
            vec2 w = w_load2(wrow + k);
            acc = fma(w.x, x[p.x_base + k], acc);
            acc = fma(w.y, x[p.x_base + k + 1u], acc);
        }
        if ((p.K & 1u) != 0u && tid == 0u)
            acc = fma(w_load(wrow + p.K - 1u), x[p.x_base + p.K - 1u], acc);
    } else {
        for (uint k = tid; k < p.K; k += WG)
            acc = fma(w_load(wrow + k), x[p.x_base + k], acc);
    }
    partial[tid] = acc;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        barrier();
    }
    if (tid == 0u)
        o[p.out_base + m] = partial[0];
}
