/* Tests core/threads.c: every thread index runs exactly once per job, ranges tile [0,n) exactly,
   a pool survives many consecutive jobs (the generation handshake), and a threadpool_queue hands
   every item of [0,n) to exactly one thread, in pieces of the stated size, for any n. */
#include <stdatomic.h>
#include <stdbool.h>
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

/* Items taken from a shared queue: each marks its item; a thread sleeps a little on its first
   piece now and then, so the others take more (the queue's point). */
struct qjob { threadpool_queue q; _Atomic unsigned char seen[5000]; _Atomic int pieces, bad_piece; };

static void queue_fn(void *ctx, int ith, int nth)
{
    struct qjob *j = ctx;
    long long lo, hi;
    int first = 1;
    (void)nth;
    while (threadpool_queue_take(&j->q, &lo, &hi)) {
        atomic_fetch_add(&j->pieces, 1);
        if (hi - lo > j->q.piece || (hi - lo < j->q.piece && hi != j->q.n) || lo >= hi)
            atomic_store(&j->bad_piece, 1);
        for (long long i = lo; i < hi; i++)
            atomic_fetch_add(&j->seen[i], 1);
        if (first && ith == 1)
            for (volatile int spin = 0; spin < 20000; spin++) {
            }
        first = 0;
    }
}

static void test_queue(void)
{
    static const long long ns[] = {0, 1, 3, 17, 64, 1000, 4999};
    for (int nt = 1; nt <= 3; nt++) {
        threadpool *pool;
        if (threadpool_create(nt, &pool) != SEER_OK) {
            ok(0, "pool of %d threads for the queue", nt);
            continue;
        }
        bool all = true;
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            for (long long min_piece = 1; min_piece <= 16; min_piece *= 4) {
                static struct qjob j;
                memset(&j, 0, sizeof j);
                threadpool_queue_init(&j.q, ns[k], nt, min_piece);
                threadpool_run(pool, queue_fn, &j);
                bool once = j.bad_piece == 0 && j.q.piece >= min_piece;
                for (long long i = 0; i < 5000; i++)
                    once &= j.seen[i] == (i < ns[k] ? 1 : 0);
                const long long want = (ns[k] + j.q.piece - 1) / j.q.piece;
                once &= j.pieces == want && (ns[k] < 8LL * nt * min_piece || j.q.piece == ns[k] / (8LL * nt));
                if (!once)
                    diag("queue: %d threads, n %lld, min piece %lld: %d pieces of %lld", nt, ns[k], min_piece,
                         (int)j.pieces, j.q.piece);
                all &= once;
            }
        ok(all, "%d threads: a queue hands each of n items (0 to 4999) to one thread exactly, in ceil(n / piece) "
                "pieces of n / (8 threads) items or min_piece", nt);
        threadpool_free(pool);
    }
}

int main(void)
{
    plan_no_plan();
    test_queue();
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
