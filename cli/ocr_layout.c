/* ocr_layout.c — the layout formats of seer ocr (hocr, alto, tsv, pdf; docs/OCR.md): each page's
   answer to the grounding prompt is read into lines with boxes (seer_ocr_parse), and an input's
   pages are gathered into one document, rendered when the input is done (seer_ocr_render) or, for a
   PDF, drawn page by page as they come (seer_ocr_pdf_add) so that a long scan's pixels are never
   held all at once. Pages come in page order: the batch hands results over in input order. */
#include <stdlib.h>
#include <string.h>

#include "cli/ocr.h"
#include "cli/util.h"
#include "seer.h"

static int push(struct ocr_doc *d, seer_ocr_page *p)
{
    if (!cli_grow(&d->pages, &d->cap, d->n + 1, sizeof *d->pages, 8)) {
        seer_ocr_page_free(p);
        return cli_err(SEER_ENOMEM, "out of memory holding an input's pages");
    }
    d->pages[d->n++] = p;
    return SEER_OK;
}

int ocr_doc_page(struct ocr_doc *d, enum ocr_format fmt, const struct ocr_item *it, const seer_result *r)
{
    int rc;
    seer_ocr_page *p = NULL;
    /* Qwen3.5 grounds on the 0..1000 grid of the image it saw (docs/OCR.md), so the resize it made
       does not enter; the decoder already turned the page upright, as it is shown */
    const seer_ocr_geometry g = {.width = it->width, .height = it->height, .coords = SEER_OCR_COORDS_REL1000,
                                 .dpi = it->dpi};
    if ((rc = seer_ocr_parse(r, &g, &p)))
        return rc;
    p->number = it->page - 1;
    if (fmt == FMT_PDF) {
        if (!d->pdf && (rc = seer_ocr_pdf_create(&d->pdf)))
            return seer_ocr_page_free(p), rc;
        rc = seer_ocr_pdf_add(d->pdf, it->rgb, it->width, it->height, p);
        seer_ocr_page_free(p);
        return rc;
    }
    return push(d, p);
}

int ocr_doc_failed(struct ocr_doc *d, enum ocr_format fmt)
{
    /* a failed page keeps its place in a document printed to stdout (an empty page of its number);
       with --out the input is not written at all (finish_input) */
    return fmt == FMT_PDF ? SEER_OK : push(d, NULL);
}

int ocr_doc_finish(struct ocr_doc *d, enum ocr_format fmt, const char *source, char **out, size_t *len)
{
    *out = NULL, *len = 0;
    if (fmt == FMT_PDF) {
        if (!d->pdf)
            return SEER_OK; /* no page was done */
        uint8_t *bytes = NULL;
        int rc = seer_ocr_pdf_finish(d->pdf, &bytes, len);
        d->pdf = NULL;
        *out = (char *)bytes;
        return rc;
    }
    size_t done = 0;
    for (size_t k = 0; k < d->n; k++)
        done += d->pages[k] != NULL;
    if (done == 0) /* every page failed: no document (each failure had its line) */
        return SEER_OK;
    static const seer_ocr_format lib[] = {[FMT_HOCR] = SEER_OCR_HOCR, [FMT_ALTO] = SEER_OCR_ALTO,
                                          [FMT_TSV] = SEER_OCR_TSV};
    return seer_ocr_render((const seer_ocr_page *const *)d->pages, d->n, lib[fmt], source, out, len);
}

void ocr_doc_clear(struct ocr_doc *d)
{
    for (size_t k = 0; k < d->n; k++)
        seer_ocr_page_free(d->pages[k]);
    free(d->pages);
    seer_ocr_pdf_free(d->pdf);
    memset(d, 0, sizeof *d);
}
