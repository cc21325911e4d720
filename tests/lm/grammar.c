/* Tests lm/grammar.c, lm/grammar_match.c, lm/json_schema.c and the sampler's mask (lm/sampler.c).
   1. GBNF: each grammar of a table against strings whose membership is worked out by hand from the
      GBNF rules (literals and escapes, classes with ranges, negation and non-ASCII code points, `.`,
      groups, * + ? {m} {m,} {m,n}, comments, rules across lines, empty alternatives).
   2. Broken grammars: each refused with SEER_EINVAL and a message naming the problem.
   3. Token masks: a random vocabulary (all 256 single bytes plus random multi-byte pieces, some
      sharing prefixes, some duplicated); along random walks the trie-walked, cached mask equals a
      per-token check of every piece (grammar_matcher_allows_bytes), end ids are set exactly when
      the output is complete, and the finished text satisfies a hand-written recognizer.
   4. JSON schemas: integer bounds checked exhaustively around random ranges (x accepted ⇔ lo ≤ x ≤
      hi), number bounds, object commas with optional properties, refusals.
   5. The sampler never picks an id the mask forbids, greedy picks the best allowed id. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "lm/grammar.h"
#include "lm/json_schema.h"
#include "lm/sampler.h"
#include "support/testutil.h"
#include "tap.h"

/* Whether the grammar accepts s as a complete sentence. */
static bool accepts(const grammar *g, const char *s)
{
    grammar_matcher *m;
    if (grammar_matcher_create(g, NULL, NULL, 0, &m))
        return false;
    bool r = grammar_matcher_accept_bytes(m, s, strlen(s)) == SEER_OK && grammar_matcher_complete(m);
    grammar_matcher_free(m);
    return r;
}

/* ---- 1. GBNF membership ------------------------------------------------------------------------ */

struct gcase {
    const char *gbnf;
    const char *yes[8], *no[8];
};

static const struct gcase gcases[] = {
    {"root ::= \"a\\\"b\\\\c\\n\" # a comment\n", {"a\"b\\c\n"}, {"a\"b\\c", "ab\\c\n", ""}},
    {"root ::= [a-cx] [^0-9a-z]\n", {"aA", "x-", "c\xc3\xa9"}, {"d!", "a1", "ab", "a"}},
    {"root ::= [α-γ]+ \"!\"\n", {"\xce\xb1!", "\xce\xb3\xce\xb2\xce\xb1!"}, {"!", "\xce\xb4!", "a!"}},
    {"root ::= \"x\"{2,3} \"y\"{2} \"z\"{1,}\n", {"xxyyz", "xxxyyzzz"}, {"xyyz", "xxxxyyz", "xxyz", "xxyy"}},
    {"root ::= (\"ab\" | \"c\")* \"d\"? \"e\"+\n", {"e", "abce", "cabcdeee"}, {"", "abd", "ace", "de e"}},
    {"root ::= .{3}\n", {"abc", "\xe2\x82\xac\xf0\x9f\x98\x80z"}, {"ab", "abcd", "\xed\xa0\x80zz"}},
    {"root ::= a b\na ::= \"1\"\n   | \"2\"\n b ::= [\\x41-\\x43] \"\\u00e9\"\n", {"1A\xc3\xa9", "2C\xc3\xa9"},
     {"3A\xc3\xa9", "1D\xc3\xa9", "1A"}},
    {"root ::= x \"!\"\nx ::=\n", {"!"}, {"", "x!"}},
    {"root ::= [^\"\\\\] | \"\\\\\" [\\[\\]\\-]\n", {"a", "\\[", "\\-", "\\]"}, {"\"", "\\", "\\a"}},
    {"root ::= (\"(\" root \")\")? \"o\"\n", {"o", "(o)o", "((o)o)o"}, {"(o)", "((o)o"}},
};

