/* Tests what `seer run` and `seer ask` do when the machine fails under them (cli/faults.c,
   core/io.c, docs/RELIABILITY.md), on a tiny random Qwen3.5 (tests/reference/gen_tiny.py):
   - the model file truncated while a generation has it mapped: one line naming the file with both
     sizes (taken here with stat, not from seer), exit 1 — on the CPU with --weights map the lost
     pages raise SIGBUS; with the weights copied (--weights copy, Vulkan) the check after the answer
     finds it;
   - the model file's modification time changed mid-run (rewritten in place): exit 1, one line;
   - the reader of stdout gone mid-answer (its end of the pipe closed while the run waits to write):
     a quiet end by SIGPIPE, nothing on stderr; `| head -c 10` gets its 10 bytes; stdout on a full
     disk (/dev/full): exit 1 with the errno's text (run streaming and --json, describe);
   - SIGINT while a slow reader holds the answer back: the write goes on (not EINTR), exit 130;
   - the library pieces directly: io_map_check and io_fault_describe on a file truncated under a
     mapping, and nothing described outside a live mapping; copy-on-load (network file systems)
     keeping every byte after the file is truncated.
   stdout is a pipe filled beforehand, so a run blocks in write() at its first answer byte (seen in
   /proc/PID/wchan); the fault lands there, mid-generation, with the weights mapped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/io.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

static char g_dir[600];   /* the tiny model from gen_tiny.py */
static char g_image[700]; /* a noise PNG for seer ask */

static const char *tmp(const char *name)
{
    static char p[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", test_tmp_dir(), name);
    return p[k];
}

/* ---- a run with a fault injected mid-generation --------------------------------------------- */

enum fault { F_TRUNCATE, F_TOUCH, F_SIGINT, F_READER_GONE };

struct midrun {
    int status;      /* exit status; -1 when killed by a signal */
    int signal;      /* the signal that killed it, or 0 */
    bool early;      /* it finished before the fault could land: retry */
    size_t out_bytes;
    char *out, *err;
};

static void do_fault(enum fault f, const char *model)
{
    if (f == F_TRUNCATE) {
        if (truncate(model, 4096) != 0)
            diag("truncate %s: %s", model, strerror(errno));
    } else {
        /* same size, a modification time the file never had: a rewrite in place */
        struct timespec ts[2] = {{1, 0}, {1, 0}};
        if (utimensat(AT_FDCWD, model, ts, 0) != 0)
            diag("utimensat %s: %s", model, strerror(errno));
    }
}

/* Fills the pipe's write end until one more byte would block; returns the bytes written. */
static size_t fill_pipe(int fd)
{
    static const char junk[4096] = {0};
    size_t filled = 0;
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETPIPE_SZ, 4096); /* the smallest the kernel allows: less to drain afterwards */
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    for (size_t chunk = sizeof junk; chunk > 0; chunk /= 2) { /* halving: fill the last partial page too */
        ssize_t n;
        while ((n = write(fd, junk, chunk)) > 0)
            filled += (size_t)n;
    }
    fcntl(fd, F_SETFL, fl);
    return filled;
}

/* Whether `pid` sleeps in a write to a full pipe (the kernel's wait channel: pipe_write, or
   anon_pipe_write since 6.x). */
static bool blocked_on_pipe(pid_t pid)
{
    char path[64], w[128] = {0};
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(w, 1, sizeof w - 1, f);
    fclose(f);
    return n > 0 && strstr(w, "pipe_write") != NULL;
}

