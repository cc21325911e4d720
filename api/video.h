/* video.h — videos in the public API (api/video.c): video inputs queued with a chat message, and
   the prompt's video placeholders expanded (spec §5.4: per frame pair a `<t.t seconds>` timestamp,
   then <|vision_start|>, the pair's <|video_pad|> run, <|vision_end|>) while the frames are decoded,
   preprocessed and encoded one pair at a time (spec §5.3, §4.5), so memory holds the embeddings
   and one pair's pixels, never the whole clip. */
#ifndef SEER_API_VIDEO_H
#define SEER_API_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#include "seer.h"
#include "video/video.h"

struct seer_model;
struct api_fused;

/* Videos waiting to be fed, in prompt order (paths copied, settings resolved at add time). */
struct api_video {
    char *path;
    struct video_settings s;
};
struct api_videos {
    struct api_video *v;
    size_t n, cap;
};
/* Defaults (a model's video_preprocessor_config.json) with `in`'s overrides (its zero fields keep
   the defaults; a max_frames below min_frames lowers min_frames too). */
struct video_settings api_video_settings(const struct video_settings *defaults, const seer_video_input *in);
int api_videos_push(struct api_videos *q, const char *path, const struct video_settings *s);
void api_videos_clear(struct api_videos *q);

/* Rewrites f->ids (already image-expanded) so each video placeholder — the compound
   <|vision_start|><|video_pad|><|vision_end|>, else a bare <|video_pad|> — becomes the video's
   timestamped pair runs, and appends each video's grid and embeddings [tokens][H] to f.
   SEER_EINVAL when placeholders and videos differ in number. */
int api_fuse_videos(struct seer_model *m, struct api_fused *f, const struct api_videos *q);

/* Where the time of the last video encoded in this process went (seer bench --video): opening and
   the demux pass, decoding, conversion to RGB + resizing, patchify, the tower. Not thread-safe:
   a benchmark's view, not an API. */
struct api_video_timings {
    double demux, decode, convert, patchify, encode;
    int64_t frames, pairs, tokens, frames_decoded, seeks;
};
struct api_video_timings api_video_last_timings(void);

/* Optional progress report while a video is encoded (seer describe's terminal line): pairs done
   of total. Process-wide; NULL turns it off. */
typedef void (*api_video_progress_fn)(const char *path, int64_t pairs_done, int64_t pairs, void *user);
void api_video_set_progress(api_video_progress_fn fn, void *user);

#endif
