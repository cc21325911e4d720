/* pages.c — documents in the public API (seer.h "tokens and pages"): an image, TIFF or PDF opened
   once and decoded page by page by media/, with the limits a model's params set, for a program that
   decodes pages apart from the model (seer ocr's decoding thread). */
#include <stdint.h>
#include <stdlib.h>

#include "api/vision.h"
#include "core/error.h"
#include "core/util.h"
#include "media/decode.h"
#include "seer.h"

struct seer_document {
    media_doc *doc;
};

int seer_document_open(const char *path, const seer_model_params *params, seer_document **out)
{
    if (!path || !out)
        return seer_err(SEER_EINVAL, "seer_document_open: NULL argument");
    const struct media_limits lim = api_media_limits(params);
    seer_document *d = seer_calloc(1, sizeof *d);
    if (!d)
        return seer_err(SEER_ENOMEM, "%s: no memory to open it", path);
    int rc = media_open(path, &lim, &d->doc);
    if (!rc && media_page_count(d->doc) < 1) /* a video: no pages */
        rc = seer_err(SEER_EUNSUPPORTED, "%s: is a video, not an image", path);
    if (rc) {
        seer_document_close(d);
        return rc;
    }
    *out = d;
    return SEER_OK;
}

int32_t seer_document_pages(const seer_document *d) { return d ? media_page_count(d->doc) : 0; }

int seer_document_decode(seer_document *d, int32_t page, uint8_t **rgb, int32_t *width, int32_t *height)
{
    if (!d || !rgb || !width || !height)
        return seer_err(SEER_EINVAL, "seer_document_decode: NULL argument");
    struct image_rgb8 im = {0};
    int rc = media_decode_page(d->doc, page, &im);
    if (rc)
        return rc;
    *rgb = im.px; /* seer_malloc'ed: seer_free releases it */
    *width = im.width;
    *height = im.height;
    return SEER_OK;
}

double seer_document_dpi(seer_document *d, int32_t page) { return d ? media_page_dpi(d->doc, page) : 0; }

void seer_document_close(seer_document *d)
{
    if (!d)
        return;
    media_close(d->doc);
    free(d);
}
