/* av_image.c — PNG, WebP, BMP and GIF (first frame) through FFmpeg's libavcodec.
   The declared size is read from the header first (media_peek_size) and checked against the
   pixel limit; AVCodecContext.max_pixels repeats the limit inside FFmpeg, so a frame that
   claims more is refused before FFmpeg allocates it. Frames come out in many pixel formats;
   those PIL also reads losslessly are converted here so the result is PIL's bit for bit
   (16-bit: the high byte, as PIL's unpackers take; palette and alpha: composited over white as
   transformers' convert_to_rgb does); the rest (lossy WebP's YUV) go through libswscale.
   FFmpeg's log is captured into the error message instead of being printed. */
#include "media/media_impl.h"
#include "media/av_log.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "core/error.h"
#include "core/util.h"

/* ---- FFmpeg's log: kept per thread for the next error message, never printed (av_log.h) -------- */

static _Thread_local char av_last_msg[256];

static void av_capture(void *avcl, int level, const char *fmt, va_list vl)
{
    (void)avcl;
    if (level > AV_LOG_ERROR)
        return;
    vsnprintf(av_last_msg, sizeof av_last_msg, fmt, vl);
    size_t n = strlen(av_last_msg);
    while (n && (av_last_msg[n - 1] == '\n' || av_last_msg[n - 1] == ' '))
        av_last_msg[--n] = '\0';
}

static pthread_once_t capture_once = PTHREAD_ONCE_INIT;
static void av_log_install(void) { av_log_set_callback(av_capture); }

void media_av_log_capture(void)
{
    pthread_once(&capture_once, av_log_install);
    av_last_msg[0] = '\0';
}

const char *media_av_log_last(void) { return av_last_msg; }

/* "libavcodec: <its last logged error, else av_strerror(err)>" */
static const char *av_why(int err, char *buf, size_t n)
{
    if (av_last_msg[0])
        snprintf(buf, n, "libavcodec: %s", av_last_msg);
    else {
        char e[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(err, e, sizeof e);
        snprintf(buf, n, "libavcodec: %s", e);
    }
    return buf;
}

/* ---- declared sizes ---------------------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | p[2] << 8 | p[3]; }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | p[1] << 8 | p[0]; }
static uint32_t le24(const uint8_t *p) { return (uint32_t)p[2] << 16 | p[1] << 8 | p[0]; }
static uint32_t le16(const uint8_t *p) { return (uint32_t)p[1] << 8 | p[0]; }

int media_peek_size(const media_doc *d, int64_t *w, int64_t *h)
{
    const uint8_t *p = d->data;
    size_t n = d->size;
    switch (d->kind) {
    case MEDIA_PNG: /* IHDR is the first chunk: length, "IHDR", width, height (PNG specification §11.2.2) */
        if (n < 33 || memcmp(p + 12, "IHDR", 4) != 0) /* the whole IHDR: colour type is read too */
            break;
        *w = be32(p + 16);
        *h = be32(p + 20);
        return SEER_OK;
    case MEDIA_GIF: /* logical screen descriptor; FFmpeg's frames are that size */
        if (n < 10)
            break;
        *w = le16(p + 6);
        *h = le16(p + 8);
        return SEER_OK;
    case MEDIA_BMP: /* BITMAPCOREHEADER has 16-bit sizes; the others 32-bit, height negative = top-down */
        if (n >= 26 && le32(p + 14) == 12) {
            *w = le16(p + 18);
            *h = le16(p + 20);
            return SEER_OK;
        }
        if (n < 26)
            break;
        *w = (int32_t)le32(p + 18);
        *h = (int32_t)le32(p + 22);
        if (*h < 0 && *h > INT32_MIN)
            *h = -*h;
        return SEER_OK;
    case MEDIA_WEBP: /* the first chunk after "WEBP": VP8X canvas, VP8L or VP8 bitstream header */
        if (n >= 30 && memcmp(p + 12, "VP8X", 4) == 0) {
            *w = (int64_t)le24(p + 24) + 1;
            *h = (int64_t)le24(p + 27) + 1;
            return SEER_OK;
        }
        if (n >= 25 && memcmp(p + 12, "VP8L", 4) == 0 && p[20] == 0x2f) {
            uint32_t b = le32(p + 21);
            *w = (int64_t)(b & 0x3fff) + 1;
            *h = (int64_t)((b >> 14) & 0x3fff) + 1;
            return SEER_OK;
        }
        if (n >= 30 && memcmp(p + 12, "VP8 ", 4) == 0 && memcmp(p + 23, "\x9d\x01\x2a", 3) == 0) {
            *w = le16(p + 26) & 0x3fff;
            *h = le16(p + 28) & 0x3fff;
            return SEER_OK;
        }
        break;
    default:
        break;
    }
    return seer_err(SEER_EDECODE, "%s: truncated or corrupt %s header", d->name, media_kind_name(d->kind));
}

