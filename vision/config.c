/* config.c — vision-tower hyperparameters from an mmproj GGUF or config.json's vision_config, and
   the tower's tensor table (see config.h). Implements spec §1.1 (vision rows), §4.2–§4.6 (what
   each tensor is), §5.1 (mean/std defaults), §8 (HF names); mmproj keys and names from spec
   §11.6. Divisions: 1. validation  2. mmproj GGUF  3. config.json  4. tensor tables */
#include "vision/config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/jget.h"
#include "core/tcheck.h"
#include "core/printable.h"
#include "core/util.h"

#define VIT_MAX_DEPTH 1024
#define MAX_PREPROCESSOR_BYTES ((size_t)1 << 20) /* a preprocessor_config.json is under 1 KiB */

/* ---- 1. validation -------------------------------------------------------------------------- */

static void set_defaults(struct vit_config *c)
{
    memset(c, 0, sizeof *c);
    c->patch_size = 16;         /* spec §1.1 */
    c->temporal_patch_size = 2; /* spec §4.1 */
    c->merge_size = 2;
    c->in_channels = 3;
    c->n_pos = 2304; /* 48 × 48, spec §4.3 */
    c->eps = 1e-6f;  /* spec §4.5 */
    c->rope_theta = 10000.0f; /* spec §4.4 */
    for (int i = 0; i < 3; i++)
        c->image_mean[i] = c->image_std[i] = 0.5f; /* spec §5.1 */
}

static int validate(const struct vit_config *c, const char *path)
{
    const struct { const char *name; int64_t v; } dims[] = {
        {"vision hidden size", c->n_embd}, {"vision heads", c->n_head},         {"vision MLP size", c->n_ff},
        {"vision output size", c->out_dim}, {"patch size", c->patch_size},     {"spatial merge size", c->merge_size},
        {"position embeddings", c->n_pos},
    };
    if (c->depth < 1 || c->depth > VIT_MAX_DEPTH)
        return seer_err(SEER_EFORMAT, "%s: vision depth %lld is out of range [1, %d]", path, (long long)c->depth,
                        VIT_MAX_DEPTH);
    for (size_t i = 0; i < ARRAY_LEN(dims); i++)
        if (dims[i].v < 1 || dims[i].v > VIT_MAX_DIM)
            return seer_err(SEER_EFORMAT, "%s: %s = %lld is out of range [1, %lld]", path, dims[i].name,
                            (long long)dims[i].v, (long long)VIT_MAX_DIM);
    if (c->n_embd % c->n_head != 0 || vit_head_dim(c) % 4 != 0) /* 2-D rope: dh/4 freqs per axis, spec §4.4 */
        return seer_err(SEER_EFORMAT, "%s: vision hidden size %lld over %lld heads must give a head dim divisible by 4",
                        path, (long long)c->n_embd, (long long)c->n_head);
    if (c->temporal_patch_size != 2)
        return seer_err(SEER_EUNSUPPORTED, "%s: temporal patch size %lld (only 2 is supported, spec §4.1)", path,
                        (long long)c->temporal_patch_size);
    if (c->in_channels != 3)
        return seer_err(SEER_EUNSUPPORTED, "%s: %lld input channels (only RGB is supported)", path,
                        (long long)c->in_channels);
    int64_t side = (int64_t)llround(sqrt((double)c->n_pos));
    if (side * side != c->n_pos) /* the table is a square grid, bilinearly resampled (spec §4.3) */
        return seer_err(SEER_EFORMAT, "%s: %lld position embeddings do not form a square grid", path,
                        (long long)c->n_pos);
    if (!(c->eps > 0 && c->eps < 1))
        return seer_err(SEER_EFORMAT, "%s: vision layer-norm eps %g must be in (0, 1)", path, c->eps);
    for (int i = 0; i < 3; i++)
        if (!(c->image_std[i] > 0) || !isfinite(c->image_mean[i]))
            return seer_err(SEER_EFORMAT, "%s: image_std must be positive and image_mean finite", path);
    return SEER_OK;
}

