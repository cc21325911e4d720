/* Tests the server's shape: one model shared by several threads, each with its own context. Three
   jobs on a tiny random Qwen3.5 with a vision tower (gen_tiny.py, fresh seed, HF directory, CPU):
   describe (a video clip made with ffmpeg's lavfi, the progress callback counting its pairs), ask
   (a chat question about an image) and OCR-like (a raw prompt with an image, as `seer ocr` feeds a
   page). Each job runs alone first; then every pair of jobs (a job with itself too) runs on two
   threads started together, and each must give the same greedy tokens, prompt token count and
   per-call video counts as alone. On the CPU, then on Vulkan when there is a device (a skip
   otherwise, a failure with SEER_REQUIRE_VULKAN=1).

   Under ThreadSanitizer (a manual or CI-optional step: the test takes ~10 s under TSan, a TSan
   build of the library is the cost; the plain build runs this as a normal test):
     cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEER_VULKAN=OFF \
       -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
     cmake --build build-tsan --target t_api_threads
     TSAN_OPTIONS=suppressions=$PWD/tests/tsan.supp build-tsan/t/api_threads.t
   What it found (2026-11-27): before api/ took the model's device_lock, two contexts on one CPU
   model ran two jobs on the backend's one thread pool at once and the test hung (a deadlock in
   threadpool_run; the pool and the matmul's rounded-activation buffer are per backend). With the
   lock: no report in seer's code, 17/17 passing (the Vulkan half skipped: SEER_VULKAN=OFF). The only reports left are inside FFmpeg's
   frame-threaded decoders (frames freed after libavcodec's own uninstrumented workers filled them,
   in one thread's job as much as in two), which tests/tsan.supp suppresses. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

enum { DESCRIBE, ASK, OCR, N_JOBS };
static const char *const job_names[N_JOBS] = {"describe", "ask", "ocr"};
#define N_GEN 5

static char clip[700], png[700];
static seer_model *model;
static pthread_barrier_t start;

struct outcome {
    int rc;
    char err[256];
    int32_t tokens[N_GEN];
    size_t n_tokens;
    int64_t prompt_tokens, video_frames, video_tokens, pairs_seen;
    enum seer_stop_reason stop;
};

static int count_pairs(const char *path, int64_t done, int64_t total, void *user)
{
    (void)path, (void)total;
    ((struct outcome *)user)->pairs_seen = done;
    return 0;
}

/* One job on a context of its own, on the shared model. */
static void run_job(int job, struct outcome *o)
{
    seer_context *c = NULL;
    seer_result r = {0};
    seer_generate_params p = test_greedy(N_GEN);
    p.on_video_progress = count_pairs;
    p.user_data = o;
    memset(o, 0, sizeof *o);
    seer_image_input img = {.path = png};
    seer_video_input vid = {.path = clip, .max_frames = 6};
    int rc = seer_context_create(model, NULL, &c);
    if (!rc && job == DESCRIBE && !(rc = seer_chat_add_media(c, "user", NULL, 0, &vid, 1, "Describe what happens.")))
        rc = seer_chat_generate(c, &p, &r);
    if (!rc && job == ASK && !(rc = seer_chat_add_images(c, "user", &img, 1, "What colour is it?")))
        rc = seer_chat_generate(c, &p, &r);
    if (!rc && job == OCR)
        rc = seer_generate_text_images(c, "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Transcribe the "
                                       "text.<|im_end|>\n<|im_start|>assistant\n", &img, 1, &p, &r);
    o->rc = rc;
    if (rc)
        snprintf(o->err, sizeof o->err, "%s", seer_last_error());
    o->n_tokens = r.n_tokens < N_GEN ? r.n_tokens : N_GEN;
    if (r.n_tokens)
        memcpy(o->tokens, r.tokens, o->n_tokens * sizeof *o->tokens);
    o->prompt_tokens = r.prompt_tokens;
    o->stop = r.stop;
    o->video_frames = r.video_frames;
    o->video_tokens = r.video_tokens;
    seer_result_clear(&r);
    seer_context_free(c);
}

