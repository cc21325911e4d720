/* bench_tok.c — `seer bench --tokenizer`: how fast a model's tokenizer encodes text (lm/tokenizer.c:
   NFC, the pre-tokenizer regex, byte-level BPE; spec §6.1). The target, "a 1 MB text well
   under a second", is measured here rather than asserted in a timed test.
     seer bench --tokenizer -m MODEL [-f FILE] [--size BYTES] [--reps N] [--json]
   Without -f the text is --size bytes (1 MiB) of a fixed mix of scripts and shapes the tokenizer
   meets: prose in several languages, code, digits, whitespace runs, CRLF, combining marks, emoji.
   MODEL is loaded with seer_model_params.vocab_only, timed once (a tokenizer.json alone, which
   vocab_only takes too, times the tokenizer's load and nothing else); each repetition encodes the
   whole text (special tokens off). Only seer.h is used: what is timed is what a program gets.
   Results on stdout (a table, or one JSON object); errors on stderr. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"
#include "tools/bench/bench.h"

/* One of each shape; repeated in a scrambled order so merges meet at different neighbours. */
static const char *const SAMPLES[] = {
    "The quick brown fox jumps over the lazy dog, and then it rests. ",
    "Qwen3.5 runs locally: 0.8B, 2B, 4B and 9B parameters; 262144 tokens of context.\n",
    "def forward(self, x):\n    return self.norm(x + self.attn(x))  # residual\n\n",
    "    for (int i = 0; i < n; i++) {\r\n        sum += a[i] * b[i];\r\n    }\r\n",
    "Le cœur a ses raisons que la raison ne connaît point. Straße, naïve, façade. ",
    "\xe6\x9c\xba\xe5\x99\xa8\xe5\xad\xa6\xe4\xb9\xa0\xe6\xa8\xa1\xe5\x9e\x8b\xe5\x9c\xa8\xe6\x9c\xac\xe5\x9c\xb0"
    "\xe8\xbf\x90\xe8\xa1\x8c\xe3\x80\x82",
    "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xd8\xa8\xd8\xa7\xd9\x84\xd8\xb9\xd8\xa7\xd9\x84\xd9\x85 ",
    "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 \xe0\xa4\xa6\xe0\xa5\x81\xe0\xa4\xa8"
    "\xe0\xa4\xbf\xe0\xa4\xaf\xe0\xa4\xbe ",
    "e\xcc\x81 a\xcc\x8a o\xcc\x88 \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd 2026-11-23 3.14159 ",
    "          \t\t  \n\n\n",
    "{\"id\": 248045, \"text\": \"<|im_start|>user\", \"ok\": true}\n",
};

static int fill(char *buf, size_t size)
{
    const size_t n_samples = sizeof SAMPLES / sizeof *SAMPLES;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    size_t at = 0;
    for (;;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *s = SAMPLES[x % n_samples];
        size_t l = strlen(s);
        if (at + l > size)
            break;
        memcpy(buf + at, s, l);
        at += l;
    }
    return (int)at;
}

/* A whole decimal number in [lo, hi] into *out. */
static bool number(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

enum { BT_TOKENIZER, BT_MODEL, BT_FILE, BT_SIZE, BT_REPS, BT_JSON, BT_HELP };
static const struct cli_opt tok_opts[] = {
    {{"--tokenizer"}, NULL, "time the tokenizer (this mode)", BT_TOKENIZER},
    {{"-m"}, "MODEL", "HF model directory, tokenizer.json or GGUF (loaded with vocab_only)", BT_MODEL},
    {{"-f"}, "FILE", "encode this text (default: a built-in mix of scripts, code and emoji)", BT_FILE},
    {{"--size"}, "BYTES", "length of the built-in text (default 1048576)", BT_SIZE},
    {{"--reps"}, "N", "timed encodes (default 5)", BT_REPS},
    {{"--json"}, NULL, "one JSON object instead of the table", BT_JSON},
    {{"-h", "--help"}, NULL, "this help", BT_HELP},
};
#define N_TOK_OPTS (sizeof tok_opts / sizeof tok_opts[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: seer bench --tokenizer -m MODEL [-f FILE] [--size BYTES] [--reps N] [--json]\n");
    cli_opt_help(f, tok_opts, N_TOK_OPTS);
}