/* ---- 2. mmproj GGUF (spec §11.6) ----------------------------------------------------------- */

static int g_dim(const gguf *g, const char *key, bool optional, int64_t *out)
{
    uint32_t v;
    if (optional && gguf_find_key(g, key) < 0)
        return SEER_OK;
    int rc = gguf_get_u32(g, key, &v);
    if (rc == SEER_OK)
        *out = v;
    return rc;
}

static int g_rgb(const gguf *g, const char *key, float out[3])
{
    float v[3];
    size_t n;
    if (gguf_find_key(g, key) < 0)
        return SEER_OK;
    int rc = gguf_get_arr_f32(g, key, v, 3, &n);
    if (rc != SEER_OK)
        return rc;
    if (n != 3)
        return seer_err(SEER_EFORMAT, "%s: %s has %zu entries, expected 3", gguf_path(g), key, n);
    memcpy(out, v, sizeof v);
    return SEER_OK;
}

int vit_config_from_gguf(const gguf *g, struct vit_config *cfg)
{
    const char *path = gguf_path(g), *arch = NULL, *proj;
    char shown[64];
    struct vit_config c;
    int rc;
    set_defaults(&c);
    if (gguf_find_key(g, "general.architecture") >= 0 &&
        (rc = gguf_get_str(g, "general.architecture", &arch, NULL)) != SEER_OK)
        return rc;
    if (arch && strcmp(arch, "clip") != 0)
        return seer_err(SEER_EUNSUPPORTED, "%s: architecture '%s' is not an mmproj (clip) file", path,
                        printable(shown, sizeof shown, arch));
    /* Mixed-modality files name the vision projector separately (clip.vision.projector_type). */
    const char *pkey = gguf_find_key(g, "clip.vision.projector_type") >= 0 ? "clip.vision.projector_type"
                                                                            : "clip.projector_type";
    if ((rc = gguf_get_str(g, pkey, &proj, NULL)) != SEER_OK)
        return rc;
    if (strcmp(proj, "qwen3vl_merger") != 0)
        return seer_err(SEER_EUNSUPPORTED, "%s: projector type '%s' is not supported (expected qwen3vl_merger)", path,
                        printable(shown, sizeof shown, proj));
    bool has_vision = true;
    if (gguf_find_key(g, "clip.has_vision_encoder") >= 0 &&
        (rc = gguf_get_bool(g, "clip.has_vision_encoder", &has_vision)) != SEER_OK)
        return rc;
    if (!has_vision)
        return seer_err(SEER_EUNSUPPORTED, "%s: clip.has_vision_encoder is false", path);
    if ((rc = g_dim(g, "clip.vision.block_count", false, &c.depth)) ||
        (rc = g_dim(g, "clip.vision.embedding_length", false, &c.n_embd)) ||
        (rc = g_dim(g, "clip.vision.feed_forward_length", false, &c.n_ff)) ||
        (rc = g_dim(g, "clip.vision.attention.head_count", false, &c.n_head)) ||
        (rc = g_dim(g, "clip.vision.projection_dim", false, &c.out_dim)) ||
        (rc = g_dim(g, "clip.vision.patch_size", false, &c.patch_size)) ||
        (rc = g_dim(g, "clip.vision.spatial_merge_size", true, &c.merge_size)) ||
        (rc = g_dim(g, "clip.vision.image_size", true, &c.image_size)) ||
        (rc = g_rgb(g, "clip.vision.image_mean", c.image_mean)) || (rc = g_rgb(g, "clip.vision.image_std", c.image_std)))
        return rc;
    if (gguf_find_key(g, "clip.vision.attention.layer_norm_epsilon") >= 0 &&
        (rc = gguf_get_f32(g, "clip.vision.attention.layer_norm_epsilon", &c.eps)) != SEER_OK)
        return rc;
    /* Qwen3.5 has no DeepStack (spec §1); a file that uses it needs a different graph. */
    if (gguf_find_key(g, "clip.vision.is_deepstack_layers") >= 0) {
        int64_t ds[VIT_MAX_DEPTH];
        size_t n;
        if ((rc = gguf_get_arr_i64(g, "clip.vision.is_deepstack_layers", ds, ARRAY_LEN(ds), &n)) != SEER_OK)
            return rc;
        for (size_t i = 0; i < n; i++)
            if (ds[i])
                return seer_err(SEER_EUNSUPPORTED, "%s: DeepStack vision layers are not supported (layer %zu)", path,
                                i);
    }
    int64_t pi = gguf_find_tensor(g, "v.position_embd.weight");
    if (pi < 0)
        return seer_err(SEER_EFORMAT, "%s: tensor 'v.position_embd.weight' is missing", path);
    c.n_pos = gguf_tensor(g, pi)->ne[1];
    if ((rc = validate(&c, path)) != SEER_OK)
        return rc;
    *cfg = c;
    return SEER_OK;
}

