/* grammar_match.c — running a compiled grammar (grammar.h) byte by byte and token by token.

   A parse stack is a list of element positions (top: the byte element to match next; below it,
   where to continue when the rule on top finishes), as in llama.cpp's grammar engine. Stacks are
   hash-consed into nodes (position, parent) so equal stacks are one id, and the matcher's state is
   the sorted set of every stack still alive (the grammar is ambiguous in general), interned too.
   A byte moves a state to another state; those transitions are cached per state, and so is each
   state's token mask. The vocabulary trie is walked in preorder with skip links: a rejected byte
   skips its whole subtree, so a mask costs one cached lookup per trie node whose prefix the grammar
   still accepts, and nothing for a state seen before.
   Divisions: vocabulary trie · interning · transitions · matcher. */
#include "lm/grammar.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"

#define MAX_NODES (1 << 24)   /* parse-stack nodes one matcher may create */
#define MAX_SETS (1 << 20)    /* states one matcher may create */
#define MAX_CACHED_MASKS 512  /* per matcher: 512 × 31 KiB for Qwen's vocabulary */
#define MAX_ALIVE 1024        /* parse stacks one state may hold: an ambiguous grammar (x ::= x? x? …
                                 or `.` overlapping every rule) can double them at every byte */
#define T_UNKNOWN (-2)        /* transition not computed yet */
#define T_DEAD (-1)           /* the byte is rejected */

/* ---- vocabulary trie -------------------------------------------------------------------------- */

struct grammar_vocab {
    size_t n_ids;
    size_t n_nodes;
    uint8_t *byte;     /* [n_nodes] the byte that leads to the node */
    uint16_t *depth;   /* [n_nodes] its depth (1 = a first byte) */
    int32_t *skip;     /* [n_nodes] the first node after its subtree */
    int32_t *tok;      /* [n_nodes] index in ids_sorted of the first token spelled exactly here, or −1 */
    int32_t *tok_n;    /* [n_nodes] how many tokens are spelled exactly here */
    int32_t *ids_sorted; /* token ids by byte string */
    int max_depth;
    char *pool;        /* the pieces, for accepting a token */
    size_t *off;       /* [n_ids] offset in pool */
    uint32_t *len;     /* [n_ids] length; UINT32_MAX for ids never allowed */
};

struct piece {
    const char *s;
    uint32_t len;
    int32_t id;
};

static int cmp_piece(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c)
        return c;
    return x->len != y->len ? (x->len < y->len ? -1 : 1) : (x->id > y->id) - (x->id < y->id);
}

void grammar_vocab_free(grammar_vocab *v)
{
    if (!v)
        return;
    free(v->byte), free(v->depth), free(v->skip), free(v->tok), free(v->tok_n), free(v->ids_sorted);
    free(v->pool), free(v->off), free(v->len);
    free(v);
}

size_t grammar_vocab_nodes(const grammar_vocab *v) { return v->n_nodes; }

