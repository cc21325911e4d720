/* generate.c — the conversation half of the public API (include/seer.h): contexts, chat history,
   and the generation loop (prefill, sample, stream, stop).
   Multi-turn chats never re-process earlier turns (a hybrid model's GDN state cannot be rolled
   back, so this is also the only correct way): the context remembers the exact rendered text its
   state holds, renders the whole conversation again each turn (spec §6.2, with reasoning kept in
   every assistant turn so the rendering of history does not change), and feeds only the new
   suffix. Divisions: contexts · history · generation loop · entry points. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "lm/grammar.h"
#include "lm/json_schema.h"
#include "lm/sampler.h"

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
        kv_type = !strcmp(p.cache_type, "f32") ? DT_F32 : DT_COUNT;
    if (kv_type == DT_COUNT)
        return seer_err(SEER_EINVAL, "seer_context_create: cache type '%s' is not f16 or f32", p.cache_type);
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
    if ((rc = qwen35_state_create_kv(m->lm, p.n_ctx, p.n_batch, kv_type, &c->st))) {
        free(c->logits);
        free(c->fed);
        free(c);
        return rc;
    }
    *out = c;
    return SEER_OK;
}

static void history_clear(seer_context *c)
{
    for (size_t i = 0; i < c->n_hist; i++)
        free(c->hist[i].role), free(c->hist[i].content);
    c->n_hist = 0;
    seer_freep(&c->fed_text);
    c->fed_len = 0;
}

void seer_context_free(seer_context *c)
{
    if (!c)
        return;
    history_clear(c);
    api_images_clear(&c->images);
    free(c->images.img);
    api_videos_clear(&c->videos);
    free(c->videos.v);
    free(c->hist);
    free(c->pending);
    free(c->fed);
    free(c->logits);
    grammar_vocab_free(c->gvocab);
    qwen35_state_free(c->st);
    free(c);
}

int seer_context_reset(seer_context *c)
{
    history_clear(c);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    c->n_pending = 0;
    c->n_fed = 0;
    return qwen35_state_reset(c->m->lm, c->st);
}

/* ---- history -------------------------------------------------------------------------------- */

static int chat_add(seer_context *c, const char *role, const char *content, size_t n_images)
{
    if (!role || !content)
        return seer_err(SEER_EINVAL, "seer_chat_add: role and content are required");
    if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "tool"))
        return seer_err(SEER_EINVAL, "seer_chat_add: unknown role '%s'", role);
    if (c->n_hist == c->cap_hist) {
        size_t cap = c->cap_hist ? 2 * c->cap_hist : 8;
        struct chat_msg *h = seer_realloc(c->hist, cap * sizeof *h);
        if (!h)
            return seer_err(SEER_ENOMEM, "no memory for the chat history");
        c->hist = h;
        c->cap_hist = cap;
    }
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
    return chat_add(c, role, content, 0);
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
    if (n_images && !c->m->vit)
        return seer_err(SEER_EUNSUPPORTED, "this model has no vision tower: pass its mmproj GGUF with --mmproj "
                        "(or use the Hugging Face model directory)");
    for (size_t i = 0; i < n_images && !rc; i++) {
        struct image_rgb8 im;
        if (!(rc = api_image_decode(&c->m->limits, &images[i], &im)) && (rc = api_images_push(&c->images, &im)))
            image_rgb8_free(&im);
    }
    if (!rc)
        rc = chat_add(c, role, text ? text : "", n_images);
    while (rc && c->images.n > before)
        image_rgb8_free(&c->images.img[--c->images.n]);
    return rc;
}

