/* gen.h — the generation options `seer run`, `seer chat` and `seer ask` share (cli/run.c): model,
   device, context, sampling and stop flags, their help text, and how results are reported. */
#ifndef SEER_CLI_GEN_H
#define SEER_CLI_GEN_H

#include <stdbool.h>
#include <stddef.h>

#include "seer.h"

#define MAX_STOPS 16

struct gen_opts {
    const char *model, *prompt, *prompt_file, *prompt_tokens, *device, *system;
    bool raw, json, quiet_timings;
    seer_model_params mp;
    seer_context_params cp;
    seer_generate_params gp;
    const char *stops[MAX_STOPS];
};

/* Help lines for the options gen_parse_opt knows. */
extern const char gen_help[];

/* Defaults: the library's, with the device from cli_default_device(). */
void gen_opts_init(struct gen_opts *o);
/* Parses one generation option at argv[*i]; 1 = consumed (and *i advanced past its value), 0 = not
   a generation option, -1 = bad value (reported on stderr). */
int gen_parse_opt(int argc, char **argv, int *i, struct gen_opts *o, size_t *n_stop);
/* A seer_text_fn writing to stdout, flushed. */
int gen_stream_stdout(const char *text, size_t len, void *user);
/* "eos", "length", "stop_string", "context", "canceled". */
const char *gen_stop_name(enum seer_stop_reason s);
/* The one-line timing summary on stderr. */
void gen_print_timings(const seer_result *r);

#endif
