/* options.c — the generation options as one table: the parser every generation command shares
   (run, chat, ask, describe, ocr), the --help text, and, from the commands' --help output, the man
   page and the bash and zsh completions (so none of them can drift from what the parser accepts).
   Spellings follow llama.cpp where seer has the same option: `--flag VALUE`, `--flag=VALUE`,
   `-n4` (a one-letter name with its value attached), `-sys`, `-ub`.
   Divisions: the table · matching a command line · the generation options · the video sampling
   flags · help, man page and completions. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"

/* ---- the table ------------------------------------------------------------------------------ */

enum {
    G_MODEL = 1, G_DEVICE, G_THREADS, G_CTX, G_UBATCH, G_PREDICT, G_TEMP, G_TOP_K, G_TOP_P, G_MIN_P, G_REPEAT,
    G_PRESENCE, G_FREQUENCY, G_SEED, G_STOP, G_THINK, G_NO_THINK, G_THINKING_BUDGET, G_SHOW_THINKING, G_SYSTEM, G_PROGRESS,
    G_JSON_SCHEMA, G_GRAMMAR, G_FORMAT, G_EXACT, G_CACHE_TYPE, G_WEIGHTS, G_RESIZE,
};

/* Rows are printed in this order by --help. */
const struct cli_opt gen_opts_table[] = {
    {{"-m", "--model"}, "MODEL", "GGUF text model, Hugging Face model directory, or a name from seer pull (default: qwen3.5-0.8b once pulled)", G_MODEL},
    {{"--device"}, "D", "auto (default; or $SEER_DEVICE), cpu, vulkan, vulkan:N", G_DEVICE},
    {{"-t", "--threads"}, "N", "CPU threads (default: all cores)", G_THREADS},
    {{"--exact"}, NULL, "f32 activations in every matmul (default: 8-bit as llama.cpp on the CPU, int8 dot products or fp16 on GPUs that have them; faster)", G_EXACT},
    {{"--cache-type"}, "T", "KV cache f16 (default), f32 or q8_0", G_CACHE_TYPE},
    {{"--weights"}, "W", "CPU: copy (weights in memory, faster decode), map (read in place, fast start) or auto (default: copy what fits in half the free memory)", G_WEIGHTS},
    {{"--resize"}, "R", "bicubic resize of images and video frames: torchvision (default; transformers' default processor, bit for bit) or pillow (its PIL backend)", G_RESIZE},
    {{"-c", "--ctx-size"}, "N", "context size in tokens (default 4096; 0 = the model's, as memory allows)", G_CTX},
    {{"-ub", "--ubatch-size", "-b"}, "N", "prompt tokens per forward micro-batch (default 512; -b is an alias)",
     G_UBATCH},
    {{"-n", "--n-predict"}, "N", "most tokens to generate (default 1024; -1 = until the turn or context ends)",
     G_PREDICT},
    {{"--temp"}, "T", "temperature; 0 = greedy (default 1.0)", G_TEMP},
    {{"--top-k"}, "K", "keep the K likeliest tokens (default 20; 0 = off)", G_TOP_K},
    {{"--top-p"}, "P", "nucleus sampling (default 1.0 = off)", G_TOP_P},
    {{"--min-p"}, "P", "drop tokens below P x the likeliest (default 0 = off)", G_MIN_P},
    {{"--repeat-penalty"}, "R", "(default 1 = off)", G_REPEAT},
    {{"--presence-penalty"}, "P", "(default 2.0; the model card's)", G_PRESENCE},
    {{"--frequency-penalty"}, "F", "F x a token's count in the reply off its logit (default 0 = off)", G_FREQUENCY},
    {{"-s", "--seed"}, "S", "sampling seed (default: random, printed with -v and in --json)", G_SEED},
    {{"--stop"}, "STR", "stop when STR appears (repeatable)", G_STOP},
    {{"--think"}, NULL, "let the model reason first (default: as the model's chat template; the small models' does not)", G_THINK},
    {{"--no-think"}, NULL, "answer without reasoning (the default of ocr and describe)", G_NO_THINK},
    {{"--thinking-budget"}, "N", "with --think: at most N reasoning tokens, then the think block is closed and the answer follows", G_THINKING_BUDGET},
    {{"--show-thinking"}, NULL, "stream the reasoning too (--json has it apart, as \"thinking\")", G_SHOW_THINKING},
    {{"-sys", "--system-prompt", "--system"}, "TEXT", "a system message (plain text, like every message)",
     G_SYSTEM},
    {{"--progress"}, NULL, "show prompt progress on stderr even when it is not a terminal", G_PROGRESS},
    {{"-j", "--json-schema"}, "SCHEMA", "the answer is JSON valid under SCHEMA (inline JSON, or @FILE)", G_JSON_SCHEMA},
    {{"--grammar"}, "FILE", "the answer follows a llama.cpp GBNF grammar (its rule 'root')", G_GRAMMAR},
    {{"--format"}, "json", "the answer is one JSON value (any shape)", G_FORMAT},
};
const size_t gen_opts_table_len = sizeof gen_opts_table / sizeof gen_opts_table[0];

