/* describe.c — `seer describe`: what happens in one or more videos, streamed to stdout with the
   times the model read from the prompt's `<t.t seconds>` stamps (spec §5.3, §5.4). Long videos are
   cut into --chunk pieces, each described with its absolute times, and written as subtitles
   (--srt, --vtt) or chapters (--chapters-json). --dry-run loads no weights: it reads the container
   and prints the plan and what it costs. Several videos share one loaded model; a file that cannot
   be read is reported and the others go on (exit status 3).
   Divisions: sampling flags · the dry-run cost · subtitle files · the command. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/video.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/gen.h"
#include "core/error.h"
#include "core/gguf.h"
#include "core/io.h"
#include "core/util.h"
#include "lm/chat.h"
#include "lm/config.h"
#include "lm/tokenizer.h"

#define MAX_VIDEOS 256
/* Exit status when some videos were described and others could not be read (as `seer ocr`). */
#define CLI_PARTIAL 3

static const char default_prompt[] =
    "Describe what happens in this video, in order. Give the time in seconds of each event.";

/* ---- sampling flags --------------------------------------------------------------------------- */

const char cli_video_help[] =
    "  --fps F             frames sampled per second of video (default: the model's, 2)\n"
    "  --min-frames N, --max-frames N   sampled frames per video (default: the model's, 4..768)\n"
    "  --max-video-tokens N  fit each video in N tokens: lower resolution first, then fewer frames\n"
    "  --start T, --end T  use only this part (seconds, MM:SS or HH:MM:SS); times stay the file's\n";

int cli_video_parse_opt(int argc, char **argv, int *i, seer_video_input *in)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    char *end;
    if (!strcmp(a, "--start") || !strcmp(a, "--end")) {
        double t = video_parse_time(v);
        if (t < 0)
            return fprintf(stderr, "seer: %s needs a time (seconds, MM:SS or HH:MM:SS), got '%s'\n", a, v ? v : ""), -1;
        *(a[2] == 's' ? &in->start_seconds : &in->end_seconds) = t;
    } else if (!strcmp(a, "--fps")) {
        double f = v ? strtod(v, &end) : 0;
        if (!v || end == v || *end || !(f > 0 && f <= 1000))
            return fprintf(stderr, "seer: --fps needs a rate in (0, 1000], got '%s'\n", v ? v : ""), -1;
        in->fps = f;
    } else if (!strcmp(a, "--min-frames") || !strcmp(a, "--max-frames") || !strcmp(a, "--max-video-tokens")) {
        const long long hi = a[2] == 'm' && a[6] == 'v' ? (long long)1 << 40 : VIDEO_MAX_FRAMES_PLANNED;
        long long x = v ? strtoll(v, &end, 10) : 0;
        if (!v || end == v || *end || x < 1 || x > hi)
            return fprintf(stderr, "seer: %s needs a whole number in [1, %lld], got '%s'\n", a, hi, v ? v : ""), -1;
        if (a[6] == 'v')
            in->max_tokens = x;
        else
            *(a[3] == 'i' ? &in->min_frames : &in->max_frames) = x;
    } else
        return 0;
    ++*i;
    return 1;
}

/* ---- the dry-run cost ------------------------------------------------------------------------- */

/* The text model's hidden size from its config alone (config.json or the GGUF's metadata). */
static int hidden_size(const char *model, int64_t *h)
{
    struct qwen35_config cfg;
    char path[4096];
    int rc;
    if (io_path_kind(model) == IO_DIR) {
        snprintf(path, sizeof path, "%s/config.json", model);
        rc = qwen35_config_from_hf_file(path, &cfg);
    } else {
        gguf *g = NULL;
        if (!(rc = gguf_open(model, &g)))
            rc = qwen35_config_from_gguf(g, &cfg);
        gguf_free(g);
    }
    if (!rc)
        *h = cfg.n_embd;
    return rc;
}

