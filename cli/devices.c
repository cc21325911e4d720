/* devices.c — `seer info --devices`: the CPU backend and every Vulkan device the loader sees
   (seer_device_list), one block per device with its limits and optional features, marking the
   one `--device auto` would choose. No Vulkan device is not an error: it is said on the output
   and the command still succeeds. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "seer.h"

static const char *yes_no(uint32_t features, uint32_t flag) { return features & flag ? "yes" : "no"; }

static void print_size(FILE *out, uint64_t bytes)
{
    if (bytes >= ((uint64_t)1 << 30))
        fprintf(out, "%.1f GiB", (double)bytes / (double)((uint64_t)1 << 30));
    else
        fprintf(out, "%.1f MiB", (double)bytes / (double)(1 << 20));
}

static const char *type_name(seer_device_type t)
{
    switch (t) {
    case SEER_DEVICE_CPU: return "cpu backend";
    case SEER_DEVICE_GPU_DISCRETE: return "discrete";
    case SEER_DEVICE_GPU_INTEGRATED: return "integrated";
    case SEER_DEVICE_GPU_VIRTUAL: return "virtual";
    case SEER_DEVICE_VULKAN_CPU: return "cpu";
    default: return "other";
    }
}

/* mark: "(auto)" when `--device auto` runs here; "(--device vulkan)" for the device plain `vulkan`
   picks when auto prefers the CPU backend to it (a CPU-type Vulkan device such as lavapipe). */
static void print_vulkan_device(FILE *out, const seer_device_info *d)
{
    const char *mark = d->picked == SEER_DEVICE_PICKED_AUTO     ? "(auto)"
                       : d->picked == SEER_DEVICE_PICKED_VULKAN ? "(--device vulkan)"
                                                                : NULL;
    fprintf(out, "%s%s%s\n", d->spec, mark ? "  " : "", mark ? mark : "");
    fprintf(out, "  name               %s\n", d->name);
    fprintf(out, "  type               %s\n", type_name(d->type));
    fprintf(out, "  vendor/device id   0x%04x/0x%04x\n", d->vendor_id, d->device_id);
    fprintf(out, "  api version        %s\n", d->api_version);
    fprintf(out, "  driver             %s\n", d->driver);
    for (int32_t i = 0; i < d->n_heaps; i++) {
        fprintf(out, "  memory heap %-2d     ", i);
        print_size(out, d->heaps[i].bytes);
        fprintf(out, "%s\n", d->heaps[i].device_local ? " device-local" : "");
    }
    fprintf(out, "  subgroup size      %u%s\n", d->subgroup_size,
            d->features & SEER_DEVICE_SUBGROUP_ARITH ? ", arithmetic" : "");
    fprintf(out, "  max storage range  %llu bytes\n", (unsigned long long)d->max_storage_bytes);
    fprintf(out, "  max allocation     %llu bytes\n", (unsigned long long)d->max_allocation_bytes);
    fprintf(out, "  workgroup size     %u x %u x %u, %u invocations\n", d->max_workgroup_size[0],
            d->max_workgroup_size[1], d->max_workgroup_size[2], d->max_workgroup_invocations);
    fprintf(out, "  shared memory      %u bytes\n", d->shared_memory_bytes);
    fprintf(out, "  fp16 arithmetic    %s\n", yes_no(d->features, SEER_DEVICE_FP16));
    fprintf(out, "  16-bit storage     %s\n", yes_no(d->features, SEER_DEVICE_STORAGE16));
    fprintf(out, "  int8 dot product   %s\n", yes_no(d->features, SEER_DEVICE_INT_DOT));
    fprintf(out, "  cooperative matrix %s\n", yes_no(d->features, SEER_DEVICE_COOPMAT));
    if (!(d->features & SEER_DEVICE_USABLE))
        fprintf(out, "  usable             no (needs Vulkan 1.1 and a compute queue)\n");
}

int cli_info_devices(FILE *out)
{
    seer_device_info *list;
    size_t n;
    char note[256];
    int rc = seer_device_list(&list, &n, note, sizeof note);
    if (rc)
        return cli_fail(rc);
    /* the CPU backend is always the first entry */
    fprintf(out, "cpu%s\n  threads            %d\n  features           %s\n",
            list[0].picked == SEER_DEVICE_PICKED_AUTO ? "  (auto)" : "", list[0].n_threads, seer_system_info());
    for (size_t i = 1; i < n; i++)
        print_vulkan_device(out, &list[i]);
    if (note[0])
        fprintf(out, "%s\n", note);
    seer_free(list);
    return CLI_OK;
}
