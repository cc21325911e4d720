/* load.c — loads a Qwen3.5 text model from a GGUF file (llama.cpp's conventions, spec §11.3–§11.4)
   or an HF directory (spec §8) into the one internal form described in lm/qwen35.h.
   Divisions: weight placement · per-tensor conversions · name schemes · qwen35_load / free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/log.h"
#include "core/quant.h"
#include "core/safetensors.h"
#include "core/util.h"
#include "core/weights.h"
#include "lm/plan.h"
#include "lm/qwen35.h"

/* ---- weight placement ------------------------------------------------------------------------ */

static int keep_buffer(qwen35_model *m, backend_buffer *b)
{
    if (!seer_grow(&m->bufs, &m->cap_bufs, m->n_bufs + 1, sizeof *m->bufs, 64)) {
        backend_buffer_free(b);
        return seer_err(SEER_ENOMEM, "no memory for the model's buffer list");
    }
    m->bufs[m->n_bufs++] = b;
    return SEER_OK;
}

/* Puts a file tensor on the backend unchanged: in place when the backend can read host memory
   (CPU: the mmapped file is the weight, nothing is copied), else copied into a new buffer. */
static int place_as_is(qwen35_model *m, const tensor *src, tensor *dst, const char *name)
{
    backend_buffer *b;
    int rc;
    *dst = *src;
    dst->buf = NULL;
    dst->offset = 0;
    snprintf(dst->name, sizeof dst->name, "%s", name);
    size_t n = tensor_nbytes(src);
    if (backend_borrows_host(m->be)) {
        if ((rc = backend_buffer_from_host(m->be, src->data, n, &b)) != SEER_OK)
            return rc;
        if ((rc = keep_buffer(m, b)) != SEER_OK)
            return rc;
        return backend_tensor_place(dst, b, 0);
    }
    if ((rc = backend_tensor_alloc(m->be, dst, &b)) != SEER_OK)
        return rc;
    if ((rc = keep_buffer(m, b)) != SEER_OK)
        return rc;
    return backend_tensor_set(dst, src->data, 0, n);
}

/* A matrix placed as is, then laid out for the backend's kernels (only matmul and get_rows read
   these). */
static int place_matrix(qwen35_model *m, const tensor *src, tensor *dst, const char *name)
{
    int rc = place_as_is(m, src, dst, name);
    return rc == SEER_OK ? backend_weight_prepare(dst) : rc;
}

enum convert { AS_F32, PLUS_ONE, NEG_EXP };

/* Puts a small float tensor on the backend as f32 {ne0 = n_elements / rows, rows}, applying a
   conversion: the zero-centred norm's +1 (spec §2.3) or ssm_a = −exp(A_log) (spec §2.5 step 4). */
static int place_f32(qwen35_model *m, const tensor *src, tensor *dst, const char *name, int64_t ne0,
                     enum convert cv)
{
    int64_t n = tensor_nelements(src);
    float *v = seer_malloc((size_t)n * sizeof *v);
    backend_buffer *b;
    int rc;
    if (!v)
        return seer_err(SEER_ENOMEM, "no memory to convert tensor '%s'", name);
    dequantize_row(src->type, src->data, v, n);
    for (int64_t i = 0; i < n; i++)
        v[i] = cv == PLUS_ONE ? v[i] + 1.0f : cv == NEG_EXP ? -expf(v[i]) : v[i];
    tensor_init4(dst, DT_F32, ne0, n / ne0, 1, 1);
    snprintf(dst->name, sizeof dst->name, "%s", name);
    rc = backend_tensor_alloc(m->be, dst, &b);
    if (rc == SEER_OK && (rc = keep_buffer(m, b)) == SEER_OK)
        rc = backend_tensor_set(dst, v, 0, (size_t)n * sizeof *v);
    free(v);
    return rc;
}

/* ---- name schemes ---------------------------------------------------------------------------- */

/* One row per internal tensor: GGUF name, HF name (after the text prefix), conversions. The
   HF names that are not under the text prefix start with '/'. */
