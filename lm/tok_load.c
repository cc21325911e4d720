/* tok_load.c — building a tokenizer from a Hugging Face tokenizer.json (jansson) or from GGUF
   vocabulary arrays, and compiling the pre-tokenizer regex with PCRE2 (spec §6.1). Only what the
   C code honours exactly is accepted: NFC or no normaliser, a Split(Regex, Isolated) + ByteLevel
   pre-tokenizer (or ByteLevel with its GPT-2 regex), a byte-level BPE model and decoder, added
   tokens without lstrip/rstrip/single_word. Anything else is refused with SEER_EUNSUPPORTED.

   Divisions: regex · tokenizer.json · GGUF arrays. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/jget.h"
#include "core/utf8.h"
#include "core/util.h"
#include "lm/tok_internal.h"

/* Qwen3.5's tokenizer.json is about 20 MB; a file above this is not a tokenizer we can use. */
#define MAX_TOKENIZER_BYTES ((size_t)256 << 20)

/* ---- regex ----------------------------------------------------------------------------------------- */

/* Spec §6.1: Qwen3.5 adds combining marks \p{M} to the letter run and removes them from the
   symbol run; the Qwen2 regex (also Qwen3's tokenizer.json) lacks both. */
static const char QWEN35_REGEX[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_REGEX[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";
/* HF's ByteLevel pre-tokenizer with use_regex = true (GPT-2). */
static const char GPT2_REGEX[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* Character classes come from PCRE2's Unicode tables (14.0 in PCRE2 10.42): a letter, mark or
   digit assigned in a later Unicode version, which HF's newer Oniguruma knows, can split
   differently (found with U+138E0, Egyptian Hieroglyphs Extended-A, Unicode 16).

   Oniguruma's Unicode \s (what HF's regexes are written for) is U+0009..U+000D, U+0085 and the
   Z categories; PCRE2's with UCP also takes U+180E, which changes how "a\u180e\u180eb" splits. */
#define ONIG_SPACE "\\t-\\r\\x{85}\\p{Z}"

struct strbuf {
    char *p;
    size_t n, cap;
    bool oom;
};

static void sb_put(struct strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (!seer_grow(&b->p, &b->cap, b->n + n + 1, 1, 256)) {
        b->oom = true;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* Rewrites an Oniguruma (Ruby syntax) pattern, as HF's tokenizers compile it, into a PCRE2
   pattern that matches the same strings for the constructs pre-tokenizers use. Constructs whose
   meaning differs and that we do not translate are refused. */
static int translate_regex(const tokenizer *tok, const char *pat, size_t n, struct strbuf *out)
{
    bool in_class = false;
    size_t i;
    for (i = 0; i < n; i++) {
        char c = pat[i];
        if (c == '\\' && i + 1 < n) {
            char d = pat[++i];
            switch (d) {
            case 's': {
                const char *sp = in_class ? ONIG_SPACE : "[" ONIG_SPACE "]";
                sb_put(out, sp, strlen(sp));
                continue;
            }
            case 'S':
                if (in_class)
                    goto refuse;
                sb_put(out, "[^" ONIG_SPACE "]", strlen("[^" ONIG_SPACE "]"));
                continue;
            case 'v': /* Oniguruma: vertical tab; PCRE2: any vertical space */
                sb_put(out, "\\x{0B}", 6);
                continue;
            case 'w': case 'W': case 'b': case 'B': case 'h': case 'H': case 'u': case 'X': case 'R':
            case 'K': case 'G': case 'g': case 'k': case 'N': case 'O': case 'y': case 'Y':
                goto refuse; /* differ between the engines or are not pre-tokenizer material */
            default:
                sb_put(out, pat + i - 1, 2);
                continue;
            }
        }
        if (in_class) {
            if (c == '[' || (c == '&' && i + 1 < n && pat[i + 1] == '&'))
                goto refuse; /* nested classes / intersections: Oniguruma only */
            if (c == ']')
                in_class = false;
            sb_put(out, &c, 1);
            continue;
        }
        if (c == '^' || c == '$')
            goto refuse; /* Oniguruma's Ruby syntax makes these line anchors, PCRE2 subject anchors */
        if (c == '(' && i + 1 < n && pat[i + 1] == '*')
            goto refuse; /* PCRE2 verbs: (*LIMIT_MATCH=1), (*UTF) … would change how the file's
                            pattern runs (limits, options) instead of what it matches */
        if (c == '[') {
            in_class = true;
            sb_put(out, &c, 1);
            /* A ']' right after '[' or '[^' is a literal, not the end of the class. */
            if (i + 1 < n && pat[i + 1] == '^')
                sb_put(out, &pat[++i], 1);
            if (i + 1 < n && pat[i + 1] == ']')
                sb_put(out, &pat[++i], 1);
            continue;
        }
        if (c == '(' && i + 1 < n && pat[i + 1] == '?') {
            /* Groups, lookarounds and (?i: / (?i) mean the same in both; other inline options
               do not (Ruby's (?m) is PCRE2's (?s)), and named groups are not needed. */
            const char *q = pat + i + 2;
            size_t left = n - i - 2;
            bool same = left >= 1 && (q[0] == ':' || q[0] == '=' || q[0] == '!' || q[0] == '>' ||
                                      (left >= 2 && q[0] == '<' && (q[1] == '=' || q[1] == '!')) ||
                                      (left >= 2 && q[0] == 'i' && (q[1] == ':' || q[1] == ')')));
            if (!same)
                goto refuse;
        }
        sb_put(out, &c, 1);
    }
    if (out->oom)
        return seer_err(SEER_ENOMEM, "%s: out of memory translating the pre-tokenizer regex", tok->source);
    return SEER_OK;
refuse:
    return seer_err(SEER_EUNSUPPORTED,
                    "%s: pre_tokenizer Split regex uses a construct seer does not translate from Oniguruma to PCRE2 "
                    "(near byte %zu of '%.*s')",
                    tok->source, i, (int)MIN(n, 200), pat);
}

static int compile_regex(tokenizer *tok, const char *pat, size_t n)
{
    if (n == 0) /* it would match the empty string everywhere: nothing sensible to split by */
        return seer_err(SEER_EUNSUPPORTED, "%s: the pre_tokenizer Split regex is empty", tok->source);
    struct strbuf b = {0};
    int rc = translate_regex(tok, pat, n, &b);
    if (rc) {
        free(b.p);
        return rc;
    }
    int err;
    PCRE2_SIZE eoff;
    tok->re = pcre2_compile((PCRE2_SPTR)b.p, b.n, PCRE2_UTF | PCRE2_UCP, &err, &eoff, NULL);
    free(b.p);
    if (!tok->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        return seer_err(SEER_EUNSUPPORTED, "%s: pre_tokenizer regex does not compile with PCRE2 (%s): '%.*s'",
                        tok->source, (const char *)msg, (int)MIN(n, 200), pat);
    }
    /* JIT is an optimisation: without it (unsupported CPU) pcre2_match gives the same matches. */
    tok->re_jit = pcre2_jit_compile(tok->re, PCRE2_JIT_COMPLETE) == 0;
    return SEER_OK;
}

/* ---- tokenizer.json ----------------------------------------------------------------------------------- */

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* True when key is absent, null, false, "" or 0 — the "off" value of an option. */
static bool j_off(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return !v || json_is_null(v) || json_is_false(v) || (json_is_string(v) && !*json_string_value(v)) ||
           (json_is_number(v) && json_number_value(v) == 0);
}

static int unsupported(const tokenizer *tok, const char *component, const json_t *v)
{
    char *dump = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    int rc = seer_err(SEER_EUNSUPPORTED, "%s: unsupported %s: %.300s", tok->source, component, dump ? dump : "(missing)");
    free(dump);
    return rc;
}

static int load_normalizer(tokenizer *tok, const json_t *n)
{
    if (!n || json_is_null(n))
        return SEER_OK;
    const char *type = jstr(n, "type");
    if (type && !strcmp(type, "NFC")) {
        tok->nfc = true;
        return SEER_OK;
    }
    if (type && !strcmp(type, "Sequence")) {
        const json_t *list = json_object_get(n, "normalizers");
        size_t i;
        const json_t *v;
        if (!json_is_array(list))
            return unsupported(tok, "normalizer", n);
        json_array_foreach(list, i, v) {
            int rc = load_normalizer(tok, v);
            if (rc)
                return rc;
        }
        return SEER_OK;
    }
    return unsupported(tok, "normalizer (only NFC is implemented)", n);
}

/* Accepts [Split(Regex, Isolated)] + ByteLevel(use_regex=false), or ByteLevel(use_regex=true). */
static int load_pre_tokenizer(tokenizer *tok, const json_t *p)
{
    const json_t *items[2];
    size_t n = 0;
    const char *type = p ? jstr(p, "type") : NULL;
    if (type && !strcmp(type, "Sequence")) {
        const json_t *list = json_object_get(p, "pretokenizers");
        if (!json_is_array(list) || json_array_size(list) < 1 || json_array_size(list) > 2)
            return unsupported(tok, "pre_tokenizer sequence", p);
        for (n = 0; n < json_array_size(list); n++)
            items[n] = json_array_get(list, n);
    } else if (type) {
        items[n++] = p;
    } else {
        return unsupported(tok, "pre_tokenizer (a ByteLevel pre-tokenizer is required)", p);
    }
    const json_t *bl = items[n - 1];
    if (!jstr(bl, "type") || strcmp(jstr(bl, "type"), "ByteLevel") || !j_off(bl, "add_prefix_space"))
        return unsupported(tok, "pre_tokenizer (must end with ByteLevel, add_prefix_space=false)", p);
    bool use_regex = !j_off(bl, "use_regex") || !json_object_get(bl, "use_regex"); /* HF default: true */
    if (n == 1) {
        if (!use_regex)
            return unsupported(tok, "pre_tokenizer (ByteLevel without a regex splits nothing)", p);
        return compile_regex(tok, GPT2_REGEX, strlen(GPT2_REGEX));
    }
    const json_t *sp = items[0], *pat = json_object_get(sp, "pattern");
    const char *beh = jstr(sp, "behavior");
    if (use_regex || !jstr(sp, "type") || strcmp(jstr(sp, "type"), "Split") || !beh || strcmp(beh, "Isolated") ||
        !j_off(sp, "invert") || !json_is_string(json_object_get(pat, "Regex")))
        return unsupported(tok, "pre_tokenizer (expected Split with a Regex, behavior Isolated, then ByteLevel "
                                "with use_regex=false)", p);
    const json_t *re = json_object_get(pat, "Regex");
    return compile_regex(tok, json_string_value(re), json_string_length(re));
}

static int load_model(tokenizer *tok, const json_t *m)
{
    const char *type = jstr(m, "type");
    if (!json_is_object(m) || (type && strcmp(type, "BPE")))
        return unsupported(tok, "model type (only byte-level BPE is implemented)", m ? json_object_get(m, "type") : NULL);
    static const char *const off_opts[] = {"dropout", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback"};
    for (size_t k = 0; k < ARRAY_LEN(off_opts); k++)
        if (!j_off(m, off_opts[k])) {
            char what[64];
            snprintf(what, sizeof what, "BPE option model.%s", off_opts[k]);
            return unsupported(tok, what, json_object_get(m, off_opts[k]));
        }
    tok->ignore_merges = !j_off(m, "ignore_merges");

    const json_t *vocab = json_object_get(m, "vocab"), *merges = json_object_get(m, "merges");
    if (!json_is_object(vocab) || !json_is_array(merges))
        return seer_err(SEER_EFORMAT, "%s: model.vocab must be an object and model.merges an array", tok->source);
    const char *key;
    size_t key_len;
    json_t *v;
    json_object_keylen_foreach((json_t *)vocab, key, key_len, v) {
        if (!json_is_integer(v))
            return seer_err(SEER_EFORMAT, "%s: model.vocab['%.*s'] is not an integer", tok->source, (int)MIN(key_len, 64), key);
        json_int_t id = json_integer_value(v);
        if (id < 0 || id > INT32_MAX)
            return seer_err(SEER_EFORMAT, "%s: model.vocab['%.*s'] = %lld is out of range", tok->source,
                            (int)MIN(key_len, 64), key, (long long)id);
        int rc = tok_add_vocab(tok, key, key_len, (int32_t)id);
        if (rc)
            return rc;
    }
    size_t i;
    json_array_foreach(merges, i, v) {
        const char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        if (json_is_string(v)) { /* "left right": HF requires exactly one space */
            const char *s = json_string_value(v), *sp = memchr(s, ' ', json_string_length(v));
            size_t l = json_string_length(v);
            if (sp && !memchr(sp + 1, ' ', l - (size_t)(sp + 1 - s)))
                a = s, al = (size_t)(sp - s), b = sp + 1, bl = l - al - 1;
        } else if (json_is_array(v) && json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
                   json_is_string(json_array_get(v, 1))) {
            a = json_string_value(json_array_get(v, 0)), al = json_string_length(json_array_get(v, 0));
            b = json_string_value(json_array_get(v, 1)), bl = json_string_length(json_array_get(v, 1));
        }
        if (!a)
            return seer_err(SEER_EFORMAT, "%s: model.merges[%zu] is neither \"left right\" nor [left, right]", tok->source, i);
        if (i > UINT32_MAX)
            return seer_err(SEER_EFORMAT, "%s: too many merges", tok->source);
        /* HF collects merges into a HashMap, so a repeated pair ends with its last rank. */
        int rc = tok_add_merge(tok, a, al, b, bl, (uint32_t)i, false);
        if (rc)
            return rc;
    }
    return SEER_OK;
}

static int cmp_json_id(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "id"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "id"));
    return (x > y) - (x < y);
}

/* HF ignores the ids written for added tokens and numbers them itself: in id order, a token whose
   content is in the vocabulary takes that id, any other the next one after the vocabulary and the
   added tokens so far. A file where the two disagree would make HF and us differ, so it is refused. */
static int check_added_ids(tokenizer *tok, const json_t *list, size_t vocab_size)
{
    size_t n = json_array_size(list);
    json_t **sorted = seer_malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return seer_err(SEER_ENOMEM, "%s: out of memory checking added tokens", tok->source);
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(list, i);
    qsort(sorted, n, sizeof *sorted, cmp_json_id);
    int64_t max = -1;
    int rc = SEER_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        const json_t *content = json_object_get(sorted[i], "content");
        int64_t id = json_integer_value(json_object_get(sorted[i], "id"));
        int64_t want = tok_str_find(tok, json_string_value(content), json_string_length(content), true);
        if (want < 0)
            want = max < 0 ? (int64_t)vocab_size : max >= (int64_t)vocab_size || vocab_size == 0 ? max + 1 : (int64_t)vocab_size;
        if (id != want)
            rc = seer_err(SEER_EFORMAT, "%s: added token '%.64s' has id %lld but HF tokenizers would number it %lld",
                          tok->source, json_string_value(content), (long long)id, (long long)want);
        max = MAX(max, want);
    }
    free(sorted);
    return rc;
}

static int load_added(tokenizer *tok, const json_t *list)
{
    if (!list || json_is_null(list))
        return SEER_OK;
    if (!json_is_array(list))
        return seer_err(SEER_EFORMAT, "%s: added_tokens is not an array", tok->source);
    size_t i, vocab_size = tok->n_strs;
    const json_t *a;
    json_array_foreach(list, i, a) {
        const json_t *content = json_object_get(a, "content"), *id = json_object_get(a, "id");
        if (!json_is_string(content) || !json_is_integer(id) || json_integer_value(id) < 0 ||
            json_integer_value(id) > INT32_MAX)
            return seer_err(SEER_EFORMAT, "%s: added_tokens[%zu] needs a string content and an id", tok->source, i);
        if (!j_off(a, "lstrip") || !j_off(a, "rstrip") || !j_off(a, "single_word"))
            return unsupported(tok, "added token option (lstrip, rstrip or single_word)", a);
        /* HF's AddedToken defaults normalized to !special when absent. */
        const json_t *norm = json_object_get(a, "normalized");
        bool special = !j_off(a, "special");
        bool normalized = norm ? json_is_true(norm) : !special;
        int rc = tok_add_added(tok, json_string_value(content), json_string_length(content),
                               (int32_t)json_integer_value(id), special, normalized);
        if (rc)
            return rc;
    }
    return check_added_ids(tok, list, vocab_size);
}

int tok_load_hf_json(const char *path, tokenizer **out)
{
    json_t *root;
    int rc = jget_load_file(path, MAX_TOKENIZER_BYTES, "MAX_TOKENIZER_BYTES in lm/tok_load.c", JSON_ALLOW_NUL, &root);
    if (rc != SEER_OK)
        return rc;
    tokenizer *tok = tok_alloc(path);
    if (!tok) {
        rc = seer_err(SEER_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    tok->added_bytelevel = true; /* HF's decode passes added tokens through the ByteLevel decoder too */
    if (!json_is_object(root)) {
        rc = seer_err(SEER_EFORMAT, "%s: not a tokenizer.json object", path);
        goto fail;
    }
    const json_t *dec = json_object_get(root, "decoder");
    if (!dec || !jstr(dec, "type") || strcmp(jstr(dec, "type"), "ByteLevel")) {
        rc = unsupported(tok, "decoder (only ByteLevel is implemented)", dec);
        goto fail;
    }
    /* post_processor only acts with add_special_tokens (nothing is added: spec §6.1); truncation
       and padding are batch policies, not tokenization. All three are ignored. */
    if ((rc = load_normalizer(tok, json_object_get(root, "normalizer"))) ||
        (rc = load_pre_tokenizer(tok, json_object_get(root, "pre_tokenizer"))) ||
        (rc = load_model(tok, json_object_get(root, "model"))) ||
        (rc = load_added(tok, json_object_get(root, "added_tokens"))) || (rc = tok_finish_tables(tok)))
        goto fail;
    json_decref(root);
    *out = tok;
    return SEER_OK;
fail:
    json_decref(root);
    tok_free(tok);
    return rc;
}

/* ---- GGUF arrays ------------------------------------------------------------------------------------ */

static size_t slen(const char *const *s, const size_t *lens, size_t i) { return lens ? lens[i] : strlen(s[i]); }

int tok_load_gguf_arrays(const tok_gguf_arrays *a, tokenizer **out)
{
    if (!a || !out || (a->n_tokens && !a->tokens) || (a->n_merges && !a->merges))
        return seer_err(SEER_EINVAL, "tok_load_gguf_arrays: NULL argument");
    const char *src = a->source ? a->source : "gguf";
    if (a->model && strcmp(a->model, "gpt2"))
        return seer_err(SEER_EUNSUPPORTED, "%s: tokenizer.ggml.model '%s' is not supported (only gpt2 byte-level BPE)",
                        src, a->model);
    const char *re = !a->pre ? NULL : !strcmp(a->pre, "qwen35") ? QWEN35_REGEX : !strcmp(a->pre, "qwen2") ? QWEN2_REGEX : NULL;
    if (!re)
        return seer_err(SEER_EUNSUPPORTED, "%s: tokenizer.ggml.pre '%s' is not supported (qwen35, qwen2)", src,
                        a->pre ? a->pre : "(missing)");
    if (a->n_tokens > INT32_MAX)
        return seer_err(SEER_EFORMAT, "%s: %zu tokens is too many", src, a->n_tokens);
    tokenizer *tok = tok_alloc(src);
    if (!tok)
        return seer_err(SEER_ENOMEM, "%s: out of memory", src);
    /* Spec §6.1: Qwen3.5 normalises to NFC (HF does; llama.cpp's gpt2 BPE skips it, which only
       matters for decomposed input). */
    tok->nfc = true;
    tok->min_vocab = a->n_tokens;
    int rc = compile_regex(tok, re, strlen(re));
    /* Order as HF builds it: the BPE vocabulary, then merges (which may only name BPE tokens),
       then the added tokens. */
    for (size_t i = 0; !rc && i < a->n_tokens; i++) {
        int32_t t = a->token_types ? a->token_types[i] : TOK_TYPE_NORMAL;
        if (t == TOK_TYPE_NORMAL || t == TOK_TYPE_UNDEFINED)
            rc = tok_add_vocab(tok, a->tokens[i], slen(a->tokens, a->token_lens, i), (int32_t)i);
        else if (t == TOK_TYPE_BYTE)
            rc = seer_err(SEER_EUNSUPPORTED, "%s: token %zu is a BYTE token, which byte-level BPE does not use", src, i);
        else if (t < 0 || t > TOK_TYPE_BYTE)
            rc = seer_err(SEER_EFORMAT, "%s: token %zu has unknown type %d", src, i, (int)t);
    }
    for (size_t i = 0; !rc && i < a->n_merges; i++) {
        const char *m = a->merges[i];
        size_t l = slen(a->merges, a->merge_lens, i);
        /* llama.cpp splits at the first space after the first byte. */
        const char *sp = l > 1 ? memchr(m + 1, ' ', l - 1) : NULL;
        if (!sp)
            rc = seer_err(SEER_EFORMAT, "%s: merge %zu has no space", src, i);
        else if (i > UINT32_MAX)
            rc = seer_err(SEER_EFORMAT, "%s: too many merges", src);
        else /* llama.cpp keeps the first rank of a repeated pair */
            rc = tok_add_merge(tok, m, (size_t)(sp - m), sp + 1, l - (size_t)(sp - m) - 1, (uint32_t)i, true);
    }
    for (size_t i = 0; !rc && i < a->n_tokens; i++) {
        int32_t t = a->token_types ? a->token_types[i] : TOK_TYPE_NORMAL;
        if (t != TOK_TYPE_CONTROL && t != TOK_TYPE_UNKNOWN && t != TOK_TYPE_USER_DEFINED)
            continue;
        size_t l = slen(a->tokens, a->token_lens, i);
        if (utf8_check(a->tokens[i], l) != l)
            rc = seer_err(SEER_EFORMAT, "%s: added token %zu is not valid UTF-8", src, i);
        else
            rc = tok_add_added(tok, a->tokens[i], l, (int32_t)i, t != TOK_TYPE_USER_DEFINED, false);
    }
    if (!rc)
        rc = tok_finish_tables(tok);
    if (rc) {
        tok_free(tok);
        return rc;
    }
    *out = tok;
    return SEER_OK;
}
