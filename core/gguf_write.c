/* gguf_write.c — GGUF v3 writer (contract in gguf_write.h; layout from ggml's GGUF spec, the same
   facts core/gguf.c reads): header, key/value metadata, tensor infos, aligned data section.
   Divisions: 1. writer state and byte encoding  2. metadata  3. tensor infos
              4. output file (temporary file, buffered writes with a fault hook, atomic rename) */
#define _POSIX_C_SOURCE 200809L
#include "core/gguf_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf_write.c copies host integers as GGUF's little-endian fields and needs a little-endian host"
#endif

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3
#define OUT_BUF_BYTES ((size_t)4 << 20) /* big writes: a 9B model is written in ~1000 calls per GB */

/* ---- 1. state and encoding ------------------------------------------------------------------ */

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

struct tdecl {
    char *name;
    enum dtype type;
    int n_dims;
    int64_t ne[TENSOR_MAX_DIMS];
    size_t nbytes;
    uint64_t offset; /* relative to the data section, assigned at begin */
};

enum wstate { W_DECLARING, W_WRITING, W_DONE, W_FAILED };

struct gguf_writer {
    enum wstate state;
    size_t alignment;
    struct bytes kv;   /* encoded key/value entries */
    int64_t n_kv;
    char **keys;       /* for the uniqueness check */
    size_t cap_keys;
    struct tdecl *t;
    int64_t n_t;
    size_t cap_t;
    /* output */
    char *path, *tmp_path;
    int fd;
    uint8_t *obuf;
    size_t olen;
    uint64_t written;  /* bytes handed to write(2) plus buffered */
    int64_t cur;       /* tensor being written */
    size_t cur_done;   /* its bytes written so far */
};

static long write_fail_countdown; /* 0: never; n: the nth write(2) from now fails */

void gguf_writer_fail_after(long n) { write_fail_countdown = n; }

static int bytes_reserve(struct bytes *b, size_t n)
{
    size_t need;
    if (!size_add(b->len, n, &need))
        return seer_err(SEER_ENOMEM, "gguf writer: metadata larger than memory");
    if (!seer_grow(&b->p, &b->cap, need, 1, 4096))
        return seer_err(SEER_ENOMEM, "gguf writer: no memory for %zu bytes of metadata", need);
    return SEER_OK;
}

static int put(struct bytes *b, const void *p, size_t n)
{
    int rc = bytes_reserve(b, n);
    if (rc == SEER_OK && n) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }
    return rc;
}

static int put_u32(struct bytes *b, uint32_t v) { return put(b, &v, 4); }
static int put_u64(struct bytes *b, uint64_t v) { return put(b, &v, 8); }
static int put_gstr(struct bytes *b, const char *s, size_t n)
{
    int rc = put_u64(b, n);
    return rc ? rc : put(b, s, n);
}

int gguf_writer_create(gguf_writer **out)
{
    gguf_writer *w = seer_calloc(1, sizeof *w);
    if (!w)
        return seer_err(SEER_ENOMEM, "gguf writer: no memory");
    w->alignment = GGUF_DEFAULT_ALIGNMENT;
    w->fd = -1;
    *out = w;
    return SEER_OK;
}

static void close_tmp(gguf_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->tmp_path)
        unlink(w->tmp_path);
}

void gguf_writer_free(gguf_writer *w)
{
    if (!w)
        return;
    if (w->state != W_DONE)
        close_tmp(w);
    for (int64_t i = 0; i < w->n_kv; i++)
        free(w->keys[i]);
    free(w->keys);
    for (int64_t i = 0; i < w->n_t; i++)
        free(w->t[i].name);
    free(w->t);
    free(w->kv.p);
    free(w->path);
    free(w->tmp_path);
    free(w->obuf);
    free(w);
}

/* Marks the writer failed (removing the temporary file) and passes the code through. */
static int fail(gguf_writer *w, int rc)
{
    if (w->state != W_DONE) {
        close_tmp(w);
        w->state = W_FAILED;
    }
    return rc;
}

static int check_declaring(gguf_writer *w, const char *what)
{
    if (w->state != W_DECLARING)
        return seer_err(SEER_EINVAL, "gguf writer: %s after the header was written (or after a failure)", what);
    return SEER_OK;
}

