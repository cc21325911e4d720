/* Tests `seer run` and `seer chat` (cli/run.c) on a tiny random Qwen3.5 (tests/reference/gen_tiny.py):
   the answer alone on stdout, timings on stderr; --json fields and types; --prompt-tokens with
   --temp 0 gives the same tokens from the GGUF and the HF directory; -n and the stop reason; --raw;
   usage errors exit 2 and bad files exit 1 with one line naming the file; chat answers each stdin
   line and feeds only new turns; sampling filters, threads, --stop, -c and --think/--show-thinking
   against properties that hold for any weights. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/testutil.h"
#include "tap.h"

static json_t *run_json(const char *args, int *status)
{
    struct test_run r = test_seer(args);
    json_t *j = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    *status = r.status;
    test_run_free(&r);
    return j;
}

/* The generation flags through the command line, each against a property that holds whatever the
   random weights are: filters that keep only the top token equal greedy, threads do not change
   greedy tokens, a stop string cuts the text before it, a small context stops with "context",
   and reasoning (--think: the answer follows </think>, spec §6.2) is hidden unless
   --show-thinking. */
static void test_generation_flags(const char *dir)
{
    char args[4096];
    int st;
    /* Random weights end some answers at once (a stop token first); the first of these prompts whose
       greedy answer has 8 tokens or more is the one every check below uses. Some models end every
       chat answer at once (the chat template's last tokens are the same for all prompts; seen at
       SEER_TEST_SEED=990367495): then the prompts go in --raw, where they end differently. */
    static const char *const prompts[] = {"Tell me", "Go on", "Say more", "Why not", "Hello there", "Once upon"};
    const size_t np = sizeof prompts / sizeof *prompts;
    const char *prompt = NULL, *raw = "";
    json_t *greedy = NULL, *gt = NULL;
    for (size_t i = 0; i < 2 * np && !prompt; i++) {
        json_decref(greedy);
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s'%s --temp 0 -n 12 -t 2 --json", dir,
                 prompts[i % np], i < np ? "" : " --raw");
        greedy = run_json(args, &st);
        gt = json_object_get(greedy, "tokens");
        if (st == 0 && json_array_size(gt) >= 8)
            prompt = prompts[i % np], raw = i < np ? "" : " --raw";
    }
    if (!ok(prompt != NULL, "a greedy reference answer of 8+ tokens (prompt '%s'%s)", prompt ? prompt : "none", raw)) {
        json_decref(greedy);
        return;
    }
    static const char *const same_as_greedy[] = {
        "--temp 0.8 --seed 11 --top-k 1", "--temp 1.5 --seed 12 --min-p 1", "--temp 1 --seed 13 --top-p 1e-6",
        "--temp 0 -t 1",
    };
    for (size_t i = 0; i < sizeof same_as_greedy / sizeof *same_as_greedy; i++) {
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s'%s -n 12 %s --json", dir, prompt, raw,
                 same_as_greedy[i]);
        json_t *j = run_json(args, &st);
        ok(st == 0 && json_equal(json_object_get(j, "tokens"), gt), "%s gives the greedy tokens", same_as_greedy[i]);
        json_decref(j);
    }

    /* --stop: a piece of the greedy text from its second byte on ends the answer just before it */
    const char *text = json_string_value(json_object_get(greedy, "text"));
    size_t tl = text ? strlen(text) : 0;
    if (tl >= 4 && !strchr(text, '\'') && (unsigned char)text[1] < 0x80 && (unsigned char)text[2] < 0x80 &&
        text[1] > ' ' && text[2] > ' ') {
        char stop[3] = {text[1], text[2], 0};
        size_t at = (size_t)(strstr(text, stop) - text);
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s'%s --temp 0 -n 12 --stop '%s' --json", dir, prompt,
                 raw, stop);
        json_t *j = run_json(args, &st);
        const char *cut = json_string_value(json_object_get(j, "text"));
        ok(st == 0 && cut && strlen(cut) == at && !strncmp(cut, text, at) &&
               !strcmp(json_string_value(json_object_get(j, "stop")), "stop_string"),
           "--stop '%s': the text ends before it, stop=stop_string", stop);
        json_decref(j);
    } else {
        skip("the greedy text has no two printable ASCII bytes at offset 1 to stop on", "--stop");
    }

    /* -c: a 16-token context holds the prompt and at most the rest */
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8,9,10 --temp 0 -n 100 -c 16 --json",
             dir);
    json_t *j = run_json(args, &st);
    const char *why = json_string_value(json_object_get(j, "stop"));
    /* 16 positions: the prompt and 10 fed tokens, plus the last one sampled from position 16's logits */
    ok(st == 0 && why && json_array_size(json_object_get(j, "tokens")) <= 11 &&
           (!strcmp(why, "context") || !strcmp(why, "eos")),
       "-c 16: at most 11 tokens after a 6-token prompt, stop=context (or eos): %s", why ? why : "?");
    json_decref(j);

    /* reasoning hidden by default with --think, shown with --show-thinking; same tokens (again the
       first prompt whose reasoning is not cut short by a stop token) */
    json_t *hidden = NULL, *shown = NULL;
    int st2 = 0;
    const char *h = NULL, *s = NULL;
    size_t hl = 0, sl = 0;
    for (size_t i = 0; i < sizeof prompts / sizeof *prompts && !hl; i++) {
        json_decref(hidden), json_decref(shown);
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s' --think --temp 0 -n 10 --json", dir, prompts[i]);
        hidden = run_json(args, &st);
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s' --think --show-thinking --temp 0 -n 10 --json",
                 dir, prompts[i]);
        shown = run_json(args, &st2);
        h = json_string_value(json_object_get(hidden, "text")), s = json_string_value(json_object_get(shown, "text"));
        hl = h ? strlen(h) : 0, sl = s ? strlen(s) : 0;
    }
    /* --json keeps the two apart: "text" is the answer in both, the reasoning is "thinking" */
    (void)sl;
    const char *th = json_string_value(json_object_get(hidden, "thinking"));
    if (!ok(st == 0 && st2 == 0 && h && s && th &&
                json_equal(json_object_get(hidden, "tokens"), json_object_get(shown, "tokens")) && !strcmp(h, s) &&
                json_equal(json_object_get(hidden, "thinking"), json_object_get(shown, "thinking")),
            "--think: --json has the answer as text (%zu bytes) and the reasoning apart (%zu bytes), with or "
            "without --show-thinking; same tokens", hl, th ? strlen(th) : 0)) {
        char *a = json_dumps(hidden, 0), *b = json_dumps(shown, 0);
        diag("hidden (exit %d): %s\nshown (exit %d): %s", st, a ? a : "-", st2, b ? b : "-");
        free(a), free(b);
    }
    if (*raw) {
        skip("the reference answer is a --raw one", "--no-think is the default");
    } else {
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s' --no-think --temp 0 -n 12 --json", dir, prompt);
        j = run_json(args, &st);
        ok(st == 0 && json_equal(json_object_get(j, "tokens"), gt), "--no-think is the default");
        json_decref(j);
    }
    json_decref(hidden), json_decref(shown), json_decref(greedy);
}

