/* demux.c — a video file through libavformat/libavcodec/libswscale, in-process (video/video.h).
   Opening makes one demux pass over the first video stream (packets read, none decoded): every
   frame's presentation time, the keyframes, and the frame count when the container's is missing
   or wrong. Reading decodes only the planned frames: seek to the keyframe at or before a target
   when the decoder is not already inside that GOP, then decode forward to the target's timestamp.
   Audio, subtitle and data streams are discarded at the demuxer.
   Divisions: FFmpeg's log · opening (file or memory) · the demux pass · reading frames. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "media/av_log.h"
#include "video/video.h"

struct video_file {
    char *name;
    AVFormatContext *fmt;
    AVIOContext *avio;          /* custom I/O over memory, or NULL */
    const uint8_t *mem;         /* video_open_memory's bytes */
    size_t mem_size, mem_pos;
    AVCodecContext *dec;
    int si;                     /* the video stream's index */
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    struct video_info info;
    int64_t *ts;                /* [n_frames] sorted presentation timestamps (stream time base) */
    int64_t *key_ts;            /* [n_key] keyframe timestamps, sorted */
    int64_t n_key;
    bool by_count;              /* timestamps were missing or repeated: frames are found by counting */
    int64_t cur;                /* by_count: frames output since the start; else the last output ts */
    bool have_last, at_eof;
    bool need_key;              /* after a seek: packets before the next keyframe are not decodable */  /* have_last: v->last holds a frame */
    uint8_t *native, *turned;   /* RGB scratch at the stream's size, and after the display turn */
    size_t native_bytes, turned_bytes;
    uint8_t *last;              /* the last target frame, at the plan's size (repeat / truncation) */
    size_t last_bytes;
    int64_t last_ts;
    struct video_stats stats;
    int threads;                /* libavcodec's threads (0: one per core) */
    int64_t max_pixels;         /* largest frame accepted: checked by libavcodec itself
                                   (AVCodecContext.max_pixels) before it allocates one */
};

/* ---- FFmpeg's log: media/av_log.h captures it for all of seer (one process-wide callback) ----- */

static int av_fail(const video_file *v, int code, const char *what, int err)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    av_strerror(err, e, sizeof e);
    const char *last = media_av_log_last();
    return seer_err(code, "%s: %s: %s", v->name, what, last[0] ? last : e);
}

/* ---- opening ---------------------------------------------------------------------------------- */

static int mem_read(void *opaque, uint8_t *buf, int n)
{
    video_file *v = opaque;
    size_t left = v->mem_size - v->mem_pos, k = MIN((size_t)n, left);
    if (k == 0)
        return AVERROR_EOF;
    memcpy(buf, v->mem + v->mem_pos, k);
    v->mem_pos += k;
    return (int)k;
}

static int64_t mem_seek(void *opaque, int64_t off, int whence)
{
    video_file *v = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return (int64_t)v->mem_size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)v->mem_pos; break;
    case SEEK_END: base = (int64_t)v->mem_size; break;
    default: return AVERROR(EINVAL);
    }
    if (off > (int64_t)v->mem_size - base || base + off < 0)
        return AVERROR(EINVAL);
    v->mem_pos = (size_t)(base + off);
    return (int64_t)v->mem_pos;
}

/* Bytes in memory stand alone: a playlist or reference file among them (HLS, concat, image2
   sequences) may not make the demuxer open other files or URLs. */
static int refuse_nested_open(AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **opts)
{
    (void)s, (void)pb, (void)url, (void)flags, (void)opts;
    return AVERROR(EPERM);
}

void video_close(video_file *v)
{
    if (!v)
        return;
    sws_freeContext(v->sws);
    av_frame_free(&v->frame);
    av_packet_free(&v->pkt);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    if (v->avio) {
        av_freep(&v->avio->buffer);
        avio_context_free(&v->avio);
    }
    free((void *)v->info.seconds);
    free(v->ts), free(v->key_ts), free(v->native), free(v->turned), free(v->last), free(v->name);
    free(v);
}

const struct video_info *video_file_info(const video_file *v) { return &v->info; }
const char *video_file_name(const video_file *v) { return v->name; }
struct video_stats video_file_stats(const video_file *v) { return v->stats; }

