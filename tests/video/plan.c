/* Tests video/ (demux pass, sampling plan, frame reading; spec §5.3, §5.4) against the reference
   tests/reference/video_ref.py, which reads the same files through the ffprobe/ffmpeg command-line
   tools and computes the plan with numpy/Pillow from the spec. The videos are made at test time
   with ffmpeg's lavfi sources: constant rates 23.976/25/30/60, a variable rate, odd sizes, a
   portrait clip from rotation metadata, a 1-second and a 2-hour clip (32×32 at 1 fps keeps it
   fast), a raw H.264 stream and a piped Matroska file (no duration, no frame count), a truncated
   file and bytes that are no video. Indices, timestamp texts, resized sizes and token counts must
   be identical to the reference; decoded frames match ffmpeg's within TOL_PIXEL. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "seer.h"
#include "support/gguf_write.h"
#include "support/testutil.h"
#include "tap.h"
#include "video/video.h"
#include "video/video_test.h"

/* Decoded, resized frames vs ffmpeg's rgb24 + Pillow: both convert YUV with libswscale (same flags,
   the frame's matrix and range) and resize with Pillow's bicubic, so they agree bit for bit with
   Debian's FFmpeg 5.1; the slack allows another build's SIMD rounding, not another frame. */
#define TOL_PIXEL_MAX 2
#define TOL_PIXEL_MEAN 0.01

struct clip {
    const char *name, *lavfi, *args;
    bool cfr;      /* constant rate: every frame within half a period of idx / fps, the stamps HF's */
    bool frames;   /* compare decoded pixels too */
    const char *post; /* then: ffmpeg -i <made> <post> <name> (metadata only a stream copy can set), or NULL */
};

/* ffmpeg -f lavfi -i <lavfi> <args> <name> */
static const struct clip clips[] = {
    {"c2398.mp4", "testsrc=size=97x61:rate=24000/1001:duration=3.1", "-c:v libx264 -pix_fmt yuv444p -g 12", true, true, NULL},
    {"c25.mkv", "testsrc=size=64x48:rate=25:duration=2", "-c:v libx264 -pix_fmt yuv420p -bf 2", true, true, NULL},
    {"c30.avi", "testsrc=size=80x60:rate=30:duration=1", "-c:v mpeg4 -q:v 3", true, true, NULL},
    {"c60.ts", "testsrc=size=66x50:rate=60:duration=1.5", "-c:v mpeg2video -q:v 3", true, true, NULL},
    {"vfr.mkv", "testsrc=size=64x64:rate=30:duration=2", "-vf setpts='if(lt(N\\,20)\\,N/30\\,0.7+N/90)/TB' "
     "-fps_mode vfr -c:v libx264 -pix_fmt yuv420p", false, true, NULL},
    {"rot.mp4", "testsrc=size=96x64:rate=25:duration=2", "-c:v libx264 -pix_fmt yuv420p", true, true,
     "-c copy -metadata:s:v:0 rotate=90"},
    {"long.mkv", "testsrc=size=32x32:rate=1:duration=7200", "-c:v libx264 -preset ultrafast -g 300", true, false, NULL},
    {"raw.h264", "testsrc=size=64x48:rate=25:duration=2", "-c:v libx264 -pix_fmt yuv420p -f h264", true, true, NULL},
    {"pipe.mkv", "testsrc=size=64x48:rate=30:duration=2", "-c:v libx264 -pix_fmt yuv420p -f matroska -", true, true, NULL},
};

static bool make_clip(const struct clip *c)
{
    const bool piped = c->args[strlen(c->args) - 1] == '-';
    const char *d = test_tmp_dir();
    if (c->post)
        return vt_sh("ffmpeg -v error -y -f lavfi -i \"%s\" %s '%s/made_%s' </dev/null && ffmpeg -v error -y -i "
                     "'%s/made_%s' %s '%s/%s' </dev/null", c->lavfi, c->args, d, c->name, d, c->name, c->post, d,
                     c->name) == 0;
    return vt_sh("ffmpeg -v error -y -f lavfi -i \"%s\" %s %s'%s/%s' </dev/null", c->lavfi, c->args,
                 piped ? "> " : "", d, c->name) == 0;
}

static json_t *ref_plan(const char *file, const char *opts)
{
    char out[600];
    snprintf(out, sizeof out, "%s/%s.plan.json", test_tmp_dir(), file);
    if (vt_sh("%s '%s' plan '%s/%s' %s > '%s'", vt_python(), test_src_path("tests/reference/video_ref.py"), test_tmp_dir(),
              file, opts, out))
        return NULL;
    return json_load_file(out, 0, NULL);
}

