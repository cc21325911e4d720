// quant.glsl — GGUF block dequantisation for the shaders (core/quant.h layouts, core/quant.c
// arithmetic), included by weights.glsl when a W_Q* define picks the weight dtype.
// Blocks are 34/18/144/176/210 bytes, so most start off a 4-byte boundary: they are read from a
// uint[] (`wq`, binding 0) at byte addresses by extracting bytes from whole words, which needs
// neither 8- nor 16-bit storage. Every element is formed with the same float operations as
// core/quant.c; `precise` stops the compiler fusing d1·q − m1 into an fma, so each element is
// bit-identical to the CPU's.
//   q_byte/q_u16/q_u32(a)  little-endian loads at byte address a (any alignment)
//   half_bits_to_float(h)  exact IEEE half decode, subnormals too whatever the denorm mode
//   dq8(bb, c, v)          elements 8c .. 8c+7 of the block at byte address bb
//   dq_scale, dq8_sub      (Q4_K, Q5_K: QSUB defined) the same in two steps, the first once per
//                          32-element sub-block
//   QK, QBYTES             elements and bytes per block

uint q_byte(uint a) { return (wq[a >> 2] >> ((a & 3u) << 3)) & 0xffu; }

uint q_u32(uint a)
{
    const uint sh = (a & 3u) << 3, lo = wq[a >> 2];
    // only words holding wanted bytes are read: none past the row's end, hence the window's
    return sh == 0u ? lo : (lo >> sh) | (wq[(a >> 2) + 1u] << (32u - sh));
}

uint q_u16(uint a)
{
    const uint sh = (a & 3u) << 3;
    uint v = wq[a >> 2] >> sh;
    if (sh == 24u)
        v |= wq[(a >> 2) + 1u] << 8;
    return v & 0xffffu;
}

