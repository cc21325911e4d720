/* backend.c — the Vulkan backend object (core/backend.h): buffers are device memory, tensor_set/get
   copy directly into mapped memory or through the staging buffer, ops append dispatches and
   backend_sync submits them once. Ops without a Vulkan kernel yet stay NULL, so op_* reports
   SEER_EUNSUPPORTED naming the op. Creation follows the redis pattern: one fail path that tears
   down whatever was built, in reverse order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/vk_internal.h"

static int vkb_buffer_alloc(backend *be, size_t size, backend_buffer **out)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    backend_buffer *buf = seer_calloc(1, sizeof *buf);
    struct vk_buffer *vb = seer_calloc(1, sizeof *vb);
    if (!buf || !vb) {
        free(buf);
        free(vb);
        return seer_err(SEER_ENOMEM, "vulkan: no memory for a buffer record");
    }
    int rc = vk_buffer_create(vk, size, false, vb);
    if (rc) {
        free(buf);
        free(vb);
        return rc;
    }
    buf->be = be;
    buf->size = size;
    /* No host pointer even when the memory is mapped: reading through it would skip the sync
       that tensor_get performs, and writing would race recorded ops. */
    buf->host = NULL;
    buf->ctx = vb;
    *out = buf;
    return SEER_OK;
}

static void vkb_buffer_free(backend_buffer *buf)
{
    struct vk_ctx *vk = vk_ctx_of(buf->be);
    /* Recorded dispatches may still use this buffer: run them before it goes. A failure here
       already marked the device lost; the buffer is released either way. */
    if (vk->cmd.recording)
        (void)vk_cmd_submit(vk);
    vk_buffer_destroy(vk, buf->ctx);
    free(buf->ctx);
    free(buf);
}

static int vkb_tensor_set(backend *be, tensor *t, const void *src, size_t off, size_t n)
{
    return vk_upload(vk_ctx_of(be), t->buf->ctx, t->offset + off, src, n);
}

static int vkb_tensor_get(backend *be, const tensor *t, void *dst, size_t off, size_t n)
{
    return vk_download(vk_ctx_of(be), t->buf->ctx, t->offset + off, dst, n);
}

static int vkb_sync(backend *be) { return vk_cmd_submit(vk_ctx_of(be)); }

static int vkb_memory(backend *be, uint64_t *free_bytes, uint64_t *total_bytes)
{
    vk_memory_free(vk_ctx_of(be), free_bytes, total_bytes);
    return SEER_OK;
}

/* Reverse creation order; every step accepts a half-built context. */
static void vk_ctx_free(struct vk_ctx *vk)
{
    if (vk->device != VK_NULL_HANDLE)
        vkDeviceWaitIdle(vk->device); /* nothing below may be in use; a lost device returns at once */
    vk_pipelines_destroy(vk);
    vk_scratch_deinit(vk);
    vk_staging_deinit(vk);
    vk_cmd_deinit(vk);
    vk_device_close(vk);
    free(vk->pipeline_cache_path);
    free(vk);
}

static void vkb_free(backend *be)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    if (vk->cmd.recording)
        (void)vk_cmd_submit(vk);
    vk_ctx_free(vk);
    free(be);
}

/* Known before the forward pass (struct backend_i.supports): weight dtypes without kernels and
   attention head dims beyond the kernel's classes. The op files' other limits depend on the
   device's grid and storage window for a given call and are reported when recorded. */
static bool vkb_supports(backend *be, enum op_id op, const tensor *const *t, int n)
{
    (void)be;
    switch (op) {
    case OP_MATMUL:
    case OP_LINEAR:
    case OP_GET_ROWS: return n >= 1 && vk_weight_supported(t[0]->type);
    case OP_MATMUL_N: /* the weights, then x */
        for (int i = 0; i + 1 < n; i++)
            if (!vk_weight_supported(t[i]->type))
                return false;
        return n >= 2;
    case OP_ATTENTION: return n >= 1 && t[0]->ne[0] <= VK_ATTN_HEAD_DIM_MAX;
    default: return true;
    }
}

#define VK_OP(name, NAME) .name = vk_##name,
static const struct backend_i vk_iface = {
    .name = "vulkan",
    .free = vkb_free,
    .buffer_alloc = vkb_buffer_alloc,
    .buffer_free = vkb_buffer_free,
    .tensor_set = vkb_tensor_set,
    .tensor_get = vkb_tensor_get,
    .sync = vkb_sync,
    .memory = vkb_memory,
    .supports = vkb_supports,
    .weight_prepare = vk_weight_prepare,
    /* one slot per row of SEER_OPS (core/ops.h): a missing vk_<op> does not compile */
    .ops = {SEER_OPS(VK_OP)},
};

/* The forced decode kernel (vk_backend_params.force_matvec, else SEER_VK_FORCE=int-dot,
   int-dot-wide or fp16: the one switch read from the environment, so `seer bench` can measure a
   kernel the device would not pick; docs/PERFORMANCE.md), refused when the device cannot run it
   (op_matmul.c's kernels need the feature and subgroup arithmetic). */
