/* Tests seer_model_params.vocab_only (api/model.c, lm/load.c qwen35_load_config, vision/load.c
   vit_probe) through the public API, on a tiny random Qwen3.5 (gen_tiny.py, fresh seed) as an HF
   directory and as a GGUF with its mmproj beside it: tokenize and detokenize give what the fully
   loaded model gives, seer_image_measure the same sizes and tokens, and a text-only GGUF refuses the
   image as its full load does; its contexts measure but generating on them, and seer_batch_create,
   fail with SEER_EINVAL naming vocab_only. That no weight is read: the HF directory without its safetensors still loads
   with vocab_only (a full load of it fails); that no device is opened: "vulkan:99" loads too. A
   tokenizer alone (tokenizer.json, or a directory without config.json) loads with vocab_only,
   tokenizes like the model and refuses images and videos with SEER_EINVAL naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

static seer_model *load(const char *path, int vocab_only, const char *device)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = device;
    mp.n_threads = 2;
    mp.vocab_only = vocab_only;
    seer_model *m = NULL;
    if (seer_model_load(path, &mp, &m) != SEER_OK)
        diag("%s (vocab_only %d, %s): %s", path, vocab_only, device, seer_last_error());
    return m;
}

/* Random text mixing ASCII, multi-byte UTF-8 and (with parse_special) the template's markup. */
static void random_text(char *buf, size_t cap)
{
    static const char *const pieces[] = {"hello", " world", "<|im_start|>", "<|im_end|>", "é", "日本",
                                         "\n", "  ", "123", "<think>", "!?", "🙂"};
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 24; i++) {
        const char *p = pieces[test_rand_u64() % (sizeof pieces / sizeof pieces[0])];
        if (n + strlen(p) + 1 > cap)
            break;
        strcpy(buf + n, p);
        n += strlen(p);
    }
}

static void same_tokens(seer_model *full, seer_model *voc, const char *what)
{
    char text[512];
    random_text(text, sizeof text);
    for (int special = 0; special < 2; special++) {
        int32_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        int ra = seer_tokenize(full, text, strlen(text), special, &a, &na);
        int rb = seer_tokenize(voc, text, strlen(text), special, &b, &nb);
        ok(ra == SEER_OK && rb == SEER_OK && na == nb && na > 0 && !memcmp(a, b, na * sizeof *a),
           "%s: tokenize (parse_special %d) gives the full model's %zu ids (vocab_only: %zu)", what, special, na, nb);
        char *ta = NULL, *tb = NULL;
        size_t la = 0, lb = 0;
        ra = seer_detokenize(full, a, na, &ta, &la);
        rb = seer_detokenize(voc, b, nb, &tb, &lb);
        ok(ra == SEER_OK && rb == SEER_OK && la == lb && !memcmp(ta, tb, la), "%s: detokenize agrees (%zu bytes)",
           what, la);
        seer_free(a), seer_free(b), seer_free(ta), seer_free(tb);
    }
}

static void same_measure(seer_model *full, seer_model *voc, const char *what)
{
    /* a random size from tiny (resized up to min_pixels) to large (resized down) */
    const int32_t w = 8 + (int32_t)(test_rand_u64() % 1500), h = 8 + (int32_t)(test_rand_u64() % 1500);
    uint8_t *px = calloc((size_t)w * (size_t)h, 3);
    seer_image_input in = {.rgb = px, .width = w, .height = h};
    seer_image_info a = {0}, b = {0};
    int ra = seer_image_measure(full, &in, &a), rb = seer_image_measure(voc, &in, &b);
    ok(ra == SEER_OK && rb == SEER_OK && a.tokens > 0 && !memcmp(&a, &b, sizeof a),
       "%s: a %dx%d image measures %dx%d, %lld tokens, as on the full model (%dx%d, %lld)", what, w, h,
       b.resized_width, b.resized_height, (long long)b.tokens, a.resized_width, a.resized_height,
       (long long)a.tokens);
    free(px);
}

