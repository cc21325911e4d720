/* randmodel.h — random-weight Qwen3.5 vision towers of the released shapes (spec §1.1: depth, width,
   heads, MLP, output width per size) written as llama.cpp mmproj GGUF files (`clip.*` keys,
   `qwen3vl_merger` projector, `v.*` / `mm.*` names, the patch kernel's two temporal halves; the
   same layout tests/reference/hf2gguf.py writes), so the tower can be benchmarked — by seer and by
   llama.cpp's libmtmd on the same file — without downloading weights. Matrices in the requested
   dtype; the patch kernels F16 (F32 for an F32 file) and norms, biases and the position table F32,
   as llama.cpp's converter keeps them. Values: N(0, 1/√fan_in) matrices, O(1) activations. */
#ifndef SEER_VISION_RANDMODEL_H
#define SEER_VISION_RANDMODEL_H

#include <stdint.h>

#include "core/tensor.h"

struct randvit_shape {
    int64_t depth, n_embd, n_head, n_ff; /* Lv, Dv, heads, Iv */
    int64_t out_dim;                      /* the text model's hidden size H */
};

/* The tower of a released size: "0.8b", "2b", "4b" or "9b" (spec §1.1). SEER_EINVAL otherwise. */
int randvit_preset(const char *name, struct randvit_shape *s);

/* Writes the mmproj to `path` atomically (no partial file on failure). wtype: DT_F32, DT_F16,
   DT_BF16 or DT_Q8_0 (a matrix whose rows are not whole Q8_0 blocks falls back to F16, as the
   converter does). Errors: SEER_EINVAL, SEER_EIO, SEER_ENOMEM. */
int randvit_write(const char *path, const struct randvit_shape *s, enum dtype wtype, uint64_t seed, int n_threads);

#endif
