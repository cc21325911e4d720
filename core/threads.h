/* threads.h — a persistent worker pool for the CPU backend. threadpool_run calls fn(ctx, ith, nth)
   on nth threads (the caller is thread 0) and returns when all are done. Between jobs the workers
   spin for a fraction of a millisecond (back-to-back jobs start without a kernel wake-up), then
   sleep on a condition variable, so an idle pool costs nothing. One job at a time per pool. */
#ifndef SEER_CORE_THREADS_H
#define SEER_CORE_THREADS_H

typedef struct threadpool threadpool;
typedef void (*threadpool_fn)(void *ctx, int ith, int nth);

/* n_threads >= 1 (1: no workers, everything runs on the caller). */
int threadpool_create(int n_threads, threadpool **out);
void threadpool_free(threadpool *pool);
int threadpool_size(const threadpool *pool);
void threadpool_run(threadpool *pool, threadpool_fn fn, void *ctx);
/* Splits [0,n) into nth near-equal ranges; thread ith gets [*lo,*hi). */
void threadpool_range(long long n, int ith, int nth, long long *lo, long long *hi);

#endif
