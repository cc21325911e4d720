/* request.c — request bodies → struct srv_request, and media references → bytes or paths
   (server/request.h). The body is hostile: its nesting is measured before jansson builds a tree, and
   every count and length is checked against struct srv_limits before anything is allocated from it.
   The responses and errors written back are server/response.c's. */
#define _GNU_SOURCE
#include "server/request.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct srv_limits srv_limits_default(void)
{
    return (struct srv_limits){
        .max_depth = 32, .max_messages = 1024, .max_media = 64, .max_stop = 16, .max_string = (size_t)1 << 20};
}

/* jansson's parser recurses once per nesting level and allows 2048 of them; a body of nested
   brackets would spend that stack on every connection thread. One pass over the bytes, skipping
   strings, says whether the body nests deeper than `limit` before any tree is built. */
static bool too_deep(const char *s, size_t n, size_t limit)
{
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                return true;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return false;
}

/* ---- typed fields ------------------------------------------------------------------------------ */
struct parse {
    const struct srv_limits *lim;
    struct srv_error *err;
    size_t n_media;              /* images and videos so far, over the whole request */
    const json_t *video_defaults; /* "mm_processor_kwargs" (vLLM): video options for every video */
};

/* A member, with JSON null read as absent: clients send "stop": null for "not given". */
static json_t *member(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

/* A field's path ("messages[2].content[0].image_url.url"), cut to the buffer: srv_error.param
   keeps 95 bytes of it anyway. */
static void pathf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}

static int oom(struct srv_error *err) { return srv_fail(err, 500, NULL, "out of memory"); }

/* Text the body may carry U+0000 in (a model can write it, and a client sends the reply back): the
   library's messages are C strings, so each NUL becomes U+FFFD (EF BF BD) rather than cutting the
   text short. dst NULL: only the size written. */
static size_t copy_text(char *dst, const char *src, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i]) {
            if (dst)
                dst[k] = src[i];
            k++;
        } else {
            if (dst)
                memcpy(dst + k, "\xEF\xBF\xBD", 3);
            k += 3;
        }
    }
    return k;
}

/* Whether a JSON string holds U+0000 (names, types, URLs: refused, never read up to the NUL). */
static bool has_nul(const json_t *v)
{
    return strlen(json_string_value(v)) != json_string_length(v);
}

/* A string value of at most max_string bytes, U+0000 as U+FFFD (copy_text). */
static int want_string(struct parse *p, const json_t *v, const char *param, char **out)
{
    if (!json_is_string(v))
        return srv_fail(p->err, 400, param, "%s must be a string", param);
    size_t n = json_string_length(v);
    if (n > p->lim->max_string)
        return srv_fail(p->err, 413, param, "%s is longer than %zu bytes", param, p->lim->max_string);
    const size_t k = copy_text(NULL, json_string_value(v), n);
    free(*out);
    if (!(*out = malloc(k + 1)))
        return oom(p->err);
    copy_text(*out, json_string_value(v), n);
    (*out)[k] = 0;
    return 0;
}

/* A number in [lo, hi] (lo excluded when lo_open); range is the interval as the message says it. */
static int want_number(struct parse *p, const json_t *v, const char *param, double lo, double hi, bool lo_open,
                       const char *range, double *out)
{
    if (!json_is_number(v))
        return srv_fail(p->err, 400, param, "%s must be a number", param);
    double x = json_number_value(v);
    if (x < lo || x > hi || (lo_open && x == lo))
        return srv_fail(p->err, 400, param, "%s must be %s (got %g)", param, range, x);
    *out = x;
    return 0;
}

/* An integer in [lo, hi]; 100.0 counts as 100, as JavaScript clients cannot tell them apart. */
static int want_int(struct parse *p, const json_t *v, const char *param, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t i;
    if (json_is_integer(v)) {
        i = json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
               fabs(json_real_value(v)) < 9e18) {
        i = (int64_t)json_real_value(v);
    } else {
        return srv_fail(p->err, 400, param, "%s must be an integer", param);
    }
    if (i < lo || i > hi) {
        if (hi == INT64_MAX)
            return srv_fail(p->err, 400, param, "%s must be at least %" PRId64 " (got %" PRId64 ")", param, lo, i);
        return srv_fail(p->err, 400, param, "%s must be between %" PRId64 " and %" PRId64 " (got %" PRId64 ")", param,
                        lo, hi, i);
    }
    *out = i;
    return 0;
}

static int want_bool(struct parse *p, const json_t *v, const char *param, bool *out)
{
    if (!json_is_boolean(v))
        return srv_fail(p->err, 400, param, "%s must be true or false", param);
    *out = json_is_true(v);
    return 0;
}

