/* json_schema.c — JSON schema → GBNF (see json_schema.h for what is supported and refused).
   Each subschema becomes one rule. Objects write their properties in the schema's order with a
   pair of rule chains (F: nothing written yet, A: something written, so a comma is due) that
   place commas right whatever optional properties are left out. Integer bounds become decimal
   digit-range rules (the ranges split by digit count, then by leading digit); number bounds add
   fractions only where k.xxx or −k.xxx stays inside the bounds. Patterns are translated from the
   regex subset to grammar expressions over the string's JSON-escaped text (lm/json_schema_regex.c).
   The grammar text itself is written by lm/json_schema_text.c.
   Divisions: common rules · numbers · schemas · entry points. */
#include "lm/json_schema.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "lm/json_schema_regex.h"
#include "lm/json_schema_text.h"

#define NUM_MAX 999999999999999.0     /* 15 digits: exact in a double, and a finite number of tokens */

/* ---- common rules ------------------------------------------------------------------------------- */

/* Strings hold one JSON character per `char` (an escape is one character, as the validator counts
   them); \u escapes avoid surrogates, so a pair never turns two counted characters into one. */
#define COMMON_RULES                                                                                     \
    "ws ::= \"\" | \" \" | \"\\n\" [ \\t]{0,20}\n"                                                        \
    "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"                     \
    "object ::= \"{\" ws ( string ws \":\" ws value ws ( \",\" ws string ws \":\" ws value ws )* )? \"}\"\n" \
    "array ::= \"[\" ws ( value ws ( \",\" ws value ws )* )? \"]\"\n"                                    \
    "string ::= \"\\\"\" char* \"\\\"\"\n"                                                                \
    "char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" hex4 )\n"                          \
    "hex4 ::= [0-9a-cA-Ce-fE-F] hex hex hex | [dD] [0-7] hex hex\n"                                      \
    "hex ::= [0-9a-fA-F]\n"                                                                              \
    "number ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,14} ) ( \".\" [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,2} )?\n" \
    "integer ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,14} )\n"

const char *json_schema_any_value(void) { return "root ::= value\n" COMMON_RULES; }

/* ---- numbers ------------------------------------------------------------------------------------- */

/* n-digit strings from l to h (same length, l ≤ h, leading zeros allowed). */
static void digits_between(struct sb *e, const char *l, const char *h, int n)
{
    if (n == 0)
        return;
    if (l[0] == h[0]) {
        js_printf(e, "\"%c\" ", l[0]);
        digits_between(e, l + 1, h + 1, n - 1);
        return;
    }
    bool l0 = true, h9 = true;
    for (int i = 1; i < n; i++)
        l0 &= l[i] == '0', h9 &= h[i] == '9';
    char nines[20], zeros[20];
    memset(nines, '9', sizeof nines), memset(zeros, '0', sizeof zeros);
    char from = l[0], to = h9 ? h[0] : (char)(h[0] - 1);
    const char *sep = "";
    js_printf(e, "( ");
    if (!l0) {
        js_printf(e, "\"%c\" ", l[0]);
        digits_between(e, l + 1, nines, n - 1);
        from++;
        sep = "| ";
    }
    if (from <= to) {
        js_printf(e, "%s[%c-%c] ", sep, from, to);
        if (n > 1)
            js_printf(e, "[0-9]{%d} ", n - 1);
        sep = "| ";
    }
    if (!h9) {
        js_printf(e, "%s\"%c\" ", sep, h[0]);
        digits_between(e, zeros, h + 1, n - 1);
    }
    js_printf(e, ") ");
}

static int n_digits(int64_t x)
{
    int d = 1;
    while (x >= 10)
        x /= 10, d++;
    return d;
}

/* Decimal integers in [a, b], 0 ≤ a ≤ b ≤ NUM_MAX, without leading zeros: one alternative per
   digit count. */
static void nonneg_range(struct sb *e, int64_t a, int64_t b)
{
    int64_t p = 1;
    const char *sep = "";
    js_printf(e, "( ");
    for (int d = 1; d <= n_digits(b); d++, p *= 10) {
        int64_t lo = d == 1 ? 0 : p, hi = p * 10 - 1;
        lo = lo > a ? lo : a, hi = hi < b ? hi : b;
        if (lo > hi)
            continue;
        char l[40], h[40];
        snprintf(l, sizeof l, "%0*lld", d & 31, (long long)lo);
        snprintf(h, sizeof h, "%0*lld", d & 31, (long long)hi);
        js_printf(e, "%s", sep);
        digits_between(e, l, h, d);
        sep = "| ";
    }
    js_printf(e, ") ");
}

/* Integers in [lo, hi] (−0 is never written). */
static void int_range(struct sb *e, int64_t lo, int64_t hi)
{
    js_printf(e, "( ");
    if (lo < 0) {
        js_printf(e, "\"-\" ");
        nonneg_range(e, hi < 0 ? -hi : 1, -lo);
    }
    if (hi >= 0) {
        js_printf(e, "%s", lo < 0 ? "| " : "");
        nonneg_range(e, lo > 0 ? lo : 0, hi);
    }
    js_printf(e, ") ");
}

/* The bounds as integers: non-integer or exclusive bounds move inwards (k.xxx fractions are added
   for numbers separately). SEER_OK with *any false when the schema has no bound. */
static int bounds(struct js *j, const json_t *s, const char *path, bool *any, int64_t *lo, int64_t *hi)
{
    double l = -NUM_MAX, h = NUM_MAX;
    const json_t *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
    const json_t *xmn = json_object_get(s, "exclusiveMinimum"), *xmx = json_object_get(s, "exclusiveMaximum");
    *any = mn || mx || json_is_number(xmn) || json_is_number(xmx);
    if ((mn && !json_is_number(mn)) || (mx && !json_is_number(mx)) ||
        (xmn && !json_is_number(xmn) && !json_is_boolean(xmn)) || (xmx && !json_is_number(xmx) && !json_is_boolean(xmx)))
        return js_refuse(j, path, "minimum/maximum/exclusiveMinimum/exclusiveMaximum must be numbers");
    if (mn)
        l = json_is_true(xmn) ? floor(json_number_value(mn)) + 1 : ceil(json_number_value(mn));
    if (json_is_number(xmn))
        l = fmax(l, floor(json_number_value(xmn)) + 1);
    if (mx)
        h = json_is_true(xmx) ? ceil(json_number_value(mx)) - 1 : floor(json_number_value(mx));
    if (json_is_number(xmx))
        h = fmin(h, ceil(json_number_value(xmx)) - 1);
    if (l > NUM_MAX || h < -NUM_MAX)
        return js_refuse(j, path, "bounds beyond ±10^15 cannot be generated");
    l = fmax(l, -NUM_MAX), h = fmin(h, NUM_MAX);
    if (l > h)
        return js_refuse(j, path, "no integer lies within minimum/maximum (seer rounds non-integer bounds inwards)");
    *lo = (int64_t)l, *hi = (int64_t)h;
    return SEER_OK;
}

static void number_expr(struct js *j, const json_t *s, const char *path, bool integer, struct sb *e)
{
    bool any;
    int64_t lo = 0, hi = 0;
    if (bounds(j, s, path, &any, &lo, &hi))
        return;
    if (!any) {
        js_printf(e, integer ? "integer " : "number ");
        return;
    }
    js_printf(e, "( ");
    int_range(e, lo, hi);
    if (!integer) {
        /* k.xxx lies in [k, k+1): inside when lo ≤ k and k+1 ≤ hi; −m.xxx in (−m−1, −m]. */
        int64_t a = lo > 0 ? lo : 0, b = hi - 1;
        if (a <= b) {
            js_printf(e, "| ");
            nonneg_range(e, a, b);
            js_printf(e, "\".\" [0-9]{1,15} ");
        }
        int64_t ma = hi < 0 ? -hi : 0, mb = -lo - 1;
        if (mb >= 0 && ma <= mb) {
            js_printf(e, "| \"-\" ");
            nonneg_range(e, ma, mb);
            js_printf(e, "\".\" [0-9]{1,15} ");
        }
    }
    js_printf(e, ") ");
}

/* ---- schemas ------------------------------------------------------------------------------------- */

static const char *const annotations[] = {"$schema", "$id", "title", "description", "default", "examples",
                                          "$comment", "readOnly", "writeOnly", "deprecated", "$defs",
                                          "definitions", NULL};
static const char *const supported[] = {"type", "enum", "const", "properties", "required", "additionalProperties",
                                        "items", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
                                        "exclusiveMaximum", "minLength", "maxLength", "pattern", "anyOf", "allOf",
                                        "$ref", "uniqueItems", NULL};

static bool in_list(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (!strcmp(*l, k))
            return true;
    return false;
}

/* Keywords of s besides annotations and those in `allowed`: the first one, or NULL. */
static const char *other_keyword(const json_t *s, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        if (!in_list(annotations, k) && !in_list(allowed, k))
            return k;
    }
    return NULL;
}

