/* config.c — Qwen3.5 text hyperparameters from GGUF or config.json, validation, and the tensor
   table check (see config.h). Implements spec §1.1 (fields), §2.2 (layer schedule), §3.3 (rotary
   parameters), §7 (MTP) and §8 (HF names/shapes); GGUF keys and names follow spec §11.2–§11.3.
   Divisions: 1. validation  2. GGUF  3. config.json  4. tensor tables */
#include "lm/config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/jget.h"
#include "core/tcheck.h"
#include "core/printable.h"
#include "core/util.h"

#define MAX_CONFIG_BYTES ((size_t)16 << 20)
#define MAX_MTP 16

int qwen35_n_attn_layers(const struct qwen35_config *c)
{
    int n = 0;
    for (int64_t i = 0; i < c->n_layer; i++)
        n += c->is_attn[i];
    return n;
}

/* ---- 1. validation -------------------------------------------------------------------------- */

/* Default layer schedule (spec §2.2): layer i is full attention iff (i+1) % interval == 0. */
static void schedule_from_interval(struct qwen35_config *c)
{
    for (int64_t i = 0; i < c->n_layer; i++)
        c->is_attn[i] = (i + 1) % c->full_attention_interval == 0;
}

static int check_dim(const char *path, const char *name, int64_t v)
{
    if (v < 1 || v > QWEN35_MAX_DIM)
        return seer_err(SEER_EFORMAT, "%s: %s = %lld is out of range [1, %lld]", path, name, (long long)v,
                        (long long)QWEN35_MAX_DIM);
    return SEER_OK;
}

/* Checks what every consumer relies on, so later code can do shape arithmetic without overflow
   (each dimension ≤ 2^24, so any product of two fits easily in int64). */
static int validate(const struct qwen35_config *c, const char *path)
{
    const struct { const char *name; int64_t v; } dims[] = {
        {"hidden size", c->n_embd},         {"intermediate size", c->n_ff},
        {"vocabulary size", c->n_vocab},    {"attention heads", c->n_head},
        {"key/value heads", c->n_head_kv},  {"head dim", c->head_dim},
        {"linear key heads", c->ssm_n_k_heads}, {"linear value heads", c->ssm_n_v_heads},
        {"linear key head dim", c->ssm_d_k}, {"linear value head dim", c->ssm_d_v},
        {"conv kernel", c->ssm_conv_kernel},
    };
    int rc;
    if (c->n_layer < 1 || c->n_layer > QWEN35_MAX_LAYERS)
        return seer_err(c->n_layer < 1 ? SEER_EFORMAT : SEER_EUNSUPPORTED, "%s: %lld layers (seer supports 1..%d)",
                        path, (long long)c->n_layer, QWEN35_MAX_LAYERS);
    for (size_t i = 0; i < ARRAY_LEN(dims); i++)
        if ((rc = check_dim(path, dims[i].name, dims[i].v)) != SEER_OK)
            return rc;
    if (c->n_head % c->n_head_kv != 0)
        return seer_err(SEER_EFORMAT, "%s: %lld attention heads are not a multiple of %lld key/value heads", path,
                        (long long)c->n_head, (long long)c->n_head_kv);
    if (c->ssm_n_v_heads % c->ssm_n_k_heads != 0) /* spec §2.5 step 5: v-head j uses k-head j / r */
        return seer_err(SEER_EFORMAT, "%s: %lld linear value heads are not a multiple of %lld key heads", path,
                        (long long)c->ssm_n_v_heads, (long long)c->ssm_n_k_heads);
    if (c->n_rot < 2 || c->n_rot % 2 != 0 || c->n_rot > c->head_dim) /* rotate-half pairs, spec §3.3 */
        return seer_err(SEER_EFORMAT, "%s: rotary dims %d must be even and in [2, head_dim = %lld]", path, c->n_rot,
                        (long long)c->head_dim);
    for (int i = 0; i < 4; i++)
        if (c->mrope_sections[i] < 0 || c->mrope_sections[i] > c->n_rot)
            return seer_err(SEER_EFORMAT, "%s: mrope section %d = %d is out of range [0, %d]", path, i,
                            c->mrope_sections[i], c->n_rot);
    if (!(c->rms_eps > 0 && c->rms_eps < 1))
        return seer_err(SEER_EFORMAT, "%s: rms_norm_eps = %g must be in (0, 1)", path, c->rms_eps);
    if (!(c->rope_theta > 0 && isfinite(c->rope_theta)))
        return seer_err(SEER_EFORMAT, "%s: rope theta = %g must be positive", path, c->rope_theta);
    if (c->n_mtp < 0 || c->n_mtp > MAX_MTP)
        return seer_err(SEER_EFORMAT, "%s: %d MTP layers (at most %d)", path, c->n_mtp, MAX_MTP);
    return SEER_OK;
}

