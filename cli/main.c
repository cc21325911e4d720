/* main.c — the `seer` command: global flags (-v, -vv, -q, anywhere on the line; --version,
   --help-man, --completion SHELL) then a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

static const struct cli_command commands[] = {
    {"run", cli_run, "answer one prompt, streaming to stdout (-m MODEL -p PROMPT; --json, --raw, ...)"},
    {"describe", cli_describe, "describe what happens in videos, with times (-m MODEL VIDEO...; --chunk, --srt, --dry-run)"},
    {"ask", cli_ask, "answer a question about images (-m MODEL -p QUESTION IMAGE...; --json, --raw, --dry-run)"},
    {"ocr", cli_ocr, "batch OCR of scans: one result per page (-m MODEL INPUT...; --format, --out DIR, --resume)"},
    {"chat", cli_chat, "interactive chat with history (-m MODEL); line editing on a terminal, /help for commands"},
    {"pull", cli_pull, "download a model by name from the Hugging Face hub (qwen3.5-0.8b, -2b, -4b, -9b)"},
    {"list", cli_list, "list downloaded models: name, size, path"},
    {"info", cli_info, "show a model file's architecture, hyperparameters and tensors; --devices lists devices"},
    {"tokenize", cli_tokenize, "print the token ids of a text (-m MODEL TEXT | -f FILE, --json, --special)"},
    {"bench", cli_bench, "prefill/decode speed and peak memory (-m MODEL | --preset 0.8b --dtype q8_0; --json)"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char global_help[] =
    "  -v                  more logging (the seed, progress); -vv debug\n"
    "  -q                  errors only\n"
    "  --version           print the version\n"
    "  --help-man          print the man page (roff)\n"
    "  --completion SHELL  print the bash or zsh completion script\n";

static void usage(FILE *f)
{
    fprintf(f, "usage: seer [-v|-vv|-q] <command> [args]   (-v/-q may also follow the command)\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nglobal flags:\n%s\nseer <command> --help lists a command's options.\n", global_help);
}

static int log_flag(const char *a, seer_log_level *level)
{
    if (!strcmp(a, "-v"))
        return *level = SEER_LOG_INFO, 1;
    if (!strcmp(a, "-vv"))
        return *level = SEER_LOG_DEBUG, 1;
    if (!strcmp(a, "-q"))
        return *level = SEER_LOG_ERROR, 1;
    return 0;
}

/* Whether `a` is a generation option taking a value, so the next word is its value, not a flag
   (`-p -v` asks about "-v"). */
static int takes_value(const char *a)
{
    for (size_t r = 0; r < gen_opts_table_len; r++)
        for (int k = 0; k < CLI_OPT_NAMES && gen_opts_table[r].name[k]; k++)
            if (gen_opts_table[r].arg && !strcmp(a, gen_opts_table[r].name[k]))
                return 1;
    return !strcmp(a, "-p") || !strcmp(a, "--prompt") || !strcmp(a, "-f") || !strcmp(a, "--file");
}

/* After the command: -v/-vv/-q are taken out wherever they are (llama.cpp and Ollama users put
   them last), and "--flag=value" becomes "--flag" "value" for the commands that parse words
   (the generation table accepts both itself). Stops at "--". Returns the new argc. */
static int global_flags(int argc, char **argv, char **out, seer_log_level *level)
{
    int n = 0;
    bool after_dashes = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (after_dashes || i == 0) {
            out[n++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--"))
            after_dashes = true;
        else if (log_flag(a, level))
            continue;
        else if (takes_value(a) && i + 1 < argc) {
            out[n++] = argv[i++];
        } else if (!strncmp(a, "--", 2) && strchr(a, '=')) {
            char *eq = strchr(argv[i], '=');
            *eq = '\0'; /* argv is ours to change */
            out[n++] = argv[i];
            out[n++] = eq + 1;
            continue;
        }
        out[n++] = argv[i];
    }
    out[n] = NULL;
    return n;
}

int main(int argc, char **argv)
{
    int i = 1;
    seer_log_level level = SEER_LOG_WARN;
    cli_faults_install();
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (log_flag(argv[i], &level))
            continue;
        if (!strcmp(argv[i], "--version")) {
            printf("seer %s\n", seer_version());
            return CLI_OK;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--help-man")) {
            return cli_print_shell("man", commands, N_COMMANDS, global_help);
        } else if (!strcmp(argv[i], "--completion")) {
            if (i + 1 >= argc)
                return fprintf(stderr, "seer: --completion needs bash or zsh\n"), CLI_USAGE;
            return cli_print_shell(argv[i + 1], commands, N_COMMANDS, global_help);
        } else {
            fprintf(stderr, "seer: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return CLI_USAGE;
    }
    /* every "--flag=value" may add one word */
    char **args = malloc((size_t)(2 * (argc - i) + 1) * sizeof *args);
    if (!args)
        return CLI_FAIL;
    int n = global_flags(argc - i, argv + i, args, &level);
    seer_set_log_level(level);
    cli_log_level = level;
    int status = -1;
    for (size_t c = 0; c < N_COMMANDS && status < 0; c++)
        if (!strcmp(args[0], commands[c].name))
            status = commands[c].run(n, args);
    if (status < 0) {
        fprintf(stderr, "seer: unknown command '%s'\n", args[0]);
        usage(stderr);
        status = CLI_USAGE;
    }
    free(args);
    return status;
}