static int new_rule_id(struct js *j) { return ++j->n_rule; }

static bool type_match(const json_t *v, const char *t)
{
    if (!strcmp(t, "string"))
        return json_is_string(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) || (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v));
    if (!strcmp(t, "number"))
        return json_is_number(v);
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v);
    if (!strcmp(t, "null"))
        return json_is_null(v);
    if (!strcmp(t, "object"))
        return json_is_object(v);
    return !strcmp(t, "array") && json_is_array(v);
}

static int gen(struct js *j, const json_t *s, const char *path, char name[32]);

/* enum / const: exactly the listed values, written as compact JSON (the validator compares values,
   so any spelling of the same value validates). */
static void enum_expr(struct js *j, const json_t *s, const char *path, struct sb *e)
{
    static const char *const ok[] = {"enum", "const", "type", NULL};
    const char *k = other_keyword(s, ok);
    const json_t *vals = json_object_get(s, "enum"), *cv = json_object_get(s, "const"), *type = json_object_get(s, "type");
    if (k) {
        char msg[160];
        snprintf(msg, sizeof msg, "'%s' next to enum/const is not supported", k);
        js_refuse(j, path, msg);
        return;
    }
    if (vals && cv) {
        js_refuse(j, path, "enum and const together are not supported");
        return;
    }
    json_t *one = cv ? json_pack("[O]", cv) : NULL;
    if (cv && !one) {
        j->rc = seer_err(SEER_ENOMEM, "no memory for the JSON schema");
        return;
    }
    if (cv)
        vals = one;
    if (!json_is_array(vals) || !json_array_size(vals)) {
        json_decref(one);
        js_refuse(j, path, "enum must be a non-empty array");
        return;
    }
    size_t i, n = 0;
    json_t *v;
    js_printf(e, "( ");
    json_array_foreach(vals, i, v) {
        bool fits = !type;
        if (json_is_string(type))
            fits = type_match(v, json_string_value(type));
        for (size_t t = 0; json_is_array(type) && t < json_array_size(type); t++)
            fits |= json_is_string(json_array_get(type, t)) && type_match(v, json_string_value(json_array_get(type, t)));
        if (!fits)
            continue;
        char *txt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!txt) {
            e->oom = true;
            break;
        }
        js_printf(e, "%s", n++ ? "| " : "");
        js_lit(e, txt, strlen(txt));
        free(txt);
    }
    js_printf(e, ") ");
    json_decref(one);
    if (!n)
        js_refuse(j, path, "no enum/const value has the schema's type");
}

