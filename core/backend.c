/* backend.c — the backend-independent half of core/backend.h: buffer and tensor placement,
   and the f32 conversion helpers used by loaders and tests. */
#include "core/backend.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "core/quant.h"
#include "core/util.h"

void backend_free(backend *be)
{
    if (be)
        be->iface->free(be);
}

const char *backend_name(const backend *be) { return be->iface->name; }

static const char *const op_names[OP_COUNT] = {
#define NAME(name, NAME) [OP_##NAME] = #name,
    SEER_OPS(NAME)
#undef NAME
};

const char *op_name(enum op_id op) { return (unsigned)op < OP_COUNT ? op_names[op] : "?"; }

/* Whether the slot of op is filled: the slots' offsets come from the same list as the enum. */
static bool has_slot(const backend *be, enum op_id op)
{
    static const size_t off[OP_COUNT] = {
#define OFF(name, NAME) [OP_##NAME] = offsetof(struct backend_ops, name),
        SEER_OPS(OFF)
#undef OFF
    };
    int (*fn)(void);
    memcpy(&fn, (const char *)&be->iface->ops + off[op], sizeof fn);
    return fn != NULL;
}

const char *backend_missing_op(const backend *be)
{
    for (int op = 0; op < OP_COUNT; op++)
        if (!has_slot(be, (enum op_id)op))
            return op_name((enum op_id)op);
    return NULL;
}

bool backend_supports(backend *be, enum op_id op, const tensor *const *t, int n)
{
    if ((unsigned)op >= OP_COUNT || !has_slot(be, op))
        return false;
    return !be->iface->supports || be->iface->supports(be, op, t, n);
}

int backend_buffer_alloc(backend *be, size_t size, backend_buffer **out)
{
    if (size > be->max_buffer_size)
        return seer_err(SEER_ENOMEM, "%s: a buffer of %zu bytes exceeds the backend's limit of %zu",
                        backend_name(be), size, be->max_buffer_size);
    return be->iface->buffer_alloc(be, size, out);
}

int backend_buffer_from_host(backend *be, void *ptr, size_t size, backend_buffer **out)
{
    if (!be->iface->buffer_from_host)
        return seer_err(SEER_EUNSUPPORTED, "%s: cannot use host memory in place", backend_name(be));
    return be->iface->buffer_from_host(be, ptr, size, out);
}

bool backend_borrows_host(const backend *be) { return be->iface->buffer_from_host != NULL; }

void backend_buffer_free(backend_buffer *buf)
{
    if (buf)
        buf->be->iface->buffer_free(buf);
}

int backend_tensor_place(tensor *t, backend_buffer *buf, size_t offset)
{
    size_t end;
    if (offset % buf->be->alignment != 0)
        return seer_err(SEER_EINVAL, "tensor '%s': offset %zu is not aligned to %zu", t->name, offset,
                        buf->be->alignment);
    if (!size_add(offset, tensor_nbytes(t), &end) || end > buf->size)
        return seer_err(SEER_EINVAL, "tensor '%s' (%zu bytes at %zu) does not fit in a buffer of %zu bytes",
                        t->name, tensor_nbytes(t), offset, buf->size);
    t->buf = buf;
    t->offset = offset;
    t->data = buf->host ? (char *)buf->host + offset : NULL;
    return SEER_OK;
}

int backend_tensor_alloc(backend *be, tensor *t, backend_buffer **out_buf)
{
    backend_buffer *buf;
    int rc = backend_buffer_alloc(be, tensor_nbytes(t), &buf);
    if (rc)
        return rc;
    rc = backend_tensor_place(t, buf, 0);
    if (rc) {
        backend_buffer_free(buf);
        return rc;
    }
    *out_buf = buf;
    return SEER_OK;
}

int backend_weight_prepare(tensor *t)
{
    backend *be = t->buf ? t->buf->be : NULL;
    return be && be->iface->weight_prepare ? be->iface->weight_prepare(be, t) : SEER_OK;
}

static int check_range(const tensor *t, size_t off, size_t n)
{
    size_t end;
    if (!t->buf)
        return seer_err(SEER_EINVAL, "tensor '%s' has no buffer", t->name);
    if (!size_add(off, n, &end) || end > tensor_nbytes(t))
        return seer_err(SEER_EINVAL, "tensor '%s': byte range %zu+%zu is outside its %zu bytes", t->name, off, n,
                        tensor_nbytes(t));
    return SEER_OK;
}

int backend_tensor_set(tensor *t, const void *src, size_t off, size_t n)
{
    int rc = check_range(t, off, n);
    return rc ? rc : t->buf->be->iface->tensor_set(t->buf->be, t, src, off, n);
}

int backend_tensor_get(const tensor *t, void *dst, size_t off, size_t n)
{
    int rc = check_range(t, off, n);
    return rc ? rc : t->buf->be->iface->tensor_get(t->buf->be, t, dst, off, n);
}

int backend_sync(backend *be) { return be->iface->sync(be); }

int backend_memory(backend *be, uint64_t *free_bytes, uint64_t *total_bytes)
{
    if (!be->iface->memory)
        return seer_err(SEER_EUNSUPPORTED, "%s: cannot tell its free memory", backend_name(be));
    return be->iface->memory(be, free_bytes, total_bytes);
}

int backend_tensor_set_f32(tensor *t, const float *src)
{
    if (!tensor_is_contiguous(t))
        return seer_err(SEER_EINVAL, "tensor '%s': set_f32 needs a contiguous tensor", t->name);
    size_t nbytes = tensor_nbytes(t);
    int64_t n = tensor_nelements(t), row = t->ne[0];
    void *tmp = seer_malloc(nbytes);
    if (!tmp)
        return seer_err(SEER_ENOMEM, "tensor '%s': no memory for %zu bytes", t->name, nbytes);
    int rc = SEER_OK;
    for (int64_t r = 0; r < n / row && rc == SEER_OK; r++) {
        char *dst = (char *)tmp + (size_t)r * t->nb[1];
        const float *s = src + r * row;
        if (t->type == DT_I32) {
            for (int64_t i = 0; i < row; i++)
                ((int32_t *)dst)[i] = (int32_t)s[i];
        } else if (!quantize_row(t->type, s, dst, row)) {
            rc = seer_err(SEER_EUNSUPPORTED, "tensor '%s': cannot convert f32 to %s", t->name, dtype_name(t->type));
        }
    }
    if (rc == SEER_OK)
        rc = backend_tensor_set(t, tmp, 0, nbytes);
    free(tmp);
    return rc;
}

int backend_tensor_get_f32(const tensor *t, float *dst)
{
    if (!tensor_is_contiguous(t))
        return seer_err(SEER_EINVAL, "tensor '%s': get_f32 needs a contiguous tensor", t->name);
    size_t nbytes = tensor_nbytes(t);
    int64_t n = tensor_nelements(t), row = t->ne[0];
    void *tmp = seer_malloc(nbytes);
    if (!tmp)
        return seer_err(SEER_ENOMEM, "tensor '%s': no memory for %zu bytes", t->name, nbytes);
    int rc = backend_tensor_get(t, tmp, 0, nbytes);
    for (int64_t r = 0; rc == SEER_OK && r < n / row; r++) {
        const char *s = (const char *)tmp + (size_t)r * t->nb[1];
        if (t->type == DT_I32) {
            for (int64_t i = 0; i < row; i++)
                dst[r * row + i] = (float)((const int32_t *)s)[i];
        } else {
            dequantize_row(t->type, s, dst + r * row, row);
        }
    }
    free(tmp);
    return rc;
}
