/* seer_golden — seer's side of the comparisons with Hugging Face transformers (hf_text_test.py and
   the image/video tests built on it). seer.h exposes neither the logits of every prompt position nor
   the ids a chat renders to, so this program reads them from the library's internals (lm/qwen35.h,
   api/internal.h) after loading the model through the public seer_model_load, as a user's program
   would (device "cpu", default parameters).

     seer_golden logits MODEL IDS N OUT
         IDS: the prompt, little-endian int32. Writes OUT.prefill.f32 (the logits of every prompt
         position, [T, n_vocab] f32: one prefill in the default 512-token micro-batches, chunked GDN)
         and OUT.tokens.i32 (N greedy tokens: seer's sampler at temperature 0 over every row of the
         last logits, each token fed back to get the next).
     seer_golden chat MODEL CONV THINK OUT
         CONV: JSON {"messages": [{"role", "content"}, ...]}; THINK: 1, 0, or "default" (the
         generation parameters' default). Writes OUT: the ids seer_chat_generate feeds for that
         conversation in a fresh context (int32), taken from the context after one greedy token.

   Exit status: 0 done; 1 usage or an unreadable input file (one line naming it); 2 seer failed (its
   message). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "lm/sampler.h"
#include "seer.h"

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
    int rc = seer_context_create(m, NULL, &c);
    size_t i;
    json_t *msg;
    json_array_foreach(msgs, i, msg) {
        const char *role = json_string_value(json_object_get(msg, "role"));
        const char *content = json_string_value(json_object_get(msg, "content"));
        if (!rc && (!role || !content))
            rc = seer_err(SEER_EINVAL, "%s: message %zu has no string role and content", conv_path, i + 1);
        rc = rc ? rc : seer_chat_add(c, role, content);
    }
    rc = rc ? rc : seer_chat_generate(c, &gp, &r);
    /* a fresh context: the first prompt_tokens ids it holds are the rendered conversation */
    int status = rc ? fail_seer("chat") : write_file(out, c->fed, sizeof(int32_t) * (size_t)r.prompt_tokens);
    seer_result_clear(&r);
    seer_context_free(c);
    json_decref(root);
    return status;
}

int main(int argc, char **argv)
{
    const int logits = argc == 6 && !strcmp(argv[1], "logits"), chat = argc == 6 && !strcmp(argv[1], "chat");
    char *end = NULL;
    const long n_decode = logits ? strtol(argv[4], &end, 10) : 0;
    if ((!logits && !chat) || (logits && (*end || n_decode < 1)) ||
        (chat && strcmp(argv[4], "0") && strcmp(argv[4], "1") && strcmp(argv[4], "default"))) {
        fprintf(stderr, "usage: seer_golden logits MODEL IDS N OUT | seer_golden chat MODEL CONV 0|1|default OUT\n");
        return 1;
    }
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    seer_model *m = NULL;
    if (seer_model_load(argv[2], &mp, &m))
        return fail_seer("load");
    int status = logits ? cmd_logits(m, argv[3], n_decode, argv[5]) : cmd_chat(m, argv[3], argv[4], argv[5]);
    seer_model_free(m);
    return status;
}
