/* tests/vulkan/ops_model.c — the Vulkan sequence ops (vulkan/op_conv.c, op_gdn.c, op_attention.c)
   on random realistic data at awkward sizes, each compared with the CPU backend and with a naive
   double-precision reference written here from core/ops.h and spec §2.5 / §2.6 / §4.5:
     conv1d_causal   carried state (T = 1, 2 < K−1 and long T), strided x, a call split in two
     gdn_recurrent,  T ∈ {1, 7, 64, 65, 300}; Hv = Hk and Hv = 2Hk in both head orders;
     gdn_chunked     dk = dv = 128 and a small awkward size (24, 40); L2-normalised q/k, strong
                     decays, non-zero states; q/k/v as views of one conv output; out over v; a
                     prefill continued by decode steps
     attention       causal with q_pos0 (prefill, continuation, decode with split-K over up to
                     2000 keys), segments (contiguous and interleaved ids), GQA 1 and 4, hd 64,
                     72, 128, 256, f32 and f16 K/V as views of a cache (token- and head-major),
                     q strided, out over q, large scores
   and again on backends whose storage window is small enough that tensors are split by tokens.
   Tolerance: relative L2 ≤ 1e-4 everywhere (f32 arithmetic; f16 K/V are compared on the values
   they hold after rounding). The GDN chunked form reorders the same maths (WY form, spec §2.5
   step 8) and stays near 1e-6 of the recurrence; attention and conv differ in summation order
   only. Validation layer on: zero errors required. Without a Vulkan device the program skips
   unless SEER_REQUIRE_VULKAN=1 (CI). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "support/gdn_ref.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

#define TOL 1e-4 /* relative L2, see the header comment */

static backend *cpu_be;

static float *randn(size_t n, float scale)
{
    float *v = malloc(n * sizeof *v);
    test_fill_normal(v, n, scale);
    return v;
}

/* got[0] from Vulkan, got[1] from the CPU (rc[1] its status), against ref. */
static void check(const char *what, float *const got[2], const int rc[2], const double *ref, size_t n)
{
    if (!ok(rc[0] == SEER_OK && got[0], "%s: vulkan runs it", what))
        return;
    double e = rel_l2_d(got[0], ref, n);
    ok(e <= TOL, "%s: vulkan vs double reference, rel L2 %.2e <= 1e-4", what, e);
    if (rc[1] == SEER_OK && got[1]) {
        e = rel_l2(got[0], got[1], n);
        ok(e <= TOL, "%s: vulkan vs cpu, rel L2 %.2e <= 1e-4", what, e);
    } else {
        ok(0, "%s: the cpu op failed: %s", what, seer_last_error());
    }
}

static tensor *i32_tensor(backend *be, int64_t n, const int32_t *ids)
{
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)ids[i];
    tensor *t = test_tensor(be, DT_I32, n, 1, 1, 1, f); /* set_f32 casts values for I32 */
    free(f);
    return t;
}

/* ---- conv1d_causal ------------------------------------------------------------------------- */

struct conv_case { int64_t C, T, K, split; bool view; };

/* Runs the case on `be`: state in/out {C,K−1}, out {C,T}; with split, tokens [0, split) and
   [split, T) in two calls carrying the state. */
static int conv_run(backend *be, const struct conv_case *c, const float *x, const float *w, float *state, float **out)
{
    const int64_t pad = c->view ? 5 : 0, C = c->C, T = c->T;
    tensor *xp = vk_test_tensor(be, DT_F32, C + pad, T, 1, 1, x);
    tensor *wt = vk_test_tensor(be, DT_F32, c->K, C, 1, 1, w);
    tensor *st = vk_test_tensor(be, DT_F32, C, c->K - 1, 1, 1, state);
    tensor *ot = vk_test_tensor(be, DT_F32, C, T, 1, 1, NULL);
    int rc = SEER_ENOMEM;
    if (xp && wt && st && ot) {
        int64_t cuts[3] = {0, c->split ? c->split : T, T};
        rc = SEER_OK;
        for (int p = 0; p < 2 && rc == SEER_OK && cuts[p] < cuts[p + 1]; p++) {
            int64_t n = cuts[p + 1] - cuts[p];
            tensor xv = tensor_view(xp, 2, (int64_t[]){C, n}, (size_t[]){4, xp->nb[1]}, (size_t)cuts[p] * xp->nb[1]);
            tensor ov = tensor_view(ot, 2, (int64_t[]){C, n}, (size_t[]){4, ot->nb[1]}, (size_t)cuts[p] * ot->nb[1]);
            rc = op_conv1d_causal(be, &ov, &xv, wt, st);
        }
        if (rc == SEER_OK) {
            *out = vk_test_read_f32(ot);
            rc = backend_tensor_get(st, state, 0, (size_t)(C * (c->K - 1)) * sizeof(float));
        } else {
            diag("conv on %s: %s", backend_name(be), seer_last_error());
        }
    }
    vk_test_tensor_free(xp);
    vk_test_tensor_free(wt);
    vk_test_tensor_free(st);
    vk_test_tensor_free(ot);
    return rc;
}

