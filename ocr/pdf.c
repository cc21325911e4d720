/* pdf.c — seer_ocr_pdf_*: a searchable PDF built in memory with cairo's PDF surface. Each page is
   the scan as an image filling the page, sized pixels * 72 / dpi points, with the recognised text
   at its boxes where nobody sees it and every tool finds it.
   How the text is hidden: it is drawn first, in ordinary opaque glyphs, and the opaque scan is
   painted over it. cairo has no call for PDF's invisible text rendering mode (Tr 3), and it drops
   drawing it can prove invisible (a fully transparent source) before it reaches the file, while
   text under an image is real text to the PDF: pdftotext, search and selection find it, and a
   viewer shows the scan alone (tests/ocr/pdf.c checks both). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"
#include "ocr/out.h"

#ifdef SEER_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo.h>
#ifdef SEER_HAVE_FFMPEG
#include <turbojpeg.h>
#endif

struct seer_ocr_pdf {
    cairo_surface_t *surface; /* the PDF surface, writing into bytes as cairo goes */
    ocr_out bytes;
    int write_failed;         /* no memory for the bytes cairo wrote (cairo only sees a write error) */
    size_t n_pages;
    double last_dpi;          /* the dpi of the last page that had one, for a page that failed */
    int broken;               /* a page failed while drawn: it may be in the file in part, so the
                                 document can only be freed */
};

static cairo_status_t write_bytes(void *closure, const unsigned char *data, unsigned int length)
{
    seer_ocr_pdf *pdf = closure;
    if (ocr_out_add(&pdf->bytes, (const char *)data, length)) {
        pdf->write_failed = 1;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

/* cairo's status as the library's error (its message names the cause). */
static int cairo_fail(seer_ocr_pdf *pdf, cairo_status_t st, const char *what)
{
    if (pdf->write_failed || st == CAIRO_STATUS_NO_MEMORY)
        return seer_err(SEER_ENOMEM, "searchable PDF: no memory while %s", what);
    return seer_err(SEER_EIO, "searchable PDF: cairo failed while %s: %s", what, cairo_status_to_string(st));
}

int seer_ocr_pdf_create(seer_ocr_pdf **out)
{
    if (!out)
        return seer_err(SEER_EINVAL, "seer_ocr_pdf_create: out is NULL");
    *out = NULL;
    seer_ocr_pdf *pdf = seer_calloc(1, sizeof *pdf);
    if (!pdf)
        return seer_err(SEER_ENOMEM, "searchable PDF: no memory");
    /* The size is set again for every page (cairo_pdf_surface_set_size) before it is drawn. */
    pdf->surface = cairo_pdf_surface_create_for_stream(write_bytes, pdf, 72, 72);
    cairo_status_t st = cairo_surface_status(pdf->surface);
    if (st) {
        int rc = cairo_fail(pdf, st, "creating the document");
        seer_ocr_pdf_free(pdf);
        return rc;
    }
    cairo_pdf_surface_set_metadata(pdf->surface, CAIRO_PDF_METADATA_CREATOR, "seer");
    *out = pdf;
    return SEER_OK;
}

#ifdef SEER_HAVE_FFMPEG
/* Whether the scan is photographic: fewer than half of its pixels (every 8th row looked at) repeat
   the one to their left. A clean scan (paper of one colour, text) is mostly repeats and stays
   lossless: Flate keeps it exact and small. A photo or a camera's page is grain everywhere, which
   Flate keeps at 70-85% of the raw bytes (a 1700x2200 page: over 9 MB, tests/ocr/pdf.c), while
   the JPEG it most likely came from was a tenth of that. */
static int photographic(const uint8_t *rgb, int32_t width, int32_t height)
{
    size_t same = 0, n = 0;
    for (int32_t y = 0; y < height; y += 8) {
        const uint8_t *row = rgb + (size_t)y * (size_t)width * 3;
        for (int32_t x = 1; x < width; x++, n++)
            same += !memcmp(row + (size_t)x * 3, row + (size_t)(x - 1) * 3, 3);
    }
    return n && same * 2 < n;
}

static void free_jpeg(void *p) { tjFree(p); }

/* Gives the image a JPEG of itself (quality 90), which cairo's PDF surface embeds as it is
   (DCTDecode) in place of its Flate copy. Where the encoder fails the page stays lossless. */
static void attach_jpeg(cairo_surface_t *img, const uint8_t *rgb, int32_t width, int32_t height)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long n = 0;
    int rc = tj ? tjCompress2(tj, rgb, width, 0, height, TJPF_RGB, &jpg, &n, TJSAMP_420, 90, 0) : -1;
    if (tj)
        tjDestroy(tj);
    if (rc || cairo_surface_set_mime_data(img, CAIRO_MIME_TYPE_JPEG, jpg, n, free_jpeg, jpg))
        tjFree(jpg);
}
#endif

/* The scan as a cairo image (RGB24: one native-endian 0x00RRGGBB word per pixel), with a JPEG of
   itself when it is photographic, or NULL. */
static cairo_surface_t *scan_image(const uint8_t *rgb, int32_t width, int32_t height)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    if (cairo_surface_status(img)) {
        cairo_surface_destroy(img);
        return NULL;
    }
    unsigned char *data = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int32_t y = 0; y < height; y++) {
        uint32_t *row = (uint32_t *)(void *)(data + (size_t)y * (size_t)stride);
        const uint8_t *src = rgb + (size_t)y * (size_t)width * 3;
        for (int32_t x = 0; x < width; x++, src += 3)
            row[x] = (uint32_t)src[0] << 16 | (uint32_t)src[1] << 8 | src[2];
    }
    cairo_surface_mark_dirty(img);
