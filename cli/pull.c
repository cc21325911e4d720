/* pull.c — models by name: `seer pull NAME...` (download from the Hugging Face hub, cli/hub.c)
   and `seer list` (what is downloaded, in cli_seer_home's models/). The library reads no
   environment, so $SEER_HF_ENDPOINT is read here. */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/hub.h"
#include "cli/util.h"

#define PATH_BYTES 4096

static const char pull_help[] =
    "usage: seer pull NAME... [--timeout SECONDS]\n"
    "Downloads a Qwen3.5 release from the Hugging Face hub into $SEER_HOME/models/NAME (default\n"
    "~/.cache/seer): config, tokenizer, preprocessor configs and safetensors weights, resumable,\n"
    "each file's size and SHA-256 checked. A model already there is not fetched again. Prints the\n"
    "model's directory on stdout.\n"
    "  NAME                      qwen3.5-0.8b, qwen3.5-2b, qwen3.5-4b or qwen3.5-9b\n";
static const char pull_env[] =
    "environment: SEER_HOME (where models go), SEER_HF_ENDPOINT (the hub, default https://huggingface.co)\n";

enum { P_HELP, P_TIMEOUT };
static const struct cli_opt pull_opts[] = {
    {{"--timeout"}, "SECONDS", "give up on a connection that receives nothing this long (default 60)", P_TIMEOUT},
    {{"-h", "--help"}, NULL, "this help", P_HELP},
};
#define N_PULL_OPTS (sizeof pull_opts / sizeof pull_opts[0])

static void pull_usage(FILE *f)
{
    fputs(pull_help, f);
    cli_opt_help(f, pull_opts, N_PULL_OPTS);
    fputs(pull_env, f);
}

/* ---- seer pull ---------------------------------------------------------------------------- */

struct progress {
    char file[256];
    double last;
};

/* One rewritten line per file on a terminal, at most ten times a second; nothing otherwise. */
static int show_progress(const char *file, uint64_t done, uint64_t size, void *user)
{
    struct progress *pr = user;
    double now = cli_time_now();
    bool same = !strcmp(pr->file, file);
    if (same && now - pr->last < 0.1 && done < size)
        return 0;
    if (!same && pr->file[0])
        fputc('\n', stderr);
    snprintf(pr->file, sizeof pr->file, "%s", file);
    pr->last = now;
    fprintf(stderr, "\r  %-36s %9.1f / %.1f MB (%3.0f%%)", file, (double)done / 1e6, (double)size / 1e6,
            size ? 100.0 * (double)done / (double)size : 100.0);
    return 0;
}

int cli_pull(int argc, char **argv)
{
    const char *names[16];
    int n_names = 0;
    long timeout = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        const struct cli_opt *opt = cli_opt_find(pull_opts, N_PULL_OPTS, argc, argv, &i, &v);
        if (opt && opt->key == P_HELP) {
            pull_usage(stdout);
            return CLI_OK;
        } else if (opt && opt->key == P_TIMEOUT && v) {
            char *end;
            timeout = strtol(v, &end, 10);
            if (*end || timeout < 1 || timeout > 86400) {
                fprintf(stderr, "seer pull: --timeout needs whole seconds in [1, 86400], got '%s'\n", v);
                return CLI_USAGE;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "seer pull: unknown or incomplete option '%s' (see seer pull --help)\n", a);
            return CLI_USAGE;
        } else if (!hub_canonical_name(a)) {
            fprintf(stderr, "seer pull: unknown model name '%s' (known: qwen3.5-0.8b, qwen3.5-2b, qwen3.5-4b, qwen3.5-9b)\n", a);
            return CLI_USAGE;
        } else if (n_names == (int)(sizeof names / sizeof names[0])) {
            fprintf(stderr, "seer pull: at most %zu names\n", sizeof names / sizeof names[0]);
            return CLI_USAGE;
        } else
            names[n_names++] = a;
    }
    if (!n_names) {
        pull_usage(stderr);
        return CLI_USAGE;
    }
    char home[PATH_BYTES], endpoint[2048];
    if (!cli_seer_home(home, sizeof home)) {
        fprintf(stderr, "seer pull: set SEER_HOME (or HOME) to where models should go\n");
        return CLI_FAIL;
    }
    const char *ep = getenv("SEER_HF_ENDPOINT");
    snprintf(endpoint, sizeof endpoint, "%s", ep && *ep ? ep : "https://huggingface.co");
    for (size_t n = strlen(endpoint); n > 0 && endpoint[n - 1] == '/'; n--)
        endpoint[n - 1] = '\0';
    struct progress pr = {{0}, 0};
    struct hub_params p = {.endpoint = endpoint, .home = home, .connect_timeout_s = timeout < 30 ? timeout : 30,
                           .stall_timeout_s = timeout, .retries = 3,
                           .progress = isatty(STDERR_FILENO) ? show_progress : NULL, .user = &pr};
    for (int k = 0; k < n_names; k++) {
        const char *canon = hub_canonical_name(names[k]);
        char dir[PATH_BYTES];
        bool already = false;
        pr.file[0] = '\0';
        int rc = hub_pull(&p, canon, &already);
        if (pr.file[0])
            fputc('\n', stderr);
        if (rc) {
            fprintf(stderr, "seer pull: %s: %s\n", canon, cli_last_error());
            return CLI_FAIL;
        }
        hub_model_dir(home, canon, dir, sizeof dir);
        fprintf(stderr, "seer pull: %s %s %s\n", canon, already ? "is already in" : "downloaded and verified into", dir);
        printf("%s\n", dir);
    }
    return CLI_OK;
}

