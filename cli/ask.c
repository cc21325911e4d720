/* ask.c — `seer ask`: a question about one or more images or videos, the answer streamed to stdout
   (or one JSON object with --json). `--dry-run` loads no weights: it decodes the images, applies the
   model's resize rule (spec §5.2), plans the videos from their containers (spec §5.3) and prints what
   the prompt would cost. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/vision.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/gen.h"
#include "core/error.h"
#include "core/io.h"
#include "lm/chat.h"
#include "lm/tokenizer.h"
#include "seer.h"

#define MAX_IMAGES 256

static const char ask_help[] =
    "usage: seer ask -m MODEL [--mmproj FILE] -p QUESTION [options] IMAGE|VIDEO...\n"
    "  IMAGE               JPEG, PNG, WebP, BMP, GIF, TIFF or PDF (format from the bytes); '-' = stdin\n"
    "  VIDEO               any video file FFmpeg reads; images come first, then videos (flags below)\n"
    "  -p QUESTION         the question; the images come first in the user message\n"
    "  --raw               feed -p as is: each <|vision_start|><|image_pad|><|vision_end|> takes the next image\n"
    "  --json              print one JSON object (text, tokens, images, timings, stop)\n"
    "  --dry-run           load no weights: print each image's size and tokens and the prompt's token count\n"
    "  --mmproj FILE       the vision projector of a GGUF text model (default: the one mmproj*.gguf beside it)\n"
    "  --image-min-tokens N, --image-max-tokens N   per-image token window (default: the model's, 64..16384)\n"
    "  --max-image-pixels N  refuse larger decoded images (default 178956970)\n"
    "  --dpi N             PDF rasterisation resolution (default 200)\n"
    "  --page N            page of a multi-page TIFF or PDF (default 1)\n";

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

/* A file FFmpeg demuxes as video rather than an image: the magic bytes say so, or (MPEG-TS, raw
   streams) no image reader takes it but the demuxer does. */
static bool is_video(const char *path)
{
    media_doc *d = NULL;
    if (!strcmp(path, "-"))
        return false;
    if (media_open(path, NULL, &d) == SEER_OK) {
        const bool v = media_kind_of(d) == MEDIA_VIDEO;
        media_close(d);
        return v;
    }
    video_file *v = NULL;
    const bool ok = video_open(path, &v) == SEER_OK;
    video_close(v);
    return ok;
}

