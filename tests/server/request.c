/* tests/server/request.c — the request/response layer of `seer serve` (server/request.h) on its
   own: every request shape clients send (OpenAI, vLLM, llama.cpp, Qwen) read into the structs,
   every refusal with its status and field, hostile bodies (depth bombs, thousands of messages, huge
   strings) refused quickly, data: URIs and --media-path confinement, and the response bodies
   parsed back with jansson. */
#define _GNU_SOURCE
#include "tap.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/request.h"

static int parse(enum srv_endpoint ep, const char *body, struct srv_request *r, struct srv_error *e)
{
    struct srv_limits lim = srv_limits_default();
    seer_sampling d = seer_generate_params_default().sampling;
    memset(e, 0, sizeof *e);
    return srv_parse_request(ep, body, strlen(body), &d, &lim, r, e);
}

/* The body is refused with status and param. */
static void rejects(enum srv_endpoint ep, const char *body, int status, const char *param, const char *what)
{
    struct srv_request r;
    struct srv_error e;
    int rc = parse(ep, body, &r, &e);
    if (!ok(rc == -1 && e.status == status && !strcmp(e.param, param) && e.message[0], "%s: %d at '%s'", what, status,
            param))
        diag("got rc %d, status %d, param '%s': %s", rc, e.status, e.param, e.message);
    if (!rc)
        srv_request_free(&r);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The JSON texts a and b hold equal values. */
static bool same_json(const char *a, const char *b)
{
    json_t *x = a ? json_loads(a, JSON_DECODE_ANY, NULL) : NULL, *y = json_loads(b, JSON_DECODE_ANY, NULL);
    bool eq = x && y && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

static void test_chat_shapes(void)
{
    struct srv_request r;
    struct srv_error e;
    int rc = parse(SRV_CHAT,
                   "{\"model\":\"m\",\"messages\":[{\"role\":\"developer\",\"content\":\"be brief\"},"
                   "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"},"
                   "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,aGk=\",\"detail\":\"low\"}},"
                   "{\"type\":\"image_url\",\"image_url\":\"file:///x.png\"},{\"type\":\"image\",\"image\":\"/q.jpg\"},"
                   "{\"type\":\"text\",\"text\":\"two\"}]},"
                   "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[]},{\"role\":\"assistant\"},"
                   "{\"role\":\"tool\",\"content\":\"42\"}]}",
                   &r, &e);
    ok(rc == 0, "a chat with every text and image shape parses (%s)", rc ? e.message : "ok");
    if (rc)
        return;
    ok(r.endpoint == SRV_CHAT && r.model && !strcmp(r.model, "m") && r.n_messages == 5, "model and 5 messages");
    ok(!strcmp(r.messages[0].role, "system") && !strcmp(r.messages[0].text, "be brief"), "developer is read as system");
    const struct srv_message *u = &r.messages[1];
    ok(!strcmp(u->role, "user") && !strcmp(u->text, "one\ntwo"), "text parts joined with a newline: '%s'", u->text);
    ok(u->n_media == 3 && u->media[0].kind == SRV_IMAGE && !strcmp(u->media[0].url, "data:image/png;base64,aGk=") &&
           !strcmp(u->media[1].url, "file:///x.png") && !strcmp(u->media[2].url, "/q.jpg"),
       "image_url as an object, as a string, and Qwen's image part, in order");
    ok(!strcmp(u->media[0].param, "messages[1].content[1].image_url.url") &&
           !strcmp(u->media[1].param, "messages[1].content[2].image_url"),
       "each medium remembers its field (%s)", u->media[0].param);
    ok(!strcmp(r.messages[2].text, "") && !strcmp(r.messages[3].text, "") && !strcmp(r.messages[2].role, "assistant"),
       "assistant content null or absent (tool calls) is empty text");
    ok(!strcmp(r.messages[4].role, "tool") && !strcmp(r.messages[4].text, "42"), "tool message");
    ok(r.max_tokens == -1 && r.think == -1 && !r.stream && !r.include_usage && !r.n_stop && !r.json_schema &&
           !r.grammar,
       "absent fields keep their defaults");
    srv_request_free(&r);

    rc = parse(SRV_CHAT,
               "{\"mm_processor_kwargs\":{\"fps\":1.5,\"max_frames\":30},\"messages\":[{\"role\":\"user\",\"content\":["
               "{\"type\":\"video_url\",\"video_url\":{\"url\":\"file:///a.mp4\",\"fps\":4}},"
               "{\"type\":\"input_video\",\"input_video\":{\"url\":\"file://b.mp4\",\"max_tokens\":900}},"
               "{\"type\":\"input_video\",\"input_video\":{\"data\":\"AAAA\"}},"
               "{\"type\":\"video\",\"video\":\"/c.mp4\",\"fps\":0.5,\"min_frames\":8,\"max_frames\":16,"
               "\"video_max_tokens\":2048},"
               "{\"type\":\"video\",\"video\":\"/d.mp4\",\"nframes\":12},"
               "{\"type\":\"text\",\"text\":\"what happens?\"}]}]}",
               &r, &e);
    ok(rc == 0, "the three video shapes parse (%s)", rc ? e.message : "ok");
    if (rc)
        return;
    const struct srv_media *m = r.messages[0].media;
    ok(r.messages[0].n_media == 5 && m[0].kind == SRV_VIDEO && m[4].kind == SRV_VIDEO, "5 videos");
    ok(!strcmp(m[0].url, "file:///a.mp4") && m[0].fps == 4 && m[0].max_frames == 30,
       "vLLM's video_url: fps from its url object over mm_processor_kwargs, max_frames from the kwargs");
    ok(!strcmp(m[1].url, "file://b.mp4") && m[1].fps == 1.5 && m[1].max_tokens == 900,
       "llama.cpp's input_video url, with a token budget");
    ok(!strcmp(m[2].url, "data:application/octet-stream;base64,AAAA") && !strcmp(m[2].param,
                                                                                  "messages[0].content[2].input_video.data"),
       "llama.cpp's raw base64 input_video.data becomes a data: URI (%s)", m[2].url);
    ok(!strcmp(m[3].url, "/c.mp4") && m[3].fps == 0.5 && m[3].min_frames == 8 && m[3].max_frames == 16 &&
           m[3].max_tokens == 2048,
       "Qwen's video part with its options");
    ok(m[4].min_frames == 12 && m[4].max_frames == 12, "nframes asks for exactly that many frames");
    srv_request_free(&r);
}

static void test_fields(void)
{
    struct srv_request r;
    struct srv_error e;
    int rc = parse(SRV_CHAT,
                   "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":0.5,\"top_p\":0.25,"
                   "\"top_k\":40,\"min_p\":0.125,\"presence_penalty\":-1.5,\"repetition_penalty\":1.25,"
                   "\"seed\":9007199254740993,\"max_tokens\":10,\"max_completion_tokens\":20,\"stop\":[\"a\",\"bc\"],"
                   "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"enable_thinking\":false,"
                   "\"chat_template_kwargs\":{\"enable_thinking\":true},\"n\":1,\"frequency_penalty\":0.75,"
                   "\"logprobs\":true,\"top_logprobs\":3,\"tools\":[],\"user\":\"x\",\"unknown\":{\"deep\":[1,2]}}",
                   &r, &e);
    ok(rc == 0, "every sampling field parses (%s)", rc ? e.message : "ok");
    if (rc)
        return;
    /* the values are exact in binary, so the float fields compare equal */
    ok(r.sampling.temperature == 0.5f && r.sampling.top_p == 0.25f && r.sampling.top_k == 40 &&
           r.sampling.min_p == 0.125f && r.sampling.presence_penalty == -1.5f && r.sampling.repeat_penalty == 1.25f &&
           r.sampling.frequency_penalty == 0.75f,
       "temperature, top_p, top_k, min_p, presence_penalty, repetition_penalty, frequency_penalty mapped");
    ok(r.sampling.seed == 9007199254740993ull, "a seed past 2^53 is exact");
    ok(r.max_tokens == 20, "max_completion_tokens wins over max_tokens");
    ok(r.n_stop == 2 && !strcmp(r.stop[0], "a") && !strcmp(r.stop[1], "bc"), "stop array");
    ok(r.stream && r.include_usage, "stream and stream_options.include_usage");
    ok(r.think == 1, "chat_template_kwargs.enable_thinking wins over the top-level one");
    ok(r.logprobs && r.top_logprobs == 3, "logprobs true, top_logprobs 3");
    srv_request_free(&r);
    rc = parse(SRV_COMPLETION, "{\"prompt\":\"x\",\"logprobs\":2}", &r, &e);
    ok(rc == 0 && r.logprobs && r.top_logprobs == 2, "completion logprobs 2: logprobs with 2 alternatives");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_logprobs\":0}", &r, &e);
    ok(rc == 0 && !r.logprobs && r.top_logprobs == 0, "top_logprobs 0 without logprobs: no logprobs");
    if (!rc)
        srv_request_free(&r);

    seer_sampling d = seer_generate_params_default().sampling;
    d.temperature = 0.75f;
    struct srv_limits lim = srv_limits_default();
    const char *b = "{\"prompt\":\"x\",\"stop\":\"END\",\"max_tokens\":5,\"enable_thinking\":false}";
    rc = srv_parse_request(SRV_COMPLETION, b, strlen(b), &d, &lim, &r, &e);
    ok(rc == 0 && r.sampling.temperature == 0.75f && r.sampling.top_k == d.top_k, "fields left out keep the defaults given");
    ok(rc == 0 && !strcmp(r.prompt, "x") && r.n_stop == 1 && !strcmp(r.stop[0], "END") && r.max_tokens == 5 &&
           r.think == 0 && !r.messages,
       "a completion with a string prompt, a stop string and enable_thinking false");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_COMPLETION, "{\"prompt\":[\"only\"],\"stop\":null,\"seed\":null}", &r, &e);
    ok(rc == 0 && !strcmp(r.prompt, "only") && !r.n_stop, "a prompt array of one string; null is absent");
    if (!rc)
        srv_request_free(&r);
}