/* ---- 3. config.json vision_config ----------------------------------------------------------- */

int vit_config_from_json(const json_t *root, const char *path, struct vit_config *cfg)
{
    struct jget_ctx vc = {path, "vision_config."};
    const json_t *v = json_is_object(root) ? json_object_get(root, "vision_config") : NULL;
    struct vit_config c;
    const char *mt, *act;
    char shown[64];
    int rc;
    set_defaults(&c);
    if (!json_is_object(v))
        return seer_err(SEER_EFORMAT, "%s: vision_config is missing or not an object", path);
    if ((rc = jget_str(&vc, v, "model_type", false, &mt)) != SEER_OK)
        return rc;
    /* Some early checkpoints say "qwen3_5" here; HF rewrites it (spec §1). */
    if (mt && strcmp(mt, "qwen3_5_vision") != 0 && strcmp(mt, "qwen3_5") != 0)
        return seer_err(SEER_EUNSUPPORTED, "%s: vision_config.model_type '%s' is not qwen3_5_vision", path,
                        printable(shown, sizeof shown, mt));
    if ((rc = jget_str(&vc, v, "hidden_act", false, &act)) != SEER_OK)
        return rc;
    if (act && strcmp(act, "gelu_pytorch_tanh") != 0) /* spec §4.5 */
        return seer_err(SEER_EUNSUPPORTED, "%s: vision_config.hidden_act '%s' (only gelu_pytorch_tanh)", path,
                        printable(shown, sizeof shown, act));
    static const int64_t p16 = 16, two = 2, c3 = 3, pos = 2304;
    static const struct jget_i64_field fields[] = {
        {"depth", 1, VIT_MAX_DEPTH, NULL, offsetof(struct vit_config, depth)},
        {"hidden_size", 1, VIT_MAX_DIM, NULL, offsetof(struct vit_config, n_embd)},
        {"num_heads", 1, VIT_MAX_DIM, NULL, offsetof(struct vit_config, n_head)},
        {"intermediate_size", 1, VIT_MAX_DIM, NULL, offsetof(struct vit_config, n_ff)},
        {"out_hidden_size", 1, VIT_MAX_DIM, NULL, offsetof(struct vit_config, out_dim)},
        {"patch_size", 1, VIT_MAX_DIM, &p16, offsetof(struct vit_config, patch_size)},
        {"temporal_patch_size", 1, VIT_MAX_DIM, &two, offsetof(struct vit_config, temporal_patch_size)},
        {"spatial_merge_size", 1, VIT_MAX_DIM, &two, offsetof(struct vit_config, merge_size)},
        {"in_channels", 1, VIT_MAX_DIM, &c3, offsetof(struct vit_config, in_channels)},
        {"num_position_embeddings", 1, VIT_MAX_DIM, &pos, offsetof(struct vit_config, n_pos)},
    };
    if ((rc = jget_i64_fields(&vc, v, fields, ARRAY_LEN(fields), &c)) != SEER_OK)
        return rc;
    int64_t ds[64];
    size_t n_ds;
    if ((rc = jget_i64_arr(&vc, v, "deepstack_visual_indexes", false, 0, VIT_MAX_DEPTH, ds, ARRAY_LEN(ds), &n_ds)))
        return rc;
    if (n_ds > 0)
        return seer_err(SEER_EUNSUPPORTED, "%s: vision_config.deepstack_visual_indexes is not empty (DeepStack is "
                        "not supported)", path);
    if ((rc = validate(&c, path)) != SEER_OK)
        return rc;
    *cfg = c;
    return SEER_OK;
}

