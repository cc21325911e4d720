/* pdf.c — seer_ocr_pdf_* (ocr/pdf.c): a searchable PDF of scans built by hand, read back with
   poppler's tools. pdftotext returns the lines in reading order (the text layer is real text),
   pdfinfo gives each page width*72/dpi points, pdfimages lists the scan at its pixel size, and
   pdftoppm at the page's dpi draws the scan itself: the hidden text must not show. The scans are
   random each run (SEER_TEST_SEED replays one). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "support/gguf_write.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

/* A clean scan: paper of one light colour (random each run, 200..255), so that any dark glyph
   showing through stands out, and resampling in the rasteriser cannot blur it into differences.
   It is no photo, so it is stored losslessly. */
static uint8_t *make_scan(int w, int h)
{
    uint8_t *rgb = malloc((size_t)w * (size_t)h * 3);
    uint8_t paper[3] = {(uint8_t)(200 + test_rand_u64() % 56), (uint8_t)(200 + test_rand_u64() % 56),
                        (uint8_t)(200 + test_rand_u64() % 56)};
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        memcpy(rgb + i * 3, paper, 3);
    return rgb;
}

/* Reads a binary PPM (P6, maxval 255) as pdftoppm writes it. */
static uint8_t *read_ppm(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    int maxval = 0;
    uint8_t *px = NULL;
    if (f && fscanf(f, "P6 %d %d %d", w, h, &maxval) == 3 && maxval == 255 && fgetc(f) != EOF && *w > 0 && *h > 0) {
        px = malloc((size_t)*w * (size_t)*h * 3);
        if (fread(px, 3, (size_t)*w * (size_t)*h, f) != (size_t)*w * (size_t)*h) {
            free(px);
            px = NULL;
        }
    }
    if (f)
        fclose(f);
    return px;
}

static struct test_run sh_out(const char *fmt, const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, path);
    return test_run_cmd(cmd);
}

/* Whether the lines occur in s in this order. */
static int in_order(const char *s, const char *const *lines, size_t n)
{
    const char *p = s;
    for (size_t i = 0; i < n; i++) {
        const char *q = strstr(p, lines[i]);
        if (!q) {
            diag("'%s' not found after offset %td", lines[i], p - s);
            return 0;
        }
        p = q + strlen(lines[i]);
    }
    return 1;
}

/* How far page `page` of the PDF at `path` is from the scan (w x h RGB): rendered with
   pdftoppm `render` (its resolution options), or, with render NULL, the image stored in the page
   as pdfimages extracts it. max 256 when it could not be had. */
struct diff {
    int max;
    double mean;
    size_t n_off; /* values more than 2 apart */
};

static struct diff page_vs_scan(const char *path, int page, const char *render, const uint8_t *scan, int w, int h)
{
    struct diff d = {256, 256.0, 0};
    const char *dir = test_tmp_dir();
    int made = render ? if_sh("pdftoppm %s -f %d -l %d -singlefile '%s' '%s/cmp'", render, page, page, path, dir) == 0
                      : if_sh("rm -f '%s'/cmp-*; pdfimages -f %d -l %d '%s' '%s/cmp' && mv '%s/cmp-000.ppm' '%s/cmp.ppm'", dir,
                              page, page, path, dir, dir, dir) == 0;
    char ppm[512];
    snprintf(ppm, sizeof ppm, "%s/cmp.ppm", dir);
    int pw = 0, ph = 0;
    uint8_t *px = made ? read_ppm(ppm, &pw, &ph) : NULL;
    if (px && pw == w && ph == h) {
        double sum = 0;
        d.max = 0;
        for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++) {
            int v = abs((int)px[i] - (int)scan[i]);
            d.max = v > d.max ? v : d.max;
            d.n_off += v > 2;
            sum += v;
        }
        d.mean = sum / ((double)w * h * 3);
    } else {
        diag("page %d of %s: no %dx%d image to compare (got %dx%d)", page, path, w, h, pw, ph);
    }
    free(px);
    return d;
}

