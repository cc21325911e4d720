/* json_schema.h — a JSON schema translated into a GBNF grammar (lm/grammar.h) whose every sentence
   is a JSON document the schema accepts. The grammar may accept fewer documents than the schema
   (soundness first): properties are written in the schema's order, only listed properties are
   generated, numbers have at most 15 integer and 15 fraction digits, non-integer bounds are rounded
   inwards, strings longer than 10000 characters are not generated. A keyword the translation
   cannot enforce is refused, never ignored (SEER_EUNSUPPORTED naming the keyword and where it is).

   Supported: type (one or a list), enum, const, properties, required, additionalProperties
   (true/false), items, minItems, maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum
   (number or draft-4 boolean), minLength, maxLength, pattern (a regex subset: literals, classes,
   \d \w \s, ., groups, |, quantifiers; not with minLength/maxLength), anyOf, allOf of one schema,
   $ref to #, #/$defs/NAME or #/definitions/NAME (recursion allowed), annotations (title,
   description, default, examples, $schema, $id, $comment, readOnly, writeOnly, deprecated).
   Refused: oneOf, not, if/then/else, format, multipleOf, uniqueItems: true, contains, prefixItems,
   patternProperties, additionalProperties as a schema, min/maxProperties, dependent*, and every
   keyword not listed above. */
#ifndef SEER_LM_JSON_SCHEMA_H
#define SEER_LM_JSON_SCHEMA_H

#include <stddef.h>

/* schema[len]: the schema's JSON text. *gbnf: NUL-terminated grammar text, released with free().
   SEER_EINVAL for text that is not JSON (with the line and column), SEER_EUNSUPPORTED for a
   feature that cannot be enforced, SEER_ENOMEM. *gbnf untouched on failure. */
int json_schema_to_gbnf(const char *schema, size_t len, char **gbnf);

/* The grammar of any JSON value (what --format json asks for). Static text. */
const char *json_schema_any_value(void);

#endif