/* The EXIF block of a PNG (an eXIf chunk before the image data, PNG 1.5 §11.3.3.7) or a WebP
   (an EXIF chunk of the RIFF container), which Pillow's exif_transpose honours as for JPEG. */
static bool find_exif(const media_doc *d, const uint8_t **exif, size_t *len)
{
    const uint8_t *p = d->data;
    size_t n = d->size;
    if (d->kind == MEDIA_PNG) {
        for (size_t at = 8; at + 12 <= n;) {
            size_t clen = be32(p + at);
            if (clen > n - at - 12 || !memcmp(p + at + 4, "IDAT", 4))
                return false;
            if (!memcmp(p + at + 4, "eXIf", 4)) {
                *exif = p + at + 8, *len = clen;
                return true;
            }
            at += 12 + clen;
        }
    } else if (d->kind == MEDIA_WEBP) {
        for (size_t at = 12; at + 8 <= n;) {
            size_t clen = le32(p + at + 4);
            if (clen > n - at - 8)
                return false;
            if (!memcmp(p + at, "EXIF", 4)) {
                *exif = p + at + 8, *len = clen;
                return true;
            }
            at += 8 + clen + (clen & 1); /* chunks are padded to even sizes */
        }
    }
    return false;
}

/* Whether a GIF's first image is all there: its LZW data is a chain of length-prefixed
   sub-blocks ending in a zero-length one (GIF89a §15, §20–22). FFmpeg's decoder returns the rows
   it got from a cut file, logging an error only when a row is cut in the middle; Pillow says
   "image file is truncated". Walking the blocks up to the first image's terminator tells. */
static bool gif_first_image_complete(const uint8_t *p, size_t n)
{
    size_t at = 13; /* header + logical screen descriptor */
    if (n < at)
        return false;
    if (p[10] & 0x80) /* global colour table: 3 · 2^(size+1) bytes */
        at += 3u << ((p[10] & 7) + 1);
    while (at < n) {
        uint8_t kind = p[at];
        if (kind == 0x21) { /* extension: label, then sub-blocks */
            at += 2;
        } else if (kind == 0x2c) { /* image descriptor (10 bytes), local colour table, LZW code size */
            if (at + 10 > n)
                return false;
            uint8_t flags = p[at + 9];
            at += 10;
            if (flags & 0x80)
                at += 3u << ((flags & 7) + 1);
            at += 1;
        } else {
            return false; /* the trailer (0x3b) or garbage before any image */
        }
        while (at < n && p[at] != 0) /* sub-blocks: a length byte, then that many bytes */
            at += 1 + (size_t)p[at];
        if (at >= n)
            return false;
        at += 1; /* the zero-length terminator */
        if (kind == 0x2c)
            return true;
    }
    return false;
}

/* ---- pixel conversion -------------------------------------------------------------------------- */

/* Converts one row of a format PIL also decodes losslessly to RGB; false for other formats.
   Alpha is composited over white (media_over_white), 16-bit samples keep their high byte.
   `opaque` ignores an RGBA/BGRA frame's alpha (see alpha_ignored). */
