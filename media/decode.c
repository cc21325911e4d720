/* decode.c — opening an input, telling its format from the magic bytes, and sending each page to
   the library that decodes it (jpeg.c, av_image.c, tiff.c, pdf.c). The pieces those decoders
   share live below them in image.c, so calls run one way: decode.c → decoders → image.c.
   Divisions: limits and open · format detection · pages. */
#define _POSIX_C_SOURCE 200809L
#include "media/media_impl.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "core/error.h"
#include "core/util.h"

/* Bytes read from stdin or a pipe are held in memory; past this the input is refused rather than
   exhausting it (a regular file is mapped instead and has no such cap). */
#define MEDIA_MAX_STREAM_BYTES ((size_t)2 << 30)

struct media_limits media_limits_default(void)
{
    struct media_limits l = {MEDIA_DEFAULT_MAX_PIXELS, MEDIA_DEFAULT_DPI, MEDIA_DEFAULT_MAX_PAGES};
    return l;
}

/* ---- format detection ------------------------------------------------------------------------ */

static bool has(const uint8_t *p, size_t n, size_t at, const char *magic, size_t len)
{
    return n >= at + len && memcmp(p + at, magic, len) == 0;
}

/* HEIF/AVIF stills share the ISO-BMFF "ftyp" box with MP4; their brands say they are images. */
static bool heif_brand(const uint8_t *p, size_t n)
{
    static const char *brands[] = {"heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", "avif", "avis"};
    for (size_t i = 0; i < ARRAY_LEN(brands); i++)
        if (has(p, n, 8, brands[i], 4))
            return true;
    return false;
}

/* Classifies the bytes; *what names an image format seer knows but does not read (HEIF). */
static enum media_kind sniff(const uint8_t *p, size_t n, const char **what)
{
    *what = NULL;
    if (has(p, n, 0, "\xff\xd8\xff", 3))
        return MEDIA_JPEG;
    if (has(p, n, 0, "\x89PNG\r\n\x1a\n", 8))
        return MEDIA_PNG;
    if (has(p, n, 0, "GIF87a", 6) || has(p, n, 0, "GIF89a", 6))
        return MEDIA_GIF;
    if (has(p, n, 0, "RIFF", 4) && has(p, n, 8, "WEBP", 4))
        return MEDIA_WEBP;
    /* "BM" alone is two letters of text; the DIB header size (12 … 124) makes it a bitmap. */
    if (has(p, n, 0, "BM", 2) && n >= 18) {
        uint32_t hs = p[14] | p[15] << 8 | (uint32_t)p[16] << 16 | (uint32_t)p[17] << 24;
        if (hs == 12 || hs == 16 || hs == 40 || hs == 52 || hs == 56 || hs == 64 || hs == 108 || hs == 124)
            return MEDIA_BMP;
    }
    if (has(p, n, 0, "II*\0", 4) || has(p, n, 0, "MM\0*", 4) || has(p, n, 0, "II+\0", 4) ||
        has(p, n, 0, "MM\0+", 4))
        return MEDIA_TIFF;
    /* A PDF header may follow up to 1 KiB of junk (PDF 32000-1 §7.5.2 implementation note). */
    for (size_t i = 0; i + 5 <= n && i < 1024; i++)
        if (p[i] == '%' && memcmp(p + i, "%PDF-", 5) == 0)
            return MEDIA_PDF;
    if (has(p, n, 4, "ftyp", 4)) {
        if (heif_brand(p, n)) {
            *what = "a HEIF/AVIF image";
            return MEDIA_UNKNOWN;
        }
        return MEDIA_VIDEO;
    }
    if (has(p, n, 4, "moov", 4) || has(p, n, 4, "mdat", 4) || has(p, n, 4, "wide", 4) ||
        has(p, n, 0, "\x1a\x45\xdf\xa3", 4) || (has(p, n, 0, "RIFF", 4) && has(p, n, 8, "AVI ", 4)) ||
        has(p, n, 0, "\x00\x00\x01\xba", 4) || has(p, n, 0, "FLV", 3) || has(p, n, 0, "OggS", 4) ||
        (n > 376 && p[0] == 0x47 && p[188] == 0x47 && p[376] == 0x47))
        return MEDIA_VIDEO;
    return MEDIA_UNKNOWN;
}

/* ---- open --------------------------------------------------------------------------------------- */

