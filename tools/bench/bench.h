/* bench.h — `seer bench` and its modes (the files of tools/bench/), built into the seer binary as the
   seer_bench object library (CMakeLists.txt).

   THIS IS THE ONE PART OF THE COMMAND ALLOWED TO INCLUDE LIBRARY INTERNALS (core/, lm/, vision/,
   api/, vulkan/). Every file of cli/ is a client of seer.h alone (docs/ARCHITECTURE.md); bench is
   not a user-facing front end but a measuring tool, and it needs what seer.h rightly does not
   offer: it generates random-weight models of the released shapes (lm/randmodel.h,
   vision/randmodel.h, the seer_randmodel library, which libseer does not ship) and times the
   model's internal stages one by one (prefill and decode steps on qwen35_model, preprocessing
   apart from the tower, the tokenizer alone). Keeping those here leaves cli/ free of them.

   Entry: cli_bench (declared in cli/cli.h for the command table) hands its other modes to the
   functions below. */
#ifndef SEER_TOOLS_BENCH_H
#define SEER_TOOLS_BENCH_H

#include "cli/cli.h"

/* `seer bench --tokenizer`: encoding speed (bench_tok.c). */
int cli_bench_tokenizer(int argc, char **argv);
/* `seer bench --image WxH`: preprocessing and tower time per image size (bench_image.c). */
int cli_bench_image(int argc, char **argv);
/* `seer bench --video FILE`: one video's description timed by stage (bench_video.c). */
int cli_bench_video(int argc, char **argv);

/* The best of `reps` timed reads of a `bytes` buffer by `threads` threads, in bytes per second, read
   in a child process (the caller's peak resident memory does not count the buffer); 0 without
   memory for the buffer or a process to read it in (bench_membw.c). */
double bench_read_bandwidth(int threads, size_t bytes, int reps);
/* Bytes one decode step of model m reads from memory: the weights it uses (file_bytes less an
   untied token embedding), the recurrent state of st's GDN layers, read and written, and the
   attention layers' K and V rows of kv_tokens tokens in st's cache type. */
struct qwen35_model;
struct qwen35_state;
uint64_t bench_decode_bytes(const struct qwen35_model *m, const struct qwen35_state *st, uint64_t file_bytes,
                            int64_t kv_tokens);

#endif
