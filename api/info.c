/* info.c — seer_model_file_info (seer.h): what a model file is and holds, read without loading
   its weights, as one JSON object (`seer info` prints it). PATH may be a GGUF text model, an mmproj
   GGUF, an HF model directory (config.json + safetensors), a model.safetensors.index.json or a
   single .safetensors file: its kind, architecture, the Qwen3.5 hyperparameters (text and/or
   vision, lm/config.h and vision/config.h, under their Hugging Face names), the tensor count and
   bytes by dtype, and on request the memory plan on a device. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/device.h"
#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/printable.h"
#include "core/safetensors.h"
#include "core/util.h"
#include "core/weights.h"
#include "lm/config.h"
#include "lm/plan.h"
#include "seer.h"
#include "vision/config.h"
#include "vision/vit.h"

#define REAL_DIGITS 7 /* f32 values keep 7 significant digits: enough to read them back */

/* ---- hyperparameters as JSON ------------------------------------------------------------------ */

/* Integer hyperparameters under their Hugging Face names, in this order. */
struct int_field {
    const char *key;
    int64_t v;
};

static void set_ints(json_t *o, const struct int_field *f, size_t n, bool skip_negative)
{
    for (size_t i = 0; i < n; i++)
        if (!skip_negative || f[i].v >= 0)
            json_object_set_new(o, f[i].key, json_integer(f[i].v));
}

static json_t *text_json(const struct qwen35_config *c)
{
    json_t *o = json_object(), *full = json_array(), *sec = json_array();
    if (!o || !full || !sec) {
        json_decref(o);
        json_decref(full);
        json_decref(sec);
        return NULL;
    }
    for (int64_t i = 0; i < c->n_layer; i++)
        if (c->is_attn[i])
            json_array_append_new(full, json_integer(i));
    for (int i = 0; i < 4; i++)
        json_array_append_new(sec, json_integer(c->mrope_sections[i]));
    const struct int_field sizes[] = {
        {"num_hidden_layers", c->n_layer},          {"hidden_size", c->n_embd},
        {"intermediate_size", c->n_ff},             {"vocab_size", c->n_vocab},
        {"num_attention_heads", c->n_head},         {"num_key_value_heads", c->n_head_kv},
        {"head_dim", c->head_dim},                  {"linear_num_key_heads", c->ssm_n_k_heads},
        {"linear_num_value_heads", c->ssm_n_v_heads}, {"linear_key_head_dim", c->ssm_d_k},
        {"linear_value_head_dim", c->ssm_d_v},      {"linear_conv_kernel_dim", c->ssm_conv_kernel},
        {"linear_conv_dim", qwen35_conv_dim(c)},
    };
    set_ints(o, sizes, ARRAY_LEN(sizes), false);
    json_object_set_new(o, "rms_norm_eps", json_real(c->rms_eps));
    json_object_set_new(o, "rope_theta", json_real(c->rope_theta));
    json_object_set_new(o, "rotary_dim", json_integer(c->n_rot));
    json_object_set_new(o, "partial_rotary_factor", json_real((double)c->n_rot / (double)c->head_dim));
    json_object_set_new(o, "mrope_section", sec);
    json_object_set_new(o, "mrope_interleaved", json_boolean(c->mrope_interleaved));
    if (c->full_attention_interval > 0)
        json_object_set_new(o, "full_attention_interval", json_integer(c->full_attention_interval));
    json_object_set_new(o, "full_attention_layers", full);
    json_object_set_new(o, "num_linear_attention_layers", json_integer(c->n_layer - qwen35_n_attn_layers(c)));
    json_object_set_new(o, "tie_word_embeddings", json_boolean(c->tie_word_embeddings));
    json_object_set_new(o, "mtp_num_hidden_layers", json_integer(c->n_mtp));
    if (c->n_ctx_train > 0)
        json_object_set_new(o, "max_position_embeddings", json_integer(c->n_ctx_train));
    const struct int_field ids[] = {
        {"bos_token_id", c->bos_id},          {"eos_token_id", c->eos_id},
        {"pad_token_id", c->pad_id},          {"image_token_id", c->image_token_id},
        {"video_token_id", c->video_token_id}, {"vision_start_token_id", c->vision_start_id},
        {"vision_end_token_id", c->vision_end_id},
    };
    set_ints(o, ids, ARRAY_LEN(ids), true); /* -1: the model has no such token */
    return o;
}