struct worker {
    int job;
    struct outcome out;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&start); /* both jobs start together */
    run_job(w->job, &w->out);
    return NULL;
}

static bool same(const struct outcome *a, const struct outcome *b)
{
    return a->rc == b->rc && a->n_tokens == b->n_tokens && !memcmp(a->tokens, b->tokens, a->n_tokens * sizeof *a->tokens) &&
           a->prompt_tokens == b->prompt_tokens && a->stop == b->stop && a->video_frames == b->video_frames &&
           a->video_tokens == b->video_tokens && a->pairs_seen == b->pairs_seen;
}

/* The jobs alone, then in pairs, on one model loaded on `device`. */
static void run_on(const char *hf, const char *device)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = device;
    mp.n_threads = 2;
    if (seer_model_load(hf, &mp, &model) != SEER_OK) {
        const char *req = getenv("SEER_REQUIRE_VULKAN");
        if (!strcmp(device, "cpu") || (req && !strcmp(req, "1")))
            ok(0, "%s: model loaded: %s", device, seer_last_error());
        else
            skip("no Vulkan device on this machine", "the jobs on Vulkan");
        return;
    }
    diag("%s", seer_model_device(model));
    struct outcome alone[N_JOBS];
    for (int j = 0; j < N_JOBS; j++) {
        run_job(j, &alone[j]);
        /* a random model may end its turn at once: no token, then, but the end of turn */
        ok(alone[j].rc == SEER_OK && (alone[j].n_tokens > 0 || alone[j].stop == SEER_STOP_EOS) &&
               (j != DESCRIBE || alone[j].pairs_seen == 3),
           "%s: %s alone: %zu tokens from a %lld-token prompt (%s)", device, job_names[j], alone[j].n_tokens,
           (long long)alone[j].prompt_tokens, alone[j].rc ? alone[j].err : "ok");
    }
    for (int a = 0; a < N_JOBS; a++)
        for (int b = a; b < N_JOBS; b++) {
            struct worker w[2] = {{.job = a}, {.job = b}};
            pthread_t t[2];
            int made_threads = 0;
            for (int k = 0; k < 2; k++)
                made_threads += pthread_create(&t[k], NULL, worker_main, &w[k]) == 0;
            if (!ok(made_threads == 2, "two threads started"))
                exit(done_testing()); /* a lone thread would wait at the barrier forever */
            for (int k = 0; k < 2; k++)
                pthread_join(t[k], NULL);
            ok(same(&w[0].out, &alone[a]) && same(&w[1].out, &alone[b]),
               "%s: %s and %s on two threads at once: each as alone (%s%s)", device, job_names[a], job_names[b],
               w[0].out.err, w[1].out.err);
        }
    seer_model_free(model);
    model = NULL;
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!if_python_pil() || system("command -v ffmpeg >/dev/null 2>&1"))
        return plan_skip_all("ffmpeg or a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    const char *d = test_tmp_dir();
    char tiny[700], hf[800];
    snprintf(tiny, sizeof tiny, "%s/tiny", d);
    snprintf(hf, sizeof hf, "%s/hf", tiny);
    snprintf(clip, sizeof clip, "%s/a.mp4", d);
    snprintf(png, sizeof png, "%s/page.png", d);
    bool made = if_gen_tiny(tiny, "tiny", seed, "", "f32") == 0 && if_noise_image(png, 90, 70) == 0 &&
                if_sh("ffmpeg -v error -f lavfi -i testsrc=size=80x64:rate=25:duration=3 -c:v libx264 "
                      "-pix_fmt yuv420p '%s' </dev/null",
                      clip) == 0;
    if (!ok(made, "tiny model, image and clip made (seed %llu)", (unsigned long long)seed))
        return done_testing();
    pthread_barrier_init(&start, NULL, 2);
    run_on(hf, "cpu");
#if SEER_HAVE_VULKAN
    run_on(hf, "vulkan");
#else
    skip("built without Vulkan (SEER_VULKAN=OFF)", "the jobs on Vulkan");
#endif
    pthread_barrier_destroy(&start);
    return done_testing();
}
