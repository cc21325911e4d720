/* Tests the video and measuring functions of seer.h (api/video.c, api/generate.c) through the API
   alone, on a tiny random Qwen3.5 (gen_tiny.py, fresh seed) as an HF directory loaded fully and with
   vocab_only, and clips made at test time with ffmpeg's lavfi:
   - seer_is_video tells videos from images, missing files and stdin;
   - seer_video_measure gives the same plan for a path, an opened video and a vocab_only model; the
     opened video's arrays hold the plan (pair times the mean of their frames', tokens pairs · h · w);
     no model: the default plan, prompt_tokens and memory_bytes -1;
   - seer_chat_measure and seer_text_measure equal the prompt_tokens the real call then feeds (chat
     with an image and an opened video's part, a second turn with the pending stop token, --think, a
     raw prompt), on the full model and on a measuring (vocab_only) context, and change nothing;
   - a measuring context refuses to generate (SEER_EINVAL); seer_image_decode's pixels measure as
     the file does;
   - on_video_progress sees every pair in order and stops the call with SEER_ECANCELED; seer_result's
     video fields count this call only (an opened video used twice: the same counts twice, no demux
     time); a part of an opened video gives the same greedy tokens as the same part by path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

static char dir[600], hf[700], clip[700], clip2[700], png[700];

static seer_model *load(int vocab_only)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.n_threads = 2;
    mp.vocab_only = vocab_only;
    seer_model *m = NULL;
    if (seer_model_load(hf, &mp, &m) != SEER_OK)
        diag("load (vocab_only %d): %s", vocab_only, seer_last_error());
    return m;
}

static void is_video(void)
{
    ok(seer_is_video(clip) == 1 && seer_is_video(clip2) == 1, "seer_is_video: an MP4 and a Matroska file are videos");
    ok(seer_is_video(png) == 0 && seer_is_video("-") == 0 && seer_is_video("/nonexistent/x.mp4") == 0,
       "seer_is_video: a PNG, stdin and a missing file are not");
    char junk[700];
    snprintf(junk, sizeof junk, "%s/junk.mp4", dir);
    seer_video *v = NULL;
    int rc = if_sh("head -c 3000 /dev/urandom > '%s'", junk) ? -100 : seer_video_open(NULL, junk, &v);
    ok(rc == SEER_EDECODE && !v && strstr(seer_last_error(), "junk.mp4") && !seer_is_video(junk),
       "random bytes: not a video, and seer_video_open says SEER_EDECODE naming the file");
}

static bool same_plan(const seer_video_info *a, const seer_video_info *b)
{
    return a->sampled_frames == b->sampled_frames && a->pairs == b->pairs && a->resized_width == b->resized_width &&
           a->resized_height == b->resized_height && a->tokens == b->tokens && a->prompt_tokens == b->prompt_tokens &&
           a->memory_bytes == b->memory_bytes && a->frames == b->frames && a->width == b->width &&
           a->height == b->height && a->duration == b->duration && !strcmp(a->note, b->note);
}

static void measure(seer_model *full, seer_model *voc)
{
    seer_video *v = NULL;
    seer_video_info byp = {0}, byv = {0}, voc_info = {0}, none = {0};
    /* 3 s at 2 fps would be 6 frames: 5 makes an odd count, whose last pair repeats its frame */
    seer_video_input in = {.path = clip, .max_frames = 5};
    int rc = seer_video_measure(full, &in, &byp);
    ok(rc == SEER_OK && byp.sampled_frames == 5 && byp.pairs == 3 && !byp.frame_index && !byp.pair_seconds,
       "by path: 5 frames in 3 pairs, no arrays (%s, %lld frames)", rc ? seer_last_error() : "ok",
       (long long)byp.sampled_frames);
    rc = seer_video_open(voc, clip, &v);
    in.video = v;
    in.path = NULL;
    if (!ok(rc == SEER_OK, "seer_video_open on a vocab_only model"))
        return;
    rc = seer_video_measure(voc, &in, &voc_info);
    ok(rc == SEER_OK && same_plan(&byp, &voc_info), "an opened video on the vocab_only model: the same plan and cost");
    rc = seer_video_measure(full, &in, &byv);
    ok(rc == SEER_OK && same_plan(&byp, &byv) && byv.frame_index && byv.frame_seconds && byv.pair_seconds,
       "an opened video on the full model: the same plan, with its arrays");
    bool sane = byv.video_seconds > 2.9 && byv.video_seconds <= byv.duration + 1e-9;
    for (int64_t k = 0; k < byv.sampled_frames && sane; k++)
        sane = byv.frame_index[k] >= 0 && byv.frame_index[k] < byv.frames &&
               (k == 0 || (byv.frame_index[k] > byv.frame_index[k - 1] && byv.frame_seconds[k] > byv.frame_seconds[k - 1]));
    for (int64_t g = 0; g < byv.pairs && sane; g++) {
        const int64_t b = 2 * g + 1 < byv.sampled_frames ? 2 * g + 1 : 2 * g; /* an odd count repeats the last */
        sane = byv.pair_seconds[g] == (byv.frame_seconds[2 * g] + byv.frame_seconds[b]) / 2;
    }
    ok(sane && byv.tokens == byv.pairs * (byv.resized_width / 32) * (byv.resized_height / 32) &&
           byv.prompt_tokens > byv.tokens + 2 * byv.pairs,
       "the plan: increasing frames, pair times the mean of their frames', %lld tokens, %lld in the prompt",
       (long long)byv.tokens, (long long)byv.prompt_tokens);
    in.max_tokens = byv.tokens / 3;
    rc = seer_video_measure(full, &in, &byv);
    ok(rc == SEER_OK && byv.tokens <= in.max_tokens && byv.note[0], "max_tokens %lld: %lld tokens, a note (%s)",
       (long long)in.max_tokens, (long long)byv.tokens, byv.note);
    in = (seer_video_input){.path = clip};
    rc = seer_video_measure(NULL, &in, &none);
    ok(rc == SEER_OK && none.sampled_frames > 0 && none.prompt_tokens == -1 && none.memory_bytes == -1,
       "no model: a plan (%lld frames), prompt_tokens and memory_bytes -1", (long long)none.sampled_frames);
    seer_video_free(v);
    seer_video_free(NULL);
}

