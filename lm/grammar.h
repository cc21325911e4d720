/* grammar.h — constrained sampling: llama.cpp's GBNF grammars compiled to a byte-level pushdown
   matcher (lm/grammar.c), and a token-level matcher that turns the grammar's state into a mask of
   the vocabulary ids that may come next (lm/grammar_match.c). JSON schemas are translated into GBNF
   by lm/json_schema.c.

   GBNF subset (the one llama.cpp users write): `name ::= alternatives` rules (root is `root`),
   `|` alternatives, sequences, ( groups ), `*` `+` `?` `{m}` `{m,}` `{m,n}`, string literals and
   [character classes] with ranges and ^ negation, escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH
   \UHHHHHHHH, `.` (any character), `#` comments. A rule may continue on the next line; it ends
   where the next `name ::=` starts. Characters are Unicode code points matched as their UTF-8
   bytes, so every accepted output is valid UTF-8. Left recursion, references to undefined rules
   and rules that can never finish are refused (SEER_EINVAL, naming the rule).

   Token-level matching: the vocabulary's byte strings are put in a trie once (grammar_vocab); the
   mask for a state walks the trie together with the grammar, pruning every subtree whose prefix
   the grammar rejects, and is cached per state (a JSON string's interior is one state however long
   the string grows). States are interned sets of interned parse stacks, and byte transitions
   between them are cached, so a walk costs one table lookup per trie node it visits. A state may
   hold at most 1024 live parses: a grammar ambiguous enough to exceed that fails there (SEER_EINVAL)
   rather than doubling its work at every byte.

   THREADING  A grammar and a grammar_vocab are immutable after creation and may be shared; a
   matcher belongs to one generation stream. */
#ifndef SEER_LM_GRAMMAR_H
#define SEER_LM_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct grammar grammar;

/* Parses GBNF text[len] (need not be NUL-terminated). `source` names it in errors ("--grammar
   FILE", "the JSON schema"). SEER_EINVAL with a message naming source, line and the problem;
   SEER_ENOMEM. *out untouched on failure. */
int grammar_parse(const char *text, size_t len, const char *source, grammar **out);
void grammar_free(grammar *g); /* NULL is fine */

/* The vocabulary as byte strings: pieces[i] (lens[i] bytes) is what id i decodes to; NULL for ids
   the grammar must never pick (special tokens, padding). Copies what it needs. */
typedef struct grammar_vocab grammar_vocab;
int grammar_vocab_create(const char *const *pieces, const size_t *lens, size_t n, grammar_vocab **out);
void grammar_vocab_free(grammar_vocab *v);
size_t grammar_vocab_nodes(const grammar_vocab *v); /* trie nodes (for the benchmark) */

typedef struct grammar_matcher grammar_matcher;

/* A matcher at the start of g's root rule. v may be NULL for a byte-only matcher (no masks).
   end_ids[n_end]: the end-of-turn ids, allowed exactly when the output so far is complete. The
   matcher borrows g and v: free it first. */
int grammar_matcher_create(const grammar *g, const grammar_vocab *v, const int32_t *end_ids, size_t n_end,
                           grammar_matcher **out);
void grammar_matcher_free(grammar_matcher *m);

/* The ids that may come next as a bitset (bit i of word i/32), valid until the next call on m:
   tokens whose bytes the grammar can take from here, and the end ids when the output is complete.
   When nothing can follow the complete output, only the end ids are set. SEER_EINVAL when no id
   at all is allowed (a grammar no token of this vocabulary can continue). */
int grammar_matcher_mask(grammar_matcher *m, const uint32_t **mask);
/* Advances past token id (an end id marks the matcher done). SEER_EINVAL when the grammar does not
   allow it here (the state is then unchanged). */
int grammar_matcher_accept(grammar_matcher *m, int32_t id);
/* Advances past bytes[len]; SEER_EINVAL (state unchanged) when the grammar rejects them. */
int grammar_matcher_accept_bytes(grammar_matcher *m, const char *bytes, size_t len);
/* Whether bytes[len] could come next, without advancing (a per-string check, for tests). */
bool grammar_matcher_allows_bytes(grammar_matcher *m, const char *bytes, size_t len);
/* The output so far is a complete sentence of the grammar. */
bool grammar_matcher_complete(const grammar_matcher *m);
/* Complete, and no byte can follow: only an end id may come next. */
bool grammar_matcher_finished(const grammar_matcher *m);
/* Mask computations answered from the per-state cache vs walked (for the benchmark). */
void grammar_matcher_stats(const grammar_matcher *m, size_t *hits, size_t *walks, size_t *states);

/* ---- internal form, shared by grammar.c (builds it) and grammar_match.c (runs it) ---------- */
enum { GE_END = 0, GE_BYTES = 1, GE_REF = 2 };

typedef struct grammar_elem {
    int32_t type; /* GE_END (closes an alternative), GE_BYTES (one byte of set v), GE_REF (rule v) */
    int32_t v;
} grammar_elem;

struct grammar {
    grammar_elem *el;  /* [n_el] every alternative's elements, each alternative closed by GE_END */
    size_t n_el;
    int32_t *alt;      /* [n_alt] index in el where alternative a starts */
    size_t n_alt;
    int32_t *rule_alt; /* [n_rule + 1] rule r's alternatives are alt[rule_alt[r] .. rule_alt[r+1]) */
    size_t n_rule;
    uint32_t (*set)[8]; /* [n_set] 256-bit byte sets */
    size_t n_set;
    int32_t root;
};

#endif