static void test_formats(void)
{
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"integer\"},"
                                 "\"a\":{\"type\":\"string\"}},\"required\":[\"b\",\"a\"]}";
    static const char *const shapes[][2] = {
        {"{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"strict\":true,\"schema\":%s}}", "OpenAI's json_schema"},
        {"{\"type\":\"json_schema\",\"schema\":%s}", "llama.cpp's json_schema"},
        {"{\"type\":\"json_object\",\"schema\":%s}", "llama.cpp's json_object with a schema"},
    };
    struct srv_request r;
    struct srv_error e;
    char body[1024];
    for (size_t i = 0; i < 3; i++) {
        char rf[512];
        snprintf(rf, sizeof rf, shapes[i][0], schema);
        snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":%s}", rf);
        int rc = parse(SRV_CHAT, body, &r, &e);
        ok(rc == 0 && same_json(r.json_schema, schema), "%s: the schema, serialised", shapes[i][1]);
        /* the grammar writes properties in the schema's order */
        ok(rc == 0 && r.json_schema && strstr(r.json_schema, "\"b\"") < strstr(r.json_schema, "\"a\""),
           "%s: member order kept", shapes[i][1]);
        if (!rc)
            srv_request_free(&r);
    }
    snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"json_schema\":%s}", schema);
    int rc = parse(SRV_CHAT, body, &r, &e);
    ok(rc == 0 && same_json(r.json_schema, schema), "top-level json_schema (llama.cpp)");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":\"json_object\"}}",
               &r, &e);
    ok(rc == 0 && r.json_schema && !strcmp(r.json_schema, "{\"type\":\"object\"}"),
       "json_object alone is any JSON object, {\"type\":\"object\"}");
    if (!rc)
        srv_request_free(&r);
    /* a model may write U+0000, and a client sends its reply back: kept as U+FFFD, not cut short */
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"assistant\",\"content\":\"a\\u0000b\"},"
                         "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"c\\u0000\"}]}]}", &r, &e);
    ok(rc == 0 && r.n_messages == 2 && !strcmp(r.messages[0].text, "a\xEF\xBF\xBD" "b") &&
           !strcmp(r.messages[1].text, "c\xEF\xBF\xBD"),
       "U+0000 in message text becomes U+FFFD (%s)", rc ? e.message : "ok");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\\u0000x\",\"content\":\"x\"}]}", &r, &e);
    ok(rc == -1 && e.status == 400, "U+0000 in a role is refused: %s", e.message);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"thinking_budget\":64}", &r, &e);
    ok(rc == 0 && r.thinking_budget == 64, "thinking_budget (Qwen's API field) read");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"reasoning_budget\":8}", &r, &e);
    ok(rc == 0 && r.thinking_budget == 8, "reasoning_budget (llama.cpp's name) read");
    if (!rc)
        srv_request_free(&r);
    rc = parse(SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":\"text\"},"
                         "\"grammar\":\"root ::= \\\"yes\\\"\"}",
               &r, &e);
    ok(rc == 0 && !r.json_schema && r.grammar && !strcmp(r.grammar, "root ::= \"yes\""),
       "response_format text sets nothing; grammar is read");
    if (!rc)
        srv_request_free(&r);
}