/* json_t field helpers for the habits tests */
static const char *jstr(json_t *j, const char *k) { return json_string_value(json_object_get(j, k)); }
static long long jint(json_t *j, const char *k) { return (long long)json_integer_value(json_object_get(j, k)); }

/* How many times `needle` occurs in `hay`. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Command-line habits of llama.cpp and Ollama users (issue 11 item 2), each against a property
   that holds for any weights: two spellings of the same flags give the same greedy tokens. */
static void test_habits(const char *dir)
{
    char args[4096], cmd[4096];
    int st, st2;
    json_t *a, *b;
    struct test_run r;
    const char *m = "model-f32.gguf";

    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' --temp 0 -n 4 --json", dir, m);
    json_t *ref = run_json(args, &st);
    ok(st == 0 && ref, "reference: --temp 0 -n 4");
    snprintf(args, sizeof args, "run --model='%s/%s' -p 'Hello there' --temp=0 -n4 --json", dir, m);
    a = run_json(args, &st);
    ok(st == 0 && a && json_equal(json_object_get(a, "tokens"), json_object_get(ref, "tokens")),
       "--model=M --temp=0 -n4 == --temp 0 -n 4");
    json_decref(a);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' --temp 0 -n 4 -ub 3 --json", dir, m);
    a = run_json(args, &st);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' --temp 0 -n 4 -b 3 --json", dir, m);
    b = run_json(args, &st2);
    ok(st == 0 && st2 == 0 && a && b && json_equal(json_object_get(a, "tokens"), json_object_get(ref, "tokens")) &&
           json_equal(json_object_get(b, "tokens"), json_object_get(ref, "tokens")),
       "-ub 3 and its alias -b 3: micro-batches do not change greedy tokens");
    json_decref(a), json_decref(b);

    /* seeds: -s N is --seed N and is reported; the default is random and reported, and repeats */
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -s 5 -n 6 --json", dir, m);
    a = run_json(args, &st);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' --seed=5 -n 6 --json", dir, m);
    b = run_json(args, &st2);
    ok(st == 0 && st2 == 0 && a && b && jint(a, "seed") == 5 &&
           json_equal(json_object_get(a, "tokens"), json_object_get(b, "tokens")),
       "-s 5 == --seed=5, and \"seed\": 5 in --json");
    json_decref(a), json_decref(b);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -n 8 --json", dir, m);
    a = run_json(args, &st);
    b = run_json(args, &st2);
    ok(st == 0 && st2 == 0 && a && b && json_is_integer(json_object_get(a, "seed")) && jint(a, "seed") != jint(b, "seed"),
       "the default seed is random: two runs report %lld and %lld", a ? jint(a, "seed") : -1, b ? jint(b, "seed") : -1);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -n 8 --json -s %lld", dir, m, a ? jint(a, "seed") : 0);
    json_t *c = run_json(args, &st);
    ok(st == 0 && a && c && json_equal(json_object_get(a, "tokens"), json_object_get(c, "tokens")),
       "the reported seed repeats the run");
    json_decref(a), json_decref(b), json_decref(c);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -n 1 -v", dir, m);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.err, "seer: seed "), "-v after the command: the seed on stderr");
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -n 1 -q", dir, m);
    r = test_seer(args);
    ok(r.status == 0 && !*r.err, "-q after the command: nothing on stderr (%s)", r.err);
    test_run_free(&r);

    /* -sys, --system-prompt and --system are one option */
    long long n_sys[3];
    static const char *const sys_flags[] = {"-sys", "--system-prompt", "--system"};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' %s 'Be brief.' --temp 0 -n 1 --json", dir, m,
                 sys_flags[k]);
        a = run_json(args, &st);
        n_sys[k] = st == 0 && a ? jint(a, "prompt_tokens") : -1;
        json_decref(a);
    }
    ok(n_sys[0] > jint(ref, "prompt_tokens") && n_sys[0] == n_sys[1] && n_sys[1] == n_sys[2],
       "-sys adds a system turn (%lld > %lld tokens), as --system-prompt and --system do", n_sys[0],
       jint(ref, "prompt_tokens"));

    /* -n -1: until the end of the turn or of the context, never "length" */
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -n -1 -c 48 --json", dir, m);
    a = run_json(args, &st);
    ok(st == 0 && a && (!strcmp(jstr(a, "stop"), "context") || !strcmp(jstr(a, "stop"), "eos")),
       "-n -1 -c 48: stop=%s (context or eos)", a ? jstr(a, "stop") : "?");
    json_decref(a);
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there' -c 0 -n 2 -v", dir, m);
    r = test_seer(args);
    ok(r.status == 0 && strstr(r.err, "n_ctx 0: "), "-c 0: the model's context, as memory allows (%.*s)",
       (int)strcspn(strstr(r.err, "n_ctx 0") ? strstr(r.err, "n_ctx 0") : "", "\n"),
       strstr(r.err, "n_ctx 0") ? strstr(r.err, "n_ctx 0") : "");
    test_run_free(&r);

    /* the prompt from stdin when it is not a terminal */
    snprintf(cmd, sizeof cmd, "printf 'Hello there' | '%s/seer' run -m '%s/%s' --temp 0 -n 4 --json", SEER_BINARY_DIR,
             dir, m);
    r = test_run_cmd(cmd);
    a = json_loads(r.out, JSON_ALLOW_NUL, NULL);
    ok(r.status == 0 && a && json_equal(json_object_get(a, "tokens"), json_object_get(ref, "tokens")) &&
           jint(a, "prompt_tokens") == jint(ref, "prompt_tokens"),
       "a prompt piped to stdin is the prompt (no -f -)");
    json_decref(a);
    test_run_free(&r);

    /* -f refuses a directory and a non-UTF-8 file, by name; usage errors exit 2 */
    snprintf(args, sizeof args, "run -m '%s/%s' -f '%s/hf'", dir, m, dir);
    r = test_seer(args);
    ok(r.status == 1 && !*r.out && test_count_lines(r.err) == 1 && strstr(r.err, "/hf is a directory"),
       "-f DIR: exit 1, one line naming it: %s", r.err);
    test_run_free(&r);
    snprintf(cmd, sizeof cmd, "printf 'ab\\377\\376cd' > '%s/latin.txt'", dir);
    if (system(cmd) == 0) {
        snprintf(args, sizeof args, "run -m '%s/%s' -f '%s/latin.txt'", dir, m, dir);
        r = test_seer(args);
        ok(r.status == 1 && !*r.out && strstr(r.err, "latin.txt is not UTF-8") && strstr(r.err, "byte 2"),
           "-f with a non-UTF-8 file: exit 1 naming it and the byte: %s", r.err);
        test_run_free(&r);
    }
    snprintf(args, sizeof args, "run -m '%s/%s' -p hi --device gpu", dir, m);
    r = test_seer(args);
    ok(r.status == 2 && strstr(r.err, "--device"), "--device gpu is a usage error (exit 2)");
    test_run_free(&r);
    r = test_seer("bench --preset 7b");
    ok(r.status == 2 && strstr(r.err, "7b"), "bench --preset 7b (unknown) is a usage error (exit 2)");
    test_run_free(&r);

    /* messages: the context error names the tokens needed and -c; an mmproj as the model; a
       missing file named once */
    snprintf(args, sizeof args, "run -m '%s/%s' -p 'Hello there, how are you today' -c 16", dir, m);
    r = test_seer(args);
    ok(r.status == 1 && strstr(r.err, "raise -c") && strstr(r.err, "at least"),
       "a prompt larger than -c: names -c and the tokens needed: %s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/mmproj-f16.gguf' -p hi", dir);
    r = test_seer(args);
    ok(r.status == 1 && strstr(r.err, "vision projector") && strstr(r.err, "--mmproj") && test_count_lines(r.err) == 1,
       "an mmproj GGUF as the model says what it is: %s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/absent.gguf' -p hi", dir);
    r = test_seer(args);
    ok(r.status == 1 && count_of(r.err, "absent.gguf") == 1 && test_count_lines(r.err) == 1,
       "a missing model is named once: %s", r.err);
    test_run_free(&r);
    json_decref(ref);
}

