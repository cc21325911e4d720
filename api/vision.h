/* vision.h — images in the public API (api/vision.c): the vision tower found and loaded next to the
   text model, image inputs decoded and measured, and prompts whose image placeholders are expanded,
   encoded and fed to the decoder at the right MRoPE positions (spec §3.2, §4.8, §5.4). */
#ifndef SEER_API_VISION_H
#define SEER_API_VISION_H

#include <stddef.h>
#include <stdint.h>

#include "api/video.h"
#include "media/decode.h"
#include "seer.h"
#include "vision/preprocess.h"
#include "vision/vit.h"

struct seer_model;
struct seer_context;

/* Loads the tower: from `path` itself when it is an HF directory, else from p->mmproj or the single
   mmproj*.gguf beside the GGUF text model (none found: the model stays text-only). A projector
   whose output width differs from the text model's hidden size is refused with both numbers. */
int api_vision_load(struct seer_model *m, const char *path, const seer_model_params *p);
/* The refusal of an image or video on a model without a tower (SEER_EUNSUPPORTED): a text-only HF
   checkpoint is named with its architecture, a GGUF is told about --mmproj; a tokenizer alone gets
   api_model_config's SEER_EINVAL. */
int api_no_vision(const struct seer_model *m);
/* The tower's weights, loaded by the first call (under the model's lock: contexts on several threads
   may ask at once; a failed load is tried again by the next call). SEER_EINVAL on a vocab_only
   model, api_no_vision's error on one without a tower. */
int api_vision_tower(struct seer_model *m, vit_model **out);

/* The smart_resize pixel window (spec §5.1): an HF directory's preprocessor_config.json size
   {shortest_edge, longest_edge} (or min_pixels / max_pixels), else HF's defaults 65536..16777216
   (also for an mmproj GGUF, which does not carry them); a positive token bound overrides its side
   (one token = 32 × 32 pixels). hf_dir may be NULL. */
int api_pixel_window(const char *hf_dir, int64_t min_tokens, int64_t max_tokens, int64_t *min_px, int64_t *max_px);

/* What an image file may cost to decode under p's max_image_pixels and pdf_dpi (NULL = defaults):
   a model's limits, and a seer_document's (api/pages.c). */
struct media_limits api_media_limits(const seer_model_params *p);
/* Decodes an input (a file page, or the caller's pixels copied) to owned RGB within `lim`. */
int api_image_decode(const struct media_limits *lim, const seer_image_input *in, struct image_rgb8 *out);
/* The size the model sees a w × h image at within a pixel window, and its token count (spec §5.2,
   §4.7). */
int api_image_measure_rgb(int64_t min_pixels, int64_t max_pixels, int32_t w, int32_t h, seer_image_info *info);

/* Images waiting to be fed, in prompt order: decoded at add time (the caller's pixels are only
   borrowed for the call), encoded when the prompt that holds their placeholders is fed. */
struct api_images {
    struct image_rgb8 *img;
    size_t n, cap;
};
int api_images_push(struct api_images *q, struct image_rgb8 *im); /* takes *im, zeroes it */
void api_images_clear(struct api_images *q);

/* A prompt ready for the decoder: the token ids with every image placeholder expanded to its
   token count, and each image's grid and embeddings [tokens][H] in order. */
struct api_fused {
    int32_t *ids;
    size_t n_ids;
    struct vis_grid *grids;
    float **emb;
    size_t n_images;
    struct vis_grid *vgrids; /* videos (api/video.c): grid and embeddings [tokens][H] per video */
    float **vemb;
    size_t n_videos;
    double seconds; /* preprocessing + tower time */
    struct api_video_timings video; /* the videos' share, by stage */
};
/* Expands ids (as tokenized, one <|image_pad|> per image) with the queued images, encoding each;
   measure: sized by the resize rule alone (spec §5.2), nothing encoded (out->emb entries NULL).
   SEER_EINVAL when the placeholders and images differ in number. */
int api_fuse(struct seer_model *m, const int32_t *ids, size_t n_ids, const struct api_images *q, bool measure,
             struct api_fused *out);
void api_fused_clear(struct api_fused *f);

/* Feeds the n tokens of feed (which end with the fused prompt's ids) to the decoder: embeddings of
   the tokens with the image and video rows written over their placeholders, positions of spec §3.2
   from the state's next position. Logits of the last token go to `logits`. With p->on_progress the
   rows go in micro-batches, each reported; 1 = the callback stopped the prompt after *n_done rows. */
int api_prefill_fused(struct seer_context *c, const int32_t *feed, size_t n, const struct api_fused *f,
                      const seer_generate_params *p, float *logits, size_t *n_done);

#endif
