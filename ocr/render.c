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

#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"
#include "ocr/out.h"

/* ---- output ---------------------------------------------------------------------------------- */

int ocr_out_add(ocr_out *o, const char *s, size_t n)
{
    size_t need;
    if (o->rc)
        return o->rc;
    if (!size_add(o->n, n, &need) || !size_add(need, 1, &need) || !seer_grow(&o->s, &o->cap, need, 1, 4096))
        return o->rc = seer_err(SEER_ENOMEM, "no memory for the OCR output (%zu bytes so far)", o->n);
    memcpy(o->s + o->n, s, n);
    o->n += n;
    o->s[o->n] = '\0';
    return SEER_OK;
}

/* The writers append without checking: the one failure (no memory) is sticky in o->rc and
   reported once at the end. */
static void put(ocr_out *o, const char *s, size_t n) { ocr_out_add(o, s, n); }

static void put_str(ocr_out *o, const char *s) { put(o, s, strlen(s)); }

/* Markup and numbers only: text goes through put_text. */
static void put_fmt(ocr_out *o, const char *fmt, ...) SEER_PRINTF(2, 3);
static void put_fmt(ocr_out *o, const char *fmt, ...)
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
static void put_text(ocr_out *o, const char *s, enum esc mode)
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

/* Where the walk of a page is. The numbers are 1-based and count through the page, as Tesseract
   numbers its ids (block_1_2, line_1_7, word_1_31), with the line's place in its block and the
   word's in its line beside them for TSV's columns. */
struct pos {
    const seer_ocr_page *p;
    size_t k;                    /* the page's place in the document */
    long long number;            /* seer_ocr_page.number */
    const seer_ocr_block *b;
    size_t block, line, word;
    size_t line_in_block, word_in_line;
    seer_box line_box;
};

/* What one format writes at each element: opening markup (block, line), each word (prev: the word
   before it in the line, or NULL), and the markup that closes a line and a block. */
struct writer {
    void (*block)(ocr_out *o, const struct pos *at);
    void (*line)(ocr_out *o, const struct pos *at);
    void (*word)(ocr_out *o, const struct pos *at, const seer_ocr_word *w, const seer_ocr_word *prev);
    const char *end_line, *end_block;
};

/* The one walk of a page's tree, for every format: blocks, their lines (a line with nothing to
   write is left out, and not counted), their words. */
static void walk_page(ocr_out *o, struct pos *at, const struct writer *wr)
{
    for (size_t bi = 0; bi < at->p->n_blocks; bi++) {
        at->b = &at->p->blocks[bi];
        at->block = bi + 1;
        at->line_in_block = 0;
        wr->block(o, at);
        for (size_t li = 0; li < at->b->n_lines; li++) {
            const seer_ocr_line *l = &at->b->lines[li];
            seer_ocr_word one;
            const seer_ocr_word *w;
            size_t nw = line_words(l, &one, &w);
            if (!nw)
                continue;
            at->line++;
            at->line_in_block++;
            at->line_box = l->box;
            wr->line(o, at);
            for (size_t wi = 0; wi < nw; wi++) {
                at->word++;
                at->word_in_line = wi + 1;
                wr->word(o, at, &w[wi], wi ? &w[wi - 1] : NULL);
            }
            put_str(o, wr->end_line);
        }
        put_str(o, wr->end_block);
    }
}

/* ---- hOCR 1.2 (kba.github.io/hocr-spec/1.2) ------------------------------------------------- */

/* The properties grammar ("Properties Grammar") allows only printable ASCII without '"' in a
   delimited-string, so the image name is percent-encoded outside that set (and '%' itself, so the
   name can be decoded back). */
static void put_hocr_image(ocr_out *o, const char *source)
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

static void put_bbox(ocr_out *o, seer_box b) { put_fmt(o, "bbox %d %d %d %d", b.x0, b.y0, b.x1, b.y1); }

/* "Capabilities": every element and property class we can write is listed, none other is used;
   ocrp_wconf announces x_wconf as Tesseract does. No lang attributes (ocrp_lang is not listed):
   the model is not asked which language it read. */
static void hocr_head(ocr_out *o, size_t n_pages)
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

/* ocr_carea > ocr_par: the model writes no paragraphs apart from its blocks, so each content
   area holds one paragraph with the area's box ("ocr_par"), numbered as the area. */
