/* util.c — the command's own helpers (cli/util.h), and the few pieces of cli/cli.h that every
   file below main.c calls (the log level, cli_fail, the default device): they live here, not in
   main.c, so calls between the command's files go one way (main.c → subcommands → util.c). Reading
   files is here for the same reason: options.c, run.c, tokenize.c and bench use it. */
#define _POSIX_C_SOURCE 200809L
#include "cli/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

seer_log_level cli_log_level = SEER_LOG_WARN;

/* Per thread, like the library's own message: a batch may fail items on several threads. */
static _Thread_local char cli_msg[1024];
static _Thread_local bool cli_msg_set;

int cli_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cli_msg, sizeof cli_msg, fmt, ap);
    va_end(ap);
    cli_msg_set = true;
    return code;
}

const char *cli_last_error(void)
{
    if (cli_msg_set) {
        cli_msg_set = false;
        return cli_msg;
    }
    return seer_last_error();
}

bool cli_grow(void *pp, size_t *cap, size_t need, size_t elem_bytes, size_t first)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return false;
        c *= 2;
    }
    if (elem_bytes && c > SIZE_MAX / elem_bytes)
        return false;
    void *p = realloc(*(void **)pp, c * elem_bytes);
    if (!p)
        return false;
    *(void **)pp = p;
    *cap = c;
    return true;
}

double cli_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum cli_path_kind cli_path_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return CLI_PATH_MISSING;
    return S_ISREG(st.st_mode) ? CLI_PATH_FILE : S_ISDIR(st.st_mode) ? CLI_PATH_DIR : CLI_PATH_OTHER;
}

int cli_file_size(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

void cli_log(seer_log_level level, const char *component, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
    if (level > cli_log_level || level < SEER_LOG_ERROR)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one fprintf per line, as the library's sink, so threads' lines do not interleave */
    fprintf(stderr, "seer: %s: %s: %s\n", names[level > SEER_LOG_TRACE ? SEER_LOG_TRACE : level], component, line);
}

int cli_fail(int rc)
{
    const char *msg = cli_last_error();
    fprintf(stderr, "seer: %s\n", *msg ? msg : seer_strerror(rc));
    return CLI_FAIL;
}

const char *cli_default_device(void)
{
    const char *d = getenv("SEER_DEVICE");
    return d && *d ? d : "auto";
}

/* Read in growing steps, not sized first: stdin cannot be mapped or measured. */
int cli_read_file(const char *path, char **out, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return cli_err(SEER_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = SEER_OK;
    for (;;) {
        if (!cli_grow(&buf, &cap, n + 2, 1, 1 << 16)) { /* room for a byte and the NUL */
            rc = cli_err(SEER_ENOMEM, "%s: out of memory reading the file", path);
            break;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = cli_err(SEER_EIO, "%s: read error", path);
            break;
        }
    }
    if (f != stdin)
        fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return SEER_OK;
}

int cli_read_text(const char *path, char **text, size_t *len)
{
    const char *name = strcmp(path, "-") ? path : "stdin";
    if (strcmp(path, "-") && cli_path_kind(path) == CLI_PATH_DIR) {
        fprintf(stderr, "seer: %s is a directory, not a text file\n", path);
        return CLI_FAIL;
    }
    int rc = cli_read_file(path, text, len);
    if (rc)
        return cli_fail(rc);
    size_t bad = seer_utf8_check(*text, *len);
    if (bad < *len) {
        fprintf(stderr, "seer: %s is not UTF-8 text (byte %zu)\n", name, bad);
        free(*text);
        *text = NULL;
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_count_opt(const char *cmd, const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "seer %s: %s needs a whole number in [%lld, %lld], got '%s'\n", cmd, opt, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

uint64_t cli_random_seed(uint64_t salt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t z = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ((uint64_t)getpid() << 32) + (salt << 40);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % 4294967296ull; /* 32 bits: short enough to type back */
}
