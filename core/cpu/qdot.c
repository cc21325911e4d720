/* qdot.c — activation rounding, the portable kernels and the run-time choice of qdot.h.
   Divisions: rounding · portable kernels · choice */
#include "core/cpu/qdot.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/cpu/matmul_x86.h"
#include "core/fp16.h"
#include "core/quant.h"

/* ---- rounding --------------------------------------------------------------------------------- */

void qdot_quantize(const float *x, block_q8x *out, int64_t n)
{
    for (int64_t b = 0; b < n / QDOT_BLOCK; b++) {
        const float *v = x + b * QDOT_BLOCK;
        float amax = 0;
        for (int i = 0; i < QDOT_BLOCK; i++)
            amax = fabsf(v[i]) > amax ? fabsf(v[i]) : amax; /* fmaxf is a libm call at -O2 */
        /* llama.cpp's Q8_0 activations: q from the f32 step, the step kept as f16 */
        const float inv = amax > 0 ? 127.0f / amax : 0.0f, d = f16_to_f32(f32_to_f16(amax / 127.0f));
        int sum = 0;
        for (int i = 0; i < QDOT_BLOCK; i++) {
            /* nearbyintf: to nearest even under the default rounding mode, as the SIMD converts do */
            const int q = (int)nearbyintf(v[i] * inv);
            out[b].qs[i] = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
            sum += out[b].qs[i];
        }
        out[b].d = d;
        out[b].s = d * (float)sum;
    }
}

/* llama.cpp's quantize_row_q8_K_ref: the step from the signed value of largest magnitude. */
void qdot_quantize_q8k_portable(const float *x, block_q8k *out, int64_t n)
{
    for (int64_t b = 0; b < n / 256; b++) {
        const float *v = x + b * 256;
        float amax = 0, max = 0;
        for (int i = 0; i < 256; i++)
            if (fabsf(v[i]) > amax) {
                amax = fabsf(v[i]);
                max = v[i];
            }
        memset(&out[b], 0, sizeof out[b]);
        if (amax == 0)
            continue;
        const float iscale = -127.0f / max;
        for (int i = 0; i < 256; i++) {
            const int q = (int)nearbyintf(iscale * v[i]);
            out[b].qs[i] = (int8_t)(q > 127 ? 127 : q);
            out[b].bsums[i / 16] = (int16_t)(out[b].bsums[i / 16] + out[b].qs[i]);
        }
        out[b].d = 1 / iscale;
    }
}

void qdot_quantize_q8k(const float *x, block_q8k *out, int64_t n)
{
#ifdef SEER_MM_X86
    if (mm_x86_available()) {
        qdot_quantize_q8k_avx2(x, out, n);
        return;
    }
#endif
    qdot_quantize_q8k_portable(x, out, n);
}

size_t qdot_act_row_bytes(enum dtype t, int64_t K)
{
    const size_t nb = (size_t)(K / QDOT_BLOCK);
    if (t == DT_Q4_K)
        return (size_t)(K / 256) * sizeof(block_q8k);
    return nb * sizeof(block_q8x) + (t == DT_Q8_0 ? nb * (sizeof(float) + 9 * sizeof(int32_t) + QDOT_BLOCK) : 0);
}

void qdot_quantize_act(enum dtype t, const float *x, void *out, int64_t K)
{
    if (t == DT_Q4_K) {
        qdot_quantize_q8k(x, out, K);
        return;
    }
    qdot_quantize(x, out, K);
    if (t != DT_Q8_0)
        return;
    /* Q8_0's tail (qdot.h): the steps contiguous; for the VNNI kernel −128·Σq per 4 values and
       the values again, contiguous; for the interleaved rows' kernel −128·Σq per block */
    const int64_t nb = K / QDOT_BLOCK;
    const block_q8x *q = out;
    float *xd = (float *)(void *)((block_q8x *)out + nb);
    int32_t *xc = (int32_t *)(void *)(xd + nb);
    int8_t *xq = (int8_t *)(void *)(xc + 8 * nb);
    int32_t *xb = (int32_t *)(void *)(xq + QDOT_BLOCK * nb);
    for (int64_t b = 0; b < nb; b++) {
        xd[b] = q[b].d;
        memcpy(xq + QDOT_BLOCK * b, q[b].qs, QDOT_BLOCK);
        xb[b] = 0;
        for (int l = 0; l < 8; l++) {
            xc[8 * b + l] = -128 * (q[b].qs[4 * l] + q[b].qs[4 * l + 1] + q[b].qs[4 * l + 2] + q[b].qs[4 * l + 3]);
            xb[b] += xc[8 * b + l];
        }
    }
}

