/* memory.c — Vulkan buffers, the staging buffer, host <-> device copies, and storage windows:
   a buffer may exceed maxStorageBufferRange, so ops bind windows of it and split their dispatch
   (docs/ARCHITECTURE.md, "The Vulkan backend": memory; large tensors respect maxStorageBufferRange).
   THE SPLITTING RULE: a window always holds whole rows of every tensor it serves — a row never
   straddles two windows — so a kernel never needs to know it runs on a piece (vk_split).
   Divisions: memory types and buffers; staging and copies; row walks and windows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/vk_internal.h"

/* Bytes moved per staging round trip: large enough that per-submit overhead is small next to the
   copy, small enough not to matter on 8 GB phones. */
#define VK_STAGING_BYTES ((size_t)16 << 20)

/* ---- memory types and buffers ------------------------------------------------------------ */

/* Memory-type preferences, tried in order (each as "flags that must be set, flags to avoid"). */
struct mem_pref { VkMemoryPropertyFlags need, avoid; };

static const VkMemoryPropertyFlags HOST_VC = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

static int alloc_memory(struct vk_ctx *vk, const VkMemoryRequirements *req, const struct mem_pref *prefs, int n_prefs,
                        VkDeviceMemory *out, VkMemoryPropertyFlags *flags, uint32_t *heap)
{
    VkResult last = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    bool tried[VK_MAX_MEMORY_TYPES] = {false};
    const bool injected = vk_inject(&vk->fail_alloc_after); /* tests: a full device, every type */
    char what[96];
    snprintf(what, sizeof what, "vkAllocateMemory of %llu bytes", (unsigned long long)req->size);
    for (int p = 0; p < n_prefs; p++) {
        for (uint32_t i = 0; i < vk->mem.memoryTypeCount; i++) {
            VkMemoryPropertyFlags f = vk->mem.memoryTypes[i].propertyFlags;
            if (tried[i] || !(req->memoryTypeBits & (1u << i)) || (f & prefs[p].need) != prefs[p].need ||
                (f & prefs[p].avoid))
                continue;
            tried[i] = true;
            VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                       .allocationSize = req->size,
                                       .memoryTypeIndex = i};
            last = injected ? VK_ERROR_OUT_OF_DEVICE_MEMORY : vkAllocateMemory(vk->device, &ai, NULL, out);
            if (last == VK_SUCCESS) {
                *flags = f;
                *heap = vk->mem.memoryTypes[i].heapIndex;
                vk->allocated_bytes[*heap] += req->size;
                return SEER_OK;
            }
            /* a full heap is not fatal: the next preferred type may live in another heap */
            if (last != VK_ERROR_OUT_OF_DEVICE_MEMORY && last != VK_ERROR_OUT_OF_HOST_MEMORY)
                return vk_fail_on(vk, last, what);
        }
    }
    return vk_fail_on(vk, last, what);
}

