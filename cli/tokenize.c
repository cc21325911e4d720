/* tokenize.c — `seer tokenize -m MODEL [--json] [--special] (TEXT | -f FILE)`: prints the ids
   of a text with the model's tokenizer (spec §6.1). MODEL is loaded with vocab_only (its configs
   and tokenizer, no weights: milliseconds, no device): a Hugging Face model directory (its
   safetensors may be absent), a GGUF model, a name from `seer pull`, or a tokenizer alone (a
   tokenizer.json, or a directory without config.json: seer.h vocab_only).
   Default output: one "id<TAB>piece" line per token
   (piece C-escaped); --json prints one JSON array of ids. --special parses special tokens written
   in the text (e.g. "<|im_start|>") instead of tokenizing them as plain text. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

/* Writes a token's bytes readably: valid UTF-8 as is, control and stray bytes escaped. A byte
   where no valid character starts (seer_utf8_check: bytes of a character split across tokens, or
   GGUF byte tokens) is written as \xNN, and the check goes on after it. */
static void print_piece(FILE *out, const char *p, size_t n)
{
    size_t valid = seer_utf8_check(p, n); /* p[0..valid) is whole characters */
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)p[i];
        if (i == valid) {
            fprintf(out, "\\x%02x", c);
            valid = i + 1 + seer_utf8_check(p + i + 1, n - i - 1);
        } else if (c == '\\')
            fputs("\\\\", out);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c == '\r')
            fputs("\\r", out);
        else if (c < 0x20 || c == 0x7F)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

/* The command's own options; the text is the one argument that is not an option. */
enum { T_MODEL = 1, T_FILE, T_JSON, T_SPECIAL, T_HELP };
static const struct cli_opt tokenize_table[] = {
    {{"-m", "--model"}, "MODEL", "Hugging Face model directory, GGUF model, name from seer pull (its weights are "
                                 "not read) or a tokenizer.json", T_MODEL},
    {{"-f", "--file"}, "FILE", "read the text from FILE ('-' for stdin) instead of the argument", T_FILE},
    {{"--json"}, NULL, "print one JSON array of ids", T_JSON},
    {{"--special"}, NULL, "parse special tokens written in the text (<|im_start|> ...)", T_SPECIAL},
    {{"-h", "--help"}, NULL, "this help", T_HELP},
};

static int usage(FILE *f, const char *problem, const char *arg)
{
    if (problem)
        fprintf(f, "seer tokenize: %s%s%s\n", problem, arg ? arg : "", arg ? "'" : "");
    fprintf(f, "usage: seer tokenize -m MODEL [--json] [--special] (TEXT | -f FILE | -- TEXT)\n");
    cli_opt_help(f, tokenize_table, sizeof tokenize_table / sizeof *tokenize_table);
    return f == stdout ? CLI_OK : CLI_USAGE;
}

/* The ids, as a JSON array or as id<TAB>piece lines. */
static int print_ids(const seer_model *m, const int32_t *ids, size_t n, bool json)
{
    if (json) {
        putchar('[');
        for (size_t i = 0; i < n; i++)
            printf(i ? ",%d" : "%d", (int)ids[i]);
        puts("]");
    } else {
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const char *p = seer_token_piece(m, ids[i], &len);
            printf("%d\t", (int)ids[i]);
            print_piece(stdout, p, len);
            putchar('\n');
        }
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}

int cli_tokenize(int argc, char **argv)
{
    const char *model = NULL, *file = NULL, *text = NULL;
    bool json = false, special = false;
    bool opts = true; /* until "--": what follows is text even if it starts with '-' */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const struct cli_opt *opt = NULL;
        if (opts && !strcmp(a, "--")) {
            opts = false;
            continue;
        }
        if (opts && a[0] == '-' && a[1] &&
            !(opt = cli_opt_find(tokenize_table, sizeof tokenize_table / sizeof *tokenize_table, argc, argv, &i, &v)))
            return usage(stderr, "unknown option '", a);
        if (opt && opt->arg && !v)
            return usage(stderr, "a value is missing after '", a);
        switch (opt ? opt->key : 0) {
        case 0:
            if (text)
                return usage(stderr, "give the text as one argument (quote it)", NULL);
            text = a;
            break;
        case T_MODEL:
            if (cli_model_arg(v, &model)) /* a name from `seer pull` → its directory */
                return CLI_FAIL;
            break;
        case T_FILE: file = v; break;
        case T_JSON: json = true; break;
        case T_SPECIAL: special = true; break;
        case T_HELP: return usage(stdout, NULL, NULL);
        }
    }
    if (!model || !!file == !!text)
        return usage(stderr, NULL, NULL);

    seer_model_params mp = seer_model_params_default();
    mp.vocab_only = 1; /* the tokenizer and what describes the model; no weights, no device */
    seer_model *m = NULL;
    char *buf = NULL;
    size_t len = text ? strlen(text) : 0;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    int status = file ? cli_read_text(file, &buf, &len) : CLI_OK, rc = SEER_OK;
    if (status == CLI_OK && ((rc = seer_model_load(model, &mp, &m)) ||
                             (rc = seer_tokenize(m, file ? buf : text, len, special, &ids, &n_ids))))
        status = cli_fail(rc);
    if (status == CLI_OK)
        status = print_ids(m, ids, n_ids, json);
    seer_free(ids);
    free(buf);
    seer_model_free(m);
    return status;
}
