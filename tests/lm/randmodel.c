/* Tests lm/randmodel.c: the presets have spec §1.1's shapes; a small custom shape (every
   structural feature of the real one: GDN and attention layers, Hv = 2·Hk so V heads are tiled,
   partial MRoPE, tied and untied heads) is written in each weight dtype and
     - loads with qwen35_load (which runs qwen35_check_tensors) and gives finite logits;
     - has the metadata and tokenizer section llama.cpp reads (GPT-2 byte characters first, merges
       joining existing tokens, the added tokens at their ids, padding rows), and the weight
       scales the header promises;
     - is the same file whatever the thread count, and another file for another seed;
     - is read by llama.cpp (npm node-llama-cpp, tests/oracle) as seer reads it: llama.cpp's
       next-token distributions on the f32 file match seer's (skipped visibly without node).
   The Q4_K_M mix gives each matrix llama.cpp's type and runs. Bad shapes and dtypes are refused,
   and a failed write leaves no file. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu/cpu.h"
#include "core/gguf.h"
#include "core/gguf_write.h"
#include "core/quant.h"
#include "core/util.h"
#include "lm/qwen35.h"
#include "lm/randmodel.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

/* f32 vs llama.cpp's f32 on the same weights: next-token total variation. Both compute in f32;
   tests/lm/oracle.c measured TV ~1e-5 on tiny models and bounds it by 1e-3, which still catches a
   convention error (a norm without +1, a wrong V-head order moves TV by 1e-1 and more). */
#define TV_BOUND 1e-3

static char dir[512];

static const char *path_in(const char *name)
{
    static char buf[8][700];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Small but structurally complete (see the file comment); every matrix row a multiple of 256 so
   Q4_K can hold it. */
static struct randmodel_shape small_shape(bool tie)
{
    return (struct randmodel_shape){
        .n_layer = 4, .n_embd = 256, .n_ff = 512, .n_head = 2, .n_head_kv = 1, .head_dim = 128,
        .ssm_n_k_heads = 2, .ssm_n_v_heads = 4, .ssm_d_state = 64, .ssm_conv_kernel = 4,
        .n_vocab = 384, .n_bpe_tokens = 300, .full_attention_interval = 2, .n_rot = 32,
        .sections = {6, 5, 5}, .tie = tie,
    };
}

static void test_presets(void)
{
    struct randmodel_shape s;
    const struct { const char *name; int64_t H, L, I, hv; bool tie; } want[] = {
        {"0.8b", 1024, 24, 3584, 16, true}, {"2b", 2048, 24, 6144, 16, true},
        {"4b", 2560, 32, 9216, 32, true}, {"9b", 4096, 32, 12288, 32, false},
    };
    int good = 1;
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        good = good && randmodel_preset(want[i].name, &s) == SEER_OK && s.n_embd == want[i].H &&
               s.n_layer == want[i].L && s.n_ff == want[i].I && s.ssm_n_v_heads == want[i].hv &&
               s.tie == want[i].tie && s.n_vocab == 248320 && s.head_dim == 256 && s.ssm_n_k_heads == 16 &&
               s.ssm_d_state == 128 && s.n_rot == 64 && s.sections[0] == 11 && s.sections[2] == 10 &&
               randmodel_check(&s, DT_Q4_K) == SEER_OK;
    }
    ok(good, "presets 0.8b/2b/4b/9b have spec §1.1's shapes, and Q4_K can hold every matrix of each");
    ok(randmodel_preset("7b", &s) == SEER_EINVAL && strstr(seer_last_error(), "0.8b|2b|4b|9b"),
       "an unknown preset is refused, listing the valid ones");
    /* the 9B Q4_K file: ~5.3 GB predicted without generating it */
    randmodel_preset("9b", &s);
    const struct randmodel_params p9 = {.wtype = DT_Q4_K, .n_threads = 1};
    const uint64_t size9 = randmodel_file_size(&s, &p9);
    ok(size9 > 5000000000ull && size9 < 6000000000ull, "9b q4_K file size predicted: %.2f GB",
       (double)size9 / 1e9);
}

