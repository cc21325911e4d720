/* fuzz_tokenizer.c — libFuzzer target: a tokenizer.json, optionally followed by "\n#TEXT#\n" and
   a text. Loads it (tok_load_hf_json), encodes the text (or a fixed one) with and without special
   tokens, decodes the ids whole and streamed (their concatenation must equal the whole decode,
   as the header promises), and decodes ids taken from the raw bytes, out-of-range ones too. */
#include "fuzz_util.h"

#include "lm/tokenizer.h"

static void decode_both(const tokenizer *tok, const int32_t *ids, size_t n)
{
    char *whole = NULL;
    size_t len = 0, got = 0;
    if (tok_decode(tok, ids, n, false, &whole, &len) != SEER_OK) {
        seer_err_clear();
        return;
    }
    tok_stream s;
    tok_stream_init(&s, tok, false);
    const char *piece;
    size_t pl;
    bool same = true;
    for (size_t i = 0; i <= n; i++) {
        if ((i < n ? tok_stream_push(&s, ids[i], &piece, &pl) : tok_stream_flush(&s, &piece, &pl)) != SEER_OK) {
            same = false; /* only out of memory can fail, and libFuzzer's limit is far above this */
            break;
        }
        same = same && got + pl <= len && !memcmp(whole + got, piece, pl);
        got += pl;
    }
    tok_stream_deinit(&s);
    if (!same || got != len)
        abort();
    seer_free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    const uint8_t *json, *text;
    size_t n_json, n_text;
    fz_split(data, size, "\n#TEXT#\n", &json, &n_json, &text, &n_text);
    tokenizer *tok = NULL;
    int rc = tok_load_hf_json(fz_file(0, json, n_json), &tok);
    fz_check_message(rc);
    if (rc != SEER_OK)
        return 0;
    static const char fixed[] = "Hello <|im_start|>wörld  123\n\n<think>x</think> e\xcc\x81";
    const char *t = n_text ? (const char *)text : fixed;
    size_t tl = n_text ? n_text : sizeof fixed - 1;
    for (int special = 0; special < 2; special++) {
        tok_ids ids = {0};
        rc = tok_encode(tok, t, tl, special, &ids);
        fz_check_message(rc);
        if (rc == SEER_OK) {
            for (size_t i = 0; i < ids.n; i++)
                if (ids.ids[i] < 0 || (size_t)ids.ids[i] >= tok_n_vocab(tok))
                    abort(); /* encode only produces ids of the vocabulary */
            decode_both(tok, ids.ids, ids.n);
        } else if (ids.ids || ids.n) {
            abort(); /* "on failure *out is unchanged" */
        }
        tok_ids_free(&ids);
    }
    int32_t raw[64];
    size_t n_raw = MIN(tl / 4, (size_t)64);
    memcpy(raw, t, n_raw * 4);
    decode_both(tok, raw, n_raw);
    tok_free(tok);
    return 0;
}
