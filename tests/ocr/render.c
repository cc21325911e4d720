/* render.c — seer_ocr_render (ocr/render.c) on pages built by hand: hOCR 1.2 read back with
   xmllint (well-formed, classes, bboxes, ppageno, x_wconf, escaping), ALTO 4.4 validated against
   the schema kept in tests/data/ocr/schema (1 page, 3 pages with a failed one, empty pages), and
   Tesseract's TSV compared byte for byte. Every expected string is written out here by hand. */
#include <string.h>

#include "core/util.h"
#include "support/gguf_write.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

/* ---- the pages ------------------------------------------------------------------------------- */

/* Page A (1000x800 at 300 dpi, number 0): a block of two lines with words (the first line's text
   has everything XML must escape, one word without a confidence), then the box-less block the
   parser makes for text outside any box (its line carries the page's box). */
static seer_ocr_word a_words1[] = {
    {"Hello", {100, 100, 300, 150}, 95.4f},
    {"<world>", {320, 100, 600, 150}, -1.0f},
    {"&\"you\"", {620, 100, 900, 150}, 80.0f},
};
static seer_ocr_word a_words2[] = {
    {"a\001b", {100, 200, 400, 260}, 100.0f}, /* a control character XML 1.0 forbids */
    {"tab\there", {420, 200, 700, 260}, 12.3f},
};
static seer_ocr_word a_words3[] = {{"loose", {0, 0, 1000, 800}, -1.0f}};
static seer_ocr_line a_lines1[] = {
    {"Hello <world> &\"you\"", {100, 100, 900, 150}, 1, 70.0f, a_words1, 3},
    {"a\001b tab\there", {100, 200, 700, 260}, 1, 50.0f, a_words2, 2},
};
static seer_ocr_line a_lines2[] = {{"loose", {0, 0, 1000, 800}, 0, -1.0f, a_words3, 1}};
static seer_ocr_block a_blocks[] = {
    {{100, 100, 900, 260}, 1, a_lines1, 2},
    {{0, 0, 1000, 800}, 0, a_lines2, 1},
};
static const seer_ocr_page page_a = {0, 1000, 800, 300.0, a_blocks, 2, 0};

/* Page C (number 2, dpi unknown): one line whose words the answer did not give (the line is then
   written as one word), one line with neither words nor text (left out), and an empty block. */
static seer_ocr_line c_lines[] = {
    {"only a line", {10, 20, 200, 40}, 1, 88.0f, NULL, 0},
    {"", {10, 50, 200, 70}, 1, -1.0f, NULL, 0},
};
static seer_ocr_block c_blocks[] = {{{10, 20, 200, 70}, 1, c_lines, 2}, {{5, 5, 6, 6}, 1, NULL, 0}};
static const seer_ocr_page page_c = {2, 640, 480, 0.0, c_blocks, 2, 0};

/* A page with no text at all. */
static const seer_ocr_page page_empty = {0, 50, 60, 72.0, NULL, 0, 0};

/* ---- helpers --------------------------------------------------------------------------------- */

static int have_xmllint;

static char *render(const seer_ocr_page *const *pages, size_t n, seer_ocr_format f, const char *source)
{
    char *out = NULL;
    size_t len = 0;
    int rc = seer_ocr_render(pages, n, f, source, &out, &len);
    if (!ok(rc == SEER_OK && out && strlen(out) == len, "render %zu page(s) as format %d", n, (int)f))
        diag("rc %d: %s", rc, seer_last_error());
    return out;
}

/* The document in a file of the test's directory; returns its path (static). */
static const char *to_file(const char *name, const char *doc)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), name);
    write_text(path, doc);
    return path;
}

