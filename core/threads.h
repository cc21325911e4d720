/* threads.h — a persistent worker pool for the CPU backend. threadpool_run calls fn(ctx, ith, nth)
   on nth threads (the caller is thread 0) and returns when all are done. Between jobs the workers
   spin for a fraction of a millisecond (back-to-back jobs start without a kernel wake-up), then
   sleep on a condition variable, so an idle pool costs nothing. One job at a time per pool. */
#ifndef SEER_CORE_THREADS_H
#define SEER_CORE_THREADS_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct threadpool threadpool;
typedef void (*threadpool_fn)(void *ctx, int ith, int nth);

/* n_threads >= 1 (1: no workers, everything runs on the caller). */
int threadpool_create(int n_threads, threadpool **out);
void threadpool_free(threadpool *pool);
int threadpool_size(const threadpool *pool);
void threadpool_run(threadpool *pool, threadpool_fn fn, void *ctx);
/* Splits [0,n) into nth near-equal ranges; thread ith gets [*lo,*hi). */
void threadpool_range(long long n, int ith, int nth, long long *lo, long long *hi);

/* [0,n) handed out in pieces from a shared counter, for jobs whose items are independent: a
   thread that finishes early takes the next piece. With equal fixed ranges a thread that starts
   late or runs slower (another process on its core, a virtual CPU the host descheduled) kept the
   others spinning at the end of every job: a quarter of the worker's time in a 4-sequence decode
   step on this project's 2-core VM. Which thread computes an item never changes its result. */
typedef struct {
    atomic_llong next;
    long long n, piece;
} threadpool_queue;

/* About 8 pieces per thread, each at least min_piece items. Called before the job starts. */
void threadpool_queue_init(threadpool_queue *q, long long n, int n_threads, long long min_piece);
/* Takes the next piece [*lo,*hi); false when none is left. */
bool threadpool_queue_take(threadpool_queue *q, long long *lo, long long *hi);

#endif
