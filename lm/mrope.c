/* mrope.c — three-axis positions for mixed prompts (spec §3.2); see mrope.h. */
#include "lm/mrope.h"

#include "core/error.h"
#include "core/util.h"

/* Positions must fit the i32 the RoPE op reads; the real models train to 262144. */
#define MROPE_MAX_POS ((int64_t)INT32_MAX)

int mrope_positions(const int32_t *ids, int64_t n, const struct mrope_ids *tok, const struct mrope_grid *images,
                    int n_images, const struct mrope_grid *videos, int n_videos, int64_t p0, int32_t *pos,
                    int64_t *p_end)
{
    int next_image = 0, next_video = 0;
    int64_t video_pair = 0; /* temporal pair of videos[next_video] the next video run takes */
    int64_t p = p0;
    if (n < 0 || p0 < 0)
        return seer_err(SEER_EINVAL, "mrope: negative length or start position");
    for (int64_t i = 0; i < n;) {
        const bool is_image = ids[i] == tok->image_pad, is_video = ids[i] == tok->video_pad;
        if (!is_image && !is_video) {
            if (p >= MROPE_MAX_POS)
                return seer_err(SEER_EINVAL, "mrope: position %lld is out of range", (long long)p);
            pos[i] = pos[n + i] = pos[2 * n + i] = (int32_t)p;
            p++, i++;
            continue;
        }
        int64_t run = 1;
        while (i + run < n && ids[i + run] == ids[i])
            run++;
        const struct mrope_grid *g;
        if (is_image) {
            if (next_image >= n_images)
                return seer_err(SEER_EINVAL, "mrope: image-pad run %d at token %lld has no image", next_image + 1,
                                (long long)i);
            g = &images[next_image++];
        } else {
            if (next_video >= n_videos)
                return seer_err(SEER_EINVAL, "mrope: video-pad run at token %lld has no video", (long long)i);
            g = &videos[next_video];
            if (++video_pair == g->t)
                next_video++, video_pair = 0;
        }
        const int64_t gh = g->h / 2, gw = g->w / 2; /* spatial merge 2 × 2 (spec §4.6) */
        if (gh < 1 || gw < 1 || g->h % 2 || g->w % 2 || g->t < 1)
            return seer_err(SEER_EINVAL, "mrope: grid %lldx%lldx%lld is not a merged grid", (long long)g->t,
                            (long long)g->h, (long long)g->w);
        if (run != gh * gw)
            return seer_err(SEER_EINVAL, "mrope: %s run at token %lld has %lld tokens, its grid needs %lld (%lld x %lld)",
                            is_image ? "image" : "video", (long long)i, (long long)run, (long long)(gh * gw),
                            (long long)gh, (long long)gw);
        if (p + MAX(gh, gw) >= MROPE_MAX_POS)
            return seer_err(SEER_EINVAL, "mrope: position %lld is out of range", (long long)p);
        for (int64_t r = 0; r < gh; r++)
            for (int64_t c = 0; c < gw; c++, i++) {
                pos[i] = (int32_t)p;
                pos[n + i] = (int32_t)(p + r);
                pos[2 * n + i] = (int32_t)(p + c);
            }
        p += MAX(gh, gw);
    }
    if (next_image != n_images || next_video != n_videos || video_pair != 0)
        return seer_err(SEER_EINVAL, "mrope: the prompt has fewer image/video runs than inputs (%d of %d images, "
                        "%d of %d videos placed)", next_image, n_images, next_video, n_videos);
    *p_end = p;
    return SEER_OK;
}
