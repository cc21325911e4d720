/* describe.c — `seer describe`: what happens in one or more videos, streamed to stdout with the
   times the model read from the prompt's `<t.t seconds>` stamps (spec §5.3, §5.4). Long videos are
   cut into --chunk pieces, each described with its absolute times, and written as subtitles
   (--srt, --vtt) or chapters (--chapters-json); each file is opened once (seer_video_open) and its
   chunks planned from that one reading. --dry-run loads no weights (a vocab_only model): it reads
   the container and prints the plan and what it costs (seer_video_measure, seer_chat_measure).
   Several videos share one loaded model; a file that cannot be read is reported and the others go
   on (exit status 3). A client of seer.h alone.
   Divisions: sampling flags · the dry-run account · subtitle files · the command. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/gen.h"
#include "cli/util.h"

#define MAX_VIDEOS 256
/* Exit status when some videos were described and others could not be read (as `seer ocr`). */
#define CLI_PARTIAL 3

static const char default_prompt[] =
    "Describe what happens in this video, in order. Give the time in seconds of each event.";

/* ---- the dry-run account ------------------------------------------------------------------------ */

json_t *cli_video_info_json(const seer_video_info *in, int64_t prompt_tokens)
{
    const int64_t per_pair = in->pairs ? in->tokens / in->pairs : 0;
    json_t *frames = json_array(), *groups = json_array();
    for (int64_t k = 0; k < in->sampled_frames; k++)
        json_array_append_new(frames, json_pack("{s:I, s:f}", "index", (json_int_t)in->frame_index[k], "seconds",
                                                in->frame_seconds[k]));
    for (int64_t g = 0; g < in->pairs; g++)
        json_array_append_new(groups, json_pack("{s:f, s:I}", "seconds", in->pair_seconds[g], "tokens",
                                                (json_int_t)per_pair));
    return json_pack("{s:f, s:f, s:I, s:o, s:i, s:i, s:o, s:I, s:o, s:I}", "duration_seconds", in->duration,
                     "fps_source", in->fps, "frames_source", (json_int_t)in->frames, "frames", frames,
                     "resized_width", in->resized_width, "resized_height", in->resized_height, "groups", groups,
                     "video_tokens", (json_int_t)in->tokens, "prompt_tokens",
                     prompt_tokens >= 0 ? json_integer(prompt_tokens) : json_null(), "memory_bytes",
                     (json_int_t)in->memory_bytes);
}

void cli_video_info_print(const char *path, const seer_video_info *in, int64_t prompt_tokens)
{
    printf("%s: %.2f s, %dx%d%s, %lld frames at %.3f fps (%s), %s\n", path, in->duration, in->width, in->height,
           in->rotation ? " (rotated)" : "", (long long)in->frames, in->fps, in->fps_source, in->codec);
    printf("  %lld frames sampled (%lld pairs) at %dx%d: %lld video tokens\n", (long long)in->sampled_frames,
           (long long)in->pairs, in->resized_width, in->resized_height, (long long)in->tokens);
    if (in->note[0])
        printf("  %s\n", in->note);
    for (int64_t g = 0; g < in->pairs; g++) {
        char ts[64]; /* the stamp as the model reads it (spec §5.4) */
        snprintf(ts, sizeof ts, "<%.1f seconds>", in->pair_seconds[g]);
        printf("  %-16s frames %lld, %lld\n", ts, (long long)in->frame_index[2 * g],
               (long long)in->frame_index[MIN(2 * g + 1, in->sampled_frames - 1)]);
    }
    if (prompt_tokens >= 0)
        printf("  prompt: %lld tokens; memory for the video: %.1f MiB\n", (long long)prompt_tokens,
               (double)in->memory_bytes / (1 << 20));
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
        return cli_err(SEER_EINVAL, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cli_err(SEER_EIO, "%s: %s", tmp, strerror(errno));
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
        return cli_err(SEER_EIO, "%s: cannot write it: %s", path, strerror(e));
    }
    return SEER_OK;
}

/* ---- the command ------------------------------------------------------------------------------ */

