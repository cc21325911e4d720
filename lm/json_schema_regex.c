/* json_schema_regex.c — a JSON schema's `pattern` as a grammar expression over the string's JSON
   text (lm/json_schema.h lists the regex subset). Classes are code-point range sets cut to what a
   JSON string holds unescaped, plus the escapes \" and \\; literals are written as their JSON text.
   Python's re (the validator's) gives \d \w \s Unicode meanings and ours are ASCII, so a class
   using them is cut to ASCII: every string written still matches.
   Divisions: classes · the regex parser · entry point. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "lm/json_schema_regex.h"

/* ---- classes ------------------------------------------------------------------------------------ */

/* Code-point ranges of a regex class; what a JSON string can hold unescaped is cut out at the end
   (the quote and backslash are then written as their escapes). */
struct cls {
    struct {
        uint32_t lo, hi;
    } r[160];
    int n;
    bool ascii; /* it used \d \w \s or their negations: keep it to ASCII (see cls_escape) */
};

static void cls_add(struct cls *c, uint32_t lo, uint32_t hi)
{
    if (c->n < 160)
        c->r[c->n].lo = lo, c->r[c->n].hi = hi, c->n++;
}

static int cmp_u32pair(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void cls_norm(struct cls *c)
{
    qsort(c->r, (size_t)c->n, sizeof c->r[0], cmp_u32pair);
    int k = 0;
    for (int i = 0; i < c->n; i++) {
        if (k && c->r[i].lo <= c->r[k - 1].hi + 1) {
            if (c->r[i].hi > c->r[k - 1].hi)
                c->r[k - 1].hi = c->r[i].hi;
        } else {
            c->r[k++] = c->r[i];
        }
    }
    c->n = k;
}

static void cls_negate(struct cls *c)
{
    struct cls o = {.n = 0, .ascii = c->ascii};
    uint32_t next = 0;
    cls_norm(c);
    for (int i = 0; i < c->n; i++) {
        if (c->r[i].lo > next)
            cls_add(&o, next, c->r[i].lo - 1);
        next = c->r[i].hi + 1;
    }
    if (next <= 0x10FFFF)
        cls_add(&o, next, 0x10FFFF);
    *c = o;
}

static bool cls_has(const struct cls *c, uint32_t x)
{
    for (int i = 0; i < c->n; i++)
        if (x >= c->r[i].lo && x <= c->r[i].hi)
            return true;
    return false;
}

/* \d \w \s and their negations with their ASCII meanings. Python's re (the validator's) gives them
   Unicode meanings, which agree on ASCII only: \W or [^\d] must not write 'é' or '٣', so a class
   that uses one is cut to ASCII when written. */
static void cls_escape(struct cls *c, char k)
{
    c->ascii = true;
    struct cls t = {.n = 0};
    char lower = (char)(k | 0x20);
    if (lower == 'd')
        cls_add(&t, '0', '9');
    else if (lower == 'w')
        cls_add(&t, '0', '9'), cls_add(&t, 'A', 'Z'), cls_add(&t, 'a', 'z'), cls_add(&t, '_', '_');
    else
        cls_add(&t, ' ', ' '), cls_add(&t, '\t', '\r');
    if (k != lower)
        cls_negate(&t);
    for (int i = 0; i < t.n; i++)
        cls_add(c, t.r[i].lo, t.r[i].hi);
}

/* The class as a grammar expression over JSON text: the characters a JSON string holds as they
   are, plus \" and \\ when the class has them (control characters are left out: a subset). */
static void cls_emit(struct js *j, const char *path, struct cls *c, struct sb *e)
{
    cls_norm(c);
    bool q = cls_has(c, '"'), bs = cls_has(c, '\\'), any = false;
    struct cls plain = {.n = 0};
    for (int i = 0; i < c->n; i++) {
        uint32_t lo = c->r[i].lo < 0x20 ? 0x20 : c->r[i].lo, hi = c->ascii && c->r[i].hi > 0x7E ? 0x7E : c->r[i].hi;
        for (uint32_t cut = 0; cut < 2; cut++) { /* split around '"' (0x22) and '\\' (0x5C) */
            uint32_t x = cut ? '\\' : '"';
            if (lo <= x && x <= hi) {
                if (lo < x)
                    cls_add(&plain, lo, x - 1);
                lo = x + 1;
            }
        }
        if (lo >= 0xD800 && lo <= 0xDFFF) /* surrogates are no characters */
            lo = 0xE000;
        if (hi >= 0xD800 && hi <= 0xDFFF)
            hi = 0xD7FF;
        if (lo <= hi)
            cls_add(&plain, lo, hi);
    }
    js_printf(e, "( ");
    if (plain.n) {
        js_printf(e, "[");
        for (int i = 0; i < plain.n; i++) {
            js_printf(e, "\\U%08X", (unsigned)plain.r[i].lo);
            if (plain.r[i].hi != plain.r[i].lo)
                js_printf(e, "-\\U%08X", (unsigned)plain.r[i].hi);
        }
        js_printf(e, "] ");
        any = true;
    }
    if (q)
        js_printf(e, "%s\"\\\\\\\"\" ", any ? "| " : ""), any = true;
    if (bs)
        js_printf(e, "%s\"\\\\\\\\\" ", any ? "| " : ""), any = true;
    js_printf(e, ") ");
    if (!any)
        js_refuse(j, path, "the pattern has a class of control characters only, which seer does not write");
}

/* ---- the regex parser ---------------------------------------------------------------------------- */

struct rx {
    struct js *j;
    const char *path, *p, *end;
    int depth;
};

static int rx_fail(struct rx *x, const char *what)
{
    char msg[160];
    snprintf(msg, sizeof msg, "pattern: %s", what);
    return js_refuse(x->j, x->path, msg);
}

/* One code point of the pattern (UTF-8), stepped over; 0 bytes at a broken sequence. */
static size_t rx_utf8(struct rx *x, uint32_t *cp)
{
    size_t n = utf8_decode(x->p, (size_t)(x->end - x->p), cp);
    x->p += n;
    return n;
}

/* An escape after '\': a class (\d …) goes into *c and returns 1; a character into *cp, 0. */
static int rx_escape(struct rx *x, uint32_t *cp, struct cls *c)
{
    if (x->p >= x->end)
        return rx_fail(x, "it ends with '\\'"), -1;
    char k = *x->p++;
    if (strchr("dDwWsS", k)) {
        cls_escape(c, k);
        return 1;
    }
    if (strchr("bBkpP123456789", k))
        return rx_fail(x, "word boundaries, back-references and \\p classes are not supported"), -1;
    const char *simple = "n\nt\tr\rf\fv\v0";
    const char *hit = strchr("ntrfv0", k);
    if (hit) {
        *cp = k == '0' ? 0 : (uint32_t)simple[(hit - "ntrfv0") * 2 + 1];
        return 0;
    }
    if (k == 'x' || k == 'u') {
        int nd = k == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (int i = 0; i < nd; i++) {
            char h = x->p < x->end ? *x->p++ : 0;
            int d = h >= '0' && h <= '9' ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
            if (d < 0)
                return rx_fail(x, "a \\x or \\u escape needs hex digits"), -1;
            v = v << 4 | (uint32_t)d;
        }
        if (v >= 0xD800 && v <= 0xDFFF)
            return rx_fail(x, "surrogate escapes are not supported"), -1;
        *cp = v;
        return 0;
    }
    if ((k >= 'a' && k <= 'z') || (k >= 'A' && k <= 'Z'))
        return rx_fail(x, "an unknown escape"), -1;
    *cp = (uint32_t)(unsigned char)k;
    return 0;
}

/* One character as JSON string text. */
static void rx_char(struct sb *e, uint32_t c)
{
    char b[8];
    if (c == '"' || c == '\\') {
        b[0] = '\\', b[1] = (char)c;
        js_lit(e, b, 2);
    } else if (c < 0x20) {
        const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (!named)
            snprintf(b, sizeof b, "\\u%04x", (unsigned)c), named = b;
        js_lit(e, named, strlen(named));
    } else {
        js_lit(e, b, utf8_encode(c, b));
    }
}

static int rx_alt(struct rx *x, struct sb *e);

static int rx_class(struct rx *x, struct sb *e)
{
    struct cls c = {.n = 0};
    bool neg = false;
    x->p++; /* '[' */
    if (x->p < x->end && *x->p == '^')
        neg = true, x->p++;
    bool first = true;
    while (x->p < x->end && (*x->p != ']' || first)) {
        uint32_t lo, hi;
        first = false;
        if (*x->p == '\\') {
            x->p++;
            int k = rx_escape(x, &lo, &c);
            if (k < 0)
                return -1;
            if (k == 1)
                continue;
        } else if (!rx_utf8(x, &lo)) {
            return rx_fail(x, "invalid UTF-8");
        }
        hi = lo;
        if (x->end - x->p >= 2 && x->p[0] == '-' && x->p[1] != ']') {
            x->p++;
            if (*x->p == '\\') {
                struct cls dummy = {.n = 0};
                x->p++;
                if (rx_escape(x, &hi, &dummy) != 0)
                    return rx_fail(x, "a class range ends in a class escape");
            } else if (!rx_utf8(x, &hi)) {
                return rx_fail(x, "invalid UTF-8");
            }
            if (hi < lo)
                return rx_fail(x, "a class range runs backwards");
        }
        cls_add(&c, lo, hi);
    }
    if (x->p >= x->end)
        return rx_fail(x, "a class is not closed");
    x->p++;
    if (neg)
        cls_negate(&c);
    cls_emit(x->j, x->path, &c, e);
    return x->j->rc;
}

static int rx_atom(struct rx *x, struct sb *e)
{
    char ch = *x->p;
    if (ch == '(') {
        x->p++;
        if (x->p < x->end && *x->p == '?') {
            if (x->end - x->p < 2 || x->p[1] != ':')
                return rx_fail(x, "lookarounds and named groups are not supported");
            x->p += 2;
        }
        if (++x->depth > MAX_DEPTH)
            return rx_fail(x, "groups nest too deep");
        js_printf(e, "( ");
        if (rx_alt(x, e))
            return -1;
        x->depth--;
        if (x->p >= x->end || *x->p != ')')
            return rx_fail(x, "a group is not closed");
        x->p++;
        js_printf(e, ") ");
        return SEER_OK;
    }
    if (ch == '[')
        return rx_class(x, e);
    if (ch == '.') { /* any character but line terminators (ECMA-262) */
        struct cls c = {.n = 0};
        x->p++;
        cls_add(&c, '\n', '\n'), cls_add(&c, '\r', '\r'), cls_add(&c, 0x2028, 0x2029);
        cls_negate(&c);
        cls_emit(x->j, x->path, &c, e);
        return x->j->rc;
    }
    if (ch == '^' || ch == '$')
        return rx_fail(x, "'^' and '$' are supported only at the very start and end");
    if (strchr("*+?{", ch))
        return rx_fail(x, "a quantifier follows nothing");
    uint32_t cp;
    if (ch == '\\') {
        struct cls c = {.n = 0};
        x->p++;
        int k = rx_escape(x, &cp, &c);
        if (k < 0)
            return -1;
        if (k == 1) {
            cls_emit(x->j, x->path, &c, e);
            return x->j->rc;
        }
    } else if (!rx_utf8(x, &cp)) {
        return rx_fail(x, "invalid UTF-8");
    }
    rx_char(e, cp);
    return SEER_OK;
}

static int rx_seq(struct rx *x, struct sb *e)
{
    js_printf(e, "( \"\" ");
    while (x->p < x->end && *x->p != '|' && *x->p != ')') {
        struct sb a = {0};
        int rc = rx_atom(x, &a);
        if (!rc && x->p < x->end && strchr("*+?{", *x->p)) {
            char q = *x->p++;
            if (q == '{') {
                long m = 0, n = -1;
                char *end;
                m = strtol(x->p, &end, 10);
                if (end == x->p || m < 0 || m > MAX_LEN)
                    rc = rx_fail(x, "a {m,n} quantifier needs counts up to 10000");
                x->p = end;
                n = m;
                if (!rc && x->p < x->end && *x->p == ',') {
                    x->p++;
                    n = -1;
                    if (x->p < x->end && *x->p != '}') {
                        n = strtol(x->p, &end, 10);
                        if (end == x->p || n < m || n > MAX_LEN)
                            rc = rx_fail(x, "a {m,n} quantifier needs m <= n <= 10000");
                        x->p = end;
                    }
                }
                if (!rc && (x->p >= x->end || *x->p != '}'))
                    rc = rx_fail(x, "a {m,n} quantifier is not closed");
                x->p++;
                if (!rc && a.s) {
                    js_printf(e, "( %s)", a.s);
                    if (n < 0)
                        js_printf(e, "{%ld,} ", m);
                    else
                        js_printf(e, "{%ld,%ld} ", m, n);
                }
            } else if (!rc && a.s) {
                js_printf(e, "( %s)%c ", a.s, q);
            }
            if (x->p < x->end && *x->p == '?') /* lazy: the same strings */
                x->p++;
        } else if (!rc && a.s) {
            js_printf(e, "%s", a.s);
        }
        free(a.s);
        if (rc || a.oom)
            return rc ? rc : (e->oom = true, SEER_ENOMEM);
    }
    js_printf(e, ") ");
    return SEER_OK;
}

static int rx_alt(struct rx *x, struct sb *e)
{
    if (rx_seq(x, e))
        return -1;
    while (x->p < x->end && *x->p == '|') {
        x->p++;
        js_printf(e, "| ");
        if (rx_seq(x, e))
            return -1;
    }
    return SEER_OK;
}

/* ---- entry point --------------------------------------------------------------------------------- */

/* A string matching `pattern`. JSON Schema searches for the pattern anywhere in the string; the
   string written is always exactly one match (a subset: free text around an unanchored pattern
   would let a model wander and never reach the match). */
void js_pattern(struct js *j, const char *path, const char *pat, struct sb *e)
{
    size_t n = strlen(pat);
    bool a0 = n && pat[0] == '^', a1 = false;
    if (n - a0 > 0 && pat[n - 1] == '$') {
        size_t bs = 0; /* an escaped '$' is a character */
        while (bs + 2 <= n && pat[n - 2 - bs] == '\\')
            bs++;
        a1 = bs % 2 == 0;
    }
    struct rx x = {.j = j, .path = path, .p = pat + a0, .end = pat + n - a1};
    js_printf(e, "\"\\\"\" ( ");
    if (rx_alt(&x, e))
        return;
    if (x.p != x.end) {
        rx_fail(&x, "an unmatched ')'");
        return;
    }
    js_printf(e, ") \"\\\"\" ");
}

