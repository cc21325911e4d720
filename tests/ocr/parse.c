/* Tests seer_ocr_parse (ocr/layout.c, ocr/scan.c): the recorded answers in
   tests/data/ocr/answers (SOURCES.md says which are Qwen's shapes and which are made up), boxes
   through both coordinate conventions on odd pages, truncation at every byte, confidences from a
   hand-built logprobs array, word boxes, UTF-8, linear time on large hostile answers and
   allocation failures. Every expected value is worked out by hand from the input (the rule is
   x_px = floor/ceil(x * width / units), units 1000 or the model's pixels), never from the code. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static seer_ocr_geometry rel(int32_t w, int32_t h)
{
    return (seer_ocr_geometry){.width = w, .height = h, .coords = SEER_OCR_COORDS_REL1000};
}

static seer_ocr_geometry pix(int32_t w, int32_t h, int32_t mw, int32_t mh)
{
    return (seer_ocr_geometry){.width = w, .height = h, .model_width = mw, .model_height = mh,
                               .coords = SEER_OCR_COORDS_MODEL_PIXELS};
}

/* Parses text[0..n) (copied, so a cut answer has no bytes past n to read); NULL on failure. */
static seer_ocr_page *parse_n(const char *text, size_t n, seer_ocr_geometry g)
{
    char *copy = malloc(n + 1);
    memcpy(copy, text, n);
    copy[n] = 0;
    seer_result r;
    memset(&r, 0, sizeof r);
    r.text = copy;
    r.text_len = n;
    seer_ocr_page *pg = NULL;
    int rc = seer_ocr_parse(&r, &g, &pg);
    free(copy);
    if (rc != SEER_OK)
        diag("seer_ocr_parse: %d %s", rc, seer_last_error());
    return pg;
}

static seer_ocr_page *parse(const char *text, seer_ocr_geometry g) { return parse_n(text, strlen(text), g); }

static void cat(char **s, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char **s, size_t *n, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *n + (size_t)k + 1);
    memcpy(*s + *n, tmp, (size_t)k + 1);
    *n += (size_t)k;
}

/* "dropped=N" then one row per line: "BLOCK X0,Y0,X1,Y1 TEXT", or "BLOCK - TEXT" without a box. */
static char *dump(const seer_ocr_page *pg)
{
    char *s = NULL;
    size_t n = 0;
    cat(&s, &n, "dropped=%d\n", (int)pg->n_dropped);
    for (size_t b = 0; b < pg->n_blocks; b++)
        for (size_t l = 0; l < pg->blocks[b].n_lines; l++) {
            const seer_ocr_line *ln = &pg->blocks[b].lines[l];
            if (ln->has_box)
                cat(&s, &n, "%zu %d,%d,%d,%d %s\n", b, (int)ln->box.x0, (int)ln->box.y0, (int)ln->box.x1,
                    (int)ln->box.y1, ln->text);
            else
                cat(&s, &n, "%zu - %s\n", b, ln->text);
        }
    return s;
}

static size_t n_lines(const seer_ocr_page *pg, int boxed_only)
{
    size_t n = 0;
    for (size_t b = 0; b < pg->n_blocks; b++)
        for (size_t l = 0; l < pg->blocks[b].n_lines; l++)
            n += !boxed_only || pg->blocks[b].lines[l].has_box;
    return n;
}

static int has_space(const char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            return 1;
    return 0;
}

/* What every page must satisfy: boxes ordered and inside the page, a box-less line with the
   page's box, words tiling their line's box left to right, texts valid UTF-8 without whitespace
   in words, confidences -1 or within 0..100. Returns the number of violations (each diagnosed). */
