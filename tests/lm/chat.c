/* Tests lm/chat.c: the Qwen3.5 chat template (spec §6.2, §5.4). Every expected string is written by
   hand from the spec text (the fixed tool instructions from the [3p] template copies quoted in the
   renderer): the "Hello" example of §6.1, system + user, thinking on/off, multi-turn reasoning kept
   only after the last user query, tools and tool calls, merged tool results, vision placeholders,
   trimming, Python number/JSON formatting, the JSON front end, errors, allocation failures, and chat_template_check. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "lm/chat.h"
#include "seer.h"
#include "tap.h"

#define GEN_OFF "<|im_start|>assistant\n<think>\n\n</think>\n\n"
#define GEN_ON "<|im_start|>assistant\n<think>\n"

/* Renders and compares with `want`; on a mismatch shows both. */
static void check_render(const chat_message *m, size_t n, const chat_params *p, const char *want, const char *name)
{
    char *got = NULL;
    size_t len = 0;
    int rc = chat_render(m, n, p, &got, &len);
    if (rc != SEER_OK) {
        ok(0, "%s (rc %d: %s)", name, rc, seer_last_error());
        return;
    }
    if (!ok(!strcmp(got, want) && len == strlen(want), "%s", name))
        diag("got:\n%s\n--- want:\n%s\n---", got, want);
    free(got);
}

/* Expects failure `code` with `needle` in the message, and *out untouched. */
static void check_error(const chat_message *m, size_t n, const chat_params *p, int code, const char *needle,
                        const char *name)
{
    char *sentinel = (char *)"untouched", *out = sentinel;
    int rc = chat_render(m, n, p, &out, NULL);
    ok(rc == code && strstr(seer_last_error(), needle) && out == sentinel, "%s: %s", name, seer_last_error());
    if (out != sentinel)
        free(out);
}

#define U(text) { .role = "user", .content = (text) }
#define A(text) { .role = "assistant", .content = (text) }
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_basic(void)
{
    chat_params p = chat_params_default();
    ok(p.add_generation_prompt && !p.enable_thinking && !p.add_vision_id && !p.preserve_thinking,
       "defaults: generation prompt on, thinking off (small models, spec §6.2)");
    chat_message hello[] = { U("Hello") };
    /* spec §6.1: the "Hello" prompt with thinking off */
    check_render(hello, 1, NULL, "<|im_start|>user\nHello<|im_end|>\n" GEN_OFF, "§6.1 Hello example, thinking off");
    p.enable_thinking = true;
    check_render(hello, 1, &p, "<|im_start|>user\nHello<|im_end|>\n" GEN_ON, "thinking on opens <think>\\n");
    p = chat_params_default();
    p.add_generation_prompt = false;
    check_render(hello, 1, &p, "<|im_start|>user\nHello<|im_end|>\n", "no generation prompt");

    chat_message sys[] = { { .role = "system", .content = "  You are terse.\n" }, U(" \n Hi there\t\n") };
    check_render(sys, 2, NULL,
                 "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n" GEN_OFF,
                 "system + user, contents trimmed");
    chat_message empty_sys[] = { { .role = "system", .content = NULL }, U("x") };
    check_render(empty_sys, 2, NULL, "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nx<|im_end|>\n" GEN_OFF,
                 "empty system message still writes its block");
    /* |trim is Python str.strip(): Unicode spaces (U+3000, U+00A0) go, other characters stay. */
    chat_message uni[] = { U("\xE3\x80\x80\xC2\xA0 caf\xC3\xA9 \xE2\x80\x83\xE3\x80\x80") };
    check_render(uni, 1, NULL, "<|im_start|>user\ncaf\xC3\xA9<|im_end|>\n" GEN_OFF, "trim removes Unicode whitespace");
    chat_message keep[] = { U("\xE2\x80\x8B" "a") }; /* U+200B is not whitespace for Python */
    check_render(keep, 1, NULL, "<|im_start|>user\n\xE2\x80\x8B" "a<|im_end|>\n" GEN_OFF, "U+200B is kept");
}

