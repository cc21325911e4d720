/* tokenize.c — `seer tokenize -m MODEL [--json] [--special] (TEXT | -f FILE)`: prints the ids
   of a text with the model's tokenizer (spec §6.1). MODEL is a Hugging Face model directory with
   tokenizer.json, a tokenizer.json file, or a GGUF model (only its tokenizer metadata is read).
   Default output: one "id<TAB>piece" line per token
   (piece C-escaped); --json prints one JSON array of ids. --special parses special tokens written
   in the text (e.g. "<|im_start|>") instead of tokenizing them as plain text. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/util.h"
#include "core/gguf.h"
#include "lm/tok_gguf.h"
#include "lm/tokenizer.h"
#include "seer.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: seer tokenize -m MODEL [--json] [--special] (TEXT | -f FILE | -- TEXT)\n"
               "  -m MODEL    Hugging Face model directory, a tokenizer.json file or a GGUF model\n"
               "  -f FILE     read the text from FILE ('-' for stdin) instead of the argument\n"
               "  --json      print one JSON array of ids\n"
               "  --special   parse special tokens written in the text (<|im_start|> ...)\n");
}

/* The CLI's one way to read a file: the whole file (or stdin for "-", which cannot be mapped or
   sized first) into a new buffer, NUL-terminated after its *len bytes. */
int cli_read_file(const char *path, char **out, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return seer_err(SEER_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = SEER_OK;
    for (;;) {
        if (!seer_grow(&buf, &cap, n + 2, 1, 1 << 16)) { /* room for a byte and the NUL */
            rc = seer_err(SEER_ENOMEM, "%s: out of memory reading the file", path);
            break;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = seer_err(SEER_EIO, "%s: read error", path);
            break;
        }
    }
    if (f != stdin)
        fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return SEER_OK;
}

/* MODEL → tokenizer: a directory holds tokenizer.json; a file is a tokenizer.json unless it is
   a GGUF (magic "GGUF"). */
int cli_load_tokenizer(const char *model, tokenizer **tok)
{
    struct stat st;
    if (stat(model, &st) != 0)
        return seer_err(SEER_EIO, "%s: %s", model, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        size_t n = strlen(model) + sizeof "/tokenizer.json";
        char *p = malloc(n);
        if (!p)
            return seer_err(SEER_ENOMEM, "out of memory");
        snprintf(p, n, "%s/tokenizer.json", model);
        int rc = tok_load_hf_json(p, tok);
        free(p);
        return rc;
    }
    FILE *f = fopen(model, "rb");
    char magic[4] = {0};
    if (!f)
        return seer_err(SEER_EIO, "%s: cannot open: %s", model, strerror(errno));
    size_t got = fread(magic, 1, 4, f);
    fclose(f);
    if (got == 4 && !memcmp(magic, "GGUF", 4)) {
        gguf *g = NULL;
        int rc = gguf_open(model, &g);
        if (rc == SEER_OK)
            rc = tok_load_gguf(g, tok);
        gguf_free(g); /* the tokenizer copied what it needs */
        return rc;
    }
    return tok_load_hf_json(model, tok);
}

/* Length of the valid UTF-8 character at u[0..n), 0 if invalid (overlongs and surrogates too). */
static size_t utf8_char_len(const unsigned char *u, size_t n)
{
    size_t l = u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : 0;
    if (l == 0 || l > n)
        return 0;
    unsigned lo = u[0] == 0xE0 ? 0xA0 : u[0] == 0xF0 ? 0x90 : 0x80;
    unsigned hi = u[0] == 0xED ? 0x9F : u[0] == 0xF4 ? 0x8F : 0xBF;
    for (size_t i = 1; i < l; i++, lo = 0x80, hi = 0xBF)
        if (u[i] < lo || u[i] > hi)
            return 0;
    return l;
}

/* Writes a token's bytes readably: valid UTF-8 as is, control and stray bytes escaped. */
static void print_piece(FILE *out, const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        size_t l = u[i] >= 0x80 ? utf8_char_len(u + i, n - i) : 1;
        if (u[i] == '\\')
            fputs("\\\\", out);
        else if (u[i] == '\n')
            fputs("\\n", out);
        else if (u[i] == '\t')
            fputs("\\t", out);
        else if (u[i] == '\r')
            fputs("\\r", out);
        else if (l == 0 || u[i] < 0x20 || u[i] == 0x7F) {
            fprintf(out, "\\x%02x", u[i]);
            l = 1;
        } else
            fwrite(u + i, 1, l, out);
        i += l;
    }
}

int cli_tokenize(int argc, char **argv)
{
    const char *model = NULL, *file = NULL, *text = NULL;
    bool json = false, special = false;
    bool opts = true; /* until "--": what follows is text even if it starts with '-' */
    for (int i = 1; i < argc; i++) {
        if (opts && !strcmp(argv[i], "--"))
            opts = false;
        else if (!opts) {
            if (text) {
                fprintf(stderr, "seer tokenize: give the text as one argument (quote it)\n");
                usage(stderr);
                return CLI_USAGE;
            }
            text = argv[i];
        } else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            if (cli_model_arg(argv[++i], &model)) /* a name from `seer pull` → its directory */
                return CLI_FAIL;
        }
        else if (!strcmp(argv[i], "-f") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--special"))
            special = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "seer tokenize: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        } else if (!text)
            text = argv[i];
        else {
            fprintf(stderr, "seer tokenize: give the text as one argument (quote it)\n");
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!model || !!file == !!text) {
        usage(stderr);
        return CLI_USAGE;
    }

    tokenizer *tok = NULL;
    char *buf = NULL;
    size_t len = 0;
    tok_ids ids = {0};
    int rc = cli_load_tokenizer(model, &tok);
    if (!rc && file)
        rc = cli_read_file(file, &buf, &len);
    if (!rc)
        rc = tok_encode(tok, file ? buf : text, file ? len : strlen(text), special, &ids);
    if (rc) {
        free(buf);
        tok_free(tok);
        return cli_fail(rc);
    }
    if (json) {
        putchar('[');
        for (size_t i = 0; i < ids.n; i++)
            printf(i ? ",%d" : "%d", (int)ids.ids[i]);
        puts("]");
    } else {
        for (size_t i = 0; i < ids.n; i++) {
            size_t n;
            const char *p = tok_piece(tok, ids.ids[i], &n);
            printf("%d\t", (int)ids.ids[i]);
            print_piece(stdout, p, n);
            putchar('\n');
        }
    }
    int status = fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
    tok_ids_free(&ids);
    free(buf);
    tok_free(tok);
    return status;
}