static void test_refusals(void)
{
    struct randmodel_shape s = small_shape(true);
    s.n_embd = 320; /* not a multiple of 256 */
    ok(randmodel_check(&s, DT_Q4_K) == SEER_EINVAL && randmodel_check(&s, DT_Q8_0) == SEER_OK,
       "Q4_K needs rows of whole 256-blocks; Q8_0 accepts 320");
    s = small_shape(true);
    ok(randmodel_check(&s, DT_Q6_K) == SEER_EINVAL && randmodel_check(&s, DT_I32) == SEER_EINVAL,
       "weight dtypes other than f32/f16/bf16/q8_0/q4_K are refused");
    s.n_vocab = 320; /* 300 BPE + 33 added tokens do not fit */
    const struct randmodel_params p = {.wtype = DT_F16, .seed = 1, .n_threads = 2};
    ok(randmodel_write(path_in("refused.gguf"), &s, &p) == SEER_EINVAL && access(path_in("refused.gguf"), F_OK) != 0,
       "a vocabulary too small for the tokenizer is refused and writes nothing: %s", seer_last_error());
    s = small_shape(true);
    s.ssm_n_v_heads = 3; /* not a multiple of the 2 key heads (spec §2.5 step 5) */
    ok(randmodel_check(&s, DT_F32) == SEER_EINVAL, "value heads not a multiple of key heads are refused");
    s = small_shape(true);
    seer_alloc_fail_after(3);
    const int rc = randmodel_write(path_in("nomem.gguf"), &s, &p);
    seer_alloc_fail_after(0);
    ok(rc == SEER_ENOMEM && access(path_in("nomem.gguf"), F_OK) != 0, "a failed allocation leaves no file");
}

/* Token string i of the GGUF vocabulary, or "" */
static bool token_is(const gguf *g, uint64_t i, const char *want)
{
    const char *s;
    size_t n;
    return gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, &n) == SEER_OK && n == strlen(want) &&
           !memcmp(s, want, n);
}

static void check_file(const char *path, const struct randmodel_shape *s, enum dtype wt)
{
    gguf *g = NULL;
    int rc = gguf_open(path, &g);
    ok(rc == SEER_OK, "%s: gguf_open (%s)", dtype_name(wt), rc ? seer_last_error() : "ok");
    if (rc)
        return;
    const char *arch, *model, *pre;
    uint32_t v;
    enum gguf_type et;
    uint64_t n_tok = 0, n_merges = 0;
    ok(gguf_get_str(g, "general.architecture", &arch, NULL) == SEER_OK && !strcmp(arch, "qwen35") &&
       gguf_get_str(g, "tokenizer.ggml.model", &model, NULL) == SEER_OK && !strcmp(model, "gpt2") &&
       gguf_get_str(g, "tokenizer.ggml.pre", &pre, NULL) == SEER_OK && !strcmp(pre, "qwen35") &&
       gguf_get_u32(g, "qwen35.block_count", &v) == SEER_OK && v == s->n_layer &&
       gguf_get_u32(g, "tokenizer.ggml.eos_token_id", &v) == SEER_OK && v == s->n_bpe_tokens + 2,
       "%s: qwen35 architecture, gpt2/qwen35 tokenizer, eos = <|im_end|>", dtype_name(wt));
    int good = gguf_get_arr_info(g, "tokenizer.ggml.tokens", &et, &n_tok) == SEER_OK && n_tok == (uint64_t)s->n_vocab &&
               gguf_get_arr_info(g, "tokenizer.ggml.merges", &et, &n_merges) == SEER_OK &&
               n_merges == (uint64_t)(s->n_bpe_tokens - 256);
    /* GPT-2's byte characters: '!' is 0, space 'Ġ' 220, newline 'Ċ' 198 (as in Qwen's vocabulary) */
    good = good && token_is(g, 0, "!") && token_is(g, 220, "\xc4\xa0") && token_is(g, 198, "\xc4\x8a") &&
           token_is(g, (uint64_t)s->n_bpe_tokens, "<|endoftext|>") &&
           token_is(g, (uint64_t)s->n_bpe_tokens + 2, "<|im_end|>") &&
           token_is(g, (uint64_t)s->n_vocab - 1, "[PAD383]");
    /* every merge "A B" joins two tokens that exist into the token of its rank */
    for (uint64_t i = 0; good && i < n_merges; i++) {
        const char *m, *t;
        size_t mn, tn;
        gguf_get_arr_str(g, "tokenizer.ggml.merges", i, &m, &mn);
        gguf_get_arr_str(g, "tokenizer.ggml.tokens", 256 + i, &t, &tn);
        const char *sp = memchr(m, ' ', mn);
        good = sp && (size_t)(sp - m) + (mn - (size_t)(sp - m) - 1) == tn && !memcmp(m, t, (size_t)(sp - m)) &&
               !memcmp(sp + 1, t + (sp - m), tn - (size_t)(sp - m));
    }
    ok(good, "%s: %llu tokens (byte characters first, added tokens at %lld, [PAD] rows) and %llu merges each "
       "making the token of its rank", dtype_name(wt), (unsigned long long)n_tok, (long long)s->n_bpe_tokens,
       (unsigned long long)n_merges);

    /* scales: ffn_gate ~ N(0, 1.5/sqrt(H)); attn_norm stored 1 + N(0, 0.1); ssm_a in [-16, -1] */
    const tensor *gt = gguf_tensor(g, gguf_find_tensor(g, "blk.0.ffn_gate.weight"));
    const tensor *nt = gguf_tensor(g, gguf_find_tensor(g, "blk.0.attn_norm.weight"));
    const tensor *at = gguf_tensor(g, gguf_find_tensor(g, "blk.0.ssm_a"));
    float *row = malloc((size_t)s->n_embd * sizeof *row);
    double ss = 0, sn = 0;
    for (int64_t r = 0; r < gt->ne[1]; r++) {
        dequantize_row(gt->type, (const char *)gt->data + (size_t)r * gt->nb[1], row, gt->ne[0]);
        for (int64_t k = 0; k < gt->ne[0]; k++)
            ss += (double)row[k] * row[k];
    }
    const double sd = sqrt(ss / (double)(gt->ne[0] * gt->ne[1])), want_sd = 1.5 / sqrt((double)s->n_embd);
    const float *nv = nt->data, *av = at->data;
    for (int64_t k = 0; k < nt->ne[0]; k++)
        sn += nv[k];
    int a_ok = at->type == DT_F32 && nt->type == DT_F32 && gt->type == wt;
    for (int64_t k = 0; k < at->ne[0]; k++)
        a_ok = a_ok && av[k] <= -1.0f && av[k] >= -16.0f;
    ok(fabs(sd / want_sd - 1) < 0.1 && fabs(sn / (double)nt->ne[0] - 1) < 0.05 && a_ok,
       "%s: ffn_gate std %.4f (want %.4f = 1.5/sqrt(H)), attn_norm mean %.3f (+1 folded), ssm_a in [-16,-1], "
       "norms/vectors f32, matrices %s", dtype_name(wt), sd, want_sd, sn / (double)nt->ne[0], dtype_name(wt));
    free(row);
    gguf_free(g);
}