/* ---- media parts ------------------------------------------------------------------------------- */
/* Video options, where clients put them: Qwen's part ({"type": "video", "fps": 2, "max_frames": 64}),
   the url object of vLLM's and llama.cpp's parts, or vLLM's request-wide "mm_processor_kwargs".
   "nframes" (qwen-vl-utils) asks for exactly that many frames; "max_tokens" / "video_max_tokens"
   is the video's token budget. Later calls override earlier ones. */
static int video_options(struct parse *p, const json_t *o, const char *param, struct srv_media *m)
{
    if (!json_is_object(o))
        return 0;
    char q[160];
    const json_t *v;
    if ((v = member(o, "fps"))) {
        pathf(q, sizeof q, "%s.fps", param);
        if (want_number(p, v, q, 0, 240, true, "in (0, 240]", &m->fps))
            return -1;
    }
    static const char *const frame_keys[] = {"nframes", "min_frames", "max_frames"};
    for (int k = 0; k < 3; k++) {
        int64_t f;
        if (!(v = member(o, frame_keys[k])))
            continue;
        pathf(q, sizeof q, "%s.%s", param, frame_keys[k]);
        if (want_int(p, v, q, 1, 1 << 20, &f))
            return -1;
        if (k != 2)
            m->min_frames = f;
        if (k != 1)
            m->max_frames = f;
    }
    static const char *const budget_keys[] = {"max_tokens", "video_max_tokens"};
    for (int k = 0; k < 2; k++) {
        if (!(v = member(o, budget_keys[k])))
            continue;
        pathf(q, sizeof q, "%s.%s", param, budget_keys[k]);
        if (want_int(p, v, q, 1, INT64_MAX, &m->max_tokens))
            return -1;
    }
    if (m->min_frames && m->max_frames && m->min_frames > m->max_frames)
        return srv_fail(p->err, 400, param, "%s: min_frames %" PRId64 " is above max_frames %" PRId64, param,
                        m->min_frames, m->max_frames);
    return 0;
}

/* Appends one image or video to msg. url is the reference's JSON value (a string); opts are the
   objects that may carry video options, most general first. data: URIs are exempt from max_string
   (srv_data_uri bounds what they decode to); base64 is llama.cpp's raw-base64 "data" field. */
static int add_media(struct parse *p, struct srv_message *msg, enum srv_media_kind kind, const json_t *url,
                     bool base64, const char *param, const json_t *opt1, const json_t *opt2)
{
    if (++p->n_media > p->lim->max_media)
        return srv_fail(p->err, 400, param, "more than %zu images and videos in one request", p->lim->max_media);
    if (!json_is_string(url))
        return srv_fail(p->err, 400, param, "%s must be a string", param);
    const char *s = json_string_value(url);
    size_t n = json_string_length(url);
    if (!n)
        return srv_fail(p->err, 400, param, "%s is empty", param);
    if (has_nul(url))
        return srv_fail(p->err, 400, param, "%s contains U+0000", param);
    if (n > p->lim->max_string && !base64 && strncasecmp(s, "data:", 5) != 0)
        return srv_fail(p->err, 413, param, "%s is longer than %zu bytes", param, p->lim->max_string);
    struct srv_media *grown = realloc(msg->media, (msg->n_media + 1) * sizeof *grown);
    if (!grown)
        return oom(p->err);
    msg->media = grown;
    struct srv_media *m = &msg->media[msg->n_media++];
    *m = (struct srv_media){.kind = kind};
    static const char b64[] = "data:application/octet-stream;base64,";
    bool wrap = base64 && strncasecmp(s, "data:", 5) != 0;
    m->url = malloc((wrap ? sizeof b64 - 1 : 0) + n + 1);
    m->param = strdup(param);
    if (!m->url || !m->param)
        return oom(p->err);
    if (wrap)
        memcpy(m->url, b64, sizeof b64 - 1);
    memcpy(m->url + (wrap ? sizeof b64 - 1 : 0), s, n + 1);
    if (kind == SRV_VIDEO && (video_options(p, p->video_defaults, "mm_processor_kwargs", m) ||
                              video_options(p, opt1, param, m) || video_options(p, opt2, param, m)))
        return -1;
    return 0;
}

/* A growing text: the message's text parts, joined with "\n" as llama.cpp and vLLM join them. */
struct text {
    char *s;
    size_t n, cap;
};