static int invariants(const seer_ocr_page *pg)
{
    int bad = 0;
#define EXPECT(c, ...)            \
    do {                          \
        if (!(c)) {               \
            if (bad++ < 5)        \
                diag(__VA_ARGS__); \
        }                         \
    } while (0)
    for (size_t b = 0; b < pg->n_blocks; b++) {
        const seer_ocr_block *bl = &pg->blocks[b];
        EXPECT(bl->n_lines > 0, "block %zu has no line", b);
        EXPECT(b + 1 == pg->n_blocks || bl->has_box, "a box-less block %zu is not the last", b);
        for (size_t l = 0; l < bl->n_lines; l++) {
            const seer_ocr_line *ln = &bl->lines[l];
            seer_box x = ln->box;
            EXPECT(0 <= x.x0 && x.x0 <= x.x1 && x.x1 <= pg->width && 0 <= x.y0 && x.y0 <= x.y1 && x.y1 <= pg->height,
                   "line box %d,%d,%d,%d outside the %dx%d page", x.x0, x.y0, x.x1, x.y1, pg->width, pg->height);
            EXPECT(ln->has_box == bl->has_box, "line and block disagree on having a box");
            EXPECT(ln->has_box || (x.x0 == 0 && x.y0 == 0 && x.x1 == pg->width && x.y1 == pg->height),
                   "a box-less line's box is not the page");
            EXPECT(!ln->has_box || (x.x0 < x.x1 && x.y0 <= x.y1), "a line's box has no width");
            EXPECT(ln->has_box ? (bl->box.x0 <= x.x0 && x.x1 <= bl->box.x1 && bl->box.y0 <= x.y0 && x.y1 <= bl->box.y1) : 1,
                   "line outside its block");
            EXPECT(ln->text[0] && utf8_check(ln->text, strlen(ln->text)) == strlen(ln->text), "line text empty or not UTF-8");
            EXPECT(ln->conf == -1 || (ln->conf >= 0 && ln->conf <= 100), "line conf %g", ln->conf);
            EXPECT(ln->n_words > 0, "line without words");
            for (size_t w = 0; w < ln->n_words; w++) {
                const seer_ocr_word *wd = &ln->words[w];
                EXPECT(wd->text[0] && !has_space(wd->text) &&
                           utf8_check(wd->text, strlen(wd->text)) == strlen(wd->text) && strstr(ln->text, wd->text),
                       "word '%s' of line '%s'", wd->text, ln->text);
                EXPECT(wd->box.y0 == x.y0 && wd->box.y1 == x.y1, "word not as tall as its line");
                EXPECT(wd->box.x0 == (w ? ln->words[w - 1].box.x1 : x.x0), "words do not tile the line");
                EXPECT(wd->box.x0 <= wd->box.x1, "word box reversed");
                EXPECT(wd->conf == -1 || (wd->conf >= 0 && wd->conf <= 100), "word conf %g", wd->conf);
            }
            EXPECT(ln->words[ln->n_words - 1].box.x1 == x.x1, "the last word does not end at the line's end");
        }
    }
#undef EXPECT
    return bad;
}

static void check_fixture(const char *file, seer_ocr_geometry g, const char *want)
{
    char rel_path[256];
    snprintf(rel_path, sizeof rel_path, "tests/data/ocr/answers/%s", file);
    char *text = test_slurp(test_src_path(rel_path));
    if (!ok(text != NULL, "%s: read", file))
        return;
    seer_ocr_page *pg = parse(text, g);
    if (ok(pg != NULL, "%s: parsed", file)) {
        char *got = dump(pg);
        if (!ok(!strcmp(got, want), "%s: blocks, lines, boxes and drops as worked out by hand", file))
            diag("got:\n%swant:\n%s", got, want);
        ok(invariants(pg) == 0, "%s: page invariants", file);
        free(got);
    }
    seer_ocr_page_free(pg);
    free(text);
}

