/* Tests `seer pull` and `seer list` (cli/pull.c, cli/hub.c) against a local stand-in for the hub
   (tests/support/hub_server.py, which computes the listed SHA-256 and Git blob ids itself with
   Python's hashlib) serving a tiny random Qwen3.5 made by gen_tiny.py: a download is byte-identical
   and loads by name (-m qwen3.5-0.8b, info NAME, tokenize -m NAME, and with no -m at all); progress
   appears only on a terminal; the data directory's missing parents are made (no ~/.cache on a
   fresh machine); with no -m and nothing pulled every model-taking command says how to get a
   model; a second pull sends no request and needs no network; a connection
   cut mid-file is resumed with Range, within one pull and across pulls, and a server ignoring Range
   restarts the .part; a wrong checksum (SHA-256 and Git SHA-1), a 404, a stalled server, a file
   name that is a path, a disk too small, a concurrent pull of the same name and no server at all
   each fail with one clear line and leave no models/NAME directory. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/testutil.h"
#include "tap.h"

#define REPO "Qwen/Qwen3.5-0.8B"
static const char *python;
static char model_dir[1200], work[1000];
static long server_pid;
static int server_port;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static bool exists(const char *fmt, const char *a)
{
    char p[2048];
    struct stat st;
    snprintf(p, sizeof p, fmt, a);
    return stat(p, &st) == 0;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Starts hub_server.py with `faults`; false when it did not come up within 10 s. */
static bool start_server(const char *faults)
{
    char port_file[1200], pid_file[1200];
    snprintf(port_file, sizeof port_file, "%s/port", work);
    snprintf(pid_file, sizeof pid_file, "%s/pid", work);
    unlink(port_file);
    if (sh("sh -c 'echo $$ > \"%s\"; exec %s \"%s\" --root \"%s\" --repo %s --port-file \"%s\" --log \"%s/log\" %s' "
           ">/dev/null 2>&1 &",
           pid_file, python, test_src_path("tests/support/hub_server.py"), model_dir, REPO, port_file, work, faults))
        return false;
    for (int i = 0; i < 200; i++) {
        char *port = test_slurp(port_file), *pid = test_slurp(pid_file);
        if (port && pid) {
            server_port = atoi(port);
            server_pid = atol(pid);
        }
        free(port);
        free(pid);
        if (server_port && server_pid)
            return true;
        usleep(50000);
    }
    return false;
}

static void stop_server(void)
{
    if (server_pid > 0)
        kill((pid_t)server_pid, SIGTERM);
    usleep(100000);
    server_pid = 0;
    server_port = 0;
}

/* Lines of the server's log that contain `needle`. */
static int log_count(const char *needle)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/log", work);
    char *s = test_slurp(path);
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p++)
        n++;
    free(s);
    return n;
}

static void clear_log(void) { sh("rm -f '%s/log'", work); }

/* Runs seer with SEER_HOME=work/HOME and the stand-in hub (or `endpoint`). */
static struct test_run seer_in(const char *home, const char *endpoint, const char *args)
{
    char cmd[8192], ep[256];
    if (!endpoint)
        snprintf(ep, sizeof ep, "http://127.0.0.1:%d", server_port), endpoint = ep;
    snprintf(cmd, sizeof cmd, "SEER_HOME='%s/%s' SEER_HF_ENDPOINT='%s' '%s/seer' %s", work, home, endpoint,
             SEER_BINARY_DIR, args);
    return test_run_cmd(cmd);
}

/* Every served file is in HOME/models/qwen3.5-0.8b with the same bytes. */
static bool same_files(const char *home)
{
    return sh("cd '%s' && for f in *; do cmp -s \"$f\" '%s/%s/models/qwen3.5-0.8b/'\"$f\" || exit 1; done", model_dir, work,
              home) == 0;
}

static bool complete(const char *home)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/models/qwen3.5-0.8b", work, home);
    return exists("%s", p);
}

static bool one_line(const char *s) { return test_count_lines(s) == 1; }