#ifdef SEER_HAVE_FFMPEG
    if (photographic(rgb, width, height))
        attach_jpeg(img, rgb, width, height);
#endif
    return img;
}


/* One line of text stretched over box (page pixels): the font size makes the font's ascent plus
   descent the box's height, the baseline sits the descent above the box's bottom, and a horizontal
   scale makes the text's advance the box's width, so a selection or search hit covers the printed
   line. Without `stretch` the text is only narrowed to fit: a box-less line's band is the page's
   width, and text stretched far apart reads to pdftotext as separate words in columns. */
static void draw_line(cairo_t *cr, const char *text, seer_box box, int stretch)
{
    double w = box.x1 - box.x0, h = box.y1 - box.y0;
    if (!text[0] || w <= 0 || h <= 0)
        return;
    cairo_font_extents_t fe;
    cairo_text_extents_t te;
    cairo_set_font_size(cr, 1.0);
    cairo_font_extents(cr, &fe);
    double em = fe.ascent + fe.descent > 0 ? fe.ascent + fe.descent : 1.0;
    double size = h / em;
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, text, &te);
    if (!(te.x_advance > 0))
        return; /* nothing with a width to show (or glyphs the font lacks entirely) */
    cairo_save(cr);
    cairo_translate(cr, box.x0, box.y1 - fe.descent * size);
    cairo_scale(cr, stretch || w < te.x_advance ? w / te.x_advance : 1.0, 1.0);
    cairo_move_to(cr, 0, 0);
    cairo_show_text(cr, text);
    cairo_restore(cr);
}

/* The text a line is drawn with: its own, else its words joined by spaces (NULL when neither),
   in *tmp when made here. */
static const char *line_text(const seer_ocr_line *l, char **tmp)
{
    *tmp = NULL;
    if (l->text && l->text[0])
        return l->text;
    size_t n = 0;
    for (size_t i = 0; i < l->n_words; i++)
        n += (l->words[i].text ? strlen(l->words[i].text) : 0) + 1;
    if (!n || !(*tmp = seer_malloc(n)))
        return NULL;
    char *p = *tmp;
    for (size_t i = 0; i < l->n_words; i++) {
        size_t k = l->words[i].text ? strlen(l->words[i].text) : 0;
        memcpy(p, l->words[i].text ? l->words[i].text : "", k);
        p += k;
        *p++ = i + 1 < l->n_words ? ' ' : '\0';
    }
    return *tmp;
}