static void test_fixtures(void)
{
    /* 2000x1000 pages with 0..1000 units: x doubles, y stays */
    check_fixture("qwen3_spotting.txt", rel(2000, 1000),
                  "dropped=0\n0 240,45,1760,90 INVOICE No. 2024-117\n1 240,110,1080,140 Date: 12 March 2024\n"
                  "2 1200,110,1760,140 Total: 1,250.00\n");
    /* Qwen2.5-VL's recorded answer: the model saw 868x1400 of an 870x1398 page (the cookbook's
       numbers); x*870/868 and y*1398/1400 rounded outwards, e.g. 754*870/868 = 755.7 -> 756 */
    check_fixture("qwen25_receipt.txt", pix(870, 1398, 868, 1400),
                  "dropped=0\n0 125,168,756,208 UNIHAKKA INTERNATIONAL SDN BHD\n1 325,209,551,238 01 Jun 2018 18:41\n"
                  "2 358,251,520,278 (867388-U)\n3 168,285,708,320 12, Jalan Tampoi 7/4,Kawasan Perindustrian\n"
                  "4 231,323,640,358 Tampoi,81200 Johor Bahru,Johor\n");
    check_fixture("grounding_label.txt", rel(2000, 1000), "dropped=0\n0 200,700,600,950 cat\n1 700,650,1100,850 dog\n");
    check_fixture("text_keys.txt", rel(2000, 1000), "dropped=0\n0 0,0,1000,50 Heading\n1 0,60,2000,100 Body line\n");
    /* the image's <div>/<img> hold no text and give no block; the table's own text is only its
       cells'; <br> splits a paragraph's box into two bands of 40 */
    check_fixture("qwenvl_html.txt", rel(2000, 1000),
                  "dropped=0\n0 620,94,1316,132 Quarterly Report\n1 854,154,1084,182 R&D Team\n"
                  "2 198,339,1738,400 Costs <5% \xe2\x80\x94 see table 1 \xe2\x86\x92 below.\n"
                  "3 200,420,1000,460 Item\n4 1000,420,1800,460 Price\n5 200,460,1000,500 Tea \"green\"\n"
                  "6 1000,460,1800,500 3'50\n7 198,520,1738,560 First line\n7 198,560,1738,600 second line\n");
    check_fixture("plain.txt", rel(2000, 1000),
                  "dropped=0\n0 - Auntie Anne's\n0 - CINNAMON SUGAR\n0 - 1 x 17,000\n0 - SUB TOTAL\n0 - 17,000\n");
    check_fixture("truncated.txt", rel(2000, 1000), "dropped=1\n0 200,100,800,150 alpha beta\n1 200,200,800,250 gamma\n");
    /* a missing comma is tolerated; a missing colon, an object with no known key and the object
       whose string never closes (it swallows the rest) are dropped */
    check_fixture("malformed.txt", rel(2000, 1000),
                  "dropped=3\n0 20,10,200,50 no comma\n1 20,100,200,150 ok one\n2 20,200,200,250 single quoted\n"
                  "3 20,300,200,350 bare keys\n");
    check_fixture("overlap.txt", rel(2000, 1000),
                  "dropped=0\n0 200,100,1200,200 first\n1 600,150,1600,250 second\n2 200,100,1200,200 first\n");
    /* x -50..1200 clamps to 0..1000; a box wholly right of the page has no area left */
    check_fixture("out_of_page.txt", rel(2000, 1000),
                  "dropped=0\n0 0,900,2000,1000 bottom edge\n1 0,0,2000,1000 whole page\n2 - right of page\n");
    check_fixture("reversed.txt", rel(2000, 1000), "dropped=0\n0 400,100,1600,300 reversed corners\n1 - zero width\n");
    check_fixture("missing_box.txt", rel(2000, 1000),
                  "dropped=0\n0 200,100,1800,150 Boxed line\n1 200,200,1800,250 Another boxed\n"
                  "2 - Here is the text I found:\n2 - No box here\n2 - Some text could not be located.\n");
    check_fixture("non_numeric.txt", rel(2000, 1000),
                  "dropped=1\n0 - letters\n0 - three numbers\n0 - null box\n0 - one string\n");
    check_fixture("huge.txt", rel(2000, 1000),
                  "dropped=0\n0 0,0,2000,100 infinite\n1 0,100,2000,200 twenty digits\n2 500,300,1500,350 exponents\n");
    check_fixture("nested.txt", rel(2000, 1000),
                  "dropped=0\n0 200,100,1000,150 pairs of corners\n1 200,200,1000,250 doubly nested\n"
                  "2 200,300,1000,350 quadrilateral\n3 1200,600,1400,650 array in array\n");
    check_fixture("escaped_unicode.txt", rel(2000, 1000),
                  "dropped=0\n0 200,100,1800,200 caf\xc3\xa9 \"quoted\" \xf0\x9f\x98\x80\n1 200,300,1800,350 first\n"
                  "1 200,350,1800,400 second\n2 200,500,1800,600 \xe6\x9d\xb1\xe4\xba\xac\xe9\x83\xbd "
                  "\xe6\xb8\x8b\xe8\xb0\xb7\xe5\x8c\xba\n3 200,700,1800,800 bad \xef\xbf\xbd surrogate \xef\xbf\xbd nul\n");
}

/* One item [x1, y1, x2, y2] through geometry g: the line's box, or has_box 0. */
static int one_box(const char *box, seer_ocr_geometry g, seer_box *out)
{
    char text[256];
    snprintf(text, sizeof text, "[{\"bbox_2d\": %s, \"text_content\": \"w\"}]", box);
    seer_ocr_page *pg = parse(text, g);
    int has = -1;
    if (pg && pg->n_blocks == 1 && pg->blocks[0].n_lines == 1) {
        *out = pg->blocks[0].lines[0].box;
        has = pg->blocks[0].lines[0].has_box;
    }
    seer_ocr_page_free(pg);
    return has;
}

