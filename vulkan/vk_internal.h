/* vk_internal.h — what the Vulkan backend's files share: the device caps read once, the backend
   context, buffers and storage windows, the kernel registry and the recording API. Each Vk object
   has one owner and one destroy site, named next to its field. Divisions, in creation order:
     device.c    instance, enumeration, caps, logical device + queue    (vk_device_open/close)
     memory.c    buffers, staging, storage windows (vk_buffer_*, vk_upload/download, vk_split/bind)
     pipeline.c  kernel registry table, descriptor layouts, pipelines on first use
     cmd.c       command buffer, descriptor pool, barriers, submit + fence wait
     backend.c   struct backend_i;  op_*.c one record function per op (vk_matmul, …) */
#ifndef SEER_VULKAN_VK_INTERNAL_H
#define SEER_VULKAN_VK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* vulkan_core.h, not vulkan.h: the repository root is on the include path, so <vulkan/vulkan.h>
   would find our own vulkan/vulkan.h. Compute needs nothing from the platform (WSI) headers. */
#include <vulkan/vulkan_core.h>

#include "core/backend.h"
#include "vulkan/vulkan.h"

/* maxComputeSharedMemorySize every Vulkan device offers (the spec's required minimum). */
#define VK_MIN_SHARED_BYTES 16384u

/* ---- caps: device limits and features, read once at creation (device.c) ----------------- */
struct vk_caps {
    uint32_t api_version;
    uint32_t vendor_id;
    enum vk_device_kind kind;
    uint32_t subgroup_size;
    uint64_t max_storage_range;      /* bytes one storage descriptor may cover (after the override) */
    uint32_t storage_align;          /* minStorageBufferOffsetAlignment, at least 4 (our word size) */
    uint32_t max_push_bytes;
    uint32_t max_wg_invocations;
    uint32_t max_wg_size[3];
    uint32_t max_wg_count[3];
    uint32_t shared_bytes;           /* maxComputeSharedMemorySize, or the (smaller) override */
    uint64_t max_alloc;              /* maxMemoryAllocationSize */
    uint32_t device_id;
    uint8_t cache_uuid[VK_UUID_SIZE];  /* pipelineCacheUUID: a saved cache must match it */
    /* optional features, enabled on the device when present; no kernel requires any of them, and
       a kernel that uses one (the subgroup matvec) has a plain twin */
    bool fp16, storage16, int_dot, coopmat;
    bool int_dot_fast;                    /* integerDotProduct4x8BitPackedSignedAccelerated */
    bool subgroup_arith;                  /* cleared by vk_backend_params.plain_kernels */
    /* Prefill matmuls run the matvec kernel over groups of 8 x rows instead of the tiled matmul:
       set on CPU implementations (lavapipe), where shared memory is ordinary memory and the tiled
       kernel's shared-memory loads (one per 2 MACs) cost more than the matvec's register reuse
       (one load per ~5 MACs): measured 2x per MAC there (docs/PERFORMANCE.md). Cleared by
       plain_kernels, so the tests cover the tiled kernel on such devices too. */
    bool matvec_prefill;
    bool ext_float16_int8, ext_int_dot;   /* extensions to enable (pre-1.2 / pre-1.3 devices) */
    bool ext_memory_budget;               /* VK_EXT_memory_budget: the driver's free-memory figures */
};

/* ---- buffers (memory.c) ------------------------------------------------------------------ */
struct vk_buffer {
    VkBuffer buffer;        /* vk_buffer_destroy */
    VkDeviceMemory memory;  /* vk_buffer_destroy */
    VkDeviceSize size;      /* bytes allocated: the request rounded up to 4 */
    VkDeviceSize mem_bytes; /* bytes of `memory` (the driver's requirement, >= size) */
    uint32_t heap;          /* the memory heap `memory` came from */
    void *mapped;           /* persistent mapping when the memory is host-visible and coherent */
    bool host_cached;       /* host reads through `mapped` are fast (not write-combined) */
};

/* One storage descriptor: `range` bytes of `buffer` from `offset` (a multiple of
   caps.storage_align, range <= caps.max_storage_range). `base` is the index, in the shader's
   element unit, of the tensor's element 0 relative to `offset`, modulo 2^32: it wraps "negative"
   when the window starts past element 0, and the shader's uint arithmetic wraps back. */