static int text_add(struct parse *p, struct text *t, const json_t *v, const char *param)
{
    if (!json_is_string(v))
        return srv_fail(p->err, 400, param, "%s must be a string", param);
    size_t n = json_string_length(v);
    if (n > p->lim->max_string)
        return srv_fail(p->err, 413, param, "%s is longer than %zu bytes", param, p->lim->max_string);
    size_t need = t->n + (t->n ? 1 : 0) + copy_text(NULL, json_string_value(v), n) + 1;
    if (need > t->cap) {
        size_t cap = need > 2 * t->cap ? need : 2 * t->cap;
        char *g = realloc(t->s, cap);
        if (!g)
            return oom(p->err);
        t->s = g, t->cap = cap;
    }
    if (t->n)
        t->s[t->n++] = '\n';
    t->n += copy_text(t->s + t->n, json_string_value(v), n);
    t->s[t->n] = 0;
    return 0;
}

/* One content part. The shapes read:
     {"type": "text", "text": S}
     {"type": "image_url", "image_url": {"url": U}} (OpenAI) or "image_url": U (some clients)
     {"type": "image", "image": U} (Qwen)
     {"type": "video_url", "video_url": {"url": U}} (vLLM; "video_url": U too)
     {"type": "input_video", "input_video": {"url": U} or {"data": BASE64}} (llama.cpp's server,
        tools/server/README.md: "Either input_video.data or input_video.url can be specified";
        llama.cpp reads "video_url" parts the same way)
     {"type": "video", "video": U, "fps": F, "max_frames": N, ...} (Qwen)
   Anything else is refused: dropping a part would answer a different question. */
static int parse_part(struct parse *p, const json_t *part, const char *at, struct srv_message *msg,
                      struct text *text)
{
    char q[160];
    if (!json_is_object(part))
        return srv_fail(p->err, 400, at, "%s must be an object", at);
    const json_t *type = member(part, "type");
    if (!json_is_string(type)) {
        pathf(q, sizeof q, "%s.type", at);
        return srv_fail(p->err, 400, q, "%s must be a string", q);
    }
    const char *t = json_string_value(type);
    if (has_nul(type))
        return srv_fail(p->err, 400, at, "%s.type contains U+0000", at);
    if (!strcmp(t, "text")) {
        pathf(q, sizeof q, "%s.text", at);
        return text_add(p, text, member(part, "text"), q);
    }
    bool video = !strcmp(t, "video_url") || !strcmp(t, "input_video") || !strcmp(t, "video");
    if (!video && strcmp(t, "image_url") != 0 && strcmp(t, "image") != 0) {
        pathf(q, sizeof q, "%s.type", at);
        return srv_fail(p->err, 400, q, "content part type \"%.40s\" is not supported (text, image_url, image, "
                        "video_url, input_video, video)", t);
    }
    /* the reference sits under the member named as the type, as a string or an object */
    const json_t *ref = member(part, t);
    pathf(q, sizeof q, "%s.%s", at, t);
    if (json_is_array(ref) && !strcmp(t, "video"))
        return srv_fail(p->err, 400, q, "%s: a list of frames is not supported; give the video file", q);
    if (json_is_object(ref)) {
        const json_t *url = member(ref, "url"), *data = NULL;
        if (!url && !strcmp(t, "input_video"))
            data = member(ref, "data");
        size_t len = strlen(q);
        pathf(q + len, sizeof q - len, data ? ".data" : ".url");
        if (!url && !data)
            return srv_fail(p->err, 400, q, "%s is required", q);
        return add_media(p, msg, video ? SRV_VIDEO : SRV_IMAGE, url ? url : data, data != NULL, q, part, ref);
    }
    if (!ref)
        return srv_fail(p->err, 400, q, "%s is required", q);
    return add_media(p, msg, video ? SRV_VIDEO : SRV_IMAGE, ref, false, q, part, NULL);
}

/* "developer" is OpenAI's newer name for the system role. */
static const char *role_name(const char *r)
{
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
        if (!strcmp(r, roles[i]))
            return roles[i];
    return strcmp(r, "developer") ? NULL : "system";
}

