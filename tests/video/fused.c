/* Tests video prompts end to end through the public API (seer_chat_add_media → seer_chat_generate:
   video/ sampling and decoding, api/video.c's pair-by-pair encoding and placeholder expansion with
   `<t.t seconds>` stamps, api_prefill_fused's pad runs and MRoPE positions; spec §3.2, §4.5, §5.3,
   §5.4) against tests/reference/video_ref.py prompt, on tiny random models (gen_tiny.py, fresh seed)
   as an HF directory, an f32 GGUF + f32 mmproj and an f16 GGUF + f16 mmproj. One user message holds
   an image and two videos made at test time with ffmpeg's lavfi (an odd frame count, so the last
   pair repeats its frame, and a portrait clip from rotation metadata): the expanded prompt's ids,
   rope_delta, the last prompt token's logits and the greedy tokens must agree; then the same
   prompt on Vulkan vs the CPU. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "lm/chat.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "video/video_test.h"
#include "vulkan/vk_test.h"

/* Logits vs the float64 reference, f32 files: ≤ 1e-4 relative L2 (f32 accumulation only). */
#define TOL_F32 1e-4
/* f16 files hold the very same numbers (gen_tiny draws every weight exactly representable in f16). */
#define TOL_F16 1e-4
/* Vulkan vs CPU on the same f32 files. */
#define TOL_VK 1e-4
#define N_GEN 6

static const char question[] = "What happens here?";
/* v1: 70×50 at 25 fps for 2.6 s → int(65 / 25 · 2) = 5 frames (odd: the third pair repeats its
   frame), resized to 64×64; v2: 96×64 stored, shown 64×96 (display matrix). */
static const char *const videos[2] = {"v1.mp4", "v2.mp4"};

static char *tmp(const char *name)
{
    static char p[4][700];
    static int k;
    char *s = p[k++ % 4];
    snprintf(s, sizeof p[0], "%s/%s", test_tmp_dir(), name);
    return s;
}

struct ref_out {
    json_t *j;
    float *logits;
    size_t n_logits;
};

static float *read_f32(const char *path, size_t *n)
{
    size_t bytes = 0;
    unsigned char *b = vt_read(path, &bytes);
    *n = bytes / 4;
    return (float *)b;
}

/* The user message as the template renders it, tokenized: the reference's input form (one
   image placeholder, one video compound per video). */
static int32_t *prompt_ids(const seer_model *m, size_t *n)
{
    chat_part parts[4] = {{.type = CHAT_PART_IMAGE}, {.type = CHAT_PART_VIDEO}, {.type = CHAT_PART_VIDEO},
                          {.type = CHAT_PART_TEXT, .text = question}};
    chat_message msg = {.role = "user", .parts = parts, .n_parts = 4};
    chat_params p = chat_params_default();
    p.preserve_thinking = true;
    char *text = NULL;
    int32_t *ids = NULL;
    if (chat_render(&msg, 1, &p, &text, NULL) || seer_tokenize(m, text, strlen(text), 1, &ids, n))
        ids = NULL;
    free(text);
    return ids;
}

static bool run_ref(const char *hf, const int32_t *ids, size_t n, struct ref_out *out)
{
    FILE *f = fopen(tmp("ids.json"), "w");
    if (!f)
        return ok(0, "write ids.json");
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", ids[i]);
    fputs("]\n", f);
    fclose(f);
    const char *d = test_tmp_dir();
    int rc = vt_sh("%s '%s' prompt --model '%s' --ids '%s/ids.json' --image '%s/img.png' --video '%s/%s' --video "
                   "'%s/%s' --out '%s/ref.json' --logits '%s/ref.f32' --n-gen %d",
                   vt_python(), test_src_path("tests/reference/video_ref.py"), hf, d, d, d, videos[0], d, videos[1],
                   d, d, N_GEN + 1);
    if (!ok(rc == 0, "reference computed"))
        return false;
    out->j = json_load_file(tmp("ref.json"), 0, NULL);
    out->logits = read_f32(tmp("ref.f32"), &out->n_logits);
    return ok(out->j && out->logits, "reference output read");
}

