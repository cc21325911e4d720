/* gen.h — what the generation commands share (`seer run`, `chat`, `ask`, `describe`, `ocr`): the
   option table and its parser (cli/options.c), and how a generation runs and is reported
   (cli/run.c): streaming, Ctrl-C, the progress line, the --json fields, the timing line. */
#ifndef SEER_CLI_GEN_H
#define SEER_CLI_GEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "seer.h"

#define MAX_STOPS 16

/* ---- option tables (cli/options.c) ---------------------------------------------------------- */
#define CLI_OPT_NAMES 3

/* One option: its spellings ("-n", "--n-predict"; one-letter names also take "-n4"), the name of
   its value (NULL for a switch), one help line, and a key the command switches on. */
struct cli_opt {
    const char *name[CLI_OPT_NAMES];
    const char *arg;
    const char *help;
    int key;
};

/* The generation options, in --help order. */
extern const struct cli_opt gen_opts_table[];
extern const size_t gen_opts_table_len;

/* The row of tab[n] that argv[*i] spells: "--flag VALUE" (then *i moves to the value),
   "--flag=VALUE", "-nVALUE", or a switch; *val is the value (NULL when a value is missing). NULL
   when argv[*i] is not in the table. */
const struct cli_opt *cli_opt_find(const struct cli_opt *tab, size_t n, int argc, char **argv, int *i,
                                   const char **val);
/* One aligned line per row. */
void cli_opt_help(FILE *f, const struct cli_opt *tab, size_t n);

/* The subcommands (cli/main.c's table), for the man page and completions. */
struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
};
/* `seer --help-man` ("man") and `seer --completion bash|zsh`: built from each command's --help. */
int cli_print_shell(const char *what, const struct cli_command *cmds, size_t n_cmds, const char *global_help);

/* ---- generation options ---------------------------------------------------------------------- */
struct gen_opts {
    const char *model, *prompt, *prompt_file, *prompt_tokens, *device, *system;
    bool raw, json;
    bool progress; /* --progress: the prompt progress line even when stderr is not a terminal */
    bool no_progress_line; /* the command draws its own progress (describe) */
    bool seed_given;       /* -s was on the command line (else gp.sampling.seed is a random one) */
    seer_model_params mp;
    seer_context_params cp;
    seer_generate_params gp;
    const char *stops[MAX_STOPS];
    seer_video_input *video; /* ask, describe: gen_parse_args takes the video sampling flags into it */
};

/* Help lines for the options gen_parse_opt knows (built once from gen_opts_table). */
const char *gen_help_text(void);
#define gen_help gen_help_text()

/* Defaults: the library's, the device from cli_default_device(), a random seed. */
void gen_opts_init(struct gen_opts *o);
/* Parses one generation option at argv[*i]; 1 = consumed (and *i advanced past its value), 0 = not
   a generation option, -1 = bad value (reported on stderr). */
int gen_parse_opt(int argc, char **argv, int *i, struct gen_opts *o, size_t *n_stop);
/* A subcommand's handler of its own options (opt, v its value) or, opt NULL, of an operand v:
   returns GEN_NEXT to go on, or the status to exit with (CLI_OK after --help, CLI_USAGE after a
   bad value it reported). */
enum { GEN_NEXT = -1 };
typedef int (*gen_own_fn)(const struct cli_opt *opt, const char *v, void *user);
/* The command line of a generating subcommand `cmd` (after gen_opts_init and the caller's own
   defaults): generation options into *o (o->gp.n_stop set), the video sampling flags into
   *o->video where set, cmd's options from tab to own, and
   with `operands` every other argument too (else it is refused). GEN_NEXT when all was parsed,
   else the status to exit with: own's, or CLI_USAGE after one line naming the argument. */
int gen_parse_args(const char *cmd, const struct cli_opt *tab, size_t n, bool operands, int argc, char **argv,
                   struct gen_opts *o, gen_own_fn own, void *user);

/* Help lines for the video sampling flags cli_video_parse_opt knows. */
void cli_video_help(FILE *f);
/* One sampling flag at argv[*i] (--fps, --min-frames, --max-frames, --max-video-tokens, --start,
   --end) into *in: 1 consumed (*i advanced past its value), 0 not one, -1 bad value (reported on
   stderr). */
int cli_video_parse_opt(int argc, char **argv, int *i, seer_video_input *in);
/* "90", "1:30", "01:02:03.5" → seconds; -1 on a malformed or negative time. */
double cli_parse_time(const char *s);

/* ---- running a generation (cli/run.c) -------------------------------------------------------- */
/* Call once the model is loaded, before generating: SIGINT/SIGTERM then stop the generation (the
   first; a second exits at once with 130), the prompt progress line is drawn on stderr (a
   terminal, or --progress), and the seed is logged with -v. Sets o->gp.on_progress. */
void gen_start(struct gen_opts *o);
/* Whether a signal stopped the generation (then exit with CLI_INTERRUPTED); `seer chat` clears it
   to go on with the conversation. */
bool gen_interrupted(void);
void gen_clear_interrupt(void);
/* A seer_text_fn writing to stdout, flushed; it stops the generation after a signal. */
int gen_stream_stdout(const char *text, size_t len, void *user);
/* "eos", "length", "stop_string", "context", "canceled". */
const char *gen_stop_name(enum seer_stop_reason s);
/* Adds to a --json object: thinking, model, device, seed (and text and stop when not there). */
void gen_json_fields(json_t *obj, const struct gen_opts *o, const seer_model *m, const seer_result *r);
/* After a generation: clears the progress line, warns when the reasoning used the whole token
   budget, prints the timing line (unless -q); returns the exit status for a successful call
   (CLI_INTERRUPTED after a signal). */
int gen_finish(const struct gen_opts *o, const seer_result *r);
/* The one-line timing summary on stderr. */
void gen_print_timings(const seer_result *r);

#endif