static int parse_message(struct parse *p, const json_t *m, size_t i, struct srv_message *out)
{
    char at[96], q[160];
    pathf(at, sizeof at, "messages[%zu]", i);
    if (!json_is_object(m))
        return srv_fail(p->err, 400, at, "%s must be an object", at);
    const json_t *role = member(m, "role");
    pathf(q, sizeof q, "%s.role", at);
    if (!json_is_string(role))
        return srv_fail(p->err, 400, q, "%s must be a string", q);
    const char *name = has_nul(role) ? NULL : role_name(json_string_value(role));
    if (!name)
        return srv_fail(p->err, 400, q, "%s \"%.40s\" is not one of system, developer, user, assistant, tool", q,
                        json_string_value(role));
    if (!(out->role = strdup(name)))
        return oom(p->err);
    const json_t *content = member(m, "content");
    pathf(q, sizeof q, "%s.content", at);
    struct text text = {0};
    int rc = 0;
    if (!content) {
        /* an assistant turn that only called tools has no content */
        if (strcmp(name, "assistant") != 0)
            return srv_fail(p->err, 400, q, "%s is required", q);
    } else if (json_is_string(content)) {
        rc = text_add(p, &text, content, q);
    } else if (json_is_array(content)) {
        for (size_t j = 0; !rc && j < json_array_size(content); j++) {
            char part[160];
            pathf(part, sizeof part, "%s[%zu]", q, j);
            rc = parse_part(p, json_array_get(content, j), part, out, &text);
        }
    } else {
        return srv_fail(p->err, 400, q, "%s must be a string or an array of content parts", q);
    }
    out->text = text.s ? text.s : strdup("");
    if (!rc && !out->text)
        return oom(p->err);
    return rc;
}

/* ---- the body's other fields ------------------------------------------------------------------- */
static int parse_stop(struct parse *p, const json_t *v, struct srv_request *r)
{
    if (!v)
        return 0;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v))
        return srv_fail(p->err, 400, "stop", "stop must be a string or an array of strings");
    if (n > p->lim->max_stop)
        return srv_fail(p->err, 400, "stop", "stop has %zu strings, more than the %zu allowed", n, p->lim->max_stop);
    if (n && !(r->stop = calloc(n, sizeof *r->stop)))
        return oom(p->err);
    for (size_t i = 0; i < n; i++) {
        char q[32];
        pathf(q, sizeof q, json_is_array(v) ? "stop[%zu]" : "stop", i);
        const json_t *s = json_is_array(v) ? json_array_get(v, i) : v;
        if (want_string(p, s, q, &r->stop[i]))
            return -1;
        r->n_stop++;
        if (!*r->stop[i])
            return srv_fail(p->err, 400, q, "%s is empty", q);
    }
    return 0;
}

static int schema_text(struct parse *p, const json_t *schema, const char *param, char **out)
{
    if (!json_is_object(schema) && !json_is_boolean(schema))
        return srv_fail(p->err, 400, param, "%s must be a JSON schema (an object)", param);
    free(*out);
    /* jansson keeps the members' order, which the schema's grammar follows */
    if (!(*out = json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY)))
        return oom(p->err);
    /* the body may hold \u0000 in strings (JSON_ALLOW_NUL), a schema may not: the grammar engine reads
       it as jansson does by default (lm/json_schema.c), and would refuse it only after the queue */
    json_t *again = json_loads(*out, JSON_DECODE_ANY, NULL);
    if (!again)
        return srv_fail(p->err, 400, param, "%s holds a \\u0000 character in a string, which a schema cannot", param);
    json_decref(again);
    return 0;
}

/* response_format in OpenAI's shape ({"type": "json_schema", "json_schema": {"schema": S}}) and
   llama.cpp's ({"type": "json_object"|"json_schema", "schema": S}); {"type": "json_object"} alone
   is any JSON object ({"type": "object"}), as OpenAI's JSON mode promises an object, not a number. */
static int parse_response_format(struct parse *p, const json_t *rf, struct srv_request *r)
{
    if (!json_is_object(rf))
        return srv_fail(p->err, 400, "response_format", "response_format must be an object");
    const json_t *type = member(rf, "type");
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    bool object = !strcmp(t, "json_object"), schema = !strcmp(t, "json_schema");
    if (!strcmp(t, "text"))
        return 0;
    if (!object && !schema)
        return srv_fail(p->err, 400, "response_format.type",
                        "response_format.type must be \"text\", \"json_object\" or \"json_schema\"");
    const json_t *wrapper = member(rf, "json_schema"), *s;
    if (schema && wrapper && !json_is_object(wrapper))
        return srv_fail(p->err, 400, "response_format.json_schema", "response_format.json_schema must be an object");
    if (schema && (s = member(wrapper, "schema")))
        return schema_text(p, s, "response_format.json_schema.schema", &r->json_schema);
    if ((s = member(rf, "schema")))
        return schema_text(p, s, "response_format.schema", &r->json_schema);
    free(r->json_schema);
    return (r->json_schema = strdup("{\"type\":\"object\"}")) ? 0 : oom(p->err);
}