int vit_config_read_preprocessor(struct vit_config *cfg, const char *path)
{
    json_t *root;
    int rc = jget_load_file(path, MAX_PREPROCESSOR_BYTES, "MAX_PREPROCESSOR_BYTES in vision/config.c", 0, &root);
    if (rc != SEER_OK)
        return rc;
    rc = vit_config_preprocessor(cfg, root, path);
    json_decref(root);
    return rc;
}

int vit_config_load_preprocessor(struct vit_config *cfg, const char *dir)
{
    char name[4200];
    json_t *root;
    int rc = jget_load_hf_processor(dir, "preprocessor_config.json", "image_processor", MAX_PREPROCESSOR_BYTES,
                                    "MAX_PREPROCESSOR_BYTES in vision/config.c", &root, name, sizeof name);
    if (rc == SEER_OK && root)
        rc = vit_config_preprocessor(cfg, root, name);
    json_decref(root);
    return rc;
}

int vit_config_preprocessor(struct vit_config *cfg, const json_t *root, const char *path)
{
    struct jget_ctx pc = {path, ""};
    size_t nm, ns;
    double mean[3], std[3];
    int rc = SEER_OK;
    if (!json_is_object(root))
        rc = seer_err(SEER_EFORMAT, "%s: not a JSON object", path);
    if (rc == SEER_OK)
        rc = jget_f64_arr(&pc, root, "image_mean", false, mean, 3, &nm);
    if (rc == SEER_OK)
        rc = jget_f64_arr(&pc, root, "image_std", false, std, 3, &ns);
    if (rc != SEER_OK)
        return rc;
    if ((nm != 0 && nm != 3) || (ns != 0 && ns != 3))
        return seer_err(SEER_EFORMAT, "%s: image_mean and image_std must have 3 entries", path);
    for (int i = 0; i < 3; i++) {
        if (ns == 3 && !(std[i] > 0))
            return seer_err(SEER_EFORMAT, "%s: image_std[%d] = %g must be positive", path, i, std[i]);
        if (nm == 3)
            cfg->image_mean[i] = (float)mean[i];
        if (ns == 3)
            cfg->image_std[i] = (float)std[i];
    }
    return SEER_OK;
}

/* ---- 4. tensor tables ----------------------------------------------------------------------- */

static void want(struct tcheck *c, const char *name, unsigned flags, int rank, int64_t a, int64_t b, int64_t d,
                 int64_t e, int64_t f)
{
    tcheck_want(c, name, flags, rank, (const int64_t[5]){a, b, d, e, f});
}

enum { F = WEIGHTS_FLOAT_ONLY };

/* mmproj names, ne order (spec §11.6). The Conv3D patch kernel is stored as two Conv2D kernels,
   one per temporal slice; the merger is mm.0 (fc1) and mm.2 (fc2) around a GELU. */
