/* Tests `seer describe` (cli/describe.c) and videos in `seer ask` on a tiny random Qwen3.5
   (gen_tiny.py) and clips made at test time with ffmpeg's lavfi: --dry-run --json has exactly the
   fields issue 10 lists, its frames and tokens equal the reference's (video_ref.py plan) and its
   prompt_tokens the count a real run feeds; the description goes to stdout only; --chunk cuts a
   10-s clip into pieces with absolute times and --srt/--vtt/--chapters-json write one entry per
   chunk; several videos with a broken one in the middle: the others are described and the exit
   status is 3; usage errors exit 2. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "tap.h"
#include "video/video_test.h"

static json_t *last_json_line(const char *out)
{
    const char *p = out, *line = out;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        if (nl && nl[1])
            line = nl + 1;
        p = nl ? nl + 1 : NULL;
    }
    return json_loads(line, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, NULL);
}

static void dry_run(const char *hf, const char *d)
{
    char args[4096];
    snprintf(args, sizeof args, "describe -m '%s' --dry-run --json '%s/a.mp4'", hf, d);
    struct test_run r = test_seer(args);
    json_t *j = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    static const char *const keys[] = {"duration_seconds", "fps_source", "frames_source", "frames", "resized_width",
                                       "resized_height", "groups", "video_tokens", "prompt_tokens", "memory_bytes"};
    size_t have = 0;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        have += json_object_get(j, keys[k]) != NULL;
    ok(r.status == 0 && have == 10 && json_object_size(j) == 10, "--dry-run --json: exactly the 10 fields (%zu found)",
       have);
    test_run_free(&r);
    /* against the reference's plan of the same file */
    char out[700];
    snprintf(out, sizeof out, "%s/a.plan.json", d);
    json_t *ref = vt_sh("%s '%s' plan '%s/a.mp4' > '%s'", vt_python(), test_src_path("tests/reference/video_ref.py"),
                        d, out) == 0
                      ? json_load_file(out, 0, NULL)
                      : NULL;
    const json_t *frames = json_object_get(j, "frames"), *idx = json_object_get(ref, "indices");
    size_t same = 0;
    for (size_t k = 0; k < json_array_size(frames); k++)
        same += json_integer_value(json_object_get(json_array_get(frames, k), "index")) ==
                json_integer_value(json_array_get(idx, k));
    ok(ref && same == json_array_size(idx) && json_array_size(frames) == same &&
           json_integer_value(json_object_get(j, "video_tokens")) == json_integer_value(json_object_get(ref, "tokens")) &&
           json_integer_value(json_object_get(j, "resized_width")) ==
               json_integer_value(json_object_get(ref, "resized_width")),
       "--dry-run: %zu frame indices, size and %lld video tokens as the reference", same,
       (long long)json_integer_value(json_object_get(j, "video_tokens")));
    /* the real run feeds the predicted number of tokens */
    snprintf(args, sizeof args, "describe -m '%s' --device cpu -t 2 --json -n 2 --temp 0 '%s/a.mp4'", hf, d);
    r = test_seer(args);
    json_t *run = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    const json_t *ch = json_array_get(json_object_get(run, "chunks"), 0);
    ok(r.status == 0 && json_integer_value(json_object_get(ch, "prompt_tokens")) ==
                            json_integer_value(json_object_get(j, "prompt_tokens")),
       "prompt_tokens: --dry-run says %lld, the run fed %lld", (long long)json_integer_value(json_object_get(j, "prompt_tokens")),
       (long long)json_integer_value(json_object_get(ch, "prompt_tokens")));
    test_run_free(&r);
    /* without --json: a short table on stdout */
    snprintf(args, sizeof args, "describe -m '%s' --dry-run '%s/a.mp4'", hf, d);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.out, "video tokens") && strstr(r.out, "<0.") && strstr(r.out, "prompt:"),
       "--dry-run: a human table with the stamps");
    test_run_free(&r);
    json_decref(run);
    json_decref(ref);
    json_decref(j);
}

