/* device.c — backend selection for `--device` (api/device.h). It lives above core/ because it
   knows every backend (core/cpu, vulkan/); core/ knows none of them. */
#define _DEFAULT_SOURCE
#include "api/device.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu/cpu.h"
#include "core/error.h"
#include "core/log.h"
#ifdef SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"
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