static void test_gbnf(void)
{
    for (size_t c = 0; c < sizeof gcases / sizeof *gcases; c++) {
        grammar *g = NULL;
        const struct gcase *t = &gcases[c];
        if (!ok(grammar_parse(t->gbnf, strlen(t->gbnf), "case", &g) == SEER_OK, "grammar %zu parses (%s)", c,
                seer_last_error()))
            continue;
        bool good = true;
        for (int i = 0; i < 8 && t->yes[i]; i++)
            if (!accepts(g, t->yes[i]))
                good = false, diag("grammar %zu rejects '%s'", c, t->yes[i]);
        for (int i = 0; i < 8 && t->no[i]; i++)
            if (accepts(g, t->no[i]))
                good = false, diag("grammar %zu accepts '%s'", c, t->no[i]);
        ok(good, "grammar %zu: members accepted, non-members rejected", c);
        grammar_free(g);
    }
    /* "a" then an empty class can never finish: that alternative must not exist, or 'a' would be
       allowed and lead to a state that allows nothing */
    const char *dead = "root ::= \"a\" [^\\x00-\\U0010FFFF] | \"b\"\n";
    grammar *g = NULL;
    grammar_matcher *m = NULL;
    bool good = grammar_parse(dead, strlen(dead), "dead", &g) == SEER_OK &&
                grammar_matcher_create(g, NULL, NULL, 0, &m) == SEER_OK && !grammar_matcher_allows_bytes(m, "a", 1) &&
                grammar_matcher_allows_bytes(m, "b", 1);
    ok(good, "an alternative that can never finish is dropped: no dead end after 'a'");
    grammar_matcher_free(m);
    grammar_free(g);
}

/* ---- 2. broken grammars -------------------------------------------------------------------------- */

