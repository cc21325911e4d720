/* tiff.c — TIFF through libtiff, every directory a page (scanned documents are multi-page TIFF,
   often CCITT G4 bilevel). libtiff's RGBA interface does every photometric and compression it
   knows (bilevel, grey, palette, 16-bit, CMYK, YCbCr, LZW/Deflate/JPEG/G3/G4/PackBits …);
   we read rows as stored and apply the Orientation tag ourselves, as PIL's exif_transpose does,
   because libtiff's own orientation handling cannot transpose (orientations 5–8).
   libtiff's messages go to a per-file handler that keeps the last one for our error line. */
#include "media/media_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tiffio.h>

#include "core/error.h"
#include "core/util.h"

/* The bytes libtiff reads through the client procedures, and its last message. */
struct tiff_src {
    const media_doc *d;
    uint64_t pos;
    char msg[256];
};

static tmsize_t src_read(thandle_t h, void *buf, tmsize_t n)
{
    struct tiff_src *s = h;
    if (n < 0 || s->pos >= s->d->size)
        return 0;
    size_t k = MIN((size_t)n, s->d->size - (size_t)s->pos);
    memcpy(buf, s->d->data + s->pos, k);
    s->pos += k;
    return (tmsize_t)k;
}

static tmsize_t src_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h, (void)buf, (void)n;
    return -1;
}

static toff_t src_seek(thandle_t h, toff_t off, int whence)
{
    struct tiff_src *s = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->pos : s->d->size;
    uint64_t to;
    if (!u64_add(base, off, &to))
        return (toff_t)-1;
    s->pos = to; /* past the end is allowed; reads there return nothing */
    return to;
}

static int src_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t src_size(thandle_t h) { return ((struct tiff_src *)h)->d->size; }

static int src_map(thandle_t h, void **base, toff_t *size)
{
    (void)h, (void)base, (void)size;
    return 0; /* no mapping: libtiff reads through src_read */
}

static void src_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

/* Errors are kept for the message; warnings are dropped (PIL ignores them too). Returning 1 keeps
   libtiff from calling its global handlers, which print to stderr. */
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif, (void)module;
    struct tiff_src *s = user;
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    return 1;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1;
}

static TIFF *tiff_open(const media_doc *d, struct tiff_src *s)
{
    *s = (struct tiff_src){.d = d};
    TIFFOpenOptions *opt = TIFFOpenOptionsAlloc();
    if (!opt)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(opt, on_error, s);
    TIFFOpenOptionsSetWarningHandlerExtR(opt, on_warning, s);
    /* One libtiff allocation (a strip, a tile, a colour map) never exceeds what a page at the pixel
       limit needs at 16-bit RGBA; a header claiming a 4 GiB strip is refused up front. */
    int64_t cap = d->lim.max_pixels > (INT64_MAX >> 4) ? INT64_MAX : d->lim.max_pixels * 8 + (16 << 20);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opt, (tmsize_t)MIN(cap, (int64_t)TIFF_TMSIZE_T_MAX));
    TIFF *tif = TIFFClientOpenExt(d->name, "r", s, src_read, src_write, src_seek, src_close, src_size, src_map,
                                  src_unmap, opt);
    TIFFOpenOptionsFree(opt);
    return tif;
}

static const char *why(const struct tiff_src *s) { return s->msg[0] ? s->msg : "libtiff refused it"; }

/* The open TIFF a document keeps between pages: libtiff then moves to the next directory from
   the current one, so a batch over a 10,000-page scan is linear, not quadratic. */
struct tiff_doc {
    struct tiff_src src; /* libtiff holds a pointer to this: it lives as long as `tif` */
    TIFF *tif;
};

int media_tiff_count(media_doc *d, int *n_pages)
{
    struct tiff_doc *td = seer_calloc(1, sizeof *td);
    if (!td)
        return seer_err(SEER_ENOMEM, "%s: out of memory", d->name);
    td->tif = tiff_open(d, &td->src);
    if (!td->tif) {
        int rc = seer_err(SEER_EDECODE, "%s: truncated or corrupt TIFF (libtiff: %s)", d->name, why(&td->src));
        seer_freep(&td);
        return rc;
    }
    d->tiff = td; /* closed by media_close, also on the failures below */
    tdir_t n = TIFFNumberOfDirectories(td->tif);
    if (n == 0)
        return seer_err(SEER_EDECODE, "%s: corrupt TIFF: no image directory", d->name);
    /* A directory that cannot be read ends the count early: libtiff reports it and returns the
       pages before it. Counting those alone would drop the rest of a truncated file's pages
       without a word, so any error while counting refuses the file. */
    if (td->src.msg[0])
        return seer_err(SEER_EDECODE, "%s: truncated or corrupt TIFF after page %u (libtiff: %s)", d->name, (unsigned)n,
                        td->src.msg);
    *n_pages = n > INT32_MAX ? INT32_MAX : (int)n;
    return SEER_OK;
}

