/* gguf_write.c — test-only GGUF and safetensors writers (see gguf_write.h). Metadata values are
   encoded by the library's writer (core/gguf_write.c); this file only assembles them, with tensor
   infos and data, into files that may be invalid on purpose, recording where each field lies. */
#define _POSIX_C_SOURCE 200809L
#include "support/gguf_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gguf_write.h"
#include "seer.h"

static void die(const char *what)
{
    fprintf(stderr, "gguf_write: %s\n", what);
    exit(2);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        die("out of memory");
    return d;
}

/* ---- byte buffer ------------------------------------------------------------------------------- */

void bb_bytes(struct bbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

void bb_u8(struct bbuf *b, uint8_t v) { bb_bytes(b, &v, 1); }
void bb_u32(struct bbuf *b, uint32_t v) { bb_bytes(b, &v, 4); } /* little-endian host */
void bb_u64(struct bbuf *b, uint64_t v) { bb_bytes(b, &v, 8); }

void bb_gstr(struct bbuf *b, const char *s)
{
    size_t n = strlen(s);
    bb_u64(b, n);
    bb_bytes(b, s, n);
}

void bb_zero_to(struct bbuf *b, size_t align)
{
    while (b->len % align)
        bb_u8(b, 0);
}

void bb_free(struct bbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void put_u32_at(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
void put_u64_at(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        die(path);
}

void write_text(const char *path, const char *text) { write_file(path, text, strlen(text)); }

size_t ggml_row_bytes(uint32_t type, uint64_t n)
{
    struct { uint32_t id; uint64_t elems, bytes; } t[] = {
        {GGML_F32, 1, 4},    {GGML_F16, 1, 2},     {GGML_BF16, 1, 2},    {GGML_Q4_0, 32, 18}, {GGML_Q4_1, 32, 20},
        {GGML_Q8_0, 32, 34}, {GGML_Q4_K, 256, 144}, {GGML_Q5_K, 256, 176}, {GGML_Q6_K, 256, 210},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].id == type)
            return n % t[i].elems ? 0 : (size_t)(n / t[i].elems * t[i].bytes);
    return 4 * n; /* unknown ids: any size will do, the reader rejects them first */
}

/* ---- GGUF builder ------------------------------------------------------------------------------ */

struct gw_file *gw_new(void)
{
    struct gw_file *f = calloc(1, sizeof *f);
    if (!f)
        die("out of memory");
    f->version = 3;
    f->alignment = 32;
    return f;
}

void gw_free(struct gw_file *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n_kv; i++) {
        free(f->kv[i].key);
        bb_free(&f->kv[i].val);
    }
    for (int i = 0; i < f->n_t; i++) {
        free(f->t[i].name);
        free(f->t[i].data);
    }
    free(f->kv);
    free(f->t);
    bb_free(&f->out);
    free(f->lay.kv_off);
    free(f->lay.ti_off);
    free(f->lay.ti_ndims_off);
    free(f->lay.ti_type_off);
    free(f->lay.ti_offset_off);
    free(f);
}

static struct bbuf *new_kv(struct gw_file *f, const char *key)
{
    f->kv = xrealloc(f->kv, (size_t)(f->n_kv + 1) * sizeof *f->kv);
    struct gw_kv *kv = &f->kv[f->n_kv++];
    kv->key = xstrdup(key);
    memset(&kv->val, 0, sizeof kv->val);
    return &kv->val;
}

/* Adds key with the value the library's writer encoded into w (gguf_writer_add_* returned rc): its
   entry less the key, which new_kv stores apart. */
static void add_from(struct gw_file *f, const char *key, gguf_writer *w, int rc)
{
    size_t len, key_bytes = 8 + strlen(key);
    const uint8_t *p = rc == SEER_OK ? gguf_writer_kv_bytes(w, &len) : NULL;
    if (!p || len < key_bytes)
        die("the library's GGUF writer refused a metadata value");
    bb_bytes(new_kv(f, key), p + key_bytes, len - key_bytes);
    gguf_writer_free(w);
}

static gguf_writer *writer(void)
{
    gguf_writer *w;
    if (gguf_writer_create(&w))
        die("out of memory");
    return w;
}

void gw_add_scalar(struct gw_file *f, const char *key, enum gguf_type type, const void *value)
{
    bool b = type == GGUF_TYPE_BOOL && *(const uint8_t *)value; /* our bools are bytes, the library's bool */
    gguf_writer *w = writer();
    add_from(f, key, w, gguf_writer_add_scalar(w, key, type, type == GGUF_TYPE_BOOL ? &b : value));
}

void gw_add_u32(struct gw_file *f, const char *key, uint32_t v) { gw_add_scalar(f, key, GGUF_TYPE_UINT32, &v); }
void gw_add_f32(struct gw_file *f, const char *key, float v) { gw_add_scalar(f, key, GGUF_TYPE_FLOAT32, &v); }
void gw_add_bool(struct gw_file *f, const char *key, bool v)
{
    uint8_t x = v;
    gw_add_scalar(f, key, GGUF_TYPE_BOOL, &x);
}

void gw_add_str(struct gw_file *f, const char *key, const char *s)
{
    gguf_writer *w = writer();
    add_from(f, key, w, gguf_writer_add_str(w, key, s));
}

void gw_add_arr(struct gw_file *f, const char *key, enum gguf_type elem, uint64_t n, const void *data)
{
    bool *b = elem == GGUF_TYPE_BOOL ? xrealloc(NULL, (size_t)n * sizeof *b) : NULL;
    for (uint64_t i = 0; b && i < n; i++)
        b[i] = ((const uint8_t *)data)[i];
    gguf_writer *w = writer();
    add_from(f, key, w, gguf_writer_add_array(w, key, elem, n, b ? b : data));
    free(b);
}

void gw_add_arr_str(struct gw_file *f, const char *key, uint64_t n, const char *const *s)
{
    gguf_writer *w = writer();
    add_from(f, key, w, gguf_writer_add_str_array(w, key, n, s, NULL));
}

void gw_add_raw(struct gw_file *f, const char *key, uint32_t type, const void *bytes, size_t n)
{
    struct bbuf *b = new_kv(f, key);
    bb_u32(b, type);
    bb_bytes(b, bytes, n);
}

int gw_find_kv(const struct gw_file *f, const char *key)
{
    for (int i = 0; i < f->n_kv; i++)
        if (!strcmp(f->kv[i].key, key))
            return i;
    return -1;
}

void gw_remove_kv(struct gw_file *f, const char *key)
{
    int i = gw_find_kv(f, key);
    if (i < 0)
        die("gw_remove_kv: no such key");
    free(f->kv[i].key);
    bb_free(&f->kv[i].val);
    memmove(&f->kv[i], &f->kv[i + 1], (size_t)(f->n_kv - i - 1) * sizeof *f->kv);
    f->n_kv--;
}

void gw_add_tensor(struct gw_file *f, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *ne,
                   const void *data)
{
    f->t = xrealloc(f->t, (size_t)(f->n_t + 1) * sizeof *f->t);
    struct gw_tensor *t = &f->t[f->n_t++];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    t->n_dims = n_dims;
    t->type = type;
    uint64_t rows = 1;
    for (uint32_t d = 0; d < n_dims && d < 4; d++) {
        t->ne[d] = ne[d];
        if (d > 0)
            rows *= ne[d];
    }
    t->nbytes = n_dims ? ggml_row_bytes(type, ne[0]) * (size_t)rows : 0;
    t->data = xrealloc(NULL, t->nbytes);
    for (size_t i = 0; i < t->nbytes; i++)
        t->data[i] = data ? ((const uint8_t *)data)[i] : (uint8_t)(0x3c + i * 7);
}

int gw_find_tensor(const struct gw_file *f, const char *name)
{
    for (int i = 0; i < f->n_t; i++)
        if (!strcmp(f->t[i].name, name))
            return i;
    return -1;
}

void gw_remove_tensor(struct gw_file *f, const char *name)
{
    int i = gw_find_tensor(f, name);
    if (i < 0)
        die("gw_remove_tensor: no such tensor");
    free(f->t[i].name);
    free(f->t[i].data);
    memmove(&f->t[i], &f->t[i + 1], (size_t)(f->n_t - i - 1) * sizeof *f->t);
    f->n_t--;
}

void gw_build(struct gw_file *f)
{
    struct bbuf *b = &f->out;
    struct gw_layout *l = &f->lay;
    b->len = 0;
    l->kv_off = xrealloc(l->kv_off, (size_t)(f->n_kv + 1) * sizeof(size_t));
    l->ti_off = xrealloc(l->ti_off, (size_t)(f->n_t + 1) * sizeof(size_t));
    l->ti_ndims_off = xrealloc(l->ti_ndims_off, (size_t)(f->n_t + 1) * sizeof(size_t));
    l->ti_type_off = xrealloc(l->ti_type_off, (size_t)(f->n_t + 1) * sizeof(size_t));
    l->ti_offset_off = xrealloc(l->ti_offset_off, (size_t)(f->n_t + 1) * sizeof(size_t));
    bb_bytes(b, "GGUF", 4);
    bb_u32(b, f->version);
    l->n_tensors_off = b->len;
    bb_u64(b, (uint64_t)f->n_t);
    l->n_kv_off = b->len;
    bb_u64(b, (uint64_t)f->n_kv);
    for (int i = 0; i < f->n_kv; i++) {
        l->kv_off[i] = b->len;
        bb_gstr(b, f->kv[i].key);
        bb_bytes(b, f->kv[i].val.p, f->kv[i].val.len);
    }
    size_t off = 0;
    for (int i = 0; i < f->n_t; i++) {
        const struct gw_tensor *t = &f->t[i];
        l->ti_off[i] = b->len;
        bb_gstr(b, t->name);
        l->ti_ndims_off[i] = b->len;
        bb_u32(b, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++)
            bb_u64(b, t->ne[d]);
        l->ti_type_off[i] = b->len;
        bb_u32(b, t->type);
        l->ti_offset_off[i] = b->len;
        bb_u64(b, off);
        off = (off + t->nbytes + f->alignment - 1) / f->alignment * f->alignment;
    }
    l->header_end = b->len;
    bb_zero_to(b, f->alignment);
    l->data_off = b->len;
    for (int i = 0; i < f->n_t; i++) {
        bb_bytes(b, f->t[i].data, f->t[i].nbytes);
        if (i + 1 < f->n_t) /* no padding after the last tensor: a shorter file is still valid */
            bb_zero_to(b, f->alignment);
    }
}

void gw_write(struct gw_file *f, const char *path)
{
    gw_build(f);
    write_file(path, f->out.p, f->out.len);
}

/* ---- safetensors ------------------------------------------------------------------------------- */

size_t st_dtype_size(const char *dtype)
{
    if (!strcmp(dtype, "F32") || !strcmp(dtype, "I32") || !strcmp(dtype, "U32"))
        return 4;
    if (!strcmp(dtype, "F16") || !strcmp(dtype, "BF16") || !strcmp(dtype, "I16") || !strcmp(dtype, "U16"))
        return 2;
    if (!strcmp(dtype, "F64") || !strcmp(dtype, "I64") || !strcmp(dtype, "U64"))
        return 8;
    return 1;
}

void st_write(const char *path, const struct st_entry *e, int n)
{
    struct bbuf h = {0}, d = {0};
    char tmp[512];
    const char *meta = "{\"__metadata__\":{\"format\":\"pt\"}";
    bb_bytes(&h, meta, strlen(meta));
    for (int i = 0; i < n; i++) {
        size_t nel = 1, es = st_dtype_size(e[i].dtype);
        for (int k = 0; k < e[i].rank; k++)
            nel *= (size_t)e[i].shape[k];
        bb_zero_to(&d, 8); /* every tensor 8-byte aligned, as the reference writer keeps them */
        size_t begin = d.len, bytes = nel * es;
        for (size_t k = 0; k < bytes; k++) {
            uint8_t v = e[i].data ? ((const uint8_t *)e[i].data)[k] : (uint8_t)(0x41 + k * 13);
            bb_u8(&d, v);
        }
        int m = snprintf(tmp, sizeof tmp, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", e[i].name, e[i].dtype);
        bb_bytes(&h, tmp, (size_t)m);
        for (int k = 0; k < e[i].rank; k++) {
            m = snprintf(tmp, sizeof tmp, "%s%lld", k ? "," : "", (long long)e[i].shape[k]);
            bb_bytes(&h, tmp, (size_t)m);
        }
        m = snprintf(tmp, sizeof tmp, "],\"data_offsets\":[%zu,%zu]}", begin, begin + bytes);
        bb_bytes(&h, tmp, (size_t)m);
    }
    bb_u8(&h, '}');
    while (h.len % 8)
        bb_u8(&h, ' ');
    bb_u8(&h, 0); /* st_write_raw takes C text */
    st_write_raw(path, h.len - 1, (const char *)h.p, d.p, d.len);
    bb_free(&h);
    bb_free(&d);
}

void st_write_raw(const char *path, uint64_t hlen, const char *header, const void *data, size_t data_len)
{
    struct bbuf b = {0};
    bb_u64(&b, hlen);
    bb_bytes(&b, header, strlen(header));
    bb_bytes(&b, data, data_len);
    write_file(path, b.p, b.len);
    bb_free(&b);
}