/* cairo refuses text that is not UTF-8 by putting the whole drawing in an error state, so a page
   from a C caller with a bad byte in one word would fail entirely: a copy with U+FFFD for each
   maximal invalid subpart (Unicode §3.9), or NULL when s is valid as it is (or no memory: *fail). */
static char *valid_utf8(const char *s, int *fail)
{
    size_t n = strlen(s), k = 0;
    if (utf8_check(s, n) == n)
        return NULL;
    char *t = seer_malloc(n * 3 + 1); /* each byte at worst one U+FFFD */
    if (!t) {
        *fail = 1;
        return NULL;
    }
    for (size_t i = 0, len, full; i < n; i += len) {
        uint32_t cp;
        len = utf8_subpart(s + i, n - i, &full, &cp);
        memcpy(t + k, len == full ? s + i : "\xEF\xBF\xBD", len == full ? len : 3);
        k += len == full ? len : 3;
    }
    t[k] = '\0';
    return t;
}

/* A line has a box to draw in: its own, unless the answer gave none or a degenerate one (a
   clamped box can have no width or height), where text cannot be fitted. */
static int boxed(const seer_ocr_line *l) { return l->has_box && l->box.x1 > l->box.x0 && l->box.y1 > l->box.y0; }

/* The page's text. Lines without a box of their own (seer_ocr_line.has_box) all carry the page's
   box: drawn there they would lie on top of each other and extraction would mix them, so they are
   stacked down the page in the order the model wrote them, each in its own band (at most a
   twentieth of the page high, so a lone line does not become one page-high glyph run). */
static int draw_text(cairo_t *cr, const seer_ocr_page *page)
{
    for (size_t bi = 0; bi < page->n_blocks; bi++) {
        const seer_ocr_block *b = &page->blocks[bi];
        size_t n_boxless = 0, k = 0;
        for (size_t li = 0; li < b->n_lines; li++)
            n_boxless += !boxed(&b->lines[li]);
        double band = n_boxless ? fmin((double)page->height / (double)n_boxless, page->height / 20.0) : 0;
        for (size_t li = 0; li < b->n_lines; li++) {
            const seer_ocr_line *l = &b->lines[li];
            char *tmp;
            int fail = 0;
            const char *text = line_text(l, &tmp);
            char *clean = text ? valid_utf8(text, &fail) : NULL;
            if ((!text && l->n_words) || fail) {
                free(tmp);
                return seer_err(SEER_ENOMEM, "searchable PDF: no memory");
            }
            seer_box box = l->box;
            if (!boxed(l)) {
                box = (seer_box){0, (int32_t)(band * (double)k), page->width, (int32_t)(band * (double)(k + 1))};
                k++;
            }
            if (text)
                draw_line(cr, clean ? clean : text, box, boxed(l));
            free(clean);
            free(tmp);
        }
    }
    return SEER_OK;
}