enum slot_kind { SLOT_MATRIX, SLOT_NORM, SLOT_VEC, SLOT_A, SLOT_CONV };
struct slot {
    const char *gguf, *hf;
    enum slot_kind kind;
    size_t off;          /* offset of the tensor in struct qwen35_layer */
    char which;          /* 'a' any layer, 'g' GDN layers, 't' attention layers */
    char row;            /* f32 row length: 'H' hidden, 'h' head_dim, 'v' dv, 'V' Hv, 'K' conv kernel */
};

#define L(f) offsetof(struct qwen35_layer, f)
static const struct slot layer_slots[] = {
    {"attn_norm.weight", "input_layernorm.weight", SLOT_NORM, L(attn_norm), 'a', 'H'},
    {"post_attention_norm.weight", "post_attention_layernorm.weight", SLOT_NORM, L(post_norm), 'a', 'H'},
    {"ffn_gate.weight", "mlp.gate_proj.weight", SLOT_MATRIX, L(ffn_gate), 'a', 0},
    {"ffn_up.weight", "mlp.up_proj.weight", SLOT_MATRIX, L(ffn_up), 'a', 0},
    {"ffn_down.weight", "mlp.down_proj.weight", SLOT_MATRIX, L(ffn_down), 'a', 0},
    {"attn_qkv.weight", "linear_attn.in_proj_qkv.weight", SLOT_MATRIX, L(ssm_qkv), 'g', 0},
    {"attn_gate.weight", "linear_attn.in_proj_z.weight", SLOT_MATRIX, L(ssm_z), 'g', 0},
    {"ssm_beta.weight", "linear_attn.in_proj_b.weight", SLOT_MATRIX, L(ssm_beta), 'g', 0},
    {"ssm_alpha.weight", "linear_attn.in_proj_a.weight", SLOT_MATRIX, L(ssm_alpha), 'g', 0},
    {"ssm_conv1d.weight", "linear_attn.conv1d.weight", SLOT_CONV, L(ssm_conv), 'g', 'K'},
    {"ssm_dt.bias", "linear_attn.dt_bias", SLOT_VEC, L(ssm_dt), 'g', 'V'},
    {"ssm_a", "linear_attn.A_log", SLOT_A, L(ssm_a), 'g', 'V'},
    {"ssm_norm.weight", "linear_attn.norm.weight", SLOT_VEC, L(ssm_norm), 'g', 'v'}, /* plain scale, no +1 */
    {"ssm_out.weight", "linear_attn.out_proj.weight", SLOT_MATRIX, L(ssm_out), 'g', 0},
    {"attn_q.weight", "self_attn.q_proj.weight", SLOT_MATRIX, L(attn_q), 't', 0},
    {"attn_k.weight", "self_attn.k_proj.weight", SLOT_MATRIX, L(attn_k), 't', 0},
    {"attn_v.weight", "self_attn.v_proj.weight", SLOT_MATRIX, L(attn_v), 't', 0},
    {"attn_output.weight", "self_attn.o_proj.weight", SLOT_MATRIX, L(attn_o), 't', 0},
    {"attn_q_norm.weight", "self_attn.q_norm.weight", SLOT_NORM, L(q_norm), 't', 'h'},
    {"attn_k_norm.weight", "self_attn.k_norm.weight", SLOT_NORM, L(k_norm), 't', 'h'},
};
#undef L

struct source {
    struct weights w;
    bool hf;
    const char *prefix; /* HF text prefix */
};

static int load_slot(qwen35_model *m, const struct source *s, const char *name, enum slot_kind kind,
                     int64_t ne0, tensor *dst)
{
    int64_t i = weights_find(&s->w, name);
    if (i < 0)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' is missing", weights_path(&s->w), name);
    const tensor *src = weights_tensor(&s->w, i);
    switch (kind) {
    case SLOT_MATRIX:
        return place_matrix(m, src, dst, name);
    case SLOT_NORM: /* GGUF stores 1+w already (spec §11.4 item 2); HF stores w (spec §2.3) */
        return place_f32(m, src, dst, name, ne0, s->hf ? PLUS_ONE : AS_F32);
    case SLOT_A: /* GGUF stores −exp(A_log) (spec §11.4 item 1); HF stores A_log */
        return place_f32(m, src, dst, name, ne0, s->hf ? NEG_EXP : AS_F32);
    case SLOT_VEC:
    case SLOT_CONV: /* HF [conv_dim, 1, K] and GGUF {K, conv_dim} hold the same bytes */
        return place_f32(m, src, dst, name, ne0, AS_F32);
    }
    return SEER_EINVAL;
}

