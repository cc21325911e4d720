/* quant.c — GGUF block formats (core/quant.h): dequantisation bit-exact with GGUF's definition
   (ggml's dequantize_row_*: the same float operations in the same order, so every output float
   is identical), and the reference quantisers for Q8_0 and Q4_K (GGUF's quantize_row_*_ref).
   Divisions: helpers · dequantisers (one per dtype) · Q8_0 quantiser · Q4_K quantiser · dispatch.
   Bit-exactness needs a*b − c kept as two roundings (no FMA contraction): GCC does not contract
   in ISO C mode (-std=c11, as the build sets); Clang would within an expression where FMA
   exists (ARM64), hence the pragma. */
#include "core/quant.h"

#include <math.h>
#include <string.h>

#include "core/fp16.h"
#include "core/util.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- helpers ------------------------------------------------------------------------------ */

/* Round to nearest, ties to even, as GGUF's quantisers do: adding 1.5·2^23 leaves the rounded
   integer in the low mantissa bits. Valid for |v| < 2^22; we clamp first (NaN becomes 0) so a
   hostile input cannot leave that range, which never changes an in-range result. */
static inline int nearest_int(float v)
{
    if (v != v)
        v = 0.f;
    else if (v < -4194303.f)
        v = -4194303.f;
    else if (v > 4194303.f)
        v = 4194303.f;
    float t = v + 12582912.f;
    int32_t i;
    memcpy(&i, &t, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

/* ---- dequantisers ------------------------------------------------------------------------- */

/* Same floats as f16_to_f32 (core/fp16.h), written without branches so the loop vectorises:
   rebias the exponent; exponent 31 (inf/NaN) goes to 255 with the mantissa kept; subnormals
   get the implicit bit and have 2^-14 subtracted, which is exact (Sterbenz) and never feeds a
   subnormal operand to the FPU (those are slow on many x86 cores). */
static inline float half_to_f32(uint16_t h)
{
    const uint32_t em = (uint32_t)(h & 0x7fff) << 13;
    const uint32_t exp = em & 0x0f800000u;
    const uint32_t normal = em + ((127 - 15) << 23);
    const uint32_t special = normal + ((128 - 16) << 23);
    const uint32_t tiny = fp32_to_bits(fp32_from_bits(normal + (1u << 23)) - fp32_from_bits(113u << 23));
    /* masks rather than ?: so GCC if-converts at -O2 */
    const uint32_t is_special = 0u - (uint32_t)(exp == 0x0f800000u), is_tiny = 0u - (uint32_t)(exp == 0);
    const uint32_t o = (special & is_special) | (tiny & is_tiny) | (normal & ~(is_special | is_tiny));
    return fp32_from_bits(o | (uint32_t)(h & 0x8000) << 16);
}

/* f16 and bf16 differ only in the conversion; static inline with a constant cvt, so each caller
   gets its own copy with the conversion inlined. The fixed-length inner loop vectorises at -O2
   without a runtime epilogue check. */
static inline void dequant_u16(const uint16_t *restrict x, float *restrict y, int64_t n, float (*cvt)(uint16_t))
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            y[i + j] = cvt(x[i + j]);
    for (; i < n; i++)
        y[i] = cvt(x[i]);
}

static void dequant_q8_0(const block_q8_0 *restrict x, float *restrict y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += QK8_0) {
        const float d = f16_to_f32(x[i].d);
        for (int j = 0; j < QK8_0; j++)
            y[j] = x[i].qs[j] * d;
    }
}

/* Low nibbles are elements 0..15, high nibbles 16..31; both offset by 8. */
static void dequant_q4_0(const block_q4_0 *restrict x, float *restrict y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += QK4_0) {
        const float d = f16_to_f32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            const int lo = (x[i].qs[j] & 0x0F) - 8;
            const int hi = (x[i].qs[j] >> 4) - 8;
            y[j] = lo * d;
            y[j + QK4_0 / 2] = hi * d;
        }
    }
}

