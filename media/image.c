/* image.c — the pieces every decoder in media/ shares, below them all (decode.c calls the
   decoders, the decoders call only this): the format names of messages, the pixel limit checked
   before allocation, the picture's allocation, and EXIF orientation as PIL applies it. */
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "media/media_impl.h"

const char *media_kind_name(enum media_kind k)
{
    switch (k) {
    case MEDIA_JPEG: return "JPEG";
    case MEDIA_PNG: return "PNG";
    case MEDIA_WEBP: return "WebP";
    case MEDIA_BMP: return "BMP";
    case MEDIA_GIF: return "GIF";
    case MEDIA_TIFF: return "TIFF";
    case MEDIA_PDF: return "PDF";
    case MEDIA_VIDEO: return "video";
    default: return "unknown";
    }
}

void image_rgb8_free(struct image_rgb8 *im)
{
    if (!im)
        return;
    seer_freep(&im->px);
    im->width = im->height = 0;
}

int media_check_size(const media_doc *d, int64_t w, int64_t h)
{
    if (w <= 0 || h <= 0)
        return seer_err(SEER_EFORMAT, "%s: corrupt %s: image size %lldx%lld", d->name,
                        media_kind_name(d->kind), (long long)w, (long long)h);
    /* headers give up to 2^32 − 1 each way (PNG), so the product is computed with a check */
    int64_t px;
    if (__builtin_mul_overflow(w, h, &px))
        px = INT64_MAX;
    if (w > INT32_MAX || h > INT32_MAX || px > d->lim.max_pixels)
        return seer_err(SEER_EFORMAT, "%s: image is %lldx%lld = %.0f pixels, more than the limit of %lld "
                        "(a decompression bomb?); raise it with --max-image-pixels", d->name, (long long)w,
                        (long long)h, (double)w * (double)h, (long long)d->lim.max_pixels);
    return SEER_OK;
}

int media_image_alloc(const media_doc *d, int32_t w, int32_t h, struct image_rgb8 *out)
{
    size_t n;
    if (!size_mul((size_t)w, (size_t)h, &n) || !size_mul(n, 3, &n))
        return seer_err(SEER_EFORMAT, "%s: image size %dx%d overflows", d->name, w, h);
    uint8_t *px = seer_malloc(n);
    if (!px)
        return seer_err(SEER_ENOMEM, "%s: out of memory for a %dx%d image", d->name, w, h);
    out->width = w;
    out->height = h;
    out->px = px;
    return SEER_OK;
}

int media_orient(const media_doc *d, struct image_rgb8 *im, int orientation)
{
    if (orientation < 2 || orientation > 8)
        return SEER_OK;
    int W = im->width, H = im->height;
    bool swap = orientation >= 5; /* 5..8 transpose the axes */
    struct image_rgb8 o;
    int rc = media_image_alloc(d, swap ? H : W, swap ? W : H, &o);
    if (rc)
        return rc;
    /* For each output pixel (x, y), the source pixel PIL's Image.transpose picks for the method
       ImageOps.exif_transpose maps the orientation to. */
    for (int y = 0; y < o.height; y++)
        for (int x = 0; x < o.width; x++) {
            int sx, sy;
            switch (orientation) {
            case 2: sx = W - 1 - x; sy = y; break;             /* FLIP_LEFT_RIGHT */
            case 3: sx = W - 1 - x; sy = H - 1 - y; break;     /* ROTATE_180 */
            case 4: sx = x; sy = H - 1 - y; break;             /* FLIP_TOP_BOTTOM */
            case 5: sx = y; sy = x; break;                     /* TRANSPOSE */
            case 6: sx = y; sy = H - 1 - x; break;             /* ROTATE_270 (clockwise) */
            case 7: sx = W - 1 - y; sy = H - 1 - x; break;     /* TRANSVERSE */
            default: sx = W - 1 - y; sy = x; break;            /* 8: ROTATE_90 */
            }
            memcpy(o.px + ((size_t)y * o.width + x) * 3, im->px + ((size_t)sy * W + sx) * 3, 3);
        }
    image_rgb8_free(im);
    *im = o;
    return SEER_OK;
}
