/* backend.h — the compute backend interface (docs/ARCHITECTURE.md, "Backends and ops").
   A backend owns buffers; tensors live in a buffer at an offset. Model code calls the op_*
   functions of core/ops.h, which check shapes and dispatch to the backend's slot for that op.
   Recording is eager: on the CPU an op runs when called; on Vulkan it appends a dispatch to the
   current command buffer, and backend_sync() submits and waits. Tensor contents are only
   guaranteed visible to tensor_get after backend_sync (tensor_get syncs itself if needed).

   Each backend fills a struct backend_i. Slots marked (optional) may be NULL; an op slot that is
   NULL makes op_* fail with SEER_EUNSUPPORTED naming the backend and op. The op slots come from
   the one list of ops in core/backend_ops.h (SEER_OPS). */
#ifndef SEER_CORE_BACKEND_H
#define SEER_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend_ops.h"
#include "core/ops.h"
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
    /* (optional) whether the backend can run `op` on operands shaped and typed as t[0..n) (the
       op's tensor arguments in order, outputs excluded; descriptors need no bytes). Asked when a
       model is planned, so a dtype or shape it cannot run is refused before the forward pass.
       NULL: every op whose slot is filled runs every input core/ops.c accepts. */
    bool (*supports)(backend *be, enum op_id op, const tensor *const *t, int n);
    /* (optional) rearranges a weight matrix just placed and filled for the backend's fastest
       kernels, in place (t->layout says how; the CPU: Q8_0 matrices for its AMX tiles; Vulkan:
       Q8_0 rows split for 16-byte loads). Leaves t as it is when nothing applies or memory is
       short; an error only when the device failed part way (t's bytes are then unknown). */
    int (*weight_prepare)(backend *be, tensor *t);
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
/* Whether backend_buffer_from_host works on be (host memory used in place, e.g. the CPU). */
bool backend_borrows_host(const backend *be);
void backend_buffer_free(backend_buffer *buf);

/* Places t (already shaped by tensor_init) at `offset` in buf; fails if it does not fit or the
   offset is misaligned. */
int backend_tensor_place(tensor *t, backend_buffer *buf, size_t offset);
/* Allocates a dedicated buffer for t and places it at offset 0 (weights, KV caches, states). */
int backend_tensor_alloc(backend *be, tensor *t, backend_buffer **out_buf);

int backend_tensor_set(tensor *t, const void *src, size_t off, size_t n);
/* Model loaders call this once per weight matrix that only op_matmul and op_get_rows read, after
   its bytes are in place (struct backend_i.weight_prepare); no-op when the backend has none. */
int backend_weight_prepare(tensor *t);
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
/* Whether be can run op on operands t[0..n) (struct backend_i.supports): false when the slot is
   empty or the backend says no. */
bool backend_supports(backend *be, enum op_id op, const tensor *const *t, int n);

#endif