/* A context of a vocab_only model measures (seer.h "measuring a prompt"); generating on it fails. */
static void no_generation(seer_model *voc, const char *what)
{
    seer_context *c = NULL;
    seer_result r;
    memset(&r, 0xab, sizeof r);
    int rc = seer_context_create(voc, NULL, &c);
    if (ok(rc == SEER_OK, "%s: a measuring context is made: %s", what, rc ? seer_last_error() : "ok")) {
        seer_generate_params gp = seer_generate_params_default();
        gp.max_tokens = 4;
        rc = seer_chat_add(c, "user", "hello");
        if (!rc)
            rc = seer_chat_generate(c, &gp, &r);
        ok(rc == SEER_EINVAL && strstr(seer_last_error(), "vocab_only") && !r.text && !r.n_tokens,
           "%s: generating fails with SEER_EINVAL, the result zeroed: %s", what, seer_last_error());
        rc = seer_generate_text(c, "hello", &gp, &r);
        ok(rc == SEER_EINVAL && strstr(seer_last_error(), "vocab_only"), "%s: so does seer_generate_text: %s", what,
           seer_last_error());
    }
    seer_context_free(c);
    seer_batch *b = (seer_batch *)0x1;
    rc = seer_batch_create(voc, 2, &b);
    ok(rc == SEER_EINVAL && b == (seer_batch *)0x1 && strstr(seer_last_error(), "vocab_only"),
       "%s: seer_batch_create fails with SEER_EINVAL: %s", what, seer_last_error());
    ok(seer_batch_size_default(voc, NULL) == 1, "%s: seer_batch_size_default is 1", what);
}

static void compare(const char *path, const char *what)
{
    seer_model *full = load(path, 0, "cpu"), *voc = load(path, 1, "cpu");
    if (ok(full && voc, "%s: loads fully and with vocab_only", what)) {
        same_tokens(full, voc, what);
        same_measure(full, voc, what);
        no_generation(voc, what);
        ok(strstr(seer_model_device(voc), "vocab_only") != NULL, "%s: the device is '%s'", what,
           seer_model_device(voc));
    }
    seer_model_free(full);
    seer_model_free(voc);
}

/* A tokenizer alone, loaded with vocab_only (a tokenizer.json, or a directory with no config.json):
   tokens and pieces as the full model's; measuring an image or a video is SEER_EINVAL naming it. */
