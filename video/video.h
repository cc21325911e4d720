/* video.h — video files for the vision tower: the container opened in-process with libavformat,
   every video frame's presentation time measured by one demux pass (no decoding), the Qwen
   sampling plan of spec §5.3 (which frames, at what size, one `<t.t seconds>` per pair), and a
   reader that decodes only the planned frames (keyframe seek + decode forward) to RGB at the
   planned size with the display matrix applied.

   Divisions: video/plan.c (settings, frame indices, resize, token budget — no FFmpeg, so the
   numbers are testable against the numpy reference alone) · video/demux.c (open, probe, read).

   Errors: SEER_E* codes with one seer_last_error() line naming the file; FFmpeg prints nothing.
   Threading: a video_file is used by one thread at a time. */
#ifndef SEER_VIDEO_VIDEO_H
#define SEER_VIDEO_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vision/preprocess.h"

/* ---- settings (spec §5.3; video_preprocessor_config.json) ---------------------------------------- */

struct video_settings {
    double fps;              /* frames sampled per second of video (2) */
    int64_t min_frames;      /* 4 */
    int64_t max_frames;      /* 768 */
    int64_t min_pixels;      /* size.shortest_edge: pixel budget over the whole clip (4096) */
    int64_t max_pixels;      /* size.longest_edge (25165824) */
    bool cap_frames;         /* cap_pixels_per_frame: at most VIDEO_FRAME_CAP_TOKENS a frame (off) */
    int64_t max_tokens;      /* 0 = no limit; else the planner fits the video inside it */
    double start, end;       /* seconds; end 0 = to the end of the file */
};
#define VIDEO_FPS 2.0
#define VIDEO_MIN_FRAMES 4
#define VIDEO_MAX_FRAMES 768
/* max_video_tokens: cap_pixels_per_frame's merged tokens a frame (vis_video_capped_max_pixels). */
#define VIDEO_FRAME_CAP_TOKENS 768
/* HF assumes this rate when a video has none (spec §5.3). */
#define VIDEO_DEFAULT_SOURCE_FPS 24.0
/* Frames one file may have (a 24-hour clip at 120 fps is ~10.4 M): the demux pass keeps 8 bytes a
   frame, so this caps that table at ~128 MiB. */
#define VIDEO_MAX_SOURCE_FRAMES ((int64_t)1 << 24)

struct video_settings video_settings_default(void);
/* Overrides the defaults with `hf_dir`/video_preprocessor_config.json when it exists (fps,
   min_frames, max_frames, size.{shortest,longest}_edge, min_pixels, max_pixels, cap_pixels_per_frame,
   max_video_tokens). NULL is fine. */
int video_settings_load(const char *hf_dir, struct video_settings *s);

/* ---- the container --------------------------------------------------------------------------------- */

typedef struct video_file video_file;

/* What one demux pass found out about the first video stream. */
struct video_info {
    int32_t width, height;   /* as displayed (the display matrix's quarter turns applied) */
    int rotation;            /* 0, 90, 180, 270: clockwise turn applied to the stored frames */
    int64_t n_frames;        /* video packets with a timestamp, counted by the demux pass */
    int64_t n_frames_meta;   /* what the container says (nb_frames), 0 when it does not */
    double fps;              /* source rate (spec §5.3's fps_src) */
    const char *fps_source;  /* "avg_frame_rate", "r_frame_rate", "measured", "default" */
    double duration;         /* seconds: the container's, else measured from the timestamps */
    const char *codec;       /* decoder name */
    const double *seconds;   /* [n_frames] presentation time of frame k (display order) from the
                                stream's first frame; owned by the video_file */
};

/* What decoding one file may use, fixed when it is opened (the model's settings, never the
   process's): threads libavcodec may use (0 = one per core), and the largest frame (width ×
   height) accepted, checked before libavcodec allocates one (0 = VIDEO_MAX_FRAME_PIXELS). */
struct video_limits {
    int threads;
    int64_t max_pixels;
};
/* PIL's bomb limit, as media/ uses for images. */
#define VIDEO_MAX_FRAME_PIXELS INT64_C(178956970)