static void test_reasoning(void)
{
    /* Reasoning split out of content (turn 1) or given (turn 3); only turns after the last user query
       (index 2) keep it (spec §6.2). */
    chat_message m[] = {
        U("Q1"),
        A("<think>\nR1 line\n</think>\n\nA1"),
        U("Q2"),
        { .role = "assistant", .content = "A2", .reasoning_content = "\n R2 \n" },
    };
    chat_params p = chat_params_default();
    p.add_generation_prompt = false;
    check_render(m, 4, &p,
                 "<|im_start|>user\nQ1<|im_end|>\n"
                 "<|im_start|>assistant\nA1<|im_end|>\n"
                 "<|im_start|>user\nQ2<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR2\n</think>\n\nA2<|im_end|>\n",
                 "earlier reasoning dropped, reasoning after the last query kept");
    p.preserve_thinking = true;
    check_render(m, 4, &p,
                 "<|im_start|>user\nQ1<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR1 line\n</think>\n\nA1<|im_end|>\n"
                 "<|im_start|>user\nQ2<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR2\n</think>\n\nA2<|im_end|>\n",
                 "preserve_thinking keeps every turn's reasoning");

    /* A kept turn with no reasoning gets an empty think block; content without </think> is untouched;
       a stray text before <think> is dropped with the reasoning. */
    chat_message m2[] = { U("Q"), A("plain answer"), A("junk<think>\n\nR\n\n</think>\n\n\nfinal") };
    p = chat_params_default();
    check_render(m2, 3, &p,
                 "<|im_start|>user\nQ<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\n\n</think>\n\nplain answer<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR\n</think>\n\nfinal<|im_end|>\n" GEN_OFF,
                 "empty think block; reasoning split at </think>");
    /* reasoning_content given: the content is not split even when it contains </think>. */
    chat_message m3[] = { U("Q"), { .role = "assistant", .content = "x</think>y", .reasoning_content = "" } };
    check_render(m3, 2, &p,
                 "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nx</think>y<|im_end|>\n" GEN_OFF,
                 "reasoning_content wins over splitting");
}

#define TOOLS_HEAD "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>"
#define TOOLS_TAIL                                                                                              \
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"     \
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"  \
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple "     \
    "lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow "   \
    "the specified format: an inner <function=...></function> block must be nested within "                    \
    "<tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional "    \
    "reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If "      \
    "there is no function call available, answer the question like normal with your current knowledge and "   \
    "do not tell the user about function calls\n</IMPORTANT>"