enum { D_PROMPT = 1, D_JSON, D_DRY_RUN, D_CHUNK, D_SRT, D_VTT, D_CHAPTERS, D_MMPROJ, D_HELP };

static const struct cli_opt describe_opts[] = {
    {{"-p", "--prompt"}, "PROMPT", "what to ask (default: describe what happens, in order, with times)", D_PROMPT},
    {{"--json"}, NULL, "one JSON object per video (text, chunks, plan, timings)", D_JSON},
    {{"--dry-run"}, NULL, "load no weights: the sampled frames, times, size, tokens and memory", D_DRY_RUN},
    {{"--chunk"}, "DUR", "describe each DUR-long piece (e.g. 60s, 90, 1:30) with absolute times", D_CHUNK},
    {{"--srt"}, "FILE", "one subtitle per chunk (files are written atomically)", D_SRT},
    {{"--vtt"}, "FILE", "one WebVTT cue per chunk", D_VTT},
    {{"--chapters-json"}, "FILE", "one chapter per chunk: start, end, text", D_CHAPTERS},
    {{"--mmproj"}, "FILE", "the vision projector of a GGUF text model", D_MMPROJ},
    {{"-h", "--help"}, NULL, "this help", D_HELP},
};

struct describe_opts {
    struct gen_opts g;
    seer_video_input vin;
    bool dry_run;
    double chunk;
    const char *srt, *vtt, *chapters;
    const char *videos[MAX_VIDEOS];
    int n_videos;
};

/* One of describe's own options (opt, its value v) or, opt NULL, a video v, for gen_parse_args. */
static int own_opt(const struct cli_opt *opt, const char *v, void *user)
{
    struct describe_opts *o = user;
    if (!opt) {
        if (o->n_videos == MAX_VIDEOS)
            return fprintf(stderr, "seer describe: at most %d videos\n", MAX_VIDEOS), CLI_USAGE;
        o->videos[o->n_videos++] = v;
        return GEN_NEXT;
    }
    switch (opt->key) {
    case D_PROMPT: o->g.prompt = v; break;
    case D_JSON: o->g.json = true; break;
    case D_DRY_RUN: o->dry_run = true; break;
    case D_SRT: o->srt = v; break;
    case D_VTT: o->vtt = v; break;
    case D_CHAPTERS: o->chapters = v; break;
    case D_MMPROJ: o->g.mp.mmproj = v; break;
    case D_CHUNK: {
        char t[64];
        snprintf(t, sizeof t, "%s", v);
        size_t n = strlen(t);
        if (n && t[n - 1] == 's')
            t[n - 1] = '\0';
        if ((o->chunk = cli_parse_time(t)) < 1) {
            fprintf(stderr, "seer describe: --chunk needs a duration of at least 1 s (60s, 90, 1:30), got '%s'\n", v);
            return CLI_USAGE;
        }
        break;
    }
    case D_HELP:
        printf("usage: seer describe -m MODEL [options] VIDEO...\n"
               "  VIDEO                     any file FFmpeg reads (MP4, MKV, WebM, MOV, AVI, MPEG-TS, GIF, ...)\n");
        cli_opt_help(stdout, describe_opts, sizeof describe_opts / sizeof *describe_opts);
        cli_video_help(stdout);
        printf("%s", gen_help);
        return CLI_OK;
    }
    return GEN_NEXT;
}

/* GEN_NEXT when the command line is complete, else the status to exit with (CLI_OK after --help,
   CLI_USAGE after a line naming the problem). */