/* Reads a stream (stdin, a pipe) to its end into d->owned. */
static int read_stream(media_doc *d, int fd)
{
    size_t cap = 0, len = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (len == cap) {
            if (cap >= MEDIA_MAX_STREAM_BYTES) {
                seer_freep(&buf);
                return seer_err(SEER_EFORMAT, "%s: input is larger than %zu bytes", d->name,
                                MEDIA_MAX_STREAM_BYTES);
            }
            if (!seer_grow(&buf, &cap, len + 1, 1, 1 << 16)) {
                seer_freep(&buf);
                return seer_err(SEER_ENOMEM, "%s: out of memory reading the input", d->name);
            }
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            seer_freep(&buf);
            return seer_err(SEER_EIO, "%s: read failed: %s", d->name, strerror(e));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    d->owned = buf;
    d->data = buf;
    d->size = len;
    return SEER_OK;
}

/* Identifies the bytes now in d and counts its pages. */
static int identify(media_doc *d)
{
    if (d->size == 0)
        return seer_err(SEER_EFORMAT, "%s: empty file, not an image", d->name);
    const char *what;
    d->kind = sniff(d->data, d->size, &what);
    if (d->kind == MEDIA_UNKNOWN) {
        if (what)
            return seer_err(SEER_EUNSUPPORTED, "%s: %s, which seer does not read (JPEG, PNG, WebP, BMP, "
                            "GIF, TIFF, PDF)", d->name, what);
        return seer_err(SEER_EFORMAT, "%s: not an image seer reads (unrecognised bytes; JPEG, PNG, WebP, "
                        "BMP, GIF, TIFF, PDF)", d->name);
    }
    int rc = SEER_OK;
    switch (d->kind) {
    case MEDIA_TIFF: rc = media_tiff_count(d, &d->n_pages); break;
    case MEDIA_PDF: rc = media_pdf_open(d, &d->n_pages); break;
    case MEDIA_VIDEO: d->n_pages = 0; break;
    default: d->n_pages = 1; break;
    }
    if (rc)
        return rc;
    if (d->n_pages > d->lim.max_pages)
        return seer_err(SEER_EFORMAT, "%s: %s has %d pages, more than the limit of %d", d->name,
                        media_kind_name(d->kind), d->n_pages, (int)d->lim.max_pages);
    return SEER_OK;
}

static int doc_new(const char *name, const struct media_limits *lim, media_doc **out)
{
    media_doc *d = seer_calloc(1, sizeof *d);
    if (!d)
        return seer_err(SEER_ENOMEM, "%s: out of memory", name);
    d->name = seer_strdup(name);
    if (!d->name) {
        seer_freep(&d);
        return seer_err(SEER_ENOMEM, "%s: out of memory", name);
    }
    d->lim = lim ? *lim : media_limits_default();
    if (!(d->lim.dpi > 0) || d->lim.max_pixels <= 0 || d->lim.max_pages <= 0) {
        media_close(d);
        return seer_err(SEER_EINVAL, "%s: invalid limits (max pixels %lld, dpi %g, max pages %d)", name,
                        (long long)(lim ? lim->max_pixels : 0), lim ? lim->dpi : 0.0,
                        (int)(lim ? lim->max_pages : 0));
    }
    *out = d;
    return SEER_OK;
}

int media_open(const char *path, const struct media_limits *lim, media_doc **out)
{
    media_doc *d;
    int rc = doc_new(path, lim, &d);
    if (rc)
        return rc;
    if (strcmp(path, "-") == 0) {
        rc = read_stream(d, STDIN_FILENO);
    } else if (io_path_kind(path) == IO_OTHER) {
        /* a pipe or a process substitution: read it whole, as stdin */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            rc = seer_err(SEER_EIO, "%s: cannot open: %s", path, strerror(errno));
        else {
            rc = read_stream(d, fd);
            close(fd);
        }
    } else {
        rc = io_map(path, &d->map);
        d->data = d->map.data;
        d->size = d->map.size;
    }
    if (!rc)
        rc = identify(d);
    if (rc) {
        media_close(d);
        return rc;
    }
    *out = d;
    return SEER_OK;
}

int media_open_memory(const void *buf, size_t n, const char *name, const struct media_limits *lim,
                      media_doc **out)
{
    media_doc *d;
    int rc = doc_new(name ? name : "(memory)", lim, &d);
    if (rc)
        return rc;
    if (n) {
        d->owned = seer_malloc(n);
        if (!d->owned) {
            rc = seer_err(SEER_ENOMEM, "%s: out of memory copying %zu bytes", d->name, n);
            media_close(d);
            return rc;
        }
        memcpy(d->owned, buf, n);
    }
    d->data = d->owned;
    d->size = n;
    rc = identify(d);
    if (rc) {
        media_close(d);
        return rc;
    }
    *out = d;
    return SEER_OK;
}

void media_close(media_doc *d)
{
    if (!d)
        return;
    media_pdf_close(d);
    media_tiff_close(d);
    io_unmap(&d->map);
    seer_freep(&d->owned);
    seer_freep(&d->name);
    seer_freep(&d);
}

enum media_kind media_kind_of(const media_doc *d) { return d->kind; }
int media_page_count(const media_doc *d) { return d->n_pages; }
const char *media_name(const media_doc *d) { return d->name; }

/* ---- pages -------------------------------------------------------------------------------------- */

int media_decode_page(media_doc *d, int page, struct image_rgb8 *out)
{
    if (d->kind == MEDIA_VIDEO)
        return seer_err(SEER_EUNSUPPORTED, "%s: is a video, not an image", d->name);
    if (page < 0 || page >= d->n_pages)
        return seer_err(SEER_EINVAL, "%s: page %d does not exist (the %s has %d page%s)", d->name, page + 1,
                        media_kind_name(d->kind), d->n_pages, d->n_pages == 1 ? "" : "s");
    switch (d->kind) {
    case MEDIA_JPEG: return media_jpeg_decode(d, out);
    case MEDIA_TIFF: return media_tiff_decode(d, page, out);
    case MEDIA_PDF: return media_pdf_decode(d, page, out);
    default: return media_av_decode(d, out);
    }
}