static void download_and_use(void)
{
    clear_log();
    struct test_run r = seer_in("h1", NULL, "pull qwen3.5-0.8b");
    char want[1200];
    snprintf(want, sizeof want, "%s/h1/models/qwen3.5-0.8b\n", work);
    ok(r.status == 0 && !strcmp(r.out, want), "pull: exit 0, the directory on stdout (%d: %s)", r.status, r.err);
    ok(one_line(r.err) && !strstr(r.err, "%)"), "pull: stderr not a terminal: no progress, one closing line");
    ok(same_files("h1"), "pull: every file byte-identical to the served one");
    ok(log_count("Range") == 0 && log_count("GET /cdn/model.safetensors -") == 1,
       "pull: the LFS file followed its redirect, one request per file");
    ok(!exists("%s/h1/models/.qwen3.5-0.8b.partial", work) && exists("%s/h1/models/qwen3.5-0.8b/.seer-pull.json", work),
       "pull: no staging directory left; the pull record is there");
    test_run_free(&r);

    clear_log();
    r = seer_in("h1", NULL, "pull QWEN3.5-0.8B");
    ok(r.status == 0 && strstr(r.err, "already") && log_count("GET") == 0,
       "a second pull (name in any case) is a no-op: %d requests", log_count("GET"));
    test_run_free(&r);
    stop_server();
    r = seer_in("h1", "http://127.0.0.1:1", "pull qwen3.5-0.8b");
    ok(r.status == 0, "a second pull needs no network");
    test_run_free(&r);

    r = seer_in("h1", NULL, "list");
    ok(r.status == 0 && strstr(r.out, "qwen3.5-0.8b") && strstr(r.out, "MB") && strstr(r.out, "/h1/models/qwen3.5-0.8b"),
       "list: name, size and path (%s)", r.out);
    test_run_free(&r);
    r = seer_in("h1", NULL, "list extra");
    ok(r.status == 2 && !r.out[0] && strstr(r.err, "seer list: takes no arguments, got 'extra'\n"),
       "list with an argument: a usage error naming it (%d: %s)", r.status, r.err);
    test_run_free(&r);

    r = seer_in("h1", NULL, "run -m qwen3.5-0.8b --device cpu -t 2 -p hello -n 2 --temp 0");
    ok(r.status == 0, "run -m qwen3.5-0.8b loads the pulled model (%s)", r.err);
    test_run_free(&r);
    r = seer_in("h1", NULL, "run --device cpu -t 2 -p hello -n 2 --temp 0");
    ok(r.status == 0, "run without -m uses qwen3.5-0.8b (%s)", r.err);
    test_run_free(&r);
    r = seer_in("h1", NULL, "info qwen3.5-0.8b");
    ok(r.status == 0 && strstr(r.out, "/h1/models/qwen3.5-0.8b"), "info NAME reads the pulled directory (%s)", r.err);
    test_run_free(&r);
    r = seer_in("h1", NULL, "tokenize -m qwen3.5-0.8b hello");
    ok(r.status == 0 && r.out[0], "tokenize -m NAME uses the pulled tokenizer (%s)", r.err);
    test_run_free(&r);
    r = seer_in("h1", NULL, "run -m qwen3.5-2b -p hello");
    ok(r.status != 0 && one_line(r.err) && strstr(r.err, "seer pull qwen3.5-2b") && strstr(r.err, "-m"),
       "-m with a name not pulled: one line saying how to pull it or use a local model (%s)", r.err);
    test_run_free(&r);
    /* every model-taking command, as a new user first types it (samples/shapes.mp4 is the README's) */
    static const char *const no_model[] = {"run -p hello", "chat", "ask -p 'what is it?' x.png",
                                           "describe '" SEER_SOURCE_DIR "/samples/shapes.mp4'", "ocr scan.png"};
    for (size_t k = 0; k < sizeof no_model / sizeof *no_model; k++) {
        r = seer_in("h2", NULL, no_model[k]);
        ok(r.status == 2 && one_line(r.err) && strstr(r.err, "no model given and none pulled") &&
               strstr(r.err, "seer pull qwen3.5-0.8b") && strstr(r.err, "-m MODEL"),
           "%s: no -m and nothing pulled: exit 2, one line naming seer pull and -m (%d: %s)", no_model[k], r.status,
           r.err);
        test_run_free(&r);
    }
    r = seer_in("h1", NULL, "pull qwen3.5-1b");
    ok(r.status == 2 && strstr(r.err, "qwen3.5-0.8b"), "pull of an unknown name: usage error listing the known ones");
    test_run_free(&r);
}

