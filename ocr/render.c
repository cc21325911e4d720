/* render.c — seer_ocr_render: pages of lines and words with boxes (seer.h, "OCR layout") written
   as hOCR 1.2, ALTO 4.4 or Tesseract's TSV. Pure functions of the pages: no model, no files.
   The three writers walk the same tree (page → block → line → word) and number it the way
   Tesseract does (page_1, block_1_1, par_1_1, line_1_1, word_1_1: page index, then a counter
   running through the page), so tools written for Tesseract's output read ours.
   Text comes from a model's answer and is hostile: every byte goes through put_text, which
   turns invalid UTF-8 and what XML 1.0 forbids into U+FFFD before escaping. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"

/* ---- output ---------------------------------------------------------------------------------- */

/* The document being written. rc is sticky: the writers append without checking, and the one
   failure (no memory) is reported once at the end. */
struct out {
    struct sbuf b;
    int rc;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (!o->rc)
        o->rc = sbuf_add(&o->b, s, n);
}

static void put_str(struct out *o, const char *s) { put(o, s, strlen(s)); }

/* Markup and numbers only: text goes through put_text. */
static void put_fmt(struct out *o, const char *fmt, ...) SEER_PRINTF(2, 3);
static void put_fmt(struct out *o, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) { /* a format of ours too long for tmp: a bug here */
        if (!o->rc)
            o->rc = seer_err(SEER_EINVAL, "ocr render: internal format overflow");
        return;
    }
    put(o, tmp, (size_t)n);
}

enum esc {
    ESC_XML_TEXT, /* element content: & < > */
    ESC_XML_ATTR, /* a double-quoted attribute: also ", and tab/newline/CR as character
                     references so that attribute-value normalisation keeps them */
    ESC_TSV       /* a TSV cell: tab, newline and CR become spaces (they would end the cell) */
};

/* XML 1.0 §2.2 (Char): #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
   utf8_subpart already refuses surrogates and code points past U+10FFFF. */
static int xml_char_ok(uint32_t cp) { return cp >= 0x20 ? cp != 0xFFFE && cp != 0xFFFF : cp == 9 || cp == 10 || cp == 13; }

/* Writes s (NUL-terminated, any bytes) escaped for `mode`; invalid UTF-8 and characters XML 1.0
   forbids (in TSV too, so the three formats carry the same text) become U+FFFD, one per maximal
   subpart as lossy decoders do (Unicode §3.9). Runs of plain bytes are copied at once. */
static void put_text(struct out *o, const char *s, enum esc mode)
{
    size_t n = strlen(s), run = 0, i = 0;
    while (i < n) {
        size_t full;
        uint32_t cp = 0;
        size_t len = utf8_subpart(s + i, n - i, &full, &cp);
        const char *rep = NULL;
        if (len != full || !xml_char_ok(cp))
            rep = "\xEF\xBF\xBD"; /* U+FFFD */
        else if (cp == 9 || cp == 10 || cp == 13)
            rep = mode == ESC_TSV ? " " : mode == ESC_XML_TEXT ? NULL : cp == 9 ? "&#9;" : cp == 10 ? "&#10;" : "&#13;";
        else if (mode != ESC_TSV)
            rep = cp == '&' ? "&amp;" : cp == '<' ? "&lt;" : cp == '>' ? "&gt;"
                : cp == '"' && mode == ESC_XML_ATTR ? "&quot;" : NULL;
        if (rep) {
            put(o, s + run, i - run);
            put_str(o, rep);
            run = i + len;
        }
        i += len;
    }
    put(o, s + run, n - run);
}

/* ---- the tree -------------------------------------------------------------------------------- */

static seer_box page_box(const seer_ocr_page *p) { return (seer_box){0, 0, p->width, p->height}; }

/* A box-less block (the answer's text outside any box) spans the page, as its lines do
   (seer_ocr_line.has_box): the formats need a box on every element. */
static seer_box block_box(const seer_ocr_page *p, const seer_ocr_block *b) { return b->has_box ? b->box : page_box(p); }

/* The words a line is written as: its own, or, when the answer gave it none, the whole line as one
   word (its text, box and confidence) so the text reaches the word level every format reads (ALTO's
   TextLine needs a String; Tesseract's TSV has text on word rows only). A line with neither words
   nor text holds nothing to write: 0. */
static size_t line_words(const seer_ocr_line *l, seer_ocr_word *one, const seer_ocr_word **w)
{
    if (l->n_words) {
        *w = l->words;
        return l->n_words;
    }
    if (!l->text || !l->text[0])
        return 0;
    *one = (seer_ocr_word){.text = l->text, .box = l->box, .conf = l->conf};
    *w = one;
    return 1;
}

/* The page number of entry i (0-based, as seer_ocr_page.number). A NULL entry (a page that failed)
   has none of its own: it is counted from the first page that has one, so a run of pages rendered
   from the middle of a document (--shard) keeps its numbers. */
