/* gdn.c — CPU Gated DeltaNet (core/ops.h op_gdn_recurrent / op_gdn_chunked): the delta-rule
   recurrence of spec §2.5 steps 5–7 token by token (decode), and the chunked WY form of spec
   §2.5 step 8 (prefill), which turns the per-token state traffic into small matrix products.
   Divisions: small vector helpers · shared plumbing · recurrent form · chunked form · entry
   points. Both forms give each thread of the pool whole value heads; heads never interact. */
#include <math.h>
#include <stdbool.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/gemm_f32.h"
#include "core/cpu/matmul_x86.h"
#include "core/error.h"
#include "core/util.h"
#include "seer.h"

/* Chunk length of the chunked form (spec §2.5 step 8: C = 64). */
#define GDN_CHUNK 64
/* Decay factors exp(x) with x below −60 (≈ 9e-27) are flushed to 0. The term such a factor
   scales is ~1e-19 below the f32 rounding (2^-24) of the terms that survive, and keeping it
   lets products drift into the subnormal range, where x86 arithmetic is ~100× slower. g ≤ 0
   (spec §2.5 step 4), so every exponent used here is ≤ 0 and nothing can overflow. */
#define DECAY_FLUSH (-60.0)

static inline double decay(double x) { return x < DECAY_FLUSH ? 0.0 : exp(x); }

/* ---- small vector helpers -------------------------------------------------------------------
   Per-row work uses the 4-lane type of gemm_f32.h (plain loops are not vectorised at -O2);
   the matrix products go through cpu_gemm_f32. */

/* y[0..n) −= x[0..n) */
static void vsub(float *y, const float *x, int64_t n)
{
    int64_t e = 0;
    for (; e + 4 <= n; e += 4)
        st4(y + e, ld4(y + e) - ld4(x + e));
    for (; e < n; e++)
        y[e] -= x[e];
}

/* C{M×N} = cb·C + A{M×K}·B{K×N}, row-major operands of the chunk's work area */
static void gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                 float cb, float *C, int64_t ldc, enum cpu_tri tri)
{
    struct cpu_gemm g = {.M = M, .N = N, .K = K, .alpha = 1.0f, .cb = cb, .A = A, .a_rs = lda, .a_cs = 1,
                         .B = B, .ldb = ldb, .C = C, .ldc = ldc, .tri = tri};
    cpu_gemm_f32(&g);
}

/* ---- shared plumbing ------------------------------------------------------------------------- */

struct gdn_ctx {
    const tensor *q, *k, *v, *g, *beta; /* q,k{dk,Hk,T} v{dv,Hv,T} g,beta{Hv,T}; rows may be strided */
    tensor *out;                        /* {dv,Hv,T} contiguous */
    float *state;                       /* {dv,dk,Hv}: S[j][i][c] at j*dk*dv + i*dv + c */
    float scale;                        /* 1/sqrt(dk) (spec §2.5 step 6) */
    enum gdn_head_order order;          /* value-head → key-head mapping */
    int64_t dk, dv, Hk, Hv, T;
    float *scratch;                     /* per-thread work areas, scratch_floats each */
    /* the recurrent form's passes: plain C; AVX2 + FMA; or those with the read pass in AVX-512 */
    enum { GDN_PLAIN, GDN_AVX2, GDN_AVX512 } isa;
    size_t scratch_floats;
    threadpool_queue heads;             /* heads are the unit of work (threads.h) */
};

static inline const float *row2(const tensor *t, int64_t head, int64_t tok)
{
    return (const float *)((const char *)t->data + head * t->nb[1] + tok * t->nb[2]);
}

static inline float scal(const tensor *t, int64_t head, int64_t tok)
{
    return *(const float *)((const char *)t->data + head * sizeof(float) + tok * t->nb[1]);
}

/* The key head value head j reads (core/backend.h enum gdn_head_order): grouped — consecutive value
   heads share a key head (spec §2.5 step 5, HF repeat-interleave) — or llama.cpp's tiled order. */
static inline int64_t key_head(const struct gdn_ctx *c, int64_t j)
{
    return c->order == GDN_V_TILED ? j % c->Hk : j / (c->Hv / c->Hk);
}