static void box_is(const char *box, seer_ocr_geometry g, int x0, int y0, int x1, int y1, const char *what)
{
    seer_box b = {0};
    int has = one_box(box, g, &b);
    if (!ok(has == 1 && b.x0 == x0 && b.y0 == y0 && b.x1 == x1 && b.y1 == y1, "%s: %s -> %d,%d,%d,%d", what, box, x0,
            y0, x1, y1))
        diag("has_box %d, got %d,%d,%d,%d", has, b.x0, b.y0, b.x1, b.y1);
}

static void test_geometry(void)
{
    /* non-square pages, both conventions */
    box_is("[100, 200, 300, 400]", rel(3000, 1000), 300, 200, 900, 400, "0..1000 on 3000x1000");
    box_is("[100, 200, 300, 400]", rel(1000, 3000), 100, 600, 300, 1200, "0..1000 on 1000x3000");
    box_is("[10, 20, 30, 40]", pix(1280, 960, 640, 480), 20, 40, 60, 80, "model pixels 640x480 of 1280x960");
    box_is("[33.6, 100.8, 336, 1008]", pix(1000, 3000, 336, 1008), 100, 300, 1000, 3000, "model 336x1008 of 1000x3000");
    box_is("[10, 20, 30, 40]", pix(500, 400, 0, 0), 10, 20, 30, 40, "model size 0 = the page's");
    /* 7x3: x 0.7..1.4 and y 0.3..0.6 rounded outwards */
    box_is("[100, 100, 200, 200]", rel(7, 3), 0, 0, 2, 1, "outward rounding on 7x3");
    /* a page EXIF turned upright: the decoded 600x800 (stored 800x600) is what the model saw,
       so its numbers are read against 600x800 */
    box_is("[500, 0, 1000, 250]", rel(600, 800), 300, 0, 600, 200, "0..1000 on a rotated 600x800 page");
    box_is("[210, 280, 420, 560]", pix(600, 800, 420, 560), 300, 400, 600, 800, "model 420x560 of a rotated 600x800");
    /* 1x1 and 20000x20000 */
    box_is("[0, 0, 1000, 1000]", rel(1, 1), 0, 0, 1, 1, "whole 1x1 page");
    box_is("[100, 100, 400, 400]", rel(1, 1), 0, 0, 1, 1, "a box inside a 1x1 page keeps its pixel");
    box_is("[0, 0, 1000, 1000]", rel(20000, 20000), 0, 0, 20000, 20000, "whole 20000x20000 page");
    box_is("[123, 456, 789, 999]", rel(20000, 20000), 2460, 9120, 15780, 19980, "20000x20000");
    box_is("[0.05, 0.05, 0.1, 0.1]", rel(20000, 20000), 1, 1, 2, 2, "fractional units on 20000x20000");
    seer_box b;
    ok(one_box("[500, 500, 500, 900]", rel(1, 1), &b) == 0, "a zero-width box has no box");
    ok(one_box("[-10, -10, -1, -1]", rel(100, 100), &b) == 0, "a box left of and above the page has no box");

    seer_ocr_page *pg = (seer_ocr_page *)1;
    seer_result r;
    memset(&r, 0, sizeof r);
    r.text = "x";
    r.text_len = 1;
    seer_ocr_geometry g = rel(0, 10);
    ok(seer_ocr_parse(&r, &g, &pg) == SEER_EINVAL && pg == NULL, "a page 0 pixels wide: SEER_EINVAL, *out NULL");
    g = rel(10, -1);
    ok(seer_ocr_parse(&r, &g, &pg) == SEER_EINVAL, "a negative height: SEER_EINVAL");
    g = rel(10, 10);
    g.coords = (seer_ocr_coords)7;
    ok(seer_ocr_parse(&r, &g, &pg) == SEER_EINVAL, "an unknown coordinate convention: SEER_EINVAL");
    g = rel(10, 10);
    ok(seer_ocr_parse(NULL, &g, &pg) == SEER_EINVAL, "no answer: SEER_EINVAL");
    r.text = NULL;
    r.text_len = 0;
    ok(seer_ocr_parse(&r, &g, &pg) == SEER_OK && pg && pg->n_blocks == 0 && pg->width == 10,
       "an empty answer: an empty page");
    seer_ocr_page_free(pg);
    seer_ocr_page_free(NULL);
}

