/* grammar.c — llama.cpp's GBNF text compiled to the internal form of grammar.h: rules of
   alternatives of byte-set and rule-reference elements. Repetitions become right-recursive rules
   (as llama.cpp does), so matching them never grows the parse stack; character classes over code
   points become alternatives of UTF-8 byte ranges (Russ Cox's utf8 range split), so the matcher
   works on bytes like the vocabulary does. Then the checks that keep the matcher total: every
   referenced rule is defined, no rule is left-recursive, and unproductive rules are refused, so
   no reachable state is a dead end.
   Divisions: builder · lexing · character classes · elements and repetition · rules · checks and
   flattening. */
#include "lm/grammar.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"

/* Caps on what a grammar may expand to (a fuzzer or a typo like x{99999} must not exhaust memory). */
#define MAX_ELEMS (1u << 20)
#define MAX_REPEAT 10000
#define MAX_DEPTH 64

/* ---- builder: rules whose alternatives grow while parsing ----------------------------------- */

struct balt {
    grammar_elem *e;
    size_t n, cap;
};

struct brule {
    const char *name; /* into the text (not terminated); generated rules borrow their parent's */
    size_t name_len;
    int line;         /* where it was defined, or first used while undefined */
    bool defined, generated;
    struct balt *alts;
    size_t n_alt, cap_alt;
};

struct builder {
    const char *src, *p, *end;
    int line;
    struct brule *r;
    size_t n_r, cap_r;
    uint32_t (*set)[8];
    size_t n_set, cap_set;
    size_t n_elems; /* all elements so far, for MAX_ELEMS */
    int depth;
};

static int perr(struct builder *b, const char *what)
{
    return seer_err(SEER_EINVAL, "%s: line %d: %s", b->src, b->line, what);
}

static int new_rule(struct builder *b, const char *name, size_t len, bool generated, int32_t *out)
{
    if (!seer_grow(&b->r, &b->cap_r, b->n_r + 1, sizeof *b->r, 16))
        return seer_err(SEER_ENOMEM, "%s: no memory for rules", b->src);
    b->r[b->n_r] = (struct brule){.name = name, .name_len = len, .line = b->line, .generated = generated};
    *out = (int32_t)b->n_r++;
    return SEER_OK;
}

static int new_alt(struct builder *b, int32_t r)
{
    struct brule *x = &b->r[r];
    if (!seer_grow(&x->alts, &x->cap_alt, x->n_alt + 1, sizeof *x->alts, 4))
        return seer_err(SEER_ENOMEM, "%s: no memory for alternatives", b->src);
    x->alts[x->n_alt++] = (struct balt){0};
    return SEER_OK;
}

static int push(struct builder *b, int32_t r, int32_t type, int32_t v)
{
    struct balt *a = &b->r[r].alts[b->r[r].n_alt - 1];
    if (++b->n_elems > MAX_ELEMS)
        return perr(b, "the grammar expands to more than 2^20 elements (a large repetition count?)");
    if (!seer_grow(&a->e, &a->cap, a->n + 1, sizeof *a->e, 8))
        return seer_err(SEER_ENOMEM, "%s: no memory for the grammar", b->src);
    a->e[a->n++] = (grammar_elem){type, v};
    return SEER_OK;
}

static int new_set(struct builder *b, const uint32_t bits[8], int32_t *out)
{
    if (!seer_grow(&b->set, &b->cap_set, b->n_set + 1, sizeof *b->set, 16))
        return seer_err(SEER_ENOMEM, "%s: no memory for character sets", b->src);
    memcpy(b->set[b->n_set], bits, sizeof b->set[0]);
    *out = (int32_t)b->n_set++;
    return SEER_OK;
}

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->n_r; i++) {
        for (size_t k = 0; k < b->r[i].n_alt; k++)
            free(b->r[i].alts[k].e);
        free(b->r[i].alts);
    }
    free(b->r);
    free(b->set);
}

/* ---- lexing --------------------------------------------------------------------------------- */

