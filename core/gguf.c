/* gguf.c — GGUF v2/v3 reader (see gguf.h for the contract; format facts from ggml's gguf spec and
   spec §11). The whole header is parsed and validated in gguf_open; afterwards lookups only read
   validated state. Divisions, in file order:
     1. handle layout and a string pool for NUL-terminated copies of keys and names
     2. a bounds-checked cursor over the mapping (every read names what it was reading)
     3. metadata: key/value entries, arrays, general.alignment
     4. tensor infos: names, shapes, ggml type ids, data ranges
     5. gguf_open / gguf_free
     6. getters */
#define _POSIX_C_SOURCE 200809L
#include "core/gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/io.h"
#include "core/printable.h"
#include "core/strtab.h"
#include "core/util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf.c reads little-endian fields with memcpy and needs a little-endian host"
#endif

/* ---- 1. layout ------------------------------------------------------------------------------ */

struct kv {
    const char *key;         /* NUL-terminated copy (pool) */
    enum gguf_type type;     /* stored type */
    enum gguf_type arr_type; /* ARRAY: element type */
    uint64_t n;              /* ARRAY: element count; STRING: byte length */
    const uint8_t *p;        /* in the mapping: scalar bytes, string bytes or first array element */
    const char *str;         /* STRING: NUL-terminated copy (pool) */
    uint64_t *offs;          /* ARRAY of STRING: offset of each element's length field from p */
};

struct tinfo {
    const char *name;    /* full name (pool) */
    int n_dims;          /* as stored */
    uint64_t rel_offset; /* relative to the data section */
    tensor t;
};

struct pool_chunk {
    struct pool_chunk *next;
    size_t used, cap;
    char data[];
};

struct gguf {
    char *path;
    struct io_map map;
    uint32_t version;
    size_t alignment;
    size_t data_offset;
    int64_t n_kv, n_tensors;
    struct kv *kv;
    struct tinfo *ti;
    struct strtab kv_tab, t_tab;
    struct pool_chunk *pool;
};

/* Copies n bytes into the pool as a NUL-terminated string; NULL when out of memory. */
static char *pool_strndup(gguf *g, const uint8_t *s, size_t n)
{
    struct pool_chunk *c = g->pool;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = MAX((size_t)65536, n + 1), bytes;
        if (!size_add(sizeof *c, cap, &bytes) || !(c = seer_malloc(bytes)))
            return NULL;
        c->next = g->pool;
        c->used = 0;
        c->cap = cap;
        g->pool = c;
    }
    char *d = c->data + c->used;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    c->used += n + 1;
    return d;
}

static const struct {
    const char *name;
    size_t size; /* bytes of one scalar; 0 for string/array */
} type_table[GGUF_TYPE_COUNT] = {
    [GGUF_TYPE_UINT8] = {"u8", 1},    [GGUF_TYPE_INT8] = {"i8", 1},      [GGUF_TYPE_UINT16] = {"u16", 2},
    [GGUF_TYPE_INT16] = {"i16", 2},   [GGUF_TYPE_UINT32] = {"u32", 4},   [GGUF_TYPE_INT32] = {"i32", 4},
    [GGUF_TYPE_FLOAT32] = {"f32", 4}, [GGUF_TYPE_BOOL] = {"bool", 1},    [GGUF_TYPE_STRING] = {"string", 0},
    [GGUF_TYPE_ARRAY] = {"array", 0}, [GGUF_TYPE_UINT64] = {"u64", 8},   [GGUF_TYPE_INT64] = {"i64", 8},
    [GGUF_TYPE_FLOAT64] = {"f64", 8},
};

const char *gguf_type_name(enum gguf_type t)
{
    return (unsigned)t < GGUF_TYPE_COUNT ? type_table[t].name : "unknown";
}

size_t gguf_type_size(enum gguf_type t) { return (unsigned)t < GGUF_TYPE_COUNT ? type_table[t].size : 0; }

/* ---- 2. cursor ------------------------------------------------------------------------------ */

struct rd {
    const uint8_t *p;
    size_t size, off;
    const char *path;
    char what[160]; /* what is being read, for messages ("the key of metadata entry 3") */
};

static int truncated(const struct rd *r)
{
    return seer_err(SEER_EFORMAT, "%s: truncated at offset %zu while reading %s (file is %zu bytes)",
                    r->path, r->off, r->what, r->size);
}

static int rd_bytes(struct rd *r, size_t n, const uint8_t **out)
{
    if (r->size - r->off < n)
        return truncated(r);
    *out = r->p + r->off;
    r->off += n;
    return SEER_OK;
}

