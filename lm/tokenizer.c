/* tokenizer.c — encoding and decoding with a loaded tokenizer (spec §6.1), in HF `tokenizers`
   order: added tokens are split out of the raw text (leftmost, then longest), each remaining piece
   is NFC-normalised, normalized added tokens are split out of that, the rest is cut by the
   pre-tokenizer regex and each piece goes through BPE (lm/tok_bpe.c). Decoding concatenates token
   bytes and replaces invalid UTF-8 the way Rust's String::from_utf8_lossy does; the streaming
   decoder gives the same text incrementally. Loading lives in lm/tok_load.c.

   Divisions: word cache · encoding · lossy UTF-8 · decoding · streaming · queries. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strtab.h"
#include "core/utf8.h"
#include "core/util.h"
#include "lm/tok_internal.h"

/* ---- word cache ---------------------------------------------------------------------------------
   Text repeats words, so each encode call remembers the ids of short pre-tokens. The cache lives
   in the call, not in the tokenizer, which keeps a loaded tokenizer immutable and thread-safe. */

#define CACHE_MAX_WORD 64         /* longer pieces are rare and cheap to merge again */
#define CACHE_MAX_ENTRIES (1 << 18) /* bounds memory on huge inputs; later words just miss */

struct cache_entry {
    size_t key_off; /* word bytes in cache.keys */
    size_t ids_off; /* ids in cache.ids */
    uint32_t key_len, n_ids;
};

struct word_cache {
    const uint64_t *key; /* the tokenizer's random hash key: crafted words cannot be made to collide
                            (a keyless hash let a text of colliding words make encoding quadratic) */
    uint32_t *index; /* entry + 1, 0 = empty; open addressing */
    size_t mask;
    struct cache_entry *e;
    size_t n, cap;
    char *keys;
    size_t keys_len, keys_cap;
    tok_ids ids;
};

/* Returns the entry for word w, or NULL. */
static const struct cache_entry *cache_get(const struct word_cache *c, const unsigned char *w, size_t n, uint64_t h)
{
    if (!c->index)
        return NULL;
    for (size_t i = h & c->mask;; i = (i + 1) & c->mask) {
        uint32_t k = c->index[i];
        if (!k)
            return NULL;
        const struct cache_entry *e = &c->e[k - 1];
        if (e->key_len == n && !memcmp(c->keys + e->key_off, w, n))
            return e;
    }
}

/* Remembers ids[0..n_ids) for word w. Failing to cache is not an error: the word was encoded. */
static void cache_put(struct word_cache *c, const unsigned char *w, size_t n, uint64_t h, const int32_t *ids,
                      size_t n_ids)
{
    if (c->n >= CACHE_MAX_ENTRIES)
        return;
    if (!c->index || (c->n + 1) * 2 > c->mask + 1) {
        size_t cap = c->index ? (c->mask + 1) * 2 : 4096;
        uint32_t *idx = seer_calloc(cap, sizeof *idx);
        if (!idx)
            return;
        free(c->index);
        c->index = idx;
        c->mask = cap - 1;
        for (size_t k = 0; k < c->n; k++) {
            const struct cache_entry *e = &c->e[k];
            size_t i = strtab_hash(c->key, c->keys + e->key_off, e->key_len) & c->mask;
            while (c->index[i])
                i = (i + 1) & c->mask;
            c->index[i] = (uint32_t)k + 1;
        }
    }
    if (!seer_grow(&c->e, &c->cap, c->n + 1, sizeof *c->e, 256) ||
        !seer_grow(&c->keys, &c->keys_cap, c->keys_len + n, 1, 256) || tok_ids_reserve(&c->ids, n_ids)) {
        seer_err_clear();
        return;
    }
    struct cache_entry *e = &c->e[c->n];
    *e = (struct cache_entry){c->keys_len, c->ids.n, (uint32_t)n, (uint32_t)n_ids};
    memcpy(c->keys + c->keys_len, w, n);
    c->keys_len += n;
    memcpy(c->ids.ids + c->ids.n, ids, n_ids * sizeof *ids);
    c->ids.n += n_ids;
    size_t i = h & c->mask;
    while (c->index[i])
        i = (i + 1) & c->mask;
    c->index[i] = (uint32_t)++c->n;
}

