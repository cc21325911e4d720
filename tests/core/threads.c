/* Tests core/threads.c: every thread index runs exactly once per job, ranges tile [0,n) exactly,
   and a pool survives many consecutive jobs (the generation handshake). */
#include <stdatomic.h>
#include <string.h>

#include "core/threads.h"
#include "seer.h"
#include "tap.h"

struct job { _Atomic int hits[16]; _Atomic long long sum; long long n; };

static void count_fn(void *ctx, int ith, int nth)
{
    struct job *j = ctx;
    long long lo, hi, s = 0;
    atomic_fetch_add(&j->hits[ith], 1);
    threadpool_range(j->n, ith, nth, &lo, &hi);
    for (long long i = lo; i < hi; i++)
        s += i;
    atomic_fetch_add(&j->sum, s);
}

int main(void)
{
    plan_no_plan();
    for (int nt = 1; nt <= 5; nt += 2) {
        threadpool *pool;
        int rc = threadpool_create(nt, &pool);
        ok(rc == SEER_OK && threadpool_size(pool) == nt, "pool of %d threads created", nt);
        int all_ok = 1;
        for (int rep = 0; rep < 500; rep++) {
            struct job j;
            memset(&j, 0, sizeof j);
            j.n = 1000 + rep; /* not a multiple of the thread count in most reps */
            threadpool_run(pool, count_fn, &j);
            long long want = j.n * (j.n - 1) / 2;
            for (int i = 0; i < nt; i++)
                all_ok &= j.hits[i] == 1;
            all_ok &= j.sum == want;
        }
        ok(all_ok, "%d threads: 500 jobs, each thread ran once per job and ranges summed exactly", nt);
        threadpool_free(pool);
    }
    long long covered = 0, prev_hi = 0;
    int contiguous = 1;
    for (int ith = 0; ith < 7; ith++) {
        long long lo, hi;
        threadpool_range(100, ith, 7, &lo, &hi);
        contiguous &= lo == prev_hi && hi - lo >= 14 && hi - lo <= 15;
        covered += hi - lo;
        prev_hi = hi;
    }
    ok(contiguous && covered == 100, "threadpool_range splits 100 over 7 threads into contiguous 14/15 pieces");
    threadpool *bad;
    ok(threadpool_create(0, &bad) == SEER_EINVAL, "zero threads is rejected");
    threadpool_free(NULL);
    ok(1, "threadpool_free(NULL) is a no-op");
    return done_testing();
}
