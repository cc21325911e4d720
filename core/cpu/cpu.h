/* cpu.h — the CPU backend: host-memory buffers, ops run when called on a thread pool. It is the
   fallback backend and the reference the Vulkan backend is tested against. */
#ifndef SEER_CORE_CPU_H
#define SEER_CORE_CPU_H

#include "core/backend.h"

/* n_threads >= 1. The backend starts exact (see below). */
int backend_cpu_create(int n_threads, backend **out);
/* exact (the default): op_matmul multiplies with f32 activations, within the f32 tolerances the
   fidelity tests hold. Not exact: for quantised weights the activations are rounded to 8 bits (per
   32 values; per 256 for Q4_K and the interleaved Q6_K and Q5_K: docs/ARCHITECTURE.md) and
   multiplied in integers (core/cpu/qdot.h), as llama.cpp does — several times
   faster decode. Set it before loading a model: the weights' layout follows it
   (backend_weight_prepare). A no-op on other backends. */
void backend_cpu_set_exact(backend *be, bool exact);

/* Where weights that a loader hands over in host memory (backend_buffer_from_host: the mapped
   model file) are read from. MAP: in place, nothing copied (starts at once; the page cache is
   shared with other processes). COPY: copied into large-page memory (seer_large_alloc), which
   Q8_0 decode streams about 15 % faster (docs/PERFORMANCE.md). AUTO (the default): copied while
   the copies fit in half of the memory available when the first weight arrives, the rest in
   place. A no-op on other backends, which copy to their device anyway. */
enum cpu_weights { CPU_WEIGHTS_AUTO, CPU_WEIGHTS_MAP, CPU_WEIGHTS_COPY };
void backend_cpu_set_weights(backend *be, enum cpu_weights mode);
/* "auto", "map" or "copy" (NULL = "auto") into *mode; false for anything else. */
bool cpu_weights_parse(const char *s, enum cpu_weights *mode);

#endif
