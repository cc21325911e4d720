/* backend.h — the compute backend interface (design.md "Compute layer").
   A backend owns buffers; tensors live in a buffer at an offset. Model code calls the op_*
   functions of core/ops.h, which check shapes and dispatch to the backend's slot for that op.
   Recording is eager: on the CPU an op runs when called; on Vulkan it appends a dispatch to the
   current command buffer, and backend_sync() submits and waits. Tensor contents are only
   guaranteed visible to tensor_get after backend_sync (tensor_get syncs itself if needed).

   Each backend fills a struct backend_i. Slots marked (optional) may be NULL; an op slot that is
   NULL makes op_* fail with SEER_EUNSUPPORTED naming the backend and op. */
#ifndef SEER_CORE_BACKEND_H
#define SEER_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

typedef struct backend backend;
typedef struct backend_buffer backend_buffer;

struct backend_buffer {
    backend *be;
    size_t size;  /* bytes */
    void *host;   /* host address of byte 0 when the buffer is host-visible, else NULL */
    void *ctx;    /* backend-private */
    bool borrowed; /* wraps caller memory (e.g. an mmapped file): not freed with the buffer */
};

enum unary_op {
    UNARY_SILU,      /* x * sigmoid(x) */
    UNARY_GELU_TANH, /* 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))  (vision block MLP, spec §4.5) */
    UNARY_GELU_ERF,  /* 0.5x(1 + erf(x/sqrt 2))                        (merger MLP, spec §4.6) */
    UNARY_SIGMOID,   /* 1/(1+e^-x) */
    UNARY_SOFTPLUS,  /* log(1+e^x), x for x > 20 as PyTorch (spec §2.5 step 4) */
    UNARY_EXP,
    UNARY_COUNT
};

enum binary_op { BINARY_ADD, BINARY_MUL, BINARY_COUNT };

/* Text MRoPE (spec §3.3): rotate-half over the first n_rot dims of each head; frequency i
   (0..n_rot/2-1) uses inv_freq = theta^(-2i/n_rot) and the position of an axis chosen by the
   interleaved sections rule: axis 0 (T) by default, axis a in {1,2} for i = a, a+3, … < 3*sections[a]. */
struct rope_text_params {
    int n_rot;        /* rotated dims per head (64) */
    float theta;      /* rope_theta (1e7) */
    int sections[3];  /* mrope_section (11, 11, 10) */
};

/* Masks for op_attention. CAUSAL: query t (0-based in this call) sees keys 0..q_pos0+t.
   SEGMENTS: query i sees key j iff seg[i] == seg[j] (vision tower, spec §4.5 step 4). */
enum attn_mask_kind { ATTN_CAUSAL, ATTN_SEGMENTS };
struct attn_mask {
    enum attn_mask_kind kind;
    int64_t q_pos0;      /* CAUSAL: index of this call's first query in the key sequence */
    const tensor *seg;   /* SEGMENTS: i32 {T} segment id per token (queries and keys alike) */
};

/* Which key head a value head reads when Hv > Hk (spec §2.5 step 5). HF checkpoints group value
   heads by key head: v-head j reads key head j/(Hv/Hk). llama.cpp's GGUF converter reorders
   value heads to a tiled order instead: j reads j mod Hk (anchor §1.4 item 6). */
enum gdn_head_order { GDN_V_GROUPED, GDN_V_TILED };

