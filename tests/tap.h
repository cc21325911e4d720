/* tap.h — a small Test Anything Protocol emitter for seer's test programs (run by `prove`).
   Usage:
     int main(void) { plan_no_plan();  ok(x == 1, "x is one");  ...  return done_testing(); }
   ok() returns its condition so callers can add diagnostics on failure. skip() prints a visible,
   explained "ok N # SKIP reason". diag() writes "# ..." lines to stderr. The exit status is
   non-zero when any test failed or the plan was not met. */
#ifndef SEER_TESTS_TAP_H
#define SEER_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed, tap_planned = -1;
/* The program's random seed, where it took one (tests/support/testutil.c test_seed sets it), or -1.
   Every failure repeats it: with prove running programs in parallel (JOBS) their stderr lines
   interleave, and the seed's own line, printed first, can be far from the failure in a CI log. */
__attribute__((weak)) long long tap_seed = -1;

static inline void plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

static inline void plan_no_plan(void) { tap_planned = -1; }

/* The whole program is skipped ("1..0 # SKIP why"); exit with the returned status. */
static inline int plan_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    return 0;
}

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("# ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static inline int ok_(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int ok_(int cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    tap_n++;
    printf("%sok %d - ", cond ? "" : "not ", tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!cond) {
        tap_failed++;
        if (tap_seed >= 0)
            diag("  Failed test at %s line %d (seed %lld: replay with SEER_TEST_SEED=%lld).", file, line, tap_seed,
                 tap_seed);
        else
            diag("  Failed test at %s line %d.", file, line);
    }
    return cond;
}
#define ok(cond, ...) ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline void skip(const char *why, const char *name)
{
    tap_n++;
    printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
    fflush(stdout);
}

static inline int done_testing(void)
{
    if (tap_planned < 0)
        printf("1..%d\n", tap_n);
    else if (tap_planned != tap_n)
        diag("planned %d tests but ran %d", tap_planned, tap_n);
    fflush(stdout);
    if (tap_failed)
        diag("failed %d of %d tests", tap_failed, tap_n);
    return (tap_failed || (tap_planned >= 0 && tap_planned != tap_n)) ? 1 : 0;
}

#endif