/* The clockwise quarter turns of the stream's display matrix, as ffmpeg's autorotate reads it. */
static int display_rotation(const AVStream *st)
{
    const uint8_t *m = NULL;
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    const AVPacketSideData *sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                         st->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
    m = sd && sd->size >= 9 * 4 ? sd->data : NULL;
#else
    size_t size = 0;
    m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (size < 9 * 4)
        m = NULL;
#endif
    if (!m)
        return 0;
    double theta = -round(av_display_rotation_get((const int32_t *)m));
    if (!isfinite(theta))
        return 0;
    theta -= 360 * floor(theta / 360 + 0.9 / 360);
    int q = (int)lround(theta / 90) % 4;
    return fabs(theta - 90.0 * q) < 1 ? 90 * q : 0; /* not a quarter turn: shown as stored, as ffmpeg does */
}

static int demux_pass(video_file *v);
static int seek_to(video_file *v, int64_t ts);

static int open_common(video_file *v, const char *path)
{
    int err;
    media_av_log_capture();
    if ((err = avformat_open_input(&v->fmt, path, NULL, NULL)) < 0)
        return av_fail(v, SEER_EDECODE, "not a video FFmpeg can open", err);
    if ((err = avformat_find_stream_info(v->fmt, NULL)) < 0)
        return av_fail(v, SEER_EDECODE, "no stream information", err);
    v->si = -1;
    for (unsigned i = 0; i < v->fmt->nb_streams; i++) {
        AVStream *st = v->fmt->streams[i];
        const bool pic = st->disposition & AV_DISPOSITION_ATTACHED_PIC; /* cover art, not video */
        if (v->si < 0 && st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !pic)
            v->si = (int)i;
        else
            st->discard = AVDISCARD_ALL; /* audio, subtitles, data, further video: never read */
    }
    if (v->si < 0)
        return seer_err(SEER_EDECODE, "%s: has no video stream", v->name);
    AVStream *st = v->fmt->streams[v->si];
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec)
        return seer_err(SEER_EUNSUPPORTED, "%s: no decoder for its %s video in this FFmpeg", v->name,
                        avcodec_get_name(st->codecpar->codec_id));
    if (st->codecpar->width < 1 || st->codecpar->height < 1 ||
        (int64_t)st->codecpar->width * st->codecpar->height > v->max_pixels)
        return seer_err(SEER_EDECODE, "%s: frames of %dx%d (at most %lld pixels are decoded)", v->name,
                        st->codecpar->width, st->codecpar->height, (long long)v->max_pixels);
    if (!(v->dec = avcodec_alloc_context3(codec)) || !(v->pkt = av_packet_alloc()) || !(v->frame = av_frame_alloc()))
        return seer_err(SEER_ENOMEM, "%s: no memory for a decoder", v->name);
    if ((err = avcodec_parameters_to_context(v->dec, st->codecpar)) < 0)
        return av_fail(v, SEER_EDECODE, "decoder parameters", err);
    v->dec->pkt_timebase = st->time_base;
    v->dec->thread_count = v->threads;  /* 0: libavcodec picks one thread per core */
    v->dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    v->dec->max_pixels = v->max_pixels;
    if ((err = avcodec_open2(v->dec, codec, NULL)) < 0)
        return av_fail(v, SEER_EDECODE, "cannot open its decoder", err);
    v->info.codec = codec->name;
    v->info.rotation = display_rotation(st);
    const bool quarter = v->info.rotation == 90 || v->info.rotation == 270;
    v->info.width = quarter ? st->codecpar->height : st->codecpar->width;
    v->info.height = quarter ? st->codecpar->width : st->codecpar->height;
    return demux_pass(v);
}

static int make(const char *name, const struct video_limits *lim, video_file **out)
{
    video_file *v = seer_calloc(1, sizeof *v);
    if (!v || !(v->name = seer_strdup(name ? name : "(video)"))) {
        free(v);
        return seer_err(SEER_ENOMEM, "%s: no memory", name ? name : "video");
    }
    v->threads = lim && lim->threads > 0 ? lim->threads : 0;
    v->max_pixels = lim && lim->max_pixels > 0 && lim->max_pixels < VIDEO_MAX_FRAME_PIXELS ? lim->max_pixels
                                                                                            : VIDEO_MAX_FRAME_PIXELS;
    *out = v;
    return SEER_OK;
}