/* Cut after every byte: the items whose closing brace is in are kept, never more, never fewer,
   their texts intact; the count only grows. */
static void test_truncation(void)
{
    const char *t = "```json\n[\n  {\"bbox_2d\": [100, 100, 400, 150], \"text_content\": \"one {brace} here\"},\n"
                    "  {\"bbox_2d\": [100, 200, 400, 250], \"text_content\": \"two \\\"quoted\\\"\"},\n"
                    "  {\"bbox_2d\": [100, 300, 400, 350], \"text_content\": \"three\"}\n]\n```";
    const char *texts[] = {"one {brace} here", "two \"quoted\"", "three"};
    /* the items' closing braces: the last '}' before each item's newline, found by eye as the
       '}' followed by ',' or '\n' (the braces inside the first text are followed by ' ') */
    size_t closes[3], k = 0, n = strlen(t);
    for (size_t i = 0; i + 1 < n; i++)
        if (t[i] == '}' && (t[i + 1] == ',' || t[i + 1] == '\n'))
            closes[k++] = i;
    ok(k == 3, "three closing braces found in the test's answer");
    int fails = 0;
    size_t last = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        seer_ocr_page *pg = parse_n(t, cut, rel(1000, 1000));
        size_t want = (cut > closes[0]) + (cut > closes[1]) + (cut > closes[2]), got = pg ? n_lines(pg, 1) : 99;
        int good = pg && got == want && got >= last && invariants(pg) == 0;
        for (size_t i = 0; good && i < got; i++)
            good = !strcmp(pg->blocks[i].lines[0].text, texts[i]);
        if (!good && fails++ < 3)
            diag("cut at %zu: %zu boxed lines, want %zu", cut, got, want);
        last = got;
        seer_ocr_page_free(pg);
    }
    ok(fails == 0, "JSON cut at each of %zu bytes: the complete items and no others", n + 1);

    const char *h = "<p data-bbox=\"0 0 500 100\">first &amp; line</p>\n<p data-bbox=\"0 100 500 200\">second</p>\n"
                    "<td data-bbox=\"0 200 500 300\">third</td>";
    n = strlen(h);
    fails = 0;
    last = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        seer_ocr_page *pg = parse_n(h, cut, rel(1000, 1000));
        size_t got = pg ? n_lines(pg, 1) : 99;
        if ((!pg || got < last || got > 3 || invariants(pg)) && fails++ < 3)
            diag("HTML cut at %zu: %zu boxed lines after %zu", cut, got, last);
        last = got;
        seer_ocr_page_free(pg);
    }
    ok(fails == 0 && last == 3, "HTML cut at each of %zu bytes: never fewer boxed lines as it grows, 3 in all", n + 1);
}

static seer_ocr_page *parse_lp(const char *text, const float *lp, const size_t *ends, size_t n_tokens)
{
    seer_result r;
    memset(&r, 0, sizeof r);
    r.text = (char *)text;
    r.text_len = strlen(text);
    r.logprobs = (float *)lp;
    r.text_ends = (size_t *)ends;
    r.n_tokens = n_tokens;
    seer_ocr_geometry g = rel(1000, 1000);
    seer_ocr_page *pg = NULL;
    seer_ocr_parse(&r, &g, &pg);
    return pg;
}

