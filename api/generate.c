/* generate.c — the conversation half of the public API (include/seer.h): contexts, chat history,
   and the generation loop (prefill, sample, stream, stop).
   A chat turn — rendering the conversation, feeding what the state lacks, the reply begun and
   ended — is api/turn.c's.
   Divisions: contexts · history · generation loop · entry points. */
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"

/* ---- contexts ------------------------------------------------------------------------------- */

seer_context_params seer_context_params_default(void)
{
    return (seer_context_params){.n_ctx = 4096, .n_batch = 512};
}

/* n_ctx 0: the model's trained context (4096 when the file does not say), lowered to what the
   device's free memory holds after the recurrent state and scratch, less an eighth kept free for
   the backend's own allocations (a margin, not a measured number), in whole 256-token steps. */
static int64_t context_auto(const seer_model *m, int64_t n_ubatch, enum dtype kv_type)
{
    const qwen35_model *lm = m->lm;
    int64_t n = lm->cfg.n_ctx_train > 0 ? lm->cfg.n_ctx_train : 4096;
    uint64_t free_bytes, total;
    struct qwen35_state_bytes sb;
    qwen35_state_bytes_kv(&lm->cfg, kv_type, n_ubatch, lm->be->alignment, &sb);
    if (backend_memory(lm->be, &free_bytes, &total) == SEER_OK && sb.kv_per_1k > 0) {
        uint64_t usable = free_bytes - free_bytes / 8, fixed = sb.gdn + sb.scratch;
        uint64_t fit = usable > fixed ? (usable - fixed) / sb.kv_per_1k * 1024 : 0;
        if ((uint64_t)n > fit)
            n = (int64_t)MAX(fit / 256 * 256, 256);
        LOG_INFO("context", "n_ctx 0: %lld tokens (trained %lld, free memory %llu MiB)", (long long)n,
                 (long long)lm->cfg.n_ctx_train, (unsigned long long)(free_bytes >> 20));
    }
    return MIN(n, (int64_t)INT32_MAX);
}

int seer_context_create(seer_model *m, const seer_context_params *params, seer_context **out)
{
    seer_context_params p = params ? *params : seer_context_params_default();
    enum dtype kv_type = DT_F16;
    if (p.cache_type && strcmp(p.cache_type, "f16"))
        kv_type = !strcmp(p.cache_type, "f32") ? DT_F32 : !strcmp(p.cache_type, "q8_0") ? DT_Q8_0 : DT_COUNT;
    if (kv_type == DT_COUNT)
        return seer_err(SEER_EINVAL, "seer_context_create: cache type '%s' is not f16, f32 or q8_0", p.cache_type);
    if (m->vocab_only) {
        /* a measuring context (seer_chat_measure): the history and the queued media, no state; a
           tokenizer alone has no template settings or vision to measure with */
        int rc = api_model_config(m, "a context");
        if (rc)
            return rc;
        seer_context *c = seer_calloc(1, sizeof *c);
        if (!c)
            return seer_err(SEER_ENOMEM, "no memory for a context");
        c->m = m;
        *out = c;
        return SEER_OK;
    }
    if (p.n_ctx == 0 && p.n_batch >= 1)
        p.n_ctx = context_auto(m, p.n_batch, kv_type);
    /* checked before anything n_ctx-sized is allocated, so a bad value is EINVAL, not ENOMEM
       (positions travel as i32, spec §3.2) */
    if (p.n_ctx < 1 || p.n_ctx > INT32_MAX || p.n_batch < 1)
        return seer_err(SEER_EINVAL, "seer_context_create: n_ctx %lld must be 0..%d and n_batch %lld at least 1",
                        (long long)p.n_ctx, INT32_MAX, (long long)p.n_batch);
    seer_context *c = seer_calloc(1, sizeof *c);
    int rc;
    if (!c)
        return seer_err(SEER_ENOMEM, "no memory for a context");
    c->m = m;
    c->logits = seer_malloc((size_t)m->lm->cfg.n_vocab * sizeof *c->logits);
    c->fed = seer_malloc((size_t)p.n_ctx * sizeof *c->fed);
    if (!c->logits || !c->fed) {
        free(c->logits);
        free(c->fed);
        free(c);
        return seer_err(SEER_ENOMEM, "no memory for logits");
    }
    api_device_lock(m);
    rc = qwen35_state_create_kv(m->lm, p.n_ctx, p.n_batch, kv_type, &c->st);
    api_device_unlock(m);
    if (rc) {
        free(c->logits);
        free(c->fed);
        free(c);
        return rc;
    }
    *out = c;
    return SEER_OK;
}

void seer_context_free(seer_context *c)
{
    if (!c)
        return;
    api_history_clear(c);
    api_images_clear(&c->images);
    free(c->images.img);
    api_videos_clear(&c->videos);
    free(c->videos.v);
    free(c->hist);
    free(c->pending);
    free(c->fed);
    free(c->logits);
    grammar_vocab_free(c->gvocab);
    seer_snapshot_free(c->turn);
    api_device_lock(c->m);
    qwen35_state_free(c->st);
    api_device_unlock(c->m);
    free(c);
}

