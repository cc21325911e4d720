/* density.c — a page's printed resolution (media_page_dpi, media/decode.h), read from the few bytes
   each format keeps it in. The bytes are the input file's: every read is bounds-checked. */
#include <stdint.h>
#include <string.h>

#include "media/decode.h"
#include "media/media_impl.h"

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p) { return be16(p) << 16 | be16(p + 2); }

/* A density in `per_unit` units where `unit` 1 = inch, 2 = centimetre; 0 for anything else. */
static double per_inch(double density, double inches_per_unit)
{
    return density > 0 && density < 1e6 ? density / inches_per_unit : 0;
}

/* JFIF's APP0 (JPEG File Interchange Format 1.02): "JFIF\0", version, units, Xdensity, Ydensity. */
static double jpeg_dpi(const uint8_t *p, size_t n)
{
    for (size_t at = 2; at + 4 <= n && p[at] == 0xFF;) {
        const uint8_t marker = p[at + 1];
        const size_t len = be16(p + at + 2);
        if (marker == 0xDA || len < 2 || at + 2 + len > n) /* the scan starts: no more headers */
            break;
        if (marker == 0xE0 && len >= 14 && !memcmp(p + at + 4, "JFIF", 5)) {
            const uint8_t units = p[at + 11];
            const double x = be16(p + at + 12);
            return units == 1 ? per_inch(x, 1) : units == 2 ? per_inch(x, 1 / 2.54) : 0;
        }
        at += 2 + len;
    }
    return 0;
}

/* PNG's pHYs chunk: pixels per unit X, Y, unit (1 = metre). It must come before the image data. */
static double png_dpi(const uint8_t *p, size_t n)
{
    for (size_t at = 8; at + 12 <= n;) {
        const uint32_t len = be32(p + at);
        if (len > n - at - 12)
            break;
        if (!memcmp(p + at + 4, "IDAT", 4))
            break;
        if (!memcmp(p + at + 4, "pHYs", 4) && len == 9)
            return p[at + 16] == 1 ? per_inch(be32(p + at + 8), 1 / 0.0254) : 0;
        at += 12 + (size_t)len;
    }
    return 0;
}

double media_page_dpi(media_doc *d, int page)
{
    if (!d || page < 0 || page >= d->n_pages)
        return 0;
    switch (d->kind) {
    case MEDIA_PDF: return d->lim.dpi;
    case MEDIA_TIFF: return media_tiff_dpi(d, page);
    case MEDIA_JPEG: return jpeg_dpi(d->data, d->size);
    case MEDIA_PNG: return png_dpi(d->data, d->size);
    default: return 0;
    }
}
