/* Tests a text-only Qwen3.5 checkpoint as transformers saves a text-only fine-tune
   (Qwen3_5ForCausalLM: model_type qwen3_5_text, the text config alone at the top level, tensors
   model.*; docs/MODEL.md §8) through the public API. tests/reference/hf_text_only.py rewrites a tiny
   random model (gen_tiny.py, fresh seed) in that form from the same weights: it loads, and its
   greedy tokens equal those of the same weights as an f32 GGUF and as the composite HF directory;
   an image or a video on it is refused in one line naming the model and its architecture, by a full
   load and by a vocab_only one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

#define N_GEN 16

static seer_model *load(const char *path, int vocab_only)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.n_threads = 2;
    mp.exact = 1; /* f32 activations: the bf16 and f32 files hold the same numbers, so the same argmax */
    mp.vocab_only = vocab_only;
    seer_model *m = NULL;
    if (seer_model_load(path, &mp, &m) != SEER_OK)
        diag("%s: %s", path, seer_last_error());
    return m;
}

/* Greedy continuation of a random prompt of ids < n_ids: toks[N_GEN] (-1 past the end). */
static int greedy(const char *path, const int32_t *prompt, size_t n, int32_t *toks)
{
    seer_model *m = load(path, 0);
    seer_context *c = NULL;
    seer_result r = {0};
    seer_generate_params gp = seer_generate_params_default();
    gp.sampling.temperature = 0;
    gp.sampling.presence_penalty = 0;
    gp.max_tokens = N_GEN;
    int rc = m ? seer_context_create(m, NULL, &c) : SEER_EINVAL;
    if (!rc)
        rc = seer_generate_tokens(c, prompt, n, &gp, &r);
    for (size_t i = 0; i < N_GEN; i++)
        toks[i] = i < r.n_tokens ? r.tokens[i] : -1;
    seer_result_clear(&r);
    seer_context_free(c);
    seer_model_free(m);
    return rc;
}

static int is_refusal(int rc, const char *path)
{
    const char *e = seer_last_error();
    return rc == SEER_EUNSUPPORTED && !strncmp(e, path, strlen(path)) &&
           strstr(e, "a text-only model (Qwen3_5ForCausalLM)") && !strchr(e, '\n');
}

static void refusals(const char *text)
{
    uint8_t px[3 * 48 * 48] = {0};
    seer_image_input img = {.rgb = px, .width = 48, .height = 48};
    seer_video_input vid = {.path = "any.mp4"};
    seer_image_info info;
    seer_model *m = load(text, 0);
    seer_context *c = NULL;
    if (!ok(m && seer_context_create(m, NULL, &c) == SEER_OK, "text-only checkpoint: a context"))
        return;
    int rc = seer_chat_add_images(c, "user", &img, 1, "What is this?");
    ok(is_refusal(rc, text), "an image is refused in one line: %s", seer_last_error());
    rc = seer_chat_add_media(c, "user", NULL, 0, &vid, 1, "What happens?");
    ok(is_refusal(rc, text), "a video is refused in one line: %s", seer_last_error());
    rc = seer_image_measure(m, &img, &info);
    ok(is_refusal(rc, text), "measuring an image is refused: %s", seer_last_error());
    seer_context_free(c);
    seer_model_free(m);
    m = load(text, 1);
    rc = m ? seer_image_measure(m, &img, &info) : SEER_EINVAL;
    ok(is_refusal(rc, text), "vocab_only: measuring an image is refused too: %s", seer_last_error());
    seer_model_free(m);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    seer_set_log_level(SEER_LOG_ERROR);
    char dir[600], cmd[4096], hf[700], text[700], gguf_file[700];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(text, sizeof text, "%s/hf-text", dir);
    snprintf(gguf_file, sizeof gguf_file, "%s/model-f32.gguf", dir);
    /* tiny-untied: an lm_head of its own, which the text-only form keeps at the top level */
    const char *preset = seed % 2 ? "tiny-untied" : "tiny-gqa";
    int rc = if_gen_tiny(dir, preset, seed, "", "f16");
    if (!rc)
        rc = if_sh("python3 %s %s %s", test_src_path("tests/reference/hf_text_only.py"), hf, text);
    if (!ok(rc == 0, "tiny model (%s) and its text-only checkpoint written", preset))
        return done_testing();
    char *cfg = test_slurp(strcat(strcpy(cmd, text), "/config.json"));
    ok(cfg && strstr(cfg, "\"Qwen3_5ForCausalLM\"") && !strstr(cfg, "vision_config") && !strstr(cfg, "text_config"),
       "config.json: Qwen3_5ForCausalLM, no nested configs");
    free(cfg);

    int32_t prompt[20], want[N_GEN], got[N_GEN], comp[N_GEN];
    for (size_t i = 0; i < 20; i++)
        prompt[i] = (int32_t)(test_rand_u64() % 200); /* ordinary tokens of every tiny vocabulary */
    rc = greedy(text, prompt, 20, got);
    ok(rc == SEER_OK && got[0] >= 0, "the text-only checkpoint loads and generates: %s",
       rc ? seer_last_error() : "ok");
    ok(greedy(gguf_file, prompt, 20, want) == SEER_OK && !memcmp(got, want, sizeof got),
       "its %d greedy tokens equal the f32 GGUF's", N_GEN);
    ok(greedy(hf, prompt, 20, comp) == SEER_OK && !memcmp(got, comp, sizeof got),
       "and the composite HF directory's");
    refusals(text);
    return done_testing();
}
