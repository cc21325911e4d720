/* jget.c — typed getters over configuration JSON (see jget.h). */
#include "core/jget.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/io.h"
#include "core/printable.h"
#include "seer.h"

int jget_load_file(const char *path, size_t max_bytes, const char *limit_name, size_t flags, json_t **root)
{
    uint64_t size;
    int rc = io_file_size(path, &size);
    if (rc != SEER_OK)
        return rc;
    if (size > max_bytes) /* checked before reading: the limit bounds the memory and the parse */
        return seer_err(SEER_EFORMAT, "%s: %llu bytes is more than the %zu allowed for this file (%s)", path,
                        (unsigned long long)size, max_bytes, limit_name);
    char *text;
    size_t len;
    if ((rc = io_read_file(path, max_bytes, &text, &len)) != SEER_OK)
        return rc;
    json_error_t jerr;
    char shown[160];
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | flags, &jerr);
    seer_free(text);
    if (!j && json_error_code(&jerr) == json_error_stack_overflow)
        return seer_err(SEER_EFORMAT, "%s: JSON nested deeper than %d levels at line %d (jansson's "
                        "JSON_PARSER_MAX_DEPTH)", path, JSON_PARSER_MAX_DEPTH, jerr.line);
    if (!j)
        return seer_err(SEER_EFORMAT, "%s: bad JSON: %s (line %d, column %d)", path,
                        printable(shown, sizeof shown, jerr.text), jerr.line, jerr.column);
    *root = j;
    return SEER_OK;
}

int jget_load_hf_processor(const char *dir, const char *file, const char *key, size_t max_bytes,
                           const char *limit_name, json_t **root, char *name, size_t name_cap)
{
    *root = NULL;
    if (!dir)
        return SEER_OK;
    if (snprintf(name, name_cap, "%s/%s", dir, file) < (int)name_cap && io_path_kind(name) == IO_FILE)
        return jget_load_file(name, max_bytes, limit_name, 0, root);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/processor_config.json", dir) >= (int)sizeof path ||
        io_path_kind(path) != IO_FILE)
        return SEER_OK;
    json_t *all;
    int rc = jget_load_file(path, max_bytes, limit_name, 0, &all);
    if (rc)
        return rc;
    json_t *sub = json_object_get(all, key);
    snprintf(name, name_cap, "%s, %s", path, key);
    if (sub && !json_is_object(sub))
        rc = seer_err(SEER_EFORMAT, "%s: not a JSON object", name);
    else if (sub)
        *root = json_incref(sub);
    json_decref(all);
    return rc;
}

bool jget_has(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v);
}

static const json_t *get(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v) ? v : NULL;
}

static int missing(const struct jget_ctx *c, const char *key)
{
    return seer_err(SEER_EFORMAT, "%s: %s%s is missing", c->path, c->prefix, key);
}

/* `index` is "" for the key itself, "[i]" for an array element. */
static int bad_type(const struct jget_ctx *c, const char *key, const char *index, const char *what)
{
    return seer_err(SEER_EFORMAT, "%s: %s%s%s must be %s", c->path, c->prefix, key, index, what);
}

enum kind { K_I64, K_F64, K_BOOL, K_STR };

static const struct { const char *what; size_t size; } kinds[] = {
    [K_I64] = {"an integer", sizeof(int64_t)},  [K_F64] = {"a finite number", sizeof(double)},
    [K_BOOL] = {"true or false", sizeof(bool)}, [K_STR] = {"a string", sizeof(const char *)},
};

/* v into *out, an int64_t, double, bool or const char * as `kind` says; false when v is not of
   that JSON type (then *out is untouched). */
static bool convert(const json_t *v, enum kind kind, void *out)
{
    switch (kind) {
    case K_I64:
        if (!json_is_integer(v))
            return false;
        *(int64_t *)out = (int64_t)json_integer_value(v);
        return true;
    case K_F64:
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return false;
        *(double *)out = json_number_value(v);
        return true;
    case K_BOOL:
        if (!json_is_boolean(v))
            return false;
        *(bool *)out = json_is_true(v);
        return true;
    case K_STR:
        if (!json_is_string(v))
            return false;
        *(const char **)out = json_string_value(v);
        return true;
    }
    return false;
}