static void test_broken(void)
{
    static const struct {
        const char *gbnf, *word;
    } bad[] = {
        {"root ::= a\n", "never defined"},
        {"root ::= b | \"z\"\nb ::= c? root \"x\"\nc ::= \"y\"\n", "left-recursive"},
        {"root ::= (\"a\"?)* \"b\"\n", "left-recursive"},
        {"root ::= \"a\"\nroot ::= \"b\"\n", "twice"},
        {"x ::= \"a\"\n", "root"},
        {"root ::= \"a\" y\ny ::= y \"b\"\n", "never finish"},
        {"root ::= [a-\n", "not closed"},
        {"root ::= \"\\q\"\n", "unknown escape"},
        {"root ::= \"\\uD800\"\n", "surrogate"},
        {"root ::= [z-a]\n", "backwards"},
        {"root ::= \"a\"{20000}\n", "10000"},
        {"root ::= * \"a\"\n", "follows nothing"},
        {"root ::= (\"a\"\n", "not closed"},
        {"root ::= \"a\" )\n", "')'"},
        {"root = \"a\"\n", "::="},
        {"root ::= \"\xff\"\n", "UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        grammar *g = NULL;
        int rc = grammar_parse(bad[i].gbnf, strlen(bad[i].gbnf), "bad.gbnf", &g);
        ok(rc == SEER_EINVAL && g == NULL && strstr(seer_last_error(), bad[i].word) &&
               strstr(seer_last_error(), "bad.gbnf"),
           "refused: %s (%s)", bad[i].word, seer_last_error());
        grammar_free(g);
    }
    /* a 200-byte literal repeated 10000 times would be 2M elements */
    char big[300] = "root ::= \"";
    memset(big + 10, 'a', 200);
    strcpy(big + 210, "\"{10000}\n");
    grammar *g = NULL;
    ok(grammar_parse(big, strlen(big), "bad.gbnf", &g) == SEER_EINVAL && strstr(seer_last_error(), "2^20"),
       "refused: a grammar expanding past 2^20 elements (%s)", seer_last_error());
    grammar_free(g);
}

/* ---- 3. token masks along random walks ------------------------------------------------------------ */

#define N_VOCAB 3000

/* A hand-written recognizer for the walk grammar below: '[' then 1–4 items "-"?[0-9]{1,3} separated
   by ", " or ",", then ']'. */
static bool walk_lang(const char *s)
{
    if (*s++ != '[')
        return false;
    for (int item = 0;; item++) {
        if (item == 4)
            return false;
        if (*s == '-')
            s++;
        int d = 0;
        while (*s >= '0' && *s <= '9')
            s++, d++;
        if (d < 1 || d > 3)
            return false;
        if (*s == ']')
            return s[1] == '\0';
        if (*s++ != ',')
            return false;
        if (*s == ' ')
            s++;
    }
}

static void test_masks(void)
{
    static const char *alphabet = "[]-,0123456789 \"ab";
    char *store = malloc(N_VOCAB * 8);
    const char *pieces[N_VOCAB];
    size_t lens[N_VOCAB];
    for (int i = 0; i < 256; i++)
        store[i * 8] = (char)i, pieces[i] = store + i * 8, lens[i] = 1;
    for (int i = 256; i < N_VOCAB; i++) {
        char *p = store + (size_t)i * 8;
        size_t n = 1 + test_rand_u64() % 6;
        if (i % 7 == 0) { /* a duplicate of an earlier piece, or one extending it */
            const int j = (int)(test_rand_u64() % (uint64_t)i);
            memcpy(p, pieces[j], lens[j]);
            n = lens[j] + (i % 2 && lens[j] < 7);
            if (n > lens[j])
                p[n - 1] = alphabet[test_rand_u64() % strlen(alphabet)];
        } else {
            for (size_t k = 0; k < n; k++)
                p[k] = alphabet[test_rand_u64() % strlen(alphabet)];
        }
        pieces[i] = p, lens[i] = n;
    }
    pieces[5] = NULL; /* never allowed */
    const int32_t ends[2] = {N_VOCAB - 1, N_VOCAB - 2};
    pieces[ends[0]] = pieces[ends[1]] = NULL;
    const char *gbnf = "root ::= \"[\" item ( \",\" \" \"? item ){0,3} \"]\"\nitem ::= \"-\"? [0-9]{1,3}\n";
    grammar *g = NULL;
    grammar_vocab *v = NULL;
    int rc = grammar_parse(gbnf, strlen(gbnf), "walk", &g);
    if (!rc)
        rc = grammar_vocab_create(pieces, lens, N_VOCAB, &v);
    if (!ok(rc == SEER_OK, "walk grammar and a %d-id vocabulary (%s)", N_VOCAB, seer_last_error())) {
        grammar_free(g), free(store);
        return;
    }
    int mism = 0, bad_end = 0, bad_text = 0, walks = 0, finished = 0;
    for (int w = 0; w < 40; w++, walks++) {
        grammar_matcher *m;
        char text[4096];
        size_t tl = 0;
        if (grammar_matcher_create(g, v, ends, 2, &m))
            break;
        for (int step = 0; step < 200; step++) {
            const uint32_t *mask;
            if (grammar_matcher_mask(m, &mask)) {
                mism++;
                break;
            }
            int32_t allowed[N_VOCAB];
            int na = 0;
            for (int32_t id = 0; id < N_VOCAB; id++) {
                bool bit = mask[id >> 5] >> (id & 31) & 1;
                bool want = id == ends[0] || id == ends[1] ? grammar_matcher_complete(m)
                                                           : pieces[id] && grammar_matcher_allows_bytes(m, pieces[id], lens[id]);
                mism += bit != want;
                bad_end += (id == ends[0] || id == ends[1]) && bit != want;
                if (bit)
                    allowed[na++] = id;
            }
            int32_t pick = allowed[test_rand_u64() % (uint64_t)na];
            if (grammar_matcher_accept(m, pick)) {
                mism++;
                break;
            }
            if (pick == ends[0] || pick == ends[1]) {
                text[tl] = '\0';
                finished++;
                bad_text += !walk_lang(text);
                if (!walk_lang(text))
                    diag("walk %d finished with '%s'", w, text);
                break;
            }
            memcpy(text + tl, pieces[pick], lens[pick]);
            tl += lens[pick];
        }
        grammar_matcher_free(m);
    }
    ok(mism == 0, "trie-walked masks equal per-piece checks over %d walks (%d differences)", walks, mism);
    ok(bad_end == 0, "end ids are allowed exactly when the output is complete");
    ok(finished >= 30 && bad_text == 0, "%d walks finished, every text in the language (%d not)", finished, bad_text);
    grammar_vocab_free(v);
    grammar_free(g);
    free(store);
}

/* ---- 4. JSON schemas ------------------------------------------------------------------------------- */

static grammar *schema_grammar(const char *schema)
{
    char *text = NULL;
    grammar *g = NULL;
    if (json_schema_to_gbnf(schema, strlen(schema), &text) == SEER_OK)
        grammar_parse(text, strlen(text), "schema", &g);
    free(text);
    return g;
}

static void test_schema_numbers(void)
{
    int bad = 0, ranges = 0;
    for (int r = 0; r < 30; r++) {
        /* magnitudes from 1 to 6 digits, either sign */
        int64_t scale = (int64_t)pow(10, (double)(test_rand_u64() % 6));
        int64_t lo = (int64_t)(test_rand_u64() % (uint64_t)(2 * scale + 1)) - scale;
        int64_t hi = lo + (int64_t)(test_rand_u64() % 300);
        char schema[128];
        snprintf(schema, sizeof schema, "{\"type\": \"integer\", \"minimum\": %lld, \"maximum\": %lld}", (long long)lo,
                 (long long)hi);
        grammar *g = schema_grammar(schema);
        if (!g) {
            bad++;
            diag("%s: %s", schema, seer_last_error());
            continue;
        }
        ranges++;
        for (int64_t x = lo - 120; x <= hi + 120; x++) {
            char s[32];
            snprintf(s, sizeof s, "%lld", (long long)x);
            if (accepts(g, s) != (x >= lo && x <= hi)) {
                if (bad++ < 5)
                    diag("[%lld, %lld]: %s wrongly %s", (long long)lo, (long long)hi, s, accepts(g, s) ? "accepted" : "rejected");
            }
        }
        /* never leading zeros or -0 */
        bad += accepts(g, "-0") || accepts(g, "00") || accepts(g, "01");
        grammar_free(g);
    }
    ok(ranges == 30 && bad == 0, "integer bounds: every integer within 120 of 30 random ranges accepted iff inside");
    grammar *g = schema_grammar("{\"type\": \"number\", \"minimum\": -3, \"exclusiveMaximum\": 7.5}");
    static const char *const in[] = {"-3", "0", "-2.999", "6.75", "7", "-0.5"};
    static const char *const out[] = {"-3.5", "-4", "7.5", "8", "7.6", "1e2", "--1", "01"};
    bool good = g != NULL;
    for (size_t i = 0; g && i < sizeof in / sizeof *in; i++)
        good &= accepts(g, in[i]);
    for (size_t i = 0; g && i < sizeof out / sizeof *out; i++)
        good &= !accepts(g, out[i]);
    ok(good, "number in [-3, 7.5): values inside accepted, outside rejected");
    grammar_free(g);
}

static void test_schema_objects(void)
{
    grammar *g = schema_grammar("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":"
                                "\"boolean\"},\"c\":{\"const\":\"x\\\"y\"}},\"required\":[\"b\"],"
                                "\"additionalProperties\":false}");
    static const char *const in[] = {"{\"b\":true}", "{\"a\":1,\"b\":false}", "{\"b\":true,\"c\":\"x\\\"y\"}",
                                     "{ \"a\" : -5 , \"b\" : true , \"c\" : \"x\\\"y\" }"};
    static const char *const out[] = {"{}", "{\"a\":1}", "{,\"b\":true}", "{\"b\":true,}", "{\"b\":true \"c\":\"x\\\"y\"}",
                                      "{\"b\":true,\"d\":1}", "{\"b\":1}", "{\"c\":\"x\\\"y\",\"b\":true}"};
    bool good = g != NULL;
    for (size_t i = 0; g && i < sizeof in / sizeof *in; i++)
        if (!accepts(g, in[i]))
            good = false, diag("rejected %s", in[i]);
    for (size_t i = 0; g && i < sizeof out / sizeof *out; i++)
        if (accepts(g, out[i]))
            good = false, diag("accepted %s", out[i]);
    ok(good, "object: commas right with optional properties, required enforced, no others, schema order");
    grammar_free(g);
    g = schema_grammar("{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-\\\\d{3}(x|yz)?$\"}");
    good = g && accepts(g, "\"AB-123\"") && accepts(g, "\"QQ-000yz\"") && !accepts(g, "\"Ab-123\"") &&
           !accepts(g, "\"AB-12\"") && !accepts(g, "\"AB-123y\"");
    ok(good, "pattern ^[A-Z]{2}-\\d{3}(x|yz)?$ as a grammar");
    grammar_free(g);
    g = schema_grammar("{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}");
    good = g && accepts(g, "\"ab\"") && accepts(g, "\"\\n\\u00e9\"") && accepts(g, "\"\xc3\xa9\xc3\xa9\xc3\xa9\"") &&
           !accepts(g, "\"a\"") && !accepts(g, "\"abcd\"") && !accepts(g, "\"\\ud83d\\ude00\"") && !accepts(g, "\"a\nb\"");
    ok(good, "string lengths count characters and escapes; no surrogate escapes, no raw control characters");
    grammar_free(g);
    static const char *const refused[] = {
        "{\"type\":\"string\",\"format\":\"email\"}", "{\"oneOf\":[{}]}", "{\"type\":\"array\",\"uniqueItems\":true}",
        "{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", "{\"allOf\":[{},{}]}", "{\"anyOf\":[{}],\"type\":\"string\"}",
        "{\"type\":\"integer\",\"minimum\":1e20}", "{\"enum\":[1],\"minimum\":0}", "false",
    };
    int n_ok = 0;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char *text = NULL;
        int rc = json_schema_to_gbnf(refused[i], strlen(refused[i]), &text);
        n_ok += rc == SEER_EUNSUPPORTED && text == NULL && strstr(seer_last_error(), "JSON schema");
        if (rc != SEER_EUNSUPPORTED)
            diag("not refused: %s", refused[i]);
        free(text);
    }
    ok(n_ok == (int)(sizeof refused / sizeof *refused), "unsupported schema features are refused (%d of %zu)", n_ok,
       sizeof refused / sizeof *refused);
    char *text = NULL;
    ok(json_schema_to_gbnf("{\"type\":", 8, &text) == SEER_EINVAL && !text, "a schema that is not JSON: EINVAL");
}