int video_open(const char *path, const struct video_limits *lim, video_file **out)
{
    video_file *v;
    int rc = make(path, lim, &v);
    if (rc)
        return rc;
    if ((rc = open_common(v, path))) {
        video_close(v);
        return rc;
    }
    *out = v;
    return SEER_OK;
}

int video_open_memory(const void *buf, size_t n, const char *name, const struct video_limits *lim,
                      video_file **out)
{
    enum { IO_BYTES = 1 << 16 };
    video_file *v;
    int rc = make(name, lim, &v);
    if (rc)
        return rc;
    v->mem = buf, v->mem_size = n;
    uint8_t *iobuf = av_malloc(IO_BYTES);
    if (!iobuf || !(v->avio = avio_alloc_context(iobuf, IO_BYTES, 0, v, mem_read, NULL, mem_seek)) ||
        !(v->fmt = avformat_alloc_context())) {
        if (!v->avio)
            av_free(iobuf);
        video_close(v);
        return seer_err(SEER_ENOMEM, "%s: no memory for a demuxer", v->name);
    }
    v->fmt->pb = v->avio;
    v->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    v->fmt->io_open = refuse_nested_open;
    if ((rc = open_common(v, NULL))) {
        video_close(v);
        return rc;
    }
    *out = v;
    return SEER_OK;
}

/* ---- the demux pass --------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int push_ts(const video_file *v, int64_t **arr, int64_t *n, size_t *cap, int64_t t)
{
    if (!seer_grow(arr, cap, (size_t)*n + 1, sizeof **arr, 1024))
        return seer_err(SEER_ENOMEM, "%s: no memory for the frame table", v->name);
    (*arr)[(*n)++] = t;
    return SEER_OK;
}

static bool rate_ok(AVRational r) { return r.num > 0 && r.den > 0 && av_q2d(r) > 0 && av_q2d(r) <= 1000; }

/* Every video packet's timestamp (pts, else dts, else one past the previous); frames are those
   timestamps in increasing order (display order). Then the rate, duration, and a seek back. */
static int demux_pass(video_file *v)
{
    AVStream *st = v->fmt->streams[v->si];
    int64_t n = 0, prev = AV_NOPTS_VALUE;
    size_t cap = 0, kcap = 0;
    int rc = SEER_OK, err;
    const double t0 = seer_time_now();
    while ((err = av_read_frame(v->fmt, v->pkt)) >= 0) {
        if (v->pkt->stream_index == v->si) {
            int64_t t = v->pkt->pts != AV_NOPTS_VALUE ? v->pkt->pts : v->pkt->dts;
            if (t == AV_NOPTS_VALUE || (v->pkt->pts == AV_NOPTS_VALUE && prev != AV_NOPTS_VALUE && t <= prev)) {
                v->by_count = true; /* no usable time: the frame's place in the stream is all we know */
                t = prev == AV_NOPTS_VALUE ? 0 : prev + MAX(v->pkt->duration, 1);
            }
            prev = t;
            if (n >= VIDEO_MAX_SOURCE_FRAMES)
                rc = seer_err(SEER_EDECODE, "%s: more than %lld video frames (VIDEO_MAX_SOURCE_FRAMES)", v->name,
                              (long long)VIDEO_MAX_SOURCE_FRAMES);
            if (!rc)
                rc = push_ts(v, &v->ts, &n, &cap, t);
            if (!rc && (v->pkt->flags & AV_PKT_FLAG_KEY))
                rc = push_ts(v, &v->key_ts, &v->n_key, &kcap, t);
        }
        av_packet_unref(v->pkt);
        if (rc)
            return rc;
        v->stats.packets_read++;
    }
    if (err != AVERROR_EOF)
        LOG_DEBUG("video", "%s: the demux pass stopped early (%s): %lld frames kept", v->name,
                  media_av_log_last()[0] ? media_av_log_last() : "read error", (long long)n);
    if (n == 0)
        return seer_err(SEER_EDECODE, "%s: its video stream has no frames", v->name);
    qsort(v->ts, (size_t)n, sizeof *v->ts, cmp_i64);
    if (v->n_key) /* a stream may flag no keyframe at all (then decoding starts from the top) */
        qsort(v->key_ts, (size_t)v->n_key, sizeof *v->key_ts, cmp_i64);
    for (int64_t k = 1; k < n && !v->by_count; k++)
        v->by_count = v->ts[k] == v->ts[k - 1];
    double *sec = seer_malloc((size_t)n * sizeof *sec);
    if (!sec)
        return seer_err(SEER_ENOMEM, "%s: no memory for the frame table", v->name);
    const double tb = av_q2d(st->time_base);
    for (int64_t k = 0; k < n; k++)
        sec[k] = (double)(v->ts[k] - v->ts[0]) * tb;
    struct video_info *in = &v->info;
    in->seconds = sec;
    in->n_frames = n;
    in->n_frames_meta = st->nb_frames > 0 ? st->nb_frames : 0;
    const double span = sec[n - 1];
    if (rate_ok(st->avg_frame_rate))
        in->fps = av_q2d(st->avg_frame_rate), in->fps_source = "avg_frame_rate";
    else if (rate_ok(st->r_frame_rate))
        in->fps = av_q2d(st->r_frame_rate), in->fps_source = "r_frame_rate";
    else if (n > 1 && span > 0)
        in->fps = (double)(n - 1) / span, in->fps_source = "measured";
    else
        in->fps = VIDEO_DEFAULT_SOURCE_FPS, in->fps_source = "default"; /* HF's assumption (spec §5.3) */
    if (v->by_count) /* no real times: HF's idx / fps_src (spec §5.3) is all there is */
        for (int64_t k = 0; k < n; k++)
            sec[k] = (double)k / in->fps;
    if (v->fmt->duration > 0 && v->fmt->duration != AV_NOPTS_VALUE)
        in->duration = (double)v->fmt->duration / AV_TIME_BASE;
    else if (st->duration > 0 && st->duration != AV_NOPTS_VALUE)
        in->duration = (double)st->duration * tb;
    else
        in->duration = span + 1 / in->fps; /* measured: the last frame shows for one frame time */
    v->stats.demux_seconds = seer_time_now() - t0;
    if (v->by_count)
        v->n_key = 0; /* counting mode restarts from the top; no keyframe table */
    return seek_to(v, v->ts[0]);
}

