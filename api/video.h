/* video.h — videos in the public API (api/video.c): opened videos (seer_video), video inputs queued
   with a chat message, and the prompt's video placeholders expanded (spec §5.4: per frame pair a
   `<t.t seconds>` timestamp, then <|vision_start|>, the pair's <|video_pad|> run, <|vision_end|>)
   while the frames are decoded, preprocessed and encoded one pair at a time (spec §5.3, §4.5), so
   memory holds the embeddings and one pair's pixels, never the whole clip. Measuring makes the same
   plan and the same expansion, counted, without decoding a frame. */
#ifndef SEER_API_VIDEO_H
#define SEER_API_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seer.h"
#include "video/video.h"

struct seer_model;
struct api_fused;

/* Videos waiting to be fed, in prompt order (settings resolved at add time): a path (copied), or
   an opened video the caller lends until the prompt is fed. */
struct api_video {
    char *path;
    seer_video *opened;
    struct video_settings s;
};
struct api_videos {
    struct api_video *v;
    size_t n, cap;
};
/* The model's defaults (video_preprocessor_config.json) with `in`'s overrides (its zero fields keep
   the defaults; a max_frames below min_frames lowers min_frames too). */
struct video_settings api_video_settings(const struct seer_model *m, const seer_video_input *in);
/* Queues `in` (its path copied unless it is an opened video). */
int api_videos_push(struct api_videos *q, const struct seer_model *m, const seer_video_input *in);
void api_videos_clear(struct api_videos *q);

/* Where one call's video time went (seer_result's video_* fields), summed over its videos. */
struct api_video_timings {
    double demux, decode, convert, patchify, encode;
    int64_t frames, pairs, tokens, frames_decoded, seeks;
};

/* Rewrites f->ids (already image-expanded) so each video placeholder <|video_pad|> becomes the
   video's timestamped pair runs (the template's <|vision_start|> and <|vision_end|> around it
   stay, as in transformers 5.23), and appends each video's grid and embeddings [tokens][H] to f, with the
   time spent in f->video. `p` (or NULL) gives on_video_progress. measure: the expansion only, no
   frame decoded, no embeddings (f->vemb stays NULL). SEER_EINVAL when placeholders and videos
   differ in number. */
int api_fuse_videos(struct seer_model *m, struct api_fused *f, const struct api_videos *q,
                    const seer_generate_params *p, bool measure);

#endif