/* ---- seer list ---------------------------------------------------------------------------- */

/* "1.75 GB", "12.3 MB" */
static void fmt_size(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= 1000000000u)
        snprintf(out, size, "%.2f GB", (double)bytes / 1e9);
    else
        snprintf(out, size, "%.1f MB", (double)bytes / 1e6);
}

/* Bytes of the regular files directly in dir (a model directory is flat). */
static uint64_t dir_bytes(const char *dir)
{
    uint64_t sum = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_BYTES];
    struct stat st;
    while (d && (e = readdir(d))) {
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < PATH_BYTES && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return sum;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int cli_list(int argc, char **argv)
{
    static const struct cli_opt list_opts[] = {{{"-h", "--help"}, NULL, "this help", P_HELP}};
    if (argc > 1) {
        int i = 1;
        const char *v;
        bool first_is_help = cli_opt_find(list_opts, 1, argc, argv, &i, &v) != NULL, help = first_is_help && argc == 2;
        FILE *f = help ? stdout : stderr;
        if (!help) /* the first word that is not -h */
            fprintf(stderr, "seer list: takes no arguments, got '%s'\n", argv[first_is_help ? 2 : 1]);
        fputs("usage: seer list\nLists the models in $SEER_HOME/models (default ~/.cache/seer): name, size, "
              "path; downloads in progress are marked.\n", f);
        cli_opt_help(f, list_opts, 1);
        return help ? CLI_OK : CLI_USAGE;
    }
    char home[PATH_BYTES], models_dir[PATH_BYTES];
    if (!cli_seer_home(home, sizeof home) || snprintf(models_dir, sizeof models_dir, "%s/models", home) >= PATH_BYTES) {
        fprintf(stderr, "seer list: set SEER_HOME (or HOME)\n");
        return CLI_FAIL;
    }
    DIR *d = opendir(models_dir);
    char *names[1024];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < sizeof names / sizeof names[0]) {
        size_t len = strlen(e->d_name);
        bool partial = e->d_name[0] == '.' && len > 9 && !strcmp(e->d_name + len - 8, ".partial");
        if ((e->d_name[0] != '.' || partial) && (names[n] = strdup(e->d_name)))
            n++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_BYTES];
        if (snprintf(path, sizeof path, "%s/%s", models_dir, names[i]) < PATH_BYTES && cli_path_kind(path) == CLI_PATH_DIR) {
            char sz[32];
            fmt_size(dir_bytes(path), sz, sizeof sz);
            int len = (int)strlen(names[i]) - 9;
            if (names[i][0] == '.') /* ".NAME.partial": an interrupted pull */
                printf("%-16.*s %10s  %s  (incomplete: `seer pull %.*s` resumes it)\n", len, names[i] + 1, sz, path,
                       len, names[i] + 1);
            else
                printf("%-16s %10s  %s\n", names[i], sz, path);
            shown++;
        }
        free(names[i]);
    }
    if (!shown)
        fprintf(stderr, "seer list: no models in %s (seer pull qwen3.5-0.8b downloads one)\n", models_dir);
    return CLI_OK;
}
