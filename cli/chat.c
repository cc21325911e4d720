/* chat.c — `seer chat`: an interactive conversation on one context, earlier turns never
   re-processed (api/generate.c). On a terminal, lines are read with libedit (editing, history);
   from a pipe, one message per line. A line ending in a backslash continues on the next, and a
   line of three double quotes opens a block that another such line closes. Commands: /help,
   /reset, /save FILE, /exit. Ctrl-C stops the answer and keeps the conversation; a full context
   is announced and /reset recovers. Answers go to stdout, everything else to stderr.
   While the user types the next message, a thread of its own settles the last reply
   (seer_chat_settle: fed again in the form the template gives it once a message follows), so a
   turn feeds only its own message (docs/PERFORMANCE.md "A chat turn"). */
#define _POSIX_C_SOURCE 200809L
#include <editline/readline.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

static const char chat_commands[] =
    "  /help               these commands\n"
    "  /reset              forget the conversation (the system prompt stays)\n"
    "  /save FILE          write the conversation as JSON ({\"messages\": [{\"role\", \"content\"}, ...]})\n"
    "  /exit               quit (also Ctrl-D)\n"
    "  //TEXT              send a message that starts with '/'\n"
    "  a line ending in \\   continues on the next line\n"
    "  \"\"\"                 on a line of its own opens and closes a multi-line message\n"
    "  Ctrl-C              stop the answer (the conversation is kept); twice: quit\n";

/* The command's own options (the generation options are gen_opts_table's). */
enum { C_HELP = 1 };
static const struct cli_opt chat_table[] = {
    {{"-h", "--help"}, NULL, "this help", C_HELP},
};

/* The conversation as the user saw it, for /save. */
struct transcript {
    json_t *messages; /* [{"role", "content", "thinking"?}] */
};

/* Lengths, not strlen: an answer may hold a U+0000 (seer_result.text_len). */
static void transcript_add(struct transcript *t, const char *role, const char *content, size_t len,
                           const char *thinking, size_t thinking_len)
{
    json_t *m = json_pack("{s:s, s:s%}", "role", role, "content", content, len);
    if (m && thinking && thinking_len)
        json_object_set_new(m, "thinking", json_stringn(thinking, thinking_len));
    json_array_append_new(t->messages, m);
}

static int transcript_save(const struct transcript *t, const struct gen_opts *o, const char *path)
{
    json_t *doc = json_pack("{s:s, s:I, s:O}", "model", o->model, "seed", (json_int_t)o->gp.sampling.seed,
                            "messages", t->messages);
    int rc = doc ? json_dump_file(doc, path, JSON_INDENT(2) | JSON_ENSURE_ASCII) : -1;
    json_decref(doc);
    if (rc)
        fprintf(stderr, "seer: could not write %s: %s\n", path, strerror(errno));
    else
        fprintf(stderr, "seer: conversation saved to %s (%zu messages)\n", path, json_array_size(t->messages));
    return rc;
}

/* One physical line: libedit on a terminal (with history), getline otherwise. NULL at the end of
   input; *intr when Ctrl-C interrupted the reading. */
