/* seer_golden — seer's side of the comparisons with Hugging Face transformers (hf_text_test.py and
   the image/video tests built on it). seer.h exposes neither the logits of every prompt position nor
   the ids a chat renders to, so this program reads them from the library's internals (lm/qwen35.h,
   api/internal.h) after loading the model through the public seer_model_load, as a user's program
   would (device "cpu", default parameters but exact: the reference path the comparisons hold to
   1e-3; the default's bf16 vision tower has its own bound, tests/vision/vit.c).

     seer_golden logits MODEL IDS N OUT
         IDS: the prompt, little-endian int32. Writes OUT.prefill.f32 (the logits of every prompt
         position, [T, n_vocab] f32: one prefill in the default 512-token micro-batches, chunked GDN)
         and OUT.tokens.i32 (N greedy tokens: seer's sampler at temperature 0 over every row of the
         last logits, each token fed back to get the next).
     seer_golden chat MODEL CONV THINK OUT
         CONV: JSON {"messages": [{"role", "content"}, ...]}; THINK: 1, 0, or "default" (the
         generation parameters' default). Writes OUT: the ids seer_chat_generate feeds for that
         conversation in a fresh context (int32), taken from the context after one greedy token.
         A message may carry "images": [path, ...] and "videos": [{"path", "fps", "min_frames",
         "max_frames"}, ...] (seer_chat_add_media: images, videos, then the text); the ids are then
         the expanded prompt, and OUT.logits.f32 holds the logits of every one of its positions
         ([n_ids, n_vocab] f32, one fused prefill: seer_context.all_logits).
     seer_golden pixels MODEL IMAGE OUT
         IMAGE decoded as seer_chat_add_images decodes it (EXIF orientation applied) and
         preprocessed as a prompt's image is (vision/preprocess.c, the model's pixel window and
         normalisation). Writes OUT.rows.f32 ([t·h·w][3·2·16·16] patch rows) and OUT.grid.i32 (t, h, w).

   SEER_GOLDEN_RESIZE, when set, is seer_model_params.resize ("pillow" or "torchvision", the default).

   Exit status: 0 done; 1 usage or an unreadable input file (one line naming it); 2 seer failed (its
   message). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/vision.h"
#include "vision/preprocess.h"
#include "vision/vit.h"
#include "lm/sampler.h"
#include "seer.h"

enum { MAX_MEDIA = 8, GOLDEN_CTX = 8192 }; /* the tests' prompts stay far below both */

static int fail_seer(const char *what)
{
    fprintf(stderr, "seer_golden: %s: %s\n", what, seer_last_error());
    return 2;
}

static int write_file(const char *path, const void *data, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(data, 1, bytes, f) != bytes;
    if (f && fclose(f))
        bad = 1;
    if (bad)
        fprintf(stderr, "seer_golden: %s: cannot write\n", path);
    return bad;
}

static int32_t *read_ids(const char *path, int64_t *n)
{
    FILE *f = fopen(path, "rb");
    long sz = -1;
    if (f && !fseek(f, 0, SEEK_END))
        sz = ftell(f);
    int32_t *ids = sz > 0 && sz % 4 == 0 ? malloc((size_t)sz) : NULL;
    if (ids && (fseek(f, 0, SEEK_SET) || fread(ids, 1, (size_t)sz, f) != (size_t)sz)) {
        free(ids);
        ids = NULL;
    }
    if (f)
        fclose(f);
    if (!ids)
        fprintf(stderr, "seer_golden: %s: not a non-empty file of int32 ids\n", path);
    *n = ids ? sz / 4 : 0;
    return ids;
}

