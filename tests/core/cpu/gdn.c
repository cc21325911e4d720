/* Tests core/cpu/gdn.c (op_gdn_recurrent, op_gdn_chunked) against a naive double-precision
   delta-rule recurrence written here from spec §2.5 step 7, on realistic random inputs
   (spec §2.5 steps 4–6: L2-normalised q/k, β = sigmoid, g = −exp(A_log)·softplus(a + dt_bias),
   some strong decays g ≈ −5..−10), non-zero initial states, grouped value heads, chunk-boundary
   lengths, strided views, split sequences, threads, in-place output and failure paths. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "seer.h"
#include "support/gdn_ref.h"
#include "support/testutil.h"
#include "tap.h"

/* f32 tolerances, as relative L2 (rel_l2). Against the double reference: 1e-4 (f32 rounding of
   dk-long dot products accumulated over T steps stays near 1e-6; 1e-4 leaves room for long T).
   Recurrent vs chunked: 1e-5 (same maths in a different order, both f32). */
#define TOL_REF 1e-4
#define TOL_FORMS 1e-5

struct gdn_case {
    int64_t dk, dv, Hk, Hv, T;
    float *q, *k, *v; /* {dk,Hk,T}, {dk,Hk,T}, {dv,Hv,T} */
    float *g, *beta;  /* {Hv,T} */
    float *s0;        /* {dv,dk,Hv} initial state */
    float scale;
    enum gdn_head_order order; /* value head j reads key head j/r (grouped) or j mod Hk (tiled) */
};

static void l2normalise(float *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(s + 1e-6)); /* spec §2.5 step 6 */
    for (int64_t i = 0; i < n; i++)
        x[i] *= r;
}

static double softplus(double x) { return x > 20 ? x : log1p(exp(x)); }

/* Realistic inputs. The last value head decays strongly at every token (g in [−10, −5]), so the
   cumulative log-decay inside a chunk reaches −640; other heads get a strong decay at ~10% of
   tokens. */
static void case_make(struct gdn_case *c, int64_t dk, int64_t dv, int64_t Hk, int64_t Hv, int64_t T)
{
    *c = (struct gdn_case){.dk = dk, .dv = dv, .Hk = Hk, .Hv = Hv, .T = T, .scale = 1.0f / sqrtf((float)dk)};
    c->q = malloc(sizeof(float) * (size_t)(dk * Hk * T));
    c->k = malloc(sizeof(float) * (size_t)(dk * Hk * T));
    c->v = malloc(sizeof(float) * (size_t)(dv * Hv * T));
    c->g = malloc(sizeof(float) * (size_t)(Hv * T));
    c->beta = malloc(sizeof(float) * (size_t)(Hv * T));
    c->s0 = malloc(sizeof(float) * (size_t)(dv * dk * Hv));
    test_fill_normal(c->q, (size_t)(dk * Hk * T), 1.0f);
    test_fill_normal(c->k, (size_t)(dk * Hk * T), 1.0f);
    test_fill_normal(c->v, (size_t)(dv * Hv * T), 1.0f);
    test_fill_normal(c->s0, (size_t)(dv * dk * Hv), 0.3f);
    for (int64_t r = 0; r < Hk * T; r++) {
        l2normalise(c->q + r * dk, dk);
        l2normalise(c->k + r * dk, dk);
    }
    for (int64_t j = 0; j < Hv; j++) {
        double A = test_randf(0.5f, 4.0f), dt = test_randf(-3.0f, 0.0f); /* exp(A_log), dt_bias */
        for (int64_t t = 0; t < T; t++) {
            double g = -A * softplus(test_randn() + dt);
            if (j == Hv - 1 || test_randf(0, 1) < 0.1f)
                g = test_randf(-10.0f, -5.0f);
            c->g[t * Hv + j] = (float)g;
            c->beta[t * Hv + j] = (float)(1.0 / (1.0 + exp(-2.0 * test_randn())));
        }
    }
}

static void case_free(struct gdn_case *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->beta), free(c->s0);
}

/* Spec §2.5 step 7 verbatim, in double: S ← αS; kv = Sᵀk; δ = β(v − kv); S += k⊗δ; o = Sᵀ(q·scale).
   Tokens [t0, t1); S {Hv×dk×dv} carried by the caller; o {dv,Hv,T}. */