/* Images are decoded now, videos when the prompt is fed (api/video.c streams them pair by pair). */
int seer_chat_add_media(seer_context *c, const char *role, const seer_image_input *images, size_t n_images,
                        const seer_video_input *videos, size_t n_videos, const char *text)
{
    const size_t before = c->videos.n;
    int rc = SEER_OK;
    if (n_videos && !videos)
        return seer_err(SEER_EINVAL, "seer_chat_add_media: %zu videos but no array", n_videos);
    if (n_videos && !c->m->vit)
        return seer_err(SEER_EUNSUPPORTED, "this model has no vision tower: pass its mmproj GGUF with --mmproj "
                        "(or use the Hugging Face model directory)");
    for (size_t i = 0; i < n_videos && !rc; i++) {
        struct video_settings s = api_video_settings(&c->m->video_defaults, &videos[i]);
        rc = videos[i].path ? api_videos_push(&c->videos, videos[i].path, &s)
                            : seer_err(SEER_EINVAL, "seer_chat_add_media: video %zu has no path", i + 1);
    }
    if (!rc && !(rc = seer_chat_add_images(c, role, images, n_images, text)))
        c->hist[c->n_hist - 1].n_videos = n_videos;
    while (rc && c->videos.n > before)
        free(c->videos.v[--c->videos.n].path);
    return rc;
}

/* Renders history[0..n) (spec §6.2). Reasoning is kept in every assistant turn
   (preserve_thinking) so an earlier turn renders the same way it was fed. */
static int render(const seer_context *c, size_t n, bool gen_prompt, bool think, char **out, size_t *len,
                  chat_range **ranges, size_t *n_ranges)
{
    size_t n_parts = 0;
    for (size_t i = 0; i < n; i++)
        n_parts += c->hist[i].n_images + c->hist[i].n_videos ? c->hist[i].n_images + c->hist[i].n_videos + 1 : 0;
    chat_message *msgs = seer_calloc(n ? n : 1, sizeof *msgs);
    chat_part *parts = seer_calloc(n_parts ? n_parts : 1, sizeof *parts);
    if (!msgs || !parts) {
        free(msgs), free(parts);
        return seer_err(SEER_ENOMEM, "no memory to render the chat");
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        const struct chat_msg *h = &c->hist[i];
        msgs[i] = (chat_message){.role = h->role, .content = h->content};
        if (!h->n_images && !h->n_videos)
            continue;
        /* images first, then videos, then the text, as in HF's examples (spec §6.2 image parts) */
        msgs[i].parts = parts + k;
        msgs[i].n_parts = h->n_images + h->n_videos + 1;
        for (size_t j = 0; j < h->n_images; j++)
            parts[k++] = (chat_part){.type = CHAT_PART_IMAGE};
        for (size_t j = 0; j < h->n_videos; j++)
            parts[k++] = (chat_part){.type = CHAT_PART_VIDEO};
        parts[k++] = (chat_part){.type = CHAT_PART_TEXT, .text = h->content};
    }
    chat_params p = chat_params_default();
    p.add_generation_prompt = gen_prompt;
    p.enable_thinking = think;
    p.preserve_thinking = true;
    p.scalar_args_as_json = c->m->tmpl_info.scalar_args_as_json;
    int rc = chat_render_ranges(msgs, n, &p, out, len, ranges, n_ranges);
    free(msgs);
    free(parts);
    return rc;
}

static int pending_push(seer_context *c, int32_t id)
{
    if (c->n_pending == c->cap_pending) {
        size_t cap = c->cap_pending ? 2 * c->cap_pending : 4;
        int32_t *p = seer_realloc(c->pending, cap * sizeof *p);
        if (!p)
            return seer_err(SEER_ENOMEM, "no memory");
        c->pending = p;
        c->cap_pending = cap;
    }
    c->pending[c->n_pending++] = id;
    return SEER_OK;
}

/* Tokenizes text[from..len) of a rendered conversation: special tokens are parsed in the
   template's markup only, never inside message text (`ranges`, from chat_render_ranges), so a
   message cannot close its turn or open another one (a prompt injection). Between special tokens
   the text is pre-tokenized as one piece, as HF does, so a message without special tokens gets
   the ids HF's apply_chat_template would give. */
