// math.glsl — elementary functions with accuracy we can state, for the light ops (unary,
// softmax, gated norm, rope). Vulkan only bounds the built-ins loosely (exp: 3 + 2|x| ulp, log:
// 2^-21 absolute near 1, sin/cos: 2^-11 absolute and only on [-pi, pi]), so these are written
// from +, *, / and bit operations, whose precision Vulkan does pin down.
//   m_exp(x)         e^x, ~1 ulp; inf above 88.72, 0 below -103.97
//   m_sigmoid(x)     1/(1+e^-x) with both denominators in [1, 2] (no overflow, no inf/inf)
//   m_log1p01(u)     log(1+u) for u in [0, 1], a few ulp (the atanh series)
//   m_erfc(x)        erfc, fractional error ~1.2e-7 (Chebyshev fit, Numerical Recipes "erfcc")
//   m_sincos(a,s,c)  sin and cos of any finite f32 angle, ~1e-7 absolute: exact reduction by
//                    pi/2 with integer arithmetic on the bits of 2/pi (Payne–Hanek), so rope
//                    angles of large positions come out as the CPU's double-precision cos/sin
//   f32_to_f16_bits / f32_to_bf16_bits: round to nearest even, as core/fp16.h (bit for bit)
//   m_unary(op, v, s) enum unary_op `op` of v (0 silu, 1 gelu tanh, 2 gelu erf, 3 sigmoid,
//                    4 softplus, 5 exp), or 6: v·s (unary.comp, and the products' epilogue)

float m_exp(float x)
{
    if (x > 88.72283f)
        return uintBitsToFloat(0x7f800000u);
    if (x < -103.97208f)
        return 0.0;
    if (isnan(x))
        return x;
    // x = k·ln2 + r, |r| <= ln2/2. ln2 split in two (fdlibm's expf constants): the high part
    // has 15 significant bits, so k·LN2_HI is exact for |k| <= 150 and r loses nothing.
    // `precise`: compilers may otherwise refactor the two products into k·(LN2_HI + LN2_LO)
    // (Mesa does), which rounds ln2 back to f32 and costs ~k/2 ulp.
    const float k = roundEven(x * 1.44269504f);
    precise const float r = (x - k * 0.693145751953125f) - k * 1.42860677e-06f;
    // Taylor to degree 7: the remainder r^8/8! is below 6e-9 relative for |r| <= 0.347
    float p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // 2^k in two factors: each stays a normal float for k in [-150, 128]
    const int ki = int(k), k1 = ki / 2, k2 = ki - k1;
    return p * uintBitsToFloat(uint(k1 + 127) << 23) * uintBitsToFloat(uint(k2 + 127) << 23);
}

float m_sigmoid(float x)
{
    if (x >= 0.0)
        return 1.0 / (1.0 + m_exp(-x));
    const float e = m_exp(x);
    return e / (1.0 + e);
}

float m_log1p01(float u)
{
    // log(1+u) = 2·atanh(s), s = u/(2+u) in [0, 1/3]: odd series in s, terms below 1e-9 by s^17
    const float s = u / (2.0 + u), s2 = s * s;
    float p = 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    p = p * s2 + 1.0;
    return 2.0 * s * p;
}

float m_erfc(float x)
{
    const float z = abs(x), t = 1.0 / (1.0 + 0.5 * z);
    float p = 0.17087277;
    p = p * t - 0.82215223;
    p = p * t + 1.48851587;
    p = p * t - 1.13520398;
    p = p * t + 0.27886807;
    p = p * t - 0.18628806;
    p = p * t + 0.09678418;
    p = p * t + 0.37409196;
    p = p * t + 1.00002368;
    p = p * t - 1.26551223;
    const float r = t * m_exp(p - z * z);
    return x >= 0.0 ? r : 2.0 - r;
}

// 2/pi in binary, 32 bits a word, most significant first, after one word of zeros (bits at and
// before the binary point): bit i of 2/pi (i >= 1 counts after the point) is bit i + 31 of this
// stream. Nine words cover every finite float's reduction window.
const uint TWO_OVER_PI[10] = uint[](0x00000000u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                    0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au);

