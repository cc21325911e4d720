/* Tests lm/config.c and vision/config.c: hyperparameters read from GGUF (`qwen35.*`, mmproj
   `clip.*`) and from config.json equal what the files say, for a fixed configuration and for
   random ones; every tensor of both naming schemes is checked — any one of them with a wrong
   shape, a wrong type or missing gives "FILE: tensor 'NAME' has shape [..], expected [..] for this
   architecture" (or "is missing"); missing/mistyped/inconsistent keys and unsupported variants
   give the right code and a one-line message naming the file, and leave the output untouched.
   Files are built by tests/support/tiny_model.c, whose tables are written independently. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/jget.h"
#include "core/safetensors.h"
#include "core/util.h"
#include "core/weights.h"
#include "lm/config.h"
#include "support/testutil.h"
#include "support/tiny_model.h"
#include "tap.h"
#include "vision/config.h"

static char dir[512];

static const char *tmp(const char *name);
static bool good_msg(const char *path, const char *needle);

/* transformers 5's save_pretrained writes one processor_config.json holding "image_processor" and
   "video_processor"; the released checkpoints carry preprocessor_config.json and
   video_preprocessor_config.json. Either layout is read, the released files first. */
static void hf_processor_tests(struct vit_config *v)
{
    char pdir[700], name[4200];
    snprintf(pdir, sizeof pdir, "%s", tmp("proc5"));
    mkdir(pdir, 0700);
    json_t *root = (json_t *)0x1;
    ok(jget_load_hf_processor(pdir, "preprocessor_config.json", "image_processor", 4096, "x", &root, name,
                              sizeof name) == SEER_OK && root == NULL, "a directory without processor settings: none");
    write_text(tmp("proc5/processor_config.json"),
               "{\"processor_class\": \"Qwen3VLProcessor\", \"image_processor\": {\"image_mean\": [0.25, 0.5, 0.75], "
               "\"image_std\": [0.125, 0.25, 0.375]}, \"video_processor\": {\"fps\": 3.5}}");
    v->image_mean[0] = 0;
    int rc = vit_config_load_preprocessor(v, pdir);
    ok(rc == SEER_OK && v->image_mean[0] == 0.25f && v->image_std[2] == 0.375f,
       "transformers 5's processor_config.json: image_processor's mean/std read");
    rc = jget_load_hf_processor(pdir, "video_preprocessor_config.json", "video_processor", 4096, "x", &root, name,
                                sizeof name);
    ok(rc == SEER_OK && root && json_real_value(json_object_get(root, "fps")) == 3.5 &&
       strstr(name, "processor_config.json, video_processor"), "... and its video_processor, named %s", name);
    json_decref(root);
    write_text(tmp("proc5/preprocessor_config.json"), "{\"image_mean\": [0.5, 0.5, 0.5]}");
    ok(vit_config_load_preprocessor(v, pdir) == SEER_OK && v->image_mean[0] == 0.5f,
       "the released preprocessor_config.json comes first where both exist");
    remove(tmp("proc5/preprocessor_config.json"));
    write_text(tmp("proc5/processor_config.json"), "{\"image_processor\": [1]}");
    rc = vit_config_load_preprocessor(v, pdir);
    ok(rc == SEER_EFORMAT && good_msg("processor_config.json, image_processor", "not a JSON object"),
       "an image_processor that is no object is refused, named: %s", seer_last_error());
}