/* Whether this kernel tells (some hide wait channels): a child writes one byte to a full pipe. */
static bool wchan_works(void)
{
    int p[2];
    if (pipe(p) != 0)
        return false;
    fill_pipe(p[1]);
    pid_t pid = fork();
    if (pid == 0) {
        (void)!write(p[1], "x", 1);
        _exit(0);
    }
    bool seen = false;
    for (int ms = 0; ms < 5000 && !seen; ms++)
        if (!(seen = blocked_on_pipe(pid)))
            usleep(1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(p[0]), close(p[1]);
    return seen;
}

/* Runs `seer ARGV...` with stdout on a pipe filled beforehand, so its first answer byte blocks the
   run inside write(): the fault lands there, deterministically mid-answer (a run that samples
   end-of-sequence right after still does one more forward pass over the weights). The run is
   stopped, the fault applied, the run let go, and everything after the filler collected. */
static struct midrun run_midway(char *const argv[], enum fault f, const char *model)
{
    struct midrun r = {.status = -1};
    int p[2];
    const char *errpath = tmp("mid.stderr");
    if (pipe(p) != 0)
        return r;
    size_t filler = fill_pipe(p[1]);
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(p[1], 1), dup2(e, 2);
        close(p[0]), close(p[1]), close(e);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    int st = 0;
    bool reaped = false, blocked = false;
    for (int ms = 0; ms < 120000 && !blocked && !reaped; ms++) { /* load and prompt: up to 2 minutes */
        reaped = waitpid(pid, &st, WNOHANG) == pid; /* ended without an answer byte */
        if (!reaped && !(blocked = blocked_on_pipe(pid)))
            usleep(1000);
    }
    if (blocked && f == F_READER_GONE) {
        close(p[0]); /* `| head -c 10` once it has its bytes: the blocked write must end the run */
        p[0] = -1;
    } else if (blocked && f == F_SIGINT) {
        /* Ctrl-C while a slow reader holds the output back: the write must resume, not fail */
        kill(pid, SIGINT);
        usleep(100000);
    } else if (blocked) {
        kill(pid, SIGSTOP);
        reaped = waitpid(pid, &st, WUNTRACED) == pid && !WIFSTOPPED(st);
        if (!reaped) {
            do_fault(f, model);
            kill(pid, SIGCONT);
        }
    }
    if (!blocked) {
        r.early = true;
        if (!reaped)
            kill(pid, SIGKILL);
    }
    size_t cap = 1 << 16, got = 0;
    char *all = calloc(filler + cap + 1, 1);
    ssize_t n;
    while (p[0] >= 0 && (n = read(p[0], all + got, filler + cap - got)) > 0)
        got += (size_t)n;
    if (p[0] >= 0)
        close(p[0]);
    if (!reaped)
        waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r.out_bytes = got > filler ? got - filler : 0;
    r.out = calloc(r.out_bytes + 1, 1);
    memcpy(r.out, all + (got > filler ? filler : got), r.out_bytes);
    free(all);
    r.err = test_slurp(errpath);
    if (!r.err)
        r.err = calloc(1, 1);
    return r;
}

static void midrun_free(struct midrun *r)
{
    free(r->out);
    free(r->err);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    if (system(cmd) != 0)
        diag("cannot copy %s", from);
}

/* `seer run` (or `seer ask` with `image`) on a fresh copy of the model in `sub`, on `device` with
   `--weights weights`, with the fault: up to 4 tries when a run ends before the fault lands. */
static struct midrun try_fault(const char *cmd, const char *device, const char *weights, enum fault f,
                               const char *sub, char *model, size_t model_size, uint64_t *size_before)
{
    struct midrun r = {0};
    char seer[700], seed[32], dir[700];
    snprintf(seer, sizeof seer, "%s/seer", SEER_BINARY_DIR);
    snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), sub);
    mkdir(dir, 0755);
    for (int attempt = 0; attempt < 4; attempt++) {
        midrun_free(&r);
        snprintf(model, model_size, "%s/model-f32.gguf", dir);
        char src[700];
        snprintf(src, sizeof src, "%s/model-f32.gguf", g_dir);
        copy_file(src, model);
        if (!strcmp(cmd, "ask")) {
            snprintf(src, sizeof src, "%s/mmproj-f16.gguf", g_dir);
            char dst[800];
            snprintf(dst, sizeof dst, "%s/mmproj-f16.gguf", dir);
            copy_file(src, dst);
        }
        struct stat sb;
        *size_before = stat(model, &sb) == 0 ? (uint64_t)sb.st_size : 0;
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)(test_rand_u64() >> 1));
        char *argv_run[] = {seer, "-q", "run", "-m", model, "--prompt-tokens", "5,6,7,8", "--temp", "1", "-s", seed,
                            "-n", "3000", "-c", "4096", "--device", (char *)device, "--weights", (char *)weights,
                            NULL};
        char *argv_ask[] = {seer, "-q", "ask", "-m", model, "-p", "Describe it", "--temp", "1", "-s", seed, "-n",
                            "3000", "-c", "4096", "--device", (char *)device, "--weights", (char *)weights,
                            g_image, NULL};
        r = run_midway(!strcmp(cmd, "ask") ? argv_ask : argv_run, f, model);
        if (!r.early)
            break;
        diag("attempt %d: the run ended before its first answer byte (status %d); again with another seed",
             attempt + 1, r.status);
    }
    return r;
}

