/* safetensors.c — safetensors reader (see safetensors.h). Divisions:
     1. handle layout, path helpers
     2. one file: header length, JSON header (jansson), each tensor entry
     3. the set: single file, sharded index, model directory; name table and duplicate check
     4. accessors */
#define _POSIX_C_SOURCE 200809L
#include "core/safetensors.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/io.h"
#include "core/jget.h"
#include "core/printable.h"
#include "core/strtab.h"
#include "core/util.h"

/* ---- 1. layout ------------------------------------------------------------------------------ */

struct st_file {
    char *path;
    struct io_map map;
};

struct st_tensor {
    char *name;
    int file;                              /* index into files */
    int rank;                              /* as stored */
    int64_t shape[SAFETENSORS_MAX_DIMS];   /* as stored: PyTorch order */
    tensor t;
};

struct safetensors {
    char *path;
    struct st_file *files;
    int n_files;
    struct st_tensor *t;
    int64_t n;
    size_t cap;
    struct strtab tab;
};

#define MAX_INDEX_BYTES ((size_t)64 << 20) /* an index.json is a few hundred KiB */

/* dir of `path` joined with `name`, allocated; NULL when out of memory. */
static char *sibling_path(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, nlen = strlen(name);
    char *p = seer_malloc(dlen + nlen + 1);
    if (p) {
        memcpy(p, path, dlen);
        memcpy(p + dlen, name, nlen + 1);
    }
    return p;
}

static char *join_path(const char *dir, const char *name)
{
    size_t dlen = strlen(dir), nlen = strlen(name);
    char *p = seer_malloc(dlen + nlen + 2);
    if (p) {
        memcpy(p, dir, dlen);
        p[dlen] = '/';
        memcpy(p + dlen + 1, name, nlen + 1);
    }
    return p;
}

/* ---- 2. one file ---------------------------------------------------------------------------- */

static bool map_dtype(const char *s, enum dtype *t, size_t *size)
{
    if (!strcmp(s, "F32")) {
        *t = DT_F32;
        *size = 4;
    } else if (!strcmp(s, "F16")) {
        *t = DT_F16;
        *size = 2;
    } else if (!strcmp(s, "BF16")) {
        *t = DT_BF16;
        *size = 2;
    } else {
        return false;
    }
    return true;
}

static int grow(safetensors *st, const char *path)
{
    if (!seer_grow(&st->t, &st->cap, (size_t)st->n + 1, sizeof *st->t, 64))
        return seer_err(SEER_ENOMEM, "%s: out of memory for %lld tensors", path, (long long)st->n + 1);
    return SEER_OK;
}

