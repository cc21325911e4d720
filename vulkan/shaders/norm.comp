#version 450
// norm.comp — row normalisations (core/ops.h), MODE (spec 1) choosing:
//   0 RMSNorm (spec §2.3):        out = x·rsqrt(mean(x²) + eps)·(w + w_shift), or scale 1 without w
//   1 gated RMSNorm (spec §2.3):  out = x·rsqrt(mean(x²) + eps)·w·silu(z)   (GDN output, §2.5 step 9)
//   2 LayerNorm (spec §4.5):      out = (x − mean)·rsqrt(var + eps)·w + b, biased variance taken
//                                 over centred values (a second pass, no E[x²] − mean² cancellation);
//                                 that pass also sums the deviations, which corrects the f32 mean
//                                 (rows with |mean| ≫ std, as vision activations, lose nothing)
//   3 L2 norm (spec §2.5 step 6): out = x·rsqrt(Σx² + eps), eps added to the sum, not the mean
// Bindings: 0 x f32, 1 w f32{ne0}, 2 aux (z shaped as x for MODE 1, b f32{ne0} for MODE 2), 3 out.
// Unused bindings get a dummy (x) from the host. Push: NormPush.
// Assumes: WG (spec 0) is a power of two (tree reduction). One workgroup per row (2-D grid).
//   out may alias x (and z): each invocation reads x[i], z[i] before writing out[i], same i only.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"
#include "common/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint MODE = 0;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer A { float aux[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform PC { NormPush p; };

shared vec2 partial[WG];

vec2 wg_sum(vec2 v) // two sums at once; called in uniform control flow
{
    const uint tid = gl_LocalInvocationID.x;
    partial[tid] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        barrier();
    }
    const vec2 r = partial[0];
    barrier(); // read by all before a second sum reuses partial
    return r;
}

void main()
{
    const uint rl = linear_group_id();
    if (rl >= p.n_rows)
        return; // uniform across the workgroup
    const uint r = p.r0 + rl, tid = gl_LocalInvocationID.x;
    const uint xo = row_offset(r, p.ne1, p.ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3);
    const uint oo = row_offset(r, p.ne1, p.ne2, p.o_base, p.o_s1, p.o_s2, p.o_s3);
    const uint zo = row_offset(r, p.ne1, p.ne2, p.a_base, p.a_s1, p.a_s2, p.a_s3);
    float mean = 0.0;
    if (MODE == 2u) {
        float s = 0.0;
        for (uint i = tid; i < p.ne0; i += WG)
            s += x[xo + i];
        mean = wg_sum(vec2(s, 0.0)).x / float(p.ne0);
    }
    vec2 ds = vec2(0.0); // Σ(x − mean), Σ(x − mean)²
    for (uint i = tid; i < p.ne0; i += WG) {
        const float v = x[xo + i] - mean;
        ds += vec2(v, v * v);
    }
    ds = wg_sum(ds);
    float ss = ds.y, delta = 0.0;
    if (MODE == 2u) {
        // the true mean is mean + δ; kept as the pair, so x − mean stays exact near the mean
        // and only the small δ rounds. Σ(x − mean − δ)² = Σ(x − mean)² − n·δ²
        delta = ds.x / float(p.ne0);
        ss = max(ss - float(p.ne0) * delta * delta, 0.0);
    }
    const float scale = inversesqrt((MODE == 3u ? ss : ss / float(p.ne0)) + p.eps);
    for (uint i = tid; i < p.ne0; i += WG) {
        float v = ((x[xo + i] - mean) - delta) * scale;
        if (MODE == 0u && p.has_w != 0u)
            v *= w[p.w_base + i] + p.w_shift;
        else if (MODE == 1u)
            v = v * w[p.w_base + i] * (aux[zo + i] * m_sigmoid(aux[zo + i]));
        else if (MODE == 2u)
            v = v * w[p.w_base + i] + aux[p.a_base + i];
        o[oo + i] = v;
    }
}
