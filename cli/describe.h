/* describe.h — the video pieces `seer describe` (cli/describe.c) shares with `seer ask` and
   `seer bench --video` (the sampling flags are options: cli/gen.h): what --dry-run prints of one
   video (the library's seer_video_measure of an opened video: the plan of spec §5.3 and what it
   costs). */
#ifndef SEER_CLI_DESCRIBE_H
#define SEER_CLI_DESCRIBE_H

#include <jansson.h>
#include <stdio.h>

#include "seer.h"

/* The --dry-run --json object of one measured video (the fields issue 10 lists; the plan's arrays
   must be there: measure an opened video) and the short human table. prompt_tokens < 0: unknown
   (null; the table leaves its line out). */
json_t *cli_video_info_json(const seer_video_info *in, int64_t prompt_tokens);
void cli_video_info_print(const char *path, const seer_video_info *in, int64_t prompt_tokens);

#endif