/* Loads the model and runs a prompt: finite, non-constant logits. Fills `logits` (n_vocab). */
static bool run_model(const char *path, const int32_t *prompt, int64_t n, float *logits, const char *what)
{
    backend *be = NULL;
    qwen35_model *m = NULL;
    qwen35_state *st = NULL;
    int rc = backend_cpu_create(2, &be);
    if (rc == SEER_OK)
        rc = qwen35_load(path, be, &m);
    if (rc == SEER_OK)
        rc = qwen35_state_create(m, 64, 16, &st);
    if (rc == SEER_OK)
        rc = qwen35_eval(m, st, prompt, n, QWEN35_LOGITS_LAST, logits, true);
    bool finite = rc == SEER_OK;
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; finite && i < m->cfg.n_vocab; i++) {
        finite = isfinite(logits[i]);
        lo = fminf(lo, logits[i]);
        hi = fmaxf(hi, logits[i]);
    }
    ok(finite && hi - lo > 1.0f, "%s: qwen35_load (tensor check) and a %lld-token prompt give finite logits "
       "spanning %.2f (%s)", what, (long long)n, hi - lo, rc ? seer_last_error() : "ok");
    qwen35_state_free(st);
    qwen35_free(m);
    backend_free(be);
    return finite;
}

static bool same_file(const char *a, const char *b)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* llama.cpp's next-token distribution after `prompt` on `path`, from tests/oracle/llama_logits.mjs;
   NULL (with the reason in *why) when node or the npm packages are missing. */
static double *llama_probs(const char *path, const int32_t *prompt, int64_t n, int64_t n_vocab, const char **why)
{
    static char reason[900];
    char pkg[800], cmd[4096];
    snprintf(pkg, sizeof pkg, "%s", test_src_path("tests/oracle/node_modules/node-llama-cpp/package.json"));
    if (system("node --version >/dev/null 2>&1") != 0) {
        *why = "node is not on PATH";
        return NULL;
    }
    if (access(pkg, R_OK) != 0) {
        snprintf(reason, sizeof reason, "%s missing (npm install in tests/oracle)", pkg);
        *why = reason;
        return NULL;
    }
    int len = snprintf(cmd, sizeof cmd, "node '%s' --model '%s' --n 1 --tokens ",
                       test_src_path("tests/oracle/llama_logits.mjs"), path);
    for (int64_t i = 0; i < n; i++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, "%s%d", i ? "," : "", prompt[i]);
    snprintf(cmd + len, sizeof cmd - (size_t)len, " >'%s' 2>'%s'", path_in("llama.json"), path_in("llama.err"));
    *why = "llama.cpp failed (see diag)";
    if (system(cmd) != 0) {
        diag("failed: %s", cmd);
        return NULL;
    }
    json_error_t err;
    json_t *j = json_load_file(path_in("llama.json"), 0, &err);
    json_t *pr = json_array_get(json_object_get(json_array_get(json_object_get(j, "results"), 0), "probs"), 0);
    double *p = NULL;
    if (pr && (int64_t)json_array_size(pr) == n_vocab) {
        p = malloc((size_t)n_vocab * sizeof *p);
        for (int64_t i = 0; i < n_vocab; i++)
            p[i] = json_real_value(json_array_get(pr, (size_t)i));
    } else {
        diag("unexpected llama.cpp output in %s", path_in("llama.json"));
    }
    json_decref(j);
    return p;
}