int cli_video_prompt_tokens(struct tokenizer *tok, const struct video_plan *p, int64_t *n)
{
    /* the compound <|vision_start|><|video_pad|><|vision_end|> becomes, per pair, the stamp's
       tokens, <|vision_start|>, the pads and <|vision_end|> */
    const int64_t per_pair = (p->height / VIS_FACTOR) * (p->width / VIS_FACTOR);
    int64_t total = 0;
    int rc = SEER_OK;
    for (int64_t g = 0; g < p->n_groups && !rc; g++) {
        char ts[64];
        tok_ids t = {0};
        video_timestamp_text(p->group_seconds[g], ts, sizeof ts);
        if (!(rc = tok_encode(tok, ts, strlen(ts), false, &t)))
            total += (int64_t)t.n + 2 + per_pair;
        tok_ids_free(&t);
    }
    if (!rc)
        *n = total;
    return rc;
}

/* Tokens of the rendered prompt with the video compound expanded as api/video.c does (spec §5.4). */
static int prompt_tokens(const char *model, const struct video_plan *p, const char *system, const char *prompt,
                         bool think, int64_t *n_tokens)
{
    struct tokenizer *tok = NULL;
    char *text = NULL;
    tok_ids ids = {0};
    int rc = cli_load_tokenizer(model, &tok);
    if (!rc) {
        chat_part parts[2] = {{.type = CHAT_PART_VIDEO}, {.type = CHAT_PART_TEXT, .text = prompt}};
        chat_message msgs[2];
        size_t n = 0;
        if (system)
            msgs[n++] = (chat_message){.role = "system", .content = system};
        msgs[n++] = (chat_message){.role = "user", .parts = parts, .n_parts = 2};
        chat_params cp = chat_params_default();
        cp.enable_thinking = think;
        rc = chat_render(msgs, n, &cp, &text, NULL);
    }
    if (!rc)
        rc = tok_encode(tok, text, strlen(text), true, &ids);
    int64_t extra = 0;
    if (!rc && !(rc = cli_video_prompt_tokens(tok, p, &extra)))
        *n_tokens = (int64_t)ids.n - 3 + extra;
    tok_ids_free(&ids);
    free(text);
    tok_free(tok);
    return rc;
}

int cli_video_cost(const char *model, const char *path, const seer_video_input *in, const char *system,
                   const char *prompt, bool think, struct cli_video_cost *out)
{
    struct cli_video_cost c = {.prompt_tokens = -1};
    struct video_settings defaults = video_settings_default();
    int64_t H = 0;
    int rc = model && io_path_kind(model) == IO_DIR ? video_settings_load(model, &defaults) : SEER_OK;
    const struct video_settings s = api_video_settings(&defaults, in);
    if (!rc)
        rc = video_open(path, &c.v);
    if (!rc)
        rc = video_plan_make(video_file_info(c.v), path, &s, &c.plan);
    if (!rc && model && !(rc = hidden_size(model, &H)))
        rc = prompt_tokens(model, &c.plan, system, prompt, think, &c.prompt_tokens);
    if (rc) {
        cli_video_cost_clear(&c);
        return rc;
    }
    const int64_t rows = (c.plan.height / VIS_PATCH) * (c.plan.width / VIS_PATCH);
    c.memory_bytes = c.plan.tokens * H * (int64_t)sizeof(float) + rows * VIS_ROW_DIM * (int64_t)sizeof(float) +
                     2 * (int64_t)c.plan.width * c.plan.height * 3;
    *out = c;
    return SEER_OK;
}

void cli_video_cost_clear(struct cli_video_cost *c)
{
    video_plan_clear(&c->plan);
    video_close(c->v);
    c->v = NULL;
}

json_t *cli_video_cost_json(const struct cli_video_cost *c)
{
    const struct video_info *in = video_file_info(c->v);
    const struct video_plan *p = &c->plan;
    const int64_t per_pair = (p->height / VIS_FACTOR) * (p->width / VIS_FACTOR);
    json_t *frames = json_array(), *groups = json_array();
    for (int64_t k = 0; k < p->n_frames; k++)
        json_array_append_new(frames, json_pack("{s:I, s:f}", "index", (json_int_t)p->index[k], "seconds",
                                                p->seconds[k]));
    for (int64_t g = 0; g < p->n_groups; g++)
        json_array_append_new(groups, json_pack("{s:f, s:I}", "seconds", p->group_seconds[g], "tokens",
                                                (json_int_t)per_pair));
    return json_pack("{s:f, s:f, s:I, s:o, s:i, s:i, s:o, s:I, s:o, s:I}", "duration_seconds", in->duration,
                     "fps_source", in->fps, "frames_source", (json_int_t)in->n_frames, "frames", frames,
                     "resized_width", p->width, "resized_height", p->height, "groups", groups, "video_tokens",
                     (json_int_t)p->tokens, "prompt_tokens",
                     c->prompt_tokens >= 0 ? json_integer(c->prompt_tokens) : json_null(), "memory_bytes",
                     (json_int_t)c->memory_bytes);
}

