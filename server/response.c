/* response.c — what `seer serve` writes back (server/request.h): OpenAI's error object, the
   chat and text completion objects, their server-sent-event chunks and the model list, built with
   jansson. A model may write bytes that are not UTF-8 (a stop inside a character, a stray byte)
   and jansson refuses such strings: the writers replace each bad sequence with U+FFFD instead of
   failing, so a reply is never lost to its own text. */
#define _GNU_SOURCE
#include "server/request.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int srv_fail(struct srv_error *err, int status, const char *param, const char *fmt, ...)
{
    err->status = status;
    err->type = status == 401   ? "authentication_error"
                : status == 404 ? "not_found_error"
                : status == 429 ? "rate_limit_error"
                : status >= 500 ? "server_error"
                                : "invalid_request_error";
    snprintf(err->param, sizeof err->param, "%s", param ? param : "");
    err->code[0] = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no surrogates,
   nothing past U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return len;
}

/* A JSON string of n bytes (U+0000 included), bad UTF-8 replaced by U+FFFD. */
static json_t *text_value(const char *s, size_t n)
{
    if (!s)
        s = "", n = 0;
    json_t *v = json_stringn(s, n);
    if (v)
        return v;
    char *fixed = malloc(3 * n + 1); /* each bad byte becomes three */
    if (!fixed)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_len((const unsigned char *)s + i, n - i);
        if (len) {
            memcpy(fixed + o, s + i, len);
            o += len, i += len;
        } else {
            memcpy(fixed + o, "\xef\xbf\xbd", 3);
            o += 3, i++;
        }
    }
    v = json_stringn(fixed, o);
    free(fixed);
    return v;
}

static json_t *cstr_value(const char *s) { return text_value(s, s ? strlen(s) : 0); }

/* json_dumps of a tree built with json_pack's "o" (which steals references); NULL when building
   failed (out of memory). */