int cli_bench_tokenizer(int argc, char **argv)
{
    const char *model = NULL, *file = NULL;
    long long size = 1 << 20, reps = 5;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        const struct cli_opt *opt = cli_opt_find(tok_opts, N_TOK_OPTS, argc, argv, &i, &v);
        bool ok = opt && (!opt->arg || v);
        switch (ok ? opt->key : -1) {
        case BT_TOKENIZER: break;
        case BT_JSON: json = true; break;
        case BT_HELP: return usage(stdout), CLI_OK;
        case BT_MODEL: model = v; break;
        case BT_FILE: file = v; break;
        case BT_SIZE: ok = number(v, 1, 1 << 30, &size); break;
        case BT_REPS: ok = number(v, 1, 1000, &reps); break;
        default: break;
        }
        if (!ok) {
            fprintf(stderr, "seer bench: bad or unknown option '%s'\n", a);
            return usage(stderr), CLI_USAGE;
        }
    }
    if (!model) {
        fprintf(stderr, "seer bench --tokenizer: -m MODEL is required\n");
        return usage(stderr), CLI_USAGE;
    }
    seer_model_params mp = seer_model_params_default();
    mp.vocab_only = 1;
    seer_model *m = NULL;
    char *text = NULL;
    size_t len = 0, n_tokens = 0;
    double *secs = calloc((size_t)reps, sizeof *secs);
    int32_t *ids = NULL;
    int rc = secs ? SEER_OK : cli_err(SEER_ENOMEM, "out of memory");
    const double t_load = cli_time_now();
    if (rc == SEER_OK)
        rc = seer_model_load(model, &mp, &m);
    const double load_s = cli_time_now() - t_load;
    if (rc == SEER_OK && file)
        rc = cli_read_file(file, &text, &len);
    else if (rc == SEER_OK && !(text = malloc((size_t)size)))
        rc = cli_err(SEER_ENOMEM, "out of memory for a %lld-byte text", size);
    else if (rc == SEER_OK)
        len = (size_t)fill(text, (size_t)size);
    /* one untimed encode warms the caches (and PCRE2's JIT stack) */
    if (rc == SEER_OK)
        rc = seer_tokenize(m, text, len, 0, &ids, &n_tokens);
    for (long long r = 0; rc == SEER_OK && r < reps; r++) {
        seer_free(ids);
        ids = NULL;
        const double t0 = cli_time_now();
        rc = seer_tokenize(m, text, len, 0, &ids, &(size_t){0});
        secs[r] = cli_time_now() - t0;
    }
    if (rc == SEER_OK) {
        double best = secs[0], sum = 0;
        for (long long r = 0; r < reps; r++)
            best = MIN(best, secs[r]), sum += secs[r];
        const double mean = sum / (double)reps, mib = (double)len / (1 << 20);
        if (json) {
            json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "model", model, "bytes",
                                  (json_int_t)len, "tokens", (json_int_t)n_tokens, "reps", (json_int_t)reps,
                                  "load_seconds", load_s, "mean_seconds", mean, "min_seconds", best,
                                  "mib_per_second", mib / mean, "tokens_per_second", (double)n_tokens / mean);
            char *js = o ? json_dumps(o, JSON_COMPACT) : NULL;
            if (js)
                printf("%s\n", js);
            else
                rc = cli_err(SEER_ENOMEM, "could not build the JSON output");
            free(js);
            json_decref(o);
        }
        else
            printf("tokenizer %s (loaded in %.3f s)\ntext      %zu bytes (%.2f MiB), %zu tokens\n"
                   "encode    %.3f s mean, %.3f s best of %lld: %.2f MiB/s, %.0f tokens/s\n",
                   model, load_s, len, mib, n_tokens, mean, best, reps, mib / mean, (double)n_tokens / mean);
    }
    seer_free(ids);
    seer_model_free(m);
    free(text);
    free(secs);
    return rc ? cli_fail(rc) : CLI_OK;
}