#define U "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
static void test_rejections(void)
{
    static const struct {
        const char *body;
        int status;
        const char *param;
        const char *what;
    } cases[] = {
        {U "\"temperature\":2.5}", 400, "temperature", "temperature above 2"},
        {U "\"temperature\":\"hot\"}", 400, "temperature", "temperature not a number"},
        {U "\"top_p\":0}", 400, "top_p", "top_p 0"},
        {U "\"top_k\":-1}", 400, "top_k", "negative top_k"},
        {U "\"top_k\":1.5}", 400, "top_k", "fractional top_k"},
        {U "\"min_p\":1.5}", 400, "min_p", "min_p above 1"},
        {U "\"presence_penalty\":-3}", 400, "presence_penalty", "presence_penalty below -2"},
        {U "\"repetition_penalty\":0}", 400, "repetition_penalty", "repetition_penalty 0"},
        {U "\"seed\":-1}", 400, "seed", "negative seed"},
        {U "\"max_tokens\":0}", 400, "max_tokens", "max_tokens 0"},
        {U "\"max_completion_tokens\":\"many\"}", 400, "max_completion_tokens", "max_completion_tokens a string"},
        {U "\"stop\":[\"ok\",\"\"]}", 400, "stop[1]", "an empty stop string"},
        {U "\"stop\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\",\"10\",\"11\",\"12\",\"13\",\"14\",\"15\",\"16\","
           "\"17\"]}",
         400, "stop", "17 stop strings"},
        {U "\"stop\":5}", 400, "stop", "stop a number"},
        {U "\"n\":2}", 400, "n", "n 2 not supported"},
        {U "\"thinking_budget\":0}", 400, "thinking_budget", "thinking_budget 0"},
        {U "\"frequency_penalty\":2.5}", 400, "frequency_penalty", "frequency_penalty above 2"},
        {U "\"logprobs\":1}", 400, "logprobs", "chat logprobs a number"},
        {U "\"logprobs\":true,\"top_logprobs\":21}", 400, "top_logprobs", "top_logprobs 21"},
        {U "\"top_logprobs\":2}", 400, "top_logprobs", "top_logprobs without logprobs"},
        {U "\"response_format\":{\"type\":\"json_object\",\"schema\":{\"type\":\"\\u0000array\"}}}", 400,
         "response_format.schema", "a schema with \\u0000 in a string (fuzz_request)"},
        {U "\"tools\":[{\"type\":\"function\"}]}", 400, "tools", "tools not supported"},
        {U "\"response_format\":{\"type\":\"xml\"}}", 400, "response_format.type", "an unknown response_format"},
        {U "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":\"obj\"}}}", 400,
         "response_format.json_schema.schema", "a schema that is a string"},
        {U "\"grammar\":\"root ::= x\",\"response_format\":{\"type\":\"json_object\"}}", 400, "grammar",
         "grammar with json_object"},
        {U "\"stream\":\"yes\"}", 400, "stream", "stream a string"},
        {U "\"stream_options\":{\"include_usage\":1}}", 400, "stream_options.include_usage", "include_usage a number"},
        {U "\"chat_template_kwargs\":{\"enable_thinking\":\"on\"}}", 400, "chat_template_kwargs.enable_thinking",
         "enable_thinking a string"},
        {"{\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}", 400, "messages[0].role", "an unknown role"},
        {"{\"messages\":[{\"role\":\"user\"}]}", 400, "messages[0].content", "a user message without content"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":7}]}", 400, "messages[0].content", "content a number"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{}}]}]}", 400,
         "messages[0].content[0].type", "audio"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"no type\"}]}]}", 400, "messages[0].content[0].type",
         "a part without a type"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{}}]}]}", 400,
         "messages[0].content[0].image_url.url", "image_url without url"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"\"}}]}]}", 400,
         "messages[0].content[0].image_url.url", "an empty url"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"video\",\"video\":[\"a.jpg\",\"b.jpg\"]}]}]}", 400,
         "messages[0].content[0].video", "a video as a list of frames"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"video\",\"video\":\"/v.mp4\",\"fps\":0}]}]}", 400,
         "messages[0].content[0].video.fps", "fps 0"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"video\",\"video\":\"/v.mp4\",\"min_frames\":9,"
         "\"max_frames\":4}]}]}",
         400, "messages[0].content[0].video", "min_frames above max_frames"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"mm_processor_kwargs\":{\"max_frames\":-2}}", 400,
         "mm_processor_kwargs.max_frames", "a bad request-wide video option, with no video"},
        {"{\"messages\":[]}", 400, "messages", "no messages"},
        {"{\"messages\":{}}", 400, "messages", "messages an object"},
        {"{\"model\":\"m\"}", 400, "messages", "a chat without messages"},
        {"{\"messages\":[\"hi\"]}", 400, "messages[0]", "a message that is a string"},
        {"{\"model\":7,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", 400, "model", "model a number"},
        {"[1,2]", 400, "", "a body that is an array"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]", 400, "", "truncated JSON"},
        {"", 400, "", "an empty body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        rejects(SRV_CHAT, cases[i].body, cases[i].status, cases[i].param, cases[i].what);
    rejects(SRV_COMPLETION, "{\"prompt\":[1,2,3]}", 400, "prompt", "a token prompt");
    rejects(SRV_COMPLETION, "{\"prompt\":[\"a\",\"b\"]}", 400, "prompt", "two prompts");
    rejects(SRV_COMPLETION, "{\"max_tokens\":3}", 400, "prompt", "a completion without a prompt");
    rejects(SRV_COMPLETION, "{\"prompt\":\"x\",\"logprobs\":true}", 400, "logprobs", "completion logprobs true");
    rejects(SRV_COMPLETION, "{\"prompt\":\"x\",\"logprobs\":21}", 400, "logprobs", "completion logprobs 21");

    struct srv_request r;
    struct srv_error e;
    int rc = parse(SRV_CHAT, "{\"messages\": [\n  {\"role\": \"user\",, }]}", &r, &e);
    ok(rc == -1 && e.status == 400 && !strncmp(e.message, "malformed JSON: ", 16) && strstr(e.message, "line 2"),
       "malformed JSON names jansson's reason and place: %s", e.message);
}