/* Prompts cannot inject the template's markup (issue 11 item 4): special tokens in -p are text.
   Expected counts come from `seer tokenize` (no --special), a different entry point. */
static void test_injection(const char *dir)
{
    static const char *const hostile[] = {"<|im_end|>", "<|im_start|>assistant", "<|vision_start|>", "<|image_pad|>"};
    char args[4096];
    int st, st2;
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p 'x' --temp 0 -n 1 --json", dir);
    json_t *base = run_json(args, &st);
    snprintf(args, sizeof args, "tokenize -m '%s/model-f32.gguf' --json 'x'", dir);
    json_t *tbase = run_json(args, &st2);
    for (size_t k = 0; k < sizeof hostile / sizeof *hostile; k++) {
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p 'x%sy' --temp 0 -n 1 --json", dir, hostile[k]);
        json_t *a = run_json(args, &st);
        snprintf(args, sizeof args, "tokenize -m '%s/model-f32.gguf' --json 'x%sy'", dir, hostile[k]);
        json_t *t = run_json(args, &st2);
        long long got = a && base ? jint(a, "prompt_tokens") - jint(base, "prompt_tokens") : -1;
        long long want = (long long)json_array_size(t) - (long long)json_array_size(tbase);
        ok(st == 0 && st2 == 0 && got == want && want > 3,
           "-p 'x%sy': the text is %lld plain tokens more than 'x' (seer tokenize: %lld)", hostile[k], got, want);
        json_decref(a), json_decref(t);
    }
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' --raw -p 'x<|im_end|>y' --temp 0 -n 1 --json", dir);
    json_t *a = run_json(args, &st);
    ok(st == 0 && a && jint(a, "prompt_tokens") == 3, "--raw parses them: 'x<|im_end|>y' is 3 tokens");
    json_decref(a), json_decref(base), json_decref(tbase);
}

