/* tok_bpe.c — the tokenizer's tables and byte-pair merging (spec §6.1): the GPT-2 byte ↔ code
   point map, the string → id and (left, right) → merge hash tables, per-id decode pieces, NFC via
   utf8proc, and BPE over one word by lowest merge rank with a heap (the order HF's
   BPE::merge_all uses, so ties and stale entries resolve identically).

   Divisions: byte-level map · string table · merge table · building · NFC · BPE. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/error.h"
#include "core/strtab.h"
#include "core/utf8.h"
#include "core/util.h"
#include "lm/tok_internal.h"

/* Ids above this are refused: a hostile file must not make us allocate per-id tables of 2^31
   entries. Qwen3.5 uses 248320 (spec §6.1). */
#define TOK_MAX_ID (1 << 24)

/* ---- byte-level map ---------------------------------------------------------------------------
   GPT-2's bytes_to_unicode: printable Latin-1 bytes (33..126, 161..172, 174..255) stand for
   themselves; the other 68 bytes (0..32, 127..160, 173) take code points 256.. in byte order. */

static bool byte_printable(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

static uint32_t byte_to_cp(unsigned b)
{
    if (byte_printable(b))
        return b;
    if (b <= 32)
        return 256 + b;
    if (b <= 160)
        return 256 + 33 + (b - 127);
    return 256 + 67; /* 173, the soft hyphen */
}

/* The byte a code point stands for, or -1 when it is not in the map. */
static int cp_to_byte(uint32_t cp)
{
    if (cp < 256)
        return byte_printable(cp) ? (int)cp : -1;
    if (cp < 256 + 33)
        return (int)(cp - 256);
    if (cp < 256 + 67)
        return (int)(cp - 256 - 33 + 127);
    if (cp == 256 + 67)
        return 173;
    return -1;
}

size_t tok_bytelevel_encode(const unsigned char *b, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += utf8_encode(byte_to_cp(b[i]), out + o);
    return o;
}

/* HF's ByteLevel decoder, per token: if every character is in the map the token stands for those
   bytes, otherwise for its own UTF-8 text. Writes at most n bytes; returns the length. */
static size_t bytelevel_decode(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_decode(u + i, n - i, &cp);
        int b = l ? cp_to_byte(cp) : -1;
        if (b < 0) {
            memcpy(out, s, n);
            return n;
        }
        out[o++] = (char)b;
        i += l;
    }
    return o;
}

/* ---- string table ------------------------------------------------------------------------------ */

int32_t tok_str_find(const tokenizer *tok, const char *s, size_t len, bool bpe_only)
{
    if (!tok->str_index)
        return -1;
    for (size_t i = strtab_hash(tok->hash_key, s, len) & tok->str_mask;; i = (i + 1) & tok->str_mask) {
        uint32_t e = tok->str_index[i];
        if (!e)
            return -1;
        const tok_str *t = &tok->strs[e - 1];
        if (t->len == len && !memcmp(tok->str_pool + t->off, s, len)) {
            if (bpe_only && t->added)
                continue;
            return t->id;
        }
    }
}

static void str_index_put(tokenizer *tok, uint32_t entry)
{
    const tok_str *t = &tok->strs[entry - 1];
    size_t i = strtab_hash(tok->hash_key, tok->str_pool + t->off, t->len) & tok->str_mask;
    while (tok->str_index[i])
        i = (i + 1) & tok->str_mask;
    tok->str_index[i] = entry;
}

/* Keeps the index at most half full, so probes stay short. */
static int str_index_grow(tokenizer *tok)
{
    size_t need;
    if (!size_mul(tok->n_strs + 1, 2, &need))
        return seer_err(SEER_ENOMEM, "%s: too many tokens", tok->source);
    if (tok->str_index && need <= tok->str_mask + 1)
        return SEER_OK;
    size_t cap = 1024;
    while (cap < need)
        cap *= 2;
    uint32_t *idx = seer_calloc(cap, sizeof *idx);
    if (!idx)
        return seer_err(SEER_ENOMEM, "%s: out of memory for the token index", tok->source);
    free(tok->str_index);
    tok->str_index = idx;
    tok->str_mask = cap - 1;
    for (size_t e = 1; e <= tok->n_strs; e++)
        str_index_put(tok, (uint32_t)e);
    return SEER_OK;
}

