/* describe.h — the video pieces `seer describe` (cli/describe.c) shares with `seer ask`: the
   sampling flags, and the no-weights measurement behind --dry-run (the container's demux pass, the
   plan of spec §5.3, and the prompt's token count from the tokenizer alone). */
#ifndef SEER_CLI_DESCRIBE_H
#define SEER_CLI_DESCRIBE_H

#include <jansson.h>
#include <stdbool.h>

#include "seer.h"
#include "video/video.h"

/* Help lines for the flags cli_video_parse_opt knows. */
extern const char cli_video_help[];
/* One sampling flag at argv[*i] (--fps, --min-frames, --max-frames, --max-video-tokens, --start,
   --end) into *in: 1 consumed (*i advanced), 0 not one, -1 bad value (reported on stderr). */
int cli_video_parse_opt(int argc, char **argv, int *i, seer_video_input *in);

/* What --dry-run prints for one video: the plan, and what it costs. */
struct cli_video_cost {
    video_file *v;
    struct video_plan plan;
    int64_t prompt_tokens; /* the whole prompt, -1 when unknown */
    int64_t memory_bytes;  /* embeddings kept + one frame pair's pixels and rows */
};
/* Plans `path` with the model's video settings (an HF directory's video_preprocessor_config.json)
   and `in`'s flags, reading only the container. prompt_tokens counts a user message of the video
   followed by `prompt` (and `system` when not NULL). */
int cli_video_cost(const char *model, const char *path, const seer_video_input *in, const char *system,
                   const char *prompt, bool think, struct cli_video_cost *out);
void cli_video_cost_clear(struct cli_video_cost *c);
/* Tokens that replace one video's 3-token placeholder compound (spec §5.4: per pair the stamp's
   tokens, <|vision_start|>, the pads, <|vision_end|>). */
struct tokenizer;
int cli_video_prompt_tokens(struct tokenizer *tok, const struct video_plan *p, int64_t *n);
/* The --dry-run --json object (the fields issue 10 lists) and the short human table. */
json_t *cli_video_cost_json(const struct cli_video_cost *c);
void cli_video_cost_print(const char *path, const struct cli_video_cost *c);

#endif
