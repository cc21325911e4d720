/* cpu.h — the CPU backend: host-memory buffers, ops run when called on a thread pool. It is the
   fallback backend and the reference the Vulkan backend is tested against. */
#ifndef SEER_CORE_CPU_H
#define SEER_CORE_CPU_H

#include "core/backend.h"

/* n_threads >= 1. */
int backend_cpu_create(int n_threads, backend **out);

#endif