/* ---- 5. the sampler's mask ---------------------------------------------------------------------------- */

static void test_sampler_mask(void)
{
    enum { V = 1000 };
    float logits[V];
    uint32_t allow[(V + 31) / 32] = {0};
    int32_t best = -1;
    for (int i = 0; i < V; i++)
        logits[i] = test_randf(-5, 5);
    for (int i = 0; i < 40; i++) {
        int32_t id = (int32_t)(test_rand_u64() % V);
        allow[id >> 5] |= 1u << (id & 31);
        if (best < 0 || logits[id] > logits[best] || (logits[id] == logits[best] && id < best))
            best = id;
    }
    sampler *s = NULL;
    sampler_params p = sampler_params_default();
    p.seed = test_rand_u64();
    int bad = 0;
    if (sampler_create(&p, V, &s) == SEER_OK) {
        sampler_set_allowed(s, allow);
        for (int k = 0; k < 2000; k++) {
            int32_t id;
            bad += sampler_sample(s, logits, &id) || !(allow[id >> 5] >> (id & 31) & 1);
        }
    }
    ok(s && bad == 0, "temperature 1: 2000 draws, all allowed ids");
    sampler_free(s);
    p.temperature = 0;
    int32_t g = -1;
    if (sampler_create(&p, V, &s) == SEER_OK) {
        sampler_set_allowed(s, allow);
        sampler_sample(s, logits, &g);
    }
    ok(g == best, "greedy picks the best allowed id (%d, want %d)", (int)g, (int)best);
    sampler_free(s);
}

int main(void)
{
    test_seed();
    test_gbnf();
    test_broken();
    test_masks();
    test_schema_numbers();
    test_schema_objects();
    test_sampler_mask();
    return done_testing();
}