static const char *tmp(const char *name)
{
    static char buf[8][640];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static bool good_msg(const char *path, const char *needle)
{
    const char *m = seer_last_error();
    return strstr(m, path) && !strchr(m, '\n') && (!needle || strstr(m, needle));
}

/* ---- comparing a parsed config with the one the files were written from ------------------------ */

#define SAME(a, b)                                                                                                  \
    do {                                                                                                            \
        if ((a) != (b)) {                                                                                           \
            diag("%s = %lld, expected %lld", #a, (long long)(a), (long long)(b));                                 \
            return false;                                                                                           \
        }                                                                                                           \
    } while (0)

static bool text_matches(const struct qwen35_config *q, const struct tm_cfg *c, bool from_gguf)
{
    SAME(q->n_layer, c->n_layer);
    SAME(q->n_embd, c->n_embd);
    SAME(q->n_ff, c->n_ff);
    SAME(q->n_vocab, c->n_vocab);
    SAME(q->n_head, c->n_head);
    SAME(q->n_head_kv, c->n_head_kv);
    SAME(q->head_dim, c->head_dim);
    SAME(q->ssm_n_k_heads, c->hk);
    SAME(q->ssm_n_v_heads, c->hv);
    SAME(q->ssm_d_k, c->dk);
    SAME(q->ssm_d_v, c->dv);
    SAME(q->ssm_conv_kernel, c->conv_k);
    SAME(q->n_rot, c->n_rot);
    for (int i = 0; i < 3; i++)
        SAME(q->mrope_sections[i], c->sections[i]);
    SAME(q->mrope_sections[3], 0);
    SAME(q->mrope_interleaved, true);
    SAME(q->n_mtp, c->n_mtp);
    SAME(q->tie_word_embeddings, c->tie);
    SAME(q->eos_id, c->eos);
    SAME(q->n_ctx_train, 4096);
    SAME(q->full_attention_interval, c->interval);
    for (int i = 0; i < c->n_layer; i++)
        SAME(q->is_attn[i], (i + 1) % c->interval == 0);
    SAME(q->rms_eps, 1e-6f);
    SAME(q->rope_theta, 1e7f);
    if (!from_gguf) {
        SAME(q->image_token_id, c->n_vocab - 3);
        SAME(q->video_token_id, c->n_vocab - 2);
    }
    return true;
}

static bool vision_matches(const struct vit_config *v, const struct tm_cfg *c, bool from_gguf)
{
    SAME(v->depth, c->v_depth);
    SAME(v->n_embd, c->v_embd);
    SAME(v->n_head, c->v_head);
    SAME(v->n_ff, c->v_ff);
    SAME(v->out_dim, c->n_embd);
    SAME(v->patch_size, c->v_patch);
    SAME(v->merge_size, c->v_merge);
    SAME(v->n_pos, c->v_npos);
    SAME(v->temporal_patch_size, 2);
    SAME(v->eps, 1e-6f);
    SAME(v->image_mean[1], from_gguf ? 0.4578275f : 0.5f);
    SAME(v->image_std[2], from_gguf ? 0.27577711f : 0.5f);
    return true;
}

/* ---- writing the test checkpoints -------------------------------------------------------------- */

static void write_text_gguf(const struct tm_cfg *c, const struct tm_list *l, const char *path)
{
    struct gw_file *f = gw_new();
    tm_text_meta(c, f);
    tm_gguf_add(f, l, GGML_F32);
    gw_write(f, path);
    gw_free(f);
}

static void write_mmproj(const struct tm_cfg *c, const struct tm_list *l, const char *path)
{
    struct gw_file *f = gw_new();
    tm_vision_meta(c, f);
    tm_gguf_add(f, l, GGML_F16);
    gw_write(f, path);
    gw_free(f);
}

/* GGUF text file: config then tensor check; returns the first failing code. */
static int check_gguf_text(const char *path, struct qwen35_config *q)
{
    gguf *g;
    int rc = gguf_open(path, &g);
    if (rc != SEER_OK)
        return rc;
    struct weights w = weights_from_gguf(g);
    if ((rc = qwen35_config_from_gguf(g, q)) == SEER_OK)
        rc = qwen35_check_tensors(q, &w);
    gguf_free(g);
    return rc;
}

static int check_mmproj(const char *path, struct vit_config *v)
{
    gguf *g;
    int rc = gguf_open(path, &g);
    if (rc != SEER_OK)
        return rc;
    struct weights w = weights_from_gguf(g);
    if ((rc = vit_config_from_gguf(g, v)) == SEER_OK)
        rc = vit_check_tensors(v, &w);
    gguf_free(g);
    return rc;
}

/* HF directory sub: config.json from `j` + model.safetensors from `l`; checks text and vision. */
static int check_hf(const char *sub, const json_t *j, const struct tm_list *l, struct qwen35_config *q,
                    struct vit_config *v)
{
    char d[700], cfg[760], st_path[760];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    mkdir(d, 0755);
    snprintf(cfg, sizeof cfg, "%s/config.json", d);
    snprintf(st_path, sizeof st_path, "%s/model.safetensors", d);
    tm_write_json(cfg, j);
    tm_write_safetensors(st_path, l);
    safetensors *st;
    int rc = qwen35_config_from_json(j, cfg, q);
    if (rc == SEER_OK && v)
        rc = vit_config_from_json(j, cfg, v);
    if (rc != SEER_OK)
        return rc;
    if ((rc = safetensors_open_dir(d, &st)) != SEER_OK)
        return rc;
    struct weights w = weights_from_safetensors(st);
    rc = qwen35_check_tensors(q, &w);
    if (rc == SEER_OK && v)
        rc = vit_check_tensors(v, &w);
    safetensors_free(st);
    return rc;
}

/* ---- valid checkpoints ------------------------------------------------------------------------- */

static void test_valid(const struct tm_cfg *c, const char *label)
{
    struct tm_list gt = {0}, gv = {0}, hf = {0};
    struct qwen35_config q;
    struct vit_config v;
    tm_text_tensors(c, true, &gt);
    tm_vision_tensors(c, true, &gv);
    tm_text_tensors(c, false, &hf);
    tm_vision_tensors(c, false, &hf);
    write_text_gguf(c, &gt, tmp("text.gguf"));
    int rc = check_gguf_text(tmp("text.gguf"), &q);
    ok(rc == SEER_OK && text_matches(&q, c, true), "%s: GGUF text config and tensors (%d layers, %d attention): %s",
       label, c->n_layer, c->n_layer / c->interval, rc ? seer_last_error() : "ok");
    write_mmproj(c, &gv, tmp("mmproj.gguf"));
    rc = check_mmproj(tmp("mmproj.gguf"), &v);
    ok(rc == SEER_OK && vision_matches(&v, c, true), "%s: mmproj config and tensors: %s", label,
       rc ? seer_last_error() : "ok");
    json_t *j = tm_config_json(c, true);
    rc = check_hf("hf", j, &hf, &q, &v);
    ok(rc == SEER_OK && text_matches(&q, c, false) && vision_matches(&v, c, false),
       "%s: HF config.json and safetensors (text + vision): %s", label, rc ? seer_last_error() : "ok");
    json_decref(j);
    tm_list_free(&gt);
    tm_list_free(&gv);
    tm_list_free(&hf);
}

/* ---- every tensor wrong, one at a time --------------------------------------------------------- */

enum { TEXT_GGUF, VISION_GGUF, TEXT_HF, VISION_HF };

static int check_kind(int kind, const struct tm_cfg *c, const struct tm_list *l)
{
    struct qwen35_config q;
    struct vit_config v;
    if (kind == TEXT_GGUF) {
        write_text_gguf(c, l, tmp("mut.gguf"));
        return check_gguf_text(tmp("mut.gguf"), &q);
    }
    if (kind == VISION_GGUF) {
        write_mmproj(c, l, tmp("mut.gguf"));
        return check_mmproj(tmp("mut.gguf"), &v);
    }
    /* HF vision tensors live beside the text ones in the same checkpoint */
    struct tm_list all = {0};
    if (kind == VISION_HF)
        tm_text_tensors(c, false, &all);
    json_t *j = tm_config_json(c, kind == VISION_HF);
    int rc;
    if (kind == VISION_HF) {
        struct tm_list merged = {0};
        merged.cap = all.n + l->n;
        merged.t = malloc((size_t)merged.cap * sizeof *merged.t);
        memcpy(merged.t, all.t, (size_t)all.n * sizeof *all.t);
        memcpy(merged.t + all.n, l->t, (size_t)l->n * sizeof *l->t);
        merged.n = merged.cap;
        rc = check_hf("mut", j, &merged, &q, &v);
        free(merged.t);
    } else {
        rc = check_hf("mut", j, l, &q, NULL);
    }
    tm_list_free(&all);
    json_decref(j);
    return rc;
}

/* Tensors whose absence is allowed (spec §7: HF ignores MTP unless mtp.fc is there; spec §11.3:
   nextn.shared_head_norm is optional). */
static bool optional_tensor(const char *name)
{
    /* output.weight: a GGUF without it simply has a tied head (spec §11.3) */
    return !strcmp(name, "mtp.fc.weight") || !strcmp(name, "output.weight") ||
           strstr(name, "nextn.shared_head_norm") != NULL;
}

static void test_every_tensor(int kind, const char *label)
{
    struct tm_cfg c;
    struct tm_list l = {0};
    tm_default(&c);
    c.tie = false; /* output.weight / lm_head.weight are then required too */
    if (kind == TEXT_GGUF || kind == TEXT_HF)
        tm_text_tensors(&c, kind == TEXT_GGUF, &l);
    else
        tm_vision_tensors(&c, kind == VISION_GGUF, &l);
    const char *file = kind == TEXT_GGUF || kind == VISION_GGUF ? tmp("mut.gguf") : "mut/model.safetensors";
    int n = l.n, wrong_ok = 0, missing_ok = 0;
    for (int i = 0; i < n; i++) {
        struct tm_tensor saved = l.t[i];
        char want[240];
        /* a wrong shape: its first dimension one larger */
        l.t[i].shape[0]++;
        int rc = check_kind(kind, &c, &l);
        snprintf(want, sizeof want, "tensor '%s' has shape [", saved.name);
        if (rc == SEER_EFORMAT && good_msg(file, want) && strstr(seer_last_error(), "for this architecture"))
            wrong_ok++;
        else
            diag("%s: wrong shape of %s not reported as expected: %s", label, saved.name, seer_last_error());
        l.t[i] = saved;
        /* missing */
        struct tm_list m = {0};
        m.t = malloc((size_t)n * sizeof *m.t);
        for (int k = 0; k < n; k++)
            if (k != i)
                m.t[m.n++] = l.t[k];
        m.cap = n;
        rc = check_kind(kind, &c, &m);
        snprintf(want, sizeof want, "tensor '%s' is missing", saved.name);
        if (optional_tensor(saved.name) ? rc == SEER_OK : rc == SEER_EFORMAT && strstr(seer_last_error(), want))
            missing_ok++;
        else
            diag("%s: removing %s: rc %d: %s", label, saved.name, rc, seer_last_error());
        free(m.t);
    }
    ok(wrong_ok == n, "%s: each of the %d tensors with a wrong shape is named with its shapes", label, n);
    ok(missing_ok == n, "%s: each of the %d tensors, when missing, is named (optional ones allowed)", label, n);
    tm_list_free(&l);
}

/* ---- metadata errors --------------------------------------------------------------------------- */

typedef void (*gguf_edit)(struct gw_file *f);

static int text_gguf_with(gguf_edit edit, struct qwen35_config *q)
{
    struct tm_cfg c;
    struct tm_list l = {0};
    tm_default(&c);
    tm_text_tensors(&c, true, &l);
    struct gw_file *f = gw_new();
    tm_text_meta(&c, f);
    tm_gguf_add(f, &l, GGML_F32);
    edit(f);
    gw_write(f, tmp("meta.gguf"));
    gw_free(f);
    tm_list_free(&l);
    return check_gguf_text(tmp("meta.gguf"), q);
}

static void e_arch(struct gw_file *f)
{
    gw_remove_kv(f, "general.architecture");
    gw_add_str(f, "general.architecture", "llama");
}
static void e_inner(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.ssm.inner_size");
    gw_add_u32(f, "qwen35.ssm.inner_size", 33);
}
static void e_heads(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.attention.head_count");
    gw_add_u32(f, "qwen35.attention.head_count", 3);
}
static void e_rot(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.rope.dimension_count");
    gw_add_u32(f, "qwen35.rope.dimension_count", 18);
}
static void e_vlen(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.attention.value_length");
    gw_add_u32(f, "qwen35.attention.value_length", 8);
}
static void e_str(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.block_count");
    gw_add_str(f, "qwen35.block_count", "6");
}
static void e_rec_len(struct gw_file *f)
{
    uint8_t rec[3] = {1, 1, 1};
    gw_add_arr(f, "qwen35.attention.recurrent_layers", GGUF_TYPE_BOOL, 3, rec);
}
static void e_rec(struct gw_file *f) /* layers 0 and 3 full attention; MTP entry listed, non-recurrent */
{
    uint8_t rec[6] = {0, 1, 1, 0, 1, 0};
    gw_add_arr(f, "qwen35.attention.recurrent_layers", GGUF_TYPE_BOOL, 6, rec);
}
static void e_eps_type(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.attention.layer_norm_rms_epsilon");
    gw_add_u32(f, "qwen35.attention.layer_norm_rms_epsilon", 1);
}
static void e_quant_norm(struct gw_file *f) /* a norm vector quantised: not allowed */
{
    gw_remove_tensor(f, "blk.0.attn_norm.weight");
    gw_add_tensor(f, "blk.0.attn_norm.weight", GGML_Q8_0, 1, (uint64_t[]){32}, NULL);
}
static void e_ssm_huge(struct gw_file *f) /* issue 12: state_size × time_step_rank overflowed int64 */
{
    gw_remove_kv(f, "qwen35.ssm.state_size");
    gw_remove_kv(f, "qwen35.ssm.time_step_rank");
    gw_add_u32(f, "qwen35.ssm.state_size", UINT32_MAX);
    gw_add_u32(f, "qwen35.ssm.time_step_rank", UINT32_MAX);
}
static void e_blocks0(struct gw_file *f)
{
    gw_remove_kv(f, "qwen35.block_count");
    gw_add_u32(f, "qwen35.block_count", 0);
}
static void e_nextn(struct gw_file *f) { gw_remove_kv(f, "qwen35.nextn_predict_layers"); }
static void e_output(struct gw_file *f) { gw_add_tensor(f, "output.weight", GGML_F32, 2, (uint64_t[]){32, 67}, NULL); }

static void test_gguf_meta(void)
{
    static const char *const required[] = {
        "general.architecture", "qwen35.block_count", "qwen35.embedding_length", "qwen35.feed_forward_length",
        "qwen35.attention.head_count", "qwen35.attention.head_count_kv", "qwen35.attention.key_length",
        "qwen35.attention.value_length", "qwen35.attention.layer_norm_rms_epsilon", "qwen35.rope.dimension_count",
        "qwen35.rope.dimension_sections", "qwen35.rope.freq_base", "qwen35.ssm.conv_kernel", "qwen35.ssm.state_size",
        "qwen35.ssm.group_count", "qwen35.ssm.time_step_rank", "qwen35.ssm.inner_size",
    };
    struct tm_cfg c;
    struct tm_list l = {0};
    tm_default(&c);
    tm_text_tensors(&c, true, &l);
    int good = 0;
    for (size_t i = 0; i < ARRAY_LEN(required); i++) {
        struct gw_file *f = gw_new();
        tm_text_meta(&c, f);
        tm_gguf_add(f, &l, GGML_F32);
        gw_remove_kv(f, required[i]);
        gw_write(f, tmp("meta.gguf"));
        gw_free(f);
        struct qwen35_config q, before;
        memset(&q, 0x5a, sizeof q);
        before = q;
        char want[160];
        snprintf(want, sizeof want, "'%s' is missing", required[i]);
        int rc = check_gguf_text(tmp("meta.gguf"), &q);
        if (rc == SEER_EFORMAT && good_msg(tmp("meta.gguf"), want) && !memcmp(&q, &before, sizeof q))
            good++;
        else
            diag("without %s: rc %d: %s", required[i], rc, seer_last_error());
    }
    ok(good == (int)ARRAY_LEN(required), "each of the %zu required keys, when missing, is named; config untouched",
       ARRAY_LEN(required));
    tm_list_free(&l);

    struct qwen35_config q;
    const char *p = tmp("meta.gguf");
    int rc = text_gguf_with(e_arch, &q);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "architecture 'llama'"), "architecture llama: %s", seer_last_error());
    rc = text_gguf_with(e_inner, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "inner_size = 33"), "inconsistent ssm.inner_size: %s", seer_last_error());
    rc = text_gguf_with(e_heads, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "not a multiple of 2 key/value heads"), "3 heads over 2 kv heads: %s",
       seer_last_error());
    rc = text_gguf_with(e_rot, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "rotary dims 18"), "rope dims > head_dim: %s", seer_last_error());
    rc = text_gguf_with(e_vlen, &q);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "value_length"), "key_length != value_length: %s", seer_last_error());
    rc = text_gguf_with(e_str, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "has type string, expected an integer"), "block_count as a string: %s",
       seer_last_error());
    rc = text_gguf_with(e_eps_type, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "expected f32 or f64"), "eps stored as u32: %s", seer_last_error());
    rc = text_gguf_with(e_rec_len, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "recurrent_layers has 3 entries"), "recurrent_layers too short: %s",
       seer_last_error());
    rc = text_gguf_with(e_rec, &q);
    ok(rc != SEER_OK && q.is_attn[0] && !q.is_attn[1] && q.is_attn[3] && q.full_attention_interval == 4 &&
           good_msg(p, "blk.0.attn_q.weight"),
       "recurrent_layers overrides the interval (layer 0 becomes attention): %s", seer_last_error());
    rc = text_gguf_with(e_quant_norm, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "'blk.0.attn_norm.weight' has type q8_0"), "quantised norm refused: %s",
       seer_last_error());
    rc = text_gguf_with(e_nextn, &q);
    ok(rc == SEER_EFORMAT && q.n_layer == 6 && q.n_mtp == 0, "without nextn_predict_layers the MTP block is a 6th "
       "layer and fails the check: %s", seer_last_error());
    rc = text_gguf_with(e_output, &q);
    ok(rc == SEER_OK && !q.tie_word_embeddings, "an output.weight makes the head untied");
    rc = text_gguf_with(e_ssm_huge, &q); /* UB before the fix: the sanitizer run catches a regression */
    ok(rc == SEER_EFORMAT && good_msg(p, "qwen35.ssm.state_size = 4294967295 is out of range") &&
           !strstr(seer_last_error(), "inner_size"),
       "ssm.state_size = time_step_rank = 2^32-1: range error before any product (%s)", seer_last_error());
    rc = text_gguf_with(e_blocks0, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "qwen35.block_count = 0 (a model needs at least one layer)"),
       "block_count 0: %s", seer_last_error());
}