static void conv_case(backend *vk, struct conv_case c, const char *tag)
{
    char what[160];
    snprintf(what, sizeof what, "%sconv C=%lld T=%lld K=%lld%s%s", tag, (long long)c.C, (long long)c.T, (long long)c.K,
             c.view ? " (strided x)" : "", c.split ? " (two calls)" : "");
    const int64_t C = c.C, T = c.T, K = c.K, pad = c.view ? 5 : 0;
    float *x = randn((size_t)((C + pad) * T), 1.0f), *w = randn((size_t)(K * C), 0.5f);
    float *s0 = randn((size_t)(C * (K - 1)), 1.0f);
    /* spec §2.5 step 2 with h = [state rows; x rows]; the new state is h's last K−1 rows */
    double *ref = malloc((size_t)(C * T + C * (K - 1)) * sizeof *ref);
    for (int64_t ch = 0; ch < C; ch++) {
        for (int64_t t = 0; t < T; t++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t j = t + k;
                double h = j < K - 1 ? s0[j * C + ch] : x[(j - (K - 1)) * (C + pad) + ch];
                s += (double)w[ch * K + k] * h;
            }
            ref[t * C + ch] = s;
        }
        for (int64_t r = 0; r < K - 1; r++) {
            int64_t j = T + r;
            ref[C * T + r * C + ch] = j < K - 1 ? s0[j * C + ch] : x[(j - (K - 1)) * (C + pad) + ch];
        }
    }
    backend *bes[2] = {vk, cpu_be};
    float *got[2] = {NULL, NULL}, *st[2];
    int rc[2];
    for (int b = 0; b < 2; b++) {
        st[b] = malloc((size_t)(C * (K - 1)) * sizeof(float));
        memcpy(st[b], s0, (size_t)(C * (K - 1)) * sizeof(float));
        float *o = NULL;
        rc[b] = conv_run(bes[b], &c, x, w, st[b], &o);
        if (rc[b] == SEER_OK) { /* outputs then state, as in ref */
            got[b] = malloc((size_t)(C * T + C * (K - 1)) * sizeof(float));
            memcpy(got[b], o, (size_t)(C * T) * sizeof(float));
            memcpy(got[b] + C * T, st[b], (size_t)(C * (K - 1)) * sizeof(float));
        }
        free(o);
    }
    check(what, got, rc, ref, (size_t)(C * T + C * (K - 1)));
    for (int b = 0; b < 2; b++)
        free(got[b]), free(st[b]);
    free(x), free(w), free(s0), free(ref);
}

static void test_conv(backend *vk, const char *tag, bool big)
{
    if (big) { /* 4000-byte rows: a 32 KiB window holds 8, so a prefill runs in pieces */
        conv_case(vk, (struct conv_case){1000, 65, 4, 0, false}, tag);
        conv_case(vk, (struct conv_case){1000, 70, 4, 33, true}, tag);
        return;
    }
    static const int64_t Ts[] = {1, 2, 7, 64, 65, 300};
    for (size_t i = 0; i < ARRAY_LEN(Ts); i++)
        conv_case(vk, (struct conv_case){37, Ts[i], 4, 0, false}, tag);
    conv_case(vk, (struct conv_case){1000, 300, 4, 0, true}, tag);
    conv_case(vk, (struct conv_case){37, 66, 4, 65, false}, tag); /* prefill, then one decode step */
    conv_case(vk, (struct conv_case){129, 9, 2, 3, true}, tag);
    conv_case(vk, (struct conv_case){6, 20, 17, 0, false}, tag); /* 16 carried rows: the block holds them */
}

/* ---- Gated DeltaNet ---------------------------------------------------------------------------- */

enum gdn_mode { GDN_REC, GDN_CHUNKED, GDN_PREFILL_DECODE }; /* the last: chunked prefix, recurrent rest */

struct gdn_case {
    int64_t dk, dv, Hk, Hv, T;
    enum gdn_head_order order;
    enum gdn_mode mode;
    bool views;   /* q, k, v as views of one conv output {2·Hk·dk + Hv·dv + 3, T} (spec §2.5 step 3),
                     g and beta of one {2·Hv + 1, T} */
    bool in_place; /* out is v's own tensor */
};