/* Appends bytes to the string pool; *off receives their position. */
static int pool_append(tokenizer *tok, const char *s, size_t len, size_t *off)
{
    size_t need;
    if (!size_add(tok->str_pool_len, len, &need))
        return seer_err(SEER_ENOMEM, "%s: token strings too large", tok->source);
    /* Allocated on the first call even for an empty string: lookups compute str_pool + off, and
       NULL + 0 is undefined too (an empty first vocabulary string reached both). */
    if (!seer_grow(&tok->str_pool, &tok->str_pool_cap, MAX(need, 1), 1, 1 << 16))
        return seer_err(SEER_ENOMEM, "%s: out of memory for token strings", tok->source);
    memcpy(tok->str_pool + tok->str_pool_len, s, len);
    *off = tok->str_pool_len;
    tok->str_pool_len = need;
    return SEER_OK;
}

static int str_add(tokenizer *tok, const char *s, size_t len, int32_t id, bool added)
{
    if (len > UINT32_MAX)
        return seer_err(SEER_EFORMAT, "%s: token %d is %zu bytes long", tok->source, (int)id, len);
    if (tok->n_strs >= UINT32_MAX - 1)
        return seer_err(SEER_ENOMEM, "%s: too many tokens", tok->source);
    if (!seer_grow(&tok->strs, &tok->cap_strs, tok->n_strs + 1, sizeof *tok->strs, 4096))
        return seer_err(SEER_ENOMEM, "%s: out of memory for tokens", tok->source);
    int rc = str_index_grow(tok);
    if (rc)
        return rc;
    tok_str t = {.len = (uint32_t)len, .id = id, .added = added};
    if ((rc = pool_append(tok, s, len, &t.off)))
        return rc;
    tok->strs[tok->n_strs++] = t;
    str_index_put(tok, (uint32_t)tok->n_strs);
    return SEER_OK;
}

/* ---- merge table --------------------------------------------------------------------------------- */

/* Multiply-shift with a random odd multiplier (Dietzfelbinger et al.): the top bits of the product
   pick the slot. Merges and their ids come from the file, and a fixed multiplier would let a file
   choose id pairs that all land in one run of slots; a random one makes that a matter of luck. */
static size_t merge_slot(const tokenizer *tok, uint64_t key)
{
    unsigned bits = (unsigned)__builtin_popcountll((unsigned long long)tok->merge_mask); /* table ≥ 4096 slots */
    return (size_t)(((key ^ tok->hash_key[1]) * (tok->hash_key[0] | 1)) >> (64 - bits));
}

static inline const tok_merge *merge_find(const tokenizer *tok, int32_t left, int32_t right)
{
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    if (!tok->merges)
        return NULL;
    for (size_t i = merge_slot(tok, key);; i = (i + 1) & tok->merge_mask) {
        const tok_merge *m = &tok->merges[i];
        if (m->key == key)
            return m;
        if (m->key == TOK_MERGE_EMPTY)
            return NULL;
    }
}

static tok_merge *merge_slot_for(tokenizer *tok, uint64_t key)
{
    size_t i = merge_slot(tok, key);
    while (tok->merges[i].key != TOK_MERGE_EMPTY && tok->merges[i].key != key)
        i = (i + 1) & tok->merge_mask;
    return &tok->merges[i];
}

static int merge_grow(tokenizer *tok)
{
    size_t need;
    if (!size_mul(tok->n_merges + 1, 2, &need))
        return seer_err(SEER_ENOMEM, "%s: too many merges", tok->source);
    if (tok->merges && need <= tok->merge_mask + 1)
        return SEER_OK;
    size_t cap = 4096, bytes;
    while (cap < need)
        cap *= 2;
    if (!size_mul(cap, sizeof(tok_merge), &bytes))
        return seer_err(SEER_ENOMEM, "%s: too many merges", tok->source);
    tok_merge *t = seer_malloc(bytes);
    if (!t)
        return seer_err(SEER_ENOMEM, "%s: out of memory for the merge table", tok->source);
    for (size_t i = 0; i < cap; i++)
        t[i].key = TOK_MERGE_EMPTY;
    tok_merge *old = tok->merges;
    size_t old_cap = old ? tok->merge_mask + 1 : 0;
    tok->merges = t;
    tok->merge_mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key != TOK_MERGE_EMPTY)
            *merge_slot_for(tok, old[i].key) = old[i];
    free(old);
    return SEER_OK;
}