static char *dump(json_t *root)
{
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

char *srv_error_body(const struct srv_error *err)
{
    return dump(json_pack("{s:{s:o, s:s, s:o, s:o}}", "error", "message", cstr_value(err->message), "type",
                          err->type ? err->type : "server_error", "param",
                          err->param[0] ? cstr_value(err->param) : json_null(), "code",
                          err->code[0] ? cstr_value(err->code) : json_null()));
}

const char *srv_finish_reason(enum seer_stop_reason stop)
{
    return stop == SEER_STOP_LENGTH || stop == SEER_STOP_CONTEXT ? "length" : "stop";
}

void srv_logprobs_free(struct srv_logprobs *lp)
{
    for (size_t i = 0; lp->tok && i < lp->n; i++)
        free(lp->tok[i].bytes);
    for (size_t i = 0; lp->top && i < lp->n * (size_t)lp->n_top; i++)
        free(lp->top[i].bytes);
    free(lp->tok);
    free(lp->top);
    free(lp->text_offset);
    memset(lp, 0, sizeof *lp);
}

/* A log-probability as JSON can hold it: one too small for a float is OpenAI's -9999 */
static double finite_lp(float x) { return isfinite(x) ? (double)x : -9999.0; }

/* A token as OpenAI writes it in chat logprobs: its text (invalid UTF-8 replaced, as a token may be
   part of a character), its log-probability and its bytes. */
static json_t *token_value(const struct srv_token_lp *t)
{
    json_t *bytes = json_array();
    for (size_t i = 0; bytes && i < t->len; i++)
        if (json_array_append_new(bytes, json_integer((unsigned char)t->bytes[i])) != 0)
            json_decref(bytes), bytes = NULL;
    return json_pack("{s:o, s:f, s:o}", "token", text_value(t->bytes, t->len), "logprob", finite_lp(t->logprob), "bytes",
                     bytes);
}

/* choices[0].logprobs: chat {"content": [{token, logprob, bytes, top_logprobs: [...]}]}; completions
   {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}; null without. */
static json_t *logprobs_value(enum srv_endpoint ep, const struct srv_logprobs *lp)
{
    if (!lp)
        return json_null();
    json_t *a = json_array(), *b = json_array(), *c = json_array(), *d = json_array();
    bool good = a && b && c && d;
    for (size_t i = 0; good && i < lp->n; i++) {
        const struct srv_token_lp *top = lp->top ? lp->top + i * (size_t)lp->n_top : NULL;
        if (ep == SRV_CHAT) {
            json_t *alts = json_array(), *t = token_value(&lp->tok[i]);
            for (int k = 0; alts && top && k < lp->n_top; k++)
                if (json_array_append_new(alts, token_value(&top[k])) != 0)
                    json_decref(alts), alts = NULL;
            good = t && alts && json_object_set_new(t, "top_logprobs", alts) == 0 && json_array_append_new(a, t) == 0;
            if (!good && t)
                json_decref(t);
            continue;
        }
        json_t *alts = json_object();
        for (int k = 0; alts && top && k < lp->n_top; k++) {
            json_t *key = text_value(top[k].bytes, top[k].len);
            if (!key || json_object_set_new(alts, json_string_value(key), json_real(finite_lp(top[k].logprob))) != 0)
                json_decref(alts), alts = NULL;
            json_decref(key);
        }
        good = json_array_append_new(a, text_value(lp->tok[i].bytes, lp->tok[i].len)) == 0 &&
               json_array_append_new(b, json_real(finite_lp(lp->tok[i].logprob))) == 0 && json_array_append_new(c, alts) == 0 &&
               json_array_append_new(d, json_integer((json_int_t)lp->text_offset[i])) == 0;
    }
    json_t *v = !good ? NULL
                : ep == SRV_CHAT ? json_pack("{s:O}", "content", a)
                                 : json_pack("{s:O, s:O, s:O, s:O}", "tokens", a, "token_logprobs", b, "top_logprobs", c,
                                             "text_offset", d);
    json_decref(a), json_decref(b), json_decref(c), json_decref(d);
    return v;
}

static json_t *usage_value(const struct srv_usage *u)
{
    return json_pack("{s:I, s:I, s:I, s:{s:I}}", "prompt_tokens", (json_int_t)u->prompt_tokens, "completion_tokens",
                     (json_int_t)u->completion_tokens, "total_tokens",
                     (json_int_t)(u->prompt_tokens + u->completion_tokens), "prompt_tokens_details", "cached_tokens",
                     (json_int_t)u->cached_tokens);
}

/* The fields every response and chunk starts with. */
static json_t *envelope(const char *id, const char *object, int64_t created, const char *model)
{
    return json_pack("{s:o, s:s, s:I, s:o}", "id", cstr_value(id), "object", object, "created", (json_int_t)created,
                     "model", cstr_value(model));
}

char *srv_response_body(enum srv_endpoint ep, const char *id, const char *model, int64_t created,
                        const struct srv_answer *a)
{
    json_t *choice;
    if (ep == SRV_CHAT) {
        json_t *msg = json_pack("{s:s, s:o}", "role", "assistant", "content", text_value(a->text, a->text_len));
        if (msg && a->reasoning && json_object_set_new(msg, "reasoning_content",
                                                       text_value(a->reasoning, a->reasoning_len)) != 0)
            json_decref(msg), msg = NULL;
        choice = json_pack("{s:i, s:o, s:o, s:s}", "index", 0, "message", msg, "logprobs",
                           logprobs_value(ep, a->logprobs), "finish_reason", srv_finish_reason(a->stop));
    } else {
        choice = json_pack("{s:i, s:o, s:o, s:s}", "index", 0, "text", text_value(a->text, a->text_len), "logprobs",
                           logprobs_value(ep, a->logprobs), "finish_reason", srv_finish_reason(a->stop));
    }
    json_t *root = envelope(id, ep == SRV_CHAT ? "chat.completion" : "text_completion", created, model);
    if (root && (json_object_set_new(root, "choices", json_pack("[o]", choice)) != 0 ||
                 json_object_set_new(root, "usage", usage_value(&a->usage)) != 0))
        json_decref(root), root = NULL;
    return dump(root);
}

static json_t *chunk_choice(enum srv_endpoint ep, const struct srv_delta *d)
{
    json_t *finish = d->finish ? json_string(srv_finish_reason(*d->finish)) : json_null();
    if (ep == SRV_COMPLETION)
        return json_pack("{s:i, s:o, s:o, s:o}", "index", 0, "text", text_value(d->content ? d->content : "",
                                                                                 d->content ? d->content_len : 0),
                         "logprobs", logprobs_value(ep, d->logprobs), "finish_reason", finish);
    json_t *delta = json_object();
    if (delta && ((d->first && json_object_set_new(delta, "role", json_string("assistant")) != 0) ||
                  (d->content && json_object_set_new(delta, "content", text_value(d->content, d->content_len)) != 0) ||
                  (d->reasoning &&
                   json_object_set_new(delta, "reasoning_content", text_value(d->reasoning, d->reasoning_len)) != 0)))
        json_decref(delta), delta = NULL;
    return json_pack("{s:i, s:o, s:o, s:o}", "index", 0, "delta", delta, "logprobs", logprobs_value(ep, d->logprobs),
                     "finish_reason", finish);
}

char *srv_chunk_event(enum srv_endpoint ep, const char *id, const char *model, int64_t created,
                      const struct srv_delta *d)
{
    json_t *root = envelope(id, ep == SRV_CHAT ? "chat.completion.chunk" : "text_completion", created, model);
    /* the usage chunk (stream_options.include_usage) has no choices */
    json_t *choices = d->usage ? json_array() : json_pack("[o]", chunk_choice(ep, d));
    if (root && (json_object_set_new(root, "choices", choices) != 0 ||
                 (d->usage && json_object_set_new(root, "usage", usage_value(d->usage)) != 0)))
        json_decref(root), root = NULL;
    char *json = dump(root), *event = NULL;
    if (json && asprintf(&event, "data: %s\n\n", json) < 0)
        event = NULL;
    free(json);
    return event;
}

char *srv_models_body(const char *id, int64_t created, bool has_vision, int64_t n_ctx)
{
    json_t *modalities = has_vision ? json_pack("[s, s, s]", "text", "image", "video") : json_pack("[s]", "text");
    return dump(json_pack("{s:s, s:[{s:o, s:s, s:I, s:s, s:{s:I}, s:o}]}", "object", "list", "data", "id",
                          cstr_value(id), "object", "model", "created", (json_int_t)created, "owned_by", "seer", "meta",
                          "n_ctx", (json_int_t)n_ctx, "input_modalities", modalities));
}
