/* model.c — the model half of the public API (include/seer.h): loading a model onto the chosen
   device with its tokenizer (tokenizer.json or GGUF metadata, spec §6.1) and chat template
   (checked against what lm/chat.c can render, spec §6.2), and tokenize / detokenize. With
   --device auto, a model the chosen GPU cannot take is loaded on the CPU instead, with a warning. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/device.h"
#include "api/internal.h"
#include "core/cpu/cpu.h"
#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/log.h"
#include "core/util.h"
#include "lm/tok_gguf.h"
#include "vulkan/vulkan.h"

seer_model_params seer_model_params_default(void)
{
    return (seer_model_params){.device = "auto", .n_threads = 0};
}

/* The chat template text shipped with the model, or NULL (then the built-in Qwen3.5 rendering is
   used without a check). *owned is set when the text must be freed. */
static const char *template_text(const char *path, const gguf *g, char **owned)
{
    *owned = NULL;
    if (g) {
        const char *s;
        size_t len;
        if (gguf_find_key(g, "tokenizer.chat_template") >= 0 &&
            gguf_get_str(g, "tokenizer.chat_template", &s, &len) == SEER_OK && !memchr(s, 0, len) &&
            (*owned = seer_malloc(len + 1))) {
            memcpy(*owned, s, len);
            (*owned)[len] = '\0';
        }
        return *owned;
    }
    char p[4096];
    size_t n;
    snprintf(p, sizeof p, "%s/chat_template.jinja", path);
    if (io_path_kind(p) == IO_FILE && io_read_file(p, 1 << 22, owned, &n) == SEER_OK)
        return *owned;
    snprintf(p, sizeof p, "%s/tokenizer_config.json", path);
    json_t *root = json_load_file(p, 0, NULL);
    const char *t = root ? json_string_value(json_object_get(root, "chat_template")) : NULL;
    if (t)
        *owned = seer_strdup(t);
    json_decref(root);
    return *owned;
}

/* A template token's id (-1 when absent). A model needs it; a tokenizer alone (no m->lm) not:
   nothing of it renders a chat or generates. */
static int32_t required_token(const seer_model *m, const char *s, const char *path, int *rc)
{
    int32_t id = tok_token_to_id(m->tok, s, strlen(s));
    if (id < 0 && *rc == SEER_OK && m->lm)
        *rc = seer_err(SEER_EFORMAT, "%s: the vocabulary has no %s token", path, s);
    return id;
}

/* Frees what load_parts and the backend made, keeping m itself and its settings (a second
   load_parts sets every other field again). */
static void free_parts(seer_model *m)
{
    vit_free(m->vit);
    tok_free(m->tok);
    qwen35_free(m->lm);
    backend_free(m->be);
    free(m->vision_src);
    m->vit = NULL;
    m->tok = NULL;
    m->lm = NULL;
    m->be = NULL;
    m->vision_src = NULL;
}

/* Whether a vocab_only load of path is of a tokenizer alone (seer.h vocab_only): a .json file (a
   tokenizer.json), or a directory with tokenizer.json and no config.json, as `seer tokenize -m`
   has always taken. *tpath: the tokenizer file of path when it is a directory. */
static bool tokenizer_only(const char *path, char *tpath, size_t size)
{
    const size_t len = strlen(path);
    const int kind = io_path_kind(path);
    char cfg[4096];
    snprintf(tpath, size, kind == IO_DIR ? "%s/tokenizer.json" : "%s", path);
    snprintf(cfg, sizeof cfg, "%s/config.json", path);
    if (kind == IO_FILE)
        return len >= 5 && !strcmp(path + len - 5, ".json");
    return kind == IO_DIR && io_path_kind(cfg) == IO_MISSING && io_path_kind(tpath) == IO_FILE;
}

/* Everything but the choice of device: weights onto m->be (none when vocab_only), tokenizer,
   special tokens, vision. A tokenizer alone leaves m->lm NULL (api_model_config). */
static int load_parts(seer_model *m, const char *path, const seer_model_params *p)
{
    char tpath[4096];
    int rc;
    const bool tok_only = m->vocab_only && tokenizer_only(path, tpath, sizeof tpath);
    if (!tok_only && (rc = m->vocab_only ? qwen35_load_config(path, &m->lm) : qwen35_load(path, m->be, &m->lm)))
        return rc;
    const gguf *g = m->lm ? m->lm->gguf_file : NULL;
    if (g) {
        rc = tok_load_gguf(g, &m->tok);
    } else {
        if (!tok_only)
            snprintf(tpath, sizeof tpath, "%s/tokenizer.json", path);
        rc = tok_load_hf_json(tpath, &m->tok);
    }
    if (rc)
        return rc;
    m->id_im_end = required_token(m, "<|im_end|>", path, &rc);
    m->id_endoftext = required_token(m, "<|endoftext|>", path, &rc);
    m->id_think_end = required_token(m, "</think>", path, &rc);
    m->id_image_pad = required_token(m, "<|image_pad|>", path, &rc);
    m->id_video_pad = required_token(m, "<|video_pad|>", path, &rc);
    if (rc || (m->lm && (rc = api_vision_load(m, path, p))))
        return rc;
    if (tok_only) /* images are not measured, but seer_image_decode keeps its limits */
        m->limits = api_media_limits(p);
    /* Rows of the head past the tokenizer's last real token are padding and never sampled (spec
       §2.7); a GGUF lists them as tokens with no text ([PADn], type unused), tokenizer.json not. */
    m->n_vocab_real = (int64_t)tok_n_vocab(m->tok);
    while (m->n_vocab_real > 0) {
        size_t plen;
        if (tok_piece(m->tok, (int32_t)(m->n_vocab_real - 1), &plen))
            break;
        m->n_vocab_real--;
    }
    if (m->lm && m->n_vocab_real > m->lm->cfg.n_vocab)
        return seer_err(SEER_EFORMAT, "%s: the tokenizer has %lld tokens but the model only %lld rows", path,
                        (long long)m->n_vocab_real, (long long)m->lm->cfg.n_vocab);
    return SEER_OK;
}