void media_tiff_close(media_doc *d)
{
    struct tiff_doc *td = d->tiff;
    if (!td)
        return;
    TIFFClose(td->tif);
    seer_freep(&d->tiff);
}

int media_tiff_decode(media_doc *d, int page, struct image_rgb8 *out)
{
    struct tiff_doc *td = d->tiff;
    struct tiff_src *s = &td->src;
    TIFF *tif = td->tif;
    s->msg[0] = '\0';
    TIFFRGBAImage img;
    bool begun = false;
    uint32_t *raster = NULL;
    struct image_rgb8 im = {0};
    int rc = SEER_OK;
    char emsg[1024] = "";
    uint32_t w = 0, h = 0;
    uint16_t orientation = ORIENTATION_TOPLEFT;

    if (!TIFFSetDirectory(tif, (tdir_t)page)) {
        rc = seer_err(SEER_EDECODE, "%s: corrupt TIFF page %d (libtiff: %s)", d->name, page + 1, why(s));
        goto done;
    }
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h)) {
        rc = seer_err(SEER_EDECODE, "%s: corrupt TIFF page %d: no image size", d->name, page + 1);
        goto done;
    }
    if ((rc = media_check_size(d, w, h)))
        goto done;
    if (!TIFFRGBAImageOK(tif, emsg) || !TIFFRGBAImageBegin(&img, tif, 1, emsg)) {
        rc = seer_err(SEER_EUNSUPPORTED, "%s: TIFF page %d: unsupported layout (libtiff: %s)", d->name,
                      page + 1, emsg[0] ? emsg : why(s));
        goto done;
    }
    begun = true;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    /* Rows as stored: with both orientations TOPLEFT libtiff neither flips nor reorders. */
    img.orientation = ORIENTATION_TOPLEFT;
    img.req_orientation = ORIENTATION_TOPLEFT;
    size_t n;
    if (!size_mul((size_t)w, (size_t)h, &n) || !size_mul(n, 4, &n) || !(raster = seer_malloc(n))) {
        rc = seer_err(SEER_ENOMEM, "%s: out of memory for a %ux%u TIFF page", d->name, w, h);
        goto done;
    }
    if (!TIFFRGBAImageGet(&img, raster, w, h)) {
        rc = seer_err(SEER_EDECODE, "%s: truncated or corrupt TIFF page %d (libtiff: %s)", d->name, page + 1,
                      why(s));
        goto done;
    }
    /* libtiff's RGBA is premultiplied (it associates unassociated alpha itself), so over white
       is c + (255 − a): the same as PIL's alpha_composite up to that premultiplication's
       rounding (±1). Opaque pixels are exact. The RGB is written over the raster itself (pixel
       i's 3 bytes land at or before its own 4, after it was read), which keeps a 600-dpi scan's
       peak at one 4-byte raster instead of that plus a 3-byte copy. */
    uint8_t *rgb = (uint8_t *)raster;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint32_t p = raster[i], a = TIFFGetA(p);
        uint32_t c[3] = {TIFFGetR(p), TIFFGetG(p), TIFFGetB(p)};
        for (int k = 0; k < 3; k++)
            rgb[3 * i + k] = (uint8_t)MIN(255u, c[k] + 255 - a);
    }
    uint8_t *px = seer_realloc(raster, (size_t)w * h * 3); /* shrinking; keeps the raster on failure */
    im = (struct image_rgb8){(int32_t)w, (int32_t)h, px ? px : rgb};
    raster = NULL;
    if ((rc = media_orient(d, &im, orientation)))
        goto done;
    *out = im;
    im.px = NULL;
done:
    image_rgb8_free(&im);
    seer_freep(&raster);
    if (begun)
        TIFFRGBAImageEnd(&img);
    return rc;
}

double media_tiff_dpi(media_doc *d, int page)
{
    struct tiff_doc *td = d->tiff;
    float x = 0;
    uint16_t unit = RESUNIT_INCH;
    if (!td || !TIFFSetDirectory(td->tif, (tdir_t)page) || !TIFFGetField(td->tif, TIFFTAG_XRESOLUTION, &x))
        return 0;
    TIFFGetFieldDefaulted(td->tif, TIFFTAG_RESOLUTIONUNIT, &unit);
    if (!(x > 0 && x < 1e6) || unit == RESUNIT_NONE) /* NaN, absurd, or an aspect ratio only */
        return 0;
    return unit == RESUNIT_CENTIMETER ? x * 2.54 : x;
}