void cli_video_cost_print(const char *path, const struct cli_video_cost *c)
{
    const struct video_info *in = video_file_info(c->v);
    const struct video_plan *p = &c->plan;
    printf("%s: %.2f s, %dx%d%s, %lld frames at %.3f fps (%s), %s\n", path, in->duration, in->width, in->height,
           in->rotation ? " (rotated)" : "", (long long)in->n_frames, in->fps, in->fps_source, in->codec);
    printf("  %lld frames sampled (%lld pairs) at %dx%d: %lld video tokens\n", (long long)p->n_frames,
           (long long)p->n_groups, p->width, p->height, (long long)p->tokens);
    if (p->note[0])
        printf("  %s\n", p->note);
    for (int64_t g = 0; g < p->n_groups; g++) {
        char ts[64];
        video_timestamp_text(p->group_seconds[g], ts, sizeof ts);
        printf("  %-16s frames %lld, %lld\n", ts, (long long)p->index[2 * g],
               (long long)p->index[MIN(2 * g + 1, p->n_frames - 1)]);
    }
    if (c->prompt_tokens >= 0)
        printf("  prompt: %lld tokens; memory for the video: %.1f MiB\n", (long long)c->prompt_tokens,
               (double)c->memory_bytes / (1 << 20));
}

/* ---- subtitle files --------------------------------------------------------------------------- */

struct chunk {
    double start, end;
    char *text;
    size_t len; /* bytes of text: it may hold a U+0000 */
};

static void stamp(FILE *f, double t, char sep)
{
    long long ms = llround(t * 1000);
    fprintf(f, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, sep, ms % 1000);
}

/* Writes `path` through a temporary file renamed over it, so a reader never sees half a file. */
static int write_atomic(const char *path, int kind, const struct chunk *ch, size_t n)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return seer_err(SEER_EINVAL, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return seer_err(SEER_EIO, "%s: %s", tmp, strerror(errno));
    if (kind == 'j') {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, json_pack("{s:f, s:f, s:s%}", "start", ch[i].start, "end", ch[i].end, "text",
                                                 ch[i].text ? ch[i].text : "", ch[i].text ? ch[i].len : 0));
        json_dumpf(arr, f, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        fputc('\n', f);
        json_decref(arr);
    } else {
        if (kind == 'v')
            fputs("WEBVTT\n\n", f);
        for (size_t i = 0; i < n; i++) {
            if (kind == 's')
                fprintf(f, "%zu\n", i + 1);
            stamp(f, ch[i].start, kind == 's' ? ',' : '.');
            fputs(" --> ", f);
            stamp(f, ch[i].end, kind == 's' ? ',' : '.');
            /* a blank line ends a cue in both formats: the text's own blank lines are dropped */
            fputc('\n', f);
            /* a U+0000 is dropped too: players end a cue's text there */
            const char *t = ch[i].text ? ch[i].text : "";
            for (size_t k = 0, n_t = ch[i].text ? ch[i].len : 0; k < n_t; k++) {
                size_t next = k + 1;
                while (next < n_t && !t[next])
                    next++;
                if (t[k] && (t[k] != '\n' || (next < n_t && t[next] != '\n')))
                    fputc(t[k], f);
            }
            fputs("\n\n", f);
        }
    }
    const bool bad = ferror(f) | (fflush(f) != 0) | (fsync(fileno(f)) != 0);
    if ((fclose(f) != 0) | bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return seer_err(SEER_EIO, "%s: cannot write it: %s", path, strerror(e));
    }
    return SEER_OK;
}