static int load_tensors(qwen35_model *m, const struct source *s)
{
    const struct qwen35_config *c = &m->cfg;
    char name[256];
    int rc;
#define NAME(...) snprintf(name, sizeof name, __VA_ARGS__)
    if (s->hf)
        NAME("%sembed_tokens.weight", s->prefix);
    else
        NAME("token_embd.weight");
    if ((rc = load_slot(m, s, name, SLOT_MATRIX, 0, &m->tok_embd)))
        return rc;
    if (s->hf)
        NAME("%snorm.weight", s->prefix);
    else
        NAME("output_norm.weight");
    if ((rc = load_slot(m, s, name, SLOT_NORM, c->n_embd, &m->output_norm)))
        return rc;
    m->output = &m->tok_embd;
    if (!c->tie_word_embeddings) {
        if ((rc = load_slot(m, s, s->hf ? "lm_head.weight" : "output.weight", SLOT_MATRIX, 0, &m->output_own)))
            return rc;
        m->output = &m->output_own;
    }
    for (int64_t il = 0; il < c->n_layer; il++) {
        struct qwen35_layer *ly = &m->layers[il];
        ly->is_attn = c->is_attn[il];
        for (size_t k = 0; k < ARRAY_LEN(layer_slots); k++) {
            const struct slot *sl = &layer_slots[k];
            if ((sl->which == 'g' && ly->is_attn) || (sl->which == 't' && !ly->is_attn))
                continue;
            if (s->hf)
                NAME("%slayers.%lld.%s", s->prefix, (long long)il, sl->hf);
            else
                NAME("blk.%lld.%s", (long long)il, sl->gguf);
            int64_t ne0 = sl->row == 'H' ? c->n_embd : sl->row == 'h' ? c->head_dim : sl->row == 'v' ? c->ssm_d_v
                          : sl->row == 'V' ? c->ssm_n_v_heads : c->ssm_conv_kernel;
            if ((rc = load_slot(m, s, name, sl->kind, ne0, (tensor *)((char *)ly + sl->off))))
                return rc;
        }
    }
#undef NAME
    return SEER_OK;
}

/* The backend's answer for every op the forward pass will ask of it (struct backend_i.supports):
   weight dtypes of the embedding lookup and of every matrix, attention's head dim, so a model the
   device cannot run is refused at load, not in the middle of a forward pass. */
static int check_backend(const qwen35_model *m, const char *path)
{
    const struct qwen35_config *c = &m->cfg;
    const tensor *w = &m->tok_embd;
    if (!backend_supports(m->be, OP_GET_ROWS, &w, 1))
        goto no;
    w = m->output;
    if (!backend_supports(m->be, OP_MATMUL, &w, 1))
        goto no;
    for (int64_t il = 0; il < c->n_layer; il++)
        for (size_t k = 0; k < ARRAY_LEN(layer_slots); k++) {
            const struct slot *sl = &layer_slots[k];
            const bool is_attn = m->layers[il].is_attn;
            if (sl->kind != SLOT_MATRIX || (sl->which == 'g' && is_attn) || (sl->which == 't' && !is_attn))
                continue;
            w = (const tensor *)((const char *)&m->layers[il] + sl->off);
            if (!backend_supports(m->be, OP_MATMUL, &w, 1))
                goto no;
        }
    tensor q, kv; /* descriptors only: one token of queries against one cached key (spec §2.6) */
    if (tensor_init4(&q, DT_F32, c->head_dim, c->n_head, 1, 1) &&
        tensor_init4(&kv, DT_F32, c->head_dim, c->n_head_kv, 1, 1) &&
        !backend_supports(m->be, OP_ATTENTION, (const tensor *[]){&q, &kv, &kv}, 3))
        return seer_err(SEER_EUNSUPPORTED, "%s: %s cannot run attention with head dim %lld", path,
                        m->be->description, (long long)c->head_dim);
    return SEER_OK;
no:
    return seer_err(SEER_EUNSUPPORTED, "%s: %s has no kernel for %s weights (tensor %s)", path, m->be->description,
                    dtype_name(w->type), w->name);
}