static int cmd_logits(seer_model *m, const char *ids_path, int64_t n_decode, const char *out)
{
    int64_t T;
    int32_t *ids = read_ids(ids_path, &T);
    if (!ids)
        return 1;
    const int64_t V = m->lm->cfg.n_vocab;
    float *lg = malloc(sizeof(float) * (size_t)(V * T));
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)(n_decode + 1));
    qwen35_state *st = NULL;
    sampler *greedy = NULL; /* seer's own greedy pick: the argmax, lowest id on a tie, every row */
    sampler_params sp = sampler_params_default();
    sp.temperature = 0;
    char path[4096];
    int rc = lg && toks ? SEER_OK : seer_err(SEER_ENOMEM, "no memory for %lld x %lld logits", (long long)T, (long long)V);
    rc = rc ? rc : sampler_create(&sp, (int32_t)V, &greedy);
    rc = rc ? rc : qwen35_state_create(m->lm, T + n_decode + 1, seer_context_params_default().n_batch, &st);
    rc = rc ? rc : qwen35_eval(m->lm, st, ids, T, QWEN35_LOGITS_ALL, lg, true);
    int status = rc ? fail_seer("prefill") : 0;
    snprintf(path, sizeof path, "%s.prefill.f32", out);
    if (!status)
        status = write_file(path, lg, sizeof(float) * (size_t)(V * T));
    /* greedy from the last prompt position; each token is fed to get the next distribution */
    const float *last = lg + (T - 1) * V;
    for (int64_t i = 0; i < n_decode && !status; i++) {
        if ((rc = sampler_sample(greedy, last, &toks[i])) ||
            (i + 1 < n_decode && (rc = qwen35_eval(m->lm, st, &toks[i], 1, QWEN35_LOGITS_LAST, lg, true))))
            status = fail_seer("decode");
        last = lg;
    }
    snprintf(path, sizeof path, "%s.tokens.i32", out);
    if (!status)
        status = write_file(path, toks, sizeof(int32_t) * (size_t)n_decode);
    sampler_free(greedy);
    qwen35_state_free(st);
    free(lg), free(toks), free(ids);
    return status;
}

/* A message's "images" and "videos" as seer's inputs (paths borrowed from the JSON). */
static int media_of(const json_t *msg, seer_image_input *im, size_t *n_im, seer_video_input *vid, size_t *n_vid)
{
    const json_t *images = json_object_get(msg, "images"), *videos = json_object_get(msg, "videos"), *x;
    size_t i;
    *n_im = json_array_size(images), *n_vid = json_array_size(videos);
    if (*n_im > MAX_MEDIA || *n_vid > MAX_MEDIA)
        return seer_err(SEER_EINVAL, "more than %d images or videos in a message", MAX_MEDIA);
    json_array_foreach(images, i, x) im[i] = (seer_image_input){.path = json_string_value(x)};
    json_array_foreach(videos, i, x) {
        vid[i] = (seer_video_input){.path = json_string_value(json_object_get(x, "path")),
                                    .fps = json_number_value(json_object_get(x, "fps")),
                                    .min_frames = json_integer_value(json_object_get(x, "min_frames")),
                                    .max_frames = json_integer_value(json_object_get(x, "max_frames"))};
    }
    return SEER_OK;
}

