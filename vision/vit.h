/* vit.h — the Qwen3.5 vision tower and patch merger (spec §4): weights in one internal form
   whatever file they came from (an mmproj GGUF or an HF directory's `model.visual.*`), and the
   forward pass from normalised pixel rows to merged embeddings in the text model's width.

   Internal form (vision/load.c converts to it):
     - patch_w {3·Tp·P·P, Dv}: the Conv3d kernel as a matrix whose columns follow the pixel row's
       (c, tt, py, px) order (spec §4.1–§4.2). HF stores exactly that; an mmproj stores the two
       temporal halves as two Conv2D kernels {P, P, 3, Dv} (spec §11.6), interleaved here at load
       into the same matrix (a byte copy: the maths is unchanged and both halves are used).
     - Matrices keep the file's dtype (F32, F16, BF16, Q8_0, …) and are used in place where the
       backend can (CPU + mmap); norms, biases and the position table are f32.
     - The position table {Dv, n_pos} is the S×S learned grid (S = √n_pos, spec §4.3).
   Scratch: one arena per vit_encode call, sized by vit_scratch_bytes for all its patches; the
   forward pass takes every buffer once before the block loop and reuses them block after block,
   and attention streams over keys (op_attention), so no N×N matrix exists. */
#ifndef SEER_VISION_VIT_H
#define SEER_VISION_VIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "vision/config.h"
#include "vision/preprocess.h" /* struct vis_grid */

typedef struct vit_model vit_model;

/* Loads the tower from an mmproj .gguf (projector qwen3vl_merger) or an HF model directory
   (config.json's vision_config, preprocessor_config.json when present, `model.visual.*`
   safetensors) onto `be` (borrowed; must outlive the model). Checks the configuration and every
   tensor's shape first. On failure *out is untouched. */
int vit_load(const char *path, backend *be, vit_model **out);
/* The tower's configuration from the same sources, without placing any weight: with `tensors` the
   weight files are opened and every tensor's presence and shape checked, as vit_load would;
   without, an HF directory's safetensors are not opened (seer_model_params.vocab_only). */
int vit_probe(const char *path, bool tensors, struct vit_config *cfg);
void vit_free(vit_model *m); /* NULL is fine */
const struct vit_config *vit_model_config(const vit_model *m);

/* Bytes of scratch the tower needs for n_patches patches (the memory planner adds it up);
   SIZE_MAX when that overflows or n_patches is more than one call takes (INT32_MAX). */
size_t vit_scratch_bytes(const struct vit_config *c, int64_t n_patches, size_t alignment);

/* pixels: rows f32 [N][3·2·P·P] in spec §4.1 order (N = Σ t·h·w over grids); grids: per image/video
   (t, h, w in patches). out: f32 [N/4][out_dim] merged embeddings in order (spec §4.6: per grid,
   per t, raster order over the merged grid). SEER_EINVAL for a bad grid list. */
int vit_encode(vit_model *m, const float *pixels, const struct vis_grid *grids, int n_grids, float *out);
/* vit_encode calling between(user) after each transformer block, with the device synchronised (the
   caller may let another thread's forward pass run there: api/vision.c releases the model's device
   lock, so a large image stalls a server's other replies by one block, not by the whole tower). */
int vit_encode_yielding(vit_model *m, const float *pixels, const struct vis_grid *grids, int n_grids, float *out,
                        void (*between)(void *user), void *user);

/* ---- internal form (vision/load.c, vision/vit.c, vision/merger.c) -------------------------------- */

struct vit_block {
    tensor ln1_w, ln1_b;   /* f32 {Dv} */
    tensor qkv_w;          /* {Dv, 3·Dv}: outputs [q heads | k heads | v heads] (spec §4.5 step 2) */
    tensor qkv_b;          /* f32 {3·Dv} */
    tensor proj_w;         /* {Dv, Dv} */
    tensor proj_b;         /* f32 {Dv} */
    tensor ln2_w, ln2_b;   /* f32 {Dv} */
    tensor fc1_w;          /* {Dv, Iv} */
    tensor fc1_b;          /* f32 {Iv} */
    tensor fc2_w;          /* {Iv, Dv} */
    tensor fc2_b;          /* f32 {Dv} */
};

struct vit_model {
    struct vit_config cfg;
    backend *be;
    tensor patch_w;        /* {3·Tp·P·P, Dv} (above) */
    tensor patch_b;        /* f32 {Dv} */
    tensor pos_embd;       /* f32 {Dv, n_pos} */
    struct vit_block *blocks; /* [depth] */
    tensor merge_ln_w, merge_ln_b; /* f32 {Dv} (HF merger.norm, mmproj v.post_ln) */
    tensor merge_fc1_w;    /* {M²·Dv, M²·Dv} (mm.0) */
    tensor merge_fc1_b;    /* f32 {M²·Dv} */
    tensor merge_fc2_w;    /* {M²·Dv, out_dim} (mm.2) */
    tensor merge_fc2_b;    /* f32 {out_dim} */
    /* ownership: buffers holding weights, and the file handle whose mapping they may borrow */
    backend_buffer **bufs;
    int n_bufs;
    size_t cap_bufs;
    void *gguf_file;       /* gguf * or NULL */
    void *st_file;         /* safetensors * or NULL */
};

/* Patch merger (spec §4.6): out{out_dim, N/M²} = fc2(gelu_erf(fc1(group(LayerNorm(h))))) with
   biases; h{Dv, N} in block-major order. norm{Dv, N} and fc1{M²·Dv, N/M²} are the caller's
   scratch (the tower's block buffers, free by then). */
int vit_merger_forward(const vit_model *m, const tensor *h, tensor *norm, tensor *fc1, tensor *out);

#endif
