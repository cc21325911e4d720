/* util.h — small helpers every module uses: overflow-checked size arithmetic, the allocation
   hook (tests fail the Nth allocation, as sqlite's fault injection does), tiered asserts,
   a monotonic clock. */
#ifndef SEER_CORE_UTIL_H
#define SEER_CORE_UTIL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Asserts are for invariants our own code guarantees; anything from a file, a user or a device
   is checked at runtime instead. Tier 1 is cheap (on unless SEER_ASSERT_LEVEL=0), tier 2 sits in
   inner loops (on only at SEER_ASSERT_LEVEL >= 2). */
#if SEER_ASSERT_LEVEL >= 1
#define ASSERT1(x) assert(x)
#else
#define ASSERT1(x) ((void)0)
#endif
#if SEER_ASSERT_LEVEL >= 2
#define ASSERT2(x) assert(x)
#else
#define ASSERT2(x) ((void)0)
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Overflow-checked arithmetic: store the result in *out and return true, or return false on
   overflow (leaving *out unspecified). Parsers call these before every allocation and offset. */
static inline bool size_mul(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool size_add(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool u64_mul(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool u64_add(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }
/* Rounds x up to a multiple of the power of two `align`; false on overflow. */
static inline bool size_align(size_t x, size_t align, size_t *out)
{
    size_t t;
    if (!size_add(x, align - 1, &t))
        return false;
    *out = t & ~(align - 1);
    return true;
}

/* All library allocations go through these so tests can inject failures. */
void *seer_malloc(size_t n);
void *seer_calloc(size_t count, size_t n);
void *seer_realloc(void *p, size_t n);
void *seer_aligned_alloc(size_t align, size_t n); /* release with seer_aligned_free */
void seer_aligned_free(void *p);
/* n zeroed bytes, 2 MiB-aligned and advised to the kernel as transparent huge pages (granted where
   the system allows: enabled=always or madvise); release with seer_large_free(p, n). Streaming
   reads (the CPU's weights) then take one TLB entry per 2 MiB instead of 512. */
void *seer_large_alloc(size_t n);
void seer_large_free(void *p, size_t n);
char *seer_strdup(const char *s);
/* Frees *pp and sets it to NULL (like av_freep). */
void seer_freep(void *pp);

/* Growable arrays: makes room for `need` elements of elem_bytes at *pp (a pointer to the array
   pointer), whose capacity *cap counts elements; capacity doubles from `first`, so n appends cost
   O(n). False on overflow or a failed allocation, with *pp and *cap untouched (the caller names
   what it was growing in its error). */
bool seer_grow(void *pp, size_t *cap, size_t need, size_t elem_bytes, size_t first);

/* Test hook: the Nth allocation from now (1 = the next) fails; 0 disables. Not thread-safe. */
void seer_alloc_fail_after(long n);

/* Monotonic seconds, for timings printed on stderr and in benchmarks. */
double seer_time_now(void);

#endif