static int parse(int argc, char **argv, struct describe_opts *o)
{
    gen_opts_init(&o->g);
    o->g.video = &o->vin;
    o->g.prompt = default_prompt;
    /* a video is thousands of tokens (a minute at the defaults: ~60 pairs of ~100): room for it
       unless -c says otherwise */
    o->g.cp.n_ctx = 32768;
    o->g.gp.think = 0; /* a task answer, not a conversation: no reasoning unless --think */
    int status = gen_parse_args("describe", describe_opts, sizeof describe_opts / sizeof *describe_opts, true, argc,
                                argv, &o->g, own_opt, o);
    if (status != GEN_NEXT)
        return status;
    if (!o->g.model && !o->dry_run)
        return cli_no_model("describe");
    if (!o->n_videos) {
        fprintf(stderr, "seer describe: need -m MODEL and at least one VIDEO (see seer describe --help)\n");
        return CLI_USAGE;
    }
    if ((o->srt || o->vtt || o->chapters) && o->n_videos > 1) {
        fprintf(stderr, "seer describe: --srt, --vtt and --chapters-json take one video\n");
        return CLI_USAGE;
    }
    return GEN_NEXT;
}

/* The whole prompt's tokens for one video, as the real run's first chunk feeds them. */
static int dry_prompt_tokens(seer_context *ctx, const struct describe_opts *o, const seer_video_input *vin,
                             int64_t *n)
{
    int rc = seer_context_reset(ctx);
    if (!rc && o->g.system)
        rc = seer_chat_add(ctx, "system", o->g.system);
    if (!rc)
        rc = seer_chat_add_media(ctx, "user", NULL, 0, vin, 1, o->g.prompt);
    return rc ? rc : seer_chat_measure(ctx, &o->g.gp, n);
}

/* The plan and cost of each video, from its container and the model's configuration alone (no
   -m: the default sampling settings, and no token or memory count). */
static int dry_run(const struct describe_opts *o)
{
    seer_model *m = NULL;
    seer_context *ctx = NULL;
    seer_model_params mp = o->g.mp;
    int failed = 0, rc;
    mp.vocab_only = 1;
    if (o->g.model && ((rc = seer_model_load(o->g.model, &mp, &m)) || (rc = seer_context_create(m, &o->g.cp, &ctx)))) {
        seer_model_free(m);
        return cli_fail(rc);
    }
    for (int k = 0; k < o->n_videos; k++) {
        seer_video_input vin = o->vin;
        seer_video_info info;
        int64_t prompt_tokens = -1;
        if (!(rc = seer_video_open(m, o->videos[k], &vin.video)) && !(ctx && (rc = dry_prompt_tokens(ctx, o, &vin, &prompt_tokens))))
            rc = seer_video_measure(m, &vin, &info);
        if (rc) {
            cli_fail(rc);
            failed++;
        } else if (o->g.json) {
            json_t *j = cli_video_info_json(&info, prompt_tokens);
            char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
            if (s)
                printf("%s\n", s);
            free(s);
            json_decref(j);
        } else
            cli_video_info_print(o->videos[k], &info, prompt_tokens);
        seer_video_free(vin.video);
    }
    seer_context_free(ctx);
    seer_model_free(m);
    return failed == 0 ? CLI_OK : failed == o->n_videos ? CLI_FAIL : CLI_PARTIAL;
}

/* Progress on a terminal: chunk, frame pairs encoded, and the time left at this pace (this chunk's
   encoding from its pairs so far; later chunks at the mean time of the finished ones, or of this one). */
struct progress {
    int chunk, n_chunks;
    double t0, chunk_t0;
};

static int on_video_progress(const char *path, int64_t done, int64_t total, void *user)
{
    struct progress *p = user;
    const double now = cli_time_now(), in_chunk = now - p->chunk_t0;
    const double left = done ? in_chunk / (double)done * (double)(total - done) : 0;
    const double per_chunk = p->chunk > 1 ? (p->chunk_t0 - p->t0) / (p->chunk - 1) : in_chunk + left;
    fprintf(stderr, "\r%s: chunk %d/%d, frame pairs %lld/%lld, %.0f s elapsed, ~%.0f s left   ", path, p->chunk,
            p->n_chunks, (long long)done, (long long)total, now - p->t0, left + per_chunk * (p->n_chunks - p->chunk));
    if (done == total)
        fputc('\n', stderr);
    return 0; /* Ctrl-C is seen at the next prompt micro-batch (gen_start's on_progress) */
}