/* Four 64-element groups; each uses 32 bytes of qs, low nibbles for its first sub-block of 32,
   high nibbles for its second. x = (d·scale)·q − (dmin·min). */
static void dequant_q4_K(const block_q4_K *restrict x, float *restrict y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        const float d = f16_to_f32(x[i].d);
        const float dmin = f16_to_f32(x[i].dmin);
        const uint8_t *q = x[i].qs;
        for (int g = 0; g < QK_K / 64; g++, q += 32) {
            float d1, m1, d2, m2;
            get_scale_min_k4_pair(x[i].scales, g, d, dmin, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; l++)
                *y++ = d2 * (q[l] >> 4) - m2;
        }
    }
}

/* As Q4_K with a fifth bit: sub-block j takes bit j of qh[l] (adds 16). */
static void dequant_q5_K(const block_q5_K *restrict x, float *restrict y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        const float d = f16_to_f32(x[i].d);
        const float dmin = f16_to_f32(x[i].dmin);
        const uint8_t *ql = x[i].qs, *qh = x[i].qh;
        uint8_t u1 = 1, u2 = 2;
        for (int g = 0; g < QK_K / 64; g++, ql += 32, u1 <<= 2, u2 <<= 2) {
            float d1, m1, d2, m2;
            get_scale_min_k4_pair(x[i].scales, g, d, dmin, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; l++)
                *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

/* Two 128-element halves; in each, element l + 32·k (k = 0..3) takes a nibble of ql (k odd:
   ql[l+32], k ≥ 2: high nibble) and bits 2k..2k+1 of qh[l]; 16 int8 scales, one per 16
   elements. x = (d·scale)·(q − 32): GGUF writes d * sc * q, which C evaluates left to right,
   so hoisting d·scale gives the same floats. */
static void dequant_q6_K(const block_q6_K *restrict x, float *restrict y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        const float d = f16_to_f32(x[i].d);
        const uint8_t *ql = x[i].ql, *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int h = 0; h < QK_K / 128; h++, y += 128, ql += 64, qh += 32, sc += 8) {
            /* elements l < 16 and l ≥ 16 of each 32 use consecutive scales */
            for (int is = 0; is < 2; is++) {
                const float s1 = d * sc[is + 0], s2 = d * sc[is + 2], s3 = d * sc[is + 4], s4 = d * sc[is + 6];
                for (int l = 16 * is; l < 16 * is + 16; l++) {
                    const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                    const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                    const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                    const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                    y[l + 0] = s1 * q1;
                    y[l + 32] = s2 * q2;
                    y[l + 64] = s3 * q3;
                    y[l + 96] = s4 * q4;
                }
            }
        }
    }
}

void dequantize_row(enum dtype t, const void *src, float *dst, int64_t n)
{
    const struct dtype_info *di = dtype_info(t);
    ASSERT1(n >= 0 && n % di->block_elems == 0);
    const int64_t nb = n / di->block_elems;
    switch (t) {
    case DT_F32: memcpy(dst, src, (size_t)n * sizeof(float)); break;
    case DT_F16: dequant_u16(src, dst, n, half_to_f32); break;
    case DT_BF16: dequant_u16(src, dst, n, bf16_to_f32); break;
    case DT_Q8_0: dequant_q8_0(src, dst, nb); break;
    case DT_Q4_0: dequant_q4_0(src, dst, nb); break;
    case DT_Q4_K: dequant_q4_K(src, dst, nb); break;
    case DT_Q5_K: dequant_q5_K(src, dst, nb); break;
    case DT_Q6_K: dequant_q6_K(src, dst, nb); break;
    case DT_I32: /* not a weight type; a value cast keeps backend_tensor_get_f32 total */
        for (int64_t i = 0; i < n; i++) {
            int32_t v;
            memcpy(&v, (const char *)src + 4 * i, 4);
            dst[i] = (float)v;
        }
        break;
    default: ASSERT1(!"dequantize_row: unknown dtype"); memset(dst, 0, (size_t)n * sizeof(float)); break;
    }
}