void m_sincos(float a, out float s, out float c)
{
    const float ax = abs(a);
    float r = ax;
    uint q = 0u; // quadrant: ax = r + q·pi/2 (mod 2pi)
    if (!(ax <= 0.78539816f)) {
        const uint u = floatBitsToUint(ax), ex = u >> 23;
        if (ex == 255u) { // inf or NaN
            s = c = a - a;
            return;
        }
        // ax = M·2^E exactly (ax >= pi/4 is normal, so E >= -24). y = ax·(2/pi); we need y mod 4
        // to 62 fraction bits: bits of 2/pi before i = E-1 only add multiples of 4, those after
        // i = E+126 less than 2^-40. So multiply M by the 128-bit window starting at bit E-1
        // (stream bit E+30) and keep bits 64..127 of the product: that is y·2^62 mod 2^64.
        const uint M = (u & 0x7fffffu) | 0x800000u;
        const uint p0 = ex - 120u; // E + 30 = ex - 150 + 30
        const uint j = p0 >> 5, sh = p0 & 31u;
        uint w[4]; // w[3] most significant
        for (uint i = 0u; i < 4u; i++) {
            const uint hi = TWO_OVER_PI[j + i], lo = TWO_OVER_PI[j + i + 1u];
            w[3u - i] = sh == 0u ? hi : (hi << sh) | (lo >> (32u - sh));
        }
        uint h0, l0, h1, l1, h2, l2, h3, l3, c1, c2, c3;
        umulExtended(M, w[0], h0, l0);
        umulExtended(M, w[1], h1, l1);
        umulExtended(M, w[2], h2, l2);
        umulExtended(M, w[3], h3, l3);
        uaddCarry(h0, l1, c1);                        // word 1: only its carry matters
        uint word2 = uaddCarry(h1, l2, c2);
        word2 = uaddCarry(word2, c1, c3);
        const uint word3 = h2 + l3 + c2 + c3;         // mod 2^32
        q = word3 >> 30;                              // floor(y) mod 4
        float f = float(word3 & 0x3fffffffu) * (1.0 / 1073741824.0) + float(word2) * 2.168404344971009e-19; // 2^-62
        if (f >= 0.5) { // round to the nearest quadrant: r in [-pi/4, pi/4]
            f -= 1.0;
            q += 1u;
        }
        r = f * 1.57079632679489662;
    }
    // Taylor on |r| <= pi/4: remainders r^11/11! < 2e-9 and r^12/12! < 2e-10
    const float r2 = r * r;
    float ps = -1.0 / 39916800.0;
    ps = ps * r2 + 1.0 / 362880.0;
    ps = ps * r2 - 1.0 / 5040.0;
    ps = ps * r2 + 1.0 / 120.0;
    ps = ps * r2 - 1.0 / 6.0;
    const float sr = r + r * r2 * ps;
    float pc = 1.0 / 479001600.0;
    pc = pc * r2 - 1.0 / 3628800.0;
    pc = pc * r2 + 1.0 / 40320.0;
    pc = pc * r2 - 1.0 / 720.0;
    pc = pc * r2 + 1.0 / 24.0;
    pc = pc * r2 - 0.5;
    const float cr = 1.0 + r2 * pc;
    q &= 3u;
    float sv = (q & 1u) != 0u ? cr : sr, cv = (q & 1u) != 0u ? sr : cr;
    if (q == 1u || q == 2u)
        cv = -cv;
    if (q >= 2u)
        sv = -sv;
    s = a < 0.0 ? -sv : sv;
    c = cv;
}

// core/fp16.h f32_to_f16 in integers (no reliance on the device's f32 -> f16 rounding mode)
uint f32_to_f16_bits(float f)
{
    const uint w = floatBitsToUint(f), sign = (w >> 16) & 0x8000u, aw = w & 0x7fffffffu;
    if (aw > 0x7f800000u)
        return sign | 0x7e00u; // NaN
    if (aw >= 0x477ff000u)
        return sign | 0x7c00u; // rounds to >= 65520: infinity
    if (aw < 0x38800000u) {
        // subnormal or zero: round the value·2^24 = M·2^(e-126) to an integer, ties to even
        const uint e = aw >> 23;
        if (e < 102u)
            return sign; // below 2^-25: rounds to 0 (f32 subnormals too)
        const uint m = (aw & 0x7fffffu) | 0x800000u, shift = 126u - e; // 14..24
        const uint qv = m >> shift, rem = m & ((1u << shift) - 1u), halfv = 1u << (shift - 1u);
        return sign | (qv + ((rem > halfv || (rem == halfv && (qv & 1u) != 0u)) ? 1u : 0u));
    }
    // rebias the exponent (-112 << 23) and round to nearest even at bit 13, mod 2^32 as in C
    return sign | ((aw + 0xc8000fffu + ((aw >> 13) & 1u)) >> 13);
}

uint f32_to_bf16_bits(float f)
{
    uint w = floatBitsToUint(f);
    if ((w & 0x7fffffffu) > 0x7f800000u)
        return (w >> 16) | 0x40u; // NaN stays a quiet NaN
    return (w + 0x7fffu + ((w >> 16) & 1u)) >> 16;
}

// The forms follow core/cpu/elementwise.c's safe ones: the sigmoid never divides by an overflowed
// e^x, gelu tanh is v·σ(2u) (no 1 + tanh cancellation), gelu erf is 0.5v·erfc(−v/√2), softplus is
// v above 20 (spec §2.5 step 4) and max(v,0) + log1p(e^−|v|) below.
float m_unary(uint op, float v, float s)
{
    if (op == 0u) // silu
        return v * m_sigmoid(v);
    if (op == 1u) // gelu tanh: 0.5v(1 + tanh u) = v·σ(2u), u = sqrt(2/pi)(v + 0.044715v³)
        return v * m_sigmoid(1.5957691216057308 * (v + 0.044715 * v * v * v));
    if (op == 2u) // gelu erf
        return 0.5 * v * m_erfc(-v * 0.7071067811865476);
    if (op == 3u)
        return m_sigmoid(v);
    if (op == 4u) // softplus with PyTorch's threshold 20 (spec §2.5 step 4)
        return v > 20.0 ? v : max(v, 0.0) + m_log1p01(m_exp(-abs(v)));
    if (op == 5u)
        return m_exp(v);
    return v * s; // 6: scale
}