/* ---- limits of the JSON files (issue 12) ---------------------------------------------------------- */

static void test_json_limits(void)
{
    const char *p = tmp("big-config.json");
    struct qwen35_config q;
    /* 16 MiB + 1 of valid JSON (spaces): refused from its size, naming the constant that sets it. */
    size_t n = ((size_t)16 << 20) + 1;
    char *text = malloc(n + 1);
    memset(text, ' ', n);
    text[0] = '{', text[n - 1] = '}', text[n] = 0;
    write_text(p, text);
    free(text);
    int rc = qwen35_config_from_hf_file(p, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "16777217 bytes is more than the 16777216 allowed") &&
           good_msg(p, "MAX_CONFIG_BYTES"),
       "a 16 MiB + 1 config.json: %s", seer_last_error());
    /* 3,000 nested arrays: jansson stops at its depth limit (2048), without recursing further. */
    const int depth = 3000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = 0;
    p = tmp("deep-config.json");
    write_text(p, deep);
    free(deep);
    rc = qwen35_config_from_hf_file(p, &q);
    ok(rc == SEER_EFORMAT && good_msg(p, "nested deeper than 2048 levels"), "JSON nested 3,000 deep: %s",
       seer_last_error());
}

/* ---- config.json errors ------------------------------------------------------------------------ */