static int count_opt(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "seer ask: %s needs a whole number in [%lld, %lld], got '%s'\n", opt, lo, hi, v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* 0 ok, CLI_USAGE on a bad command line (reported), -1 for --help (printed). */
static int parse(int argc, char **argv, struct ask_opts *o)
{
    size_t n_stop = 0;
    gen_opts_init(&o->g);
    for (int i = 1; i < argc; i++) {
        int r = gen_parse_opt(argc, argv, &i, &o->g, &n_stop);
        if (!r)
            r = cli_video_parse_opt(argc, argv, &i, &o->vin);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if ((!strcmp(a, "-p") || !strcmp(a, "--prompt")) && v)
            o->g.prompt = v, i++;
        else if (!strcmp(a, "--mmproj") && v)
            o->g.mp.mmproj = v, i++;
        else if (!strcmp(a, "--raw"))
            o->g.raw = true;
        else if (!strcmp(a, "--json"))
            o->g.json = true;
        else if (!strcmp(a, "--dry-run"))
            o->dry_run = true;
        else if (!strcmp(a, "--image-min-tokens") || !strcmp(a, "--image-max-tokens")) {
            if (count_opt(a, v, 1, (long long)1 << 30, &x))
                return CLI_USAGE;
            *(!strcmp(a, "--image-min-tokens") ? &o->g.mp.image_min_tokens : &o->g.mp.image_max_tokens) = x, i++;
        } else if (!strcmp(a, "--max-image-pixels")) {
            if (count_opt(a, v, 1, (long long)1 << 40, &x))
                return CLI_USAGE;
            o->g.mp.max_image_pixels = x, i++;
        } else if (!strcmp(a, "--dpi")) {
            if (count_opt(a, v, 10, 2400, &x))
                return CLI_USAGE;
            o->g.mp.pdf_dpi = (double)x, i++;
        } else if (!strcmp(a, "--page")) {
            if (count_opt(a, v, 1, 1 << 20, &x))
                return CLI_USAGE;
            o->page = (int)x - 1, i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s%s%s", ask_help, cli_video_help, gen_help);
            return -1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "seer ask: unknown or incomplete option '%s' (see seer ask --help)\n", a);
            return CLI_USAGE;
        } else if (o->n_images == MAX_IMAGES) {
            fprintf(stderr, "seer ask: at most %d images\n", MAX_IMAGES);
            return CLI_USAGE;
        } else
            o->images[o->n_images++] = a;
    }
    o->g.gp.n_stop = n_stop;
    if (!o->g.model || !o->g.prompt || o->n_images == 0) {
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
        if (is_video(o->images[k]))
            o->videos[o->n_videos++] = o->images[k];
        else
            o->images[n++] = o->images[k];
    }
    o->n_images = n;
    if (o->n_videos && o->g.raw) {
        fprintf(stderr, "seer ask: --raw takes images only; ask about videos without it\n");
        return CLI_USAGE;
    }
    return 0;
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

/* The prompt's token count as the model would see it, from the tokenizer alone. */
static int dry_prompt_tokens(const struct ask_opts *o, const seer_image_info *info,
                             const struct cli_video_cost *vc, int64_t *n_tokens)
{
    struct tokenizer *tok = NULL;
    char *text = NULL;
    tok_ids ids = {0};
    int rc = cli_load_tokenizer(o->g.model, &tok);
    if (!rc && !o->g.raw) {
        chat_part parts[2 * MAX_IMAGES + 1];
        for (int k = 0; k < o->n_images; k++)
            parts[k] = (chat_part){.type = CHAT_PART_IMAGE};
        for (int k = 0; k < o->n_videos; k++)
            parts[o->n_images + k] = (chat_part){.type = CHAT_PART_VIDEO};
        parts[o->n_images + o->n_videos] = (chat_part){.type = CHAT_PART_TEXT, .text = o->g.prompt};
        chat_message msgs[2];
        size_t n = 0;
        if (o->g.system)
            msgs[n++] = (chat_message){.role = "system", .content = o->g.system};
        msgs[n++] = (chat_message){.role = "user", .parts = parts, .n_parts = (size_t)(o->n_images + o->n_videos) + 1};
        chat_params p = chat_params_default();
        p.enable_thinking = o->g.gp.think != 0;
        rc = chat_render(msgs, n, &p, &text, NULL);
    }
    const char *prompt = o->g.raw ? o->g.prompt : text;
    if (!rc)
        rc = tok_encode(tok, prompt, strlen(prompt), true, &ids);
    if (!rc) {
        int32_t pad = tok_token_to_id(tok, "<|image_pad|>", strlen("<|image_pad|>"));
        int64_t n = (int64_t)ids.n;
        int pads = 0;
        for (size_t i = 0; i < ids.n; i++)
            pads += ids.ids[i] == pad;
        if (pads != o->n_images)
            rc = seer_err(SEER_EINVAL, "the prompt has %d image placeholders but %d images were given", pads,
                          o->n_images);
        for (int k = 0; k < o->n_images; k++)
            n += info[k].tokens - 1; /* each placeholder becomes the image's tokens (spec §5.4) */
        for (int k = 0; k < o->n_videos && !rc; k++) {
            int64_t extra = 0; /* each video's compound becomes its stamped pair runs */
            if (!(rc = cli_video_prompt_tokens(tok, &vc[k].plan, &extra)))
                n += extra - 3;
        }
        *n_tokens = n;
    }
    tok_ids_free(&ids);
    free(text);
    tok_free(tok);
    return rc;
}

/* A measuring error names the image: the resize rule (vision/preprocess.c) only knows sizes. */
static int err_in_file(int rc, const char *path)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", seer_last_error());
    return seer_err(rc, "%s: %s", path, msg);
}

/* What an image file may cost to decode, from the command line (the model's rule, api/vision.c). */
static struct media_limits ask_limits(const struct ask_opts *o)
{
    struct media_limits lim = media_limits_default();
    if (o->g.mp.max_image_pixels > 0)
        lim.max_pixels = o->g.mp.max_image_pixels;
    if (o->g.mp.pdf_dpi > 0)
        lim.dpi = o->g.mp.pdf_dpi;
    return lim;
}