static void cache_free(struct word_cache *c)
{
    free(c->index);
    free(c->e);
    free(c->keys);
    tok_ids_free(&c->ids);
}

/* ---- encoding ------------------------------------------------------------------------------------ */

struct enc {
    const tokenizer *tok;
    bool parse_special;
    const char *text;     /* the whole text (tok_encode_ranges) */
    const size_t *plain;  /* [2·n_plain] sorted [start, end) byte ranges where no added token matches */
    size_t n_plain;
    bool seg_plain;       /* the segment being encoded overlaps a plain range */
    tok_ids *out;
    tok_bpe_scratch bpe;
    struct word_cache cache;
    pcre2_match_data *md;
};

static int encode_word(struct enc *e, const unsigned char *w, size_t n)
{
    if (n == 0)
        return SEER_OK;
    if (n > CACHE_MAX_WORD)
        return tok_bpe_word(e->tok, w, n, &e->bpe, e->out);
    uint64_t h = strtab_hash(e->cache.key, w, n);
    const struct cache_entry *ce = cache_get(&e->cache, w, n, h);
    if (ce) {
        int rc = tok_ids_reserve(e->out, ce->n_ids);
        if (rc)
            return rc;
        memcpy(e->out->ids + e->out->n, e->cache.ids.ids + ce->ids_off, ce->n_ids * sizeof(int32_t));
        e->out->n += ce->n_ids;
        return SEER_OK;
    }
    size_t start = e->out->n;
    int rc = tok_bpe_word(e->tok, w, n, &e->bpe, e->out);
    if (!rc)
        cache_put(&e->cache, w, n, h, e->out->ids + start, e->out->n - start);
    return rc;
}

/* Pre-tokenizer: HF's Split with behaviour "Isolated" — every regex match is a piece, and so is
   any text between matches (the Qwen regexes leave none, spec §6.1). */
static int pretokenize(struct enc *e, const char *s, size_t n)
{
    const tokenizer *tok = e->tok;
    const unsigned char *u = (const unsigned char *)s;
    size_t gap = 0, search = 0;
    while (search < n) {
        int r = tok->re_jit ? pcre2_jit_match(tok->re, u, n, search, PCRE2_NO_UTF_CHECK, e->md, NULL)
                            : pcre2_match(tok->re, u, n, search, PCRE2_NO_UTF_CHECK, e->md, NULL);
        if (r == PCRE2_ERROR_NOMATCH)
            break;
        if (r < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(r, msg, sizeof msg);
            return seer_err(SEER_EINVAL, "%s: pre-tokenizer regex failed at byte %zu: %s", tok->source, search,
                            (const char *)msg);
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(e->md);
        size_t st = ov[0], en = ov[1];
        int rc = encode_word(e, u + gap, st - gap);
        if (rc)
            return rc;
        if (en == st) { /* an empty match only cuts the text; step one character to move on */
            uint32_t cp;
            size_t l = st < n ? utf8_decode(u + st, n - st, &cp) : 1;
            gap = st;
            search = st + (l ? l : 1);
            continue;
        }
        if ((rc = encode_word(e, u + st, en - st)))
            return rc;
        gap = search = en;
    }
    return encode_word(e, u + gap, n - gap);
}

typedef int (*text_fn)(struct enc *e, const char *s, size_t n);

/* Whether [at, at+n) of the whole text overlaps a plain range: binary search for the first range
   ending after `at`. */
static bool overlaps_plain(const struct enc *e, size_t at, size_t n)
{
    size_t lo = 0, hi = e->n_plain;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->plain[2 * mid + 1] <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->n_plain && e->plain[2 * lo] < at + n;
}

/* The longest added token of one kind that s[0..n) starts with, or NULL: one step down the trie
   per byte (a binary search among the node's children), so at most the longest token's length. */
static const tok_added *added_at(const tokenizer *tok, const char *s, size_t n, bool normalized)
{
    const tok_added *best = NULL;
    uint32_t v = 0;
    for (size_t i = 0; tok->trie && i < n; i++) {
        const tok_trie_node *nd = &tok->trie[v];
        const unsigned char b = (unsigned char)s[i];
        uint32_t lo = nd->edge0, hi = nd->edge0 + nd->n_edges;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (tok->trie_edges[mid].byte < b)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nd->edge0 + nd->n_edges || tok->trie_edges[lo].byte != b)
            break;
        v = tok->trie_edges[lo].child;
        if (tok->trie[v].match[normalized] >= 0)
            best = &tok->added[tok->trie[v].match[normalized]];
    }
    return best;
}