struct gdn_data { float *q, *k, *v, *g, *beta, *s0; float scale; };

static void l2normalise(float *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    const float r = (float)(1.0 / sqrt(s + 1e-6)); /* spec §2.5 step 6 */
    for (int64_t i = 0; i < n; i++)
        x[i] *= r;
}

/* Realistic inputs (spec §2.5 steps 4–6): L2-normalised q and k, β = σ(·), g = −exp(A_log)·
   softplus(a + dt_bias) ≤ 0. The last value head decays strongly at every token (g in [−10, −5],
   so Γ falls to −640 within a chunk) and the others at ~10% of tokens; the state starts non-zero. */
static struct gdn_data gdn_make(const struct gdn_case *c)
{
    const int64_t dk = c->dk, dv = c->dv, Hk = c->Hk, Hv = c->Hv, T = c->T;
    struct gdn_data d = {randn((size_t)(dk * Hk * T), 1.0f), randn((size_t)(dk * Hk * T), 1.0f),
                         randn((size_t)(dv * Hv * T), 1.0f), malloc((size_t)(Hv * T) * sizeof(float)),
                         malloc((size_t)(Hv * T) * sizeof(float)), randn((size_t)(dv * dk * Hv), 0.3f),
                         1.0f / sqrtf((float)dk)};
    for (int64_t r = 0; r < Hk * T; r++) {
        l2normalise(d.q + r * dk, dk);
        l2normalise(d.k + r * dk, dk);
    }
    for (int64_t j = 0; j < Hv; j++) {
        const double A = test_randf(0.5f, 4.0f), dt = test_randf(-3.0f, 0.0f);
        for (int64_t t = 0; t < T; t++) {
            const double a = test_randn() + dt;
            double g = -A * (a > 20 ? a : log1p(exp(a)));
            if (j == Hv - 1 || test_randf(0, 1) < 0.1f)
                g = test_randf(-10.0f, -5.0f);
            d.g[t * Hv + j] = (float)g;
            d.beta[t * Hv + j] = (float)(1.0 / (1.0 + exp(-2.0 * test_randn())));
        }
    }
    return d;
}

static void gdn_free(struct gdn_data *d)
{
    free(d->q), free(d->k), free(d->v), free(d->g), free(d->beta), free(d->s0);
}

/* Spec §2.5 step 7 in double, token by token: S ← αS; kv = Sᵀk; δ = β(v − kv); S += k⊗δ;
   o = Sᵀ(q·scale). ref = o {dv,Hv,T} then the final state {dv,dk,Hv}. */
static void gdn_reference(const struct gdn_case *c, const struct gdn_data *d, double *ref)
{
    const int64_t dk = c->dk, dv = c->dv, Hk = c->Hk, Hv = c->Hv, T = c->T;
    double *S = ref + dv * Hv * T, *kv = malloc((size_t)dv * sizeof *kv);
    for (int64_t i = 0; i < dv * dk * Hv; i++)
        S[i] = d->s0[i];
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < Hv; j++) {
            /* spec §2.5 step 5 (grouped) or llama.cpp's tiled order */
            const int64_t hk = c->order == GDN_V_TILED ? j % Hk : j / (Hv / Hk);
            const float *q = d->q + (t * Hk + hk) * dk, *k = d->k + (t * Hk + hk) * dk, *v = d->v + (t * Hv + j) * dv;
            gdn_ref_step(S + j * dk * dv, q, k, v, exp((double)d->g[t * Hv + j]), d->beta[t * Hv + j], d->scale, dk, dv,
                         kv, ref + (t * Hv + j) * dv);
        }
    free(kv);
}

