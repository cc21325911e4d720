/* cli.h — the seer command's shared pieces: each subcommand is `int cli_<name>(int argc, char **argv)`
   returning the process exit status (cli_exit_status maps SEER_E* codes). Results go to stdout,
   everything else (logs, errors, timings) to stderr. */
#ifndef SEER_CLI_H
#define SEER_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: 0 ok, 1 runtime failure (bad file, device), 2 usage error, 130 stopped by
   SIGINT/SIGTERM (the shell's 128 + SIGINT). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_INTERRUPTED = 130 };

#include "seer.h"

/* The -v/-q level the user chose (set by cli/main.c; defined in cli/util.c). */
extern seer_log_level cli_log_level;

int cli_info(int argc, char **argv);
/* `seer run` (cli/run.c) and `seer chat` (cli/chat.c). */
int cli_run(int argc, char **argv);
int cli_chat(int argc, char **argv);
/* `seer ask`: questions about images (cli/ask.c). */
int cli_ask(int argc, char **argv);
/* `seer describe`: what happens in videos, with times (cli/describe.c). */
int cli_describe(int argc, char **argv);
/* `seer ocr`: batch OCR of scanned documents (cli/ocr.c). */
int cli_ocr(int argc, char **argv);
/* `seer serve`: the OpenAI-compatible server (cli/serve.c, server/). */
int cli_serve(int argc, char **argv);
/* `seer tokenize`: text → ids with a model's tokenizer (cli/tokenize.c). */
int cli_tokenize(int argc, char **argv);
/* `seer bench`: prefill/decode speed and peak memory, and its other modes (tools/bench/, apart
   from cli/ because it uses library internals: tools/bench/bench.h says why). */
int cli_bench(int argc, char **argv);
/* `seer info --devices`: lists compute devices (cli/devices.c). */
int cli_info_devices(FILE *out);

/* The device when no --device is given: $SEER_DEVICE when set and not empty, else "auto". The
   library takes its settings through seer.h (it reads only three measuring knobs from the environment,
   docs/ARCHITECTURE.md "Modules, in data-path order"); the command reads $SEER_DEVICE, so scripts can
   pick a device once. */
const char *cli_default_device(void);

/* `seer pull NAME...` and `seer list`: models by name in $SEER_HOME (cli/pull.c). */
int cli_pull(int argc, char **argv);
int cli_list(int argc, char **argv);
/* Models by name (cli/models.c). cli_seer_home: $SEER_HOME, else ~/.cache/seer, into buf[size];
   false when neither is set or it does not fit. */
bool cli_seer_home(char *buf, size_t size);
/* -m's value → a model path: an existing path as it is, a known name (qwen3.5-0.8b …) as its
   directory in $SEER_HOME/models; 0, or -1 after one line on stderr when the name is not pulled.
   cli_default_model() is qwen3.5-0.8b's directory when it is there, else NULL (-m required). */
int cli_model_arg(const char *arg, const char **path);
const char *cli_default_model(void);
/* When a model-taking command has no model (no -m, and cli_default_model() is NULL): one line on
   stderr, "seer COMMAND: no model given and none pulled", naming `seer pull qwen3.5-0.8b` and -m;
   returns CLI_USAGE. */
int cli_no_model(const char *command);

/* Prints "seer: <cli_last_error()>" to stderr (cli/util.h) and returns CLI_FAIL (cli/util.c). */
int cli_fail(int rc);

/* Faults (cli/faults.c, docs/RELIABILITY.md): cli_faults_install sets SIGBUS to name the model
   file that shrank while mapped (exit 1) and SIGPIPE to its default (a quiet end). After a result
   was written, cli_faults_after_output is CLI_FAIL, with one line, when stdout could not take it
   or a mapped file changed meanwhile; else CLI_OK. cli_stdout_failed records a failed write's
   errno (the first one is reported). */
void cli_faults_install(void);
int cli_faults_after_output(void);
void cli_stdout_failed(int e);

#endif
