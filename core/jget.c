/* jget.c — typed getters over configuration JSON (see jget.h). */
#include "core/jget.h"

#include <math.h>
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

/* The value of key, or NULL when it is absent or null: then *out takes the `size` bytes of *def,
   and *rc is SEER_OK, or without a default *rc says the key is missing. */
static const json_t *get_or_default(const struct jget_ctx *c, const json_t *obj, const char *key, const void *def,
                                    void *out, size_t size, int *rc)
{
    const json_t *v = get(obj, key);
    *rc = SEER_OK;
    if (!v && !def)
        *rc = missing(c, key);
    else if (!v)
        memcpy(out, def, size);
    return v;
}

static int bad_type(const struct jget_ctx *c, const char *key, const char *what)
{
    return seer_err(SEER_EFORMAT, "%s: %s%s must be %s", c->path, c->prefix, key, what);
}

int jget_i64(const struct jget_ctx *c, const json_t *obj, const char *key, int64_t lo, int64_t hi,
             const int64_t *def, int64_t *out)
{
    int rc;
    const json_t *v = get_or_default(c, obj, key, def, out, sizeof *out, &rc);
    if (!v)
        return rc;
    if (!json_is_integer(v))
        return bad_type(c, key, "an integer");
    int64_t x = (int64_t)json_integer_value(v);
    if (x < lo || x > hi)
        return seer_err(SEER_EFORMAT, "%s: %s%s = %lld is out of range [%lld, %lld]", c->path, c->prefix, key,
                        (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return SEER_OK;
}

int jget_f64(const struct jget_ctx *c, const json_t *obj, const char *key, const double *def, double *out)
{
    int rc;
    const json_t *v = get_or_default(c, obj, key, def, out, sizeof *out, &rc);
    if (!v)
        return rc;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return bad_type(c, key, "a finite number");
    *out = json_number_value(v);
    return SEER_OK;
}

int jget_bool(const struct jget_ctx *c, const json_t *obj, const char *key, const bool *def, bool *out)
{
    int rc;
    const json_t *v = get_or_default(c, obj, key, def, out, sizeof *out, &rc);
    if (!v)
        return rc;
    if (!json_is_boolean(v))
        return bad_type(c, key, "true or false");
    *out = json_is_true(v);
    return SEER_OK;
}

int jget_str(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, const char **out)
{
    static const char *const none = NULL;
    int rc;
    const json_t *v = get_or_default(c, obj, key, required ? NULL : &none, out, sizeof *out, &rc);
    if (!v)
        return rc;
    if (!json_is_string(v))
        return bad_type(c, key, "a string");
    *out = json_string_value(v);
    return SEER_OK;
}

static int get_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, size_t cap,
                   const json_t **arr, size_t *n)
{
    const json_t *v = get(obj, key);
    *arr = NULL;
    *n = 0;
    if (!v)
        return required ? missing(c, key) : SEER_OK;
    if (!json_is_array(v))
        return bad_type(c, key, "an array");
    if (json_array_size(v) > cap)
        return seer_err(SEER_EFORMAT, "%s: %s%s has %zu entries, at most %zu expected", c->path, c->prefix, key,
                        json_array_size(v), cap);
    *arr = v;
    return SEER_OK;
}

int jget_i64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, int64_t lo,
                 int64_t hi, int64_t *out, size_t cap, size_t *n)
{
    const json_t *a;
    size_t len;
    int rc = get_arr(c, obj, key, required, cap, &a, &len);
    if (rc != SEER_OK || !a)
        return rc;
    len = json_array_size(a);
    for (size_t i = 0; i < len; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v))
            return seer_err(SEER_EFORMAT, "%s: %s%s[%zu] must be an integer", c->path, c->prefix, key, i);
        int64_t x = (int64_t)json_integer_value(v);
        if (x < lo || x > hi)
            return seer_err(SEER_EFORMAT, "%s: %s%s[%zu] = %lld is out of range [%lld, %lld]", c->path, c->prefix,
                            key, i, (long long)x, (long long)lo, (long long)hi);
        out[i] = x;
    }
    *n = len;
    return SEER_OK;
}

int jget_f64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, double *out,
                 size_t cap, size_t *n)
{
    const json_t *a;
    size_t len;
    int rc = get_arr(c, obj, key, required, cap, &a, &len);
    if (rc != SEER_OK || !a)
        return rc;
    len = json_array_size(a);
    for (size_t i = 0; i < len; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return seer_err(SEER_EFORMAT, "%s: %s%s[%zu] must be a finite number", c->path, c->prefix, key, i);
        out[i] = json_number_value(v);
    }
    *n = len;
    return SEER_OK;
}