/* Whether a reply opens a reasoning block: think, or with -1 the template's own default. */
bool api_think_on(const seer_context *c, const seer_generate_params *p)
{
    return p->think < 0 ? c->m->tmpl_info.thinking_default : p->think != 0;
}

/* A measuring context (of a vocab_only model) has no state to generate with. */
int api_can_generate(const seer_context *c)
{
    return c->st ? SEER_OK : api_model_weights(c->m, "generating");
}

/* ---- history -------------------------------------------------------------------------------- */

int api_chat_add(seer_context *c, const char *role, const char *content, size_t n_images)
{
    if (!role || !content)
        return seer_err(SEER_EINVAL, "seer_chat_add: role and content are required");
    if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool"))
        return seer_err(SEER_EINVAL, "seer_chat_add: unknown role '%s'", role);
    if (!seer_grow(&c->hist, &c->cap_hist, c->n_hist + 1, sizeof *c->hist, 8))
        return seer_err(SEER_ENOMEM, "no memory for the chat history");
    char *r = seer_strdup(role), *t = seer_strdup(content);
    if (!r || !t) {
        free(r), free(t);
        return seer_err(SEER_ENOMEM, "no memory for the chat history");
    }
    c->hist[c->n_hist++] = (struct chat_msg){r, t, n_images, 0};
    return SEER_OK;
}

int seer_chat_add(seer_context *c, const char *role, const char *content)
{
    return api_chat_add(c, role, content, 0);
}

int seer_chat_append_text(seer_context *c, const char *text)
{
    if (!text)
        return seer_err(SEER_EINVAL, "seer_chat_append_text: text is required");
    if (c->n_hist == 0)
        return seer_err(SEER_EINVAL, "seer_chat_append_text: the conversation has no message yet");
    struct chat_msg *h = &c->hist[c->n_hist - 1];
    const size_t a = strlen(h->content), b = strlen(text);
    char *t = seer_realloc(h->content, a + b + 1);
    if (!t)
        return seer_err(SEER_ENOMEM, "no memory for the chat history");
    memcpy(t + a, text, b + 1);
    h->content = t;
    return SEER_OK;
}

/* The images are decoded now (the caller's pixels are only borrowed for this call) and queued; the
   next seer_chat_generate encodes them where the template placed them. */
int seer_chat_add_images(seer_context *c, const char *role, const seer_image_input *images, size_t n_images,
                         const char *text)
{
    const size_t before = c->images.n;
    int rc = SEER_OK;
    if (n_images && !images)
        return seer_err(SEER_EINVAL, "seer_chat_add_images: %zu images but no array", n_images);
    if (n_images && !c->m->vision_src)
        return api_no_vision(c->m);
    for (size_t i = 0; i < n_images && !rc; i++) {
        struct image_rgb8 im;
        if (!(rc = api_image_decode(&c->m->limits, &images[i], &im)) && (rc = api_images_push(&c->images, &im)))
            image_rgb8_free(&im);
    }
    if (!rc)
        rc = api_chat_add(c, role, text ? text : "", n_images);
    while (rc && c->images.n > before)
        image_rgb8_free(&c->images.img[--c->images.n]);
    return rc;
}

/* Images are decoded now, videos when the prompt is fed (api/video.c streams them pair by pair);
   an opened video is only referred to. */
int seer_chat_add_media(seer_context *c, const char *role, const seer_image_input *images, size_t n_images,
                        const seer_video_input *videos, size_t n_videos, const char *text)
{
    const size_t before = c->videos.n;
    int rc = SEER_OK;
    if (n_videos && !videos)
        return seer_err(SEER_EINVAL, "seer_chat_add_media: %zu videos but no array", n_videos);
    if (n_videos && !c->m->vision_src)
        return api_no_vision(c->m);
    for (size_t i = 0; i < n_videos && !rc; i++)
        rc = videos[i].path || videos[i].video
                 ? api_videos_push(&c->videos, c->m, &videos[i])
                 : seer_err(SEER_EINVAL, "seer_chat_add_media: video %zu has no path and no opened video", i + 1);
    if (!rc && !(rc = seer_chat_add_images(c, role, images, n_images, text)))
        c->hist[c->n_hist - 1].n_videos = n_videos;
    while (rc && c->videos.n > before)
        free(c->videos.v[--c->videos.n].path);
    return rc;
}

/* ---- generation loop ------------------------------------------------------------------------ */

/* Feeds the reply's tokens one at a time until it ends (a seer_batch feeds several at once
   instead); returns rc or the first error. */