static void init_ids(struct qwen35_config *c)
{
    c->bos_id = c->eos_id = c->pad_id = -1;
    c->image_token_id = c->video_token_id = c->vision_start_id = c->vision_end_id = -1;
}

/* ---- 2. GGUF (spec §11.2) ------------------------------------------------------------------ */

static int g_dim(const gguf *g, const char *key, int64_t *out)
{
    uint32_t v;
    int rc = gguf_get_u32(g, key, &v);
    if (rc == SEER_OK)
        *out = v;
    return rc;
}

static int g_opt_id(const gguf *g, const char *key, int64_t *out)
{
    uint32_t v;
    if (gguf_find_key(g, key) < 0)
        return SEER_OK;
    int rc = gguf_get_u32(g, key, &v);
    if (rc == SEER_OK)
        *out = v;
    return rc;
}

/* The rotary embedding seer implements is the default one with MRoPE sections (spec §3.3): a
   config asking for another (YaRN, linear, dynamic NTK, LongRoPE, llama3) for long contexts would
   otherwise run silently without it. "mrope" is Qwen2-VL's older name for the same default. */
static int rope_type_ok(const char *path, const char *key, const char *type)
{
    if (!strcmp(type, "default") || !strcmp(type, "mrope") || !strcmp(type, "none"))
        return SEER_OK;
    return seer_err(SEER_EUNSUPPORTED, "%s: %s '%s' is not supported: seer implements the default rotary "
                    "embedding only (remove the scaling to run within the trained context)", path, key, type);
}

/* Layer types: `qwen35.attention.recurrent_layers` (per-layer bools, newer files) when present,
   else the interval rule (spec §11.2). MTP entries, if listed, must be non-recurrent. With a list,
   full_attention_interval is only informative (0 when the file does not give it). */
static int g_schedule(const gguf *g, struct qwen35_config *c)
{
    const char *rkey = "qwen35.attention.recurrent_layers", *ikey = "qwen35.full_attention_interval";
    bool listed = gguf_find_key(g, rkey) >= 0;
    int64_t v = listed ? 0 : 4; /* 4: HF's default interval (spec §1.1) */
    int rc;
    if (gguf_find_key(g, ikey) >= 0 && (rc = g_dim(g, ikey, &v)) != SEER_OK)
        return rc;
    if (v > QWEN35_MAX_LAYERS || (!listed && v < 1))
        return seer_err(SEER_EFORMAT, "%s: %s = %lld is out of range", gguf_path(g), ikey, (long long)v);
    c->full_attention_interval = (int)v;
    if (!listed) {
        schedule_from_interval(c);
        return SEER_OK;
    }
    int64_t rec[QWEN35_MAX_LAYERS + MAX_MTP];
    size_t n;
    if ((rc = gguf_get_arr_i64(g, rkey, rec, ARRAY_LEN(rec), &n)) != SEER_OK)
        return rc;
    if (n != (size_t)c->n_layer && n != (size_t)(c->n_layer + c->n_mtp))
        return seer_err(SEER_EFORMAT, "%s: %s has %zu entries, expected %lld", gguf_path(g), rkey, n,
                        (long long)c->n_layer);
    for (size_t i = (size_t)c->n_layer; i < n; i++)
        if (rec[i] != 0)
            return seer_err(SEER_EFORMAT, "%s: %s marks MTP layer %zu as recurrent", gguf_path(g), rkey, i);
    for (int64_t i = 0; i < c->n_layer; i++)
        c->is_attn[i] = rec[i] == 0;
    return SEER_OK;
}