static bool row_to_rgb(enum AVPixelFormat f, const AVFrame *fr, int y, bool opaque, uint8_t *o)
{
    const uint8_t *s = fr->data[0] + (ptrdiff_t)y * fr->linesize[0];
    int w = fr->width;
    switch (f) {
    case AV_PIX_FMT_RGB24: memcpy(o, s, (size_t)w * 3); return true;
    case AV_PIX_FMT_BGR24:
        for (int x = 0; x < w; x++, o += 3, s += 3)
            o[0] = s[2], o[1] = s[1], o[2] = s[0];
        return true;
    case AV_PIX_FMT_GRAY8:
        for (int x = 0; x < w; x++, o += 3)
            o[0] = o[1] = o[2] = s[x];
        return true;
    case AV_PIX_FMT_GRAY16BE:
        for (int x = 0; x < w; x++, o += 3)
            o[0] = o[1] = o[2] = s[2 * x];
        return true;
    case AV_PIX_FMT_MONOBLACK: /* 1 bit a pixel, 1 = white; PIL's "1" converts to 0 / 255 */
    case AV_PIX_FMT_MONOWHITE:
        for (int x = 0; x < w; x++, o += 3) {
            int bit = s[x >> 3] >> (7 - (x & 7)) & 1;
            o[0] = o[1] = o[2] = (bit ^ (f == AV_PIX_FMT_MONOWHITE)) ? 255 : 0;
        }
        return true;
    case AV_PIX_FMT_RGB48BE:
        for (int x = 0; x < w; x++, o += 3, s += 6)
            o[0] = s[0], o[1] = s[2], o[2] = s[4];
        return true;
    case AV_PIX_FMT_BGR0:
        for (int x = 0; x < w; x++, o += 3, s += 4)
            o[0] = s[2], o[1] = s[1], o[2] = s[0];
        return true;
    case AV_PIX_FMT_RGBA:
        for (int x = 0; x < w; x++, o += 3, s += 4)
            for (int c = 0; c < 3; c++)
                o[c] = opaque ? s[c] : media_over_white(s[c], s[3]);
        return true;
    case AV_PIX_FMT_BGRA:
        for (int x = 0; x < w; x++, o += 3, s += 4)
            for (int c = 0; c < 3; c++)
                o[c] = opaque ? s[2 - c] : media_over_white(s[2 - c], s[3]);
        return true;
    case AV_PIX_FMT_ARGB:
        for (int x = 0; x < w; x++, o += 3, s += 4)
            for (int c = 0; c < 3; c++)
                o[c] = media_over_white(s[1 + c], s[0]);
        return true;
    case AV_PIX_FMT_YA8:
        for (int x = 0; x < w; x++, o += 3, s += 2)
            o[0] = o[1] = o[2] = media_over_white(s[0], s[1]);
        return true;
    case AV_PIX_FMT_YA16BE:
        for (int x = 0; x < w; x++, o += 3, s += 4)
            o[0] = o[1] = o[2] = media_over_white(s[0], s[2]);
        return true;
    case AV_PIX_FMT_RGBA64BE:
        for (int x = 0; x < w; x++, o += 3, s += 8)
            for (int c = 0; c < 3; c++)
                o[c] = opaque ? s[2 * c] : media_over_white(s[2 * c], s[6]);
        return true;
    case AV_PIX_FMT_PAL8: { /* data[1]: 256 native-endian 0xAARRGGBB entries (tRNS in the alpha) */
        const uint32_t *pal = (const uint32_t *)fr->data[1];
        for (int x = 0; x < w; x++, o += 3) {
            uint32_t v = pal[s[x]], a = v >> 24;
            o[0] = media_over_white(v >> 16 & 255, a);
            o[1] = media_over_white(v >> 8 & 255, a);
            o[2] = media_over_white(v & 255, a);
        }
        return true;
    }
    default:
        return false;
    }
}

/* Formats without a lossless row above (YUV from lossy WebP, with or without alpha): libswscale
   to RGBA with accurate rounding, then the same composite over white. */