static void gdn_ref(const struct gdn_case *c, int64_t t0, int64_t t1, double *S, double *o)
{
    int64_t dk = c->dk, dv = c->dv, r = c->Hv / c->Hk;
    double *kv = malloc(sizeof(double) * (size_t)dv);
    for (int64_t t = t0; t < t1; t++) {
        for (int64_t j = 0; j < c->Hv; j++) {
            /* spec §2.5 step 5 (grouped); anchor §1.4 item 6 (llama.cpp's tiled V order) */
            int64_t hk = c->order == GDN_V_TILED ? j % c->Hk : j / r;
            const float *q = c->q + (t * c->Hk + hk) * dk, *k = c->k + (t * c->Hk + hk) * dk;
            const float *v = c->v + (t * c->Hv + j) * dv;
            gdn_ref_step(S + j * dk * dv, q, k, v, exp((double)c->g[t * c->Hv + j]), c->beta[t * c->Hv + j], c->scale,
                         dk, dv, kv, o + (t * c->Hv + j) * dv);
        }
    }
    free(kv);
}

/* Reference over the whole case: fills o {dv,Hv,T} and the final state. */
static void case_ref(const struct gdn_case *c, double *o, double *S)
{
    for (int64_t i = 0; i < c->dv * c->dk * c->Hv; i++)
        S[i] = c->s0[i];
    gdn_ref(c, 0, c->T, S, o);
}

/* Runs one op on tokens [t0, t1) of the case with `state` carried in and out (f32 {dv,dk,Hv}).
   strided: q, k, v are views into one {2·Hk·dk + Hv·dv, T} tensor laid out like in_proj_qkv's
   output (spec §2.5 step 1), and g, beta views into one {2·Hv, T} tensor. inplace: out is v's
   tensor (ops.h allows out to alias an input of its shape). Writes o {dv,Hv,t1−t0}. */
static int run_op(backend *be, bool chunked, const struct gdn_case *c, int64_t t0, int64_t t1, float *state,
                  float *o, bool strided, bool inplace)
{
    int64_t dk = c->dk, dv = c->dv, Hk = c->Hk, Hv = c->Hv, T = t1 - t0;
    const float *qs = c->q + t0 * Hk * dk, *ks = c->k + t0 * Hk * dk, *vs = c->v + t0 * Hv * dv;
    const float *gs = c->g + t0 * Hv, *bs = c->beta + t0 * Hv;
    tensor *hold[4] = {0}, q, k, v, g, beta;
    if (strided) {
        int64_t C = 2 * Hk * dk + Hv * dv;
        float *m = malloc(sizeof(float) * (size_t)(C * T)), *gb = malloc(sizeof(float) * (size_t)(2 * Hv * T));
        for (int64_t t = 0; t < T; t++) {
            memcpy(m + t * C, qs + t * Hk * dk, sizeof(float) * (size_t)(Hk * dk));
            memcpy(m + t * C + Hk * dk, ks + t * Hk * dk, sizeof(float) * (size_t)(Hk * dk));
            memcpy(m + t * C + 2 * Hk * dk, vs + t * Hv * dv, sizeof(float) * (size_t)(Hv * dv));
            memcpy(gb + t * 2 * Hv, gs + t * Hv, sizeof(float) * (size_t)Hv);
            memcpy(gb + t * 2 * Hv + Hv, bs + t * Hv, sizeof(float) * (size_t)Hv);
        }
        hold[0] = test_tensor(be, DT_F32, C, T, 1, 1, m);
        hold[1] = test_tensor(be, DT_F32, 2 * Hv, T, 1, 1, gb);
        free(m), free(gb);
        size_t f = sizeof(float);
        q = tensor_view(hold[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, C * f}, 0);
        k = tensor_view(hold[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, C * f}, Hk * dk * f);
        v = tensor_view(hold[0], 3, (int64_t[]){dv, Hv, T}, (size_t[]){f, dv * f, C * f}, 2 * Hk * dk * f);
        g = tensor_view(hold[1], 2, (int64_t[]){Hv, T}, (size_t[]){f, 2 * Hv * f}, 0);
        beta = tensor_view(hold[1], 2, (int64_t[]){Hv, T}, (size_t[]){f, 2 * Hv * f}, Hv * f);
    } else {
        hold[0] = test_tensor(be, DT_F32, dk, Hk, T, 1, qs), q = *hold[0];
        hold[1] = test_tensor(be, DT_F32, dk, Hk, T, 1, ks), k = *hold[1];
        hold[2] = test_tensor(be, DT_F32, dv, Hv, T, 1, vs), v = *hold[2];
        hold[3] = test_tensor(be, DT_F32, Hv, T, 2, 1, NULL);
        backend_tensor_set(hold[3], gs, 0, sizeof(float) * (size_t)(Hv * T));
        backend_tensor_set(hold[3], bs, sizeof(float) * (size_t)(Hv * T), sizeof(float) * (size_t)(Hv * T));
        g = tensor_view(hold[3], 2, (int64_t[]){Hv, T}, (size_t[]){4, 4 * Hv}, 0);
        beta = tensor_view(hold[3], 2, (int64_t[]){Hv, T}, (size_t[]){4, 4 * Hv}, 4 * Hv * T);
    }
    tensor *st = test_tensor(be, DT_F32, dv, dk, Hv, 1, state);
    tensor *out = inplace ? hold[2] : test_tensor(be, DT_F32, dv, Hv, T, 1, NULL);
    int rc = chunked ? op_gdn_chunked(be, out, &q, &k, &v, &g, &beta, st, c->scale, c->order)
                     : op_gdn_recurrent(be, out, &q, &k, &v, &g, &beta, st, c->scale, c->order);
    if (rc == SEER_OK) {
        backend_tensor_get(out, o, 0, sizeof(float) * (size_t)(dv * Hv * T));
        backend_tensor_get(st, state, 0, sizeof(float) * (size_t)(dv * dk * Hv));
    }
    if (!inplace)
        test_tensor_free(out);
    test_tensor_free(st);
    for (int i = 0; i < 4; i++)
        test_tensor_free(hold[i]);
    return rc;
}

