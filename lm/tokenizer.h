/* tokenizer.h — Qwen3.5's byte-level BPE tokenizer (spec §6.1): text → ids and ids → text.
   Loaded from a Hugging Face tokenizer.json (tok_load_hf_json) or from the GGUF vocabulary arrays
   (tok_load_gguf_arrays). Encoding follows HF `tokenizers` exactly (tests/lm/tokenizer.c checks it
   against the real library): added tokens are split out first (leftmost, then longest match), each
   remaining piece is NFC-normalised, split by the pre-tokenizer regex, byte-mapped and merged by
   lowest BPE rank.

   THREADING  A loaded tokenizer is immutable: any number of threads may encode/decode with it at
   once. A tok_stream belongs to one thread.
   OWNERSHIP  tok_free releases a tokenizer; strings passed in are borrowed for the call. */
#ifndef SEER_LM_TOKENIZER_H
#define SEER_LM_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tokenizer tokenizer;

/* GGUF `tokenizer.ggml.token_type` values (llama.cpp's llama_token_type). */
enum tok_type {
    TOK_TYPE_UNDEFINED = 0,
    TOK_TYPE_NORMAL = 1,       /* ordinary BPE vocabulary entry (byte-level string) */
    TOK_TYPE_UNKNOWN = 2,      /* treated like CONTROL */
    TOK_TYPE_CONTROL = 3,      /* special added token: matched in text only with parse_special */
    TOK_TYPE_USER_DEFINED = 4, /* non-special added token: always matched in text */
    TOK_TYPE_UNUSED = 5,       /* padding slot with no token (decodes to nothing) */
    TOK_TYPE_BYTE = 6,         /* <0xNN> byte tokens: not part of a byte-level BPE vocabulary */
};

/* The GGUF vocabulary as plain arrays, so this module does not depend on the GGUF reader.
   Strings are not NUL-terminated when a length array is given (NULL lengths: NUL-terminated).
   As llama.cpp's converter writes them: NORMAL tokens in their byte-level form (spec §6.1),
   CONTROL / USER_DEFINED tokens as raw text, merges as "left right" with rank = index. The
   arrays are only read during the call. */
typedef struct tok_gguf_arrays {
    const char *source;             /* names the file in error messages */
    const char *model;              /* tokenizer.ggml.model: must be "gpt2" (NULL: assume it) */
    const char *pre;                /* tokenizer.ggml.pre: "qwen35" or "qwen2" */
    size_t n_tokens;                /* tokenizer.ggml.tokens: entry i is token id i */
    const char *const *tokens;
    const size_t *token_lens;       /* [n_tokens] or NULL */
    const int32_t *token_types;     /* [n_tokens] tokenizer.ggml.token_type, or NULL (all NORMAL) */
    size_t n_merges;                /* tokenizer.ggml.merges: "left right", rank = index */
    const char *const *merges;
    const size_t *merge_lens;       /* [n_merges] or NULL */
} tok_gguf_arrays;

/* A growable id vector; zero-initialise, release with tok_ids_free. */
typedef struct tok_ids {
    int32_t *ids;
    size_t n, cap;
} tok_ids;

/* Loads tokenizer.json (HF `tokenizers` format). Refuses with SEER_EUNSUPPORTED, naming the file
   and the component, any normalizer / pre-tokenizer / model / decoder / added-token option the C
   code cannot honour exactly; SEER_EFORMAT for malformed files; SEER_EIO if unreadable. */
int tok_load_hf_json(const char *path, tokenizer **out);
/* Builds a tokenizer from GGUF vocabulary arrays (pre "qwen35" → the Qwen3.5 regex of spec §6.1,
   "qwen2" → the Qwen2 regex). Same error rules as tok_load_hf_json. */
int tok_load_gguf_arrays(const tok_gguf_arrays *a, tokenizer **out);
/* Releases a tokenizer; NULL is fine. */
void tok_free(tokenizer *tok);

/* Appends the ids of UTF-8 `text` (len bytes, NULs allowed) to *out. parse_special: special
   added tokens written in the text become their ids (`seer tokenize --special`); otherwise they
   are tokenized as plain text. Non-special added tokens (<think>, <tool_call>) are always matched,
   as HF's AddedVocabulary does. Nothing is prepended or appended (spec §6.1: no BOS).
   SEER_EINVAL for invalid UTF-8 (message gives the byte offset); on failure *out is unchanged. */
int tok_encode(const tokenizer *tok, const char *text, size_t len, bool parse_special, tok_ids *out);
/* tok_encode, except that no special added token matches where it would overlap one of the n_plain
   byte ranges [plain[2k], plain[2k+1]) of text (sorted, not overlapping): there it is plain bytes,
   pre-tokenized with its neighbours as HF does the text between added tokens, so a text without
   added tokens gets the ids tok_encode gives. Non-special added tokens match everywhere, as in HF.
   Used for chat prompts, whose message text must not write the template's markup (api/generate.c). */
int tok_encode_ranges(const tokenizer *tok, const char *text, size_t len, bool parse_special, const size_t *plain,
                      size_t n_plain, tok_ids *out);
void tok_ids_free(tok_ids *v);

/* Decodes ids to UTF-8 text (NUL-terminated; release with seer_free), as HF's decode does:
   token bytes are concatenated and invalid UTF-8 is replaced by U+FFFD, one per maximal invalid
   subpart. skip_special drops special added tokens. Ids with no token (negative, past the
   vocabulary, GGUF padding slots) decode to nothing, as in HF. */
int tok_decode(const tokenizer *tok, const int32_t *ids, size_t n_ids, bool skip_special, char **text,
               size_t *len);

/* Streaming decode for generation: feed ids one at a time and get text that is always complete,
   valid UTF-8. Bytes of a character split across tokens are held until it completes; invalid
   bytes become U+FFFD exactly as tok_decode would, so the concatenated output of every push and
   the final flush equals tok_decode of the whole sequence. */
typedef struct tok_stream {
    const tokenizer *tok;
    bool skip_special;
    unsigned char pend[4]; /* bytes of an incomplete character */
    size_t n_pend;
    char *buf; /* output of the last call */
    size_t cap;
    unsigned char *in; /* pending bytes + the new token's bytes */
    size_t cap_in;
} tok_stream;

void tok_stream_init(tok_stream *s, const tokenizer *tok, bool skip_special);
/* Sets *text and *len to the text that became complete (maybe empty); valid until the next call. */
int tok_stream_push(tok_stream *s, int32_t id, const char **text, size_t *len);
/* Ends the stream: any incomplete character becomes U+FFFD. The stream may then be reused. */
int tok_stream_flush(tok_stream *s, const char **text, size_t *len);
void tok_stream_deinit(tok_stream *s);

/* ---- vocabulary queries ------------------------------------------------------------------ */
/* Ids run 0 .. tok_n_vocab()-1 (some may have no token). */
size_t tok_n_vocab(const tokenizer *tok);
/* The id of an exact token string as written in the vocabulary file (added tokens by content,
   e.g. "<|im_end|>"; BPE tokens in their byte-level form), or -1. */
int32_t tok_token_to_id(const tokenizer *tok, const char *s, size_t len);
/* The bytes id decodes to (not NUL-terminated), or NULL when id has no token. */
const char *tok_piece(const tokenizer *tok, int32_t id, size_t *len);
/* True for special added tokens (skipped by skip_special, matched only with parse_special). */
bool tok_is_special(const tokenizer *tok, int32_t id);

#endif
