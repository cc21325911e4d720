/* chat_json.c — chat_render_json: HF/OpenAI-style JSON messages and tools turned into chat_message /
   chat_params and rendered by chat_render (lm/chat.c, spec §6.2). Only reading JSON lives here; every
   template rule stays in chat.c. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "lm/chat.h"

/* Everything built from the JSON; the strings point into the jansson trees, which live until free. */
typedef struct conv {
    json_t *msgs_root, *tools_root;
    chat_message *msgs;
    chat_part **parts;       /* [n_msgs] */
    chat_tool_call **calls;  /* [n_msgs] */
    char **args;             /* [n_args] arguments re-serialised as JSON text */
    size_t n_args, cap_args;
    char **tools;            /* [n_tools] */
    size_t n_msgs, n_tools;
} conv;

static void conv_free(conv *c)
{
    for (size_t i = 0; c->parts && i < c->n_msgs; i++)
        free(c->parts[i]);
    for (size_t i = 0; c->calls && i < c->n_msgs; i++)
        free(c->calls[i]);
    for (size_t i = 0; i < c->n_args; i++)
        free(c->args[i]);
    for (size_t i = 0; c->tools && i < c->n_tools; i++)
        free(c->tools[i]);
    free(c->parts);
    free(c->calls);
    free(c->args);
    free(c->tools);
    free(c->msgs);
    json_decref(c->msgs_root);
    json_decref(c->tools_root);
}

/* json_dumps allocates with malloc: the text is released with free like ours. JSON_REAL_PRECISION(17)
   keeps every double exact, so chat.c prints the same shortest repr as the original value. */
static char *dump(const json_t *v) { return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)); }

static int keep_args(conv *c, char *text, size_t mi)
{
    if (!text)
        return seer_err(SEER_ENOMEM, "chat: out of memory converting message %zu", mi);
    if (!seer_grow(&c->args, &c->cap_args, c->n_args + 1, sizeof *c->args, 8)) {
        free(text);
        return seer_err(SEER_ENOMEM, "chat: out of memory converting message %zu", mi);
    }
    c->args[c->n_args++] = text;
    return SEER_OK;
}

static int parse_parts(conv *c, size_t mi, const json_t *arr)
{
    size_t n = json_array_size(arr);
    chat_message *m = &c->msgs[mi];
    if (n == 0)
        return SEER_OK;
    if (!(c->parts[mi] = seer_calloc(n, sizeof(chat_part))))
        return seer_err(SEER_ENOMEM, "chat: out of memory converting message %zu", mi);
    for (size_t j = 0; j < n; j++) {
        const json_t *it = json_array_get(arr, j);
        if (!json_is_object(it))
            return seer_err(SEER_EINVAL, "chat: message %zu part %zu is not a JSON object", mi, j);
        const char *type = json_string_value(json_object_get(it, "type"));
        chat_part *pt = &c->parts[mi][j];
        /* The template's order of tests: image, then video, then text. */
        if (json_object_get(it, "image") || json_object_get(it, "image_url") || (type && !strcmp(type, "image")))
            pt->type = CHAT_PART_IMAGE;
        else if (json_object_get(it, "video") || (type && !strcmp(type, "video")))
            pt->type = CHAT_PART_VIDEO;
        else if (json_object_get(it, "text")) {
            pt->type = CHAT_PART_TEXT;
            if (!(pt->text = json_string_value(json_object_get(it, "text"))))
                return seer_err(SEER_EINVAL, "chat: message %zu part %zu: \"text\" is not a string", mi, j);
        } else
            return seer_err(SEER_EINVAL, "chat: message %zu part %zu: unexpected item type in content", mi, j);
    }
    m->parts = c->parts[mi];
    m->n_parts = n;
    return SEER_OK;
}

static int parse_calls(conv *c, size_t mi, const json_t *arr)
{
    size_t n = json_array_size(arr);
    chat_message *m = &c->msgs[mi];
    if (n == 0)
        return SEER_OK;
    if (!(c->calls[mi] = seer_calloc(n, sizeof(chat_tool_call))))
        return seer_err(SEER_ENOMEM, "chat: out of memory converting message %zu", mi);
    for (size_t j = 0; j < n; j++) {
        const json_t *tc = json_array_get(arr, j);
        if (json_is_object(json_object_get(tc, "function")))
            tc = json_object_get(tc, "function");
        if (!json_is_object(tc) || !json_is_string(json_object_get(tc, "name")))
            return seer_err(SEER_EINVAL, "chat: message %zu tool call %zu has no \"name\" string", mi, j);
        c->calls[mi][j].name = json_string_value(json_object_get(tc, "name"));
        const json_t *args = json_object_get(tc, "arguments");
        if (!args)
            continue;
        int rc;
        if (json_is_string(args)) /* OpenAI sends the arguments as JSON text: chat.c checks it is an object */
            rc = keep_args(c, seer_strdup(json_string_value(args)), mi);
        else
            rc = keep_args(c, dump(args), mi);
        if (rc)
            return rc;
        c->calls[mi][j].arguments_json = c->args[c->n_args - 1];
    }
    m->tool_calls = c->calls[mi];
    m->n_tool_calls = n;
    return SEER_OK;
}

