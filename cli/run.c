/* run.c — `seer run` (one prompt, the answer streamed to stdout), and how every generation
   command runs a generation: Ctrl-C, the prompt progress line, the --json fields, the timing line.
   Logs, timings and progress go to stderr; stdout holds only the answer (or one JSON object with
   --json). Divisions: signals and progress · results · seer run. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

/* ---- signals and progress ------------------------------------------------------------------- */

/* The first SIGINT/SIGTERM only sets this: the library's callbacks (on_text, and on_progress after
   every prompt micro-batch and every token) see it and stop the generation, so what was generated
   is still printed. A second signal exits at once. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    if (g_signal)
        _exit(CLI_INTERRUPTED);
    g_signal = sig;
}

bool gen_interrupted(void) { return g_signal != 0; }

/* cli/chat.c: after a stopped answer the session goes on. */
void gen_clear_interrupt(void) { g_signal = 0; }

static struct {
    double t0;       /* when the prompt started */
    bool tty, force; /* stderr is a terminal; --progress */
    bool shown;      /* a progress line is on stderr */
} g_progress;

static void progress_clear(void)
{
    if (g_progress.shown && g_progress.tty)
        fputs("\r\033[K", stderr);
    g_progress.shown = false;
}

/* Prompt processing: on a terminal, a line redrawn in place once the prompt has taken a second
   (shorter ones would only flicker); with --progress, every micro-batch, one line each when stderr
   is not a terminal. Decoding: only the stop check. */
static int on_progress(int64_t done, int64_t total, int64_t generated, void *user)
{
    (void)user;
    if (g_signal) {
        progress_clear();
        return 1;
    }
    if (generated > 0 || done >= total) {
        progress_clear();
        return 0;
    }
    double dt = cli_time_now() - g_progress.t0;
    if (g_progress.force || (g_progress.tty && dt > 1.0)) {
        fprintf(stderr, "%sseer: prompt %lld/%lld tokens (%.0f t/s)%s", g_progress.tty ? "\r" : "", (long long)done,
                (long long)total, dt > 0 ? (double)done / dt : 0.0, g_progress.tty ? "\033[K" : "\n");
        g_progress.shown = true;
    }
    return 0;
}

void gen_start(struct gen_opts *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* SA_RESTART: a Ctrl-C while a slow reader (a pager) holds stdout back must let that write
       finish, not fail it with EINTR; the callbacks then see the flag and stop */
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    g_progress.t0 = cli_time_now();
    g_progress.tty = isatty(2) && !o->no_progress_line;
    g_progress.force = o->progress;
    o->gp.on_progress = on_progress;
    if (cli_log_level >= SEER_LOG_INFO)
        fprintf(stderr, "seer: seed %llu\n", (unsigned long long)o->gp.sampling.seed);
}

int gen_stream_stdout(const char *text, size_t len, void *user)
{
    (void)user;
    progress_clear();
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
        return cli_stdout_failed(errno), 1; /* a full disk: stop generating what cannot be delivered */
    return g_signal != 0;
}

/* ---- results -------------------------------------------------------------------------------- */

