/* tests/vulkan/device.c — vulkan/device.c, memory.c, backend.c: the auto device choice (on
   made-up device lists), enumeration (lavapipe is found, caps are sane), backend create/free
   with the validation layer (zero validation errors), bad parameters, failed allocations, and
   buffer round trips — any byte offset and size, direct mapping and staging (incl. transfers
   larger than the staging buffer), buffers larger than the (overridden) storage window — and
   the pipeline cache file (written, reloaded, one with a wrong header ignored with a warning).
   Without a Vulkan device everything device-bound is skipped visibly, unless
   SEER_REQUIRE_VULKAN=1 (CI), which makes it a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

/* VK_PIPELINE_CACHE_HEADER_VERSION_ONE, without including Vulkan's headers in a test */
#define VK_PIPELINE_CACHE_HEADER_VERSION_ONE_VALUE 1

/* ---- the auto choice, on made-up lists --------------------------------------------------- */

static struct vk_device_info dev(enum vk_device_kind kind, uint64_t heap, bool usable)
{
    struct vk_device_info d = {.kind = kind, .n_heaps = 1, .usable = usable};
    d.heaps[0].size_bytes = heap;
    d.heaps[0].device_local = true;
    return d;
}

static void test_pick_auto(void)
{
    struct vk_device_info l[3];
    l[0] = dev(VK_KIND_CPU, (uint64_t)64 << 30, true);
    l[1] = dev(VK_KIND_DISCRETE, (uint64_t)8 << 30, true);
    ok(vk_device_pick_auto(l, 2) == 1, "auto: discrete GPU before lavapipe (even with less memory)");
    l[0] = dev(VK_KIND_CPU, (uint64_t)1 << 30, true);
    l[1] = dev(VK_KIND_VIRTUAL, (uint64_t)1 << 30, true);
    l[2] = dev(VK_KIND_INTEGRATED, (uint64_t)1 << 30, true);
    ok(vk_device_pick_auto(l, 3) == 2, "auto: integrated before virtual and cpu");
    ok(vk_device_pick_auto(l, 2) == 1, "auto: virtual before cpu");
    ok(vk_device_pick_auto(l, 1) == 0, "auto: cpu-type device when it is the only one");
    l[1] = dev(VK_KIND_DISCRETE, (uint64_t)8 << 30, false);
    ok(vk_device_pick_auto(l, 2) == 0, "auto: an unusable discrete GPU is passed over");
    l[0] = dev(VK_KIND_DISCRETE, (uint64_t)4 << 30, true);
    l[1] = dev(VK_KIND_DISCRETE, (uint64_t)12 << 30, true);
    l[2] = dev(VK_KIND_DISCRETE, (uint64_t)12 << 30, true);
    ok(vk_device_pick_auto(l, 3) == 1, "auto: between equals, the larger device-local heap, then the lower index");
    l[0] = dev(VK_KIND_CPU, (uint64_t)1 << 30, false);
    ok(vk_device_pick_auto(l, 1) == -1 && vk_device_pick_auto(l, 0) == -1, "auto: -1 when nothing is usable");
}

/* ---- enumeration ------------------------------------------------------------------------- */