static bool ids_equal(const json_t *arr, const int64_t *v, int64_t n)
{
    if ((int64_t)json_array_size(arr) != n)
        return false;
    for (int64_t k = 0; k < n; k++)
        if (json_integer_value(json_array_get(arr, (size_t)k)) != v[k])
            return false;
    return true;
}

static bool ts_equal(const json_t *arr, const struct video_plan *p, char *first_diff, size_t cap)
{
    bool same = (int64_t)json_array_size(arr) == p->n_groups;
    for (int64_t g = 0; g < p->n_groups && same; g++) {
        char t[64];
        video_timestamp_text(p->group_seconds[g], t, sizeof t);
        const char *want = json_string_value(json_array_get(arr, (size_t)g));
        if (!want || strcmp(t, want)) {
            snprintf(first_diff, cap, "pair %lld: %s vs %s", (long long)g, t, want ? want : "(none)");
            same = false;
        }
    }
    return same;
}

/* Plans `file` with s, compares with the reference run with `opts`; returns the plan (or zeroed). */
static void check_plan(video_file *v, const char *file, const struct video_settings *s, const char *opts,
                       bool cfr, struct video_plan *p)
{
    json_t *ref = ref_plan(file, opts);
    int rc = video_plan_make(video_file_info(v), file, s, p);
    if (!ok(ref && rc == SEER_OK, "%s%s: planned (%s) and referenced", file, opts, rc ? seer_last_error() : "ok")) {
        json_decref(ref);
        return;
    }
    const struct video_info *in = video_file_info(v);
    ok(in->n_frames == json_integer_value(json_object_get(ref, "n_frames")) &&
           fabs(in->fps - json_real_value(json_object_get(ref, "fps"))) <= 1e-9 * in->fps,
       "%s: %lld frames at %.6f fps (%s), as ffprobe counts and reads them", file, (long long)in->n_frames, in->fps,
       in->fps_source);
    ok(in->width == json_integer_value(json_object_get(ref, "width")) &&
           in->height == json_integer_value(json_object_get(ref, "height")),
       "%s: displayed size %dx%d (rotation %d)", file, in->width, in->height, in->rotation);
    ok(ids_equal(json_object_get(ref, "indices"), p->index, p->n_frames), "%s%s: %lld frame indices identical", file,
       opts, (long long)p->n_frames);
    const bool ref_cfr = json_is_true(json_object_get(ref, "constant_rate"));
    ok(video_constant_rate(in) == cfr && ref_cfr == cfr, "%s: a %s rate, as the reference finds (%s)", file,
       cfr ? "constant" : "variable", ref_cfr ? "constant" : "variable");
    char diff[200] = "";
    ok(ts_equal(json_object_get(ref, "timestamps"), p, diff, sizeof diff), "%s%s: %lld timestamps identical %s", file,
       opts, (long long)p->n_groups, diff);
    if (cfr)
        ok(ts_equal(json_object_get(ref, "timestamps_hf"), p, diff, sizeof diff),
           "%s%s: constant rate: transformers' idx / fps timestamps %s", file, opts, diff);
    ok(p->width == json_integer_value(json_object_get(ref, "resized_width")) &&
           p->height == json_integer_value(json_object_get(ref, "resized_height")) &&
           p->tokens == json_integer_value(json_object_get(ref, "tokens")),
       "%s%s: resized to %dx%d, %lld tokens, as the reference", file, opts, p->width, p->height, (long long)p->tokens);
    json_decref(ref);
}