static int tokenize_markup(const tokenizer *tok, const char *text, size_t len, size_t from, const chat_range *ranges,
                           size_t n_ranges, int32_t **ids, size_t *n_ids)
{
    size_t *plain = seer_malloc((n_ranges ? n_ranges : 1) * 2 * sizeof *plain), k = 0;
    if (!plain)
        return seer_err(SEER_ENOMEM, "no memory to tokenize the chat");
    for (size_t i = 0; i < n_ranges; i++)
        if (ranges[i].end > from) {
            plain[2 * k] = MAX(ranges[i].start, from) - from;
            plain[2 * k + 1] = ranges[i].end - from;
            k++;
        }
    tok_ids v = {0};
    int rc = tok_encode_ranges(tok, text + from, len - from, true, plain, k, &v);
    free(plain);
    if (rc)
        return rc;
    *ids = v.ids;
    *n_ids = v.n;
    return SEER_OK;
}

/* ---- generation loop ------------------------------------------------------------------------ */

seer_generate_params seer_generate_params_default(void)
{
    return (seer_generate_params){
        .sampling = {.temperature = 1.0f, .top_k = 20, .top_p = 1.0f, .min_p = 0.0f, .repeat_penalty = 1.0f,
                     .presence_penalty = 2.0f, .seed = 0},
        .max_tokens = 1024,
    };
}

void seer_result_clear(seer_result *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->tokens);
    free(r->thinking);
    memset(r, 0, sizeof *r);
}

/* Growable byte string. */
struct sbuf {
    char *s;
    size_t n, cap;
};

static int sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = MAX(b->cap * 2, b->n + n + 64);
        char *t = seer_realloc(b->s, cap);
        if (!t)
            return seer_err(SEER_ENOMEM, "no memory for generated text");
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return SEER_OK;
}

/* Visible-text bookkeeping: reasoning hidden until </think>, stop strings searched in the answer,
   and a tail that could begin a stop string held back from the stream. */
struct visible {
    const seer_generate_params *p;
    struct sbuf text;   /* visible answer so far */
    struct sbuf think;  /* the reasoning, kept apart for seer_result.thinking */
    size_t streamed;    /* bytes of text already given to on_text */
    bool reasoning;     /* inside the think block the prompt opened */
    bool hiding;        /* ... and it is not shown */
    bool strip_lead;    /* drop whitespace at the start of the answer (after </think>) */
    size_t max_stop;
};

/* The reasoning without the whitespace around it (the template writes "<think>\n…\n</think>",
   spec §6.2), in a new string. */
static char *think_trimmed(const struct sbuf *b)
{
    size_t a = 0, e = b->n;
    while (a < e && strchr(" \t\r\n", b->s[a]))
        a++;
    while (e > a && strchr(" \t\r\n", b->s[e - 1]))
        e--;
    char *t = seer_malloc(e - a + 1);
    if (t) {
        if (e > a)
            memcpy(t, b->s + a, e - a);
        t[e - a] = '\0';
    }
    return t;
}

/* Adds decoded text; returns 1 when a stop string completed (text cut before it), 2 when the
   callback cancelled, 0 to go on, or a negative error. */
static int visible_add(struct visible *v, const char *s, size_t n, bool final)
{
    int rc;
    if (v->reasoning && (rc = sbuf_add(&v->think, s, n)))
        return rc;
    if (v->hiding)
        return 0;
    if (v->strip_lead) {
        while (n && (*s == '\n' || *s == ' ' || *s == '\r' || *s == '\t'))
            s++, n--;
        if (n)
            v->strip_lead = false;
    }
    size_t before = v->text.n;
    if ((rc = sbuf_add(&v->text, s, n)))
        return rc;
    int stopped = 0;
    for (size_t i = 0; i < v->p->n_stop; i++) {
        const char *st = v->p->stop[i];
        size_t sl = strlen(st);
        if (!sl)
            continue;
        /* search only where a match could end in the new bytes */
        size_t from = before >= sl ? before - sl + 1 : 0;
        const char *hit = NULL;
        for (size_t k = from; k + sl <= v->text.n && !hit; k++)
            if (!memcmp(v->text.s + k, st, sl))
                hit = v->text.s + k;
        if (hit) {
            v->text.n = (size_t)(hit - v->text.s);
            v->text.s[v->text.n] = '\0';
            stopped = 1;
        }
    }
    size_t safe = stopped || final ? v->text.n : (v->text.n > v->max_stop ? v->text.n - v->max_stop : 0);
    /* never split a UTF-8 character when holding back */
    while (safe > v->streamed && safe < v->text.n && ((unsigned char)v->text.s[safe] & 0xC0) == 0x80)
        safe--;
    if (safe > v->streamed && v->p->on_text) {
        if (v->p->on_text(v->text.s + v->streamed, safe - v->streamed, v->p->user_data))
            return v->streamed = safe, 2;
    }
    if (safe > v->streamed)
        v->streamed = safe;
    return stopped;
}