/* Fields seer has no feature for: refused, as ignoring them would answer a different question. */
static int refuse_unsupported(struct parse *p, const json_t *b)
{
    const json_t *v;
    int64_t n;
    if ((v = member(b, "n")) && (want_int(p, v, "n", 0, INT64_MAX, &n) ||
                                 (n != 1 && srv_fail(p->err, 400, "n", "n other than 1 is not supported"))))
        return -1;
    if ((v = member(b, "tools")) && (!json_is_array(v) || json_array_size(v)))
        return srv_fail(p->err, 400, "tools", "tools are not supported");
    return 0;
}

static int parse_sampling(struct parse *p, const json_t *b, seer_sampling *s)
{
    static const struct {
        const char *key;
        double lo, hi;
        bool lo_open;
        const char *range;
        size_t off;
    } reals[] = {
        {"temperature", 0, 2, false, "in [0, 2]", offsetof(seer_sampling, temperature)},
        {"top_p", 0, 1, true, "in (0, 1]", offsetof(seer_sampling, top_p)},
        {"min_p", 0, 1, false, "in [0, 1]", offsetof(seer_sampling, min_p)},
        {"presence_penalty", -2, 2, false, "in [-2, 2]", offsetof(seer_sampling, presence_penalty)},
        {"frequency_penalty", -2, 2, false, "in [-2, 2]", offsetof(seer_sampling, frequency_penalty)},
        {"repeat_penalty", 0, 1e6, true, "in (0, 1e6]", offsetof(seer_sampling, repeat_penalty)},
        {"repetition_penalty", 0, 1e6, true, "in (0, 1e6]", offsetof(seer_sampling, repeat_penalty)},
    };
    const json_t *v;
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
        double x;
        if (!(v = member(b, reals[i].key)))
            continue;
        if (want_number(p, v, reals[i].key, reals[i].lo, reals[i].hi, reals[i].lo_open, reals[i].range, &x))
            return -1;
        *(float *)((char *)s + reals[i].off) = (float)x;
    }
    int64_t k;
    if ((v = member(b, "top_k"))) {
        if (want_int(p, v, "top_k", 0, INT32_MAX, &k))
            return -1;
        s->top_k = (int32_t)k;
    }
    /* jansson reads integers as int64: a seed past 2^63 - 1 is refused as malformed JSON */
    if ((v = member(b, "seed"))) {
        if (want_int(p, v, "seed", 0, INT64_MAX, &k))
            return -1;
        s->seed = (uint64_t)k;
    }
    return 0;
}

static int parse_prompt(struct parse *p, const json_t *v, struct srv_request *r)
{
    if (!v)
        return srv_fail(p->err, 400, "prompt", "prompt is required");
    if (json_is_array(v)) {
        const json_t *first = json_array_get(v, 0);
        if (json_is_integer(first) || json_is_array(first))
            return srv_fail(p->err, 400, "prompt", "token prompts are not supported; give the text");
        if (json_array_size(v) != 1)
            return srv_fail(p->err, 400, "prompt", "prompt must be one string (several prompts are not supported)");
        return want_string(p, first, "prompt[0]", &r->prompt);
    }
    return want_string(p, v, "prompt", &r->prompt);
}

