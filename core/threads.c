/* threads.c — persistent worker pool. A job is published by bumping a generation counter; the last
   worker to finish it counts `pending` down to zero. Both sides first spin for a short while
   (SPIN_SECONDS) and only then sleep on a condition variable: a decode step runs a few hundred
   short parallel ops back to back, and waking a sleeping thread through the kernel for each cost
   more than the op itself (0.8B Q8_0, 2 threads: 1.46× one thread with sleeping alone, llama.cpp's
   spinning pool 1.83×). The spin is bounded, so an idle pool, or one on a machine whose cores are
   all busy, costs at most that much per job before it sleeps.

   Wake-ups cannot be lost: a side that goes to sleep first announces it (n_sleeping,
   caller_sleeping) and then re-checks the condition under the mutex; the other side changes the
   condition and then reads the announcement (sequentially consistent atomics, Dekker's order), and
   signals under the mutex. */
#include "core/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long a worker waits for the next job, and the caller for the workers, before sleeping. */
#define SPIN_SECONDS 200e-6

struct threadpool {
    int n;                 /* threads including the caller */
    pthread_t *workers;    /* n-1 */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_ulong gen;      /* bumped per job */
    atomic_int pending;    /* workers still running the current job */
    atomic_int n_sleeping; /* workers in (or entering) the wait for a job */
    atomic_int caller_sleeping;
    atomic_int quit;
    threadpool_fn fn;      /* the current job, written before gen is bumped */
    void *ctx;
};

struct worker_arg { threadpool *pool; int ith; };

/* Spins until cond(pool, arg) holds or SPIN_SECONDS pass; returns whether it holds. */
static bool spin_until(threadpool *pool, bool (*cond)(threadpool *, unsigned long), unsigned long arg)
{
    double t0 = 0;
    for (unsigned i = 0;; i++) {
        if (cond(pool, arg))
            return true;
        if ((i & 63) == 0) { /* the clock is read now and then: it costs more than a pause */
            double t = seer_time_now();
            if (i == 0)
                t0 = t;
            else if (t - t0 > SPIN_SECONDS)
                return false;
        }
        cpu_relax();
    }
}

static bool new_job(threadpool *pool, unsigned long seen) { return atomic_load(&pool->gen) != seen || atomic_load(&pool->quit); }
static bool all_done(threadpool *pool, unsigned long unused)
{
    (void)unused;
    return atomic_load(&pool->pending) == 0;
}

static void *worker_main(void *p)
{
    struct worker_arg *wa = p;
    threadpool *pool = wa->pool;
    int ith = wa->ith;
    free(wa);
    unsigned long seen = 0;
    for (;;) {
        if (!spin_until(pool, new_job, seen)) {
            pthread_mutex_lock(&pool->mu);
            atomic_fetch_add(&pool->n_sleeping, 1);
            while (!new_job(pool, seen))
                pthread_cond_wait(&pool->wake, &pool->mu);
            atomic_fetch_sub(&pool->n_sleeping, 1);
            pthread_mutex_unlock(&pool->mu);
        }
        if (atomic_load(&pool->quit))
            return NULL;
        seen = atomic_load(&pool->gen);
        pool->fn(pool->ctx, ith, pool->n);
        if (atomic_fetch_sub(&pool->pending, 1) == 1 && atomic_load(&pool->caller_sleeping)) {
            pthread_mutex_lock(&pool->mu);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mu);
        }
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
    atomic_store(&pool->quit, 1);
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
    pool->fn = fn;
    pool->ctx = ctx;
    atomic_store(&pool->pending, pool->n - 1);
    atomic_fetch_add(&pool->gen, 1); /* publishes fn, ctx and pending to the workers */
    if (atomic_load(&pool->n_sleeping) > 0) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    }
    fn(ctx, 0, pool->n);
    if (!spin_until(pool, all_done, 0)) {
        pthread_mutex_lock(&pool->mu);
        atomic_store(&pool->caller_sleeping, 1);
        while (!all_done(pool, 0))
            pthread_cond_wait(&pool->done, &pool->mu);
        atomic_store(&pool->caller_sleeping, 0);
        pthread_mutex_unlock(&pool->mu);
    }
}

void threadpool_range(long long n, int ith, int nth, long long *lo, long long *hi)
{
    long long per = n / nth, rem = n % nth;
    *lo = ith * per + (ith < rem ? ith : rem);
    *hi = *lo + per + (ith < rem ? 1 : 0);
}

void threadpool_queue_init(threadpool_queue *q, long long n, int n_threads, long long min_piece)
{
    long long piece = n / (8LL * (n_threads > 0 ? n_threads : 1));
    q->n = n;
    q->piece = piece > min_piece ? piece : (min_piece > 0 ? min_piece : 1);
    atomic_init(&q->next, 0);
}

bool threadpool_queue_take(threadpool_queue *q, long long *lo, long long *hi)
{
    long long a = atomic_fetch_add_explicit(&q->next, q->piece, memory_order_relaxed);
    if (a >= q->n)
        return false;
    *lo = a;
    *hi = a + q->piece < q->n ? a + q->piece : q->n;
    return true;
}