/* ---- matching a command line ---------------------------------------------------------------- */

const struct cli_opt *cli_opt_find(const struct cli_opt *tab, size_t n, int argc, char **argv, int *i,
                                   const char **val)
{
    const char *a = argv[*i];
    *val = NULL;
    if (a[0] != '-' || !a[1])
        return NULL;
    size_t alen = strcspn(a, "=");
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < CLI_OPT_NAMES && tab[r].name[k]; k++) {
            const char *nm = tab[r].name[k];
            if (!strcmp(a, nm)) { /* --flag VALUE, or a switch */
                if (tab[r].arg && *i + 1 < argc)
                    *val = argv[++*i];
                return &tab[r];
            }
            if (tab[r].arg && nm[1] == '-' && alen == strlen(nm) && !strncmp(a, nm, alen) && a[alen] == '=') {
                *val = a + alen + 1; /* --flag=VALUE */
                return &tab[r];
            }
        }
    /* -n4, -c0, -s5: a one-letter name with its value attached; exact names (-sys) matched above */
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < CLI_OPT_NAMES && tab[r].name[k]; k++) {
            const char *nm = tab[r].name[k];
            if (tab[r].arg && nm[1] != '-' && !nm[2] && a[1] == nm[1] && a[2]) {
                *val = a + 2;
                return &tab[r];
            }
        }
    return NULL;
}

/* ---- the generation options ------------------------------------------------------------------ */

static int num(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || errno || d < lo || d > hi) {
        fprintf(stderr, "seer: %s needs a number in [%g, %g], got '%s'\n", opt, lo, hi, v ? v : "");
        return -1;
    }
    *out = d;
    return 0;
}