static int parse_body(struct parse *p, enum srv_endpoint ep, const json_t *b, struct srv_request *r)
{
    const json_t *v;
    if (refuse_unsupported(p, b) || parse_sampling(p, b, &r->sampling))
        return -1;
    if ((v = member(b, "model")) && want_string(p, v, "model", &r->model))
        return -1;
    /* max_completion_tokens, OpenAI's newer name, wins over max_tokens */
    if ((v = member(b, "max_tokens")) && want_int(p, v, "max_tokens", 1, INT64_MAX, &r->max_tokens))
        return -1;
    if ((v = member(b, "max_completion_tokens")) &&
        want_int(p, v, "max_completion_tokens", 1, INT64_MAX, &r->max_tokens))
        return -1;
    if (parse_stop(p, member(b, "stop"), r))
        return -1;
    if ((v = member(b, "grammar")) && want_string(p, v, "grammar", &r->grammar))
        return -1;
    if ((v = member(b, "json_schema")) && schema_text(p, v, "json_schema", &r->json_schema))
        return -1;
    if ((v = member(b, "response_format")) && parse_response_format(p, v, r))
        return -1;
    if (r->grammar && r->json_schema)
        return srv_fail(p->err, 400, "grammar", "grammar and a JSON schema cannot be combined");
    bool on = false;
    if ((v = member(b, "enable_thinking"))) {
        if (want_bool(p, v, "enable_thinking", &on))
            return -1;
        r->think = on;
    }
    const json_t *kw = member(b, "chat_template_kwargs");
    if (kw && !json_is_object(kw))
        return srv_fail(p->err, 400, "chat_template_kwargs", "chat_template_kwargs must be an object");
    if ((v = member(kw, "enable_thinking"))) {
        if (want_bool(p, v, "chat_template_kwargs.enable_thinking", &on))
            return -1;
        r->think = on;
    }
    /* Qwen's own API calls it thinking_budget; llama.cpp's server flag, reasoning_budget */
    if ((v = member(b, "thinking_budget")) && want_int(p, v, "thinking_budget", 1, INT64_MAX, &r->thinking_budget))
        return -1;
    if ((v = member(b, "reasoning_budget")) && want_int(p, v, "reasoning_budget", 1, INT64_MAX, &r->thinking_budget))
        return -1;
    if ((v = member(b, "stream")) && want_bool(p, v, "stream", &r->stream))
        return -1;
    /* chat: "logprobs" a boolean and "top_logprobs" a count that needs it (OpenAI's); completions:
       "logprobs" the count of alternatives, its presence asking for logprobs */
    int64_t top = 0;
    if ((v = member(b, "logprobs")) &&
        (ep == SRV_CHAT ? want_bool(p, v, "logprobs", &r->logprobs)
                        : want_int(p, v, "logprobs", 0, SEER_TOP_LOGPROBS_MAX, &top)))
        return -1;
    if (ep == SRV_COMPLETION)
        r->logprobs = v != NULL;
    else if ((v = member(b, "top_logprobs")) &&
             (want_int(p, v, "top_logprobs", 0, SEER_TOP_LOGPROBS_MAX, &top) ||
              (!r->logprobs && top > 0 &&
               srv_fail(p->err, 400, "top_logprobs", "top_logprobs needs \"logprobs\": true"))))
        return -1;
    r->top_logprobs = (int)top;
    const json_t *so = member(b, "stream_options");
    if (so && !json_is_object(so))
        return srv_fail(p->err, 400, "stream_options", "stream_options must be an object");
    if ((v = member(so, "include_usage")) && want_bool(p, v, "stream_options.include_usage", &r->include_usage))
        return -1;
    p->video_defaults = member(b, "mm_processor_kwargs");
    if (p->video_defaults && !json_is_object(p->video_defaults))
        return srv_fail(p->err, 400, "mm_processor_kwargs", "mm_processor_kwargs must be an object");
    struct srv_media checked = {0}; /* checked once here, even when no video uses them */
    if (video_options(p, p->video_defaults, "mm_processor_kwargs", &checked))
        return -1;
    if (ep == SRV_COMPLETION)
        return parse_prompt(p, member(b, "prompt"), r);

    const json_t *msgs = member(b, "messages");
    if (!json_is_array(msgs))
        return srv_fail(p->err, 400, "messages", msgs ? "messages must be an array" : "messages is required");
    size_t n = json_array_size(msgs);
    if (!n)
        return srv_fail(p->err, 400, "messages", "messages is empty");
    if (n > p->lim->max_messages)
        return srv_fail(p->err, 400, "messages", "messages has %zu entries, more than the %zu allowed", n,
                        p->lim->max_messages);
    if (!(r->messages = calloc(n, sizeof *r->messages)))
        return oom(p->err);
    for (size_t i = 0; i < n; i++) {
        r->n_messages = i + 1;
        if (parse_message(p, json_array_get(msgs, i), i, &r->messages[i]))
            return -1;
    }
    return 0;
}

int srv_parse_request(enum srv_endpoint ep, const char *body, size_t len, const seer_sampling *defaults,
                      const struct srv_limits *lim, struct srv_request *out, struct srv_error *err)
{
    struct srv_limits dl = srv_limits_default();
    struct parse p = {.lim = lim ? lim : &dl, .err = err};
    *out = (struct srv_request){.endpoint = ep, .max_tokens = -1, .think = -1};
    out->sampling = defaults ? *defaults : seer_generate_params_default().sampling;
    if (too_deep(body, len, p.lim->max_depth))
        return srv_fail(err, 400, NULL, "malformed JSON: nested deeper than %zu levels", p.lim->max_depth);
    json_error_t je;
    json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, &je);
    if (!root)
        return srv_fail(err, 400, NULL, "malformed JSON: %s at line %d column %d", je.text, je.line, je.column);
    int rc = json_is_object(root) ? parse_body(&p, ep, root, out)
                                  : srv_fail(err, 400, NULL, "the body must be a JSON object");
    json_decref(root);
    if (rc)
        srv_request_free(out);
    return rc;
}