static int hf_with(void (*edit)(json_t *root), struct qwen35_config *q, struct vit_config *v)
{
    struct tm_cfg c;
    tm_default(&c);
    json_t *j = tm_config_json(&c, true);
    edit(j);
    int rc = qwen35_config_from_json(j, "cfg/config.json", q);
    if (rc == SEER_OK && v)
        rc = vit_config_from_json(j, "cfg/config.json", v);
    json_decref(j);
    return rc;
}

static json_t *text_of(json_t *r) { return json_object_get(r, "text_config"); }
static json_t *vis_of(json_t *r) { return json_object_get(r, "vision_config"); }
static void j_model_type(json_t *r) { json_object_set_new(r, "model_type", json_string("llama")); }
static void j_no_text(json_t *r) { json_object_del(r, "text_config"); }
static void j_no_hidden(json_t *r) { json_object_del(text_of(r), "hidden_size"); }
static void j_hidden_str(json_t *r) { json_object_set_new(text_of(r), "hidden_size", json_string("32")); }
static void j_heads0(json_t *r) { json_object_set_new(text_of(r), "num_attention_heads", json_integer(0)); }
static void j_types_len(json_t *r) { json_array_remove(json_object_get(text_of(r), "layer_types"), 0); }
static void j_types_bad(json_t *r)
{
    json_array_set_new(json_object_get(text_of(r), "layer_types"), 1, json_string("sliding_attention"));
}
static void j_prf(json_t *r)
{
    json_object_set_new(json_object_get(text_of(r), "rope_parameters"), "partial_rotary_factor", json_real(0.3));
}
static void j_legacy_rope(json_t *r) /* older layout: rope_theta at the text level, mrope in rope_scaling */
{
    json_t *t = text_of(r);
    json_object_del(t, "rope_parameters");
    json_object_set_new(t, "rope_theta", json_real(5e6));
    json_object_set_new(t, "partial_rotary_factor", json_real(0.5));
    json_object_set_new(t, "rope_scaling", json_pack("{s:[i,i,i], s:b}", "mrope_section", 2, 2, 0,
                                                     "mrope_interleaved", 0));
    json_object_set_new(t, "eos_token_id", json_pack("[i,i]", 61, 60));
}
static void j_text_only(json_t *r) /* a qwen3_5_text config at the top level */
{
    json_t *t = json_incref(text_of(r));
    json_object_clear(r);
    json_object_update(r, t);
    json_object_set_new(r, "tie_word_embeddings", json_false());
    json_decref(t);
}
static void j_deepstack(json_t *r) { json_object_set_new(vis_of(r), "deepstack_visual_indexes", json_pack("[i]", 1)); }
static void j_act(json_t *r) { json_object_set_new(vis_of(r), "hidden_act", json_string("gelu")); }
static void j_vheads(json_t *r) { json_object_set_new(vis_of(r), "num_heads", json_integer(3)); }
static void j_tps(json_t *r) { json_object_set_new(vis_of(r), "temporal_patch_size", json_integer(3)); }
static void j_no_vision(json_t *r) { json_object_del(r, "vision_config"); }
static void j_npos(json_t *r) { json_object_set_new(vis_of(r), "num_position_embeddings", json_integer(15)); }