/* Splits s by the added tokens of one kind (normalized or not), passing the text between them to
   on_text. Matching is leftmost-longest like HF's AddedVocabulary (aho-corasick LeftmostLongest).
   Without parse_special a special token's match is kept as plain text and the scan resumes after
   it, which is what HF does with encode_special_tokens = true. */
static int split_added(struct enc *e, const char *s, size_t n, bool normalized, text_fn on_text)
{
    const tokenizer *tok = e->tok;
    size_t text_start = 0, p = 0;
    while (p < n) {
        const tok_added *hit = added_at(tok, s + p, n - p, normalized);
        if (!hit) {
            p++;
            continue;
        }
        /* Inside message text a special token (<|im_end|>, <|im_start|>, <|vision_start|>) is plain
           bytes, so a message cannot write the template's markup; a non-special one (<think>,
           <tool_call>) is vocabulary like any word and matches as HF's apply_chat_template matches it
           in the rendered text (spec §6.1). A special match may still start where the text ends. */
        if (hit->special && e->n_plain &&
            (normalized ? e->seg_plain : overlaps_plain(e, (size_t)(s + p - e->text), hit->len))) {
            p++;
            continue;
        }
        if (hit->special && !e->parse_special) {
            p += hit->len;
            continue;
        }
        if (e->n_plain && !normalized)
            e->seg_plain = overlaps_plain(e, (size_t)(s + text_start - e->text), p - text_start);
        int rc = on_text(e, s + text_start, p - text_start);
        if (!rc)
            rc = tok_ids_reserve(e->out, 1);
        if (rc)
            return rc;
        e->out->ids[e->out->n++] = hit->id;
        p += hit->len;
        text_start = p;
    }
    if (e->n_plain && !normalized)
        e->seg_plain = overlaps_plain(e, (size_t)(s + text_start - e->text), n - text_start);
    return on_text(e, s + text_start, n - text_start);
}

static bool has_normalized_added(const tokenizer *tok)
{
    for (size_t i = 0; i < tok->n_added; i++)
        if (tok->added[i].normalized)
            return true;
    return false;
}

/* One piece of raw text between non-normalized added tokens: NFC, then normalized added tokens,
   then the pre-tokenizer. */
static int encode_segment(struct enc *e, const char *s, size_t n)
{
    if (n == 0)
        return SEER_OK;
    char *norm = NULL;
    if (e->tok->nfc) {
        size_t i = 0;
        while (i < n && (unsigned char)s[i] < 0x80)
            i++;
        if (i < n) { /* ASCII is already NFC */
            int rc = tok_nfc(s, n, &norm, &n);
            if (rc)
                return rc;
            s = norm;
        }
    }
    int rc = has_normalized_added(e->tok) ? split_added(e, s, n, true, pretokenize) : pretokenize(e, s, n);
    free(norm);
    return rc;
}

int tok_encode(const tokenizer *tok, const char *text, size_t len, bool parse_special, tok_ids *out)
{
    return tok_encode_ranges(tok, text, len, parse_special, NULL, 0, out);
}