static void test_hostile(void)
{
    struct srv_request r;
    struct srv_error e;
    struct srv_limits lim = srv_limits_default();
    /* 100k nested arrays: refused by the depth scan, without building a tree */
    size_t n = 100000;
    char *bomb = malloc(n + 1);
    memset(bomb, '[', n);
    bomb[n] = 0;
    double t0 = now();
    int rc = srv_parse_request(SRV_CHAT, bomb, n, NULL, &lim, &r, &e);
    double dt = now() - t0;
    /* bound: the scan stops at level 33; 0.1 s is ~1000x its cost, room for a loaded machine */
    ok(rc == -1 && e.status == 400 && dt < 0.1, "100k '[' refused with 400 in %.4f s: %s", dt, e.message);
    free(bomb);
    /* brackets inside strings are text, not nesting */
    char deep[512], str[256];
    memset(str, '[', 200);
    str[200] = 0;
    snprintf(deep, sizeof deep, U "\"x\":\"%s\"}", str);
    rc = parse(SRV_CHAT, deep, &r, &e);
    ok(rc == 0, "200 '[' inside a string do not count as nesting");
    if (!rc)
        srv_request_free(&r);
    /* exactly max_depth levels pass, one more does not: {"x": [[...]]} is 1 + k levels */
    for (size_t extra = 0; extra < 2; extra++) {
        size_t k = lim.max_depth - 1 + extra;
        char *b = malloc(2 * k + 128), *q = b;
        q += sprintf(q, U "\"x\":");
        memset(q, '[', k), q += k;
        memset(q, ']', k), q += k;
        strcpy(q, "}");
        rc = parse(SRV_CHAT, b, &r, &e);
        ok(extra ? rc == -1 && e.status == 400 : rc == 0, "nesting %zu levels: %s", k + 1, extra ? "refused" : "accepted");
        if (!rc)
            srv_request_free(&r);
        free(b);
    }
    /* 10k messages: over max_messages */
    size_t nm = 10000, cap = nm * 40 + 64;
    char *many = malloc(cap), *q = many;
    q += sprintf(q, "{\"messages\":[");
    for (size_t i = 0; i < nm; i++)
        q += sprintf(q, "%s{\"role\":\"user\",\"content\":\"m\"}", i ? "," : "");
    strcpy(q, "]}");
    rc = parse(SRV_CHAT, many, &r, &e);
    ok(rc == -1 && e.status == 400 && !strcmp(e.param, "messages"), "10k messages refused: %s", e.message);
    free(many);
    /* a string over max_string */
    size_t big = lim.max_string + 1;
    char *huge = malloc(big + 128);
    q = huge + sprintf(huge, "{\"messages\":[{\"role\":\"user\",\"content\":\"");
    memset(q, 'a', big), q += big;
    strcpy(q, "\"}]}");
    rc = parse(SRV_CHAT, huge, &r, &e);
    ok(rc == -1 && e.status == 413 && !strcmp(e.param, "messages[0].content"), "a 1 MiB + 1 string: 413 naming it");
    free(huge);
    /* 65 images: over max_media */
    char *imgs = malloc(65 * 80 + 128);
    q = imgs + sprintf(imgs, "{\"messages\":[{\"role\":\"user\",\"content\":[");
    for (int i = 0; i < 65; i++)
        q += sprintf(q, "%s{\"type\":\"image_url\",\"image_url\":{\"url\":\"/i%d.png\"}}", i ? "," : "", i);
    strcpy(q, "]}]}");
    rc = parse(SRV_CHAT, imgs, &r, &e);
    ok(rc == -1 && e.status == 400 && !strcmp(e.param, "messages[0].content[64].image_url.url"),
       "the 65th image refused: %s", e.message);
    free(imgs);
}
#undef U