/* The prompt (image + two videos + question) in a fresh context; *c keeps the state. */
static int feed(seer_model *m, int64_t n_gen, seer_context **c, seer_result *r)
{
    seer_image_input img = {.path = tmp("img.png")};
    seer_video_input v[2] = {{.path = tmp(videos[0])}, {.path = tmp(videos[1])}};
    seer_generate_params p = test_greedy(n_gen);
    int rc = seer_context_create(m, NULL, c);
    if (!rc && !(rc = seer_chat_add_media(*c, "user", &img, 1, v, 2, question)))
        rc = seer_chat_generate(*c, &p, r);
    return rc;
}

static void check_prompt(const seer_context *c, const seer_result *r, const struct ref_out *ref, double tol,
                         const char *what, float **logits_out)
{
    const json_t *ids = json_object_get(ref->j, "ids");
    size_t n = json_array_size(ids), same = 0;
    for (size_t i = 0; i < n && i < c->n_fed; i++)
        same += c->fed[i] == json_integer_value(json_array_get(ids, i));
    ok(c->n_fed == n && same == n && r->prompt_tokens == (int64_t)n,
       "%s: %zu prompt tokens fed as the reference's %zu (%zu identical: stamps, pads, text)", what, c->n_fed, n, same);
    const int64_t delta = c->st->pos_next - c->st->n_past;
    ok(delta == json_integer_value(json_object_get(ref->j, "rope_delta")), "%s: rope_delta %lld == reference %lld",
       what, (long long)delta, (long long)json_integer_value(json_object_get(ref->j, "rope_delta")));
    const size_t V = (size_t)c->m->lm->cfg.n_vocab;
    double e = V == ref->n_logits ? rel_l2(c->logits, ref->logits, V) : INFINITY;
    ok(e <= tol, "%s: last prompt token logits vs reference rel L2 %.2e (<= %.0e)", what, e, tol);
    if (logits_out && (*logits_out = malloc(V * sizeof(float))))
        memcpy(*logits_out, c->logits, V * sizeof(float));
}

static void check_greedy(const seer_model *m, const seer_result *r, const struct ref_out *ref, const char *what)
{
    const json_t *g = json_object_get(ref->j, "greedy");
    size_t n = 0, same = 0;
    for (; n < json_array_size(g); n++) {
        int32_t want = (int32_t)json_integer_value(json_array_get(g, n));
        if (want >= m->n_vocab_real) { /* the reference masks the padding rows as seer does */
            ok(0, "%s: the reference's pick %d at step %zu is a token", what, want, n);
            return;
        }
        if (n == r->n_tokens) {
            if (r->stop == SEER_STOP_EOS)
                same += want == m->id_im_end || want == m->id_endoftext, n++;
            break;
        }
        same += r->tokens[n] == want;
    }
    ok(n > 0 && same == n, "%s: %zu greedy tokens identical to the reference (%zu compared)", what, same, n);
}