int grammar_vocab_create(const char *const *pieces, const size_t *lens, size_t n, grammar_vocab **out)
{
    if (n > INT32_MAX)
        return seer_err(SEER_EINVAL, "grammar: a vocabulary of %zu ids is too large", n);
    grammar_vocab *v = seer_calloc(1, sizeof *v);
    struct piece *p = seer_malloc((n + 1) * sizeof *p);
    int32_t *path = NULL;
    size_t np = 0, total = 0;
    if (!v || !p)
        goto nomem;
    v->n_ids = n;
    /* Empty pieces would be allowed forever without advancing; pieces past 65535 bytes cannot be a
       depth. Both are left out (no real vocabulary has them). */
    for (size_t i = 0; i < n; i++)
        if (pieces[i] && lens[i] > 0 && lens[i] < 65536) {
            p[np++] = (struct piece){pieces[i], (uint32_t)lens[i], (int32_t)i};
            if (!size_add(total, lens[i], &total))
                goto nomem;
        }
    v->pool = seer_malloc(total + 1);
    v->off = seer_malloc((n + 1) * sizeof *v->off);
    v->len = seer_malloc((n + 1) * sizeof *v->len);
    if (!v->pool || !v->off || !v->len)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        v->len[i] = UINT32_MAX, v->off[i] = 0;
    size_t at = 0;
    for (size_t i = 0; i < np; i++) {
        memcpy(v->pool + at, p[i].s, p[i].len);
        v->off[p[i].id] = at, v->len[p[i].id] = p[i].len;
        p[i].s = v->pool + at;
        at += p[i].len;
    }
    qsort(p, np, sizeof *p, cmp_piece);
    /* Nodes: each piece adds one node per byte past its common prefix with the previous piece
       (sorted order makes the trie come out in preorder), so at most `total` nodes. */
    size_t cap = total + 1;
    v->byte = seer_malloc(cap);
    v->depth = seer_malloc(cap * sizeof *v->depth);
    v->skip = seer_malloc(cap * sizeof *v->skip);
    v->tok = seer_malloc(cap * sizeof *v->tok);
    v->tok_n = seer_calloc(cap, sizeof *v->tok_n);
    v->ids_sorted = seer_malloc((np + 1) * sizeof *v->ids_sorted);
    path = seer_malloc(65537 * sizeof *path);
    if (!v->byte || !v->depth || !v->skip || !v->tok || !v->tok_n || !v->ids_sorted || !path)
        goto nomem;
    size_t nn = 0;
    int open = 0; /* path[1..open]: nodes whose subtree is still growing */
    for (size_t i = 0; i < np; i++) {
        uint32_t lcp = 0;
        if (i > 0) {
            uint32_t m = p[i - 1].len < p[i].len ? p[i - 1].len : p[i].len;
            while (lcp < m && p[i - 1].s[lcp] == p[i].s[lcp])
                lcp++;
        }
        v->ids_sorted[i] = p[i].id;
        if (i > 0 && lcp == p[i].len) { /* the same bytes as the previous piece */
            v->tok_n[path[lcp]]++;
            continue;
        }
        for (int d = open; d > (int)lcp; d--) /* the previous branch ends here */
            v->skip[path[d]] = (int32_t)nn;
        for (uint32_t d = lcp + 1; d <= p[i].len; d++) {
            v->byte[nn] = (uint8_t)p[i].s[d - 1];
            v->depth[nn] = (uint16_t)d;
            v->tok[nn] = -1;
            path[d] = (int32_t)nn++;
        }
        open = (int)p[i].len;
        v->tok[path[open]] = (int32_t)i;
        v->tok_n[path[open]] = 1;
        if (open > v->max_depth)
            v->max_depth = open;
    }
    for (int d = open; d > 0; d--)
        v->skip[path[d]] = (int32_t)nn;
    v->n_nodes = nn;
    free(path);
    free(p);
    *out = v;
    return SEER_OK;
nomem:
    free(path);
    free(p);
    grammar_vocab_free(v);
    return seer_err(SEER_ENOMEM, "grammar: no memory for the token trie of %zu ids", n);
}

/* ---- interning: stacks and states ------------------------------------------------------------- */

struct gset {
    size_t off;       /* in m->pool */
    int32_t n;        /* stacks */
    bool accepting;   /* holds the empty stack: the output so far is complete */
    int32_t *next;    /* [256] T_UNKNOWN, T_DEAD or a state; NULL until first used */
    uint32_t *mask;   /* cached token mask, or NULL */
};

