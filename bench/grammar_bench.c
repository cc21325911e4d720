/* grammar_bench.c — what structured output costs per generated token (docs/PERFORMANCE.md): the
   grammar's token mask (lm/grammar_match.c), advancing past the picked token, and the sampler
   applying the mask to a logits vector, on a real-size vocabulary.
     grammar_bench VOCAB [--n-vocab 248320] [--tokens 2000] [--doc 200] [--seed S]
   VOCAB is a GGUF model (its tokenizer; `seer bench --preset 0.8b -o FILE` writes one with
   248,320 rows) or a Hugging Face tokenizer.json (real merges, e.g. Qwen3's); --n-vocab pads the
   mask to the model's logits rows (Qwen3.5: 248320). Special tokens are left out, as
   api/generate.c does. Each workload (a JSON schema, any JSON value, a GBNF grammar) generates
   --tokens tokens in documents of at most --doc tokens (a fresh matcher each, so cold states keep
   coming), picking uniformly among the allowed ids — an adversary that visits many states. Build:
     cmake --build build --target grammar_bench && build/grammar_bench FILE */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/error.h"
#include "core/util.h"
#include "lm/grammar.h"
#include "lm/json_schema.h"
#include "lm/sampler.h"
#include "lm/tokenizer.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *const SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":40},"
    "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":150},\"email\":{\"type\":\"string\","
    "\"pattern\":\"^[a-z0-9._]{1,20}@[a-z]{1,12}\\\\.(com|org)$\"},\"tags\":{\"type\":\"array\",\"items\":"
    "{\"enum\":[\"red\",\"green\",\"blue\"]},\"maxItems\":4},\"score\":{\"type\":\"number\",\"minimum\":-10,"
    "\"maximum\":10}},\"required\":[\"name\",\"age\"],\"additionalProperties\":false}";
static const char *const GBNF = "root ::= \"Answer: \" ( \"yes\" | \"no\" ) \"\\n\" ( \"- \" item \"\\n\" ){1,5}\n"
                                "item ::= [A-Za-z] [a-z ]{0,30}\n";