void srv_request_free(struct srv_request *r)
{
    for (size_t i = 0; i < r->n_messages; i++) {
        struct srv_message *m = &r->messages[i];
        for (size_t j = 0; j < m->n_media; j++) {
            free(m->media[j].url);
            free(m->media[j].param);
        }
        free(m->media);
        free(m->role);
        free(m->text);
    }
    free(r->messages);
    for (size_t i = 0; i < r->n_stop; i++)
        free(r->stop[i]);
    free(r->stop);
    free(r->model);
    free(r->prompt);
    free(r->grammar);
    free(r->json_schema);
    *r = (struct srv_request){.max_tokens = -1, .think = -1};
}

/* ---- media references -------------------------------------------------------------------------- */
static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* RFC 3986 percent-decoding of s[0..n) into out (room for n bytes); -1 at a '%' not followed by
   two hex digits. Returns the decoded length. */
static ptrdiff_t percent_decode(const char *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            out[o++] = (uint8_t)s[i];
            continue;
        }
        if (i + 2 >= n)
            return -1;
        int h = hex((unsigned char)s[i + 1]), l = hex((unsigned char)s[i + 2]);
        if (h < 0 || l < 0)
            return -1;
        out[o++] = (uint8_t)(h << 4 | l);
        i += 2;
    }
    return (ptrdiff_t)o;
}

static int b64_value(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
         : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* A data: URI's decoded size, known from its length before anything is decoded or allocated. */
static int size_bad(size_t size, size_t max_bytes, struct srv_error *err)
{
    if (size > max_bytes)
        return srv_fail(err, 413, NULL, "the data: URI holds %zu bytes, more than the %zu allowed", size, max_bytes);
    if (!size)
        return srv_fail(err, 400, NULL, "the data: URI is empty");
    return 0;
}

/* Strict base64 (RFC 4648 §4: no whitespace, no URL-safe alphabet), its padding optional. The
   decoded size comes from the length alone, so it is bounded before anything is allocated. */
static int base64_decode(const char *s, size_t n, size_t max_bytes, uint8_t **bytes, size_t *out_n,
                         struct srv_error *err)
{
    size_t pad = 0;
    while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
        pad++;
    if (pad && n % 4)
        return srv_fail(err, 400, NULL, "bad base64 in the data: URI: wrong padding");
    size_t m = n - pad; /* data characters */
    if (m % 4 == 1)
        return srv_fail(err, 400, NULL, "bad base64 in the data: URI: truncated");
    size_t size = m / 4 * 3 + (m % 4 ? m % 4 - 1 : 0);
    if (size_bad(size, max_bytes, err))
        return -1;
    uint8_t *b = malloc(size);
    if (!b)
        return oom(err);
    uint32_t acc = 0;
    size_t o = 0;
    for (size_t i = 0; i < m; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) {
            free(b);
            return srv_fail(err, 400, NULL, "bad base64 in the data: URI: byte %zu (0x%02x) is not base64", i,
                            (unsigned char)s[i]);
        }
        acc = acc << 6 | (uint32_t)v;
        if (i % 4 == 3) {
            b[o++] = (uint8_t)(acc >> 16), b[o++] = (uint8_t)(acc >> 8), b[o++] = (uint8_t)acc;
            acc = 0;
        }
    }
    if (m % 4 == 2)
        b[o++] = (uint8_t)(acc >> 4);
    else if (m % 4 == 3)
        b[o++] = (uint8_t)(acc >> 10), b[o++] = (uint8_t)(acc >> 2);
    *bytes = b;
    *out_n = o;
    return 0;
}