static void test_truncated(const char *cmd, const char *device, const char *weights)
{
    char model[800], want[1200];
    uint64_t before;
    struct midrun r = try_fault(cmd, device, weights, F_TRUNCATE, "trunc", model, sizeof model, &before);
    snprintf(want, sizeof want, "seer: %s: the file changed size while in use (was %llu bytes, now 4096)\n", model,
             (unsigned long long)before);
    ok(!r.early && r.status == 1 && !strcmp(r.err, want),
       "%s --device %s --weights %s: model truncated mid-answer -> exit 1 (got %d) and exactly one line naming the "
       "file and both sizes",
       cmd, device, weights, r.status);
    if (strcmp(r.err, want))
        diag("stderr: %s\nwant:   %s", r.err, want);
    midrun_free(&r);
}

static void test_touched(void)
{
    char model[800], want[1200];
    uint64_t before;
    struct midrun r = try_fault("run", "cpu", "auto", F_TOUCH, "touch", model, sizeof model, &before);
    snprintf(want, sizeof want, "seer: %s: the file was modified while in use (same size, new modification time)\n",
             model);
    ok(!r.early && r.status == 1 && !strcmp(r.err, want),
       "run: model's modification time changed mid-answer -> exit 1 (got %d), one line", r.status);
    if (strcmp(r.err, want))
        diag("stderr: %s\nwant:   %s", r.err, want);
    midrun_free(&r);
}

static void test_sigint(void)
{
    char model[800];
    uint64_t before;
    struct midrun r = try_fault("run", "cpu", "auto", F_SIGINT, "int", model, sizeof model, &before);
    ok(!r.early && r.status == 130, "run: SIGINT mid-answer exits 130, not 0 (got %d)", r.status);
    midrun_free(&r);
}

static void test_reader_gone(void)
{
    char model[800];
    uint64_t before;
    struct midrun r = try_fault("run", "cpu", "auto", F_READER_GONE, "pipe", model, sizeof model, &before);
    ok(!r.early && r.signal == SIGPIPE && !r.err[0],
       "the reader of stdout gone mid-answer: a quiet end by SIGPIPE (signal %d, stderr '%s')", r.signal, r.err);
    midrun_free(&r);
}

/* ---- stdout that goes away or fills up --------------------------------------------------------- */