static int parse_message(conv *c, size_t mi, const json_t *jm)
{
    chat_message *m = &c->msgs[mi];
    if (!json_is_object(jm))
        return seer_err(SEER_EINVAL, "chat: message %zu is not a JSON object", mi);
    if (!(m->role = json_string_value(json_object_get(jm, "role"))))
        return seer_err(SEER_EINVAL, "chat: message %zu has no \"role\" string", mi);
    const json_t *content = json_object_get(jm, "content");
    int rc;
    if (json_is_string(content))
        m->content = json_string_value(content);
    else if (json_is_array(content)) {
        if ((rc = parse_parts(c, mi, content)))
            return rc;
    } else if (content && !json_is_null(content))
        return seer_err(SEER_EINVAL, "chat: message %zu: unexpected content type (string, list or null)", mi);
    /* [3p] `reasoning_content is string`: anything else counts as absent. */
    m->reasoning_content = json_string_value(json_object_get(jm, "reasoning_content"));
    const json_t *calls = json_object_get(jm, "tool_calls");
    if (json_is_array(calls) && (rc = parse_calls(c, mi, calls)))
        return rc;
    return SEER_OK;
}

static int parse_tools(conv *c, const char *tools_json)
{
    json_error_t jerr;
    if (!(c->tools_root = json_loads(tools_json, 0, &jerr)) || !json_is_array(c->tools_root))
        return seer_err(SEER_EINVAL, "chat: tools are not a JSON array%s%s", c->tools_root ? "" : ": ",
                        c->tools_root ? "" : jerr.text);
    c->n_tools = json_array_size(c->tools_root);
    if (c->n_tools && !(c->tools = seer_calloc(c->n_tools, sizeof(char *))))
        return seer_err(SEER_ENOMEM, "chat: out of memory converting tools");
    for (size_t i = 0; i < c->n_tools; i++)
        if (!(c->tools[i] = dump(json_array_get(c->tools_root, i))))
            return seer_err(SEER_ENOMEM, "chat: out of memory converting tools");
    return SEER_OK;
}

int chat_render_json(const char *messages_json, const char *tools_json, const chat_params *params, char **out,
                     size_t *out_len)
{
    if (!messages_json || !out)
        return seer_err(SEER_EINVAL, "chat: messages_json or out is NULL");
    conv c = { 0 };
    json_error_t jerr;
    int rc = SEER_OK;
    if (!(c.msgs_root = json_loads(messages_json, 0, &jerr)) || !json_is_array(c.msgs_root)) {
        rc = seer_err(SEER_EINVAL, "chat: messages are not a JSON array%s%s", c.msgs_root ? "" : ": ",
                      c.msgs_root ? "" : jerr.text);
        goto done;
    }
    c.n_msgs = json_array_size(c.msgs_root);
    if (c.n_msgs) {
        c.msgs = seer_calloc(c.n_msgs, sizeof *c.msgs);
        c.parts = seer_calloc(c.n_msgs, sizeof *c.parts);
        c.calls = seer_calloc(c.n_msgs, sizeof *c.calls);
        if (!c.msgs || !c.parts || !c.calls) {
            rc = seer_err(SEER_ENOMEM, "chat: out of memory converting %zu messages", c.n_msgs);
            goto done;
        }
    }
    for (size_t i = 0; i < c.n_msgs && rc == SEER_OK; i++)
        rc = parse_message(&c, i, json_array_get(c.msgs_root, i));
    if (rc == SEER_OK && tools_json)
        rc = parse_tools(&c, tools_json);
    if (rc == SEER_OK) {
        chat_params p = params ? *params : chat_params_default();
        if (tools_json) {
            p.tools_json = (const char *const *)c.tools;
            p.n_tools = c.n_tools;
        }
        rc = chat_render(c.msgs, c.n_msgs, &p, out, out_len);
    }
done:
    conv_free(&c);
    return rc;
}