static int32_t page_number(const seer_ocr_page *const *pages, size_t n, size_t i)
{
    if (pages[i])
        return pages[i]->number;
    for (size_t k = 0; k < n; k++)
        if (pages[k]) {
            int64_t v = (int64_t)pages[k]->number - (int64_t)k + (int64_t)i;
            return v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
        }
    return i > INT32_MAX ? INT32_MAX : (int32_t)i;
}

static const char *word_text(const seer_ocr_word *w) { return w->text ? w->text : ""; }

/* ---- hOCR 1.2 (kba.github.io/hocr-spec/1.2) ------------------------------------------------- */

/* The properties grammar ("Properties Grammar") allows only printable ASCII without '"' in a
   delimited-string, so the image name is percent-encoded outside that set (and '%' itself, so the
   name can be decoded back). */
static void put_hocr_image(struct out *o, const char *source)
{
    put_str(o, "image &quot;");
    for (const unsigned char *s = (const unsigned char *)source; *s; s++) {
        if (*s < 0x20 || *s > 0x7E || *s == '"' || *s == '%')
            put_fmt(o, "%%%02X", *s);
        else if (*s == '&' || *s == '<' || *s == '>')
            put_str(o, *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : "&gt;");
        else
            put(o, (const char *)s, 1);
    }
    put_str(o, "&quot;; ");
}

static void put_bbox(struct out *o, seer_box b) { put_fmt(o, "bbox %d %d %d %d", b.x0, b.y0, b.x1, b.y1); }

/* "Capabilities": every element and property class we can write is listed, none other is used;
   ocrp_wconf announces x_wconf as Tesseract does. No lang attributes (ocrp_lang is not listed):
   the model is not asked which language it read. */
static void hocr_head(struct out *o, size_t n_pages)
{
    put_str(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n"
               "    \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n"
               "<html xmlns=\"http://www.w3.org/1999/xhtml\">\n <head>\n  <title></title>\n"
               "  <meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\"/>\n"
               "  <meta name=\"ocr-system\" content=\"seer ");
    put_text(o, seer_version(), ESC_XML_ATTR);
    put_str(o, "\"/>\n  <meta name=\"ocr-capabilities\" content=\"ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf\"/>\n");
    put_fmt(o, "  <meta name=\"ocr-number-of-pages\" content=\"%zu\"/>\n </head>\n <body>\n", n_pages);
}

/* One page; k is its 1-based place in the document (the ids), p NULL for a page that failed:
   an ocr_page with its number and nothing else ("ocr_page": must be present for every page). */
static void hocr_page(struct out *o, const seer_ocr_page *p, size_t k, int32_t number, const char *source)
{
    put_fmt(o, "  <div class=\"ocr_page\" id=\"page_%zu\" title=\"", k);
    if (source)
        put_hocr_image(o, source);
    if (p) {
        put_bbox(o, page_box(p));
        put_str(o, "; ");
    }
    put_fmt(o, "ppageno %d", number); /* "ppageno": physical, the front cover is page 0 */
    if (p && isfinite(p->dpi) && p->dpi > 0 && p->dpi < 1e6)
        put_fmt(o, "; scan_res %ld %ld", lround(p->dpi), lround(p->dpi));
    put_str(o, "\">\n");
    size_t n_par = 0, n_line = 0, n_word = 0;
    for (size_t bi = 0; p && bi < p->n_blocks; bi++) {
        const seer_ocr_block *b = &p->blocks[bi];
        n_par++;
        /* ocr_carea > ocr_par: the model writes no paragraphs apart from its blocks, so each
           content area holds one paragraph with the area's box ("ocr_par"). */
        put_fmt(o, "   <div class=\"ocr_carea\" id=\"block_%zu_%zu\" title=\"", k, n_par);
        put_bbox(o, block_box(p, b));
        put_fmt(o, "\">\n    <p class=\"ocr_par\" id=\"par_%zu_%zu\" title=\"", k, n_par);
        put_bbox(o, block_box(p, b));
        put_str(o, "\">\n");
        for (size_t li = 0; li < b->n_lines; li++) {
            const seer_ocr_line *l = &b->lines[li];
            seer_ocr_word one;
            const seer_ocr_word *w;
            size_t nw = line_words(l, &one, &w);
            if (!nw)
                continue;
            /* A line without a box of its own carries the page's (seer_ocr_line.has_box): hOCR
               wants a bbox on every ocr_line, and the page is the one box known to hold it. */
            put_fmt(o, "     <span class=\"ocr_line\" id=\"line_%zu_%zu\" title=\"", k, ++n_line);
            put_bbox(o, l->box);
            put_str(o, "\">");
            for (size_t wi = 0; wi < nw; wi++) {
                put_fmt(o, "\n      <span class=\"ocrx_word\" id=\"word_%zu_%zu\" title=\"", k, ++n_word);
                put_bbox(o, w[wi].box);
                if (w[wi].conf >= 0) /* "x_wconf": 0..100, a posterior probability in % */
                    put_fmt(o, "; x_wconf %d", (int)lroundf(fminf(w[wi].conf, 100.0f)));
                put_str(o, "\">");
                put_text(o, word_text(&w[wi]), ESC_XML_TEXT);
                put_str(o, "</span>");
            }
            put_str(o, "\n     </span>\n");
        }
        put_str(o, "    </p>\n   </div>\n");
    }
    put_str(o, "  </div>\n");
}

