/* Tests early fusion (api/vision.c, api/generate.c: placeholder expansion, embeddings scattered over
   the pads, MRoPE positions with rope_delta carried, spec §3.2, §4.8, §5.4) through the public API
   against the numpy reference (tests/reference/vision_ref.py prompt), on tiny random models
   (gen_tiny.py, fresh seed) with vision head dims 16, 64 and 72, each as an HF directory, an f32
   GGUF + f32 mmproj and an f16 GGUF + f16 mmproj: the last prompt token's logits, greedy tokens, the
   expanded prompt's ids and the rope_delta the state carries, for three images of different sizes in
   one raw prompt (one resized down, one fed at its own size, one resized up); two chat turns with an
   image each against the reference run over the whole conversation; and the same prompt on Vulkan
   (lavapipe in CI) vs the CPU. Images are random noise written fresh each run. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"
#include "vulkan/vk_test.h"

/* Logits vs the float64 reference, f32 files: ≤ 1e-4 relative L2 (f32 accumulation only). */
#define TOL_F32 1e-4
/* f16 files hold the very same numbers (gen_tiny draws every weight exactly representable in f16),
   so the bound is the f32 one; only the CPU f16 dot products' summation order differs. */
#define TOL_F16 1e-4
/* Vulkan vs CPU on the same f32 files: ≤ 1e-4 relative L2. */
#define TOL_VK 1e-4
#define N_GEN 8

#define VS "<|vision_start|><|image_pad|><|vision_end|>"

/* Three images in one prompt: 300×200 → 320×224 (down, spec §5.2 rounding), 288×256 (already a
   multiple of 32 inside the window: no resize at all), 100×60 → 352×224 (up to min_pixels). */
static const struct { const char *name; int w, h; } raw_imgs[] = {{"a.jpg", 300, 200}, {"b.png", 288, 256},
                                                                  {"c.png", 100, 60}};
static const char raw_prompt[] = "<|im_start|>user\n" VS "Compare" VS " with" VS "<|im_end|>\n<|im_start|>assistant\n";
/* Second chat turn's image: a BMP of 256×256 (no resize). */
static const struct { const char *name; int w, h; } turn2_img = {"d.bmp", 256, 256};

struct ref_out {
    json_t *j;         /* {"ids", "positions", "rope_delta", "image_tokens", "grids", "greedy"} */
    float *logits;     /* last prompt token [n_logits] */
    size_t n_logits;
};

static void ref_clear(struct ref_out *r)
{
    json_decref(r->j);
    free(r->logits);
    memset(r, 0, sizeof *r);
}

/* Runs the reference on ids (one pad per image) and the images; false (after a failed test) when
   it could not. */
static bool run_ref(const char *hf, const int32_t *ids, size_t n, const char *const *imgs, int n_img, const char *tag,
                    struct ref_out *out)
{
    char path[700], img_args[4000] = "", base[600];
    snprintf(base, sizeof base, "%s/ref_%s", test_tmp_dir(), tag);
    snprintf(path, sizeof path, "%s.ids.json", base);
    FILE *f = fopen(path, "w");
    if (!f)
        return ok(0, "%s: write %s", tag, path);
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", ids[i]);
    fputs("]\n", f);
    fclose(f);
    size_t len = 0;
    for (int k = 0; k < n_img; k++)
        len += (size_t)snprintf(img_args + len, sizeof img_args - len, " --image '%s/%s'", test_tmp_dir(), imgs[k]);
    int rc = if_sh("python3 '%s' prompt --model '%s' --ids '%s.ids.json'%s --out '%s.json' --logits '%s.f32' "
                   "--n-gen %d",
                   test_src_path("tests/reference/vision_ref.py"), hf, base, img_args, base, base, N_GEN + 1);
    if (!ok(rc == 0, "%s: reference computed", tag))
        return false;
    snprintf(path, sizeof path, "%s.json", base);
    out->j = json_load_file(path, 0, NULL);
    snprintf(path, sizeof path, "%s.f32", base);
    out->logits = if_read_f32(path, &out->n_logits);
    if (!ok(out->j && out->logits, "%s: reference output read", tag)) {
        ref_clear(out);
        return false;
    }
    return true;
}