int qwen35_config_from_gguf(const gguf *g, struct qwen35_config *cfg)
{
    const char *path = gguf_path(g), *arch;
    char shown[64];
    struct qwen35_config c = {0};
    int64_t block_count, key_len, val_len, state, groups, rank, inner, rot, mtp = 0;
    int rc;
    init_ids(&c);
    if ((rc = gguf_get_str(g, "general.architecture", &arch, NULL)) != SEER_OK)
        return rc;
    if (!strcmp(arch, "clip")) /* the commonest mix-up: the mmproj GGUF that sits beside the model */
        return seer_err(SEER_EUNSUPPORTED, "%s is a vision projector (mmproj) GGUF, not a text model: pass the text "
                        "model's GGUF as the model and this file with --mmproj", path);
    if (strcmp(arch, "qwen35") != 0)
        return seer_err(SEER_EUNSUPPORTED, "%s: architecture '%s' is not supported (expected qwen35)", path,
                        printable(shown, sizeof shown, arch));
    if ((rc = g_dim(g, "qwen35.block_count", &block_count)) || (rc = g_dim(g, "qwen35.embedding_length", &c.n_embd)) ||
        (rc = g_dim(g, "qwen35.feed_forward_length", &c.n_ff)) ||
        (rc = g_dim(g, "qwen35.attention.head_count", &c.n_head)) ||
        (rc = g_dim(g, "qwen35.attention.head_count_kv", &c.n_head_kv)) ||
        (rc = g_dim(g, "qwen35.attention.key_length", &key_len)) ||
        (rc = g_dim(g, "qwen35.attention.value_length", &val_len)) ||
        (rc = gguf_get_f32(g, "qwen35.attention.layer_norm_rms_epsilon", &c.rms_eps)) ||
        (rc = g_dim(g, "qwen35.rope.dimension_count", &rot)) ||
        (rc = gguf_get_f32(g, "qwen35.rope.freq_base", &c.rope_theta)) ||
        (rc = g_dim(g, "qwen35.ssm.conv_kernel", &c.ssm_conv_kernel)) ||
        (rc = g_dim(g, "qwen35.ssm.state_size", &state)) || (rc = g_dim(g, "qwen35.ssm.group_count", &groups)) ||
        (rc = g_dim(g, "qwen35.ssm.time_step_rank", &rank)) || (rc = g_dim(g, "qwen35.ssm.inner_size", &inner)))
        return rc;
    if (gguf_find_key(g, "qwen35.nextn_predict_layers") >= 0 &&
        (rc = g_dim(g, "qwen35.nextn_predict_layers", &mtp)) != SEER_OK)
        return rc;
    if (gguf_find_key(g, "qwen35.context_length") >= 0 &&
        (rc = g_dim(g, "qwen35.context_length", &c.n_ctx_train)) != SEER_OK)
        return rc;
    if (block_count < 1)
        return seer_err(SEER_EFORMAT, "%s: qwen35.block_count = 0 (a model needs at least one layer)", path);
    if (mtp > MAX_MTP || mtp >= block_count)
        return seer_err(SEER_EFORMAT, "%s: qwen35.nextn_predict_layers = %lld leaves no decoder layers of %lld", path,
                        (long long)mtp, (long long)block_count);
    c.n_mtp = (int)mtp;
    c.n_layer = block_count - mtp; /* block_count counts the MTP blocks appended at the end */
    if (key_len != val_len)
        return seer_err(SEER_EUNSUPPORTED, "%s: key_length %lld differs from value_length %lld", path,
                        (long long)key_len, (long long)val_len);
    c.head_dim = key_len;
    /* llama.cpp derives both GDN head sizes from ssm.state_size (spec §11.2). */
    c.ssm_d_k = c.ssm_d_v = state;
    c.ssm_n_k_heads = groups;
    c.ssm_n_v_heads = rank;
    /* Range-check the factors first: each is a u32 from the file, and 2^32 × 2^32 overflows. */
    if ((rc = check_dim(path, "qwen35.ssm.state_size", state)) != SEER_OK ||
        (rc = check_dim(path, "qwen35.ssm.time_step_rank", rank)) != SEER_OK)
        return rc;
    if (inner != state * rank)
        return seer_err(SEER_EFORMAT, "%s: qwen35.ssm.inner_size = %lld, expected state_size × time_step_rank = %lld",
                        path, (long long)inner, (long long)(state * rank));
    c.n_rot = rot > INT32_MAX ? INT32_MAX : (int)rot; /* out of range is reported by validate() */
    int64_t sec[4];
    size_t n_sec;
    if ((rc = gguf_get_arr_i64(g, "qwen35.rope.dimension_sections", sec, 4, &n_sec)) != SEER_OK)
        return rc;
    for (size_t i = 0; i < n_sec; i++) {
        if (sec[i] < 0 || sec[i] > 65536)
            return seer_err(SEER_EFORMAT, "%s: qwen35.rope.dimension_sections[%zu] = %lld is out of range", path, i,
                            (long long)sec[i]);
        c.mrope_sections[i] = (int)sec[i];
    }
    c.mrope_interleaved = true; /* llama.cpp hard-codes IMROPE for qwen35 (spec §11.1) */
    if (gguf_find_key(g, "qwen35.rope.scaling.type") >= 0) {
        const char *type;
        size_t type_len;
        if ((rc = gguf_get_str(g, "qwen35.rope.scaling.type", &type, &type_len)) != SEER_OK)
            return rc;
        char t[64];
        snprintf(t, sizeof t, "%.*s", (int)MIN(type_len, sizeof t - 1), type);
        if ((rc = rope_type_ok(path, "qwen35.rope.scaling.type", printable(shown, sizeof shown, t))) != SEER_OK)
            return rc;
    }
    if (c.n_layer > QWEN35_MAX_LAYERS)
        return validate(&c, path);
    if ((rc = g_schedule(g, &c)) != SEER_OK)
        return rc;
    /* Vocabulary: the explicit key, else the embedding rows, else the tokenizer's token count. */
    int64_t ti = gguf_find_tensor(g, "token_embd.weight");
    enum gguf_type et;
    uint64_t n_tok;
    if (gguf_find_key(g, "qwen35.vocab_size") >= 0) {
        if ((rc = g_dim(g, "qwen35.vocab_size", &c.n_vocab)) != SEER_OK)
            return rc;
    } else if (ti >= 0) {
        c.n_vocab = gguf_tensor(g, ti)->ne[1];
    } else if (gguf_get_arr_info(g, "tokenizer.ggml.tokens", &et, &n_tok) == SEER_OK) {
        c.n_vocab = n_tok > INT64_MAX ? INT64_MAX : (int64_t)n_tok;
    } else {
        return seer_err(SEER_EFORMAT, "%s: tensor 'token_embd.weight' is missing (and no qwen35.vocab_size or "
                        "tokenizer.ggml.tokens gives the vocabulary size)", path);
    }
    c.tie_word_embeddings = gguf_find_tensor(g, "output.weight") < 0;
    if ((rc = g_opt_id(g, "tokenizer.ggml.bos_token_id", &c.bos_id)) ||
        (rc = g_opt_id(g, "tokenizer.ggml.eos_token_id", &c.eos_id)) ||
        (rc = g_opt_id(g, "tokenizer.ggml.padding_token_id", &c.pad_id)))
        return rc;
    if ((rc = validate(&c, path)) != SEER_OK)
        return rc;
    *cfg = c;
    return SEER_OK;
}