static bool is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Skips blanks and comments on this line. */
static void skip_blank(struct builder *b)
{
    while (b->p < b->end) {
        if (*b->p == ' ' || *b->p == '\t' || *b->p == '\r')
            b->p++;
        else if (*b->p == '#')
            while (b->p < b->end && *b->p != '\n')
                b->p++;
        else
            return;
    }
}

/* Does a rule definition (`name ::=`) or the end of the text start at q (after blank lines)? */
static bool at_rule_start(const struct builder *b, const char *q)
{
    for (;;) {
        while (q < b->end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'))
            q++;
        if (q < b->end && *q == '#') {
            while (q < b->end && *q != '\n')
                q++;
            continue;
        }
        break;
    }
    if (q == b->end)
        return true;
    const char *n = q;
    while (q < b->end && is_name(*q))
        q++;
    if (q == n)
        return false;
    while (q < b->end && (*q == ' ' || *q == '\t'))
        q++;
    return b->end - q >= 3 && !memcmp(q, "::=", 3);
}

/* Skips blanks, comments and newlines; at the top level of a rule a newline ends the rule only
   when the next line starts another rule (so long rules may wrap, as llama.cpp's files do). */
static void skip_space(struct builder *b, bool nested)
{
    for (;;) {
        skip_blank(b);
        if (b->p < b->end && *b->p == '\n' && (nested || !at_rule_start(b, b->p))) {
            b->p++, b->line++;
            continue;
        }
        return;
    }
}

/* One character of a literal or class, escapes decoded, into *cp. */
static int lex_char(struct builder *b, uint32_t *cp)
{
    if (b->p >= b->end)
        return perr(b, "unexpected end of the grammar");
    if (*b->p != '\\') {
        if (*b->p == '\n')
            return perr(b, "a literal or class is not closed on its line");
        size_t n = utf8_decode(b->p, (size_t)(b->end - b->p), cp);
        if (!n)
            return perr(b, "invalid UTF-8");
        b->p += n;
        return SEER_OK;
    }
    if (++b->p >= b->end)
        return perr(b, "unexpected end after '\\'");
    char c = *b->p++;
    int hex = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (hex) {
        uint32_t v = 0;
        for (int i = 0; i < hex; i++, b->p++) {
            char h = b->p < b->end ? *b->p : 0;
            int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (d < 0)
                return perr(b, "a \\x, \\u or \\U escape needs 2, 4 or 8 hex digits");
            v = v << 4 | (uint32_t)d;
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            return perr(b, "an escape names a surrogate or a code point past U+10FFFF");
        return *cp = v, SEER_OK;
    }
    switch (c) {
    case 'n': *cp = '\n'; break;
    case 'r': *cp = '\r'; break;
    case 't': *cp = '\t'; break;
    case '0': *cp = 0; break;
    case '\\': case '"': case '[': case ']': case '-': case '^': case '\'': case '/': *cp = (uint32_t)c; break;
    default: return perr(b, "unknown escape (use \\n \\r \\t \\\\ \\\" \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH)");
    }
    return SEER_OK;
}

/* ---- character classes: code-point ranges → UTF-8 byte-range alternatives ------------------ */

struct cprange {
    uint32_t lo, hi;
};

static int cmp_range(const void *a, const void *b)
{
    const struct cprange *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void set_range(uint32_t s[8], unsigned lo, unsigned hi)
{
    for (unsigned c = lo; c <= hi; c++)
        s[c >> 5] |= 1u << (c & 31);
}

/* Adds to rule r the alternatives spelling every code point in [lo, hi] (one length of UTF-8
   and one span of continuation bytes per alternative); ASCII goes into *ascii instead. */
static int split_utf8(struct builder *b, int32_t r, uint32_t lo, uint32_t hi, uint32_t ascii[8])
{
    static const uint32_t lim[3] = {0x7F, 0x7FF, 0xFFFF};
    for (int i = 0; i < 3; i++)
        if (lo <= lim[i] && hi > lim[i]) {
            int rc = split_utf8(b, r, lo, lim[i], ascii);
            return rc ? rc : split_utf8(b, r, lim[i] + 1, hi, ascii);
        }
    if (hi < 0x80) {
        set_range(ascii, lo, hi);
        return SEER_OK;
    }
    unsigned char a[4], z[4];
    int n = (int)utf8_encode(lo, a);
    for (int i = 1; i < n; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            int rc;
            if ((lo & m) != 0)
                return (rc = split_utf8(b, r, lo, lo | m, ascii)) ? rc : split_utf8(b, r, (lo | m) + 1, hi, ascii);
            if ((hi & m) != m)
                return (rc = split_utf8(b, r, lo, (hi & ~m) - 1, ascii)) ? rc : split_utf8(b, r, hi & ~m, hi, ascii);
        }
    }
    utf8_encode(hi, z);
    int rc = new_alt(b, r);
    for (int i = 0; i < n && !rc; i++) {
        uint32_t s[8] = {0};
        int32_t id;
        set_range(s, a[i], z[i]);
        if (!(rc = new_set(b, s, &id)))
            rc = push(b, r, GE_BYTES, id);
    }
    return rc;
}

/* Appends to rule `into` the element(s) matching one code point of rg[n] (negated: of every other
   code point); n ≤ 64. Surrogates are never characters. */
static int emit_class(struct builder *b, int32_t into, struct cprange *rg, size_t n, bool negate)
{
    qsort(rg, n, sizeof *rg, cmp_range);
    size_t k = 0; /* merge overlapping and touching ranges */
    for (size_t i = 0; i < n; i++) {
        if (k && rg[i].lo <= rg[k - 1].hi + 1) {
            if (rg[i].hi > rg[k - 1].hi)
                rg[k - 1].hi = rg[i].hi;
        } else {
            rg[k++] = rg[i];
        }
    }
    n = k;
    struct cprange set[66], out[68];
    size_t ns = 0, m = 0;
    if (negate) {
        uint32_t next = 0;
        for (size_t i = 0; i < n; i++) {
            if (rg[i].lo > next)
                set[ns++] = (struct cprange){next, rg[i].lo - 1};
            next = rg[i].hi + 1;
        }
        if (next <= 0x10FFFF)
            set[ns++] = (struct cprange){next, 0x10FFFF};
    } else {
        memcpy(set, rg, n * sizeof *rg);
        ns = n;
    }
    for (size_t i = 0; i < ns; i++) { /* cut out the surrogate block */
        uint32_t lo = set[i].lo, hi = set[i].hi;
        if (lo < 0xD800 && hi > 0xDFFF) {
            out[m++] = (struct cprange){lo, 0xD7FF};
            out[m++] = (struct cprange){0xE000, hi};
        } else if (!(lo >= 0xD800 && hi <= 0xDFFF)) {
            out[m++] = (struct cprange){lo >= 0xD800 && lo <= 0xDFFF ? 0xE000 : lo,
                                        hi >= 0xD800 && hi <= 0xDFFF ? 0xD7FF : hi};
        }
    }
    bool ascii_only = true;
    for (size_t i = 0; i < m; i++)
        ascii_only &= out[i].hi < 0x80;
    uint32_t ascii[8] = {0};
    int32_t id, gen;
    int rc;
    if (ascii_only) {
        for (size_t i = 0; i < m; i++)
            set_range(ascii, out[i].lo, out[i].hi);
        return (rc = new_set(b, ascii, &id)) ? rc : push(b, into, GE_BYTES, id);
    }
    if ((rc = new_rule(b, b->r[into].name, b->r[into].name_len, true, &gen)))
        return rc;
    b->r[gen].defined = true;
    for (size_t i = 0; i < m && !rc; i++)
        rc = split_utf8(b, gen, out[i].lo, out[i].hi, ascii);
    bool any = false;
    for (int i = 0; i < 8; i++)
        any |= ascii[i] != 0;
    if (!rc && any && !(rc = new_alt(b, gen)) && !(rc = new_set(b, ascii, &id)))
        rc = push(b, gen, GE_BYTES, id);
    return rc ? rc : push(b, into, GE_REF, gen);
}

static int parse_class(struct builder *b, int32_t into)
{
    struct cprange rg[64];
    size_t n = 0;
    bool negate = false;
    b->p++; /* '[' */
    if (b->p < b->end && *b->p == '^')
        negate = true, b->p++;
    while (b->p < b->end && *b->p != ']') {
        uint32_t lo, hi;
        int rc = lex_char(b, &lo);
        if (rc)
            return rc;
        hi = lo;
        if (b->end - b->p >= 2 && b->p[0] == '-' && b->p[1] != ']') {
            b->p++;
            if ((rc = lex_char(b, &hi)))
                return rc;
            if (hi < lo)
                return perr(b, "a class range runs backwards");
        }
        if (n == 64)
            return perr(b, "a character class has more than 64 ranges");
        rg[n++] = (struct cprange){lo, hi};
    }
    if (b->p >= b->end)
        return perr(b, "a character class is not closed with ']'");
    b->p++;
    return emit_class(b, into, rg, n, negate);
}

/* ---- elements and repetition ------------------------------------------------------------------ */

static int parse_alternates(struct builder *b, int32_t r, bool nested);

static int lookup_rule(struct builder *b, const char *name, size_t len, int32_t *out)
{
    for (size_t i = 0; i < b->n_r; i++)
        if (!b->r[i].generated && b->r[i].name_len == len && !memcmp(b->r[i].name, name, len))
            return *out = (int32_t)i, SEER_OK;
    return new_rule(b, name, len, false, out);
}

/* The elements e[0..n) of the last symbol, repeated m..mx times (mx < 0: unbounded), as rules:
   x{m,} = x…x R with R ::= x R | ε; x{m,n} = x…x O_(n−m) with O_k ::= x O_(k−1) | ε. */
static int repeat(struct builder *b, int32_t r, size_t from, long m, long mx)
{
    struct balt *a = &b->r[r].alts[b->r[r].n_alt - 1];
    size_t n = a->n - from;
    if (n == 0) /* ""* repeats nothing: nothing to add (and no ε-loop rule) */
        return SEER_OK;
    grammar_elem sym[64];
    grammar_elem *s = n <= 64 ? sym : seer_malloc(n * sizeof *s);
    int rc = SEER_OK;
    if (!s)
        return seer_err(SEER_ENOMEM, "%s: no memory", b->src);
    memcpy(s, a->e + from, n * sizeof *s);
    a->n = from;
    b->n_elems -= n;
    for (long i = 0; i < m && !rc; i++)
        for (size_t k = 0; k < n && !rc; k++)
            rc = push(b, r, s[k].type, s[k].v);
    int32_t prev = -1, g;
    long opt = mx < 0 ? 1 : mx - m;
    for (long i = 0; i < opt && !rc; i++) {
        if ((rc = new_rule(b, b->r[r].name, b->r[r].name_len, true, &g)) || (rc = new_alt(b, g)))
            break;
        b->r[g].defined = true;
        for (size_t k = 0; k < n && !rc; k++)
            rc = push(b, g, s[k].type, s[k].v);
        if (!rc && (mx < 0 || prev >= 0))
            rc = push(b, g, GE_REF, mx < 0 ? g : prev);
        if (!rc)
            rc = new_alt(b, g); /* ε */
        prev = g;
    }
    if (!rc && prev >= 0)
        rc = push(b, r, GE_REF, prev);
    if (s != sym)
        free(s);
    return rc;
}

static int parse_count(struct builder *b, long *out)
{
    long v = 0;
    if (b->p >= b->end || *b->p < '0' || *b->p > '9')
        return perr(b, "a repetition {m,n} needs numbers");
    while (b->p < b->end && *b->p >= '0' && *b->p <= '9') {
        v = v * 10 + (*b->p++ - '0');
        if (v > MAX_REPEAT)
            return perr(b, "a repetition count is above 10000");
    }
    *out = v;
    return SEER_OK;
}

/* Elements of one alternative of rule r (the current one) until '|', ')' or the rule's end. */
static int parse_sequence(struct builder *b, int32_t r, bool nested)
{
    size_t last = (size_t)-1; /* where the last symbol's elements start */
    int rc = SEER_OK;
    while (b->p < b->end && !rc) {
        char c = *b->p;
        size_t here = b->r[r].alts[b->r[r].n_alt - 1].n;
        if (c == '"') {
            b->p++;
            while (!rc && b->p < b->end && *b->p != '"') {
                uint32_t cp;
                unsigned char u[4];
                if ((rc = lex_char(b, &cp)))
                    break;
                size_t n = utf8_encode(cp, u);
                for (size_t i = 0; i < n && !rc; i++) {
                    uint32_t s[8] = {0};
                    int32_t id;
                    s[u[i] >> 5] = 1u << (u[i] & 31);
                    if (!(rc = new_set(b, s, &id)))
                        rc = push(b, r, GE_BYTES, id);
                }
            }
            if (!rc && b->p >= b->end)
                rc = perr(b, "a string literal is not closed");
            b->p++;
            last = here;
        } else if (c == '[') {
            rc = parse_class(b, r);
            last = here;
        } else if (c == '.') {
            struct cprange none[1];
            b->p++;
            rc = emit_class(b, r, none, 0, true);
            last = here;
        } else if (is_name(c)) {
            const char *n0 = b->p;
            while (b->p < b->end && is_name(*b->p))
                b->p++;
            int32_t ref;
            if (!(rc = lookup_rule(b, n0, (size_t)(b->p - n0), &ref)))
                rc = push(b, r, GE_REF, ref);
            last = here;
        } else if (c == '(') {
            int32_t g;
            b->p++;
            if (++b->depth > MAX_DEPTH)
                return perr(b, "groups nest deeper than 64");
            if ((rc = new_rule(b, b->r[r].name, b->r[r].name_len, true, &g)))
                break;
            b->r[g].defined = true;
            skip_space(b, true);
            if ((rc = parse_alternates(b, g, true)))
                break;
            b->depth--;
            if (b->p >= b->end || *b->p != ')')
                return perr(b, "a group is not closed with ')'");
            b->p++;
            rc = push(b, r, GE_REF, g);
            last = here;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (last == (size_t)-1)
                return perr(b, "a repetition follows nothing");
            long m = c == '+' ? 1 : 0, mx = c == '?' ? 1 : -1;
            b->p++;
            if (c == '{') {
                skip_blank(b);
                if ((rc = parse_count(b, &m)))
                    break;
                skip_blank(b);
                mx = m;
                if (b->p < b->end && *b->p == ',') {
                    b->p++;
                    skip_blank(b);
                    mx = -1;
                    if (b->p < b->end && *b->p != '}' && (rc = parse_count(b, &mx)))
                        break;
                    skip_blank(b);
                }
                if (b->p >= b->end || *b->p != '}')
                    return perr(b, "a repetition {m,n} is not closed with '}'");
                if (mx >= 0 && mx < m)
                    return perr(b, "a repetition {m,n} has n < m");
                b->p++;
            }
            rc = repeat(b, r, last, m, mx);
            last = (size_t)-1;
        } else {
            break;
        }
        if (!rc)
            skip_space(b, nested);
    }
    return rc;
}

static int parse_alternates(struct builder *b, int32_t r, bool nested)
{
    int rc = new_alt(b, r);
    if (!rc)
        rc = parse_sequence(b, r, nested);
    while (!rc && b->p < b->end && *b->p == '|') {
        b->p++;
        skip_space(b, true);
        if (!(rc = new_alt(b, r)))
            rc = parse_sequence(b, r, nested);
    }
    return rc;
}

/* ---- rules ------------------------------------------------------------------------------------ */

static int parse_rules(struct builder *b)
{
    skip_space(b, true);
    while (b->p < b->end) {
        const char *n0 = b->p;
        while (b->p < b->end && is_name(*b->p))
            b->p++;
        size_t len = (size_t)(b->p - n0);
        if (!len)
            return perr(b, "expected a rule name");
        skip_blank(b);
        if (b->end - b->p < 3 || memcmp(b->p, "::=", 3))
            return perr(b, "expected '::=' after the rule name");
        b->p += 3;
        int32_t r;
        int rc = lookup_rule(b, n0, len, &r);
        if (rc)
            return rc;
        if (b->r[r].defined)
            return seer_err(SEER_EINVAL, "%s: line %d: rule '%.*s' is defined twice", b->src, b->line, (int)len, n0);
        b->r[r].defined = true;
        b->r[r].line = b->line;
        skip_space(b, false); /* `x ::=` alone on its line is an empty rule */
        if ((rc = parse_alternates(b, r, false)))
            return rc;
        if (b->p < b->end && *b->p != '\n')
            return perr(b, *b->p == ')' ? "')' without '('" : "unexpected character in a rule");
        skip_space(b, true);
    }
    return SEER_OK;
}

/* ---- checks and flattening --------------------------------------------------------------------- */

static bool set_empty(const uint32_t s[8])
{
    return !(s[0] | s[1] | s[2] | s[3] | s[4] | s[5] | s[6] | s[7]);
}

/* Least fixpoint over rules, in time linear in the grammar: a rule holds when one of its
   alternatives has only holding references and no byte element that breaks it (for `nullable`
   every byte element breaks; for productive only an empty set does). Worklist of alternatives
   by the count of references still unproved. */
static int fixpoint(const grammar *g, bool nullable, bool *holds)
{
    size_t na = g->n_alt, nr = g->n_rule;
    int32_t *cnt = seer_calloc(na ? na : 1, sizeof *cnt), *owner = seer_malloc((na ? na : 1) * sizeof *owner);
    int32_t *occ_start = seer_calloc(nr + 1, sizeof *occ_start), *occ = seer_malloc((g->n_el + 1) * sizeof *occ);
    int32_t *queue = seer_malloc((nr + 1) * sizeof *queue);
    int rc = SEER_OK;
    if (!cnt || !owner || !occ_start || !occ || !queue) {
        rc = seer_err(SEER_ENOMEM, "grammar: no memory for its checks");
        goto done;
    }
    memset(holds, 0, nr * sizeof *holds);
    for (size_t r = 0; r < nr; r++)
        for (int32_t a = g->rule_alt[r]; a < g->rule_alt[r + 1]; a++)
            owner[a] = (int32_t)r;
    for (size_t a = 0; a < na; a++)
        for (const grammar_elem *e = g->el + g->alt[a]; e->type != GE_END; e++) {
            if (e->type == GE_REF) {
                cnt[a]++;
                occ_start[e->v + 1]++;
            } else {
                if (nullable || set_empty(g->set[e->v]))
                    cnt[a] = INT32_MIN / 2; /* can never reach 0 */
            }
        }
    for (size_t r = 0; r < nr; r++)
        occ_start[r + 1] += occ_start[r];
    {
        int32_t *pos = seer_malloc((nr + 1) * sizeof *pos);
        if (!pos) {
            rc = seer_err(SEER_ENOMEM, "grammar: no memory for its checks");
            goto done;
        }
        memcpy(pos, occ_start, (nr + 1) * sizeof *pos);
        for (size_t a = 0; a < na; a++)
            for (const grammar_elem *e = g->el + g->alt[a]; e->type != GE_END; e++)
                if (e->type == GE_REF)
                    occ[pos[e->v]++] = (int32_t)a;
        free(pos);
    }
    size_t qh = 0, qt = 0;
    for (size_t a = 0; a < na; a++)
        if (cnt[a] == 0 && !holds[owner[a]])
            holds[owner[a]] = true, queue[qt++] = owner[a];
    while (qh < qt) {
        int32_t r = queue[qh++];
        for (int32_t k = occ_start[r]; k < occ_start[r + 1]; k++) {
            int32_t a = occ[k];
            if (--cnt[a] == 0 && !holds[owner[a]])
                holds[owner[a]] = true, queue[qt++] = owner[a];
        }
    }
done:
    free(cnt), free(owner), free(occ_start), free(occ), free(queue);
    return rc;
}

/* Left recursion would make the matcher expand a rule into itself forever. Edges r → x where x
   can start r's alternative (after nullable elements); Kahn's algorithm finds a cycle. */
static int check_left_recursion(const grammar *g, const bool *nullable, const struct builder *b)
{
    size_t nr = g->n_rule, ne = 0;
    for (size_t i = 0; i < g->n_el; i++)
        ne += g->el[i].type == GE_REF;
    int32_t *deg = seer_calloc(nr, sizeof *deg), *start = seer_calloc(nr + 1, sizeof *start);
    int32_t *to = seer_malloc((ne + 1) * sizeof *to), *queue = seer_malloc((nr + 1) * sizeof *queue);
    int rc = SEER_OK;
    if (!deg || !start || !to || !queue) {
        rc = seer_err(SEER_ENOMEM, "grammar: no memory for its checks");
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (size_t r = 0; r < nr; r++) {
            if (pass)
                start[r] = (int32_t)k;
            for (int32_t a = g->rule_alt[r]; a < g->rule_alt[r + 1]; a++)
                for (const grammar_elem *e = g->el + g->alt[a]; e->type == GE_REF; e++) {
                    if (pass)
                        to[k] = e->v, deg[e->v]++;
                    k++;
                    if (!nullable[e->v])
                        break;
                }
        }
        start[nr] = (int32_t)k;
    }
    size_t qh = 0, qt = 0;
    for (size_t r = 0; r < nr; r++)
        if (!deg[r])
            queue[qt++] = (int32_t)r;
    while (qh < qt) {
        int32_t r = queue[qh++];
        for (int32_t k = start[r]; k < start[r + 1]; k++)
            if (--deg[to[k]] == 0)
                queue[qt++] = to[k];
    }
    if (qt < nr) {
        for (size_t r = 0; r < nr; r++)
            if (deg[r] && !b->r[r].generated) {
                rc = seer_err(SEER_EINVAL, "%s: rule '%.*s' is left-recursive (it can start with itself); "
                              "rewrite it with repetition", b->src, (int)b->r[r].name_len, b->r[r].name);
                goto done;
            }
        for (size_t r = 0; r < nr; r++)
            if (deg[r]) {
                rc = seer_err(SEER_EINVAL, "%s: a group or repetition inside rule '%.*s' is left-recursive "
                              "(e.g. an empty-matching x*)*)", b->src, (int)b->r[r].name_len, b->r[r].name);
                goto done;
            }
    }
done:
    free(deg), free(start), free(to), free(queue);
    return rc;
}

/* Whether alternative x can ever finish given which rules can (NULL: keep every alternative). An
   alternative that cannot would leave a parse stack that never advances: a state holding only such
   stacks would allow the token leading there and then allow nothing. */
static bool alt_alive(const struct builder *b, const struct balt *x, const bool *productive)
{
    for (size_t k = 0; productive && k < x->n; k++)
        if (x->e[k].type == GE_REF ? !productive[x->e[k].v] : set_empty(b->set[x->e[k].v]))
            return false;
    return true;
}

/* Flattens the builder's rules, without the alternatives that cannot finish when `productive` is
   given. */
static int flatten(struct builder *b, grammar *g, const bool *productive)
{
    size_t n_el = 0, n_alt = 0;
    for (size_t r = 0; r < b->n_r; r++)
        for (size_t a = 0; a < b->r[r].n_alt; a++) {
            const struct balt *x = &b->r[r].alts[a];
            if (alt_alive(b, x, productive))
                n_el += x->n + 1, n_alt++;
        }
    g->el = seer_malloc((n_el + 1) * sizeof *g->el);
    g->alt = seer_malloc((n_alt + 1) * sizeof *g->alt);
    g->rule_alt = seer_malloc((b->n_r + 1) * sizeof *g->rule_alt);
    if (!g->el || !g->alt || !g->rule_alt)
        return seer_err(SEER_ENOMEM, "%s: no memory for the grammar", b->src);
    size_t e = 0, ai = 0;
    for (size_t r = 0; r < b->n_r; r++) {
        g->rule_alt[r] = (int32_t)ai;
        for (size_t a = 0; a < b->r[r].n_alt; a++) {
            const struct balt *x = &b->r[r].alts[a];
            if (!alt_alive(b, x, productive))
                continue;
            g->alt[ai++] = (int32_t)e;
            for (size_t k = 0; k < x->n; k++)
                g->el[e++] = x->e[k];
            g->el[e++] = (grammar_elem){GE_END, 0};
        }
    }
    g->rule_alt[b->n_r] = (int32_t)ai;
    g->n_el = e, g->n_alt = ai, g->n_rule = b->n_r;
    return SEER_OK;
}

void grammar_free(grammar *g)
{
    if (!g)
        return;
    free(g->el), free(g->alt), free(g->rule_alt), free(g->set);
    free(g);
}

int grammar_parse(const char *text, size_t len, const char *source, grammar **out)
{
    struct builder b = {.src = source ? source : "grammar", .p = text, .end = text + len, .line = 1};
    grammar *g = seer_calloc(1, sizeof *g), *tmp = NULL;
    bool *prod = NULL, *nul = NULL;
    int32_t root = -1;
    int rc = g ? parse_rules(&b) : seer_err(SEER_ENOMEM, "%s: no memory", b.src);
    for (size_t r = 0; !rc && r < b.n_r; r++) {
        if (!b.r[r].defined)
            rc = seer_err(SEER_EINVAL, "%s: line %d: rule '%.*s' is used but never defined", b.src, b.r[r].line,
                          (int)b.r[r].name_len, b.r[r].name);
        else if (!b.r[r].generated && b.r[r].name_len == 4 && !memcmp(b.r[r].name, "root", 4))
            root = (int32_t)r;
    }
    if (!rc && root < 0)
        rc = seer_err(SEER_EINVAL, "%s: no rule named 'root'", b.src);
    if (rc)
        goto fail;
    /* Productivity on a first flattening; then the grammar again without dead alternatives. */
    if (!(tmp = seer_calloc(1, sizeof *tmp)) || !(prod = seer_malloc(b.n_r + 1)) || !(nul = seer_malloc(b.n_r + 1))) {
        rc = seer_err(SEER_ENOMEM, "%s: no memory", b.src);
        goto fail;
    }
    tmp->set = b.set, tmp->n_set = b.n_set;
    if ((rc = flatten(&b, tmp, NULL)) || (rc = fixpoint(tmp, false, prod)))
        goto fail;
    for (size_t r = 0; r < b.n_r; r++)
        if (!prod[r] && !b.r[r].generated) {
            rc = seer_err(SEER_EINVAL, "%s: line %d: rule '%.*s' can never finish (every alternative needs "
                          "itself or an empty class)", b.src, b.r[r].line, (int)b.r[r].name_len, b.r[r].name);
            goto fail;
        }
    if (!prod[root]) {
        rc = seer_err(SEER_EINVAL, "%s: rule 'root' matches nothing", b.src);
        goto fail;
    }
    if ((rc = flatten(&b, g, prod)))
        goto fail;
    g->set = b.set, g->n_set = b.n_set, g->root = root; /* g owns the sets from here */
    b.set = NULL;
    if ((rc = fixpoint(g, true, nul)) || (rc = check_left_recursion(g, nul, &b)))
        goto fail;
    tmp->set = NULL;
    grammar_free(tmp);
    free(prod), free(nul);
    builder_free(&b);
    *out = g;
    return SEER_OK;
fail:
    if (tmp)
        tmp->set = NULL;
    grammar_free(tmp);
    grammar_free(g);
    free(prod), free(nul);
    builder_free(&b);
    return rc;
}