static void tokenizer_alone(seer_model *full, const char *path, const char *what)
{
    seer_model *tok = load(path, 1, "cpu");
    if (!ok(tok != NULL, "%s: loads with vocab_only", what))
        return;
    same_tokens(full, tok, what);
    int same = 0;
    for (int32_t id = 0; id < 300; id++) {
        size_t la, lb;
        const char *a = seer_token_piece(full, id, &la), *b = seer_token_piece(tok, id, &lb);
        same += a && b && la == lb && !memcmp(a, b, la);
    }
    ok(same == 300, "%s: seer_token_piece gives the full model's pieces (%d of 300 ids)", what, same);
    uint8_t px[3 * 32 * 32] = {0};
    seer_image_input in = {.rgb = px, .width = 32, .height = 32};
    seer_image_info info;
    int rc = seer_image_measure(tok, &in, &info);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), path) && strstr(seer_last_error(), "only a tokenizer"),
       "%s: measuring an image is SEER_EINVAL naming it: %s", what, seer_last_error());
    seer_video_input vin = {.path = "clip.mp4"};
    seer_video_info vinfo;
    rc = seer_video_measure(tok, &vin, &vinfo);
    ok(rc == SEER_EINVAL && strstr(seer_last_error(), path) && strstr(seer_last_error(), "only a tokenizer"),
       "%s: measuring a video is SEER_EINVAL naming it: %s", what, seer_last_error());
    seer_context *ctx = NULL;
    rc = seer_context_create(tok, NULL, &ctx);
    ok(rc == SEER_EINVAL && !ctx && strstr(seer_last_error(), "only a tokenizer"),
       "%s: a context is SEER_EINVAL naming it: %s", what, seer_last_error());
    seer_model_free(tok);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    seer_set_log_level(SEER_LOG_ERROR);
    char dir[600], hf[700], gguf[700], bare[700], text_dir[700], text_gguf[800];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    if (!ok(if_gen_tiny(dir, "tiny-gqa", seed, "", "f16") == 0, "tiny model generated"))
        return done_testing();
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(gguf, sizeof gguf, "%s/model-f32.gguf", dir); /* mmproj-f16.gguf beside it */
    compare(hf, "HF directory");
    compare(gguf, "GGUF + mmproj");

    /* a GGUF without an mmproj: vocab_only refuses the image as the full model does */
    snprintf(text_dir, sizeof text_dir, "%s/text", dir);
    snprintf(text_gguf, sizeof text_gguf, "%s/model.gguf", text_dir);
    if (ok(if_sh("mkdir -p %s && ln -s %s %s", text_dir, gguf, text_gguf) == 0, "text-only GGUF made")) {
        seer_model *voc = load(text_gguf, 1, "cpu");
        uint8_t px[3 * 64 * 64] = {0};
        seer_image_input in = {.rgb = px, .width = 64, .height = 64};
        seer_image_info info;
        ok(voc && seer_image_measure(voc, &in, &info) == SEER_EUNSUPPORTED && strstr(seer_last_error(), "--mmproj"),
           "text-only GGUF, vocab_only: an image is refused: %s", seer_last_error());
        seer_model_free(voc);
    }

    /* no weight is read: the HF directory without its weight files */
    snprintf(bare, sizeof bare, "%s/bare", dir);
    if (ok(if_sh("mkdir -p %s && cp %s/*.json %s/ && ls %s/*.safetensors", bare, hf, bare, hf) == 0,
           "HF directory copied without its safetensors")) {
        seer_model *voc = load(bare, 1, "cpu"), *full = NULL;
        ok(voc != NULL, "vocab_only loads a directory that has no weight file");
        seer_model_params mp = seer_model_params_default();
        mp.device = "cpu";
        ok(seer_model_load(bare, &mp, &full) != SEER_OK && full == NULL,
           "a full load of it fails (it would read the weights): %s", seer_last_error());
        seer_model_free(voc);
    }

    /* a tokenizer alone: the file, and a directory holding it (and tokenizer_config.json) only */
    char tok_dir[700], tok_json[800];
    snprintf(tok_dir, sizeof tok_dir, "%s/tok", dir);
    snprintf(tok_json, sizeof tok_json, "%s/tokenizer.json", tok_dir);
    seer_model *hf_full = load(hf, 0, "cpu");
    if (ok(hf_full && if_sh("mkdir -p %s && cp %s/tokenizer.json %s/tokenizer_config.json %s/", tok_dir, hf, hf,
                         tok_dir) == 0,
           "a directory with only the tokenizer's files")) {
        tokenizer_alone(hf_full, tok_json, "tokenizer.json");
        tokenizer_alone(hf_full, tok_dir, "directory without config.json");
        seer_model_params tp = seer_model_params_default();
        tp.device = "cpu";
        seer_model *t = NULL;
        ok(seer_model_load(tok_json, &tp, &t) != SEER_OK && t == NULL,
           "a full load of a tokenizer.json fails (it is no model): %s", seer_last_error());
    }
    seer_model_free(hf_full);

    /* no device is opened: one that does not exist is never asked for */
    seer_model *voc = load(gguf, 1, "vulkan:99"), *full = NULL;
    ok(voc != NULL, "vocab_only with device vulkan:99 loads (no device opened)");
    seer_model_free(voc);
    seer_model_params mp = seer_model_params_default();
    mp.device = "vulkan:99";
    ok(seer_model_load(gguf, &mp, &full) != SEER_OK && full == NULL, "a full load on vulkan:99 fails: %s",
       seer_last_error());
    return done_testing();
}