/* ---- 3. config.json (spec §1.1; HF Qwen3_5TextConfig defaults) ------------------------------- */

/* An id that may be a single integer or a list (eos_token_id: [248046, 248044]); the first wins. */
static int j_id(const struct jget_ctx *jc, const json_t *obj, const char *key, int64_t *out)
{
    const json_t *v = json_object_get(obj, key);
    int64_t ids[16];
    size_t n;
    if (!v || json_is_null(v))
        return SEER_OK;
    if (json_is_array(v)) {
        int rc = jget_i64_arr(jc, obj, key, false, 0, INT32_MAX, ids, ARRAY_LEN(ids), &n);
        if (rc == SEER_OK && n > 0)
            *out = ids[0];
        return rc;
    }
    return jget_i64(jc, obj, key, 0, INT32_MAX, NULL, out);
}

static int j_rope(const struct jget_ctx *tc, const json_t *text, struct qwen35_config *c)
{
    /* Newer configs nest these in rope_parameters, older ones keep rope_theta/partial_rotary_factor
       at the top of text_config and mrope_section in rope_scaling; read whichever is there. */
    const json_t *rp = json_object_get(text, "rope_parameters"), *rs = json_object_get(text, "rope_scaling");
    char pre_rp[64], pre_rs[64];
    snprintf(pre_rp, sizeof pre_rp, "%srope_parameters.", tc->prefix);
    snprintf(pre_rs, sizeof pre_rs, "%srope_scaling.", tc->prefix);
    struct jget_ctx cp = {tc->path, pre_rp}, cs = {tc->path, pre_rs};
    const double theta_def = 1e7, prf_def = 0.25; /* spec §1.1 */
    const bool inter_def = true;
    double theta, prf;
    int64_t sec[4] = {11, 11, 10, 0}; /* spec §3.3 */
    size_t n_sec = 0;
    int rc;
    if (!json_is_object(rp))
        rp = NULL;
    if (!json_is_object(rs))
        rs = NULL;
    if (rp && jget_has(rp, "rope_theta"))
        rc = jget_f64(&cp, rp, "rope_theta", NULL, &theta);
    else
        rc = jget_f64(tc, text, "rope_theta", &theta_def, &theta);
    if (rc != SEER_OK)
        return rc;
    if (rp && jget_has(rp, "partial_rotary_factor"))
        rc = jget_f64(&cp, rp, "partial_rotary_factor", NULL, &prf);
    else
        rc = jget_f64(tc, text, "partial_rotary_factor", &prf_def, &prf);
    if (rc != SEER_OK)
        return rc;
    int64_t s3[3];
    if (rp && jget_has(rp, "mrope_section"))
        rc = jget_i64_arr(&cp, rp, "mrope_section", true, 0, 65536, s3, 3, &n_sec);
    else if (rs && jget_has(rs, "mrope_section"))
        rc = jget_i64_arr(&cs, rs, "mrope_section", true, 0, 65536, s3, 3, &n_sec);
    if (rc != SEER_OK)
        return rc;
    if (n_sec > 0) {
        memset(sec, 0, sizeof sec);
        memcpy(sec, s3, n_sec * sizeof sec[0]);
    }
    const char *type = NULL;
    if (rp && jget_has(rp, "rope_type"))
        rc = jget_str(&cp, rp, "rope_type", false, &type);
    else if (rs && (jget_has(rs, "rope_type") || jget_has(rs, "type")))
        rc = jget_str(&cs, rs, jget_has(rs, "rope_type") ? "rope_type" : "type", false, &type);
    if (rc == SEER_OK && type) {
        char key[96];
        snprintf(key, sizeof key, "%s%s", rp ? pre_rp : pre_rs, rp || jget_has(rs, "rope_type") ? "rope_type" : "type");
        rc = rope_type_ok(tc->path, key, type);
    }
    if (rc != SEER_OK)
        return rc;
    if (rp && jget_has(rp, "mrope_interleaved"))
        rc = jget_bool(&cp, rp, "mrope_interleaved", NULL, &c->mrope_interleaved);
    else if (rs && jget_has(rs, "mrope_interleaved"))
        rc = jget_bool(&cs, rs, "mrope_interleaved", NULL, &c->mrope_interleaved);
    else
        c->mrope_interleaved = inter_def;
    if (rc != SEER_OK)
        return rc;
    c->rope_theta = (float)theta;
    double rot = (double)c->head_dim * prf;
    if (!(prf > 0 && prf <= 1) || fabs(rot - floor(rot + 0.5)) > 1e-6)
        return seer_err(SEER_EFORMAT, "%s: partial_rotary_factor %g × head_dim %lld is not a whole number of dims in "
                        "(0, head_dim]", tc->path, prf, (long long)c->head_dim);
    c->n_rot = (int)floor(rot + 0.5);
    for (int i = 0; i < 4; i++)
        c->mrope_sections[i] = (int)sec[i];
    return SEER_OK;
}