static void check_frames(video_file *v, const char *file, const struct video_plan *p)
{
    char out[600];
    snprintf(out, sizeof out, "%s/%s.frames", test_tmp_dir(), file);
    if (!ok(vt_sh("%s '%s' frames '%s/%s' --out '%s'", vt_python(), test_src_path("tests/reference/video_ref.py"),
                  test_tmp_dir(), file, out) == 0, "%s: reference frames", file))
        return;
    size_t n = 0;
    unsigned char *want = vt_read(out, &n);
    const size_t fb = (size_t)p->width * (size_t)p->height * 3;
    uint8_t *got = malloc(fb * (size_t)p->n_frames);
    uint8_t **ptr = malloc(sizeof *ptr * (size_t)p->n_frames);
    for (int64_t k = 0; got && ptr && k < p->n_frames; k++)
        ptr[k] = got + fb * (size_t)k;
    /* reversed order: every frame is found again by seeking back; resized as the reference does
       (Pillow's bicubic; the default, torchvision's, is checked against transformers in
       tests/reference/hf_vision_test.py) */
    struct video_plan pil = *p;
    pil.resize = VIS_RESIZE_PILLOW;
    int rc = SEER_OK;
    for (int64_t k = p->n_frames - 1; k >= 0 && !rc && got && ptr; k--)
        rc = video_read_frames(v, &pil, k, 1, &ptr[k]);
    int maxd = 0;
    double sum = 0;
    if (!rc && want && n == fb * (size_t)p->n_frames)
        for (size_t i = 0; i < n; i++) {
            int d = abs((int)got[i] - want[i]);
            maxd = d > maxd ? d : maxd;
            sum += d;
        }
    ok(rc == SEER_OK && n == fb * (size_t)p->n_frames && maxd <= TOL_PIXEL_MAX && sum / (double)n <= TOL_PIXEL_MEAN,
       "%s: %lld frames decoded in reverse order match ffmpeg+Pillow (max |d| %d <= %d, mean %.3f <= %.1f) %s", file,
       (long long)p->n_frames, maxd, TOL_PIXEL_MAX, n ? sum / (double)n : 0.0, TOL_PIXEL_MEAN,
       rc ? seer_last_error() : "");
    struct video_stats st = video_file_stats(v);
    diag("%s: %lld packets demuxed, %lld frames decoded, %lld seeks", file, (long long)st.packets_read,
         (long long)st.frames_decoded, (long long)st.seeks);
    free(got), free(ptr), free(want);
}

/* HF's sampler vs numpy for random source lengths and rates (one reference call for all). */
static void check_sampler(void)
{
    enum { N = 40 };
    int64_t n_src[N];
    double fps[N];
    char cmd[8192], out[600];
    snprintf(out, sizeof out, "%s/sampler.json", test_tmp_dir());
    size_t len = (size_t)snprintf(cmd, sizeof cmd, "import sys, json; sys.path.insert(0, '%s'); import video_ref; "
                                  "json.dump([video_ref.sample_indices(n, f) for n, f in [",
                                  test_src_path("tests/reference"));
    for (int i = 0; i < N; i++) {
        n_src[i] = 1 + (int64_t)(test_rand_u64() % (i < N / 2 ? 400 : 200000));
        fps[i] = (double)(1 + test_rand_u64() % 12000) / 100.0; /* 0.01 .. 120 fps, odd rates included */
        len += (size_t)snprintf(cmd + len, sizeof cmd - len, "(%lld, %.2f),", (long long)n_src[i], fps[i]);
    }
    snprintf(cmd + len, sizeof cmd - len, "]], open('%s', 'w'))", out);
    json_t *ref = vt_sh("%s -c \"%s\"", vt_python(), cmd) == 0 ? json_load_file(out, 0, NULL) : NULL;
    int64_t *idx = malloc(VIDEO_MAX_FRAMES_PLANNED * sizeof *idx), n;
    int same = 0;
    for (int i = 0; i < N && ref && idx; i++)
        same += video_sample_indices(n_src[i], fps[i], VIDEO_FPS, VIDEO_MIN_FRAMES, VIDEO_MAX_FRAMES, idx, &n) == 0 &&
                ids_equal(json_array_get(ref, (size_t)i), idx, n);
    ok(same == N, "sampler: %d of %d random (frames, fps) give numpy's indices", same, N);
    free(idx);
    json_decref(ref);
}

/* A stream of n frames at 10 fps, frame k at k · 0.1 s (a presentation time as a double) except frame
   `moved`, shifted by `shift` seconds. */
static struct video_info ten_fps(double *sec, int n, int w, int h, int moved, double shift)
{
    for (int k = 0; k < n; k++)
        sec[k] = (double)k * 0.1 + (k == moved ? shift : 0);
    return (struct video_info){.width = w, .height = h, .n_frames = n, .fps = 10, .seconds = sec};
}

/* The stamp arithmetic and the per-frame cap on synthetic streams. 10 frames at 10 fps sample
   frames 0, 3, 6, 9 (min_frames 4). transformers: (0/10 + 3/10) / 2 is the double just below 0.15,
   "%.1f" gives <0.1 seconds>; (6/10 + 9/10) / 2 = 0.75 exactly, half to even gives <0.8 seconds>.
   From presentation times 0.1 · 3 = 0.30000000000000004 the first pair would say <0.2 seconds>,
   which is what a variable rate (frame 5 late by 0.06 s, over half a period) keeps. */