static json_t *rgb(const float v[3])
{
    json_t *a = json_array();
    for (int i = 0; a && i < 3; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *vision_json(const struct vit_config *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const struct int_field sizes[] = {
        {"depth", c->depth},
        {"hidden_size", c->n_embd},
        {"num_heads", c->n_head},
        {"head_dim", vit_head_dim(c)},
        {"intermediate_size", c->n_ff},
        {"out_hidden_size", c->out_dim},
        {"patch_size", c->patch_size},
        {"temporal_patch_size", c->temporal_patch_size},
        {"spatial_merge_size", c->merge_size},
        {"in_channels", c->in_channels},
        {"num_position_embeddings", c->n_pos},
    };
    set_ints(o, sizes, ARRAY_LEN(sizes), false);
    if (c->image_size > 0)
        json_object_set_new(o, "image_size", json_integer(c->image_size));
    json_object_set_new(o, "layer_norm_eps", json_real(c->eps));
    json_object_set_new(o, "rope_theta", json_real(c->rope_theta));
    /* The tower's peak scratch for one image of 1K, 4K and 16K merged tokens (the HF default
       maximum), as vit_encode will take it; the weights are the file's bytes above. */
    json_t *scratch = json_object();
    for (int64_t tokens = 1024; scratch && tokens <= 16384; tokens *= 4) {
        char key[32];
        snprintf(key, sizeof key, "%lld_tokens", (long long)tokens);
        size_t b = vit_scratch_bytes(c, tokens * c->merge_size * c->merge_size, 256);
        json_object_set_new(scratch, key, b == SIZE_MAX ? json_string("too large") : json_integer((json_int_t)b));
    }
    json_object_set_new(o, "scratch_bytes_per_image", scratch);
    json_object_set_new(o, "image_mean", rgb(c->image_mean));
    json_object_set_new(o, "image_std", rgb(c->image_std));
    return o;
}

/* Tensor count and bytes per dtype. */
static void add_tensor_stats(json_t *o, const struct weights *w)
{
    size_t bytes[DT_COUNT] = {0}, total = 0;
    int64_t count[DT_COUNT] = {0};
    for (int64_t i = 0; i < weights_count(w); i++) {
        const tensor *t = weights_tensor(w, i);
        size_t n = tensor_nbytes(t);
        bytes[t->type] += n;
        count[t->type]++;
        total += n;
    }
    json_t *d = json_object();
    for (int t = 0; d && t < DT_COUNT; t++) {
        if (!count[t])
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "tensors", json_integer(count[t]));
        json_object_set_new(e, "bytes", json_integer((json_int_t)bytes[t]));
        json_object_set_new(d, dtype_name((enum dtype)t), e);
    }
    json_object_set_new(o, "tensors", json_integer(weights_count(w)));
    json_object_set_new(o, "dtypes", d);
    json_object_set_new(o, "total_bytes", json_integer((json_int_t)total));
}

/* ---- one function per kind of PATH --------------------------------------------------------------- */

/* The memory plan of a text model on plan_device (lm/plan.h), as "plan". */
static int add_plan(json_t *o, const char *path, const char *plan_device, const struct qwen35_config *c,
                    const struct weights *w)
{
    backend *be;
    struct qwen35_plan p;
    int rc = backend_open(plan_device, 0, &be);
    if (rc)
        return rc;
    qwen35_plan_make(c, w, be, QWEN35_PLAN_CTX, QWEN35_PLAN_UBATCH, &p);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "device", be->description, "context",
                          (json_int_t)p.n_ctx, "weights_bytes", (json_int_t)p.weight_bytes, "kv_bytes_per_1k_tokens",
                          (json_int_t)p.kv_bytes_per_1k, "gdn_state_bytes", (json_int_t)p.gdn_state_bytes,
                          "scratch_bytes", (json_int_t)p.scratch_bytes, "total_bytes", (json_int_t)p.total_bytes);
    if (j && p.known) {
        json_object_set_new(j, "free_bytes", json_integer((json_int_t)p.free_bytes));
        json_object_set_new(j, "fits", json_boolean(qwen35_plan_check(&p, path, be->description) == SEER_OK));
    } else if (j) {
        json_object_set_new(j, "free_bytes", json_string("unknown"));
    }
    seer_err_clear();
    json_object_set_new(o, "plan", j);
    backend_free(be);
    return SEER_OK;
}