static int64_t count_kw(struct js *j, const json_t *s, const char *path, const char *kw, int64_t dflt)
{
    const json_t *v = json_object_get(s, kw);
    if (!v)
        return dflt;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s must be a non-negative integer", kw);
        js_refuse(j, path, msg);
        return dflt;
    }
    return json_integer_value(v);
}

static void string_expr(struct js *j, const json_t *s, const char *path, struct sb *e)
{
    const json_t *pat = json_object_get(s, "pattern");
    int64_t mn = count_kw(j, s, path, "minLength", 0), mx = count_kw(j, s, path, "maxLength", -1);
    if (pat) {
        if (!json_is_string(pat))
            js_refuse(j, path, "pattern must be a string");
        else if (json_object_get(s, "minLength") || json_object_get(s, "maxLength"))
            js_refuse(j, path, "pattern together with minLength/maxLength is not supported");
        else
            js_pattern(j, path, json_string_value(pat), e);
        return;
    }
    if (mn > MAX_LEN)
        js_refuse(j, path, "minLength above 10000 is not supported");
    else if (mx >= 0 && mx < mn)
        js_refuse(j, path, "maxLength is below minLength");
    else if (mn == 0 && mx < 0)
        js_printf(e, "string ");
    else if (mx < 0)
        js_printf(e, "\"\\\"\" char{%lld,} \"\\\"\" ", (long long)mn);
    else
        js_printf(e, "\"\\\"\" char{%lld,%lld} \"\\\"\" ", (long long)mn, (long long)(mx < MAX_LEN ? mx : MAX_LEN));
}

