/* threads.c — persistent worker pool: a generation counter wakes workers for each job; the last
   worker to finish signals the caller. */
#include "core/threads.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/util.h"

struct threadpool {
    int n;                 /* threads including the caller */
    pthread_t *workers;    /* n-1 */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long gen;     /* bumped per job */
    int pending;           /* workers still running the current job */
    int quit;
    threadpool_fn fn;
    void *ctx;
};

struct worker_arg { threadpool *pool; int ith; };

static void *worker_main(void *p)
{
    struct worker_arg *wa = p;
    threadpool *pool = wa->pool;
    int ith = wa->ith;
    free(wa);
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool->mu);
        while (pool->gen == seen && !pool->quit)
            pthread_cond_wait(&pool->wake, &pool->mu);
        if (pool->quit) {
            pthread_mutex_unlock(&pool->mu);
            return NULL;
        }
        seen = pool->gen;
        threadpool_fn fn = pool->fn;
        void *ctx = pool->ctx;
        pthread_mutex_unlock(&pool->mu);
        fn(ctx, ith, pool->n);
        pthread_mutex_lock(&pool->mu);
        if (--pool->pending == 0)
            pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->mu);
    }
}

int threadpool_create(int n_threads, threadpool **out)
{
    if (n_threads < 1 || n_threads > 1024)
        return seer_err(SEER_EINVAL, "thread count %d is outside 1..1024", n_threads);
    threadpool *pool = seer_calloc(1, sizeof *pool);
    if (!pool)
        return seer_err(SEER_ENOMEM, "no memory for a thread pool");
    pool->n = 1; /* counts threads actually started, so a failed start joins only those */
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->workers = seer_calloc((size_t)n_threads, sizeof(pthread_t));
    if (!pool->workers)
        goto fail;
    for (int i = 1; i < n_threads; i++) {
        struct worker_arg *wa = seer_malloc(sizeof *wa);
        if (!wa)
            goto fail;
        wa->pool = pool;
        wa->ith = i;
        if (pthread_create(&pool->workers[i - 1], NULL, worker_main, wa) != 0) {
            free(wa);
            goto fail;
        }
        pool->n = i + 1;
    }
    *out = pool;
    return SEER_OK;
fail:
    threadpool_free(pool);
    return seer_err(SEER_ENOMEM, "could not start %d threads", n_threads);
}

void threadpool_free(threadpool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 1; i < pool->n; i++)
        if (pool->workers[i - 1])
            pthread_join(pool->workers[i - 1], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    free(pool->workers);
    free(pool);
}

int threadpool_size(const threadpool *pool) { return pool->n; }

void threadpool_run(threadpool *pool, threadpool_fn fn, void *ctx)
{
    if (pool->n == 1) {
        fn(ctx, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->fn = fn;
    pool->ctx = ctx;
    pool->pending = pool->n - 1;
    pool->gen++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    fn(ctx, 0, pool->n);
    pthread_mutex_lock(&pool->mu);
    while (pool->pending > 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void threadpool_range(long long n, int ith, int nth, long long *lo, long long *hi)
{
    long long per = n / nth, rem = n % nth;
    *lo = ith * per + (ith < rem ? ith : rem);
    *hi = *lo + per + (ith < rem ? 1 : 0);
}