/* Runs the case on `be`; got = out {dv,Hv,T} then the final state. */
static int gdn_run(backend *be, const struct gdn_case *c, const struct gdn_data *d, float **got)
{
    const int64_t dk = c->dk, dv = c->dv, Hk = c->Hk, Hv = c->Hv, T = c->T, CD = 2 * Hk * dk + Hv * dv + 3;
    const size_t f = sizeof(float);
    tensor *hold[4] = {NULL, NULL, NULL, NULL}, q, k, v, g, beta;
    if (c->views) {
        float *m = calloc((size_t)(CD * T), f);
        for (int64_t t = 0; t < T; t++) {
            memcpy(m + t * CD, d->q + t * Hk * dk, (size_t)(Hk * dk) * f);
            memcpy(m + t * CD + Hk * dk, d->k + t * Hk * dk, (size_t)(Hk * dk) * f);
            memcpy(m + t * CD + 2 * Hk * dk, d->v + t * Hv * dv, (size_t)(Hv * dv) * f);
        }
        float *gb = calloc((size_t)((2 * Hv + 1) * T), f);
        for (int64_t t = 0; t < T; t++) {
            memcpy(gb + t * (2 * Hv + 1), d->g + t * Hv, (size_t)Hv * f);
            memcpy(gb + t * (2 * Hv + 1) + Hv, d->beta + t * Hv, (size_t)Hv * f);
        }
        hold[0] = vk_test_tensor(be, DT_F32, CD, T, 1, 1, m);
        hold[3] = vk_test_tensor(be, DT_F32, 2 * Hv + 1, T, 1, 1, gb);
        free(m), free(gb);
        if (!hold[0] || !hold[3]) {
            vk_test_tensor_free(hold[0]), vk_test_tensor_free(hold[3]);
            return SEER_ENOMEM;
        }
        g = tensor_view(hold[3], 2, (int64_t[]){Hv, T}, (size_t[]){f, hold[3]->nb[1]}, 0);
        beta = tensor_view(hold[3], 2, (int64_t[]){Hv, T}, (size_t[]){f, hold[3]->nb[1]}, Hv * f);
        q = tensor_view(hold[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, CD * f}, 0);
        k = tensor_view(hold[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, CD * f}, Hk * dk * f);
        v = tensor_view(hold[0], 3, (int64_t[]){dv, Hv, T}, (size_t[]){f, dv * f, CD * f}, 2 * Hk * dk * f);
    } else {
        hold[0] = vk_test_tensor(be, DT_F32, dk, Hk, T, 1, d->q);
        hold[1] = vk_test_tensor(be, DT_F32, dk, Hk, T, 1, d->k);
        hold[2] = vk_test_tensor(be, DT_F32, dv, Hv, T, 1, d->v);
        tensor *gt = vk_test_tensor(be, DT_F32, Hv, T, 2, 1, NULL);
        hold[3] = gt;
        if (!hold[0] || !hold[1] || !hold[2] || !gt) {
            for (int i = 0; i < 4; i++)
                vk_test_tensor_free(hold[i]);
            return SEER_ENOMEM;
        }
        backend_tensor_set(gt, d->g, 0, (size_t)(Hv * T) * f);
        backend_tensor_set(gt, d->beta, (size_t)(Hv * T) * f, (size_t)(Hv * T) * f);
        q = *hold[0], k = *hold[1], v = *hold[2];
        g = tensor_view(gt, 2, (int64_t[]){Hv, T}, (size_t[]){f, Hv * f}, 0);
        beta = tensor_view(gt, 2, (int64_t[]){Hv, T}, (size_t[]){f, Hv * f}, (size_t)(Hv * T) * f);
    }
    tensor *st = vk_test_tensor(be, DT_F32, dv, dk, Hv, 1, d->s0);
    tensor *out = c->in_place ? hold[2] : vk_test_tensor(be, DT_F32, dv, Hv, T, 1, NULL);
    int rc = st && out ? SEER_OK : SEER_ENOMEM;
    /* GDN_PREFILL_DECODE: chunked over all but the last 3 tokens, then one recurrent call each */
    int64_t cut = c->mode == GDN_PREFILL_DECODE ? MAX(T - 3, (int64_t)1) : T;
    for (int64_t t0 = 0, t1; rc == SEER_OK && t0 < T; t0 = t1) {
        t1 = t0 < cut ? cut : t0 + 1;
        const int64_t n = t1 - t0;
        tensor qv = tensor_view(&q, 3, (int64_t[]){dk, Hk, n}, q.nb, (size_t)t0 * q.nb[2]);
        tensor kv = tensor_view(&k, 3, (int64_t[]){dk, Hk, n}, k.nb, (size_t)t0 * k.nb[2]);
        tensor vv = tensor_view(&v, 3, (int64_t[]){dv, Hv, n}, v.nb, (size_t)t0 * v.nb[2]);
        tensor gv = tensor_view(&g, 2, (int64_t[]){Hv, n}, g.nb, (size_t)t0 * g.nb[1]);
        tensor bv = tensor_view(&beta, 2, (int64_t[]){Hv, n}, beta.nb, (size_t)t0 * beta.nb[1]);
        tensor ov = tensor_view(out, 3, (int64_t[]){dv, Hv, n}, out->nb, (size_t)t0 * out->nb[2]);
        bool chunked = c->mode == GDN_CHUNKED || (c->mode == GDN_PREFILL_DECODE && t0 == 0);
        rc = chunked ? op_gdn_chunked(be, &ov, &qv, &kv, &vv, &gv, &bv, st, d->scale, c->order)
                     : op_gdn_recurrent(be, &ov, &qv, &kv, &vv, &gv, &bv, st, d->scale, c->order);
    }
    if (rc == SEER_OK) {
        const size_t no = (size_t)(dv * Hv * T), ns = (size_t)(dv * dk * Hv);
        *got = malloc((no + ns) * f);
        rc = backend_tensor_get(out, *got, 0, no * f);
        if (rc == SEER_OK)
            rc = backend_tensor_get(st, *got + no, 0, ns * f);
    } else {
        diag("gdn on %s: %s", backend_name(be), seer_last_error());
    }
    if (!c->in_place)
        vk_test_tensor_free(out);
    vk_test_tensor_free(st);
    for (int i = 0; i < 4; i++)
        vk_test_tensor_free(hold[i]);
    return rc;
}