static void hocr_block(ocr_out *o, const struct pos *at)
{
    put_fmt(o, "   <div class=\"ocr_carea\" id=\"block_%zu_%zu\" title=\"", at->k, at->block);
    put_bbox(o, block_box(at->p, at->b));
    put_fmt(o, "\">\n    <p class=\"ocr_par\" id=\"par_%zu_%zu\" title=\"", at->k, at->block);
    put_bbox(o, block_box(at->p, at->b));
    put_str(o, "\">\n");
}

/* A line without a box of its own carries the page's (seer_ocr_line.has_box): hOCR wants a bbox on
   every ocr_line, and the page is the one box known to hold it. */
static void hocr_line(ocr_out *o, const struct pos *at)
{
    put_fmt(o, "     <span class=\"ocr_line\" id=\"line_%zu_%zu\" title=\"", at->k, at->line);
    put_bbox(o, at->line_box);
    put_str(o, "\">");
}

static void hocr_word(ocr_out *o, const struct pos *at, const seer_ocr_word *w, const seer_ocr_word *prev)
{
    (void)prev;
    put_fmt(o, "\n      <span class=\"ocrx_word\" id=\"word_%zu_%zu\" title=\"", at->k, at->word);
    put_bbox(o, w->box);
    if (w->conf >= 0) /* "x_wconf": 0..100, a posterior probability in % */
        put_fmt(o, "; x_wconf %d", (int)lroundf(fminf(w->conf, 100.0f)));
    put_str(o, "\">");
    put_text(o, word_text(w), ESC_XML_TEXT);
    put_str(o, "</span>");
}

static const struct writer hocr_writer = {hocr_block, hocr_line, hocr_word, "\n     </span>\n", "    </p>\n   </div>\n"};

/* One page; at->p is NULL for a page that failed: an ocr_page with its number and nothing else
   ("ocr_page": present for every page). */
static void hocr_page(ocr_out *o, struct pos *at, const char *source)
{
    const seer_ocr_page *p = at->p;
    put_fmt(o, "  <div class=\"ocr_page\" id=\"page_%zu\" title=\"", at->k);
    if (source)
        put_hocr_image(o, source);
    if (p) {
        put_bbox(o, page_box(p));
        put_str(o, "; ");
    }
    put_fmt(o, "ppageno %lld", at->number); /* "ppageno": physical, the front cover is page 0 */
    if (p && isfinite(p->dpi) && p->dpi > 0 && p->dpi < 1e6)
        put_fmt(o, "; scan_res %ld %ld", lround(p->dpi), lround(p->dpi));
    put_str(o, "\">\n");
    if (p)
        walk_page(o, at, &hocr_writer);
    put_str(o, "  </div>\n");
}

/* ---- ALTO 4.4 (www.loc.gov/standards/alto, alto-4-4.xsd) -------------------------------------- */