static void test_models(void)
{
    static const enum dtype types[] = {DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_K};
    int32_t prompt[12];
    const struct randmodel_shape s = small_shape(true), su = small_shape(false);
    for (size_t i = 0; i < ARRAY_LEN(prompt); i++)
        prompt[i] = (int32_t)(test_rand_u64() % (uint64_t)s.n_vocab);
    const uint64_t seed = test_rand_u64();
    float *logits = malloc((size_t)s.n_vocab * sizeof *logits);
    char name[64];
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        snprintf(name, sizeof name, "m-%s.gguf", dtype_name(types[i]));
        const char *path = path_in(name);
        const struct randmodel_params p = {.wtype = types[i], .seed = seed, .n_threads = 2};
        const int rc = randmodel_write(path, &s, &p);
        uint64_t size = 0;
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            size = (uint64_t)ftell(f);
            fclose(f);
        }
        ok(rc == SEER_OK && size == randmodel_file_size(&s, &p), "%s: written, %llu bytes as predicted (%s)",
           dtype_name(types[i]), (unsigned long long)size, rc ? seer_last_error() : "ok");
        if (rc)
            continue;
        check_file(path, &s, types[i]);
        run_model(path, prompt, ARRAY_LEN(prompt), logits, dtype_name(types[i]));
    }
    /* untied head (the 9B's layout) */
    const struct randmodel_params pu = {.wtype = DT_Q8_0, .seed = seed, .n_threads = 2};
    if (randmodel_write(path_in("untied.gguf"), &su, &pu) == SEER_OK) {
        gguf *g = NULL;
        ok(gguf_open(path_in("untied.gguf"), &g) == SEER_OK && gguf_find_tensor(g, "output.weight") >= 0,
           "untied: output.weight is written");
        gguf_free(g);
        run_model(path_in("untied.gguf"), prompt, ARRAY_LEN(prompt), logits, "untied q8_0");
    } else {
        ok(0, "untied: write failed: %s", seer_last_error());
    }

    /* the same file from 1 and 3 threads; another file for another seed */
    const struct randmodel_params p1 = {.wtype = DT_Q4_K, .seed = seed, .n_threads = 1};
    const struct randmodel_params p3 = {.wtype = DT_Q4_K, .seed = seed, .n_threads = 3};
    const struct randmodel_params p2 = {.wtype = DT_Q4_K, .seed = seed + 1, .n_threads = 3};
    ok(randmodel_write(path_in("t1.gguf"), &s, &p1) == SEER_OK && randmodel_write(path_in("t3.gguf"), &s, &p3) ==
       SEER_OK && randmodel_write(path_in("t4.gguf"), &s, &p2) == SEER_OK && same_file(path_in("t1.gguf"),
       path_in("t3.gguf")) && same_file(path_in("t1.gguf"), path_in("m-q4_K.gguf")) &&
       !same_file(path_in("t1.gguf"), path_in("t4.gguf")),
       "q4_K: 1, 2 and 3 threads write identical files; seed+1 writes a different one");

    /* llama.cpp reads the f32 file as seer does */
    const char *why = NULL;
    double *lp = llama_probs(path_in("m-f32.gguf"), prompt, ARRAY_LEN(prompt), s.n_vocab, &why);
    if (!lp) {
        skip(why, "llama.cpp loads the random model and agrees with seer");
    } else {
        run_model(path_in("m-f32.gguf"), prompt, ARRAY_LEN(prompt), logits, "f32 (for llama.cpp)");
        double mx = -INFINITY, z = 0, tv = 0;
        for (int64_t i = 0; i < s.n_vocab; i++)
            mx = fmax(mx, logits[i]);
        for (int64_t i = 0; i < s.n_vocab; i++)
            z += exp(logits[i] - mx);
        for (int64_t i = 0; i < s.n_vocab; i++)
            tv += fabs(exp(logits[i] - mx) / z - lp[i]);
        tv *= 0.5;
        ok(tv <= TV_BOUND, "llama.cpp loads the f32 random model (tokenizer included) and its next-token "
           "distribution matches seer's: TV %.2e <= %.0e", tv, TV_BOUND);
        free(lp);
    }
    free(logits);
}