static int rd_u32(struct rd *r, uint32_t *v)
{
    const uint8_t *b = NULL;
    int rc = rd_bytes(r, 4, &b);
    if (rc == SEER_OK)
        memcpy(v, b, 4);
    return rc;
}

static int rd_u64(struct rd *r, uint64_t *v)
{
    const uint8_t *b = NULL;
    int rc = rd_bytes(r, 8, &b);
    if (rc == SEER_OK)
        memcpy(v, b, 8);
    return rc;
}

/* A GGUF string: u64 length then bytes. The length is checked against what remains before the
   bytes are touched, so a length of 2^63 is a clean error. */
static int rd_str(struct rd *r, const uint8_t **s, uint64_t *len)
{
    int rc = rd_u64(r, len);
    if (rc != SEER_OK)
        return rc;
    if (*len > r->size - r->off)
        return seer_err(SEER_EFORMAT, "%s: %s at offset %zu has length %llu, past the end of the file (%zu bytes)",
                        r->path, r->what, r->off - 8, (unsigned long long)*len, r->size);
    return rd_bytes(r, (size_t)*len, s);
}

/* A key or tensor name: 1..GGUF_MAX_NAME bytes, no NUL (it becomes a C string). */
static int rd_name(struct rd *r, gguf *g, const char **out)
{
    const uint8_t *s = NULL;
    uint64_t len;
    size_t at = r->off;
    int rc = rd_str(r, &s, &len);
    if (rc != SEER_OK)
        return rc;
    if (len == 0 || len > GGUF_MAX_NAME)
        return seer_err(SEER_EFORMAT, "%s: %s at offset %zu has length %llu (must be 1..%d)", r->path, r->what,
                        at, (unsigned long long)len, GGUF_MAX_NAME);
    if (memchr(s, 0, (size_t)len))
        return seer_err(SEER_EFORMAT, "%s: %s at offset %zu contains a NUL byte", r->path, r->what, at);
    if (!printable_ok((const char *)s, (size_t)len)) /* names appear in messages: keep those one line */
        return seer_err(SEER_EFORMAT, "%s: %s at offset %zu contains a control character", r->path, r->what, at);
    if (!(*out = pool_strndup(g, s, (size_t)len)))
        return seer_err(SEER_ENOMEM, "%s: out of memory reading %s", r->path, r->what);
    return SEER_OK;
}

/* ---- 3. metadata ---------------------------------------------------------------------------- */

static int read_array(struct rd *r, struct kv *kv)
{
    uint32_t et;
    uint64_t n;
    int rc;
    size_t at = r->off;
    if ((rc = rd_u32(r, &et)) != SEER_OK || (rc = rd_u64(r, &n)) != SEER_OK)
        return rc;
    if (et == GGUF_TYPE_ARRAY)
        return seer_err(SEER_EUNSUPPORTED, "%s: key '%s': arrays of arrays are not supported (offset %zu)", r->path,
                        kv->key, at);
    if (et >= GGUF_TYPE_COUNT)
        return seer_err(SEER_EFORMAT, "%s: key '%s': array of unknown type %u at offset %zu", r->path, kv->key, et,
                        at);
    kv->arr_type = (enum gguf_type)et;
    kv->n = n;
    size_t remaining = r->size - r->off;
    if (et != GGUF_TYPE_STRING) {
        uint64_t bytes;
        if (!u64_mul(n, type_table[et].size, &bytes) || bytes > remaining)
            return seer_err(SEER_EFORMAT, "%s: key '%s': array of %llu %s at offset %zu runs past the end of the file",
                            r->path, kv->key, (unsigned long long)n, type_table[et].name, at);
        return rd_bytes(r, (size_t)bytes, &kv->p);
    }
    /* Every string takes at least its 8-byte length: bound the count before allocating. */
    if (n > remaining / 8)
        return seer_err(SEER_EFORMAT, "%s: key '%s': array of %llu strings at offset %zu cannot fit in the %zu bytes left",
                        r->path, kv->key, (unsigned long long)n, at, remaining);
    kv->p = r->p + r->off;
    if (n > 0 && !(kv->offs = seer_malloc((size_t)n * sizeof *kv->offs)))
        return seer_err(SEER_ENOMEM, "%s: out of memory for the %llu strings of key '%s'", r->path,
                        (unsigned long long)n, kv->key);
    /* The tokenizer's vocabulary is ~250k strings: walk them with an inline check, and go through
       rd_str (for its message) only when one does not fit. */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        kv->offs[i] = (uint64_t)(r->p + r->off - kv->p);
        if (r->size - r->off >= 8) {
            memcpy(&len, r->p + r->off, 8);
            if (len <= r->size - r->off - 8) {
                r->off += 8 + (size_t)len;
                continue;
            }
        }
        const uint8_t *s = NULL;
        snprintf(r->what, sizeof r->what, "string %llu of key '%.80s'", (unsigned long long)i, kv->key);
        rc = rd_str(r, &s, &len);
        ASSERT1(rc != SEER_OK); /* the same bounds as above failed */
        return rc;
    }
    return SEER_OK;
}

