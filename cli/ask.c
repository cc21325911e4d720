/* ask.c — `seer ask`: a question about one or more images or videos, the answer streamed to stdout
   (or one JSON object with --json). `--dry-run` loads no weights (a vocab_only model): it decodes
   the images, applies the model's resize rule (spec §5.2), plans the videos from their containers
   (spec §5.3) and prints what the prompt would cost, counted by the library as a real run would
   feed it (seer_chat_measure, seer_text_measure). A client of seer.h alone. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"

#define MAX_IMAGES 256

enum { A_PROMPT = 1, A_RAW, A_JSON, A_DRY_RUN, A_MMPROJ, A_MIN_TOKENS, A_MAX_TOKENS, A_MAX_PIXELS, A_DPI, A_PAGE, A_HELP };

static const struct cli_opt ask_opts_table[] = {
    {{"-p", "--prompt"}, "QUESTION", "the question; the images come first in the user message", A_PROMPT},
    {{"--raw"}, NULL, "feed -p as is: each <|vision_start|><|image_pad|><|vision_end|> takes the next image", A_RAW},
    {{"--json"}, NULL, "print one JSON object (text, tokens and their logprobs, images, timings, stop)", A_JSON},
    {{"--dry-run"}, NULL, "load no weights: print each image's size and tokens and the prompt's token count",
     A_DRY_RUN},
    {{"--mmproj"}, "FILE", "the vision projector of a GGUF text model (default: the one mmproj*.gguf beside it)",
     A_MMPROJ},
    {{"--image-min-tokens"}, "N", "fewest tokens per image (default: the model's, 64)", A_MIN_TOKENS},
    {{"--image-max-tokens"}, "N", "most tokens per image (default: the model's, 16384)", A_MAX_TOKENS},
    {{"--max-image-pixels"}, "N", "refuse larger decoded images (default 178956970)", A_MAX_PIXELS},
    {{"--dpi"}, "N", "PDF rasterisation resolution (default 200)", A_DPI},
    {{"--page"}, "N", "page of a multi-page TIFF or PDF (default 1)", A_PAGE},
    {{"-h", "--help"}, NULL, "this help", A_HELP},
};

struct ask_opts {
    struct gen_opts g;
    bool dry_run;
    int page;
    const char *images[MAX_IMAGES];
    int n_images;
    seer_video_input vin;         /* sampling flags shared by the videos */
    const char *videos[MAX_IMAGES]; /* inputs that are videos, moved out of images[] after parsing */
    int n_videos;
};

/* One of ask's own options (opt, its value v) or, opt NULL, an input v, for gen_parse_args. */
static int own_opt(const struct cli_opt *opt, const char *v, void *user)
{
    struct ask_opts *o = user;
    if (!opt) {
        if (o->n_images == MAX_IMAGES)
            return fprintf(stderr, "seer ask: at most %d images\n", MAX_IMAGES), CLI_USAGE;
        o->images[o->n_images++] = v;
        return GEN_NEXT;
    }
    const char *nm = opt->name[0];
    long long x;
    switch (opt->key) {
    case A_PROMPT:
    case A_MMPROJ:
        *(opt->key == A_PROMPT ? &o->g.prompt : &o->g.mp.mmproj) = v;
        break;
    case A_RAW: o->g.raw = true; break;
    case A_JSON: /* with each token's logprob */
        o->g.json = true, o->g.gp.logprobs = 1;
        break;
    case A_DRY_RUN: o->dry_run = true; break;
    case A_MIN_TOKENS:
    case A_MAX_TOKENS:
        if (cli_count_opt("ask", nm, v, 1, (long long)1 << 30, &x))
            return CLI_USAGE;
        *(opt->key == A_MIN_TOKENS ? &o->g.mp.image_min_tokens : &o->g.mp.image_max_tokens) = x;
        break;
    case A_MAX_PIXELS:
        if (cli_count_opt("ask", nm, v, 1, (long long)1 << 40, &x))
            return CLI_USAGE;
        o->g.mp.max_image_pixels = x;
        break;
    case A_DPI:
        if (cli_count_opt("ask", nm, v, 10, 2400, &x))
            return CLI_USAGE;
        o->g.mp.pdf_dpi = (double)x;
        break;
    case A_PAGE:
        if (cli_count_opt("ask", nm, v, 1, 1 << 20, &x))
            return CLI_USAGE;
        o->page = (int)x - 1;
        break;
    case A_HELP:
        printf("usage: seer ask -m MODEL [--mmproj FILE] -p QUESTION [options] IMAGE|VIDEO...\n"
               "  IMAGE                     JPEG, PNG, WebP, BMP, GIF, TIFF or PDF (format from the bytes); '-' = stdin\n"
               "  VIDEO                     any video file FFmpeg reads; images come first, then videos (flags below)\n");
        cli_opt_help(stdout, ask_opts_table, sizeof ask_opts_table / sizeof *ask_opts_table);
        cli_video_help(stdout);
        printf("%s", gen_help);
        return CLI_OK;
    }
    return GEN_NEXT;
}

