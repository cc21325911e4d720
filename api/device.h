/* device.h — choosing where a model runs (`--device auto|cpu|vulkan[:N]`, design.md "Device choice"):
   auto prefers a discrete GPU, then an integrated one, then the CPU backend; a CPU-type Vulkan
   device (lavapipe) only when asked for by name or index. A Vulkan backend that lacks an op the
   model needs is not chosen by auto, and is refused with the op's name when asked for. */
#ifndef SEER_API_DEVICE_H
#define SEER_API_DEVICE_H

#include "core/backend.h"

/* spec: NULL or "auto", "cpu", "vulkan", "vulkan:N". n_threads: CPU threads (0 = online cores). */
int backend_open(const char *spec, int n_threads, backend **out);

#endif