static int read_kv(struct rd *r, gguf *g, int64_t i)
{
    struct kv *kv = &g->kv[i];
    uint32_t type;
    int rc;
    snprintf(r->what, sizeof r->what, "the key of metadata entry %lld", (long long)i);
    if ((rc = rd_name(r, g, &kv->key)) != SEER_OK)
        return rc;
    int64_t prev = strtab_insert(&g->kv_tab, kv->key, i);
    if (prev != i)
        return seer_err(SEER_EFORMAT, "%s: duplicate key '%s' (metadata entries %lld and %lld)", r->path, kv->key,
                        (long long)prev, (long long)i);
    size_t at = r->off;
    snprintf(r->what, sizeof r->what, "the value of key '%.80s'", kv->key);
    if ((rc = rd_u32(r, &type)) != SEER_OK)
        return rc;
    if (type >= GGUF_TYPE_COUNT)
        return seer_err(SEER_EFORMAT, "%s: key '%s' has unknown value type %u at offset %zu", r->path, kv->key, type,
                        at);
    kv->type = (enum gguf_type)type;
    if (type == GGUF_TYPE_ARRAY)
        return read_array(r, kv);
    if (type == GGUF_TYPE_STRING) {
        if ((rc = rd_str(r, &kv->p, &kv->n)) != SEER_OK)
            return rc;
        if (!(kv->str = pool_strndup(g, kv->p, (size_t)kv->n)))
            return seer_err(SEER_ENOMEM, "%s: out of memory reading key '%s'", r->path, kv->key);
        return SEER_OK;
    }
    return rd_bytes(r, type_table[type].size, &kv->p);
}

/* An integer scalar as sign + magnitude, so every range check is exact. */
struct ival {
    bool neg;
    uint64_t mag;
};

static bool read_int(enum gguf_type t, const uint8_t *p, struct ival *v)
{
    int64_t s = 0;
    uint64_t u = 0;
    switch (t) {
    case GGUF_TYPE_UINT8: { uint8_t x; memcpy(&x, p, 1); u = x; break; }
    case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); u = x; break; }
    case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); u = x; break; }
    case GGUF_TYPE_UINT64: memcpy(&u, p, 8); break;
    case GGUF_TYPE_INT8: { int8_t x; memcpy(&x, p, 1); s = x; goto sgn; }
    case GGUF_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); s = x; goto sgn; }
    case GGUF_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); s = x; goto sgn; }
    case GGUF_TYPE_INT64: memcpy(&s, p, 8); goto sgn;
    default: return false;
    }
    v->neg = false;
    v->mag = u;
    return true;
sgn:
    v->neg = s < 0;
    v->mag = s < 0 ? (uint64_t)(-(s + 1)) + 1 : (uint64_t)s;
    return true;
}

static int read_alignment(gguf *g)
{
    int64_t i = strtab_find(&g->kv_tab, "general.alignment");
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    if (i < 0)
        return SEER_OK;
    struct ival v;
    if (!read_int(g->kv[i].type, g->kv[i].p, &v))
        return seer_err(SEER_EFORMAT, "%s: key 'general.alignment' has type %s, expected an integer", g->path,
                        gguf_type_name(g->kv[i].type));
    if (v.neg || v.mag == 0 || (v.mag & (v.mag - 1)) != 0 || v.mag > ((size_t)1 << 30))
        return seer_err(SEER_EFORMAT, "%s: general.alignment = %s%llu is not a power of two in 1..2^30", g->path,
                        v.neg ? "-" : "", (unsigned long long)v.mag);
    g->alignment = (size_t)v.mag;
    return SEER_OK;
}

/* ---- 4. tensor infos ------------------------------------------------------------------------ */

/* ggml's type ids of the dtypes seer reads and writes. */
static const struct {
    uint32_t id;
    enum dtype dt;
} ggml_types[] = {{0, DT_F32},   {1, DT_F16},   {2, DT_Q4_0},  {8, DT_Q8_0},
                  {12, DT_Q4_K}, {13, DT_Q5_K}, {14, DT_Q6_K}, {30, DT_BF16}};

