/* mrope.h — the three-axis (T, H, W) positions of a prompt that mixes text, images and videos
   (spec §3.2, HF get_rope_index), continuing from where a sequence left off.

   A run of image-pad (or video-pad) tokens is one image (one video frame pair): its tokens are in
   raster order over the merged grid (Gh = h/2 rows, Gw = w/2 columns of the 16-px patch grid), and
   the token at merged (r, c) gets T = p, H = p + r, W = p + c; then p advances by max(Gh, Gw).
   Text tokens get T = H = W = p, p + 1, …. A video grid (t, h, w) covers t consecutive pad runs,
   one per temporal pair, each placed like an image (spec §3.2 "Video"). */
#ifndef SEER_LM_MROPE_H
#define SEER_LM_MROPE_H

#include <stdint.h>

/* One image or video as the vision tower sees it: t temporal pairs of an h × w patch grid. */
struct mrope_grid {
    int64_t t, h, w;
};

struct mrope_ids {
    int32_t image_pad, video_pad; /* <|image_pad|>, <|video_pad|> ids (spec §6.1: 248056, 248057) */
};

/* Fills pos[a*n + i] (a = 0 T, 1 H, 2 W) for the n tokens of ids, starting at position p0 (the
   sequence's next position: tokens so far + rope_delta). Image-pad runs take the image grids in
   order, video-pad runs the video grids (t runs each). *p_end receives the position the next
   token takes (max position + 1). Fails with SEER_EINVAL naming the run when a run's length does
   not equal its grid's (h/2)·(w/2), when there are more runs than grids, or when a grid is left
   unused. */
int mrope_positions(const int32_t *ids, int64_t n, const struct mrope_ids *tok, const struct mrope_grid *images,
                    int n_images, const struct mrope_grid *videos, int n_videos, int64_t p0, int32_t *pos,
                    int64_t *p_end);

#endif