static void test_data_uri(void)
{
    uint8_t *b;
    size_t n;
    char mime[64];
    struct srv_error e;
    int rc = srv_data_uri("data:image/png;base64,aGVsbG8=", 100, &b, &n, mime, &e);
    ok(rc == 0 && n == 5 && !memcmp(b, "hello", 5) && !strcmp(mime, "image/png"), "base64 data: URI decoded");
    if (!rc)
        free(b);
    rc = srv_data_uri("DATA:Image/JPEG;name=a.jpg;BASE64,aGk", 100, &b, &n, mime, &e);
    ok(rc == 0 && n == 2 && !memcmp(b, "hi", 2) && !strcmp(mime, "image/jpeg"),
       "missing padding, a parameter, upper case; media type lowered");
    if (!rc)
        free(b);
    rc = srv_data_uri("data:,a%20b%ff", 100, &b, &n, mime, &e);
    ok(rc == 0 && n == 4 && !memcmp(b, "a b\xff", 4) && !mime[0], "percent-encoded data, no media type");
    if (!rc)
        free(b);
    rc = srv_data_uri("data:application/octet-stream;base64,AAEC", 100, &b, &n, mime, &e);
    ok(rc == 0 && n == 3 && b[0] == 0 && b[1] == 1 && b[2] == 2, "application/octet-stream accepted");
    if (!rc)
        free(b);
    static const struct {
        const char *url;
        size_t max;
        int status;
        const char *what;
    } bad[] = {
        {"data:image/png;base64,aGV!bG8=", 100, 400, "a byte outside base64"},
        {"data:image/png;base64,aGVs bG8=", 100, 400, "whitespace in base64"},
        {"data:image/png;base64,aGVsb", 100, 400, "base64 one character past a group"},
        {"data:image/png;base64,aGk==", 100, 400, "wrong padding"},
        {"data:image/png;base64,aGVsbG8-", 100, 400, "the URL-safe alphabet"},
        {"data:image/png;base64,", 100, 400, "no data"},
        {"data:image/png;base64", 100, 400, "no comma"},
        {"data:image/png;foo;base64,aGk=", 100, 400, "a parameter without '='"},
        {"data:,a%2", 100, 400, "a cut percent escape"},
        {"data:,a%zz", 100, 400, "a bad percent escape"},
        {"http://x/a.png", 100, 400, "not a data: URI"},
        {"data:text/plain;base64,aGk=", 100, 415, "text/plain"},
        {"data:image/png;base64,aGVsbG8=", 4, 413, "5 bytes over a bound of 4"},
        {"data:,hello", 4, 413, "percent-encoded data over the bound"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        b = (uint8_t *)"untouched";
        rc = srv_data_uri(bad[i].url, bad[i].max, &b, &n, mime, &e);
        if (!ok(rc == -1 && e.status == bad[i].status && b == NULL, "%s: %d", bad[i].what, bad[i].status))
            diag("rc %d status %d: %s", rc, e.status, e.message);
    }
    rc = srv_data_uri("data:image/png;base64,aGVsbG8=", 5, &b, &n, mime, &e);
    ok(rc == 0 && n == 5, "exactly at the bound");
    if (!rc)
        free(b);
    /* 64 MiB of base64 against a 1 MiB bound: refused from the length, before decoding */
    size_t big = (size_t)64 << 20;
    char *url = malloc(big + 32);
    strcpy(url, "data:video/mp4;base64,");
    memset(url + strlen(url), 'A', big);
    url[22 + big] = 0;
    double t0 = now();
    rc = srv_data_uri(url, (size_t)1 << 20, &b, &n, mime, &e);
    ok(rc == -1 && e.status == 413, "64 MiB of base64 over a 1 MiB bound: 413 (%.3f s)", now() - t0);
    free(url);
}

static void put_file(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("x", f);
        fclose(f);
    }
}