static void array_expr(struct js *j, const json_t *s, const char *path, struct sb *e)
{
    const json_t *items = json_object_get(s, "items"), *uniq = json_object_get(s, "uniqueItems");
    int64_t mn = count_kw(j, s, path, "minItems", 0), mx = count_kw(j, s, path, "maxItems", -1);
    char item[32] = "value", sub[320];
    if (json_is_true(uniq) || (uniq && !json_is_boolean(uniq))) {
        js_refuse(j, path, "uniqueItems: true cannot be enforced while generating");
        return;
    }
    if (json_is_array(items)) {
        js_refuse(j, path, "items as an array (tuples) is not supported");
        return;
    }
    snprintf(sub, sizeof sub, "%s/items", path);
    if (items && gen(j, items, sub, item))
        return;
    if (mn > MAX_LEN || (mx >= 0 && mx < mn)) {
        js_refuse(j, path, mn > MAX_LEN ? "minItems above 10000 is not supported" : "maxItems is below minItems");
        return;
    }
    if (mx > MAX_LEN)
        mx = MAX_LEN;
    if (mx == 0) {
        js_printf(e, "\"[\" ws \"]\" ");
        return;
    }
    js_printf(e, "\"[\" ws %s%s ws ( \",\" ws %s ws )", mn == 0 ? "( " : "", item, item);
    int64_t lo = mn > 0 ? mn - 1 : 0;
    if (mx < 0)
        js_printf(e, "{%lld,} ", (long long)lo);
    else
        js_printf(e, "{%lld,%lld} ", (long long)lo, (long long)(mx - 1));
    js_printf(e, "%s\"]\" ", mn == 0 ? ")? " : "");
}

/* Properties in the schema's order. F_i: none written yet (the next one needs no comma);
   A_i: some written. An optional property either appears or its chain skips to i+1. */