/* A fresh container or CI runner: HOME exists but has no .cache (here HOME itself does not exist
   either). The pull makes the missing folders, the parents 0700 as the XDG rules ask of ~/.cache,
   and the umask may only take bits away. */
static void missing_parents(void)
{
    char cmd[8192], want[1200], p[1200];
    snprintf(cmd, sizeof cmd, "env -u SEER_HOME HOME='%s/nohome/user' SEER_HF_ENDPOINT='http://127.0.0.1:%d' '%s/seer' "
             "pull qwen3.5-0.8b", work, server_port, SEER_BINARY_DIR);
    struct test_run r = test_run_cmd(cmd);
    snprintf(want, sizeof want, "%s/nohome/user/.cache/seer/models/qwen3.5-0.8b\n", work);
    ok(r.status == 0 && !strcmp(r.out, want), "pull with no ~/.cache: its parents made, the model in place (%d: %s)",
       r.status, r.err);
    struct stat st;
    snprintf(p, sizeof p, "%s/nohome/user/.cache", work);
    bool made = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    ok(made && (st.st_mode & 077) == 0, "the made ~/.cache is private (mode %o)", made ? (unsigned)(st.st_mode & 0777) : 0);
    test_run_free(&r);
    /* a parent that is a file: one line naming it */
    sh("mkdir -p '%s/blocked' && : > '%s/blocked/file'", work, work);
    snprintf(p, sizeof p, "blocked/file/seer");
    r = seer_in(p, NULL, "pull qwen3.5-0.8b");
    ok(r.status == 1 && one_line(r.err) && strstr(r.err, "blocked/file") && strstr(r.err, "cannot create"),
       "a parent that is a file: exit 1, one line naming it (%d: %s)", r.status, r.err);
    test_run_free(&r);
}

/* On a terminal (script(1) gives it one) the progress line shows each file reaching 100 %. */
static void progress_on_tty(void)
{
    if (sh("command -v script >/dev/null") != 0) {
        skip("script (util-linux) is unavailable", "progress on a terminal");
        return;
    }
    char cmd[4096], out[1200];
    snprintf(out, sizeof out, "%s/tty.out", work);
    snprintf(cmd, sizeof cmd, "SEER_HOME='%s/htty' SEER_HF_ENDPOINT=http://127.0.0.1:%d script -qec \"'%s/seer' pull "
             "qwen3.5-0.8b\" '%s' >/dev/null 2>&1", work, server_port, SEER_BINARY_DIR, out);
    int st = sh("%s", cmd);
    char *s = test_slurp(out);
    ok(st == 0 && s && strstr(s, "model.safetensors") && strstr(s, "(100%)") && strstr(s, "downloaded and verified"),
       "on a terminal: a progress line per file, each reaching 100%%");
    free(s);
}