static void test_confidence(void)
{
    /* tokens: an empty one (reasoning, must not count), the JSON before the text, "a", "b ",
       "cd", the rest */
    const char *t = "[{\"bbox_2d\": [0, 0, 1000, 1000], \"text_content\": \"ab cd\"}]";
    size_t o = (size_t)(strstr(t, "ab cd") - t), n = strlen(t);
    size_t ends[] = {0, o, o + 1, o + 3, o + 5, n};
    float lp[] = {-100.0f, -0.1f, logf(0.5f), logf(0.25f), logf(0.8f), -0.2f};
    seer_ocr_page *pg = parse_lp(t, lp, ends, 6);
    const seer_ocr_line *ln = pg && pg->n_blocks == 1 ? &pg->blocks[0].lines[0] : NULL;
    if (ok(ln && ln->n_words == 2, "confidences: one line of two words")) {
        /* tolerance 1e-3: float log/exp of values near 1 */
        ok(fabs(ln->words[0].conf - 100 * sqrt(0.5 * 0.25)) < 1e-3, "'ab' = 100*exp(mean(ln .5, ln .25)) = 35.355 (got %g)",
           ln->words[0].conf);
        ok(fabs(ln->words[1].conf - 80) < 1e-3, "'cd' = 80, its one token (got %g)", ln->words[1].conf);
        ok(fabs(ln->conf - 100 * cbrt(0.5 * 0.25 * 0.8)) < 1e-3, "the line = 100*(.5*.25*.8)^(1/3) = 46.416 (got %g)",
           ln->conf);
    }
    seer_ocr_page_free(pg);

    /* an escape: the decoded é counts the token that wrote "\u00e9" in the raw answer */
    t = "[{\"bbox_2d\": [0, 0, 1000, 1000], \"text_content\": \"caf\\u00e9 x\"}]";
    o = (size_t)(strstr(t, "caf") - t), n = strlen(t);
    size_t ends2[] = {o, o + 3, o + 9, o + 10, o + 11, n};
    float lp2[] = {0, 0, logf(0.1f), 0, 0, 0};
    pg = parse_lp(t, lp2, ends2, 6);
    ln = pg && pg->n_blocks == 1 ? &pg->blocks[0].lines[0] : NULL;
    if (ok(ln && ln->n_words == 2 && !strcmp(ln->words[0].text, "caf\xc3\xa9"), "escape: the word is caf\xc3\xa9")) {
        ok(fabs(ln->words[0].conf - 100 * sqrt(0.1)) < 1e-3, "'caf\xc3\xa9' = 100*exp(mean(0, ln .1)) = 31.623 (got %g)",
           ln->words[0].conf);
        ok(fabs(ln->words[1].conf - 100) < 1e-3, "'x' = 100 (got %g)", ln->words[1].conf);
    }
    seer_ocr_page_free(pg);

    /* an HTML entity: "A&amp;B" is three tokens, the entity's with p = .5 */
    t = "<p data-bbox=\"0 0 1000 1000\">A&amp;B c</p>";
    o = (size_t)(strstr(t, "A&") - t), n = strlen(t);
    size_t ends3[] = {o, o + 1, o + 6, o + 7, o + 9, n};
    float lp3[] = {0, 0, logf(0.5f), 0, logf(0.9f), 0};
    pg = parse_lp(t, lp3, ends3, 6);
    ln = pg && pg->n_blocks == 1 ? &pg->blocks[0].lines[0] : NULL;
    if (ok(ln && ln->n_words == 2 && !strcmp(ln->words[0].text, "A&B"), "entity: the word is A&B")) {
        ok(fabs(ln->words[0].conf - 100 * cbrt(0.5)) < 1e-3, "'A&B' = 100*.5^(1/3) = 79.370 (got %g)", ln->words[0].conf);
        /* "c" was written by the token " c" (o+7 .. o+9) */
        ok(fabs(ln->words[1].conf - 90) < 1e-3, "'c' = 90 (got %g)", ln->words[1].conf);
    }
    seer_ocr_page_free(pg);

    pg = parse(t, rel(1000, 1000));
    ok(pg && pg->blocks[0].lines[0].conf == -1 && pg->blocks[0].lines[0].words[0].conf == -1,
       "without logprobs: -1");
    seer_ocr_page_free(pg);
    size_t backwards[] = {o, o + 6, o + 1, o + 7, o + 9, n};
    pg = parse_lp(t, lp3, backwards, 6);
    ok(pg && pg->blocks[0].lines[0].words[0].conf == -1, "text_ends going backwards: no confidences, not wrong ones");
    seer_ocr_page_free(pg);
}