/* llama.cpp's Q4_K_M mix on the small shape (4 layers, attention at 1 and 3): the types written
   out here from llama-quant.cpp's rules — use_more_bits(i, n) is i < n/8, i ≥ 7n/8 or
   (i − n/8) % 3 == 2, so ffn_down of layers 2 and 3 and attn_v of the second attention layer (3)
   are Q6_K; attn_qkv is Q5_K; the tied embedding Q6_K; the rest Q4_K. The file loads and runs;
   the mix needs wtype Q4_K. */
static void test_q4_k_m(void)
{
    const struct randmodel_shape s = small_shape(true);
    const struct randmodel_params p = {.wtype = DT_Q4_K, .mix = RANDMODEL_Q4_K_M, .seed = test_rand_u64(), .n_threads = 2};
    const char *path = path_in("m-q4_k_m.gguf");
    const int rc = randmodel_write(path, &s, &p);
    ok(rc == SEER_OK, "Q4_K_M: written (%s)", rc ? seer_last_error() : "ok");
    if (rc)
        return;
    static const struct { const char *name; enum dtype t; } want[] = {
        {"token_embd.weight", DT_Q6_K},      {"blk.0.attn_qkv.weight", DT_Q5_K}, {"blk.2.attn_qkv.weight", DT_Q5_K},
        {"blk.0.ffn_down.weight", DT_Q4_K},  {"blk.1.ffn_down.weight", DT_Q4_K}, {"blk.2.ffn_down.weight", DT_Q6_K},
        {"blk.3.ffn_down.weight", DT_Q6_K},  {"blk.1.attn_v.weight", DT_Q4_K},   {"blk.3.attn_v.weight", DT_Q6_K},
        {"blk.0.ffn_gate.weight", DT_Q4_K},  {"blk.3.ffn_up.weight", DT_Q4_K},   {"blk.1.attn_q.weight", DT_Q4_K},
        {"blk.1.attn_k.weight", DT_Q4_K},    {"blk.3.attn_output.weight", DT_Q4_K},
        {"blk.0.attn_gate.weight", DT_Q4_K}, {"blk.2.ssm_out.weight", DT_Q4_K},  {"blk.0.ssm_alpha.weight", DT_Q4_K},
    };
    gguf *g = NULL;
    bool types = gguf_open(path, &g) == SEER_OK;
    uint32_t ft = 0;
    for (size_t i = 0; types && i < ARRAY_LEN(want); i++) {
        const int64_t k = gguf_find_tensor(g, want[i].name);
        if (k < 0 || gguf_tensor(g, k)->type != want[i].t) {
            diag("%s: %s, want %s", want[i].name, k < 0 ? "missing" : dtype_name(gguf_tensor(g, k)->type),
                 dtype_name(want[i].t));
            types = false;
        }
    }
    types = types && gguf_get_u32(g, "general.file_type", &ft) == SEER_OK;
    ok(types && ft == 15,
       "Q4_K_M: every matrix has the type llama.cpp's Q4_K_M gives it; general.file_type 15 (got %u)", ft);
    gguf_free(g);
    int32_t prompt[8];
    for (size_t i = 0; i < ARRAY_LEN(prompt); i++)
        prompt[i] = (int32_t)(test_rand_u64() % (uint64_t)s.n_vocab);
    float *logits = malloc((size_t)s.n_vocab * sizeof *logits);
    run_model(path, prompt, ARRAY_LEN(prompt), logits, "q4_K_M");
    free(logits);
    const struct randmodel_params bad = {.wtype = DT_Q8_0, .mix = RANDMODEL_Q4_K_M, .seed = 1, .n_threads = 1};
    ok(randmodel_write(path_in("bad-mix.gguf"), &s, &bad) == SEER_EINVAL && access(path_in("bad-mix.gguf"), F_OK) != 0,
       "the Q4_K_M mix over Q8_0 is refused and writes nothing: %s", seer_last_error());
}

int main(void)
{
    plan_no_plan();
    test_seed();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    test_presets();
    test_refusals();
    test_models();
    test_q4_k_m();
    return done_testing();
}