static char *read_line(bool tty, const char *prompt, bool *intr)
{
    *intr = false;
    if (tty) {
        char *l = readline(prompt);
        if (!l && gen_interrupted()) {
            gen_clear_interrupt();
            *intr = true;
        }
        return l;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return line;
}

/* One message, perhaps over several lines (a trailing backslash, or a """ block). */
static char *read_message(bool tty, bool *intr)
{
    char *msg = NULL;
    size_t len = 0, cap = 0;
    bool block = false, more = true;
    while (more) {
        char *l = read_line(tty, !msg && !block ? "> " : ". ", intr);
        if (!l) {
            if (*intr || !msg) {
                free(msg);
                return NULL;
            }
            break; /* end of input inside a block: send what there is */
        }
        size_t n = strlen(l);
        more = false;
        if (!strcmp(l, "\"\"\"")) {
            more = block = !block;
            if (!more) {
                free(l);
                break;
            }
            free(l);
            continue;
        }
        if (block)
            more = true;
        else if (n && l[n - 1] == '\\')
            l[--n] = '\0', more = true;
        if (!cli_grow(&msg, &cap, len + n + 2, 1, 256)) {
            free(l), free(msg);
            return NULL;
        }
        if (len)
            msg[len++] = '\n';
        memcpy(msg + len, l, n);
        len += n;
        msg[len] = '\0';
        free(l);
    }
    if (msg && tty && *msg)
        add_history(msg);
    return msg ? msg : strdup("");
}

/* The settling of the last reply, on a thread of its own while the next message is read; the
   context is the thread's until settle_wait. */
struct settle {
    pthread_t thread;
    bool running;
    atomic_bool abandon; /* /reset, /exit or the end of input: the work is not wanted */
    seer_context *ctx;
    seer_generate_params gp;
    int64_t n_fed;
    double seconds;
};

static int settle_progress(int64_t done, int64_t total, int64_t generated, void *user)
{
    (void)done, (void)total, (void)generated;
    return atomic_load(&((struct settle *)user)->abandon);
}

static void *settle_main(void *arg)
{
    struct settle *s = arg;
    const double t0 = cli_time_now();
    if (seer_chat_settle(s->ctx, &s->gp, &s->n_fed)) /* the next turn feeds it, and reports a failure */
        s->n_fed = 0;
    s->seconds = cli_time_now() - t0;
    return NULL;
}

static void settle_start(struct settle *s, seer_context *ctx, const seer_generate_params *gp)
{
    s->ctx = ctx;
    s->gp = *gp;
    s->gp.on_text = s->gp.on_thinking = NULL;
    s->gp.on_video_progress = NULL;
    s->gp.on_progress = settle_progress;
    s->gp.user_data = s;
    s->n_fed = 0;
    atomic_store(&s->abandon, false);
    /* Signals stay the reading thread's: Ctrl-C at the prompt must reach readline (and not be left
       pending for the next answer), so the thread starts with every signal blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    s->running = pthread_create(&s->thread, NULL, settle_main, s) == 0; /* else the next turn does it */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The context back to this thread: the settling finished, or stopped at once with `abandon`. */
static void settle_wait(struct settle *s, bool abandon)
{
    if (!s->running)
        return;
    atomic_store(&s->abandon, abandon);
    pthread_join(s->thread, NULL);
    s->running = false;
    if (!abandon && s->n_fed > 0 && cli_log_level >= SEER_LOG_INFO)
        fprintf(stderr, "seer: the last reply, as the template renders it now: %lld tokens fed again while the "
                "message was typed (%.2f s)\n", (long long)s->n_fed, s->seconds);
}

static int start_over(seer_context *ctx, const struct gen_opts *o, struct transcript *t, int64_t *used)
{
    int rc = seer_context_reset(ctx);
    if (!rc && o->system)
        rc = seer_chat_add(ctx, "system", o->system);
    json_array_clear(t->messages);
    if (o->system)
        transcript_add(t, "system", o->system, strlen(o->system), NULL, 0);
    *used = 0;
    return rc;
}

/* chat's own options: --help alone. */
static int chat_opt(const struct cli_opt *opt, const char *v, void *user)
{
    (void)opt, (void)v, (void)user;
    printf("usage: seer chat -m MODEL [options]\n"
           "  a conversation: one message per line on stdin (libedit line editing and history on a\n"
           "  terminal). Inside it:\n%s", chat_commands);
    cli_opt_help(stdout, chat_table, sizeof chat_table / sizeof *chat_table);
    printf("%s", gen_help);
    return CLI_OK;
}

int cli_chat(int argc, char **argv)
{
    struct gen_opts o;
    gen_opts_init(&o);
    int status = gen_parse_args("chat", chat_table, sizeof chat_table / sizeof *chat_table, false, argc, argv, &o,
                                chat_opt, NULL);
    if (status != GEN_NEXT)
        return status;
    o.gp.on_text = gen_stream_stdout;
    if (!o.model)
        return cli_no_model("chat");
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    struct transcript t = {json_array()};
    int64_t used = 0; /* context tokens the conversation holds */
    int rc;
    status = CLI_OK;
    const bool tty = isatty(0);
    if ((rc = seer_model_load(o.model, &o.mp, &m)) || (rc = seer_context_create(m, &o.cp, &ctx)) ||
        (rc = start_over(ctx, &o, &t, &used))) {
        status = cli_fail(rc);
        goto done;
    }
    gen_start(&o);
    if (tty)
        fprintf(stderr, "seer chat: %s on %s; /help for commands, Ctrl-D to quit\n", o.model, seer_model_device(m));
    struct settle settle = {.running = false};
    for (;;) {
        bool intr;
        char *line = read_message(tty, &intr);
        if (!line && intr) {
            fprintf(stderr, "\n");
            continue;
        }
        if (!line)
            break;
        const char *text = line;
        if (!*line) {
            free(line);
            continue;
        }
        if (line[0] == '/' && line[1] != '/') {
            if (!strcmp(line, "/exit") || !strcmp(line, "/quit")) {
                free(line);
                break;
            } else if (!strcmp(line, "/help")) {
                fputs(chat_commands, stderr);
            } else if (!strcmp(line, "/reset")) {
                settle_wait(&settle, true);
                if ((rc = start_over(ctx, &o, &t, &used)))
                    status = cli_fail(rc);
                else
                    fprintf(stderr, "seer: the conversation was reset\n");
            } else if (!strncmp(line, "/save ", 6) && line[6]) {
                transcript_save(&t, &o, line + 6);
            } else {
                fprintf(stderr, "seer: unknown command '%s' (/help lists them; //text sends text starting with /)\n",
                        line);
            }
            free(line);
            if (status != CLI_OK)
                break;
            continue;
        }
        if (line[0] == '/')
            text = line + 1; /* "//x" sends "/x" */
        settle_wait(&settle, false);
        seer_result r = {0};
        if ((rc = seer_chat_add(ctx, "user", text)) || (rc = seer_chat_generate(ctx, &o.gp, &r))) {
            /* the one failure a session can recover from: the conversation outgrew the context */
            if (rc == SEER_EINVAL && strstr(seer_last_error(), "context tokens")) {
                fprintf(stderr, "seer: %s\nseer: the context is full (%lld of %lld tokens used): /save FILE keeps "
                        "the conversation, /reset starts over\n", seer_last_error(), (long long)used,
                        (long long)o.cp.n_ctx);
                free(line);
                continue;
            }
            status = cli_fail(rc);
            free(line);
            break;
        }
        printf("\n");
        fflush(stdout);
        /* a message stopped while fed is dropped with the state: the next turn feeds it all again */
        used = r.prompt_cut ? 0 : used + r.prompt_tokens + (int64_t)r.n_tokens;
        if (o.cp.n_ctx > 0) /* the last token sampled is not fed yet */
            used = MIN(used, o.cp.n_ctx);
        if (!r.prompt_cut) {
            transcript_add(&t, "user", text, strlen(text), NULL, 0);
            transcript_add(&t, "assistant", r.text, r.text_len, r.thinking, r.thinking_len);
        }
        if (r.stop == SEER_STOP_CONTEXT)
            fprintf(stderr, "seer: the context is full (%lld of %lld tokens used) and the answer was cut: /reset "
                    "starts over, or restart with a larger -c (e.g. -c %lld)\n", (long long)used,
                    (long long)o.cp.n_ctx, (long long)(2 * o.cp.n_ctx));
        if (gen_interrupted()) {
            fprintf(stderr, "seer: stopped%s\n", r.prompt_cut ? " (the message was dropped)" : "; the conversation is kept");
            gen_clear_interrupt();
        }
        if (r.reasoning_cut)
            fprintf(stderr, "seer: warning: the answer is empty: the reasoning used the whole token budget (raise -n)\n");
        if (cli_log_level >= SEER_LOG_INFO)
            gen_print_timings(&r);
        if (!r.prompt_cut && r.stop != SEER_STOP_CONTEXT)
            settle_start(&settle, ctx, &o.gp);
        seer_result_clear(&r);
        free(line);
    }
    settle_wait(&settle, true);
done:
    json_decref(t.messages);
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}