static bool test_enumeration(void)
{
    struct vk_device_info *list = NULL;
    int n = -1;
    char why[256];
    int rc = vk_device_list(&list, &n, why, sizeof why);
    ok(rc == SEER_OK, "vk_device_list succeeds (%s)", rc ? seer_last_error() : "ok");
    if (rc != SEER_OK || n == 0) {
        if (vk_test_required())
            ok(0, "SEER_REQUIRE_VULKAN=1 but no Vulkan device: %s", why);
        else {
            char reason[320];
            snprintf(reason, sizeof reason, "no Vulkan device on this machine (%s)", why);
            skip(reason, "Vulkan devices listed");
        }
        return false;
    }
    ok(n > 0 && list != NULL, "%d Vulkan device(s) listed", n);
    int lavapipe = -1;
    for (int i = 0; i < n; i++) {
        const struct vk_device_info *d = &list[i];
        diag("device %d: %s (%s), subgroup %u, storage range %llu", i, d->name, vk_device_kind_name(d->kind),
             d->subgroup_size, (unsigned long long)d->max_storage_range);
        ok(d->index == i && d->name[0], "device %d has its index and a name", i);
        ok(d->max_storage_range > 0 && d->n_heaps >= 1 && d->heaps[0].size_bytes > 0,
           "device %d: storage range and memory heaps are reported", i);
        if (d->usable) {
            /* Vulkan's required minimums: 128 invocations, 16 KiB shared memory, 2^27 storage range */
            ok(d->subgroup_size >= 1 && d->max_workgroup_invocations >= 128 && d->shared_memory_bytes >= 16384 &&
                   d->max_storage_range >= (1u << 27) && d->max_allocation_bytes > 0,
               "device %d: caps within Vulkan's guarantees (subgroup %u, %u invocations, %u shared bytes)", i,
               d->subgroup_size, d->max_workgroup_invocations, d->shared_memory_bytes);
        }
        if (d->kind == VK_KIND_CPU && strstr(d->name, "llvmpipe"))
            lavapipe = i;
    }
    if (lavapipe >= 0) {
        const struct vk_device_info *d = &list[lavapipe];
        ok(d->usable && d->subgroup_size >= 4 && d->max_storage_range == (1u << 27),
           "lavapipe found: usable, subgroup %u, 128 MiB storage range", d->subgroup_size);
    } else if (vk_test_required()) {
        ok(0, "SEER_REQUIRE_VULKAN=1 but lavapipe (llvmpipe) is not among the devices");
    } else {
        skip("lavapipe is not installed; devices were checked generically above", "lavapipe found");
    }
    vk_device_list_free(list);
    return true;
}

/* ---- creation and errors ----------------------------------------------------------------- */

static void test_bad_params(void)
{
    backend *be = (backend *)0x1;
    struct vk_backend_params p = vk_backend_params_default();
    p.device_index = 99;
    int rc = backend_vulkan_create(&p, &be);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "device 99") && be == (backend *)0x1,
       "device index 99: SEER_EUNSUPPORTED naming it, out untouched (%s)", seer_last_error());
    p = vk_backend_params_default();
    p.max_storage_range_override = 8;
    rc = backend_vulkan_create(&p, &be);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), "max_storage_range_override"),
       "storage override of 8 bytes is rejected (%s)", seer_last_error());

    /* Every one of our allocations in create can fail and is unwound (the driver's own are not
       hooked). The first success ends the loop. */
    int fails = 0, n;
    for (n = 1; n < 64; n++) {
        seer_alloc_fail_after(n);
        rc = backend_vulkan_create(NULL, &be);
        seer_alloc_fail_after(0);
        if (rc == SEER_OK)
            break;
        fails += rc == SEER_ENOMEM;
    }
    ok(rc == SEER_OK && fails == n - 1, "create under allocation failure: %d failures all SEER_ENOMEM, then success",
       fails);
    if (rc == SEER_OK)
        backend_free(be);
    backend_free(NULL);
    ok(1, "backend_free(NULL) is a no-op");
}

/* ---- buffers ----------------------------------------------------------------------------- */

static void fill_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)test_rand_u64();
}

/* Whole-buffer round trip of `size` bytes, then unaligned partial writes and reads. */
static void round_trip(backend *be, size_t size, const char *path)
{
    backend_buffer *buf = NULL;
    int rc = backend_buffer_alloc(be, size, &buf);
    if (!ok(rc == SEER_OK, "%s: alloc %zu bytes (%s)", path, size, rc ? seer_last_error() : "ok"))
        return;
    /* the buffer seen as a tensor of 2-byte elements; set/get then take any byte range of it */
    tensor t;
    tensor_init4(&t, DT_F16, (int64_t)(size / 2), 1, 1, 1);
    snprintf(t.name, sizeof t.name, "bytes");
    rc = backend_tensor_place(&t, buf, 0);
    unsigned char *src = malloc(size), *dst = malloc(size);
    fill_bytes(src, size);
    size_t words = size / 2 * 2; /* bytes covered by the tensor */
    rc = rc ? rc : backend_tensor_set(&t, src, 0, words);
    rc = rc ? rc : backend_tensor_get(&t, dst, 0, words);
    ok(rc == SEER_OK && !memcmp(src, dst, words), "%s: %zu bytes written and read back identical", path, words);

    /* odd offsets and sizes: a 7-byte write at byte 3, a 1-byte write at the end */
    if (words >= 16) {
        unsigned char patch[7];
        fill_bytes(patch, sizeof patch);
        memcpy(src + 3, patch, 7);
        src[words - 1] ^= 0x5a;
        rc = backend_tensor_set(&t, patch, 3, 7);
        rc = rc ? rc : backend_tensor_set(&t, src + words - 1, words - 1, 1);
        memset(dst, 0, size);
        rc = rc ? rc : backend_tensor_get(&t, dst, 1, words - 2); /* unaligned read */
        ok(rc == SEER_OK && !memcmp(src + 1, dst, words - 2), "%s: unaligned 7- and 1-byte writes, unaligned read", path);
    }
    free(src);
    free(dst);
    backend_buffer_free(buf);
}