static void test_stdout(void)
{
    char cmd[4096];
    /* the reader takes 10 bytes and leaves; wc counts what head passed on (the answer may hold a
       NUL byte, so not strlen). How seer ends is test_reader_gone's: here it may well have written
       its whole answer into the pipe before head ran. */
    /* The premise: an answer of at least 10 bytes. A random model may end its turn at once (the
       end token drawn first), so a seed whose whole answer is shorter is exchanged for another. */
    unsigned long long seed = 0;
    int whole = 0;
    for (int attempt = 0; attempt < 20 && whole < 10; attempt++) {
        seed = test_rand_u64() >> 1;
        snprintf(cmd, sizeof cmd,
                 "sh -c \"'%s/seer' -q run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 1 -s %llu -n 3000 "
                 "--device cpu 2>/dev/null | wc -c\"",
                 SEER_BINARY_DIR, g_dir, seed);
        struct test_run w = test_run_cmd(cmd);
        whole = atoi(w.out);
        if (whole < 10)
            diag("seed %llu: the whole answer is %d bytes; another seed", seed, whole);
        test_run_free(&w);
    }
    snprintf(cmd, sizeof cmd,
             "sh -c \"'%s/seer' -q run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 1 -s %llu -n 3000 "
             "--device cpu 2>/dev/null | head -c 10 | wc -c\"",
             SEER_BINARY_DIR, g_dir, seed);
    struct test_run r = test_run_cmd(cmd);
    ok(whole >= 10 && r.status == 0 && atoi(r.out) == 10,
       "| head -c 10 receives 10 bytes of an answer of %d (got %d, seed %llu)", whole, atoi(r.out), seed);
    test_run_free(&r);

    if (access("/dev/full", W_OK) != 0) {
        skip("no writable /dev/full on this machine", "stdout on a full disk");
        return;
    }
    const char *modes[] = {"", "--json"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "('%s/seer' -q run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 1 -n 40 "
                 "--device cpu %s >/dev/full)", SEER_BINARY_DIR, g_dir, modes[i]);
        r = test_run_cmd(cmd);
        if (!ok(r.status == 1 && !strcmp(r.err, "seer: could not write the output to stdout: No space left on device\n"),
                "run %s > /dev/full: exit 1 (got %d), one line with the errno's text", modes[i], r.status))
            diag("stderr: %s", r.err);
        test_run_free(&r);
    }
    /* seer describe streams each chunk's text the same way */
    snprintf(cmd, sizeof cmd, "('%s/seer' -q describe -m '%s/model-f32.gguf' -n 20 --device cpu '%s' >/dev/full)",
             SEER_BINARY_DIR, g_dir, test_src_path("samples/shapes.mp4"));
    r = test_run_cmd(cmd);
    if (!ok(r.status == 1 && strstr(r.err, "seer: could not write the output to stdout: No space left on device\n"),
            "describe > /dev/full: exit 1 (got %d) with the errno's text", r.status))
        diag("stderr: %s", r.err);
    test_run_free(&r);
}

/* ---- the library pieces the handler relies on -------------------------------------------------- */

static void test_io_watch(void)
{
    const char *path = tmp("watched.bin");
    const size_t size = 3 * 65536;
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < size; i++)
        fputc((int)(test_rand_u64() & 0xff), f);
    if (f)
        fclose(f);
    struct io_map m = {0};
    if (!ok(io_map(path, &m) == SEER_OK && m.watch, "io_map lists the mapping"))
        return;
    ok(io_map_check(&m) == SEER_OK && io_check_all() == SEER_OK, "an unchanged file checks clean");
    char line[2048], want[2048];
    ok(io_fault_describe((const char *)m.data - 1, line, sizeof line) == 0 &&
           io_fault_describe(m.data + size, line, sizeof line) == 0,
       "addresses just outside the mapping are not described");
    if (truncate(path, 4096) != 0)
        diag("truncate: %s", strerror(errno));
    snprintf(want, sizeof want, "%s: the file changed size while in use (was %zu bytes, now 4096)", path, size);
    ok(io_map_check(&m) == SEER_EIO && !strcmp(seer_last_error(), want), "io_map_check after truncation: %s",
       seer_last_error());
    ok(io_check_all() == SEER_EIO, "io_check_all finds it too");
    size_t off = 4096 + (size_t)(test_rand_u64() % (size - 4096));
    size_t n = io_fault_describe(m.data + off, line, sizeof line);
    strcat(want, "\n");
    ok(n == strlen(want) && !strcmp(line, want), "io_fault_describe at byte %zu: %.*s", off, (int)(n ? n - 1 : 0), line);
    char small[16];
    n = io_fault_describe(m.data + off, small, sizeof small);
    ok(n == sizeof small - 1 && small[n] == '\0', "a short buffer gets a NUL-terminated prefix");
    const uint8_t *data = m.data;
    io_unmap(&m);
    ok(io_fault_describe(data + off, line, sizeof line) == 0 && io_check_all() == SEER_OK,
       "after io_unmap the range is no longer described or checked");
}