/* ---- the command ------------------------------------------------------------------------------ */

static const char describe_help[] =
    "usage: seer describe -m MODEL [options] VIDEO...\n"
    "  VIDEO               any file FFmpeg reads (MP4, MKV, WebM, MOV, AVI, MPEG-TS, GIF, ...)\n"
    "  -p PROMPT           what to ask (default: describe what happens, in order, with times)\n"
    "  --json              one JSON object per video (text, chunks, plan, timings)\n"
    "  --dry-run           load no weights: the sampled frames, times, size, tokens and memory\n"
    "  --chunk DUR         describe each DUR-long piece (e.g. 60s, 90, 1:30) with absolute times\n"
    "  --srt FILE, --vtt FILE, --chapters-json FILE   one entry per chunk (written atomically)\n"
    "  --mmproj FILE       the vision projector of a GGUF text model\n";

struct describe_opts {
    struct gen_opts g;
    seer_video_input vin;
    bool dry_run;
    double chunk;
    const char *srt, *vtt, *chapters;
    const char *videos[MAX_VIDEOS];
    int n_videos;
};

static int parse(int argc, char **argv, struct describe_opts *o)
{
    size_t n_stop = 0;
    gen_opts_init(&o->g);
    o->g.prompt = default_prompt;
    /* a video is thousands of tokens (a minute at the defaults: ~60 pairs of ~100): room for it
       unless -c says otherwise */
    o->g.cp.n_ctx = 32768;
    for (int i = 1; i < argc; i++) {
        int r = gen_parse_opt(argc, argv, &i, &o->g, &n_stop);
        if (!r)
            r = cli_video_parse_opt(argc, argv, &i, &o->vin);
        if (r < 0)
            return CLI_USAGE;
        if (r)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if ((!strcmp(a, "-p") || !strcmp(a, "--prompt")) && v)
            o->g.prompt = v, i++;
        else if (!strcmp(a, "--mmproj") && v)
            o->g.mp.mmproj = v, i++;
        else if (!strcmp(a, "--json"))
            o->g.json = true;
        else if (!strcmp(a, "--dry-run"))
            o->dry_run = true;
        else if (!strcmp(a, "--chunk") && v) {
            char t[64];
            snprintf(t, sizeof t, "%s", v);
            size_t n = strlen(t);
            if (n && t[n - 1] == 's')
                t[n - 1] = '\0';
            if ((o->chunk = video_parse_time(t)) < 1) {
                fprintf(stderr, "seer describe: --chunk needs a duration of at least 1 s (60s, 90, 1:30), got '%s'\n", v);
                return CLI_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--srt") && v)
            o->srt = v, i++;
        else if (!strcmp(a, "--vtt") && v)
            o->vtt = v, i++;
        else if (!strcmp(a, "--chapters-json") && v)
            o->chapters = v, i++;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s%s%s", describe_help, cli_video_help, gen_help);
            return -1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "seer describe: unknown or incomplete option '%s' (see seer describe --help)\n", a);
            return CLI_USAGE;
        } else if (o->n_videos == MAX_VIDEOS) {
            fprintf(stderr, "seer describe: at most %d videos\n", MAX_VIDEOS);
            return CLI_USAGE;
        } else
            o->videos[o->n_videos++] = a;
    }
    o->g.gp.n_stop = n_stop;
    if (!o->n_videos || (!o->g.model && !o->dry_run)) {
        fprintf(stderr, "seer describe: need -m MODEL and at least one VIDEO (see seer describe --help)\n");
        return CLI_USAGE;
    }
    if ((o->srt || o->vtt || o->chapters) && o->n_videos > 1) {
        fprintf(stderr, "seer describe: --srt, --vtt and --chapters-json take one video\n");
        return CLI_USAGE;
    }
    return 0;
}