struct vk_binding {
    VkBuffer buffer;
    VkDeviceSize offset, range;
    uint32_t base;
    bool write;
};

/* How an op walks a tensor: rows r = i1 + ne1·(i2 + ne2·i3), row r starting nb1·i1 + nb2·i2 +
   nb3·i3 bytes after element 0 and touching row_bytes. A stride is 0 where the op broadcasts. */
struct vk_rows {
    const tensor *t;
    int64_t ne1, ne2, ne3;
    size_t nb1, nb2, nb3;
    size_t row_bytes;
};

/* ---- kernels and pipelines (pipeline.c) ------------------------------------------------- */
/* Kernels that read weights come in one build per weight dtype: a family (matvec, its subgroup
   twin, matmul, get_rows) × every dtype before DT_I32, numbered first, family-major
   (vk_weight_kernel); pipeline.c makes them from one [family][dtype] table of blobs. */
enum vk_family { VK_FAM_MATVEC, VK_FAM_MATVEC_SG, VK_FAM_MATMUL, VK_FAM_GET_ROWS, VK_FAM_COUNT };
#define VK_N_WTYPES DT_I32 /* weight dtypes: DT_F32 … DT_Q6_K */

enum vk_kernel {
    VK_K_WEIGHT_COUNT = VK_FAM_COUNT * VK_N_WTYPES, /* 0 .. VK_K_WEIGHT_COUNT−1: weight kernels */
    VK_K_NORM = VK_K_WEIGHT_COUNT,               /* op_norm.c: every norm, by variant */
    VK_K_UNARY, VK_K_CPY, VK_K_SOFTMAX,          /* op_elementwise.c */
    VK_K_ROPE,                                   /* op_rope.c */
    VK_K_BINARY,
    VK_K_CONV,                                   /* op_conv.c */
    VK_K_GDN_RECURRENT, VK_K_GDN_PREP, VK_K_GDN_STATE, /* op_gdn.c */
    VK_K_ATTN_F32, VK_K_ATTN_F16, VK_K_ATTN_Q8_0, VK_K_ATTN_COMBINE, /* op_attention.c: decode, */
    VK_K_ATTN_TILED_F32, VK_K_ATTN_TILED_F16, VK_K_ATTN_TILED_Q8_0, /*   and many query rows */
    VK_K_QUANTIZE_ACT, VK_K_QUANTIZE_ACT_Q8K,    /* op_matmul.c, not exact: activations to int8 */
    VK_K_MV_DOT_Q8_0, VK_K_MV_DOT_Q4_0, VK_K_MV_DOT_Q4_K, VK_K_MV_DOT_Q5_K, VK_K_MV_DOT_Q6_K, /* int dot */
    VK_K_MV_DOT_Q4_K_WIDE, VK_K_MV_DOT_Q5_K_WIDE, /*   read in 16-byte pieces (GPUs) */
    VK_K_MV_F16_Q8_0, VK_K_MV_F16_Q4_0,          /*   the fp16-arithmetic matvec */
    VK_K_Q8_SPLIT,                               /* op_matmul.c: Q8_0 rows to TL_Q8_0_SPLIT, and */
    VK_K_MV_DOT_Q8_0_WIDE, VK_K_MATMUL_Q8_0_SPLIT, VK_K_GET_ROWS_Q8_0_SPLIT, /* its readers */
    VK_K_MV_WIDE_F32, VK_K_MV_WIDE_F16, VK_K_MV_WIDE_BF16, /* matvec_sg on float rows, 16-byte pieces */
    VK_KERNEL_COUNT
};

/* The kernel of `family` for weights of dtype t (t < VK_N_WTYPES). */
static inline enum vk_kernel vk_weight_kernel(enum vk_family family, enum dtype t)
{
    return (enum vk_kernel)((int)family * VK_N_WTYPES + (int)t);
}

/* 8: the GDN kernels bind q, k, v, g, beta, state, out (+ scratch); every device we target
   offers at least that many storage buffers per stage (Vulkan's minimum is 4). */
#define VK_MAX_BINDINGS 8
#define VK_MAX_SPEC 8
#define VK_MAX_VARIANTS 8 /* unary.comp: 6 unary ops + scale; matvec: N = 1..8 */
#define VK_MATVEC_MAX_N 8 /* x rows the matvec kernel takes (one build per count); more: matmul */

