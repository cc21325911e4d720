/* Tests `seer run` and `seer chat` (cli/run.c) on a tiny random Qwen3.5 (tests/reference/gen_tiny.py):
   the answer alone on stdout, timings on stderr; --json fields and types; --prompt-tokens with
   --temp 0 gives the same tokens from the GGUF and the HF directory; -n and the stop reason; --raw;
   usage errors exit 2 and bad files exit 1 with one line naming the file; chat answers each stdin
   line and feeds only new turns. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "tap.h"

static json_t *run_json(const char *args, int *status)
{
    struct test_run r = test_seer(args);
    json_t *j = json_loads(r.out, 0, NULL);
    *status = r.status;
    test_run_free(&r);
    return j;
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

    /* chat: two turns from stdin, the second feeding only its own tokens */
    snprintf(cmd, sizeof cmd, "printf 'first question\\nsecond question\\n' | '%s/seer' -v chat -m '%s/hf' --temp 0 -n 4",
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
    size_t on = strlen(r.out);
    ok(r.status == 0 && l2 && !l3 && on && r.out[on - 1] == '\n', "chat answers each of two lines (exit %d)",
       r.status);
    ok(p1 > 0 && p2 > 0 && p2 < p1 + 8, "second turn feeds %ld tokens (first: %ld): earlier turns not re-processed",
       p2, p1);
    test_run_free(&r);
    return done_testing();
}
