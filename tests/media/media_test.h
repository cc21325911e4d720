/* media_test.h — what the media/ TAP programs share: making the test files at run time (Pillow
   through tests/media/pil_ref.py, ffmpeg, libtiff-tools, poppler-utils), reading Pillow's
   reference decodes (PPM), and running shell tools quietly. A missing tool is a visible skip,
   and a failure when SEER_REQUIRE_ORACLES=1 (CI). */
#ifndef SEER_TESTS_MEDIA_TEST_H
#define SEER_TESTS_MEDIA_TEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/decode.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static char mt_python[64];

/* Runs a shell command line (printf-style); its output is captured, and shown when it fails. */
static inline int mt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int mt_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    cmd[0] = '(';
    int n = vsnprintf(cmd + 1, sizeof cmd - 2, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd - 2)
        return -1;
    strcat(cmd, ")");
    struct test_run r = test_run_cmd(cmd);
    if (r.status != 0)
        diag("command failed (%d): %s\n%s%s", r.status, cmd, r.out, r.err);
    int st = r.status;
    test_run_free(&r);
    return st;
}

static inline int mt_required(void)
{
    const char *e = getenv("SEER_REQUIRE_ORACLES");
    return e && !strcmp(e, "1");
}

/* A tool that is missing: a failure under SEER_REQUIRE_ORACLES=1, else a visible skip. */
static inline void mt_missing(const char *what, const char *name)
{
    if (mt_required())
        ok(0, "%s (missing: %s)", name, what);
    else
        skip(what, name);
}

static inline int mt_have(const char *cmd)
{
    char sub[1024];
    snprintf(sub, sizeof sub, "(%s)", cmd);
    struct test_run r = test_run_cmd(sub);
    int st = r.status;
    test_run_free(&r);
    return st == 0;
}

/* A python3 that imports PIL and numpy (the Debian one when a pyenv shim shadows it). */
static inline const char *mt_pil(void)
{
    static const char *cands[] = {"python3", "/usr/bin/python3"};
    if (mt_python[0])
        return mt_python;
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "%s -c 'import PIL.Image, numpy'", cands[i]);
        if (mt_have(cmd)) {
            snprintf(mt_python, sizeof mt_python, "%s", cands[i]);
            return mt_python;
        }
    }
    return NULL;
}

/* Reads a binary PPM (P6, maxval 255) into a malloc'ed RGB buffer; NULL when unreadable. */
static inline uint8_t *mt_read_ppm(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    int maxv = 0;
    uint8_t *px = NULL;
    if (fscanf(f, "P6 %d %d %d", w, h, &maxv) == 3 && maxv == 255 && fgetc(f) != EOF && *w > 0 && *h > 0) {
        size_t n = (size_t)*w * (size_t)*h * 3;
        px = malloc(n);
        if (px && fread(px, 1, n, f) != n) {
            free(px);
            px = NULL;
        }
    }
    fclose(f);
    return px;
}

/* Decodes page `page` of `path` with limits `lim` (NULL: defaults); SEER_OK or the error code. */
static inline int mt_decode(const char *path, const struct media_limits *lim, int page, struct image_rgb8 *im)
{
    media_doc *d = NULL;
    int rc = media_open(path, lim, &d);
    if (rc == SEER_OK)
        rc = media_decode_page(d, page, im);
    media_close(d);
    return rc;
}

/* Compares page `page` of `path` with Pillow's decode in "<path>.<page>.ppm" (or `ref` when not
   NULL): identical size, max |difference| per channel ≤ tol. */
static inline void mt_compare(const char *path, int page, const char *ref, const struct media_limits *lim,
                              int tol, const char *what)
{
    char refpath[1024];
    if (ref)
        snprintf(refpath, sizeof refpath, "%s", ref);
    else
        snprintf(refpath, sizeof refpath, "%s.%d.ppm", path, page);
    int rw = 0, rh = 0;
    uint8_t *rpx = mt_read_ppm(refpath, &rw, &rh);
    struct image_rgb8 im = {0};
    int rc = mt_decode(path, lim, page, &im);
    if (!ok(rc == SEER_OK && rpx, "%s: decodes (page %d)", what, page + 1)) {
        diag("rc %d: %s; reference %s %s", rc, seer_last_error(), refpath, rpx ? "read" : "missing");
    } else if (ok(im.width == rw && im.height == rh, "%s: %dx%d as Pillow", what, rw, rh)) {
        int maxd = 0;
        size_t at = 0, n = (size_t)rw * rh * 3;
        for (size_t i = 0; i < n; i++) {
            int dd = abs((int)im.px[i] - (int)rpx[i]);
            if (dd > maxd)
                maxd = dd, at = i;
        }
        /* tolerance stated by the caller next to each format (0 for lossless paths) */
        if (!ok(maxd <= tol, "%s: max |seer - Pillow| = %d <= %d", what, maxd, tol))
            diag("first largest difference at pixel (%zu, %zu) channel %zu: seer %d, Pillow %d", at / 3 % rw,
                 at / 3 / rw, at % 3, im.px[at], rpx[at]);
    } else {
        diag("seer decoded %dx%d", im.width, im.height);
    }
    image_rgb8_free(&im);
    free(rpx);
}

#endif