static void check_stamps_and_cap(const struct video_settings *s)
{
    double sec[10];
    struct video_plan p = {0};
    char t0[64] = "", t1[64] = "";
    struct video_info in = ten_fps(sec, 10, 64, 64, -1, 0);
    int rc = video_plan_make(&in, "10fps", s, &p);
    if (!rc && p.n_groups == 2) {
        video_timestamp_text(p.group_seconds[0], t0, sizeof t0);
        video_timestamp_text(p.group_seconds[1], t1, sizeof t1);
    }
    ok(rc == SEER_OK && video_constant_rate(&in) && !strcmp(t0, "<0.1 seconds>") && !strcmp(t1, "<0.8 seconds>"),
       "10 fps, frames 0 3 6 9: transformers' idx / fps stamps %s %s", t0, t1);
    video_plan_clear(&p);
    in = ten_fps(sec, 10, 64, 64, 5, 0.06);
    rc = video_plan_make(&in, "vfr", s, &p);
    if (!rc && p.n_groups == 2)
        video_timestamp_text(p.group_seconds[0], t0, sizeof t0);
    ok(rc == SEER_OK && !video_constant_rate(&in) && !strcmp(t0, "<0.2 seconds>"),
       "a frame late by over half a period: a variable rate, presentation-time stamps (%s)", t0);
    video_plan_clear(&p);

    /* 4 frames of 1280x720: the clip budget leaves them at 1280x704; the cap (768 tokens a frame)
       shrinks them. The reference: preprocess_ref's transformers formulas. */
    char out[600];
    snprintf(out, sizeof out, "%s/cap.json", test_tmp_dir());
    json_t *ref = vt_sh("%s -c \"import sys, json; sys.path.insert(0, '%s'); import preprocess_ref as r; "
                        "json.dump([r.smart_resize_video(4, 720, 1280, 32, %lld, m) for m in (%lld, "
                        "r.video_capped_max_pixels(4, 32, %lld, %lld))], open('%s', 'w'))\"",
                        vt_python(), test_src_path("tests/reference"), (long long)s->min_pixels,
                        (long long)s->max_pixels, (long long)s->min_pixels, (long long)s->max_pixels, out) == 0
                      ? json_load_file(out, 0, NULL) : NULL;
    for (int cap = 0; cap < 2; cap++) {
        struct video_settings sc = *s;
        sc.cap_frames = cap;
        in = ten_fps(sec, 10, 1280, 720, -1, 0);
        rc = video_plan_make(&in, "720p", &sc, &p);
        const json_t *want = json_array_get(ref, (size_t)cap);
        ok(rc == SEER_OK && want && p.n_frames == 4 && p.height == json_integer_value(json_array_get(want, 0)) &&
               p.width == json_integer_value(json_array_get(want, 1)),
           "720p, 4 frames, cap_pixels_per_frame %s: %dx%d as transformers' formulas", cap ? "true" : "unset",
           p.width, p.height);
        video_plan_clear(&p);
    }
    json_decref(ref);
}

/* video_preprocessor_config.json's cap keys: true caps, null is transformers 5.23's unset (no cap),
   another max_video_tokens or a non-boolean is refused in one line naming the file. */
static void check_cap_settings(void)
{
    static const struct {
        const char *json;
        int rc;
        bool cap;
    } cases[] = {
        {"{\"cap_pixels_per_frame\": true, \"max_video_tokens\": 768}", SEER_OK, true},
        {"{\"cap_pixels_per_frame\": null, \"max_video_tokens\": 768}", SEER_OK, false},
        {"{\"max_video_tokens\": 512}", SEER_OK, false},
        {"{\"cap_pixels_per_frame\": true, \"max_video_tokens\": 512}", SEER_EFORMAT, false},
        {"{\"cap_pixels_per_frame\": \"yes\"}", SEER_EFORMAT, false},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/video_preprocessor_config.json", test_tmp_dir());
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_text(path, cases[i].json);
        struct video_settings s = video_settings_default();
        const int rc = video_settings_load(test_tmp_dir(), &s);
        const char *msg = seer_last_error();
        ok(rc == cases[i].rc && (rc ? strstr(msg, "video_preprocessor_config.json") && !strchr(msg, '\n')
                                    : s.cap_frames == cases[i].cap),
           "%s: %s", cases[i].json, rc ? msg : s.cap_frames ? "capped" : "not capped");
    }
    remove(path);
}