static void test_media_file(void)
{
    char root_t[] = "/tmp/seer-media-XXXXXX", out_t[] = "/tmp/seer-outside-XXXXXX";
    char *root = mkdtemp(root_t), *outside = mkdtemp(out_t);
    if (!root || !outside) {
        skip("mkdtemp failed", "srv_media_file");
        return;
    }
    char p[PATH_MAX], url[PATH_MAX + 64], *path;
    struct srv_error e;
    snprintf(p, sizeof p, "%s/a.jpg", root), put_file(p);
    snprintf(p, sizeof p, "%s/with space.jpg", root), put_file(p);
    snprintf(p, sizeof p, "%s/sub", root), mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/sub/b.jpg", root), put_file(p);
    snprintf(p, sizeof p, "%s/secret", outside), put_file(p);
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/link.jpg", root);
    int linked = symlink(p, link) == 0;
    char want[PATH_MAX];
    snprintf(p, sizeof p, "%s/a.jpg", root);
    if (!realpath(p, want))
        want[0] = 0;

    static const char *const good[] = {"file://%s/a.jpg", "file://localhost%s/a.jpg", "%s/a.jpg", "%s/sub/../a.jpg"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(url, sizeof url, good[i], root);
        int rc = srv_media_file(root, url, "m", &path, &e);
        ok(rc == 0 && !strcmp(path, want), "%s resolves inside the root", good[i]);
        if (!rc)
            free(path);
    }
    static const char *const relative[] = {"a.jpg", "file://a.jpg", "file://sub/b.jpg", "file://with%20space.jpg"};
    for (size_t i = 0; i < 4; i++) {
        int rc = srv_media_file(root, relative[i], "m", &path, &e);
        ok(rc == 0 && !strncmp(path, want, strlen(want) - 5), "%s: relative to the root, as llama-server reads it",
           relative[i]);
        if (!rc)
            free(path);
    }
    const char *base = strrchr(outside, '/') + 1;
    char esc1[PATH_MAX], esc2[PATH_MAX];
    snprintf(esc1, sizeof esc1, "file://%s/../%s/secret", root, base);
    snprintf(esc2, sizeof esc2, "../%s/secret", base);
    const char *const escapes[] = {esc1, esc2, "file://link.jpg", "file:///etc/passwd", "file://evil.com/etc/passwd",
                                   "file://sub", "file://nothere.jpg", "file://a%00.jpg", "file://a%2.jpg",
                                   "http://host/a.jpg", "file://"};
    for (size_t i = 0; i < sizeof escapes / sizeof *escapes; i++) {
        if (i == 2 && !linked) {
            skip("symlink failed", "a symlink out of the root");
            continue;
        }
        path = (char *)"untouched";
        int rc = srv_media_file(root, escapes[i], "messages[0].content[0].image_url.url", &path, &e);
        ok(rc == -1 && e.status == 400 && !path && !strcmp(e.param, "messages[0].content[0].image_url.url"),
           "%s refused: %s", escapes[i], e.message);
    }
    int rc = srv_media_file(NULL, "file:///tmp/a.jpg", "m", &path, &e);
    ok(rc == -1 && e.status == 400 && strstr(e.message, "--media-path"), "no root: file paths refused, naming --media-path");

    snprintf(p, sizeof p, "rm -rf '%s' '%s'", root, outside);
    if (system(p) != 0)
        diag("could not remove %s", root);
}

/* The body (freed here) parsed back; NULL (and a failed test) when it is not JSON. */
static json_t *load(char *s, const char *what)
{
    json_error_t je;
    json_t *v = s ? json_loads(s, JSON_ALLOW_NUL, &je) : NULL;
    if (!ok(v != NULL, "%s is JSON", what))
        diag("%s: %s", s ? s : "(null)", s ? je.text : "");
    free(s);
    return v;
}

