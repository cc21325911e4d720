/* plan.c — which frames of a video the model sees, at what size, and what they cost (spec §5.3,
   §5.4): the sampling settings (video_preprocessor_config.json), HF's frame sampler, the video
   resize rule over the whole clip's pixel budget, timestamps per frame pair, and the token-budget
   planner. No FFmpeg here: the inputs are the demux pass's numbers (video/demux.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/io.h"
#include "core/jget.h"
#include "core/util.h"
#include "video/video.h"

/* video_preprocessor_config.json is a few hundred bytes; anything near this is not one. */
#define MAX_CONFIG_BYTES ((size_t)1 << 20)
/* The planner lowers the resolution no further than this many merged tokens per frame pair
   (e.g. 4 × 4 tokens, 128 × 128 pixels): below it a frame says little, so frames go instead. */
#define MIN_TOKENS_PER_GROUP 16

/* ---- settings --------------------------------------------------------------------------------- */

struct video_settings video_settings_default(void)
{
    return (struct video_settings){.fps = VIDEO_FPS, .min_frames = VIDEO_MIN_FRAMES, .max_frames = VIDEO_MAX_FRAMES,
                                   .min_pixels = VIS_VIDEO_MIN_PIXELS, .max_pixels = VIS_VIDEO_MAX_PIXELS};
}

int video_settings_load(const char *hf_dir, struct video_settings *s)
{
    char path[4200];
    json_t *root;
    int rc = jget_load_hf_processor(hf_dir, "video_preprocessor_config.json", "video_processor", MAX_CONFIG_BYTES,
                                    "MAX_CONFIG_BYTES", &root, path, sizeof path);
    if (rc || !root)
        return rc;
    struct jget_ctx jc = {path, ""}, sc = {path, "size."};
    const json_t *size = json_object_get(root, "size");
    const int64_t hi_px = (int64_t)1 << 40;
    if (json_is_object(size) && !(rc = jget_i64(&sc, size, "shortest_edge", 1, hi_px, &s->min_pixels, &s->min_pixels)))
        rc = jget_i64(&sc, size, "longest_edge", 1, hi_px, &s->max_pixels, &s->max_pixels);
    if (!rc)
        rc = jget_i64(&jc, root, "min_pixels", 1, hi_px, &s->min_pixels, &s->min_pixels);
    if (!rc)
        rc = jget_i64(&jc, root, "max_pixels", 1, hi_px, &s->max_pixels, &s->max_pixels);
    if (!rc)
        rc = jget_i64(&jc, root, "min_frames", 1, VIDEO_MAX_FRAMES_PLANNED, &s->min_frames, &s->min_frames);
    if (!rc)
        rc = jget_i64(&jc, root, "max_frames", 1, VIDEO_MAX_FRAMES_PLANNED, &s->max_frames, &s->max_frames);
    if (!rc && jget_has(root, "fps") && !json_is_null(json_object_get(root, "fps")))
        rc = jget_f64(&jc, root, "fps", &s->fps, &s->fps);
    /* transformers 5.23: unset (null) is uncapped, with a warning that the default will change */
    if (!rc && jget_has(root, "cap_pixels_per_frame") && !json_is_null(json_object_get(root, "cap_pixels_per_frame")))
        rc = jget_bool(&jc, root, "cap_pixels_per_frame", &s->cap_frames, &s->cap_frames);
    int64_t max_video_tokens = VIDEO_FRAME_CAP_TOKENS;
    if (!rc)
        rc = jget_i64(&jc, root, "max_video_tokens", 1, hi_px, &max_video_tokens, &max_video_tokens);
    if (!rc && s->cap_frames && max_video_tokens != VIDEO_FRAME_CAP_TOKENS)
        rc = seer_err(SEER_EFORMAT, "%s: max_video_tokens %lld with cap_pixels_per_frame: seer caps a frame at %d "
                      "tokens only (Qwen's VIDEO_MAX_TOKEN_NUM)", path, (long long)max_video_tokens,
                      VIDEO_FRAME_CAP_TOKENS);
    json_decref(root);
    if (!rc && (!(s->fps > 0 && s->fps <= 1000) || s->min_frames > s->max_frames || s->min_pixels > s->max_pixels))
        rc = seer_err(SEER_EFORMAT, "%s: fps %g must be in (0, 1000], min_frames %lld <= max_frames %lld and "
                      "min_pixels %lld <= max_pixels %lld", path, s->fps, (long long)s->min_frames,
                      (long long)s->max_frames, (long long)s->min_pixels, (long long)s->max_pixels);
    return rc;
}