int srv_data_uri(const char *url, size_t max_bytes, uint8_t **bytes, size_t *n, char mime[64], struct srv_error *err)
{
    *bytes = NULL;
    *n = 0;
    mime[0] = 0;
    if (strncasecmp(url, "data:", 5) != 0)
        return srv_fail(err, 400, NULL, "not a data: URI");
    const char *head = url + 5, *comma = strchr(head, ',');
    if (!comma)
        return srv_fail(err, 400, NULL, "malformed data: URI: no ',' before the data");
    /* data:[<type/subtype>][;param=value]*[;base64],<data> */
    size_t type_len = strcspn(head, ";,");
    if (type_len >= 64)
        return srv_fail(err, 400, NULL, "malformed data: URI: media type longer than 63 bytes");
    for (size_t i = 0; i < type_len; i++)
        mime[i] = (char)tolower((unsigned char)head[i]);
    mime[type_len] = 0;
    if (type_len && (!strchr(mime, '/') || strcspn(mime, " \t\"") != type_len))
        return srv_fail(err, 400, NULL, "malformed data: URI: media type \"%s\"", mime);
    bool base64 = false;
    for (const char *a = head + type_len; *a == ';';) {
        const char *end = a + 1 + strcspn(a + 1, ";,");
        if (end - a == 7 && !strncasecmp(a + 1, "base64", 6) && *end == ',')
            base64 = true;
        else if (!memchr(a + 1, '=', (size_t)(end - a - 1)))
            return srv_fail(err, 400, NULL, "malformed data: URI: parameter \"%.*s\" is not name=value",
                            (int)(end - a - 1 > 40 ? 40 : end - a - 1), a + 1);
        a = end;
    }
    if (type_len && strncmp(mime, "image/", 6) != 0 && strncmp(mime, "video/", 6) != 0 &&
        strcmp(mime, "application/octet-stream") != 0)
        return srv_fail(err, 415, NULL, "media type %s is not supported (image/…, video/…)", mime);
    const char *data = comma + 1;
    size_t len = strlen(data);
    if (base64)
        return base64_decode(data, len, max_bytes, bytes, n, err);
    size_t pct = 0;
    for (const char *c = data; (c = strchr(c, '%')); c++)
        pct++;
    /* every escape is three characters for one byte */
    size_t size = len > 2 * pct ? len - 2 * pct : 0;
    if (size_bad(size, max_bytes, err))
        return -1;
    uint8_t *b = malloc(len);
    if (!b)
        return oom(err);
    ptrdiff_t got = percent_decode(data, len, b);
    if (got < 0) {
        free(b);
        return srv_fail(err, 400, NULL, "malformed data: URI: a '%%' not followed by two hex digits");
    }
    *bytes = b;
    *n = (size_t)got;
    return 0;
}

/* path is inside root (both resolved): equal to it, or below it. */
static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (n == 1) /* root is "/" */
        return true;
    return !strncmp(path, root, n) && (path[n] == 0 || path[n] == '/');
}

int srv_media_file(const char *root, const char *url, const char *param, char **path, struct srv_error *err)
{
    *path = NULL;
    if (!param)
        param = "media";
    if (!root)
        return srv_fail(err, 400, param, "%s: local files are refused; start the server with --media-path", param);
    const char *p = url;
    char *decoded = NULL;
    if (!strncasecmp(url, "file://", 7)) {
        p = url + 7;
        if (!strncasecmp(p, "localhost/", 10))
            p += 9;
        /* file:///abs/path, file://localhost/abs/path; llama-server's file://rel/path (relative to
           its --media-path, which seer serve spells the same) is read the same way */
        size_t n = strlen(p);
        if (!(decoded = malloc(n + 1)))
            return oom(err);
        ptrdiff_t got = percent_decode(p, n, (uint8_t *)decoded);
        if (got < 0 || memchr(decoded, 0, (size_t)got)) {
            free(decoded);
            return srv_fail(err, 400, param, "%s: bad percent-encoding in the file:// URL", param);
        }
        decoded[got] = 0;
        p = decoded;
    } else if (strstr(url, "://")) {
        return srv_fail(err, 400, param, "%s: not a file:// URL or a path", param);
    }
    char *rroot = realpath(root, NULL), *target = NULL;
    int rc = 0;
    if (!rroot) {
        rc = srv_fail(err, 500, param, "--media-path %s cannot be resolved: %s", root, strerror(errno));
    } else if (!*p) {
        rc = srv_fail(err, 400, param, "%s: empty path", param);
    } else {
        /* relative paths are taken from the media root */
        char *joined = NULL;
        if (*p != '/' && asprintf(&joined, "%s/%s", rroot, p) < 0)
            joined = NULL, rc = oom(err);
        if (!rc && !(target = realpath(joined ? joined : p, NULL)))
            rc = srv_fail(err, 400, param, "%s: %s", param, errno == ENOENT ? "no such file" : strerror(errno));
        free(joined);
    }
    struct stat st;
    if (!rc && !inside(rroot, target))
        rc = srv_fail(err, 400, param, "%s: the path is outside --media-path", param);
    else if (!rc && (stat(target, &st) != 0 || !S_ISREG(st.st_mode)))
        rc = srv_fail(err, 400, param, "%s: not a regular file", param);
    free(decoded);
    free(rroot);
    if (rc)
        free(target);
    else
        *path = target;
    return rc;
}