static int j_schedule(const struct jget_ctx *tc, const json_t *text, struct qwen35_config *c)
{
    const json_t *lt = json_object_get(text, "layer_types");
    const int64_t interval_def = 4; /* spec §2.2 */
    int64_t interval;
    int rc = jget_i64(tc, text, "full_attention_interval", 1, QWEN35_MAX_LAYERS, &interval_def, &interval);
    if (rc != SEER_OK)
        return rc;
    c->full_attention_interval = (int)interval;
    if (!lt || json_is_null(lt)) {
        schedule_from_interval(c);
        return SEER_OK;
    }
    if (!json_is_array(lt) || json_array_size(lt) != (size_t)c->n_layer)
        return seer_err(SEER_EFORMAT, "%s: %slayer_types must be an array of %lld entries", tc->path, tc->prefix,
                        (long long)c->n_layer);
    char shown[64];
    for (int64_t i = 0; i < c->n_layer; i++) {
        const char *s = json_string_value(json_array_get(lt, (size_t)i));
        if (s && !strcmp(s, "full_attention"))
            c->is_attn[i] = true;
        else if (s && !strcmp(s, "linear_attention"))
            c->is_attn[i] = false;
        else
            return seer_err(SEER_EUNSUPPORTED, "%s: %slayer_types[%lld] is '%s' (expected linear_attention or "
                            "full_attention)", tc->path, tc->prefix, (long long)i,
                            s ? printable(shown, sizeof shown, s) : "not a string");
    }
    return SEER_OK;
}

