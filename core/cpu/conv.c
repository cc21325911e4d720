/* conv.c — CPU causal depthwise 1-D convolution over time (core/ops.h), the GDN layer's short
   conv (spec §2.5 step 2; no activation here, the caller applies SiLU). The last K−1 inputs are
   kept in a state tensor so that a prompt fed in pieces, or token by token while decoding, gives
   the same outputs as one call (spec §2.5, conv-state notes after step 10). */
#include <stdint.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/util.h"
#include "seer.h"


struct conv_ctx {
    tensor *out;        /* {C,T} contiguous */
    const tensor *x;    /* {C,T}, rows may be strided */
    const float *w;     /* {K,C}: w[c*K + k]; tap k = K−1 multiplies the current token */
    float *state;       /* {C,K−1}: state[r*C + c], row 0 the oldest input */
    int64_t K;
};

/* Row j of h = [state rows; x rows]. Spec §2.5 step 2 reads inputs before the sequence as zeros;
   a fresh (zeroed) state gives exactly that, a carried one continues the previous call. */
static inline const float *h_row(const struct conv_ctx *c, int64_t j)
{
    if (j < c->K - 1)
        return c->state + j * c->x->ne[0];
    return (const float *)((const char *)c->x->data + (j - (c->K - 1)) * c->x->nb[1]);
}

/* Each thread owns a range of channels for all tokens: a channel's outputs and its state depend
   on that channel alone, so threads never touch each other's data, and each can update its
   channels' state as soon as its outputs are done. */
static void conv_worker(void *p, int ith, int nth)
{
    const struct conv_ctx *c = p;
    int64_t C = c->x->ne[0], T = c->x->ne[1], K = c->K;
    long long lo, hi;
    threadpool_range(C, ith, nth, &lo, &hi);
    for (int64_t t = 0; t < T; t++) {
        float *y = (float *)c->out->data + t * C;
        /* cross-correlation, no kernel flip (spec §2.5 step 2): out[t] = Σ_k w[k]·h[t+k] */
        const float *h0 = h_row(c, t);
        for (int64_t ch = lo; ch < hi; ch++)
            y[ch] = c->w[ch * K] * h0[ch];
        for (int64_t k = 1; k < K; k++) {
            const float *hk = h_row(c, t + k);
            for (int64_t ch = lo; ch < hi; ch++)
                y[ch] += c->w[ch * K + k] * hk[ch];
        }
    }
    /* state ← rows T … T+K−2 of h. Row r is taken from row T+r > r, so filling r upwards only
       reads old-state rows not yet overwritten. */
    for (int64_t r = 0; r < K - 1; r++) {
        const float *src = h_row(c, T + r);
        memcpy(c->state + r * C + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
    }
}

int cpu_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state)
{
    struct conv_ctx c = {out, x, (const float *)w->data, (float *)state->data, w->ne[0]};
    const double work = (double)x->ne[0] * (double)x->ne[1] * (double)c.K;
    cpu_run(be, conv_worker, &c, cpu_parallel(be, work, CPU_PAR_MIN_WORK));
    return SEER_OK;
}
