/* config.h — Qwen3.5 text-decoder hyperparameters (spec §1.1, §2, §3.3) read from a GGUF file
   (`qwen35.*` keys, spec §11.2) or from a Hugging Face config.json (nested text_config), and the
   check that a checkpoint holds every tensor the configuration implies, with the right shape, in
   either naming scheme (HF `model.language_model.*`, spec §8; GGUF `blk.N.*`, spec §11.3).
   Nothing is hard-coded per model size: every dimension comes from the file, and the defaults
   used for keys a config.json may omit are those of HF's Qwen3_5TextConfig (spec §1.1). */
#ifndef SEER_LM_CONFIG_H
#define SEER_LM_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/gguf.h"
#include "core/weights.h"

#define QWEN35_MAX_LAYERS 512
#define QWEN35_MAX_DIM ((int64_t)1 << 24) /* cap on any single hyperparameter (vocab 248320 fits) */

struct qwen35_config {
    /* decoder shape (spec §1.1) */
    int64_t n_layer;   /* num_hidden_layers / block_count − nextn_predict_layers (MTP excluded) */
    int64_t n_embd;    /* H, hidden_size */
    int64_t n_ff;      /* I, intermediate_size (SwiGLU MLP, spec §2.4) */
    int64_t n_vocab;   /* vocab_size: rows of the embedding and LM head */
    int64_t n_ctx_train; /* max_position_embeddings / context_length; 0 when absent */
    /* full attention (spec §2.6) */
    int64_t n_head;    /* num_attention_heads */
    int64_t n_head_kv; /* num_key_value_heads */
    int64_t head_dim;  /* 256 in every released size */
    /* gated DeltaNet (spec §2.5) */
    int64_t ssm_n_k_heads; /* Hk, linear_num_key_heads */
    int64_t ssm_n_v_heads; /* Hv, linear_num_value_heads */
    int64_t ssm_d_k;       /* dk, linear_key_head_dim */
    int64_t ssm_d_v;       /* dv, linear_value_head_dim */
    int64_t ssm_conv_kernel; /* Kc, linear_conv_kernel_dim */
    /* norms and rotary embedding (spec §2.3, §3.3) */
    float rms_eps;         /* rms_norm_eps */
    float rope_theta;      /* rope_theta / rope.freq_base */
    int n_rot;             /* rotated dims per head = head_dim · partial_rotary_factor */
    int mrope_sections[4]; /* mrope_section (T, H, W, unused 4th as GGUF writes it) */
    bool mrope_interleaved; /* true for Qwen3.5 (llama.cpp's IMROPE) */
    /* layer schedule (spec §2.2) */
    int full_attention_interval;
    bool is_attn[QWEN35_MAX_LAYERS]; /* layer i is full attention (else GDN) */
    /* heads and extras */
    bool tie_word_embeddings; /* LM head = embedding matrix */
    int n_mtp;                /* MTP layers (spec §7); 0 when none */
    /* a config.json with the text config at its top level (model_type qwen3_5_text: how
       transformers saves Qwen3_5ForCausalLM, a checkpoint without a vision tower) names its
       architectures[0] here (the model_type when it lists none); "" for every other source */
    char text_only_arch[64];
    /* special token ids, −1 when the source does not say */
    int64_t bos_id, eos_id, pad_id;
    int64_t image_token_id, video_token_id, vision_start_id, vision_end_id;
};

/* Derived widths (spec §1.1): key_dim = Hk·dk, value_dim = Hv·dv, conv_dim = 2·key_dim + value_dim. */
static inline int64_t qwen35_key_dim(const struct qwen35_config *c) { return c->ssm_n_k_heads * c->ssm_d_k; }
static inline int64_t qwen35_value_dim(const struct qwen35_config *c) { return c->ssm_n_v_heads * c->ssm_d_v; }
static inline int64_t qwen35_conv_dim(const struct qwen35_config *c)
{
    return 2 * qwen35_key_dim(c) + qwen35_value_dim(c);
}
int qwen35_n_attn_layers(const struct qwen35_config *c);

/* From a GGUF text model: `general.architecture` must be "qwen35" (else SEER_EUNSUPPORTED).
   tie_word_embeddings is true when the file has no `output.weight` (spec §11.3). On failure *cfg
   is untouched. */
int qwen35_config_from_gguf(const gguf *g, struct qwen35_config *cfg);
/* From a parsed config.json (`path` names it in messages): model_type "qwen3_5" with a nested
   text_config, or "qwen3_5_text" at the top level. tie_word_embeddings is read from text_config,
   else the top level, else false (the composite config's default [inferred]); eos/bos/pad may be
   an integer or a list (the first id is kept). */
int qwen35_config_from_json(const json_t *root, const char *path, struct qwen35_config *cfg);
/* Reads and parses path (a config.json), then as above. */
int qwen35_config_from_hf_file(const char *path, struct qwen35_config *cfg);

/* Checks every tensor the configuration implies exists with the expected shape: GGUF names for
   a GGUF source, HF names (prefix `model.language_model.`, or `model.` for a text-only
   checkpoint) for safetensors. MTP tensors are required in a GGUF whose nextn_predict_layers > 0
   and checked in an HF checkpoint when `mtp.fc.weight` is present. Extra tensors are ignored.
   Errors are SEER_EFORMAT: "FILE: tensor 'NAME' has shape [..], expected [..] for this
   architecture" (shapes in the file's own order: ne for GGUF, PyTorch for safetensors). */
int qwen35_check_tensors(const struct qwen35_config *cfg, const struct weights *w);

#endif