/* Both forms on one whole case, compared with the reference and with each other. */
static void check_case(backend *be, int64_t dk, int64_t dv, int64_t Hk, int64_t Hv, int64_t T, bool strided,
                       enum gdn_head_order order)
{
    struct gdn_case c;
    case_make(&c, dk, dv, Hk, Hv, T);
    c.order = order;
    size_t no = (size_t)(dv * Hv * T), ns = (size_t)(dv * dk * Hv);
    double *ro = malloc(sizeof(double) * no), *rs = malloc(sizeof(double) * ns);
    float *o[2], *s[2];
    int rc[2];
    case_ref(&c, ro, rs);
    for (int f = 0; f < 2; f++) {
        o[f] = malloc(sizeof(float) * no), s[f] = malloc(sizeof(float) * ns);
        memcpy(s[f], c.s0, sizeof(float) * ns);
        rc[f] = run_op(be, f == 1, &c, 0, T, s[f], o[f], strided, false);
    }
    const char *name[2] = {"recurrent", "chunked"};
    for (int f = 0; f < 2; f++) {
        double eo = rc[f] ? INFINITY : rel_l2_d(o[f], ro, no), es = rc[f] ? INFINITY : rel_l2_d(s[f], rs, ns);
        ok(eo <= TOL_REF && es <= TOL_REF,
           "%s dk %lld dv %lld Hk %lld Hv %lld T %lld%s%s: out %.2e, state %.2e vs ref (<= %.0e)", name[f],
           (long long)dk, (long long)dv, (long long)Hk, (long long)Hv, (long long)T, strided ? " strided" : "",
           order == GDN_V_TILED ? " tiled" : "", eo,
           es, TOL_REF);
    }
    double eo = rc[0] || rc[1] ? INFINITY : rel_l2(o[1], o[0], no);
    double es = rc[0] || rc[1] ? INFINITY : rel_l2(s[1], s[0], ns);
    ok(eo <= TOL_FORMS && es <= TOL_FORMS,
       "chunked vs recurrent dk %lld dv %lld Hv %lld T %lld: out %.2e, state %.2e (<= %.0e)", (long long)dk,
       (long long)dv, (long long)Hv, (long long)T, eo, es, TOL_FORMS);
    for (int f = 0; f < 2; f++)
        free(o[f]), free(s[f]);
    free(ro), free(rs);
    case_free(&c);
}

/* A sequence fed in pieces (state carried between calls) equals one call, for each form and for
   a chunked prefill followed by recurrent decode steps (how the model uses them). */