/* ---- building ------------------------------------------------------------------------------------ */

tokenizer *tok_alloc(const char *source)
{
    tokenizer *tok = seer_calloc(1, sizeof *tok);
    if (!tok)
        return NULL;
    tok->source = seer_strdup(source ? source : "tokenizer");
    if (!tok->source) {
        free(tok);
        return NULL;
    }
    for (int b = 0; b < 256; b++)
        tok->byte_id[b] = -1;
    strtab_new_key(tok->hash_key);
    return tok;
}

static int check_id(const tokenizer *tok, int64_t id, const char *s, size_t len)
{
    if (id < 0 || id >= TOK_MAX_ID)
        return seer_err(SEER_EFORMAT, "%s: token '%.*s' has id %lld, outside 0..%d", tok->source,
                        (int)MIN(len, 64), s, (long long)id, TOK_MAX_ID - 1);
    return SEER_OK;
}

int tok_add_vocab(tokenizer *tok, const char *s, size_t len, int32_t id)
{
    int rc = check_id(tok, id, s, len);
    if (rc)
        return rc;
    if (tok_str_find(tok, s, len, false) >= 0)
        return seer_err(SEER_EFORMAT, "%s: token '%.*s' appears twice in the vocabulary", tok->source,
                        (int)MIN(len, 64), s);
    return str_add(tok, s, len, id, false);
}

int tok_add_merge(tokenizer *tok, const char *left, size_t left_len, const char *right, size_t right_len,
                  uint32_t rank, bool keep_first)
{
    int32_t l = tok_str_find(tok, left, left_len, true), r = tok_str_find(tok, right, right_len, true);
    if (l < 0 || r < 0)
        return seer_err(SEER_EFORMAT, "%s: merge %u ('%.*s' '%.*s') uses a token missing from the vocabulary",
                        tok->source, rank, (int)MIN(left_len, 64), left, (int)MIN(right_len, 64), right);
    char stackbuf[512], *cat = stackbuf;
    size_t n;
    if (!size_add(left_len, right_len, &n))
        return seer_err(SEER_EFORMAT, "%s: merge %u is too long", tok->source, rank);
    if (n > sizeof stackbuf && !(cat = seer_malloc(n)))
        return seer_err(SEER_ENOMEM, "%s: out of memory reading merges", tok->source);
    memcpy(cat, left, left_len);
    memcpy(cat + left_len, right, right_len);
    int32_t id = tok_str_find(tok, cat, n, true);
    if (cat != stackbuf)
        free(cat);
    if (id < 0)
        return seer_err(SEER_EFORMAT, "%s: merge %u ('%.*s' '%.*s') makes a token missing from the vocabulary",
                        tok->source, rank, (int)MIN(left_len, 64), left, (int)MIN(right_len, 64), right);
    int rc = merge_grow(tok);
    if (rc)
        return rc;
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    tok_merge *m = merge_slot_for(tok, key);
    if (m->key == key) {
        if (!keep_first)
            m->rank = rank;
        return SEER_OK;
    }
    *m = (tok_merge){.key = key, .rank = rank, .new_id = id};
    tok->n_merges++;
    return SEER_OK;
}

/* Marks id as taken by an added token; SEER_EFORMAT when it already was. A bit set rather than
   a scan of the earlier added tokens, which made 80,000 of them a quadratic load. Ids are below
   TOK_MAX_ID (checked first), so the set stays under 2 MiB. */