/* Copy-on-load (what a file on a network file system gets): the bytes are the file's, and a
   truncation afterwards cannot reach them. */
static void test_copy_on_load(void)
{
    const char *path = tmp("copied.bin");
    const size_t size = 2 * 65536 + (size_t)(test_rand_u64() % 4096);
    uint8_t *want = malloc(size);
    for (size_t i = 0; i < size; i++)
        want[i] = (uint8_t)test_rand_u64();
    FILE *f = fopen(path, "wb");
    size_t wrote = f ? fwrite(want, 1, size, f) : 0;
    if (f)
        fclose(f);
    struct io_map m = {0};
    io_copy_on_load_always(true);
    int rc = wrote == size ? io_map(path, &m) : SEER_EIO;
    io_copy_on_load_always(false);
    if (!ok(rc == SEER_OK && m.size == size && !memcmp(m.data, want, size) && m.watch == 0,
            "copy-on-load: %zu bytes identical to the file, not listed", size)) {
        free(want);
        return;
    }
    if (truncate(path, 100) != 0)
        diag("truncate: %s", strerror(errno));
    ok(!memcmp(m.data, want, size) && io_map_check(&m) == SEER_OK,
       "after the file is truncated the copy still holds every byte (no SIGBUS possible)");
    io_unmap(&m);
    /* the read path's own errors: an injected EIO on the read names the file and the byte */
    io_copy_on_load_always(true);
    io_fail_after(3); /* open, fstat, then the first read */
    rc = io_map(path, &m);
    io_fail_after(0);
    io_copy_on_load_always(false);
    ok(rc == SEER_EIO && strstr(seer_last_error(), path) && strstr(seer_last_error(), "read failed at byte 0"),
       "a failed read while copying: %s", seer_last_error());
    free(want);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    test_io_watch();
    test_copy_on_load();
    snprintf(g_dir, sizeof g_dir, "%s/tiny", test_tmp_dir());
    snprintf(g_image, sizeof g_image, "%s/noise.png", test_tmp_dir());
    if (!ok(if_gen_tiny(g_dir, "tiny", test_rand_u64() >> 1, "", "f16") == 0, "tiny model generated"))
        return done_testing();
    bool have_image = if_python_pil() && if_noise_image(g_image, 64, 48) == 0;
    /* map: the weights are read from the file, so the lost pages raise SIGBUS; copy: they were
       copied at load, and the check after the answer finds the change */
    if (wchan_works()) {
        test_truncated("run", "cpu", "map");
        test_truncated("run", "cpu", "copy");
        if (have_image)
            test_truncated("ask", "cpu", "map");
        else
            skip("no python3 with PIL to write the test image", "seer ask with a truncated model");
        test_touched();
        test_sigint();
        test_reader_gone();
        /* Vulkan uploads the weights at load, so no SIGBUS: the check after the answer must say the same */
        struct test_run d = test_seer("info --devices");
        if (strstr(d.out, "vulkan:0"))
            test_truncated("run", "vulkan", "auto");
        else
            skip("no Vulkan device", "run --device vulkan with a truncated model");
        test_run_free(&d);
    } else {
        skip("/proc/PID/wchan does not say where a process sleeps here", "the faults injected mid-answer (7 cases)");
    }
    test_stdout();
    return done_testing();
}