int tok_encode_ranges(const tokenizer *tok, const char *text, size_t len, bool parse_special, const size_t *plain,
                      size_t n_plain, tok_ids *out)
{
    if (!tok || !out || (!text && len) || (n_plain && !plain))
        return seer_err(SEER_EINVAL, "tok_encode: NULL argument");
    size_t bad = utf8_check(text, len);
    if (bad < len)
        return seer_err(SEER_EINVAL, "tokenizer: the text is not valid UTF-8 (byte %zu of %zu)", bad, len);
    /* Ids go to a vector of our own and reach *out only on success: a failure part way (PCRE2's
       match limit, out of memory) must leave the caller's vector exactly as it was, not grown. */
    tok_ids ids = {0};
    struct enc e = {.tok = tok, .parse_special = parse_special, .text = text, .plain = plain, .n_plain = n_plain,
                    .out = &ids, .cache = {.key = tok->hash_key}};
    int rc = SEER_OK;
    if (len) {
        e.md = pcre2_match_data_create_from_pattern(tok->re, NULL);
        rc = e.md ? split_added(&e, text, len, false, encode_segment)
                  : seer_err(SEER_ENOMEM, "tokenizer: out of memory for regex match data");
    }
    pcre2_match_data_free(e.md);
    tok_bpe_scratch_free(&e.bpe);
    cache_free(&e.cache);
    if (!rc && !out->ids) {
        *out = ids; /* the common case, an empty vector: hand ours over */
        return SEER_OK;
    }
    if (!rc && (rc = tok_ids_reserve(out, ids.n)) == SEER_OK) {
        if (ids.n)
            memcpy(out->ids + out->n, ids.ids, ids.n * sizeof *ids.ids);
        out->n += ids.n;
    }
    tok_ids_free(&ids);
    return rc;
}

void tok_ids_free(tok_ids *v)
{
    if (!v)
        return;
    free(v->ids);
    *v = (tok_ids){0};
}

/* ---- lossy UTF-8 --------------------------------------------------------------------------------
   Invalid bytes become U+FFFD, one per maximal subpart of an ill-formed sequence (Unicode §3.9,
   the rule Rust's from_utf8_lossy follows, so HF's decode and ours agree byte for byte). */