static int added_id_take(tokenizer *tok, int32_t id)
{
    size_t w = (size_t)id / 64;
    size_t had = tok->added_ids_words;
    if (!seer_grow(&tok->added_ids, &tok->added_ids_words, w + 1, sizeof *tok->added_ids, 64))
        return seer_err(SEER_ENOMEM, "%s: out of memory for added tokens", tok->source);
    memset(tok->added_ids + had, 0, (tok->added_ids_words - had) * sizeof *tok->added_ids);
    uint64_t bit = (uint64_t)1 << (id % 64);
    if (tok->added_ids[w] & bit)
        return seer_err(SEER_EFORMAT, "%s: two added tokens have id %d", tok->source, (int)id);
    tok->added_ids[w] |= bit;
    return SEER_OK;
}

int tok_add_added(tokenizer *tok, const char *content, size_t len, int32_t id, bool special, bool normalized)
{
    int rc = check_id(tok, id, content, len);
    if (rc)
        return rc;
    if (len == 0 || len > UINT32_MAX)
        return seer_err(SEER_EFORMAT, "%s: added token %d has an empty or oversized content", tok->source, (int)id);
    /* An added token may repeat a vocabulary entry with the same id (the file lists it twice);
       anything else would make one string or one id mean two things. */
    int32_t have = tok_str_find(tok, content, len, false);
    bool in_vocab = have >= 0 && tok_str_find(tok, content, len, true) == have;
    if (have >= 0 && (have != id || !in_vocab))
        return seer_err(SEER_EFORMAT, "%s: added token '%.*s' (id %d) clashes with token id %d", tok->source,
                        (int)MIN(len, 64), content, (int)id, (int)have);
    if ((rc = added_id_take(tok, id)))
        return rc;
    if (!in_vocab && (rc = str_add(tok, content, len, id, true)))
        return rc;
    if (tok->n_added >= UINT32_MAX)
        return seer_err(SEER_ENOMEM, "%s: too many added tokens", tok->source);
    if (!seer_grow(&tok->added, &tok->cap_added, tok->n_added + 1, sizeof *tok->added, 64))
        return seer_err(SEER_ENOMEM, "%s: out of memory for added tokens", tok->source);
    /* HF matches a normalized added token against normalised text, so its pattern is its own
       content normalised the same way. */
    tok_added a = {.id = id, .special = special, .normalized = normalized};
    char *norm = NULL;
    size_t nlen = len;
    if (normalized && tok->nfc && (rc = tok_nfc(content, len, &norm, &nlen)))
        return rc;
    rc = pool_append(tok, norm ? norm : content, nlen, &a.off);
    free(norm);
    if (rc)
        return rc;
    if (nlen == 0 || nlen > UINT32_MAX)
        return seer_err(SEER_EFORMAT, "%s: added token %d normalises to nothing", tok->source, (int)id);
    a.len = (uint32_t)nlen;
    tok->added[tok->n_added++] = a;
    return SEER_OK;
}

/* Sort key for the added-token index: first byte, then longest first, so the first hit in a
   bucket is the longest match (HF's leftmost-longest matching). */
/* Added tokens in the order the trie is built from: by content, a prefix before its extensions, equal
   contents by index (the first one wins a match, as in the list it replaces). */
struct added_key {
    const char *s;
    uint32_t len, idx;
};

static int cmp_added(const void *a, const void *b)
{
    const struct added_key *x = a, *y = b;
    int c = memcmp(x->s, y->s, MIN(x->len, y->len));
    if (c || x->len != y->len)
        return c ? c : x->len < y->len ? -1 : 1;
    return x->idx < y->idx ? -1 : 1;
}

/* Builds the trie breadth first from the sorted tokens: a node's tokens are one contiguous range,
   those ending at its depth first, the rest grouped by their next byte into its children, so each
   node's edges are appended together and come out sorted. Linear in the tokens' total length. */
