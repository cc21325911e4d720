/* Tests `seer chat` (cli/chat.c) on a terminal, driven through tmux (send-keys, capture-pane) on a
   private tmux server, with a tiny random Qwen3.5 (tests/reference/gen_tiny.py): answers and the
   prompt coming back, /help, history recall with the Up arrow (libedit), multi-line input (a
   trailing backslash, """ blocks), /save as JSON, /reset confirmed, Ctrl-C during a long prompt
   keeping the session, a full context announced with /reset recovering, unknown /commands not
   sent to the model, /exit; and from a pipe: one message per line, command output on stderr. */
#define _DEFAULT_SOURCE /* usleep */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/testutil.h"
#include "tap.h"

static char g_sock[64]; /* tmux -L name: a server of our own */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* The pane's text (malloc'ed). */
static char *capture(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "tmux -L %s capture-pane -p -S -2000 -t t", g_sock);
    struct test_run r = test_run_cmd(cmd);
    char *s = r.out;
    r.out = NULL;
    test_run_free(&r);
    return s ? s : calloc(1, 1);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Polls the pane until `needle` appears `n` times (or `seconds` pass); returns the capture. */
static char *wait_for(const char *needle, int n, double seconds)
{
    char *s = capture();
    for (double t = 0; count_of(s, needle) < n && t < seconds; t += 0.1) {
        free(s);
        usleep(100000);
        s = capture();
    }
    return s;
}

/* Whether the last non-empty line of the pane is the empty input prompt. */
static bool at_prompt(const char *s)
{
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *bol = end;
    while (bol > s && bol[-1] != '\n')
        bol--;
    return end - bol == 1 && *bol == '>';
}

static char *wait_prompt(double seconds)
{
    char *s = capture();
    for (double t = 0; !at_prompt(s) && t < seconds; t += 0.1) {
        free(s);
        usleep(100000);
        s = capture();
    }
    return s;
}

static void keys(const char *k) { sh("tmux -L %s send-keys -t t %s", g_sock, k); }
static void type(const char *text) { sh("tmux -L %s send-keys -t t -l '%s'", g_sock, text); }

/* Types a line and presses Enter, then waits for its echo ("> text" on a line of its own, once more
   than before) and after it for the empty prompt: polling for the prompt alone can see the pane
   from before the keys arrived on a loaded machine. Returns the capture. */
static char *submit(const char *text, double seconds)
{
    char echo[256];
    snprintf(echo, sizeof echo, "> %s\n", text);
    char *s = capture();
    const int before = count_of(s, echo);
    free(s);
    type(text);
    keys("Enter");
    free(wait_for(echo, before + 1, seconds));
    return wait_prompt(seconds);
}

/* Each session gets a server of its own: a new session on a server being killed can die with it. */
static void start(const char *dir, const char *flags)
{
    static int n_started;
    if (g_sock[0])
        sh("tmux -L %s kill-server 2>/dev/null", g_sock);
    snprintf(g_sock, sizeof g_sock, "seer-test-%d-%d", (int)getpid(), ++n_started);
    sh("tmux -L %s new-session -d -s t -x 160 -y 50 \"'%s/seer' chat -m '%s/model-f32.gguf' %s; echo EXITED \\$?; "
       "sleep 60\"", g_sock, SEER_BINARY_DIR, dir, flags);
}

static json_t *saved_messages(const char *path)
{
    /* an answer of a random model may hold U+0000 (a byte-level token of byte 0), which JSON writes
       as \u0000 and jansson reads only when allowed (seed 564000004) */
    json_t *j = json_load_file(path, JSON_ALLOW_NUL, NULL);
    json_t *m = json_incref(json_object_get(j, "messages"));
    json_decref(j);
    return m;
}