struct grammar_matcher {
    const grammar *g;
    const grammar_vocab *v;
    int32_t end_ids[8];
    size_t n_end;
    /* stack nodes; node 0 is the empty stack */
    int32_t *pos, *parent;
    size_t n_node, cap_node;
    int32_t *node_ht; /* open addressing, −1 empty */
    size_t ht_cap;
    /* states */
    struct gset *set;
    size_t n_set, cap_set;
    int32_t *pool;
    size_t n_pool, cap_pool;
    int32_t *set_ht;
    size_t set_ht_cap;
    /* scratch for a transition */
    int32_t *work, *result;
    size_t cap_work, cap_result;
    uint32_t *seen; /* [cap_seen] stamp per node */
    size_t cap_seen;
    uint32_t stamp;
    /* walking */
    int32_t *walk; /* [max_depth + 1] state per trie depth */
    uint32_t *scratch_mask;
    size_t n_words, n_cached, hits, walks;
    int32_t cur;
    bool done;
    int err; /* the code of the failure behind a −1/−3 return (ENOMEM, or EINVAL for a cap) */
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int grow_table(int32_t **ht, size_t *cap, size_t n_items, uint64_t (*hash)(const grammar_matcher *, int32_t),
                      const grammar_matcher *m)
{
    if (n_items * 2 < *cap)
        return SEER_OK;
    size_t nc = *cap ? *cap * 2 : 1024;
    int32_t *t = seer_malloc(nc * sizeof *t);
    if (!t)
        return seer_err(SEER_ENOMEM, "grammar: no memory for the matcher's tables");
    memset(t, 0xFF, nc * sizeof *t);
    for (size_t i = 0; i < *cap; i++)
        if ((*ht)[i] >= 0) {
            size_t h = hash(m, (*ht)[i]) & (nc - 1);
            while (t[h] >= 0)
                h = (h + 1) & (nc - 1);
            t[h] = (*ht)[i];
        }
    free(*ht);
    *ht = t, *cap = nc;
    return SEER_OK;
}

static uint64_t node_hash_kv(int32_t pos, int32_t parent) { return mix(((uint64_t)(uint32_t)pos << 32) | (uint32_t)parent); }
static uint64_t node_hash(const grammar_matcher *m, int32_t id) { return node_hash_kv(m->pos[id], m->parent[id]); }

/* The stack `pos` on top of `parent`; −1 after an error. */
static int32_t node_get(grammar_matcher *m, int32_t pos, int32_t parent)
{
    if (grow_table(&m->node_ht, &m->ht_cap, m->n_node, node_hash, m))
        return m->err = SEER_ENOMEM, -1;
    size_t h = node_hash_kv(pos, parent) & (m->ht_cap - 1);
    for (; m->node_ht[h] >= 0; h = (h + 1) & (m->ht_cap - 1)) {
        int32_t id = m->node_ht[h];
        if (m->pos[id] == pos && m->parent[id] == parent)
            return id;
    }
    if (m->n_node >= MAX_NODES)
        return m->err = seer_err(SEER_EINVAL, "grammar: the parse needs more than %d stack nodes (nesting too deep)",
                                 MAX_NODES), -1;
    size_t cap = m->cap_node;
    if (!seer_grow(&m->pos, &cap, m->n_node + 1, sizeof *m->pos, 1024) ||
        !seer_grow(&m->parent, &m->cap_node, m->n_node + 1, sizeof *m->parent, 1024))
        return m->err = seer_err(SEER_ENOMEM, "grammar: no memory for parse stacks"), -1;
    m->pos[m->n_node] = pos, m->parent[m->n_node] = parent;
    m->node_ht[h] = (int32_t)m->n_node;
    return (int32_t)m->n_node++;
}

static uint64_t set_hash_items(const int32_t *s, int32_t n)
{
    uint64_t h = (uint64_t)n;
    for (int32_t i = 0; i < n; i++)
        h = mix(h ^ (uint32_t)s[i]);
    return h;
}
static uint64_t set_hash(const grammar_matcher *m, int32_t id)
{
    return set_hash_items(m->pool + m->set[id].off, m->set[id].n);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The state holding stacks s[n] (sorted here); −1 after an error. */
static int32_t set_get(grammar_matcher *m, int32_t *s, size_t n)
{
    qsort(s, n, sizeof *s, cmp_i32);
    if (grow_table(&m->set_ht, &m->set_ht_cap, m->n_set, set_hash, m))
        return m->err = SEER_ENOMEM, -1;
    size_t h = set_hash_items(s, (int32_t)n) & (m->set_ht_cap - 1);
    for (; m->set_ht[h] >= 0; h = (h + 1) & (m->set_ht_cap - 1)) {
        const struct gset *x = &m->set[m->set_ht[h]];
        if ((size_t)x->n == n && !memcmp(m->pool + x->off, s, n * sizeof *s))
            return m->set_ht[h];
    }
    if (m->n_set >= MAX_SETS)
        return m->err = seer_err(SEER_EINVAL, "grammar: the parse reached more than %d states", MAX_SETS), -1;
    if (!seer_grow(&m->set, &m->cap_set, m->n_set + 1, sizeof *m->set, 256) ||
        !seer_grow(&m->pool, &m->cap_pool, m->n_pool + n, sizeof *m->pool, 4096))
        return m->err = seer_err(SEER_ENOMEM, "grammar: no memory for parse states"), -1;
    struct gset *x = &m->set[m->n_set];
    *x = (struct gset){.off = m->n_pool, .n = (int32_t)n};
    memcpy(m->pool + m->n_pool, s, n * sizeof *s);
    m->n_pool += n;
    x->accepting = n > 0 && s[0] == 0; /* sorted: the empty stack, id 0, comes first */
    m->set_ht[h] = (int32_t)m->n_set;
    return (int32_t)m->n_set++;
}

/* ---- transitions ------------------------------------------------------------------------------ */

static int push_work(grammar_matcher *m, size_t *n, int32_t id)
{
    if (id < 0)
        return -1;
    if (!seer_grow(&m->work, &m->cap_work, *n + 1, sizeof *m->work, 64))
        return m->err = seer_err(SEER_ENOMEM, "grammar: no memory"), -1;
    m->work[(*n)++] = id;
    return 0;
}

/* Pushes onto the worklist the stacks that rule r's alternatives start, on top of `base`. */
static int expand_rule(grammar_matcher *m, size_t *nw, int32_t r, int32_t base)
{
    const grammar *g = m->g;
    for (int32_t a = g->rule_alt[r]; a < g->rule_alt[r + 1]; a++) {
        int32_t start = g->alt[a];
        if (push_work(m, nw, g->el[start].type == GE_END ? base : node_get(m, start, base)))
            return -1;
    }
    return 0;
}

/* The stack continuing after position pos on top of `parent` (pos's alternative may be done). */
static int32_t after(grammar_matcher *m, int32_t pos, int32_t parent)
{
    return m->g->el[pos + 1].type == GE_END ? parent : node_get(m, pos + 1, parent);
}

/* Closes the worklist: expands rule references until every stack has a byte element on top (or
   is empty), each stack once (the stamp), and interns the result. T_DEAD for no stack. */
static int32_t close_set(grammar_matcher *m, size_t nw)
{
    size_t nr = 0;
    if (++m->stamp == 0) {
        memset(m->seen, 0, m->cap_seen * sizeof *m->seen);
        m->stamp = 1;
    }
    while (nw > 0) {
        int32_t s = m->work[--nw];
        if ((size_t)s >= m->cap_seen) {
            size_t old = m->cap_seen;
            if (!seer_grow(&m->seen, &m->cap_seen, m->n_node, sizeof *m->seen, 1024))
                return m->err = seer_err(SEER_ENOMEM, "grammar: no memory"), -3;
            memset(m->seen + old, 0, (m->cap_seen - old) * sizeof *m->seen);
        }
        if (m->seen[s] == m->stamp)
            continue;
        m->seen[s] = m->stamp;
        if (nr >= MAX_ALIVE)
            return m->err = seer_err(SEER_EINVAL, "grammar: more than %d parses are alive at once (the grammar is "
                                     "too ambiguous here)", MAX_ALIVE), -3;
        const grammar_elem *e = s ? &m->g->el[m->pos[s]] : NULL;
        if (!e || e->type == GE_BYTES) {
            if (!seer_grow(&m->result, &m->cap_result, nr + 1, sizeof *m->result, 64))
                return m->err = seer_err(SEER_ENOMEM, "grammar: no memory"), -3;
            m->result[nr++] = s;
        } else {
            int32_t base = after(m, m->pos[s], m->parent[s]);
            if (base < 0 || expand_rule(m, &nw, e->v, base))
                return -3;
        }
    }
    if (!nr)
        return T_DEAD;
    int32_t id = set_get(m, m->result, nr);
    return id < 0 ? -3 : id;
}

/* The state after byte c from state st: T_DEAD when rejected, −3 after an error. */
static int32_t step(grammar_matcher *m, int32_t st, uint8_t c)
{
    struct gset *x = &m->set[st];
    if (x->next && x->next[c] != T_UNKNOWN)
        return x->next[c];
    if (!x->next) {
        if (!(x->next = seer_malloc(256 * sizeof *x->next)))
            return m->err = seer_err(SEER_ENOMEM, "grammar: no memory"), -3;
        for (int i = 0; i < 256; i++)
            x->next[i] = T_UNKNOWN;
    }
    size_t nw = 0;
    for (int32_t i = 0; i < x->n; i++) {
        int32_t s = m->pool[m->set[st].off + (size_t)i];
        if (!s)
            continue;
        int32_t pos = m->pos[s];
        const uint32_t *bits = m->g->set[m->g->el[pos].v];
        if (bits[c >> 5] >> (c & 31) & 1 && push_work(m, &nw, after(m, pos, m->parent[s])))
            return -3;
    }
    int32_t to = nw ? close_set(m, nw) : T_DEAD;
    if (to != -3)
        m->set[st].next[c] = to; /* m->set may have moved in close_set */
    return to;
}

/* ---- matcher ---------------------------------------------------------------------------------- */

void grammar_matcher_free(grammar_matcher *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_set; i++)
        free(m->set[i].next), free(m->set[i].mask);
    free(m->pos), free(m->parent), free(m->node_ht), free(m->set), free(m->pool), free(m->set_ht);
    free(m->work), free(m->result), free(m->seen), free(m->walk), free(m->scratch_mask);
    free(m);
}

int grammar_matcher_create(const grammar *g, const grammar_vocab *v, const int32_t *end_ids, size_t n_end,
                           grammar_matcher **out)
{
    if (n_end > 8)
        return seer_err(SEER_EINVAL, "grammar: at most 8 end-of-turn ids");
    grammar_matcher *m = seer_calloc(1, sizeof *m);
    if (!m)
        return seer_err(SEER_ENOMEM, "grammar: no memory for a matcher");
    m->g = g, m->v = v, m->n_end = n_end;
    if (n_end)
        memcpy(m->end_ids, end_ids, n_end * sizeof *end_ids);
    int rc = SEER_OK;
    if (v) {
        m->n_words = (v->n_ids + 31) / 32;
        m->walk = seer_malloc((size_t)(v->max_depth + 1) * sizeof *m->walk);
        m->scratch_mask = seer_malloc((m->n_words + 1) * sizeof *m->scratch_mask);
        if (!m->walk || !m->scratch_mask) {
            rc = seer_err(SEER_ENOMEM, "grammar: no memory for a matcher");
            goto fail;
        }
    }
    for (size_t i = 0; i < n_end; i++)
        if (end_ids[i] < 0 || (v && (size_t)end_ids[i] >= v->n_ids)) {
            rc = seer_err(SEER_EINVAL, "grammar: end id %d is outside the vocabulary", (int)end_ids[i]);
            goto fail;
        }
    size_t nw = 0;
    if (node_get(m, -1, -1) != 0 || expand_rule(m, &nw, g->root, 0)) { /* node 0: the empty stack */
        rc = seer_err(SEER_ENOMEM, "grammar: no memory for a matcher");
        goto fail;
    }
    m->cur = close_set(m, nw);
    if (m->cur < 0) {
        rc = m->cur == T_DEAD ? seer_err(SEER_EINVAL, "grammar: the root rule matches nothing") : m->err;
        goto fail;
    }
    *out = m;
    return SEER_OK;
fail:
    grammar_matcher_free(m);
    return rc;
}

bool grammar_matcher_complete(const grammar_matcher *m) { return m->set[m->cur].accepting; }

bool grammar_matcher_finished(const grammar_matcher *m)
{
    return m->set[m->cur].accepting && m->set[m->cur].n == 1; /* the empty stack alone */
}

/* The state after bytes[len] from st, or T_DEAD / −3. */
static int32_t walk_bytes(grammar_matcher *m, int32_t st, const char *bytes, size_t len)
{
    for (size_t i = 0; i < len && st >= 0; i++)
        st = step(m, st, (uint8_t)bytes[i]);
    return st;
}

bool grammar_matcher_allows_bytes(grammar_matcher *m, const char *bytes, size_t len)
{
    return !m->done && walk_bytes(m, m->cur, bytes, len) >= 0;
}

int grammar_matcher_accept_bytes(grammar_matcher *m, const char *bytes, size_t len)
{
    int32_t st = m->done ? T_DEAD : walk_bytes(m, m->cur, bytes, len);
    if (st == -3)
        return m->err;
    if (st < 0)
        return seer_err(SEER_EINVAL, "grammar: the output cannot continue with '%.*s'", (int)(len > 40 ? 40 : len), bytes);
    m->cur = st;
    return SEER_OK;
}

int grammar_matcher_accept(grammar_matcher *m, int32_t id)
{
    for (size_t i = 0; i < m->n_end; i++)
        if (id == m->end_ids[i]) {
            if (m->done || !m->set[m->cur].accepting)
                return seer_err(SEER_EINVAL, "grammar: the output ended before the grammar was complete");
            m->done = true;
            return SEER_OK;
        }
    if (!m->v || id < 0 || (size_t)id >= m->v->n_ids || m->v->len[id] == UINT32_MAX)
        return seer_err(SEER_EINVAL, "grammar: token %d is never allowed", (int)id);
    return grammar_matcher_accept_bytes(m, m->v->pool + m->v->off[id], m->v->len[id]);
}

/* Walks the trie from state st, setting the bit of every token the grammar accepts. */
static int walk_trie(grammar_matcher *m, int32_t st, uint32_t *mask)
{
    const grammar_vocab *v = m->v;
    memset(mask, 0, m->n_words * sizeof *mask);
    m->walk[0] = st;
    for (size_t i = 0; i < v->n_nodes;) {
        /* the cached transition inline (the hot path: one load per node), step() when not known */
        int32_t from = m->walk[v->depth[i] - 1];
        const int32_t *nx = m->set[from].next;
        int32_t to = nx ? nx[v->byte[i]] : T_UNKNOWN;
        if (to == T_UNKNOWN)
            to = step(m, from, v->byte[i]);
        if (to == -3)
            return m->err;
        if (to < 0) {
            i = (size_t)v->skip[i];
            continue;
        }
        m->walk[v->depth[i]] = to;
        for (int32_t k = 0; k < v->tok_n[i]; k++) {
            int32_t id = v->ids_sorted[v->tok[i] + k];
            mask[id >> 5] |= 1u << (id & 31);
        }
        i++;
    }
    return SEER_OK;
}

int grammar_matcher_mask(grammar_matcher *m, const uint32_t **out)
{
    if (!m->v)
        return seer_err(SEER_EINVAL, "grammar: a byte-only matcher has no token mask");
    uint32_t *mask = m->set[m->cur].mask;
    if (mask) {
        m->hits++;
    } else {
        mask = m->n_cached < MAX_CACHED_MASKS ? seer_malloc((m->n_words + 1) * sizeof *mask) : NULL;
        uint32_t *into = mask ? mask : m->scratch_mask;
        int rc = walk_trie(m, m->cur, into);
        m->walks++;
        if (rc) {
            free(mask);
            return rc;
        }
        if (m->set[m->cur].accepting)
            for (size_t i = 0; i < m->n_end; i++)
                into[m->end_ids[i] >> 5] |= 1u << (m->end_ids[i] & 31);
        if (mask) {
            m->set[m->cur].mask = mask;
            m->n_cached++;
        }
        mask = into;
    }
    bool any = false;
    for (size_t i = 0; i < m->n_words && !any; i++)
        any = mask[i] != 0;
    if (!any)
        return seer_err(SEER_EINVAL, "grammar: no token of the vocabulary can continue the output here");
    *out = mask;
    return SEER_OK;
}

void grammar_matcher_stats(const grammar_matcher *m, size_t *hits, size_t *walks, size_t *states)
{
    *hits = m->hits, *walks = m->walks, *states = m->n_set;
}
