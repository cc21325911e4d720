/* main.c — the `seer` command: global flags (-v, -vv, -q, anywhere on the line; --version,
   --help-man, --completion SHELL) then a subcommand. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
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
    {"serve", cli_serve, "an OpenAI-compatible HTTP server for text, images and video (-m MODEL; --port, -np, --api-key)"},
    {"chat", cli_chat, "interactive chat with history (-m MODEL); line editing on a terminal, /help for commands"},
    {"pull", cli_pull, "download a model by name from the Hugging Face hub (qwen3.5-0.8b, -2b, -4b, -9b)"},
    {"list", cli_list, "list downloaded models: name, size, path"},
    {"info", cli_info, "show a model file's architecture, hyperparameters and tensors; --devices lists devices"},
    {"tokenize", cli_tokenize, "print the token ids of a text (-m MODEL TEXT | -f FILE, --json, --special)"},
    {"bench", cli_bench, "prefill/decode speed and peak memory (-m MODEL | --preset 0.8b --dtype q8_0; --json)"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

enum { M_VERBOSE, M_DEBUG, M_QUIET, M_VERSION, M_HELP, M_HELP_MAN, M_COMPLETION };
static const struct cli_opt global_opts[] = {
    {{"-v"}, NULL, "more logging (the seed, progress)", M_VERBOSE},
    {{"-vv"}, NULL, "debug logging", M_DEBUG},
    {{"-q"}, NULL, "errors only", M_QUIET},
    {{"--version"}, NULL, "print the version", M_VERSION},
    {{"-h", "--help"}, NULL, "this help", M_HELP},
    {{"--help-man"}, NULL, "print the man page (roff)", M_HELP_MAN},
    {{"--completion"}, "SHELL", "print the bash or zsh completion script", M_COMPLETION},
};
#define N_GLOBAL_OPTS (sizeof global_opts / sizeof global_opts[0])

/* The global flags' help lines, for usage and the man page: built once from the table. */
static const char *global_help(void)
{
    static char *text;
    size_t len;
    FILE *f = text ? NULL : open_memstream(&text, &len);
    if (f) {
        cli_opt_help(f, global_opts, N_GLOBAL_OPTS);
        fclose(f);
    }
    return text ? text : "";
}

static void usage(FILE *f)
{
    fprintf(f, "usage: seer [-v|-vv|-q] <command> [args]   (-v/-q may also follow the command)\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nglobal flags:\n%s\nseer <command> --help lists a command's options.\n", global_help());
}

/* -v, -vv, -q: 1 and the level, else 0. Exact words only: after the command, "-vfoo" is not ours. */
static int log_flag(const char *a, seer_log_level *level)
{
    static const seer_log_level levels[] = {[M_VERBOSE] = SEER_LOG_INFO, [M_DEBUG] = SEER_LOG_DEBUG,
                                            [M_QUIET] = SEER_LOG_ERROR};
    for (size_t r = 0; r < N_GLOBAL_OPTS; r++)
        if (global_opts[r].key <= M_QUIET && !strcmp(a, global_opts[r].name[0]))
            return *level = levels[global_opts[r].key], 1;
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
        const char *v;
        const struct cli_opt *opt = cli_opt_find(global_opts, N_GLOBAL_OPTS, argc, argv, &i, &v);
        switch (opt ? opt->key : -1) {
        case M_VERBOSE:
        case M_DEBUG:
        case M_QUIET: log_flag(opt->name[0], &level); break;
        case M_VERSION: printf("seer %s\n", seer_version()); return CLI_OK;
        case M_HELP: usage(stdout); return CLI_OK;
        case M_HELP_MAN: return cli_print_shell("man", commands, N_COMMANDS, global_help());
        case M_COMPLETION:
            if (!v)
                return fprintf(stderr, "seer: --completion needs bash or zsh\n"), CLI_USAGE;
            return cli_print_shell(v, commands, N_COMMANDS, global_help());
        default:
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
    const struct cli_command *cmd = NULL;
    for (size_t c = 0; c < N_COMMANDS && !cmd; c++)
        if (!strcmp(args[0], commands[c].name))
            cmd = &commands[c];
    int status;
    if (cmd) {
        status = cmd->run(n, args);
    } else {
        fprintf(stderr, "seer: unknown command '%s'\n", args[0]);
        usage(stderr);
        status = CLI_USAGE;
    }
    free(args);
    return status;
}