/* ---- frame sampling (spec §5.3) ---------------------------------------------------------------- */

int video_sample_indices(int64_t n_src, double fps_src, double fps, int64_t min_frames, int64_t max_frames,
                         int64_t *idx, int64_t *n_out)
{
    if (n_src < 1 || !(fps_src > 0) || !(fps > 0) || min_frames < 1 || max_frames < min_frames ||
        max_frames > VIDEO_MAX_FRAMES_PLANNED)
        return seer_err(SEER_EINVAL, "video: cannot sample %lld frames at %g fps (fps %g, frames %lld..%lld)",
                        (long long)n_src, fps_src, fps, (long long)min_frames, (long long)max_frames);
    /* HF: int(total / video_fps * fps) — Python float arithmetic, truncated */
    double want = (double)n_src / fps_src * fps;
    int64_t n = want >= (double)VIDEO_MAX_FRAMES_PLANNED ? VIDEO_MAX_FRAMES_PLANNED : (int64_t)want;
    n = MIN(MIN(MAX(n, min_frames), max_frames), n_src);
    /* numpy.linspace(0, n_src − 1, n): k·step, the last exactly the stop; .round() is rint */
    const double stop = (double)(n_src - 1), step = n > 1 ? stop / (double)(n - 1) : 0;
    for (int64_t k = 0; k < n; k++)
        idx[k] = (int64_t)nearbyint(k == n - 1 && n > 1 ? stop : (double)k * step);
    *n_out = n;
    return SEER_OK;
}

void video_timestamp_text(double seconds, char *buf, size_t cap)
{
    /* glibc rounds %.1f from the double's exact value, as Python's format(t, ".1f") does */
    snprintf(buf, cap, "<%.1f seconds>", seconds);
}

bool video_constant_rate(const struct video_info *info)
{
    /* within half a frame period, idx / fps_src names the frame slot the presentation time lies in:
       the difference is the time base's rounding (a millisecond clock, 1001/30000 steps), which would
       otherwise move a stamp at .x5 to the other side (spec §5.3) */
    const double half = 0.5 / info->fps;
    for (int64_t k = 0; k < info->n_frames; k++)
        if (!(fabs(info->seconds[k] - (double)k / info->fps) < half))
            return false;
    return true;
}

/* ---- the plan --------------------------------------------------------------------------------- */

void video_plan_clear(struct video_plan *p)
{
    free(p->index);
    free(p->seconds);
    free(p->group_seconds);
    memset(p, 0, sizeof *p);
}

/* The clip's pixel budget for n frames: size.longest_edge, or with cap_pixels_per_frame at most
   768 merged tokens a frame (spec §5.3 step 4; HF counts the sampled frames, before the pair pad). */
static int clip_max_pixels(const struct video_settings *s, int64_t n, int64_t *max_px)
{
    *max_px = s->max_pixels;
    return s->cap_frames ? vis_video_capped_max_pixels(n, VIS_FACTOR, s->min_pixels, s->max_pixels, max_px) : SEER_OK;
}

/* Size and tokens for n frames of the clip within [min_px, max_px] (spec §5.3 resize). A one-frame
   video (HF refuses fewer than 2) is sized as the pair it becomes, its frame repeated. */
static int measure(int64_t n, int64_t h, int64_t w, int64_t min_px, int64_t max_px, int64_t *rh, int64_t *rw,
                   int64_t *tokens)
{
    int rc = vis_smart_resize_video(MAX(n, 2), h, w, VIS_FACTOR, MIN(min_px, max_px), max_px, rh, rw);
    if (!rc)
        *tokens = (n + 1) / 2 * (*rh / VIS_FACTOR) * (*rw / VIS_FACTOR);
    return rc;
}

/* Frames [lo, hi) of the stream that lie in [start, end). */
static void frame_range(const struct video_info *info, const struct video_settings *s, int64_t *lo, int64_t *hi)
{
    int64_t a = 0, b = info->n_frames;
    while (a < b && info->seconds[a] < s->start)
        a++;
    if (s->end > 0)
        for (b = a; b < info->n_frames && info->seconds[b] < s->end;)
            b++;
    *lo = a;
    *hi = b;
}

