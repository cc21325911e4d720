/* internal.h — what the public handles hold (include/seer.h): api/model.c (models, tokens) and
   api/generate.c (contexts, chat history, the generation loop). api/ sits above lm/ (and vision/):
   it may include them, they never include api/. */
#ifndef SEER_API_INTERNAL_H
#define SEER_API_INTERNAL_H

#include <pthread.h>

#include "api/video.h"
#include "api/vision.h"
#include "core/error.h"
#include "lm/chat.h"
#include "lm/qwen35.h"
#include "lm/tokenizer.h"
#include "media/decode.h"
#include "seer.h"
#include "vision/vit.h"

/* A lock taken in turn, first come first served (a ticket lock). A thread that releases the device
   and asks again (between two prompt micro-batches or tower blocks) queues behind the threads
   already waiting, so a server's decode step gets its turn there; a plain mutex makes no such
   promise, and the thread that just let go usually wins it back. */
struct api_turns {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next, serving; /* the next ticket handed out; the ticket whose turn it is */
};

struct seer_model {
    char *path;                      /* as given to seer_model_load: names the model in messages */
    bool vocab_only;                 /* loaded without weights (seer_model_params.vocab_only): be is
                                        NULL, lm holds the configuration only */
    backend *be;
    qwen35_model *lm;
    tokenizer *tok;
    chat_template_info tmpl_info;    /* what the model's own template says (defaults when absent) */
    int64_t n_vocab_real;            /* tokenizer length: head rows past it are padding (spec §2.7) */
    int32_t id_im_end, id_endoftext; /* stop tokens (spec §6.1) */
    int32_t id_think_end;            /* </think>: where hidden reasoning ends */
    int32_t id_image_pad, id_video_pad; /* placeholders expanded per image / frame pair (spec §5.4) */
    char *vision_src;                /* the tower's file: the HF directory or the mmproj GGUF; NULL for
                                        a text-only model */
    vit_model *vit;                  /* the vision tower's weights once an image or video needed them
                                        (api_vision_tower), else NULL */
    pthread_mutex_t vit_lock;        /* guards loading vit: contexts of one model may run on several
                                        threads (seer.h THREADING) */
    int64_t img_min_pixels, img_max_pixels; /* the smart_resize window (spec §5.2) */
    enum vis_resize resize;          /* whose bicubic sizes images and frames (seer_model_params.resize) */
    struct media_limits limits;      /* what an image file may cost to decode */
    struct video_settings video_defaults; /* spec §5.3 sampling (video_preprocessor_config.json) */
    int video_threads;               /* libavcodec threads per video file (seer_model_params.n_threads) */
    struct api_turns device_lock;    /* work on the device (be), one thread at a time: states made,
                                        reset and freed, forward passes, tower encodes, the tower
                                        placed. The backends keep per-device scratch (the CPU's pool
                                        and rounded activations, Vulkan's command buffers), and
                                        contexts of one model may run on several threads (seer.h
                                        THREADING, tests/api/threads.c). Held per forward pass or
                                        frame pair (tower block), so two threads' work interleaves;
                                        never held while taking vit_lock */
};

/* Brackets one piece of device work of model m (its device_lock), first come first served. */
static inline void api_device_lock(struct seer_model *m)
{
    struct api_turns *t = &m->device_lock;
    pthread_mutex_lock(&t->mu);
    const uint64_t mine = t->next++;
    while (t->serving != mine)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
}
static inline void api_device_unlock(struct seer_model *m)
{
    struct api_turns *t = &m->device_lock;
    pthread_mutex_lock(&t->mu);
    t->serving++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* Calls on_progress between two micro-batches of a prefill that holds m's device lock, with the
   lock released: other contexts' forward passes (a server's decode step) run in between, so a long
   prompt stalls them by one micro-batch, not by the whole prompt (docs/SERVING.md). Inline here:
   both api/reply.c and api/vision.c prefill. */
static inline int api_progress_unlocked(struct seer_model *m, const seer_generate_params *p, int64_t done,
                                        int64_t total)
{
    api_device_unlock(m);
    int stop = p->on_progress(done, total, 0, p->user_data);
    api_device_lock(m);
    return stop;
}

/* vit_encode_yielding's `between` for work holding m's device lock: lets other threads' forward
   passes run between two tower blocks. */
static inline void api_device_yield(void *m)
{
    api_device_unlock(m);
    api_device_lock(m);
}

/* The two checks below are inline here, not in model.c: api/vision.c asks them while model.c calls
   vision.c to load, and files must not call each other (scripts/call-cycles.sh). */
/* SEER_EINVAL naming `what` (the public function) when m was loaded with vocab_only, else SEER_OK:
   every entry point that needs weights asks first. */
static inline int api_model_weights(const struct seer_model *m, const char *what)
{
    if (m->vocab_only)
        return seer_err(SEER_EINVAL, "%s: %s was loaded with vocab_only: no weights", what, m->path);
    return SEER_OK;
}
/* SEER_EINVAL "PATH: only a tokenizer: `what` needs the model" when m is a tokenizer alone (a
   vocab_only load of a tokenizer.json: m->lm is NULL), else SEER_OK. */
static inline int api_model_config(const struct seer_model *m, const char *what)
{
    if (!m->lm)
        return seer_err(SEER_EINVAL, "%s: only a tokenizer: %s needs the model (a directory with config.json, or a "
                        "GGUF)", m->path, what);
    return SEER_OK;
}

struct chat_msg {
    char *role, *content;
    size_t n_images; /* image parts rendered before the text (spec §6.2) */
    size_t n_videos; /* video parts, after the images */
};

struct seer_context {
    seer_model *m;
    qwen35_state *st;
    float *logits;           /* [n_vocab]: the distribution after the last token fed */
    int32_t *pending;        /* tokens sampled but not yet fed (the stop token, or the last token
                                of a generation cut short); fed first by the next call */
    size_t n_pending, cap_pending;
    struct chat_msg *hist;   /* the conversation so far */
    size_t n_hist, cap_hist;
    int32_t *fed;            /* every id the state holds, in order [n_fed] (n_ctx capacity) */
    size_t n_fed;
    char *fed_text;          /* the rendered conversation text the state holds (plus pending) */
    size_t fed_len;
    struct api_images images; /* decoded images of messages not yet fed, in order */
    struct api_videos videos; /* videos of messages not yet fed, in order (decoded when fed) */
    struct grammar_vocab *gvocab; /* token trie for structured output (lm/grammar.h), built on first use */
    float *all_logits;       /* tests only (tests/reference/seer_golden.c, NULL otherwise): a prompt's
                                prefill (text or fused) writes every position's logits here, row =
                                the state's position, since seer.h exposes only the last; the caller
                                sizes it [n_ctx][n_vocab] */
    seer_snapshot *turn;     /* where the latest assistant turn began (the state after the messages
                                before it; no KV rows, api/snapshot.h): the template renders that
                                turn differently once a user message follows (its reasoning
                                dropped, spec §6.2), so the next turn goes back here and feeds it
                                again in its final form. NULL before the first reply */
};

/* Where the next rows' logits go when seer_golden asks for every position (c->all_logits), else NULL. */
static inline float *api_all_logits_next(const seer_context *c)
{
    return c->all_logits ? c->all_logits + (size_t)c->st->n_past * (size_t)c->m->lm->cfg.n_vocab : NULL;
}

/* Forgets the history and the text the state holds (api/generate.c); the state itself is kept. */
void api_history_clear(seer_context *c);

#endif
