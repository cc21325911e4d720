#version 450
// quantize_act.comp — the activations of a not-exact decode matmul rounded to 8 bits, for
// matvec_dot.comp: per 32 consecutive values of an x row, q = round-half-to-even(127·x/amax)
// and d = amax/127 rounded to f16 — core/cpu/qdot.h's qdot_quantize (llama.cpp's Q8_0 activation
// blocks) operation for operation, so the integers and scales equal the CPU's and the two
// backends' not-exact matmuls differ only in f32 summation order.
// Bindings: 0 x f32 (rows by x_s1..3 strides), 1 out uint (written). Push: MatmulPush (K, N and
// the x fields; K a multiple of 32). Out: block b of row n (0 .. N−1, row p.r0 + n of x) is the
// nine words at 9·(n·K/32 + b): eight of packed int8 (element 4i+j in byte j of word i, the
// operand layout of OpSDot's 4x8-bit packed format) and the scale d as f32 bits.
// Built with Q8K (blob quantize_act_q8k), for Q4_K weights: the CPU's qdot_quantize_q8k instead
// (llama.cpp's Q8_K), per 256 values: max the value of largest magnitude (the first of equals),
// q = round-half-to-even(−127·x/max) (at most 127), d = 1/(−127/max) in f32; block b of row n is
// the 65 words at 65·(n·K/256 + b), 64 of packed int8 and d.
// One invocation per block. Assumes: WG (spec 0) any size; 2-D grid (index.glsl), N·K/32
// (Q8K: N·K/256) invocations.
// Division: the CPU's 127/amax and amax/127 are correctly rounded; a shader's division need only
// be within 2.5 ulp (Vulkan's precision table), and a quotient an ulp off moves 127·x/amax across
// a rounding tie about once per 10^6 values (lavapipe: a whole-model decode drifted 1e-2 from the
// CPU's). A correction step through fma does not help: Vulkan lets fma round twice ("inherited
// from OpFMul followed by OpFAdd"), as lavapipe does. So div_rn divides the 24-bit significands
// as integers (long division, then round to nearest even from the remainder): exact on every
// device, a few dozen integer steps per block.
#extension GL_GOOGLE_include_directive : require
#include "common/push.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uint q_out[]; };
layout(push_constant) uniform PC { MatmulPush p; };

// a/b rounded to nearest even, for a, b nonzero f32 normals whose quotient is a normal (else the
// device's a / b: amax below 2^-119 or above 2^119, far outside any activation).
float div_rn(float a, float b)
{
    const uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    const int ea = int((ua >> 23) & 255u), eb = int((ub >> 23) & 255u);
    uint ra = (ua & 0x7fffffu) | 0x800000u, mb = (ub & 0x7fffffu) | 0x800000u; // in [2^23, 2^24)
    int e = ea - eb + 127; // the biased exponent of the quotient of the significands in [1, 2)
    if (ra < mb) {
        ra <<= 1;
        e--;
    }
    if (ea == 0 || ea == 255 || eb == 0 || eb == 255 || e < 1 || e > 253)
        return a / b;
    uint q = 0u; // 25 bits of ra/mb: the 24 of the significand and the rounding bit
    for (int i = 0; i < 25; i++) {
        const bool bit = ra >= mb;
        q = (q << 1) | (bit ? 1u : 0u);
        ra = (bit ? ra - mb : ra) << 1; // stays below 2^25
    }
    const bool up = (q & 1u) == 1u && (ra != 0u || (q & 2u) == 2u); // above half, or a tie to odd
    q = (q >> 1) + (up ? 1u : 0u);
    if (q == 0x1000000u) { // rounded up to 2: the next binade (e <= 253 keeps it finite)
        q >>= 1;
        e++;
    }
    return uintBitsToFloat(((ua ^ ub) & 0x80000000u) | (uint(e) << 23) | (q & 0x7fffffu));
}

// core/fp16.h f32_to_f16 then back, for a finite f >= 0: round to nearest even at f16's
// precision, subnormals included, 65520 and above to infinity.
float round_f16(float f)
{
    uint aw = floatBitsToUint(f);
    if (aw >= 0x477ff000u)
        return uintBitsToFloat(0x7f800000u);
    if (aw < 0x38800000u) { // subnormal or zero: an integer multiple of 2^-24
        precise const float r = f + 0.5;
        return float(floatBitsToUint(r) - 0x3f000000u) * 5.9604644775390625e-8;
    }
    aw += 0xc8000fffu + ((aw >> 13) & 1u);
    const uint h = aw >> 13;
    return uintBitsToFloat((((h >> 10) + 112u) << 23) | ((h & 1023u) << 13));
}

#if defined(Q8K)
void main()
{
    const uint nb = p.K / 256u, e = linear_group_id() * WG + gl_LocalInvocationID.x;
    if (e >= p.N * nb)
        return;
    const uint n = e / nb, b = e % nb;
    const uint xo = row_offset(p.r0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3) + 256u * b;
    float amax = 0.0, mx = 0.0;
    for (uint i = 0u; i < 256u; i++) {
        const float v = x[xo + i];
        const bool more = abs(v) > amax;
        amax = more ? abs(v) : amax;
        mx = more ? v : mx;
    }
    const float iscale = amax > 0.0 ? div_rn(-127.0, mx) : 0.0;
    const uint o = 65u * e;
    for (uint w = 0u; w < 64u; w++) {
        uint word = 0u;
        for (uint j = 0u; j < 4u; j++) {
            precise const float s = iscale * x[xo + 4u * w + j];
            word |= (uint(min(int(roundEven(s)), 127)) & 255u) << (8u * j);
        }
        q_out[o + w] = word;
    }
    q_out[o + 64u] = floatBitsToUint(amax > 0.0 ? div_rn(1.0, iscale) : 0.0);
}
#else
void main()
{
    const uint nb = p.K / 32u, e = linear_group_id() * WG + gl_LocalInvocationID.x;
    if (e >= p.N * nb)
        return;
    const uint n = e / nb, b = e % nb;
    const uint xo = row_offset(p.r0 + n, p.x_ne1, p.x_ne2, p.x_base, p.x_s1, p.x_s2, p.x_s3) + 32u * b;
    float v[32];
    float amax = 0.0;
    for (uint i = 0u; i < 32u; i++) {
        v[i] = x[xo + i];
        amax = max(amax, abs(v[i]));
    }
    const float inv = amax > 0.0 ? div_rn(127.0, amax) : 0.0;
    const uint o = 9u * e;
    for (uint w = 0u; w < 8u; w++) {
        uint word = 0u;
        for (uint j = 0u; j < 4u; j++) {
            precise const float s = v[4u * w + j] * inv;
            const int q = clamp(int(roundEven(s)), -127, 127);
            word |= (uint(q) & 255u) << (8u * j);
        }
        q_out[o + w] = word;
    }
    q_out[o + 8u] = floatBitsToUint(round_f16(div_rn(amax, 127.0)));
}
#endif
