/* fuzz_util.h — helpers shared by the libFuzzer targets in tests/fuzz/ (each fuzz_*.c is one
   target, built with SEER_FUZZ=ON; see docs/TESTING.md "Fuzzing"). The readers take paths, so
   an input is written to an in-memory file (memfd) and opened as /proc/self/fd/N: no disk
   traffic, and the reader sees exactly the regular file a user would give it. Header-only
   because each target is a single translation unit. */
#ifndef SEER_TESTS_FUZZ_UTIL_H
#define SEER_TESTS_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "seer.h"

/* Replaces the contents of in-memory file number `slot` (0..7) with data and returns its path
   (static storage, one per slot). Aborts on failure: that is a harness bug, not a finding. */
static inline const char *fz_file(int slot, const void *data, size_t n)
{
    static int fd[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    static char path[8][64];
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("seer-fuzz", 0);
        if (fd[slot] < 0)
            abort();
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) != 0 || (n && pwrite(fd[slot], data, n, 0) != (ssize_t)n))
        abort();
    return path[slot];
}

/* Splits data at the first occurrence of sep: the part before goes to *a, the rest to *b
   (empty when sep is absent). Lets one input carry two documents (a file and a text). */
static inline void fz_split(const uint8_t *data, size_t n, const char *sep, const uint8_t **a, size_t *na,
                            const uint8_t **b, size_t *nb)
{
    size_t sl = strlen(sep);
    const uint8_t *p = sl <= n ? memmem(data, n, sep, sl) : NULL;
    *a = data;
    *na = p ? (size_t)(p - data) : n;
    *b = p ? p + sl : data + n;
    *nb = p ? n - (size_t)(p - data) - sl : 0;
}

/* A NUL-terminated copy (malloc'ed) of n bytes. */
static inline char *fz_strndup(const uint8_t *s, size_t n)
{
    char *c = malloc(n + 1);
    if (!c)
        abort();
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

/* Every error path sets the thread's message; reading it proves it is a valid string. */
static inline void fz_check_message(int rc)
{
    if (rc != SEER_OK && strlen(seer_last_error()) == 0)
        abort(); /* an error without a message breaks the one-line-error contract */
    seer_err_clear();
}

static inline void fz_quiet(void) { seer_set_log_level(SEER_LOG_QUIET); }

#endif
