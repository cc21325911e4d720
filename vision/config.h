/* config.h — Qwen3.5 vision-tower hyperparameters (spec §1.1, §4) read from an mmproj GGUF
   (`clip.projector_type` = qwen3vl_merger, `clip.vision.*` keys, spec §11.6) or from the
   vision_config of an HF config.json, and the check that the tower's tensors are all present with
   the right shapes (mmproj names `v.*`, `mm.0.*`, `mm.2.*`; HF names `model.visual.*`, spec §8). */
#ifndef SEER_VISION_CONFIG_H
#define SEER_VISION_CONFIG_H

#include <jansson.h>
#include <stdint.h>

#include "core/gguf.h"
#include "core/weights.h"

#define VIT_MAX_DIM ((int64_t)1 << 20)

struct vit_config {
    int64_t depth;        /* Lv, transformer blocks */
    int64_t n_embd;       /* Dv, hidden_size */
    int64_t n_head;       /* attention heads (head dim = Dv / n_head) */
    int64_t n_ff;         /* Iv, intermediate_size of the block MLP */
    int64_t out_dim;      /* out_hidden_size / projection_dim = text hidden size H */
    int64_t patch_size;   /* P = 16 */
    int64_t temporal_patch_size; /* Tp = 2 (mmproj: two Conv2D kernels, spec §11.6) */
    int64_t merge_size;   /* M = 2 (spatial_merge_size) */
    int64_t in_channels;  /* 3 */
    int64_t n_pos;        /* learned position table rows (2304 = 48×48, spec §4.3) */
    int64_t image_size;   /* clip.vision.image_size; 0 when the source does not say */
    float eps;            /* LayerNorm eps (spec §4.5: 1e-6) */
    float rope_theta;     /* 2-D axial rotary base (spec §4.4: 10000) */
    float image_mean[3], image_std[3]; /* normalisation (spec §5.1 defaults 0.5 / 0.5) */
};

static inline int64_t vit_head_dim(const struct vit_config *c) { return c->n_embd / c->n_head; }

/* From an mmproj GGUF whose projector is qwen3vl_merger (else SEER_EUNSUPPORTED). n_pos comes
   from v.position_embd.weight. */
int vit_config_from_gguf(const gguf *g, struct vit_config *cfg);
/* From config.json's vision_config (`path` names the file in messages). */
int vit_config_from_json(const json_t *root, const char *path, struct vit_config *cfg);
/* image_mean / image_std (when present) from a preprocessor config's JSON into cfg; `path` names it. */
int vit_config_preprocessor(struct vit_config *cfg, const json_t *root, const char *path);
/* The same from an HF directory's image processor settings (jget_load_hf_processor: the released
   preprocessor_config.json, or transformers 5's processor_config.json); none is fine. */
int vit_config_load_preprocessor(struct vit_config *cfg, const char *dir);
/* Reads image_mean / image_std from an HF preprocessor_config.json into cfg (when present). */
int vit_config_read_preprocessor(struct vit_config *cfg, const char *path);

/* Checks every vision-tower tensor: mmproj names for a GGUF source, `model.visual.*` otherwise. */
int vit_check_tensors(const struct vit_config *cfg, const struct weights *w);

#endif