static int dry_run(const struct describe_opts *o)
{
    int failed = 0;
    for (int k = 0; k < o->n_videos; k++) {
        struct cli_video_cost c;
        int rc = cli_video_cost(o->g.model, o->videos[k], &o->vin, o->g.system, o->g.prompt, o->g.gp.think != 0, &c);
        if (rc) {
            cli_fail(rc);
            failed++;
            continue;
        }
        if (o->g.json) {
            json_t *j = cli_video_cost_json(&c);
            char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
            if (s)
                printf("%s\n", s);
            free(s);
            json_decref(j);
        } else
            cli_video_cost_print(o->videos[k], &c);
        cli_video_cost_clear(&c);
    }
    return failed == 0 ? CLI_OK : failed == o->n_videos ? CLI_FAIL : CLI_PARTIAL;
}

/* Progress on a terminal: chunk, frame pairs encoded, and the time left at this pace (this chunk's
   encoding from its pairs so far; later chunks at the mean time of the finished ones, or of this one). */
struct progress {
    int chunk, n_chunks;
    double t0, chunk_t0;
};

static void on_progress(const char *path, int64_t done, int64_t total, void *user)
{
    struct progress *p = user;
    const double now = seer_time_now(), in_chunk = now - p->chunk_t0;
    const double left = done ? in_chunk / (double)done * (double)(total - done) : 0;
    const double per_chunk = p->chunk > 1 ? (p->chunk_t0 - p->t0) / (p->chunk - 1) : in_chunk + left;
    fprintf(stderr, "\r%s: chunk %d/%d, frame pairs %lld/%lld, %.0f s elapsed, ~%.0f s left   ", path, p->chunk,
            p->n_chunks, (long long)done, (long long)total, now - p->t0, left + per_chunk * (p->n_chunks - p->chunk));
    if (done == total)
        fputc('\n', stderr);
}

/* Describes one video (each chunk in its own fresh context); chunks get the texts. */
static int describe_one(seer_context *ctx, const struct describe_opts *o, const char *path,
                        struct chunk **out, size_t *n_out, json_t *jout)
{
    video_file *v = NULL;
    int rc = video_open(path, &v); /* the length, for the chunks (the library opens it again) */
    if (rc)
        return rc;
    /* the video stream's own length (a container's duration may count a longer audio track) */
    const struct video_info *info = video_file_info(v);
    const double duration = MIN(info->duration, info->seconds[info->n_frames - 1] + 1 / info->fps);
    const double start = o->vin.start_seconds, end = o->vin.end_seconds > 0 ? MIN(o->vin.end_seconds, duration) : duration;
    const double step = o->chunk > 0 ? o->chunk : end - start;
    const int n_chunks = step > 0 ? (int)MIN(ceil((end - start) / step - 1e-9), 100000) : 1;
    struct chunk *ch = calloc((size_t)MAX(n_chunks, 1), sizeof *ch);
    struct progress prog = {0, n_chunks, seer_time_now(), 0};
    json_t *jch = json_array();
    if (!ch) {
        video_close(v);
        json_decref(jch);
        return seer_err(SEER_ENOMEM, "no memory for %d chunks", n_chunks);
    }
    if (isatty(2) && cli_log_level >= SEER_LOG_WARN)
        api_video_set_progress(on_progress, &prog);
    size_t n = 0;
    for (int k = 0; k < MAX(n_chunks, 1) && !rc && !gen_interrupted(); k++) {
        seer_video_input vin = o->vin;
        vin.path = path;
        vin.start_seconds = start + k * step;
        vin.end_seconds = k == n_chunks - 1 ? (o->vin.end_seconds > 0 ? end : 0) : start + (k + 1) * step;
        seer_result r = {0};
        if (vin.max_tokens > 0) {
            /* what --max-video-tokens made the planner choose, said once per chunk */
            struct video_settings defaults = video_settings_default();
            struct video_plan p = {0};
            if (!video_settings_load(io_path_kind(o->g.model) == IO_DIR ? o->g.model : NULL, &defaults)) {
                const struct video_settings s = api_video_settings(&defaults, &vin);
                if (!video_plan_make(info, path, &s, &p) && p.note[0])
                    fprintf(stderr, "seer: %s: %s\n", path, p.note);
            }
            video_plan_clear(&p);
        }
        prog.chunk = k + 1;
        prog.chunk_t0 = seer_time_now();
        if (o->chunk > 0 && !o->g.json)
            printf("%s[", k ? "\n\n" : ""), stamp(stdout, vin.start_seconds, '.'), printf(" - "),
                stamp(stdout, vin.end_seconds > 0 ? vin.end_seconds : end, '.'), printf("]\n"), fflush(stdout);
        if (!(rc = seer_context_reset(ctx)) && !(o->g.system && (rc = seer_chat_add(ctx, "system", o->g.system))) &&
            !(rc = seer_chat_add_media(ctx, "user", NULL, 0, &vin, 1, o->g.prompt)))
            rc = seer_chat_generate(ctx, &o->g.gp, &r);
        if (rc)
            break;
        char *copy = malloc(r.text_len + 1);
        if (copy)
            memcpy(copy, r.text, r.text_len + 1);
        ch[n++] = (struct chunk){vin.start_seconds, vin.end_seconds > 0 ? vin.end_seconds : end, copy, r.text_len};
        json_array_append_new(jch, json_pack("{s:f, s:f, s:s%, s:I, s:I, s:{s:f, s:f, s:f}}", "start", ch[n - 1].start,
                                             "end", ch[n - 1].end, "text", r.text, r.text_len, "prompt_tokens",
                                             (json_int_t)r.prompt_tokens, "generated_tokens", (json_int_t)r.n_tokens,
                                             "timings", "vision_seconds", r.vision_seconds, "prefill_seconds",
                                             r.prefill_seconds, "decode_seconds", r.decode_seconds));
        if (cli_log_level >= SEER_LOG_INFO)
            gen_print_timings(&r);
        seer_result_clear(&r);
    }
    api_video_set_progress(NULL, NULL);
    video_close(v);
    json_object_set_new(jout, "chunks", jch);
    *out = ch;
    *n_out = n;
    return rc;
}

