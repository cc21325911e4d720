/* tok_gguf.h — the tokenizer of a GGUF model file (lm/tok_gguf.c). */
#ifndef SEER_LM_TOK_GGUF_H
#define SEER_LM_TOK_GGUF_H

#include "core/gguf.h"
#include "lm/tokenizer.h"

/* Errors name the file: a missing tokenizer.ggml.* key, a malformed array, or what
   tok_load_gguf_arrays refuses. */
int tok_load_gguf(const gguf *g, tokenizer **out);

#endif