/* ---- qwen35_load / free ---------------------------------------------------------------------- */

/* The configuration, and the files the weights would come from: a GGUF is opened (its metadata
   holds the configuration and the tokenizer); an HF directory's safetensors only when `weights`
   (a vocab_only model reads config.json and no weight file). */
static int open_source(qwen35_model *m, const char *path, bool weights, struct source *s)
{
    char cfg_path[4096];
    int rc;
    if (io_path_kind(path) == IO_DIR) {
        safetensors *st;
        snprintf(cfg_path, sizeof cfg_path, "%s/config.json", path);
        if ((rc = qwen35_config_from_hf_file(cfg_path, &m->cfg)))
            return rc;
        if (!weights)
            return SEER_OK;
        if ((rc = safetensors_open_dir(path, &st)))
            return rc;
        m->st_file = st;
        s->w = weights_from_safetensors(st);
        s->hf = true;
        /* a composite checkpoint (Qwen3_5ForConditionalGeneration) names its text tensors
           model.language_model.*, a text-only one (Qwen3_5ForCausalLM) model.* (spec §8) */
        s->prefix = weights_find(&s->w, "model.language_model.embed_tokens.weight") >= 0 ? "model.language_model."
                                                                                        : "model.";
        return SEER_OK;
    }
    gguf *g;
    if ((rc = gguf_open(path, &g)))
        return rc;
    m->gguf_file = g;
    if ((rc = qwen35_config_from_gguf(g, &m->cfg)))
        return rc;
    s->w = weights_from_gguf(g);
    /* llama.cpp's converter tiles value heads when Hv > Hk (spec §11.4 item 6) */
    m->v_tiled = m->cfg.ssm_n_v_heads != m->cfg.ssm_n_k_heads;
    return SEER_OK;
}

int qwen35_load_config(const char *path, qwen35_model **out)
{
    qwen35_model *m = seer_calloc(1, sizeof *m);
    struct source s = {0};
    if (!m)
        return seer_err(SEER_ENOMEM, "no memory for a model");
    int rc = open_source(m, path, false, &s);
    if (rc) {
        qwen35_free(m);
        return rc;
    }
    *out = m;
    return SEER_OK;
}

int qwen35_load(const char *path, backend *be, qwen35_model **out)
{
    qwen35_model *m = seer_calloc(1, sizeof *m);
    struct source s = {0};
    int rc;
    if (!m)
        return seer_err(SEER_ENOMEM, "no memory for a model");
    m->be = be;
    if ((rc = open_source(m, path, true, &s)) || (rc = qwen35_check_tensors(&m->cfg, &s.w)))
        goto fail;
    /* Refuse before loading anything when the model cannot fit with a default-sized context. */
    struct qwen35_plan plan;
    qwen35_plan_make(&m->cfg, &s.w, be, QWEN35_PLAN_CTX, QWEN35_PLAN_UBATCH, &plan);
    if ((rc = qwen35_plan_check(&plan, path, be->description)))
        goto fail;
    m->layers = seer_calloc((size_t)m->cfg.n_layer, sizeof *m->layers);
    if (!m->layers) {
        rc = seer_err(SEER_ENOMEM, "no memory for %lld layers", (long long)m->cfg.n_layer);
        goto fail;
    }
    if ((rc = load_tensors(m, &s)) || (rc = check_backend(m, path)))
        goto fail;
    LOG_INFO("lm", "%s: %lld layers, hidden %lld, vocab %lld, %zu weight buffers on %s", path,
             (long long)m->cfg.n_layer, (long long)m->cfg.n_embd, (long long)m->cfg.n_vocab, m->n_bufs,
             be->description);
    *out = m;
    return SEER_OK;
fail:
    qwen35_free(m);
    return rc;
}

void qwen35_free(qwen35_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_bufs; i++)
        backend_buffer_free(m->bufs[i]);
    free(m->bufs);
    free(m->layers);
    gguf_free(m->gguf_file);
    safetensors_free(m->st_file);
    free(m);
}