/* Specialization constant ids; each shader declares the ones it uses with these constant_ids. */
enum { VK_SPEC_WG = 0, VK_SPEC_MM_BM = 1, VK_SPEC_MM_BN = 2, VK_SPEC_MM_BK = 3, VK_SPEC_BINARY_OP = 1 };
enum { VK_SPEC_MV_NR = 1, VK_SPEC_MV_NX = 2, VK_SPEC_NORM_MODE = 1, VK_SPEC_UNARY_OP = 1, VK_SPEC_CPY_DST = 1 };
enum { VK_SPEC_CONV_TB = 1, VK_SPEC_GDN_RPL = 1, VK_SPEC_ATTN_HDM = 1, VK_SPEC_ATTN_BR = 2, VK_SPEC_ATTN_BK = 3 };

struct vk_pipeline {
    VkPipeline pipeline;       /* vk_pipelines_destroy */
    VkPipelineLayout layout;   /* the kernel's (struct vk_kernel_objs owns it) */
    VkDescriptorSetLayout dsl; /* likewise */
    uint32_t n_bindings, push_bytes;
    uint32_t spec[VK_MAX_SPEC]; /* the values it was specialised with (record functions read the
                                   tile sizes from here) */
};

/* Per kernel: its layouts (shared by all variants) and the variants made so far. */
struct vk_kernel_objs {
    VkDescriptorSetLayout dsl; /* vk_pipelines_destroy */
    VkPipelineLayout layout;   /* vk_pipelines_destroy */
    struct vk_pipeline variants[VK_MAX_VARIANTS];
};

/* ---- command recording (cmd.c) ----------------------------------------------------------- */
#define VK_HAZARD_MAX 48

struct vk_range { VkBuffer buffer; VkDeviceSize lo, hi; };

struct vk_cmd {
    VkCommandPool pool;         /* vk_cmd_deinit */
    VkCommandBuffer cb;         /* freed with pool */
    VkFence fence;              /* vk_cmd_deinit */
    VkDescriptorPool dpool;     /* vk_cmd_deinit; reset after every submit */
    uint32_t sets_left;         /* descriptor sets still free in dpool */
    bool recording;
    /* Accesses since the last barrier, to decide whether the next dispatch needs one. */
    struct vk_range reads[VK_HAZARD_MAX], writes[VK_HAZARD_MAX];
    uint32_t n_reads, n_writes;
};

/* ---- the backend context ----------------------------------------------------------------- */
struct vk_ctx {
    VkInstance instance;                /* vk_device_close, last */
    VkDebugUtilsMessengerEXT messenger; /* vk_device_close */
    VkPhysicalDevice phys;
    VkDevice device;                    /* vk_device_close, after every child */
    VkQueue queue;
    uint32_t queue_family;
    struct vk_caps caps;
    struct vk_device_info info;
    VkPhysicalDeviceMemoryProperties mem;
    uint64_t allocated_bytes[VK_MAX_MEMORY_HEAPS]; /* what this backend holds, per heap (memory.c) */
    bool force_staging;
    uint64_t memory_limit;              /* vk_backend_params.memory_limit_override; 0 = none */
    long fail_alloc_after, lose_device_after; /* vk_backend_params' test injection countdowns */
    struct vk_buffer staging;           /* host-visible bounce buffer; vk_staging_deinit */
    struct vk_cmd cmd;
    VkPipelineCache pipeline_cache;     /* vk_pipelines_init; vk_pipelines_destroy */
    char *pipeline_cache_path;          /* owned copy of the param, NULL when none */
    struct vk_kernel_objs kernels[VK_KERNEL_COUNT];
    bool validation_active;
    _Atomic uint64_t validation_errors; /* written by the layer's callback, maybe on its threads */
    int lost;                           /* a submit or wait failed: the device state is unknown */
    struct vk_buffer scratch;           /* ops' intermediates (GDN chunks, split-K partials); vk_scratch_deinit */
    bool exact;                         /* matmul keeps f32 activations and arithmetic (backend_vulkan_set_exact) */
    enum vk_matvec_force force_matvec;  /* vk_backend_params.force_matvec */
    /* op_matmul_n's products share x: the int-dot path rounds rows [r0, r1) of it into the scratch
       buffer once (`bind`; per 256 values for Q4_K when `k256`) while `reuse` is set (op_matmul.c) */
    struct { bool reuse, have, k256; int64_t r0, r1; struct vk_binding bind; } qx;
};

