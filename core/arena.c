/* arena.c — bump allocation of tensors out of one backend buffer. */
#include "core/arena.h"

#include <string.h>

#include "core/error.h"
#include "core/util.h"

int arena_init(arena *a, backend *be, size_t size)
{
    memset(a, 0, sizeof *a);
    a->be = be;
    return backend_buffer_alloc(be, size, &a->buf);
}

void arena_deinit(arena *a)
{
    backend_buffer_free(a->buf);
    memset(a, 0, sizeof *a);
}

int arena_tensor(arena *a, tensor *t, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    size_t off, end;
    if (!tensor_init4(t, type, ne0, ne1, ne2, ne3))
        return seer_err(SEER_EINVAL, "arena: bad tensor shape {%lld,%lld,%lld,%lld} for %s", (long long)ne0,
                        (long long)ne1, (long long)ne2, (long long)ne3, dtype_name(type));
    if (!size_align(a->used, a->be->alignment, &off) || !size_add(off, tensor_nbytes(t), &end) ||
        end > a->buf->size)
        return seer_err(SEER_ENOMEM, "arena: %zu more bytes do not fit (%zu of %zu used)", tensor_nbytes(t),
                        a->used, a->buf->size);
    int rc = backend_tensor_place(t, a->buf, off);
    if (rc)
        return rc;
    a->used = end;
    a->peak = MAX(a->peak, a->used);
    return SEER_OK;
}

void arena_reset(arena *a) { a->used = 0; }