static void test_words(void)
{
    /* "ab  cdef g" on x 0..100: 10 code points; word boundaries halfway through the spaces:
       (2+4)/2 = 3 -> 100*3/10 = 30, (8+9)/2 = 8.5 -> 85 */
    seer_ocr_page *pg = parse("[{\"bbox_2d\": [0, 0, 100, 10], \"text\": \"ab  cdef g\"}]", rel(1000, 1000));
    const seer_ocr_line *ln = pg ? &pg->blocks[0].lines[0] : NULL;
    ok(ln && ln->n_words == 3 && ln->words[0].box.x0 == 0 && ln->words[0].box.x1 == 30 && ln->words[1].box.x1 == 85 &&
           ln->words[2].box.x1 == 100 && !strcmp(ln->words[1].text, "cdef") && !strcmp(ln->text, "ab  cdef g"),
       "words ab|cdef|g cut the line at x = 30 and 85");
    seer_ocr_page_free(pg);

    /* combining mark and CJK: "Cafe\u0301 日本語" is 9 code points, the boundary at (5+6)/2 = 5.5
       of 9 -> 180*5.5/9 = 110 */
    pg = parse("[{\"bbox_2d\": [0, 0, 180, 10], \"text\": \"Cafe\xcc\x81 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\"}]",
               rel(1000, 1000));
    ln = pg ? &pg->blocks[0].lines[0] : NULL;
    ok(ln && ln->n_words == 2 && !strcmp(ln->words[0].text, "Cafe\xcc\x81") && ln->words[0].box.x1 == 110 &&
           !strcmp(ln->words[1].text, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"),
       "a combining mark counts as a code point; CJK words split at the space");
    seer_ocr_page_free(pg);

    /* U+3000 (ideographic space) and U+00A0 split words; invalid bytes become U+FFFD */
    pg = parse("[{\"bbox_2d\": [0, 0, 1000, 10], \"text\": \"\xe6\x97\xa5\xe3\x80\x80\xe6\x9c\xac\xc2\xa0x \xff\xfe\"}]",
               rel(1000, 1000));
    ln = pg ? &pg->blocks[0].lines[0] : NULL;
    ok(ln && ln->n_words == 4 && !strcmp(ln->words[3].text, "\xef\xbf\xbd\xef\xbf\xbd"),
       "U+3000 and U+00A0 separate words; two invalid bytes are two U+FFFD");
    seer_ocr_page_free(pg);

    /* random lines: words always tile the line's box (the invariants) */
    test_seed();
    static const char *const pieces[] = {"a", "Z", " ", "  ", "\t", "\xe6\x97\xa5", "e\xcc\x81", "\xe3\x80\x80", "9", "."};
    int bad = 0;
    for (int it = 0; it < 300; it++) {
        char text[600] = "[{\"bbox_2d\": [";
        char *p = text + strlen(text);
        int x0 = (int)(test_rand_u64() % 1000), x1 = (int)(test_rand_u64() % 1001);
        p += sprintf(p, "%d, 5, %d, 50], \"text\": \"", x0, x1);
        int len = 1 + (int)(test_rand_u64() % 40);
        for (int i = 0; i < len; i++)
            p += sprintf(p, "%s", pieces[test_rand_u64() % ARRAY_LEN(pieces)]);
        sprintf(p, "x\"}]");
        seer_ocr_page *q = parse(text, rel(1 + (int32_t)(test_rand_u64() % 3000), 1 + (int32_t)(test_rand_u64() % 3000)));
        bad += !q || invariants(q);
        seer_ocr_page_free(q);
    }
    ok(bad == 0, "300 random lines: words tile their line's box");
}

/* Parses text and compares dump() with want. */
static void dump_is(const char *text, const char *want, const char *what)
{
    seer_ocr_page *pg = parse(text, rel(2000, 1000));
    char *got = pg ? dump(pg) : NULL;
    if (!ok(got && !strcmp(got, want), "%s", what))
        diag("got:\n%swant:\n%s", got ? got : "(no page)\n", want);
    free(got);
    seer_ocr_page_free(pg);
}

/* Plain text is kept as written: brackets and commas are JSON's structure only around objects */
static void test_plain(void)
{
    dump_is("}\nQ bod [x]\nthe end [", "dropped=0\n0 - }\n0 - Q bod [x]\n0 - the end [\n",
            "no object: a line of a lone brace and a trailing bracket are the model's text");
    dump_is("```json\n[ ]\n```\n", "dropped=0\n", "an empty array in a fence is no text");
    dump_is("```\nfirst\n```text more\n```", "dropped=0\n0 - first\n0 - ```text more\n",
            "fence lines are not text; a line that only starts with ``` is");
    dump_is("```json [\n{\"bbox_2d\": [0, 0, 500, 50], \"text\": \"a\"}\n] ```", "dropped=0\n0 0,0,1000,50 a\n",
            "a fence opening the array on its line, and closing it, are structure");
    dump_is("[\n{\"bbox_2d\": [0, 0, 500, 50], \"text\": \"a\"},\n]\nnote [", "dropped=0\n0 0,0,1000,50 a\n1 - note\n",
            "around objects, the array's brackets and commas are structure");
    /* JSON's \b and \f are U+0008 and U+000C, which a page cannot carry (XML 1.0): U+FFFD, as the
       same bytes written raw; \f is not a space */
    dump_is("[{\"bbox_2d\": [0, 0, 500, 50], \"text\": \"a\\fb c\\b\"}]",
            "dropped=0\n0 0,0,1000,50 a\xef\xbf\xbd" "b c\xef\xbf\xbd\n",
            "\\f and \\b decode to what the raw bytes give: U+FFFD, not a word break");
    dump_is("a\x0c" "b c\b", "dropped=0\n0 - a\xef\xbf\xbd" "b c\xef\xbf\xbd\n", "the raw bytes: U+FFFD");
}

/* CPU seconds to parse `reps` copies of unit (plus a prefix) */
static double parse_cost(const char *prefix, const char *unit, size_t reps, int32_t *n_dropped)
{
    size_t pl = strlen(prefix), ul = strlen(unit), n = pl + ul * reps;
    char *t = malloc(n + 1);
    memcpy(t, prefix, pl);
    for (size_t i = 0; i < reps; i++)
        memcpy(t + pl + i * ul, unit, ul);
    t[n] = 0;
    double t0 = test_cpu_seconds();
    seer_ocr_page *pg = parse_n(t, n, rel(1000, 1000));
    double dt = test_cpu_seconds() - t0;
    if (n_dropped)
        *n_dropped = pg ? pg->n_dropped : -1;
    seer_ocr_page_free(pg);
    free(t);
    return dt;
}

static void test_linear(void)
{
    /* each hostile 1 MB answer against a tenth of it: linear is about 10x; quadratic would be
       100x. The bound 40 leaves room for a loaded machine (CPU time, not wall time). */
    static const struct { const char *prefix, *unit, *what; } cases[] = {
        {"[", "{\"bbox_2d\": [1, 2, 300, 400], \"text_content\": \"a line of words\"},", "many items"},
        {"", "{\"", "unclosed objects and strings"},
        {"", "{\"a\": ", "objects nested without end"},
        {"", "<p data-bbox=\"1 2 3 4\">x ", "HTML elements never closed"},
        {"data-bbox ", "&#x", "entities without an end"},
        {"", "[", "brackets"},
        {"", "a ", "one 1 MB line of words"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t ul = strlen(cases[i].unit), big = (1u << 20) / ul;
        double small_s = parse_cost(cases[i].prefix, cases[i].unit, big / 10, NULL) + 1e-4;
        double big_s = parse_cost(cases[i].prefix, cases[i].unit, big, NULL);
        ok(big_s / small_s < 40 || big_s < 0.05, "%s: 1 MB in %.3f s, 0.1 MB in %.3f s", cases[i].what, big_s, small_s);
    }
}

static void test_alloc_failures(void)
{
    char *text = test_slurp(test_src_path("tests/data/ocr/answers/qwenvl_html.txt"));
    char *json = test_slurp(test_src_path("tests/data/ocr/answers/missing_box.txt"));
    int bad = 0, ok_runs = 0;
    for (int which = 0; which < 2; which++)
        for (long k = 1; k < 400; k++) {
            seer_result r;
            memset(&r, 0, sizeof r);
            r.text = which ? json : text;
            r.text_len = r.text ? strlen(r.text) : 0;
            seer_ocr_geometry g = rel(2000, 1000);
            seer_ocr_page *pg = (seer_ocr_page *)1;
            seer_alloc_fail_after(k);
            int rc = seer_ocr_parse(&r, &g, &pg);
            seer_alloc_fail_after(0);
            if (rc == SEER_OK) {
                ok_runs++;
                seer_ocr_page_free(pg);
                break; /* no allocation was left to fail */
            }
            bad += rc != SEER_ENOMEM || pg != NULL;
        }
    ok(text && json && bad == 0 && ok_runs == 2,
       "every allocation failing in turn: SEER_ENOMEM with *out NULL (leaks: the sanitizer build)");
    free(text);
    free(json);
}

int main(void)
{
    plan_no_plan();
    test_fixtures();
    test_geometry();
    test_truncation();
    test_confidence();
    test_words();
    test_plain();
    test_linear();
    test_alloc_failures();
    return done_testing();
}
