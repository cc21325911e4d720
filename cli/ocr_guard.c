/* ocr_guard.c — the repetition guard of `seer ocr` (cli/ocr.h): stops a page whose text has fallen
   into a loop, the known failure of small VLMs on OCR with greedy decoding. */
#include <string.h>

#include "cli/ocr.h"

void guard_reset(struct guard *g, long repeats, long span)
{
    memset(g, 0, sizeof *g);
    g->repeats = repeats, g->span = span;
}

bool guard_push(struct guard *g, const char *s, size_t len)
{
    for (size_t i = 0; i < len && !g->fired; i++) {
        unsigned char b = (unsigned char)s[i];
        size_t max_p = g->n < GUARD_MAX_PERIOD ? g->n : GUARD_MAX_PERIOD;
        for (size_t p = 1; p <= max_p; p++) {
            g->run[p] = g->last[(g->n - p) % GUARD_MAX_PERIOD] == b ? g->run[p] + 1 : 0;
            size_t periodic = g->run[p] + p;
            if (g->run[p] && periodic >= (size_t)g->span && periodic / p >= (size_t)g->repeats)
                g->fired = true;
        }
        g->last[g->n % GUARD_MAX_PERIOD] = b;
        g->n++;
    }
    return g->fired;
}