static bool map_ggml_type(uint32_t id, enum dtype *t)
{
    for (size_t i = 0; i < ARRAY_LEN(ggml_types); i++)
        if (ggml_types[i].id == id)
            return *t = ggml_types[i].dt, true;
    return false;
}

bool gguf_ggml_type(enum dtype t, uint32_t *id)
{
    for (size_t i = 0; i < ARRAY_LEN(ggml_types); i++)
        if (ggml_types[i].dt == t)
            return *id = ggml_types[i].id, true;
    return false;
}

/* ggml's names for the ids we do not support, so the message says what the file holds. */
static const char *ggml_type_name(uint32_t id)
{
    static const char *const names[] = {
        [3] = "q4_1", [6] = "q5_0", [7] = "q5_1", [9] = "q8_1", [10] = "q2_K", [11] = "q3_K",
        [15] = "q8_K", [16] = "iq2_xxs", [17] = "iq2_xs", [18] = "iq3_xxs", [19] = "iq1_s",
        [20] = "iq4_nl", [21] = "iq3_s", [22] = "iq2_s", [23] = "iq4_xs", [24] = "i8", [25] = "i16",
        [26] = "i32", [27] = "i64", [28] = "f64", [29] = "iq1_m", [34] = "tq1_0", [35] = "tq2_0",
        [39] = "mxfp4",
    };
    return id < ARRAY_LEN(names) && names[id] ? names[id] : "unknown";
}

static int read_tinfo(struct rd *r, gguf *g, int64_t i)
{
    struct tinfo *ti = &g->ti[i];
    uint32_t n_dims, type;
    int rc;
    snprintf(r->what, sizeof r->what, "the name of tensor %lld", (long long)i);
    if ((rc = rd_name(r, g, &ti->name)) != SEER_OK)
        return rc;
    int64_t prev = strtab_insert(&g->t_tab, ti->name, i);
    if (prev != i)
        return seer_err(SEER_EFORMAT, "%s: duplicate tensor name '%s' (tensors %lld and %lld)", r->path, ti->name,
                        (long long)prev, (long long)i);
    snprintf(r->what, sizeof r->what, "the shape of tensor '%.80s'", ti->name);
    size_t at = r->off;
    if ((rc = rd_u32(r, &n_dims)) != SEER_OK)
        return rc;
    if (n_dims < 1 || n_dims > TENSOR_MAX_DIMS)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' has %u dimensions at offset %zu (must be 1..%d)", r->path,
                        ti->name, n_dims, at, TENSOR_MAX_DIMS);
    int64_t ne[TENSOR_MAX_DIMS] = {1, 1, 1, 1};
    uint64_t nel = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        uint64_t v;
        if ((rc = rd_u64(r, &v)) != SEER_OK)
            return rc;
        if (v == 0 || v > INT64_MAX)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s' has dimension %u = %llu (must be 1..2^63-1)", r->path,
                            ti->name, d, (unsigned long long)v);
        if (!u64_mul(nel, v, &nel) || nel > INT64_MAX)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s': the product of its dimensions overflows", r->path,
                            ti->name);
        ne[d] = (int64_t)v;
    }
    snprintf(r->what, sizeof r->what, "the type and offset of tensor '%.80s'", ti->name);
    if ((rc = rd_u32(r, &type)) != SEER_OK || (rc = rd_u64(r, &ti->rel_offset)) != SEER_OK)
        return rc;
    enum dtype dt;
    if (!map_ggml_type(type, &dt))
        return seer_err(SEER_EUNSUPPORTED, "%s: tensor '%s' has ggml type %u (%s), which seer does not support",
                        r->path, ti->name, type, ggml_type_name(type));
    const struct dtype_info *di = dtype_info(dt);
    if (ne[0] % di->block_elems != 0)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s' has %lld elements per row, not a multiple of %s's block of %d",
                        r->path, ti->name, (long long)ne[0], di->name, di->block_elems);
    if (!tensor_init(&ti->t, dt, (int)n_dims, ne))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': its byte size overflows", r->path, ti->name);
    ti->n_dims = (int)n_dims;
    snprintf(ti->t.name, sizeof ti->t.name, "%s", ti->name);
    return SEER_OK;
}