static void test_buffers(backend *be, const char *path)
{
    /* sizes that are not whole 32-bit words (2, 6, 18) are rounded up internally */
    const size_t sizes[] = {2, 6, 18, 1000, 4096 + 12, (3u << 20) + 6};
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++)
        round_trip(be, sizes[i], path);
    ok(backend_sync(be) == SEER_OK, "%s: sync with nothing recorded", path);
}

static void test_big_transfer(backend *be)
{
    /* 20 MiB + 8 through the staging path: more than one 16 MiB staging round */
    size_t size = (20u << 20) + 6;
    round_trip(be, size, "staging, 20 MiB");
}

/* A buffer larger than the storage window: bytes on both sides of every window boundary. */
static void test_beyond_window(void)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.max_storage_range_override = 64 << 10;
    backend *be = NULL;
    int rc = backend_vulkan_create(&p, &be);
    if (!ok(rc == SEER_OK, "create with a 64 KiB storage window (%s)", rc ? seer_last_error() : "ok"))
        return;
    round_trip(be, (300u << 10) + 4, "buffer of 300 KiB > 64 KiB window");
    backend_free(be);
}

/* ---- the pipeline cache file ------------------------------------------------------------ */

static int cache_warnings;

static void count_cache_warnings(seer_log_level level, const char *component, const char *msg, void *user)
{
    (void)user;
    if (level == SEER_LOG_WARN && !strcmp(component, "vulkan") && strstr(msg, "pipeline cache"))
        cache_warnings++;
}

/* One backend life with the cache file: an op (so a pipeline is compiled), then free. */
static void cache_round(const char *path, const char *what)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.pipeline_cache_path = path;
    backend *be = NULL;
    cache_warnings = 0;
    seer_set_log_callback(count_cache_warnings, NULL);
    int rc = backend_vulkan_create(&p, &be);
    int created_warnings = cache_warnings;
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, o[5] = {0};
    tensor ta, tb;
    backend_buffer *ba = NULL, *bb = NULL;
    if (rc == SEER_OK) {
        tensor_init4(&ta, DT_F32, 5, 1, 1, 1);
        tensor_init4(&tb, DT_F32, 5, 1, 1, 1);
        rc = backend_tensor_alloc(be, &ta, &ba);
        rc = rc ? rc : backend_tensor_alloc(be, &tb, &bb);
        rc = rc ? rc : backend_tensor_set(&ta, a, 0, sizeof a);
        rc = rc ? rc : backend_tensor_set(&tb, b, 0, sizeof b);
        rc = rc ? rc : op_add(be, &ta, &ta, &tb);
        rc = rc ? rc : backend_tensor_get(&ta, o, 0, sizeof o);
        backend_buffer_free(ba);
        backend_buffer_free(bb);
        backend_free(be);
    }
    seer_set_log_callback(NULL, NULL);
    ok(rc == SEER_OK && o[0] == 11 && o[4] == 55, "pipeline cache, %s: backend runs an op (%s)", what,
       rc ? seer_last_error() : "ok");
    if (strstr(what, "corrupt"))
        ok(created_warnings == 1, "pipeline cache, %s: ignored with one warning", what);
    else
        ok(created_warnings == 0, "pipeline cache, %s: no warning at load", what);
    unsigned char head[32] = {0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    ok(got == sizeof head && head[4] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE_VALUE,
       "pipeline cache, %s: written back with a version-one header", what);
}