/* Keys and tensor names: 1..GGUF_MAX_NAME bytes (the reader's limits). */
static int check_name(const char *name, const char *what)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > GGUF_MAX_NAME)
        return seer_err(SEER_EINVAL, "gguf writer: %s '%.64s' must be 1..%d bytes long", what, name ? name : "",
                        GGUF_MAX_NAME);
    return SEER_OK;
}

int gguf_writer_set_alignment(gguf_writer *w, size_t alignment)
{
    int rc = check_declaring(w, "set_alignment");
    if (rc)
        return rc;
    if (alignment < 1 || alignment > ((size_t)1 << 30) || (alignment & (alignment - 1)))
        return seer_err(SEER_EINVAL, "gguf writer: alignment %zu is not a power of two in 1..2^30", alignment);
    if (w->n_t > 0)
        return seer_err(SEER_EINVAL, "gguf writer: alignment must be set before tensors are declared");
    for (int64_t i = 0; i < w->n_kv; i++)
        if (!strcmp(w->keys[i], "general.alignment"))
            return seer_err(SEER_EINVAL, "gguf writer: alignment set twice");
    w->alignment = alignment;
    if (alignment == GGUF_DEFAULT_ALIGNMENT)
        return SEER_OK;
    return gguf_writer_add_u32(w, "general.alignment", (uint32_t)alignment);
}

/* ---- 2. metadata ---------------------------------------------------------------------------- */

/* Appends the key (after the checks) and its type; the caller appends the value. On failure the
   metadata is rolled back to where it was, so a failed add changes nothing. */
static int kv_begin(gguf_writer *w, const char *key, enum gguf_type type, size_t *mark)
{
    int rc;
    if ((rc = check_declaring(w, "adding metadata")) || (rc = check_name(key, "key")))
        return rc;
    for (int64_t i = 0; i < w->n_kv; i++)
        if (!strcmp(w->keys[i], key))
            return seer_err(SEER_EINVAL, "gguf writer: key '%.200s' added twice", key);
    *mark = w->kv.len;
    if ((rc = put_gstr(&w->kv, key, strlen(key))) || (rc = put_u32(&w->kv, (uint32_t)type)))
        w->kv.len = *mark;
    return rc;
}

/* Records the key once its value is in. */
static int kv_end(gguf_writer *w, const char *key, size_t mark, int rc)
{
    char *k = NULL;
    if (rc == SEER_OK) {
        bool room = seer_grow(&w->keys, &w->cap_keys, (size_t)w->n_kv + 1, sizeof *w->keys, 16);
        k = room ? seer_strdup(key) : NULL;
        if (!k)
            rc = seer_err(SEER_ENOMEM, "gguf writer: no memory for key '%.200s'", key);
    }
    if (rc != SEER_OK) {
        w->kv.len = mark;
        return rc;
    }
    w->keys[w->n_kv++] = k;
    return SEER_OK;
}

/* Value bytes of a fixed-size scalar; bool is normalised to 0/1 (GGUF stores one byte). */
static int put_scalar(struct bytes *b, enum gguf_type type, const void *value)
{
    if (type == GGUF_TYPE_BOOL) {
        uint8_t v = *(const bool *)value ? 1 : 0;
        return put(b, &v, 1);
    }
    return put(b, value, gguf_type_size(type));
}

int gguf_writer_add_scalar(gguf_writer *w, const char *key, enum gguf_type type, const void *value)
{
    size_t mark;
    int rc;
    if (gguf_type_size(type) == 0)
        return seer_err(SEER_EINVAL, "gguf writer: key '%.200s': type %d is not a fixed-size scalar type", key ? key : "",
                        (int)type);
    if ((rc = kv_begin(w, key, type, &mark)))
        return rc;
    return kv_end(w, key, mark, put_scalar(&w->kv, type, value));
}

int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v)
{
    return gguf_writer_add_scalar(w, key, GGUF_TYPE_UINT32, &v);
}
int gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v)
{
    return gguf_writer_add_scalar(w, key, GGUF_TYPE_INT32, &v);
}
int gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v)
{
    return gguf_writer_add_scalar(w, key, GGUF_TYPE_UINT64, &v);
}
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v)
{
    return gguf_writer_add_scalar(w, key, GGUF_TYPE_FLOAT32, &v);
}
int gguf_writer_add_bool(gguf_writer *w, const char *key, bool v)
{
    return gguf_writer_add_scalar(w, key, GGUF_TYPE_BOOL, &v);
}