/* ---- recurrent form (spec §2.5 step 7) -------------------------------------------------------
   Per token, with α = e^g:  S ← αS;  kv = Sᵀk;  δ = β(v − kv);  S ← S + k⊗δ;  o = Sᵀq.
   Rewritten so the state is read once and rewritten once per token instead of rewritten twice:
   with the old S, kv = α(Sᵀk) and o = (αS + kδᵀ)ᵀq = α(Sᵀq) + (k·q)δ, so one read pass gives
   Sᵀk and Sᵀq together and one update pass does S ← αS + kδᵀ. Same maths, f32 rounding only. */

/* ks[c] = Σ_i S[i][c]·k[i], qs[c] = Σ_i S[i][c]·q[i], 16 columns at a time (8 accumulators). */
static void state_tmatvec2(const float *S, int64_t dk, int64_t dv, const float *k, const float *q, float *ks,
                           float *qs)
{
    int64_t c = 0;
    for (; c + 16 <= dv; c += 16) {
        v4f k0 = {0}, k1 = {0}, k2 = {0}, k3 = {0}, q0 = {0}, q1 = {0}, q2 = {0}, q3 = {0};
        const float *s = S + c;
        for (int64_t i = 0; i < dk; i++, s += dv) {
            v4f x0 = ld4(s), x1 = ld4(s + 4), x2 = ld4(s + 8), x3 = ld4(s + 12);
            k0 += k[i] * x0, k1 += k[i] * x1, k2 += k[i] * x2, k3 += k[i] * x3;
            q0 += q[i] * x0, q1 += q[i] * x1, q2 += q[i] * x2, q3 += q[i] * x3;
        }
        st4(ks + c, k0), st4(ks + c + 4, k1), st4(ks + c + 8, k2), st4(ks + c + 12, k3);
        st4(qs + c, q0), st4(qs + c + 4, q1), st4(qs + c + 8, q2), st4(qs + c + 12, q3);
    }
    for (; c < dv; c++) {
        float a = 0, b = 0;
        for (int64_t i = 0; i < dk; i++)
            a += S[i * dv + c] * k[i], b += S[i * dv + c] * q[i];
        ks[c] = a, qs[c] = b;
    }
}

/* S ← αS + k δᵀ, one row (key dim i) at a time */
static void state_update(float *S, int64_t dk, int64_t dv, float alpha, const float *k, const float *d)
{
    for (int64_t i = 0; i < dk; i++) {
        float *s = S + i * dv, ki = k[i];
        int64_t e = 0;
        for (; e + 4 <= dv; e += 4)
            st4(s + e, alpha * ld4(s + e) + ki * ld4(d + e));
        for (; e < dv; e++)
            s[e] = alpha * s[e] + ki * d[e];
    }
}

#ifdef SEER_MM_X86
/* The two state passes with AVX2 + FMA (8 lanes, fused multiply-adds) where the CPU has them
   (mm_x86_available) and dv is a multiple of 32 (128 in every Qwen3.5): decode reads and rewrites
   the whole state per token and sequence (0.8B: 18 MB), and the SSE passes above were bound by
   their arithmetic, not by that traffic. The same sums in the same order per column, with fused
   roundings. */