/* xmllint --xpath's answer for doc (string() of an expression), or NULL when it failed. */
static char *xpath(const char *doc, const char *expr)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --xpath \"%s\" '%s'", expr, to_file("xpath.xml", doc));
    struct test_run r = test_run_cmd(cmd);
    char *v = r.status == 0 ? r.out : NULL;
    if (v && r.out_len && v[r.out_len - 1] == '\n') /* xmllint 2.9.14 ends its answer with one, older ones do not */
        v[r.out_len - 1] = '\0';
    if (!v) {
        diag("xmllint --xpath %s: %s", expr, r.err);
        free(r.out);
    }
    free(r.err);
    return v;
}

static void is_xpath(const char *doc, const char *expr, const char *want, const char *what)
{
    if (!have_xmllint) {
        skip("xmllint (libxml2-utils) is not installed", what);
        return;
    }
    char *v = xpath(doc, expr);
    if (!ok(v && !strcmp(v, want), "%s", what))
        diag("xpath %s: got '%s', want '%s'", expr, v ? v : "(failed)", want);
    free(v);
}

static void has(const char *doc, const char *needle, const char *what)
{
    if (!ok(doc && strstr(doc, needle), "%s", what))
        diag("missing: %s", needle);
}

static int xmllint_ok(const char *doc, const char *schema, const char *what)
{
    if (!have_xmllint) {
        skip("xmllint (libxml2-utils) is not installed", what);
        return 1;
    }
    char cmd[1024];
    if (schema)
        snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s'", test_src_path(schema), to_file("doc.xml", doc));
    else
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", to_file("doc.xml", doc));
    struct test_run r = test_run_cmd(cmd);
    int good = r.status == 0;
    if (!ok(good, "%s", what))
        diag("%s", r.err);
    test_run_free(&r);
    return good;
}

#define ALTO_XSD "tests/data/ocr/schema/alto-4-4.xsd"

/* ---- hOCR ------------------------------------------------------------------------------------ */

static void test_hocr(void)
{
    const seer_ocr_page *pages[] = {&page_a, NULL, &page_c};
    char *h = render(pages, 3, SEER_OCR_HOCR, "dir/scan \"1\"%.png");
    if (!h)
        return;
    xmllint_ok(h, NULL, "hOCR is well-formed XML (xmllint --noout)");
    char sys[128];
    snprintf(sys, sizeof sys, "<meta name=\"ocr-system\" content=\"seer %s\"/>", seer_version());
    has(h, sys, "ocr-system names seer and its version");
    has(h, "<meta name=\"ocr-capabilities\" content=\"ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf\"/>",
        "ocr-capabilities lists the classes used");
    has(h, "<meta name=\"ocr-number-of-pages\" content=\"3\"/>", "ocr-number-of-pages");
    /* the image name percent-encoded inside the property grammar's delimited string */
    has(h, "<div class=\"ocr_page\" id=\"page_1\" title=\"image &quot;dir/scan %221%22%25.png&quot;; "
           "bbox 0 0 1000 800; ppageno 0; scan_res 300 300\">",
        "page 1: image, bbox, ppageno 0, scan_res");
    has(h, "<div class=\"ocr_page\" id=\"page_2\" title=\"image &quot;dir/scan %221%22%25.png&quot;; ppageno 1\">\n  </div>",
        "a failed page is an empty ocr_page numbered after the one before");
    has(h, "<div class=\"ocr_page\" id=\"page_3\" title=\"image &quot;dir/scan %221%22%25.png&quot;; bbox 0 0 640 480; ppageno 2\">",
        "page 3: no scan_res when the dpi is unknown");
    has(h, "<div class=\"ocr_carea\" id=\"block_1_1\" title=\"bbox 100 100 900 260\">\n"
           "    <p class=\"ocr_par\" id=\"par_1_1\" title=\"bbox 100 100 900 260\">\n"
           "     <span class=\"ocr_line\" id=\"line_1_1\" title=\"bbox 100 100 900 150\">\n"
           "      <span class=\"ocrx_word\" id=\"word_1_1\" title=\"bbox 100 100 300 150; x_wconf 95\">Hello</span>",
        "carea > par > line > word with their boxes and x_wconf");
    has(h, "id=\"word_1_2\" title=\"bbox 320 100 600 150\">&lt;world&gt;</span>", "no x_wconf without a confidence; < > escaped");
    has(h, "id=\"word_1_3\" title=\"bbox 620 100 900 150; x_wconf 80\">&amp;\"you\"</span>", "& escaped");
    has(h, "id=\"word_1_4\" title=\"bbox 100 200 400 260; x_wconf 100\">a\xEF\xBF\xBD" "b</span>",
        "a control character becomes U+FFFD; word ids run through the page");
    has(h, "<span class=\"ocr_line\" id=\"line_1_3\" title=\"bbox 0 0 1000 800\">", "a box-less line has the page's bbox");
    has(h, "<div class=\"ocr_carea\" id=\"block_3_2\" title=\"bbox 5 5 6 6\">", "ids restart on each page");
    has(h, "id=\"word_3_1\" title=\"bbox 10 20 200 40; x_wconf 88\">only a line</span>", "a wordless line is one word");
    ok(!strstr(h, "line_3_2") && !strstr(h, "lang="), "an empty line is left out; no lang attributes");
    is_xpath(h, "count(//*[@class='ocr_page'])", "3", "three ocr_page elements");
    is_xpath(h, "count(//*[@class='ocrx_word'])", "7", "seven ocrx_word elements");
    is_xpath(h, "string(//*[@id='word_1_3'])", "&\"you\"", "escaped text reads back as written");
    is_xpath(h, "string(//*[@id='word_1_5'])", "tab\there", "a tab in element text is kept");
    free(h);

    const seer_ocr_page *nul[] = {NULL};
    h = render(nul, 1, SEER_OCR_HOCR, NULL);
    if (h) {
        xmllint_ok(h, NULL, "a document of one failed page is well-formed");
        has(h, "<div class=\"ocr_page\" id=\"page_1\" title=\"ppageno 0\">\n  </div>\n </body>", "and holds an empty ocr_page");
    }
    free(h);
}