static int info_gguf(const char *path, const char *plan_device, json_t *o)
{
    gguf *g;
    const char *arch = NULL, *name = NULL;
    int rc = gguf_open(path, &g);
    if (rc != SEER_OK)
        return rc;
    struct weights w = weights_from_gguf(g);
    char fmt[32];
    if (gguf_find_key(g, "general.architecture") >= 0)
        rc = gguf_get_str(g, "general.architecture", &arch, NULL);
    bool mmproj = (arch && !strcmp(arch, "clip")) || gguf_find_key(g, "clip.projector_type") >= 0;
    json_object_set_new(o, "kind", json_string(mmproj ? "gguf mmproj (vision tower + merger)" : "gguf text model"));
    snprintf(fmt, sizeof fmt, "GGUF v%u", gguf_version(g));
    json_object_set_new(o, "format", json_string(fmt));
    if (rc == SEER_OK && gguf_find_key(g, "general.name") >= 0 && gguf_kv_type(g, gguf_find_key(g, "general.name")) ==
        GGUF_TYPE_STRING)
        gguf_get_str(g, "general.name", &name, NULL);
    if (name)
        json_object_set_new(o, "name", json_string(name));
    if (rc == SEER_OK && mmproj) {
        struct vit_config vc;
        json_object_set_new(o, "architecture", json_string("qwen3vl_merger"));
        if ((rc = vit_config_from_gguf(g, &vc)) == SEER_OK && (rc = vit_check_tensors(&vc, &w)) == SEER_OK)
            json_object_set_new(o, "vision", vision_json(&vc));
    } else if (rc == SEER_OK) {
        struct qwen35_config tc;
        if ((rc = qwen35_config_from_gguf(g, &tc)) == SEER_OK && (rc = qwen35_check_tensors(&tc, &w)) == SEER_OK) {
            json_object_set_new(o, "architecture", json_string("qwen35"));
            json_object_set_new(o, "text", text_json(&tc));
            if (plan_device)
                rc = add_plan(o, path, plan_device, &tc, &w);
        }
    }
    if (rc == SEER_OK)
        add_tensor_stats(o, &w);
    gguf_free(g);
    return rc;
}

static json_t *load_json(const char *path, int *rc)
{
    char *text;
    size_t len;
    json_error_t jerr;
    char shown[160];
    if ((*rc = io_read_file(path, (size_t)16 << 20, &text, &len)) != SEER_OK)
        return NULL;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    seer_free(text);
    if (!root)
        *rc = seer_err(SEER_EFORMAT, "%s: bad JSON: %s (line %d, column %d)", path,
                        printable(shown, sizeof shown, jerr.text), jerr.line, jerr.column);
    return root;
}

/* Text (and vision, when vision_config is there) hyperparameters from config.json, checked against
   the tensors when `check` (the tensors form a whole checkpoint, not one shard). */
static int hf_configs(const char *dir, const struct weights *w, bool check, const char *plan_device, json_t *o)
{
    char cfg_path[4096];
    int rc;
    snprintf(cfg_path, sizeof cfg_path, "%s/config.json", dir);
    json_t *root = load_json(cfg_path, &rc);
    if (!root)
        return rc;
    struct qwen35_config tc;
    struct vit_config vc;
    bool has_vision = json_is_object(json_object_get(root, "vision_config"));
    if ((rc = qwen35_config_from_json(root, cfg_path, &tc)) == SEER_OK && has_vision)
        rc = vit_config_from_json(root, cfg_path, &vc);
    if (rc == SEER_OK && has_vision)
        rc = vit_config_load_preprocessor(&vc, dir);
    if (rc == SEER_OK && check)
        rc = qwen35_check_tensors(&tc, w);
    if (rc == SEER_OK && check && has_vision)
        rc = vit_check_tensors(&vc, w);
    if (rc == SEER_OK) {
        const char *mt = json_string_value(json_object_get(root, "model_type"));
        json_object_set_new(o, "architecture", json_string(mt ? mt : "qwen3_5"));
        json_object_set_new(o, "config", json_string(cfg_path));
        json_object_set_new(o, "text", text_json(&tc));
        if (has_vision)
            json_object_set_new(o, "vision", vision_json(&vc));
        if (check && plan_device)
            rc = add_plan(o, dir, plan_device, &tc, w);
    }
    json_decref(root);
    return rc;
}