#define GDN_X86 __attribute__((target("avx2,fma")))
GDN_X86 static void state_tmatvec2_avx2(const float *S, int64_t dk, int64_t dv, const float *k, const float *q,
                                        float *ks, float *qs)
{
    for (int64_t c = 0; c < dv; c += 32) {
        __m256 k0 = _mm256_setzero_ps(), k1 = k0, k2 = k0, k3 = k0, q0 = k0, q1 = k0, q2 = k0, q3 = k0;
        const float *s = S + c;
        for (int64_t i = 0; i < dk; i++, s += dv) {
            const __m256 ki = _mm256_broadcast_ss(k + i), qi = _mm256_broadcast_ss(q + i);
            const __m256 x0 = _mm256_loadu_ps(s), x1 = _mm256_loadu_ps(s + 8), x2 = _mm256_loadu_ps(s + 16),
                         x3 = _mm256_loadu_ps(s + 24);
            k0 = _mm256_fmadd_ps(ki, x0, k0), k1 = _mm256_fmadd_ps(ki, x1, k1);
            k2 = _mm256_fmadd_ps(ki, x2, k2), k3 = _mm256_fmadd_ps(ki, x3, k3);
            q0 = _mm256_fmadd_ps(qi, x0, q0), q1 = _mm256_fmadd_ps(qi, x1, q1);
            q2 = _mm256_fmadd_ps(qi, x2, q2), q3 = _mm256_fmadd_ps(qi, x3, q3);
        }
        _mm256_storeu_ps(ks + c, k0), _mm256_storeu_ps(ks + c + 8, k1);
        _mm256_storeu_ps(ks + c + 16, k2), _mm256_storeu_ps(ks + c + 24, k3);
        _mm256_storeu_ps(qs + c, q0), _mm256_storeu_ps(qs + c + 8, q1);
        _mm256_storeu_ps(qs + c + 16, q2), _mm256_storeu_ps(qs + c + 24, q3);
    }
}

/* The read pass in 512-bit vectors where the CPU has AVX-512 and dv is a multiple of 128: 128
   columns at a time (16 accumulators), so each row of the state is read whole and a head's state
   is one sequential stream. A decode token finds the state cold (a step's weights pass through
   the caches between tokens), and the pass above visits each row four times, 128 bytes each: perf
   of 0.8B Q8_0 decode, 1 thread, gave it 5.3 % of the products' time, where reading the 18 MB at
   the read loop's rate takes 1.4 % of a step; this pass, 1.9 % (docs/PERFORMANCE.md). The same
   sums in the same order per column as the AVX2 pass: the same bits. */