/* auto, cpu, vulkan or vulkan:N: anything else is a usage error before a model is loaded. */
static bool device_ok(const char *d)
{
    if (!strcmp(d, "auto") || !strcmp(d, "cpu") || !strcmp(d, "vulkan"))
        return true;
    if (strncmp(d, "vulkan:", 7) || !d[7])
        return false;
    for (const char *p = d + 7; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

void gen_opts_init(struct gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = cli_default_model();
    o->mp = seer_model_params_default();
    o->mp.device = cli_default_device();
    o->cp = seer_context_params_default();
    o->gp = seer_generate_params_default();
    o->gp.stop = o->stops;
    o->gp.sampling.seed = cli_random_seed(0);
}

/* -j SCHEMA / -j @FILE, --grammar FILE, --format json: one of them per command line. A file's text
   is kept for the process's life (the generate params point at it; one per process, so static). */
static char *structured_text;

static int structured_opt(int key, const char *nm, const char *v, struct gen_opts *o)
{
    char *text = NULL;
    size_t len;
    if (o->gp.grammar || o->gp.json_schema)
        return fprintf(stderr, "seer: %s: only one of -j/--json-schema, --grammar and --format may be given\n", nm), -1;
    if (key == G_FORMAT) {
        if (strcmp(v, "json"))
            return fprintf(stderr, "seer: --format takes only 'json', got '%s'\n", v), -1;
        o->gp.json_schema = "{}";
        return 1;
    }
    const char *file = key == G_GRAMMAR ? v : v[0] == '@' ? v + 1 : NULL;
    if (file && cli_read_file(file, &text, &len))
        return fprintf(stderr, "seer: %s: %s\n", nm, cli_last_error()), -1;
    if (file && strlen(text) != len) {
        free(text);
        return fprintf(stderr, "seer: %s: %s holds a NUL byte\n", nm, file), -1;
    }
    if (file) {
        free(structured_text);
        structured_text = text;
    }
    if (key == G_GRAMMAR)
        o->gp.grammar = text;
    else
        o->gp.json_schema = file ? text : v;
    return 1;
}

int gen_parse_opt(int argc, char **argv, int *i, struct gen_opts *o, size_t *n_stop)
{
    const char *a = argv[*i], *v;
    const int at = *i;
    const struct cli_opt *opt = cli_opt_find(gen_opts_table, gen_opts_table_len, argc, argv, i, &v);
    double d;
    if (!opt)
        return 0;
    if (opt->arg && !v)
        return fprintf(stderr, "seer: %s needs a value (%s)\n", a, opt->arg), -1;
    const char *nm = opt->name[0];
#define NUM(lo, hi) \
    do { \
        if (num(nm, v, lo, hi, &d)) \
            return -1; \
    } while (0)
    switch (opt->key) {
    case G_MODEL:
        if (cli_model_arg(v, &o->model)) /* a name from `seer pull` → its directory */
            return -1;
        break;
    case G_DEVICE:
        if (!device_ok(v))
            return fprintf(stderr, "seer: --device must be auto, cpu, vulkan or vulkan:N, got '%s'\n", v), -1;
        o->mp.device = v;
        break;
    case G_SYSTEM: o->system = v; break;
    case G_STOP:
        if (*n_stop >= MAX_STOPS)
            return fprintf(stderr, "seer: at most %d --stop strings\n", MAX_STOPS), -1;
        o->stops[(*n_stop)++] = v;
        break;
    case G_THREADS: NUM(1, 1024); o->mp.n_threads = (int)d; break;
    case G_CTX: NUM(0, 1 << 24); o->cp.n_ctx = (int64_t)d; break;
    case G_UBATCH: NUM(1, 1 << 16); o->cp.n_batch = (int64_t)d; break;
    case G_PREDICT: NUM(-1, 1 << 24); o->gp.max_tokens = (int64_t)d; break;
    case G_TEMP: NUM(0, 100); o->gp.sampling.temperature = (float)d; break;
    case G_TOP_K: NUM(0, 1 << 30); o->gp.sampling.top_k = (int32_t)d; break;
    case G_TOP_P: NUM(0, 1); o->gp.sampling.top_p = (float)d; break;
    case G_MIN_P: NUM(0, 1); o->gp.sampling.min_p = (float)d; break;
    case G_REPEAT: NUM(0.01, 100); o->gp.sampling.repeat_penalty = (float)d; break;
    case G_PRESENCE: NUM(-100, 100); o->gp.sampling.presence_penalty = (float)d; break;
    case G_FREQUENCY: NUM(-100, 100); o->gp.sampling.frequency_penalty = (float)d; break;
    case G_SEED: NUM(0, 1.8e19); o->gp.sampling.seed = (uint64_t)d, o->seed_given = true; break;
    case G_THINK: o->gp.think = 1; break;
    case G_NO_THINK: o->gp.think = 0; break;
    case G_SHOW_THINKING: o->gp.show_thinking = 1; break;
    case G_THINKING_BUDGET: NUM(1, 1e12); o->gp.thinking_budget = (int64_t)d; break;
    case G_PROGRESS: o->progress = true; break;
    case G_EXACT: o->mp.exact = 1; break;
    case G_WEIGHTS:
        if (strcmp(v, "auto") && strcmp(v, "map") && strcmp(v, "copy"))
            return fprintf(stderr, "seer: --weights must be auto, map or copy, got '%s'\n", v), -1;
        o->mp.weights = v;
        break;
    case G_RESIZE:
        if (strcmp(v, "torchvision") && strcmp(v, "pillow"))
            return fprintf(stderr, "seer: --resize must be torchvision or pillow, got '%s'\n", v), -1;
        o->mp.resize = v;
        break;
    case G_CACHE_TYPE:
        if (strcmp(v, "f16") && strcmp(v, "f32") && strcmp(v, "q8_0"))
            return fprintf(stderr, "seer: --cache-type must be f16, f32 or q8_0, got '%s'\n", v), -1;
        o->cp.cache_type = v;
        break;
    case G_FORMAT:
        if (strcmp(v, "json") && strcmp(argv[0], "run") && strcmp(argv[0], "chat")) {
            *i = at; /* another --format of the command's own (seer ocr --format text|markdown|jsonl) */
            return 0;
        }
        return structured_opt(opt->key, nm, v, o);
    case G_JSON_SCHEMA:
    case G_GRAMMAR:
        return structured_opt(opt->key, nm, v, o);
    }
#undef NUM
    /* values the number parser took must be whole where the field is an integer */
    if ((opt->key == G_THREADS || opt->key == G_CTX || opt->key == G_UBATCH || opt->key == G_PREDICT ||
         opt->key == G_TOP_K || opt->key == G_SEED) && d != (double)(int64_t)d && d < 9.2e18)
        return fprintf(stderr, "seer: %s needs a whole number, got '%s'\n", nm, v), -1;
    return 1;
}

/* Whether a is one of tab's names exactly (or "--name=value"). */
static bool spelled_in(const struct cli_opt *tab, size_t n, const char *a)
{
    const size_t alen = strcspn(a, "=");
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < CLI_OPT_NAMES && tab[r].name[k]; k++)
            if (strlen(tab[r].name[k]) == alen && !strncmp(a, tab[r].name[k], alen))
                return true;
    return false;
}

int gen_parse_args(const char *cmd, const struct cli_opt *tab, size_t n, bool operands, int argc, char **argv,
                   struct gen_opts *o, gen_own_fn own, void *user)
{
    size_t n_stop = 0;
    int status = GEN_NEXT;
    for (int i = 1; i < argc && status == GEN_NEXT; i++) {
        const char *a = argv[i], *v;
        /* the command's own exact spellings first: serve's -np is not -n with the value "p" */
        int r = spelled_in(tab, n, a) ? 0 : gen_parse_opt(argc, argv, &i, o, &n_stop);
        if (!r && o->video)
            r = cli_video_parse_opt(argc, argv, &i, o->video);
        if (r)
            status = r < 0 ? CLI_USAGE : GEN_NEXT;
        else {
            const struct cli_opt *opt = cli_opt_find(tab, n, argc, argv, &i, &v);
            if (opt ? opt->arg && !v : (a[0] == '-' && a[1]) || !operands) {
                fprintf(stderr, "seer %s: unknown or incomplete option '%s' (see seer %s --help)\n", cmd, a, cmd);
                status = CLI_USAGE;
            } else
                status = own(opt, opt ? v : a, user);
        }
    }
    o->gp.n_stop = n_stop;
    return status;
}

/* ---- the video sampling flags (ask, describe, bench --video) --------------------------------- */

enum { V_FPS = 1, V_MIN_FRAMES, V_MAX_FRAMES, V_MAX_TOKENS, V_START, V_END };

static const struct cli_opt video_opts[] = {
    {{"--fps"}, "F", "frames sampled per second of video (default: the model's, 2)", V_FPS},
    {{"--min-frames"}, "N", "fewest frames sampled per video (default: the model's, 4)", V_MIN_FRAMES},
    {{"--max-frames"}, "N", "most frames sampled per video (default: the model's, 768)", V_MAX_FRAMES},
    {{"--max-video-tokens"}, "N", "fit each video in N tokens: lower resolution first, then fewer frames", V_MAX_TOKENS},
    {{"--start"}, "T", "use only the part from T (seconds, MM:SS or HH:MM:SS); times stay the file's", V_START},
    {{"--end"}, "T", "... and up to T (default: the end of the file)", V_END},
};

void cli_video_help(FILE *f) { cli_opt_help(f, video_opts, sizeof video_opts / sizeof *video_opts); }

double cli_parse_time(const char *s)
{
    double t = 0;
    int fields = 0;
    if (!s || !*s)
        return -1;
    for (;;) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || !(x >= 0) || x > 1e9 || (*end && *end != ':') || ++fields > 3)
            return -1;
        t = t * 60 + x;
        if (!*end)
            return t;
        s = end + 1;
    }
}