int main(void)
{
    test_seed();
    if (!vt_python() || vt_sh("command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null"))
        return plan_skip_all("ffmpeg, ffprobe, numpy or Pillow missing (scripts/install-deps.sh)");
    check_sampler();
    struct video_settings s = video_settings_default();
    check_stamps_and_cap(&s);
    check_cap_settings();
    for (size_t c = 0; c < sizeof clips / sizeof *clips; c++) {
        if (!ok(make_clip(&clips[c]), "%s made with ffmpeg", clips[c].name))
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), clips[c].name);
        video_file *v = NULL;
        int rc = video_open(path, NULL, &v);
        if (!ok(rc == SEER_OK, "%s: opens (%s)", clips[c].name, rc ? seer_last_error() : "ok"))
            continue;
        struct video_plan p = {0};
        check_plan(v, clips[c].name, &s, "", clips[c].cfr, &p);
        if (clips[c].frames && p.n_frames)
            check_frames(v, clips[c].name, &p);
        video_plan_clear(&p);
        if (!strcmp(clips[c].name, "long.mkv")) {
            /* a minute in the middle of the 2-hour clip, times absolute; and fewer frames */
            struct video_settings s2 = s;
            s2.start = 3600, s2.end = 3660.5, s2.max_frames = 16;
            check_plan(v, clips[c].name, &s2, " --start 3600 --end 3660.5 --max-frames 16", true, &p);
            ok(p.n_frames && p.seconds[0] >= 3600 && p.group_seconds[p.n_groups - 1] < 3660.5,
               "long.mkv: --start/--end keep the whole file's times (%.1f .. %.1f)", p.n_frames ? p.seconds[0] : 0.0,
               p.n_frames ? p.group_seconds[p.n_groups - 1] : 0.0);
            video_plan_clear(&p);
            /* the token budget: 768 frames of 32×32 are 384 tokens; 100 allowed */
            s2 = s, s2.max_tokens = 100;
            rc = video_plan_make(video_file_info(v), clips[c].name, &s2, &p);
            ok(rc == SEER_OK && p.tokens <= 100 && p.note[0], "long.mkv: --max-video-tokens 100 gives %lld tokens "
               "(%s)", (long long)p.tokens, rc ? seer_last_error() : p.note);
            video_plan_clear(&p);
        }
        video_close(v);
    }

    /* a 1080p clip under a token budget: resolution goes first */
    {
        struct video_info in = {.width = 1920, .height = 1080, .n_frames = 600, .fps = 30};
        double *sec = malloc(600 * sizeof *sec);
        for (int k = 0; k < 600 && sec; k++)
            sec[k] = k / 30.0;
        in.seconds = sec;
        struct video_settings s3 = s;
        s3.max_tokens = 2000;
        struct video_plan p = {0};
        int rc = sec ? video_plan_make(&in, "1080p", &s3, &p) : SEER_ENOMEM;
        ok(rc == SEER_OK && p.n_frames == 40 && p.tokens <= 2000 && p.width < 1920,
           "1080p, 20 s, --max-video-tokens 2000: %lld frames kept at %dx%d (%lld tokens)", (long long)p.n_frames,
           p.width, p.height, (long long)p.tokens);
        video_plan_clear(&p);
        free(sec);
    }

    /* damaged input: a truncated file plans and reads what is there; noise is refused by name */
    char src[600], dst[600];
    snprintf(src, sizeof src, "%s/c25.mkv", test_tmp_dir());
    snprintf(dst, sizeof dst, "%s/trunc.mkv", test_tmp_dir());
    if (vt_sh("head -c $(( $(stat -c %%s '%s') * 6 / 10 )) '%s' > '%s'", src, src, dst) == 0) {
        video_file *v = NULL;
        struct video_plan p = {0};
        int rc = video_open(dst, NULL, &v);
        if (!rc)
            rc = video_plan_make(video_file_info(v), "trunc.mkv", &s, &p);
        uint8_t *buf = rc ? NULL : malloc((size_t)p.width * p.height * 3);
        for (int64_t k = 0; buf && k < p.n_frames && !rc; k++)
            rc = video_read_frames(v, &p, k, 1, &buf);
        ok(rc == SEER_OK || (rc == SEER_EDECODE && strstr(seer_last_error(), "trunc.mkv")),
           "truncated file: %s", rc ? seer_last_error() : "planned and read");
        free(buf);
        video_plan_clear(&p);
        video_close(v);
    }
    snprintf(dst, sizeof dst, "%s/noise.mp4", test_tmp_dir());
    if (vt_sh("head -c 5000 /dev/urandom > '%s'", dst) == 0) {
        video_file *v = NULL;
        int rc = video_open(dst, NULL, &v);
        ok(rc == SEER_EDECODE && strstr(seer_last_error(), "noise.mp4") && !v, "noise: %s", seer_last_error());
        video_close(v);
    }
    return done_testing();
}
