/* main.c — the `seer` command: global flags (-v, -q, --version) then a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "seer.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
};

seer_log_level cli_log_level = SEER_LOG_WARN;

static const struct command commands[] = {
    {"run", cli_run, "answer one prompt, streaming to stdout (-m MODEL -p PROMPT; --json, --raw, ...)"},
    {"describe", cli_describe, "describe what happens in videos, with times (-m MODEL VIDEO...; --chunk, --srt, --dry-run)"},
    {"ask", cli_ask, "answer a question about images (-m MODEL -p QUESTION IMAGE...; --json, --raw, --dry-run)"},
    {"ocr", cli_ocr, "batch OCR of scans: one result per page (-m MODEL INPUT...; --format, --out DIR, --resume)"},
    {"chat", cli_chat, "interactive chat with history (-m MODEL); one message per line on stdin"},
    {"pull", cli_pull, "download a model by name from the Hugging Face hub (qwen3.5-0.8b, -2b, -4b, -9b)"},
    {"list", cli_list, "list downloaded models: name, size, path"},
    {"info", cli_info, "show a model file's architecture, hyperparameters and tensors; --devices lists devices"},
    {"tokenize", cli_tokenize, "print the token ids of a text (-m MODEL TEXT | -f FILE, --json, --special)"},
    {"bench", cli_bench, "prefill/decode speed and peak memory (-m MODEL | --preset 0.8b --dtype q8_0; --json)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: seer [-v|-vv|-q] <command> [args]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nglobal flags: -v more logging (-vv debug), -q errors only, --version\n");
}

const char *cli_default_device(void)
{
    const char *d = getenv("SEER_DEVICE");
    return d && *d ? d : "auto";
}

int cli_fail(int rc)
{
    const char *msg = seer_last_error();
    fprintf(stderr, "seer: %s\n", msg && *msg ? msg : seer_strerror(rc));
    return CLI_FAIL;
}

int main(int argc, char **argv)
{
    int i = 1;
    seer_log_level level = SEER_LOG_WARN;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v"))
            level = SEER_LOG_INFO;
        else if (!strcmp(argv[i], "-vv"))
            level = SEER_LOG_DEBUG;
        else if (!strcmp(argv[i], "-q"))
            level = SEER_LOG_ERROR;
        else if (!strcmp(argv[i], "--version")) {
            printf("seer %s\n", seer_version());
            return CLI_OK;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_OK;
        } else {
            fprintf(stderr, "seer: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    seer_set_log_level(level);
    cli_log_level = level;
    if (i >= argc) {
        usage(stderr);
        return CLI_USAGE;
    }
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (!strcmp(argv[i], commands[c].name))
            return commands[c].run(argc - i, argv + i);
    fprintf(stderr, "seer: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return CLI_USAGE;
}
