/* conv.c — CPU causal depthwise 1-D convolution over time (core/ops.h), the GDN layer's short
   conv (spec §2.5 step 2; no activation here, the caller applies SiLU). The last K−1 inputs are
   kept in a state tensor so that a prompt fed in pieces, or token by token while decoding, gives
   the same outputs as one call (spec §2.5, conv-state notes after step 10). */
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/cpu/cpu_internal.h"
#include "core/cpu/matmul_x86.h"
#include "core/util.h"
#include "seer.h"


struct conv_ctx {
    tensor *out;        /* {C,T} contiguous */
    const tensor *x;    /* {C,T}, rows may be strided */
    const float *w;     /* {K,C}: w[c*K + k]; tap k = K−1 multiplies the current token */
    float *state;       /* {C,K−1}: state[r*C + c], row 0 the oldest input */
    int64_t K;
    bool wide;          /* conv_channels_avx2 applies */
};

/* Row j of h = [state rows; x rows]. Spec §2.5 step 2 reads inputs before the sequence as zeros;
   a fresh (zeroed) state gives exactly that, a carried one continues the previous call. */
static inline const float *h_row(const struct conv_ctx *c, int64_t j)
{
    if (j < c->K - 1)
        return c->state + j * c->x->ne[0];
    return (const float *)((const char *)c->x->data + (j - (c->K - 1)) * c->x->nb[1]);
}

/* out[t][ch] for channels [lo,hi): cross-correlation, no kernel flip (spec §2.5 step 2),
   out[t] = Σ_k w[k]·h[t+k], summed in k order. */
static void conv_channels(const struct conv_ctx *c, int64_t t, int64_t lo, int64_t hi)
{
    const int64_t K = c->K;
    float *y = (float *)c->out->data + t * c->x->ne[0];
    for (int64_t ch = lo; ch < hi; ch++) {
        float acc = c->w[ch * K] * h_row(c, t)[ch];
        for (int64_t k = 1; k < K; k++)
            acc += c->w[ch * K + k] * h_row(c, t + k)[ch];
        y[ch] = acc;
    }
}

#ifdef SEER_MM_X86
/* The 8 channels' K ≤ CONV_WIDE_MAX_K taps from ch on, tap k's 8 weights in wv[k]. The weights are
   {K,C} (a channel's taps together): for Qwen3.5's K = 4 that is 32 consecutive floats, turned in
   registers (four loads and eight shuffles); other K gather them. Four gathers per group per token
   had been 1.5 % of a 1-thread 0.8B Q8_0 decode step against the products (perf: 0.81 % of samples
   against q8r_unit's 53.8 %); turned, 0.76 % (0.56 against 73.4). */
#define CONV_WIDE_MAX_K 8
__attribute__((target("avx2,fma"))) static void conv_taps8(const float *w, int64_t K, int64_t ch, __m256 *wv)
{
    const float *wc = w + ch * K;
    if (K == 4) {
        const __m256 r0 = _mm256_loadu_ps(wc), r1 = _mm256_loadu_ps(wc + 8);       /* channels 0–1, 2–3 */
        const __m256 r2 = _mm256_loadu_ps(wc + 16), r3 = _mm256_loadu_ps(wc + 24); /* 4–5, 6–7 */
        const __m256 u0 = _mm256_permute2f128_ps(r0, r2, 0x20), u1 = _mm256_permute2f128_ps(r0, r2, 0x31);
        const __m256 u2 = _mm256_permute2f128_ps(r1, r3, 0x20), u3 = _mm256_permute2f128_ps(r1, r3, 0x31);
        const __m256 t0 = _mm256_unpacklo_ps(u0, u1), t1 = _mm256_unpackhi_ps(u0, u1);
        const __m256 t2 = _mm256_unpacklo_ps(u2, u3), t3 = _mm256_unpackhi_ps(u2, u3);
        wv[0] = _mm256_shuffle_ps(t0, t2, 0x44), wv[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
        wv[2] = _mm256_shuffle_ps(t1, t3, 0x44), wv[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
        return;
    }
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)K));
    for (int64_t k = 0; k < K; k++)
        wv[k] = _mm256_i32gather_ps(wc + k, idx, 4);
}

/* conv_channels' sums for every token and the channels [lo,hi) (lo a multiple of 8), eight channels
   per vector, each group's weights fetched once for all tokens. Separate multiply and add, not
   FMA: every channel gets conv_channels' bits, whichever path reaches it. Returns where the
   channels it left (fewer than 8) begin. */
__attribute__((target("avx2,fma"))) static int64_t conv_channels_avx2(const struct conv_ctx *c, int64_t lo, int64_t hi)
{
    const int64_t K = c->K, T = c->x->ne[1], C = c->x->ne[0];
    int64_t ch = lo;
    for (; ch + 8 <= hi; ch += 8) {
        __m256 wv[CONV_WIDE_MAX_K];
        conv_taps8(c->w, K, ch, wv);
        for (int64_t t = 0; t < T; t++) {
            __m256 acc = _mm256_mul_ps(wv[0], _mm256_loadu_ps(h_row(c, t) + ch));
            for (int64_t k = 1; k < K; k++)
                acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[k], _mm256_loadu_ps(h_row(c, t + k) + ch)));
            _mm256_storeu_ps((float *)c->out->data + t * C + ch, acc);
        }
    }
    return ch;
}
#endif

/* Each thread owns a range of channels (whole groups of 8) for all tokens: a channel's outputs
   and its state depend on that channel alone, so threads never touch each other's data, and
   each can update its channels' state as soon as its outputs are done. */
static void conv_worker(void *p, int ith, int nth)
{
    const struct conv_ctx *c = p;
    const int64_t C = c->x->ne[0], T = c->x->ne[1], K = c->K;
    long long lo, hi;
    threadpool_range((C + 7) / 8, ith, nth, &lo, &hi);
    lo = MIN(lo * 8, C); /* an empty range past the last group stays empty */
    hi = MIN(hi * 8, C);
    int64_t done = lo;
#ifdef SEER_MM_X86
    if (c->wide)
        done = conv_channels_avx2(c, lo, hi);
#endif
    for (int64_t t = 0; t < T; t++)
        conv_channels(c, t, done, hi);
    /* state ← rows T … T+K−2 of h. Row r is taken from row T+r > r, so filling r upwards only
       reads old-state rows not yet overwritten. */
    for (int64_t r = 0; r < K - 1; r++) {
        const float *src = h_row(c, T + r);
        memcpy(c->state + r * C + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
    }
}

int cpu_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state)
{
    struct conv_ctx c = {out, x, (const float *)w->data, (float *)state->data, w->ne[0], false};
#ifdef SEER_MM_X86
    c.wide = mm_x86_available() && c.K <= CONV_WIDE_MAX_K;
#endif
    /* ×4: one token's conv is bound by fetching its weights and carried window (gone from the
       caches since the previous step), which two threads do faster, not by its multiply-adds */
    const double work = 4.0 * (double)x->ne[0] * (double)x->ne[1] * (double)c.K;
    cpu_run(be, conv_worker, &c, cpu_parallel(be, work, CPU_PAR_MIN_WORK));
    return SEER_OK;
}