struct range {
    uint64_t begin, end; /* [begin, end) in the file */
    int64_t i;
};

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Two tensors sharing bytes would alias: a writer never produces that, and a loader that
   accepted it would let one corrupt tensor masquerade as two. Sorted by start, each range must
   end before the next begins (O(n log n)). */
static int check_overlaps(gguf *g)
{
    if (g->n_tensors < 2)
        return SEER_OK;
    struct range *r = seer_malloc((size_t)g->n_tensors * sizeof *r);
    if (!r)
        return seer_err(SEER_ENOMEM, "%s: out of memory checking %lld tensor ranges", g->path,
                        (long long)g->n_tensors);
    for (int64_t i = 0; i < g->n_tensors; i++) {
        uint64_t begin = (uint64_t)((const uint8_t *)g->ti[i].t.data - g->map.data);
        r[i] = (struct range){begin, begin + tensor_nbytes(&g->ti[i].t), i};
    }
    qsort(r, (size_t)g->n_tensors, sizeof *r, cmp_range);
    int rc = SEER_OK;
    for (int64_t k = 1; k < g->n_tensors && rc == SEER_OK; k++)
        if (r[k].begin < r[k - 1].end)
            rc = seer_err(SEER_EFORMAT, "%s: tensors '%s' and '%s' overlap (file bytes [%llu, %llu) and [%llu, %llu))",
                          g->path, g->ti[r[k - 1].i].name, g->ti[r[k].i].name, (unsigned long long)r[k - 1].begin,
                          (unsigned long long)r[k - 1].end, (unsigned long long)r[k].begin,
                          (unsigned long long)r[k].end);
    seer_free(r);
    return rc;
}

/* Places every tensor: offsets aligned and relative to the aligned data section, each byte range
   inside the file, each address aligned for its element type (mmap bases are page-aligned). */
static int place_tensors(gguf *g, size_t header_end)
{
    if (!size_align(header_end, g->alignment, &g->data_offset))
        return seer_err(SEER_EFORMAT, "%s: data section offset overflows", g->path);
    for (int64_t i = 0; i < g->n_tensors; i++) {
        struct tinfo *ti = &g->ti[i];
        size_t nbytes = tensor_nbytes(&ti->t);
        uint64_t abs, end;
        if (ti->rel_offset % g->alignment != 0)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s' has offset %llu, not a multiple of the alignment %zu",
                            g->path, ti->name, (unsigned long long)ti->rel_offset, g->alignment);
        if (!u64_add(g->data_offset, ti->rel_offset, &abs) || !u64_add(abs, nbytes, &end) || end > g->map.size)
            return seer_err(SEER_EFORMAT,
                            "%s: tensor '%s' (%zu bytes at data offset %llu) ends past the end of the file (%zu bytes)",
                            g->path, ti->name, nbytes, (unsigned long long)ti->rel_offset, g->map.size);
        size_t natural = ti->t.type == DT_F32 ? 4 : 2; /* every block type starts with an fp16 scale */
        if (abs % natural != 0)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s' at file offset %llu is misaligned for %s", g->path,
                            ti->name, (unsigned long long)abs, dtype_name(ti->t.type));
        ti->t.data = (void *)(g->map.data + abs); /* read-only pages: never written through */
    }
    return check_overlaps(g);
}

/* ---- 5. open / free ------------------------------------------------------------------------- */