/* ---- Q8_0 quantiser ----------------------------------------------------------------------- */

/* GGUF's reference: d = amax/127 kept in f32 for the division, stored as half; q = round(x/d)
   with C roundf (ties away from zero). */
void quantize_row_q8_0(const float *src, void *dst, int64_t n)
{
    ASSERT1(n % QK8_0 == 0);
    block_q8_0 *y = dst;
    for (int64_t i = 0; i < n / QK8_0; i++, src += QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++)
            amax = MAX(amax, fabsf(src[j]));
        const float d = amax / 127.0f;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = f32_to_f16(d);
        for (int j = 0; j < QK8_0; j++) {
            /* finite inputs land in [−127, 127] already; the clamp only keeps NaN/inf in a
               hostile row from an undefined float → int conversion */
            const float q = roundf(src[j] * id);
            y[i].qs[j] = (int8_t)(q >= -127.f && q <= 127.f ? q : q > 0 ? 127.f : q < 0 ? -127.f : 0.f);
        }
    }
}

/* ---- Q4_K quantiser ----------------------------------------------------------------------- */

/* Fits x ≈ scale·L − the_min with L in [0, nmax] for one sub-block, minimising the weighted
   squared error. Starts from the min/max grid, then tries nstep+1 slightly stretched grids
   (nmax + rmin + rdelta·is steps over the range) and for each solves the weighted least-squares
   scale and offset for its levels; keeps the best. An offset above 0 is pinned to 0 (mins are
   stored non-negative). This is GGUF's make_qkx2_quants search, so blocks match its files. */
static float fit_scale_min(int n, int nmax, const float *x, const float *w, uint8_t *L, float *the_min,
                           uint8_t *Laux, float rmin, float rdelta, int nstep)
{
    float lo = x[0], hi = x[0];
    float sum_w = w[0], sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < lo)
            lo = x[i];
        if (x[i] > hi)
            hi = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (lo > 0)
        lo = 0;
    if (hi == lo) {
        memset(L, 0, (size_t)n);
        *the_min = -lo;
        return 0.f;
    }
    float iscale = nmax / (hi - lo);
    float scale = 1 / iscale;
    float best = 0;
    for (int i = 0; i < n; i++) {
        int l = nearest_int(iscale * (x[i] - lo));
        L[i] = (uint8_t)MAX(0, MIN(nmax, l));
        float diff = scale * L[i] + lo - x[i];
        best += w[i] * (diff * diff);
    }
    for (int is = 0; is <= nstep; is++) {
        /* `lo` moves to the best offset found so far, as in GGUF's search (the grid origin of
           later trials follows it); keeping that matches GGUF's output block for block. */
        iscale = (rmin + rdelta * is + nmax) / (hi - lo);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = nearest_int(iscale * (x[i] - lo));
            l = MAX(0, MIN(nmax, l));
            Laux[i] = (uint8_t)l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float err = 0;
            for (int i = 0; i < n; i++) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                err += w[i] * (diff * diff);
            }
            if (err < best) {
                memcpy(L, Laux, (size_t)n);
                best = err;
                scale = this_scale;
                lo = this_min;
            }
        }
    }
    *the_min = -lo;
    return scale;
}

/* One super-block of 256 for Q4_K (nmax 15) or Q5_K (nmax 31): 8 sub-blocks fitted independently
   (weights |x| + rms(sub-block), so large values count more), their scales and mins quantised to
   6 bits against the largest of each (super-block d = max_scale/63, dmin = max_min/63, both
   halves), then every element requantised against the stored (rounded) scales so the levels fit
   what a reader decodes, and packed into qs (and, for Q5_K, qh). GGUF's search parameters: Q4_K
   grids from nmax−1 to nmax+1 in 20 steps of 0.1, Q5_K from nmax−0.5 in 15. */