int cli_video_parse_opt(int argc, char **argv, int *i, seer_video_input *in)
{
    const char *v, *a = argv[*i];
    const int at = *i;
    const struct cli_opt *opt = cli_opt_find(video_opts, sizeof video_opts / sizeof *video_opts, argc, argv, i, &v);
    char *end;
    if (!opt)
        return 0;
    const char *nm = opt->name[0];
    if (!v) {
        *i = at;
        return fprintf(stderr, "seer: %s needs a value (%s)\n", a, opt->arg), -1;
    }
    if (opt->key == V_START || opt->key == V_END) {
        double t = cli_parse_time(v);
        if (t < 0)
            return fprintf(stderr, "seer: %s needs a time (seconds, MM:SS or HH:MM:SS), got '%s'\n", nm, v), -1;
        *(opt->key == V_START ? &in->start_seconds : &in->end_seconds) = t;
    } else if (opt->key == V_FPS) {
        double f = strtod(v, &end);
        if (end == v || *end || !(f > 0 && f <= 1000))
            return fprintf(stderr, "seer: --fps needs a rate in (0, 1000], got '%s'\n", v), -1;
        in->fps = f;
    } else {
        /* frame counts within what one plan may hold (the library's 4096 frames, spec §5.3) */
        const long long hi = opt->key == V_MAX_TOKENS ? (long long)1 << 40 : 4096;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 1 || x > hi)
            return fprintf(stderr, "seer: %s needs a whole number in [1, %lld], got '%s'\n", nm, hi, v), -1;
        *(opt->key == V_MAX_TOKENS ? &in->max_tokens : opt->key == V_MIN_FRAMES ? &in->min_frames : &in->max_frames) = x;
    }
    return 1;
}

