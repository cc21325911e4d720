/* Tests what `seer run` and `seer ask` do when the machine fails under them (cli/faults.c,
   core/io.c, docs/RELIABILITY.md), on a tiny random Qwen3.5 (tests/reference/gen_tiny.py):
   - the model file truncated while a generation has it mapped: one line naming the file with both
     sizes (taken here with stat, not from seer), exit 1 — on the CPU with --weights map the lost
     pages raise SIGBUS; with the weights copied (--weights copy, Vulkan) the check after the answer
     finds it;
   - the model file's modification time changed mid-run (rewritten in place): exit 1, one line;
   - the reader of stdout gone (`| head -c 10`): a quiet end by SIGPIPE (status 141), nothing on
     stderr; stdout on a full disk (/dev/full): exit 1 with the errno's text (run streaming and
     --json, describe);
   - SIGINT mid-answer: exit 130 and the answer is not reported as complete;
   - the library pieces directly: io_map_check and io_fault_describe on a file truncated under a
     mapping, and nothing described outside a live mapping; copy-on-load (network file systems)
     keeping every byte after the file is truncated.
   A run is stopped (SIGSTOP) once its first answer byte arrives, so the fault lands mid-generation
   while the weights are mapped; a run that had already finished is retried with another seed. */
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

enum fault { F_TRUNCATE, F_TOUCH, F_SIGINT };

struct midrun {
    int status;      /* exit status; -1 when killed by a signal */
    bool early;      /* it finished before the fault could land: retry */
    size_t out_bytes;
    char *out, *err;
};

static void do_fault(enum fault f, const char *model, pid_t pid)
{
    if (f == F_TRUNCATE) {
        if (truncate(model, 4096) != 0)
            diag("truncate %s: %s", model, strerror(errno));
    } else if (f == F_TOUCH) {
        /* same size, a modification time the file never had: a rewrite in place */
        struct timespec ts[2] = {{1, 0}, {1, 0}};
        if (utimensat(AT_FDCWD, model, ts, 0) != 0)
            diag("utimensat %s: %s", model, strerror(errno));
    } else {
        kill(pid, SIGINT);
    }
}

/* Runs `seer ARGV...` with stdout on a pipe; at the first byte of the answer stops it, applies
   the fault, lets it go on and collects everything. */
static struct midrun run_midway(char *const argv[], enum fault f, const char *model)
{
    struct midrun r = {.status = -1};
    int p[2];
    const char *errpath = tmp("mid.stderr");
    if (pipe(p) != 0)
        return r;
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(p[1], 1), dup2(e, 2);
        close(p[0]), close(p[1]), close(e);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 1 << 16;
    r.out = calloc(cap + 1, 1);
    ssize_t n = read(p[0], r.out, 1);
    const bool got_first = n == 1;
    int st = 0;
    if (got_first) {
        r.out_bytes = 1;
        kill(pid, SIGSTOP);
        if (waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st)) {
            do_fault(f, model, pid);
            kill(pid, SIGCONT);
        } else {
            r.early = true; /* it ended before the stop arrived */
        }
    }
    while ((n = read(p[0], r.out + r.out_bytes, cap - r.out_bytes)) > 0)
        r.out_bytes += (size_t)n;
    close(p[0]);
    if (!r.early)
        waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (got_first && r.status == 0 && f != F_SIGINT)
        r.early = true; /* the answer was complete (and checked) before the stop landed */
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
        /* sampling at temperature 1: a random model rarely ends its answer within 3000 tokens */
        char *argv_run[] = {seer, "-q", "run", "-m", model, "--prompt-tokens", "5,6,7,8", "--temp", "1", "-s", seed,
                            "-n", "3000", "-c", "4096", "--device", (char *)device, "--weights", (char *)weights,
                            NULL};
        char *argv_ask[] = {seer, "-q", "ask", "-m", model, "-p", "Describe it", "--temp", "1", "-s", seed, "-n",
                            "3000", "-c", "4096", "--device", (char *)device, "--weights", (char *)weights,
                            g_image, NULL};
        r = run_midway(!strcmp(cmd, "ask") ? argv_ask : argv_run, f, model);
        if (!r.early)
            break;
        diag("attempt %d: the run ended before the fault; again with another seed", attempt + 1);
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
    ok(r.status == 130, "run: SIGINT mid-answer exits 130, not 0 (got %d)", r.status);
    midrun_free(&r);
}

/* ---- stdout that goes away or fills up --------------------------------------------------------- */

static void test_stdout(void)
{
    char cmd[4096];
    /* the reader takes 10 bytes and leaves: SIGPIPE ends seer quietly (128 + 13) */
    snprintf(cmd, sizeof cmd,
             "sh -c \"('%s/seer' run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 1 -n 3000 --device cpu "
             "2>'%s'; echo \\$? >'%s') | head -c 10\"",
             SEER_BINARY_DIR, g_dir, tmp("pipe.stderr"), tmp("pipe.status"));
    struct test_run r = test_run_cmd(cmd);
    char *st = test_slurp(tmp("pipe.status")), *err = test_slurp(tmp("pipe.stderr"));
    ok(r.status == 0 && strlen(r.out) == 10, "| head -c 10 receives 10 bytes");
    if (st && atoi(st) != 141 && err && strstr(err, "stop: eos"))
        skip("the random model ended its answer before head closed the pipe", "SIGPIPE status");
    else
        ok(st && atoi(st) == 141 && err && !err[0], "seer run | head -c 10: status 141 (SIGPIPE), nothing on stderr "
                                                   "(status %d, stderr '%s')",
           st ? atoi(st) : -1, err ? err : "?");
    free(st), free(err);
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
    test_truncated("run", "cpu", "map");
    test_truncated("run", "cpu", "copy");
    if (have_image)
        test_truncated("ask", "cpu", "map");
    else
        skip("no python3 with PIL to write the test image", "seer ask with a truncated model");
    test_touched();
    test_sigint();
    test_stdout();
    /* Vulkan uploads the weights at load, so no SIGBUS: the check after the answer must say the same */
    struct test_run d = test_seer("info --devices");
    if (strstr(d.out, "vulkan:0"))
        test_truncated("run", "vulkan", "auto");
    else
        skip("no Vulkan device", "run --device vulkan with a truncated model");
    test_run_free(&d);
    return done_testing();
}