static void test_tools(void)
{
    const char *tools[] = {
        "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Say \\\"hi\\\"\\n\\u00e9\\u0001/\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}",
        "{\"name\":\"noop\",\"parameters\":{}}",
    };
    chat_tool_call calls[] = {
        { "get_weather", "{\"city\": \"Paris\", \"days\": 2, \"metric\": true, \"extra\": {\"a\": [1, 2.5, \"x\"]}, "
                         "\"note\": null, \"text\": \"two\\nlines\"}" },
        { "noop", NULL },
    };
    chat_message m[] = {
        { .role = "system", .content = "Be brief." },
        U("Weather in Paris?"),
        { .role = "assistant", .content = "", .tool_calls = calls, .n_tool_calls = 2 },
        { .role = "tool", .content = " 18C " },
        { .role = "tool", .content = "sunny" },
    };
    chat_params p = chat_params_default();
    p.tools_json = tools;
    p.n_tools = 2;
    const char *head = TOOLS_HEAD
        "\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Say \\\"hi\\\"\\n\xC3\xA9\\u0001/\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}"
        "\n{\"name\": \"noop\", \"parameters\": {}}" TOOLS_TAIL;
    const char *turns =
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
        "<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n"
        "<parameter=metric>\nTrue\n</parameter>\n"
        "<parameter=extra>\n{\"a\": [1, 2.5, \"x\"]}\n</parameter>\n"
        "<parameter=note>\nNone\n</parameter>\n"
        "<parameter=text>\ntwo\nlines\n</parameter>\n"
        "</function>\n</tool_call>"
        "\n<tool_call>\n<function=noop>\n</function>\n</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\nsunny\n</tool_response><|im_end|>\n";
    size_t want_n = strlen(head) + strlen("\n\nBe brief.<|im_end|>\n") + strlen(turns) + strlen(GEN_OFF) + 1;
    char *want = malloc(want_n);
    snprintf(want, want_n, "%s\n\nBe brief.<|im_end|>\n%s%s", head, turns, GEN_OFF);
    check_render(m, N(m), &p, want, "tools in the system block, tool calls, merged tool results");
    free(want);

    /* Without a system message the tool block closes right after the instructions. */
    chat_message m1[] = { U("hi") };
    p.n_tools = 1;
    const char *want1 = TOOLS_HEAD
        "\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Say \\\"hi\\\"\\n\xC3\xA9\\u0001/\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}"
        TOOLS_TAIL "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n" GEN_OFF;
    check_render(m1, 1, &p, want1, "tools without a system message");

    /* Scalars as JSON (newer template form); visible content puts a blank line before the call; a
       user turn that is only tool responses is not a query, so both assistant turns keep reasoning. */
    chat_tool_call c2[] = { { "f", "{\"b\": false, \"n\": null, \"i\": -7}" } };
    chat_message m2[] = {
        U("Q"),
        { .role = "assistant", .content = "Let me check.", .reasoning_content = "R1", .tool_calls = c2, .n_tool_calls = 1 },
        U("<tool_response>\nok\n</tool_response>"),
        { .role = "assistant", .content = "Done.", .reasoning_content = "R2" },
    };
    p = chat_params_default();
    p.scalar_args_as_json = true;
    p.add_generation_prompt = false;
    check_render(m2, N(m2), &p,
                 "<|im_start|>user\nQ<|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR1\n</think>\n\nLet me check.\n\n<tool_call>\n<function=f>\n"
                 "<parameter=b>\nfalse\n</parameter>\n<parameter=n>\nnull\n</parameter>\n<parameter=i>\n-7\n</parameter>\n"
                 "</function>\n</tool_call><|im_end|>\n"
                 "<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n"
                 "<|im_start|>assistant\n<think>\nR2\n</think>\n\nDone.<|im_end|>\n",
                 "JSON scalars; tool-response user turn is not a query");

    /* Python repr() of floats in tool-call arguments. */
    chat_tool_call c3[] = { { "g", "{\"a\": 1e-05, \"b\": 1e16, \"c\": 0.1, \"d\": 100.0, \"e\": -0.0, "
                                  "\"f\": 123456789.125, \"g\": 0.0001, \"h\": 1.5e300, \"i\": 1e15}" } };
    chat_message m3[] = { U("Q"), { .role = "assistant", .content = "", .tool_calls = c3, .n_tool_calls = 1 } };
    p = chat_params_default();
    p.add_generation_prompt = false;
    check_render(m3, 2, &p,
                 "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=g>\n"
                 "<parameter=a>\n1e-05\n</parameter>\n<parameter=b>\n1e+16\n</parameter>\n<parameter=c>\n0.1\n</parameter>\n"
                 "<parameter=d>\n100.0\n</parameter>\n<parameter=e>\n-0.0\n</parameter>\n"
                 "<parameter=f>\n123456789.125\n</parameter>\n<parameter=g>\n0.0001\n</parameter>\n"
                 "<parameter=h>\n1.5e+300\n</parameter>\n<parameter=i>\n1000000000000000.0\n</parameter>\n"
                 "</function>\n</tool_call><|im_end|>\n",
                 "floats written as Python repr()");
}

static void test_vision(void)
{
    chat_part p1[] = { { CHAT_PART_IMAGE, NULL }, { CHAT_PART_TEXT, "What is this?" } };
    chat_part p2[] = { { CHAT_PART_TEXT, " Compare " }, { CHAT_PART_VIDEO, NULL }, { CHAT_PART_IMAGE, "ignored" },
                       { CHAT_PART_TEXT, "\n" } };
    chat_message m[] = {
        { .role = "user", .parts = p1, .n_parts = 2 },
        A("A cat."),
        { .role = "user", .parts = p2, .n_parts = 4 },
    };
    chat_params p = chat_params_default();
    check_render(m, 3, &p,
                 "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>What is this?<|im_end|>\n"
                 "<|im_start|>assistant\nA cat.<|im_end|>\n"
                 "<|im_start|>user\nCompare <|vision_start|><|video_pad|><|vision_end|><|vision_start|><|image_pad|>"
                 "<|vision_end|><|im_end|>\n" GEN_OFF,
                 "image/video placeholders (spec §5.4)");
    p.add_vision_id = true;
    check_render(m, 3, &p,
                 "<|im_start|>user\nPicture 1: <|vision_start|><|image_pad|><|vision_end|>What is this?<|im_end|>\n"
                 "<|im_start|>assistant\nA cat.<|im_end|>\n"
                 "<|im_start|>user\nCompare Video 1: <|vision_start|><|video_pad|><|vision_end|>Picture 2: "
                 "<|vision_start|><|image_pad|><|vision_end|><|im_end|>\n" GEN_OFF,
                 "add_vision_id numbers images and videos across the conversation");
}