/* Text prefill, micro-batch by micro-batch when the caller follows progress (the same micro-batches
   qwen35_eval makes, so the same numbers). Returns 1 when on_progress asked to stop; the state then
   holds *n_done of the n tokens. */
static int prefill_text(seer_context *c, const int32_t *feed, size_t n, const seer_generate_params *p, size_t *n_done)
{
    qwen35_state *st = c->st;
    const size_t step = p->on_progress ? (size_t)st->n_ubatch : n;
    *n_done = 0;
    while (*n_done < n) {
        size_t k = MIN(step, n - *n_done);
        bool last = *n_done + k == n;
        int rc = qwen35_eval(c->m->lm, st, feed + *n_done, (int64_t)k, last ? QWEN35_LOGITS_LAST : QWEN35_LOGITS_NONE,
                             c->logits, true);
        if (rc)
            return rc;
        *n_done += k;
        if (p->on_progress && p->on_progress((int64_t)*n_done, (int64_t)n, 0, p->user_data) && !last)
            return 1;
    }
    return SEER_OK;
}

/* Structured output (p->grammar or p->json_schema): compiles the grammar and starts a matcher over
   the context's token trie (built once per context: sorting 248k pieces costs tens of ms).
   Special tokens and the think tags are never part of the output; the end-of-turn ids are allowed
   exactly when the output is complete. *gm stays NULL when nothing is asked. */
static int grammar_start(seer_context *c, const seer_generate_params *p, grammar **g, grammar_matcher **gm)
{
    const seer_model *m = c->m;
    char *text = NULL;
    int rc;
    if (!p->grammar && !p->json_schema)
        return SEER_OK;
    if (p->grammar && p->json_schema)
        return seer_err(SEER_EINVAL, "a grammar and a JSON schema cannot both constrain one answer");
    if (p->json_schema && (rc = json_schema_to_gbnf(p->json_schema, strlen(p->json_schema), &text)))
        return rc;
    rc = grammar_parse(text ? text : p->grammar, strlen(text ? text : p->grammar),
                       p->grammar ? "the grammar" : "the JSON schema's grammar", g);
    free(text);
    if (rc)
        return rc;
    if (!c->gvocab) {
        size_t n = (size_t)m->n_vocab_real;
        const char **pieces = seer_calloc(n ? n : 1, sizeof *pieces);
        size_t *lens = seer_calloc(n ? n : 1, sizeof *lens);
        int32_t think_start = tok_token_to_id(m->tok, "<think>", 7);
        if (!pieces || !lens)
            rc = seer_err(SEER_ENOMEM, "no memory for the grammar's vocabulary");
        for (size_t i = 0; !rc && i < n; i++)
            if (!tok_is_special(m->tok, (int32_t)i) && (int32_t)i != m->id_think_end && (int32_t)i != think_start)
                pieces[i] = tok_piece(m->tok, (int32_t)i, &lens[i]);
        if (!rc)
            rc = grammar_vocab_create(pieces, lens, n, &c->gvocab);
        free(pieces), free(lens);
    }
    const int32_t ends[2] = {m->id_im_end, m->id_endoftext};
    if (!rc)
        rc = grammar_matcher_create(*g, c->gvocab, ends, ends[1] >= 0 && ends[1] != ends[0] ? 2 : 1, gm);
    if (rc) {
        grammar_free(*g);
        *g = NULL;
    }
    return rc;
}