/* ---- reading frames --------------------------------------------------------------------------- */

/* Positions the demuxer at or before ts (a keyframe's, or the first frame's) and empties the
   decoder. Afterwards `cur` says nothing at or past ts has been output yet. */
static int seek_to(video_file *v, int64_t ts)
{
    int err = v->by_count ? -1 : av_seek_frame(v->fmt, v->si, ts, AVSEEK_FLAG_BACKWARD);
    if (err < 0 && (err = avformat_seek_file(v->fmt, v->si, INT64_MIN, v->ts[0], v->ts[0], 0)) < 0 &&
        (err = av_seek_frame(v->fmt, -1, 0, AVSEEK_FLAG_BYTE)) < 0)
        return av_fail(v, SEER_EDECODE, "cannot seek back in it", err);
    if (err >= 0 && v->by_count)
        ts = v->ts[0];
    avcodec_flush_buffers(v->dec);
    v->stats.seeks++;
    v->at_eof = false;
    v->need_key = ts != v->ts[0]; /* the stream's start decodes even when unflagged (MPEG-TS) */
    v->cur = v->by_count ? -1 : ts - 1;
    return SEER_OK;
}

/* Back to the first byte of the file's data (a byte seek, which every seekable input allows). */
static int seek_start(video_file *v)
{
    int err = av_seek_frame(v->fmt, -1, 0, AVSEEK_FLAG_BYTE);
    if (err < 0)
        return av_fail(v, SEER_EDECODE, "cannot seek back to its start", err);
    avcodec_flush_buffers(v->dec);
    v->stats.seeks++;
    v->at_eof = false;
    v->need_key = false;
    v->cur = v->ts[0] - 1;
    return SEER_OK;
}

/* The next decoded frame into v->frame with its timestamp: 1, 0 at the end, or an error. Damaged
   packets are skipped (a truncated or corrupt file decodes what it can). */
