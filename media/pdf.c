/* pdf.c — PDF pages rasterised with poppler-glib + cairo at lim->dpi on a white background (what a
   scan-to-text pipeline such as OCRmyPDF or pdftoppm feeds an OCR engine). The page size × dpi is
   checked against the pixel limit before the surface exists. Built only with SEER_PDF (poppler is
   GPL-2.0-or-later; README); without it a PDF is recognised and refused with a clear message. */
#include "media/media_impl.h"

#include "core/error.h"

#if defined(SEER_HAVE_PDF)

#include <math.h>
#include <pthread.h>

#include <cairo.h>
#include <poppler.h>

/* Poppler reports syntax problems through GLib's log ("Poppler" domain); a corrupt PDF must not
   print, so those messages are dropped (the failure itself comes back as a GError). */
static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer user)
{
    (void)domain, (void)level, (void)msg, (void)user;
}
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static void log_install(void) { g_log_set_handler("Poppler", G_LOG_LEVEL_MASK, drop_log, NULL); }

int media_pdf_open(media_doc *d, int *n_pages)
{
    pthread_once(&log_once, log_install);
    /* the bytes outlive the document: media_close closes it before unmapping */
    GBytes *bytes = g_bytes_new_static(d->data, d->size);
    GError *err = NULL;
    PopplerDocument *doc = poppler_document_new_from_bytes(bytes, NULL, &err);
    g_bytes_unref(bytes);
    if (!doc) {
        int rc = err && err->code == POPPLER_ERROR_ENCRYPTED
                     ? seer_err(SEER_EUNSUPPORTED, "%s: PDF is password-protected", d->name)
                     : seer_err(SEER_EDECODE, "%s: corrupt PDF (poppler: %s)", d->name,
                                err ? err->message : "cannot open");
        if (err)
            g_error_free(err);
        return rc;
    }
    int n = poppler_document_get_n_pages(doc);
    if (n <= 0) {
        g_object_unref(doc);
        return seer_err(SEER_EDECODE, "%s: corrupt PDF: no pages", d->name);
    }
    d->pdf = doc;
    *n_pages = n;
    return SEER_OK;
}

void media_pdf_close(media_doc *d)
{
    if (d->pdf)
        g_object_unref(d->pdf);
    d->pdf = NULL;
}

int media_pdf_decode(media_doc *d, int page, struct image_rgb8 *out)
{
    PopplerPage *pg = poppler_document_get_page(d->pdf, page);
    if (!pg)
        return seer_err(SEER_EDECODE, "%s: corrupt PDF page %d", d->name, page + 1);
    double pw = 0, ph = 0, scale = d->lim.dpi / 72.0; /* PDF user space is 1/72 inch */
    poppler_page_get_size(pg, &pw, &ph);              /* points, after the page's /Rotate */
    double fw = ceil(pw * scale - 1e-6), fh = ceil(ph * scale - 1e-6);
    int rc = SEER_OK;
    if (!(fw >= 1 && fh >= 1)) {
        rc = seer_err(SEER_EDECODE, "%s: corrupt PDF page %d: page size %gx%g points", d->name, page + 1, pw, ph);
        goto done_page;
    }
    if (fw * fh > (double)d->lim.max_pixels) {
        rc = seer_err(SEER_EFORMAT, "%s: PDF page %d is %.0fx%.0f pixels at %g dpi, more than the limit of "
                      "%lld pixels; lower --dpi or raise --max-image-pixels", d->name, page + 1, fw, fh,
                      d->lim.dpi, (long long)d->lim.max_pixels);
        goto done_page;
    }
    int w = (int)fw, h = (int)fh;
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
        rc = seer_err(SEER_ENOMEM, "%s: PDF page %d: cannot make a %dx%d surface (cairo: %s)", d->name, page + 1,
                      w, h, cairo_status_to_string(cairo_surface_status(sf)));
        cairo_surface_destroy(sf);
        goto done_page;
    }
    /* The page is drawn on a transparent surface and white paper is put underneath afterwards
       (DEST_OVER), as pdftocairo does: the same pixels as `pdftocairo -png -r DPI`, which the
       tests compare with (painting white first rounds antialiased edges differently by 1). */
    cairo_t *cr = cairo_create(sf);
    cairo_save(cr);
    cairo_scale(cr, scale, scale);
    poppler_page_render(pg, cr);
    cairo_restore(cr);
    cairo_set_operator(cr, CAIRO_OPERATOR_DEST_OVER);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(sf);
    struct image_rgb8 im = {0};
    if (st != CAIRO_STATUS_SUCCESS)
        rc = seer_err(SEER_EDECODE, "%s: PDF page %d failed to render (cairo: %s)", d->name, page + 1,
                      cairo_status_to_string(st));
    else if (!(rc = media_image_alloc(d, w, h, &im))) {
        const uint8_t *base = cairo_image_surface_get_data(sf);
        int stride = cairo_image_surface_get_stride(sf);
        for (int y = 0; y < h; y++) {
            /* native-endian premultiplied ARGB, opaque everywhere after the white paper */
            const uint32_t *row = (const uint32_t *)(base + (size_t)y * stride);
            uint8_t *o = im.px + (size_t)y * w * 3;
            for (int x = 0; x < w; x++, o += 3)
                o[0] = row[x] >> 16 & 255, o[1] = row[x] >> 8 & 255, o[2] = row[x] & 255;
        }
        *out = im;
    }
    cairo_surface_destroy(sf);
done_page:
    g_object_unref(pg);
    return rc;
}

#else /* !SEER_HAVE_PDF */

int media_pdf_open(media_doc *d, int *n_pages)
{
    (void)n_pages;
    return seer_err(SEER_EUNSUPPORTED, "%s: is a PDF, and this seer was built without PDF support "
                    "(SEER_PDF=OFF; rebuild with poppler-glib and cairo)", d->name);
}

void media_pdf_close(media_doc *d) { (void)d; }

int media_pdf_decode(media_doc *d, int page, struct image_rgb8 *out)
{
    (void)page, (void)out;
    return media_pdf_open(d, NULL);
}

#endif