static void check_split(backend *be)
{
    struct gdn_case c;
    int64_t dk = 128, dv = 128, Hk = 2, Hv = 4, T = 300;
    case_make(&c, dk, dv, Hk, Hv, T);
    size_t no = (size_t)(dv * Hv * T), ns = (size_t)(dv * dk * Hv);
    double *ro = malloc(sizeof(double) * no), *rs = malloc(sizeof(double) * ns);
    float *o1 = malloc(sizeof(float) * no), *s1 = malloc(sizeof(float) * ns);
    float *o2 = malloc(sizeof(float) * no), *s2 = malloc(sizeof(float) * ns);
    case_ref(&c, ro, rs);
    static const int64_t cuts[] = {0, 1, 71, 135, 300}; /* pieces 1, 70, 64, 165 */
    for (int mode = 0; mode < 3; mode++) {
        memcpy(s1, c.s0, sizeof(float) * ns);
        memcpy(s2, c.s0, sizeof(float) * ns);
        int rc = run_op(be, mode != 0, &c, 0, T, s1, o1, false, false);
        if (mode < 2) {
            for (size_t p = 0; p + 1 < ARRAY_LEN(cuts); p++)
                rc |= run_op(be, mode == 1, &c, cuts[p], cuts[p + 1], s2, o2 + cuts[p] * Hv * dv, false, false);
        } else {
            rc |= run_op(be, true, &c, 0, 250, s2, o2, false, false);
            for (int64_t t = 250; t < T; t++)
                rc |= run_op(be, false, &c, t, t + 1, s2, o2 + t * Hv * dv, false, false);
        }
        static const char *what[] = {"recurrent in 4 calls", "chunked in 4 calls (1, 70, 64, 165)",
                                     "chunked prefill 250 + 50 recurrent steps"};
        double eo = rc ? INFINITY : rel_l2(o2, o1, no), es = rc ? INFINITY : rel_l2(s2, s1, ns);
        double er = rc ? INFINITY : rel_l2_d(o2, ro, no);
        ok(eo <= TOL_FORMS && es <= TOL_FORMS && er <= TOL_REF,
           "%s equals one call: out %.2e, state %.2e (<= %.0e); vs ref %.2e (<= %.0e)", what[mode], eo, es,
           TOL_FORMS, er, TOL_REF);
    }
    free(ro), free(rs), free(o1), free(s1), free(o2), free(s2);
    case_free(&c);
}

/* Heads are independent, so the thread count must not change a single bit; and out may be v's
   own tensor. */
static void check_threads_inplace(backend *be3)
{
    backend *be1;
    struct gdn_case c;
    int64_t dk = 32, dv = 48, Hk = 3, Hv = 6, T = 150;
    if (backend_cpu_create(1, &be1) != SEER_OK) {
        ok(0, "1-thread backend: %s", seer_last_error());
        return;
    }
    case_make(&c, dk, dv, Hk, Hv, T);
    size_t no = (size_t)(dv * Hv * T), ns = (size_t)(dv * dk * Hv);
    float *o[3], *s[3];
    for (int f = 0; f < 2; f++) {
        int rc = 0;
        for (int i = 0; i < 3; i++) {
            o[i] = malloc(sizeof(float) * no), s[i] = malloc(sizeof(float) * ns);
            memcpy(s[i], c.s0, sizeof(float) * ns);
        }
        rc |= run_op(be1, f, &c, 0, T, s[0], o[0], false, false);
        rc |= run_op(be3, f, &c, 0, T, s[1], o[1], false, false);
        rc |= run_op(be3, f, &c, 0, T, s[2], o[2], false, true);
        ok(!rc && !memcmp(o[0], o[1], sizeof(float) * no) && !memcmp(s[0], s[1], sizeof(float) * ns),
           "%s: 1 and 3 threads give bit-identical outputs and states", f ? "chunked" : "recurrent");
        ok(!rc && !memcmp(o[1], o[2], sizeof(float) * no) && !memcmp(s[1], s[2], sizeof(float) * ns),
           "%s: out written over v (in place) gives the same result", f ? "chunked" : "recurrent");
        for (int i = 0; i < 3; i++)
            free(o[i]), free(s[i]);
    }
    case_free(&c);
    backend_free(be1);
}

