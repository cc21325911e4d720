/* plan.c — memory needed by a Qwen3.5 text model on a device (lm/plan.h). */
#include "lm/plan.h"

#include <string.h>

#include "core/error.h"
#include "lm/qwen35.h"

void qwen35_plan_make(const struct qwen35_config *c, const struct weights *w, backend *be, int64_t n_ctx,
                      int64_t n_ubatch, struct qwen35_plan *p)
{
    *p = (struct qwen35_plan){.n_ctx = n_ctx};
    /* Weights: every tensor in the file except the MTP block and the vision tower, which the text
       model does not load (spec §7, §8). Small vectors are stored f32 on the device, a rounding
       error here. */
    for (int64_t i = 0; w && i < weights_count(w); i++) {
        const char *n = weights_name(w, i);
        if (!strncmp(n, "mtp.", 4) || !strncmp(n, "model.visual.", 13) || strstr(n, ".nextn."))
            continue;
        p->weight_bytes += tensor_nbytes(weights_tensor(w, i));
    }
    struct qwen35_state_bytes sb;
    qwen35_state_bytes(c, n_ubatch, be ? be->alignment : 256, &sb);
    p->kv_bytes_per_1k = sb.kv_per_1k;
    p->gdn_state_bytes = sb.gdn;
    p->scratch_bytes = sb.scratch;
    p->total_bytes = p->weight_bytes + p->kv_bytes_per_1k * (((uint64_t)n_ctx + 1023) / 1024) + p->gdn_state_bytes +
                     p->scratch_bytes;
    p->known = be && backend_memory(be, &p->free_bytes, &p->device_bytes) == SEER_OK;
    if (!p->known)
        seer_err_clear();
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

int qwen35_plan_check(const struct qwen35_plan *p, const char *path, const char *device)
{
    if (!p->known || p->total_bytes <= p->free_bytes)
        return SEER_OK;
    return seer_err(SEER_ENOMEM,
                    "%s: does not fit on %s: needs %.0f MiB (weights %.0f MiB, KV %.1f MiB per 1K tokens × %lld "
                    "tokens, GDN state %.1f MiB, scratch %.0f MiB) but %.0f MiB are free",
                    path, device, mib(p->total_bytes), mib(p->weight_bytes), mib(p->kv_bytes_per_1k),
                    (long long)p->n_ctx, mib(p->gdn_state_bytes), mib(p->scratch_bytes), mib(p->free_bytes));
}
