/* describe.h — the video pieces `seer describe` (cli/describe.c) shares with `seer ask` and
   `seer bench --video`: the sampling flags, and what --dry-run prints of one video (the library's
   seer_video_measure of an opened video: the plan of spec §5.3 and what it costs). */
#ifndef SEER_CLI_DESCRIBE_H
#define SEER_CLI_DESCRIBE_H

#include <jansson.h>
#include <stdio.h>

#include "seer.h"

/* Help lines for the flags cli_video_parse_opt knows. */
void cli_video_help(FILE *f);
/* One sampling flag at argv[*i] (--fps, --min-frames, --max-frames, --max-video-tokens, --start,
   --end) into *in: 1 consumed (*i advanced past its value), 0 not one, -1 bad value (reported on
   stderr). */
int cli_video_parse_opt(int argc, char **argv, int *i, seer_video_input *in);
/* "90", "1:30", "01:02:03.5" → seconds; -1 on a malformed or negative time. */
double cli_parse_time(const char *s);

/* The --dry-run --json object of one measured video (the fields issue 10 lists; the plan's arrays
   must be there: measure an opened video) and the short human table. prompt_tokens < 0: unknown
   (null; the table leaves its line out). */
json_t *cli_video_info_json(const seer_video_info *in, int64_t prompt_tokens);
void cli_video_info_print(const char *path, const seer_video_info *in, int64_t prompt_tokens);

#endif
