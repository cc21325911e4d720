/* util.c — allocation wrappers with a failure-injection hook (large-page ones too), and the clock. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, MAP_ANONYMOUS */
#include "core/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

#define LARGE_PAGE ((size_t)2 << 20)

void *seer_large_alloc(size_t n)
{
    if (alloc_should_fail() || n == 0 || n > SIZE_MAX - 2 * LARGE_PAGE)
        return NULL;
    /* over-map by one large page and trim both ends, so the start is aligned to it. The end is only
       page-rounded: a last partial 2 MiB stays in small pages instead of costing a whole large one */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (n + page - 1) / page * page, span = len + LARGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + LARGE_PAGE - 1) & ~(uintptr_t)(LARGE_PAGE - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + span > p + len)
        munmap(p + len, (size_t)(raw + span - (p + len)));
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE); /* advice only: without it the pages are 4 KiB, still correct */
#endif
    return p;
}

void seer_large_free(void *p, size_t n)
{
    if (p)
        munmap(p, n); /* the pages holding [p, p + n): the length allocated */
}

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