/* ---- portable kernels ----------------------------------------------------------------------------- */

/* Sub-block j (32 values) of one weight block as w[i] = a·q[i] − b. Q6_K's two 16-value scales
   are folded into q (|q| ≤ 32·128 fits int16), so a = d there. */
struct sub32 {
    int16_t q[QDOT_BLOCK];
    float a, b;
};

static void unpack_q8_0(const void *w, int64_t j, struct sub32 *s)
{
    const block_q8_0 *blk = (const block_q8_0 *)w + j;
    for (int i = 0; i < 32; i++)
        s->q[i] = blk->qs[i];
    s->a = f16_to_f32(blk->d);
    s->b = 0;
}

static void unpack_q4_0(const void *w, int64_t j, struct sub32 *s)
{
    const block_q4_0 *blk = (const block_q4_0 *)w + j;
    for (int i = 0; i < 16; i++) {
        s->q[i] = blk->qs[i] & 0xF;
        s->q[i + 16] = blk->qs[i] >> 4;
    }
    s->a = f16_to_f32(blk->d);
    s->b = 8 * s->a; /* x = d·(q − 8) */
}

/* Q4_K and Q5_K: sub-block j%8 of superblock j/8; 64-value groups share 32 bytes of nibbles. */
static void unpack_q4_K(const void *w, int64_t j, struct sub32 *s)
{
    const block_q4_K *blk = (const block_q4_K *)w + j / 8;
    const int sub = (int)(j % 8), g = sub / 2;
    uint8_t sc, m;
    get_scale_min_k4(sub, blk->scales, &sc, &m);
    for (int i = 0; i < 32; i++)
        s->q[i] = sub % 2 ? blk->qs[32 * g + i] >> 4 : blk->qs[32 * g + i] & 0xF;
    s->a = f16_to_f32(blk->d) * sc;
    s->b = f16_to_f32(blk->dmin) * m;
}

static void unpack_q5_K(const void *w, int64_t j, struct sub32 *s)
{
    const block_q5_K *blk = (const block_q5_K *)w + j / 8;
    const int sub = (int)(j % 8), g = sub / 2;
    uint8_t sc, m;
    get_scale_min_k4(sub, blk->scales, &sc, &m);
    for (int i = 0; i < 32; i++) {
        const int lo = sub % 2 ? blk->qs[32 * g + i] >> 4 : blk->qs[32 * g + i] & 0xF;
        s->q[i] = (int16_t)(lo | ((blk->qh[i] >> sub) & 1) << 4); /* bit `sub` of qh[i] is bit 4 */
    }
    s->a = f16_to_f32(blk->d) * sc;
    s->b = f16_to_f32(blk->dmin) * m;
}

/* Q6_K: 128-value halves; in half h, sub-block t takes the low (t < 2) or high nibbles of
   ql[64h + 32(t%2) + i] and bits 2t..2t+1 of qh[32h + i], minus 32; scale sc[8h + 2t + i/16]. */
static void unpack_q6_K(const void *w, int64_t j, struct sub32 *s)
{
    const block_q6_K *blk = (const block_q6_K *)w + j / 8;
    const int h = (int)(j % 8) / 4, t = (int)(j % 4);
    const uint8_t *ql = blk->ql + 64 * h + 32 * (t % 2), *qh = blk->qh + 32 * h;
    for (int i = 0; i < 32; i++) {
        const int lo = t < 2 ? ql[i] & 0xF : ql[i] >> 4;
        const int q = (lo | ((qh[i] >> (2 * t)) & 3) << 4) - 32;
        s->q[i] = (int16_t)(q * blk->scales[8 * h + 2 * t + i / 16]);
    }
    s->a = f16_to_f32(blk->d);
    s->b = 0;
}