/* Adds the system text and a user message of the image and a part of the opened video. */
static int add_turn(seer_context *c, seer_video *v)
{
    seer_image_input img = {.path = png};
    seer_video_input vin = {.video = v, .start_seconds = 1.0, .end_seconds = 2.5, .max_frames = 4};
    int rc = seer_chat_add(c, "system", "Be brief.");
    return rc ? rc : seer_chat_add_media(c, "user", &img, 1, &vin, 1, "What changes?");
}

static void chat_counts(seer_model *full, seer_model *voc)
{
    seer_context *c = NULL, *mc = NULL;
    seer_video *v = NULL;
    seer_result r = {0};
    seer_generate_params p = test_greedy(3);
    int64_t n_full = -1, n_again = -1, n_voc = -1, n2 = -1;
    int rc = seer_video_open(full, clip, &v);
    if (!rc)
        rc = seer_context_create(full, NULL, &c);
    if (!rc)
        rc = seer_context_create(voc, NULL, &mc);
    if (!ok(rc == SEER_OK, "contexts made, video opened (%s)", rc ? seer_last_error() : "ok"))
        return;
    rc = add_turn(c, v);
    if (!rc)
        rc = add_turn(mc, v);
    if (!rc)
        rc = seer_chat_measure(c, &p, &n_full);
    if (!rc)
        rc = seer_chat_measure(c, &p, &n_again);
    if (!rc)
        rc = seer_chat_measure(mc, &p, &n_voc);
    if (!rc)
        rc = seer_chat_generate(c, &p, &r);
    ok(rc == SEER_OK && n_full == r.prompt_tokens && n_again == n_full && n_voc == n_full,
       "image + a part of an opened video: measured %lld (again %lld, vocab_only %lld), fed %lld (%s)",
       (long long)n_full, (long long)n_again, (long long)n_voc, (long long)r.prompt_tokens,
       rc ? seer_last_error() : "ok");
    seer_result_clear(&r);
    /* the second turn: the stop token held pending, then the new message */
    rc = seer_chat_add(c, "user", "And then?");
    if (!rc)
        rc = seer_chat_measure(c, &p, &n2);
    if (!rc)
        rc = seer_chat_generate(c, &p, &r);
    ok(rc == SEER_OK && n2 == r.prompt_tokens && n2 > 0, "second turn: measured %lld, fed %lld", (long long)n2,
       (long long)r.prompt_tokens);
    seer_result_clear(&r);
    rc = seer_chat_generate(mc, &p, &r);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), "vocab_only") && !r.text,
       "a measuring context refuses seer_chat_generate: %s", seer_last_error());
    rc = seer_generate_text(mc, "Hi", &p, &r);
    ok(rc == SEER_EINVAL, "... and seer_generate_text");
    /* with a think block the rendering differs, and so does the count */
    p.think = 1;
    int64_t nt = -1;
    rc = seer_context_reset(c);
    if (!rc)
        rc = add_turn(c, v);
    if (!rc)
        rc = seer_chat_measure(c, &p, &nt);
    if (!rc)
        rc = seer_chat_generate(c, &p, &r);
    ok(rc == SEER_OK && nt == r.prompt_tokens && nt != n_full, "think: measured %lld, fed %lld", (long long)nt,
       (long long)r.prompt_tokens);
    seer_result_clear(&r);
    seer_context_free(mc);
    seer_context_free(c);
    seer_video_free(v);
}