int qwen35_config_from_json(const json_t *root, const char *path, struct qwen35_config *cfg)
{
    struct jget_ctx rc_ = {path, ""}, tc = {path, "text_config."};
    char shown[64];
    const char *mt, *tmt;
    const json_t *text = root;
    struct qwen35_config c = {0};
    int rc;
    init_ids(&c);
    if (!json_is_object(root))
        return seer_err(SEER_EFORMAT, "%s: not a JSON object", path);
    if ((rc = jget_str(&rc_, root, "model_type", true, &mt)) != SEER_OK)
        return rc;
    if (!strcmp(mt, "qwen3_5")) {
        text = json_object_get(root, "text_config");
        if (!json_is_object(text))
            return seer_err(SEER_EFORMAT, "%s: text_config is missing or not an object", path);
        if ((rc = jget_str(&tc, text, "model_type", false, &tmt)) != SEER_OK)
            return rc;
        if (tmt && strcmp(tmt, "qwen3_5_text") != 0)
            return seer_err(SEER_EUNSUPPORTED, "%s: text_config.model_type '%s' is not qwen3_5_text", path,
                            printable(shown, sizeof shown, tmt));
    } else if (!strcmp(mt, "qwen3_5_text")) {
        const char *arch = json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
        tc.prefix = "";
        printable(c.text_only_arch, sizeof c.text_only_arch, arch ? arch : mt);
    } else {
        return seer_err(SEER_EUNSUPPORTED, "%s: model_type '%s' is not a Qwen3.5 model (expected qwen3_5 or "
                        "qwen3_5_text)", path, printable(shown, sizeof shown, mt));
    }
    /* Size-defining keys are required; the rest default to Qwen3_5TextConfig's values (spec §1.1). */
    static const int64_t hd = 256, hk = 16, dk = 128, kc = 4, zero = 0;
    static const struct jget_i64_field fields[] = {
        {"num_hidden_layers", 1, QWEN35_MAX_LAYERS, NULL, offsetof(struct qwen35_config, n_layer)},
        {"hidden_size", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, n_embd)},
        {"intermediate_size", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, n_ff)},
        {"vocab_size", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, n_vocab)},
        {"num_attention_heads", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, n_head)},
        {"num_key_value_heads", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, n_head_kv)},
        {"linear_num_value_heads", 1, QWEN35_MAX_DIM, NULL, offsetof(struct qwen35_config, ssm_n_v_heads)},
        {"head_dim", 1, QWEN35_MAX_DIM, &hd, offsetof(struct qwen35_config, head_dim)},
        {"linear_num_key_heads", 1, QWEN35_MAX_DIM, &hk, offsetof(struct qwen35_config, ssm_n_k_heads)},
        {"linear_key_head_dim", 1, QWEN35_MAX_DIM, &dk, offsetof(struct qwen35_config, ssm_d_k)},
        {"linear_value_head_dim", 1, QWEN35_MAX_DIM, &dk, offsetof(struct qwen35_config, ssm_d_v)},
        {"linear_conv_kernel_dim", 1, QWEN35_MAX_DIM, &kc, offsetof(struct qwen35_config, ssm_conv_kernel)},
        {"max_position_embeddings", 0, INT64_MAX, &zero, offsetof(struct qwen35_config, n_ctx_train)},
    };
    const double eps_def = 1e-6;
    const bool tie_def = false;
    int64_t mtp;
    double eps;
    if ((rc = jget_i64_fields(&tc, text, fields, ARRAY_LEN(fields), &c)) ||
        (rc = jget_i64(&tc, text, "mtp_num_hidden_layers", 0, MAX_MTP, &zero, &mtp)) ||
        (rc = jget_f64(&tc, text, "rms_norm_eps", &eps_def, &eps)))
        return rc;
    c.n_mtp = (int)mtp;
    c.rms_eps = (float)eps;
    if ((rc = j_rope(&tc, text, &c)) != SEER_OK || (rc = j_schedule(&tc, text, &c)) != SEER_OK)
        return rc;
    /* tie_word_embeddings sits in text_config or at the top level depending on the exporter. */
    if (jget_has(text, "tie_word_embeddings"))
        rc = jget_bool(&tc, text, "tie_word_embeddings", NULL, &c.tie_word_embeddings);
    else
        rc = jget_bool(&rc_, root, "tie_word_embeddings", &tie_def, &c.tie_word_embeddings);
    if (rc != SEER_OK)
        return rc;
    const struct { const char *key; int64_t *out; } ids[] = {
        {"bos_token_id", &c.bos_id}, {"eos_token_id", &c.eos_id}, {"pad_token_id", &c.pad_id},
    };
    for (size_t i = 0; i < ARRAY_LEN(ids); i++) {
        bool in_text = jget_has(text, ids[i].key);
        if ((rc = j_id(in_text ? &tc : &rc_, in_text ? text : root, ids[i].key, ids[i].out)) != SEER_OK)
            return rc;
    }
    if ((rc = j_id(&rc_, root, "image_token_id", &c.image_token_id)) ||
        (rc = j_id(&rc_, root, "video_token_id", &c.video_token_id)) ||
        (rc = j_id(&rc_, root, "vision_start_token_id", &c.vision_start_id)) ||
        (rc = j_id(&rc_, root, "vision_end_token_id", &c.vision_end_id)))
        return rc;
    if ((rc = validate(&c, path)) != SEER_OK)
        return rc;
    *cfg = c;
    return SEER_OK;
}

int qwen35_config_from_hf_file(const char *path, struct qwen35_config *cfg)
{
    json_t *root;
    int rc = jget_load_file(path, MAX_CONFIG_BYTES, "MAX_CONFIG_BYTES in lm/config.c", 0, &root);
    if (rc != SEER_OK)
        return rc;
    rc = qwen35_config_from_json(root, path, cfg);
    json_decref(root);
    return rc;
}

/* ---- 4. tensor tables ----------------------------------------------------------------------- */

/* Expects `name` with shape {a, b, d}[0..rank) in the file's own order. */
static void want(struct tcheck *c, const char *name, unsigned flags, int rank, int64_t a, int64_t b, int64_t d)
{
    tcheck_want(c, name, flags, rank, (const int64_t[3]){a, b, d});
}

enum { F = WEIGHTS_FLOAT_ONLY, OPT = WEIGHTS_OPTIONAL };