static void gdn_case(backend *vk, struct gdn_case c, const char *tag)
{
    static const char *const modes[] = {"recurrent", "chunked", "chunked prefill + recurrent decode"};
    char what[200];
    snprintf(what, sizeof what, "%sgdn %s dk=%lld dv=%lld Hk=%lld Hv=%lld T=%lld %s%s%s", tag, modes[c.mode],
             (long long)c.dk, (long long)c.dv, (long long)c.Hk, (long long)c.Hv, (long long)c.T,
             c.order == GDN_V_TILED ? "tiled" : "grouped", c.views ? ", q/k/v views" : "", c.in_place ? ", out over v" : "");
    struct gdn_data d = gdn_make(&c);
    const size_t n = (size_t)(c.dv * c.Hv * c.T + c.dv * c.dk * c.Hv);
    double *ref = malloc(n * sizeof *ref);
    gdn_reference(&c, &d, ref);
    float *got[2] = {NULL, NULL};
    int rc[2] = {gdn_run(vk, &c, &d, &got[0]), gdn_run(cpu_be, &c, &d, &got[1])};
    check(what, got, rc, ref, n);
    free(got[0]), free(got[1]), free(ref);
    gdn_free(&d);
}

static void test_gdn(backend *vk, const char *tag, bool big)
{
    if (big) { /* 1.5 KiB per token of the q/k/v parent: a 256 KiB window holds ~170 tokens */
        gdn_case(vk, (struct gdn_case){24, 40, 3, 6, 300, GDN_V_TILED, GDN_CHUNKED, true, false}, tag);
        gdn_case(vk, (struct gdn_case){24, 40, 3, 6, 300, GDN_V_GROUPED, GDN_REC, true, false}, tag);
        return;
    }
    static const int64_t Ts[] = {1, 7, 64, 65, 300};
    /* dk, dv, Hk, Hv, order */
    static const struct { int64_t dk, dv, Hk, Hv; enum gdn_head_order order; } shapes[] = {
        {128, 128, 2, 2, GDN_V_GROUPED}, {128, 128, 2, 4, GDN_V_GROUPED}, {128, 128, 2, 4, GDN_V_TILED},
        {24, 40, 3, 3, GDN_V_TILED},     {24, 40, 3, 6, GDN_V_TILED},     {24, 40, 3, 6, GDN_V_GROUPED},
    };
    for (int mode = GDN_REC; mode <= GDN_CHUNKED; mode++)
        for (size_t s = 0; s < ARRAY_LEN(shapes); s++)
            for (size_t i = 0; i < ARRAY_LEN(Ts); i++) {
                /* the long sequences at dk = 128 only where they add something: both orders */
                if (shapes[s].dk == 128 && Ts[i] == 300 && shapes[s].Hv == shapes[s].Hk)
                    continue;
                gdn_case(vk,
                         (struct gdn_case){shapes[s].dk, shapes[s].dv, shapes[s].Hk, shapes[s].Hv, Ts[i], shapes[s].order,
                                           mode, (i + s) % 2 == 0, false},
                         tag);
            }
    gdn_case(vk, (struct gdn_case){128, 128, 2, 4, 70, GDN_V_GROUPED, GDN_PREFILL_DECODE, true, false}, tag);
    gdn_case(vk, (struct gdn_case){24, 40, 3, 6, 130, GDN_V_TILED, GDN_PREFILL_DECODE, true, false}, tag);
    gdn_case(vk, (struct gdn_case){24, 40, 3, 6, 65, GDN_V_TILED, GDN_CHUNKED, false, true}, tag);
    gdn_case(vk, (struct gdn_case){24, 40, 3, 6, 7, GDN_V_GROUPED, GDN_REC, false, true}, tag);
    gdn_case(vk, (struct gdn_case){1, 1, 1, 1, 65, GDN_V_GROUPED, GDN_CHUNKED, false, false}, tag);
    gdn_case(vk, (struct gdn_case){1, 1, 1, 1, 7, GDN_V_GROUPED, GDN_REC, false, false}, tag);
    /* dk beyond the chunk kernels' 256 rows: chunked falls back to the token-by-token kernel */
    gdn_case(vk, (struct gdn_case){300, 8, 1, 2, 70, GDN_V_GROUPED, GDN_CHUNKED, false, false}, tag);
}

