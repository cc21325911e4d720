/* bench_video.c — `seer bench --video FILE -m MODEL`: where the time of describing one video goes.
   One real run through the public API (seer_chat_add_media → seer_chat_generate, as `seer describe`
   does), split by stage from the call's own video timings (seer_result's video_* fields): open + demux pass, decoding the sampled frames
   (keyframe seeks included), conversion to RGB + resize, patchify, the vision tower, the decoder's
   prefill of the fused prompt, and decoding -n tokens; plus frames/s from file to embeddings. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/describe.h"
#include "cli/gen.h"
#include "tools/bench/bench.h"

static const char bench_video_help[] =
    "usage: seer bench --video FILE -m MODEL [options]\n"
    "  times one description of FILE by stage: demux, decode, convert (RGB + resize), patchify, encode\n"
    "  (vision tower), prefill (decoder), decode (-n tokens, default 32); --json for one object\n";

int cli_bench_video(int argc, char **argv)
{
    struct gen_opts g;
    seer_video_input vin = {0};
    const char *file = NULL;
    size_t n_stop = 0;
    gen_opts_init(&g);
    g.gp.max_tokens = 32;
    g.gp.sampling.temperature = 0;
    g.cp.n_ctx = 32768;
    g.prompt = "Describe what happens in this video, in order. Give the time in seconds of each event.";
    for (int i = 1; i < argc; i++) {
        int r = gen_parse_opt(argc, argv, &i, &g, &n_stop);
        if (!r)
            r = cli_video_parse_opt(argc, argv, &i, &vin);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--video") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            g.json = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("%s", bench_video_help);
            cli_video_help(stdout);
            printf("%s", gen_help);
            return CLI_OK;
        } else {
            fprintf(stderr, "seer bench --video: unknown option '%s' (see seer bench --video FILE --help)\n", argv[i]);
            return CLI_USAGE;
        }
    }
    g.gp.n_stop = n_stop;
    if (!file || !g.model) {
        fprintf(stderr, "seer bench --video: need --video FILE and -m MODEL\n");
        return CLI_USAGE;
    }
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_result r = {0};
    vin.path = file;
    int rc = seer_model_load(g.model, &g.mp, &m);
    if (!rc)
        rc = seer_context_create(m, &g.cp, &ctx);
    if (!rc)
        rc = seer_chat_add_media(ctx, "user", NULL, 0, &vin, 1, g.prompt);
    if (!rc)
        rc = seer_chat_generate(ctx, &g.gp, &r);
    int status = CLI_OK;
    if (rc)
        status = cli_fail(rc);
    else {
        const double vision = r.video_demux_seconds + r.video_decode_seconds + r.video_resize_seconds +
                              r.video_patchify_seconds + r.video_encode_seconds;
        const double preprocess = r.video_resize_seconds + r.video_patchify_seconds;
        const double prefill = r.prefill_seconds - r.vision_seconds;
        const double fps = vision > 0 ? (double)r.video_frames / vision : 0;
        if (g.json) {
            json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                                  "video", file, "device", seer_model_device(m), "frames", (json_int_t)r.video_frames,
                                  "frames_decoded", (json_int_t)r.video_frames_decoded, "seeks",
                                  (json_int_t)r.video_seeks, "video_tokens", (json_int_t)r.video_tokens,
                                  "prompt_tokens", (json_int_t)r.prompt_tokens, "generated_tokens",
                                  (json_int_t)r.n_tokens, "demux_seconds", r.video_demux_seconds, "decode_seconds",
                                  r.video_decode_seconds, "preprocess_seconds", preprocess, "encode_seconds",
                                  r.video_encode_seconds, "prefill_seconds", prefill, "generate_seconds",
                                  r.decode_seconds, "frames_per_second", fps, "total_seconds",
                                  r.prefill_seconds + r.decode_seconds);
            char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
            if (s)
                printf("%s\n", s);
            free(s);
            json_decref(j);
        } else {
            printf("video      %s: %lld frames sampled (%lld decoded, %lld seeks), %lld pairs, %lld video tokens\n",
                   file, (long long)r.video_frames, (long long)r.video_frames_decoded, (long long)r.video_seeks,
                   (long long)r.video_pairs, (long long)r.video_tokens);
            printf("device     %s\n", seer_model_device(m));
            printf("demux      %8.3f s\n", r.video_demux_seconds);
            printf("decode     %8.3f s\n", r.video_decode_seconds);
            printf("preprocess %8.3f s  (RGB + resize %.3f, patchify %.3f)\n", preprocess, r.video_resize_seconds,
                   r.video_patchify_seconds);
            printf("encode     %8.3f s  (vision tower)\n", r.video_encode_seconds);
            printf("prefill    %8.3f s  (%lld prompt tokens, %.1f t/s)\n", prefill, (long long)r.prompt_tokens,
                   prefill > 0 ? (double)r.prompt_tokens / prefill : 0.0);
            printf("generate   %8.3f s  (%zu tokens, %.1f t/s)\n", r.decode_seconds, r.n_tokens,
                   r.decode_seconds > 0 ? (double)r.n_tokens / r.decode_seconds : 0.0);
            printf("file to embeddings: %.2f frames/s; total %.3f s\n", fps, r.prefill_seconds + r.decode_seconds);
        }
    }
    seer_result_clear(&r);
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}