static int build_added_trie(tokenizer *tok)
{
    size_t total = 1;
    for (size_t i = 0; i < tok->n_added; i++)
        total += tok->added[i].len;
    if (total > UINT32_MAX / 2)
        return seer_err(SEER_EFORMAT, "%s: added tokens of %zu bytes in all: more than this reader takes", tok->source,
                        total);
    struct added_key *key = seer_malloc(tok->n_added * sizeof *key);
    uint32_t(*range)[3] = seer_malloc(total * sizeof *range); /* per node: first token, end, depth */
    tok->trie = seer_malloc(total * sizeof *tok->trie);
    tok->trie_edges = seer_malloc(total * sizeof *tok->trie_edges);
    if (!key || !range || !tok->trie || !tok->trie_edges) {
        free(key);
        free(range);
        return seer_err(SEER_ENOMEM, "%s: out of memory for the added tokens' index", tok->source);
    }
    for (size_t i = 0; i < tok->n_added; i++)
        key[i] = (struct added_key){tok->str_pool + tok->added[i].off, tok->added[i].len, (uint32_t)i};
    qsort(key, tok->n_added, sizeof *key, cmp_added);
    uint32_t n_nodes = 1, n_edges = 0;
    range[0][0] = 0, range[0][1] = (uint32_t)tok->n_added, range[0][2] = 0;
    for (uint32_t v = 0; v < n_nodes; v++) {
        uint32_t i = range[v][0];
        const uint32_t hi = range[v][1], depth = range[v][2];
        tok_trie_node *nd = &tok->trie[v];
        nd->match[0] = nd->match[1] = -1;
        for (; i < hi && key[i].len == depth; i++) { /* empty contents (depth 0) never match */
            const bool k = tok->added[key[i].idx].normalized;
            if (depth > 0 && nd->match[k] < 0)
                nd->match[k] = (int32_t)key[i].idx;
        }
        nd->edge0 = n_edges;
        while (i < hi) {
            const unsigned char b = (unsigned char)key[i].s[depth];
            uint32_t j = i + 1;
            while (j < hi && (unsigned char)key[j].s[depth] == b)
                j++;
            range[n_nodes][0] = i, range[n_nodes][1] = j, range[n_nodes][2] = depth + 1;
            tok->trie_edges[n_edges++] = (tok_trie_edge){n_nodes++, b};
            i = j;
        }
        nd->n_edges = n_edges - nd->edge0;
    }
    free(key);
    free(range);
    return SEER_OK;
}