/* A JSON integer in [0, 2^63). */
static bool json_u63(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static int read_entry(safetensors *st, int fi, const char *name, json_t *e, size_t data_start)
{
    const struct st_file *f = &st->files[fi];
    const char *path = f->path;
    size_t data_len = f->map.size - data_start;
    size_t name_len = strlen(name);
    char shown[96];
    if (name_len == 0 || name_len > 65536)
        return seer_err(SEER_EFORMAT, "%s: a tensor name has length %zu (must be 1..65536)", path, name_len);
    if (!printable_ok(name, name_len)) /* names appear in messages: keep those one line */
        return seer_err(SEER_EFORMAT, "%s: tensor name '%s' contains a control character", path,
                        printable(shown, sizeof shown, name));
    if (!json_is_object(e))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': header entry is not a JSON object", path, name);
    json_t *jd = json_object_get(e, "dtype"), *js = json_object_get(e, "shape"),
           *jo = json_object_get(e, "data_offsets");
    if (!json_is_string(jd))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': \"dtype\" is missing or not a string", path, name);
    if (!json_is_array(js))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': \"shape\" is missing or not an array", path, name);
    if (!json_is_array(jo) || json_array_size(jo) != 2)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': \"data_offsets\" must be an array [begin, end]", path,
                        name);
    enum dtype dt;
    size_t esize;
    if (!map_dtype(json_string_value(jd), &dt, &esize))
        return seer_err(SEER_EUNSUPPORTED, "%s: tensor '%s' has dtype %s, which seer does not support (F32, F16, BF16)",
                        path, name, printable(shown, 32, json_string_value(jd)));
    size_t rank = json_array_size(js);
    if (rank > SAFETENSORS_MAX_DIMS)
        return seer_err(SEER_EUNSUPPORTED, "%s: tensor '%s' has %zu dimensions (at most %d supported)", path, name,
                        rank, SAFETENSORS_MAX_DIMS);
    struct st_tensor tmp = {.file = fi, .rank = (int)rank};
    uint64_t nel = 1;
    for (size_t d = 0; d < rank; d++) {
        uint64_t v;
        if (!json_u63(json_array_get(js, d), &v))
            return seer_err(SEER_EFORMAT, "%s: tensor '%s': shape entry %zu is not a non-negative integer", path,
                            name, d);
        if (v == 0)
            return seer_err(SEER_EUNSUPPORTED, "%s: tensor '%s' is empty (dimension %zu is 0)", path, name, d);
        if (!u64_mul(nel, v, &nel) || nel > INT64_MAX)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s': the product of its dimensions overflows", path, name);
        tmp.shape[d] = (int64_t)v;
    }
    uint64_t begin, end, bytes;
    if (!json_u63(json_array_get(jo, 0), &begin) || !json_u63(json_array_get(jo, 1), &end))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': data_offsets must be non-negative integers", path, name);
    if (begin > end || end > data_len)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] lie outside the %zu-byte data section",
                        path, name, (unsigned long long)begin, (unsigned long long)end, data_len);
    if (!u64_mul(nel, esize, &bytes))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': %llu elements of %zu bytes overflow a 64-bit size", path, name,
                        (unsigned long long)nel, esize);
    if (end - begin != bytes)
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': data_offsets span %llu bytes but its shape and dtype need %llu",
                        path, name, (unsigned long long)(end - begin), (unsigned long long)bytes);
    if ((data_start + begin) % esize != 0) /* the mapping itself is page-aligned */
        return seer_err(SEER_EUNSUPPORTED, "%s: tensor '%s' at file offset %llu is not aligned to its %zu-byte elements",
                        path, name, (unsigned long long)(data_start + begin), esize);
    /* ne order is the reverse of the stored order; fold the innermost dims past the 4th. */
    int64_t ne[SAFETENSORS_MAX_DIMS] = {1};
    int n_dims = rank ? (int)rank : 1;
    for (size_t d = 0; d < rank; d++)
        ne[d] = tmp.shape[rank - 1 - d];
    while (n_dims > TENSOR_MAX_DIMS) {
        ne[0] *= ne[1]; /* cannot overflow: the product of all dims fits above */
        memmove(&ne[1], &ne[2], (size_t)(n_dims - 2) * sizeof ne[0]);
        n_dims--;
    }
    if (!tensor_init(&tmp.t, dt, n_dims, ne))
        return seer_err(SEER_EFORMAT, "%s: tensor '%s': its byte size overflows", path, name);
    tmp.t.data = (void *)(f->map.data + data_start + begin); /* read-only pages */
    snprintf(tmp.t.name, sizeof tmp.t.name, "%s", name);
    int rc = grow(st, path);
    if (rc != SEER_OK)
        return rc;
    if (!(tmp.name = seer_strdup(name)))
        return seer_err(SEER_ENOMEM, "%s: out of memory", path);
    st->t[st->n++] = tmp;
    return SEER_OK;
}

struct range {
    uint64_t begin, end; /* [begin, end) of the data section */
    int64_t i;
};

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Tensors first..st->n of one file must not share bytes (a writer never aliases them; accepting
   it would let one corrupt region pass as two tensors). Sorted by start: O(n log n). */
static int check_overlaps(safetensors *st, int64_t first, const char *path)
{
    int64_t n = st->n - first;
    if (n < 2)
        return SEER_OK;
    struct range *r = seer_malloc((size_t)n * sizeof *r);
    if (!r)
        return seer_err(SEER_ENOMEM, "%s: out of memory checking %lld tensor ranges", path, (long long)n);
    const uint8_t *base = st->files[st->t[first].file].map.data;
    for (int64_t k = 0; k < n; k++) {
        const tensor *t = &st->t[first + k].t;
        uint64_t b = (uint64_t)((const uint8_t *)t->data - base);
        r[k] = (struct range){b, b + tensor_nbytes(t), first + k};
    }
    qsort(r, (size_t)n, sizeof *r, cmp_range);
    int rc = SEER_OK;
    for (int64_t k = 1; k < n && rc == SEER_OK; k++)
        if (r[k].begin < r[k - 1].end)
            rc = seer_err(SEER_EFORMAT, "%s: tensors '%s' and '%s' overlap (file bytes [%llu, %llu) and [%llu, %llu))",
                          path, st->t[r[k - 1].i].name, st->t[r[k].i].name, (unsigned long long)r[k - 1].begin,
                          (unsigned long long)r[k - 1].end, (unsigned long long)r[k].begin,
                          (unsigned long long)r[k].end);
    seer_free(r);
    return rc;
}