/* jget's messages through both readers: a key of each field table, an array element, each scalar
   kind, and a table default. */
static json_t *rope_of(json_t *r) { return json_object_get(text_of(r), "rope_parameters"); }
static void j_no_vdepth(json_t *r) { json_object_del(vis_of(r), "depth"); }
static void j_vhidden0(json_t *r) { json_object_set_new(vis_of(r), "hidden_size", json_integer(0)); }
static void j_sec_str(json_t *r) { json_object_set_new(rope_of(r), "mrope_section", json_pack("[i,s,i]", 2, "a", 0)); }
static void j_sec_neg(json_t *r) { json_object_set_new(rope_of(r), "mrope_section", json_pack("[i,i,i]", 2, -1, 0)); }
static void j_inter_str(json_t *r) { json_object_set_new(rope_of(r), "mrope_interleaved", json_string("yes")); }
static void j_eps_str(json_t *r) { json_object_set_new(text_of(r), "rms_norm_eps", json_string("1e-6")); }
static void j_no_ctx(json_t *r) { json_object_del(text_of(r), "max_position_embeddings"); }

static void j_yarn(json_t *r)
{
    json_object_set_new(rope_of(r), "rope_type", json_string("yarn"));
    json_object_set_new(rope_of(r), "factor", json_real(4.0));
}
static void j_legacy_linear(json_t *r) /* the older layout's rope_scaling {"type": "linear"} */
{
    json_t *t = text_of(r);
    json_object_del(t, "rope_parameters");
    json_object_set_new(t, "rope_scaling", json_pack("{s:s, s:f}", "type", "linear", "factor", 2.0));
}
static void j_legacy_mrope(json_t *r) /* Qwen2-VL's older name for the default: accepted */
{
    json_t *t = text_of(r);
    json_object_del(t, "rope_parameters");
    json_object_set_new(t, "rope_scaling", json_pack("{s:s, s:[i,i,i]}", "type", "mrope", "mrope_section", 2, 2, 0));
}
static void e_yarn(struct gw_file *f) { gw_add_str(f, "qwen35.rope.scaling.type", "yarn"); }
static void e_rope_none(struct gw_file *f) { gw_add_str(f, "qwen35.rope.scaling.type", "none"); }

