/* Tests core/cpu/rope.c through op_rope_text / op_rope_vision against double-precision
   references written here from spec §3.3 (partial interleaved MRoPE: frequency i takes its
   position from T, H or W by the sections rule; dims ≥ n_rot pass through) and spec §4.4 (2-D
   axial RoPE: first dh/4 angles from the patch row, next dh/4 from the column). Covers three
   distinct position axes per token, long-context positions, the q half of the [q|gate] projection
   as a strided view (in place, gate untouched), strided outputs, and 1 vs 2 threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "views.h"

static backend *be1, *be2; /* 1 and 2 threads */

/* ---- references --------------------------------------------------------------------------- */

/* Axis of frequency i as spec §3.3 says HF builds it: all T, then indices 1, 4, … below
   3·sections[1] take H and indices 2, 5, … below 3·sections[2] take W. */
static void mrope_axes(const int sections[3], int half, int *axis)
{
    for (int i = 0; i < half; i++)
        axis[i] = 0;
    for (int i = 1; i < 3 * sections[1] && i < half; i += 3)
        axis[i] = 1;
    for (int i = 2; i < 3 * sections[2] && i < half; i += 3)
        axis[i] = 2;
}

/* Angle of one frequency. f32_angles: as spec §3.3 states HF forms it, inv_freq rounded to f32
   and the product pos·inv_freq taken in f32 (what matters at long-context positions); otherwise
   everything in double. */
static double angle(double theta, int i, int n_rot, int32_t pos, int f32_angles)
{
    if (f32_angles) {
        float inv = (float)pow(theta, -2.0 * i / n_rot);
        return (double)((float)pos * inv);
    }
    return (double)pos * pow(theta, -2.0 * i / n_rot);
}

/* Text MRoPE on x{hd, nh, T} (contiguous), pos[a*T + t]. */
static void ref_rope_text(const float *x, int hd, int nh, int T, const int32_t *pos, int n_rot, double theta,
                          const int sections[3], int f32_angles, double *out)
{
    int half = n_rot / 2, axis[512];
    mrope_axes(sections, half, axis);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < nh; h++) {
            const float *xh = x + ((size_t)t * nh + h) * hd;
            double *yh = out + ((size_t)t * nh + h) * hd;
            for (int d = n_rot; d < hd; d++)
                yh[d] = xh[d];
            for (int i = 0; i < half; i++) {
                double a = angle(theta, i, n_rot, pos[axis[i] * T + t], f32_angles);
                yh[i] = xh[i] * cos(a) - xh[i + half] * sin(a);
                yh[i + half] = xh[i + half] * cos(a) + xh[i] * sin(a);
            }
        }
}

/* Vision 2-D RoPE on x{dh, nh, N}, pos[t] = row, pos[N + t] = col (spec §4.4), in double. */
static void ref_rope_vision(const float *x, int dh, int nh, int N, const int32_t *pos, double theta, double *out)
{
    int half = dh / 2, quarter = dh / 4;
    for (int t = 0; t < N; t++)
        for (int h = 0; h < nh; h++) {
            const float *xh = x + ((size_t)t * nh + h) * dh;
            double *yh = out + ((size_t)t * nh + h) * dh;
            for (int i = 0; i < half; i++) {
                int j = i < quarter ? i : i - quarter;
                double inv = pow(theta, -2.0 * j / half);
                double a = (i < quarter ? pos[t] : pos[N + t]) * inv;
                yh[i] = xh[i] * cos(a) - xh[i + half] * sin(a);
                yh[i + half] = xh[i + half] * cos(a) + xh[i] * sin(a);
            }
        }
}

/* ---- running the ops ---------------------------------------------------------------------- */

static tensor *pos_tensor(backend *be, const int32_t *pos, int T, int axes)
{
    tensor *t = test_tensor(be, DT_I32, T, axes, 1, 1, NULL);
    memcpy(t->data, pos, (size_t)T * axes * sizeof *pos);
    return t;
}

/* Runs text (vision when p == NULL) rope on contiguous x{hd,nh,T}. mode 0: out contiguous;
   1: out a strided view (gaps checked into *outside_ok); 2: in place. */
