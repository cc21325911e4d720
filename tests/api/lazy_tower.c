/* Tests that the vision tower is loaded on first use (api/vision.c api_vision_tower), on a tiny
   random Qwen3.5 (gen_tiny.py, fresh seed) as an HF directory and as a GGUF with its mmproj beside
   it: a text generation leaves the model without tower weights (m->vit NULL: an internal test, it
   reads api/internal.h), the first image loads them, a second image reuses them, and greedy tokens
   after an image are those a model whose tower was loaded before any text gives. Eight threads that
   ask for the tower of a fresh model at once all get the one tower. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

#define N_GEN 8
#define N_THREADS 8

static seer_model *load(const char *path)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.n_threads = 2;
    seer_model *m = NULL;
    if (seer_model_load(path, &mp, &m) != SEER_OK)
        diag("%s: %s", path, seer_last_error());
    return m;
}

static seer_generate_params greedy(void)
{
    seer_generate_params p = seer_generate_params_default();
    p.sampling.temperature = 0;
    p.sampling.presence_penalty = 0;
    p.max_tokens = N_GEN;
    return p;
}

/* One chat turn with a random-noise image; the greedy tokens go to toks[N_GEN] (-1 past the end). */
static int image_turn(seer_model *m, const uint8_t *px, int w, int h, int32_t *toks)
{
    seer_context *c;
    seer_result r = {0};
    seer_generate_params gp = greedy();
    seer_image_input in = {.rgb = px, .width = w, .height = h};
    int rc = seer_context_create(m, NULL, &c);
    if (rc)
        return rc;
    if (!(rc = seer_chat_add_images(c, "user", &in, 1, "What is this?")))
        rc = seer_chat_generate(c, &gp, &r);
    for (size_t i = 0; i < N_GEN; i++)
        toks[i] = i < r.n_tokens ? r.tokens[i] : -1;
    seer_result_clear(&r);
    seer_context_free(c);
    return rc;
}

struct racer {
    seer_model *m;
    pthread_barrier_t *start;
    vit_model *got;
    int rc;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    pthread_barrier_wait(r->start);
    r->rc = api_vision_tower(r->m, &r->got);
    return NULL;
}

static void check(const char *path, const char *what)
{
    seer_model *m = load(path), *eager = load(path);
    if (!ok(m && eager && m->vision_src && !m->vit, "%s: loads with a tower to load (%s), none loaded", what,
            m && m->vision_src ? m->vision_src : "none")) {
        seer_model_free(m), seer_model_free(eager);
        return;
    }
    seer_context *c;
    seer_result r = {0};
    seer_generate_params gp = greedy();
    int rc = seer_context_create(m, NULL, &c);
    if (!rc && !(rc = seer_chat_add(c, "user", "Say something.")))
        rc = seer_chat_generate(c, &gp, &r);
    ok(rc == SEER_OK && r.n_tokens > 0 && !m->vit, "%s: a text generation (%zu tokens) loads no tower: %s", what,
       r.n_tokens, rc ? seer_last_error() : "ok");
    seer_result_clear(&r);
    seer_context_free(c);

    const int w = 40 + (int)(test_rand_u64() % 300), h = 40 + (int)(test_rand_u64() % 300);
    uint8_t *px = malloc((size_t)w * (size_t)h * 3);
    for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++)
        px[i] = (uint8_t)test_rand_u64();
    /* the reference: the same model loaded again, its tower loaded before anything else */
    vit_model *ev;
    int32_t want[N_GEN], got[N_GEN];
    ok(api_vision_tower(eager, &ev) == SEER_OK && ev && image_turn(eager, px, w, h, want) == SEER_OK,
       "%s: the reference model, tower loaded first, answers a %dx%d image", what, w, h);
    rc = image_turn(m, px, w, h, got);
    vit_model *first = m->vit;
    ok(rc == SEER_OK && first, "%s: the first image loads the tower: %s", what, rc ? seer_last_error() : "ok");
    ok(!rc && !memcmp(got, want, sizeof got), "%s: and gives the reference's %d greedy tokens", what, N_GEN);
    rc = image_turn(m, px, w, h, got);
    ok(rc == SEER_OK && m->vit == first && !memcmp(got, want, sizeof got),
       "%s: a second image uses the same tower, same tokens", what);
    free(px);
    seer_model_free(m);
    seer_model_free(eager);

    /* N threads ask a fresh model for its tower at once */
    m = load(path);
    if (!m)
        return;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_THREADS);
    struct racer rs[N_THREADS];
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        rs[i] = (struct racer){m, &start, NULL, -1};
        pthread_create(&th[i], NULL, race, &rs[i]);
    }
    int same = 1;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        same &= rs[i].rc == SEER_OK && rs[i].got && rs[i].got == m->vit;
    }
    ok(same, "%s: %d threads asking at once all get the model's one tower", what, N_THREADS);
    pthread_barrier_destroy(&start);
    seer_model_free(m);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    seer_set_log_level(SEER_LOG_ERROR);
    char dir[600], hf[700], gguf_file[700];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    if (!ok(if_gen_tiny(dir, "tiny", seed, "", "f16") == 0, "tiny model generated"))
        return done_testing();
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(gguf_file, sizeof gguf_file, "%s/model-f32.gguf", dir);
    check(hf, "HF directory");
    check(gguf_file, "GGUF + mmproj");
    return done_testing();
}