/* issue 21: a rotary scaling seer does not implement is refused by name, never run without it */
static void test_rope_type(void)
{
    struct qwen35_config q;
    struct vit_config v;
    int rc = hf_with(j_yarn, &q, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg("cfg/config.json", "text_config.rope_parameters.rope_type 'yarn' is not supported"),
       "rope_parameters.rope_type yarn refused: %s", seer_last_error());
    rc = hf_with(j_legacy_linear, &q, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg("cfg/config.json", "text_config.rope_scaling.type 'linear' is not supported"),
       "rope_scaling.type linear refused: %s", seer_last_error());
    rc = hf_with(j_legacy_mrope, &q, &v);
    ok(rc == SEER_OK, "rope_scaling.type mrope (the default's older name) accepted: %s", rc ? seer_last_error() : "ok");
    rc = text_gguf_with(e_yarn, &q);
    ok(rc == SEER_EUNSUPPORTED && good_msg(tmp("meta.gguf"), "qwen35.rope.scaling.type 'yarn' is not supported"),
       "GGUF rope.scaling.type yarn refused: %s", seer_last_error());
    rc = text_gguf_with(e_rope_none, &q);
    ok(rc == SEER_OK, "GGUF rope.scaling.type none accepted: %s", rc ? seer_last_error() : "ok");
}

