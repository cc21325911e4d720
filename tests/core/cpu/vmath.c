/* Tests core/cpu/vmath.c, the SiLU and sigmoid rows behind op_silu / op_unary and the gated
   RMSNorm: values against double-precision formulas over the whole f32 range that matters
   (|x| ≤ 200, zero of both signs, the clamp edges ±87.3 and 88, tiny values), and the promise
   that an element's bits do not depend on where its row starts or how long it is (a sequence
   decoding alone or beside others, threads splitting a row anywhere), in place too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static double ref_silu(double x) { return x / (1.0 + exp(-x)); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void check(const char *name, row_fn fn, double (*ref)(double), const float *x)
{
    float *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    fn(y, x, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        const double r = ref(x[i]);
        worst = fmax(worst, (fabs(y[i] - r) - FLOOR) / fmax(fabs(r), 1e-300));
    }
    ok(worst <= TOL, "%s: within %.0e of the double formula over %d values in [−200, 200] (worst %.2e)", name, TOL,
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
    float y[2];
    vm_silu(y, (const float[]){-0.0f, 100.0f}, 2);
    float s[2];
    vm_sigmoid(s, (const float[]){-100.0f, 100.0f}, 2);
    ok(y[0] == 0.0f && y[1] == 100.0f && s[0] == 0.0f && s[1] == 1.0f,
       "silu(−0) = 0, silu(100) = 100, sigmoid(−100) = 0, sigmoid(100) = 1");
    free(x);
    return done_testing();
}