/* One slot per op; contracts are in core/ops.h next to each op_* wrapper. */
struct backend_ops {
    int (*matmul)(backend *be, tensor *out, const tensor *w, const tensor *x);
    int (*get_rows)(backend *be, tensor *out, const tensor *table, const tensor *ids);
    int (*binary)(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b);
    int (*unary)(backend *be, enum unary_op op, tensor *out, const tensor *x);
    int (*scale)(backend *be, tensor *out, const tensor *x, float s);
    int (*cpy)(backend *be, tensor *dst, const tensor *src);
    int (*rmsnorm)(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps);
    int (*rmsnorm_gated)(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps);
    int (*layernorm)(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps);
    int (*l2norm)(backend *be, tensor *out, const tensor *x, float eps);
    int (*softmax)(backend *be, tensor *out, const tensor *x, float scale);
    int (*rope_text)(backend *be, tensor *out, const tensor *x, const tensor *pos,
                     const struct rope_text_params *p);
    int (*rope_vision)(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta);
    int (*conv1d_causal)(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state);
    int (*gdn_recurrent)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                         const tensor *g, const tensor *beta, tensor *state, float scale,
                         enum gdn_head_order order);
    int (*gdn_chunked)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                       const tensor *g, const tensor *beta, tensor *state, float scale,
                       enum gdn_head_order order);
    int (*attention)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                     float scale, const struct attn_mask *mask);
};

struct backend_i {
    const char *name; /* "cpu", "vulkan" */
    void (*free)(backend *be);
    int (*buffer_alloc)(backend *be, size_t size, backend_buffer **out);
    /* (optional) wrap host memory (an mmapped weight file) without copying */
    int (*buffer_from_host)(backend *be, void *ptr, size_t size, backend_buffer **out);
    void (*buffer_free)(backend_buffer *buf);
    /* copy n bytes between host memory and the tensor's bytes starting `off` bytes into it;
       the tensor must be contiguous over that range */
    int (*tensor_set)(backend *be, tensor *t, const void *src, size_t off, size_t n);
    int (*tensor_get)(backend *be, const tensor *t, void *dst, size_t off, size_t n);
    int (*sync)(backend *be); /* submit what was recorded and wait */
    /* (optional) memory the backend's buffers can still use, and its total; NULL = unknown */
    int (*memory)(backend *be, uint64_t *free_bytes, uint64_t *total_bytes);
    struct backend_ops ops;
};

struct backend {
    const struct backend_i *iface;
    void *ctx;             /* backend-private */
    size_t alignment;      /* tensor offsets inside a buffer are multiples of this */
    size_t max_buffer_size; /* largest single buffer_alloc (a tensor never exceeds it) */
    char description[128]; /* "cpu (2 threads)", "vulkan: llvmpipe (LLVM 15.0.6, 256 bits)" */
};

/* Lifecycle: backends are created by backend_cpu_create (core/cpu/cpu.h) or
   backend_vulkan_create (vulkan/vulkan.h); backend_free accepts NULL. */
void backend_free(backend *be);
const char *backend_name(const backend *be);

int backend_buffer_alloc(backend *be, size_t size, backend_buffer **out);
int backend_buffer_from_host(backend *be, void *ptr, size_t size, backend_buffer **out);
void backend_buffer_free(backend_buffer *buf);

/* Places t (already shaped by tensor_init) at `offset` in buf; fails if it does not fit or the
   offset is misaligned. */
int backend_tensor_place(tensor *t, backend_buffer *buf, size_t offset);
/* Allocates a dedicated buffer for t and places it at offset 0 (weights, KV caches, states). */
int backend_tensor_alloc(backend *be, tensor *t, backend_buffer **out_buf);

int backend_tensor_set(tensor *t, const void *src, size_t off, size_t n);
int backend_tensor_get(const tensor *t, void *dst, size_t off, size_t n);
/* Writes/reads all of a contiguous tensor as f32 values, converting from/to its dtype (F32, F16,
   BF16, I32 (value cast), Q8_0, Q4_K on write; any dtype on read). For tests and loaders. */
int backend_tensor_set_f32(tensor *t, const float *src);
int backend_tensor_get_f32(const tensor *t, float *dst);
int backend_sync(backend *be);
/* Free and total memory for buffers (host RAM for the CPU, device-local heaps for a GPU);
   SEER_EUNSUPPORTED when the backend cannot tell. */
int backend_memory(backend *be, uint64_t *free_bytes, uint64_t *total_bytes);
/* The name of the first op slot the backend leaves empty, or NULL when it has them all. */
const char *backend_missing_op(const backend *be);

#endif
