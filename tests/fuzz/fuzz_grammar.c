/* fuzz_grammar.c — libFuzzer target: structured-output compilation from bytes. The first byte picks
   the path: even, the rest is a JSON schema (json_schema_to_gbnf, then its grammar through
   grammar_parse); odd, the rest is GBNF text (grammar_parse). A grammar that compiles then runs a
   matcher over a small vocabulary (every single byte and a few multi-byte pieces): masks along a
   walk that takes the lowest allowed id each step, so hostile grammars also exercise the matcher's
   interning, transitions and caps. */
#include "fuzz_util.h"

#include "lm/grammar.h"
#include "lm/json_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    if (size < 1)
        return 0;
    char *text = fz_strndup(data + 1, size - 1), *gbnf = NULL;
    grammar *g = NULL;
    int rc;
    if (data[0] % 2 == 0) {
        rc = json_schema_to_gbnf(text, size - 1, &gbnf);
        fz_check_message(rc);
        if (rc == SEER_OK) /* may still be refused: a $ref cycle that is left-recursive, a size cap */
            fz_check_message(grammar_parse(gbnf, strlen(gbnf), "schema", &g));
    } else {
        rc = grammar_parse(text, size - 1, "fuzz", &g);
        fz_check_message(rc);
    }
    if (g) {
        static const char *const multi[] = {"{\"", "\":", "\",", "true", "null", "[1", "\xc3\xa9", "ab", "  "};
        enum { N = 256 + sizeof multi / sizeof *multi + 1 };
        static char bytes[256];
        const char *pieces[N];
        size_t lens[N];
        for (int i = 0; i < 256; i++)
            bytes[i] = (char)i, pieces[i] = bytes + i, lens[i] = 1;
        for (size_t i = 0; i < sizeof multi / sizeof *multi; i++)
            pieces[256 + i] = multi[i], lens[256 + i] = strlen(multi[i]);
        pieces[N - 1] = NULL, lens[N - 1] = 0; /* the end id */
        const int32_t end = N - 1;
        grammar_vocab *v = NULL;
        grammar_matcher *m = NULL;
        if (grammar_vocab_create(pieces, lens, N, &v) == SEER_OK &&
            grammar_matcher_create(g, v, &end, 1, &m) == SEER_OK) {
            for (int step = 0; step < 64; step++) {
                const uint32_t *mask;
                if (grammar_matcher_mask(m, &mask) != SEER_OK)
                    break;
                int32_t id = 0;
                while (id < N && !(mask[id >> 5] >> (id & 31) & 1))
                    id++;
                if (id == N || grammar_matcher_accept(m, id) != SEER_OK)
                    abort(); /* a set bit the matcher then refuses */
                if (id == end)
                    break;
            }
        }
        grammar_matcher_free(m);
        grammar_vocab_free(v);
    }
    grammar_free(g);
    free(gbnf);
    free(text);
    return 0;
}
