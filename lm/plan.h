/* plan.h — what a Qwen3.5 text model needs on a device before it is loaded (issue: a model that
   does not fit is refused before loading, with the numbers): weights, KV cache per 1K tokens (the
   full-attention layers only, spec §2.6), GDN recurrent + conv state (spec §2.5), scratch. The
   planner only adds up: each module reports its own bytes (the state's come from
   qwen35_state_bytes). */
#ifndef SEER_LM_PLAN_H
#define SEER_LM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/weights.h"
#include "lm/config.h"

/* The context and micro-batch qwen35_load checks the model against (seer_context_params_default). */
#define QWEN35_PLAN_CTX 4096
#define QWEN35_PLAN_UBATCH 512

struct qwen35_plan {
    uint64_t weight_bytes;     /* every tensor the model uses, as stored (norms and vectors as f32) */
    uint64_t kv_bytes_per_1k;  /* K and V of every attention layer for 1024 tokens (f32) */
    uint64_t gdn_state_bytes;  /* recurrent state [Hv, dk, dv] + conv window per GDN layer (f32) */
    uint64_t scratch_bytes;    /* per-layer intermediates + logits for one micro-batch */
    int64_t n_ctx;             /* the context the total assumes */
    uint64_t total_bytes;      /* weights + KV for n_ctx + state + scratch */
    uint64_t free_bytes, device_bytes; /* what the backend reports; 0 when unknown */
    bool known;                /* free_bytes is meaningful */
};

/* Fills *p for cfg/w with a context of n_ctx tokens and micro-batches of n_ubatch on be (whose
   free memory is queried when it can tell; be may be NULL). */
void qwen35_plan_make(const struct qwen35_config *cfg, const struct weights *w, backend *be, int64_t n_ctx,
                      int64_t n_ubatch, struct qwen35_plan *p);
/* SEER_ENOMEM with every number in the message when the plan does not fit (path names the model). */
int qwen35_plan_check(const struct qwen35_plan *p, const char *path, const char *device);

#endif