static void test_jget_messages(void)
{
    static const struct { void (*edit)(json_t *); const char *msg; } cases[] = {
        {j_no_vdepth, "vision_config.depth is missing"},
        {j_vhidden0, "vision_config.hidden_size = 0 is out of range [1, 1048576]"},
        {j_sec_str, "text_config.rope_parameters.mrope_section[1] must be an integer"},
        {j_sec_neg, "text_config.rope_parameters.mrope_section[1] = -1 is out of range [0, 65536]"},
        {j_inter_str, "text_config.rope_parameters.mrope_interleaved must be true or false"},
        {j_eps_str, "text_config.rms_norm_eps must be a finite number"},
    };
    struct qwen35_config q;
    struct vit_config v;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int rc = hf_with(cases[i].edit, &q, &v);
        ok(rc == SEER_EFORMAT && good_msg("cfg/config.json", cases[i].msg), "'%s': %s", cases[i].msg,
           seer_last_error());
    }
    q.n_ctx_train = -1;
    int rc = hf_with(j_no_ctx, &q, &v);
    ok(rc == SEER_OK && q.n_ctx_train == 0, "absent max_position_embeddings takes the table's default 0");
}

static void test_hf_meta(void)
{
    struct qwen35_config q;
    struct vit_config v;
    const char *p = "cfg/config.json";
    int rc = hf_with(j_model_type, &q, NULL);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "model_type 'llama'"), "model_type llama: %s", seer_last_error());
    rc = hf_with(j_no_text, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "text_config is missing"), "no text_config: %s", seer_last_error());
    rc = hf_with(j_no_hidden, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "text_config.hidden_size is missing"), "no hidden_size: %s",
       seer_last_error());
    rc = hf_with(j_hidden_str, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "text_config.hidden_size must be an integer"), "hidden_size string: %s",
       seer_last_error());
    rc = hf_with(j_heads0, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "num_attention_heads = 0 is out of range"), "0 heads: %s",
       seer_last_error());
    rc = hf_with(j_types_len, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "layer_types must be an array of 5"), "layer_types too short: %s",
       seer_last_error());
    rc = hf_with(j_types_bad, &q, NULL);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "sliding_attention"), "unknown layer type: %s", seer_last_error());
    rc = hf_with(j_prf, &q, NULL);
    ok(rc == SEER_EFORMAT && good_msg(p, "partial_rotary_factor"), "0.3 x 16 is not whole: %s", seer_last_error());
    rc = hf_with(j_legacy_rope, &q, NULL);
    ok(rc == SEER_OK && q.rope_theta == 5e6f && q.n_rot == 8 && q.mrope_sections[0] == 2 &&
           q.mrope_sections[2] == 0 && !q.mrope_interleaved && q.eos_id == 61,
       "legacy rope_theta / rope_scaling layout and an eos list are read");
    rc = hf_with(j_text_only, &q, NULL);
    ok(rc == SEER_OK && q.n_layer == 5 && !q.tie_word_embeddings, "top-level qwen3_5_text config");
    rc = hf_with(j_deepstack, &q, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "deepstack"), "DeepStack layers refused: %s", seer_last_error());
    rc = hf_with(j_act, &q, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "hidden_act 'gelu'"), "vision act gelu refused: %s", seer_last_error());
    rc = hf_with(j_vheads, &q, &v);
    ok(rc == SEER_EFORMAT && good_msg(p, "head dim"), "16 over 3 heads: %s", seer_last_error());
    rc = hf_with(j_tps, &q, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "temporal patch size 3"), "temporal patch 3: %s", seer_last_error());
    rc = hf_with(j_npos, &q, &v);
    ok(rc == SEER_EFORMAT && good_msg(p, "square grid"), "15 positions: %s", seer_last_error());
    rc = hf_with(j_no_vision, &q, &v);
    ok(rc == SEER_EFORMAT && good_msg(p, "vision_config is missing"), "no vision_config: %s", seer_last_error());

    /* text-only checkpoint: model.* names (spec §8, S11) */
    struct tm_cfg c;
    struct tm_list l = {0};
    tm_default(&c);
    c.n_mtp = 0;
    tm_text_tensors(&c, false, &l);
    for (int i = 0; i < l.n; i++)
        if (!strncmp(l.t[i].name, "model.language_model.", 21))
            memmove(l.t[i].name + 6, l.t[i].name + 21, strlen(l.t[i].name + 21) + 1);
    json_t *j = tm_config_json(&c, false);
    j_text_only(j);
    json_object_set_new(j, "tie_word_embeddings", json_true());
    rc = check_hf("textonly", j, &l, &q, NULL);
    ok(rc == SEER_OK, "text-only checkpoint with model.* names: %s", rc ? seer_last_error() : "ok");
    json_decref(j);
    tm_list_free(&l);

    /* preprocessor_config.json overrides mean/std */
    tm_default(&c);
    j = tm_config_json(&c, true);
    ok(vit_config_from_json(j, "x", &v) == SEER_OK, "vision config parses");
    json_decref(j);
    write_text(tmp("pre.json"), "{\"image_mean\": [0.1, 0.2, 0.3], \"image_std\": [0.4, 0.5, 0.6]}");
    rc = vit_config_read_preprocessor(&v, tmp("pre.json"));
    ok(rc == SEER_OK && v.image_mean[2] == 0.3f && v.image_std[0] == 0.4f, "preprocessor mean/std read");
    write_text(tmp("pre.json"), "{\"image_mean\": [0.1, 0.2], \"image_std\": [0.4, 0.5, 0.6]}");
    rc = vit_config_read_preprocessor(&v, tmp("pre.json"));
    ok(rc == SEER_EFORMAT && good_msg(tmp("pre.json"), "3 entries"), "2-entry image_mean refused");
    hf_processor_tests(&v);
    ok(qwen35_config_from_hf_file(tmp("absent.json"), &q) == SEER_EIO && good_msg(tmp("absent.json"), "cannot open"),
       "missing config.json is EIO naming it");
    j = tm_config_json(&c, true);
    tm_write_json(tmp("config.json"), j);
    json_decref(j);
    ok(qwen35_config_from_hf_file(tmp("config.json"), &q) == SEER_OK && text_matches(&q, &c, false),
       "config.json read from disk");
    int io_bad = 0;
    for (long k = 1; k <= 3; k++) { /* open, fstat, read */
        io_fail_after(k);
        rc = qwen35_config_from_hf_file(tmp("config.json"), &q);
        io_fail_after(0);
        io_bad += rc != SEER_EIO || !good_msg(tmp("config.json"), "Input/output error");
    }
    ok(io_bad == 0, "failing open, fstat or read of config.json gives EIO naming it");
    seer_alloc_fail_after(1);
    rc = qwen35_config_from_hf_file(tmp("config.json"), &q);
    seer_alloc_fail_after(0);
    ok(rc == SEER_ENOMEM && good_msg(tmp("config.json"), "out of memory"), "allocation failure reading config.json");
    write_text(tmp("bad.json"), "{\"model_type\": ");
    ok(qwen35_config_from_hf_file(tmp("bad.json"), &q) == SEER_EFORMAT && good_msg(tmp("bad.json"), "bad JSON"),
       "bad JSON named");
}