/* ---- ALTO 4.4 (www.loc.gov/standards/alto, alto-4-4.xsd) -------------------------------------- */

static void put_alto_box(struct out *o, seer_box b)
{
    put_fmt(o, " HPOS=\"%d\" VPOS=\"%d\" WIDTH=\"%d\" HEIGHT=\"%d\"", b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
}

/* Description: MeasurementUnit "pixel" (all coordinates are the page image's pixels). The
   producer goes in OCRProcessing/ocrProcessingStep/processingSoftware: 4.x marks OCRProcessing
   deprecated in favour of Processing, but it stays valid, Tesseract writes it, and readers made
   for ALTO 2 and 3 look there. */
static void alto_head(struct out *o, const char *source)
{
    put_str(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\" xmlns:xlink=\"http://www.w3.org/1999/xlink\""
               " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\""
               " xsi:schemaLocation=\"http://www.loc.gov/standards/alto/ns-v4# http://www.loc.gov/standards/alto/v4/alto-4-4.xsd\""
               " SCHEMAVERSION=\"4.4\">\n  <Description>\n    <MeasurementUnit>pixel</MeasurementUnit>\n");
    if (source) {
        put_str(o, "    <sourceImageInformation>\n      <fileName>");
        put_text(o, source, ESC_XML_TEXT);
        put_str(o, "</fileName>\n    </sourceImageInformation>\n");
    }
    put_str(o, "    <OCRProcessing ID=\"OCR_0\">\n      <ocrProcessingStep>\n        <processingSoftware>\n"
               "          <softwareName>seer</softwareName>\n          <softwareVersion>");
    put_text(o, seer_version(), ESC_XML_TEXT);
    put_str(o, "</softwareVersion>\n        </processingSoftware>\n      </ocrProcessingStep>\n"
               "    </OCRProcessing>\n  </Description>\n  <Layout>\n");
}

/* PageType: ID and PHYSICAL_IMG_NR are required ("the number of the page within the document",
   counted from 1 here as METS counts images); a page that failed has no known size, so WIDTH,
   HEIGHT and the PrintSpace (all optional) are left out. */
static void alto_page(struct out *o, const seer_ocr_page *p, size_t k, int32_t number)
{
    put_fmt(o, "    <Page ID=\"page_%zu\" PHYSICAL_IMG_NR=\"%lld\"", k, (long long)number + 1);
    if (!p) {
        put_str(o, "/>\n");
        return;
    }
    put_fmt(o, " WIDTH=\"%d\" HEIGHT=\"%d\">\n      <PrintSpace", p->width, p->height);
    put_alto_box(o, page_box(p));
    put_str(o, ">\n");
    size_t n_line = 0, n_word = 0;
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        const seer_ocr_block *b = &p->blocks[bi];
        put_fmt(o, "        <TextBlock ID=\"block_%zu_%zu\"", k, bi + 1);
        put_alto_box(o, block_box(p, b));
        put_str(o, ">\n");
        for (size_t li = 0; li < b->n_lines; li++) {
            const seer_ocr_line *l = &b->lines[li];
            seer_ocr_word one;
            const seer_ocr_word *w;
            size_t nw = line_words(l, &one, &w);
            if (!nw) /* TextLine needs at least one String: an empty line is left out */
                continue;
            put_fmt(o, "          <TextLine ID=\"line_%zu_%zu\"", k, ++n_line);
            put_alto_box(o, l->box);
            put_str(o, ">\n");
            for (size_t wi = 0; wi < nw; wi++) {
                if (wi) { /* SP: the white space between two Strings, where they leave one */
                    int32_t gap = w[wi].box.x0 - w[wi - 1].box.x1;
                    put_fmt(o, "            <SP HPOS=\"%d\" VPOS=\"%d\" WIDTH=\"%d\"/>\n", w[wi - 1].box.x1,
                            w[wi - 1].box.y0, gap > 0 ? gap : 0);
                }
                put_fmt(o, "            <String ID=\"string_%zu_%zu\"", k, ++n_word);
                put_alto_box(o, w[wi].box);
                put_str(o, " CONTENT=\"");
                put_text(o, word_text(&w[wi]), ESC_XML_ATTR);
                put_str(o, "\"");
                if (w[wi].conf >= 0) /* WCType: 0 (unsure) to 1 (confident) */
                    put_fmt(o, " WC=\"%.2f\"", fminf(w[wi].conf, 100.0f) / 100.0f);
                put_str(o, "/>\n");
            }
            put_str(o, "          </TextLine>\n");
        }
        put_str(o, "        </TextBlock>\n");
    }
    put_str(o, "      </PrintSpace>\n    </Page>\n");
}