int cli_describe(int argc, char **argv)
{
    struct describe_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status)
        return status < 0 ? CLI_OK : status;
    if (o.dry_run)
        return dry_run(&o);
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    int rc, failed = 0;
    if (!o.g.json)
        o.g.gp.on_text = gen_stream_stdout;
    if ((rc = seer_model_load(o.g.model, &o.g.mp, &m)) || (rc = seer_context_create(m, &o.g.cp, &ctx))) {
        seer_model_free(m);
        return cli_fail(rc);
    }
    o.g.no_progress_line = true; /* describe draws its own, per chunk */
    gen_start(&o.g);             /* Ctrl-C: the chunks done so far are printed, exit 130 */
    for (int k = 0; k < o.n_videos && !gen_interrupted(); k++) {
        struct chunk *ch = NULL;
        size_t n = 0;
        json_t *j = json_pack("{s:s}", "path", o.videos[k]);
        if (!o.g.json && o.n_videos > 1)
            printf("%s== %s ==\n", k ? "\n" : "", o.videos[k]);
        rc = describe_one(ctx, &o, o.videos[k], &ch, &n, j);
        if (!o.g.json && (printf("\n") < 0 || fflush(stdout) != 0))
            cli_stdout_failed(errno); /* reported once, after the last video */
        if (!rc && o.srt)
            rc = write_atomic(o.srt, 's', ch, n);
        if (!rc && o.vtt)
            rc = write_atomic(o.vtt, 'v', ch, n);
        if (!rc && o.chapters)
            rc = write_atomic(o.chapters, 'j', ch, n);
        if (rc) {
            cli_fail(rc);
            failed++;
            json_object_set_new(j, "error", json_string(seer_last_error()));
        }
        if (gen_interrupted())
            json_object_set_new(j, "stop", json_string("canceled"));
        if (o.g.json) {
            char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
            if (s && (printf("%s\n", s) < 0 || fflush(stdout) != 0))
                cli_stdout_failed(errno);
            free(s);
        }
        json_decref(j);
        for (size_t i = 0; i < n; i++)
            free(ch[i].text);
        free(ch);
    }
    if (cli_faults_after_output() != CLI_OK) /* stdout lost the descriptions, or the model file changed */
        failed = o.n_videos;
    seer_context_free(ctx);
    seer_model_free(m);
    if (gen_interrupted())
        return CLI_INTERRUPTED;
    return failed == 0 ? CLI_OK : failed == o.n_videos ? CLI_FAIL : CLI_PARTIAL;
}