int tok_finish_tables(tokenizer *tok)
{
    int rc = SEER_OK;
    int64_t *src = NULL; /* per id: index into strs of its BPE string, or -1 */

    size_t n = 0;
    for (size_t i = 0; i < tok->n_strs; i++)
        n = MAX(n, (size_t)tok->strs[i].id + 1);
    if (n == 0)
        return seer_err(SEER_EFORMAT, "%s: the vocabulary is empty", tok->source);
    n = MAX(n, tok->min_vocab);
    tok->n_vocab = n;
    if (!(src = seer_malloc(n * sizeof *src)) || !(tok->kind = seer_calloc(n, 1)) ||
        !(tok->piece_off = seer_malloc((n + 1) * sizeof *tok->piece_off))) {
        rc = seer_err(SEER_ENOMEM, "%s: out of memory for the vocabulary", tok->source);
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        src[i] = -1;
    for (size_t i = 0; i < tok->n_strs; i++) {
        const tok_str *t = &tok->strs[i];
        if (src[t->id] >= 0) {
            rc = seer_err(SEER_EFORMAT, "%s: id %d is used by two tokens ('%.*s' and '%.*s')", tok->source,
                          (int)t->id, (int)MIN(t->len, 64u), tok->str_pool + t->off,
                          (int)MIN(tok->strs[src[t->id]].len, 64u), tok->str_pool + tok->strs[src[t->id]].off);
            goto fail;
        }
        src[t->id] = (int64_t)i;
        tok->kind[t->id] = TOK_KIND_BPE;
    }
    for (size_t i = 0; i < tok->n_added; i++)
        tok->kind[tok->added[i].id] = tok->added[i].special ? TOK_KIND_SPECIAL : TOK_KIND_ADDED;

    /* Decoded pieces: never longer than the string they come from. */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (src[i] >= 0)
            total += tok->strs[src[i]].len;
    if (!(tok->piece_pool = seer_malloc(total))) {
        rc = seer_err(SEER_ENOMEM, "%s: out of memory for token pieces", tok->source);
        goto fail;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        tok->piece_off[i] = off;
        if (src[i] < 0)
            continue;
        const tok_str *t = &tok->strs[src[i]];
        const char *s = tok->str_pool + t->off;
        if (tok->kind[i] == TOK_KIND_BPE || tok->added_bytelevel) {
            off += bytelevel_decode(s, t->len, tok->piece_pool + off);
        } else {
            memcpy(tok->piece_pool + off, s, t->len);
            off += t->len;
        }
    }
    tok->piece_off[n] = off;

    for (int b = 0; b < 256; b++) {
        unsigned char byte = (unsigned char)b;
        char s[4];
        size_t l = tok_bytelevel_encode(&byte, 1, s);
        tok->byte_id[b] = tok_str_find(tok, s, l, true);
        if (tok->byte_id[b] < 0) {
            rc = seer_err(SEER_EFORMAT, "%s: the vocabulary has no token for byte 0x%02x ('%.*s'); byte-level BPE needs all 256",
                          tok->source, b, (int)l, s);
            goto fail;
        }
    }

    if (tok->n_added)
        rc = build_added_trie(tok);
fail:
    free(src);
    return rc;
}

/* ---- NFC ----------------------------------------------------------------------------------------- */

int tok_nfc(const char *s, size_t n, char **out, size_t *out_len)
{
    /* STABLE|COMPOSE is utf8proc's NFC (utf8proc_NFC without NULLTERM, so NULs pass through). */
    const utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    if (n > (size_t)PTRDIFF_MAX / 8)
        return seer_err(SEER_EINVAL, "tokenizer: text of %zu bytes is too long to normalise", n);
    utf8proc_ssize_t m = utf8proc_decompose((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, NULL, 0, opt);
    if (m < 0)
        return seer_err(SEER_EINVAL, "tokenizer: NFC normalisation failed: %s", utf8proc_errmsg(m));
    size_t bytes;
    if (!size_mul((size_t)m + 1, sizeof(utf8proc_int32_t), &bytes))
        return seer_err(SEER_ENOMEM, "tokenizer: text too long to normalise");
    utf8proc_int32_t *buf = seer_malloc(bytes);
    if (!buf)
        return seer_err(SEER_ENOMEM, "tokenizer: out of memory normalising %zu bytes", n);
    utf8proc_ssize_t m2 = utf8proc_decompose((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, buf, m, opt);
    utf8proc_ssize_t r = m2 == m ? utf8proc_reencode(buf, m2, opt) : -1;
    if (r < 0) {
        free(buf);
        return seer_err(SEER_EINVAL, "tokenizer: NFC normalisation failed: %s",
                        r == -1 ? "length changed" : utf8proc_errmsg(r));
    }
    *out = (char *)buf;
    *out_len = (size_t)r;
    return SEER_OK;
}

/* ---- BPE ------------------------------------------------------------------------------------------- */

struct tok_sym {
    int32_t id;
    int32_t prev, next; /* neighbours among live symbols, -1 at the ends */
    uint32_t len;       /* 0 once merged into its left neighbour */
};

struct tok_heap_ent {
    uint64_t key; /* rank << 32 | position of the left symbol */
    int32_t new_id;
};

static void heap_push(struct tok_heap_ent *h, size_t *n, struct tok_heap_ent e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= e.key)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static struct tok_heap_ent heap_pop(struct tok_heap_ent *h, size_t *n)
{
    struct tok_heap_ent top = h[0], last = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && h[c + 1].key < h[c].key)
            c++;
        if (last.key <= h[c].key)
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = last;
    return top;
}

int tok_ids_reserve(tok_ids *v, size_t more)
{
    size_t need;
    if (!size_add(v->n, more, &need))
        return seer_err(SEER_ENOMEM, "tokenizer: too many ids");
    if (!seer_grow(&v->ids, &v->cap, need, sizeof *v->ids, 64))
        return seer_err(SEER_ENOMEM, "tokenizer: out of memory for %zu ids", need);
    return SEER_OK;
}

static int scratch_reserve(tok_bpe_scratch *sc, size_t n)
{
    size_t heap_n;
    if (n > INT32_MAX || !size_mul(n, 3, &heap_n))
        return seer_err(SEER_EINVAL, "tokenizer: a pre-token of %zu bytes is too long", n);
    if (n > sc->cap_syms) {
        struct tok_sym *p = seer_realloc(sc->syms, n * sizeof *p);
        if (!p)
            return seer_err(SEER_ENOMEM, "tokenizer: out of memory for a %zu-byte word", n);
        sc->syms = p;
        sc->cap_syms = n;
    }
    /* Each merge pushes at most two new pairs, so n − 1 initial pairs grow to under 3n. */
    if (heap_n > sc->cap_heap) {
        struct tok_heap_ent *p = seer_realloc(sc->heap, heap_n * sizeof *p);
        if (!p)
            return seer_err(SEER_ENOMEM, "tokenizer: out of memory for a %zu-byte word", n);
        sc->heap = p;
        sc->cap_heap = heap_n;
    }
    return SEER_OK;
}

static void push_pair(const tokenizer *tok, const struct tok_sym *s, int32_t pos, struct tok_heap_ent *h, size_t *nh)
{
    const tok_merge *m = merge_find(tok, s[pos].id, s[s[pos].next].id);
    if (m)
        heap_push(h, nh, (struct tok_heap_ent){(uint64_t)m->rank << 32 | (uint32_t)pos, m->new_id});
}

int tok_bpe_word(const tokenizer *tok, const unsigned char *w, size_t n, tok_bpe_scratch *sc, tok_ids *out)
{
    ASSERT1(n >= 1);
    int rc = tok_ids_reserve(out, n);
    if (rc)
        return rc;
    if (n == 1) {
        out->ids[out->n++] = tok->byte_id[w[0]];
        return SEER_OK;
    }
    if (tok->ignore_merges) {
        size_t need;
        if (!size_mul(n, 2, &need))
            return seer_err(SEER_EINVAL, "tokenizer: a pre-token of %zu bytes is too long", n);
        if (need > sc->cap_tmp) {
            char *p = seer_realloc(sc->tmp, need);
            if (!p)
                return seer_err(SEER_ENOMEM, "tokenizer: out of memory for a %zu-byte word", n);
            sc->tmp = p;
            sc->cap_tmp = need;
        }
        int32_t id = tok_str_find(tok, sc->tmp, tok_bytelevel_encode(w, n, sc->tmp), true);
        if (id >= 0) {
            out->ids[out->n++] = id;
            return SEER_OK;
        }
    }
    if ((rc = scratch_reserve(sc, n)))
        return rc;
    struct tok_sym *s = sc->syms;
    struct tok_heap_ent *h = sc->heap;
    size_t nh = 0;
    for (size_t i = 0; i < n; i++)
        s[i] = (struct tok_sym){tok->byte_id[w[i]], (int32_t)i - 1, i + 1 < n ? (int32_t)i + 1 : -1, 1};
    for (size_t i = 0; i + 1 < n; i++)
        push_pair(tok, s, (int32_t)i, h, &nh);
    while (nh) {
        struct tok_heap_ent e = heap_pop(h, &nh);
        int32_t pos = (int32_t)(uint32_t)e.key;
        if (s[pos].len == 0 || s[pos].next < 0)
            continue;
        int32_t nx = s[pos].next;
        /* Stale entry: the pair here changed since it was pushed. Like HF, compare only the merged
           id, so a different pair that merges to the same token is taken at the old rank. */
        const tok_merge *m = merge_find(tok, s[pos].id, s[nx].id);
        if (!m || m->new_id != e.new_id)
            continue;
        s[pos].id = e.new_id;
        s[pos].len += s[nx].len;
        s[pos].next = s[nx].next;
        s[nx].len = 0;
        if (s[pos].next >= 0)
            s[s[pos].next].prev = pos;
        if (s[pos].prev >= 0)
            push_pair(tok, s, s[pos].prev, h, &nh);
        if (s[pos].next >= 0)
            push_pair(tok, s, pos, h, &nh);
    }
    for (int32_t i = 0; i >= 0; i = s[i].next)
        out->ids[out->n++] = s[i].id;
    return SEER_OK;
}

void tok_bpe_scratch_free(tok_bpe_scratch *sc)
{
    free(sc->syms);
    free(sc->heap);
    free(sc->tmp);
    *sc = (tok_bpe_scratch){0};
}