static int parse(gguf *g)
{
    struct rd r = {.p = g->map.data, .size = g->map.size, .path = g->path};
    const uint8_t *magic = NULL;
    uint32_t version;
    uint64_t n_tensors, n_kv;
    int rc;
    snprintf(r.what, sizeof r.what, "the magic number");
    if ((rc = rd_bytes(&r, 4, &magic)) != SEER_OK)
        return rc;
    if (memcmp(magic, "GGUF", 4) != 0)
        return seer_err(SEER_EFORMAT, "%s: not a GGUF file (magic %02x %02x %02x %02x, expected \"GGUF\")", g->path,
                        magic[0], magic[1], magic[2], magic[3]);
    snprintf(r.what, sizeof r.what, "the version");
    if ((rc = rd_u32(&r, &version)) != SEER_OK)
        return rc;
    if (version == 1)
        return seer_err(SEER_EUNSUPPORTED, "%s: GGUF version 1 is not supported (only 2 and 3); re-convert the model",
                        g->path);
    if (version != 2 && version != 3) {
        uint32_t sw = __builtin_bswap32(version);
        if (sw >= 1 && sw <= 3)
            return seer_err(SEER_EUNSUPPORTED, "%s: big-endian GGUF files are not supported", g->path);
        return seer_err(version > 3 ? SEER_EUNSUPPORTED : SEER_EFORMAT,
                        "%s: unsupported GGUF version %u (seer reads 2 and 3)", g->path, version);
    }
    g->version = version;
    snprintf(r.what, sizeof r.what, "the tensor and metadata counts");
    if ((rc = rd_u64(&r, &n_tensors)) != SEER_OK || (rc = rd_u64(&r, &n_kv)) != SEER_OK)
        return rc;
    /* Smallest encodings: a kv is 8 (key length) + 1 (key) + 4 (type) + 1 (u8 value) bytes; a
       tensor info is 8 + 1 (name) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset). Bounding
       the counts by the bytes left keeps a count of 2^62 from ever reaching the allocator. */
    size_t left = r.size - r.off;
    if (n_kv > left / 14)
        return seer_err(SEER_EFORMAT, "%s: metadata count %llu cannot fit in the %zu bytes after the header (truncated or corrupt)", g->path,
                        (unsigned long long)n_kv, left);
    if (n_tensors > left / 33 || n_kv * 14 + n_tensors * 33 > left)
        return seer_err(SEER_EFORMAT, "%s: tensor count %llu cannot fit in the %zu bytes after the header (truncated or corrupt)", g->path,
                        (unsigned long long)n_tensors, left);
    g->n_kv = (int64_t)n_kv;
    g->n_tensors = (int64_t)n_tensors;
    if (!(g->kv = seer_calloc((size_t)n_kv, sizeof *g->kv)) || !(g->ti = seer_calloc((size_t)n_tensors, sizeof *g->ti)) ||
        !strtab_init(&g->kv_tab, (size_t)n_kv) || !strtab_init(&g->t_tab, (size_t)n_tensors))
        return seer_err(SEER_ENOMEM, "%s: out of memory for %llu keys and %llu tensors", g->path,
                        (unsigned long long)n_kv, (unsigned long long)n_tensors);
    for (int64_t i = 0; i < g->n_kv; i++)
        if ((rc = read_kv(&r, g, i)) != SEER_OK)
            return rc;
    if ((rc = read_alignment(g)) != SEER_OK)
        return rc;
    for (int64_t i = 0; i < g->n_tensors; i++)
        if ((rc = read_tinfo(&r, g, i)) != SEER_OK)
            return rc;
    return place_tensors(g, r.off);
}

int gguf_open(const char *path, gguf **out)
{
    gguf *g = seer_calloc(1, sizeof *g);
    int rc;
    if (!g || !(g->path = seer_strdup(path))) {
        seer_free(g);
        return seer_err(SEER_ENOMEM, "%s: out of memory", path);
    }
    if ((rc = io_map(path, &g->map)) != SEER_OK || (rc = parse(g)) != SEER_OK) {
        gguf_free(g);
        return rc;
    }
    *out = g;
    return SEER_OK;
}

void gguf_free(gguf *g)
{
    if (!g)
        return;
    if (g->kv)
        for (int64_t i = 0; i < g->n_kv; i++)
            seer_free(g->kv[i].offs);
    seer_free(g->kv);
    seer_free(g->ti);
    strtab_deinit(&g->kv_tab);
    strtab_deinit(&g->t_tab);
    while (g->pool) {
        struct pool_chunk *next = g->pool->next;
        seer_free(g->pool);
        g->pool = next;
    }
    io_unmap(&g->map);
    seer_free(g->path);
    seer_free(g);
}

/* ---- 6. getters ----------------------------------------------------------------------------- */

const char *gguf_path(const gguf *g) { return g->path; }
uint32_t gguf_version(const gguf *g) { return g->version; }
size_t gguf_alignment(const gguf *g) { return g->alignment; }
size_t gguf_data_offset(const gguf *g) { return g->data_offset; }
size_t gguf_file_size(const gguf *g) { return g->map.size; }
int64_t gguf_n_kv(const gguf *g) { return g->n_kv; }
const char *gguf_key(const gguf *g, int64_t i) { return g->kv[i].key; }
enum gguf_type gguf_kv_type(const gguf *g, int64_t i) { return g->kv[i].type; }
int64_t gguf_find_key(const gguf *g, const char *key) { return strtab_find(&g->kv_tab, key); }

static int find(const gguf *g, const char *key, const struct kv **kv)
{
    int64_t i = strtab_find(&g->kv_tab, key);
    if (i < 0)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is missing", g->path, key);
    *kv = &g->kv[i];
    return SEER_OK;
}