static void raw_counts(seer_model *full, seer_model *voc)
{
    static const char prompt[] = "<|vision_start|><|image_pad|><|vision_end|>Which colour?";
    seer_context *c = NULL, *mc = NULL;
    seer_image_input img = {.path = png};
    seer_result r = {0};
    seer_generate_params p = test_greedy(2);
    int64_t n = -1, nv = -1;
    int rc = seer_context_create(full, NULL, &c);
    if (!rc)
        rc = seer_context_create(voc, NULL, &mc);
    if (!rc)
        rc = seer_text_measure(c, prompt, &img, 1, &n);
    if (!rc)
        rc = seer_text_measure(mc, prompt, &img, 1, &nv);
    if (!rc)
        rc = seer_generate_text_images(c, prompt, &img, 1, &p, &r);
    ok(rc == SEER_OK && n == r.prompt_tokens && nv == n, "raw prompt with an image: measured %lld (vocab_only %lld), "
       "fed %lld", (long long)n, (long long)nv, (long long)r.prompt_tokens);
    seer_result_clear(&r);
    rc = seer_text_measure(mc, "no placeholder", &img, 1, &n);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), "placeholder"), "an image without its placeholder: SEER_EINVAL");
    /* stdin-like input: decoded once, then measured and fed as pixels */
    uint8_t *px = NULL;
    int32_t w = 0, h = 0;
    seer_image_info a = {0}, b = {0};
    rc = seer_image_decode(voc, &img, &px, &w, &h);
    seer_image_input pix = {.rgb = px, .width = w, .height = h};
    if (!rc)
        rc = seer_image_measure(voc, &img, &a);
    if (!rc)
        rc = seer_image_measure(voc, &pix, &b);
    ok(rc == SEER_OK && w == 53 && h == 41 && a.tokens == b.tokens && a.resized_width == b.resized_width &&
           a.resized_height == b.resized_height,
       "seer_image_decode: %dx%d pixels measure as the file (%lld tokens)", w, h, (long long)b.tokens);
    seer_free(px);
    seer_context_free(mc);
    seer_context_free(c);
}

struct seen {
    int64_t calls, last_done, total;
    bool in_order, named;
    int64_t stop_at; /* stop after this pair (0: never) */
};

static int on_pairs(const char *path, int64_t done, int64_t total, void *user)
{
    struct seen *s = user;
    s->calls++;
    s->in_order &= done == s->last_done + 1 && done <= total;
    s->named &= path && strstr(path, "a.mp4") != NULL;
    s->last_done = done, s->total = total;
    return s->stop_at && done >= s->stop_at;
}

/* One user message of `vin`, generated on a fresh context with p. */
static int describe(seer_model *m, const seer_video_input *vin, seer_generate_params *p, seer_result *r)
{
    seer_context *c = NULL;
    int rc = seer_context_create(m, NULL, &c);
    if (!rc)
        rc = seer_chat_add_media(c, "user", NULL, 0, vin, 1, "Describe.");
    if (!rc)
        rc = seer_chat_generate(c, p, r);
    seer_context_free(c);
    return rc;
}