/* Feeds `prompt` (after any pending tokens), then samples until a stop. `think_open`: the prompt
   opened a think block (its text goes to result->thinking, and to the answer only with
   show_thinking). `fused` (or NULL): the images whose expanded placeholders the prompt holds. */
static int generate(seer_context *c, const int32_t *prompt, size_t n_prompt, const seer_generate_params *p,
                    bool think_open, const struct api_fused *fused, seer_result *r)
{
    seer_model *m = c->m;
    const int64_t V = m->lm->cfg.n_vocab;
    int32_t *feed = NULL;
    sampler *smp = NULL;
    grammar *gram = NULL;
    grammar_matcher *gm = NULL; /* constrains the answer (after </think> when thinking) */
    uint32_t *free_mask = NULL; /* while reasoning under a grammar: every id but the end of turn */
    bool g_on = !think_open;
    tok_stream ts;
    struct visible vis = {.p = p, .reasoning = think_open, .hiding = think_open && !p->show_thinking,
                          .strip_lead = true};
    size_t n_feed = c->n_pending + n_prompt, n_gen = 0, cap_gen = 64;
    int rc;
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < p->n_stop; i++)
        vis.max_stop = MAX(vis.max_stop, strlen(p->stop[i]));
    tok_stream_init(&ts, m->tok, true);
    if (n_feed == 0)
        return seer_err(SEER_EINVAL, "nothing to generate from: the prompt is empty");
    if (c->st->n_past + (int64_t)n_feed > c->st->n_ctx)
        return seer_err(SEER_EINVAL, "the prompt does not fit: it needs %lld context tokens (%zu new after %lld used) "
                        "but the context holds %lld: raise -c (n_ctx) to at least %lld, or start over",
                        (long long)c->st->n_past + (long long)n_feed, n_feed, (long long)c->st->n_past,
                        (long long)c->st->n_ctx, (long long)c->st->n_past + (long long)n_feed);
    feed = seer_malloc(n_feed * sizeof *feed);
    r->tokens = seer_malloc(cap_gen * sizeof *r->tokens);
    if (!feed || !r->tokens) {
        rc = seer_err(SEER_ENOMEM, "no memory for the prompt");
        goto done;
    }
    if (c->n_pending) /* pending is NULL until the first stop token: memcpy(dst, NULL, 0) is undefined */
        memcpy(feed, c->pending, c->n_pending * sizeof *feed);
    memcpy(feed + c->n_pending, prompt, n_prompt * sizeof *feed);
    sampler_params sp = sampler_params_default();
    sp.temperature = p->sampling.temperature;
    sp.top_k = p->sampling.top_k;
    sp.top_p = p->sampling.top_p;
    sp.min_p = p->sampling.min_p;
    sp.repetition_penalty = p->sampling.repeat_penalty;
    sp.presence_penalty = p->sampling.presence_penalty;
    sp.seed = p->sampling.seed;
    sp.n_vocab_valid = (int32_t)m->n_vocab_real;
    if ((rc = sampler_create(&sp, (int32_t)V, &smp)) || (rc = sampler_accept_prompt(smp, feed, n_feed)) ||
        (rc = grammar_start(c, p, &gram, &gm)))
        goto done;
    if (gm && !g_on) {
        /* The turn may not end inside the reasoning: an answer is owed, and it must be complete. */
        size_t n_words = ((size_t)V + 31) / 32;
        if (!(free_mask = seer_malloc(n_words * sizeof *free_mask))) {
            rc = seer_err(SEER_ENOMEM, "no memory for the grammar's mask");
            goto done;
        }
        memset(free_mask, 0xFF, n_words * sizeof *free_mask);
        free_mask[m->id_im_end >> 5] &= ~(1u << (m->id_im_end & 31));
        if (m->id_endoftext >= 0)
            free_mask[m->id_endoftext >> 5] &= ~(1u << (m->id_endoftext & 31));
    }

    double t0 = seer_time_now();
    size_t n_done = n_feed;
    if (fused && (fused->n_images || fused->n_videos))
        rc = api_prefill_fused(c, feed, n_feed, fused, p, c->logits, &n_done);
    else
        rc = prefill_text(c, feed, n_feed, p, &n_done);
    r->vision_seconds = fused ? fused->seconds : 0;
    r->prefill_seconds = seer_time_now() - t0 + r->vision_seconds;
    r->prompt_tokens = (int64_t)n_done;
    if (rc < 0)
        goto done;
    memcpy(c->fed + c->n_fed, feed, n_done * sizeof *feed);
    c->n_fed += n_done;
    c->n_pending = 0;
    t0 = seer_time_now();
    r->stop = SEER_STOP_LENGTH;
    if (rc == 1) { /* cancelled during the prompt: nothing sampled, the state holds part of it */
        rc = SEER_OK;
        r->stop = SEER_STOP_CANCELED;
        r->prompt_cut = 1;
    }
    while (r->stop != SEER_STOP_CANCELED) {
        int32_t id;
        if (gm && g_on && grammar_matcher_finished(gm)) {
            /* the answer is complete and only the end of turn may follow: the model's choice is
               forced, so take it now (an answer that ends exactly at -n is not "length") */
            r->stop = SEER_STOP_EOS;
            rc = pending_push(c, m->id_im_end);
            break;
        }
        /* max_tokens < 0: until the end of the turn or of the context */
        if (p->max_tokens >= 0 && n_gen >= (size_t)p->max_tokens) {
            r->stop = SEER_STOP_LENGTH;
            break;
        }
        if (gm) {
            const uint32_t *mask = free_mask;
            if (g_on && (rc = grammar_matcher_mask(gm, &mask)))
                goto done;
            sampler_set_allowed(smp, mask);
        }
        if ((rc = sampler_sample(smp, c->logits, &id)))
            goto done;
        if (gm && g_on && (rc = grammar_matcher_accept(gm, id)))
            goto done;
        if (id == m->id_im_end || id == m->id_endoftext) {
            r->stop = SEER_STOP_EOS;
            rc = pending_push(c, id);
            break;
        }
        if (n_gen == cap_gen) {
            int32_t *t = seer_realloc(r->tokens, 2 * cap_gen * sizeof *t);
            if (!t) {
                rc = seer_err(SEER_ENOMEM, "no memory for generated tokens");
                goto done;
            }
            r->tokens = t;
            cap_gen *= 2;
        }
        r->tokens[n_gen++] = id;
        if ((rc = sampler_accept(smp, id)))
            goto done;
        const char *piece;
        size_t plen;
        if ((rc = tok_stream_push(&ts, id, &piece, &plen)))
            goto done;
        int v;
        if (id == m->id_think_end && vis.reasoning) {
            /* the answer starts after </think> (spec §6.2); the tag itself is shown only with the reasoning */
            vis.reasoning = false;
            v = visible_add(&vis, piece, plen, false);
            vis.hiding = false;
            g_on = true;
        } else {
            v = visible_add(&vis, piece, plen, false);
        }
        if (v == 0 && p->on_progress && p->on_progress(r->prompt_tokens, r->prompt_tokens, (int64_t)n_gen, p->user_data))
            v = 2;
        if (v < 0) {
            rc = v;
            goto done;
        }
        if (v > 0) {
            r->stop = v == 1 ? SEER_STOP_STRING : SEER_STOP_CANCELED;
            rc = pending_push(c, id);
            break;
        }
        if (c->st->n_past + 1 > c->st->n_ctx) {
            r->stop = SEER_STOP_CONTEXT;
            rc = pending_push(c, id);
            break;
        }
        if ((rc = qwen35_eval(m->lm, c->st, &id, 1, QWEN35_LOGITS_LAST, c->logits, true)))
            goto done;
        c->fed[c->n_fed++] = id;
    }
    if (rc)
        goto done;
    r->decode_seconds = seer_time_now() - t0;
    const char *tail;
    size_t tlen;
    if (rc == SEER_OK && (rc = tok_stream_flush(&ts, &tail, &tlen)) == SEER_OK && r->stop != SEER_STOP_STRING &&
        r->stop != SEER_STOP_CANCELED) {
        int v = visible_add(&vis, tail, tlen, true);
        rc = v < 0 ? v : SEER_OK;
    }
    r->n_tokens = n_gen;
    r->text = vis.text.s ? vis.text.s : seer_strdup("");
    vis.text.s = NULL;
    r->reasoning_cut = vis.reasoning && (r->stop == SEER_STOP_LENGTH || r->stop == SEER_STOP_CONTEXT);
    r->thinking = think_trimmed(&vis.think);
    if (!r->text || !r->thinking)
        rc = seer_err(SEER_ENOMEM, "no memory");
