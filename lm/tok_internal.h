/* tok_internal.h — the tokenizer's internal layout, shared by lm/tokenizer.c (encode/decode),
   lm/tok_bpe.c (vocabulary and merge tables, BPE) and lm/tok_load.c (tokenizer.json / GGUF
   loaders, pre-tokenizer regex). Spec §6.1. Not part of any public interface. */
#ifndef SEER_LM_TOK_INTERNAL_H
#define SEER_LM_TOK_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lm/tokenizer.h"

/* What an id is. */
enum tok_kind {
    TOK_KIND_NONE = 0,    /* no token (hole in the id range, GGUF padding) */
    TOK_KIND_BPE = 1,     /* BPE vocabulary entry */
    TOK_KIND_ADDED = 2,   /* non-special added token */
    TOK_KIND_SPECIAL = 3, /* special added token */
};

/* A token string exactly as written in the file, for string → id lookups. */
typedef struct tok_str {
    size_t off;   /* into tokenizer.str_pool */
    uint32_t len;
    int32_t id;
    bool added;   /* an added token's content (merges and BPE never look these up) */
} tok_str;

/* One entry of the merge table: (left id, right id) → (rank, merged id). */
typedef struct tok_merge {
    uint64_t key;  /* left << 32 | right; TOK_MERGE_EMPTY marks a free slot */
    uint32_t rank; /* position in the merges list: lower merges first */
    int32_t new_id;
} tok_merge;
#define TOK_MERGE_EMPTY UINT64_MAX

/* The added tokens' byte trie (tok_finish_tables): node 0 is the root; a node's children are
   trie_edges[edge0 .. edge0 + n_edges), sorted by byte; match[k] is the added token (index into
   added, the lowest of equal contents) whose content ends at the node, for normalized = k, or -1. */
typedef struct tok_trie_node {
    uint32_t edge0, n_edges;
    int32_t match[2];
} tok_trie_node;
typedef struct tok_trie_edge {
    uint32_t child;
    unsigned char byte;
} tok_trie_edge;

/* An added token (split out of the text before BPE, spec §6.1). */
typedef struct tok_added {
    size_t off;      /* content in tokenizer.str_pool (NFC-normalised when `normalized`) */
    uint32_t len;
    int32_t id;
    bool special;    /* matched only with parse_special; dropped by skip_special */
    bool normalized; /* matched against NFC-normalised text instead of the raw text */
} tok_added;

struct tokenizer {
    char *source;               /* file name for messages */

    /* token strings → ids: entries plus an open-addressing index (entry + 1, 0 = empty) */
    char *str_pool;
    size_t str_pool_len, str_pool_cap;
    tok_str *strs;
    size_t n_strs, cap_strs;
    uint32_t *str_index;
    size_t str_mask;
    uint64_t hash_key[2];       /* keyed hash (core/strtab.h): vocabularies are hostile input */

    /* merges: open-addressing table keyed by the id pair */
    tok_merge *merges;
    size_t merge_mask, n_merges;

    int32_t byte_id[256];       /* id of each single byte's byte-level token */

    /* per id, built by tok_finish */
    size_t n_vocab;             /* 1 + the largest id, at least min_vocab */
    size_t min_vocab;           /* GGUF: the token array's length, padding slots included */
    uint8_t *kind;              /* [n_vocab] enum tok_kind */
    size_t *piece_off;          /* [n_vocab + 1] decoded bytes of id i: piece_pool[off[i], off[i+1]) */
    char *piece_pool;

    /* added tokens, and their trie: finding the longest one at a text position walks as many
       bytes as it has, whatever their number (a list per first byte was O(tokens) per position) */
    tok_added *added;
    size_t n_added, cap_added;
    uint64_t *added_ids;        /* bit set of the ids taken by added tokens (duplicate check in O(1)) */
    size_t added_ids_words;
    tok_trie_node *trie;        /* NULL when there are no added tokens */
    tok_trie_edge *trie_edges;

    /* pre-tokenizer and normaliser */
    pcre2_code *re;
    bool re_jit;                /* JIT compiled: use pcre2_jit_match */
    bool nfc;
    bool ignore_merges;         /* HF BPE option: a whole word found in the vocabulary is one token */
    bool added_bytelevel;       /* added tokens decode through the byte-level map (HF) or raw (GGUF) */
};

/* ---- building (lm/tok_bpe.c) ---------------------------------------------------------------- */
tokenizer *tok_alloc(const char *source);
/* Adds a BPE vocabulary string; SEER_EFORMAT if the string is already present. */
int tok_add_vocab(tokenizer *tok, const char *s, size_t len, int32_t id);
/* Adds merge "left right" with the given rank. keep_first: a repeated pair keeps its first rank
   (llama.cpp) rather than its last (HF's HashMap insert). */
int tok_add_merge(tokenizer *tok, const char *left, size_t left_len, const char *right, size_t right_len,
                  uint32_t rank, bool keep_first);
/* Adds an added token (content raw, as in the file). */
int tok_add_added(tokenizer *tok, const char *content, size_t len, int32_t id, bool special, bool normalized);
/* Finishes the per-id tables and the added-token index (after all adds). */
int tok_finish_tables(tokenizer *tok);
/* Looks a string up; bpe_only skips added-token contents. -1 when absent. */
int32_t tok_str_find(const tokenizer *tok, const char *s, size_t len, bool bpe_only);
/* The byte-level string (GPT-2 byte → code point map, spec §6.1) of n bytes into out
   (room for 2n bytes); returns its length. */
size_t tok_bytelevel_encode(const unsigned char *b, size_t n, char *out);
/* NFC-normalises s[0..n) into a new seer_malloc'ed buffer (*out, *out_len); SEER_ENOMEM or
   SEER_EINVAL from utf8proc. */
int tok_nfc(const char *s, size_t n, char **out, size_t *out_len);

/* ---- BPE (lm/tok_bpe.c) ----------------------------------------------------------------------- */
/* Reusable scratch for tok_bpe_word. Zero-initialise; release with tok_bpe_scratch_free. */
typedef struct tok_bpe_scratch {
    struct tok_sym *syms;
    size_t cap_syms;
    struct tok_heap_ent *heap; /* candidate merges, a min-heap by (rank, position) */
    size_t cap_heap;
    char *tmp; /* a word's byte-level string (ignore_merges lookups) */
    size_t cap_tmp;
} tok_bpe_scratch;

/* Appends the ids of one pre-tokenized word (raw bytes, n ≥ 1) to out. */
int tok_bpe_word(const tokenizer *tok, const unsigned char *w, size_t n, tok_bpe_scratch *sc, tok_ids *out);
void tok_bpe_scratch_free(tok_bpe_scratch *sc);
/* Makes room for `more` ids in v. */
int tok_ids_reserve(tok_ids *v, size_t more);

#endif
