/* tiny_model.h — test-only builders of tiny Qwen3.5 checkpoints with the real tensor layout, in
   both naming schemes (HF spec §8, GGUF spec §11.3/§11.6), written independently of lm/config.c so
   each checks the other. A test builds a tensor list and a metadata set from a tm_cfg, changes what
   it wants (one wrong shape, a missing tensor, a bad key), then writes the files. Tensor contents
   are a fixed non-zero pattern: these files exercise readers and shape checks, not numerics. */
#ifndef SEER_TESTS_TINY_MODEL_H
#define SEER_TESTS_TINY_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "support/gguf_write.h"

struct tm_cfg {
    int n_layer, n_embd, n_ff, n_vocab, n_head, n_head_kv, head_dim;
    int hk, hv, dk, dv, conv_k, n_rot, n_mtp, interval;
    int sections[3];
    bool tie;
    int eos;
    /* vision tower */
    int v_depth, v_embd, v_head, v_ff, v_patch, v_merge, v_npos;
};

/* A small fixed configuration (GQA in both mixers, an MTP layer, tied head). */
void tm_default(struct tm_cfg *c);
/* A random valid configuration from the test RNG (call test_seed() first). */
void tm_random(struct tm_cfg *c);

struct tm_tensor {
    char name[160];
    int rank;
    int64_t shape[5]; /* in the file's order: ne for GGUF names, PyTorch for HF names */
};

struct tm_list {
    struct tm_tensor *t;
    int n, cap;
};

/* Appends the text model's tensors (with the MTP block when n_mtp > 0; `output`/`lm_head` when
   untied) or the vision tower's, in GGUF or HF naming. */
void tm_text_tensors(const struct tm_cfg *c, bool gguf_names, struct tm_list *l);
void tm_vision_tensors(const struct tm_cfg *c, bool gguf_names, struct tm_list *l);
struct tm_tensor *tm_get(struct tm_list *l, const char *name); /* NULL when absent */
void tm_remove(struct tm_list *l, const char *name);
void tm_list_free(struct tm_list *l);

/* GGUF metadata: `qwen35.*` for the text model, `clip.*` for the mmproj (spec §11.2, §11.6). */
void tm_text_meta(const struct tm_cfg *c, struct gw_file *f);
void tm_vision_meta(const struct tm_cfg *c, struct gw_file *f);
/* Adds every tensor of the list to f as ggml type `type` (vectors and conv kernels stay F32). */
void tm_gguf_add(struct gw_file *f, const struct tm_list *l, uint32_t type);

/* config.json for the composite model (nested text_config; vision_config when with_vision). */
json_t *tm_config_json(const struct tm_cfg *c, bool with_vision);
void tm_write_json(const char *path, const json_t *j);
/* One BF16 safetensors file holding the whole list. */
void tm_write_safetensors(const char *path, const struct tm_list *l);

#endif