/* ---- ALTO ------------------------------------------------------------------------------------ */

static void test_alto(void)
{
    const seer_ocr_page *one[] = {&page_a};
    char *x = render(one, 1, SEER_OCR_ALTO, "scan<1>.png");
    if (x) {
        xmllint_ok(x, ALTO_XSD, "ALTO of one page is valid by alto-4-4.xsd");
        has(x, "<MeasurementUnit>pixel</MeasurementUnit>", "MeasurementUnit pixel");
        has(x, "<fileName>scan&lt;1&gt;.png</fileName>", "fileName escaped");
        has(x, "<softwareName>seer</softwareName>", "processingSoftware seer");
        has(x, "<Page ID=\"page_1\" PHYSICAL_IMG_NR=\"1\" WIDTH=\"1000\" HEIGHT=\"800\">\n"
               "      <PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"1000\" HEIGHT=\"800\">\n"
               "        <TextBlock ID=\"block_1_1\" HPOS=\"100\" VPOS=\"100\" WIDTH=\"800\" HEIGHT=\"160\">\n"
               "          <TextLine ID=\"line_1_1\" HPOS=\"100\" VPOS=\"100\" WIDTH=\"800\" HEIGHT=\"50\">\n"
               "            <String ID=\"string_1_1\" HPOS=\"100\" VPOS=\"100\" WIDTH=\"200\" HEIGHT=\"50\" CONTENT=\"Hello\" WC=\"0.95\"/>\n"
               "            <SP HPOS=\"300\" VPOS=\"100\" WIDTH=\"20\"/>\n"
               "            <String ID=\"string_1_2\" HPOS=\"320\" VPOS=\"100\" WIDTH=\"280\" HEIGHT=\"50\" CONTENT=\"&lt;world&gt;\"/>\n",
            "Page, PrintSpace, TextBlock, TextLine, String and SP with their coordinates");
        has(x, "CONTENT=\"&amp;&quot;you&quot;\" WC=\"0.80\"", "quotes and & escaped in CONTENT");
        has(x, "CONTENT=\"tab&#9;here\" WC=\"0.12\"", "a tab kept as a character reference");
        has(x, "<TextBlock ID=\"block_1_2\" HPOS=\"0\" VPOS=\"0\" WIDTH=\"1000\" HEIGHT=\"800\">", "the box-less block spans the page");
        is_xpath(x, "string(//*[@ID='string_1_3']/@CONTENT)", "&\"you\"", "CONTENT reads back as written");
        is_xpath(x, "string(//*[@ID='string_1_4']/@CONTENT)", "a\xEF\xBF\xBD" "b", "a control character reads back as U+FFFD");
    }
    free(x);

    const seer_ocr_page *three[] = {&page_a, NULL, &page_c};
    x = render(three, 3, SEER_OCR_ALTO, NULL);
    if (x) {
        xmllint_ok(x, ALTO_XSD, "ALTO of three pages (one failed) is valid");
        has(x, "<Page ID=\"page_2\" PHYSICAL_IMG_NR=\"2\"/>", "the failed page keeps its place, empty");
        has(x, "<Page ID=\"page_3\" PHYSICAL_IMG_NR=\"3\" WIDTH=\"640\" HEIGHT=\"480\">", "page 3 numbered from its number");
        has(x, "<String ID=\"string_3_1\" HPOS=\"10\" VPOS=\"20\" WIDTH=\"190\" HEIGHT=\"20\" CONTENT=\"only a line\" WC=\"0.88\"/>",
            "a wordless line is one String");
        ok(!strstr(x, "sourceImageInformation") && !strstr(x, "line_3_2"), "no fileName without a source; the empty line left out");
        is_xpath(x, "count(//*[local-name()='String'])", "7", "seven Strings in all");
    }
    free(x);

    const seer_ocr_page *empty[] = {&page_empty};
    x = render(empty, 1, SEER_OCR_ALTO, NULL);
    if (x) {
        xmllint_ok(x, ALTO_XSD, "ALTO of a page without text is valid");
        has(x, "<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"50\" HEIGHT=\"60\">\n      </PrintSpace>", "and has an empty PrintSpace");
    }
    free(x);
    const seer_ocr_page *nul[] = {NULL};
    x = render(nul, 1, SEER_OCR_ALTO, NULL);
    if (x)
        xmllint_ok(x, ALTO_XSD, "ALTO of one failed page is valid");
    free(x);

    /* the validation can fail: a String without its required CONTENT is refused */
    if (have_xmllint) {
        char *bad = render(one, 1, SEER_OCR_ALTO, NULL);
        char *p = bad ? strstr(bad, " CONTENT=\"Hello\"") : NULL;
        if (p) {
            memset(p, ' ', strlen(" CONTENT=\"Hello\""));
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s'", test_src_path(ALTO_XSD), to_file("bad.xml", bad));
            struct test_run r = test_run_cmd(cmd);
            ok(r.status != 0 && strstr(r.err, "CONTENT"), "the schema refuses a String without CONTENT");
            test_run_free(&r);
        }
        free(bad);
    } else {
        skip("xmllint (libxml2-utils) is not installed", "the schema refuses a String without CONTENT");
    }
}