/* ---- help, man page and completions ---------------------------------------------------------- */

void cli_opt_help(FILE *f, const struct cli_opt *tab, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        char left[96];
        int w = 0;
        for (int k = 0; k < CLI_OPT_NAMES && tab[r].name[k]; k++)
            w += snprintf(left + w, sizeof left - (size_t)w, "%s%s", k ? ", " : "", tab[r].name[k]);
        if (tab[r].arg)
            snprintf(left + w, sizeof left - (size_t)w, " %s", tab[r].arg);
        fprintf(f, "  %-24s  %s\n", left, tab[r].help);
    }
}

const char *gen_help_text(void)
{
    static char *text;
    if (!text) {
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
            return "";
        cli_opt_help(f, gen_opts_table, gen_opts_table_len);
        fclose(f);
    }
    return text ? text : "";
}

/* A command's --help text, from a child process running it (the commands print their help from
   their own tables and strings; reading it back is what keeps the man page and completions true). */
static char *command_help(int (*run)(int, char **), const char *name)
{
    int fd[2];
    if (pipe(fd))
        return NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return close(fd[0]), close(fd[1]), NULL;
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]), close(fd[1]);
        char *av[] = {(char *)name, "--help", NULL};
        run(2, av);
        fflush(stdout);
        _exit(0);
    }
    close(fd[1]);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char chunk[4096];
    ssize_t k;
    while (f && (k = read(fd[0], chunk, sizeof chunk)) > 0)
        fwrite(chunk, 1, (size_t)k, f);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    if (f)
        fclose(f);
    return buf;
}

/* The flags a help text documents: on each line that starts (after spaces) with '-', the words of
   its first column ("-n, --n-predict N", up to two spaces) that start with '-', without "=VALUE". */
static void help_flags(const char *help, FILE *out)
{
    for (const char *line = help; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line), s = strspn(line, " ");
        if (s > 0 && s < n && line[s] == '-') {
            char col[256];
            const char *two = strstr(line + s, "  ");
            size_t cn = two && two < line + n ? (size_t)(two - line - s) : n - s;
            snprintf(col, sizeof col, "%.*s", (int)cn, line + s);
            for (char *t = strtok(col, " ,|"); t; t = strtok(NULL, " ,|"))
                if (t[0] == '-' && t[1] && t[1] != ' ') {
                    t[strcspn(t, "=[")] = '\0';
                    fprintf(out, " %s", t);
                }
        }
        line = end ? end + 1 : NULL;
    }
}

