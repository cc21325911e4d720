/* cpu.h — the CPU backend: host-memory buffers, ops run when called on a thread pool. It is the
   fallback backend and the reference the Vulkan backend is tested against. */
#ifndef SEER_CORE_CPU_H
#define SEER_CORE_CPU_H

#include "core/backend.h"

/* n_threads >= 1. The backend starts exact (see below). */
int backend_cpu_create(int n_threads, backend **out);
/* exact (the default): op_matmul multiplies with f32 activations, within the f32 tolerances the
   fidelity tests hold. Not exact: for quantised weights the activations are rounded to 8 bits per
   32 values and multiplied in integers (core/cpu/qdot.h), as llama.cpp does — several times
   faster decode. A no-op on other backends. */
void backend_cpu_set_exact(backend *be, bool exact);

#endif
