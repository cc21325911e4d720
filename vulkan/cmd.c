/* cmd.c — eager recording (docs/ARCHITECTURE.md, "Backends and ops"): ops append dispatches to one command
   buffer, with a barrier only where a dispatch depends on memory an earlier one touched since the
   last barrier; vk_cmd_submit ends it, submits once and waits on a fence. Descriptor sets come
   from one pool that is reset after every submit.
   Divisions: setup and teardown; barriers; begin and submit; dispatch and copy; grids. */
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/vk_internal.h"

/* Descriptor sets per submit. A decode step records a few hundred dispatches; when they run out
   we submit early, which is correct (eager semantics) but costs a wait. */
#define VK_SETS_PER_POOL 1024

/* ---- setup and teardown ------------------------------------------------------------------ */

int vk_cmd_init(struct vk_ctx *vk)
{
    struct vk_cmd *c = &vk->cmd;
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT, /* re-recorded after every submit */
        .queueFamilyIndex = vk->queue_family,
    };
    VkResult r = vkCreateCommandPool(vk->device, &pci, NULL, &c->pool);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    if ((r = vkAllocateCommandBuffers(vk->device, &ai, &c->cb)) != VK_SUCCESS)
        return vk_fail(r, "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(vk->device, &fci, NULL, &c->fence)) != VK_SUCCESS)
        return vk_fail(r, "vkCreateFence");
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_SETS_PER_POOL * VK_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = VK_SETS_PER_POOL,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    if ((r = vkCreateDescriptorPool(vk->device, &dci, NULL, &c->dpool)) != VK_SUCCESS)
        return vk_fail(r, "vkCreateDescriptorPool");
    c->sets_left = VK_SETS_PER_POOL;
    return SEER_OK;
}

/* The caller has waited for the device to be idle. Every handle may be VK_NULL_HANDLE. */
void vk_cmd_deinit(struct vk_ctx *vk)
{
    struct vk_cmd *c = &vk->cmd;
    if (vk->device == VK_NULL_HANDLE)
        return;
    vkDestroyDescriptorPool(vk->device, c->dpool, NULL); /* frees its sets */
    vkDestroyFence(vk->device, c->fence, NULL);
    vkDestroyCommandPool(vk->device, c->pool, NULL);     /* frees c->cb */
    memset(c, 0, sizeof *c);
}

/* ---- barriers ---------------------------------------------------------------------------- */

static void barrier(struct vk_ctx *vk, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
    vkCmdPipelineBarrier(vk->cmd.cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static bool overlaps(const struct vk_range *list, uint32_t n, const struct vk_range *r)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i].buffer == r->buffer && list[i].lo < r->hi && r->lo < list[i].hi)
            return true;
    return false;
}

/* ---- begin and submit -------------------------------------------------------------------- */

static int lost(const struct vk_ctx *vk)
{
    return seer_err(SEER_EDEVICE, "vulkan: the device failed earlier (%s); recreate the backend", vk->info.name);
}

int vk_cmd_begin(struct vk_ctx *vk)
{
    struct vk_cmd *c = &vk->cmd;
    if (vk->lost)
        return lost(vk);
    if (c->recording)
        return SEER_OK;
    VkResult r = vkResetCommandPool(vk->device, c->pool, 0);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkResetCommandPool");
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if ((r = vkBeginCommandBuffer(c->cb, &bi)) != VK_SUCCESS)
        return vk_fail(r, "vkBeginCommandBuffer");
    /* Hazard: shader and transfer writes of earlier submits -> this buffer's shader and transfer
       accesses (and their reads -> our writes). The fence wait ordered execution, but device
       writes still have to be made visible to later device reads. */
    barrier(vk, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT);
    c->recording = true;
    c->n_reads = c->n_writes = 0;
    return SEER_OK;
}

int vk_cmd_submit(struct vk_ctx *vk)
{
    struct vk_cmd *c = &vk->cmd;
    if (vk->lost) /* also stops tensor_get from returning stale bytes as if all were well */
        return lost(vk);
    if (!c->recording)
        return SEER_OK;
    c->recording = false;
    /* Hazard: shader and transfer writes -> host reads of mapped memory once the fence signals
       (tensor_get reads mapped buffers and the staging buffer directly). */
    barrier(vk, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    const char *call = "vkEndCommandBuffer";
    VkResult r = vkEndCommandBuffer(c->cb);
    if (r == VK_SUCCESS) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->cb};
        call = "vkQueueSubmit";
        r = vk_inject(&vk->lose_device_after) ? VK_ERROR_DEVICE_LOST : vkQueueSubmit(vk->queue, 1, &si, c->fence);
    }
    if (r == VK_SUCCESS) {
        call = "vkWaitForFences";
        r = vkWaitForFences(vk->device, 1, &c->fence, VK_TRUE, UINT64_MAX);
    }
    if (r == VK_SUCCESS) {
        call = "vkResetFences";
        r = vkResetFences(vk->device, 1, &c->fence);
    }
    if (r == VK_SUCCESS) {
        /* the sets were used by the buffer that just finished */
        call = "vkResetDescriptorPool";
        r = vkResetDescriptorPool(vk->device, c->dpool, 0);
        c->sets_left = VK_SETS_PER_POOL;
    }
    if (r != VK_SUCCESS) {
        /* What ran is unknown: refuse further work rather than compute on stale data. */
        vk->lost = 1;
        return vk_fail_on(vk, r, call);
    }
    return SEER_OK;
}