static float *run_rope(backend *be, const float *x, int hd, int nh, int T, const int32_t *pos,
                       const struct rope_text_params *p, float vtheta, int mode, int *outside_ok)
{
    size_t n = (size_t)hd * nh * T;
    tensor *tx = test_tensor(be, DT_F32, hd, nh, T, 1, x), *tp = pos_tensor(be, pos, T, p ? 3 : 2);
    float *y = malloc(n * sizeof *y);
    int rc;
    if (outside_ok)
        *outside_ok = 1;
    if (mode == 1) {
        struct sview vy;
        int64_t ne[4] = {hd, nh, T, 1};
        sview_make(&vy, be, ne);
        rc = p ? op_rope_text(be, &vy.v, tx, tp, p) : op_rope_vision(be, &vy.v, tx, tp, vtheta);
        view_get(&vy.v, y);
        if (outside_ok)
            *outside_ok = sview_outside_untouched(&vy);
        sview_free(&vy);
    } else {
        tensor *ty = mode == 2 ? tx : test_tensor(be, DT_F32, hd, nh, T, 1, NULL);
        rc = p ? op_rope_text(be, ty, tx, tp, p) : op_rope_vision(be, ty, tx, tp, vtheta);
        memcpy(y, ty->data, n * sizeof *y);
        if (ty != tx)
            test_tensor_free(ty);
    }
    test_tensor_free(tx), test_tensor_free(tp);
    if (rc != SEER_OK) {
        diag("rope: %s", seer_last_error());
        free(y);
        return NULL;
    }
    return y;
}

static float *rand_x(size_t n)
{
    float *x = malloc(n * sizeof *x);
    test_fill_normal(x, n, 1.0f);
    return x;
}

/* Random MRoPE positions: T in [0, tmax), H and W offset from T independently (as image tokens
   are, spec §3.2) so the three axes differ. */
static int32_t *rand_mpos(int T, int tmax)
{
    int32_t *pos = malloc((size_t)T * 3 * sizeof *pos);
    for (int t = 0; t < T; t++) {
        pos[t] = (int32_t)(test_rand_u64() % (uint64_t)tmax);
        pos[T + t] = pos[t] + 1 + (int32_t)(test_rand_u64() % 40);
        pos[2 * T + t] = pos[t] + 41 + (int32_t)(test_rand_u64() % 40);
    }
    return pos;
}

/* ---- text MRoPE --------------------------------------------------------------------------- */

/* One text case; returns the rel L2 vs the reference and whether dims ≥ n_rot are bit-exact. */
static double text_case(int hd, int nh, int T, const struct rope_text_params *p, int tmax, int f32_angles, int mode,
                        int *pass_ok)
{
    size_t n = (size_t)hd * nh * T;
    float *x = rand_x(n);
    int32_t *pos = rand_mpos(T, tmax);
    double *ref = malloc(n * sizeof *ref);
    ref_rope_text(x, hd, nh, T, pos, p->n_rot, p->theta, p->sections, f32_angles, ref);
    int outside;
    float *y = run_rope(be1, x, hd, nh, T, pos, p, 0, mode, &outside);
    double e = y && outside ? rel_l2_d(y, ref, n) : INFINITY;
    *pass_ok = y != NULL;
    for (size_t r = 0; y && r < (size_t)nh * T; r++)
        for (int d = p->n_rot; d < hd; d++)
            *pass_ok &= y[r * hd + d] == x[r * hd + d];
    free(x), free(pos), free(ref), free(y);
    return e;
}

static void test_text_sweep(void)
{
    const struct rope_text_params qwen = {64, 1e7f, {11, 11, 10}}; /* spec §3.3 */
    const struct rope_text_params odd = {20, 1e4f, {3, 3, 2}};     /* section bounds bite: i = 8 is T */
    static const int nhs[] = {1, 3}, Ts[] = {1, 7, 33};
    static const char *modes[] = {"contiguous out", "strided out", "in place"};
    for (int mode = 0; mode < 3; mode++) {
        double w_long = 0, w_small = 0, w_odd = 0;
        int pass = 1, pp;
        for (size_t a = 0; a < ARRAY_LEN(nhs); a++)
            for (size_t b = 0; b < ARRAY_LEN(Ts); b++) {
                w_long = fmax(w_long, text_case(256, nhs[a], Ts[b], &qwen, 40000, 1, mode, &pp));
                pass &= pp;
                w_small = fmax(w_small, text_case(256, nhs[a], Ts[b], &qwen, 60, 0, mode, &pp));
                pass &= pp;
                w_odd = fmax(w_odd, text_case(36, nhs[a], Ts[b], &odd, 60, 0, mode, &pp));
                pass &= pp;
            }
        /* tolerance 1e-5: with the angle rounded as the reference rounds it, only cos/sin and
           two f32 products differ (~1e-7) */
        ok(w_long <= 1e-5, "rope_text %s, positions up to 40000, f32 angles as spec §3.3 (rel L2 %.2e <= 1e-5)",
           modes[mode], w_long);
        /* tolerance 1e-5: angles below ~100 carry <= 1e-5 rad of f32 rounding vs exact double */
        ok(w_small <= 1e-5, "rope_text %s, positions < 140 vs all-double reference (rel L2 %.2e <= 1e-5)",
           modes[mode], w_small);
        ok(w_odd <= 1e-5, "rope_text %s, n_rot 20 of 36, sections {3,3,2} (rel L2 %.2e <= 1e-5)", modes[mode], w_odd);
        ok(pass, "rope_text %s: dims >= n_rot are passed through bit for bit", modes[mode]);
    }
}