static int matvec_force(struct vk_ctx *vk, const struct vk_backend_params *p)
{
    enum vk_matvec_force f = p->force_matvec;
    const char *env = getenv("SEER_VK_FORCE");
    if (f == VK_MATVEC_AUTO && env && *env) {
        if (!strcmp(env, "int-dot"))
            f = VK_MATVEC_INT_DOT;
        else if (!strcmp(env, "int-dot-wide"))
            f = VK_MATVEC_INT_DOT_WIDE;
        else if (!strcmp(env, "fp16"))
            f = VK_MATVEC_FP16;
        else
            return seer_err(SEER_EINVAL, "vulkan: SEER_VK_FORCE='%s' is not int-dot, int-dot-wide or fp16", env);
    }
    const bool idot = f == VK_MATVEC_INT_DOT || f == VK_MATVEC_INT_DOT_WIDE;
    const bool has = idot ? vk->caps.int_dot : f == VK_MATVEC_FP16 ? vk->caps.fp16 : true;
    if (f != VK_MATVEC_AUTO && (!has || !vk->caps.subgroup_arith))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s lacks %s or subgroup arithmetic: cannot force that matvec",
                        vk->info.name, idot ? "shaderIntegerDotProduct" : "shaderFloat16");
    vk->force_matvec = f;
    return SEER_OK;
}

int backend_vulkan_create(const struct vk_backend_params *params, backend **out)
{
    struct vk_backend_params p = params ? *params : vk_backend_params_default();
    backend *be = seer_calloc(1, sizeof *be);
    struct vk_ctx *vk = seer_calloc(1, sizeof *vk);
    if (!be || !vk) {
        free(be);
        free(vk);
        return seer_err(SEER_ENOMEM, "vulkan: no memory for the backend");
    }
    atomic_init(&vk->validation_errors, 0);
    vk->exact = true;
    vk->force_staging = p.force_staging;
    vk->memory_limit = p.memory_limit_override;
    vk->fail_alloc_after = p.fail_alloc_after;
    vk->lose_device_after = p.lose_device_after;
    int rc = SEER_OK;
    if (p.pipeline_cache_path && !(vk->pipeline_cache_path = seer_strdup(p.pipeline_cache_path)))
        rc = seer_err(SEER_ENOMEM, "vulkan: no memory for the pipeline cache path");
    if (rc == SEER_OK)
        rc = vk_device_open(vk, &p);
    if (rc == SEER_OK)
        vk->caps.matvec_prefill = vk->caps.kind == VK_KIND_CPU && !p.plain_kernels;
    if (rc == SEER_OK && p.plain_kernels)
        vk->caps.subgroup_arith = false;
    if (rc == SEER_OK)
        rc = matvec_force(vk, &p);
    if (rc == SEER_OK && p.max_shared_override) {
        if (p.max_shared_override < VK_MIN_SHARED_BYTES)
            rc = seer_err(SEER_EINVAL, "vulkan: max_shared_override %u is below the minimum %u", p.max_shared_override,
                          VK_MIN_SHARED_BYTES);
        else
            vk->caps.shared_bytes = MIN(vk->caps.shared_bytes, p.max_shared_override);
    }
    if (rc == SEER_OK)
        rc = vk_cmd_init(vk);
    if (rc == SEER_OK)
        rc = vk_pipelines_init(vk);
    if (rc)
        goto fail;
    be->iface = &vk_iface;
    be->ctx = vk;
    /* Tensor offsets aligned for descriptor windows, and to 64 bytes for vector loads. */
    be->alignment = MAX((size_t)vk->caps.storage_align, (size_t)64);
    be->max_buffer_size = (size_t)MIN(vk->caps.max_alloc, (uint64_t)SIZE_MAX);
    snprintf(be->description, sizeof be->description, "vulkan: %.110s", vk->info.name);
    LOG_INFO("vulkan", "%s (%s); subgroup %u%s, storage window %llu bytes%s", vk->info.name, vk->info.driver_info,
             vk->caps.subgroup_size, vk->caps.subgroup_arith ? " (reductions in subgroups)" : "",
             (unsigned long long)vk->caps.max_storage_range, vk->validation_active ? ", validation on" : "");
    LOG_DEBUG("vulkan", "int8 dot product %s, fp16 arithmetic %s%s", !vk->caps.int_dot ? "absent"
              : vk->caps.int_dot_fast ? "accelerated" : "emulated", vk->caps.fp16 ? "present" : "absent",
              vk->force_matvec == VK_MATVEC_INT_DOT ? "; int-dot matvec forced"
              : vk->force_matvec == VK_MATVEC_INT_DOT_WIDE ? "; int-dot matvec, wide Q4_K and Q5_K, forced"
              : vk->force_matvec == VK_MATVEC_FP16 ? "; fp16 matvec forced" : "");
    *out = be;
    return SEER_OK;
fail:
    vk_ctx_free(vk);
    free(be);
    return rc;
}

uint64_t backend_vulkan_validation_errors(const backend *be)
{
    if (!be || be->iface != &vk_iface)
        return 0;
    return atomic_load(&((struct vk_ctx *)be->ctx)->validation_errors);
}

void backend_vulkan_set_exact(backend *be, bool exact)
{
    if (be && be->iface == &vk_iface)
        ((struct vk_ctx *)be->ctx)->exact = exact;
}

bool backend_vulkan_validation_active(const backend *be)
{
    return be && be->iface == &vk_iface && ((struct vk_ctx *)be->ctx)->validation_active;
}