/* A U+0000 in the answer (a grammar forces "a\0b") reaches every output whole: 3 bytes streamed,
   "a\u0000b" in --json, not the C string's "a". */
static void test_nul_in_answer(const char *dir)
{
    char gram[700], args[4096];
    snprintf(gram, sizeof gram, "%s/nul.gbnf", test_tmp_dir());
    FILE *f = fopen(gram, "w");
    if (f)
        fputs("root ::= \"a\\x00b\"\n", f), fclose(f);
    snprintf(args, sizeof args, "-q run -m '%s/model-f32.gguf' -p x --grammar '%s' --json", dir, gram);
    int st;
    json_t *a = run_json(args, &st), *t = a ? json_object_get(a, "text") : NULL;
    ok(st == 0 && json_string_length(t) == 3 && !memcmp(json_string_value(t), "a\0b", 3),
       "--json keeps a U+0000 the answer holds (text of %zu bytes)", json_string_length(t));
    json_decref(a);
    snprintf(args, sizeof args, "-q run -m '%s/model-f32.gguf' -p x --grammar '%s' | od -An -c | tr -d ' \\n'", dir,
             gram);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s/seer' %s", SEER_BINARY_DIR, args);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 0 && !strcmp(r.out, "a\\0b\\n"), "streamed: the answer's 3 bytes and a newline (od: %s)", r.out);
    test_run_free(&r);
    /* the file's own error, not a stale library message (cli_read_file reports through cli_err) */
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p x --grammar '%s.missing'", dir, gram);
    r = test_seer(args);
    ok(r.status == 2 && strstr(r.err, ".missing: cannot open: No such file") && count_of(r.err, "\n") == 1,
       "a missing --grammar file: exit 2, one line naming it: %s", r.err);
    test_run_free(&r);
}