static int swscale_to_rgb(const media_doc *d, const AVFrame *fr, struct image_rgb8 *im)
{
    int w = fr->width, h = fr->height;
    struct SwsContext *sws = sws_getContext(w, h, fr->format, w, h, AV_PIX_FMT_RGBA,
                                            SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (!sws)
        return seer_err(SEER_EUNSUPPORTED, "%s: %s pixel format %s cannot be converted to RGB", d->name,
                        media_kind_name(d->kind), av_get_pix_fmt_name(fr->format));
    size_t row = (size_t)w * 4, n;
    uint8_t *rgba = size_mul(row, (size_t)h, &n) ? seer_malloc(n) : NULL;
    if (!rgba) {
        sws_freeContext(sws);
        return seer_err(SEER_ENOMEM, "%s: out of memory for a %dx%d image", d->name, w, h);
    }
    uint8_t *dst[4] = {rgba};
    int dst_stride[4] = {(int)row};
    sws_scale(sws, (const uint8_t *const *)fr->data, fr->linesize, 0, h, dst, dst_stride);
    sws_freeContext(sws);
    for (size_t i = 0; i < (size_t)w * h; i++)
        for (int c = 0; c < 3; c++)
            im->px[3 * i + c] = media_over_white(rgba[4 * i + c], rgba[4 * i + 3]);
    seer_freep(&rgba);
    return SEER_OK;
}

/* Where FFmpeg gives alpha that Pillow does not, so that transformers' convert_to_rgb (which
   returns a mode "RGB" image untouched) keeps the colours:
   - an RGB PNG with a tRNS colour key: FFmpeg makes it RGBA, Pillow keeps mode "RGB" with the key
     only in .info (grey + tRNS is mode "L", which convert_to_rgb does make transparent, as we do);
   - a 32-bit BMP: FFmpeg takes the fourth byte as alpha whenever it is not all zero, Pillow only
     with BI_BITFIELDS (3) or BI_ALPHABITFIELDS (6) whose alpha mask (a V3+ header, ≥ 56 bytes) is
     0xff000000; otherwise it reads "BGRX". */
static bool alpha_ignored(const media_doc *d)
{
    const uint8_t *p = d->data;
    if (d->kind == MEDIA_PNG)
        return p[25] == 2; /* IHDR colour type 2: truecolour (media_peek_size read 33 bytes) */
    if (d->kind == MEDIA_BMP) {
        uint32_t hs = le32(p + 14);
        if (hs < 56 || d->size < 14 + 56)
            return true;
        uint32_t comp = le32(p + 30), amask = le32(p + 14 + 52);
        return !((comp == 3 || comp == 6) && amask == 0xff000000u);
    }
    return false;
}

/* ---- decoding ---------------------------------------------------------------------------------- */

static enum AVCodecID codec_of(enum media_kind k)
{
    switch (k) {
    case MEDIA_PNG: return AV_CODEC_ID_PNG;
    case MEDIA_WEBP: return AV_CODEC_ID_WEBP;
    case MEDIA_BMP: return AV_CODEC_ID_BMP;
    case MEDIA_GIF: return AV_CODEC_ID_GIF;
    default: return AV_CODEC_ID_NONE;
    }
}

/* Sends the whole file as one packet (each of these decoders parses a complete file from one
   packet; GIF's stops after the first image) and takes the first frame. */
static int decode_frame(const media_doc *d, AVCodecContext *cx, AVFrame *fr)
{
    char why[320];
    AVPacket *pkt = av_packet_alloc();
    uint8_t *buf = av_malloc(d->size + AV_INPUT_BUFFER_PADDING_SIZE);
    if (!pkt || !buf) {
        av_packet_free(&pkt);
        av_free(buf);
        return seer_err(SEER_ENOMEM, "%s: out of memory", d->name);
    }
    memcpy(buf, d->data, d->size);
    memset(buf + d->size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
    int err = av_packet_from_data(pkt, buf, (int)d->size);
    if (err < 0) {
        av_free(buf);
        av_packet_free(&pkt);
        return seer_err(SEER_ENOMEM, "%s: out of memory", d->name);
    }
    err = avcodec_send_packet(cx, pkt);
    av_packet_free(&pkt);
    if (err >= 0)
        err = avcodec_send_packet(cx, NULL);
    if (err >= 0 || err == AVERROR_EOF)
        err = avcodec_receive_frame(cx, fr);
    if (err == AVERROR_EOF || err == AVERROR(EAGAIN))
        return seer_err(SEER_EDECODE, "%s: truncated or corrupt %s: no picture in it%s%s%s", d->name,
                        media_kind_name(d->kind), av_last_msg[0] ? " (libavcodec: " : "", av_last_msg,
                        av_last_msg[0] ? ")" : "");
    if (err < 0)
        return seer_err(SEER_EDECODE, "%s: truncated or corrupt %s (%s)", d->name, media_kind_name(d->kind),
                        av_why(err, why, sizeof why));
    /* FFmpeg conceals damage in some decoders instead of failing (a truncated GIF's LZW data
       logs "LZW decode failed" and returns the rows it got); Pillow refuses such files ("image
       file is truncated"), and so do we: a logged error or a damage flag fails the picture. */
    if (fr->decode_error_flags || (fr->flags & AV_FRAME_FLAG_CORRUPT) || av_last_msg[0])
        return seer_err(SEER_EDECODE, "%s: truncated or corrupt %s (the decoder reported damage%s%s)", d->name,
                        media_kind_name(d->kind), av_last_msg[0] ? ": " : "", av_last_msg);
    return SEER_OK;
}

int media_av_decode(media_doc *d, struct image_rgb8 *out)
{
    int64_t w, h;
    int rc = media_peek_size(d, &w, &h);
    if (rc)
        return rc;
    if ((rc = media_check_size(d, w, h)))
        return rc;
    if (d->kind == MEDIA_GIF && !gif_first_image_complete(d->data, d->size))
        return seer_err(SEER_EDECODE, "%s: truncated or corrupt GIF: its first image's data ends early", d->name);
    /* VP8X flag bit 1: an animation (ANMF frames), which libavcodec's WebP decoder cannot read */
    if (d->kind == MEDIA_WEBP && memcmp(d->data + 12, "VP8X", 4) == 0 && (d->data[20] & 0x02))
        return seer_err(SEER_EUNSUPPORTED, "%s: animated WebP is not supported (FFmpeg's WebP decoder "
                        "reads still images only)", d->name);
    if (d->size > INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return seer_err(SEER_EFORMAT, "%s: %s file too large", d->name, media_kind_name(d->kind));
    media_av_log_capture();

    const AVCodec *codec = avcodec_find_decoder(codec_of(d->kind));
    if (!codec)
        return seer_err(SEER_EUNSUPPORTED, "%s: this FFmpeg has no %s decoder", d->name, media_kind_name(d->kind));
    struct image_rgb8 im = {0};
    AVFrame *fr = av_frame_alloc();
    AVCodecContext *cx = avcodec_alloc_context3(codec);
    if (!fr || !cx) {
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", d->name);
        goto done;
    }
    cx->max_pixels = d->lim.max_pixels; /* FFmpeg refuses a bigger frame before allocating it */
    cx->thread_count = 1;
    /* PIL checks PNG CRCs and refuses damaged data; FFmpeg does too when asked */
    cx->err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_EXPLODE;
    if (avcodec_open2(cx, codec, NULL) < 0) {
        rc = seer_err(SEER_EDECODE, "%s: cannot open FFmpeg's %s decoder", d->name, media_kind_name(d->kind));
        goto done;
    }
    if ((rc = decode_frame(d, cx, fr)))
        goto done;
    /* the frame, not the header, is what we convert: check it again */
    if ((rc = media_check_size(d, fr->width, fr->height)))
        goto done;
    if ((rc = media_image_alloc(d, fr->width, fr->height, &im)))
        goto done;
    bool opaque = alpha_ignored(d), direct = true;
    for (int y = 0; y < fr->height && direct; y++)
        direct = row_to_rgb(fr->format, fr, y, opaque, im.px + (size_t)y * fr->width * 3);
    if (!direct && (rc = swscale_to_rgb(d, fr, &im)))
        goto done;
    const uint8_t *exif;
    size_t exif_len;
    if (find_exif(d, &exif, &exif_len) && (rc = media_orient(d, &im, media_exif_orientation(exif, exif_len))))
        goto done;
    *out = im;
    im.px = NULL;
done:
    image_rgb8_free(&im);
    av_frame_free(&fr);
    avcodec_free_context(&cx);
    return rc;
}