int vk_buffer_create(struct vk_ctx *vk, VkDeviceSize size, bool staging, struct vk_buffer *out)
{
    struct vk_buffer b = {0};
    /* Round to whole 32-bit words: every binding is a word array and windows end on a word. */
    b.size = size ? (size + 3) & ~(VkDeviceSize)3 : 4;
    if (b.size < size)
        return seer_err(SEER_ENOMEM, "vulkan: buffer of %llu bytes is too large", (unsigned long long)size);
    VkBufferCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = b.size,
        .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 (staging ? 0 : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = vkCreateBuffer(vk->device, &ci, NULL, &b.buffer);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk->device, b.buffer, &req);

    struct mem_pref prefs[3];
    int n = 0;
    if (staging) {
        /* host-cached first: downloads read it with the CPU */
        prefs[n++] = (struct mem_pref){HOST_VC | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0};
        prefs[n++] = (struct mem_pref){HOST_VC, 0};
    } else if (vk->caps.kind == VK_KIND_DISCRETE) {
        /* keep the small host-visible (BAR) heap free: plain device-local memory first */
        prefs[n++] = (struct mem_pref){VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT};
        prefs[n++] = (struct mem_pref){VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
        prefs[n++] = (struct mem_pref){0, 0};
    } else {
        /* unified memory (integrated, CPU): mappable device-local memory skips the staging copy */
        prefs[n++] = (struct mem_pref){VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | HOST_VC, 0};
        prefs[n++] = (struct mem_pref){VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
        prefs[n++] = (struct mem_pref){0, 0};
    }
    VkMemoryPropertyFlags flags = 0;
    int rc = alloc_memory(vk, &req, prefs, n, &b.memory, &flags, &b.heap);
    if (rc) {
        vkDestroyBuffer(vk->device, b.buffer, NULL);
        return rc;
    }
    b.mem_bytes = req.size;
    const char *call = "vkBindBufferMemory";
    r = vkBindBufferMemory(vk->device, b.buffer, b.memory, 0);
    if (r == VK_SUCCESS && (flags & HOST_VC) == HOST_VC) {
        /* Only coherent memory is mapped, so no flush/invalidate is ever needed. */
        call = "vkMapMemory";
        r = vkMapMemory(vk->device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
        b.host_cached = flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    }
    if (r != VK_SUCCESS) {
        rc = vk_fail(r, call);
        vk_buffer_destroy(vk, &b);
        return rc;
    }
    *out = b;
    return SEER_OK;
}

void vk_buffer_destroy(struct vk_ctx *vk, struct vk_buffer *b)
{
    /* vkFreeMemory unmaps implicitly; both calls accept VK_NULL_HANDLE objects, but the loader
       needs a device to dispatch through */
    if (vk->device == VK_NULL_HANDLE)
        return;
    vkDestroyBuffer(vk->device, b->buffer, NULL);
    if (b->memory != VK_NULL_HANDLE)
        vk->allocated_bytes[b->heap] -= b->mem_bytes;
    vkFreeMemory(vk->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

void vk_memory_free(const struct vk_ctx *vk, uint64_t *free_bytes, uint64_t *total_bytes)
{
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 mp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                           .pNext = &budget};
    if (vk->caps.ext_memory_budget)
        vkGetPhysicalDeviceMemoryProperties2(vk->phys, &mp); /* budgets change as processes allocate */
    uint32_t best = UINT32_MAX;
    for (uint32_t h = 0; h < vk->mem.memoryHeapCount; h++)
        if ((vk->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            (best == UINT32_MAX || vk->mem.memoryHeaps[h].size > vk->mem.memoryHeaps[best].size))
            best = h;
    if (best == UINT32_MAX) /* no device-local heap (allowed only for odd devices): the first */
        best = 0;
    const uint64_t size = vk->mem.memoryHeaps[best].size;
    uint64_t avail;
    if (vk->caps.ext_memory_budget)
        avail = budget.heapBudget[best] > budget.heapUsage[best] ? budget.heapBudget[best] - budget.heapUsage[best] : 0;
    else
        avail = size > vk->allocated_bytes[best] ? size - vk->allocated_bytes[best] : 0;
    if (vk->memory_limit && vk->memory_limit < size) {
        const uint64_t held = vk->allocated_bytes[best];
        avail = MIN(avail, vk->memory_limit > held ? vk->memory_limit - held : 0);
        *total_bytes = vk->memory_limit;
    } else {
        *total_bytes = size;
    }
    *free_bytes = avail;
}

/* ---- staging and copies ------------------------------------------------------------------ */

int vk_staging_init(struct vk_ctx *vk)
{
    if (vk->staging.buffer != VK_NULL_HANDLE)
        return SEER_OK;
    return vk_buffer_create(vk, MIN((VkDeviceSize)VK_STAGING_BYTES, vk->caps.max_alloc), true, &vk->staging);
}

void vk_staging_deinit(struct vk_ctx *vk) { vk_buffer_destroy(vk, &vk->staging); }

int vk_upload(struct vk_ctx *vk, struct vk_buffer *dst, VkDeviceSize off, const void *src, size_t n)
{
    /* Eager semantics: ops recorded earlier must see the old bytes. A few bytes (a step's token
       ids and positions) go into the command stream itself, so a decode step stays one submit
       (vk_cmd_update); anything more waits for the recorded ops to run first. */
    if (n > 0 && n <= VK_INLINE_UPLOAD && n % 4 == 0 && off % 4 == 0)
        return vk_cmd_update(vk, dst->buffer, off, src, n);
    int rc = vk_cmd_submit(vk);
    if (rc)
        return rc;
    if (dst->mapped && !vk->force_staging) {
        /* coherent memory, written before the next vkQueueSubmit, which makes host writes visible */
        memcpy((char *)dst->mapped + off, src, n);
        return SEER_OK;
    }
    if ((rc = vk_staging_init(vk)))
        return rc;
    for (size_t done = 0; done < n && rc == SEER_OK;) {
        size_t chunk = (size_t)MIN((VkDeviceSize)(n - done), vk->staging.size);
        memcpy(vk->staging.mapped, (const char *)src + done, chunk);
        if ((rc = vk_cmd_begin(vk)))
            break;
        vk_cmd_copy(vk, vk->staging.buffer, 0, dst->buffer, off + done, chunk);
        rc = vk_cmd_submit(vk); /* the staging buffer is reused by the next chunk */
        done += chunk;
    }
    return rc;
}

int vk_download(struct vk_ctx *vk, struct vk_buffer *src, VkDeviceSize off, void *dst, size_t n)
{
    int rc = vk_cmd_submit(vk); /* the bytes must include every op recorded so far */
    if (rc)
        return rc;
    /* Reading write-combined (uncached) memory with the CPU is very slow: stage those. */
    if (src->mapped && src->host_cached && !vk->force_staging) {
        memcpy(dst, (const char *)src->mapped + off, n);
        return SEER_OK;
    }
    if ((rc = vk_staging_init(vk)))
        return rc;
    for (size_t done = 0; done < n && rc == SEER_OK;) {
        size_t chunk = (size_t)MIN((VkDeviceSize)(n - done), vk->staging.size);
        if ((rc = vk_cmd_begin(vk)))
            break;
        vk_cmd_copy(vk, src->buffer, off + done, vk->staging.buffer, 0, chunk);
        rc = vk_cmd_submit(vk); /* ends with a transfer-write -> host-read barrier */
        if (rc == SEER_OK)
            memcpy((char *)dst + done, vk->staging.mapped, chunk);
        done += chunk;
    }
    return rc;
}

/* ---- row walks and windows --------------------------------------------------------------- */

struct vk_rows vk_rows_of(const tensor *t)
{
    size_t row_bytes = 0;
    bool ok = dtype_row_bytes(t->type, t->ne[0], &row_bytes);
    ASSERT1(ok); /* tensor_init accepted this shape */
    (void)ok;
    return (struct vk_rows){t, t->ne[1], t->ne[2], t->ne[3], t->nb[1], t->nb[2], t->nb[3], row_bytes};
}

int vk_rows_check(const backend *be, const struct vk_rows *r, size_t unit, const char *op)
{
    const tensor *t = r->t;
    if (!t->buf || t->buf->be != be)
        return seer_err(SEER_EINVAL, "vulkan: %s: tensor '%s' is not in a buffer of this backend", op, t->name);
    if (t->offset % unit || r->nb1 % unit || r->nb2 % unit || r->nb3 % unit)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: tensor '%s' has an offset or stride that is not a multiple of %zu bytes",
                        op, t->name, unit);
    if (r->nb1 / unit > UINT32_MAX || r->nb2 / unit > UINT32_MAX || r->nb3 / unit > UINT32_MAX ||
        t->ne[0] > INT32_MAX || r->ne1 * r->ne2 * r->ne3 > INT32_MAX)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: tensor '%s' is too large for 32-bit indexing", op, t->name);
    return SEER_OK;
}

/* Byte offset of row r from element 0. */
static uint64_t row_off(const struct vk_rows *w, int64_t r)
{
    int64_t i1 = r % w->ne1, i2 = (r / w->ne1) % w->ne2, i3 = r / (w->ne1 * w->ne2);
    return (uint64_t)i1 * w->nb1 + (uint64_t)i2 * w->nb2 + (uint64_t)i3 * w->nb3;
}

/* With non-negative strides, the largest row offset is the last index in every dimension. */
static uint64_t last_row_off(const struct vk_rows *w)
{
    return (uint64_t)(w->ne1 - 1) * w->nb1 + (uint64_t)(w->ne2 - 1) * w->nb2 + (uint64_t)(w->ne3 - 1) * w->nb3;
}

/* Row offsets never decrease with r: needed to bound rows [r0, r1) by their first and last.
   Only steps that exist matter: a dimension of size 1 has no carry into the next. */
static bool monotone(const struct vk_rows *w)
{
    uint64_t span1 = (uint64_t)(w->ne1 - 1) * w->nb1, span2 = (uint64_t)(w->ne2 - 1) * w->nb2 + span1;
    return (w->ne2 == 1 || w->nb2 >= span1) && (w->ne3 == 1 || w->nb3 >= span2);
}

/* The window [lo aligned down, hi) in buffer bytes, and whether it fits one descriptor. */
static bool window(const struct vk_ctx *vk, uint64_t lo, uint64_t hi, uint64_t *win_off, uint64_t *win_range)
{
    uint64_t a = vk->caps.storage_align;
    *win_off = lo / a * a;
    *win_range = hi - *win_off;
    return *win_range <= vk->caps.max_storage_range;
}

static bool whole_fits(const struct vk_ctx *vk, const struct vk_rows *w)
{
    uint64_t off, range;
    return window(vk, w->t->offset, w->t->offset + last_row_off(w) + w->row_bytes, &off, &range);
}

static bool rows_fit(const struct vk_ctx *vk, const struct vk_rows *w, int64_t r0, int64_t r1)
{
    uint64_t off, range;
    return window(vk, w->t->offset + row_off(w, r0), w->t->offset + row_off(w, r1 - 1) + w->row_bytes, &off, &range);
}

int vk_split(const struct vk_ctx *vk, const struct vk_rows *walks, int n, int64_t r0, int64_t r_end,
             int64_t max_rows, int64_t *r1, const char *op)
{
    int64_t hi = r_end - r0 > max_rows ? r0 + max_rows : r_end;
    for (int i = 0; i < n; i++) {
        const struct vk_rows *w = &walks[i];
        if (whole_fits(vk, w))
            continue; /* the usual case: one window for the whole tensor */
        if (!monotone(w))
            return seer_err(SEER_EUNSUPPORTED,
                            "vulkan: %s: tensor '%s' spans more than the %llu-byte storage window and its row strides "
                            "do not increase, so it cannot be split",
                            op, w->t->name, (unsigned long long)vk->caps.max_storage_range);
        if (!rows_fit(vk, w, r0, r0 + 1))
            return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: one row of tensor '%s' (%zu bytes) exceeds the %llu-byte storage window",
                            op, w->t->name, w->row_bytes, (unsigned long long)vk->caps.max_storage_range);
        /* largest end in (r0, hi] that still fits: the window only grows with r1 */
        int64_t good = r0 + 1, bad = hi + 1;
        while (bad - good > 1) {
            int64_t mid = good + (bad - good) / 2;
            if (rows_fit(vk, w, r0, mid))
                good = mid;
            else
                bad = mid;
        }
        hi = good;
    }
    *r1 = hi;
    return SEER_OK;
}

struct vk_binding vk_bind(const struct vk_ctx *vk, const struct vk_rows *w, int64_t r0, int64_t r1, size_t unit,
                          bool write)
{
    const struct vk_buffer *b = w->t->buf->ctx;
    uint64_t lo, hi, off, range;
    if (whole_fits(vk, w)) {
        lo = w->t->offset;
        hi = w->t->offset + last_row_off(w) + w->row_bytes;
    } else {
        lo = w->t->offset + row_off(w, r0);
        hi = w->t->offset + row_off(w, r1 - 1) + w->row_bytes;
    }
    bool fits = window(vk, lo, hi, &off, &range);
    ASSERT1(fits); /* vk_split chose [r0, r1) */
    (void)fits;
    range = MIN((range + 3) & ~(uint64_t)3, b->size - off); /* whole words; the buffer size is too */
    /* element 0 relative to the window, wrapping mod 2^32 when the window starts after it */
    int64_t rel = ((int64_t)w->t->offset - (int64_t)off) / (int64_t)unit;
    return (struct vk_binding){.buffer = b->buffer, .offset = off, .range = range, .base = (uint32_t)rel, .write = write};
}

int vk_bind_whole(const struct vk_ctx *vk, const struct vk_rows *w, size_t unit, const char *op, struct vk_binding *out)
{
    if (!whole_fits(vk, w))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: tensor '%s' must fit one %llu-byte storage window", op, w->t->name,
                        (unsigned long long)vk->caps.max_storage_range);
    *out = vk_bind(vk, w, 0, w->ne1 * w->ne2 * w->ne3, unit, false);
    return SEER_OK;
}