float half_bits_to_float(uint h)
{
    const uint e = (h >> 10) & 31u, m = h & 1023u, sign = (h & 0x8000u) << 16;
    if (e == 0u) // subnormal: m·2^-24, exact in f32 (a normal f32), sign kept for -0
        return uintBitsToFloat(floatBitsToUint(float(m) * 5.9604644775390625e-8) | sign);
    if (e == 31u)
        return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

#if defined(W_Q8_0)
// 34 bytes: f16 d; int8 qs[32]. x = q·d
#define QK 32u
#define QBYTES 34u
// 8 values as two words of int8, times d (also the split layout's reader, weights.glsl)
void dq8_words(uint w0, uint w1, float d, out float v[8])
{
    for (uint i = 0u; i < 4u; i++) {
        v[i] = float(bitfieldExtract(int(w0), int(8u * i), 8)) * d;
        v[i + 4u] = float(bitfieldExtract(int(w1), int(8u * i), 8)) * d;
    }
}

void dq8(uint bb, uint c, out float v[8])
{
    const uint a = bb + 2u + 8u * c;
    dq8_words(q_u32(a), q_u32(a + 4u), half_bits_to_float(q_u16(bb)), v);
}

#elif defined(W_Q4_0)
// 18 bytes: f16 d; u8 qs[16]. Elements 0..15 are the low nibbles, 16..31 the high; x = (n−8)·d
#define QK 32u
#define QBYTES 18u
void dq8(uint bb, uint c, out float v[8])
{
    const float d = half_bits_to_float(q_u16(bb));
    const uint a = bb + 2u + 8u * (c & 1u), sh = (c >> 1) * 4u, w0 = q_u32(a), w1 = q_u32(a + 4u);
    for (uint i = 0u; i < 4u; i++) {
        v[i] = float(int((w0 >> (8u * i + sh)) & 15u) - 8) * d;
        v[i + 4u] = float(int((w1 >> (8u * i + sh)) & 15u) - 8) * d;
    }
}

#elif defined(W_Q4_K) || defined(W_Q5_K)
// Q4_K 144 bytes: f16 d, dmin; u8 scales[12]; u8 qs[128].
// Q5_K 176 bytes: the same, then u8 qh[32] before qs (so qs at 48); bit j of qh[l] adds 16.
// Sub-block j (32 elements) of group g = j/2 takes the low (j even) or high nibbles of
// qs[32g .. 32g+31]; x = (d·sc_j)·q − (dmin·m_j) with the 6-bit scale/min of get_scale_min_k4.
#define QK 256u
#if defined(W_Q4_K)
#define QBYTES 144u
#define QS_AT 16u
#else
#define QBYTES 176u
#define QS_AT 48u
#endif
// Both forms from the same three bytes, then a select: j differs between neighbouring
// invocations, and SIMD-lane implementations (lavapipe) would run both sides of a branch.
// j ^ 4 is j − 4 for j >= 4 (and j + 4, unused, below).
void scale_min_k4(uint sb, uint j, out uint sc, out uint m)
{
    const uint bj = q_byte(sb + j), b4 = q_byte(sb + j + 4u), bx = q_byte(sb + (j ^ 4u));
    const bool lo = j < 4u;
    sc = lo ? bj & 63u : (b4 & 15u) | ((bx >> 6) << 4);
    m = lo ? b4 & 63u : (b4 >> 4) | ((bj >> 6) << 4);
}

// The scale and min of sub-block j, then its elements 8·part .. 8·part+7 with them: a kernel that
// walks a whole sub-block (QSUB) decodes the 6-bit scale, the min and the two halves once per 32
// elements instead of once per 8.
#define QSUB 1
void dq_scale(uint bb, uint j, out float d1, out float m1)
{
    uint sc, m;
    scale_min_k4(bb + 4u, j, sc, m);
    precise const float d = half_bits_to_float(q_u16(bb)) * float(sc);
    precise const float mm = half_bits_to_float(q_u16(bb + 2u)) * float(m);
    d1 = d;
    m1 = mm;
}

void dq8_sub(uint bb, uint j, uint part, float d1, float m1, out float v[8])
{
    const uint sh = (j & 1u) * 4u, a = bb + QS_AT + 32u * (j >> 1) + 8u * part;
    const uint w[2] = uint[](q_u32(a), q_u32(a + 4u));
#if defined(W_Q5_K)
    const uint h[2] = uint[](q_u32(bb + 16u + 8u * part), q_u32(bb + 20u + 8u * part));
#endif
    for (uint i = 0u; i < 8u; i++) {
        uint q = (w[i >> 2] >> (8u * (i & 3u) + sh)) & 15u;
#if defined(W_Q5_K)
        q += ((h[i >> 2] >> (8u * (i & 3u) + j)) & 1u) << 4;
#endif
        precise float x = d1 * float(q) - m1;
        v[i] = x;
    }
}

void dq8(uint bb, uint c, out float v[8])
{
    float d1, m1;
    dq_scale(bb, c >> 2, d1, m1);
    dq8_sub(bb, c >> 2, c & 3u, d1, m1, v);
}

#elif defined(W_Q6_K)
// 210 bytes: u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d. Half h (128 elements), quarter qq
// (32): element l of the quarter takes a nibble of ql[64h + l + 32·(qq&1)] (high when qq >= 2)
// and bits 2qq..2qq+1 of qh[32h + l]; scale scales[8h + l/16 + 2qq]; x = (d·sc)·(q − 32).
#define QK 256u
#define QBYTES 210u
void dq8(uint bb, uint c, out float v[8])
{
    const uint h = c >> 4, e0 = 8u * (c & 15u), qq = e0 >> 5, l0 = e0 & 31u;
    const uint qa = bb + 64u * h + l0 + 32u * (qq & 1u), nsh = 4u * (qq >> 1);
    const uint ha = bb + 128u + 32u * h + l0, hsh = 2u * qq;
    const int sc = bitfieldExtract(int(q_byte(bb + 192u + 8u * h + (l0 >> 4) + 2u * qq)), 0, 8);
    precise const float s = half_bits_to_float(q_u16(bb + 208u)) * float(sc);
    const uint ql[2] = uint[](q_u32(qa), q_u32(qa + 4u)), qh[2] = uint[](q_u32(ha), q_u32(ha + 4u));
    for (uint i = 0u; i < 8u; i++) {
        const uint b = 8u * (i & 3u);
        const uint q = ((ql[i >> 2] >> (b + nsh)) & 15u) | (((qh[i >> 2] >> (b + hsh)) & 3u) << 4);
        v[i] = s * float(int(q) - 32);
    }
}
#endif