static void check_gguf(struct tcheck *c, const void *config)
{
    const struct vit_config *v = config;
    int64_t D = v->n_embd, P = v->patch_size, M = v->merge_size * v->merge_size * D;
    want(c, "v.patch_embd.weight", F, 4, P, P, v->in_channels, D, 0);
    want(c, "v.patch_embd.weight.1", F, 4, P, P, v->in_channels, D, 0);
    want(c, "v.patch_embd.bias", F, 1, D, 0, 0, 0, 0);
    want(c, "v.position_embd.weight", F, 2, D, v->n_pos, 0, 0, 0);
    for (int64_t j = 0; j < v->depth; j++) {
        long long n = (long long)j;
        want(c, tcheck_name(c, "v.blk.%lld.ln1.weight", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ln1.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.attn_qkv.weight", n), 0, 2, D, 3 * D, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.attn_qkv.bias", n), F, 1, 3 * D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.attn_out.weight", n), 0, 2, D, D, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.attn_out.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ln2.weight", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ln2.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ffn_up.weight", n), 0, 2, D, v->n_ff, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ffn_up.bias", n), F, 1, v->n_ff, 0, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ffn_down.weight", n), 0, 2, v->n_ff, D, 0, 0, 0);
        want(c, tcheck_name(c, "v.blk.%lld.ffn_down.bias", n), F, 1, D, 0, 0, 0, 0);
    }
    want(c, "v.post_ln.weight", F, 1, D, 0, 0, 0, 0);
    want(c, "v.post_ln.bias", F, 1, D, 0, 0, 0, 0);
    want(c, "mm.0.weight", 0, 2, M, M, 0, 0, 0);
    want(c, "mm.0.bias", F, 1, M, 0, 0, 0, 0);
    want(c, "mm.2.weight", 0, 2, M, v->out_dim, 0, 0, 0);
    want(c, "mm.2.bias", F, 1, v->out_dim, 0, 0, 0, 0);
}

/* HF names, PyTorch order (spec §8): 3 + 12·Lv + 6 tensors. */
static void check_hf(struct tcheck *c, const void *config)
{
    const struct vit_config *v = config;
    int64_t D = v->n_embd, P = v->patch_size, M = v->merge_size * v->merge_size * D;
    want(c, "model.visual.patch_embed.proj.weight", F, 5, D, v->in_channels, v->temporal_patch_size, P, P);
    want(c, "model.visual.patch_embed.proj.bias", F, 1, D, 0, 0, 0, 0);
    want(c, "model.visual.pos_embed.weight", F, 2, v->n_pos, D, 0, 0, 0);
    for (int64_t j = 0; j < v->depth; j++) {
        long long n = (long long)j;
        want(c, tcheck_name(c, "model.visual.blocks.%lld.norm1.weight", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.norm1.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.norm2.weight", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.norm2.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.attn.qkv.weight", n), 0, 2, 3 * D, D, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.attn.qkv.bias", n), F, 1, 3 * D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.attn.proj.weight", n), 0, 2, D, D, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.attn.proj.bias", n), F, 1, D, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.mlp.linear_fc1.weight", n), 0, 2, v->n_ff, D, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.mlp.linear_fc1.bias", n), F, 1, v->n_ff, 0, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.mlp.linear_fc2.weight", n), 0, 2, D, v->n_ff, 0, 0, 0);
        want(c, tcheck_name(c, "model.visual.blocks.%lld.mlp.linear_fc2.bias", n), F, 1, D, 0, 0, 0, 0);
    }
    want(c, "model.visual.merger.norm.weight", F, 1, D, 0, 0, 0, 0);
    want(c, "model.visual.merger.norm.bias", F, 1, D, 0, 0, 0, 0);
    want(c, "model.visual.merger.linear_fc1.weight", 0, 2, M, M, 0, 0, 0);
    want(c, "model.visual.merger.linear_fc1.bias", F, 1, M, 0, 0, 0, 0);
    want(c, "model.visual.merger.linear_fc2.weight", 0, 2, v->out_dim, M, 0, 0, 0);
    want(c, "model.visual.merger.linear_fc2.bias", F, 1, v->out_dim, 0, 0, 0, 0);
}

int vit_check_tensors(const struct vit_config *cfg, const struct weights *w)
{
    return tcheck_run(w, cfg, check_gguf, check_hf);
}