static void test_errors(void)
{
    chat_message ok1[] = { U("x") };
    check_error(ok1, 0, NULL, SEER_EINVAL, "no messages", "no messages");
    chat_message late_sys[] = { U("x"), { .role = "system", .content = "s" } };
    check_error(late_sys, 2, NULL, SEER_EINVAL, "system message must be the first", "system message not first");
    chat_part img[] = { { CHAT_PART_TEXT, "s" }, { CHAT_PART_IMAGE, NULL } };
    chat_message sys_img[] = { { .role = "system", .parts = img, .n_parts = 2 }, U("x") };
    check_error(sys_img, 2, NULL, SEER_EINVAL, "cannot contain images", "image in system content");
    chat_part vid[] = { { CHAT_PART_VIDEO, NULL } };
    chat_message sys_vid[] = { { .role = "system", .parts = vid, .n_parts = 1 }, U("x") };
    check_error(sys_vid, 2, NULL, SEER_EINVAL, "cannot contain videos", "video in system content");
    chat_message bad_role[] = { U("x"), { .role = "developer", .content = "y" } };
    check_error(bad_role, 2, NULL, SEER_EINVAL, "unknown role 'developer'", "unknown role");
    chat_message no_role[] = { { .role = NULL, .content = "y" } };
    check_error(no_role, 1, NULL, SEER_EINVAL, "no role", "missing role");
    chat_message only_sys[] = { { .role = "system", .content = "s" } };
    check_error(only_sys, 1, NULL, SEER_EINVAL, "no user query", "no user query");
    chat_message only_resp[] = { U("<tool_response>\nr\n</tool_response>"), A("a") };
    check_error(only_resp, 2, NULL, SEER_EINVAL, "no user query", "only tool responses is no user query");
    chat_message bad_utf8[] = { U("ok"), A("bad \xC3\x28 byte") };
    check_error(bad_utf8, 2, NULL, SEER_EINVAL, "not valid UTF-8 (byte 4)", "invalid UTF-8");
    chat_message overlong[] = { U("\xC0\xAF") };
    check_error(overlong, 1, NULL, SEER_EINVAL, "not valid UTF-8", "overlong UTF-8");
    chat_tool_call bad_args[] = { { "f", "[1, 2]" } };
    chat_message m_args[] = { U("q"), { .role = "assistant", .tool_calls = bad_args, .n_tool_calls = 1 } };
    check_error(m_args, 2, NULL, SEER_EINVAL, "arguments are not a JSON object", "tool arguments not an object");
    chat_tool_call broken_args[] = { { "f", "{\"a\": " } };
    chat_message m_broken[] = { U("q"), { .role = "assistant", .tool_calls = broken_args, .n_tool_calls = 1 } };
    check_error(m_broken, 2, NULL, SEER_EINVAL, "tool call 0 ('f')", "malformed tool arguments");
    chat_tool_call nameless[] = { { NULL, "{}" } };
    chat_message m_nameless[] = { U("q"), { .role = "assistant", .tool_calls = nameless, .n_tool_calls = 1 } };
    check_error(m_nameless, 2, NULL, SEER_EINVAL, "has no name", "tool call without a name");
    const char *bad_tools[] = { "{\"name\": \"x\"", "\"str\"" };
    chat_params p = chat_params_default();
    p.tools_json = bad_tools;
    p.n_tools = 1;
    check_error(ok1, 1, &p, SEER_EINVAL, "tool 0 is not a JSON object", "malformed tool definition");
    p.tools_json = bad_tools + 1;
    check_error(ok1, 1, &p, SEER_EINVAL, "tool 0 is not a JSON object", "tool definition that is a string");
    chat_part bad_part[] = { { (enum chat_part_type)9, "x" } };
    chat_message m_part[] = { { .role = "user", .parts = bad_part, .n_parts = 1 } };
    check_error(m_part, 1, NULL, SEER_EINVAL, "unknown part type", "unknown part type");
}