const char *gen_stop_name(enum seer_stop_reason s)
{
    static const char *const names[] = {"eos", "length", "stop_string", "context", "canceled"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

void gen_print_timings(const seer_result *r)
{
    fprintf(stderr, "seer: prompt %lld tokens in %.2f s (%.1f t/s), generated %zu tokens in %.2f s (%.1f t/s), stop: %s\n",
            (long long)r->prompt_tokens, r->prefill_seconds,
            r->prefill_seconds > 0 ? (double)r->prompt_tokens / r->prefill_seconds : 0.0, r->n_tokens,
            r->decode_seconds, r->decode_seconds > 0 ? (double)r->n_tokens / r->decode_seconds : 0.0,
            gen_stop_name(r->stop));
}

void gen_json_fields(json_t *obj, const struct gen_opts *o, const seer_model *m, const seer_result *r)
{
    if (!obj)
        return;
    if (!json_object_get(obj, "text"))
        json_object_set_new(obj, "text", json_stringn(r->text ? r->text : "", r->text ? r->text_len : 0));
    json_object_set_new(obj, "thinking", json_stringn(r->thinking ? r->thinking : "", r->thinking ? r->thinking_len : 0));
    json_object_set_new(obj, "stop", json_string(gen_stop_name(r->stop)));
    json_object_set_new(obj, "model", json_string(o->model ? o->model : ""));
    json_object_set_new(obj, "device", json_string(m ? seer_model_device(m) : ""));
    json_object_set_new(obj, "seed", json_integer((json_int_t)o->gp.sampling.seed));
}

int gen_finish(const struct gen_opts *o, const seer_result *r)
{
    (void)o;
    progress_clear();
    if (r->reasoning_cut && cli_log_level >= SEER_LOG_WARN)
        fprintf(stderr, "seer: warning: the answer is empty: the reasoning used the whole %s (raise %s)\n",
                r->stop == SEER_STOP_CONTEXT ? "context" : "token budget", r->stop == SEER_STOP_CONTEXT ? "-c" : "-n");
    if (g_signal && cli_log_level >= SEER_LOG_WARN)
        fprintf(stderr, "seer: interrupted; what was generated is printed\n");
    if (cli_log_level >= SEER_LOG_WARN)
        gen_print_timings(r);
    if (cli_faults_after_output() != CLI_OK) /* the answer did not arrive whole, or came from changed weights */
        return CLI_FAIL;
    return g_signal ? CLI_INTERRUPTED : CLI_OK;
}

static int print_json(const struct gen_opts *o, const seer_model *m, const seer_result *r)
{
    json_t *toks = json_array(), *obj;
    for (size_t i = 0; i < r->n_tokens; i++)
        json_array_append_new(toks, json_integer(r->tokens[i]));
    double pre = r->prefill_seconds, dec = r->decode_seconds;
    obj = json_pack("{s:s%, s:o, s:I, s:I, s:{s:f, s:f, s:f, s:f}}", "text", r->text, r->text_len, "tokens", toks,
                    "prompt_tokens",
                    (json_int_t)r->prompt_tokens, "generated_tokens", (json_int_t)r->n_tokens, "timings",
                    "prefill_seconds", pre, "decode_seconds", dec, "prefill_tokens_per_second",
                    pre > 0 ? (double)r->prompt_tokens / pre : 0.0, "decode_tokens_per_second",
                    dec > 0 ? (double)r->n_tokens / dec : 0.0);
    gen_json_fields(obj, o, m, r);
    char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(obj);
    if (!s)
        return fprintf(stderr, "seer: could not build the JSON output\n"), CLI_FAIL;
    printf("%s\n", s);
    if (fflush(stdout) != 0)
        cli_stdout_failed(errno);
    free(s);
    return CLI_OK;
}

/* ---- seer run ------------------------------------------------------------------------------- */

enum { R_PROMPT = 1, R_FILE, R_TOKENS, R_RAW, R_JSON, R_HELP };

static const struct cli_opt run_table[] = {
    {{"-p", "--prompt"}, "PROMPT", "the user message (plain text, rendered with the chat template)", R_PROMPT},
    {{"-f", "--file"}, "FILE", "read the prompt from FILE ('-' = stdin; stdin is read when it is not a "
                               "terminal and no prompt is given)", R_FILE},
    {{"--prompt-tokens"}, "L", "feed these comma-separated token ids directly (no template)", R_TOKENS},
    {{"--raw"}, NULL, "feed the prompt as is, without the chat template; special tokens in it are parsed", R_RAW},
    {{"--json"}, NULL, "print one JSON object (text, thinking, tokens, stop, seed, ...) instead of streaming",
     R_JSON},
    {{"-h", "--help"}, NULL, "this help", R_HELP},
};

/* "1,2,3" → ids; -1 on a malformed list. */
static int parse_ids(const char *s, int32_t **ids, size_t *n)
{
    size_t cap = 0, k = 0;
    int32_t *v = NULL;
    while (*s) {
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        if (end == s || errno || x < 0 || x > INT32_MAX || (*end && *end != ','))
            break;
        if (!cli_grow(&v, &cap, k + 1, sizeof *v, 16))
            break;
        v[k++] = (int32_t)x;
        s = *end ? end + 1 : end;
        if (!*s) {
            *ids = v;
            *n = k;
            return end[0] == ',' ? (free(v), -1) : 0;
        }
    }
    free(v);
    return -1;
}

static int run_usage(void)
{
    printf("usage: seer run -m MODEL (-p PROMPT | -f FILE | --prompt-tokens 1,2,3 | < FILE) [options]\n");
    cli_opt_help(stdout, run_table, sizeof run_table / sizeof *run_table);
    printf("%s", gen_help);
    return CLI_OK;
}

static int run_opt(const struct cli_opt *opt, const char *v, void *user)
{
    struct gen_opts *o = user;
    switch (opt->key) {
    case R_PROMPT: o->prompt = v; break;
    case R_FILE: o->prompt_file = v; break;
    case R_TOKENS: o->prompt_tokens = v; break;
    case R_RAW: o->raw = true; break;
    case R_JSON: o->json = true; break;
    case R_HELP: return run_usage();
    }
    return GEN_NEXT;
}

int cli_run(int argc, char **argv)
{
    struct gen_opts o;
    gen_opts_init(&o);
    int status = gen_parse_args("run", run_table, sizeof run_table / sizeof *run_table, false, argc, argv, &o, run_opt,
                                &o);
    if (status != GEN_NEXT)
        return status;
    int given = !!o.prompt + !!o.prompt_file + !!o.prompt_tokens;
    if (given == 0 && !isatty(0))
        o.prompt_file = "-", given = 1; /* a pipe or a redirected file: `echo hi | seer run -m M` */
    if (!o.model)
        return cli_no_model("run");
    if (given != 1) {
        fprintf(stderr, "seer run: need -m MODEL and exactly one of -p, -f, --prompt-tokens (or a prompt on stdin)\n");
        return CLI_USAGE;
    }
    char *file_text = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    if (o.prompt_file && (status = cli_read_text(o.prompt_file, &file_text, &(size_t){0})))
        return status;
    if (o.prompt_tokens && parse_ids(o.prompt_tokens, &ids, &n_ids)) {
        fprintf(stderr, "seer run: --prompt-tokens needs comma-separated non-negative ids, got '%s'\n",
                o.prompt_tokens);
        free(file_text);
        return CLI_USAGE;
    }
    const char *prompt = o.prompt ? o.prompt : file_text;
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_result r = {0};
    int rc;
    status = CLI_FAIL;
    if (!o.json)
        o.gp.on_text = gen_stream_stdout;
    else
        o.gp.show_thinking = 0; /* --json has the reasoning apart, as "thinking" */
    if ((rc = seer_model_load(o.model, &o.mp, &m)) || (rc = seer_context_create(m, &o.cp, &ctx))) {
        status = cli_fail(rc);
        goto done;
    }
    gen_start(&o);
    if (ids)
        rc = seer_generate_tokens(ctx, ids, n_ids, &o.gp, &r);
    else if (o.raw)
        rc = seer_generate_text(ctx, prompt, &o.gp, &r);
    else if (!(o.system && (rc = seer_chat_add(ctx, "system", o.system))) && !(rc = seer_chat_add(ctx, "user", prompt)))
        rc = seer_chat_generate(ctx, &o.gp, &r);
    if (rc) {
        if (!o.json)
            fflush(stdout);
        status = cli_fail(rc);
        goto done;
    }
    if (o.json)
        status = print_json(&o, m, &r);
    else {
        printf("\n");
        if (fflush(stdout) != 0) /* an empty answer's first write: keep its errno for gen_finish */
            cli_stdout_failed(errno);
        status = CLI_OK;
    }
    int fin = gen_finish(&o, &r);
    if (status == CLI_OK)
        status = fin;
done:
    seer_result_clear(&r);
    seer_context_free(ctx);
    seer_model_free(m);
    free(file_text);
    free(ids);
    return status;
}