done:
    tok_stream_deinit(&ts);
    grammar_matcher_free(gm);
    grammar_free(gram);
    free(free_mask);
    sampler_free(smp);
    free(feed);
    free(vis.text.s);
    free(vis.think.s);
    if (rc)
        seer_result_clear(r);
    return rc;
}

/* ---- entry points --------------------------------------------------------------------------- */

int seer_generate_tokens(seer_context *c, const int32_t *ids, size_t n_ids, const seer_generate_params *params,
                         seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    /* raw continuation: the chat rendering no longer describes the state */
    history_clear(c);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    return generate(c, ids, n_ids, &p, false, NULL, r);
}

int seer_generate_text(seer_context *c, const char *prompt, const seer_generate_params *params, seer_result *r)
{
    int32_t *ids;
    size_t n;
    int rc = seer_tokenize(c->m, prompt, strlen(prompt), 1, &ids, &n);
    if (rc)
        return rc;
    rc = seer_generate_tokens(c, ids, n, params, r);
    free(ids);
    return rc;
}

int seer_generate_text_images(seer_context *c, const char *prompt, const seer_image_input *images, size_t n_images,
                              const seer_generate_params *params, seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    struct api_fused fused = {0};
    int32_t *ids = NULL;
    size_t n;
    int rc;
    memset(r, 0, sizeof *r);
    history_clear(c);
    api_images_clear(&c->images);
    if (n_images && !images)
        return seer_err(SEER_EINVAL, "seer_generate_text_images: %zu images but no array", n_images);
    for (size_t i = 0; i < n_images; i++) {
        struct image_rgb8 im = {0};
        if ((rc = api_image_decode(&c->m->limits, &images[i], &im)) || (rc = api_images_push(&c->images, &im))) {
            image_rgb8_free(&im);
            api_images_clear(&c->images);
            return rc;
        }
    }
    if (!(rc = seer_tokenize(c->m, prompt, strlen(prompt), 1, &ids, &n)) &&
        !(rc = api_fuse(c->m, ids, n, &c->images, &fused)))
        rc = generate(c, fused.ids, fused.n_ids, &p, false, &fused, r);
    api_images_clear(&c->images);
    api_fused_clear(&fused);
    free(ids);
    return rc;
}