static int workload(const char *title, const char *gbnf, const grammar_vocab *v, size_t n_vocab, int32_t end,
                    int n_tokens, int doc_len, sampler *smp, const float *logits)
{
    grammar *g;
    int rc = grammar_parse(gbnf, strlen(gbnf), title, &g);
    if (rc)
        return fprintf(stderr, "%s: %s\n", title, seer_last_error()), rc;
    double *t_mask = malloc((size_t)n_tokens * sizeof *t_mask), t_accept = 0, t_samp = 0, t_plain = 0;
    int32_t *allowed = malloc(n_vocab * sizeof *allowed);
    size_t hits = 0, walks = 0, n_allowed_sum = 0;
    int done = 0, docs = 0;
    while (done < n_tokens) {
        grammar_matcher *m;
        if ((rc = grammar_matcher_create(g, v, &end, 1, &m)))
            break;
        docs++;
        for (int k = 0; k < doc_len && done < n_tokens; k++) {
            const uint32_t *mask;
            double t0 = seer_time_now();
            if ((rc = grammar_matcher_mask(m, &mask)))
                break;
            t_mask[done] = seer_time_now() - t0;
            size_t na = 0;
            for (size_t i = 0; i < n_vocab; i++)
                if (mask[i >> 5] >> (i & 31) & 1)
                    allowed[na++] = (int32_t)i;
            n_allowed_sum += na;
            int32_t id = allowed[next() % na];
            if (done % 50 == 0) { /* the sampler's side: the mask applied to a full logits vector */
                int32_t s;
                t0 = seer_time_now();
                sampler_set_allowed(smp, mask);
                sampler_sample(smp, logits, &s);
                t_samp += seer_time_now() - t0;
                t0 = seer_time_now();
                sampler_set_allowed(smp, NULL);
                sampler_sample(smp, logits, &s);
                t_plain += seer_time_now() - t0;
            }
            t0 = seer_time_now();
            rc = grammar_matcher_accept(m, id);
            t_accept += seer_time_now() - t0;
            done++;
            if (rc || id == end)
                break;
        }
        size_t h, w, st;
        grammar_matcher_stats(m, &h, &w, &st);
        hits += h, walks += w; /* st: states of this document's matcher, not reported */
        grammar_matcher_free(m);
        if (rc)
            break;
    }
    if (!rc) {
        double sum = 0;
        for (int i = 0; i < done; i++)
            sum += t_mask[i];
        qsort(t_mask, (size_t)done, sizeof *t_mask, cmp_d);
        int n_samp = (done + 49) / 50;
        printf("| %s | %d | %d | %.3f | %.3f | %.2f | %.2f | %zu / %zu | %.4f | %.3f | %.0f |\n", title, done, docs,
               1e3 * sum / done, 1e3 * t_mask[done / 2], 1e3 * t_mask[done * 99 / 100], 1e3 * t_mask[done - 1], walks,
               hits + walks, 1e3 * t_accept / done, 1e3 * (t_samp - t_plain) / n_samp, (double)n_allowed_sum / done);
    } else {
        fprintf(stderr, "%s: %s\n", title, seer_last_error());
    }
    free(t_mask), free(allowed);
    grammar_free(g);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    size_t n_pad = 0;
    int n_tokens = 2000, doc = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n-vocab") && i + 1 < argc)
            n_pad = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            n_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--doc") && i + 1 < argc)
            doc = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng = (uint64_t)atoll(argv[++i]) | 1;
        else
            path = argv[i];
    }
    if (!path || n_tokens < 1 || doc < 1)
        return fprintf(stderr, "usage: grammar_bench VOCAB.gguf|tokenizer.json [--n-vocab N] [--tokens N] [--doc N]\n"), 2;
    tokenizer *tok = NULL;
    seer_model *model = NULL;
    size_t plen = strlen(path);
    int rc;
    if (plen > 5 && !strcmp(path + plen - 5, ".json")) {
        rc = tok_load_hf_json(path, &tok);
    } else {
        seer_model_params mp = seer_model_params_default();
        mp.device = "cpu";
        rc = seer_model_load(path, &mp, &model);
        if (!rc)
            tok = model->tok;
    }
    if (rc)
        return fprintf(stderr, "grammar_bench: %s\n", seer_last_error()), 1;
    size_t n_tok = tok_n_vocab(tok), n = n_pad > n_tok ? n_pad : n_tok;
    int32_t end = tok_token_to_id(tok, "<|im_end|>", 10);
    if (end < 0 && n == n_tok)
        n++; /* a tokenizer without it: one more id stands in */
    const char **pieces = calloc(n, sizeof *pieces);
    size_t *lens = calloc(n, sizeof *lens), total = 0, n_real = 0;
    for (size_t i = 0; i < n_tok; i++)
        if (!tok_is_special(tok, (int32_t)i) && (pieces[i] = tok_piece(tok, (int32_t)i, &lens[i])))
            total += lens[i], n_real++;
    if (end < 0)
        end = (int32_t)n - 1;
    pieces[end] = NULL;
    double t0 = seer_time_now();
    grammar_vocab *v;
    if ((rc = grammar_vocab_create(pieces, lens, n, &v)))
        return fprintf(stderr, "grammar_bench: %s\n", seer_last_error()), 1;
    double t_trie = seer_time_now() - t0;
    printf("vocabulary: %s, %zu ids (%zu pieces, %zu bytes), trie %zu nodes built in %.1f ms\n\n", path, n, n_real,
           total, grammar_vocab_nodes(v), 1e3 * t_trie);
    sampler_params sp = sampler_params_default();
    sp.top_k = 20;
    sampler *smp;
    float *logits = malloc(n * sizeof *logits);
    for (size_t i = 0; i < n; i++)
        logits[i] = (float)(next() % 20000) / 1000.0f - 10.0f;
    if (sampler_create(&sp, (int32_t)n, &smp))
        return fprintf(stderr, "grammar_bench: %s\n", seer_last_error()), 1;
    printf("| workload | tokens | documents | mask ms (mean) | p50 | p99 | max | trie walks / masks | accept ms | "
           "sampler +ms | allowed ids (mean) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    char *schema_gbnf = NULL;
    if (json_schema_to_gbnf(SCHEMA, strlen(SCHEMA), &schema_gbnf))
        return fprintf(stderr, "grammar_bench: %s\n", seer_last_error()), 1;
    rc = workload("JSON schema (object)", schema_gbnf, v, n, end, n_tokens, doc, smp, logits);
    rc = rc ? rc : workload("--format json", json_schema_any_value(), v, n, end, n_tokens, doc, smp, logits);
    rc = rc ? rc : workload("GBNF list", GBNF, v, n, end, n_tokens, doc, smp, logits);
    free(schema_gbnf);
    free(logits);
    sampler_free(smp);
    grammar_vocab_free(v);
    free(pieces), free(lens);
    if (model)
        seer_model_free(model);
    else
        tok_free(tok);
    return rc ? 1 : 0;
}