static const char REPLACEMENT[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Converts b[0..n) into out (room for 3n bytes). With hold, a trailing sequence that is valid so
   far but incomplete is not converted; returns how many bytes of b were consumed. */
static size_t utf8_lossy(const unsigned char *b, size_t n, char *out, size_t *out_len, bool hold)
{
    size_t i = 0, o = *out_len;
    while (i < n) {
        size_t len;
        uint32_t cp;
        size_t k = utf8_subpart(b + i, n - i, &len, &cp);
        if (len && k == len) {
            memcpy(out + o, b + i, len);
            o += len;
        } else if (len && i + k == n && hold) {
            break; /* the rest may complete with the next token */
        } else {
            memcpy(out + o, REPLACEMENT, 3);
            o += 3;
        }
        i += k;
    }
    *out_len = o;
    return i;
}

/* ---- decoding ------------------------------------------------------------------------------------- */

static const char *piece(const tokenizer *tok, int32_t id, bool skip_special, size_t *len)
{
    if (id < 0 || (size_t)id >= tok->n_vocab || tok->kind[id] == TOK_KIND_NONE ||
        (skip_special && tok->kind[id] == TOK_KIND_SPECIAL)) {
        *len = 0;
        return NULL;
    }
    *len = tok->piece_off[id + 1] - tok->piece_off[id];
    return tok->piece_pool + tok->piece_off[id];
}

int tok_decode(const tokenizer *tok, const int32_t *ids, size_t n_ids, bool skip_special, char **text, size_t *len)
{
    if (!tok || !text || (!ids && n_ids))
        return seer_err(SEER_EINVAL, "tok_decode: NULL argument");
    size_t total = 0, l;
    for (size_t i = 0; i < n_ids; i++) {
        piece(tok, ids[i], skip_special, &l);
        if (!size_add(total, l, &total))
            return seer_err(SEER_ENOMEM, "tok_decode: text too long");
    }
    size_t cap;
    unsigned char *raw = seer_malloc(total);
    char *res = size_mul(total, 3, &cap) && size_add(cap, 1, &cap) ? seer_malloc(cap) : NULL;
    if (!raw || !res) {
        free(raw);
        free(res);
        return seer_err(SEER_ENOMEM, "tok_decode: out of memory for %zu bytes", total);
    }
    size_t o = 0;
    for (size_t i = 0; i < n_ids; i++) {
        const char *p = piece(tok, ids[i], skip_special, &l);
        if (l)
            memcpy(raw + o, p, l);
        o += l;
    }
    size_t out_len = 0;
    utf8_lossy(raw, total, res, &out_len, false);
    free(raw);
    res[out_len] = 0;
    *text = res;
    if (len)
        *len = out_len;
    return SEER_OK;
}

/* ---- streaming ------------------------------------------------------------------------------------- */

void tok_stream_init(tok_stream *s, const tokenizer *tok, bool skip_special)
{
    *s = (tok_stream){.tok = tok, .skip_special = skip_special};
}

/* Converts the pending bytes plus p[0..l), holding back an incomplete tail unless flushing. */
static int stream_emit(tok_stream *s, const char *p, size_t l, bool flush, const char **text, size_t *len)
{
    size_t n, cap;
    if (!size_add(s->n_pend, l, &n) || !size_mul(n, 3, &cap) || !size_add(cap, 1, &cap))
        return seer_err(SEER_ENOMEM, "tok_stream: token too long");
    if (!seer_grow(&s->in, &s->cap_in, n ? n : 1, 1, 256) || !seer_grow(&s->buf, &s->cap, cap, 1, 256))
        return seer_err(SEER_ENOMEM, "tok_stream: out of memory");
    memcpy(s->in, s->pend, s->n_pend);
    if (l)
        memcpy(s->in + s->n_pend, p, l);
    size_t o = 0, used = utf8_lossy(s->in, n, s->buf, &o, !flush);
    /* A held tail is a valid prefix of one character, so at most 3 bytes. */
    ASSERT1(n - used <= 3);
    s->n_pend = n - used;
    memcpy(s->pend, s->in + used, s->n_pend);
    s->buf[o] = 0;
    *text = s->buf;
    *len = o;
    return SEER_OK;
}

int tok_stream_push(tok_stream *s, int32_t id, const char **text, size_t *len)
{
    size_t l;
    const char *p = piece(s->tok, id, s->skip_special, &l);
    return stream_emit(s, p, l, false, text, len);
}

int tok_stream_flush(tok_stream *s, const char **text, size_t *len)
{
    return stream_emit(s, NULL, 0, true, text, len);
}

void tok_stream_deinit(tok_stream *s)
{
    if (!s)
        return;
    free(s->buf);
    free(s->in);
    *s = (tok_stream){0};
}

/* ---- queries ---------------------------------------------------------------------------------------- */

size_t tok_n_vocab(const tokenizer *tok) { return tok->n_vocab; }

int32_t tok_token_to_id(const tokenizer *tok, const char *s, size_t len) { return tok_str_find(tok, s, len, false); }

const char *tok_piece(const tokenizer *tok, int32_t id, size_t *len)
{
    size_t l;
    const char *p = piece(tok, id, false, &l);
    if (len)
        *len = l;
    return p;
}

bool tok_is_special(const tokenizer *tok, int32_t id)
{
    return id >= 0 && (size_t)id < tok->n_vocab && tok->kind[id] == TOK_KIND_SPECIAL;
}

void tok_free(tokenizer *tok)
{
    if (!tok)
        return;
    pcre2_code_free(tok->re);
    free(tok->source);
    free(tok->str_pool);
    free(tok->strs);
    free(tok->str_index);
    free(tok->merges);
    free(tok->kind);
    free(tok->piece_off);
    free(tok->piece_pool);
    free(tok->added);
    free(tok->trie);
    free(tok->trie_edges);
    free(tok->added_ids);
    free(tok);
}