static void test_json(void)
{
    const char *msgs =
        "[{\"role\": \"system\", \"content\": [{\"type\": \"text\", \"text\": \"Sys\"}]},"
        " {\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"x\"}},"
        "   {\"video\": \"v.mp4\"}, {\"type\": \"text\", \"text\": \" Look \"}]},"
        " {\"role\": \"assistant\", \"content\": null, \"reasoning_content\": 5,"
        "  \"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1.0}\"}},"
        "                  {\"name\": \"g\", \"arguments\": {\"y\": [true]}}]},"
        " {\"role\": \"tool\", \"content\": \"r\"}]";
    const char *tools = "[{\"name\": \"f\", \"v\": 0.5}]";
    char *out = NULL;
    int rc = chat_render_json(msgs, tools, NULL, &out, NULL);
    const char *want = TOOLS_HEAD "\n{\"name\": \"f\", \"v\": 0.5}" TOOLS_TAIL "\n\nSys<|im_end|>\n"
                       "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|video_pad|>"
                       "<|vision_end|> Look<|im_end|>\n"
                       "<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=f>\n<parameter=x>\n1.0\n"
                       "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=g>\n<parameter=y>\n[true]\n"
                       "</parameter>\n</function>\n</tool_call><|im_end|>\n"
                       "<|im_start|>user\n<tool_response>\nr\n</tool_response><|im_end|>\n" GEN_OFF;
    if (!ok(rc == SEER_OK && !strcmp(out, want), "JSON messages: parts, null content, non-string reasoning, "
                                                 "OpenAI string arguments, tools (%s)", rc ? seer_last_error() : ""))
        diag("got:\n%s", out ? out : "(null)");
    free(out);
    struct {
        const char *msgs, *tools, *needle;
    } bad[] = {
        { "{\"role\": \"user\"}", NULL, "not a JSON array" },
        { "[{\"role\": \"user\", \"content\": 3}]", NULL, "unexpected content type" },
        { "[{\"role\": \"user\", \"content\": [{\"type\": \"audio\"}]}]", NULL, "unexpected item type" },
        { "[{\"role\": \"user\", \"content\": [{\"text\": 7}]}]", NULL, "\"text\" is not a string" },
        { "[{\"content\": \"x\"}]", NULL, "no \"role\"" },
        { "[\"x\"]", NULL, "message 0 is not a JSON object" },
        { "[{\"role\": \"user\", \"content\": \"q\"}, {\"role\": \"assistant\", \"tool_calls\": [{\"arguments\": {}}]}]",
          NULL, "no \"name\"" },
        { "[{\"role\": \"user\", \"content\": \"q\"}]", "{\"name\": \"t\"}", "tools are not a JSON array" },
        { "[{\"role\": \"user\", \"content\": \"q\"}, {\"role\": \"assistant\", \"tool_calls\": [{\"name\": \"f\", "
          "\"arguments\": \"not json\"}]}]",
          NULL, "arguments are not a JSON object" },
        { "[]", NULL, "no messages" },
    };
    for (size_t i = 0; i < N(bad); i++) {
        out = NULL;
        rc = chat_render_json(bad[i].msgs, bad[i].tools, NULL, &out, NULL);
        ok(rc == SEER_EINVAL && out == NULL && strstr(seer_last_error(), bad[i].needle), "JSON error: %s",
           seer_last_error());
    }
}

/* Every allocation the renderer makes can fail; each failure must be ENOMEM with nothing leaked
   (leaks show under the SEER_SANITIZE build). */
static void test_alloc_failures(void)
{
    chat_tool_call c[] = { { "f", "{\"a\": 1}" } };
    chat_message m[] = { { .role = "system", .content = "s" }, U("q"), { .role = "assistant", .content = "a", .tool_calls = c, .n_tool_calls = 1 } };
    int fails = 0, others = 0;
    for (long k = 1; k < 64; k++) {
        seer_alloc_fail_after(k);
        char *out = NULL;
        int rc = chat_render(m, 3, NULL, &out, NULL);
        seer_alloc_fail_after(0);
        if (rc == SEER_OK) {
            free(out);
            break;
        }
        if (rc == SEER_ENOMEM && out == NULL)
            fails++;
        else
            others++;
    }
    ok(fails > 0 && others == 0, "allocation failures give SEER_ENOMEM (%d injected, %d wrong)", fails, others);
}

