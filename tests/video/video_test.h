/* video_test.h — what the video tests (tests/video/, tests/cli/describe.c) share: running a
   shell command quietly (its output shown with diag() when it fails), and reading a whole file. */
#ifndef SEER_TESTS_VIDEO_TEST_H
#define SEER_TESTS_VIDEO_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/testutil.h"
#include "tap.h"

/* printf-style command line, run through the shell; returns its exit status. */
static inline int vt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int vt_sh(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    cmd[0] = '(';
    int n = vsnprintf(cmd + 1, sizeof cmd - 2, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd - 2) {
        diag("vt_sh: command line too long");
        return -1;
    }
    snprintf(cmd + 1 + n, 2, ")");
    struct test_run r = test_run_cmd(cmd);
    if (r.status != 0)
        diag("command failed (%d): %s\n%s%s", r.status, cmd, r.out, r.err);
    int st = r.status;
    test_run_free(&r);
    return st;
}

/* A python3 that imports numpy and PIL ("python3", else Debian's /usr/bin/python3), or NULL. */
static inline const char *vt_python(void)
{
    static const char *found;
    static int tried;
    if (!tried) {
        tried = 1;
        if (system("python3 -c 'import numpy, PIL' >/dev/null 2>&1") == 0)
            found = "python3";
        else if (system("/usr/bin/python3 -c 'import numpy, PIL' >/dev/null 2>&1") == 0)
            found = "/usr/bin/python3";
    }
    return found;
}

/* The bytes of a file (malloc'ed, *n set), or NULL. */
static inline unsigned char *vt_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long len;
    if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    if (b)
        *n = (size_t)len;
    if (f)
        fclose(f);
    return b;
}

#endif