/* GEN_NEXT when the command line is complete, else the status to exit with (CLI_OK after --help,
   CLI_USAGE after a line naming the problem). */
static int parse(int argc, char **argv, struct ask_opts *o)
{
    gen_opts_init(&o->g);
    o->g.video = &o->vin;
    int status = gen_parse_args("ask", ask_opts_table, sizeof ask_opts_table / sizeof *ask_opts_table, true, argc,
                                argv, &o->g, own_opt, o);
    if (status != GEN_NEXT)
        return status;
    if (!o->g.model)
        return cli_no_model("ask");
    if (!o->g.prompt || o->n_images == 0) {
        fprintf(stderr, "seer ask: need -m MODEL, -p QUESTION and at least one IMAGE (see seer ask --help)\n");
        return CLI_USAGE;
    }
    int stdin_images = 0;
    for (int k = 0; k < o->n_images; k++)
        stdin_images += !strcmp(o->images[k], "-");
    if (stdin_images > 1) {
        fprintf(stderr, "seer ask: '-' (stdin) can be given once\n");
        return CLI_USAGE;
    }
    int n = 0;
    for (int k = 0; k < o->n_images; k++) {
        if (seer_is_video(o->images[k]))
            o->videos[o->n_videos++] = o->images[k];
        else
            o->images[n++] = o->images[k];
    }
    o->n_images = n;
    if (o->n_videos && o->g.raw) {
        fprintf(stderr, "seer ask: --raw takes images only; ask about videos without it\n");
        return CLI_USAGE;
    }
    return GEN_NEXT;
}

static json_t *image_json(const char *path, const seer_image_info *in)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:I}", "path", path, "width", in->width, "height", in->height,
                     "resized_width", in->resized_width, "resized_height", in->resized_height, "tokens",
                     (json_int_t)in->tokens);
}

static int print_object(json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(o);
    if (!s)
        return fprintf(stderr, "seer ask: could not build the JSON output\n"), CLI_FAIL;
    printf("%s\n", s);
    free(s);
    return CLI_OK;
}

/* The inputs as the library takes them: images measured (stdin, readable once, decoded here into
   *piped and given as pixels), videos opened once for measuring and feeding (*opened[k], freed by
   the caller). */
static int load_inputs(const seer_model *m, const struct ask_opts *o, seer_image_input *in, seer_image_info *info,
                       uint8_t **piped, seer_video_input *vin)
{
    int rc = SEER_OK;
    for (int k = 0; k < o->n_images && !rc; k++) {
        in[k] = (seer_image_input){.path = o->images[k], .page = o->page};
        if (!strcmp(o->images[k], "-")) {
            int32_t w, h;
            if ((rc = seer_image_decode(m, &in[k], piped, &w, &h)))
                break;
            in[k] = (seer_image_input){.rgb = *piped, .width = w, .height = h};
        }
        /* seer_image_measure names files, not pixels */
        if ((rc = seer_image_measure(m, &in[k], &info[k])) && !in[k].path)
            rc = cli_err(rc, "-: %s", seer_last_error());
    }
    for (int k = 0; k < o->n_videos && !rc; k++) {
        vin[k] = o->vin;
        rc = seer_video_open(m, o->videos[k], &vin[k].video);
    }
    return rc;
}

/* What the prompt costs, from a vocab_only model: each image's size and tokens, each video's plan,
   and the prompt's tokens as the real run would feed them. */
static int dry_run(const struct ask_opts *o)
{
    seer_image_input in[MAX_IMAGES];
    seer_image_info info[MAX_IMAGES];
    seer_video_input vin[MAX_IMAGES] = {{0}};
    seer_video_info vinfo[MAX_IMAGES];
    seer_model_params mp = o->g.mp;
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    uint8_t *piped = NULL;
    int64_t n_tokens = 0;
    mp.vocab_only = 1;
    int rc = seer_model_load(o->g.model, &mp, &m);
    if (!rc)
        rc = seer_context_create(m, &o->g.cp, &ctx);
    if (!rc)
        rc = load_inputs(m, o, in, info, &piped, vin);
    if (!rc && o->g.raw)
        rc = seer_text_measure(ctx, o->g.prompt, in, (size_t)o->n_images, &n_tokens);
    else if (!rc && !(o->g.system && (rc = seer_chat_add(ctx, "system", o->g.system))) &&
             !(rc = seer_chat_add_media(ctx, "user", in, (size_t)o->n_images, vin, (size_t)o->n_videos, o->g.prompt)))
        rc = seer_chat_measure(ctx, &o->g.gp, &n_tokens);
    for (int k = 0; k < o->n_videos && !rc; k++)
        rc = seer_video_measure(m, &vin[k], &vinfo[k]);
    int status = CLI_OK;
    if (rc)
        status = cli_fail(rc);
    else if (!o->g.json) {
        for (int k = 0; k < o->n_images; k++)
            printf("%s: %dx%d -> %dx%d, %lld tokens\n", o->images[k], info[k].width, info[k].height,
                   info[k].resized_width, info[k].resized_height, (long long)info[k].tokens);
        for (int k = 0; k < o->n_videos; k++)
            printf("%s: %lld frames sampled at %dx%d, %lld tokens\n", o->videos[k], (long long)vinfo[k].sampled_frames,
                   vinfo[k].resized_width, vinfo[k].resized_height, (long long)vinfo[k].tokens);
        printf("prompt: %lld tokens\n", (long long)n_tokens);
    } else {
        json_t *arr = json_array(), *vids = json_array();
        for (int k = 0; k < o->n_images; k++)
            json_array_append_new(arr, image_json(o->images[k], &info[k]));
        for (int k = 0; k < o->n_videos; k++) {
            json_t *j = cli_video_info_json(&vinfo[k], -1);
            json_object_set_new(j, "path", json_string(o->videos[k]));
            json_object_del(j, "prompt_tokens");
            json_array_append_new(vids, j);
        }
        status = print_object(json_pack("{s:o, s:o, s:I}", "images", arr, "videos", vids, "prompt_tokens",
                                        (json_int_t)n_tokens));
    }
    for (int k = 0; k < o->n_videos; k++)
        seer_video_free(vin[k].video);
    seer_free(piped);
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}