/* ---- TSV ------------------------------------------------------------------------------------- */

static void test_tsv(void)
{
    const seer_ocr_page *pages[] = {&page_a, NULL, &page_c};
    char *t = render(pages, 3, SEER_OCR_TSV, "ignored.png");
    const char *want =
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
        "1\t1\t0\t0\t0\t0\t0\t0\t1000\t800\t-1\t\n"
        "2\t1\t1\t0\t0\t0\t100\t100\t800\t160\t-1\t\n"
        "3\t1\t1\t1\t0\t0\t100\t100\t800\t160\t-1\t\n"
        "4\t1\t1\t1\t1\t0\t100\t100\t800\t50\t-1\t\n"
        "5\t1\t1\t1\t1\t1\t100\t100\t200\t50\t95.400002\tHello\n"
        "5\t1\t1\t1\t1\t2\t320\t100\t280\t50\t-1\t<world>\n"
        "5\t1\t1\t1\t1\t3\t620\t100\t280\t50\t80.000000\t&\"you\"\n"
        "4\t1\t1\t1\t2\t0\t100\t200\t600\t60\t-1\t\n"
        "5\t1\t1\t1\t2\t1\t100\t200\t300\t60\t100.000000\ta\xEF\xBF\xBD" "b\n"
        "5\t1\t1\t1\t2\t2\t420\t200\t280\t60\t12.300000\ttab here\n"
        "2\t1\t2\t0\t0\t0\t0\t0\t1000\t800\t-1\t\n"
        "3\t1\t2\t1\t0\t0\t0\t0\t1000\t800\t-1\t\n"
        "4\t1\t2\t1\t1\t0\t0\t0\t1000\t800\t-1\t\n"
        "5\t1\t2\t1\t1\t1\t0\t0\t1000\t800\t-1\tloose\n"
        "1\t2\t0\t0\t0\t0\t0\t0\t0\t0\t-1\t\n"
        "1\t3\t0\t0\t0\t0\t0\t0\t640\t480\t-1\t\n"
        "2\t3\t1\t0\t0\t0\t10\t20\t190\t50\t-1\t\n"
        "3\t3\t1\t1\t0\t0\t10\t20\t190\t50\t-1\t\n"
        "4\t3\t1\t1\t1\t0\t10\t20\t190\t20\t-1\t\n"
        "5\t3\t1\t1\t1\t1\t10\t20\t190\t20\t88.000000\tonly a line\n"
        "2\t3\t2\t0\t0\t0\t5\t5\t1\t1\t-1\t\n"
        "3\t3\t2\t1\t0\t0\t5\t5\t1\t1\t-1\t\n";
    if (!ok(t && !strcmp(t, want), "TSV rows and columns as written by hand"))
        diag("got:\n%s", t ? t : "(null)");
    free(t);
    /* every row has the header's 12 columns */
    t = render(pages, 3, SEER_OCR_TSV, NULL);
    int rows = 0, bad = 0;
    for (char *line = t ? strtok(t, "\n") : NULL; line; line = strtok(NULL, "\n"), rows++) {
        int tabs = 0;
        for (char *c = line; *c; c++)
            tabs += *c == '\t';
        bad += tabs != 11;
    }
    ok(rows == 23 && !bad, "23 rows of 12 columns (%d rows, %d wrong)", rows, bad);
    free(t);
}

