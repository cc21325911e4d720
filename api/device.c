/* device.c — backend selection for `--device` (api/device.h), and what seer.h says about the
   machine: its devices (seer_device_list), the CPU kernels in use (seer_system_info) and whether
   mapped files changed (seer_fault_check). It lives above core/ because it knows every backend
   (core/cpu, vulkan/); core/ knows none of them. */
#define _DEFAULT_SOURCE
#include "api/device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu/cpu.h"
#include "core/cpu/matmul_x86.h"
#include "core/cpu/qdot.h"
#include "core/cpu/qdot_amx.h"
#include "core/error.h"
#include "core/io.h"
#include "core/log.h"
#include "core/util.h"
#include "seer.h"
#ifdef SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"
#endif

#ifdef SEER_HAVE_VULKAN
#define SEER_HAVE_VULKAN_INT 1
#else
#define SEER_HAVE_VULKAN_INT 0
#endif

static struct device_test_hooks hooks; /* all zero outside tests */

void device_set_test_hooks(const struct device_test_hooks *h) { hooks = h ? *h : (struct device_test_hooks){0}; }

bool backend_spec_is_auto(const char *spec) { return !spec || !strcmp(spec, "auto"); }

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

#ifdef SEER_HAVE_VULKAN
/* Opens Vulkan device `index` (-1: auto). `asked`: the user named Vulkan, so problems are errors
   rather than a quiet fall back to the CPU. */
static int open_vulkan(int index, bool asked, backend **out)
{
    struct vk_backend_params p = vk_backend_params_default();
    backend *be;
    p.device_index = index;
    p.fail_alloc_after = hooks.fail_alloc_after;
    p.lose_device_after = hooks.lose_device_after;
    p.memory_limit_override = hooks.memory_limit;
    p.force_staging = hooks.force_staging;
    if (index < 0) {
        struct vk_device_info *list = NULL;
        int n = 0, pick;
        char why[256] = "";
        if (vk_device_list(&list, &n, why, sizeof why) != SEER_OK || n == 0) {
            vk_device_list_free(list);
            return asked ? seer_err(SEER_EDEVICE, "no Vulkan device%s%s", why[0] ? ": " : "", why) : SEER_EDEVICE;
        }
        pick = vk_device_pick_auto(list, n);
        /* auto skips CPU-type devices unless they are all there is and Vulkan was asked for */
        bool cpu_only = pick >= 0 && list[pick].kind == VK_KIND_CPU;
        if (pick >= 0)
            p.device_index = list[pick].index;
        vk_device_list_free(list);
        if (pick < 0 || (cpu_only && !asked && !hooks.auto_takes_cpu_devices))
            return SEER_EDEVICE;
    }
    int rc = backend_vulkan_create(&p, &be);
    if (rc)
        return rc;
    const char *missing = backend_missing_op(be);
    if (missing) {
        backend_free(be);
        if (!asked) {
            LOG_INFO("device", "vulkan backend lacks op_%s: using the CPU", missing);
            return SEER_EUNSUPPORTED;
        }
        return seer_err(SEER_EUNSUPPORTED, "the Vulkan backend does not implement op_%s yet; use --device cpu",
                        missing);
    }
    *out = be;
    return SEER_OK;
}
#endif

int backend_open(const char *spec, int n_threads, backend **out)
{
    if (n_threads <= 0)
        n_threads = cpu_count();
    if (backend_spec_is_auto(spec)) {
#ifdef SEER_HAVE_VULKAN
        if (open_vulkan(-1, false, out) == SEER_OK)
            return SEER_OK;
        seer_err_clear();
#endif
        return backend_cpu_create(n_threads, out);
    }
    if (!strcmp(spec, "cpu"))
        return backend_cpu_create(n_threads, out);
    if (!strncmp(spec, "vulkan", 6) && (spec[6] == '\0' || spec[6] == ':')) {
#ifdef SEER_HAVE_VULKAN
        int index = -1;
        if (spec[6] == ':') {
            char *end;
            long v = strtol(spec + 7, &end, 10);
            if (end == spec + 7 || *end || v < 0 || v > 255)
                return seer_err(SEER_EINVAL, "bad device '%s': expected vulkan:N with N a device index", spec);
            index = (int)v;
        }
        return open_vulkan(index, true, out);
#else
        return seer_err(SEER_EUNSUPPORTED, "this seer was built without Vulkan (SEER_VULKAN=OFF)");
#endif
    }
    return seer_err(SEER_EINVAL, "bad device '%s': expected auto, cpu, vulkan or vulkan:N", spec);
}

/* ---- seer.h: devices, system info, faults ------------------------------------------------------ */

#ifdef SEER_HAVE_VULKAN
static seer_device_type device_type(enum vk_device_kind k)
{
    switch (k) {
    case VK_KIND_DISCRETE: return SEER_DEVICE_GPU_DISCRETE;
    case VK_KIND_INTEGRATED: return SEER_DEVICE_GPU_INTEGRATED;
    case VK_KIND_VIRTUAL: return SEER_DEVICE_GPU_VIRTUAL;
    case VK_KIND_CPU: return SEER_DEVICE_VULKAN_CPU;
    default: return SEER_DEVICE_OTHER;
    }
}

