/* media_impl.h — what the decoders in media/ share: the document struct, the size check every
   decoder makes before allocating (image.c, as are the allocation and orientation), the pixel
   conversions that must match PIL bit for bit, and one entry point per library (jpeg.c,
   av_image.c, tiff.c, pdf.c). Not part of the API. */
#ifndef SEER_MEDIA_IMPL_H
#define SEER_MEDIA_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/io.h"
#include "media/decode.h"

struct media_doc {
    char *name;              /* for messages */
    const uint8_t *data;     /* the whole input; from `map` or `owned` */
    size_t size;
    struct io_map map;       /* a mapped regular file, or zeroed */
    uint8_t *owned;          /* bytes read from stdin / a pipe / copied from memory, or NULL */
    enum media_kind kind;
    int n_pages;
    struct media_limits lim;
    void *pdf;               /* PopplerDocument * while open (pdf.c) */
    void *tiff;              /* struct tiff_doc * while open (tiff.c) */
};

/* Refuses w × h over lim->max_pixels (or non-positive) with a message naming the file, the size,
   the limit and the flag that raises it. Called before any pixel buffer exists. */
int media_check_size(const media_doc *d, int64_t w, int64_t h);
/* Allocates out->px for w × h (already checked) and sets the size. */
int media_image_alloc(const media_doc *d, int32_t w, int32_t h, struct image_rgb8 *out);

/* PIL's Image.alpha_composite of (r,g,b,a) over opaque white, then .convert("RGB") — the
   fixed-point formula of Pillow's src/libImaging/AlphaComposite.c (7 extra bits, divisions by
   255 rounded with the (x + (x >> 8)) >> 8 trick), specialised to a white opaque background.
   Only this keeps a translucent pixel bit-identical to transformers' convert_to_rgb. */
static inline uint8_t media_over_white(uint32_t c, uint32_t a)
{
    enum { PRECISION_BITS = 7 };
    if (a == 0)
        return 255;
    uint32_t blend = 255 * (255 - a);           /* background alpha 255 */
    uint32_t outa255 = a * 255 + blend;         /* = 255·255: the result is opaque */
    uint32_t coef1 = a * 255 * 255 * (1u << PRECISION_BITS) / outa255;
    uint32_t coef2 = 255 * (1u << PRECISION_BITS) - coef1;
    uint32_t t = c * coef1 + 255 * coef2 + (0x80u << PRECISION_BITS);
    return (uint8_t)(((t >> 8) + t) >> 8 >> PRECISION_BITS);
}

/* Applies an EXIF/TIFF orientation (1..8) as PIL.ImageOps.exif_transpose does; 1 or an invalid
   value leaves the image alone. Replaces im->px (a new buffer; same pixel count). */
int media_orient(const media_doc *d, struct image_rgb8 *im, int orientation);

/* The EXIF Orientation (0x0112) of a JPEG (its APP1 block) or of a bare EXIF block (a PNG eXIf or
   WebP EXIF chunk, with or without the "Exif\0\0" prefix), read with libexif; 1 when absent or
   unreadable, because PIL then leaves the image as stored. */
int media_exif_orientation(const uint8_t *p, size_t n);

/* The size a PNG, GIF, BMP or WebP header declares, read before handing it to libavcodec. */
int media_peek_size(const media_doc *d, int64_t *w, int64_t *h);

int media_jpeg_decode(media_doc *d, struct image_rgb8 *out);
int media_av_decode(media_doc *d, struct image_rgb8 *out);
int media_tiff_count(media_doc *d, int *n_pages);
int media_tiff_decode(media_doc *d, int page, struct image_rgb8 *out);
/* XResolution of directory `page` in dots per inch, or 0 (media_page_dpi). */
double media_tiff_dpi(media_doc *d, int page);
void media_tiff_close(media_doc *d);
int media_pdf_open(media_doc *d, int *n_pages);
int media_pdf_decode(media_doc *d, int page, struct image_rgb8 *out);
void media_pdf_close(media_doc *d);

#endif
