/* run.c — `seer run` (one prompt, answer streamed to stdout) and `seer chat` (interactive, history
   kept, earlier turns never re-processed). Logs, timings and prompts go to stderr; stdout holds only
   the answer (or one JSON object with --json). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "core/util.h"
#include "seer.h"

const char gen_help[] =
    "  -m MODEL            GGUF text model, Hugging Face model directory, or a name from seer pull\n"
    "                      (default: qwen3.5-0.8b when it has been pulled)\n"
    "  --device D          auto (default; or $SEER_DEVICE), cpu, vulkan, vulkan:N\n"
    "  -t N                CPU threads (default: all cores)\n"
    "  -c N                context size in tokens (default 4096)\n"
    "  -b N                prompt tokens per forward micro-batch (default 512)\n"
    "  -n N                most tokens to generate (default 1024)\n"
    "  --temp T            temperature; 0 = greedy (default 1.0)\n"
    "  --top-k K           (default 20)   --top-p P (default 1.0)   --min-p P (default 0)\n"
    "  --repeat-penalty R  (default 1)    --presence-penalty P (default 2.0)\n"
    "  --seed S            sampling seed (default 0)\n"
    "  --stop STR          stop when STR appears (repeatable)\n"
    "  --think, --no-think let the model reason first (default: off for these small models)\n"
    "  --show-thinking     print the reasoning too\n"
    "  --system TEXT       a system message\n";

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

/* Parses one generation option at argv[*i]; 1 = consumed, 0 = not ours, -1 = bad value. */
int gen_parse_opt(int argc, char **argv, int *i, struct gen_opts *o, size_t *n_stop)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    double d;
#define VAL(lo, hi) (num(a, v, lo, hi, &d) ? -1 : (++*i, 1))
    int r;
    if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
        if (!v)
            return fprintf(stderr, "seer: %s needs a path or a model name\n", a), -1;
        if (cli_model_arg(v, &o->model))
            return -1;
        ++*i;
        return 1;
    }
    if (!strcmp(a, "--device")) {
        if (!v)
            return fprintf(stderr, "seer: --device needs a value\n"), -1;
        o->mp.device = v, ++*i;
        return 1;
    }
    if (!strcmp(a, "--system")) {
        if (!v)
            return fprintf(stderr, "seer: --system needs text\n"), -1;
        o->system = v, ++*i;
        return 1;
    }
    if (!strcmp(a, "--stop")) {
        if (!v || *n_stop >= MAX_STOPS)
            return fprintf(stderr, "seer: --stop needs a string (at most %d)\n", MAX_STOPS), -1;
        o->stops[(*n_stop)++] = v, ++*i;
        return 1;
    }
    if (!strcmp(a, "-t")) {
        if ((r = VAL(1, 1024)) == 1)
            o->mp.n_threads = (int)d;
        return r;
    }
    if (!strcmp(a, "-c")) {
        if ((r = VAL(1, 1 << 24)) == 1)
            o->cp.n_ctx = (int64_t)d;
        return r;
    }
    if (!strcmp(a, "-b")) {
        if ((r = VAL(1, 1 << 16)) == 1)
            o->cp.n_batch = (int64_t)d;
        return r;
    }
    if (!strcmp(a, "-n")) {
        if ((r = VAL(0, 1 << 24)) == 1)
            o->gp.max_tokens = (int64_t)d;
        return r;
    }
    if (!strcmp(a, "--temp")) {
        if ((r = VAL(0, 100)) == 1)
            o->gp.sampling.temperature = (float)d;
        return r;
    }
    if (!strcmp(a, "--top-k")) {
        if ((r = VAL(0, 1 << 30)) == 1)
            o->gp.sampling.top_k = (int32_t)d;
        return r;
    }
    if (!strcmp(a, "--top-p")) {
        if ((r = VAL(0, 1)) == 1)
            o->gp.sampling.top_p = (float)d;
        return r;
    }
    if (!strcmp(a, "--min-p")) {
        if ((r = VAL(0, 1)) == 1)
            o->gp.sampling.min_p = (float)d;
        return r;
    }
    if (!strcmp(a, "--repeat-penalty")) {
        if ((r = VAL(0.01, 100)) == 1)
            o->gp.sampling.repeat_penalty = (float)d;
        return r;
    }
    if (!strcmp(a, "--presence-penalty")) {
        if ((r = VAL(-100, 100)) == 1)
            o->gp.sampling.presence_penalty = (float)d;
        return r;
    }
    if (!strcmp(a, "--seed")) {
        if ((r = VAL(0, 1.8e19)) == 1)
            o->gp.sampling.seed = (uint64_t)d;
        return r;
    }
#undef VAL
    if (!strcmp(a, "--think"))
        return o->gp.think = 1, 1;
    if (!strcmp(a, "--no-think"))
        return o->gp.think = 0, 1;
    if (!strcmp(a, "--show-thinking"))
        return o->gp.show_thinking = 1, 1;
    return 0;
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
}

int gen_stream_stdout(const char *text, size_t len, void *user)
{
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return 0;
}

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