int seer_ocr_pdf_add(seer_ocr_pdf *pdf, const uint8_t *rgb, int32_t width, int32_t height, const seer_ocr_page *page)
{
    if (!pdf || !rgb || width <= 0 || height <= 0)
        return seer_err(SEER_EINVAL, "seer_ocr_pdf_add: a document and an image of at least 1x1 pixels are needed");
    if (page && (page->width != width || page->height != height))
        return seer_err(SEER_EINVAL, "seer_ocr_pdf_add: the page's layout is for %dx%d pixels but its image is %dx%d",
                        page->width, page->height, width, height);
    if (pdf->broken || cairo_surface_status(pdf->surface))
        return pdf->broken ? seer_err(SEER_EINVAL, "seer_ocr_pdf_add: a page of this document failed before")
                           : cairo_fail(pdf, cairo_surface_status(pdf->surface), "adding a page to a document that failed before");
    /* dpi 0 (unknown) is taken as 300, the usual scanning resolution; a page that failed keeps
       the resolution of the pages before it, so a document rasterised at 150 dpi keeps one size. */
    double dpi = page ? page->dpi : pdf->last_dpi;
    if (!(isfinite(dpi) && dpi > 0))
        dpi = 300;
    if (page)
        pdf->last_dpi = dpi;
    double scale = 72.0 / dpi;
    cairo_surface_t *img = scan_image(rgb, width, height);
    if (!img)
        return seer_err(SEER_ENOMEM, "searchable PDF: no memory for a %dx%d page image", width, height);
    cairo_pdf_surface_set_size(pdf->surface, width * scale, height * scale);
    cairo_t *cr = cairo_create(pdf->surface);
    cairo_scale(cr, scale, scale); /* from here on, page pixels */
    int rc = SEER_OK;
    if (page) {
        cairo_select_font_face(cr, "sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_source_rgb(cr, 0, 0, 0);
        rc = draw_text(cr, page);
    }
    cairo_set_source_surface(cr, img, 0, 0);
    /* no /Interpolate: drawn at its own dpi a page is its pixels, and viewers do not smooth a
       zoomed scan into something it did not show */
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr); /* the scan, opaque, over the text */
    cairo_show_page(cr);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_destroy(img);
    if (!rc && st)
        rc = cairo_fail(pdf, st, "drawing a page");
    if (!rc && cairo_surface_status(pdf->surface))
        rc = cairo_fail(pdf, cairo_surface_status(pdf->surface), "writing a page");
    if (!rc)
        pdf->n_pages++;
    else
        pdf->broken = 1;
    return rc;
}

int seer_ocr_pdf_finish(seer_ocr_pdf *pdf, uint8_t **bytes, size_t *len)
{
    if (bytes)
        *bytes = NULL;
    if (len)
        *len = 0;
    if (!pdf || !bytes || !len) {
        seer_ocr_pdf_free(pdf);
        return seer_err(SEER_EINVAL, "seer_ocr_pdf_finish: a document, bytes and len are needed");
    }
    if (!pdf->n_pages || pdf->broken) {
        int rc = seer_err(SEER_EINVAL, "seer_ocr_pdf_finish: %s",
                          pdf->broken ? "a page of the document failed" : "the document has no pages");
        seer_ocr_pdf_free(pdf);
        return rc;
    }
    cairo_surface_finish(pdf->surface);
    cairo_status_t st = cairo_surface_status(pdf->surface);
    int rc = st ? cairo_fail(pdf, st, "finishing the document") : SEER_OK;
    if (!rc) {
        *bytes = (uint8_t *)pdf->bytes.s;
        *len = pdf->bytes.n;
        pdf->bytes.s = NULL;
    }
    seer_ocr_pdf_free(pdf);
    return rc;
}

void seer_ocr_pdf_free(seer_ocr_pdf *pdf)
{
    if (!pdf)
        return;
    cairo_surface_destroy(pdf->surface); /* finishes it first when unfinished: bytes still taken */
    free(pdf->bytes.s);
    free(pdf);
}

#else /* no cairo in this build */

static int no_cairo(void)
{
    return seer_err(SEER_EUNSUPPORTED, "searchable PDF: this build of seer has no cairo (configure with cairo "
                                       "installed, scripts/install-deps.sh, or -DSEER_CAIRO=ON)");
}

int seer_ocr_pdf_create(seer_ocr_pdf **out)
{
    if (out)
        *out = NULL;
    return no_cairo();
}

int seer_ocr_pdf_add(seer_ocr_pdf *pdf, const uint8_t *rgb, int32_t width, int32_t height, const seer_ocr_page *page)
{
    (void)pdf, (void)rgb, (void)width, (void)height, (void)page;
    return no_cairo();
}

int seer_ocr_pdf_finish(seer_ocr_pdf *pdf, uint8_t **bytes, size_t *len)
{
    (void)pdf;
    if (bytes)
        *bytes = NULL;
    if (len)
        *len = 0;
    return no_cairo();
}

void seer_ocr_pdf_free(seer_ocr_pdf *pdf) { (void)pdf; }

#endif
