/* json_schema_text.c — the grammar text a schema translation writes (a growing buffer whose
   out-of-memory is sticky, GBNF string literals) and its first refusal; shared by
   lm/json_schema.c and lm/json_schema_regex.c, below both. */
#include "lm/json_schema_text.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/util.h"

void js_printf(struct sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || b->oom || !seer_grow(&b->s, &b->cap, b->n + (size_t)k + 1, 1, 256)) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* Appends bytes[n] as a GBNF string literal. */
void js_lit(struct sb *b, const char *bytes, size_t n)
{
    js_printf(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (c == '"' || c == '\\')
            js_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            js_printf(b, "\\x%02X", c);
        else
            js_printf(b, "%c", c);
    }
    js_printf(b, "\" ");
}

int js_refuse(struct js *j, const char *path, const char *what)
{
    if (!j->rc)
        j->rc = seer_err(SEER_EUNSUPPORTED, "the JSON schema at %s: %s", path, what);
    return j->rc;
}