/* ---- the document ---------------------------------------------------------------------------- */

/* Page 1: 850x1100 pixels at 100 dpi (US Letter, 612x792 points), three lines with boxes given in
   an order that is also their reading order; page 2 failed (image alone); page 3: 600x400 at an
   unknown dpi (300), with text the model gave without boxes, and what a C caller might pass. */
static seer_ocr_word p1_w0[] = {{"Invoice", {100, 100, 300, 140}, 90.0f}, {"2026-11", {320, 100, 500, 140}, 90.0f}};
static seer_ocr_line p1_lines[] = {
    {"Invoice 2026-11", {100, 100, 500, 140}, 1, 90.0f, p1_w0, 2},
    {"The quick brown fox jumps", {100, 200, 750, 240}, 1, -1.0f, NULL, 0},
    {"Total: 42 & <more>", {100, 300, 600, 350}, 1, -1.0f, NULL, 0},
};
static seer_ocr_block p1_blocks[] = {{{100, 100, 750, 350}, 1, p1_lines, 3}};
static const seer_ocr_page page1 = {0, 850, 1100, 100.0, p1_blocks, 1, 0};

static seer_ocr_line p3_lines[] = {
    {"first loose line", {0, 0, 600, 400}, 0, -1.0f, NULL, 0},
    {"second loose line", {0, 0, 600, 400}, 0, -1.0f, NULL, 0},
    {"漢字 Ärger ﬁx", {0, 0, 600, 400}, 0, -1.0f, NULL, 0}, /* glyphs "sans" may lack; a ligature */
    {"flat box", {10, 50, 300, 50}, 1, -1.0f, NULL, 0},       /* a box of no height: placed as box-less */
    {"bad \xFF byte", {0, 0, 600, 400}, 0, -1.0f, NULL, 0},  /* not UTF-8: cairo would refuse the page */
};
static seer_ocr_block p3_blocks[] = {{{0, 0, 600, 400}, 0, p3_lines, 5}};
static const seer_ocr_page page3 = {2, 600, 400, 0.0, p3_blocks, 1, 0};

static uint8_t *finish(seer_ocr_pdf *pdf, size_t *len)
{
    uint8_t *bytes = NULL;
    int rc = seer_ocr_pdf_finish(pdf, &bytes, len);
    if (!ok(rc == SEER_OK && bytes && *len > 8 && !memcmp(bytes, "%PDF-", 5), "finished: a PDF of %zu bytes", *len))
        diag("rc %d: %s", rc, seer_last_error());
    return rc == SEER_OK ? bytes : NULL;
}

static int have(const char *tool)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null", tool);
    return if_sh("%s", cmd) == 0;
}