int seer_image_measure(const seer_model *m, const seer_image_input *image, seer_image_info *info)
{
    struct image_rgb8 im;
    int rc = api_image_decode(&m->limits, image, &im);
    if (rc)
        return rc;
    rc = api_image_measure_rgb(m->img_min_pixels, m->img_max_pixels, im.width, im.height, info);
    image_rgb8_free(&im);
    if (rc && image->path) { /* the resize rule knows only sizes: name the file */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", seer_last_error());
        rc = seer_err(rc, "%s: %s", image->path, msg);
    }
    return rc;
}

int seer_chat_generate(seer_context *c, const seer_generate_params *params, seer_result *r)
{
    seer_generate_params p = params ? *params : seer_generate_params_default();
    char *full = NULL, *prev = NULL, *gen = NULL;
    size_t full_len, prev_len, gen_len;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    struct sbuf fed = {0};
    struct api_fused fused = {0};
    chat_range *ranges = NULL;
    size_t n_ranges = 0;
    int rc;
    memset(r, 0, sizeof *r);
    if ((rc = render(c, c->n_hist, true, p.think != 0, &full, &full_len, &ranges, &n_ranges)))
        return rc;
    /* The new text: what the rendering adds after the text the state already holds. */
    const char *suffix = full;
    if (c->fed_text && full_len >= c->fed_len && !memcmp(full, c->fed_text, c->fed_len)) {
        suffix = full + c->fed_len;
    } else if (c->fed_text) {
        /* The model's last reply renders differently from how it was generated (e.g. whitespace
           the template trims): keep the state and append the new turns after it. */
        size_t n_old = c->n_hist;
        while (n_old > 0 && strcmp(c->hist[n_old - 1].role, "assistant"))
            n_old--;
        if ((rc = render(c, n_old, false, false, &prev, &prev_len, NULL, NULL)))
            goto done;
        if (prev_len > full_len || memcmp(full, prev, prev_len)) {
            rc = seer_err(SEER_EINVAL, "the conversation history was changed: start a new context");
            goto done;
        }
        suffix = full + prev_len;
        LOG_DEBUG("chat", "last reply re-renders differently; appending %zu bytes after the state",
                  full_len - prev_len);
    }
    if ((rc = tokenize_markup(c->m->tok, full, full_len, (size_t)(suffix - full), ranges, n_ranges, &ids, &n_ids)))
        goto done;
    /* the new turns' image placeholders take the queued images, in order */
    rc = api_fuse(c->m, ids, n_ids, &c->images, &fused);
    if (!rc)
        rc = api_fuse_videos(c->m, &fused, &c->videos);
    api_images_clear(&c->images);
    api_videos_clear(&c->videos);
    if (rc || (rc = generate(c, fused.ids, fused.n_ids, &p, p.think != 0, &fused, r)))
        goto done;
    if (r->prompt_cut) {
        /* cancelled inside the new prompt: the state holds a part of a turn that no rendering
           describes. Forget the state (the next turn feeds the whole conversation again) and the
           unanswered message. */
        if ((rc = qwen35_state_reset(c->m->lm, c->st)))
            goto done;
        c->n_fed = 0;
        c->n_pending = 0;
        seer_freep(&c->fed_text);
        c->fed_len = 0;
        while (c->n_hist && (!strcmp(c->hist[c->n_hist - 1].role, "user") || !strcmp(c->hist[c->n_hist - 1].role, "tool"))) {
            c->n_hist--;
            free(c->hist[c->n_hist].role), free(c->hist[c->n_hist].content);
        }
        goto done;
    }
    /* What the state now holds: the rendered prompt, then every generated token and the pending
       stop token, decoded exactly (special tokens included). */
    if ((rc = tok_decode(c->m->tok, r->tokens, r->n_tokens, false, &gen, &gen_len)) ||
        (rc = sbuf_add(&fed, full, full_len)) || (rc = sbuf_add(&fed, gen, gen_len)))
        goto done;
    for (size_t i = 0; i < c->n_pending && rc == SEER_OK; i++) {
        size_t pl;
        const char *piece = tok_piece(c->m->tok, c->pending[i], &pl);
        if (piece)
            rc = sbuf_add(&fed, piece, pl);
    }
    if (rc == SEER_OK && (rc = seer_chat_add(c, "assistant", gen)) == SEER_OK) {
        free(c->fed_text);
        c->fed_text = fed.s;
        c->fed_len = fed.n;
        fed.s = NULL;
    }
done:
    if (rc)
        seer_result_clear(r);
    free(full), free(prev), free(gen), free(ids), free(fed.s), free(ranges);
    api_fused_clear(&fused);
    return rc;
}