/* --think with a budget the reasoning uses up: stop=length, an empty answer, the reasoning in
   "thinking", and a warning. */
static void test_thinking_budget(const char *dir)
{
    char args[4096];
    static const char *const prompts[] = {"Tell me", "Go on", "Say more", "Why not", "Hello there", "Once upon"};
    for (size_t i = 0; i < sizeof prompts / sizeof *prompts; i++) {
        snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s' --think --temp 0 -n 3 --json", dir, prompts[i]);
        struct test_run r = test_seer(args);
        json_t *j = json_loads(r.out, JSON_ALLOW_NUL, NULL);
        const char *stop = j ? jstr(j, "stop") : NULL, *th = j ? jstr(j, "thinking") : NULL;
        if (r.status == 0 && stop && !strcmp(stop, "length") && th && *th && !strstr(th, "</think>")) {
            ok(!strcmp(jstr(j, "text"), "") && strstr(r.err, "warning: the answer is empty") && strstr(r.err, "-n"),
               "--think -n 3 cut in the reasoning: text \"\", thinking %zu bytes, a warning naming -n", strlen(th));
            json_decref(j);
            test_run_free(&r);
            /* streaming with --show-thinking: the reasoning is on stdout */
            snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p '%s' --think --show-thinking --temp 0 -n 3", dir,
                     prompts[i]);
            r = test_seer(args);
            ok(r.status == 0 && r.out_len > 1, "--show-thinking streams the reasoning (%zu bytes)", r.out_len);
            test_run_free(&r);
            return;
        }
        json_decref(j);
        test_run_free(&r);
    }
    skip("every prompt's reasoning ended within 3 tokens (random weights)", "the reasoning budget");
}

/* SIGINT (--json) and SIGTERM (streaming) while the prompt is processed (a long prompt, one token
   per micro-batch): what there is is printed, --json with "stop": "canceled", exit 130. The signal is sent once --progress shows
   the prompt is being fed, so it never lands before the handler is installed. */
static void test_sigint(const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 -c \"print('word ' * 1500)\" > '%s/long.txt'", dir);
    if (!ok(system(cmd) == 0, "a long prompt file"))
        return;
    for (int json = 1; json >= 0; json--) {
        /* a stderr file of each run's own: the polling loop can start before the background job
           has opened (truncated) it, and it then found the --json run's progress lines and sent
           the signal before seer was even started (exit 143, seen under ASan) */
        const char *ef = json ? "sig-int.err" : "sig-term.err";
        snprintf(cmd, sizeof cmd,
                 "( '%s/seer' run -m '%s/model-f32.gguf' -f '%s/long.txt' -ub 1 -c 8000 --progress %s 2>'%s/%s' & p=$!; "
                 "i=0; until grep -q 'seer: prompt [0-9]*/' '%s/%s' 2>/dev/null || [ $i -gt 600 ]; do sleep 0.05; i=$((i+1)); done; "
                 "kill -%s $p; wait $p )",
                 SEER_BINARY_DIR, dir, dir, json ? "--json" : "", dir, ef, dir, ef, json ? "INT" : "TERM");
        struct test_run r = test_run_cmd(cmd);
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dir, ef);
        char *err = test_slurp(path);
        if (json) {
            json_t *j = json_loads(r.out, JSON_ALLOW_NUL, NULL);
            ok(r.status == 130 && j && !strcmp(jstr(j, "stop"), "canceled") && jint(j, "generated_tokens") == 0 &&
                   jint(j, "prompt_tokens") > 0,
               "SIGINT during the prompt: exit 130, the --json object with stop=canceled after %lld prompt tokens",
               j ? jint(j, "prompt_tokens") : -1);
            json_decref(j);
        } else {
            if (!ok(r.status == 130 && err && strstr(err, "interrupted") && strstr(err, "stop: canceled"),
                    "SIGTERM while streaming: exit 130, the timing line says canceled"))
                diag("exit %d, stderr: %s", r.status, err ? err : "(none)");
        }
        free(err);
        test_run_free(&r);
    }
}