/* ---- attention --------------------------------------------------------------------------------- */

enum kv_layout { KV_PLAIN, KV_CACHE, KV_HEAD_MAJOR }; /* {hd,nkv,Tk}; view of {hd,nkv,Tmax}; of {hd,Tmax,nkv} */

struct attn_case {
    int64_t hd, nh, nkv, T, Tk;
    enum dtype kv;
    enum kv_layout layout;
    bool causal;
    int64_t q_pos0;     /* causal */
    bool interleaved;   /* segments: ids t mod 3 instead of contiguous runs */
    bool q_view;        /* q inside {2·hd·nh, T} with head stride 2·hd (spec §2.6 step 1) */
    bool in_place;      /* out is q's own tensor */
    float qmul;         /* q scale: 1, or large for peaked scores */
};

/* Segment ids: runs of 37%, 45% and the rest of the tokens, or t mod 3. */
static void attn_segments(const struct attn_case *c, int32_t *seg)
{
    for (int64_t t = 0; t < c->T; t++)
        seg[t] = c->interleaved ? (int32_t)(t % 3) : t < c->T * 37 / 100 ? 10 : t < c->T * 82 / 100 ? 11 : 12;
}

/* K or V as laid out in the case, on `be`: *view is the {hd,nkv,Tk} tensor, the return value
   the tensor to free. x {hd, nkv, Tk} holds the values (already rounded to the dtype). */
static tensor *kv_tensor(backend *be, const struct attn_case *c, const float *x, tensor *view)
{
    const int64_t hd = c->hd, nkv = c->nkv, Tk = c->Tk, Tmax = Tk + 37;
    const size_t es = c->kv == DT_F16 ? 2 : 4;
    if (c->layout == KV_PLAIN) {
        tensor *t = vk_test_tensor(be, c->kv, hd, nkv, Tk, 1, x);
        if (t)
            *view = *t;
        return t;
    }
    float *all = calloc((size_t)(hd * nkv * Tmax), sizeof(float));
    for (int64_t j = 0; j < Tk; j++)
        for (int64_t g = 0; g < nkv; g++)
            memcpy(all + (c->layout == KV_CACHE ? (j * nkv + g) * hd : (g * Tmax + j) * hd), x + (j * nkv + g) * hd,
                   (size_t)hd * sizeof(float));
    tensor *t = c->layout == KV_CACHE ? vk_test_tensor(be, c->kv, hd, nkv, Tmax, 1, all)
                                      : vk_test_tensor(be, c->kv, hd, Tmax, nkv, 1, all);
    free(all);
    if (t) {
        size_t nb1 = c->layout == KV_CACHE ? hd * es : (size_t)(hd * Tmax) * es;
        size_t nb2 = c->layout == KV_CACHE ? (size_t)(hd * nkv) * es : hd * es;
        *view = tensor_view(t, 3, (int64_t[]){hd, nkv, Tk}, (size_t[]){es, nb1, nb2}, 0);
    }
    return t;
}

static int attn_run(backend *be, const struct attn_case *c, const float *q, const float *k, const float *v,
                    const int32_t *seg, float **got)
{
    const int64_t hd = c->hd, nh = c->nh, T = c->T;
    tensor qv, kv, vv, *qt;
    if (c->q_view) {
        float *qg = randn((size_t)(2 * hd * nh * T), 1.0f); /* the gate halves: never read */
        for (int64_t t = 0; t < T; t++)
            for (int64_t h = 0; h < nh; h++)
                memcpy(qg + (t * nh + h) * 2 * hd, q + (t * nh + h) * hd, (size_t)hd * sizeof(float));
        qt = vk_test_tensor(be, DT_F32, 2 * hd * nh, T, 1, 1, qg);
        free(qg);
        if (qt)
            qv = tensor_view(qt, 3, (int64_t[]){hd, nh, T}, (size_t[]){4, (size_t)(2 * hd) * 4, qt->nb[1]}, 0);
    } else {
        qt = vk_test_tensor(be, DT_F32, hd, nh, T, 1, q);
        if (qt)
            qv = *qt;
    }
    tensor *kt = kv_tensor(be, c, k, &kv), *vt = kv_tensor(be, c, v, &vv);
    tensor *segt = c->causal ? NULL : i32_tensor(be, T, seg);
    tensor *out = c->in_place ? qt : vk_test_tensor(be, DT_F32, hd, nh, T, 1, NULL);
    int rc = SEER_ENOMEM;
    if (qt && kt && vt && out && (c->causal || segt)) {
        struct attn_mask m = {.kind = c->causal ? ATTN_CAUSAL : ATTN_SEGMENTS, .q_pos0 = c->q_pos0, .seg = segt};
        rc = op_attention(be, out, &qv, &kv, &vv, 1.0f / sqrtf((float)hd), &m);
        if (rc == SEER_OK)
            *got = vk_test_read_f32(out);
        else
            diag("attention on %s: %s", backend_name(be), seer_last_error());
    }
    if (!c->in_place)
        vk_test_tensor_free(out);
    vk_test_tensor_free(qt);
    vk_test_tensor_free(kt);
    vk_test_tensor_free(vt);
    if (segt)
        test_tensor_free(segt);
    return rc;
}