int gguf_writer_add_strn(gguf_writer *w, const char *key, const char *s, size_t len)
{
    size_t mark;
    int rc = kv_begin(w, key, GGUF_TYPE_STRING, &mark);
    if (rc)
        return rc;
    return kv_end(w, key, mark, put_gstr(&w->kv, s, len));
}

int gguf_writer_add_str(gguf_writer *w, const char *key, const char *s)
{
    return gguf_writer_add_strn(w, key, s, strlen(s));
}

int gguf_writer_add_array(gguf_writer *w, const char *key, enum gguf_type elem_type, uint64_t n, const void *data)
{
    size_t mark, es = gguf_type_size(elem_type), nbytes;
    int rc;
    if (es == 0)
        return seer_err(SEER_EINVAL, "gguf writer: key '%.200s': arrays of type %d need gguf_writer_add_str_array "
                        "(strings) or are unsupported (nested arrays)", key ? key : "", (int)elem_type);
    if (n > SIZE_MAX || !size_mul((size_t)n, es, &nbytes))
        return seer_err(SEER_EINVAL, "gguf writer: key '%.200s': array of %llu elements is too large", key ? key : "",
                        (unsigned long long)n);
    if ((rc = kv_begin(w, key, GGUF_TYPE_ARRAY, &mark)))
        return rc;
    rc = put_u32(&w->kv, (uint32_t)elem_type);
    if (rc == SEER_OK)
        rc = put_u64(&w->kv, n);
    if (rc == SEER_OK && elem_type == GGUF_TYPE_BOOL) {
        for (uint64_t i = 0; i < n && rc == SEER_OK; i++)
            rc = put_scalar(&w->kv, elem_type, (const bool *)data + i);
    } else if (rc == SEER_OK) {
        rc = put(&w->kv, data, nbytes);
    }
    return kv_end(w, key, mark, rc);
}

int gguf_writer_add_str_array(gguf_writer *w, const char *key, uint64_t n, const char *const *s, const size_t *len)
{
    size_t mark;
    int rc = kv_begin(w, key, GGUF_TYPE_ARRAY, &mark);
    if (rc)
        return rc;
    rc = put_u32(&w->kv, GGUF_TYPE_STRING);
    if (rc == SEER_OK)
        rc = put_u64(&w->kv, n);
    for (uint64_t i = 0; i < n && rc == SEER_OK; i++)
        rc = put_gstr(&w->kv, s[i], len ? len[i] : strlen(s[i]));
    return kv_end(w, key, mark, rc);
}

/* ---- 3. tensor infos ------------------------------------------------------------------------ */

int gguf_writer_add_tensor(gguf_writer *w, const char *name, enum dtype type, int n_dims, const int64_t *ne)
{
    uint32_t id;
    int rc;
    tensor shape;
    if ((rc = check_declaring(w, "adding a tensor")) || (rc = check_name(name, "tensor name")))
        return rc;
    if (!gguf_ggml_type(type, &id))
        return seer_err(SEER_EINVAL, "gguf writer: tensor '%.200s': dtype %d cannot be stored in GGUF", name, (int)type);
    if (n_dims < 1 || n_dims > TENSOR_MAX_DIMS)
        return seer_err(SEER_EINVAL, "gguf writer: tensor '%.200s' has %d dimensions (must be 1..%d)", name, n_dims,
                        TENSOR_MAX_DIMS);
    if (!tensor_init(&shape, type, n_dims, ne))
        return seer_err(SEER_EINVAL, "gguf writer: tensor '%.200s': shape is empty, too large, or its rows are not "
                        "whole %s blocks", name, dtype_name(type));
    for (int64_t i = 0; i < w->n_t; i++)
        if (!strcmp(w->t[i].name, name))
            return seer_err(SEER_EINVAL, "gguf writer: tensor '%.200s' declared twice", name);
    if (!seer_grow(&w->t, &w->cap_t, (size_t)w->n_t + 1, sizeof *w->t, 64))
        return seer_err(SEER_ENOMEM, "gguf writer: no memory for tensor infos");
    struct tdecl *d = &w->t[w->n_t];
    memset(d, 0, sizeof *d);
    if (!(d->name = seer_strdup(name)))
        return seer_err(SEER_ENOMEM, "gguf writer: no memory for tensor name");
    d->type = type;
    d->n_dims = n_dims;
    for (int i = 0; i < TENSOR_MAX_DIMS; i++)
        d->ne[i] = i < n_dims ? ne[i] : 1;
    d->nbytes = tensor_nbytes(&shape);
    w->n_t++;
    return SEER_OK;
}