/* ---- mmproj metadata errors -------------------------------------------------------------------- */

static int mmproj_with(void (*edit)(struct gw_file *f), struct vit_config *v)
{
    struct tm_cfg c;
    struct tm_list l = {0};
    tm_default(&c);
    tm_vision_tensors(&c, true, &l);
    struct gw_file *f = gw_new();
    tm_vision_meta(&c, f);
    tm_gguf_add(f, &l, GGML_F16);
    edit(f);
    gw_write(f, tmp("mm.gguf"));
    gw_free(f);
    tm_list_free(&l);
    return check_mmproj(tmp("mm.gguf"), v);
}

static void m_proj(struct gw_file *f)
{
    gw_remove_kv(f, "clip.projector_type");
    gw_add_str(f, "clip.projector_type", "mlp");
}
static void m_deep(struct gw_file *f)
{
    uint8_t d[2] = {0, 1};
    gw_remove_kv(f, "clip.vision.is_deepstack_layers");
    gw_add_arr(f, "clip.vision.is_deepstack_layers", GGUF_TYPE_BOOL, 2, d);
}
static void m_nopos(struct gw_file *f) { gw_remove_tensor(f, "v.position_embd.weight"); }
static void m_nodepth(struct gw_file *f) { gw_remove_kv(f, "clip.vision.block_count"); }
static void m_arch(struct gw_file *f)
{
    gw_remove_kv(f, "general.architecture");
    gw_add_str(f, "general.architecture", "qwen35");
}
static void m_vproj(struct gw_file *f) { gw_add_str(f, "clip.vision.projector_type", "qwen3vl_merger"); }

static void test_mmproj_meta(void)
{
    struct vit_config v;
    const char *p = tmp("mm.gguf");
    int rc = mmproj_with(m_proj, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "projector type 'mlp'"), "projector mlp: %s", seer_last_error());
    rc = mmproj_with(m_deep, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "DeepStack"), "deepstack layer: %s", seer_last_error());
    rc = mmproj_with(m_nopos, &v);
    ok(rc == SEER_EFORMAT && good_msg(p, "v.position_embd.weight"), "no position table: %s", seer_last_error());
    rc = mmproj_with(m_nodepth, &v);
    ok(rc == SEER_EFORMAT && good_msg(p, "'clip.vision.block_count' is missing"), "no block_count: %s",
       seer_last_error());
    rc = mmproj_with(m_arch, &v);
    ok(rc == SEER_EUNSUPPORTED && good_msg(p, "not an mmproj"), "text architecture in an mmproj: %s",
       seer_last_error());
    rc = mmproj_with(m_vproj, &v);
    ok(rc == SEER_OK, "clip.vision.projector_type is honoured");
}

int main(void)
{
    plan_no_plan();
    test_seed();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    struct tm_cfg c;
    tm_default(&c);
    test_valid(&c, "default");
    for (int i = 0; i < 6; i++) {
        char label[32];
        tm_random(&c);
        snprintf(label, sizeof label, "random %d", i);
        test_valid(&c, label);
    }
    test_every_tensor(TEXT_GGUF, "GGUF text");
    test_every_tensor(VISION_GGUF, "mmproj");
    test_every_tensor(TEXT_HF, "HF text");
    test_every_tensor(VISION_HF, "HF vision");
    test_gguf_meta();
    test_json_limits();
    test_hf_meta();
    test_jget_messages();
    test_rope_type();
    test_mmproj_meta();
    return done_testing();
}
