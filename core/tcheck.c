/* tcheck.c — see tcheck.h. */
#include "core/tcheck.h"

#include <stdarg.h>
#include <stdio.h>

const char *tcheck_name(struct tcheck *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->name, sizeof c->name, fmt, ap);
    va_end(ap);
    return c->name;
}

void tcheck_want(struct tcheck *c, const char *name, unsigned flags, int rank, const int64_t *shape)
{
    if (c->rc == SEER_OK)
        c->rc = weights_expect(c->w, name, rank, shape, flags, NULL);
}

int tcheck_run(const struct weights *w, const void *cfg, tcheck_table_fn *gguf_table, tcheck_table_fn *hf_table)
{
    struct tcheck c = {.w = w, .rc = SEER_OK};
    if (w->kind == WEIGHTS_GGUF)
        gguf_table(&c, cfg);
    else
        hf_table(&c, cfg);
    return c.rc;
}
