/* util.h — the command's own small helpers. The command is a client of seer.h like any other
   program (docs/ARCHITECTURE.md), so it includes no library-internal header; what it needs beyond
   seer.h and the C library lives here, once.

   Errors: a cli function that fails returns a SEER_E* code. When the failure is the library's, the
   message is seer_last_error(); when the command itself finds the problem (a bad flag value, a file
   list it cannot read) it calls cli_err, and cli_last_error() then gives that message instead, once.
   cli_fail (cli.h) prints whichever applies as the one error line. */
#ifndef SEER_CLI_UTIL_H
#define SEER_CLI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seer.h"

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/* A whole-number option value of subcommand cmd in [lo, hi] into *out: 0, or -1 after one line on
   stderr naming the option and the range. */
int cli_count_opt(const char *cmd, const char *opt, const char *v, long long lo, long long hi, long long *out);

/* Records the command's own message for this thread (printf format) and returns code. */
int cli_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message for the most recent failure: the command's own (cli_err) if one is waiting — it is
   consumed — else the library's seer_last_error(). Never NULL. */
const char *cli_last_error(void);

/* Growable arrays, as the library's own: room for `need` elements of elem_bytes at *pp (a pointer
   to the array pointer) whose capacity *cap counts elements, doubling from `first`. False on
   overflow or a failed allocation, with *pp and *cap untouched. */
bool cli_grow(void *pp, size_t *cap, size_t need, size_t elem_bytes, size_t first);

/* A seed nobody chose: the clock's nanoseconds mixed with the process id and salt (splitmix64's
   finaliser), so two runs in the same second, or two requests with different salts, differ. 32
   bits, short enough to type back (printed with -v and in --json). */
uint64_t cli_random_seed(uint64_t salt);

/* Monotonic seconds, for timings printed on stderr. */
double cli_time_now(void);

/* Kind of a path without failing. */
enum cli_path_kind { CLI_PATH_MISSING = 0, CLI_PATH_FILE = 1, CLI_PATH_DIR = 2, CLI_PATH_OTHER = 3 };
enum cli_path_kind cli_path_kind(const char *path);
/* Size of a regular file in bytes: 0, or -1 with errno set. */
int cli_file_size(const char *path, uint64_t *size);

/* The command's one way to read a file: the whole file (or stdin for "-") into a new malloc'ed
   buffer of *len bytes plus a NUL. SEER_OK, or a SEER_E* code with the message for cli_last_error. */
int cli_read_file(const char *path, char **out, size_t *len);
/* A prompt or text file ("-" = stdin) as cli_read_file reads it, refused by name when it is a
   directory or not UTF-8 text (which the tokenizer would refuse later, after loading the model,
   with no file name). CLI_OK, or CLI_FAIL after one line on stderr. */
int cli_read_text(const char *path, char **text, size_t *len);

/* One log line of the command's own on stderr, tagged with its component ("ocr", "bench"), shown
   when the -v/-q level (cli_log_level) admits it, in the library's default line format ("seer:
   LEVEL: COMPONENT: message", core/log.c). Written here again on purpose: the command sees only
   seer.h, which has no entry point for formatting a log line and should not grow one for it. */
void cli_log(seer_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