/* The context's expanded prompt ids equal the reference's (same count: every image's tokens). */
static void check_ids(const seer_context *c, size_t from, const struct ref_out *ref, const char *what)
{
    const json_t *ids = json_object_get(ref->j, "ids");
    size_t n = json_array_size(ids), same = 0;
    for (size_t i = 0; i < n && from + i < c->n_fed; i++)
        same += c->fed[from + i] == json_integer_value(json_array_get(ids, i));
    ok(c->n_fed - from == n && same == n, "%s: %zu prompt tokens fed as the reference's %zu (%zu identical)", what,
       c->n_fed - from, n, same);
}

/* The state's next MRoPE position is its token count plus the reference's rope_delta (spec §3.2):
   the delta the image runs opened is carried into decoding and into later turns. */
static void check_delta(const seer_context *c, const struct ref_out *ref, const char *what)
{
    const json_t *d = json_object_get(ref->j, "rope_delta");
    const int64_t delta = c->st->pos_next - c->st->n_past;
    ok(json_is_integer(d) && delta == json_integer_value(d), "%s: rope_delta %lld after %lld tokens == reference %lld",
       what, (long long)delta, (long long)c->st->n_past, (long long)json_integer_value(d));
}

static void check_logits(const seer_context *c, const struct ref_out *ref, double tol, const char *what)
{
    const size_t V = (size_t)c->m->lm->cfg.n_vocab;
    double e = V == ref->n_logits ? rel_l2(c->logits, ref->logits, V) : INFINITY;
    ok(e <= tol, "%s: last prompt token logits vs reference rel L2 %.2e (<= %.0e; %zu vs %zu values)", what, e, tol, V,
       ref->n_logits);
}

static seer_image_input file_input(const char *name)
{
    static char paths[8][700];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", test_tmp_dir(), name);
    return (seer_image_input){.path = p};
}

/* What a fresh context is put through: the raw three-image prompt, or two chat turns with an
   image each (seer_chat_add_images → seer_chat_generate; turn 1 answers 4 greedy tokens). */
enum scenario { RAW, CHAT };

/* Runs `s` on a new context whose last call generates k greedy tokens (0: prefill only, so
   c->logits is the last prompt token's distribution; k: the distribution token k is picked
   from). *r gets the last call's result, *r1 turn 1's (CHAT). NULL after a failed test. */
static seer_context *run_scenario(seer_model *m, enum scenario s, int64_t k, seer_result *r1, seer_result *r,
                                  const char *what)
{
    seer_context *c = NULL;
    seer_generate_params p1 = test_greedy(4), p = test_greedy(k);
    int rc = seer_context_create(m, NULL, &c);
    *r1 = *r = (seer_result){0};
    if (!rc && s == RAW) {
        seer_image_input in[3];
        for (int i = 0; i < 3; i++)
            in[i] = file_input(raw_imgs[i].name);
        rc = seer_generate_text_images(c, raw_prompt, in, 3, &p, r);
    } else if (!rc) {
        seer_image_input in1 = file_input(raw_imgs[0].name), in2 = file_input(turn2_img.name);
        if (!(rc = seer_chat_add_images(c, "user", &in1, 1, "What is this?")) && !(rc = seer_chat_generate(c, &p1, r1)) &&
            !(rc = seer_chat_add_images(c, "user", &in2, 1, "And this one?")))
            rc = seer_chat_generate(c, &p, r);
    }
    if (!ok(rc == SEER_OK, "%s: %s, %lld greedy tokens (%s)", what, s == RAW ? "three-image raw prompt" :
            "two chat turns with an image each", (long long)k, rc ? seer_last_error() : "ok")) {
        seer_result_clear(r1);
        seer_result_clear(r);
        seer_context_free(c);
        return NULL;
    }
    return c;
}

/* Seer's greedy tokens (stopped at a stop token or N_GEN) equal the reference's argmax sequence
   over the tokenizer's rows (the padding past them is never picked, spec §2.7; a pick there fails);
   a stop token must then be the reference's next pick. Where the two part, seer's own
   distribution at that step (a run stopped there) must show a near tie: seer's pick and the
   reference's within 2·tol·‖z‖₂, the most two values can move when the logits agree to rel L2
   ≤ tol; the sequences then rightly differ and the comparison ends there. */
