/* jpeg.c — JPEG through libjpeg-turbo's TurboJPEG API, with the EXIF orientation read by libexif
   and applied as PIL.ImageOps.exif_transpose does (Hugging Face's load_image calls it).
   The header is read first (tjDecompressHeader3) so the pixel limit is checked before any
   buffer exists. CMYK and YCCK JPEGs are decoded to CMYK (libjpeg turns YCCK into CMYK) and
   converted as PIL converts them: Adobe's inverted CMYK, then Pillow's cmyk2rgb. */
#include "media/media_impl.h"

#include <limits.h>
#include <string.h>

#include <libexif/exif-data.h>
#include <turbojpeg.h>
/* libexif defines MIN/MAX of its own; core/util.h's mean the same */
#undef MIN
#undef MAX

#include "core/error.h"
#include "core/util.h"

int media_exif_orientation(const uint8_t *p, size_t n)
{
    /* libexif finds the block inside a JPEG itself, and takes a bare block after "Exif\0\0" */
    static const uint8_t hdr[6] = {'E', 'x', 'i', 'f', 0, 0};
    uint8_t *buf = NULL;
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8) {
        n = MIN(n, (size_t)UINT32_MAX);
    } else if (n >= 6 && !memcmp(p, hdr, 6)) {
        n = MIN(n, (size_t)UINT32_MAX);
    } else {
        if (n > 1 << 24 || !(buf = seer_malloc(n + 6)))
            return 1; /* an EXIF block is at most 64 KiB in JPEG; a huge one is ignored */
        memcpy(buf, hdr, 6);
        memcpy(buf + 6, p, n);
        p = buf;
        n += 6;
    }
    ExifData *ed = exif_data_new_from_data(p, (unsigned int)n);
    seer_freep(&buf);
    if (!ed)
        return 1;
    int o = 1;
    ExifEntry *e = exif_data_get_entry(ed, EXIF_TAG_ORIENTATION);
    if (e && e->format == EXIF_FORMAT_SHORT && e->components >= 1 && e->size >= 2)
        o = exif_get_short(e->data, exif_data_get_byte_order(ed));
    exif_data_unref(ed);
    return o;
}

/* PIL reads Adobe CMYK JPEGs inverted ("CMYK;I"), then Image.convert("RGB") runs Pillow's
   cmyk2rgb (src/libImaging/Convert.c): nk = 255 − K, R = nk − nk·C/255 with the division
   rounded by MULDIV255. `px` holds the decoder's stored CMYK, 4 bytes a pixel. */
static inline uint8_t muldiv255(int a, int b)
{
    int t = a * b + 128;
    return (uint8_t)(((t >> 8) + t) >> 8);
}

static void cmyk_to_rgb(const uint8_t *cmyk, uint8_t *rgb, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *s = cmyk + 4 * i;
        int nk = s[3];                       /* 255 − K with K = 255 − stored */
        for (int c = 0; c < 3; c++) {
            int v = nk - muldiv255(255 - s[c], nk);
            rgb[3 * i + c] = (uint8_t)(v < 0 ? 0 : v);
        }
    }
}

int media_jpeg_decode(media_doc *d, struct image_rgb8 *out)
{
    if (d->size > ULONG_MAX)
        return seer_err(SEER_EFORMAT, "%s: JPEG too large", d->name);
    tjhandle tj = tjInitDecompress();
    if (!tj)
        return seer_err(SEER_ENOMEM, "%s: cannot start the JPEG decoder: %s", d->name, tjGetErrorStr2(NULL));
    struct image_rgb8 im = {0};
    uint8_t *cmyk = NULL;
    int w = 0, h = 0, subsamp = 0, colorspace = -1, rc = SEER_OK;
    if (tjDecompressHeader3(tj, d->data, (unsigned long)d->size, &w, &h, &subsamp, &colorspace) != 0) {
        rc = seer_err(SEER_EDECODE, "%s: truncated or corrupt JPEG header (libjpeg: %s)", d->name,
                      tjGetErrorStr2(tj));
        goto fail;
    }
    /* a file that ends before its frame header "succeeds" with no size (tables only) */
    if (w <= 0 || h <= 0) {
        rc = seer_err(SEER_EDECODE, "%s: truncated or corrupt JPEG: no frame header", d->name);
        goto fail;
    }
    if ((rc = media_check_size(d, w, h)))
        goto fail;
    if ((rc = media_image_alloc(d, w, h, &im)))
        goto fail;
    bool is_cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
    uint8_t *dst = im.px;
    if (is_cmyk) {
        size_t n;
        if (!size_mul((size_t)w * (size_t)h, 4, &n) || !(cmyk = seer_malloc(n))) {
            rc = seer_err(SEER_ENOMEM, "%s: out of memory for a %dx%d CMYK image", d->name, w, h);
            goto fail;
        }
        dst = cmyk;
    }
    /* Default flags are PIL's decoder settings: accurate integer DCT, fancy upsampling. A warning
       (a truncated file: "Premature end of JPEG file") fails the page, as PIL raises
       "image file is truncated" rather than show grey rows. */
    if (tjDecompress2(tj, d->data, (unsigned long)d->size, dst, w, 0, h, is_cmyk ? TJPF_CMYK : TJPF_RGB,
                      TJFLAG_STOPONWARNING) != 0) {
        bool warn = tjGetErrorCode(tj) == TJERR_WARNING;
        rc = seer_err(SEER_EDECODE, "%s: %s JPEG (libjpeg: %s)", d->name, warn ? "truncated or damaged" : "corrupt",
                      tjGetErrorStr2(tj));
        goto fail;
    }
    if (is_cmyk)
        cmyk_to_rgb(cmyk, im.px, (size_t)w * (size_t)h);
    if ((rc = media_orient(d, &im, media_exif_orientation(d->data, d->size))))
        goto fail;
    seer_freep(&cmyk);
    tjDestroy(tj);
    *out = im;
    return SEER_OK;
fail:
    seer_freep(&cmyk);
    image_rgb8_free(&im);
    tjDestroy(tj);
    return rc;
}