static void progress_and_timings(seer_model *full)
{
    seer_video *v = NULL;
    seer_video_info info = {0};
    seer_generate_params p = test_greedy(4);
    struct seen s = {.in_order = true, .named = true};
    seer_result r1 = {0}, r2 = {0}, r3 = {0};
    seer_video_input by_path = {.path = clip, .start_seconds = 0.5, .end_seconds = 2.0};
    seer_video_input opened = by_path;
    int rc = seer_video_open(full, clip, &v);
    opened.video = v;
    opened.path = NULL;
    if (!rc)
        rc = seer_video_measure(full, &opened, &info);
    p.on_video_progress = on_pairs;
    p.user_data = &s;
    if (!rc)
        rc = describe(full, &by_path, &p, &r1);
    ok(rc == SEER_OK && s.calls == info.pairs && s.total == info.pairs && s.in_order && s.named,
       "on_video_progress: %lld calls for %lld pairs, in order, naming the file", (long long)s.calls,
       (long long)info.pairs);
    ok(r1.video_frames == info.sampled_frames && r1.video_pairs == info.pairs && r1.video_tokens == info.tokens &&
           r1.video_frames_decoded >= r1.video_frames && r1.video_demux_seconds > 0 && r1.video_decode_seconds > 0 &&
           r1.video_resize_seconds > 0 && r1.video_patchify_seconds > 0 && r1.video_encode_seconds > 0 &&
           r1.vision_seconds >= r1.video_decode_seconds + r1.video_encode_seconds,
       "seer_result: %lld frames (%lld decoded, %lld seeks), %lld pairs, %lld tokens, each stage timed",
       (long long)r1.video_frames, (long long)r1.video_frames_decoded, (long long)r1.video_seeks,
       (long long)r1.video_pairs, (long long)r1.video_tokens);
    p.on_video_progress = NULL;
    if (!rc)
        rc = describe(full, &opened, &p, &r2);
    if (!rc)
        rc = describe(full, &opened, &p, &r3);
    ok(rc == SEER_OK && r2.n_tokens == r1.n_tokens && !memcmp(r2.tokens, r1.tokens, r1.n_tokens * sizeof *r1.tokens),
       "the part of an opened video gives the same greedy tokens as by path");
    ok(rc == SEER_OK && r2.video_demux_seconds == 0 && r3.video_demux_seconds == 0 &&
           r2.video_frames == r1.video_frames && r3.video_frames == r1.video_frames &&
           r3.video_frames_decoded <= r1.video_frames_decoded + 2 * r1.video_frames && r3.video_frames_decoded > 0,
       "an opened video used twice: no demux time, each call its own counts (%lld, %lld frames decoded)",
       (long long)r2.video_frames_decoded, (long long)r3.video_frames_decoded);
    s = (struct seen){.in_order = true, .named = true, .stop_at = 1};
    p.on_video_progress = on_pairs;
    seer_result r4 = {0};
    rc = describe(full, &by_path, &p, &r4);
    ok(rc == SEER_ECANCELED && s.calls == 1 && !r4.text && strstr(seer_last_error(), "a.mp4"),
       "on_video_progress returning non-zero: SEER_ECANCELED after 1 pair (%s)", seer_last_error());
    seer_result_clear(&r1), seer_result_clear(&r2), seer_result_clear(&r3);
    seer_video_free(v);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!if_python_pil() || system("command -v ffmpeg >/dev/null 2>&1"))
        return plan_skip_all("ffmpeg or a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    snprintf(hf, sizeof hf, "%s/tiny/hf", dir);
    snprintf(clip, sizeof clip, "%s/a.mp4", dir);
    snprintf(clip2, sizeof clip2, "%s/b.mkv", dir);
    snprintf(png, sizeof png, "%s/x.png", dir);
    char tiny[700];
    snprintf(tiny, sizeof tiny, "%s/tiny", dir);
    bool made = if_gen_tiny(tiny, "tiny", seed, "", "f32") == 0 && if_noise_image(png, 53, 41) == 0 &&
                if_sh("ffmpeg -v error -f lavfi -i testsrc=size=96x72:rate=30:duration=3 -f lavfi -i sine=duration=3 "
                      "-c:v libx264 -pix_fmt yuv420p -c:a aac '%s' </dev/null",
                      clip) == 0 &&
                if_sh("ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=5:duration=2 -c:v libx264 '%s' </dev/null",
                      clip2) == 0;
    if (!ok(made, "tiny model, image and clips made (seed %llu)", (unsigned long long)seed))
        return done_testing();
    is_video();
    seer_model *full = load(0), *voc = load(1);
    if (ok(full && voc, "the model loaded fully and vocab_only")) {
        measure(full, voc);
        chat_counts(full, voc);
        raw_counts(full, voc);
        progress_and_timings(full);
    }
    seer_model_free(voc);
    seer_model_free(full);
    return done_testing();
}