/* ---- errors and hostile text ----------------------------------------------------------------- */

static void test_errors(void)
{
    char *out = (char *)1;
    size_t len = 7;
    const seer_ocr_page *pages[] = {&page_a};
    ok(seer_ocr_render(pages, 0, SEER_OCR_HOCR, NULL, &out, &len) == SEER_EINVAL && !out && !len,
       "no pages: SEER_EINVAL, out cleared");
    ok(seer_ocr_render(pages, 1, (seer_ocr_format)7, NULL, &out, &len) == SEER_EINVAL && strstr(seer_last_error(), "format"),
       "an unknown format: SEER_EINVAL naming it");
    ok(seer_ocr_render(NULL, 1, SEER_OCR_TSV, NULL, &out, &len) == SEER_EINVAL, "pages NULL: SEER_EINVAL");
    /* no memory at each allocation in turn: SEER_ENOMEM and nothing handed out, or a whole document */
    int n_nomem = 0, wrong = 0;
    for (long k = 1; k <= 40; k++) {
        seer_alloc_fail_after(k);
        int rc = seer_ocr_render(pages, 1, SEER_OCR_ALTO, "x.png", &out, &len);
        seer_alloc_fail_after(0);
        n_nomem += rc == SEER_ENOMEM;
        wrong += rc == SEER_ENOMEM ? out != NULL || len : rc != SEER_OK || !strstr(out, "</alto>\n");
        free(out);
    }
    ok(n_nomem > 0 && !wrong, "no memory at the Nth allocation: SEER_ENOMEM and no output (%d times), else a whole document (%d wrong)",
       n_nomem, wrong);

    /* invalid UTF-8 (a lone continuation byte, a truncated sequence, an overlong form) and U+FFFE */
    seer_ocr_word w[] = {{"x\x80y\xE2\x82", {0, 0, 5, 5}, -1.0f}, {"\xC0\xAF\xEF\xBF\xBE", {5, 0, 9, 5}, -1.0f}};
    seer_ocr_line l = {"x", {0, 0, 9, 5}, 1, -1.0f, w, 2};
    seer_ocr_block b = {{0, 0, 9, 5}, 1, &l, 1};
    seer_ocr_page p = {0, 10, 10, 0.0, &b, 1, 0};
    const seer_ocr_page *pp[] = {&p};
    char *h = render(pp, 1, SEER_OCR_HOCR, NULL);
    has(h, ">x\xEF\xBF\xBDy\xEF\xBF\xBD</span>", "invalid UTF-8 becomes U+FFFD, one per maximal subpart");
    has(h, ">\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD</span>", "an overlong form (one U+FFFD per byte) and U+FFFE become U+FFFD");
    if (h)
        xmllint_ok(h, NULL, "and the document stays well-formed");
    free(h);
    char *x = render(pp, 1, SEER_OCR_ALTO, NULL);
    if (x)
        xmllint_ok(x, ALTO_XSD, "ALTO of that text is valid");
    free(x);
}