static void put_alto_box(ocr_out *o, seer_box b)
{
    put_fmt(o, " HPOS=\"%d\" VPOS=\"%d\" WIDTH=\"%d\" HEIGHT=\"%d\"", b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
}

/* Description: MeasurementUnit "pixel" (all coordinates are the page image's pixels). The
   producer goes in OCRProcessing/ocrProcessingStep/processingSoftware: 4.x marks OCRProcessing
   deprecated in favour of Processing, but it stays valid, Tesseract writes it, and readers made
   for ALTO 2 and 3 look there. */
static void alto_head(ocr_out *o, const char *source)
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

static void alto_block(ocr_out *o, const struct pos *at)
{
    put_fmt(o, "        <TextBlock ID=\"block_%zu_%zu\"", at->k, at->block);
    put_alto_box(o, block_box(at->p, at->b));
    put_str(o, ">\n");
}

/* (An empty line never comes here: TextLine needs at least one String.) */
static void alto_line(ocr_out *o, const struct pos *at)
{
    put_fmt(o, "          <TextLine ID=\"line_%zu_%zu\"", at->k, at->line);
    put_alto_box(o, at->line_box);
    put_str(o, ">\n");
}

static void alto_word(ocr_out *o, const struct pos *at, const seer_ocr_word *w, const seer_ocr_word *prev)
{
    if (prev) { /* SP: the white space between two Strings, where they leave one */
        int32_t gap = w->box.x0 - prev->box.x1;
        put_fmt(o, "            <SP HPOS=\"%d\" VPOS=\"%d\" WIDTH=\"%d\"/>\n", prev->box.x1, prev->box.y0, gap > 0 ? gap : 0);
    }
    put_fmt(o, "            <String ID=\"string_%zu_%zu\"", at->k, at->word);
    put_alto_box(o, w->box);
    put_str(o, " CONTENT=\"");
    put_text(o, word_text(w), ESC_XML_ATTR);
    put_str(o, "\"");
    if (w->conf >= 0) /* WCType: 0 (unsure) to 1 (confident) */
        put_fmt(o, " WC=\"%.2f\"", fminf(w->conf, 100.0f) / 100.0f);
    put_str(o, "/>\n");
}

static const struct writer alto_writer = {alto_block, alto_line, alto_word, "          </TextLine>\n", "        </TextBlock>\n"};

/* PageType: ID and PHYSICAL_IMG_NR are required ("the number of the page within the document",
   counted from 1 here as METS counts images); a page that failed has no known size, so WIDTH,
   HEIGHT and the PrintSpace (all optional) are left out. */
static void alto_page(ocr_out *o, struct pos *at)
{
    put_fmt(o, "    <Page ID=\"page_%zu\" PHYSICAL_IMG_NR=\"%lld\"", at->k, at->number + 1);
    if (!at->p) {
        put_str(o, "/>\n");
        return;
    }
    put_fmt(o, " WIDTH=\"%d\" HEIGHT=\"%d\">\n      <PrintSpace", at->p->width, at->p->height);
    put_alto_box(o, page_box(at->p));
    put_str(o, ">\n");
    walk_page(o, at, &alto_writer);
    put_str(o, "      </PrintSpace>\n    </Page>\n");
}

/* ---- Tesseract's TSV ------------------------------------------------------------------------ */

/* One row: level (1 page, 2 block, 3 paragraph, 4 line, 5 word), the numbers of the page, block,
   paragraph, line and word (1-based, 0 where the row is above that level), the box as left, top,
   width, height, then conf (-1 but on words that have one) and text (words only). */
static void tsv_row(ocr_out *o, int level, long long page, size_t block, size_t par, size_t line, size_t word,
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

static void tsv_block(ocr_out *o, const struct pos *at)
{
    tsv_row(o, 2, at->number + 1, at->block, 0, 0, 0, block_box(at->p, at->b), -1, "");
    tsv_row(o, 3, at->number + 1, at->block, 1, 0, 0, block_box(at->p, at->b), -1, ""); /* one paragraph per block */
}

static void tsv_line(ocr_out *o, const struct pos *at)
{
    tsv_row(o, 4, at->number + 1, at->block, 1, at->line_in_block, 0, at->line_box, -1, "");
}

static void tsv_word(ocr_out *o, const struct pos *at, const seer_ocr_word *w, const seer_ocr_word *prev)
{
    (void)prev;
    tsv_row(o, 5, at->number + 1, at->block, 1, at->line_in_block, at->word_in_line, w->box, w->conf, word_text(w));
}

static const struct writer tsv_writer = {tsv_block, tsv_line, tsv_word, "", ""};

/* page_num counts from 1 in Tesseract's TSV; a page that failed is its level-1 row alone. */
static void tsv_page(ocr_out *o, struct pos *at)
{
    tsv_row(o, 1, at->number + 1, 0, 0, 0, 0, at->p ? page_box(at->p) : (seer_box){0, 0, 0, 0}, -1, "");
    if (at->p)
        walk_page(o, at, &tsv_writer);
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
    ocr_out o = {0};
    if (format == SEER_OCR_HOCR)
        hocr_head(&o, n_pages);
    else if (format == SEER_OCR_ALTO)
        alto_head(&o, source);
    else
        put_str(&o, "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n");
    for (size_t i = 0; i < n_pages && !o.rc; i++) {
        struct pos at = {.p = pages[i], .k = i + 1, .number = page_number(pages, n_pages, i)};
        if (format == SEER_OCR_HOCR)
            hocr_page(&o, &at, source);
        else if (format == SEER_OCR_ALTO)
            alto_page(&o, &at);
        else
            tsv_page(&o, &at);
    }
    if (format == SEER_OCR_HOCR)
        put_str(&o, " </body>\n</html>\n");
    else if (format == SEER_OCR_ALTO)
        put_str(&o, "  </Layout>\n</alto>\n");
    if (o.rc) {
        free(o.s);
        return o.rc;
    }
    *out = o.s;
    *out_len = o.n;
    return SEER_OK;
}