static void test_terminal(const char *dir)
{
    char path[700], *s;
    start(dir, "--temp 0 -n 6");
    s = wait_for("/help for commands", 1, 20);
    ok(strstr(s, "/help for commands") != NULL, "a terminal session opens with its banner");
    free(s);
    s = submit("hello there", 30);
    ok(at_prompt(s) && strstr(s, "> hello there\n"), "an answer, then the prompt again");
    free(s);

    type("/help");
    keys("Enter");
    s = wait_for("/save FILE", 1, 10);
    ok(strstr(s, "/reset") && strstr(s, "/save FILE") && strstr(s, "/exit"), "/help lists the commands");
    free(s);
    keys("Up");
    s = wait_for("> /help", 2, 10); /* polled: a fixed 0.3 s can be too short on a loaded machine */
    ok(count_of(s, "> /help") == 2, "Up recalls the last line (libedit history)");
    free(s);
    keys("C-u");

    type("one \\");
    keys("Enter");
    type("two");
    keys("Enter");
    s = wait_for("\n. two", 1, 10);
    free(s);
    s = wait_prompt(20);
    free(s);
    type("\"\"\"");
    keys("Enter");
    type("alpha");
    keys("Enter");
    type("beta");
    keys("Enter");
    type("\"\"\"");
    keys("Enter");
    s = wait_prompt(20);
    free(s);
    type("/frobnicate");
    keys("Enter");
    s = wait_for("unknown command", 1, 10);
    ok(strstr(s, "unknown command '/frobnicate'") != NULL, "an unknown /command is refused, not sent to the model");
    free(s);
    snprintf(path, sizeof path, "%s/conv.json", dir);
    char line[800];
    snprintf(line, sizeof line, "/save %s", path);
    type(line);
    keys("Enter");
    s = wait_for("conversation saved", 1, 10);
    json_t *m = saved_messages(path);
    if (json_array_size(m) != 6) {
        char *f = test_slurp(path);
        diag("the terminal after /save:\n%s\n%s holds:\n%s", s, path, f ? f : "(nothing)");
        free(f);
    }
    free(s);
    const char *u1 = json_string_value(json_object_get(json_array_get(m, 0), "content"));
    const char *u2 = json_string_value(json_object_get(json_array_get(m, 2), "content"));
    const char *u3 = json_string_value(json_object_get(json_array_get(m, 4), "content"));
    ok(json_array_size(m) == 6 && u1 && !strcmp(u1, "hello there") && u2 && !strcmp(u2, "one \ntwo") && u3 &&
           !strcmp(u3, "alpha\nbeta") &&
           !strcmp(json_string_value(json_object_get(json_array_get(m, 1), "role")), "assistant"),
       "/save: the conversation as JSON, with a backslash-continued message and a \"\"\" block (%zu messages)",
       json_array_size(m));
    json_decref(m);

    type("/reset");
    keys("Enter");
    s = wait_for("the conversation was reset", 1, 10);
    ok(strstr(s, "the conversation was reset") != NULL, "/reset says it reset");
    free(s);
    type(line);
    keys("Enter");
    s = wait_for("conversation saved", 2, 10);
    free(s);
    m = saved_messages(path);
    ok(json_array_size(m) == 0, "after /reset the conversation is empty");
    json_decref(m);
    type("/exit");
    keys("Enter");
    s = wait_for("EXITED", 1, 10);
    ok(strstr(s, "EXITED 0") != NULL, "/exit ends the session with status 0");
    free(s);
}

/* Ctrl-C while a long message is fed (the progress line shows it is), then the session goes on.
   --progress draws the line from the first micro-batch: on a quiet machine the tiny model feeds
   4,500 tokens in under the second after which a terminal gets it unasked. */
static void test_interrupt(const char *dir)
{
    char *s;
    start(dir, "--temp 0 -n 4 -ub 1 -c 9000 --progress");
    s = wait_for("/help for commands", 1, 20);
    free(s);
    char *big = malloc(13000);
    size_t n = 0;
    for (int i = 0; i < 2500; i++)
        n += (size_t)sprintf(big + n, "word ");
    type(big);
    free(big);
    keys("Enter");
    s = wait_for("seer: prompt ", 1, 30); /* the progress line */
    if (!ok(strstr(s, "seer: prompt ") != NULL, "a long prompt shows a progress line on the terminal"))
        diag("pane:\n%s", s + (strlen(s) > 600 ? strlen(s) - 600 : 0));
    free(s);
    keys("C-c");
    s = wait_for("seer: stopped", 1, 20);
    ok(strstr(s, "seer: stopped") != NULL, "Ctrl-C stops it");
    free(s);
    s = wait_prompt(10);
    free(s);
    s = submit("hi", 30);
    ok(at_prompt(s) && strstr(s, "> hi\n") && !strstr(s, "EXITED"), "the session goes on: the next message is answered");
    free(s);
    keys("C-d");
    s = wait_for("EXITED", 1, 10);
    ok(strstr(s, "EXITED 0") != NULL, "Ctrl-D ends the session");
    free(s);
}