/* A compact template in the Qwen3.5 style (our own text: only the constructs the check looks for). */
#define TPL_BODY                                                                                              \
    "{%- macro render_content(content) %}<|vision_start|><|image_pad|><|vision_end|>"                        \
    "<|vision_start|><|video_pad|><|vision_end|>{%- endmacro %}"                                             \
    "{{- '<|im_start|>system\\n# Tools\\n\\n<tools>' }}{{- '<tool_call>\\n<function=x>\\n<parameter=y>' }}" \
    "{%- set ns = namespace(last_query_index=0) %}{%- if message.reasoning_content is string %}{% endif %}"   \
    "{{- '<think>\\n' + r + '\\n</think>\\n\\n' }}{{- '\\n<tool_response>\\n' }}{{- '<|im_end|>\\n' }}"
#define TPL_ARGS_OLD                                                                                          \
    "{%- set args_value = args_value | tojson | safe if args_value is mapping or (args_value is sequence and " \
    "args_value is not string) else args_value | string %}"
#define TPL_ARGS_NEW "{%- set args_value = args_value|string if args_value is string else args_value|tojson|safe %}"
#define TPL_SMALL                                                                                             \
    "{%- if add_generation_prompt %}\n    {%- if enable_thinking is defined and enable_thinking is true %}\n" \
    "        {{- '<think>\\n' }}\n    {%- else %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
#define TPL_LARGE                                                                                              \
    "{%- if add_generation_prompt %}{%- if enable_thinking is defined and\n enable_thinking is false %}"      \
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}"

static void test_template_check(void)
{
    chat_template_info info = { true, true, true };
    ok(chat_template_check(TPL_BODY TPL_ARGS_OLD TPL_SMALL, &info) == SEER_OK && !info.thinking_default &&
           !info.has_preserve_thinking && !info.scalar_args_as_json,
       "small-model template recognised: thinking opt-in, Python str() scalars (%s)", seer_last_error());
    ok(chat_template_check(TPL_BODY TPL_ARGS_NEW "{%- if preserve_thinking is defined %}{% endif %}" TPL_LARGE,
                           &info) == SEER_OK &&
           info.thinking_default && info.has_preserve_thinking && info.scalar_args_as_json,
       "large-model form: thinking by default, preserve_thinking, JSON scalars (%s)", seer_last_error());
    ok(chat_template_check(TPL_BODY TPL_ARGS_OLD TPL_SMALL, NULL) == SEER_OK, "info may be NULL");

    const char *qwen3vl = "{{- '<|im_start|>' }}<|vision_start|><|image_pad|><|video_pad|><|vision_end|><think></think>"
                          "enable_thinking reasoning_content last_query_index <tools><tool_call>{\"name\": <tool_response><|im_end|>";
    int rc = chat_template_check(qwen3vl, &info);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "<function=") && strstr(seer_last_error(), "<parameter=") &&
           !strstr(seer_last_error(), "<tools>"),
       "a JSON-tool-call (Qwen3-VL-like) template is refused, naming what is missing: %s", seer_last_error());
    const char *chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
                         "+ '<|im_end|>' + '\\n'}}{% endfor %}";
    rc = chat_template_check(chatml, &info);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "<think>") && strstr(seer_last_error(), "vision"),
       "plain ChatML refused: %s", seer_last_error());
    rc = chat_template_check(TPL_BODY TPL_ARGS_OLD "{%- if enable_thinking %}<think>\\n{% endif %}", &info);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "enable_thinking test"),
       "unrecognised thinking switch refused: %s", seer_last_error());
    rc = chat_template_check("{%- set enable_thinking = false %}" TPL_BODY TPL_ARGS_OLD TPL_SMALL, &info);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "assigns enable_thinking"),
       "a template forcing enable_thinking is refused: %s", seer_last_error());
    rc = chat_template_check(TPL_BODY "{{- args_value }}" TPL_SMALL, &info);
    ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "arguments"),
       "unrecognised tool-argument form refused: %s", seer_last_error());
    ok(chat_template_check("", &info) == SEER_EUNSUPPORTED, "empty template is unsupported");
    ok(chat_template_check(NULL, &info) == SEER_EINVAL, "NULL template is EINVAL");
}

int main(void)
{
    plan_no_plan();
    test_basic();
    test_reasoning();
    test_tools();
    test_vision();
    test_errors();
    test_json();
    test_alloc_failures();
    test_template_check();
    return done_testing();
}