static void test_responses(void)
{
    struct srv_answer a = {.text = "ok\xff\xc3", .text_len = 4, .reasoning = "why", .reasoning_len = 3,
                           .stop = SEER_STOP_LENGTH, .usage = {.prompt_tokens = 12, .completion_tokens = 5, .cached_tokens = 8}};
    char *s = srv_response_body(SRV_CHAT, "chatcmpl-1", "qwen", 1700000000, &a);
    json_t *v = load(s, "the chat response");
    if (v) {
        json_t *msg = NULL, *usage = NULL;
        const char *fr = "";
        json_int_t created = 0, pt = 0, ct = 0, tt = 0, cached = 0;
        int rc = json_unpack(v, "{s:I, s:[{s:o, s:s}], s:o}", "created", &created, "choices", "message", &msg,
                             "finish_reason", &fr, "usage", &usage);
        ok(rc == 0 && created == 1700000000 && !strcmp(fr, "length"), "created and finish_reason length");
        ok(!strcmp(json_string_value(json_object_get(v, "object")), "chat.completion") &&
               !strcmp(json_string_value(json_object_get(v, "id")), "chatcmpl-1") &&
               !strcmp(json_string_value(json_object_get(v, "model")), "qwen"),
           "object, id, model");
        ok(msg && !strcmp(json_string_value(json_object_get(msg, "role")), "assistant") &&
               !strcmp(json_string_value(json_object_get(msg, "content")), "ok\xef\xbf\xbd\xef\xbf\xbd"),
           "invalid UTF-8 in the content survives as U+FFFD");
        ok(msg && !strcmp(json_string_value(json_object_get(msg, "reasoning_content")), "why"), "reasoning_content");
        rc = json_unpack(usage, "{s:I, s:I, s:I, s:{s:I}}", "prompt_tokens", &pt, "completion_tokens", &ct,
                         "total_tokens", &tt, "prompt_tokens_details", "cached_tokens", &cached);
        ok(rc == 0 && pt == 12 && ct == 5 && tt == 17 && cached == 8, "usage with prompt_tokens_details.cached_tokens");
    }
    json_decref(v);

    a = (struct srv_answer){.text = "a\0b", .text_len = 3, .stop = SEER_STOP_EOS};
    s = srv_response_body(SRV_CHAT, "c", "m", 1, &a);
    v = load(s, "a response without reasoning");
    json_t *msg = json_object_get(json_array_get(json_object_get(v, "choices"), 0), "message");
    ok(msg && !json_object_get(msg, "reasoning_content"), "no reasoning_content when none was given");
    ok(msg && json_string_length(json_object_get(msg, "content")) == 3 &&
           !memcmp(json_string_value(json_object_get(msg, "content")), "a\0b", 3),
       "U+0000 in the content is kept");
    json_decref(v);

    a = (struct srv_answer){.text = "done", .text_len = 4, .stop = SEER_STOP_STRING};
    s = srv_response_body(SRV_COMPLETION, "cmpl-1", "m", 1, &a);
    v = load(s, "the completion response");
    json_t *c0 = json_array_get(json_object_get(v, "choices"), 0);
    ok(json_is_string(json_object_get(v, "object")) && !strcmp(json_string_value(json_object_get(v, "object")), "text_completion") &&
           !strcmp(json_string_value(json_object_get(c0, "text")), "done") &&
           !strcmp(json_string_value(json_object_get(c0, "finish_reason")), "stop"),
       "text_completion with choices[0].text");
    json_decref(v);

    ok(!strcmp(srv_finish_reason(SEER_STOP_EOS), "stop") && !strcmp(srv_finish_reason(SEER_STOP_STRING), "stop") &&
           !strcmp(srv_finish_reason(SEER_STOP_CANCELED), "stop") &&
           !strcmp(srv_finish_reason(SEER_STOP_LENGTH), "length") &&
           !strcmp(srv_finish_reason(SEER_STOP_CONTEXT), "length"),
       "finish reasons: end, stop string, cancel → stop; max_tokens, context → length");
}

/* The JSON of one event, checked to be "data: {…}\n\n". */
static json_t *event_json(char *ev, const char *what)
{
    size_t n = ev ? strlen(ev) : 0;
    bool framed = n > 8 && !strncmp(ev, "data: ", 6) && !strcmp(ev + n - 2, "\n\n");
    ok(framed, "%s: \"data: \" … \"\\n\\n\"", what);
    json_t *v = framed ? json_loadb(ev + 6, n - 8, JSON_ALLOW_NUL, NULL) : NULL; /* a delta may hold U+0000 */
    ok(v != NULL, "%s parses", what);
    free(ev);
    return v;
}