static int wrong_type(const gguf *g, const struct kv *kv, const char *expected)
{
    if (kv->type == GGUF_TYPE_ARRAY)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is an array of %s, expected %s", g->path, kv->key,
                        gguf_type_name(kv->arr_type), expected);
    return seer_err(SEER_EFORMAT, "%s: key '%s' has type %s, expected %s", g->path, kv->key,
                    gguf_type_name(kv->type), expected);
}

/* Reads an integer key and checks it lies in [−neg_limit, hi]. */
static int get_int(const gguf *g, const char *key, uint64_t neg_limit, uint64_t hi, const char *tname,
                   struct ival *v)
{
    const struct kv *kv = NULL;
    int rc = find(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->type == GGUF_TYPE_BOOL || !read_int(kv->type, kv->p, v))
        return wrong_type(g, kv, "an integer");
    if (v->neg ? v->mag > neg_limit : v->mag > hi)
        return seer_err(SEER_EFORMAT, "%s: key '%s' = %s%llu does not fit in %s", g->path, key, v->neg ? "-" : "",
                        (unsigned long long)v->mag, tname);
    return SEER_OK;
}

int gguf_get_u32(const gguf *g, const char *key, uint32_t *v)
{
    struct ival x;
    int rc = get_int(g, key, 0, UINT32_MAX, "u32", &x);
    if (rc == SEER_OK)
        *v = (uint32_t)x.mag;
    return rc;
}

int gguf_get_i32(const gguf *g, const char *key, int32_t *v)
{
    struct ival x;
    int rc = get_int(g, key, (uint64_t)INT32_MAX + 1, INT32_MAX, "i32", &x);
    if (rc == SEER_OK)
        *v = x.neg ? (int32_t)(-(int64_t)x.mag) : (int32_t)x.mag;
    return rc;
}

int gguf_get_u64(const gguf *g, const char *key, uint64_t *v)
{
    struct ival x;
    int rc = get_int(g, key, 0, UINT64_MAX, "u64", &x);
    if (rc == SEER_OK)
        *v = x.mag;
    return rc;
}

static int64_t ival_i64(struct ival x) { return x.neg ? (x.mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x.mag) : (int64_t)x.mag; }

int gguf_get_i64(const gguf *g, const char *key, int64_t *v)
{
    struct ival x;
    int rc = get_int(g, key, (uint64_t)INT64_MAX + 1, INT64_MAX, "i64", &x);
    if (rc == SEER_OK)
        *v = ival_i64(x);
    return rc;
}

int gguf_get_f64(const gguf *g, const char *key, double *v)
{
    const struct kv *kv = NULL;
    int rc = find(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->type == GGUF_TYPE_FLOAT32) {
        float f;
        memcpy(&f, kv->p, 4);
        *v = f;
    } else if (kv->type == GGUF_TYPE_FLOAT64) {
        memcpy(v, kv->p, 8);
    } else {
        return wrong_type(g, kv, "f32 or f64");
    }
    return SEER_OK;
}

int gguf_get_f32(const gguf *g, const char *key, float *v)
{
    double d;
    int rc = gguf_get_f64(g, key, &d);
    if (rc != SEER_OK)
        return rc;
    if (isfinite(d) && fabs(d) > 3.4028234663852886e38)
        return seer_err(SEER_EFORMAT, "%s: key '%s' = %g does not fit in f32", g->path, key, d);
    *v = (float)d;
    return SEER_OK;
}

int gguf_get_bool(const gguf *g, const char *key, bool *v)
{
    const struct kv *kv = NULL;
    int rc = find(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->type != GGUF_TYPE_BOOL)
        return wrong_type(g, kv, "bool");
    *v = kv->p[0] != 0;
    return SEER_OK;
}

int gguf_get_str(const gguf *g, const char *key, const char **s, size_t *len)
{
    const struct kv *kv = NULL;
    int rc = find(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->type != GGUF_TYPE_STRING)
        return wrong_type(g, kv, "string");
    *s = kv->str;
    if (len)
        *len = (size_t)kv->n;
    return SEER_OK;
}

static int find_arr(const gguf *g, const char *key, const struct kv **kv)
{
    int rc = find(g, key, kv);
    if (rc == SEER_OK && (*kv)->type != GGUF_TYPE_ARRAY)
        return wrong_type(g, *kv, "an array");
    return rc;
}

int gguf_get_arr_info(const gguf *g, const char *key, enum gguf_type *elem_type, uint64_t *n)
{
    const struct kv *kv = NULL;
    int rc = find_arr(g, key, &kv);
    if (rc == SEER_OK) {
        *elem_type = kv->arr_type;
        *n = kv->n;
    }
    return rc;
}