/* ---- Tesseract's TSV ------------------------------------------------------------------------ */

/* One row: level (1 page, 2 block, 3 paragraph, 4 line, 5 word), the numbers of the page, block,
   paragraph, line and word (1-based, 0 where the row is above that level), the box as left, top,
   width, height, then conf (-1 but on words that have one) and text (words only). */
static void tsv_row(struct out *o, int level, long long page, size_t block, size_t par, size_t line, size_t word,
                    seer_box b, float conf, const char *text)
{
    put_fmt(o, "%d\t%lld\t%zu\t%zu\t%zu\t%zu\t%d\t%d\t%d\t%d\t", level, page, block, par, line, word, b.x0, b.y0,
            b.x1 - b.x0, b.y1 - b.y0);
    /* Tesseract 5 prints a word's confidence as C++'s std::to_string(float): six decimals */
    if (conf >= 0)
        put_fmt(o, "%.6f\t", fminf(conf, 100.0f));
    else
        put_str(o, "-1\t");
    put_text(o, text, ESC_TSV);
    put_str(o, "\n");
}

static void tsv_page(struct out *o, const seer_ocr_page *p, int32_t number)
{
    long long pn = (long long)number + 1; /* Tesseract counts pages from 1 here */
    if (!p) {
        tsv_row(o, 1, pn, 0, 0, 0, 0, (seer_box){0, 0, 0, 0}, -1, "");
        return;
    }
    tsv_row(o, 1, pn, 0, 0, 0, 0, page_box(p), -1, "");
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        const seer_ocr_block *b = &p->blocks[bi];
        tsv_row(o, 2, pn, bi + 1, 0, 0, 0, block_box(p, b), -1, "");
        tsv_row(o, 3, pn, bi + 1, 1, 0, 0, block_box(p, b), -1, ""); /* one paragraph per block */
        size_t n_line = 0;
        for (size_t li = 0; li < b->n_lines; li++) {
            seer_ocr_word one;
            const seer_ocr_word *w;
            size_t nw = line_words(&b->lines[li], &one, &w);
            if (!nw)
                continue;
            tsv_row(o, 4, pn, bi + 1, 1, ++n_line, 0, b->lines[li].box, -1, "");
            for (size_t wi = 0; wi < nw; wi++)
                tsv_row(o, 5, pn, bi + 1, 1, n_line, wi + 1, w[wi].box, w[wi].conf, word_text(&w[wi]));
        }
    }
}

/* ---- the entry point ------------------------------------------------------------------------- */

int seer_ocr_render(const seer_ocr_page *const *pages, size_t n_pages, seer_ocr_format format, const char *source,
                    char **out, size_t *out_len)
{
    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!out || !out_len || (!pages && n_pages))
        return seer_err(SEER_EINVAL, "seer_ocr_render: out, out_len and pages must be given");
    if (format != SEER_OCR_HOCR && format != SEER_OCR_ALTO && format != SEER_OCR_TSV)
        return seer_err(SEER_EINVAL, "seer_ocr_render: unknown format %d", (int)format);
    /* ALTO's Layout needs a Page; the other formats are refused the same way so that an empty
       document is one error whatever the format. */
    if (!n_pages)
        return seer_err(SEER_EINVAL, "seer_ocr_render: no pages");
    struct out o = {0};
    if (format == SEER_OCR_HOCR)
        hocr_head(&o, n_pages);
    else if (format == SEER_OCR_ALTO)
        alto_head(&o, source);
    else
        put_str(&o, "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n");
    for (size_t i = 0; i < n_pages && !o.rc; i++) {
        int32_t number = page_number(pages, n_pages, i);
        if (format == SEER_OCR_HOCR)
            hocr_page(&o, pages[i], i + 1, number, source);
        else if (format == SEER_OCR_ALTO)
            alto_page(&o, pages[i], i + 1, number);
        else
            tsv_page(&o, pages[i], number);
    }
    if (format == SEER_OCR_HOCR)
        put_str(&o, " </body>\n</html>\n");
    else if (format == SEER_OCR_ALTO)
        put_str(&o, "  </Layout>\n</alto>\n");
    if (o.rc) {
        free(o.b.s);
        return o.rc;
    }
    *out = o.b.s;
    *out_len = o.b.n;
    return SEER_OK;
}
