/* scan.c — the answer's bytes into items (ocr/scan.h). Two readers, picked by what the answer
   holds: Qwen's HTML with data-bbox attributes, else JSON objects wherever they appear (in a
   ```json fence or not, with prose around them, truncated). Both are single passes with bounded
   nesting; neither trusts a length, a quote or a bracket to be closed. */
#include "ocr/scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/utf8.h"
#include "core/util.h"

/* JSON objects nested deeper than this are not looked into (each level rescans its object once,
   so the cost is O(length x depth)); HTML elements with boxes open at once, likewise. */
#define MAX_NEST 16

int ocr_is_space(uint32_t cp)
{
    if (cp == ' ' || (cp >= 9 && cp <= 13) || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
        return 1;
    return cp >= 0x80 && cp <= 0x10FFFF && utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ZS;
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* ---- decoded text with its raw byte ranges --------------------------------------------------- */

static int buf_room(ocr_buf *o, size_t more)
{
    if (o->oom)
        return 0;
    if (o->cap - o->n >= more)
        return 1;
    size_t cap = o->cap ? o->cap : 256;
    while (cap - o->n < more) {
        if (cap > SIZE_MAX / 2 / sizeof(size_t))
            return o->oom = 1, 0;
        cap *= 2;
    }
    /* each array is kept as soon as it grows, so a failure later leaves them consistent at o->cap */
    char *b = seer_realloc(o->b, cap);
    if (b)
        o->b = b;
    size_t *r0 = b ? seer_realloc(o->r0, cap * sizeof *r0) : NULL;
    if (r0)
        o->r0 = r0;
    size_t *r1 = r0 ? seer_realloc(o->r1, cap * sizeof *r1) : NULL;
    if (!r1)
        return o->oom = 1, 0;
    o->r1 = r1;
    o->cap = cap;
    return 1;
}

static void buf_free(ocr_buf *o)
{
    seer_free(o->b);
    seer_free(o->r0);
    seer_free(o->r1);
    memset(o, 0, sizeof *o);
}

/* Appends cp, made from raw bytes [r0, r1). What the page's writers cannot carry becomes U+FFFD:
   NUL (the texts are C strings), controls other than tab and line breaks, and U+FFFE/U+FFFF and
   surrogates (not characters in XML, which hOCR and ALTO are). */
static void put_cp(ocr_buf *o, uint32_t cp, size_t r0, size_t r1)
{
    if (cp == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        cp = 0xFFFD;
    char e[4];
    size_t k = utf8_encode(cp, e);
    if (!buf_room(o, k))
        return;
    for (size_t i = 0; i < k; i++, o->n++) {
        o->b[o->n] = e[i];
        o->r0[o->n] = r0;
        o->r1[o->n] = r1;
    }
}

/* Owes a separator before the next character: a line break wins over a space; none is written
   at the start of a buffer. */
static void owe(ocr_buf *o, char sep)
{
    if (sep == '\n' || (sep && !o->pend))
        o->pend = sep;
}

static void put(ocr_buf *o, uint32_t cp, size_t r0, size_t r1)
{
    if (o->pend && o->n)
        put_cp(o, (uint8_t)o->pend, r0, r0);
    o->pend = 0;
    put_cp(o, cp, r0, r1);
}

static void append(ocr_buf *to, const ocr_buf *from)
{
    if (from->oom) {
        to->oom = 1;
        return;
    }
    if (!from->n)
        return;
    if (to->pend && to->n)
        put_cp(to, (uint8_t)to->pend, from->r0[0], from->r0[0]);
    to->pend = 0;
    if (!buf_room(to, from->n))
        return;
    memcpy(to->b + to->n, from->b, from->n);
    memcpy(to->r0 + to->n, from->r0, from->n * sizeof *from->r0);
    memcpy(to->r1 + to->n, from->r1, from->n * sizeof *from->r1);
    to->n += from->n;
}

/* The code point at t[p] (p < n) into *cp, U+FFFD for a maximal invalid subpart; its length. */
static size_t next_cp(const char *t, size_t n, size_t p, uint32_t *cp)
{
    size_t full;
    size_t k = utf8_subpart(t + p, n - p, &full, cp);
    if (k != full)
        *cp = 0xFFFD;
    return k;
}

static void put_raw(ocr_buf *o, const char *t, size_t a, size_t b)
{
    uint32_t cp;
    for (size_t k; a < b; a += k) {
        k = next_cp(t, b, a, &cp);
        put(o, cp, a, a + k);
    }
}

static int visible(const ocr_buf *o)
{
    uint32_t cp;
    for (size_t p = 0, k; p < o->n; p += k) {
        k = next_cp(o->b, o->n, p, &cp);
        if (!ocr_is_space(cp))
            return 1;
    }
    return 0;
}

/* Reserves the next item (its text is filled in later); index or SIZE_MAX when out of memory. */
static size_t add_item(ocr_scan *s, seer_box box)
{
    if (!seer_grow(&s->items, &s->cap_items, s->n_items + 1, sizeof *s->items, 16)) {
        s->oom = 1;
        return SIZE_MAX;
    }
    s->items[s->n_items] = (ocr_item){.off = s->dec.n, .len = 0, .box = box};
    return s->n_items++;
}

/* Moves text into the item just reserved, or (no box) onto its own line of the box-less text. */
static void place(ocr_scan *s, size_t item, const ocr_buf *text)
{
    if (item == SIZE_MAX) {
        owe(&s->loose, '\n');
        append(&s->loose, text);
        return;
    }
    s->items[item].off = s->dec.n;
    append(&s->dec, text);
    s->items[item].len = s->dec.n - s->items[item].off;
}

/* ---- numbers ----------------------------------------------------------------------------------- */

/* A decimal number at t[p..e) (JSON's form, a leading '+' allowed) into *v; its length, 0 when
   there is none. Not strtod: that follows the process's locale, and a caller's LC_NUMERIC with a
   decimal comma would lose every box. Exact for integers and short decimals (m / 10^k with both
   exact), which is what models write; huge exponents give inf or 0, which clamping handles. */
static size_t read_number(const char *t, size_t e, size_t p, double *v)
{
    size_t q = p;
    int neg = 0;
    if (q < e && (t[q] == '-' || t[q] == '+'))
        neg = t[q++] == '-';
    double m = 0;
    int digits = 0, scale = 0;
    for (; q < e && is_digit(t[q]); q++, digits++)
        if (digits < 18)
            m = m * 10 + (t[q] - '0');
        else
            scale++; /* digits past 18 only scale: far more precision than a pixel needs */
    if (q < e && t[q] == '.')
        for (q++; q < e && is_digit(t[q]); q++, digits++)
            if (digits < 18)
                m = m * 10 + (t[q] - '0'), scale--;
    if (!digits)
        return 0;
    if (q < e && (t[q] == 'e' || t[q] == 'E')) {
        size_t z = q + 1;
        int eneg = 0, ex = 0;
        if (z < e && (t[z] == '-' || t[z] == '+'))
            eneg = t[z++] == '-';
        if (z < e && is_digit(t[z])) {
            for (; z < e && is_digit(t[z]); z++)
                ex = ex < 10000 ? ex * 10 + (t[z] - '0') : ex;
            scale += eneg ? -ex : ex;
            q = z;
        }
    }
    double r = m == 0 ? 0 : scale >= 0 ? m * pow(10, scale) : m / pow(10, -scale); /* 0e999: not 0 * inf */
    *v = neg ? -r : r;
    return q - p;
}

/* Four numbers separated by spaces or commas (data-bbox="x1 y1 x2 y2"). */
static int four_numbers(const char *t, size_t p, size_t e, double v[4])
{
    int k = 0;
    while (p < e) {
        if (is_ws(t[p]) || t[p] == ',') {
            p++;
            continue;
        }
        size_t len = k < 4 ? read_number(t, e, p, &v[k]) : 0;
        if (!len)
            return 0;
        k++;
        p += len;
    }
    return k == 4;
}

/* ---- JSON -------------------------------------------------------------------------------------- */

/* The closing quote of the string opened at t[p] (a JSON '"' or a Python-style '\''), or n. */
static size_t find_quote(const char *t, size_t n, size_t p)
{
    char q = t[p];
    for (p++; p < n; p++) {
        if (t[p] == '\\')
            p++;
        else if (t[p] == q)
            return p;
    }
    return n;
}

/* The '}' that closes the object at t[p], or n (truncated). */
static size_t match_brace(const char *t, size_t n, size_t p)
{
    size_t depth = 0;
    while (p < n) {
        char c = t[p];
        if (c == '"' || c == '\'') {
            p = find_quote(t, n, p) + 1;
            continue;
        }
        if (c == '{')
            depth++;
        else if (c == '}' && --depth == 0)
            return p;
        p++;
    }
    return n;
}

/* Past the value at t[p]: at the ',' or closing bracket that ends it, or e. */
static size_t skip_value(const char *t, size_t e, size_t p)
{
    size_t depth = 0;
    while (p < e) {
        char c = t[p];
        if (c == '"' || c == '\'') {
            p = find_quote(t, e, p) + 1;
            if (!depth)
                return MIN(p, e);
            continue;
        }
        if (c == '[' || c == '{')
            depth++;
        else if (c == ']' || c == '}') {
            if (!depth)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (c == ',' && !depth)
            return p;
        p++;
    }
    return e;
}

/* A box value at t[p]: 4 numbers, flat or nested ([[x1, y1], [x2, y2]]), or 8 (a quadrilateral's
   corners, whose bounding box is taken). Anything else in it (a string, null) leaves no box. */
static size_t read_box(const char *t, size_t e, size_t p, double v[4], int *ok)
{
    *ok = 0;
    if (p >= e || t[p] != '[')
        return skip_value(t, e, p);
    double a[8];
    int k = 0, bad = 0;
    size_t depth = 0;
    while (p < e) {
        char c = t[p];
        size_t len;
        if (c == '[')
            depth++, p++;
        else if (c == ']') {
            p++;
            if (--depth == 0)
                break;
        } else if (c == ',' || is_ws(c))
            p++;
        else if (k < 8 && (len = read_number(t, e, p, &a[k])) > 0)
            k++, p += len;
        else {
            bad = 1;
            size_t q = skip_value(t, e, p);
            p = q > p ? q : p + 1;
        }
    }
    if (bad || depth || (k != 4 && k != 8))
        return p;
    if (k == 4) {
        memcpy(v, a, sizeof(double) * 4);
    } else {
        v[0] = fmin(fmin(a[0], a[2]), fmin(a[4], a[6]));
        v[1] = fmin(fmin(a[1], a[3]), fmin(a[5], a[7]));
        v[2] = fmax(fmax(a[0], a[2]), fmax(a[4], a[6]));
        v[3] = fmax(fmax(a[1], a[3]), fmax(a[5], a[7]));
    }
    *ok = 1;
    return p;
}

static int hex4(const char *t, size_t e, size_t p, uint32_t *u)
{
    if (p + 4 > e)
        return 0;
    *u = 0;
    for (size_t i = p; i < p + 4; i++) {
        char c = lower(t[i]);
        int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        *u = *u * 16 + (uint32_t)d;
    }
    return 1;
}

/* A JSON string's contents t[p..e) (between its quotes) decoded into o. Each character keeps the
   raw bytes that wrote it, an escape all of its bytes; an unknown escape is its character. */
static void json_decode(ocr_buf *o, const char *t, size_t p, size_t e)
{
    while (p < e) {
        uint32_t cp, lo;
        size_t k;
        if (t[p] != '\\' || p + 1 >= e) {
            k = next_cp(t, e, p, &cp);
        } else {
            k = 2;
            switch (t[p + 1]) {
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            /* \b and \f are their control characters, which put_cp makes U+FFFD as it does the
               same bytes written raw: an answer's text does not depend on how it was escaped */
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'u':
                if (!hex4(t, e, p + 2, &cp)) {
                    cp = 'u';
                    break;
                }
                k = 6;
                if (cp >= 0xD800 && cp < 0xDC00 && p + 12 <= e && t[p + 6] == '\\' && t[p + 7] == 'u' &&
                    hex4(t, e, p + 8, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    k = 12;
                }
                break; /* a lone surrogate becomes U+FFFD in put_cp */
            default:
                k = 1 + next_cp(t, e, p + 1, &cp);
            }
        }
        put(o, cp, p, p + k);
        p += k;
    }
}

enum { KEY_OTHER, KEY_BOX, KEY_TEXT };

/* Which key: a box, a text (rank = its precedence, lower wins), or another. */
static int key_kind(const char *k, size_t n, int *rank)
{
    static const char *const boxes[] = {"bbox_2d", "bbox"};
    static const char *const texts[] = {"text_content", "text", "content", "label"};
    for (size_t i = 0; i < ARRAY_LEN(boxes); i++)
        if (n == strlen(boxes[i]) && !memcmp(k, boxes[i], n))
            return KEY_BOX;
    for (size_t i = 0; i < ARRAY_LEN(texts); i++)
        if (n == strlen(texts[i]) && !memcmp(k, texts[i], n))
            return *rank = (int)i, KEY_TEXT;
    return KEY_OTHER;
}

/* The object t[a] == '{' .. t[e] == '}': 1 when it is an item (it has a box or a text key),
   placed or counted as dropped; 0 when it is something else (maybe a wrapper of items). Keys may
   be quoted either way or bare, and trailing commas are fine: Qwen2.5-VL's recorded answers have
   them. A malformed member ends the reading, keeping what was read before it. */
static int read_object(ocr_scan *s, const char *t, size_t a, size_t e)
{
    double v[4] = {0};
    int have_box = 0, box_ok = 0, have_text = 0, rank = 0, best = 99;
    size_t ts = 0, te = 0;
    size_t p = a + 1;
    while (p < e) {
        while (p < e && (is_ws(t[p]) || t[p] == ','))
            p++;
        if (p >= e)
            break;
        size_t ks = p, ke;
        if (t[p] == '"' || t[p] == '\'') {
            ke = find_quote(t, e, p);
            if (ke >= e)
                break;
            ks = p + 1;
            p = ke + 1;
        } else if (is_alpha(t[p]) || t[p] == '_') {
            while (p < e && (is_alpha(t[p]) || is_digit(t[p]) || t[p] == '_'))
                p++;
            ke = p;
        } else
            break;
        while (p < e && is_ws(t[p]))
            p++;
        if (p >= e || t[p] != ':')
            break;
        for (p++; p < e && is_ws(t[p]);)
            p++;
        int kind = key_kind(t + ks, ke - ks, &rank);
        if (kind == KEY_BOX && !have_box) {
            have_box = 1;
            p = read_box(t, e, p, v, &box_ok);
        } else if (kind == KEY_TEXT && rank < best && p < e && (t[p] == '"' || t[p] == '\'')) {
            size_t q = find_quote(t, e, p);
            if (q >= e)
                break;
            have_text = 1, best = rank, ts = p + 1, te = q;
            p = q + 1;
        } else {
            have_text |= kind == KEY_TEXT; /* a text key whose value is not a string */
            p = skip_value(t, e, p);
        }
    }
    if (!have_box && !have_text)
        return 0;
    s->tmp.n = 0;
    s->tmp.pend = 0;
    if (best < 99)
        json_decode(&s->tmp, t, ts, te);
    if (!visible(&s->tmp)) { /* a box without text says nothing a page can show */
        s->n_dropped++;
        return 1;
    }
    seer_box box;
    place(s, box_ok && ocr_map_box(s->geo, v, &box) ? add_item(s, box) : SIZE_MAX, &s->tmp);
    return 1;
}

/* Whether the '{' at t[p] opens an object rather than being prose (LaTeX's \frac{1}{2}): a key's
   quote, a bare key and its ':', or '}' follows, or nothing (an answer cut just after it). */
static int opens_object(const char *t, size_t e, size_t p)
{
    for (p++; p < e && is_ws(t[p]);)
        p++;
    if (p >= e || t[p] == '"' || t[p] == '\'' || t[p] == '}')
        return 1;
    if (!is_alpha(t[p]) && t[p] != '_')
        return 0;
    while (p < e && (is_alpha(t[p]) || is_digit(t[p]) || t[p] == '_'))
        p++;
    while (p < e && is_ws(t[p]))
        p++;
    return p >= e || t[p] == ':';
}

static int punct_only(const char *t, size_t a, size_t b)
{
    for (; a < b; a++)
        if (!is_ws(t[a]) && !strchr("[]{},`", t[a]))
            return 0;
    return 1;
}

/* A Markdown fence line t[a..b) (trimmed): ``` and at most a language name, then nothing but the
   array's punctuation ("```json [" opens the fence and the array at once). */
static int fence_line(const char *t, size_t a, size_t b)
{
    if (b - a < 3 || memcmp(t + a, "```", 3))
        return 0;
    for (a += 3; a < b && (is_alpha(t[a]) || is_digit(t[a]) || strchr("_+-", t[a]));)
        a++;
    return punct_only(t, a, b);
}

/* The next line of t[*a..b) trimmed into [*x, *y); *a moves past it. */
static void next_line(const char *t, size_t *a, size_t b, size_t *x, size_t *y)
{
    size_t eol = *a;
    while (eol < b && t[eol] != '\n' && t[eol] != '\r')
        eol++;
    *x = *a, *y = eol;
    while (*x < *y && is_ws(t[*x]))
        (*x)++;
    while (*y > *x && is_ws(t[*y - 1]))
        (*y)--;
    *a = eol + 1;
}

/* Whether a line is JSON's structure rather than text: brackets and commas only, or a fence. */
static int structure_line(const char *t, size_t x, size_t y) { return punct_only(t, x, y) || fence_line(t, x, y); }

static int only_structure(const char *t, size_t a, size_t b)
{
    size_t x, y;
    while (a < b) {
        next_line(t, &a, b, &x, &y);
        if (!structure_line(t, x, y))
            return 0;
    }
    return 1;
}

/* Text outside the objects, t[a..b), to the box-less text, line by line as written (trimmed),
   except fence lines. Between objects (`between`), the array's brackets and commas around them
   and lines of nothing else are not text. An answer with no object at all is plain text and keeps
   every line, unless all it holds is that structure (an empty array: "[]" in a fence or not). */
static void prose(ocr_scan *s, const char *t, size_t a, size_t b, int between)
{
    size_t x, y;
    if (between) {
        while (b > a && (is_ws(t[b - 1]) || t[b - 1] == '[' || t[b - 1] == ','))
            b--;
        while (a < b && (is_ws(t[a]) || t[a] == ']' || t[a] == ','))
            a++;
    } else if (only_structure(t, a, b)) {
        return;
    }
    while (a < b) {
        next_line(t, &a, b, &x, &y);
        if (y > x && (between ? !structure_line(t, x, y) : !fence_line(t, x, y))) {
            owe(&s->loose, '\n');
            put_raw(&s->loose, t, x, y);
        }
    }
}

/* The objects in t[a..e), `depth` objects deep: items are read, other objects are looked into for
   items (a wrapper such as {"lines": [...]}), and one that holds none, or is cut off before its
   end with none inside, counts as dropped. Returns how many items were found. */
static size_t scan_objects(ocr_scan *s, const char *t, size_t a, size_t e, int depth)
{
    size_t found = 0, gap = a, p = a;
    while (p < e) {
        if (depth && (t[p] == '"' || t[p] == '\'')) { /* inside an object, a string's braces are text */
            p = find_quote(t, e, p) + 1;
            continue;
        }
        if (t[p] != '{' || !opens_object(t, e, p)) {
            p++;
            continue;
        }
        size_t close = match_brace(t, e, p);
        if (!depth)
            prose(s, t, gap, p, 1);
        if (close < e && read_object(s, t, p, close)) {
            found++;
        } else {
            size_t inner = depth < MAX_NEST ? scan_objects(s, t, p + 1, close, depth + 1) : 0;
            found += inner;
            s->n_dropped += !inner;
        }
        p = gap = close < e ? close + 1 : e;
    }
    if (!depth)
        prose(s, t, gap, e, gap > a); /* no object seen: the answer is plain text */
    return found;
}

/* ---- HTML -------------------------------------------------------------------------------------- */

typedef struct html_open {
    char name[16];
    size_t item;  /* its reserved item */
    int same;     /* open elements of the same name inside it, whose end tags are not its own */
    ocr_buf text;
} html_open;

/* An entity at t[p] == '&' into *cp: its length, or 0 when the '&' is a literal one. */
static size_t entity(const char *t, size_t n, size_t p, uint32_t *cp)
{
    static const struct { const char *name; uint32_t cp; } named[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}, {"nbsp", 0xA0}};
    size_t q = p + 1;
    if (q < n && t[q] == '#') {
        int hex = ++q < n && lower(t[q]) == 'x';
        q += hex;
        uint32_t v = 0;
        int d = 0;
        for (; q < n && d < 8; q++, d++) {
            char c = lower(t[q]);
            int x = is_digit(c) ? c - '0' : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (x < 0)
                break;
            v = v * (hex ? 16 : 10) + (uint32_t)x;
        }
        if (!d || q >= n || t[q] != ';')
            return 0;
        *cp = v; /* 0, surrogates and values past U+10FFFF become U+FFFD in put_cp */
        return q + 1 - p;
    }
    for (size_t i = 0; i < ARRAY_LEN(named); i++) {
        size_t len = strlen(named[i].name);
        if (q + len < n && !memcmp(t + q, named[i].name, len) && t[q + len] == ';')
            return *cp = named[i].cp, len + 2;
    }
    return 0;
}

/* What an element's tags put between texts: a line break for block elements, a space between table
   cells, nothing for inline ones (<b>, <span>, <sub> ...). */
static char separator(const char *name)
{
    static const char *const blocks[] = {"p", "div", "br", "li", "ul", "ol", "tr", "table", "thead", "tbody",
                                         "h1", "h2", "h3", "h4", "h5", "h6", "html", "body", "section",
                                         "header", "footer", "article", "blockquote", "pre", "title", "caption",
                                         "dt", "dd", "hr", "figure", "figcaption", "address", "nav", "main"};
    if (!strcmp(name, "td") || !strcmp(name, "th"))
        return ' ';
    for (size_t i = 0; i < ARRAY_LEN(blocks); i++)
        if (!strcmp(name, blocks[i]))
            return '\n';
    return 0;
}

static int is_void(const char *name)
{
    static const char *const voids[] = {"img", "br", "hr", "meta", "link", "input", "area", "base", "col", "wbr", "source"};
    for (size_t i = 0; i < ARRAY_LEN(voids); i++)
        if (!strcmp(name, voids[i]))
            return 1;
    return 0;
}

/* The first w at or after t[p], or n (memmem is not C11; w is a few bytes, so this is linear). */
static size_t find(const char *t, size_t n, size_t p, const char *w)
{
    size_t len = strlen(w);
    for (; p + len <= n; p++)
        if (t[p] == w[0] && !memcmp(t + p, w, len))
            return p;
    return n;
}

static int starts_ci(const char *t, size_t n, size_t p, const char *w)
{
    size_t len = strlen(w);
    if (p + len > n)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (lower(t[p + i]) != w[i])
            return 0;
    return 1;
}

static void close_box(ocr_scan *s, html_open *st, size_t *depth)
{
    html_open *o = &st[--*depth];
    place(s, o->item, &o->text);
    buf_free(&o->text);
    owe(*depth ? &st[*depth - 1].text : &s->loose, '\n');
}

/* A tag at t[p] == '<' (t[p+1] a letter, or '/' and a letter); returns the position after it, or
   n when the answer ends inside it. */
static size_t html_tag(ocr_scan *s, const char *t, size_t n, size_t p, html_open *st, size_t *depth)
{
    ocr_buf *sink = *depth ? &st[*depth - 1].text : &s->loose;
    int closing = t[p + 1] == '/';
    size_t q = p + 1 + (size_t)closing;
    char name[16];
    size_t nl = 0;
    for (; q < n && (is_alpha(t[q]) || is_digit(t[q]) || t[q] == '-' || t[q] == ':'); q++)
        if (nl < sizeof name - 1)
            name[nl++] = lower(t[q]);
    name[nl] = 0;
    size_t bs = 0, be = 0;
    int have_bbox = 0, self = 0;
    while (q < n && t[q] != '>') { /* attributes: a '>' in a quoted value does not end the tag */
        if (t[q] == '"' || t[q] == '\'') {
            q = find_quote(t, n, q) + 1;
        } else if (starts_ci(t, n, q, "data-bbox") && is_ws(t[q - 1])) {
            for (q += 9; q < n && is_ws(t[q]);)
                q++;
            if (q >= n || t[q] != '=')
                continue;
            for (q++; q < n && is_ws(t[q]);)
                q++;
            if (q < n && (t[q] == '"' || t[q] == '\'')) {
                bs = q + 1, be = find_quote(t, n, q);
                q = be + 1;
            } else {
                for (bs = q; q < n && !is_ws(t[q]) && t[q] != '>';)
                    q++;
                be = q;
            }
            have_bbox = 1;
        } else {
            self = t[q] == '/' && q + 1 < n && t[q + 1] == '>';
            q++;
        }
    }
    if (q >= n)
        return n;
    if (closing) {
        if (*depth && !strcmp(st[*depth - 1].name, name) && !st[*depth - 1].same)
            close_box(s, st, depth);
        else {
            if (*depth && !strcmp(st[*depth - 1].name, name))
                st[*depth - 1].same--;
            owe(sink, separator(name));
        }
        return q + 1;
    }
    if (!strcmp(name, "script") || !strcmp(name, "style")) { /* code, not page text */
        size_t z = q;
        while (z < n && !(t[z] == '<' && z + 1 < n && t[z + 1] == '/' && starts_ci(t, n, z + 2, name)))
            z++;
        return z;
    }
    double v[4];
    seer_box box;
    if (have_bbox) {
        owe(sink, '\n');
        /* an element with an unusable box is only a break: its text stays where it is */
        if (!self && !is_void(name) && *depth < MAX_NEST && four_numbers(t, bs, MIN(be, n), v) &&
            ocr_map_box(s->geo, v, &box)) {
            size_t item = add_item(s, box);
            if (item != SIZE_MAX) {
                html_open *o = &st[(*depth)++];
                memset(o, 0, sizeof *o);
                memcpy(o->name, name, nl + 1);
                o->item = item;
            }
        }
        return q + 1;
    }
    owe(sink, separator(name));
    if (*depth && !self && !is_void(name) && !strcmp(st[*depth - 1].name, name))
        st[*depth - 1].same++;
    return q + 1;
}

/* Qwen's HTML: each element with data-bbox="x1 y1 x2 y2" is an item with the text inside it
   (tags stripped, entities decoded, whitespace collapsed as a browser does) less that of the
   elements with boxes inside it, which are items of their own, in the order their tags open. */
static void html_scan(ocr_scan *s, const char *t, size_t n)
{
    html_open st[MAX_NEST];
    size_t depth = 0, p = 0;
    while (p < n) {
        ocr_buf *sink = depth ? &st[depth - 1].text : &s->loose;
        char c = t[p];
        uint32_t cp;
        size_t k;
        if (c == '<' && p + 2 < n && t[p + 1] == '!' && t[p + 2] == '-') {
            p = find(t, n, p, "-->");
            p = p < n ? p + 3 : n;
        } else if (c == '<' && p + 1 < n && (t[p + 1] == '!' || t[p + 1] == '?')) {
            const char *x = memchr(t + p, '>', n - p);
            p = x ? (size_t)(x - t) + 1 : n;
        } else if (c == '<' && p + 1 < n && (is_alpha(t[p + 1]) || (t[p + 1] == '/' && p + 2 < n && is_alpha(t[p + 2])))) {
            p = html_tag(s, t, n, p, st, &depth);
        } else if (c == '<' && (p + 1 == n || (p + 2 == n && t[p + 1] == '/'))) {
            p = n; /* the answer ends where a tag began */
        } else if (!depth && c == '`' && p + 2 < n && t[p + 1] == '`' && t[p + 2] == '`') {
            while (p < n && t[p] != '\n') /* a ```html fence line */
                p++;
        } else if (c == '&' && (k = entity(t, n, p, &cp)) > 0) {
            put(sink, cp, p, p + k);
            p += k;
        } else {
            k = next_cp(t, n, p, &cp);
            if (cp < 0x80 && is_ws((char)cp))
                owe(sink, ' ');
            else
                put(sink, cp, p, p + k);
            p += k;
        }
    }
    while (depth) /* an answer cut off inside elements: what they hold so far is kept */
        close_box(s, st, &depth);
}

/* ---- the answer ------------------------------------------------------------------------------- */

int ocr_scan_answer(const char *text, size_t n, const seer_ocr_geometry *geo, ocr_scan *s)
{
    s->geo = geo;
    if (find(text, n, 0, "data-bbox") < n)
        html_scan(s, text, n);
    else
        scan_objects(s, text, 0, n, 0);
    return s->oom || s->dec.oom || s->loose.oom || s->tmp.oom ? SEER_ENOMEM : SEER_OK;
}

void ocr_scan_free(ocr_scan *s)
{
    buf_free(&s->dec);
    buf_free(&s->loose);
    buf_free(&s->tmp);
    seer_free(s->items);
    memset(s, 0, sizeof *s);
}
