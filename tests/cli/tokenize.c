/* Tests `seer tokenize` (cli/tokenize.c) as a user runs it, on a model directory with no weights
   and a small tokenizer (support/tiny_vocab.h: the 256 byte tokens, three merges, a special and a
   non-special added token; spec §6.1): --json and the id<TAB>piece listing agree with the
   library's tok_encode and with ids worked out by hand, --special switches special tokens on, -f
   reads a file, "--" ends the options, a tokenizer.json alone (the file, or a directory without
   config.json) gives the model directory's ids; a truncated GGUF, a missing model, a non-UTF-8 file
   and bad usage fail with the documented exit status (1, 1, 1, 2), nothing on stdout and one
   "seer: ..." line on stderr; --help exits 0. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lm/tok_test.h"
#include "lm/tokenizer.h"
#include "support/testutil.h"
#include "support/tiny_vocab.h"
#include "tap.h"

#define SEER SEER_BINARY_DIR "/seer"

/* Runs a shell command: stdout into *out, stderr into *err (both malloc'ed), returns the exit status. */
static int run(const char *dir, const char *cmd, char **out, char **err)
{
    char full[4096], errpath[600];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    snprintf(full, sizeof full, "%s 2> '%s'", cmd, errpath);
    FILE *p = popen(full, "r");
    size_t n = 0, cap = 1 << 16;
    *out = calloc(cap, 1);
    *err = calloc(cap, 1);
    if (!p || !*out || !*err)
        BAIL("popen failed");
    size_t got;
    while ((got = fread(*out + n, 1, cap - 1 - n, p)) > 0)
        n += got;
    int st = pclose(p);
    FILE *e = fopen(errpath, "r");
    if (e) {
        size_t m = fread(*err, 1, cap - 1, e);
        (*err)[m] = 0;
        fclose(e);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool json_ids_equal(const char *text, const tok_ids *want)
{
    json_t *j = json_loads(text, 0, NULL);
    bool same = json_is_array(j) && json_array_size(j) == want->n;
    for (size_t i = 0; same && i < want->n; i++)
        same = json_integer_value(json_array_get(j, i)) == want->ids[i];
    json_decref(j);
    return same;
}

/* One "seer: ..." line on stderr. */
static bool one_error_line(const char *err)
{
    const char *nl = strchr(err, '\n');
    return !strncmp(err, "seer: ", 6) && nl && nl[1] == 0;
}

int main(void)
{
    plan_no_plan();
    if (access(SEER, X_OK) != 0) {
        skip("the seer binary is not built (build the 'seer' target)", "seer tokenize");
        return done_testing();
    }
    const char *dir = test_tmp_dir();
    char path[512], tjson[600], cmd[2048], *out, *err;
    snprintf(path, sizeof path, "%s", dir); /* the model: config.json and tokenizer.json */
    tv_write_model(dir);
    snprintf(tjson, sizeof tjson, "%s/tokenizer.json", dir);
    tokenizer *tok = NULL;
    if (!ok(tok_load_hf_json(tjson, &tok) == SEER_OK, "the test tokenizer loads (%s)", seer_last_error()))
        return done_testing();

    const char *text = "abc <s>x<t> ab\n";
    snprintf(cmd, sizeof cmd, "%s/text.txt", dir);
    FILE *f = fopen(cmd, "wb");
    fputs(text, f);
    fclose(f);
    /* by hand, Qwen3.5 regex pieces: "abc" " <" "s" ">x" <t> " ab" "\n" without --special (the
       special "<s>" is text); "abc" " " <s> "x" <t> " ab" "\n" with it; "<t>" is always a token */
    static const int32_t want_plain[] = {257, 32, 60, 115, 62, 120, 260, 32, 256, 10};
    static const int32_t want_special[] = {257, 32, 259, 120, 260, 32, 256, 10};
    for (int ps = 0; ps < 2; ps++) {
        tok_ids want = {0}, hand = {0};
        tok_encode(tok, text, strlen(text), ps, &want);
        const int32_t *h = ps ? want_special : want_plain;
        size_t hn = ps ? sizeof want_special / sizeof *h : sizeof want_plain / sizeof *h;
        for (size_t i = 0; i < hn; i++)
            ids_push(&hand, h[i]);
        snprintf(cmd, sizeof cmd, "%s tokenize -m '%s' --json%s -f '%s/text.txt'", SEER, path, ps ? " --special" : "", dir);
        int st = run(dir, cmd, &out, &err);
        ok(st == 0 && json_ids_equal(out, &want) && ids_equal(&want, &hand) && !*err,
           "--json%s -f FILE: the library's ids, as worked out by hand: %s", ps ? " --special" : "", ids_str(&want));
        free(out);
        free(err);
        tok_ids_free(&want);
        tok_ids_free(&hand);
    }

    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s' 'abc x'", SEER, dir);
    int st = run(dir, cmd, &out, &err);
    ok(st == 0 && !strcmp(out, "257\tabc\n258\t x\n") && !*err, "-m DIR TEXT lists id<TAB>piece lines");
    free(out);
    free(err);

    snprintf(cmd, sizeof cmd, "%s tokenize --help", SEER);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && strstr(out, "usage: seer tokenize") && strstr(out, "--special") && !*err,
       "--help: the usage on stdout, exit 0");
    free(out);
    free(err);

    /* a tokenizer alone (the file, or a directory with no config.json) gives the model's ids */
    char *want_out, *want_err;
    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s' --json --special -f '%s/text.txt'", SEER, path, dir);
    st = run(dir, cmd, &want_out, &want_err);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/tok' && cp '%s' '%s/tok/' && %s tokenize -m '%s' --json --special -f '%s/text.txt'",
             dir, tjson, dir, SEER, tjson, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && !strcmp(out, want_out) && *out == '[' && !*err,
       "-m tokenizer.json: the model directory's ids: %s", out);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s/tok' --json --special -f '%s/text.txt'", SEER, dir, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && !strcmp(out, want_out) && !*err, "-m DIR holding only tokenizer.json: the same ids: %s", out);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s' 'abc x'", SEER, tjson);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && !strcmp(out, "257\tabc\n258\t x\n") && !*err, "-m tokenizer.json TEXT lists id<TAB>piece lines");
    free(out);
    free(err);
    free(want_out);
    free(want_err);

    snprintf(cmd, sizeof cmd, "printf 'a\\n\\001\\303\\251' > '%s/esc.txt' && %s tokenize -m '%s' -f '%s/esc.txt'", dir,
             SEER, path, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && !strcmp(out, "97\ta\n10\t\\n\n1\t\\x01\n195\t\\xc3\n169\t\\xa9\n"),
       "pieces are escaped: newline, control bytes, bytes of a split character");
    free(out);
    free(err);

    tok_ids want = {0};
    tok_encode(tok, "-ab", 3, false, &want);
    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s' --json -- -ab", SEER, path);
    st = run(dir, cmd, &out, &err);
    ok(st == 0 && json_ids_equal(out, &want), "-- ends the options: a text may start with '-'");
    free(out);
    free(err);
    tok_ids_free(&want);

    snprintf(cmd, sizeof cmd, "printf 'GGUF\\3\\0\\0\\0' > '%s/m.gguf' && %s tokenize -m '%s/m.gguf' x", dir, SEER, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 1 && !*out && one_error_line(err) && strstr(err, "m.gguf"),
       "a truncated GGUF: exit 1, one stderr line naming it: %.*s", (int)strcspn(err, "\n"), err);
    free(out);
    free(err);

    snprintf(cmd, sizeof cmd, "%s tokenize -m '%s/nope' x", SEER, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 1 && !*out && one_error_line(err) && strstr(err, "nope"), "a missing model: exit 1, stderr names it");
    free(out);
    free(err);

    snprintf(cmd, sizeof cmd, "printf 'a\\377b' > '%s/bad.txt' && %s tokenize -m '%s' -f '%s/bad.txt'", dir, SEER, path, dir);
    st = run(dir, cmd, &out, &err);
    ok(st == 1 && !*out && one_error_line(err) && strstr(err, "bad.txt is not UTF-8") && strstr(err, "byte 1"),
       "a non-UTF-8 file: exit 1 naming it and the byte, nothing on stdout: %.*s", (int)strcspn(err, "\n"), err);
    free(out);
    free(err);

    static const char *const usage_errors[] = {"", "x", "-m", "--bogus -m m x", "-m m a b", "-m m -f f x"};
    int bad = 0;
    for (size_t i = 0; i < sizeof usage_errors / sizeof *usage_errors; i++) {
        snprintf(cmd, sizeof cmd, "%s tokenize %s", SEER, usage_errors[i]);
        st = run(dir, cmd, &out, &err);
        bad += st != 2 || *out || !strstr(err, "usage");
        free(out);
        free(err);
    }
    ok(bad == 0, "usage errors exit 2 with the usage on stderr (%d wrong)", bad);

    tok_free(tok);
    return done_testing();
}