static int dry_run(const struct ask_opts *o)
{
    seer_image_info info[MAX_IMAGES];
    const struct media_limits lim = ask_limits(o);
    int64_t min_px, max_px, n_tokens = 0;
    const char *hf_dir = io_path_kind(o->g.model) == IO_DIR ? o->g.model : NULL;
    int rc = api_pixel_window(hf_dir, o->g.mp.image_min_tokens, o->g.mp.image_max_tokens, &min_px, &max_px);
    for (int k = 0; k < o->n_images && !rc; k++) {
        struct image_rgb8 im;
        seer_image_input in = {.path = o->images[k], .page = o->page};
        if (!(rc = api_image_decode(&lim, &in, &im))) {
            if ((rc = api_image_measure_rgb(min_px, max_px, im.width, im.height, &info[k])))
                rc = err_in_file(rc, o->images[k]);
            image_rgb8_free(&im);
        }
    }
    /* videos: the container's demux pass and the plan (spec §5.3), no decoding */
    struct cli_video_cost *vc = o->n_videos ? calloc((size_t)o->n_videos, sizeof *vc) : NULL;
    if (!rc && o->n_videos && !vc)
        rc = seer_err(SEER_ENOMEM, "no memory for %d video plans", o->n_videos);
    for (int k = 0; k < o->n_videos && !rc; k++)
        rc = cli_video_cost(o->g.model, o->videos[k], &o->vin, NULL, NULL, false, &vc[k]);
    if (!rc)
        rc = dry_prompt_tokens(o, info, vc, &n_tokens);
    int status = CLI_OK;
    if (rc)
        status = cli_fail(rc);
    else if (!o->g.json) {
        for (int k = 0; k < o->n_images; k++)
            printf("%s: %dx%d -> %dx%d, %lld tokens\n", o->images[k], info[k].width, info[k].height,
                   info[k].resized_width, info[k].resized_height, (long long)info[k].tokens);
        for (int k = 0; k < o->n_videos; k++)
            printf("%s: %lld frames sampled at %dx%d, %lld tokens\n", o->videos[k], (long long)vc[k].plan.n_frames,
                   vc[k].plan.width, vc[k].plan.height, (long long)vc[k].plan.tokens);
        printf("prompt: %lld tokens\n", (long long)n_tokens);
    } else {
        json_t *arr = json_array(), *vids = json_array();
        for (int k = 0; k < o->n_images; k++)
            json_array_append_new(arr, image_json(o->images[k], &info[k]));
        for (int k = 0; k < o->n_videos; k++) {
            json_t *j = cli_video_cost_json(&vc[k]);
            json_object_set_new(j, "path", json_string(o->videos[k]));
            json_object_del(j, "prompt_tokens");
            json_array_append_new(vids, j);
        }
        status = print_object(json_pack("{s:o, s:o, s:I}", "images", arr, "videos", vids, "prompt_tokens",
                                        (json_int_t)n_tokens));
    }
    for (int k = 0; k < o->n_videos && vc; k++)
        cli_video_cost_clear(&vc[k]);
    free(vc);
    return status;
}

static int print_result(const struct ask_opts *o, const seer_model *m, const seer_result *r,
                        const seer_image_info *info)
{
    json_t *toks = json_array(), *imgs = json_array();
    for (size_t i = 0; i < r->n_tokens; i++)
        json_array_append_new(toks, json_integer(r->tokens[i]));
    for (int k = 0; k < o->n_images; k++)
        json_array_append_new(imgs, image_json(o->images[k], &info[k]));
    double pre = r->prefill_seconds, dec = r->decode_seconds;
    json_t *obj = json_pack(
        "{s:s%, s:o, s:I, s:I, s:o, s:{s:f, s:f, s:f, s:f, s:f}, s:s}", "text", r->text, r->text_len, "tokens", toks,
        "prompt_tokens", (json_int_t)r->prompt_tokens, "generated_tokens", (json_int_t)r->n_tokens, "images", imgs,
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
    if (status)
        return status < 0 ? CLI_OK : status;
    if (o.dry_run)
        return dry_run(&o);
    seer_image_input in[MAX_IMAGES];
    seer_image_info info[MAX_IMAGES];
    for (int k = 0; k < o.n_images; k++)
        in[k] = (seer_image_input){.path = o.images[k], .page = o.page};
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_result r = {0};
    struct image_rgb8 piped = {0};
    const struct media_limits lim = ask_limits(&o);
    int rc;
    status = CLI_FAIL;
    if (!o.g.json)
        o.g.gp.on_text = gen_stream_stdout;
    else
        o.g.gp.show_thinking = 0; /* --json has the reasoning apart, as "thinking" */
    if ((rc = seer_model_load(o.g.model, &o.g.mp, &m)) || (rc = seer_context_create(m, &o.g.cp, &ctx)))
        goto fail;
    gen_start(&o.g); /* Ctrl-C stops the answer and keeps it; prompt progress */
    /* stdin can be read once: decoded here, its pixels are measured and fed like any image */
    for (int k = 0; k < o.n_images; k++) {
        if (!strcmp(o.images[k], "-")) {
            if ((rc = api_image_decode(&lim, &in[k], &piped)))
                goto fail;
            in[k] = (seer_image_input){.rgb = piped.px, .width = piped.width, .height = piped.height};
        }
        if ((rc = seer_image_measure(m, &in[k], &info[k]))) {
            if (!in[k].path) /* seer_image_measure names files, not pixels */
                rc = err_in_file(rc, "-");
            goto fail;
        }
    }
    if (o.g.raw)
        rc = seer_generate_text_images(ctx, o.g.prompt, in, (size_t)o.n_images, &o.g.gp, &r);
    else {
        seer_video_input vin[MAX_IMAGES];
        for (int k = 0; k < o.n_videos; k++)
            vin[k] = o.vin, vin[k].path = o.videos[k];
        if (!(o.g.system && (rc = seer_chat_add(ctx, "system", o.g.system))) &&
            !(rc = seer_chat_add_media(ctx, "user", in, (size_t)o.n_images, vin, (size_t)o.n_videos, o.g.prompt)))
            rc = seer_chat_generate(ctx, &o.g.gp, &r);
    }
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
    image_rgb8_free(&piped);
    seer_result_clear(&r);
    seer_context_free(ctx);
    seer_model_free(m);
    return status;
}