/* The one lookup behind the typed getters: key's value into *out (see convert). Absent or null,
   *out takes *def (def may be out itself), or without a default the key is missing. *found (may
   be NULL) says whether the value came from the JSON. */
static int get_typed(const struct jget_ctx *c, const json_t *obj, const char *key, enum kind kind, const void *def,
                     void *out, bool *found)
{
    const json_t *v = get(obj, key);
    if (found)
        *found = v != NULL;
    if (!v && !def)
        return missing(c, key);
    if (!v) {
        memmove(out, def, kinds[kind].size);
        return SEER_OK;
    }
    return convert(v, kind, out) ? SEER_OK : bad_type(c, key, "", kinds[kind].what);
}

/* `index` as for bad_type. */
static int out_of_range(const struct jget_ctx *c, const char *key, const char *index, int64_t x, int64_t lo,
                        int64_t hi)
{
    return seer_err(SEER_EFORMAT, "%s: %s%s%s = %lld is out of range [%lld, %lld]", c->path, c->prefix, key, index,
                    (long long)x, (long long)lo, (long long)hi);
}

int jget_i64(const struct jget_ctx *c, const json_t *obj, const char *key, int64_t lo, int64_t hi,
             const int64_t *def, int64_t *out)
{
    int64_t x;
    bool found;
    int rc = get_typed(c, obj, key, K_I64, def, &x, &found);
    if (rc != SEER_OK)
        return rc;
    if (found && (x < lo || x > hi)) /* the range is the file's; a default is the caller's choice */
        return out_of_range(c, key, "", x, lo, hi);
    *out = x;
    return SEER_OK;
}

int jget_i64_fields(const struct jget_ctx *c, const json_t *obj, const struct jget_i64_field *f, size_t n, void *out)
{
    int rc = SEER_OK;
    for (size_t i = 0; i < n && rc == SEER_OK; i++)
        rc = jget_i64(c, obj, f[i].key, f[i].lo, f[i].hi, f[i].def, (int64_t *)((char *)out + f[i].offset));
    return rc;
}

int jget_f64(const struct jget_ctx *c, const json_t *obj, const char *key, const double *def, double *out)
{
    return get_typed(c, obj, key, K_F64, def, out, NULL);
}

int jget_bool(const struct jget_ctx *c, const json_t *obj, const char *key, const bool *def, bool *out)
{
    return get_typed(c, obj, key, K_BOOL, def, out, NULL);
}

int jget_str(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, const char **out)
{
    static const char *const none = NULL;
    return get_typed(c, obj, key, K_STR, required ? NULL : &none, out, NULL);
}

/* An array of at most cap values of `kind` into out[0..*n); integers must lie in [lo, hi].
   Absent and not required: *n = 0. */
static int get_array(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, enum kind kind,
                     int64_t lo, int64_t hi, void *out, size_t cap, size_t *n)
{
    const json_t *a = get(obj, key);
    *n = 0;
    if (!a)
        return required ? missing(c, key) : SEER_OK;
    if (!json_is_array(a))
        return bad_type(c, key, "", "an array");
    size_t len = json_array_size(a);
    if (len > cap)
        return seer_err(SEER_EFORMAT, "%s: %s%s has %zu entries, at most %zu expected", c->path, c->prefix, key, len,
                        cap);
    for (size_t i = 0; i < len; i++) {
        void *o = (char *)out + i * kinds[kind].size;
        char index[32];
        snprintf(index, sizeof index, "[%zu]", i);
        if (!convert(json_array_get(a, i), kind, o))
            return bad_type(c, key, index, kinds[kind].what);
        if (kind == K_I64 && (*(int64_t *)o < lo || *(int64_t *)o > hi))
            return out_of_range(c, key, index, *(int64_t *)o, lo, hi);
    }
    *n = len;
    return SEER_OK;
}

int jget_i64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, int64_t lo,
                 int64_t hi, int64_t *out, size_t cap, size_t *n)
{
    return get_array(c, obj, key, required, K_I64, lo, hi, out, cap, n);
}

int jget_f64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, double *out,
                 size_t cap, size_t *n)
{
    return get_array(c, obj, key, required, K_F64, 0, 0, out, cap, n);
}