static void vulkan_entry(const struct vk_device_info *d, seer_device_info *e)
{
    snprintf(e->spec, sizeof e->spec, "vulkan:%d", d->index);
    snprintf(e->name, sizeof e->name, "%s", d->name);
    e->type = device_type(d->kind);
    e->features = (d->usable ? SEER_DEVICE_USABLE : 0u) | (d->fp16 ? SEER_DEVICE_FP16 : 0u) |
                  (d->storage16 ? SEER_DEVICE_STORAGE16 : 0u) | (d->int_dot ? SEER_DEVICE_INT_DOT : 0u) |
                  (d->coopmat ? SEER_DEVICE_COOPMAT : 0u) | (d->subgroup_arith ? SEER_DEVICE_SUBGROUP_ARITH : 0u);
    e->vendor_id = d->vendor_id;
    e->device_id = d->device_id;
    snprintf(e->api_version, sizeof e->api_version, "%u.%u.%u", (d->api_version >> 22) & 0x7f,
             (d->api_version >> 12) & 0x3ff, d->api_version & 0xfff);
    snprintf(e->driver, sizeof e->driver, "%.150s%s%.150s%s(version %.60s)", d->driver_name,
             d->driver_name[0] ? " " : "", d->driver_info, d->driver_info[0] ? " " : "", d->driver_version_str);
    e->n_heaps = (int32_t)MIN(d->n_heaps, (uint32_t)SEER_DEVICE_MAX_HEAPS);
    for (int32_t h = 0; h < e->n_heaps; h++) {
        e->heaps[h].bytes = d->heaps[h].size_bytes;
        e->heaps[h].device_local = d->heaps[h].device_local;
        e->memory_bytes += d->heaps[h].device_local ? d->heaps[h].size_bytes : 0;
    }
    e->subgroup_size = d->subgroup_size;
    e->max_storage_bytes = d->max_storage_range;
    e->max_allocation_bytes = d->max_allocation_bytes;
    memcpy(e->max_workgroup_size, d->max_workgroup_size, sizeof e->max_workgroup_size);
    e->max_workgroup_invocations = d->max_workgroup_invocations;
    e->shared_memory_bytes = d->shared_memory_bytes;
}
#endif

/* Auto's policy is backend_open's: a discrete GPU, then an integrated (or virtual) one, then the
   CPU backend; a CPU-type Vulkan device only when asked for (then it is what plain "vulkan" picks). */
int seer_device_list(seer_device_info **devices, size_t *n_devices, char *note, size_t note_size)
{
    char msg[320] = "";
    int n_vk = 0;
    *devices = NULL;
    *n_devices = 0;
#ifdef SEER_HAVE_VULKAN
    char why[256] = "";
    int pick;
    struct vk_device_info *list = NULL;
    int rc = vk_device_list(&list, &n_vk, why, sizeof why);
    if (rc)
        return rc;
    pick = n_vk ? vk_device_pick_auto(list, n_vk) : -1;
    if (n_vk == 0)
        snprintf(msg, sizeof msg, "no Vulkan device found (%s)", why[0] ? why : "no reason given");
    else if (pick < 0)
        snprintf(msg, sizeof msg, "no usable Vulkan device");
#else
    snprintf(msg, sizeof msg, "Vulkan not built (configure with -DSEER_VULKAN=ON)");
#endif
    seer_device_info *d = calloc((size_t)n_vk + 1, sizeof *d);
    if (!d) {
#ifdef SEER_HAVE_VULKAN
        vk_device_list_free(list);
#endif
        return seer_err(SEER_ENOMEM, "out of memory listing devices");
    }
    snprintf(d[0].spec, sizeof d[0].spec, "cpu");
    snprintf(d[0].name, sizeof d[0].name, "CPU");
    d[0].type = SEER_DEVICE_CPU;
    d[0].n_threads = cpu_count();
    d[0].picked = SEER_DEVICE_PICKED_AUTO;
#ifdef SEER_HAVE_VULKAN
    for (int i = 0; i < n_vk; i++) {
        vulkan_entry(&list[i], &d[i + 1]);
        if (i != pick)
            continue;
        bool gpu = list[i].kind != VK_KIND_CPU && list[i].kind != VK_KIND_OTHER;
        d[i + 1].picked = gpu ? SEER_DEVICE_PICKED_AUTO : SEER_DEVICE_PICKED_VULKAN;
        if (gpu)
            d[0].picked = 0;
    }
    vk_device_list_free(list);
#endif
    if (note && note_size)
        snprintf(note, note_size, "%s", msg);
    *devices = d;
    *n_devices = (size_t)n_vk + 1;
    return SEER_OK;
}

static char system_info[256];
static pthread_once_t system_info_once = PTHREAD_ONCE_INIT;

static void system_info_make(void)
{
#ifdef SEER_MM_X86
    snprintf(system_info, sizeof system_info,
             "x86-64 | AVX2 FMA F16C = %d | AVX512 VNNI = %d | AMX INT8 = %d | int8 kernels = %s | Vulkan = %d",
             mm_x86_available(), mm_avx512_available(), qamx_ready(), qdot_isa(), SEER_HAVE_VULKAN_INT);
#else
    snprintf(system_info, sizeof system_info, "portable C kernels | int8 kernels = %s | Vulkan = %d", qdot_isa(),
             SEER_HAVE_VULKAN_INT);
#endif
}

const char *seer_system_info(void)
{
    pthread_once(&system_info_once, system_info_make);
    return system_info;
}

int seer_fault_check(void) { return io_check_all(); }