/* A 60-token context: the session announces it is full and /reset recovers. */
static void test_full_context(const char *dir)
{
    char *s;
    start(dir, "--temp 0 -n 200 -c 60");
    s = wait_for("/help for commands", 1, 20);
    free(s);
    int full = 0;
    for (int i = 0; i < 6 && !full; i++) {
        s = submit("tell me a long story please", 30);
        full = strstr(s, "the context is full") != NULL;
        free(s);
    }
    s = capture();
    ok(full && strstr(s, "tokens used") && strstr(s, "/reset") && !strstr(s, "EXITED"),
       "a full context is announced with the tokens used, and the session stays");
    free(s);
    type("/reset");
    keys("Enter");
    s = wait_for("the conversation was reset", 1, 10);
    free(s);
    s = submit("hi", 30);
    const char *last = strstr(s, "the conversation was reset");
    ok(last && strstr(last, "> hi\n") && !strstr(last, "refused") && !strstr(last, "needs"),
       "after /reset the next message is answered");
    free(s);
    sh("tmux -L %s kill-server 2>/dev/null", g_sock);
}

static void test_pipe(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "printf 'first\\n/help\\nsecond\\n' | '%s/seer' chat -m '%s/model-f32.gguf' --temp 0 -n 3",
             SEER_BINARY_DIR, dir);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 0 && !strstr(r.out, "/reset") && strstr(r.err, "/reset") && !strstr(r.err, "> "),
       "from a pipe: no prompts, /help on stderr, answers on stdout (exit %d)", r.status);
    test_run_free(&r);
}

/* The last reply settled while the next message is typed (seer_chat_settle on a thread): -v says how
   many tokens that fed, and the next turn, the same message again, feeds exactly what the first did
   (without the settling it would feed the reply again too). */
static void test_settled(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "(echo 'same words'; sleep 1; echo 'same words') | '%s/seer' chat -m '%s/model-f32.gguf' "
             "--temp 0 -n 6 -v", SEER_BINARY_DIR, dir);
    struct test_run r = test_run_cmd(cmd);
    long long n[2] = {-1, -1}, again = -1;
    const char *p = r.err ? r.err : "";
    for (int i = 0; i < 2 && (p = strstr(p, "seer: prompt ")); i++, p++)
        n[i] = atoll(p + strlen("seer: prompt "));
    const char *a = r.err ? strstr(r.err, "tokens fed again while the message was typed") : NULL;
    if (a) {
        while (a > r.err && a[-1] == ' ')
            a--;
        while (a > r.err && a[-1] >= '0' && a[-1] <= '9')
            a--;
        again = atoll(a);
    }
    ok(r.status == 0 && again > 0 && n[0] > 0 && n[1] == n[0],
       "the reply settled while typing (%lld tokens), the same message again feeds %lld tokens as the first did "
       "(%lld)", again, n[1], n[0]);
    test_run_free(&r);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (system("command -v tmux >/dev/null 2>&1"))
        return plan_skip_all("tmux is not installed (apt-get install tmux)");
    char dir[600], cmd[2048];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu >/dev/null 2>&1",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)seed);
    if (!ok(system(cmd) == 0, "tiny model generated"))
        return done_testing();
    test_terminal(dir);
    test_interrupt(dir);
    test_full_context(dir);
    test_pipe(dir);
    test_settled(dir);
    if (g_sock[0])
        sh("tmux -L %s kill-server 2>/dev/null", g_sock);
    return done_testing();
}