/* One token whose T, H and W positions all differ: frequency 1 must turn by the H position, 2 by
   W, 3 by T (spec §3.3), and so on up to the last frequency. */
static void test_text_axes(void)
{
    const struct rope_text_params p = {64, 1e7f, {11, 11, 10}};
    int hd = 256;
    int32_t pos[3] = {7, 1000, 250}; /* T, H, W */
    float *x = rand_x((size_t)hd);
    for (int i = 1; i <= 3; i++) /* pairs of known size, so a wrong angle cannot hide in tiny values */
        x[i] = 1.0f, x[i + 32] = -0.5f;
    float *y = run_rope(be1, x, hd, 1, 1, pos, &p, 0, 0, NULL);
    if (!y) {
        ok(0, "rope_text ran");
        free(x);
        return;
    }
    /* out of pair i if it were turned by position q */
    double err[32][3];
    for (int i = 0; i < 32; i++)
        for (int a = 0; a < 3; a++) {
            double ang = angle(1e7, i, 64, pos[a], 1);
            double e0 = x[i] * cos(ang) - x[i + 32] * sin(ang), e1 = x[i + 32] * cos(ang) + x[i] * sin(ang);
            err[i][a] = fmax(fabs(y[i] - e0), fabs(y[i + 32] - e1));
        }
    /* tolerance 1e-5 absolute on unit-normal inputs; a wrong axis is off by O(1) */
    ok(err[1][1] <= 1e-5 && err[1][0] > 1e-3 && err[1][2] > 1e-3, "frequency 1 turns by the H position (%.1e)",
       err[1][1]);
    ok(err[2][2] <= 1e-5 && err[2][0] > 1e-3 && err[2][1] > 1e-3, "frequency 2 turns by the W position (%.1e)",
       err[2][2]);
    ok(err[3][0] <= 1e-5 && err[3][1] > 1e-3 && err[3][2] > 1e-3, "frequency 3 turns by the T position (%.1e)",
       err[3][0]);
    int all = 1;
    for (int i = 0; i < 32; i++)
        all &= err[i][i % 3] <= 1e-5; /* with sections {11,11,10} the rule is i mod 3 (spec §3.3) */
    ok(all, "all 32 frequencies follow the i mod 3 axis rule for sections {11,11,10}");
    int pass = 1;
    for (int d = 64; d < hd; d++)
        pass &= y[d] == x[d];
    ok(pass, "dims 64..255 untouched");
    free(x), free(y);
}

/* The q half of a [q | gate] per-head projection (spec §2.6 step 1) rotated in place through a
   strided view: q rotated right, the gate half and the pass-through dims untouched. */
static void test_text_qgate_view(void)
{
    const struct rope_text_params p = {64, 1e7f, {11, 11, 10}};
    int hd = 256, nh = 3, T = 5;
    size_t n = (size_t)2 * hd * nh * T;
    float *qg = rand_x(n), *q = malloc(n / 2 * sizeof *q);
    for (int r = 0; r < nh * T; r++)
        memcpy(q + (size_t)r * hd, qg + (size_t)r * 2 * hd, (size_t)hd * sizeof *q);
    int32_t *pos = rand_mpos(T, 5000);
    double *ref = malloc(n / 2 * sizeof *ref);
    ref_rope_text(q, hd, nh, T, pos, 64, 1e7, p.sections, 1, ref);
    tensor *tqg = test_tensor(be1, DT_F32, 2 * hd, nh, T, 1, qg), *tp = pos_tensor(be1, pos, T, 3);
    int64_t ne[3] = {hd, nh, T};
    size_t nb[3] = {4, tqg->nb[1], tqg->nb[2]};
    tensor v = tensor_view(tqg, 3, ne, nb, 0);
    int rc = op_rope_text(be1, &v, &v, tp, &p);
    const float *out = tqg->data;
    float *yq = malloc(n / 2 * sizeof *yq);
    int gate_ok = 1;
    for (int r = 0; r < nh * T; r++) {
        memcpy(yq + (size_t)r * hd, out + (size_t)r * 2 * hd, (size_t)hd * sizeof *yq);
        gate_ok &= memcmp(out + (size_t)r * 2 * hd + hd, qg + (size_t)r * 2 * hd + hd, (size_t)hd * 4) == 0;
    }
    double e = rc == SEER_OK ? rel_l2_d(yq, ref, n / 2) : INFINITY;
    ok(e <= 1e-5, "rope_text in place on the q half of [q|gate] (strided view): rel L2 %.2e <= 1e-5", e);
    ok(gate_ok, "the gate halves are untouched");
    test_tensor_free(tqg), test_tensor_free(tp);
    free(qg), free(q), free(pos), free(ref), free(yq);
}

