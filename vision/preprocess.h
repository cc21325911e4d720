/* preprocess.h — Qwen3.5 image and video preprocessing, bit-compatible with Hugging Face's processors:
   the smart_resize rules (spec §5.2 images, §5.3 videos), the bicubic resampling of 8-bit RGB of
   HF's default (torchvision) processors or of its PIL backend (Image.resize(..., BICUBIC)), and
   rescale + normalise + patchify into the `pixel_values` rows of spec §4.1.

   Pixels are packed 8-bit RGB, row-major, 3 bytes per pixel, no row padding. Every function returns
   SEER_OK or SEER_EINVAL (a message naming preprocess.c and the bad value), SEER_ENOMEM; outputs are
   untouched on failure. All functions are reentrant (no global state). */
#ifndef SEER_VISION_PREPROCESS_H
#define SEER_VISION_PREPROCESS_H

#include <stdint.h>

#define VIS_PATCH 16          /* P, spec §4.1 */
#define VIS_TEMPORAL_PATCH 2  /* Tp */
#define VIS_MERGE 2           /* M */
#define VIS_FACTOR (VIS_PATCH * VIS_MERGE) /* f = 32, the resize granule of spec §5.2 */
#define VIS_ROW_DIM (3 * VIS_TEMPORAL_PATCH * VIS_PATCH * VIS_PATCH) /* 1536 columns per row */
/* Largest image side accepted anywhere here: keeps every product of sides (and of sides and a frame
   count up to VIS_MAX_FRAMES) exact in a double, so the resize arithmetic matches Python's. */
#define VIS_MAX_SIDE ((int64_t)1 << 20)
#define VIS_MAX_FRAMES ((int64_t)1 << 12)

/* Default pixel budgets of the shipped preprocessor configs (spec §5.1, §5.3). */
#define VIS_IMAGE_MIN_PIXELS ((int64_t)65536)
#define VIS_IMAGE_MAX_PIXELS ((int64_t)16777216)
#define VIS_VIDEO_MIN_PIXELS ((int64_t)4096)
#define VIS_VIDEO_MAX_PIXELS ((int64_t)25165824)

/* smart_resize, spec §5.2: the (height, width) an h × w image is resized to — multiples of `factor`
   (32), Python round-half-to-even, pixel count brought inside [min_pixels, max_pixels].
   SEER_EINVAL for sides outside 1..VIS_MAX_SIDE, an aspect ratio above 200, factor < 1 or
   min_pixels > max_pixels. */
int vis_smart_resize(int64_t h, int64_t w, int64_t factor, int64_t min_pixels, int64_t max_pixels,
                     int64_t *out_h, int64_t *out_w);

/* The video variant, spec §5.3: n_frames sampled frames (≥ 2) share one pixel budget over the whole
   clip; a side below `factor` is first scaled up so the smaller side reaches it. */
int vis_smart_resize_video(int64_t n_frames, int64_t h, int64_t w, int64_t factor, int64_t min_pixels,
                           int64_t max_pixels, int64_t *out_h, int64_t *out_w);

/* spec §5.3 step 4, the optional per-frame cap (qwen-vl-utils behaviour, `cap_pixels_per_frame`):
   the max_pixels to pass to vis_smart_resize_video for n_frames frames given the config's
   shortest_edge / longest_edge budgets. */
int vis_video_capped_max_pixels(int64_t n_frames, int64_t factor, int64_t shortest_edge,
                                int64_t longest_edge, int64_t *max_pixels);

/* Whose bicubic resize sizes images and video frames (spec §5.2): torchvision's resize(BICUBIC,
   antialias=True) of a uint8 tensor on the CPU, what transformers' default (fast) processors call,
   or Pillow's Image.resize(BICUBIC), what its PIL backend calls. They differ by a level or two at
   some pixels. */
enum vis_resize { VIS_RESIZE_TORCHVISION = 0, VIS_RESIZE_PILLOW = 1 };

/* "torchvision" or NULL → VIS_RESIZE_TORCHVISION, "pillow" → VIS_RESIZE_PILLOW, else SEER_EINVAL
   "resize: 'NAME' is not torchvision or pillow". */
int vis_resize_parse(const char *name, enum vis_resize *kind);

/* The bicubic resize of an RGB image, bit for bit as `kind` does it (see preprocess.c). src is
   w × h, dst dw × dh; they must not overlap. Equal sizes copy src unchanged, as both do. */
int vis_resize_bicubic_rgb8(const uint8_t *src, int32_t w, int32_t h, uint8_t *dst, int32_t dw, int32_t dh,
                            enum vis_resize kind);

/* grid_thw of spec §4.1: t temporal groups, h × w patches of 16 × 16. */
struct vis_grid {
    int64_t t, h, w;
};
static inline int64_t vis_grid_rows(const struct vis_grid *g) { return g->t * g->h * g->w; }
/* Tokens the merger emits (spec §4.7): one per 2 × 2 block of patches. */
static inline int64_t vis_grid_tokens(const struct vis_grid *g)
{
    return g->t * (g->h / VIS_MERGE) * (g->w / VIS_MERGE);
}

/* The grid of n_frames frames of w × h pixels (sides multiples of 32, n_frames ≥ 1): size the rows
   buffer of vis_patchify with vis_grid_rows(grid) · VIS_ROW_DIM floats. */
int vis_patch_grid(int n_frames, int32_t w, int32_t h, struct vis_grid *grid);

/* Rescale (p/255), normalise ((x − mean)/std per channel, both in f32 as HF does) and patchify
   n_frames frames (each w × h RGB) into rows [vis_grid_rows][1536] in the block-major row order
   and (c, tt, py, px) column order of spec §4.1. A still image is one frame, duplicated to Tp = 2;
   a video's frames are padded to an even count by repeating the last. */
int vis_patchify(const uint8_t *const *frames, int n_frames, int32_t w, int32_t h, const float mean[3],
                 const float std[3], float *rows, struct vis_grid *grid);

/* The whole image path of spec §5.2: smart_resize (factor 32) within [min_pixels, max_pixels],
   bicubic resize by `kind` (none when the size already fits), patchify. *rows is a new seer_malloc'ed
   [vis_grid_rows(grid)][1536] array the caller frees with seer_freep / free. */
int vis_preprocess_image(const uint8_t *rgb, int32_t w, int32_t h, int64_t min_pixels, int64_t max_pixels,
                         enum vis_resize kind, const float mean[3], const float std[3], float **rows,
                         struct vis_grid *grid);

#endif
