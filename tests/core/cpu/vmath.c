/* Tests core/cpu/vmath.c, the SiLU, sigmoid and GELU-tanh rows behind op_silu / op_unary and the
   gated RMSNorm, and core/cpu/vexp.h's e^x on 8 and 16 lanes: values against double-precision formulas over the whole f32 range that matters
   (|x| ≤ 200, zero of both signs, the clamp edges ±87.3 and 88, tiny values), and the promise
   that an element's bits do not depend on where its row starts or how long it is (a sequence
   decoding alone or beside others, threads splitting a row anywhere), in place too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/vexp.h"
#include "core/cpu/vmath.h"
#include "support/testutil.h"
#include "tap.h"

#define N 4099

/* |y − ref| ≤ TOL·|ref| + FLOOR: the exponential's polynomial is within 2e-7, then one addition
   and one division in f32. FLOOR: where e^−x passes 2^127.5 (x < −88.376) the rows return 0
   (libm's expf overflows from −88.72), and the f32 results below x = −87.3 are denormal. */
#define TOL 2e-6
#define FLOOR 1e-36

typedef void (*row_fn)(float *y, const float *x, int64_t n);

/* GELU-tanh: its argument 2u = 2·sqrt(2/pi)(x + 0.044715x³) is rounded to f32 before the exponential,
   an absolute error up to |2u|·2^-23 ≈ 1e-5 at the |2u| ≈ 88 where e^−2u stops mattering (x ≈ −9.5),
   which becomes that much relative error in e^−2u: 2e-5 is that plus the rest. */
#define TOL_GELU 2e-5
/* vexp8 / vexp16 against double exp on [−87.3, 88.376] (their clamp interval, which covers the
   softmax's s − max ≤ 0 and GELU's −2u): the degree-6 polynomial is within 2e-7, then two
   roundings (the reduced argument's and the final product's). */
#define TOL_EXP 3e-7

static double ref_silu(double x) { return x / (1.0 + exp(-x)); }
/* 0.5x(1 + tanh u) as x / (1 + e^−2u), the same function, in double: 1 + tanh u cancels to 0 for x ≲ −20 */
static double ref_gelu_tanh(double x)
{
    return x / (1.0 + exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void check_tol(const char *name, row_fn fn, double (*ref)(double), const float *x, double tol)
{
    float *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    fn(y, x, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        const double r = ref(x[i]);
        worst = fmax(worst, (fabs(y[i] - r) - FLOOR) / fmax(fabs(r), 1e-300));
    }
    ok(worst <= tol, "%s: within %.0e of the double formula over %d values in [−200, 200] (worst %.2e)", name, tol,
       N, worst);

    /* the same row in pieces of every length 1..17 from odd offsets, then in place */
    bool same = true;
    for (int at = 0, len = 1; at < N; at += len, len = len % 17 + 1) {
        const int m = at + len > N ? N - at : len;
        fn(z + at, x + at, m);
    }
    same &= !memcmp(y, z, N * sizeof *y);
    memcpy(z, x, N * sizeof *z);
    fn(z + 3, z + 3, N - 3);
    same &= !memcmp(y + 3, z + 3, (N - 3) * sizeof *y);
    ok(same, "%s: every element gets the same bits in pieces of 1..17 at any offset, and in place", name);
    free(y);
    free(z);
}

static void check(const char *name, row_fn fn, double (*ref)(double), const float *x)
{
    check_tol(name, fn, ref, x, TOL);
}

#ifdef SEER_MM_X86
__attribute__((target("avx2,fma"))) static void exp_rows8(float *y, const float *x, int64_t n)
{
    for (int64_t j = 0; j < n; j += 8)
        _mm256_storeu_ps(y + j, vexp8(_mm256_loadu_ps(x + j)));
}

__attribute__((target("avx512f"))) static void exp_rows16(float *y, const float *x, int64_t n)
{
    for (int64_t j = 0; j < n; j += 16)
        _mm512_storeu_ps(y + j, vexp16(_mm512_loadu_ps(x + j)));
}

/* Worst relative error of fn's e^x on n values (a multiple of 16) spread over the clamp interval. */
static double exp_error(void (*fn)(float *, const float *, int64_t), const float *x, float *y, int64_t n)
{
    double worst = 0;
    fn(y, x, n);
    for (int64_t j = 0; j < n; j++)
        worst = fmax(worst, fabs(y[j] - exp((double)x[j])) / exp((double)x[j]));
    return worst;
}

static void check_exp(void)
{
    enum { NE = 1 << 16 };
    float *x = malloc(NE * sizeof *x), *y = malloc(NE * sizeof *y), *z = malloc(NE * sizeof *z);
    for (int j = 0; j < NE; j++) /* a quarter on [−20, 0], where the softmax's probabilities live */
        x[j] = j % 4 ? test_randf(VEXP_LO, VEXP_HI) : test_randf(-20.0f, 0.0f);
    x[0] = VEXP_LO, x[1] = VEXP_HI, x[2] = 0.0f, x[3] = -0.0f;
    if (!mm_x86_available()) {
        skip("no AVX2+FMA: vexp8 is not used on this CPU", "vexp8 within TOL_EXP of exp");
        skip("no AVX2+FMA: vexp16 is not used on this CPU", "vexp16 gives vexp8's bits");
    } else {
        double w8 = exp_error(exp_rows8, x, y, NE);
        ok(w8 <= TOL_EXP, "vexp8: within %.0e of exp on %d values in [%.1f, %.3f] (worst %.2e)", TOL_EXP, NE,
           VEXP_LO, VEXP_HI, w8);
        if (!mm_avx512_available()) {
            skip("no AVX-512F on this CPU", "vexp16 gives vexp8's bits lane for lane");
        } else {
            exp_error(exp_rows16, x, z, NE);
            ok(!memcmp(y, z, NE * sizeof *y), "vexp16 gives vexp8's bits lane for lane on the same values");
        }
    }
    free(x);
    free(y);
    free(z);
}
#endif

int main(void)
{
    test_seed();
    float *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = i % 3 ? test_randf(-12.0f, 12.0f) : test_randf(-200.0f, 200.0f);
    const float edge[] = {0.0f, -0.0f, 87.3f, -87.3f, 88.0f, -88.0f, 88.5f, -88.5f, 1e-30f, -1e-30f, 20.0f, -20.0f};
    memcpy(x + 100, edge, sizeof edge);
    check("silu", vm_silu, ref_silu, x);
    check("sigmoid", vm_sigmoid, ref_sigmoid, x);
    check_tol("gelu_tanh", vm_gelu_tanh, ref_gelu_tanh, x, TOL_GELU);
#ifdef SEER_MM_X86
    check_exp();
#endif
    float y[2];
    vm_silu(y, (const float[]){-0.0f, 100.0f}, 2);
    float s[2];
    vm_sigmoid(s, (const float[]){-100.0f, 100.0f}, 2);
    ok(y[0] == 0.0f && y[1] == 100.0f && s[0] == 0.0f && s[1] == 1.0f,
       "silu(−0) = 0, silu(100) = 100, sigmoid(−100) = 0, sigmoid(100) = 1");
    free(x);
    return done_testing();
}
