/* cpu_internal.h — what the CPU op files share: the backend context (thread pool) and the
   declarations of every cpu_* op, one function per op, grouped by file:
     matmul.c      cpu_matmul, cpu_get_rows
     elementwise.c cpu_binary, cpu_unary, cpu_scale, cpu_cpy, cpu_softmax
     norm.c        cpu_rmsnorm, cpu_rmsnorm_gated, cpu_layernorm, cpu_l2norm
     rope.c        cpu_rope_text, cpu_rope_vision
     conv.c        cpu_conv1d_causal
     gdn.c         cpu_gdn_recurrent, cpu_gdn_chunked
     attention.c   cpu_attention
   Shapes were checked by core/ops.c before these run. */
#ifndef SEER_CORE_CPU_INTERNAL_H
#define SEER_CORE_CPU_INTERNAL_H

#include "core/backend.h"
#include "core/threads.h"

struct cpu_ctx {
    threadpool *pool;
};

static inline threadpool *cpu_pool(backend *be) { return ((struct cpu_ctx *)be->ctx)->pool; }

int cpu_matmul(backend *be, tensor *out, const tensor *w, const tensor *x);
int cpu_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids);
int cpu_binary(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b);
int cpu_unary(backend *be, enum unary_op op, tensor *out, const tensor *x);
int cpu_scale(backend *be, tensor *out, const tensor *x, float s);
int cpu_cpy(backend *be, tensor *dst, const tensor *src);
int cpu_softmax(backend *be, tensor *out, const tensor *x, float scale);
int cpu_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps);
int cpu_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps);
int cpu_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps);
int cpu_l2norm(backend *be, tensor *out, const tensor *x, float eps);
int cpu_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p);
int cpu_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta);
int cpu_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state);
int cpu_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                      const tensor *g, const tensor *beta, tensor *state, float scale,
                      enum gdn_head_order order);
int cpu_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                    const tensor *g, const tensor *beta, tensor *state, float scale,
                    enum gdn_head_order order);
int cpu_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                  float scale, const struct attn_mask *mask);

#endif