static int next_frame(video_file *v, int64_t *ts)
{
    for (;;) {
        const double t0 = seer_time_now();
        int err = avcodec_receive_frame(v->dec, v->frame);
        v->stats.decode_seconds += seer_time_now() - t0;
        if (err == 0) {
            *ts = v->frame->best_effort_timestamp != AV_NOPTS_VALUE ? v->frame->best_effort_timestamp : v->frame->pts;
            v->stats.frames_decoded++;
            return 1;
        }
        if (err == AVERROR_EOF)
            return 0;
        if (err != AVERROR(EAGAIN))
            return av_fail(v, SEER_EDECODE, "decoding failed", err);
        if (v->at_eof)
            return 0;
        if ((err = av_read_frame(v->fmt, v->pkt)) < 0) {
            v->at_eof = true;
            avcodec_send_packet(v->dec, NULL); /* drain the frames still inside the decoder */
            continue;
        }
        /* a byte-searching seek (MPEG-TS) lands mid-GOP: frames decoded from there would be built on
           missing references, so decoding starts at the next keyframe */
        if (v->pkt->stream_index == v->si && v->need_key && !(v->pkt->flags & AV_PKT_FLAG_KEY)) {
            av_packet_unref(v->pkt);
            continue;
        }
        if (v->pkt->stream_index == v->si) {
            v->need_key = false;
            const double t1 = seer_time_now();
            err = avcodec_send_packet(v->dec, v->pkt);
            v->stats.decode_seconds += seer_time_now() - t1;
            if (err < 0 && err != AVERROR(EAGAIN) && err != AVERROR_INVALIDDATA)
                LOG_DEBUG("video", "%s: a packet was refused by the decoder; skipped", v->name);
        }
        av_packet_unref(v->pkt);
    }
}

/* Decodes forward to source frame k; 1 found (in v->frame), 0 the file ended first. */
static int goto_frame(video_file *v, int64_t k)
{
    int64_t ts = 0;
    int r = 0, rc;
    if (v->by_count) {
        if (v->cur >= k && (rc = seek_to(v, v->ts[0])))
            return rc;
        while (v->cur < k && (r = next_frame(v, &ts)) > 0)
            v->cur++;
        return v->cur < k ? (r < 0 ? r : 0) : 1;
    }
    const int64_t target = v->ts[k];
    /* the last keyframe at or before the target: decoding can only start there */
    int64_t lo = 0, hi = v->n_key;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v->key_ts[mid] <= target)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* seek when the target is behind us, or a keyframe lies between us and it (decoding the GOPs
       in between would be wasted). Some demuxers (MPEG-TS, raw streams) seek by searching bytes
       and can land past the asked time: then back off to earlier keyframes, and at last to the
       file's first byte. */
    int64_t back = 1; /* keyframes stepped back from the target's own */
    bool need_seek = v->cur >= target || v->cur < (lo > 0 ? v->key_ts[lo - 1] : v->ts[0]) - 1;
    for (int round = 0;; round++) {
        const int64_t ki = lo - back;
        if (need_seek && (rc = ki >= 0 ? seek_to(v, v->key_ts[ki]) : round == 0 ? seek_to(v, v->ts[0]) : seek_start(v)))
            return rc;
        bool first = true;
        while ((r = next_frame(v, &ts)) > 0) {
            v->cur = ts;
            if (ts >= target)
                break; /* the frame itself, or (timestamps changed by the decoder) the next one */
            first = false;
        }
        if (r < 0)
            return r;
        const bool landed_late = need_seek && first && (r == 0 || ts > target);
        if (!landed_late || (ki < 0 && round > 0))
            return r > 0;
        need_seek = true;
        back = ki >= 0 ? 2 * back : back;
    }
}

static int ensure(uint8_t **buf, size_t *have, size_t need, const char *name)
{
    if (*have >= need)
        return SEER_OK;
    uint8_t *b = seer_realloc(*buf, need);
    if (!b)
        return seer_err(SEER_ENOMEM, "%s: no memory for a %zu-byte frame", name, need);
    *buf = b, *have = need;
    return SEER_OK;
}

/* v->frame → RGB (libswscale, bicubic as ffmpeg's default) → the display turn → Pillow's bicubic
   to the plan's size (vision/preprocess.c, the same resize images get). */