static int print_result(const struct ask_opts *o, const seer_model *m, const seer_result *r,
                        const seer_image_info *info)
{
    json_t *toks = json_array(), *lps = json_array(), *imgs = json_array();
    for (size_t i = 0; i < r->n_tokens; i++) {
        json_array_append_new(toks, json_integer(r->tokens[i]));
        json_array_append_new(lps, r->logprobs ? json_real(r->logprobs[i]) : json_null());
    }
    for (int k = 0; k < o->n_images; k++)
        json_array_append_new(imgs, image_json(o->images[k], &info[k]));
    double pre = r->prefill_seconds, dec = r->decode_seconds;
    json_t *obj = json_pack(
        "{s:s%, s:o, s:o, s:I, s:I, s:o, s:{s:f, s:f, s:f, s:f, s:f}, s:s}", "text", r->text, r->text_len, "tokens",
        toks, "logprobs", lps, "prompt_tokens", (json_int_t)r->prompt_tokens, "generated_tokens", (json_int_t)r->n_tokens, "images", imgs,
        "timings", "vision_seconds", r->vision_seconds, "prefill_seconds", pre, "decode_seconds", dec,
        "prefill_tokens_per_second", pre > 0 ? (double)r->prompt_tokens / pre : 0.0, "decode_tokens_per_second",
        dec > 0 ? (double)r->n_tokens / dec : 0.0, "stop", gen_stop_name(r->stop));
    gen_json_fields(obj, &o->g, m, r); /* thinking, model, device, seed */
    return print_object(obj);
}

int cli_ask(int argc, char **argv)
{
    struct ask_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status != GEN_NEXT)
        return status;
    if (o.dry_run)
        return dry_run(&o);
    seer_image_input in[MAX_IMAGES];
    seer_image_info info[MAX_IMAGES];
    seer_video_input vin[MAX_IMAGES] = {{0}};
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_result r = {0};
    uint8_t *piped = NULL;
    int rc;
    status = CLI_FAIL;
    if (!o.g.json)
        o.g.gp.on_text = gen_stream_stdout;
    else
        o.g.gp.show_thinking = 0; /* --json has the reasoning apart, as "thinking" */
    if ((rc = seer_model_load(o.g.model, &o.g.mp, &m)) || (rc = seer_context_create(m, &o.g.cp, &ctx)))
        goto fail;
    gen_start(&o.g); /* Ctrl-C stops the answer and keeps it; prompt progress */
    if ((rc = load_inputs(m, &o, in, info, &piped, vin)))
        goto fail;
    if (o.g.raw)
        rc = seer_generate_text_images(ctx, o.g.prompt, in, (size_t)o.n_images, &o.g.gp, &r);
    else if (!(o.g.system && (rc = seer_chat_add(ctx, "system", o.g.system))) &&
             !(rc = seer_chat_add_media(ctx, "user", in, (size_t)o.n_images, vin, (size_t)o.n_videos, o.g.prompt)))
        rc = seer_chat_generate(ctx, &o.g.gp, &r);
    if (rc)
        goto fail;
    if (o.g.json)
        status = print_result(&o, m, &r, info);
    else {
        printf("\n");
        status = CLI_OK;
    }
    int fin = gen_finish(&o.g, &r); /* timings, warnings; 130 after Ctrl-C */
    if (status == CLI_OK)
        status = fin;
    goto done;
fail:
    if (!o.g.json)
        fflush(stdout);
    status = cli_fail(rc);
done:
    for (int k = 0; k < o.n_videos; k++)
        seer_video_free(vin[k].video);
    seer_free(piped);
    seer_result_clear(&r);
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}