/* GGUF names, ne order (spec §11.3). */
static void gguf_attn_layer(struct tcheck *c, const struct qwen35_config *cf, int64_t i)
{
    int64_t H = cf->n_embd, hd = cf->head_dim;
    /* [q|gate] per head */
    want(c, tcheck_name(c, "blk.%lld.attn_q.weight", (long long)i), 0, 2, H, 2 * cf->n_head * hd, 0);
    want(c, tcheck_name(c, "blk.%lld.attn_k.weight", (long long)i), 0, 2, H, cf->n_head_kv * hd, 0);
    want(c, tcheck_name(c, "blk.%lld.attn_v.weight", (long long)i), 0, 2, H, cf->n_head_kv * hd, 0);
    want(c, tcheck_name(c, "blk.%lld.attn_output.weight", (long long)i), 0, 2, cf->n_head * hd, H, 0);
    want(c, tcheck_name(c, "blk.%lld.attn_q_norm.weight", (long long)i), F, 1, hd, 0, 0);
    want(c, tcheck_name(c, "blk.%lld.attn_k_norm.weight", (long long)i), F, 1, hd, 0, 0);
}

static void gguf_common_layer(struct tcheck *c, const struct qwen35_config *cf, int64_t i)
{
    int64_t H = cf->n_embd, I = cf->n_ff;
    want(c, tcheck_name(c, "blk.%lld.attn_norm.weight", (long long)i), F, 1, H, 0, 0);
    want(c, tcheck_name(c, "blk.%lld.post_attention_norm.weight", (long long)i), F, 1, H, 0, 0);
    want(c, tcheck_name(c, "blk.%lld.ffn_gate.weight", (long long)i), 0, 2, H, I, 0);
    want(c, tcheck_name(c, "blk.%lld.ffn_up.weight", (long long)i), 0, 2, H, I, 0);
    want(c, tcheck_name(c, "blk.%lld.ffn_down.weight", (long long)i), 0, 2, I, H, 0);
}

static void check_gguf(struct tcheck *c, const void *config)
{
    const struct qwen35_config *cf = config;
    int64_t H = cf->n_embd, V = cf->n_vocab, Hv = cf->ssm_n_v_heads, CD = qwen35_conv_dim(cf),
            VD = qwen35_value_dim(cf);
    want(c, "token_embd.weight", 0, 2, H, V, 0);
    want(c, "output_norm.weight", F, 1, H, 0, 0);
    want(c, "output.weight", cf->tie_word_embeddings ? OPT : 0, 2, H, V, 0);
    for (int64_t i = 0; i < cf->n_layer; i++) {
        gguf_common_layer(c, cf, i);
        if (cf->is_attn[i]) {
            gguf_attn_layer(c, cf, i);
            continue;
        }
        want(c, tcheck_name(c, "blk.%lld.attn_qkv.weight", (long long)i), 0, 2, H, CD, 0);
        want(c, tcheck_name(c, "blk.%lld.attn_gate.weight", (long long)i), 0, 2, H, VD, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_beta.weight", (long long)i), 0, 2, H, Hv, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_alpha.weight", (long long)i), 0, 2, H, Hv, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_conv1d.weight", (long long)i), F, 2, cf->ssm_conv_kernel, CD, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_dt.bias", (long long)i), F, 1, Hv, 0, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_a", (long long)i), F, 1, Hv, 0, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_norm.weight", (long long)i), F, 1, cf->ssm_d_v, 0, 0);
        want(c, tcheck_name(c, "blk.%lld.ssm_out.weight", (long long)i), 0, 2, VD, H, 0);
    }
    /* MTP blocks follow the decoder layers (spec §11.3): a full-attention layer plus nextn.*. */
    for (int64_t i = cf->n_layer; i < cf->n_layer + cf->n_mtp; i++) {
        gguf_common_layer(c, cf, i);
        gguf_attn_layer(c, cf, i);
        want(c, tcheck_name(c, "blk.%lld.nextn.eh_proj.weight", (long long)i), 0, 2, 2 * H, H, 0);
        want(c, tcheck_name(c, "blk.%lld.nextn.enorm.weight", (long long)i), F, 1, H, 0, 0);
        want(c, tcheck_name(c, "blk.%lld.nextn.hnorm.weight", (long long)i), F, 1, H, 0, 0);
        want(c, tcheck_name(c, "blk.%lld.nextn.embed_tokens.weight", (long long)i), OPT, 2, H, V, 0);
        want(c, tcheck_name(c, "blk.%lld.nextn.shared_head_head.weight", (long long)i), OPT, 2, H, V, 0);
        want(c, tcheck_name(c, "blk.%lld.nextn.shared_head_norm.weight", (long long)i), F | OPT, 1, H, 0, 0);
    }
}