static void quantize_block_k(const float *x, int nmax, uint8_t *scales_out, uint16_t *d_out, uint16_t *dmin_out,
                             uint8_t *qs, uint8_t *qh)
{
    uint8_t L[QK_K], Laux[32];
    float w[32], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < QK_K / 32; j++) {
        const float *xs = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++)
            sum_x2 += xs[l] * xs[l];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++)
            w[l] = av_x + fabsf(xs[l]);
        scales[j] = nmax == 15 ? fit_scale_min(32, 15, xs, w, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20)
                               : fit_scale_min(32, 31, xs, w, L + 32 * j, &mins[j], Laux, -0.5f, 0.1f, 15);
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }

    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    memset(scales_out, 0, K_SCALE_SIZE);
    for (int j = 0; j < QK_K / 32; j++) {
        /* conversion to uint8_t before the clamp, as GGUF (a negative fit wraps, then clamps) */
        uint8_t ls = (uint8_t)nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)nearest_int(inv_min * mins[j]);
        ls = MIN(63, ls);
        lm = MIN(63, lm);
        /* packing that get_scale_min_k4 reads back: j < 4 in the low 6 bits of bytes j and
           j+4; j ≥ 4 as nibbles of byte j+4 with the top two bits in bytes j−4 and j */
        if (j < 4) {
            scales_out[j] = ls;
            scales_out[j + 4] = lm;
        } else {
            scales_out[j + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
            scales_out[j - 4] |= (uint8_t)((ls >> 4) << 6);
            scales_out[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    *d_out = f32_to_f16(max_scale / 63.f);
    *dmin_out = f32_to_f16(max_min / 63.f);

    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales_out, &sc, &m);
        const float d = f16_to_f32(*d_out) * sc;
        if (!d)
            continue; /* keep the fit's levels; they decode to −dmin·m regardless */
        const float dm = f16_to_f32(*dmin_out) * m;
        for (int l = 0; l < 32; l++) {
            int q = nearest_int((x[32 * j + l] + dm) / d);
            L[32 * j + l] = (uint8_t)MAX(0, MIN(nmax, q));
        }
    }

    /* Both layouts keep the low 4 bits as nibbles, sub-block 2g in the low and 2g+1 in the high
       half of qs[32g + l]; Q5_K (qh given) puts bit 4 of sub-block j's value l in bit j of qh[l]
       (dequant_q5_K). For Q4_K the levels are ≤ 15, so the mask changes nothing. */
    if (qh)
        memset(qh, 0, QK_K / 8);
    for (int g = 0; g < QK_K / 64; g++)
        for (int l = 0; l < 32; l++) {
            const uint8_t a = L[64 * g + l], b = L[64 * g + l + 32];
            qs[32 * g + l] = (uint8_t)((a & 0xF) | ((b & 0xF) << 4));
            if (qh)
                qh[l] |= (uint8_t)(((a >> 4) << (2 * g)) | ((b >> 4) << (2 * g + 1)));
        }
}

/* Runs a super-block quantiser over the n / QK_K blocks of a row (each block_bytes long). */
static void quantize_blocks(const float *src, void *dst, int64_t n, size_t block_bytes,
                            void (*block)(const float *x, void *y))
{
    ASSERT1(n % QK_K == 0);
    for (int64_t i = 0; i < n / QK_K; i++)
        block(src + i * QK_K, (uint8_t *)dst + (size_t)i * block_bytes);
}

static void quantize_block_q4_K(const float *x, void *blk)
{
    block_q4_K *y = blk;
    quantize_block_k(x, 15, y->scales, &y->d, &y->dmin, y->qs, NULL);
}

void quantize_row_q4_K(const float *src, void *dst, int64_t n)
{
    quantize_blocks(src, dst, n, sizeof(block_q4_K), quantize_block_q4_K);
}