/* Describes one video (each chunk in its own fresh context) from one opening of the file; chunks
   get the texts. */
static int describe_one(const seer_model *m, seer_context *ctx, const struct describe_opts *o, const char *path,
                        struct chunk **out, size_t *n_out, json_t *jout)
{
    seer_video *v = NULL;
    seer_video_info info;
    int rc = seer_video_open(m, path, &v);
    /* the video stream's own length (a container's duration may count a longer audio track) */
    if (!rc)
        rc = seer_video_measure(m, &(seer_video_input){.video = v}, &info);
    if (rc) {
        seer_video_free(v);
        return rc;
    }
    const double duration = info.video_seconds;
    const double start = o->vin.start_seconds, end = o->vin.end_seconds > 0 ? MIN(o->vin.end_seconds, duration) : duration;
    const double step = o->chunk > 0 ? o->chunk : end - start;
    const int n_chunks = step > 0 ? (int)MIN(ceil((end - start) / step - 1e-9), 100000) : 1;
    struct chunk *ch = calloc((size_t)MAX(n_chunks, 1), sizeof *ch);
    struct progress prog = {0, n_chunks, cli_time_now(), 0};
    seer_generate_params gp = o->g.gp;
    json_t *jch = json_array();
    if (!ch) {
        seer_video_free(v);
        json_decref(jch);
        return cli_err(SEER_ENOMEM, "no memory for %d chunks", n_chunks);
    }
    if (isatty(2) && cli_log_level >= SEER_LOG_WARN) {
        gp.on_video_progress = on_video_progress;
        gp.user_data = &prog;
    }
    size_t n = 0;
    for (int k = 0; k < MAX(n_chunks, 1) && !rc && !gen_interrupted(); k++) {
        seer_video_input vin = o->vin;
        vin.video = v;
        vin.start_seconds = start + k * step;
        vin.end_seconds = k == n_chunks - 1 ? (o->vin.end_seconds > 0 ? end : 0) : start + (k + 1) * step;
        seer_result r = {0};
        if (vin.max_tokens > 0 && !seer_video_measure(m, &vin, &info) && info.note[0])
            fprintf(stderr, "seer: %s: %s\n", path, info.note); /* what --max-video-tokens made the planner do */
        prog.chunk = k + 1;
        prog.chunk_t0 = cli_time_now();
        if (o->chunk > 0 && !o->g.json)
            printf("%s[", k ? "\n\n" : ""), stamp(stdout, vin.start_seconds, '.'), printf(" - "),
                stamp(stdout, vin.end_seconds > 0 ? vin.end_seconds : end, '.'), printf("]\n"), fflush(stdout);
        if (!(rc = seer_context_reset(ctx)) && !(o->g.system && (rc = seer_chat_add(ctx, "system", o->g.system))) &&
            !(rc = seer_chat_add_media(ctx, "user", NULL, 0, &vin, 1, o->g.prompt)))
            rc = seer_chat_generate(ctx, &gp, &r);
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
    seer_video_free(v);
    json_object_set_new(jout, "chunks", jch);
    *out = ch;
    *n_out = n;
    return rc;
}

int cli_describe(int argc, char **argv)
{
    struct describe_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status != GEN_NEXT)
        return status;
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
        rc = describe_one(m, ctx, &o, o.videos[k], &ch, &n, j);
        if (!o.g.json && (printf("\n") < 0 || fflush(stdout) != 0))
            cli_stdout_failed(errno); /* reported once, after the last video */
        if (!rc && o.srt)
            rc = write_atomic(o.srt, 's', ch, n);
        if (!rc && o.vtt)
            rc = write_atomic(o.vtt, 'v', ch, n);
        if (!rc && o.chapters)
            rc = write_atomic(o.chapters, 'j', ch, n);
        if (rc) {
            const char *msg = cli_last_error(); /* taken once: printed, and kept in the JSON */
            fprintf(stderr, "seer: %s\n", *msg ? msg : seer_strerror(rc));
            json_object_set_new(j, "error", json_string(*msg ? msg : seer_strerror(rc)));
            failed++;
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