static int arr_fits(const gguf *g, const struct kv *kv, size_t cap)
{
    if (kv->n > cap)
        return seer_err(SEER_EFORMAT, "%s: key '%s' has %llu entries, at most %zu expected", g->path, kv->key,
                        (unsigned long long)kv->n, cap);
    return SEER_OK;
}

int gguf_get_arr_i64(const gguf *g, const char *key, int64_t *out, size_t cap, size_t *n)
{
    const struct kv *kv = NULL;
    int rc = find_arr(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    enum gguf_type t = kv->arr_type;
    if (t == GGUF_TYPE_STRING || t == GGUF_TYPE_FLOAT32 || t == GGUF_TYPE_FLOAT64)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is an array of %s, expected integers", g->path, key,
                        gguf_type_name(t));
    if ((rc = arr_fits(g, kv, cap)) != SEER_OK)
        return rc;
    for (uint64_t i = 0; i < kv->n; i++) {
        const uint8_t *p = kv->p + i * type_table[t].size;
        struct ival x;
        if (t == GGUF_TYPE_BOOL) {
            x.neg = false;
            x.mag = p[0] != 0;
        } else {
            read_int(t, p, &x);
        }
        if (!x.neg && x.mag > INT64_MAX)
            return seer_err(SEER_EFORMAT, "%s: key '%s': entry %llu = %llu does not fit in i64", g->path, key,
                            (unsigned long long)i, (unsigned long long)x.mag);
        out[i] = ival_i64(x);
    }
    *n = (size_t)kv->n;
    return SEER_OK;
}

int gguf_get_arr_f32(const gguf *g, const char *key, float *out, size_t cap, size_t *n)
{
    const struct kv *kv = NULL;
    int rc = find_arr(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->arr_type != GGUF_TYPE_FLOAT32 && kv->arr_type != GGUF_TYPE_FLOAT64)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is an array of %s, expected f32 or f64", g->path, key,
                        gguf_type_name(kv->arr_type));
    if ((rc = arr_fits(g, kv, cap)) != SEER_OK)
        return rc;
    for (uint64_t i = 0; i < kv->n; i++) {
        if (kv->arr_type == GGUF_TYPE_FLOAT32) {
            memcpy(&out[i], kv->p + 4 * i, 4);
        } else {
            double d;
            memcpy(&d, kv->p + 8 * i, 8);
            out[i] = (float)d;
        }
    }
    *n = (size_t)kv->n;
    return SEER_OK;
}

int gguf_get_arr_str(const gguf *g, const char *key, uint64_t i, const char **s, size_t *len)
{
    const struct kv *kv = NULL;
    int rc = find_arr(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->arr_type != GGUF_TYPE_STRING)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is an array of %s, expected strings", g->path, key,
                        gguf_type_name(kv->arr_type));
    if (i >= kv->n)
        return seer_err(SEER_EINVAL, "%s: key '%s': index %llu is past its %llu strings", g->path, key,
                        (unsigned long long)i, (unsigned long long)kv->n);
    const uint8_t *p = kv->p + kv->offs[i];
    uint64_t l;
    memcpy(&l, p, 8);
    *s = (const char *)p + 8;
    *len = (size_t)l;
    return SEER_OK;
}

int gguf_get_arr_data(const gguf *g, const char *key, enum gguf_type *elem_type, uint64_t *n,
                      const void **data)
{
    const struct kv *kv = NULL;
    int rc = find_arr(g, key, &kv);
    if (rc != SEER_OK)
        return rc;
    if (kv->arr_type == GGUF_TYPE_STRING)
        return seer_err(SEER_EFORMAT, "%s: key '%s' is an array of strings, expected numbers", g->path, key);
    *elem_type = kv->arr_type;
    *n = kv->n;
    *data = kv->p;
    return SEER_OK;
}

int64_t gguf_n_tensors(const gguf *g) { return g->n_tensors; }
const tensor *gguf_tensor(const gguf *g, int64_t i) { return &g->ti[i].t; }
const char *gguf_tensor_name(const gguf *g, int64_t i) { return g->ti[i].name; }
int gguf_tensor_n_dims(const gguf *g, int64_t i) { return g->ti[i].n_dims; }
uint64_t gguf_tensor_offset(const gguf *g, int64_t i) { return g->data_offset + g->ti[i].rel_offset; }
int64_t gguf_find_tensor(const gguf *g, const char *name) { return strtab_find(&g->t_tab, name); }