static void test_pipeline_cache(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/pipelines.bin", test_tmp_dir());
    cache_round(path, "first run (no file)");
    cache_round(path, "second run (loads the file)");
    FILE *f = fopen(path, "r+b");
    if (f) { /* a wrong device id in the header */
        fseek(f, 12, SEEK_SET);
        fputc(0x5a, f);
        fputc(0xa5, f);
        fclose(f);
    }
    cache_round(path, "corrupt header");
}

/* backend_memory: free <= total, an 8 MiB buffer lowers the free figure, and
   memory_limit_override caps both figures (what the memory-plan tests rely on). */
static void test_memory(void)
{
    struct vk_backend_params p = vk_backend_params_default();
    backend *be = NULL;
    uint64_t f0 = 0, t0 = 0, f1 = 0, t1 = 0;
    int rc = backend_vulkan_create(&p, &be);
    if (!ok(rc == SEER_OK, "memory: backend (%s)", rc ? seer_last_error() : "ok"))
        return;
    rc = backend_memory(be, &f0, &t0);
    ok(rc == SEER_OK && t0 > 0 && f0 <= t0, "memory: free %llu of %llu bytes", (unsigned long long)f0,
       (unsigned long long)t0);
    backend_buffer *buf = NULL;
    if (backend_buffer_alloc(be, 8 << 20, &buf) == SEER_OK && backend_memory(be, &f1, &t1) == SEER_OK)
        ok(t1 == t0 && f1 < f0, "memory: an 8 MiB buffer lowers free memory (%llu -> %llu)", (unsigned long long)f0,
           (unsigned long long)f1);
    else
        ok(0, "memory: 8 MiB buffer (%s)", seer_last_error());
    backend_buffer_free(buf);
    backend_free(be);

    p.memory_limit_override = 64 << 20;
    rc = backend_vulkan_create(&p, &be);
    if (!ok(rc == SEER_OK, "memory: backend with a 64 MiB limit (%s)", rc ? seer_last_error() : "ok"))
        return;
    buf = NULL;
    rc = backend_buffer_alloc(be, 8 << 20, &buf);
    if (rc == SEER_OK)
        rc = backend_memory(be, &f1, &t1);
    ok(rc == SEER_OK && t1 == (64u << 20) && f1 <= (56u << 20), "memory: a 64 MiB limit caps the figures: %llu free of %llu",
       (unsigned long long)f1, (unsigned long long)t1);
    backend_buffer_free(buf);
    backend_free(be);
}

static void test_backend(bool force_staging)
{
    const char *path = force_staging ? "staging" : "direct";
    struct vk_backend_params p = vk_backend_params_default();
    p.enable_validation = true;
    p.force_staging = force_staging;
    backend *be = NULL;
    int rc = backend_vulkan_create(&p, &be);
    if (!ok(rc == SEER_OK, "%s: backend_vulkan_create with validation requested (%s)", path,
            rc ? seer_last_error() : "ok"))
        return;
    ok(!strcmp(backend_name(be), "vulkan") && !strncmp(be->description, "vulkan: ", 8), "%s: %s", path,
       be->description);
    ok(be->alignment >= 4 && (be->alignment & (be->alignment - 1)) == 0 && be->max_buffer_size > 0,
       "%s: alignment %zu is a power of two, max buffer %zu", path, be->alignment, be->max_buffer_size);
    backend_buffer *buf = (backend_buffer *)0x1;
    rc = backend_buffer_alloc(be, be->max_buffer_size + 1, &buf);
    ok(rc == SEER_ENOMEM && buf == (backend_buffer *)0x1, "%s: a buffer over the device limit is refused", path);
    test_buffers(be, path);
    if (force_staging)
        test_big_transfer(be);
    if (backend_vulkan_validation_active(be))
        ok(backend_vulkan_validation_errors(be) == 0, "%s: zero validation errors (%llu)", path,
           (unsigned long long)backend_vulkan_validation_errors(be));
    else
        skip("VK_LAYER_KHRONOS_validation is not installed", "zero validation errors");
    backend_free(be);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    test_pick_auto();
    if (test_enumeration()) {
        test_bad_params();
        test_backend(false);
        test_backend(true);
        test_memory();
        test_beyond_window();
        test_pipeline_cache();
    }
    return done_testing();
}

#else
int main(void) { return plan_skip_all("built without Vulkan (SEER_VULKAN=OFF)"); }
#endif