static void chunks(const char *hf, const char *d)
{
    char args[4096], path[700];
    snprintf(args, sizeof args,
             "describe -m '%s' --device cpu -t 2 --temp 0 -n 3 --chunk 4s --srt '%s/o.srt' --vtt '%s/o.vtt' "
             "--chapters-json '%s/o.json' '%s/long10.mkv'",
             hf, d, d, d, d);
    struct test_run r = test_seer(args);
    ok(r.status == 0 && strstr(r.out, "[00:00:00.000 - 00:00:04.000]") && strstr(r.out, "[00:00:08.000 - 00:00:10.000]")
           && !strstr(r.out, "frame pairs"),
       "--chunk 4s: three pieces with absolute times on stdout, no progress there (%s)", r.err);
    test_run_free(&r);
    snprintf(path, sizeof path, "%s/o.json", d);
    json_t *j = json_load_file(path, JSON_ALLOW_NUL, NULL); /* a random model's text may hold U+0000 */
    ok(json_array_size(j) == 3 && json_real_value(json_object_get(json_array_get(j, 2), "start")) == 8.0 &&
           json_real_value(json_object_get(json_array_get(j, 2), "end")) == 10.0,
       "--chapters-json: 3 entries, the last 8 s .. 10 s");
    json_decref(j);
    snprintf(path, sizeof path, "%s/o.srt", d);
    size_t n = 0;
    char *srt = (char *)vt_read(path, &n);
    if (srt)
        srt[n] = '\0';
    ok(srt && !strncmp(srt, "1\n00:00:00,000 --> 00:00:04,000\n", 32) && strstr(srt, "\n3\n00:00:08,000 --> 00:00:10,000\n"),
       "--srt: numbered cues with comma milliseconds");
    free(srt);
    snprintf(path, sizeof path, "%s/o.vtt", d);
    char *vtt = (char *)vt_read(path, &n);
    if (vtt)
        vtt[n] = '\0';
    ok(vtt && !strncmp(vtt, "WEBVTT\n\n00:00:00.000 --> 00:00:04.000\n", 38), "--vtt: WEBVTT header and cues");
    free(vtt);
    /* the model's stamps are the file's times: the last chunk's prompt starts at 8 s */
    snprintf(args, sizeof args, "describe -m '%s' --dry-run --start 8 --end 10 '%s/long10.mkv'", hf, d);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.out, "<8.") && !strstr(r.out, "<0."), "--start 8: stamps from 8 s on");
    test_run_free(&r);
    /* the same part as MM:SS and HH:MM:SS.s (cli_parse_time) */
    snprintf(args, sizeof args, "describe -m '%s' --dry-run --start 0:08 --end 00:00:10.0 '%s/long10.mkv'", hf, d);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.out, "<8.") && !strstr(r.out, "<0."), "--start 0:08 --end 00:00:10.0: the same part");
    test_run_free(&r);
}

static void several(const char *hf, const char *d)
{
    char args[4096];
    snprintf(args, sizeof args, "describe -m '%s' --device cpu -t 2 --temp 0 -n 2 --json '%s/a.mp4' '%s/broken.mp4' '%s/long10.mkv'",
             hf, d, d, d);
    struct test_run r = test_seer(args);
    ok(r.status == 3 && test_count_lines(r.out) == 3 && strstr(r.err, "broken.mp4") && strstr(r.out, "\"error\""),
       "a broken file among three: reported, the others described, exit 3 (status %d)", r.status);
    json_t *last = last_json_line(r.out);
    ok(json_array_size(json_object_get(last, "chunks")) == 1, "the video after the broken one was described");
    json_decref(last);
    test_run_free(&r);
    r = test_seer("describe --dry-run --chunk 0s x.mp4");
    ok(r.status == 2 && strstr(r.err, "--chunk"), "--chunk 0s: usage error");
    test_run_free(&r);
    static const char *const bad_times[] = {"1:2:3:4", "-3", "x", "1:", ""};
    for (size_t k = 0; k < sizeof bad_times / sizeof *bad_times; k++) {
        snprintf(args, sizeof args, "describe --dry-run --start '%s' x.mp4", bad_times[k]);
        r = test_seer(args);
        ok(r.status == 2 && strstr(r.err, "--start"), "--start '%s': usage error", bad_times[k]);
        test_run_free(&r);
    }
    snprintf(args, sizeof args, "ask -m '%s' -p 'What?' --dry-run --json '%s/a.mp4'", hf, d);
    r = test_seer(args);
    json_t *dry = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    test_run_free(&r);
    snprintf(args, sizeof args, "ask -m '%s' --device cpu -t 2 --temp 0 -n 2 -p 'What?' --json '%s/a.mp4'", hf, d);
    r = test_seer(args);
    json_t *j = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    ok(r.status == 0 && json_integer_value(json_object_get(j, "prompt_tokens")) ==
                            json_integer_value(json_object_get(dry, "prompt_tokens")) &&
           json_array_size(json_object_get(dry, "videos")) == 1,
       "seer ask takes a video: %lld prompt tokens fed, --dry-run said %lld",
       (long long)json_integer_value(json_object_get(j, "prompt_tokens")),
       (long long)json_integer_value(json_object_get(dry, "prompt_tokens")));
    json_decref(j);
    json_decref(dry);
    test_run_free(&r);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!vt_python() || vt_sh("command -v ffmpeg >/dev/null"))
        return plan_skip_all("ffmpeg or a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    const char *d = test_tmp_dir();
    char dir[700], hf[800];
    snprintf(dir, sizeof dir, "%s/tiny", d);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    bool made = vt_sh("%s '%s' --out '%s' --preset tiny --seed %llu --no-gguf", vt_python(),
                      test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)seed) == 0 &&
                vt_sh("ffmpeg -v error -f lavfi -i testsrc=size=96x72:rate=30:duration=3 -f lavfi -i sine=duration=3 "
                      "-c:v libx264 -pix_fmt yuv420p -c:a aac '%s/a.mp4' </dev/null", d) == 0 &&
                vt_sh("ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=5:duration=10 -c:v libx264 "
                      "'%s/long10.mkv' </dev/null", d) == 0 &&
                vt_sh("head -c 3000 /dev/urandom > '%s/broken.mp4'", d) == 0;
    if (!ok(made, "tiny model and clips made (seed %llu)", (unsigned long long)seed))
        return done_testing();
    dry_run(hf, d);
    chunks(hf, d);
    several(hf, d);
    return done_testing();
}