static int convert(video_file *v, const struct video_plan *p, uint8_t *dst)
{
    const AVFrame *f = v->frame;
    const int w = f->width, h = f->height, rot = v->info.rotation;
    /* libswscale's SIMD paths write whole vectors: a row stride padded to 64 bytes (as ffmpeg's own
       frame buffers have) keeps the last pixels of an odd-width row right; packed afterwards */
    const size_t row = (size_t)w * 3, stride = (row + 63) & ~(size_t)63;
    const size_t bytes = stride * (size_t)h + 64; /* ≤ max_pixels · 3 + padding: libavcodec checked */
    int rc;
    if (w < 1 || h < 1 || (int64_t)w * h > v->max_pixels)
        return seer_err(SEER_EDECODE, "%s: a decoded frame of %dx%d", v->name, w, h);
    if ((rc = ensure(&v->native, &v->native_bytes, bytes, v->name)) ||
        (rot && (rc = ensure(&v->turned, &v->turned_bytes, bytes, v->name))))
        return rc;
    const double t0 = seer_time_now();
    v->sws = sws_getCachedContext(v->sws, w, h, (enum AVPixelFormat)f->format, w, h, AV_PIX_FMT_RGB24, SWS_BICUBIC,
                                  NULL, NULL, NULL);
    if (!v->sws)
        return seer_err(SEER_EDECODE, "%s: libswscale cannot convert %s frames to RGB", v->name,
                        av_get_pix_fmt_name((enum AVPixelFormat)f->format));
    /* the frame's own matrix and range, as ffmpeg's scale filter reads them (unset: BT.601, limited) */
    const int cs = f->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : (int)f->colorspace;
    sws_setColorspaceDetails(v->sws, sws_getCoefficients(cs), f->color_range == AVCOL_RANGE_JPEG,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    uint8_t *planes[4] = {v->native};
    int strides[4] = {(int)stride};
    sws_scale(v->sws, (const uint8_t *const *)f->data, f->linesize, 0, h, planes, strides);
    for (int y = 1; y < h; y++) /* pack the rows: each moves down to a lower address */
        memmove(v->native + row * (size_t)y, v->native + stride * (size_t)y, row);
    const uint8_t *src = v->native;
    int sw = w, sh = h;
    if (rot) { /* clockwise quarter turns, as ffmpeg's transpose/hflip+vflip autorotation */
        uint8_t *d = v->turned;
        sw = rot == 180 ? w : h, sh = rot == 180 ? h : w;
        for (int y = 0; y < sh; y++)
            for (int x = 0; x < sw; x++) {
                const int sx = rot == 90 ? y : rot == 180 ? w - 1 - x : w - 1 - y;
                const int sy = rot == 90 ? h - 1 - x : rot == 180 ? h - 1 - y : x;
                memcpy(d + ((size_t)y * sw + x) * 3, v->native + ((size_t)sy * w + sx) * 3, 3);
            }
        src = d;
    }
    rc = vis_resize_bicubic_rgb8(src, sw, sh, dst, p->width, p->height, p->resize);
    v->stats.scale_seconds += seer_time_now() - t0;
    return rc;
}

int video_read_frames(video_file *v, const struct video_plan *p, int64_t first, int64_t count, uint8_t **rgb)
{
    const size_t bytes = (size_t)p->width * (size_t)p->height * 3;
    int rc;
    if (first < 0 || count < 0 || first > p->n_frames - count)
        return seer_err(SEER_EINVAL, "%s: frames %lld..%lld asked of a %lld-frame plan", v->name, (long long)first,
                        (long long)(first + count - 1), (long long)p->n_frames);
    if ((rc = ensure(&v->last, &v->last_bytes, bytes, v->name)))
        return rc;
    for (int64_t k = first; k < first + count; k++) {
        const int64_t idx = p->index[k];
        if (idx < 0 || idx >= v->info.n_frames)
            return seer_err(SEER_EINVAL, "%s: frame %lld is past the last (%lld)", v->name, (long long)idx,
                            (long long)v->info.n_frames);
        media_av_log_capture(); /* this thread's last line cleared */
        int r = goto_frame(v, idx);
        if (r < 0)
            return r;
        if (r == 0 && !v->have_last)
            return seer_err(SEER_EDECODE, "%s: no frame could be decoded (damaged or truncated file)", v->name);
        if (r == 0) {
            LOG_WARN("video", "%s: the file ends before frame %lld (truncated?): the last decoded frame stands in",
                     v->name, (long long)idx);
            memcpy(rgb[k - first], v->last, bytes);
            continue;
        }
        if ((rc = convert(v, p, rgb[k - first])))
            return rc;
        memcpy(v->last, rgb[k - first], bytes);
        v->have_last = true;
    }
    return SEER_OK;
}