/* ---- size: a 1 MB answer --------------------------------------------------------------------- */

/* CPU seconds to render n one-line words (each with what must be escaped) in all three formats. */
static double render_cost(size_t n, size_t *bytes)
{
    seer_ocr_word *w = calloc(n, sizeof *w);
    for (size_t i = 0; i < n; i++)
        w[i] = (seer_ocr_word){"a&<\x01\"b", {(int32_t)(i % 900), 10, (int32_t)(i % 900) + 50, 40}, 50.0f};
    seer_ocr_line l = {"line", {0, 10, 1000, 40}, 1, 50.0f, w, n};
    seer_ocr_block b = {{0, 10, 1000, 40}, 1, &l, 1};
    seer_ocr_page p = {0, 1000, 1000, 300.0, &b, 1, 0};
    const seer_ocr_page *pp[] = {&p};
    double t0 = test_cpu_seconds();
    *bytes = 0;
    for (int f = SEER_OCR_HOCR; f <= SEER_OCR_TSV; f++) {
        char *out = NULL;
        size_t len = 0;
        if (seer_ocr_render(pp, 1, (seer_ocr_format)f, NULL, &out, &len) == SEER_OK)
            *bytes += len;
        free(out);
    }
    double t = test_cpu_seconds() - t0;
    free(w);
    return t;
}

static void test_large(void)
{
    size_t small, large;
    double t_small = render_cost(25000, &small), t_large = render_cost(100000, &large);
    /* 4x the words: about 4x the bytes (ids grow a digit), and about 4x the time where the writers
       are linear; a quadratic step would take 16x. The bound is 8x, for a loaded machine. */
    ok(t_large < 8 * t_small + 0.05, "100k words (%zu bytes) take less than 8x the CPU time of 25k (%zu bytes): %.3f s vs %.3f s",
       large, small, t_large, t_small);
}

int main(void)
{
    plan_no_plan();
    have_xmllint = if_sh("command -v xmllint >/dev/null") == 0;
    if (!have_xmllint)
        diag("xmllint not found (Debian: libxml2-utils): the XML checks are skipped");
    test_hocr();
    test_alto();
    test_tsv();
    test_errors();
    test_large();
    return done_testing();
}