/* Directory of a file path ("." when it has none). */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, cap, ".");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
}

static int info_safetensors(const char *path, int kind, const char *plan_device, json_t *o)
{
    safetensors *st;
    char dir[4096], cfg[4200], index[4200];
    bool is_index = kind == IO_FILE && strlen(path) >= 5 && !strcmp(path + strlen(path) - 5, ".json");
    int rc = kind == IO_DIR ? safetensors_open_dir(path, &st)
           : is_index       ? safetensors_open_index(path, &st)
                            : safetensors_open(path, &st);
    if (rc != SEER_OK)
        return rc;
    struct weights w = weights_from_safetensors(st);
    char fmt[64];
    json_object_set_new(o, "kind", json_string(kind == IO_DIR ? "hf model directory"
                                               : is_index     ? "safetensors index"
                                                              : "safetensors file"));
    snprintf(fmt, sizeof fmt, "safetensors (%d file%s)", safetensors_n_files(st), safetensors_n_files(st) > 1 ? "s" : "");
    json_object_set_new(o, "format", json_string(fmt));
    if (kind == IO_DIR)
        snprintf(dir, sizeof dir, "%s", path);
    else
        dir_of(path, dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
    if (kind == IO_DIR) {
        rc = io_path_kind(cfg) == IO_FILE ? hf_configs(dir, &w, true, plan_device, o)
                                          : seer_err(SEER_EFORMAT, "%s: no config.json in this model directory", path);
    } else {
        /* A lone file is checked against its directory's config.json only when it is the whole
           checkpoint (no index beside it); a shard alone lacks most tensors. */
        bool whole = is_index || io_path_kind(index) != IO_FILE;
        if (io_path_kind(cfg) == IO_FILE)
            rc = hf_configs(dir, &w, whole, plan_device, o);
        else
            json_object_set_new(o, "architecture", json_string("unknown (no config.json beside the file)"));
    }
    if (rc == SEER_OK)
        add_tensor_stats(o, &w);
    safetensors_free(st);
    return rc;
}

/* ---- seer.h ------------------------------------------------------------------------------------- */

int seer_model_file_info(const char *path, const char *device, char **json)
{
    *json = NULL;
    if (!path)
        return seer_err(SEER_EINVAL, "seer_model_file_info: no path");
    json_t *o = json_object();
    if (!o)
        return seer_err(SEER_ENOMEM, "%s: out of memory", path);
    json_object_set_new(o, "path", json_string(path));
    int kind = io_path_kind(path), rc;
    char magic[4] = {0};
    if (kind == IO_FILE) {
        FILE *f = fopen(path, "rb");
        if (f) {
            if (fread(magic, 1, 4, f) != 4)
                memset(magic, 0, sizeof magic);
            fclose(f);
        }
    }
    size_t len = strlen(path);
    if (kind == IO_DIR)
        rc = info_safetensors(path, kind, device, o);
    else if (kind == IO_FILE && !memcmp(magic, "GGUF", 4))
        rc = info_gguf(path, device, o);
    else if (kind == IO_FILE && ((len >= 12 && !strcmp(path + len - 12, ".safetensors")) ||
                                 (len >= 5 && !strcmp(path + len - 5, ".json"))))
        rc = info_safetensors(path, kind, device, o);
    else if (kind == IO_FILE && len >= 5 && !strcmp(path + len - 5, ".gguf"))
        rc = info_gguf(path, device, o); /* reports the bad magic */
    else if (kind == IO_FILE)
        rc = seer_err(SEER_EFORMAT, "%s: not a GGUF file, a .safetensors file or a model directory", path);
    else {
        uint64_t size;
        rc = io_file_size(path, &size); /* reports why the path cannot be opened */
        if (rc == SEER_OK)
            rc = seer_err(SEER_EIO, "%s: cannot read this path", path);
    }
    char *text = NULL;
    if (rc == SEER_OK && !(text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(REAL_DIGITS))))
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", path);
    json_decref(o);
    if (rc == SEER_OK)
        *json = text; /* jansson allocates with malloc, which seer_free releases */
    return rc;
}