/* HF names, PyTorch order (spec §8). `p` is the layer prefix ("model.language_model.layers.3."). */
static void hf_attn_layer(struct tcheck *c, const struct qwen35_config *cf, const char *p)
{
    int64_t H = cf->n_embd, hd = cf->head_dim;
    want(c, tcheck_name(c, "%sself_attn.q_proj.weight", p), 0, 2, 2 * cf->n_head * hd, H, 0);
    want(c, tcheck_name(c, "%sself_attn.k_proj.weight", p), 0, 2, cf->n_head_kv * hd, H, 0);
    want(c, tcheck_name(c, "%sself_attn.v_proj.weight", p), 0, 2, cf->n_head_kv * hd, H, 0);
    want(c, tcheck_name(c, "%sself_attn.o_proj.weight", p), 0, 2, H, cf->n_head * hd, 0);
    want(c, tcheck_name(c, "%sself_attn.q_norm.weight", p), F, 1, hd, 0, 0);
    want(c, tcheck_name(c, "%sself_attn.k_norm.weight", p), F, 1, hd, 0, 0);
}

static void hf_common_layer(struct tcheck *c, const struct qwen35_config *cf, const char *p)
{
    int64_t H = cf->n_embd, I = cf->n_ff;
    want(c, tcheck_name(c, "%sinput_layernorm.weight", p), F, 1, H, 0, 0);
    want(c, tcheck_name(c, "%spost_attention_layernorm.weight", p), F, 1, H, 0, 0);
    want(c, tcheck_name(c, "%smlp.gate_proj.weight", p), 0, 2, I, H, 0);
    want(c, tcheck_name(c, "%smlp.up_proj.weight", p), 0, 2, I, H, 0);
    want(c, tcheck_name(c, "%smlp.down_proj.weight", p), 0, 2, H, I, 0);
}

static void check_hf(struct tcheck *c, const void *config)
{
    const struct qwen35_config *cf = config;
    int64_t H = cf->n_embd, V = cf->n_vocab, Hv = cf->ssm_n_v_heads, CD = qwen35_conv_dim(cf),
            VD = qwen35_value_dim(cf);
    /* Composite checkpoints use model.language_model.*, text-only ones model.* (spec §8, S11). */
    const char *pre = weights_find(c->w, "model.embed_tokens.weight") >= 0 &&
                              weights_find(c->w, "model.language_model.embed_tokens.weight") < 0
                          ? "model."
                          : "model.language_model.";
    char p[96];
    want(c, tcheck_name(c, "%sembed_tokens.weight", pre), 0, 2, V, H, 0);
    want(c, tcheck_name(c, "%snorm.weight", pre), F, 1, H, 0, 0);
    want(c, "lm_head.weight", cf->tie_word_embeddings ? OPT : 0, 2, V, H, 0);
    for (int64_t i = 0; i < cf->n_layer; i++) {
        snprintf(p, sizeof p, "%slayers.%lld.", pre, (long long)i);
        hf_common_layer(c, cf, p);
        if (cf->is_attn[i]) {
            hf_attn_layer(c, cf, p);
            continue;
        }
        want(c, tcheck_name(c, "%slinear_attn.in_proj_qkv.weight", p), 0, 2, CD, H, 0);
        want(c, tcheck_name(c, "%slinear_attn.in_proj_z.weight", p), 0, 2, VD, H, 0);
        want(c, tcheck_name(c, "%slinear_attn.in_proj_b.weight", p), 0, 2, Hv, H, 0);
        want(c, tcheck_name(c, "%slinear_attn.in_proj_a.weight", p), 0, 2, Hv, H, 0);
        want(c, tcheck_name(c, "%slinear_attn.conv1d.weight", p), F, 3, CD, 1, cf->ssm_conv_kernel);
        want(c, tcheck_name(c, "%slinear_attn.dt_bias", p), F, 1, Hv, 0, 0);
        want(c, tcheck_name(c, "%slinear_attn.A_log", p), F, 1, Hv, 0, 0);
        want(c, tcheck_name(c, "%slinear_attn.norm.weight", p), F, 1, cf->ssm_d_v, 0, 0);
        want(c, tcheck_name(c, "%slinear_attn.out_proj.weight", p), 0, 2, H, VD, 0);
    }
    /* HF itself ignores mtp.* (spec §7); check it only when the checkpoint ships it. */
    if (cf->n_mtp == 0 || weights_find(c->w, "mtp.fc.weight") < 0)
        return;
    want(c, "mtp.fc.weight", 0, 2, H, 2 * H, 0);
    want(c, "mtp.pre_fc_norm_embedding.weight", F, 1, H, 0, 0);
    want(c, "mtp.pre_fc_norm_hidden.weight", F, 1, H, 0, 0);
    want(c, "mtp.norm.weight", F, 1, H, 0, 0);
    for (int j = 0; j < cf->n_mtp; j++) {
        snprintf(p, sizeof p, "mtp.layers.%d.", j);
        hf_common_layer(c, cf, p);
        hf_attn_layer(c, cf, p);
    }
}

int qwen35_check_tensors(const struct qwen35_config *cfg, const struct weights *w)
{
    return tcheck_run(w, cfg, check_gguf, check_hf);
}