int api_reply_alone(struct reply *rp, int rc)
{
    int32_t id;
    while (rc == SEER_OK && (rc = reply_next(rp, &id)) == 0) {
        api_device_lock(rp->c->m);
        rc = qwen35_eval(rp->c->m->lm, rp->c->st, &id, 1, QWEN35_LOGITS_LAST, rp->c->logits, true);
        api_device_unlock(rp->c->m);
        if (rc)
            break;
        reply_fed(rp, id);
    }
    return rc < 0 ? rc : SEER_OK;
}

static int generate(seer_context *c, const int32_t *prompt, size_t n_prompt, const seer_generate_params *p,
                    bool think_open, const struct api_fused *fused, seer_result *r)
{
    struct reply rp;
    int rc = reply_begin(&rp, c, prompt, n_prompt, p, think_open, fused, false, NULL);
    return reply_end(&rp, api_reply_alone(&rp, rc), r);
}

/* ---- entry points --------------------------------------------------------------------------- */

int seer_generate_tokens(seer_context *c, const int32_t *ids, size_t n_ids, const seer_generate_params *params,
                         seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    int rc = api_can_generate(c);
    if (rc) {
        memset(r, 0, sizeof *r);
        return rc;
    }
    /* raw continuation: the chat rendering no longer describes the state */
    api_history_clear(c);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    return generate(c, ids, n_ids, &p, false, NULL, r);
}

/* seer_generate_text's first half: a raw continuation of the context (no chat template; special
   tokens in the prompt are parsed). */
int api_text_begin(seer_context *c, const char *prompt, const seer_generate_params *p, struct reply *rp, bool defer)
{
    int32_t *ids;
    size_t n;
    reply_init(rp);
    int rc = api_can_generate(c);
    if (rc || (rc = seer_tokenize(c->m, prompt, strlen(prompt), 1, &ids, &n)))
        return rc;
    api_history_clear(c);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    rc = reply_begin(rp, c, ids, n, p, false, NULL, defer, NULL);
    free(ids);
    return rc;
}

int seer_generate_text(seer_context *c, const char *prompt, const seer_generate_params *params, seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct reply rp;
    int rc = api_text_begin(c, prompt, &p, &rp, false);
    return reply_end(&rp, api_reply_alone(&rp, rc), r);
}

/* A raw prompt with its images (decoded into q), expanded into *fused: encoded, or only measured. */
static int text_images(seer_model *m, const char *prompt, const seer_image_input *images, size_t n_images, bool measure,
                       struct api_images *q, struct api_fused *fused)
{
    int32_t *ids = NULL;
    size_t n;
    int rc = SEER_OK;
    if (n_images && !images)
        return seer_err(SEER_EINVAL, "%zu images but no array", n_images);
    for (size_t i = 0; i < n_images && !rc; i++) {
        struct image_rgb8 im = {0};
        if ((rc = api_image_decode(&m->limits, &images[i], &im)) || (rc = api_images_push(q, &im)))
            image_rgb8_free(&im);
    }
    if (!rc && !(rc = seer_tokenize(m, prompt, strlen(prompt), 1, &ids, &n)))
        rc = api_fuse(m, ids, n, q, measure, fused);
    free(ids);
    return rc;
}

int seer_generate_text_images(seer_context *c, const char *prompt, const seer_image_input *images, size_t n_images,
                              const seer_generate_params *params, seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct api_fused fused = {0};
    memset(r, 0, sizeof *r);
    int rc = api_can_generate(c);
    if (rc)
        return rc;
    api_history_clear(c);
    api_images_clear(&c->images);
    if (!(rc = text_images(c->m, prompt, images, n_images, false, &c->images, &fused)))
        rc = generate(c, fused.ids, fused.n_ids, &p, false, &fused, r);
    api_images_clear(&c->images);
    api_fused_clear(&fused);
    return rc;
}

int seer_text_measure(seer_context *c, const char *prompt, const seer_image_input *images, size_t n_images,
                      int64_t *prompt_tokens)
{
    struct api_images q = {0};
    struct api_fused fused = {0};
    int rc = text_images(c->m, prompt, images, n_images, true, &q, &fused);
    if (!rc)
        *prompt_tokens = (int64_t)(c->n_pending + fused.n_ids);
    api_images_clear(&q);
    free(q.img);
    api_fused_clear(&fused);
    return rc;
}

int seer_image_measure(const seer_model *m, const seer_image_input *image, seer_image_info *info)
{
    struct image_rgb8 im;
    int rc = m->vision_src ? api_image_decode(&m->limits, image, &im) : api_no_vision(m);
    if (rc)
        return rc;
    rc = api_image_measure_rgb(m->img_min_pixels, m->img_max_pixels, im.width, im.height, info);
    image_rgb8_free(&im);
    if (rc && (image->path || image->data)) { /* the resize rule knows only sizes: name the file */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", seer_last_error());
        rc = seer_err(rc, "%s: %s", image->path ? image->path : "image data", msg);
    }
    return rc;
}