const uint8_t *gguf_writer_kv_bytes(const gguf_writer *w, size_t *len)
{
    *len = w->kv.len;
    return w->kv.p;
}

int64_t gguf_writer_n_tensors(const gguf_writer *w) { return w->n_t; }
size_t gguf_writer_tensor_nbytes(const gguf_writer *w, int64_t i) { return w->t[i].nbytes; }
int64_t gguf_writer_current(const gguf_writer *w) { return w->cur; }

/* Header bytes before the data section (unpadded). */
static bool header_bytes(const gguf_writer *w, uint64_t *out)
{
    uint64_t n = 4 + 4 + 8 + 8 + w->kv.len;
    for (int64_t i = 0; i < w->n_t; i++) {
        const uint64_t ti = 8 + strlen(w->t[i].name) + 4 + 8 * (uint64_t)w->t[i].n_dims + 4 + 8;
        if (!u64_add(n, ti, &n))
            return false;
    }
    *out = n;
    return true;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Assigns data offsets; false when the total overflows. */
static bool layout(gguf_writer *w, uint64_t *total)
{
    uint64_t h, off = 0;
    if (!header_bytes(w, &h))
        return false;
    for (int64_t i = 0; i < w->n_t; i++) {
        w->t[i].offset = off;
        if (!u64_add(off, w->t[i].nbytes, &off) || off > UINT64_MAX - w->alignment)
            return false;
        off = align_up(off, w->alignment); /* ggml pads after every tensor, the last one too */
    }
    if (h > UINT64_MAX - w->alignment || !u64_add(align_up(h, w->alignment), off, total))
        return false;
    return true;
}

uint64_t gguf_writer_file_size(const gguf_writer *w)
{
    uint64_t total = 0;
    return layout((gguf_writer *)w, &total) ? total : 0;
}

/* ---- 4. output ------------------------------------------------------------------------------ */

static int sys_write_all(gguf_writer *w, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r;
        if (write_fail_countdown > 0 && --write_fail_countdown == 0) {
            errno = ENOSPC;
            r = -1;
        } else {
            r = write(w->fd, p, n);
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return seer_err(SEER_EIO, "%s: write failed at byte %llu: %s", w->path,
                            (unsigned long long)(w->written - w->olen), r < 0 ? strerror(errno) : "no progress");
        p += r;
        n -= (size_t)r;
    }
    return SEER_OK;
}

static int flush(gguf_writer *w)
{
    int rc = sys_write_all(w, w->obuf, w->olen);
    w->olen = 0;
    return rc;
}

/* Buffered output; large pieces go straight to write(2) once the buffer is empty. */
static int out(gguf_writer *w, const void *p, size_t n)
{
    const uint8_t *b = p;
    int rc;
    if (w->olen + n > OUT_BUF_BYTES && w->olen > 0 && (rc = flush(w)))
        return rc;
    if (n >= OUT_BUF_BYTES) {
        w->written += n;
        return sys_write_all(w, b, n);
    }
    memcpy(w->obuf + w->olen, b, n);
    w->olen += n;
    w->written += n;
    return SEER_OK;
}

static int out_zeros(gguf_writer *w, uint64_t n)
{
    static const uint8_t zeros[256];
    int rc = SEER_OK;
    while (n > 0 && rc == SEER_OK) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        rc = out(w, zeros, k);
        n -= k;
    }
    return rc;
}

