/* device.h — choosing where a model runs (`--device auto|cpu|vulkan[:N]`; docs/ARCHITECTURE.md,
   "The Vulkan backend": device choice): auto prefers a discrete GPU, then an integrated one, then the
   CPU backend; a CPU-type Vulkan device (lavapipe) only when asked for by name or index. A Vulkan
   backend that lacks an op the model needs is not chosen by auto, and is refused with the op's name
   when asked for. When the model itself cannot go on the device auto chose (the memory plan refuses,
   an allocation fails, a weight type is unsupported, the device is lost while loading),
   seer_model_load loads it on the CPU instead, with a warning saying why (api/model.c). */
#ifndef SEER_API_DEVICE_H
#define SEER_API_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"

/* spec: NULL or "auto", "cpu", "vulkan", "vulkan:N". n_threads: CPU threads (0 = online cores). */
int backend_open(const char *spec, int n_threads, backend **out);

/* Whether `spec` is auto, the one choice that may fall back to the CPU. */
bool backend_spec_is_auto(const char *spec);

/* Test hooks (tests/vulkan/faults.c only; not thread-safe, never set by the library or the CLI):
   Vulkan backends opened from now on get these fault-injection countdowns, memory limit and
   staging switch (vk_backend_params.fail_alloc_after, lose_device_after, memory_limit_override,
   force_staging: uploads submit copies, as on a discrete GPU), and auto may
   choose a CPU-type Vulkan device (lavapipe), so the fallback is testable on machines without a
   GPU. NULL resets. */
struct device_test_hooks {
    bool auto_takes_cpu_devices;
    long fail_alloc_after, lose_device_after;
    uint64_t memory_limit;
    bool force_staging;
};
void device_set_test_hooks(const struct device_test_hooks *h);

#endif