static inline struct vk_ctx *vk_ctx_of(backend *be) { return (struct vk_ctx *)be->ctx; }

/* device.c */
const char *vk_result_name(VkResult r);
/* Sets last-error "vulkan: <call>: <VK_ERROR_…>" and returns SEER_EDEVICE (SEER_ENOMEM for the
   out-of-memory results, so callers can tell a full device from a broken one). */
int vk_fail(VkResult r, const char *call);
/* The same for a call on an open device, naming it and what was being done: "vulkan: <device>:
   out of device memory (VK_ERROR_OUT_OF_DEVICE_MEMORY) in <what>" or "… the device was lost …". */
int vk_fail_on(const struct vk_ctx *vk, VkResult r, const char *what);
/* Test injection (vk_backend_params.fail_alloc_after / lose_device_after): counts *countdown down
   and is true when it reaches zero on this call. */
static inline bool vk_inject(long *countdown) { return *countdown > 0 && --*countdown == 0; }
int vk_device_open(struct vk_ctx *vk, const struct vk_backend_params *p);
void vk_device_close(struct vk_ctx *vk);

/* memory.c */
int vk_buffer_create(struct vk_ctx *vk, VkDeviceSize size, bool staging, struct vk_buffer *out);
/* Device-local memory still free for buffers, and the size of the heap it is in (backend.h's
   `memory` hook): the largest device-local heap, with the driver's budget minus usage when
   VK_EXT_memory_budget is enabled (it counts other processes too), else its size minus what this
   backend has allocated from it. */
void vk_memory_free(const struct vk_ctx *vk, uint64_t *free_bytes, uint64_t *total_bytes);
void vk_buffer_destroy(struct vk_ctx *vk, struct vk_buffer *b);
int vk_staging_init(struct vk_ctx *vk);
void vk_staging_deinit(struct vk_ctx *vk);
/* Host <-> buffer copies; any byte offset and size. Both submit pending work first (eager
   semantics: the copy lands after every op recorded before it) and return when done. */
int vk_upload(struct vk_ctx *vk, struct vk_buffer *dst, VkDeviceSize off, const void *src, size_t n);
int vk_download(struct vk_ctx *vk, struct vk_buffer *src, VkDeviceSize off, void *dst, size_t n);
/* Row walks over a tensor (struct vk_rows). vk_rows_of: the tensor's own rows (ne[1..3], nb[1..3]).
   vk_rows_check: the tensor is in a buffer of `be`, its offset and strides are whole `unit`s (what
   the shader indexes in) and its indices fit 32 bits. */
struct vk_rows vk_rows_of(const tensor *t);
int vk_rows_check(const backend *be, const struct vk_rows *r, size_t unit, const char *op);
/* Splitting rule: a descriptor window always holds whole rows — a row never straddles two
   windows. From row r0, finds the largest r1 <= r_end (and <= r0 + max_rows) such that rows
   [r0, r1) of every walk in `walks` fit one window each. SEER_EUNSUPPORTED when even one row
   does not fit, or a tensor too large for one window has rows whose offsets are not increasing. */
int vk_split(const struct vk_ctx *vk, const struct vk_rows *walks, int n, int64_t r0, int64_t r_end,
             int64_t max_rows, int64_t *r1, const char *op);
/* The window covering rows [r0, r1) of a walk (as accepted by vk_split), indexed in `unit`s. */
struct vk_binding vk_bind(const struct vk_ctx *vk, const struct vk_rows *w, int64_t r0, int64_t r1,
                          size_t unit, bool write);
/* A read-only binding of a whole small tensor (ids, positions) that an op does not split;
   SEER_EUNSUPPORTED naming it when it exceeds one storage window. */
int vk_bind_whole(const struct vk_ctx *vk, const struct vk_rows *w, size_t unit, const char *op, struct vk_binding *out);
/* Element strides of a walk in `unit`s (as the shader indexes), valid after vk_rows_check. */
static inline uint32_t vk_stride(size_t nb, size_t unit) { return (uint32_t)(nb / unit); }