int gguf_writer_begin(gguf_writer *w, const char *path)
{
    uint64_t total;
    int rc;
    if ((rc = check_declaring(w, "begin")))
        return rc;
    if (!layout(w, &total))
        return fail(w, seer_err(SEER_EINVAL, "%s: the file would be larger than 2^64 bytes", path));
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
    w->path = seer_strdup(path);
    w->tmp_path = seer_malloc(n);
    w->obuf = seer_malloc(OUT_BUF_BYTES);
    if (!w->path || !w->tmp_path || !w->obuf) {
        seer_freep(&w->tmp_path); /* nothing was created: keep close_tmp from unlinking */
        return fail(w, seer_err(SEER_ENOMEM, "%s: no memory for the output buffers", path));
    }
    /* Same directory as the destination, so the final rename cannot cross file systems. */
    snprintf(w->tmp_path, n, "%s.tmp-XXXXXX", path);
    w->fd = mkstemp(w->tmp_path);
    if (w->fd < 0) {
        int e = errno;
        seer_freep(&w->tmp_path);
        return fail(w, seer_err(SEER_EIO, "%s: cannot create a temporary file next to it: %s", path, strerror(e)));
    }
    fchmod(w->fd, 0644); /* mkstemp makes 0600; a model file is normally readable by all */
    w->state = W_WRITING;
    const uint32_t version = GGUF_VERSION;
    const uint64_t nt = (uint64_t)w->n_t, nkv = (uint64_t)w->n_kv;
    uint64_t h = 0;
    header_bytes(w, &h); /* cannot fail: layout() succeeded */
    if ((rc = out(w, GGUF_MAGIC, 4)) || (rc = out(w, &version, 4)) || (rc = out(w, &nt, 8)) ||
        (rc = out(w, &nkv, 8)) || (rc = out(w, w->kv.p, w->kv.len)))
        return fail(w, rc);
    for (int64_t i = 0; i < w->n_t; i++) {
        const struct tdecl *d = &w->t[i];
        const uint64_t len = strlen(d->name);
        const uint32_t nd = (uint32_t)d->n_dims;
        uint32_t id;
        gguf_ggml_type(d->type, &id);
        if ((rc = out(w, &len, 8)) || (rc = out(w, d->name, len)) || (rc = out(w, &nd, 4)))
            return fail(w, rc);
        for (int k = 0; k < d->n_dims; k++) {
            const uint64_t v = (uint64_t)d->ne[k];
            if ((rc = out(w, &v, 8)))
                return fail(w, rc);
        }
        if ((rc = out(w, &id, 4)) || (rc = out(w, &d->offset, 8)))
            return fail(w, rc);
    }
    if ((rc = out_zeros(w, align_up(h, w->alignment) - h)))
        return fail(w, rc);
    w->cur = 0;
    w->cur_done = 0;
    return SEER_OK;
}

int gguf_writer_write(gguf_writer *w, const void *data, size_t n)
{
    int rc;
    if (w->state != W_WRITING)
        return seer_err(SEER_EINVAL, "gguf writer: write without begin (or after finish or a failure)");
    if (n == 0)
        return SEER_OK;
    if (w->cur >= w->n_t)
        return fail(w, seer_err(SEER_EINVAL, "%s: %zu bytes written after the last tensor", w->path, n));
    const struct tdecl *d = &w->t[w->cur];
    if (n > d->nbytes - w->cur_done)
        return fail(w, seer_err(SEER_EINVAL, "%s: tensor '%.200s' is %zu bytes; a write of %zu after %zu runs past it",
                                w->path, d->name, d->nbytes, n, w->cur_done));
    if ((rc = out(w, data, n)))
        return fail(w, rc);
    w->cur_done += n;
    if (w->cur_done == d->nbytes) {
        if ((rc = out_zeros(w, align_up(d->nbytes, w->alignment) - d->nbytes)))
            return fail(w, rc);
        w->cur++;
        w->cur_done = 0;
    }
    return SEER_OK;
}

int gguf_writer_finish(gguf_writer *w)
{
    int rc;
    if (w->state != W_WRITING)
        return seer_err(SEER_EINVAL, "gguf writer: finish without begin (or after a failure)");
    if (w->cur < w->n_t)
        return fail(w, seer_err(SEER_EINVAL, "%s: tensor '%.200s' has %zu of its %zu bytes (of %lld tensors, %lld "
                                "complete)", w->path, w->t[w->cur].name, w->cur_done, w->t[w->cur].nbytes,
                                (long long)w->n_t, (long long)w->cur));
    if ((rc = flush(w)))
        return fail(w, rc);
    /* Data on disk before the name points at it, so a crash leaves the old file or the new one. */
    if (fsync(w->fd) != 0 && errno != EINVAL)
        return fail(w, seer_err(SEER_EIO, "%s: fsync failed: %s", w->path, strerror(errno)));
    int fd = w->fd;
    w->fd = -1;
    if (close(fd) != 0)
        return fail(w, seer_err(SEER_EIO, "%s: close failed: %s", w->path, strerror(errno)));
    if (rename(w->tmp_path, w->path) != 0)
        return fail(w, seer_err(SEER_EIO, "%s: cannot rename %s onto it: %s", w->path, w->tmp_path, strerror(errno)));
    w->state = W_DONE;
    return SEER_OK;
}