static void resume(void)
{
    char part[1200], served[1300];
    snprintf(served, sizeof served, "%s/model.safetensors", model_dir);
    long size = file_size(served);

    /* cut once: the same pull resumes where the .part ends */
    clear_log();
    ok(start_server("--cut model.safetensors:1"), "server up (cut once)");
    struct test_run r = seer_in("h3", NULL, "pull qwen3.5-0.8b");
    char want[64];
    snprintf(want, sizeof want, "/cdn/model.safetensors bytes=%ld-", size / 2);
    ok(r.status == 0 && same_files("h3") && log_count("GET /cdn/model.safetensors bytes=") == 1 && log_count(want) == 1,
       "a connection cut mid-file is resumed in the same pull with Range: %s (%s)", want, r.err);
    test_run_free(&r);
    stop_server();

    /* cut every time: the pull fails, keeps the .part, and the next pull resumes it */
    clear_log();
    ok(start_server("--cut model.safetensors:100"), "server up (cut always)");
    r = seer_in("h4", NULL, "pull qwen3.5-0.8b");
    snprintf(part, sizeof part, "%s/h4/models/.qwen3.5-0.8b.partial/model.safetensors.part", work);
    long have = file_size(part);
    ok(r.status == 1 && one_line(r.err) && strstr(r.err, "model.safetensors") && !complete("h4") && have > 0 &&
           have < size,
       "cut on every try: exit 1, one line naming the file, no model directory, %ld of %ld bytes kept (%s)", have, size,
       r.err);
    test_run_free(&r);
    r = seer_in("h4", NULL, "list");
    ok(r.status == 0 && strstr(r.out, "incomplete"), "list marks the interrupted pull");
    test_run_free(&r);
    stop_server();
    clear_log();
    ok(start_server(""), "server up (healthy)");
    r = seer_in("h4", NULL, "pull qwen3.5-0.8b");
    snprintf(want, sizeof want, "/cdn/model.safetensors bytes=%ld-", have);
    ok(r.status == 0 && same_files("h4") && log_count(want) == 1 && log_count("/config.json ") == 0,
       "the next pull resumes at byte %ld and fetches no verified file again (%s)", have, r.err);
    test_run_free(&r);
    stop_server();

    /* a server that ignores Range: the .part is started again from the whole file it sends */
    clear_log();
    ok(start_server("--cut model.safetensors:100"), "server up (cut always)");
    r = seer_in("h11", NULL, "pull qwen3.5-0.8b");
    test_run_free(&r);
    stop_server();
    clear_log();
    ok(start_server("--no-range"), "server up (ignores Range)");
    r = seer_in("h11", NULL, "pull qwen3.5-0.8b");
    ok(r.status == 0 && same_files("h11") && log_count("/cdn/model.safetensors bytes=") == 1,
       "a server answering a Range request with the whole file: the .part restarts, the result is exact (%s)", r.err);
    test_run_free(&r);

    /* a second pull of the same name while one runs: refused, the first one's files untouched */
    char lock[1200];
    snprintf(lock, sizeof lock, "%s/h13/models", work);
    sh("mkdir -p '%s' && (flock '%s/.qwen3.5-0.8b.lock' sleep 3 &) && sleep 0.5", lock, lock);
    r = seer_in("h13", NULL, "pull qwen3.5-0.8b");
    ok(r.status == 1 && one_line(r.err) && strstr(r.err, "another seer pull") && !complete("h13"),
       "a pull while another of the same name runs: one line, exit 1 (%s)", r.err);
    test_run_free(&r);
    stop_server();
}

/* A pull against a server started with `faults` fails: exit 1, one line holding `msg` and
   `file`, nothing at models/qwen3.5-0.8b; returns the seconds it took. */