/* Failures return the right code, say why and leave the state untouched. */
static void check_errors(backend *be)
{
    struct gdn_case c;
    int64_t d = 16, T = 70;
    case_make(&c, d, d, 1, 1, T);
    size_t ns = (size_t)(d * d);
    tensor *q = test_tensor(be, DT_F32, d, 1, T, 1, c.q), *k = test_tensor(be, DT_F32, d, 1, T, 1, c.k);
    tensor *v = test_tensor(be, DT_F32, d, 1, T, 1, c.v), *out = test_tensor(be, DT_F32, d, 1, T, 1, NULL);
    tensor *g = test_tensor(be, DT_F32, 1, T, 1, 1, c.g), *beta = test_tensor(be, DT_F32, 1, T, 1, 1, c.beta);
    tensor *st = test_tensor(be, DT_F32, d, d, 1, 1, c.s0);
    for (int f = 0; f < 2; f++) {
        seer_alloc_fail_after(1); /* the op's scratch area is its only allocation */
        int rc = f ? op_gdn_chunked(be, out, q, k, v, g, beta, st, c.scale, c.order)
                   : op_gdn_recurrent(be, out, q, k, v, g, beta, st, c.scale, c.order);
        seer_alloc_fail_after(0);
        float *s = test_tensor_read(st);
        ok(rc == SEER_ENOMEM && strstr(seer_last_error(), "scratch") && !memcmp(s, c.s0, sizeof(float) * ns),
           "%s: failed scratch allocation gives SEER_ENOMEM (\"%s\"), state untouched",
           f ? "chunked" : "recurrent", seer_last_error());
        free(s);
    }
    /* a 4th dimension passes ops.c's shape checks (q and k agree) but is outside the contract */
    tensor q4 = tensor_view(q, 4, (int64_t[]){d, 1, T / 2, 2}, (size_t[]){4, 4 * d, 4 * d, 4 * d * (T / 2)}, 0);
    tensor k4 = tensor_view(k, 4, (int64_t[]){d, 1, T / 2, 2}, (size_t[]){4, 4 * d, 4 * d, 4 * d * (T / 2)}, 0);
    tensor v4 = tensor_view(v, 3, (int64_t[]){d, 1, T / 2}, (size_t[]){4, 4 * d, 4 * d}, 0);
    tensor o4 = tensor_view(out, 3, (int64_t[]){d, 1, T / 2}, (size_t[]){4, 4 * d, 4 * d}, 0);
    tensor g4 = tensor_view(g, 2, (int64_t[]){1, T / 2}, (size_t[]){4, 4}, 0);
    tensor b4 = tensor_view(beta, 2, (int64_t[]){1, T / 2}, (size_t[]){4, 4}, 0);
    int rc = op_gdn_chunked(be, &o4, &q4, &k4, &v4, &g4, &b4, st, c.scale, GDN_V_GROUPED);
    ok(rc == SEER_EINVAL, "4-D q/k rejected with SEER_EINVAL (\"%s\")", seer_last_error());
    tensor *all[] = {q, k, v, out, g, beta, st};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        test_tensor_free(all[i]);
    case_free(&c);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *be;
    if (backend_cpu_create(3, &be) != SEER_OK) {
        ok(0, "cpu backend: %s", seer_last_error());
        return done_testing();
    }
    static const int64_t Ts[] = {1, 7, 63, 64, 65, 130, 300};
    static const int64_t dims[][2] = {{16, 32}, {128, 128}};
    for (size_t d = 0; d < ARRAY_LEN(dims); d++)
        for (int64_t ratio = 1; ratio <= 2; ratio++)
            for (size_t i = 0; i < ARRAY_LEN(Ts); i++)
                check_case(be, dims[d][0], dims[d][1], 2, 2 * ratio, Ts[i], false, GDN_V_GROUPED);
    check_case(be, 128, 128, 2, 4, 130, true, GDN_V_GROUPED);
    check_case(be, 24, 40, 1, 3, 97, true, GDN_V_GROUPED);
    /* llama.cpp GGUFs keep value heads tiled when Hv > Hk: both forms must honour that order */
    check_case(be, 16, 16, 2, 4, 65, false, GDN_V_TILED);
    check_case(be, 32, 24, 3, 9, 130, true, GDN_V_TILED);
    check_split(be);
    check_threads_inplace(be);
    check_errors(be);
    backend_free(be);
    return done_testing();
}
