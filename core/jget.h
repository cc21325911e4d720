/* jget.h — typed, range-checked getters over parsed JSON configuration files (config.json,
   preprocessor_config.json, index files) so every config reader reports problems the same way:
   "PATH: text_config.hidden_size is missing" / "... must be an integer" / "... = 0 is out of
   range [1, 16777216]". A JSON null counts as absent. `def` NULL makes a key required. */
#ifndef SEER_CORE_JGET_H
#define SEER_CORE_JGET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jget_ctx {
    const char *path;   /* the file, for messages */
    const char *prefix; /* dotted location of the object, e.g. "text_config." ("" at the root) */
};

/* Reads and parses the JSON file `path` (duplicate keys refused) into *root, a new reference the
   caller releases with json_decref. The file may hold at most max_bytes; `limit_name` names the
   constant that sets it, so the message says what to raise: "PATH: 70000000 bytes is more than
   the 16777216 allowed for this file (MAX_CONFIG_BYTES in lm/config.c)". Nesting deeper than jansson's
   JSON_PARSER_MAX_DEPTH (2048) is refused the same way. `flags` adds jansson decoding flags
   (JSON_ALLOW_NUL). SEER_EIO when unreadable, SEER_EFORMAT for bad JSON; on failure *root is
   untouched. */
int jget_load_file(const char *path, size_t max_bytes, const char *limit_name, size_t flags, json_t **root);

/* An HF directory's image or video processor settings (spec §5.1, §5.3): `file` as the released
   checkpoints carry it (preprocessor_config.json, video_preprocessor_config.json), or else the `key`
   object ("image_processor", "video_processor") of the one processor_config.json that transformers 5's
   save_pretrained writes instead. *root is NULL when the directory has neither; `name` (name_cap
   bytes) names what was read, for messages ("DIR/processor_config.json, image_processor"). */
int jget_load_hf_processor(const char *dir, const char *file, const char *key, size_t max_bytes,
                           const char *limit_name, json_t **root, char *name, size_t name_cap);

/* True when key is present and not null. */
bool jget_has(const json_t *obj, const char *key);
int jget_i64(const struct jget_ctx *c, const json_t *obj, const char *key, int64_t lo, int64_t hi,
             const int64_t *def, int64_t *out);
/* One integer key of a config object for jget_i64_fields: a reader lists its keys, ranges and
   defaults as a table instead of one call each. */
struct jget_i64_field {
    const char *key;
    int64_t lo, hi;
    const int64_t *def; /* NULL: the key is required */
    size_t offset;      /* of the int64_t in the caller's struct (offsetof) */
};
/* jget_i64 for each of the n fields in order, into the struct at out; stops at the first problem. */
int jget_i64_fields(const struct jget_ctx *c, const json_t *obj, const struct jget_i64_field *f, size_t n, void *out);
/* Accepts JSON integers and reals; must be finite. */
int jget_f64(const struct jget_ctx *c, const json_t *obj, const char *key, const double *def, double *out);
int jget_bool(const struct jget_ctx *c, const json_t *obj, const char *key, const bool *def, bool *out);
/* *out borrows the JSON string; when absent and not required, *out = NULL. */
int jget_str(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, const char **out);
/* Integer array with at most cap entries (each in [lo, hi]); *n is its length. Absent and not
   required: *n = 0. */
int jget_i64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, int64_t lo,
                 int64_t hi, int64_t *out, size_t cap, size_t *n);
/* Number array with at most cap entries. Absent and not required: *n = 0. */
int jget_f64_arr(const struct jget_ctx *c, const json_t *obj, const char *key, bool required, double *out,
                 size_t cap, size_t *n);

#endif