static double failing(const char *home, const char *faults, const char *args, const char *msg, const char *file,
                      const char *what)
{
    clear_log();
    bool up = start_server(faults);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct test_run r = seer_in(home, NULL, args);
    clock_gettime(CLOCK_MONOTONIC, &b);
    ok(up && r.status == 1 && one_line(r.err) && strstr(r.err, msg) && strstr(r.err, file) && !complete(home),
       "%s: exit 1, one line naming %s, no model directory (%s)", what, file, r.err);
    test_run_free(&r);
    stop_server();
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

static void faults(void)
{
    failing("h5", "--bad-sum tokenizer.json", "pull qwen3.5-0.8b", "SHA-1 mismatch", "tokenizer.json",
            "a wrong Git blob id");
    ok(!exists("%s/h5/models/.qwen3.5-0.8b.partial/tokenizer.json.part", work) &&
           !exists("%s/h5/models/.qwen3.5-0.8b.partial/tokenizer.json", work),
       "the file that failed its checksum is removed");
    failing("h6", "--bad-sum model.safetensors", "pull qwen3.5-0.8b", "SHA-256 mismatch", "model.safetensors",
            "a wrong SHA-256");
    failing("h7", "--missing config.json", "pull qwen3.5-0.8b", "HTTP 404", "config.json", "a listed file answering 404");
    double t = failing("h8", "--stall model.safetensors", "pull --timeout 2 qwen3.5-0.8b", "no data from the server",
                       "model.safetensors", "a stalled server (--timeout 2)");
    ok(t < 20, "the stall is given up within a bounded time: %.1f s (limit 20)", t);
    failing("h9", "--extra ../evil.safetensors", "pull qwen3.5-0.8b", "refusing file name", "evil",
            "a listed file name that is a path");
    ok(!exists("%s/h9/models/evil.safetensors", work) && !exists("%s/h9/evil.safetensors", work),
       "nothing written outside the staging directory");

    /* a disk too small: SEER_HOME on a 256 KiB tmpfs (in a user + mount namespace) */
    if (sh("unshare -rm true 2>/dev/null") != 0)
        skip("unshare (util-linux) with user namespaces is unavailable", "a disk too small for the model");
    else if (!start_server(""))
        ok(0, "server up (small disk)");
    else {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/small' && unshare -rm sh -c \"mount -t tmpfs -o size=256k tmpfs '%s/small' "
                 "&& SEER_HOME='%s/small' SEER_HF_ENDPOINT=http://127.0.0.1:%d '%s/seer' pull qwen3.5-0.8b; "
                 "echo \\$? > '%s/small.status'; ls -a '%s/small/models' | tr '\\n' ' ' > '%s/small.ls'\"",
                 work, work, work, server_port, SEER_BINARY_DIR, work, work, work);
        struct test_run r = test_run_cmd(cmd);
        char path[1200];
        snprintf(path, sizeof path, "%s/small.status", work);
        char *st = test_slurp(path);
        snprintf(path, sizeof path, "%s/small.ls", work);
        char *ls = test_slurp(path);
        ok(st && atoi(st) == 1 && one_line(r.err) && strstr(r.err, "free") && ls && !strstr(ls, " qwen3.5-0.8b "),
           "a disk too small: refused before downloading, one line, no model directory (%s; %s)", r.err, ls ? ls : "");
        free(st), free(ls);
        test_run_free(&r);
        stop_server();
    }

    /* no network: nothing listens on 127.0.0.1:9 (discard; refused) */
    struct test_run r = seer_in("h10", "http://127.0.0.1:9", "pull qwen3.5-0.8b");
    ok(r.status == 1 && one_line(r.err) && strstr(r.err, "cannot reach the model hub") && strstr(r.err, "-m") &&
           !complete("h10"),
       "no network: one line saying the hub cannot be reached and how to use -m (%s)", r.err);
    test_run_free(&r);
}

int main(void)
{
    test_seed(); /* the tiny model's weights come from it */
    plan_no_plan();
    python = system("python3 -c 'import numpy' >/dev/null 2>&1") == 0 ? "python3"
             : system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0 ? "/usr/bin/python3"
                                                                               : NULL;
    if (!python)
        return plan_skip_all("python3 with numpy is needed to make the tiny model (scripts/install-deps.sh)");
    snprintf(work, sizeof work, "%s", test_tmp_dir());
    snprintf(model_dir, sizeof model_dir, "%s/src/hf", work);
    if (sh("%s '%s' --out '%s/src' --preset tiny --seed %d --no-gguf >/dev/null", python,
           test_src_path("tests/reference/gen_tiny.py"), work, (int)(test_rand_u64() % 100000)) != 0) {
        ok(0, "gen_tiny.py made the tiny model");
        return done_testing();
    }
    ok(start_server(""), "the stand-in hub is up on port %d", server_port);
    missing_parents();
    progress_on_tty();
    download_and_use();
    resume();
    faults();
    stop_server();
    return done_testing();
}