int video_plan_make(const struct video_info *info, const char *name, const struct video_settings *s,
                    struct video_plan *out)
{
    struct video_plan p = {0};
    int64_t lo, hi, n, rh, rw, tokens, clip_px;
    int rc;
    if (s->end > 0 && s->end <= s->start)
        return seer_err(SEER_EINVAL, "%s: --end %.3f is not after --start %.3f", name, s->end, s->start);
    frame_range(info, s, &lo, &hi);
    if (hi <= lo)
        return seer_err(SEER_EINVAL, "%s: no frame lies between %.3f s and %s (the video is %.3f s long)", name,
                        s->start, s->end > 0 ? "the --end time" : "the end", info->duration);
    p.index = seer_malloc(VIDEO_MAX_FRAMES_PLANNED * sizeof *p.index);
    if (!p.index)
        return seer_err(SEER_ENOMEM, "%s: no memory for the frame plan", name);
    if ((rc = video_sample_indices(hi - lo, info->fps, s->fps, s->min_frames, s->max_frames, p.index, &n)) ||
        (rc = clip_max_pixels(s, n, &clip_px)) ||
        (rc = measure(n, info->height, info->width, s->min_pixels, clip_px, &rh, &rw, &tokens)))
        goto fail;
    if (s->max_tokens > 0 && tokens > s->max_tokens) {
        /* the budget: lower the per-frame resolution first (a smaller pixel budget over the clip),
           down to MIN_TOKENS_PER_GROUP a pair, then fewer frames at that resolution */
        const int64_t n0 = n, t0 = tokens;
        for (;;) {
            const int64_t groups = (n + 1) / 2, per_group = MAX(s->max_tokens / groups, MIN_TOKENS_PER_GROUP);
            if ((rc = clip_max_pixels(s, n, &clip_px)))
                goto fail;
            int64_t max_px = MIN(clip_px, per_group * VIS_FACTOR * VIS_FACTOR * MAX(n, 2));
            while ((rc = measure(n, info->height, info->width, s->min_pixels, max_px, &rh, &rw, &tokens)) == SEER_OK &&
                   tokens > groups * per_group && max_px > VIS_FACTOR * VIS_FACTOR * 2)
                max_px = max_px * 15 / 16; /* a rounding overshoot: shrink until it fits */
            if (rc)
                goto fail;
            if (tokens <= s->max_tokens || n <= 2)
                break;
            /* still too many at the lowest resolution: fewer frames, HF's linspace over the range */
            int64_t n_new = MAX(2, 2 * (s->max_tokens / MAX(tokens / groups, 1)));
            if (n_new >= n)
                n_new = MAX(2, n - 2);
            if ((rc = video_sample_indices(hi - lo, info->fps, 1e9, 1, n_new, p.index, &n)))
                goto fail;
        }
        if (tokens > s->max_tokens) {
            rc = seer_err(SEER_EINVAL, "%s: even %lld frames at %lldx%lld cost %lld tokens, more than "
                          "--max-video-tokens %lld", name, (long long)n, (long long)rw, (long long)rh,
                          (long long)tokens, (long long)s->max_tokens);
            goto fail;
        }
        snprintf(p.note, sizeof p.note, "--max-video-tokens %lld: %lld frames at %lldx%lld (%lld tokens) instead "
                 "of %lld frames (%lld tokens)", (long long)s->max_tokens, (long long)n, (long long)rw,
                 (long long)rh, (long long)tokens, (long long)n0, (long long)t0);
    }
    p.n_frames = n;
    p.width = (int32_t)rw;
    p.height = (int32_t)rh;
    if ((rc = vis_patch_grid((int)n, p.width, p.height, &p.grid)))
        goto fail;
    p.n_groups = p.grid.t;
    p.tokens = tokens;
    p.seconds = seer_malloc((size_t)n * sizeof *p.seconds);
    p.group_seconds = seer_malloc((size_t)p.n_groups * sizeof *p.group_seconds);
    if (!p.seconds || !p.group_seconds) {
        rc = seer_err(SEER_ENOMEM, "%s: no memory for the frame plan", name);
        goto fail;
    }
    const bool constant = video_constant_rate(info);
    for (int64_t k = 0; k < n; k++) {
        p.index[k] += lo;
        p.seconds[k] = constant ? (double)p.index[k] / info->fps : info->seconds[p.index[k]];
    }
    /* spec §5.3 _calculate_timestamps: pairs, the last frame repeated, the mean in the same double
       arithmetic as HF's (t_a + t_b) / 2 */
    for (int64_t g = 0; g < p.n_groups; g++)
        p.group_seconds[g] = (p.seconds[2 * g] + p.seconds[MIN(2 * g + 1, n - 1)]) / 2;
    *out = p;
    return SEER_OK;
fail:
    video_plan_clear(&p);
    return rc;
}