/* Q5_K: Q4_K's fit with 31 levels and a fifth bit plane. */
static void quantize_block_q5_K(const float *x, void *blk)
{
    block_q5_K *y = blk;
    quantize_block_k(x, 31, y->scales, &y->d, &y->dmin, y->qs, y->qh);
}

void quantize_row_q5_K(const float *src, void *dst, int64_t n)
{
    quantize_blocks(src, dst, n, sizeof(block_q5_K), quantize_block_q5_K);
}

/* ---- Q6_K quantiser ----------------------------------------------------------------------- */

/* Q6_K by plain rounding, not GGUF's search (make_qx_quants tries 19 scales per sub-block): each
   16-value sub-block's step from its value of largest magnitude (that value ↦ −32), the 16 steps
   as int8 against the largest (super-block d, half), then every value requantised against the
   stored steps. A valid Q6_K block any reader decodes; its error is somewhat above GGUF's. Used
   for random-weight models (lm/randmodel.c) and tests. */
static void quantize_block_q6_K(const float *x, void *blk)
{
    block_q6_K *y = blk;
    float scales[QK_K / 16], max_scale = 0, max_abs = 0;
    for (int j = 0; j < QK_K / 16; j++) {
        float amax = 0, vmax = 0;
        for (int l = 0; l < 16; l++)
            if (fabsf(x[16 * j + l]) > amax) {
                amax = fabsf(x[16 * j + l]);
                vmax = x[16 * j + l];
            }
        scales[j] = amax > 0 ? vmax / -32.f : 0.f;
        if (fabsf(scales[j]) > max_abs) {
            max_abs = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    memset(y, 0, sizeof *y);
    if (max_abs == 0)
        return;
    const float iscale = -128.f / max_scale;
    y->d = f32_to_f16(1 / iscale);
    uint8_t L[QK_K];
    for (int j = 0; j < QK_K / 16; j++) {
        y->scales[j] = (int8_t)MIN(127, nearest_int(iscale * scales[j]));
        const float d = f16_to_f32(y->d) * y->scales[j];
        for (int l = 0; l < 16; l++) {
            const int q = d ? nearest_int(x[16 * j + l] / d) : 0;
            L[16 * j + l] = (uint8_t)(MAX(-32, MIN(31, q)) + 32);
        }
    }
    /* element l + 32k of each 128-value half: a nibble of ql (k odd: ql[l+32]; k ≥ 2: the high
       one) and bits 2k..2k+1 of qh[l] (dequant_q6_K) */
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *q = L + 128 * h + l;
            y->ql[64 * h + l] = (uint8_t)((q[0] & 0xF) | ((q[64] & 0xF) << 4));
            y->ql[64 * h + l + 32] = (uint8_t)((q[32] & 0xF) | ((q[96] & 0xF) << 4));
            y->qh[32 * h + l] = (uint8_t)((q[0] >> 4) | ((q[32] >> 4) << 2) | ((q[64] >> 4) << 4) | ((q[96] >> 4) << 6));
        }
}

void quantize_row_q6_K(const float *src, void *dst, int64_t n)
{
    quantize_blocks(src, dst, n, sizeof(block_q6_K), quantize_block_q6_K);
}

/* ---- dispatch ----------------------------------------------------------------------------- */

bool quantize_row(enum dtype t, const float *src, void *dst, int64_t n)
{
    if ((unsigned)t >= DT_COUNT || n < 0 || n % dtype_info(t)->block_elems != 0)
        return false;
    switch (t) {
    case DT_F32: memcpy(dst, src, (size_t)n * sizeof(float)); return true;
    case DT_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = f32_to_f16(src[i]);
        return true;
    case DT_BF16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = f32_to_bf16(src[i]);
        return true;
    case DT_Q8_0: quantize_row_q8_0(src, dst, n); return true;
    case DT_Q4_K: quantize_row_q4_K(src, dst, n); return true;
    case DT_Q5_K: quantize_row_q5_K(src, dst, n); return true;
    case DT_Q6_K: quantize_row_q6_K(src, dst, n); return true;
    default: return false;
    }
}
