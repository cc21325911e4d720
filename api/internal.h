/* internal.h — what the public handles hold (include/seer.h): api/model.c (models, tokens) and
   api/generate.c (contexts, chat history, the generation loop). api/ sits above lm/ (and vision/):
   it may include them, they never include api/. */
#ifndef SEER_API_INTERNAL_H
#define SEER_API_INTERNAL_H

#include "lm/chat.h"
#include "lm/qwen35.h"
#include "lm/tokenizer.h"
#include "seer.h"

struct seer_model {
    backend *be;
    qwen35_model *lm;
    tokenizer *tok;
    chat_template_info tmpl_info;    /* what the model's own template says (defaults when absent) */
    int64_t n_vocab_real;            /* tokenizer length: head rows past it are padding (spec §2.7) */
    int32_t id_im_end, id_endoftext; /* stop tokens (spec §6.1) */
    int32_t id_think_end;            /* </think>: where hidden reasoning ends */
};

struct chat_msg {
    char *role, *content;
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
};

#endif
