/* decode.h — opening an image file (or bytes) and decoding its pages to 8-bit RGB.
   The format comes from the bytes (magic numbers), never the name: JPEG (TurboJPEG + libexif
   orientation), PNG / WebP / BMP / GIF first frame (libavcodec), TIFF every directory (libtiff),
   PDF every page (poppler-glib + cairo, when built with SEER_PDF). Video containers are
   recognised (MEDIA_VIDEO) but not decoded here: video/ demuxes them.

   Limits are checked from the headers before any pixel buffer is allocated, so a
   decompression bomb costs nothing. Every failure returns a SEER_E* code with one
   seer_last_error() line naming the file and the problem; the libraries underneath print
   nothing (their messages are captured into that line instead).

   Threading: a media_doc is used by one thread at a time; different docs may be decoded in
   parallel (each call makes its own TurboJPEG handle, codec context and TIFF handle; poppler
   documents are per doc). FFmpeg's log goes to one process-wide callback (media/av_log.h, shared
   with every other FFmpeg user in seer) that keeps each thread's last error for its message and
   prints nothing. */
#ifndef SEER_MEDIA_DECODE_H
#define SEER_MEDIA_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "media/image.h"

enum media_kind {
    MEDIA_UNKNOWN,
    MEDIA_JPEG,
    MEDIA_PNG,
    MEDIA_WEBP,
    MEDIA_BMP,
    MEDIA_GIF,
    MEDIA_TIFF,
    MEDIA_PDF,
    MEDIA_VIDEO, /* a container FFmpeg demuxes: mp4/mov ftyp, matroska/webm, avi, mpeg-ts … */
};

struct media_limits {
    int64_t max_pixels; /* width × height of one decoded page (--max-image-pixels) */
    double dpi;         /* PDF rasterisation resolution (--dpi) */
    int32_t max_pages;  /* pages (TIFF directories, PDF pages) one document may have */
};

/* PIL's own bomb limit (Image.MAX_IMAGE_PIXELS = 178956970, about 13,377² pixels: half a GiB of
   RGB), 200 dpi as OCRmyPDF-style tools use for scans, and 10,000 pages. */
#define MEDIA_DEFAULT_MAX_PIXELS INT64_C(178956970)
#define MEDIA_DEFAULT_DPI 200.0
#define MEDIA_DEFAULT_MAX_PAGES 10000
struct media_limits media_limits_default(void);

typedef struct media_doc media_doc;

/* Opens `path` ("-" reads all of stdin) and identifies it: the kind from the magic bytes and the
   page count (which for TIFF and PDF means parsing the file's structure). `lim` NULL means the
   defaults; it is copied. On failure *out is untouched; the message names the file. */
int media_open(const char *path, const struct media_limits *lim, media_doc **out);
/* The same for bytes in memory (copied; the caller keeps `buf`). `name` appears in messages. */
int media_open_memory(const void *buf, size_t n, const char *name, const struct media_limits *lim,
                      media_doc **out);

enum media_kind media_kind_of(const media_doc *d);
/* 1 for a single image; directories of a TIFF; pages of a PDF; 0 for a video. */
int media_page_count(const media_doc *d);
/* The name given to media_open / media_open_memory. */
const char *media_name(const media_doc *d);

/* Decodes page `page` (0-based) into *out (allocated here; free with image_rgb8_free). The EXIF
   orientation (JPEG, PNG, WebP) or TIFF Orientation tag is applied as PIL's exif_transpose does;
   alpha is composited over white exactly as PIL's alpha_composite does. A video is refused
   (SEER_EUNSUPPORTED). On failure *out is untouched. */
int media_decode_page(media_doc *d, int page, struct image_rgb8 *out);

/* The page's resolution in pixels per inch, for writing it back at its printed size (a searchable
   PDF, hOCR's scan_res): a PDF's rasterisation dpi; a TIFF page's XResolution (inch or centimetre
   units); a JPEG's JFIF density; a PNG's pHYs (per metre). 0 where the file says nothing or only an
   aspect ratio (JFIF units 0, pHYs unit 0). Never fails. */
double media_page_dpi(media_doc *d, int page);

/* Closes the document; NULL is fine. */
void media_close(media_doc *d);

/* "JPEG", "PNG", … "video", "unknown". */
const char *media_kind_name(enum media_kind k);

#endif