/* Errors that belong to the device, not the files: a full device (the memory plan, an allocation),
   a weight type or op it lacks, a device that failed. The CPU may still take the model. */
static bool device_refused(int rc) { return rc == SEER_ENOMEM || rc == SEER_EUNSUPPORTED || rc == SEER_EDEVICE; }

/* The backend with the CPU settings of p (a no-op elsewhere). */
static int open_backend(const char *device, const seer_model_params *p, backend **be)
{
    enum cpu_weights mode;
    if (!cpu_weights_parse(p->weights, &mode))
        return seer_err(SEER_EINVAL, "weights: '%s' is not auto, map or copy", p->weights);
    int rc = backend_open(device, p->n_threads, be);
    if (rc == SEER_OK) {
        backend_cpu_set_exact(*be, p->exact != 0);
        backend_vulkan_set_exact(*be, p->exact != 0);
        backend_cpu_set_weights(*be, mode);
    }
    return rc;
}

int seer_model_load(const char *path, const seer_model_params *params, seer_model **out)
{
    seer_model_params p = params ? *params : seer_model_params_default();
    seer_model *m = seer_calloc(1, sizeof *m);
    char *tmpl = NULL;
    int rc;
    if (!m)
        return seer_err(SEER_ENOMEM, "no memory for a model");
    m->vocab_only = p.vocab_only != 0;
    pthread_mutex_init(&m->vit_lock, NULL);
    pthread_mutex_init(&m->device_lock.mu, NULL);
    pthread_cond_init(&m->device_lock.cv, NULL);
    m->video_threads = p.n_threads; /* decoding a video uses as many threads as the model's CPU work */
    if (!(m->path = seer_strdup(path))) {
        rc = seer_err(SEER_ENOMEM, "no memory for a model");
        goto fail;
    }
    /* vocab_only opens no device: nothing will run on it */
    if (!m->vocab_only && (rc = open_backend(p.device, &p, &m->be)))
        goto fail;
    rc = load_parts(m, path, &p);
    if (rc && !m->vocab_only && device_refused(rc) && backend_spec_is_auto(p.device) &&
        strcmp(m->be->iface->name, "cpu")) {
        /* auto promised the best device that works, so a GPU that cannot take this model is a
           warning, not a failure; the reason is the device's own one-line error */
        LOG_WARN("device", "cannot use the GPU: %s; loading the model on the CPU instead", seer_last_error());
        free_parts(m);
        seer_err_clear();
        if ((rc = open_backend("cpu", &p, &m->be)) == SEER_OK)
            rc = load_parts(m, path, &p);
    }
    /* The files were read (or their bytes copied to the device) while loading: a file rewritten or
       truncated meanwhile would give a model that is neither the old nor the new one. */
    if (rc || (rc = io_check_all()))
        goto fail;
    const gguf *g = m->lm ? m->lm->gguf_file : NULL;
    m->tmpl_info = (chat_template_info){0};
    if (template_text(path, g, &tmpl) && chat_template_check(tmpl, &m->tmpl_info) != SEER_OK)
        /* Reported, never silently ignored: the built-in Qwen3.5 rendering is used instead. */
        LOG_WARN("chat", "%s: %s; using the built-in Qwen3.5 chat format", path, seer_last_error());
    free(tmpl);
    *out = m;
    return SEER_OK;
fail:
    seer_model_free(m);
    return rc;
}

void seer_model_free(seer_model *m)
{
    if (!m)
        return;
    free_parts(m);
    pthread_mutex_destroy(&m->vit_lock);
    pthread_mutex_destroy(&m->device_lock.mu);
    pthread_cond_destroy(&m->device_lock.cv);
    free(m->path);
    free(m);
}

const char *seer_model_device(const seer_model *m) { return m->be ? m->be->description : "none (vocab_only)"; }

size_t seer_fault_describe(const void *addr, char *buf, size_t size) { return io_fault_describe(addr, buf, size); }

int seer_tokenize(const seer_model *m, const char *text, size_t len, int parse_special, int32_t **ids,
                  size_t *n_ids)
{
    tok_ids v = {0};
    int rc = tok_encode(m->tok, text, len, parse_special != 0, &v);
    if (rc)
        return rc;
    *ids = v.ids;
    *n_ids = v.n;
    return SEER_OK;
}

int seer_detokenize(const seer_model *m, const int32_t *ids, size_t n_ids, char **text, size_t *len)
{
    return tok_decode(m->tok, ids, n_ids, false, text, len);
}