static void check_greedy(seer_model *m, enum scenario s, const seer_result *r, const struct ref_out *ref, double tol,
                         const char *what)
{
    const json_t *g = json_object_get(ref->j, "greedy");
    size_t n = 0, n_ref = json_array_size(g);
    int32_t want = -1, got = -1;
    bool parted = false;
    for (; n < n_ref; n++) {
        want = (int32_t)json_integer_value(json_array_get(g, n));
        if (want >= m->n_vocab_real) { /* the reference masks the padding rows as seer does */
            ok(0, "%s: the reference's pick %d at step %zu is a token", what, want, n);
            return;
        }
        got = n < r->n_tokens ? r->tokens[n] : r->stop == SEER_STOP_EOS ? m->id_im_end : -1;
        if (got == -1)
            break; /* seer stopped for length: nothing more to compare */
        const bool both_stop = n == r->n_tokens && (want == m->id_im_end || want == m->id_endoftext);
        if (got != want && !both_stop) {
            parted = true;
            break;
        }
        if (n == r->n_tokens) {
            n++;
            break;
        }
    }
    if (!parted) {
        ok(n > 0, "%s: %zu greedy tokens identical to the reference", what, n);
        return;
    }
    seer_result a, b;
    seer_context *c = run_scenario(m, s, (int64_t)n, &a, &b, what);
    double gap = INFINITY, bound = 0, norm = 0;
    if (c) {
        const float *z = c->logits;
        int32_t best = 0;
        for (int32_t v = 0; v < m->n_vocab_real; v++) {
            norm += (double)z[v] * z[v];
            if (z[v] > z[best])
                best = v;
        }
        bound = 2 * tol * sqrt(norm);
        gap = (double)z[best] - z[want];
        got = best;
    }
    if (!ok(gap <= bound, "%s: %zu greedy tokens identical to the reference, then a near tie at step %zu: seer %d, "
            "reference %d, gap %.3g (<= %.3g)", what, n, n, got, want, gap, bound)) {
        char ra[512] = "", sa[512] = "";
        for (size_t i = 0, la = 0, lb = 0; i < json_array_size(g) && la < 400 && lb < 400; i++) {
            la += (size_t)snprintf(ra + la, sizeof ra - la, " %lld", (long long)json_integer_value(json_array_get(g, i)));
            if (i < r->n_tokens)
                lb += (size_t)snprintf(sa + lb, sizeof sa - lb, " %d", r->tokens[i]);
        }
        diag("reference:%s\nseer:     %s (stop %d)", ra, sa, (int)r->stop);
    }
    seer_result_clear(&a);
    seer_result_clear(&b);
    seer_context_free(c);
}

static seer_model *load(const char *path, const char *mmproj, const char *device, const char *what)
{
    seer_model_params mp = seer_model_params_default();
    mp.device = device;
    mp.n_threads = 2;
    mp.mmproj = mmproj;
    mp.resize = "pillow"; /* vision_ref.py resizes with Pillow (Debian's python3 has no torch) */
    mp.exact = 1; /* the reference path, held to 1e-4: the default's bf16 tower has its own bound
                     (tests/vision/vit.c) */
    seer_model *m = NULL;
    int rc = seer_model_load(path, &mp, &m);
    if (!ok(rc == SEER_OK, "%s: loads on %s (%s)", what, device, rc ? seer_last_error() : "ok"))
        return NULL;
    return m;
}

/* The raw three-image prompt: after prefill alone (a context that generates nothing) the ids,
   rope_delta and logits; then the greedy continuation. The prefill logits go to *logits_out
   when not NULL; cmp_logits (not NULL): compared with them instead of the reference (Vulkan). */
static void raw_prompt_checks(seer_model *m, const struct ref_out *ref, double tol, const char *what,
                              float **logits_out, const float *cmp_logits)
{
    seer_result r1, r;
    seer_context *c = run_scenario(m, RAW, 0, &r1, &r, what);
    if (c) {
        const json_t *ids = json_object_get(ref->j, "ids");
        const size_t V = (size_t)m->lm->cfg.n_vocab;
        ok(r.prompt_tokens == (int64_t)json_array_size(ids), "%s: prompt_tokens %lld == reference %zu", what,
           (long long)r.prompt_tokens, json_array_size(ids));
        check_ids(c, 0, ref, what);
        check_delta(c, ref, what);
        if (cmp_logits) {
            double e = rel_l2(c->logits, cmp_logits, V);
            ok(e <= tol, "%s: logits vs cpu rel L2 %.2e (<= %.0e)", what, e, tol);
        } else {
            check_logits(c, ref, tol, what);
        }
        if (logits_out && (*logits_out = malloc(V * sizeof(float))))
            memcpy(*logits_out, c->logits, V * sizeof(float));
        seer_result_clear(&r);
        seer_context_free(c);
    }
    if ((c = run_scenario(m, RAW, N_GEN, &r1, &r, what))) {
        check_greedy(m, RAW, &r, ref, tol, what);
        check_delta(c, ref, what); /* still the prompt's delta after decoding */
        seer_result_clear(&r);
        seer_context_free(c);
    }
}