#define GDN_512 __attribute__((target("avx512f,avx2,fma")))
GDN_512 static void state_tmatvec2_avx512(const float *S, int64_t dk, int64_t dv, const float *k, const float *q,
                                          float *ks, float *qs)
{
    for (int64_t c = 0; c < dv; c += 128) {
        __m512 ka[8], qa[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            ka[r] = qa[r] = _mm512_setzero_ps();
        const float *s = S + c;
        for (int64_t i = 0; i < dk; i++, s += dv) {
            const __m512 ki = _mm512_set1_ps(k[i]), qi = _mm512_set1_ps(q[i]);
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++) {
                const __m512 x = _mm512_loadu_ps(s + 16 * r);
                ka[r] = _mm512_fmadd_ps(ki, x, ka[r]), qa[r] = _mm512_fmadd_ps(qi, x, qa[r]);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            _mm512_storeu_ps(ks + c + 16 * r, ka[r]), _mm512_storeu_ps(qs + c + 16 * r, qa[r]);
    }
}

GDN_X86 static void state_update_avx2(float *S, int64_t dk, int64_t dv, float alpha, const float *k, const float *d)
{
    const __m256 a = _mm256_set1_ps(alpha);
    for (int64_t i = 0; i < dk; i++) {
        float *s = S + i * dv;
        const __m256 ki = _mm256_broadcast_ss(k + i);
        for (int64_t e = 0; e < dv; e += 8)
            _mm256_storeu_ps(s + e, _mm256_fmadd_ps(ki, _mm256_loadu_ps(d + e), _mm256_mul_ps(a, _mm256_loadu_ps(s + e))));
    }
}
#endif

static void recurrent_worker(void *p, int ith, int nth)
{
    struct gdn_ctx *c = p;
    int64_t dk = c->dk, dv = c->dv;
    float *kb = c->scratch + (size_t)ith * c->scratch_floats; /* k {dk} */
    float *qb = kb + dk;                                       /* q·scale {dk} */
    float *vb = qb + dk;                                       /* v {dv} */
    float *ks = vb + dv, *qs = ks + dv, *d = qs + dv;          /* Sᵀk, Sᵀq, δ {dv} */
    long long lo, hi;
    (void)nth;
    while (threadpool_queue_take(&c->heads, &lo, &hi)) {
        for (int64_t j = lo; j < hi; j++) {
            float *S = c->state + j * dk * dv;
            int64_t hk = key_head(c, j);
            for (int64_t t = 0; t < c->T; t++) {
                /* copy the inputs first: out may alias v (or q), ops.h */
                memcpy(kb, row2(c->k, hk, t), (size_t)dk * sizeof *kb);
                cpu_vscale(qb, row2(c->q, hk, t), c->scale, dk);
                memcpy(vb, row2(c->v, j, t), (size_t)dv * sizeof *vb);
                float alpha = (float)decay(scal(c->g, j, t)), beta = scal(c->beta, j, t);
                double kq = 0;
                for (int64_t i = 0; i < dk; i++)
                    kq += (double)kb[i] * qb[i];
#ifdef SEER_MM_X86
                if (c->isa == GDN_AVX512)
                    state_tmatvec2_avx512(S, dk, dv, kb, qb, ks, qs);
                else if (c->isa == GDN_AVX2)
                    state_tmatvec2_avx2(S, dk, dv, kb, qb, ks, qs);
                else
#endif
                    state_tmatvec2(S, dk, dv, kb, qb, ks, qs);
                float *o = (float *)c->out->data + (t * c->Hv + j) * dv;
                for (int64_t e = 0; e < dv; e++) {
                    d[e] = beta * (vb[e] - alpha * ks[e]);
                    o[e] = alpha * qs[e] + (float)kq * d[e];
                }
#ifdef SEER_MM_X86
                if (c->isa != GDN_PLAIN)
                    state_update_avx2(S, dk, dv, alpha, kb, d);
                else
#endif
                    state_update(S, dk, dv, alpha, kb, d);
            }
        }
    }
}

/* ---- chunked form (spec §2.5 step 8) ---------------------------------------------------------
   For a chunk of L ≤ 64 tokens with incoming state S (all exponents ≤ 0 since g ≤ 0):
     Γ_i = Σ_{m≤i} g_m                       (cumulative log-decay, in double)
     D_im = e^{Γ_i − Γ_m} for m ≤ i
     A_im = β_i (k_i·k_m) D_im for m < i;   Tinv = (I + A)⁻¹ by forward substitution (double)
     U = Tinv·(β⊙V),  W = Tinv·(β e^Γ ⊙ K),  V' = U − W·S
     O = (e^Γ ⊙ Q)·S + ((Q·Kᵀ) ⊙ D)·V'
     S ← e^{Γ_L} S + (e^{Γ_L − Γ} ⊙ K)ᵀ·V'
   A last chunk shorter than 64 is simply a smaller L: the spec's zero padding (g = β = 0,
   k = 0) leaves Γ, U, W and the state update unchanged on the real rows, so no padding is
   materialised. W and e^Γ⊙Q are stacked so one product with S serves both, and the work per
   chunk is five small GEMMs instead of 64 rewrites of the dk×dv state. */

/* A thread's work area for one chunk: float arrays first, then doubles (the float count is
   even, so the doubles stay 8-byte aligned in a 64-byte-aligned area). */
struct chunk_bufs {
    float *xq;    /* {2L×dk}: rows 0..L−1 K, then W; rows L..2L−1 Q·scale, then e^Γ⊙Q */
    float *kt;    /* {dk×L}: Kᵀ, then (e^{Γ_L−Γ}⊙K)ᵀ */
    float *rk;    /* {L×dk}: β e^Γ ⊙ K */
    float *rv;    /* {L×dv}: β ⊙ V */
    float *u;     /* {L×dv}: U, then V' */
    float *xs;    /* {2L×dv}: W·S rows, then e^Γ Q·S rows (→ O) */
    float *kk;    /* {L×L}: K·Kᵀ (lower triangle) */
    float *qk;    /* {L×L}: Q·Kᵀ, then P = (Q·Kᵀ)⊙D with zeros above the diagonal */
    float *tf;    /* {L×L}: Tinv in f32 */
    float *beta;  /* {L} */
    double *td;   /* {L×L}: Tinv */
    double *dd;   /* {L×L}: D (lower triangle) */
    double *gam;  /* {L}: Γ */
};

/* Lays the buffers out from `base` (NULL: only count); returns the size in floats or 0 on
   overflow. */
static size_t chunk_layout(float *base, int64_t dk, int64_t dv, struct chunk_bufs *b)
{
    const size_t C = GDN_CHUNK;
    size_t nf[] = {2 * C * (size_t)dk, C * (size_t)dk, C * (size_t)dk, C * (size_t)dv, C * (size_t)dv,
                   2 * C * (size_t)dv, C * C, C * C, C * C, C};
    float **fp[] = {&b->xq, &b->kt, &b->rk, &b->rv, &b->u, &b->xs, &b->kk, &b->qk, &b->tf, &b->beta};
    size_t n = 0;
    if ((size_t)dk > SIZE_MAX / (8 * C) || (size_t)dv > SIZE_MAX / (8 * C))
        return 0;
    for (size_t i = 0; i < ARRAY_LEN(nf); i++) {
        *fp[i] = base ? base + n : NULL;
        if (!size_add(n, nf[i], &n))
            return 0;
    }
    n += n & 1;
    double *d = base ? (double *)(void *)(base + n) : NULL;
    b->td = d, b->dd = d ? d + C * C : NULL, b->gam = d ? d + 2 * C * C : NULL;
    return size_add(n, 2 * (2 * C * C + C), &n) ? n : 0;
}

/* ti[0..n) −= a·tm[0..n) in double, two lanes at a time (the forward substitution's inner loop). */
typedef double v2d __attribute__((vector_size(16)));

static void axpy_d(double *ti, double a, const double *tm, int64_t n)
{
    int64_t e = 0;
    for (; e + 2 <= n; e += 2) {
        v2d x, y;
        memcpy(&x, ti + e, sizeof x);
        memcpy(&y, tm + e, sizeof y);
        x -= a * y;
        memcpy(ti + e, &x, sizeof x);
    }
    for (; e < n; e++)
        ti[e] -= a * tm[e];
}

/* One chunk of L tokens starting at t0 for value head j; S {dk×dv} updated in place. */
static void gdn_chunk(const struct gdn_ctx *c, const struct chunk_bufs *b, int64_t j, int64_t t0, int64_t L,
                      float *S)
{
    int64_t dk = c->dk, dv = c->dv, hk = key_head(c, j);
    float *kr = b->xq, *qr = b->xq + L * dk;
    double G = 0;
    /* gather; every input is read before any output row of this chunk is written (out may
       alias v or q, ops.h) */
    for (int64_t i = 0; i < L; i++) {
        int64_t t = t0 + i;
        memcpy(kr + i * dk, row2(c->k, hk, t), (size_t)dk * sizeof(float));
        cpu_vscale(qr + i * dk, row2(c->q, hk, t), c->scale, dk);
        memcpy(b->rv + i * dv, row2(c->v, j, t), (size_t)dv * sizeof(float));
        G += scal(c->g, j, t);
        b->gam[i] = G;
        b->beta[i] = scal(c->beta, j, t);
    }
    for (int64_t i = 0; i < L; i++)
        for (int64_t e = 0; e < dk; e++)
            b->kt[e * L + i] = kr[i * dk + e];

    /* D_im = e^{Γ_i − Γ_m}, m ≤ i, as a running product down each column (D_im = α_i·D_{i−1,m}):
       L exps instead of L²/2; in double, 63 products cost nothing in accuracy. Once a column
       falls below the flush threshold it stays 0 (α ≤ 1). */
    const double flush = exp(DECAY_FLUSH);
    for (int64_t i = 0; i < L; i++) {
        double *di = b->dd + i * L, alpha = decay(b->gam[i] - (i ? b->gam[i - 1] : 0.0));
        for (int64_t m = 0; m < i; m++) {
            double x = b->dd[(i - 1) * L + m] * alpha;
            di[m] = x < flush ? 0.0 : x;
        }
        di[i] = 1.0;
    }

    /* K·Kᵀ and Q·Kᵀ, lower triangles only */
    gemm(L, L, dk, kr, dk, b->kt, L, 0.0f, b->kk, L, CPU_TRI_C_LOWER);
    gemm(L, L, dk, qr, dk, b->kt, L, 0.0f, b->qk, L, CPU_TRI_C_LOWER);

    /* Tinv = (I + A)⁻¹ by forward substitution, A_im = β_i (k_i·k_m) D_im (m < i):
       row i of Tinv = e_i − Σ_{m<i} A_im·(row m of Tinv); row m is zero beyond column m. */
    for (int64_t i = 0; i < L; i++) {
        double *ti = b->td + i * L;
        for (int64_t e = 0; e < L; e++)
            ti[e] = e == i ? 1.0 : 0.0;
        for (int64_t m = 0; m < i; m++) {
            double a = (double)b->beta[i] * b->kk[i * L + m] * b->dd[i * L + m];
            if (a != 0.0)
                axpy_d(ti, a, b->td + m * L, m + 1);
        }
        for (int64_t e = 0; e < L; e++)
            b->tf[i * L + e] = (float)ti[e];
    }

    /* right-hand sides β⊙V and β e^Γ⊙K; U = Tinv·(β⊙V), W = Tinv·(β e^Γ⊙K) (into xq rows 0..L−1) */
    for (int64_t i = 0; i < L; i++) {
        float bi = b->beta[i], bk = (float)(b->beta[i] * decay(b->gam[i]));
        cpu_vscale(b->rv + i * dv, b->rv + i * dv, bi, dv);
        cpu_vscale(b->rk + i * dk, kr + i * dk, bk, dk);
    }
    gemm(L, dv, L, b->tf, L, b->rv, dv, 0.0f, b->u, dv, CPU_TRI_A_LOWER);
    gemm(L, dk, L, b->tf, L, b->rk, dk, 0.0f, kr, dk, CPU_TRI_A_LOWER);

    /* e^Γ⊙Q for the inter-chunk term; P = (Q·Kᵀ)⊙D on and below the diagonal, 0 above */
    for (int64_t i = 0; i < L; i++) {
        float eg = (float)decay(b->gam[i]), *pi = b->qk + i * L;
        cpu_vscale(qr + i * dk, qr + i * dk, eg, dk);
        for (int64_t m = 0; m <= i; m++)
            pi[m] *= (float)b->dd[i * L + m];
        for (int64_t m = i + 1; m < L; m++)
            pi[m] = 0.0f;
    }

    /* [W; e^Γ⊙Q]·S in one product, then V' = U − W·S and O = e^Γ Q·S + P·V' */
    gemm(2 * L, dv, dk, b->xq, dk, S, dv, 0.0f, b->xs, dv, CPU_TRI_NONE);
    vsub(b->u, b->xs, L * dv);
    float *o = b->xs + L * dv;
    gemm(L, dv, L, b->qk, L, b->u, dv, 1.0f, o, dv, CPU_TRI_A_LOWER);
    for (int64_t i = 0; i < L; i++)
        memcpy((float *)c->out->data + ((t0 + i) * c->Hv + j) * dv, o + i * dv, (size_t)dv * sizeof(float));

    /* S ← e^{Γ_L} S + (e^{Γ_L − Γ}⊙K)ᵀ·V' */
    double GL = b->gam[L - 1];
    for (int64_t i = 0; i < L; i++) {
        float f = (float)decay(GL - b->gam[i]);
        for (int64_t e = 0; e < dk; e++)
            b->kt[e * L + i] *= f;
    }
    gemm(dk, dv, L, b->kt, L, b->u, dv, (float)decay(GL), S, dv, CPU_TRI_NONE);
}

static void chunked_worker(void *p, int ith, int nth)
{
    struct gdn_ctx *c = p;
    struct chunk_bufs b;
    chunk_layout(c->scratch + (size_t)ith * c->scratch_floats, c->dk, c->dv, &b);
    long long lo, hi;
    (void)nth;
    while (threadpool_queue_take(&c->heads, &lo, &hi)) {
        for (int64_t j = lo; j < hi; j++) {
            float *S = c->state + j * c->dk * c->dv;
            for (int64_t t0 = 0; t0 < c->T; t0 += GDN_CHUNK)
                gdn_chunk(c, &b, j, t0, MIN(GDN_CHUNK, c->T - t0), S);
        }
    }
}

/* ---- entry points ---------------------------------------------------------------------------- */

static int gdn_run(const char *op, backend *be, threadpool_fn fn, size_t scratch_floats, struct gdn_ctx *c)
{
    threadpool *pool = cpu_pool(be);
    /* heads are the unit of work; threads beyond Hv get empty ranges */
    double work = (double)c->T * (double)c->Hv * (double)c->dk * (double)c->dv;
    bool par = c->Hv > 1 && cpu_parallel(be, work, CPU_PAR_MIN_WORK);
    size_t nth = par ? (size_t)threadpool_size(pool) : 1, total;
    /* round each thread's area up to 64 bytes: keeps the doubles inside it 8-byte aligned and
       neighbouring threads off each other's cache lines */
    if (!size_align(scratch_floats, 16, &scratch_floats) || !size_mul(scratch_floats, nth, &total) ||
        !size_mul(total, sizeof(float), &total))
        return seer_err(SEER_EINVAL, "%s: scratch size overflows (dk %lld, dv %lld)", op, (long long)c->dk,
                        (long long)c->dv);
    c->scratch = seer_aligned_alloc(64, total);
    if (!c->scratch)
        return seer_err(SEER_ENOMEM, "%s: no memory for %zu bytes of scratch", op, total);
    c->scratch_floats = scratch_floats;
    threadpool_queue_init(&c->heads, c->Hv, (int)nth, 1);
    if (par)
        threadpool_run(pool, fn, c);
    else
        fn(c, 0, 1);
    seer_aligned_free(c->scratch);
    c->scratch = NULL;
    return SEER_OK;
}

/* Both entry points: the recurrent form keeps per-thread vectors (k, q·scale {dk}; v, Sᵀk, Sᵀq, δ
   {dv}), the chunked one chunk_layout's buffers; the rest (checks, context, threads) is shared. */
static int gdn_op(bool chunked, backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                  const tensor *g, const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    const char *op = chunked ? "op_gdn_chunked" : "op_gdn_recurrent";
    /* ops.c checked dtypes and the {dk,Hk,T} / {dv,Hv,T} / {Hv,T} shapes; a 4th dimension is
       outside the contract */
    if (q->ne[3] != 1 || v->ne[3] != 1 || g->ne[2] * g->ne[3] != 1 || beta->ne[2] * beta->ne[3] != 1)
        return seer_err(SEER_EINVAL, "%s: inputs must be at most 3-D (q{dk,Hk,T}, v{dv,Hv,T}, g{Hv,T})", op);
    struct gdn_ctx c = {.q = q, .k = k, .v = v, .g = g, .beta = beta, .out = out,
                        .state = (float *)state->data, .scale = scale, .order = order, .dk = q->ne[0], .dv = v->ne[0],
                        .Hk = q->ne[1], .Hv = v->ne[1], .T = q->ne[2]};
    struct chunk_bufs b;
    size_t n = 0, n4;
    if (chunked)
        n = chunk_layout(NULL, c.dk, c.dv, &b); /* 0 when the sizes overflow */
    else if (!size_mul(2, (size_t)c.dk, &n) || !size_mul(4, (size_t)c.dv, &n4) || !size_add(n, n4, &n))
        n = 0;
    if (n == 0)
        return seer_err(SEER_EINVAL, "%s: dk %lld / dv %lld too large", op, (long long)c.dk, (long long)c.dv);
#ifdef SEER_MM_X86
    if (!chunked && c.dv % 32 == 0 && mm_x86_available())
        c.isa = c.dv % 128 == 0 && mm_avx512_available() ? GDN_AVX512 : GDN_AVX2;
#endif
    return gdn_run(op, be, chunked ? chunked_worker : recurrent_worker, n, &c);
}

int cpu_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g,
                      const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    return gdn_op(false, be, out, q, k, v, g, beta, state, scale, order);
}

int cpu_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g,
                    const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    return gdn_op(true, be, out, q, k, v, g, beta, state, scale, order);
}