/* pipeline.c */
/* The pipeline of kernel k, specialisation `variant`, created on first use. SEER_EUNSUPPORTED
   when the kernel's supports() rejects the device. */
int vk_pipeline_get(struct vk_ctx *vk, enum vk_kernel k, uint32_t variant, const struct vk_pipeline **out);
/* attention_tiled.comp's tile for head-dim class `variant` (head dims up to 64 << variant): false when
   none fits the device's shared memory, and op_attention keeps attention.comp for that class. */
bool vk_attn_tiled_tile(const struct vk_caps *c, uint32_t variant, uint32_t *br, uint32_t *bk);
/* Creates the pipeline cache, seeded from vk->pipeline_cache_path when that file matches. */
int vk_pipelines_init(struct vk_ctx *vk);
/* Writes the cache back (when a path is set), then destroys every pipeline and layout. */
void vk_pipelines_destroy(struct vk_ctx *vk);

/* cmd.c */
int vk_cmd_init(struct vk_ctx *vk);
void vk_cmd_deinit(struct vk_ctx *vk);
int vk_cmd_begin(struct vk_ctx *vk); /* opens the command buffer if it is not already */
/* Records one dispatch with its bindings and push constants, preceded by a barrier when it
   touches memory an earlier dispatch since the last barrier wrote (or writes what one read). */
int vk_cmd_dispatch(struct vk_ctx *vk, const struct vk_pipeline *pl, const struct vk_binding *b,
                    const void *push, uint32_t gx, uint32_t gy, uint32_t gz);
/* Records a write of n host bytes (n and off multiples of 4, n <= VK_UPDATE_MAX) into dst at off,
   in stream order: dispatches recorded before see the old bytes, later ones the new, with no
   submit in between. vk_upload takes this path up to VK_INLINE_UPLOAD bytes: a decode step's
   token ids and positions (16 bytes), so the step stays one submit; a prefill micro-batch's few
   KiB wait for one submit, nothing next to the micro-batch's work (and the bytes are stored in
   the command buffer, which is meant for small updates). */
#define VK_UPDATE_MAX 65536 /* vkCmdUpdateBuffer's limit */
#define VK_INLINE_UPLOAD 1024
int vk_cmd_update(struct vk_ctx *vk, VkBuffer dst, VkDeviceSize off, const void *src, VkDeviceSize n);
/* Records a buffer copy (transfers; see vk_upload). */
void vk_cmd_copy(struct vk_ctx *vk, VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off,
                 VkDeviceSize n);
/* Ends, submits and waits for what was recorded; a no-op when nothing was. SEER_EDEVICE once a
   submit or wait has failed (the device is then unusable: recreate the backend). */
int vk_cmd_submit(struct vk_ctx *vk);
/* A 1-D count of workgroups as a 2-D grid within maxComputeWorkGroupCount (shaders linearise
   with gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x). */
void vk_grid(const struct vk_ctx *vk, uint64_t groups, uint32_t *gx, uint32_t *gy);
/* The most workgroups vk_grid can express. */
uint64_t vk_grid_max(const struct vk_ctx *vk);

/* scratch.c: device memory an op's dispatches pass intermediates through. The buffer is shared by
   every op and grown on demand (pending work is submitted first, since it may use the old one);
   the cmd.c hazard tracking orders one op's use after another's. At least `bytes` bytes, within
   one storage window; SEER_EUNSUPPORTED when more than that is asked for. */
int vk_scratch_get(struct vk_ctx *vk, VkDeviceSize bytes, const char *op, struct vk_buffer **out);
void vk_scratch_deinit(struct vk_ctx *vk);

/* What op_*.c can run, for struct backend_i.supports (backend.c): a weight dtype with kernels,
   and the largest attention head dim (three head-dim classes up to 64 << 2, attention.comp). */
bool vk_weight_supported(enum dtype t);
#define VK_ATTN_HEAD_DIM_MAX 256
/* struct backend_i.weight_prepare (op_matmul.c): Q8_0 matrices to the split layout */
int vk_weight_prepare(backend *be, tensor *t);

/* op_*.c: one record function per op, vk_<name> of type op_<name>_fn (slots of struct backend_ops) */
#define VK_OP_DECL(name, NAME) op_##name##_fn vk_##name;
SEER_OPS(VK_OP_DECL)
#undef VK_OP_DECL

#endif
