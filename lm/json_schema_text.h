/* json_schema_text.h — what lm/json_schema.c (schemas, numbers) and lm/json_schema_regex.c
   (patterns) share: the grammar text being written and the translation's state. Its functions
   (lm/json_schema_text.c) sit below both, so the two call each other only one way. */
#ifndef SEER_LM_JSON_SCHEMA_TEXT_H
#define SEER_LM_JSON_SCHEMA_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define MAX_DEPTH 64
#define MAX_LEN 10000 /* longest string / array generated (grammar repetition cap) */

/* A growing text; oom is sticky (checked once at the end). */
struct sb {
    char *s;
    size_t n, cap;
    bool oom;
};

/* The translation: rules written so far, the document (for $ref), the first error. */
struct js {
    struct sb out;          /* the rules */
    json_t *doc;            /* the whole schema, for $ref */
    int n_rule, depth;
    struct {
        const json_t *schema;
        int rule;
    } refs[256];            /* $ref targets already given a rule */
    size_t n_refs;
    int rc;                 /* the first error */
};

void js_printf(struct sb *b, const char *fmt, ...) SEER_PRINTF(2, 3);
/* Appends bytes[n] as a GBNF string literal. */
void js_lit(struct sb *b, const char *bytes, size_t n);
/* Records SEER_EUNSUPPORTED "the JSON schema at PATH: WHAT" as j's first error; returns it. */
int js_refuse(struct js *j, const char *path, const char *what);

#endif