/* Maps file `path` as file number fi and appends its tensors. */
static int read_file(safetensors *st, int fi, const char *path)
{
    struct st_file *f = &st->files[fi];
    int rc;
    if (!(f->path = seer_strdup(path)))
        return seer_err(SEER_ENOMEM, "%s: out of memory", path);
    if ((rc = io_map(path, &f->map)) != SEER_OK)
        return rc;
    if (f->map.size < 8)
        return seer_err(SEER_EFORMAT, "%s: truncated: %zu bytes, too short for the 8-byte header length", path,
                        f->map.size);
    uint64_t hlen;
    memcpy(&hlen, f->map.data, 8); /* little-endian, as the host (checked in gguf.c) */
    if (hlen > f->map.size - 8)
        return seer_err(SEER_EFORMAT, "%s: header length %llu runs past the end of the file (%zu bytes)", path,
                        (unsigned long long)hlen, f->map.size);
    if (hlen > SAFETENSORS_MAX_HEADER)
        return seer_err(SEER_EFORMAT, "%s: header length %llu exceeds the format's limit of %d bytes", path,
                        (unsigned long long)hlen, SAFETENSORS_MAX_HEADER);
    json_error_t jerr;
    char msg[160];
    json_t *root = json_loadb((const char *)f->map.data + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return seer_err(SEER_EFORMAT, "%s: bad JSON header: %s (line %d, column %d)", path,
                        printable(msg, sizeof msg, jerr.text), jerr.line, jerr.column);
    if (!json_is_object(root)) {
        json_decref(root);
        return seer_err(SEER_EFORMAT, "%s: the JSON header is not an object", path);
    }
    const char *name;
    json_t *e;
    int64_t first = st->n;
    rc = SEER_OK;
    json_object_foreach(root, name, e)
    {
        if (!strcmp(name, "__metadata__"))
            continue;
        if ((rc = read_entry(st, fi, name, e, 8 + (size_t)hlen)) != SEER_OK)
            break;
    }
    json_decref(root);
    return rc == SEER_OK ? check_overlaps(st, first, path) : rc;
}

/* ---- 3. the set ----------------------------------------------------------------------------- */

static safetensors *create(const char *path, int n_files)
{
    safetensors *st = seer_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->path = seer_strdup(path);
    st->files = seer_calloc((size_t)n_files, sizeof *st->files);
    if (!st->path || !st->files) {
        safetensors_free(st);
        return NULL;
    }
    st->n_files = n_files;
    return st;
}

/* Builds the name table; a name seen twice (necessarily in two shards: jansson already rejects
   duplicate keys inside one header) is an error naming both files. */
static int index_names(safetensors *st)
{
    if (!strtab_init(&st->tab, (size_t)st->n))
        return seer_err(SEER_ENOMEM, "%s: out of memory indexing %lld tensors", st->path, (long long)st->n);
    for (int64_t i = 0; i < st->n; i++) {
        int64_t prev = strtab_insert(&st->tab, st->t[i].name, i);
        if (prev != i)
            return seer_err(SEER_EFORMAT, "%s: tensor '%s' appears in both %s and %s", st->path, st->t[i].name,
                            st->files[st->t[prev].file].path, st->files[st->t[i].file].path);
    }
    return SEER_OK;
}

int safetensors_open(const char *path, safetensors **out)
{
    safetensors *st = create(path, 1);
    int rc;
    if (!st)
        return seer_err(SEER_ENOMEM, "%s: out of memory", path);
    if ((rc = read_file(st, 0, path)) != SEER_OK || (rc = index_names(st)) != SEER_OK) {
        safetensors_free(st);
        return rc;
    }
    *out = st;
    return SEER_OK;
}

/* A shard name must stay inside the index's directory. */
static bool shard_name_ok(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") && printable_ok(s, strlen(s));
}

static int open_index(const char *index_path, json_t *root, safetensors **out)
{
    json_t *wm = json_object_get(root, "weight_map");
    if (!json_is_object(wm))
        return seer_err(SEER_EFORMAT, "%s: \"weight_map\" is missing or not an object", index_path);
    /* Distinct shard names in order of first appearance, found through a hash set (a scan of the
       names so far made 80,000 shards a 28-second load), and the limit checked as each new name
       appears, before any file is opened. Names are borrowed from the JSON. */
    size_t n_entries = json_object_size(wm), n_shards = 0;
    const char **shards = seer_malloc((MIN(n_entries, (size_t)SAFETENSORS_MAX_SHARDS) + 1) * sizeof *shards);
    struct strtab seen = {0};
    safetensors *st = NULL;
    const char *name;
    json_t *v;
    char shown[96];
    int rc = SEER_OK;
    if (!shards || !strtab_init(&seen, MIN(n_entries, (size_t)SAFETENSORS_MAX_SHARDS)))
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", index_path);
    json_object_foreach(wm, name, v)
    {
        if (rc != SEER_OK)
            break;
        if (!json_is_string(v) || !shard_name_ok(json_string_value(v))) {
            rc = seer_err(SEER_EFORMAT, "%s: weight_map entry for '%s' is not a plain file name", index_path,
                          printable(shown, sizeof shown, name));
            break;
        }
        const char *shard = json_string_value(v);
        if (strtab_find(&seen, shard) >= 0)
            continue;
        if (n_shards == SAFETENSORS_MAX_SHARDS) {
            rc = seer_err(SEER_EFORMAT, "%s: weight_map names more than %d shard files (SAFETENSORS_MAX_SHARDS)",
                          index_path, SAFETENSORS_MAX_SHARDS);
            break;
        }
        strtab_insert(&seen, shard, (int64_t)n_shards);
        shards[n_shards++] = shard;
    }
    if (rc == SEER_OK && n_shards == 0)
        rc = seer_err(SEER_EFORMAT, "%s: weight_map names no tensors", index_path);
    if (rc == SEER_OK && !(st = create(index_path, (int)n_shards)))
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", index_path);
    for (size_t i = 0; rc == SEER_OK && i < n_shards; i++) {
        char *p = sibling_path(index_path, shards[i]);
        rc = p ? read_file(st, (int)i, p) : seer_err(SEER_ENOMEM, "%s: out of memory", index_path);
        seer_free(p);
    }
    strtab_deinit(&seen);
    seer_free(shards);
    if (rc == SEER_OK)
        rc = index_names(st);
    /* Every weight_map entry must be found in the shard it names. */
    if (rc == SEER_OK) {
        json_object_foreach(wm, name, v)
        {
            int64_t i = strtab_find(&st->tab, name);
            const char *want = json_string_value(v);
            if (i < 0) {
                rc = seer_err(SEER_EFORMAT, "%s: tensor '%s' is listed for shard %s but is missing from it", index_path,
                              printable(shown, sizeof shown, name), want);
                break;
            }
            const char *have = st->files[st->t[i].file].path, *base = strrchr(have, '/');
            if (strcmp(base ? base + 1 : have, want) != 0) {
                rc = seer_err(SEER_EFORMAT, "%s: tensor '%s' is listed for shard %s but is in %s", index_path, name,
                              want, have);
                break;
            }
        }
    }
    if (rc != SEER_OK) {
        safetensors_free(st);
        return rc;
    }
    *out = st;
    return SEER_OK;
}

int safetensors_open_index(const char *index_path, safetensors **out)
{
    json_t *root;
    int rc = jget_load_file(index_path, MAX_INDEX_BYTES, "MAX_INDEX_BYTES in core/safetensors.c", 0, &root);
    if (rc != SEER_OK)
        return rc;
    rc = json_is_object(root) ? open_index(index_path, root, out)
                              : seer_err(SEER_EFORMAT, "%s: the index is not a JSON object", index_path);
    json_decref(root);
    return rc;
}

int safetensors_open_dir(const char *dir, safetensors **out)
{
    char *index = join_path(dir, "model.safetensors.index.json"), *single = join_path(dir, "model.safetensors");
    int rc;
    if (!index || !single)
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", dir);
    else if (io_path_kind(index) == IO_FILE)
        rc = safetensors_open_index(index, out);
    else if (io_path_kind(single) == IO_FILE)
        rc = safetensors_open(single, out);
    else
        rc = seer_err(SEER_EIO, "%s: no model.safetensors or model.safetensors.index.json in this directory", dir);
    seer_free(index);
    seer_free(single);
    return rc;
}

void safetensors_free(safetensors *st)
{
    if (!st)
        return;
    for (int64_t i = 0; i < st->n; i++)
        seer_free(st->t[i].name);
    seer_free(st->t);
    for (int i = 0; st->files && i < st->n_files; i++) {
        io_unmap(&st->files[i].map);
        seer_free(st->files[i].path);
    }
    seer_free(st->files);
    strtab_deinit(&st->tab);
    seer_free(st->path);
    seer_free(st);
}

/* ---- 4. accessors --------------------------------------------------------------------------- */

const char *safetensors_path(const safetensors *st) { return st->path; }
int safetensors_n_files(const safetensors *st) { return st->n_files; }
const char *safetensors_file_path(const safetensors *st, int i) { return st->files[i].path; }
int64_t safetensors_n_tensors(const safetensors *st) { return st->n; }
const tensor *safetensors_tensor(const safetensors *st, int64_t i) { return &st->t[i].t; }
const char *safetensors_tensor_name(const safetensors *st, int64_t i) { return st->t[i].name; }
const char *safetensors_tensor_file(const safetensors *st, int64_t i) { return st->files[st->t[i].file].path; }
int64_t safetensors_find(const safetensors *st, const char *name) { return strtab_find(&st->tab, name); }

int safetensors_tensor_shape(const safetensors *st, int64_t i, int64_t shape[SAFETENSORS_MAX_DIMS])
{
    const struct st_tensor *t = &st->t[i];
    memcpy(shape, t->shape, (size_t)t->rank * sizeof shape[0]);
    return t->rank;
}