static int print_json(const seer_result *r)
{
    json_t *toks = json_array(), *o;
    for (size_t i = 0; i < r->n_tokens; i++)
        json_array_append_new(toks, json_integer(r->tokens[i]));
    double pre = r->prefill_seconds, dec = r->decode_seconds;
    o = json_pack("{s:s, s:o, s:I, s:I, s:{s:f, s:f, s:f, s:f}, s:s}", "text", r->text, "tokens", toks,
                  "prompt_tokens", (json_int_t)r->prompt_tokens, "generated_tokens", (json_int_t)r->n_tokens,
                  "timings", "prefill_seconds", pre, "decode_seconds", dec, "prefill_tokens_per_second",
                  pre > 0 ? (double)r->prompt_tokens / pre : 0.0, "decode_tokens_per_second",
                  dec > 0 ? (double)r->n_tokens / dec : 0.0, "stop", gen_stop_name(r->stop));
    if (!o)
        return fprintf(stderr, "seer: could not build the JSON output\n"), CLI_FAIL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    if (!s)
        return CLI_FAIL;
    printf("%s\n", s);
    free(s);
    return CLI_OK;
}

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
        if (!seer_grow(&v, &cap, k + 1, sizeof *v, 16))
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

int cli_run(int argc, char **argv)
{
    struct gen_opts o;
    size_t n_stop = 0;
    gen_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = gen_parse_opt(argc, argv, &i, &o, &n_stop);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if ((!strcmp(a, "-p") || !strcmp(a, "--prompt")) && v)
            o.prompt = v, i++;
        else if (!strcmp(a, "-f") && v)
            o.prompt_file = v, i++;
        else if (!strcmp(a, "--prompt-tokens") && v)
            o.prompt_tokens = v, i++;
        else if (!strcmp(a, "--raw"))
            o.raw = true;
        else if (!strcmp(a, "--json"))
            o.json = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: seer run -m MODEL (-p PROMPT | -f FILE | --prompt-tokens 1,2,3) [--raw] [--json] [options]\n"
                   "  -p PROMPT           the user message (rendered with the chat template)\n"
                   "  -f FILE             read the prompt from FILE ('-' = stdin)\n"
                   "  --prompt-tokens L   feed these token ids directly (no template)\n"
                   "  --raw               feed the prompt as is, without the chat template\n"
                   "  --json              print one JSON object instead of streaming\n%s", gen_help);
            return CLI_OK;
        } else {
            fprintf(stderr, "seer run: unknown or incomplete option '%s' (see seer run --help)\n", a);
            return CLI_USAGE;
        }
    }
    o.gp.n_stop = n_stop;
    int given = !!o.prompt + !!o.prompt_file + !!o.prompt_tokens;
    if (!o.model || given != 1) {
        fprintf(stderr, "seer run: need -m MODEL and exactly one of -p, -f, --prompt-tokens\n");
        return CLI_USAGE;
    }
    char *file_text = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    size_t file_len;
    int frc = o.prompt_file ? cli_read_file(o.prompt_file, &file_text, &file_len) : SEER_OK;
    if (frc)
        return cli_fail(frc);
    if (o.prompt_tokens && parse_ids(o.prompt_tokens, &ids, &n_ids)) {
        fprintf(stderr, "seer run: --prompt-tokens needs comma-separated non-negative ids, got '%s'\n",
                o.prompt_tokens);
        return CLI_USAGE;
    }
    const char *prompt = o.prompt ? o.prompt : file_text;
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_result r = {0};
    int rc, status = CLI_FAIL;
    if (!o.json)
        o.gp.on_text = gen_stream_stdout;
    if ((rc = seer_model_load(o.model, &o.mp, &m)) || (rc = seer_context_create(m, &o.cp, &ctx))) {
        status = cli_fail(rc);
        goto done;
    }
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
        status = print_json(&r);
    else {
        printf("\n");
        status = CLI_OK;
    }
    if (cli_log_level >= SEER_LOG_WARN)
        gen_print_timings(&r);
done:
    seer_result_clear(&r);
    seer_context_free(ctx);
    seer_model_free(m);
    free(file_text);
    free(ids);
    return status;
}

int cli_chat(int argc, char **argv)
{
    struct gen_opts o;
    size_t n_stop = 0;
    gen_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = gen_parse_opt(argc, argv, &i, &o, &n_stop);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: seer chat -m MODEL [options]\n"
                   "  reads one user message per line from stdin; /reset starts over, /exit (or EOF) quits\n%s",
                   gen_help);
            return CLI_OK;
        }
        fprintf(stderr, "seer chat: unknown or incomplete option '%s' (see seer chat --help)\n", argv[i]);
        return CLI_USAGE;
    }
    o.gp.n_stop = n_stop;
    o.gp.on_text = gen_stream_stdout;
    if (!o.model) {
        fprintf(stderr, "seer chat: need -m MODEL\n");
        return CLI_USAGE;
    }
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    int rc, status = CLI_OK;
    const bool tty = isatty(0);
    if ((rc = seer_model_load(o.model, &o.mp, &m)) || (rc = seer_context_create(m, &o.cp, &ctx)) ||
        (o.system && (rc = seer_chat_add(ctx, "system", o.system)))) {
        status = cli_fail(rc);
        goto done;
    }
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        if (tty)
            fprintf(stderr, "> ");
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0)
            break;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0)
            continue;
        if (!strcmp(line, "/exit"))
            break;
        if (!strcmp(line, "/reset")) {
            if ((rc = seer_context_reset(ctx)) || (o.system && (rc = seer_chat_add(ctx, "system", o.system)))) {
                status = cli_fail(rc);
                break;
            }
            continue;
        }
        seer_result r = {0};
        if ((rc = seer_chat_add(ctx, "user", line)) || (rc = seer_chat_generate(ctx, &o.gp, &r))) {
            status = cli_fail(rc);
            break;
        }
        printf("\n");
        fflush(stdout);
        if (cli_log_level >= SEER_LOG_INFO)
            gen_print_timings(&r);
        seer_result_clear(&r);
    }
    free(line);
done:
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}