/* ---- vision ------------------------------------------------------------------------------- */

/* Patch (row, col) pairs with row != col on every patch. */
static int32_t *rand_vpos(int N)
{
    int32_t *pos = malloc((size_t)N * 2 * sizeof *pos);
    for (int t = 0; t < N; t++) {
        pos[t] = (int32_t)(test_rand_u64() % 48);
        pos[N + t] = (pos[t] + 1 + (int32_t)(test_rand_u64() % 47)) % 48;
    }
    return pos;
}

static void test_vision(void)
{
    static const int dhs[] = {4, 64, 72}, Ns[] = {1, 7, 33};
    static const char *modes[] = {"contiguous out", "strided out", "in place"};
    for (int mode = 0; mode < 3; mode++) {
        double worst = 0;
        int outside = 1;
        for (size_t a = 0; a < ARRAY_LEN(dhs); a++)
            for (size_t b = 0; b < ARRAY_LEN(Ns); b++) {
                int dh = dhs[a], nh = 3, N = Ns[b];
                size_t n = (size_t)dh * nh * N;
                float *x = rand_x(n);
                int32_t *pos = rand_vpos(N);
                double *ref = malloc(n * sizeof *ref);
                ref_rope_vision(x, dh, nh, N, pos, 1e4, ref);
                int o;
                float *y = run_rope(be1, x, dh, nh, N, pos, NULL, 1e4f, mode, &o);
                worst = fmax(worst, y ? rel_l2_d(y, ref, n) : INFINITY);
                outside &= o;
                free(x), free(pos), free(ref), free(y);
            }
        /* tolerance 1e-5: positions < 48 give angles whose f32 rounding is < 3e-6 rad */
        ok(worst <= 1e-5 && outside, "rope_vision %s, dh 4/64/72, N 1..33, row != col (rel L2 %.2e <= 1e-5)",
           modes[mode], worst);
    }
    /* which half of the angles reads the row: inv_freq[0] = 1, so pair 0 turns by exactly the row
       and pair dh/4 by exactly the column */
    int dh = 72;
    int32_t pos[2] = {3, 11};
    float *x = rand_x((size_t)dh);
    float *y = run_rope(be1, x, dh, 1, 1, pos, NULL, 1e4f, 0, NULL);
    double er = y ? fabs(y[0] - (x[0] * cos(3.0) - x[36] * sin(3.0))) : INFINITY;
    double ec = y ? fabs(y[18] - (x[18] * cos(11.0) - x[54] * sin(11.0))) : INFINITY;
    double wrong = y ? fabs(y[0] - (x[0] * cos(11.0) - x[36] * sin(11.0))) : 0;
    ok(er <= 1e-5 && ec <= 1e-5 && wrong > 1e-3, "rope_vision: pair 0 turns by the row (3), pair dh/4 by the col (11)");
    free(x), free(y);
}

/* ---- threads ------------------------------------------------------------------------------ */

static void test_threads(void)
{
    const struct rope_text_params p = {64, 1e7f, {11, 11, 10}};
    int hd = 256, nh = 8, T = 33; /* 67584 values: enough to use the pool */
    size_t n = (size_t)hd * nh * T;
    float *x = rand_x(n);
    int32_t *pos = rand_mpos(T, 40000);
    float *y1 = run_rope(be1, x, hd, nh, T, pos, &p, 0, 0, NULL), *y2 = run_rope(be2, x, hd, nh, T, pos, &p, 0, 0, NULL);
    ok(y1 && y2 && memcmp(y1, y2, n * sizeof *y1) == 0, "rope_text {256,8,33}: 1 and 2 threads give identical bits");
    free(y1), free(y2), free(pos);
    int32_t *vpos = rand_vpos(T * 4);
    y1 = run_rope(be1, x, 64, 8, T * 4, vpos, NULL, 1e4f, 0, NULL);
    y2 = run_rope(be2, x, 64, 8, T * 4, vpos, NULL, 1e4f, 0, NULL);
    ok(y1 && y2 && memcmp(y1, y2, n * sizeof *y1) == 0, "rope_vision {64,8,132}: 1 and 2 threads give identical bits");
    free(y1), free(y2), free(vpos), free(x);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    if (backend_cpu_create(1, &be1) != SEER_OK || backend_cpu_create(2, &be2) != SEER_OK) {
        ok(0, "cpu backends: %s", seer_last_error());
        return done_testing();
    }
    test_text_sweep();
    test_text_axes();
    test_text_qgate_view();
    test_vision();
    test_threads();
    backend_free(be1);
    backend_free(be2);
    return done_testing();
}