/* Opens `path` and makes the demux pass (packets are read, not decoded). SEER_EDECODE for what
   FFmpeg cannot open or a file with no video stream. lim NULL = the defaults. On failure *out is
   untouched. */
int video_open(const char *path, const struct video_limits *lim, video_file **out);
/* The same over bytes in memory (borrowed until video_close; read through a custom AVIOContext).
   `name` appears in messages. */
int video_open_memory(const void *buf, size_t n, const char *name, const struct video_limits *lim, video_file **out);
const struct video_info *video_file_info(const video_file *v);
const char *video_file_name(const video_file *v);
void video_close(video_file *v); /* NULL is fine */

/* ---- the plan (spec §5.3) -------------------------------------------------------------------------- */

struct video_plan {
    int64_t n_frames;        /* sampled frames (before the pair padding) */
    int64_t *index;          /* [n_frames] source frame numbers, round(linspace) half-to-even */
    double *seconds;         /* [n_frames] their times from the stream start: idx / fps at a constant
                                rate, else presentation times (video_constant_rate) */
    int32_t width, height;   /* the size every frame is resized to (multiples of 32) */
    enum vis_resize resize;  /* by whose bicubic (0, the default: torchvision's, as HF's processor) */
    struct vis_grid grid;    /* (ceil(n/2), height/16, width/16) */
    int64_t n_groups;        /* grid.t */
    double *group_seconds;   /* [n_groups] mean of each pair's two times (last frame repeated) */
    int64_t tokens;          /* video tokens: n_groups · (height/32) · (width/32) (spec §4.7) */
    char note[160];          /* what the token budget made the planner change, or "" */
};

/* The HF sampler (spec §5.3) over n_src frames at fps_src: n = int(n_src / fps_src · fps), then
   min(max(n, min_frames), max_frames, n_src); idx[] gets round(linspace(0, n_src − 1, n)) with
   numpy's half-to-even rounding. idx must hold VIDEO_MAX_FRAMES_PLANNED entries. */
#define VIDEO_MAX_FRAMES_PLANNED VIS_MAX_FRAMES
int video_sample_indices(int64_t n_src, double fps_src, double fps, int64_t min_frames, int64_t max_frames,
                         int64_t *idx, int64_t *n);
/* "<t.t seconds>" exactly as Python's format(t, ".1f") writes it (spec §5.4). */
void video_timestamp_text(double seconds, char *buf, size_t cap);

/* Whether every frame k of the stream is shown within half a frame period of k / fps: a constant
   rate. Then the plan's times are HF's idx / fps (spec §5.3), as transformers and Qwen's utilities
   compute them; otherwise (a variable rate) each frame's presentation time. */
bool video_constant_rate(const struct video_info *info);

/* The whole plan for `info` within s (its start/end, frame counts, pixel and token budgets).
   A plan is freed with video_plan_clear. SEER_EINVAL when no frame lies in [start, end). */
int video_plan_make(const struct video_info *info, const char *name, const struct video_settings *s,
                    struct video_plan *p);
void video_plan_clear(struct video_plan *p);

/* ---- reading the planned frames -------------------------------------------------------------------- */

/* Decodes the plan's frames first..first+count−1 (in plan order) into rgb[k], each
   p->width × p->height × 3 bytes (the caller's). Frames already passed are found again by seeking,
   so any order works; increasing order decodes each GOP at most once. A frame the file ends
   before (a truncated file) is given the last frame decoded, once one exists. */
int video_read_frames(video_file *v, const struct video_plan *p, int64_t first, int64_t count, uint8_t **rgb);

/* Decoder work done so far (for seer bench): packets demuxed and frames decoded by
   video_read_frames, seeks made, and seconds spent in the demux pass, decoding and scaling. */
struct video_stats {
    int64_t packets_read, frames_decoded, seeks;
    double demux_seconds, decode_seconds, scale_seconds;
};
struct video_stats video_file_stats(const video_file *v);

#endif