static int cmd_chat(seer_model *m, const char *conv_path, const char *think, const char *out)
{
    json_error_t jerr;
    json_t *root = json_load_file(conv_path, 0, &jerr);
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_array(msgs) || !json_array_size(msgs)) {
        fprintf(stderr, "seer_golden: %s: no \"messages\" array (%s)\n", conv_path, root ? "missing" : jerr.text);
        json_decref(root);
        return 1;
    }
    seer_generate_params gp = seer_generate_params_default();
    gp.sampling.temperature = 0;
    gp.max_tokens = 1;
    if (strcmp(think, "default"))
        gp.think = !strcmp(think, "1");
    seer_context *c = NULL;
    seer_result r = {0};
    seer_context_params cp = seer_context_params_default();
    cp.n_ctx = GOLDEN_CTX;
    int rc = seer_context_create(m, &cp, &c);
    const size_t V = rc ? 0 : (size_t)m->lm->cfg.n_vocab;
    if (!rc && !(c->all_logits = malloc(sizeof(float) * V * GOLDEN_CTX)))
        rc = seer_err(SEER_ENOMEM, "no memory for %d x %zu logits", GOLDEN_CTX, V);
    size_t i, n_im, n_vid, media = 0;
    seer_image_input im[MAX_MEDIA];
    seer_video_input vid[MAX_MEDIA];
    json_t *msg;
    json_array_foreach(msgs, i, msg) {
        const char *role = json_string_value(json_object_get(msg, "role"));
        const char *content = json_string_value(json_object_get(msg, "content"));
        if (!rc && (!role || !content))
            rc = seer_err(SEER_EINVAL, "%s: message %zu has no string role and content", conv_path, i + 1);
        rc = rc ? rc : media_of(msg, im, &n_im, vid, &n_vid);
        media += rc ? 0 : n_im + n_vid;
        rc = rc ? rc : seer_chat_add_media(c, role, im, n_im, vid, n_vid, content);
    }
    rc = rc ? rc : seer_chat_generate(c, &gp, &r);
    /* a fresh context: the first prompt_tokens ids it holds are the rendered conversation */
    const size_t n = rc ? 0 : (size_t)r.prompt_tokens;
    int status = rc ? fail_seer("chat") : write_file(out, c->fed, sizeof(int32_t) * n);
    char path[4096];
    snprintf(path, sizeof path, "%s.logits.f32", out);
    if (!status && media)
        status = write_file(path, c->all_logits, sizeof(float) * V * n);
    seer_result_clear(&r);
    if (c)
        free(c->all_logits);
    seer_context_free(c);
    json_decref(root);
    return status;
}

static int cmd_pixels(seer_model *m, const char *image, const char *out)
{
    struct image_rgb8 im = {0};
    vit_model *vit = NULL;
    float *rows = NULL;
    struct vis_grid g;
    int rc = api_image_decode(&m->limits, &(seer_image_input){.path = image}, &im);
    rc = rc ? rc : api_vision_tower(m, &vit);
    const struct vit_config *vc = rc ? NULL : vit_model_config(vit);
    rc = rc ? rc
            : vis_preprocess_image(im.px, im.width, im.height, m->img_min_pixels, m->img_max_pixels, m->resize,
                                   vc->image_mean, vc->image_std, &rows, &g);
    int status = rc ? fail_seer(image) : 0;
    char path[4096];
    snprintf(path, sizeof path, "%s.rows.f32", out);
    if (!status)
        status = write_file(path, rows, sizeof(float) * VIS_ROW_DIM * (size_t)vis_grid_rows(&g));
    const int32_t grid[3] = {(int32_t)g.t, (int32_t)g.h, (int32_t)g.w};
    snprintf(path, sizeof path, "%s.grid.i32", out);
    if (!status)
        status = write_file(path, grid, sizeof grid);
    free(rows);
    image_rgb8_free(&im);
    return status;
}

int main(int argc, char **argv)
{
    const int logits = argc == 6 && !strcmp(argv[1], "logits"), chat = argc == 6 && !strcmp(argv[1], "chat");
    const int pixels = argc == 5 && !strcmp(argv[1], "pixels");
    char *end = NULL;
    const long n_decode = logits ? strtol(argv[4], &end, 10) : 0;
    if ((!logits && !chat && !pixels) || (logits && (*end || n_decode < 1)) ||
        (chat && strcmp(argv[4], "0") && strcmp(argv[4], "1") && strcmp(argv[4], "default"))) {
        fprintf(stderr, "usage: seer_golden logits MODEL IDS N OUT | seer_golden chat MODEL CONV 0|1|default OUT | "
                        "seer_golden pixels MODEL IMAGE OUT\n");
        return 1;
    }
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.resize = getenv("SEER_GOLDEN_RESIZE");
    mp.exact = 1;
    seer_model *m = NULL;
    if (seer_model_load(argv[2], &mp, &m))
        return fail_seer("load");
    int status = logits ? cmd_logits(m, argv[3], n_decode, argv[5])
                 : chat ? cmd_chat(m, argv[3], argv[4], argv[5])
                        : cmd_pixels(m, argv[3], argv[4]);
    seer_model_free(m);
    return status;
}
