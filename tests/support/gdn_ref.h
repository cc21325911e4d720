/* gdn_ref.h — one Gated DeltaNet recurrence step in double, the reference the CPU and Vulkan GDN
   tests compare with: spec §2.5 step 7 verbatim for one value head and one token,
   S ← αS; kv = Sᵀk; δ = β(v − kv); S += k⊗δ; o = Sᵀ(q·scale), with S {dk×dv} row-major and kv a
   caller's scratch of dv doubles. */
#ifndef SEER_TESTS_GDN_REF_H
#define SEER_TESTS_GDN_REF_H

#include <stdint.h>

static inline void gdn_ref_step(double *S, const float *q, const float *k, const float *v, double alpha, double beta,
                                double scale, int64_t dk, int64_t dv, double *kv, double *o)
{
    for (int64_t i = 0; i < dk * dv; i++)
        S[i] *= alpha;
    for (int64_t e = 0; e < dv; e++) {
        kv[e] = 0;
        for (int64_t i = 0; i < dk; i++)
            kv[e] += S[i * dv + e] * k[i];
    }
    for (int64_t i = 0; i < dk; i++)
        for (int64_t e = 0; e < dv; e++)
            S[i * dv + e] += k[i] * beta * (v[e] - kv[e]);
    for (int64_t e = 0; e < dv; e++) {
        double acc = 0;
        for (int64_t i = 0; i < dk; i++)
            acc += S[i * dv + e] * (q[i] * scale);
        o[e] = acc;
    }
}

#endif