static void test_chunks(void)
{
    struct srv_delta d = {.first = true, .content = "Hel", .content_len = 3};
    json_t *v = event_json(srv_chunk_event(SRV_CHAT, "c1", "m", 5, &d), "first chunk");
    json_t *c0 = json_array_get(json_object_get(v, "choices"), 0), *delta = json_object_get(c0, "delta");
    ok(!strcmp(json_string_value(json_object_get(v, "object")), "chat.completion.chunk") &&
           !strcmp(json_string_value(json_object_get(delta, "role")), "assistant") &&
           !strcmp(json_string_value(json_object_get(delta, "content")), "Hel") &&
           !json_object_get(delta, "reasoning_content") && json_is_null(json_object_get(c0, "finish_reason")),
       "the first chunk has the role, the content, no reasoning, finish_reason null");
    json_decref(v);

    enum seer_stop_reason stop = SEER_STOP_CONTEXT;
    d = (struct srv_delta){.reasoning = "hmm\xe2\x82", .reasoning_len = 5, .finish = &stop};
    v = event_json(srv_chunk_event(SRV_CHAT, "c1", "m", 5, &d), "a reasoning chunk");
    c0 = json_array_get(json_object_get(v, "choices"), 0), delta = json_object_get(c0, "delta");
    ok(!json_object_get(delta, "role") && !json_object_get(delta, "content") &&
           !strcmp(json_string_value(json_object_get(delta, "reasoning_content")), "hmm\xef\xbf\xbd\xef\xbf\xbd") &&
           !strcmp(json_string_value(json_object_get(c0, "finish_reason")), "length"),
       "reasoning alone (a cut character replaced), finish_reason length");
    json_decref(v);

    struct srv_usage u = {.prompt_tokens = 3, .completion_tokens = 4, .cached_tokens = 1};
    d = (struct srv_delta){.usage = &u};
    v = event_json(srv_chunk_event(SRV_CHAT, "c1", "m", 5, &d), "the usage chunk");
    json_t *usage = json_object_get(v, "usage");
    ok(json_is_array(json_object_get(v, "choices")) && json_array_size(json_object_get(v, "choices")) == 0 &&
           json_integer_value(json_object_get(usage, "total_tokens")) == 7 &&
           json_integer_value(json_object_get(json_object_get(usage, "prompt_tokens_details"), "cached_tokens")) == 1,
       "the usage chunk: choices [] and usage");
    json_decref(v);

    d = (struct srv_delta){.content = "tok", .content_len = 3};
    v = event_json(srv_chunk_event(SRV_COMPLETION, "c2", "m", 5, &d), "a completion chunk");
    c0 = json_array_get(json_object_get(v, "choices"), 0);
    ok(!strcmp(json_string_value(json_object_get(v, "object")), "text_completion") &&
           !strcmp(json_string_value(json_object_get(c0, "text")), "tok"),
       "a completion chunk carries choices[0].text");
    json_decref(v);
}

static void test_errors_models(void)
{
    struct srv_error e;
    static const struct {
        int status;
        const char *type;
    } types[] = {{400, "invalid_request_error"}, {413, "invalid_request_error"}, {401, "authentication_error"},
                 {404, "not_found_error"},       {429, "rate_limit_error"},      {503, "server_error"},
                 {500, "server_error"}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        int rc = srv_fail(&e, types[i].status, NULL, "x %d", 1);
        ok(rc == -1 && e.status == types[i].status && !strcmp(e.type, types[i].type) && !strcmp(e.message, "x 1") &&
               !e.param[0],
           "srv_fail %d: %s", types[i].status, types[i].type);
    }
    srv_fail(&e, 400, "messages[0].content", "bad \xff byte");
    strcpy(e.code, "invalid_value");
    json_t *v = load(srv_error_body(&e), "the error body"), *err = json_object_get(v, "error");
    ok(!strcmp(json_string_value(json_object_get(err, "param")), "messages[0].content") &&
           !strcmp(json_string_value(json_object_get(err, "code")), "invalid_value") &&
           !strcmp(json_string_value(json_object_get(err, "type")), "invalid_request_error") &&
           !strcmp(json_string_value(json_object_get(err, "message")), "bad \xef\xbf\xbd byte"),
       "error object: message (bad UTF-8 replaced), type, param, code");
    json_decref(v);
    srv_fail(&e, 404, NULL, "no such path");
    v = load(srv_error_body(&e), "an error body without param");
    err = json_object_get(v, "error");
    ok(json_is_null(json_object_get(err, "param")) && json_is_null(json_object_get(err, "code")),
       "param and code null when empty");
    json_decref(v);

    for (int vision = 0; vision < 2; vision++) {
        v = load(srv_models_body("qwen3.5-0.8b", 7, vision, 4096), "the model list");
        json_t *m = json_array_get(json_object_get(v, "data"), 0), *mods = json_object_get(m, "input_modalities");
        ok(!strcmp(json_string_value(json_object_get(v, "object")), "list") &&
               !strcmp(json_string_value(json_object_get(m, "id")), "qwen3.5-0.8b") &&
               !strcmp(json_string_value(json_object_get(m, "owned_by")), "seer") &&
               json_array_size(mods) == (vision ? 3u : 1u) &&
               json_integer_value(json_object_get(json_object_get(m, "meta"), "n_ctx")) == 4096,
           "/v1/models %s vision: %zu input modalities", vision ? "with" : "without", json_array_size(mods));
        json_decref(v);
    }
}

int main(void)
{
    test_chat_shapes();
    test_fields();
    test_formats();
    test_rejections();
    test_hostile();
    test_data_uri();
    test_media_file();
    test_responses();
    test_chunks();
    test_errors_models();
    return done_testing();
}
