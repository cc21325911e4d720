/* util.c — allocation wrappers with a failure-injection hook, and the clock. */
#define _POSIX_C_SOURCE 200809L
#include "core/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seer.h"

static long alloc_countdown; /* 0: never fail; n: the nth allocation from now fails */

void seer_alloc_fail_after(long n) { alloc_countdown = n; }

static bool alloc_should_fail(void)
{
    if (alloc_countdown <= 0)
        return false;
    return --alloc_countdown == 0;
}

void *seer_malloc(size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *seer_calloc(size_t count, size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return calloc(count ? count : 1, n ? n : 1);
}

void *seer_realloc(void *p, size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void *seer_aligned_alloc(size_t align, size_t n)
{
    if (alloc_should_fail())
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    return p;
}

void seer_aligned_free(void *p) { free(p); }

bool seer_grow(void *pp, size_t *cap, size_t need, size_t elem_bytes, size_t first)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : MAX(first, (size_t)1), bytes;
    while (c < need)
        c = c > SIZE_MAX / 2 ? need : c * 2;
    if (!size_mul(c, elem_bytes, &bytes))
        return false;
    void *old, *p;
    memcpy(&old, pp, sizeof old);
    if (!(p = seer_realloc(old, bytes)))
        return false;
    memcpy(pp, &p, sizeof p);
    *cap = c;
    return true;
}

char *seer_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = seer_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void seer_freep(void *pp)
{
    void **p = pp;
    free(*p);
    *p = NULL;
}

void seer_free(void *p) { free(p); }

double seer_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