/* roff: a line starting with '.' or '\'' is a request, and a backslash an escape. */
static void roff_text(FILE *f, const char *s)
{
    bool bol = true;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
        bol = *s == '\n';
    }
}

int cli_print_shell(const char *what, const struct cli_command *cmds, size_t n_cmds, const char *global_help)
{
    char **helps = calloc(n_cmds, sizeof *helps);
    if (!helps)
        return CLI_FAIL;
    for (size_t c = 0; c < n_cmds; c++)
        helps[c] = command_help(cmds[c].run, cmds[c].name);
    int status = CLI_OK;
    if (!strcmp(what, "man")) {
        printf(".TH SEER 1 \"\" \"seer %s\" \"User Commands\"\n.SH NAME\nseer \\- run Qwen3.5 small multimodal models "
               "locally (CPU and Vulkan)\n.SH SYNOPSIS\n.B seer\n[\\-v|\\-vv|\\-q] \\fIcommand\\fR [\\fIoptions\\fR]\n"
               ".SH DESCRIPTION\nResults go to stdout, everything else to stderr. Exit status: 0 ok, 1 a runtime "
               "failure, 2 a usage error, 130 interrupted.\nOptions take their value as \\fB\\-\\-flag value\\fR or "
               "\\fB\\-\\-flag=value\\fR; one-letter options also as \\fB\\-n4\\fR.\n.SH GLOBAL OPTIONS\n.nf\n",
               seer_version());
        roff_text(stdout, global_help);
        printf(".fi\n.SH COMMANDS\n");
        for (size_t c = 0; c < n_cmds; c++) {
            printf(".SS %s\n", cmds[c].name);
            roff_text(stdout, cmds[c].help);
            printf("\n.PP\n.nf\n");
            roff_text(stdout, helps[c] ? helps[c] : "");
            printf(".fi\n");
        }
        printf(".SH ENVIRONMENT\n.TP\n.B SEER_DEVICE\nthe device when no \\-\\-device is given\n"
               ".SH SEE ALSO\ndocs/CLI.md in the source tree\n");
    } else if (!strcmp(what, "bash")) {
        printf("# bash completion for seer (generated by seer --completion bash)\n_seer() {\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} cmd= i\n"
               "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
               "        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n    done\n"
               "    local flags=\n    case $cmd in\n");
        for (size_t c = 0; c < n_cmds; c++) {
            printf("        %s) flags=\"", cmds[c].name);
            help_flags(helps[c], stdout);
            printf("\" ;;\n");
        }
        printf("        '') COMPREPLY=($(compgen -W \"");
        for (size_t c = 0; c < n_cmds; c++)
            printf("%s ", cmds[c].name);
        printf("-v -vv -q --version --help\" -- \"$cur\")); return ;;\n    esac\n"
               "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags -v -q\" -- \"$cur\"))\n"
               "    else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n}\ncomplete -o filenames -F _seer seer\n");
    } else if (!strcmp(what, "zsh")) {
        printf("#compdef seer\n# zsh completion for seer (generated by seer --completion zsh)\n_seer() {\n"
               "  local -a cmds\n  cmds=(\n");
        for (size_t c = 0; c < n_cmds; c++) {
            printf("    '%s:", cmds[c].name);
            for (const char *p = cmds[c].help; *p && *p != '('; p++)
                if (*p != '\'' && *p != ':')
                    putchar(*p);
            printf("'\n");
        }
        printf("  )\n  if (( CURRENT == 2 )); then _describe command cmds; return; fi\n  local -a flags\n"
               "  case ${words[2]} in\n");
        for (size_t c = 0; c < n_cmds; c++) {
            printf("    %s) flags=(", cmds[c].name);
            help_flags(helps[c], stdout);
            printf(") ;;\n");
        }
        printf("  esac\n  if [[ $PREFIX == -* ]]; then compadd -a flags; else _files; fi\n}\n_seer \"$@\"\n");
    } else {
        fprintf(stderr, "seer: --completion takes bash or zsh, got '%s'\n", what);
        status = CLI_USAGE;
    }
    for (size_t c = 0; c < n_cmds; c++)
        free(helps[c]);
    free(helps);
    return status;
}
