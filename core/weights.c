/* weights.c — the GGUF / safetensors tensor view (see weights.h) and the shared shape check that
   lm/config.c and vision/config.c build their per-architecture tables on. */
#include "core/weights.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

struct weights weights_from_gguf(const gguf *g) { return (struct weights){.kind = WEIGHTS_GGUF, .g = g}; }

struct weights weights_from_safetensors(const safetensors *st)
{
    return (struct weights){.kind = WEIGHTS_SAFETENSORS, .st = st};
}

const char *weights_path(const struct weights *w)
{
    return w->kind == WEIGHTS_GGUF ? gguf_path(w->g) : safetensors_path(w->st);
}

int64_t weights_count(const struct weights *w)
{
    return w->kind == WEIGHTS_GGUF ? gguf_n_tensors(w->g) : safetensors_n_tensors(w->st);
}

const tensor *weights_tensor(const struct weights *w, int64_t i)
{
    return w->kind == WEIGHTS_GGUF ? gguf_tensor(w->g, i) : safetensors_tensor(w->st, i);
}

const char *weights_name(const struct weights *w, int64_t i)
{
    return w->kind == WEIGHTS_GGUF ? gguf_tensor_name(w->g, i) : safetensors_tensor_name(w->st, i);
}

const char *weights_file(const struct weights *w, int64_t i)
{
    return w->kind == WEIGHTS_GGUF ? gguf_path(w->g) : safetensors_tensor_file(w->st, i);
}

int64_t weights_find(const struct weights *w, const char *name)
{
    return w->kind == WEIGHTS_GGUF ? gguf_find_tensor(w->g, name) : safetensors_find(w->st, name);
}

int weights_file_shape(const struct weights *w, int64_t i, int64_t shape[WEIGHTS_MAX_DIMS])
{
    if (w->kind == WEIGHTS_SAFETENSORS)
        return safetensors_tensor_shape(w->st, i, shape);
    const tensor *t = gguf_tensor(w->g, i);
    int n = gguf_tensor_n_dims(w->g, i);
    for (int d = 0; d < n; d++)
        shape[d] = t->ne[d];
    return n;
}

void weights_format_shape(char *buf, size_t cap, int rank, const int64_t *shape)
{
    size_t at = 0;
    if (cap == 0)
        return;
    buf[0] = '\0';
    for (int d = -1; d <= rank && at < cap; d++) {
        int n = d < 0 ? snprintf(buf + at, cap - at, "[")
              : d == rank ? snprintf(buf + at, cap - at, "]")
                          : snprintf(buf + at, cap - at, "%s%lld", d ? ", " : "", (long long)shape[d]);
        if (n < 0)
            return;
        at += (size_t)n;
    }
}

/* Effective rank of a GGUF shape: ggml pads ne with 1s, so {4, 1} and {4} are the same. */
static int trim_ones(int rank, const int64_t *shape)
{
    while (rank > 1 && shape[rank - 1] == 1)
        rank--;
    return rank;
}

int weights_expect(const struct weights *w, const char *name, int rank, const int64_t *shape, unsigned flags,
                   bool *found)
{
    char want[160], have[160];
    int64_t i = weights_find(w, name);
    weights_format_shape(want, sizeof want, rank, shape);
    if (found)
        *found = i >= 0;
    if (i < 0) {
        if (flags & WEIGHTS_OPTIONAL)
            return SEER_OK;
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' is missing (expected shape %s)", weights_path(w), name, want);
    }
    int64_t got[WEIGHTS_MAX_DIMS];
    int grank = weights_file_shape(w, i, got);
    int r1 = rank, r2 = grank;
    if (w->kind == WEIGHTS_GGUF) {
        r1 = trim_ones(rank, shape);
        r2 = trim_ones(grank, got);
    }
    bool same = r1 == r2;
    for (int d = 0; same && d < r1; d++)
        same = shape[d] == got[d];
    if (!same) {
        weights_format_shape(have, sizeof have, grank, got);
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' has shape %s, expected %s for this architecture",
                        weights_file(w, i), name, have, want);
    }
    enum dtype t = weights_tensor(w, i)->type;
    if ((flags & WEIGHTS_FLOAT_ONLY) && t != DT_F32 && t != DT_F16 && t != DT_BF16)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' has type %s, expected f32, f16 or bf16", weights_file(w, i),
                        name, dtype_name(t));
    return SEER_OK;
}
