/* devices.c — `seer info --devices`: the CPU backend and every Vulkan device the loader sees, one
   block per device with its limits and optional features, marking the one `--device auto` would
   choose (vulkan/vulkan.h vk_device_pick_auto). No Vulkan device is not an error: it is said on
   the output and the command still succeeds. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "cli/cli.h"
#include "seer.h"
#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"
#endif

static long cpu_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

#if SEER_HAVE_VULKAN
static const char *yes_no(bool b) { return b ? "yes" : "no"; }

static void print_size(FILE *out, uint64_t bytes)
{
    if (bytes >= ((uint64_t)1 << 30))
        fprintf(out, "%.1f GiB", (double)bytes / (double)((uint64_t)1 << 30));
    else
        fprintf(out, "%.1f MiB", (double)bytes / (double)(1 << 20));
}

/* mark: "(auto)" when `--device auto` runs here; "(--device vulkan)" for the device plain `vulkan`
   picks when auto prefers the CPU backend to it (a CPU-type Vulkan device such as lavapipe). */
static void print_vulkan_device(FILE *out, const struct vk_device_info *d, const char *mark)
{
    fprintf(out, "vulkan:%d%s%s\n", d->index, mark ? "  " : "", mark ? mark : "");
    fprintf(out, "  name               %s\n", d->name);
    fprintf(out, "  type               %s\n", vk_device_kind_name(d->kind));
    fprintf(out, "  vendor/device id   0x%04x/0x%04x\n", d->vendor_id, d->device_id);
    fprintf(out, "  api version        %u.%u.%u\n", (d->api_version >> 22) & 0x7f, (d->api_version >> 12) & 0x3ff,
            d->api_version & 0xfff);
    fprintf(out, "  driver             %s%s%s%s(version %s)\n", d->driver_name, d->driver_name[0] ? " " : "",
            d->driver_info, d->driver_info[0] ? " " : "", d->driver_version_str);
    for (uint32_t i = 0; i < d->n_heaps; i++) {
        fprintf(out, "  memory heap %-2u     ", i);
        print_size(out, d->heaps[i].size_bytes);
        fprintf(out, "%s\n", d->heaps[i].device_local ? " device-local" : "");
    }
    fprintf(out, "  subgroup size      %u%s\n", d->subgroup_size, d->subgroup_arith ? ", arithmetic" : "");
    fprintf(out, "  max storage range  %llu bytes\n", (unsigned long long)d->max_storage_range);
    fprintf(out, "  max allocation     %llu bytes\n", (unsigned long long)d->max_allocation_bytes);
    fprintf(out, "  workgroup size     %u x %u x %u, %u invocations\n", d->max_workgroup_size[0],
            d->max_workgroup_size[1], d->max_workgroup_size[2], d->max_workgroup_invocations);
    fprintf(out, "  shared memory      %u bytes\n", d->shared_memory_bytes);
    fprintf(out, "  fp16 arithmetic    %s\n", yes_no(d->fp16));
    fprintf(out, "  16-bit storage     %s\n", yes_no(d->storage16));
    fprintf(out, "  int8 dot product   %s\n", yes_no(d->int_dot));
    fprintf(out, "  cooperative matrix %s\n", yes_no(d->coopmat));
    if (!d->usable)
        fprintf(out, "  usable             no (needs Vulkan 1.1 and a compute queue)\n");
}
#endif

/* Auto policy (api/device.c backend_open): a discrete GPU, then an integrated (or virtual) one,
   then the CPU backend; a CPU-type Vulkan device only when asked for. */
int cli_info_devices(FILE *out)
{
#if SEER_HAVE_VULKAN
    struct vk_device_info *list;
    int n;
    char why[256] = "";
    int rc = vk_device_list(&list, &n, why, sizeof why);
    if (rc)
        return cli_fail(rc);
    int pick = n ? vk_device_pick_auto(list, n) : -1;
    bool gpu_auto = pick >= 0 && list[pick].kind != VK_KIND_CPU && list[pick].kind != VK_KIND_OTHER;
    fprintf(out, "cpu%s\n  threads            %ld\n", gpu_auto ? "" : "  (auto)", cpu_threads());
    if (n == 0)
        fprintf(out, "vulkan: no device found (%s)\n", why[0] ? why : "no reason given");
    for (int i = 0; i < n; i++)
        print_vulkan_device(out, &list[i], i != pick ? NULL : gpu_auto ? "(auto)" : "(--device vulkan)");
    if (n && pick < 0)
        fprintf(out, "vulkan: no usable device\n");
    vk_device_list_free(list);
#else
    fprintf(out, "cpu  (auto)\n  threads            %ld\n", cpu_threads());
    fprintf(out, "vulkan: not built (configure with -DSEER_VULKAN=ON)\n");
#endif
    return CLI_OK;
}