/* ---- dispatch and copy ------------------------------------------------------------------- */

static int alloc_set(struct vk_ctx *vk, VkDescriptorSetLayout dsl, VkDescriptorSet *set)
{
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = vk->cmd.dpool,
        .descriptorSetCount = 1,
        .pSetLayouts = &dsl,
    };
    VkResult r = vkAllocateDescriptorSets(vk->device, &ai, set);
    return r == VK_SUCCESS ? SEER_OK : vk_fail(r, "vkAllocateDescriptorSets");
}

int vk_cmd_dispatch(struct vk_ctx *vk, const struct vk_pipeline *pl, const struct vk_binding *b, const void *push,
                    uint32_t gx, uint32_t gy, uint32_t gz)
{
    struct vk_cmd *c = &vk->cmd;
    ASSERT1(pl->n_bindings <= VK_MAX_BINDINGS);
    ASSERT1(gx >= 1 && gy >= 1 && gz >= 1 && gx <= vk->caps.max_wg_count[0] && gy <= vk->caps.max_wg_count[1]);
    int rc = vk_cmd_begin(vk);
    if (rc == SEER_OK && c->sets_left == 0) {
        /* pool exhausted: finish what was recorded (the sets become free) and go on */
        rc = vk_cmd_submit(vk);
        if (rc == SEER_OK)
            rc = vk_cmd_begin(vk);
    }
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (rc == SEER_OK)
        rc = alloc_set(vk, pl->dsl, &set);
    if (rc)
        return rc;
    c->sets_left--;

    VkDescriptorBufferInfo info[VK_MAX_BINDINGS];
    VkWriteDescriptorSet wr[VK_MAX_BINDINGS];
    struct vk_range rng[VK_MAX_BINDINGS];
    bool need_barrier = false;
    for (uint32_t i = 0; i < pl->n_bindings; i++) {
        info[i] = (VkDescriptorBufferInfo){b[i].buffer, b[i].offset, b[i].range};
        wr[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &info[i],
        };
        rng[i] = (struct vk_range){b[i].buffer, b[i].offset, b[i].offset + b[i].range};
        /* read-after-write and write-after-write on the pending writes; write-after-read too */
        need_barrier |= overlaps(c->writes, c->n_writes, &rng[i]);
        need_barrier |= b[i].write && overlaps(c->reads, c->n_reads, &rng[i]);
    }
    vkUpdateDescriptorSets(vk->device, pl->n_bindings, wr, 0, NULL);
    if (need_barrier || c->n_reads + pl->n_bindings > VK_HAZARD_MAX || c->n_writes + pl->n_bindings > VK_HAZARD_MAX) {
        /* Hazard: an earlier dispatch's shader writes (or reads, for a write-after-read) -> this
           dispatch's shader reads and writes of overlapping memory. One global memory barrier:
           it also serves as the execution dependency a write-after-read needs. Taken as well
           when the access lists are full, since past that we cannot tell. */
        barrier(vk, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        c->n_reads = c->n_writes = 0;
    }
    for (uint32_t i = 0; i < pl->n_bindings; i++) {
        if (b[i].write)
            c->writes[c->n_writes++] = rng[i];
        else
            c->reads[c->n_reads++] = rng[i];
    }
    vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipeline);
    vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(c->cb, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pl->push_bytes, push);
    vkCmdDispatch(c->cb, gx, gy, gz);
    return SEER_OK;
}

int vk_cmd_update(struct vk_ctx *vk, VkBuffer dst, VkDeviceSize off, const void *src, VkDeviceSize n)
{
    struct vk_cmd *c = &vk->cmd;
    ASSERT1(n > 0 && n <= VK_UPDATE_MAX && n % 4 == 0 && off % 4 == 0);
    int rc = vk_cmd_begin(vk);
    if (rc)
        return rc;
    const struct vk_range r = {dst, off, off + n};
    if (overlaps(c->reads, c->n_reads, &r) || overlaps(c->writes, c->n_writes, &r))
        /* Hazard: earlier dispatches' shader reads (WAR) and writes (WAW) of these bytes -> this
           transfer write. */
        barrier(vk, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    vkCmdUpdateBuffer(c->cb, dst, off, n, src); /* the bytes are copied into the command buffer now */
    /* Hazard: this transfer write -> later dispatches' shader reads (RAW) and writes (WAW). The
       dispatch hazard lists need no entry: this barrier already orders every later dispatch. */
    barrier(vk, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    return SEER_OK;
}

void vk_cmd_copy(struct vk_ctx *vk, VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off,
                 VkDeviceSize n)
{
    ASSERT1(vk->cmd.recording);
    VkBufferCopy region = {.srcOffset = src_off, .dstOffset = dst_off, .size = n};
    vkCmdCopyBuffer(vk->cmd.cb, src, dst, 1, &region);
}

/* ---- grids ------------------------------------------------------------------------------- */

uint64_t vk_grid_max(const struct vk_ctx *vk)
{
    return (uint64_t)vk->caps.max_wg_count[0] * vk->caps.max_wg_count[1];
}

void vk_grid(const struct vk_ctx *vk, uint64_t groups, uint32_t *gx, uint32_t *gy)
{
    ASSERT1(groups >= 1 && groups <= vk_grid_max(vk));
    uint64_t x = MIN(groups, (uint64_t)vk->caps.max_wg_count[0]);
    *gx = (uint32_t)x;
    *gy = (uint32_t)((groups + x - 1) / x);
}
