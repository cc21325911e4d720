/* arena.h — the per-forward arena: intermediates of one forward pass are bump-allocated from one
   backend buffer and released all at once by arena_reset (docs/ARCHITECTURE.md, "Backends and ops"). On Vulkan the
   caller must sync before reset if recorded work still reads the arena. */
#ifndef SEER_CORE_ARENA_H
#define SEER_CORE_ARENA_H

#include "core/backend.h"

typedef struct arena {
    backend *be;
    backend_buffer *buf;
    size_t used;  /* bytes handed out since the last reset */
    size_t peak;  /* high-water mark over the arena's life */
} arena;

/* Allocates `size` bytes on be. Returns SEER_ENOMEM (with a message) when the backend cannot. */
int arena_init(arena *a, backend *be, size_t size);
void arena_deinit(arena *a);
/* Shapes and places a new contiguous tensor (trailing dims may be 1). Fails with SEER_ENOMEM,
   naming the arena's size, when it does not fit. */
int arena_tensor(arena *a, tensor *t, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
void arena_reset(arena *a);

#endif
