/* scratch.c — the context's scratch buffer: device memory that the dispatches of one op pass
   intermediate results through (the GDN chunk matrices of op_gdn.c, the split-K partial softmax
   sums of op_attention.c). One buffer serves every op; it only grows, and it never outgrows one
   storage window, so ops bind it whole. */
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/vk_internal.h"

int vk_scratch_get(struct vk_ctx *vk, VkDeviceSize bytes, const char *op, struct vk_buffer **out)
{
    if (bytes > vk->caps.max_storage_range || bytes > vk->caps.max_alloc)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: %llu bytes of scratch exceed the %llu-byte storage window", op,
                        (unsigned long long)bytes, (unsigned long long)vk->caps.max_storage_range);
    if (vk->scratch.buffer != VK_NULL_HANDLE && vk->scratch.size >= bytes) {
        *out = &vk->scratch;
        return SEER_OK;
    }
    /* Dispatches recorded so far may use the old buffer: run them before it goes. Growing by
       half again at least keeps a sequence of slowly growing requests from reallocating often. */
    int rc = vk_cmd_submit(vk);
    if (rc)
        return rc;
    VkDeviceSize want = MAX(bytes, vk->scratch.size + vk->scratch.size / 2);
    want = MIN(want, MIN(vk->caps.max_storage_range, vk->caps.max_alloc));
    vk_buffer_destroy(vk, &vk->scratch);
    if ((rc = vk_buffer_create(vk, want, false, &vk->scratch)))
        return rc;
    LOG_DEBUG("vulkan", "%s: scratch buffer grown to %llu bytes", op, (unsigned long long)want);
    *out = &vk->scratch;
    return SEER_OK;
}

void vk_scratch_deinit(struct vk_ctx *vk) { vk_buffer_destroy(vk, &vk->scratch); }