/* ids with every run of image pads collapsed to one pad: the reference's input form. */
static size_t collapse_pads(const seer_model *m, const int32_t *ids, size_t n, int32_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] != m->id_image_pad || k == 0 || out[k - 1] != m->id_image_pad)
            out[k++] = ids[i];
    return k;
}

/* Two chat turns with an image each: turn 2's positions continue after turn 1's rope_delta
   (spec §3.2). The reference runs the whole conversation as fed (turn 1's prompt, its reply,
   turn 2's prompt) with both images: turn 2's greedy tokens, and the ids, rope_delta and logits
   after turn 2's prompt (the same turns again, turn 2 generating nothing) must agree. */
static void chat_turns(seer_model *m, const char *hf, double tol, const char *what, const char *tag)
{
    seer_result r1, r2;
    seer_context *c = run_scenario(m, CHAT, N_GEN, &r1, &r2, what);
    if (!c)
        return;
    /* every generated token of turn 2 was fed after its prompt (the stop token stays pending) */
    const size_t n_prompt = c->n_fed - r2.n_tokens;
    int32_t *conv = malloc(n_prompt * sizeof *conv);
    size_t n_conv = collapse_pads(m, c->fed, n_prompt, conv);
    struct ref_out ref = {0};
    const char *imgs[2] = {raw_imgs[0].name, turn2_img.name};
    if (run_ref(hf, conv, n_conv, imgs, 2, tag, &ref)) {
        const json_t *ids = json_object_get(ref.j, "ids");
        /* turn 1's prompt less its generation prompt (the turn point), then turn 2's prompt, which
           feeds turn 1's reply again as the template renders it once a user message follows (its
           empty think block dropped, spec §6.2) and turn 2's own message: nothing of turn 1's
           prompt is fed twice */
        static const char gen_prompt[] = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
        int32_t *g = NULL;
        size_t n_g = 0;
        const int grc = seer_tokenize(m, gen_prompt, strlen(gen_prompt), 1, &g, &n_g);
        seer_free(g);
        const int64_t fed = r1.prompt_tokens - (int64_t)n_g + r2.prompt_tokens;
        ok(grc == SEER_OK && json_array_size(ids) == n_prompt && (int64_t)n_prompt == fed,
           "%s: conversation of %zu tokens (%lld - %zu + %lld fed) as the reference's %zu", what, n_prompt,
           (long long)r1.prompt_tokens, n_g, (long long)r2.prompt_tokens, json_array_size(ids));
        check_greedy(m, CHAT, &r2, &ref, tol, what);
        seer_result a, b;
        seer_context *c2 = run_scenario(m, CHAT, 0, &a, &b, what);
        if (c2) {
            check_ids(c2, 0, &ref, what);
            check_delta(c2, &ref, what);
            check_logits(c2, &ref, tol, what);
            seer_result_clear(&a);
            seer_result_clear(&b);
            seer_context_free(c2);
        }
        ref_clear(&ref);
    }
    free(conv);
    seer_result_clear(&r1);
    seer_result_clear(&r2);
    seer_context_free(c);
}

/* The raw prompt on Vulkan: logits vs the CPU's on the same f32 files ≤ TOL_VK, and the ids,
   rope_delta and greedy tokens as on the CPU. */