static void attn_case(backend *vk, struct attn_case c, const char *tag)
{
    char what[220];
    snprintf(what, sizeof what, "%sattention hd=%lld nh=%lld nkv=%lld T=%lld Tk=%lld %s %s%s%s%s%s", tag,
             (long long)c.hd, (long long)c.nh, (long long)c.nkv, (long long)c.T, (long long)c.Tk, dtype_name(c.kv),
             c.causal ? "causal" : c.interleaved ? "segments (interleaved)" : "segments",
             c.layout == KV_CACHE ? ", cache view" : c.layout == KV_HEAD_MAJOR ? ", head-major cache view" : "",
             c.q_view ? ", strided q" : "", c.in_place ? ", out over q" : "", c.qmul > 1 ? ", large scores" : "");
    const int64_t hd = c.hd, nh = c.nh, nkv = c.nkv, T = c.T, Tk = c.Tk, r = nh / nkv;
    float *q = randn((size_t)(hd * nh * T), c.qmul), *k = randn((size_t)(hd * nkv * Tk), 1.0f);
    float *v = randn((size_t)(hd * nkv * Tk), 1.0f);
    for (int64_t i = 0; i < hd * nkv * Tk; i++) /* what the backends hold */
        k[i] = vk_test_round(c.kv, k[i]), v[i] = vk_test_round(c.kv, v[i]);
    int32_t *seg = malloc((size_t)T * sizeof *seg);
    attn_segments(&c, seg);
    /* softmax over the visible keys of scale·q·k, in double (ops.h op_attention) */
    double *ref = calloc((size_t)(hd * nh * T), sizeof *ref), *s = malloc((size_t)Tk * sizeof *s);
    const double sc = (double)(1.0f / sqrtf((float)hd));
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < nh; h++) {
            const float *qr = q + (t * nh + h) * hd;
            const int64_t g = h / r;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < Tk; j++) {
                bool vis = c.causal ? j <= c.q_pos0 + t : seg[j] == seg[t];
                s[j] = -INFINITY;
                if (!vis)
                    continue;
                double x = 0;
                for (int64_t d = 0; d < hd; d++)
                    x += (double)qr[d] * k[(j * nkv + g) * hd + d];
                s[j] = x * sc;
                mx = fmax(mx, s[j]);
            }
            double *o = ref + (t * nh + h) * hd;
            for (int64_t j = 0; j < Tk; j++) {
                if (s[j] == -INFINITY)
                    continue;
                double p = exp(s[j] - mx);
                sum += p;
                for (int64_t d = 0; d < hd; d++)
                    o[d] += p * v[(j * nkv + g) * hd + d];
            }
            for (int64_t d = 0; d < hd; d++)
                o[d] /= sum;
        }
    float *got[2] = {NULL, NULL};
    int rc[2] = {attn_run(vk, &c, q, k, v, seg, &got[0]), attn_run(cpu_be, &c, q, k, v, seg, &got[1])};
    check(what, got, rc, ref, (size_t)(hd * nh * T));
    free(got[0]), free(got[1]), free(ref), free(s), free(q), free(k), free(v), free(seg);
}

