/* tokens.c — the tokenizer's pieces and its UTF-8 rule in the public API (seer.h "tokens and
   pages"), so a front end lists tokens and checks text with the library's own code, not a copy. */
#include <stddef.h>
#include <stdint.h>

#include "api/internal.h"
#include "core/utf8.h"
#include "lm/tokenizer.h"

const char *seer_token_piece(const seer_model *m, int32_t id, size_t *len)
{
    size_t l = 0;
    const char *p = m ? tok_piece(m->tok, id, &l) : NULL;
    if (len)
        *len = l;
    return p;
}

size_t seer_utf8_check(const char *text, size_t len) { return text ? utf8_check(text, len) : 0; }
