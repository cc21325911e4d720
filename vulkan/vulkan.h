/* vulkan.h — the Vulkan backend's internal API (docs/ARCHITECTURE.md, "The Vulkan backend"): creating the backend
   on a chosen device, and listing the devices the loader sees (used by `seer info --devices`).
   The backend itself is reached through core/backend.h and core/ops.h like any other.
   Every switch is a field of vk_backend_params; the one environment variable read is SEER_VK_FORCE,
   a measuring knob (force_matvec below). */
#ifndef SEER_VULKAN_VULKAN_H
#define SEER_VULKAN_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

enum vk_matvec_force { VK_MATVEC_AUTO, VK_MATVEC_INT_DOT, VK_MATVEC_INT_DOT_WIDE, VK_MATVEC_FP16 };

struct vk_backend_params {
    int device_index;                  /* index in vk_device_list order; -1 = auto (vk_device_pick_auto) */
    uint64_t max_storage_range_override; /* 0 = the device's maxStorageBufferRange; a smaller value
                                          (tests) forces ops to split across descriptor windows */
    bool enable_validation;            /* load VK_LAYER_KHRONOS_validation (with synchronization
                                          validation) when installed; its messages go to seer_log and
                                          errors are counted (backend_vulkan_validation_errors) */
    uint64_t memory_limit_override;    /* 0 = the device's memory; a smaller value (tests) is the most
                                          device memory the backend reports (backend_memory), so the
                                          memory plan's refusal can be exercised */
    bool plain_kernels;                /* use only the kernels that need no optional feature, and the
                                          general kernel choices (the tiled prefill matmul on CPU
                                          devices too): tests run both paths */
    uint32_t max_shared_override;      /* 0 = the device's maxComputeSharedMemorySize; a smaller value
                                          (>= 16384, the Vulkan minimum; tests) makes kernels pick the
                                          tiles a small-memory device gets */
    bool force_staging;                /* copy through a staging buffer even where device memory can
                                          be mapped (UMA, lavapipe): exercises the discrete-GPU path */
    const char *pipeline_cache_path;   /* NULL: none. Else a VkPipelineCache file, loaded at create
                                          when its header matches the device (anything else is
                                          ignored with a warning) and rewritten at free, so compiled
                                          pipelines survive between runs. Copied; may be freed after. */
    /* Fault injection, for tests only (tests/vulkan/faults.c): the Nth vkAllocateMemory from now
       (1 = the next) fails with VK_ERROR_OUT_OF_DEVICE_MEMORY in every memory type, and the Nth
       vkQueueSubmit returns VK_ERROR_DEVICE_LOST without submitting; 0 = never. The backend then
       takes the same paths as for a real full or lost device. */
    long fail_alloc_after;
    long lose_device_after;
    /* Which decode matrix-vector kernel runs when the backend is not exact (backend_vulkan_set_exact):
       AUTO picks by the device (op_matmul.c); INT_DOT and FP16 force that kernel where the device
       merely supports it (tests; measuring on devices that do not accelerate it). INT_DOT_WIDE
       (SEER_VK_FORCE=int-dot-wide) is INT_DOT with Q4_K and Q5_K weights read in 16-byte pieces
       and Q8_0 matrices loaded in the split layout for the same (tensor.h TL_Q8_0_SPLIT), what AUTO
       takes on GPUs with accelerated integer dot products and on CPU implementations; rows off a
       16-byte boundary still take INT_DOT's (Q8_0: stay in the file's layout). Creating the backend
       fails with SEER_EUNSUPPORTED when the forced kernel's feature is missing. */
    enum vk_matvec_force force_matvec;
};

/* Defaults: auto device, device limits, no validation, direct mapping where possible. */
struct vk_backend_params vk_backend_params_default(void);

/* Creates the backend on the chosen device. p NULL = defaults. Errors: SEER_EUNSUPPORTED when no
   usable Vulkan device exists or the index is out of range / names an unusable device,
   SEER_EDEVICE for a failing Vulkan call (its VkResult name in the message), SEER_ENOMEM. */
int backend_vulkan_create(const struct vk_backend_params *p, backend **out);

/* exact (the default of a new backend): matmuls keep f32 activations and f32 arithmetic, the
   results the fidelity tests hold against the references. Not exact (seer's commands unless
   --exact, like backend_cpu_set_exact): decode matmuls may round activations to 8 bits (the CPU's
   core/cpu/qdot.h scheme) or multiply in f16 where the device is faster that way (op_matmul.c).
   A no-op on other backends, and without Vulkan in the build. */
#if SEER_HAVE_VULKAN
void backend_vulkan_set_exact(backend *be, bool exact);
#else
static inline void backend_vulkan_set_exact(backend *be, bool exact) { (void)be, (void)exact; }
#endif

/* Validation-layer messages of severity ERROR seen since the backend was created (0 when
   validation is off). validation_active: whether the layer was actually loaded. */
uint64_t backend_vulkan_validation_errors(const backend *be);
bool backend_vulkan_validation_active(const backend *be);

/* ---- device enumeration ------------------------------------------------------------------ */

enum vk_device_kind { VK_KIND_DISCRETE, VK_KIND_INTEGRATED, VK_KIND_VIRTUAL, VK_KIND_CPU, VK_KIND_OTHER };

#define VK_INFO_MAX_HEAPS 16

struct vk_device_info {
    int index;                      /* position in the loader's order; what device_index selects */
    char name[256];                 /* VkPhysicalDeviceProperties.deviceName */
    enum vk_device_kind kind;
    uint32_t vendor_id, device_id;
    uint32_t api_version;           /* VK_MAKE_API_VERSION form */
    uint32_t driver_version;        /* vendor-encoded; see driver_version_str */
    char driver_version_str[64];    /* decoded by the vendor's convention */
    char driver_name[256];          /* VkPhysicalDeviceDriverProperties (empty when not reported) */
    char driver_info[256];
    uint32_t n_heaps;
    struct { uint64_t size_bytes; bool device_local; } heaps[VK_INFO_MAX_HEAPS];
    uint32_t subgroup_size;
    bool subgroup_arith;            /* subgroup arithmetic (subgroupAdd, ...) in compute shaders */
    uint64_t max_storage_range;     /* maxStorageBufferRange, bytes */
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t shared_memory_bytes;   /* maxComputeSharedMemorySize */
    uint64_t max_allocation_bytes;  /* maxMemoryAllocationSize */
    bool fp16;                      /* shaderFloat16 */
    bool storage16;                 /* storageBuffer16BitAccess */
    bool int_dot;                   /* VK_KHR_shader_integer_dot_product (or core 1.3) */
    bool coopmat;                   /* VK_KHR_cooperative_matrix */
    bool usable;                    /* Vulkan >= 1.1 and a compute queue: the backend can run on it */
};

/* Lists every physical device. *out is an array of *n entries, released with
   vk_device_list_free. When the loader finds no driver or no device this is SEER_OK with *n = 0
   (and *out NULL); `why` (may be NULL, size why_size) then receives a one-line reason. */
int vk_device_list(struct vk_device_info **out, int *n, char *why, size_t why_size);
void vk_device_list_free(struct vk_device_info *list);

/* The device `auto` runs on: a usable discrete GPU, else integrated, else virtual; CPU-type and
   other devices (lavapipe) only when nothing better exists. Ties go to the larger device-local
   heap, then the lower index. Returns the array position, or -1 when none is usable. */
int vk_device_pick_auto(const struct vk_device_info *list, int n);

const char *vk_device_kind_name(enum vk_device_kind k); /* "discrete", "integrated", … */

#endif