typedef void (*unpack_fn)(const void *w, int64_t j, struct sub32 *s);

static float dot_generic(unpack_fn unpack, const void *w, const block_q8x *x, int64_t nb)
{
    double acc = 0; /* the kernels' reference: one double over the blocks */
    for (int64_t j = 0; j < nb; j++) {
        struct sub32 s;
        int32_t isum = 0;
        unpack(w, j, &s);
        for (int i = 0; i < 32; i++)
            isum += s.q[i] * x[j].qs[i];
        acc += (double)s.a * x[j].d * isum - (double)s.b * x[j].s;
    }
    return (float)acc;
}

#define PORTABLE(name)                                                                  \
    static float dot_##name(const void *w, const void *x, int64_t nb)                  \
    {                                                                                   \
        return dot_generic(unpack_##name, w, x, nb);                                    \
    }
PORTABLE(q8_0)
PORTABLE(q4_0)
PORTABLE(q5_K)
PORTABLE(q6_K)
#undef PORTABLE

/* Q4_K × Q8_K: integer sums per superblock, then d·dx·Σ sc·Σq·xq − dmin·dx·Σ m·Σxq. */
static float dot_q4_K(const void *w, const void *xv, int64_t nb)
{
    const block_q8k *x = xv;
    double acc = 0;
    for (int64_t i = 0; i < nb / 8; i++) {
        struct sub32 s;
        int32_t sumi = 0, summ = 0;
        const block_q4_K *blk = (const block_q4_K *)w + i;
        for (int j = 0; j < 8; j++) {
            uint8_t sc, m;
            int32_t isum = 0;
            get_scale_min_k4(j, blk->scales, &sc, &m);
            unpack_q4_K(w, 8 * i + j, &s);
            for (int k = 0; k < 32; k++)
                isum += s.q[k] * x[i].qs[32 * j + k];
            sumi += sc * isum;
            summ += m * (x[i].bsums[2 * j] + x[i].bsums[2 * j + 1]);
        }
        acc += (double)f16_to_f32(blk->d) * x[i].d * sumi - (double)f16_to_f32(blk->dmin) * x[i].d * summ;
    }
    return (float)acc;
}

static qdot_fn portable_kernel(enum dtype t)
{
    switch (t) {
    case DT_Q8_0: return dot_q8_0;
    case DT_Q4_0: return dot_q4_0;
    case DT_Q4_K: return dot_q4_K;
    case DT_Q5_K: return dot_q5_K;
    case DT_Q6_K: return dot_q6_K;
    default: return NULL;
    }
}

/* ---- choice ----------------------------------------------------------------------------------- */

bool qdot_type(enum dtype t) { return portable_kernel(t) != NULL; }

qdot_fn qdot_kernel_isa(enum dtype t, enum qdot_isa isa)
{
    if (isa == QDOT_PORTABLE)
        return portable_kernel(t);
#if defined(__x86_64__) && defined(__GNUC__)
    return qdot_x86_kernel(t, isa == QDOT_VNNI);
#else
    return NULL;
#endif
}

/* The best family present, decided once (CPUID traps to the hypervisor in a VM). */
static enum qdot_isa best_isa(void)
{
    static atomic_int state = -1;
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s < 0) {
        s = qdot_kernel_isa(DT_Q8_0, QDOT_VNNI) ? QDOT_VNNI
            : qdot_kernel_isa(DT_Q8_0, QDOT_AVX2) ? QDOT_AVX2
                                                   : QDOT_PORTABLE;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return (enum qdot_isa)s;
}

qdot_fn qdot_kernel(enum dtype t) { return qdot_kernel_isa(t, best_isa()); }

qdot_rows_fn qdot_rows_kernel(enum dtype t)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const enum qdot_isa isa = best_isa();
    return isa == QDOT_PORTABLE ? NULL : qdot_x86_rows_kernel(t, isa == QDOT_VNNI);
#else
    (void)t;
    return NULL;
#endif
}

bool qdot_streams(enum dtype t) { return t == DT_Q8_0 && best_isa() != QDOT_PORTABLE; }

const char *qdot_isa(void)
{
    static const char *const names[] = {"portable", "avx2", "avx512-vnni"};
    return names[best_isa()];
}