static void object_expr(struct js *j, const json_t *s, const char *path, struct sb *e)
{
    const json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required");
    const json_t *addl = json_object_get(s, "additionalProperties");
    if ((props && !json_is_object(props)) || (req && !json_is_array(req))) {
        js_refuse(j, path, "properties must be an object and required an array");
        return;
    }
    if (addl && !json_is_boolean(addl)) {
        js_refuse(j, path, "additionalProperties as a schema is not supported (use true or false)");
        return;
    }
    size_t n_req = json_array_size(req), n = 0, cap = json_object_size(props) + n_req;
    struct prop {
        const char *key;
        char rule[32];
        bool required;
    } *pr = seer_calloc(cap ? cap : 1, sizeof *pr);
    if (!pr) {
        e->oom = true;
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v) {
        char sub[320];
        snprintf(sub, sizeof sub, "%s/properties/%s", path, k);
        pr[n].key = k;
        if (gen(j, v, sub, pr[n].rule))
            goto done;
        n++;
    }
    for (size_t i = 0; i < n_req; i++) {
        const char *rk = json_string_value(json_array_get(req, i));
        size_t f = 0;
        if (!rk) {
            js_refuse(j, path, "required must list strings");
            goto done;
        }
        while (f < n && strcmp(pr[f].key, rk))
            f++;
        if (f == n) { /* required but not described: any value, unless no other property may exist */
            if (json_is_false(addl)) {
                js_refuse(j, path, "a required property is not in properties while additionalProperties is false");
                goto done;
            }
            pr[n].key = rk;
            strcpy(pr[n].rule, "value");
            n++;
        }
        pr[f].required = true;
    }
    if (!n) {
        js_printf(e, json_is_false(addl) ? "\"{\" ws \"}\" " : "object ");
        goto done;
    }
    int id = new_rule_id(j);
    for (size_t i = 0; i < n; i++) {
        json_t *ks = json_string(pr[i].key);
        char *key = ks ? json_dumps(ks, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        json_decref(ks);
        if (!key) {
            e->oom = true;
            goto done;
        }
        char next_f[48] = "", next_a[48] = "";
        if (i + 1 < n) {
            snprintf(next_f, sizeof next_f, "o%d-f%zu", id, i + 1);
            snprintf(next_a, sizeof next_a, "o%d-a%zu", id, i + 1);
        }
        js_printf(&j->out, "o%d-f%zu ::= ", id, i);
        js_lit(&j->out, key, strlen(key));
        js_printf(&j->out, "ws \":\" ws %s ws %s", pr[i].rule, next_a);
        if (!pr[i].required)
            js_printf(&j->out, " | \"\" %s", next_f);
        js_printf(&j->out, "\n");
        if (i > 0) { /* A_0 would follow nothing: the object starts with F_0 */
            js_printf(&j->out, "o%d-a%zu ::= \",\" ws ", id, i);
            js_lit(&j->out, key, strlen(key));
            js_printf(&j->out, "ws \":\" ws %s ws %s", pr[i].rule, next_a);
            if (!pr[i].required)
                js_printf(&j->out, " | \"\" %s", next_a);
            js_printf(&j->out, "\n");
        }
        free(key);
    }
    js_printf(e, "\"{\" ws o%d-f0 \"}\" ", id);
done:
    free(pr);
}

static void type_expr(struct js *j, const json_t *s, const char *path, const char *t, struct sb *e)
{
    if (!strcmp(t, "null"))
        js_printf(e, "\"null\" ");
    else if (!strcmp(t, "boolean"))
        js_printf(e, "( \"true\" | \"false\" ) ");
    else if (!strcmp(t, "integer") || !strcmp(t, "number"))
        number_expr(j, s, path, t[0] == 'i', e);
    else if (!strcmp(t, "string"))
        string_expr(j, s, path, e);
    else if (!strcmp(t, "array"))
        array_expr(j, s, path, e);
    else if (!strcmp(t, "object"))
        object_expr(j, s, path, e);
    else
        js_refuse(j, path, "an unknown type");
}

/* The type a schema without "type" describes, from its keywords (a subset of what it accepts). */
static const char *implied_type(const json_t *s)
{
    static const char *const by_kw[][2] = {
        {"properties", "object"}, {"required", "object"}, {"additionalProperties", "object"},
        {"items", "array"}, {"minItems", "array"}, {"maxItems", "array"}, {"uniqueItems", "array"},
        {"minLength", "string"}, {"maxLength", "string"}, {"pattern", "string"},
        {"minimum", "number"}, {"maximum", "number"}, {"exclusiveMinimum", "number"}, {"exclusiveMaximum", "number"},
    };
    for (size_t i = 0; i < sizeof by_kw / sizeof by_kw[0]; i++)
        if (json_object_get(s, by_kw[i][0]))
            return by_kw[i][1];
    return NULL;
}

/* $ref: "#", "#/$defs/NAME" or "#/definitions/NAME" (names without '/' or '~' escapes). */
static int ref_rule(struct js *j, const json_t *s, const char *path, char name[32])
{
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    static const char *const only_ref[] = {"$ref", NULL};
    const json_t *target = NULL;
    if (other_keyword(s, only_ref))
        return js_refuse(j, path, "$ref next to other keywords is not supported");
    if (ref && !strcmp(ref, "#"))
        target = j->doc;
    else if (ref && !strncmp(ref, "#/$defs/", 8) && !strpbrk(ref + 8, "/~"))
        target = json_object_get(json_object_get(j->doc, "$defs"), ref + 8);
    else if (ref && !strncmp(ref, "#/definitions/", 14) && !strpbrk(ref + 14, "/~"))
        target = json_object_get(json_object_get(j->doc, "definitions"), ref + 14);
    if (!target)
        return js_refuse(j, path, "$ref must point to #, #/$defs/NAME or #/definitions/NAME of this schema");
    for (size_t i = 0; i < j->n_refs; i++)
        if (j->refs[i].schema == target)
            return snprintf(name, 32, "s%d", j->refs[i].rule), SEER_OK;
    if (j->n_refs == sizeof j->refs / sizeof j->refs[0])
        return js_refuse(j, path, "more than 256 $ref targets");
    /* Named before its body is generated, so a recursive reference finds it. */
    int id = new_rule_id(j);
    j->refs[j->n_refs].schema = target, j->refs[j->n_refs++].rule = id;
    char body[32];
    if (gen(j, target, ref, body))
        return j->rc;
    js_printf(&j->out, "s%d ::= %s\n", id, body);
    snprintf(name, 32, "s%d", id);
    return SEER_OK;
}

/* Emits a rule for schema s and writes its name to name[32]. */
static int gen(struct js *j, const json_t *s, const char *path, char name[32])
{
    struct sb e = {0};
    if (j->rc)
        return j->rc;
    if (json_is_true(s) || (json_is_object(s) && !other_keyword(s, (const char *const[]){NULL}))) {
        strcpy(name, "value");
        return SEER_OK;
    }
    if (json_is_false(s))
        return js_refuse(j, path, "the schema false accepts nothing");
    if (!json_is_object(s))
        return js_refuse(j, path, "a schema must be an object or a boolean");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        if (!in_list(annotations, k) && !in_list(supported, k)) {
            char msg[200];
            snprintf(msg, sizeof msg, "'%.60s' is not supported (seer refuses what it cannot enforce)", k);
            return js_refuse(j, path, msg);
        }
    }
    if (++j->depth > MAX_DEPTH)
        return js_refuse(j, path, "schemas nest deeper than 64");
    const json_t *any = json_object_get(s, "anyOf"), *all = json_object_get(s, "allOf");
    const json_t *type = json_object_get(s, "type");
    if (json_object_get(s, "$ref")) { /* depth keeps counting through references: chains nest too */
        int rc = ref_rule(j, s, path, name);
        j->depth--;
        return rc;
    }
    if (all) {
        static const char *const only_all[] = {"allOf", NULL};
        if (!json_is_array(all) || json_array_size(all) != 1 || other_keyword(s, only_all))
            return js_refuse(j, path, "allOf is supported only with exactly one schema and nothing beside it");
        char sub[320];
        snprintf(sub, sizeof sub, "%s/allOf/0", path);
        int rc = gen(j, json_array_get(all, 0), sub, name);
        j->depth--;
        return rc;
    }
    if (any) {
        static const char *const only_any[] = {"anyOf", NULL};
        if (!json_is_array(any) || !json_array_size(any) || other_keyword(s, only_any))
            return js_refuse(j, path, "anyOf must be a non-empty array with no other keyword beside it");
        size_t i;
        js_printf(&e, "( ");
        json_array_foreach(any, i, v) {
            char sub[320], alt[32];
            snprintf(sub, sizeof sub, "%s/anyOf/%zu", path, i);
            if (gen(j, v, sub, alt))
                break;
            js_printf(&e, "%s%s ", i ? "| " : "", alt);
        }
        js_printf(&e, ") ");
    } else if (json_object_get(s, "enum") || json_object_get(s, "const")) {
        enum_expr(j, s, path, &e);
    } else if (json_is_array(type)) {
        size_t i;
        if (!json_array_size(type))
            js_refuse(j, path, "type is an empty list");
        js_printf(&e, "( ");
        json_array_foreach(type, i, v) {
            if (!json_is_string(v)) {
                js_refuse(j, path, "type must be a string or a list of strings");
                break;
            }
            js_printf(&e, "%s", i ? "| " : "");
            type_expr(j, s, path, json_string_value(v), &e);
        }
        js_printf(&e, ") ");
    } else if (type && !json_is_string(type)) {
        js_refuse(j, path, "type must be a string or a list of strings");
    } else {
        const char *t = type ? json_string_value(type) : implied_type(s);
        if (t)
            type_expr(j, s, path, t, &e);
        else
            js_printf(&e, "value ");
    }
    j->depth--;
    if (!j->rc && e.oom)
        j->rc = seer_err(SEER_ENOMEM, "no memory for the JSON schema's grammar");
    if (!j->rc) {
        int id = new_rule_id(j);
        js_printf(&j->out, "s%d ::= %s\n", id, e.s);
        snprintf(name, 32, "s%d", id);
    }
    free(e.s);
    return j->rc;
}

/* ---- entry points --------------------------------------------------------------------------------- */

int json_schema_to_gbnf(const char *schema, size_t len, char **gbnf)
{
    json_error_t err;
    json_t *doc = json_loadb(schema, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
    if (!doc)
        return seer_err(SEER_EINVAL, "the JSON schema is not JSON: line %d, column %d: %s", err.line, err.column, err.text);
    struct js *j = seer_calloc(1, sizeof *j);
    if (!j) {
        json_decref(doc);
        return seer_err(SEER_ENOMEM, "no memory for the JSON schema");
    }
    j->doc = doc;
    char root[32];
    if (!gen(j, doc, "#", root)) {
        js_printf(&j->out, "root ::= %s\n%s", root, COMMON_RULES);
        if (j->out.oom)
            j->rc = seer_err(SEER_ENOMEM, "no memory for the JSON schema's grammar");
    }
    int rc = j->rc;
    if (!rc)
        *gbnf = j->out.s;
    else
        free(j->out.s);
    json_decref(doc);
    free(j);
    return rc;
}