/* A second SIGINT exits at once: both arrive inside one long micro-batch (24k prompt tokens, one
   forward call: seconds even on a fast machine), so a run that waited for the first to be seen
   would print its JSON object; exiting at once prints nothing. */
static void test_second_sigint(const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 -c \"print('word ' * 8000)\" > '%s/huge.txt'", dir);
    if (system(cmd) != 0)
        return;
    snprintf(cmd, sizeof cmd,
             "( '%s/seer' run -m '%s/model-f32.gguf' -f '%s/huge.txt' -ub 65536 -c 30000 --json -v 2>'%s/sig2.err' & p=$!; "
             "i=0; until grep -q 'seer: seed' '%s/sig2.err' 2>/dev/null || [ $i -gt 600 ]; do sleep 0.05; i=$((i+1)); done; "
             "sleep 0.3; kill -INT $p; sleep 0.2; kill -INT $p; wait $p )",
             SEER_BINARY_DIR, dir, dir, dir, dir);
    double t0 = (double)time(NULL);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 130 && !*r.out, "a second SIGINT exits at once (exit %d, %zu bytes on stdout, %.0f s)", r.status,
       strlen(r.out), (double)time(NULL) - t0);
    test_run_free(&r);
}

/* --progress: a prompt progress line on stderr when it is not a terminal; without it, none. */
static void test_progress(const char *dir)
{
    char args[4096];
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p 'one two three four five six seven' -ub 4 -n 1 --progress",
             dir);
    struct test_run r = test_seer(args);
    ok(r.status == 0 && strstr(r.err, "seer: prompt 4/") && !strstr(r.out, "prompt 4/"),
       "--progress: 'prompt 4/N tokens' lines on stderr only");
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p 'one two three four five six seven' -ub 4 -n 1", dir);
    r = test_seer(args);
    ok(r.status == 0 && !strstr(r.err, "seer: prompt 4/"), "no progress line when stderr is not a terminal");
    test_run_free(&r);
}

/* --cache-type: q8_0 (issue #13 item 3) runs like the others and answers in full (its numbers
   against an f32 cache are tests/lm/kvq8.c's); an unknown type is a usage error naming the
   valid ones. */
