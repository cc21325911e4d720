#version 450
// rope.comp — rotate-half RoPE for text MRoPE (spec §3.3) and vision 2-D RoPE (spec §4.4): pair
// (i, i + half) of every head turns by pos_axis(i)·inv_freq(i). The host computes each pair's
// inv_freq in f32 as core/cpu/rope.c does and its position axis (2 bits per pair, `axes`), and
// sends them for up to 16 pairs per dispatch, so the f32 angle is the CPU's bit for bit; sin and
// cos of it come from math.glsl's m_sincos, exact in its reduction at any position.
// Bindings: 0 x f32 {hd, nh, T}, 1 pos i32 (pos[a·T + t]), 2 out f32. Push: RopePush.
// Items per row (head h of token t): n_pairs rotations, then n_copy pass-through dims past the
// rotated ones (2·half .. 2·half + n_copy − 1; the host sends them with the first chunk only).
// Assumes: WG (spec 0) any size; 2-D grid, n_rows·(n_pairs + n_copy) invocations < 2^31.
//   out may alias x: each pair is read (both halves) before it is written, by one invocation.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer P { int pos[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { RopePush p; };

void main()
{
    const uint i0 = p.pairs & 0xffffu, n_pairs = p.pairs >> 16;
    const uint half_ = p.half_copy & 0xffffu, n_copy = p.half_copy >> 16;
    const uint per_row = n_pairs + n_copy;
    const uint e = linear_group_id() * WG + gl_LocalInvocationID.x;
    if (e >= p.n_rows * per_row)
        return;
    const uint r = p.r0 + e / per_row, j = e % per_row;
    const uint h = r % p.nh, t = r / p.nh;
    const uint xo = p.x_base + h * p.x_s1 + t * p.x_s2, oo = p.o_base + h * p.o_s1 + t * p.o_s2;
    if (j >= n_pairs) {
        const uint d = 2u * half_ + (j - n_pairs);
        o[oo + d] = x[xo + d];
        return;
    }
    const uint i = i0 + j, axis = (p.axes >> (2u * j)) & 3u;
    // f32 product as HF forms it (spec §3.3): one rounding, nothing fused into it
    precise const float ang = float(pos[p.pos_base + axis * p.T + t]) * p.freq[j];
    float sn, cs;
    m_sincos(ang, sn, cs);
    const float a = x[xo + i], b = x[xo + i + half_];
    o[oo + i] = a * cs - b * sn;
    o[oo + i + half_] = b * cs + a * sn;
}