static void test_attention(backend *vk, const char *tag, bool big)
{
    /* hd nh nkv T Tk kv layout causal q_pos0 interleaved q_view in_place qmul */
    if (big) { /* q of 500 tokens is 1 MB, K/V (f16) 128 KB: q and out in pieces of a 256 KiB window */
        attn_case(vk, (struct attn_case){64, 8, 2, 500, 500, DT_F16, KV_CACHE, true, 0, false, true, false, 1}, tag);
        attn_case(vk, (struct attn_case){64, 8, 2, 1, 900, DT_F16, KV_CACHE, true, 899, false, false, false, 1}, tag);
        return;
    }
    const struct attn_case cases[] = {
        /* decode: one query over ~2000 cached keys, split-K */
        {256, 8, 2, 1, 2000, DT_F16, KV_CACHE, true, 1999, false, true, false, 1},
        {128, 4, 4, 1, 1000, DT_F32, KV_CACHE, true, 999, false, false, false, 1},
        {72, 4, 1, 1, 1, DT_F32, KV_PLAIN, true, 0, false, false, false, 1},
        {256, 8, 2, 1, 1500, DT_F32, KV_HEAD_MAJOR, true, 1499, false, false, false, 8},
        /* prefill and continued prefill */
        {256, 8, 2, 300, 300, DT_F16, KV_CACHE, true, 0, false, true, false, 1},
        {256, 4, 1, 65, 565, DT_F32, KV_CACHE, true, 500, false, false, false, 1},
        {64, 8, 2, 7, 1507, DT_F16, KV_HEAD_MAJOR, true, 1500, false, false, false, 1},
        {128, 4, 4, 64, 64, DT_F32, KV_PLAIN, true, 0, false, false, true, 1},
        {72, 4, 4, 300, 300, DT_F32, KV_PLAIN, true, 0, false, false, false, 8},
        {100, 6, 3, 33, 40, DT_F16, KV_PLAIN, true, 7, false, true, false, 1},
        {64, 2, 1, 1200, 1200, DT_F16, KV_PLAIN, true, 0, false, false, false, 1},
        /* vision tower: bidirectional attention within segments */
        {72, 4, 4, 700, 700, DT_F32, KV_PLAIN, false, 0, false, false, false, 1},
        {72, 4, 4, 50, 50, DT_F32, KV_PLAIN, false, 0, true, false, true, 1},
        {64, 2, 2, 257, 257, DT_F16, KV_PLAIN, false, 0, false, false, false, 8},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        attn_case(vk, cases[i], tag);
}

/* ---- errors and validation --------------------------------------------------------------------- */

static void test_errors(backend *vk)
{
    /* out over q: other workgroups still read the q rows an output column block overwrites */
    tensor *q = vk_test_tensor(vk, DT_F32, 8, 2, 5, 1, NULL), *k = vk_test_tensor(vk, DT_F32, 8, 2, 5, 1, NULL);
    tensor *g = vk_test_tensor(vk, DT_F32, 2, 5, 1, 1, NULL), *st = vk_test_tensor(vk, DT_F32, 8, 8, 2, 1, NULL);
    if (q && k && g && st) {
        int rc = op_gdn_recurrent(vk, q, q, k, q, g, g, st, 0.3f, GDN_V_GROUPED);
        ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "overlap"),
           "gdn with out over q: SEER_EUNSUPPORTED (%s)", seer_last_error());
    }
    vk_test_tensor_free(q), vk_test_tensor_free(k), vk_test_tensor_free(g), vk_test_tensor_free(st);
    /* head dims above 256 have no kernel */
    q = vk_test_tensor(vk, DT_F32, 260, 1, 2, 1, NULL);
    k = vk_test_tensor(vk, DT_F32, 260, 1, 2, 1, NULL);
    if (q && k) {
        struct attn_mask m = {.kind = ATTN_CAUSAL, .q_pos0 = 0};
        int rc = op_attention(vk, q, q, k, k, 1.0f, &m);
        ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "head dim"),
           "attention with hd 260: SEER_EUNSUPPORTED (%s)", seer_last_error());
    }
    vk_test_tensor_free(q), vk_test_tensor_free(k);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *vk;
    int status;
    if (!vk_test_open(&vk, &cpu_be, &status))
        return status;
    test_conv(vk, "", false);
    test_gdn(vk, "", false);
    test_attention(vk, "", false);
    test_errors(vk);
    vk_test_validation_check(vk, "sequence ops");
    backend_free(vk);

    /* Small storage windows: tensors split by tokens (32 KiB for conv's 4000-byte rows; 256 KiB
       holds a GDN chunk's scratch and whole K/V, not all of q/k/v or of the attention q/out). */
    if ((vk = vk_test_backend(32 << 10))) {
        test_conv(vk, "split: ", true);
        vk_test_validation_check(vk, "split conv");
        backend_free(vk);
    }
    if ((vk = vk_test_backend(256 << 10))) {
        test_gdn(vk, "split: ", true);
        test_attention(vk, "split: ", true);
        vk_test_validation_check(vk, "split gdn, attention");
        backend_free(vk);
    }
    backend_free(cpu_be);
    return done_testing();
}

#else
int main(void) { return plan_skip_all("built without Vulkan (SEER_VULKAN=OFF)"); }
#endif
