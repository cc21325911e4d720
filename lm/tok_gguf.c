/* tok_gguf.c — builds the tokenizer from a GGUF's tokenizer.ggml.* metadata (spec §11.2: model
   gpt2, pre qwen35, tokens, token_type, merges), for models and for `seer tokenize`, which needs
   only this part of the file. */
#include <stdlib.h>

#include "core/error.h"
#include "core/util.h"
#include "lm/tok_gguf.h"

/* Tokenizer from the GGUF vocabulary arrays (tokenizer.ggml.*, spec §11.2). */
int tok_load_gguf(const gguf *g, tokenizer **out)
{
    const char *model = NULL, *pre = NULL;
    size_t len;
    uint64_t n_tok = 0, n_merge = 0;
    enum gguf_type et;
    int rc;
    if ((rc = gguf_get_str(g, "tokenizer.ggml.model", &model, &len)) ||
        (rc = gguf_get_str(g, "tokenizer.ggml.pre", &pre, &len)) ||
        (rc = gguf_get_arr_info(g, "tokenizer.ggml.tokens", &et, &n_tok)) ||
        (rc = gguf_get_arr_info(g, "tokenizer.ggml.merges", &et, &n_merge)))
        return rc;
    const char **toks = seer_calloc(n_tok, sizeof *toks), **merges = seer_calloc(n_merge, sizeof *merges);
    size_t *tok_lens = seer_calloc(n_tok, sizeof *tok_lens), *merge_lens = seer_calloc(n_merge, sizeof *merge_lens);
    int32_t *types = NULL;
    if (!toks || !merges || !tok_lens || !merge_lens) {
        rc = seer_err(SEER_ENOMEM, "%s: no memory for the vocabulary", gguf_path(g));
        goto done;
    }
    for (uint64_t i = 0; i < n_tok && rc == SEER_OK; i++)
        rc = gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &toks[i], &tok_lens[i]);
    for (uint64_t i = 0; i < n_merge && rc == SEER_OK; i++)
        rc = gguf_get_arr_str(g, "tokenizer.ggml.merges", i, &merges[i], &merge_lens[i]);
    if (rc == SEER_OK && gguf_find_key(g, "tokenizer.ggml.token_type") >= 0) {
        int64_t *t64 = seer_malloc(n_tok * sizeof *t64);
        size_t nt = 0;
        types = seer_malloc(n_tok * sizeof *types);
        if (!t64 || !types)
            rc = seer_err(SEER_ENOMEM, "%s: no memory for token types", gguf_path(g));
        else if ((rc = gguf_get_arr_i64(g, "tokenizer.ggml.token_type", t64, n_tok, &nt)) == SEER_OK && nt != n_tok)
            rc = seer_err(SEER_EFORMAT, "%s: %zu token types for %llu tokens", gguf_path(g), nt,
                          (unsigned long long)n_tok);
        for (size_t i = 0; rc == SEER_OK && i < nt; i++)
            types[i] = (int32_t)t64[i];
        free(t64);
    }
    if (rc == SEER_OK) {
        const tok_gguf_arrays a = {
            .source = gguf_path(g), .model = model, .pre = pre, .n_tokens = n_tok, .tokens = toks,
            .token_lens = tok_lens, .token_types = types, .n_merges = n_merge, .merges = merges,
            .merge_lens = merge_lens,
        };
        rc = tok_load_gguf_arrays(&a, out);
    }
done:
    free(toks), free(merges), free(tok_lens), free(merge_lens), free(types);
    return rc;
}

