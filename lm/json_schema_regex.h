/* json_schema_regex.h — a JSON schema's `pattern` as a grammar expression (lm/json_schema_regex.c). */
#ifndef SEER_LM_JSON_SCHEMA_REGEX_H
#define SEER_LM_JSON_SCHEMA_REGEX_H

#include "lm/json_schema_text.h"

/* Appends the expression of a JSON string (quotes included) matching `pattern` (lm/json_schema_regex.c);
   a refusal goes to j->rc. */
void js_pattern(struct js *j, const char *path, const char *pattern, struct sb *e);

#endif