static void test_document(void)
{
    uint8_t *scan1 = make_scan(850, 1100), *scan2 = make_scan(300, 200), *scan3 = make_scan(600, 400);
    seer_ocr_pdf *pdf = NULL;
    ok(seer_ocr_pdf_create(&pdf) == SEER_OK && pdf, "create");
    ok(seer_ocr_pdf_add(pdf, scan1, 850, 1100, &page1) == SEER_OK, "page 1: scan and three lines");
    ok(seer_ocr_pdf_add(pdf, scan2, 300, 200, NULL) == SEER_OK, "page 2: the scan alone (a failed page)");
    ok(seer_ocr_pdf_add(pdf, scan3, 600, 400, &page3) == SEER_OK, "page 3: box-less lines, dpi unknown");
    ok(seer_ocr_pdf_add(pdf, scan3, 601, 400, &page3) == SEER_EINVAL && strstr(seer_last_error(), "600x400"),
       "a layout for another size is refused, naming both");
    size_t len = 0;
    uint8_t *bytes = finish(pdf, &len);
    char path[512];
    snprintf(path, sizeof path, "%s/out.pdf", test_tmp_dir());
    if (bytes)
        write_file(path, bytes, len);
    free(bytes);
    const char *why = !bytes ? "no PDF was made" : NULL;

    if (why || !have("pdfinfo")) {
        skip(why ? why : "pdfinfo (poppler-utils) is not installed", "pdfinfo: pages and sizes");
    } else {
        struct test_run r = sh_out("pdfinfo -f 1 -l 3 '%s'", path);
        /* page 1: 850x1100 px at 100 dpi; page 2: the dpi before it (100); page 3: 300 dpi */
        ok(r.status == 0 && strstr(r.out, "Pages:           3") && strstr(r.out, "Page    1 size:  612 x 792 pts") &&
               strstr(r.out, "Page    2 size:  216 x 144 pts") && strstr(r.out, "Page    3 size:  144 x 96 pts"),
           "pdfinfo: 3 pages of 612x792, 216x144 (a failed page keeps the dpi before it) and 144x96 (300 dpi) points");
        if (r.status || !strstr(r.out, "612 x 792"))
            diag("%s%s", r.out, r.err);
        test_run_free(&r);
    }

    if (why || !have("pdftotext")) {
        skip(why ? why : "pdftotext (poppler-utils) is not installed", "pdftotext: the text in reading order");
    } else {
        const char *lines[] = {"Invoice 2026-11", "The quick brown fox jumps", "Total: 42 & <more>", "first loose line",
                               "second loose line", "漢字 Ärger ﬁx", "flat box",
                               "bad \xEF\xBF\xBD byte"};
        struct test_run r = sh_out("pdftotext '%s' -", path);
        if (!ok(r.status == 0 && in_order(r.out, lines, 8), "pdftotext returns every line, in reading order"))
            diag("pdftotext said:\n%s", r.out);
        test_run_free(&r);
        r = sh_out("pdftotext -layout '%s' -", path);
        if (!ok(r.status == 0 && in_order(r.out, lines, 8), "pdftotext -layout too"))
            diag("pdftotext -layout said:\n%s", r.out);
        test_run_free(&r);
        /* where the text is: each line's box in points (pixels * 72 / 100) as pdftotext finds
           it, within 1 point (a third of a pixel's error in placing the glyphs is allowed) */
        r = sh_out("pdftotext -bbox-layout -f 1 -l 1 '%s' -", path);
        const char *p = r.out;
        int n = 0, near = 0;
        for (; (p = strstr(p, "<line ")) != NULL; p++, n++) {
            double x0, y0, x1, y1;
            const seer_box *b = n < 3 ? &p1_lines[n].box : NULL;
            if (b && sscanf(p, "<line xMin=\"%lf\" yMin=\"%lf\" xMax=\"%lf\" yMax=\"%lf\"", &x0, &y0, &x1, &y1) == 4) {
                int good = fabs(x0 - b->x0 * 0.72) <= 1 && fabs(y0 - b->y0 * 0.72) <= 1 && fabs(x1 - b->x1 * 0.72) <= 1 &&
                           fabs(y1 - b->y1 * 0.72) <= 1;
                near += good;
                if (!good)
                    diag("line %d at %.1f %.1f %.1f %.1f points, its box is %.1f %.1f %.1f %.1f", n + 1, x0, y0, x1, y1,
                         b->x0 * 0.72, b->y0 * 0.72, b->x1 * 0.72, b->y1 * 0.72);
            }
        }
        ok(r.status == 0 && n == 3 && near == 3, "each line's text covers its box (3 lines, %d found, %d within 1 point)", n, near);
        test_run_free(&r);
        /* page 2 holds no text: pdftotext of it alone is empty but for the page break */
        r = sh_out("pdftotext -f 2 -l 2 '%s' -", path);
        ok(r.status == 0 && strspn(r.out, " \n\f") == strlen(r.out), "the failed page has no text");
        test_run_free(&r);
    }

    if (why || !have("pdfimages")) {
        skip(why ? why : "pdfimages (poppler-utils) is not installed", "pdfimages: one image per page at its pixel size");
    } else {
        struct test_run r = sh_out("pdfimages -list '%s'", path);
        int n = 0, good = 0;
        for (char *l = strtok(r.out, "\n"); l; l = strtok(NULL, "\n")) {
            int page, num, w, h;
            char type[16], color[16];
            if (sscanf(l, "%d %d %15s %d %d %15s", &page, &num, type, &w, &h, color) == 6) {
                n++;
                good += !strcmp(type, "image") && !strcmp(color, "rgb") &&
                        ((page == 1 && w == 850 && h == 1100) || (page == 2 && w == 300 && h == 200) ||
                         (page == 3 && w == 600 && h == 400));
            }
        }
        ok(r.status == 0 && n == 3 && good == 3, "pdfimages: 3 RGB images, 850x1100, 300x200, 600x400 (%d listed, %d right)", n, good);
        test_run_free(&r);
    }

    if (why || !have("pdftoppm") || !have("pdfimages")) {
        skip(why ? why : "pdftoppm or pdfimages (poppler-utils) is not installed", "page 1 stores and shows the scan");
    } else {
        struct diff d = page_vs_scan(path, 1, "-r 100", scan1, 850, 1100);
        /* Drawn at its own dpi a page of flat paper is that paper exactly, up to rounding in the
           rasteriser (2 levels); text showing through would put glyph pixels (near 0) on paper
           of 200 or more. */
        if (!ok(d.max <= 2, "page 1 rendered at 100 dpi is the scan: largest difference %d (at most 2)", d.max))
            diag("%zu values differ by more than 2", d.n_off);
        d = page_vs_scan(path, 1, NULL, scan1, 850, 1100);
        ok(d.max == 0, "and the image in the file is the scan, losslessly (largest difference %d)", d.max);
    }
    free(scan1);
    free(scan2);
    free(scan3);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void test_errors(void)
{
    seer_ocr_pdf *pdf = NULL;
    uint8_t px[3] = {1, 2, 3}, *bytes = (uint8_t *)1;
    size_t len = 5;
    ok(seer_ocr_pdf_create(&pdf) == SEER_OK, "create");
    ok(seer_ocr_pdf_add(pdf, NULL, 1, 1, NULL) == SEER_EINVAL, "no pixels: SEER_EINVAL");
    ok(seer_ocr_pdf_add(pdf, px, 0, 1, NULL) == SEER_EINVAL, "a 0-pixel-wide page: SEER_EINVAL");
    ok(seer_ocr_pdf_finish(pdf, &bytes, &len) == SEER_EINVAL && !bytes && !len && strstr(seer_last_error(), "no pages"),
       "finishing a document without pages: SEER_EINVAL (and it is freed)");
    ok(seer_ocr_pdf_create(&pdf) == SEER_OK && seer_ocr_pdf_add(pdf, px, 1, 1, NULL) == SEER_OK, "a 1x1 page");
    seer_ocr_pdf_free(pdf); /* unfinished: freed without a leak (valgrind, sanitizers) */

    /* no memory while a page's text is drawn (its one allocation: the U+FFFD copy of a line that
       is not UTF-8): the page may be in the file in part, so the document refuses more */
    seer_ocr_line l = {"bad \xFF", {0, 0, 1, 1}, 1, -1.0f, NULL, 0};
    seer_ocr_block b = {{0, 0, 1, 1}, 1, &l, 1};
    seer_ocr_page p = {0, 1, 1, 72.0, &b, 1, 0};
    ok(seer_ocr_pdf_create(&pdf) == SEER_OK, "create");
    seer_alloc_fail_after(1);
    int rc = seer_ocr_pdf_add(pdf, px, 1, 1, &p);
    seer_alloc_fail_after(0);
    ok(rc == SEER_ENOMEM, "no memory for a page's text: SEER_ENOMEM (%d)", rc);
    ok(seer_ocr_pdf_add(pdf, px, 1, 1, NULL) == SEER_EINVAL && strstr(seer_last_error(), "failed before"),
       "then no page more: SEER_EINVAL");
    ok(seer_ocr_pdf_finish(pdf, &bytes, &len) == SEER_EINVAL && !bytes && strstr(seer_last_error(), "failed"),
       "and no document: SEER_EINVAL (and it is freed)");
    seer_ocr_pdf_free(NULL);
}

/* ---- size ------------------------------------------------------------------------------------ */

/* A photo-like 1700x2200 page (letter at 200 dpi): smooth shading plus sensor grain, which
   lossless compression cannot squeeze (Flate keeps 83% of the raw bytes, 9.4 MB). With turbojpeg
   in the build (SEER_HAVE_FFMPEG) it is stored as a JPEG of quality 90; without, losslessly, and
   then only "not larger than raw" can be asked. */
static void test_photo_size(void)
{
    const int w = 1700, h = 2200;
    uint8_t *rgb = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                double v = 128 + 90 * sin(x / (60.0 + 20 * c)) * cos(y / 85.0) + (double)(test_rand_u64() % 9) - 4;
                rgb[((size_t)y * w + x) * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    seer_ocr_page page = {0, w, h, 200.0, NULL, 0, 0};
    seer_ocr_pdf *pdf = NULL;
    size_t len = 0;
    uint8_t *bytes = NULL;
    if (seer_ocr_pdf_create(&pdf) == SEER_OK && seer_ocr_pdf_add(pdf, rgb, w, h, &page) == SEER_OK)
        bytes = finish(pdf, &len);
    else
        seer_ocr_pdf_free(pdf);
    size_t raw = (size_t)w * h * 3;
    char path[512];
    snprintf(path, sizeof path, "%s/photo.pdf", test_tmp_dir());
    if (bytes)
        write_file(path, bytes, len);
    free(bytes);
#ifdef SEER_HAVE_FFMPEG
    ok(bytes && len < raw / 8, "a 1700x2200 photo-like page: %zu bytes, %.1f%% of its %zu raw bytes (under 12.5%%)", len,
       100.0 * (double)len / (double)raw, raw);
    if (!bytes || !have("pdfimages") || !have("pdftoppm")) {
        skip(bytes ? "pdfimages or pdftoppm (poppler-utils) is not installed" : "no PDF was made", "the photo is a JPEG that looks like it");
    } else {
        struct test_run r = sh_out("pdfimages -list '%s'", path);
        ok(r.status == 0 && strstr(r.out, " jpeg "), "pdfimages lists the photo as a JPEG");
        test_run_free(&r);
        /* JPEG at quality 90 moves grain of ±4 levels by a few levels on average; a page that
           lost its picture would be off by tens */
        struct diff d = page_vs_scan(path, 1, "-r 200", rgb, w, h);
        ok(d.mean < 4.0, "rendered at 200 dpi it is the photo: mean difference %.2f levels (under 4), largest %d", d.mean, d.max);
    }
#else
    ok(bytes && len < raw, "a 1700x2200 photo-like page, lossless without turbojpeg: %zu bytes, %.0f%% of %zu raw", len,
       100.0 * (double)len / (double)raw, raw);
#endif
    free(rgb);
}

int main(void)
{
    plan_no_plan();
    test_seed();
#ifndef SEER_HAVE_CAIRO
    seer_ocr_pdf *pdf = (seer_ocr_pdf *)1;
    ok(seer_ocr_pdf_create(&pdf) == SEER_EUNSUPPORTED && !pdf && strstr(seer_last_error(), "cairo"),
       "without cairo: SEER_EUNSUPPORTED, saying so");
    skip("this build has no cairo", "the searchable PDF");
    return done_testing();
#else
    test_document();
    test_errors();
    test_photo_size();
    return done_testing();
#endif
}