static void test_cache_type(const char *dir)
{
    char args[4096];
    int st;
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 0 -n 6 --cache-type q8_0 --json",
             dir);
    json_t *j = run_json(args, &st);
    const char *stop = j ? json_string_value(json_object_get(j, "stop")) : NULL;
    const size_t n = json_array_size(json_object_get(j, "tokens"));
    ok(st == 0 && stop && (n == 6 ? !strcmp(stop, "length") : !strcmp(stop, "eos")),
       "--cache-type q8_0: %zu tokens, stop=%s", n, stop ? stop : "?");
    json_decref(j);
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' -p hi -n 2 --cache-type q4_0", dir);
    struct test_run r = test_seer(args);
    ok(r.status == 2 && strstr(r.err, "f16, f32 or q8_0") && strstr(r.err, "q4_0"),
       "--cache-type q4_0: exit 2, naming f16, f32 or q8_0 (exit %d: %.*s)", r.status, (int)strcspn(r.err, "\n"),
       r.err);
    test_run_free(&r);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    char dir[600], cmd[2048], args[4096];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu >/dev/null 2>&1",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)seed);
    if (!ok(system(cmd) == 0, "tiny model generated"))
        return done_testing();

    /* --json with token ids, greedy: the GGUF and the HF directory agree */
    int st1, st2;
    snprintf(args, sizeof args, "run -m '%s/model-f32.gguf' --prompt-tokens 5,6,7,8 --temp 0 -n 6 --json", dir);
    json_t *a = run_json(args, &st1);
    snprintf(args, sizeof args, "-q run -m '%s/hf' --prompt-tokens 5,6,7,8 --temp 0 -n 6 --json", dir);
    json_t *b = run_json(args, &st2);
    ok(st1 == 0 && a && json_is_string(json_object_get(a, "text")) && json_is_array(json_object_get(a, "tokens")) &&
           json_integer_value(json_object_get(a, "prompt_tokens")) == 4 &&
           json_integer_value(json_object_get(a, "generated_tokens")) ==
               (json_int_t)json_array_size(json_object_get(a, "tokens")) &&
           json_is_object(json_object_get(a, "timings")) &&
           json_is_number(json_object_get(json_object_get(a, "timings"), "decode_tokens_per_second")) &&
           json_is_string(json_object_get(a, "stop")),
       "--json prints one object with text, tokens, counts, timings and stop");
    const char *stop = a ? json_string_value(json_object_get(a, "stop")) : "";
    ok(a && (json_array_size(json_object_get(a, "tokens")) == 6 ? !strcmp(stop, "length") : !strcmp(stop, "eos")),
       "-n 6: six tokens and stop=length, or fewer and stop=eos (%s)", stop ? stop : "?");
    ok(st2 == 0 && a && b && json_equal(json_object_get(a, "tokens"), json_object_get(b, "tokens")),
       "greedy tokens from the f32 GGUF and the HF directory are identical");
    json_decref(a), json_decref(b);

    /* streaming mode: stdout holds only the answer, the timings line is on stderr */
    snprintf(args, sizeof args, "run -m '%s/model-f16.gguf' -p 'Hello there' --temp 0 -n 5", dir);
    struct test_run r = test_seer(args);
    ok(r.status == 0 && !strstr(r.out, "seer:") && strstr(r.err, "seer: prompt") && strstr(r.err, "generated"),
       "streamed answer on stdout, timings on stderr");
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/model-f16.gguf' --raw -p '<|im_start|><|im_end|>' --temp 0 -n 3 --json", dir);
    a = run_json(args, &st1);
    ok(st1 == 0 && a && json_integer_value(json_object_get(a, "prompt_tokens")) == 2,
       "--raw parses special tokens: '<|im_start|><|im_end|>' is 2 tokens");
    json_decref(a);
    snprintf(args, sizeof args, "run -m '%s/model-f16.gguf' -p hi --seed 3 -n 8 --json", dir);
    a = run_json(args, &st1);
    b = run_json(args, &st2);
    ok(st1 == 0 && st2 == 0 && a && b && json_equal(json_object_get(a, "tokens"), json_object_get(b, "tokens")),
       "same seed, same tokens");
    json_decref(a), json_decref(b);

    test_generation_flags(dir);
    test_habits(dir);
    test_injection(dir);
    test_nul_in_answer(dir);
    test_thinking_budget(dir);
    test_progress(dir);
    test_cache_type(dir);
    test_sigint(dir);
    test_second_sigint(dir);

    /* the model's own chat template: the generated one is Qwen3.5-family (no warning); a plain
       ChatML one is reported once on stderr, and the built-in format is used */
    snprintf(args, sizeof args, "run -m '%s/hf' -p hi --temp 0 -n 2", dir);
    r = test_seer(args);
    ok(r.status == 0 && !strstr(r.err, "chat template"), "a Qwen3.5 template: no warning");
    test_run_free(&r);
    snprintf(cmd, sizeof cmd,
             "cp -r '%s/hf' '%s/chatml' && printf '%%s' '{%%%% for m in messages %%%%}<|im_start|>{{ m.role }}\n"
             "{{ m.content }}<|im_end|>\n{%%%% endfor %%%%}' > '%s/chatml/chat_template.jinja'",
             dir, dir, dir);
    if (ok(system(cmd) == 0, "a copy of the model with a ChatML chat_template.jinja")) {
        snprintf(args, sizeof args, "run -m '%s/chatml' -p hi --temp 0 -n 2", dir);
        r = test_seer(args);
        const char *w = strstr(r.err, "chat template");
        ok(r.status == 0 && w && strstr(w, "not a Qwen3.5-family template") && !strstr(w + 1, "chat template") &&
               strstr(r.err, "chatml"),
           "a template the renderer cannot honour is reported once, naming the model: %.*s",
           (int)strcspn(r.err, "\n"), r.err);
        test_run_free(&r);
    }

    /* seer tokenize reads the same vocabulary from the GGUF metadata and from tokenizer.json */
    snprintf(args, sizeof args, "tokenize -m '%s/model-f32.gguf' --json 'Hello world, \xc3\xbc\x6e\xc3\xaf\x63ode 123'", dir);
    a = run_json(args, &st1);
    snprintf(args, sizeof args, "tokenize -m '%s/hf' --json 'Hello world, \xc3\xbc\x6e\xc3\xaf\x63ode 123'", dir);
    b = run_json(args, &st2);
    ok(st1 == 0 && st2 == 0 && json_is_array(a) && json_array_size(a) > 3 && json_equal(a, b),
       "seer tokenize: the GGUF and tokenizer.json give the same ids");
    json_decref(a), json_decref(b);

    /* errors */
    r = test_seer("run -p hi");
    ok(r.status == 2 && !*r.out, "missing -m is a usage error (exit 2)");
    test_run_free(&r);
    snprintf(args, sizeof args, "run -m '%s/hf' -p hi --temp -1", dir);
    r = test_seer(args);
    ok(r.status == 2 && strstr(r.err, "--temp"), "a bad --temp value is a usage error naming the option");
    test_run_free(&r);
    /* the subcommands' argument loop (cli/options.c gen_next_opt): an unknown option, an option
       without its value and a stray operand are each one line naming it, exit 2 */
    static const char *const bad_args[][2] = {{"run", "--frobnicate"}, {"run", "stray"}, {"run", "-f"},
                                              {"chat", "--frobnicate"}, {"chat", "stray"}};
    for (size_t k = 0; k < sizeof bad_args / sizeof *bad_args; k++) {
        snprintf(args, sizeof args, "%s -m '%s/hf'%s %s", bad_args[k][0], dir, k < 3 ? " -p hi" : "", bad_args[k][1]);
        r = test_seer(args);
        char want[200];
        snprintf(want, sizeof want, "seer %s: unknown or incomplete option '%s' (see seer %s --help)\n", bad_args[k][0],
                 bad_args[k][1], bad_args[k][0]);
        ok(r.status == 2 && !*r.out && !strcmp(r.err, want), "seer %s ... %s: exit 2, one line naming it: %s",
           bad_args[k][0], bad_args[k][1], r.err);
        test_run_free(&r);
    }
    snprintf(args, sizeof args, "run -m '%s/nothing.gguf' -p hi", dir);
    r = test_seer(args);
    ok(r.status == 1 && !*r.out && test_count_lines(r.err) == 1 && strstr(r.err, "nothing.gguf"),
       "a missing model: exit 1, one line naming the file: %s", r.err);
    test_run_free(&r);
    snprintf(cmd, sizeof cmd, "head -c 100 '%s/model-f32.gguf' > '%s/cut.gguf'", dir, dir);
    if (system(cmd) == 0) {
        snprintf(args, sizeof args, "run -m '%s/cut.gguf' -p hi", dir);
        r = test_seer(args);
        ok(r.status == 1 && !*r.out && test_count_lines(r.err) == 1 && strstr(r.err, "cut.gguf"),
           "a truncated model: exit 1, one line naming the file: %s", r.err);
        test_run_free(&r);
    }

    /* chat: two turns from stdin, the second feeding only its own tokens and the first reply again;
       a long first line, so that feeding it twice would show */
    char first[1200] = "";
    for (int i = 0; i < 60; i++)
        strcat(first, "first question ");
    snprintf(cmd, sizeof cmd, "printf '%s\\nsecond\\n' | '%s/seer' -v chat -m '%s/hf' --temp 0 -n 4", first,
             SEER_BINARY_DIR, dir);
    r = test_run_cmd(cmd);
    long p1 = -1, p2 = -1;
    const char *l1 = strstr(r.err, "seer: prompt "), *l2 = l1 ? strstr(l1 + 1, "seer: prompt ") : NULL;
    if (l1)
        p1 = strtol(l1 + 13, NULL, 10);
    if (l2)
        p2 = strtol(l2 + 13, NULL, 10);
    /* random weights may answer with newlines, so count the per-turn timing lines instead */
    const char *l3 = l2 ? strstr(l2 + 1, "seer: prompt ") : NULL;
    const size_t on = r.out_len; /* not strlen: random weights may answer with a NUL byte */
    if (!ok(r.status == 0 && l2 && !l3 && on && r.out[on - 1] == '\n', "chat answers each of two lines (exit %d)",
            r.status))
        diag("stdout:\n%s\nstderr:\n%s", r.out, r.err);
    /* turn 2 feeds its own short line and turn 1's reply again in its final form (-n 4 tokens, which
       a random model may fill with special tokens, each re-tokenized as its characters: at most
       4 × 16 tokens, spec §6.2), never turn 1's 900-character line */
    ok(p1 > 200 && p2 > 0 && p2 < p1 / 2, "second turn feeds %ld tokens (first: %ld): earlier turns not re-processed",
       p2, p1);
    test_run_free(&r);
    return done_testing();
}