static void run_form(const char *model, const char *mmproj, const char *device, const struct ref_out *ref, double tol,
                     const char *what, float **logits_out)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = device;
    mp.n_threads = 2;
    mp.mmproj = mmproj;
    /* video_ref.py resizes with Pillow (numpy has no torchvision); transformers' own default resize
       is checked against transformers itself (tests/reference/hf_vision_test.py) */
    mp.resize = "pillow";
    mp.exact = 1; /* the reference path, held to 1e-4: the default's bf16 tower has its own bound
                     (tests/vision/vit.c) */
    seer_model *m = NULL;
    int rc = seer_model_load(model, &mp, &m);
    if (rc && !strcmp(device, "vulkan") && !vk_test_required()) {
        skip("no Vulkan device on this machine", what);
        return;
    }
    if (!ok(rc == SEER_OK, "%s: loads (%s)", what, rc ? seer_last_error() : "ok"))
        return;
    diag("%s: %s", what, seer_model_device(m));
    seer_context *c = NULL;
    seer_result r = {0};
    rc = feed(m, 0, &c, &r);
    if (ok(rc == SEER_OK, "%s: image + two videos prefilled (%s)", what, rc ? seer_last_error() : "ok"))
        check_prompt(c, &r, ref, tol, what, logits_out);
    seer_result_clear(&r);
    seer_context_free(c);
    c = NULL;
    rc = feed(m, N_GEN, &c, &r);
    if (ok(rc == SEER_OK, "%s: greedy generation (%s)", what, rc ? seer_last_error() : "ok"))
        check_greedy(m, &r, ref, what);
    seer_result_clear(&r);
    seer_context_free(c);
    seer_model_free(m);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!vt_python() || vt_sh("command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null"))
        return plan_skip_all("ffmpeg, ffprobe or a python3 with numpy and Pillow missing (scripts/install-deps.sh)");
    const char *d = test_tmp_dir();
    bool made =
        vt_sh("ffmpeg -v error -f lavfi -i testsrc=size=70x50:rate=25:duration=2.6 -c:v libx264 -pix_fmt yuv444p "
              "'%s/v1.mp4' </dev/null",
              d) == 0 &&
        vt_sh("ffmpeg -v error -f lavfi -i testsrc2=size=96x64:rate=30:duration=1.9 -c:v libx264 -pix_fmt yuv420p "
              "'%s/v2s.mp4' </dev/null && ffmpeg -v error -i '%s/v2s.mp4' -c copy -metadata:s:v:0 rotate=90 "
              "'%s/v2.mp4' </dev/null",
              d, d, d) == 0 &&
        vt_sh("%s -c 'import numpy as np; from PIL import Image; r = np.random.default_rng(%llu); "
              "Image.fromarray(r.integers(0, 256, (80, 100, 3), dtype=np.uint8)).save(\"%s/img.png\")'",
              vt_python(), (unsigned long long)(seed >> 1), d) == 0;
    char dir[700], hf[800];
    snprintf(dir, sizeof dir, "%s/tiny", d);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    if (!ok(made, "two test videos and an image made") ||
        !ok(vt_sh("%s '%s' --out '%s' --preset tiny --seed %llu --mmproj-types f32,f16", vt_python(),
                  test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)seed) == 0,
            "tiny model generated (seed %llu)", (unsigned long long)seed))
        return done_testing();
    struct ref_out ref = {0};
    {
        seer_model_params mp = seer_model_params_default();
        mp.device = "cpu";
        seer_model *m = NULL;
        size_t n = 0;
        int32_t *ids = NULL;
        if (ok(seer_model_load(hf, &mp, &m) == SEER_OK && (ids = prompt_ids(m, &n)), "prompt rendered and tokenized"))
            run_ref(hf, ids, n, &ref);
        seer_free(ids);
        seer_model_free(m);
    }
    if (!ref.j)
        return done_testing();
    static const struct { const char *model, *mmproj; double tol; } forms[] = {
        {"hf", NULL, TOL_F32}, {"model-f32.gguf", "mmproj-f32.gguf", TOL_F32},
        {"model-f16.gguf", "mmproj-f16.gguf", TOL_F16}};
    float *cpu = NULL;
    char model[900], mmproj[900], what[1000];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(model, sizeof model, "%s/%s", dir, forms[i].model);
        snprintf(mmproj, sizeof mmproj, "%s/%s", dir, forms[i].mmproj ? forms[i].mmproj : "");
        run_form(model, forms[i].mmproj ? mmproj : NULL, "cpu", &ref, forms[i].tol, forms[i].model,
                 i == 1 ? &cpu : NULL);
    }
#if SEER_HAVE_VULKAN
    /* Vulkan vs the CPU's logits on the same f32 files */
    snprintf(model, sizeof model, "%s/model-f32.gguf", dir);
    snprintf(mmproj, sizeof mmproj, "%s/mmproj-f32.gguf", dir);
    float *vk = NULL;
    struct ref_out loose = ref;
    loose.logits = cpu;
    snprintf(what, sizeof what, "model-f32.gguf on vulkan vs cpu");
    if (cpu)
        run_form(model, mmproj, "vulkan", &loose, TOL_VK, what, &vk);
    free(vk);
#else
    (void)what;
    skip("built without Vulkan (SEER_VULKAN=OFF)", "vulkan vs cpu");
#endif
    free(cpu);
    free(ref.logits);
    json_decref(ref.j);
    return done_testing();
}