static void vulkan_checks(const char *text_gguf, const char *mmproj, const float *cpu_logits, const struct ref_out *ref,
                          const char *what)
{
#if SEER_HAVE_VULKAN
    seer_model_params mp = seer_model_params_default();
    mp.device = "vulkan";
    mp.mmproj = mmproj;
    mp.resize = "pillow"; /* as load(): the CPU run and the reference */
    mp.exact = 1;
    seer_model *m = NULL;
    int rc = seer_model_load(text_gguf, &mp, &m);
    if (rc != SEER_OK) {
        if (vk_test_required())
            ok(0, "%s: SEER_REQUIRE_VULKAN=1 but the model does not load on vulkan: %s", what, seer_last_error());
        else
            skip("no Vulkan device on this machine", what);
        return;
    }
    diag("%s", seer_model_device(m));
    if (ok(cpu_logits != NULL, "%s: cpu logits to compare with", what))
        raw_prompt_checks(m, ref, TOL_VK, what, NULL, cpu_logits);
    seer_model_free(m);
#else
    (void)text_gguf, (void)mmproj, (void)cpu_logits, (void)ref;
    skip("built without Vulkan (SEER_VULKAN=OFF)", what);
#endif
}

/* One vision preset: generate the model, run the reference once (the three file forms hold the
   same numbers), then check every form; chat turns on the HF directory and the f32 GGUF; Vulkan
   on the f32 GGUF (head dims 16 and 72). */
static void preset(const char *vision, uint64_t seed)
{
    const char *label = *vision ? vision : "hd16";
    char dir[600], hf[700], what[200], tag[64];
    snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), label);
    if (!ok(if_gen_tiny(dir, "tiny", seed, vision, "f32,f16") == 0, "%s: tiny model generated (seed %llu)", label,
            (unsigned long long)seed))
        return;
    snprintf(hf, sizeof hf, "%s/hf", dir);
    static const struct { const char *model, *mmproj; double tol; } forms[] = {
        {"hf", NULL, TOL_F32}, {"model-f32.gguf", "mmproj-f32.gguf", TOL_F32},
        {"model-f16.gguf", "mmproj-f16.gguf", TOL_F16}};
    struct ref_out ref = {0};
    float *cpu_logits = NULL;
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char model[800], mmproj[800];
        snprintf(model, sizeof model, "%s/%s", dir, forms[i].model);
        snprintf(mmproj, sizeof mmproj, "%s/%s", dir, forms[i].mmproj ? forms[i].mmproj : "");
        snprintf(what, sizeof what, "%s %s", label, forms[i].model);
        seer_model *m = load(model, forms[i].mmproj ? mmproj : NULL, "cpu", what);
        if (!m)
            continue;
        if (!ref.j) {
            int32_t *ids = NULL;
            size_t n = 0;
            const char *imgs[3] = {raw_imgs[0].name, raw_imgs[1].name, raw_imgs[2].name};
            int rc = seer_tokenize(m, raw_prompt, strlen(raw_prompt), 1, &ids, &n);
            snprintf(tag, sizeof tag, "%s_raw", label);
            if (ok(rc == SEER_OK, "%s: raw prompt tokenized", label))
                run_ref(hf, ids, n, imgs, 3, tag, &ref);
            seer_free(ids);
        }
        if (ref.j)
            raw_prompt_checks(m, &ref, forms[i].tol, what, i == 1 ? &cpu_logits : NULL, NULL);
        if (i < 2) {
            snprintf(tag, sizeof tag, "%s_chat%zu", label, i);
            chat_turns(m, hf, forms[i].tol, what, tag);
        }
        seer_model_free(m);
        if (i == 1 && ref.j && strcmp(label, "hd64")) { /* head dims 16 and 72: lavapipe is slow */
            char vk_what[300];
            snprintf(vk_what, sizeof vk_what, "%s on vulkan", what);
            vulkan_checks(model, mmproj, cpu_logits, &ref, vk_what);
        }
    }
    free(cpu_logits);
    ref_clear(&ref);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    if (!if_python_pil())
        return plan_skip_all("no python3 with PIL and numpy (apt install python3-pil python3-numpy)");
    bool made = true;
    for (size_t k = 0; k < sizeof raw_imgs / sizeof *raw_imgs; k++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), raw_imgs[k].name);
        made &= if_noise_image(path, raw_imgs[k].w, raw_imgs[k].h) == 0;
    }
    char path[700];
    snprintf(path, sizeof path, "%s/%s", test_tmp_dir(), turn2_img.name);
    made &= if_noise_image(path, turn2_img.w, turn2_img.h) == 0;
    if (!ok(made, "random noise test images written"))
        return done_testing();
    static const char *const visions[] = {"", "hd64", "hd72"};
    for (size_t i = 0; i < sizeof visions / sizeof *visions; i++)
        preset(visions[i], seed + i);
    return done_testing();
}
