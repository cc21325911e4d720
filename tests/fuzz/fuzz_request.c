/* fuzz_request.c — libFuzzer target: `seer serve`'s request layer (server/request.h), the first
   code that reads bytes from the network. The first byte picks the endpoint (bit 0) and whether the
   rest is also read as a data: URI (bit 1); the rest is the body. Checked: a refusal has a status
   and a message; an accepted request keeps within the limits, its schema is JSON and each data:
   URI in it decodes within its bound or is refused; the response, chunk and error bodies written
   from what was read (and from the raw bytes, which need not be UTF-8) are JSON that gives the text
   back. */
#include "fuzz_util.h"

#include <jansson.h>

#include "server/request.h"

#define MAX_MEDIA_BYTES 4096

static void check_data_uri(const char *url)
{
    uint8_t *bytes;
    size_t n;
    char mime[64];
    struct srv_error err = {0};
    if (srv_data_uri(url, MAX_MEDIA_BYTES, &bytes, &n, mime, &err) == 0) {
        if (n > MAX_MEDIA_BYTES || !n || strlen(mime) >= 64)
            abort();
        free(bytes);
    } else if (bytes || (err.status != 400 && err.status != 413 && err.status != 415) || !err.message[0]) {
        abort();
    }
}

/* A body written by the response layer: JSON (framed as an event when sse), whose text at
   choices[0].<field> is want (want_n bytes) when want is valid UTF-8 as read from a request. */
static void check_body(char *s, bool sse, const char *field, const char *want, size_t want_n)
{
    if (!s)
        abort(); /* only out of memory may fail */
    size_t n = strlen(s);
    if (sse && (n < 8 || strncmp(s, "data: ", 6) != 0 || strcmp(s + n - 2, "\n\n") != 0))
        abort();
    json_t *v = sse ? json_loadb(s + 6, n - 8, JSON_ALLOW_NUL, NULL) : json_loadb(s, n, JSON_ALLOW_NUL, NULL);
    if (!v)
        abort();
    if (field) {
        json_t *c = json_array_get(json_object_get(v, "choices"), 0), *t = json_object_get(c, field);
        if (!strcmp(field, "message") || !strcmp(field, "delta"))
            t = json_object_get(t, "content");
        if (want && (!json_is_string(t) || json_string_length(t) != want_n || memcmp(json_string_value(t), want, want_n)))
            abort();
        if (!want && !json_is_string(t))
            abort();
    }
    json_decref(v);
    free(s);
}

static void check_request(const struct srv_request *r, const struct srv_limits *lim, enum srv_endpoint ep)
{
    size_t media = 0;
    for (size_t i = 0; i < r->n_messages; i++) {
        const struct srv_message *m = &r->messages[i];
        if (!m->role || !m->text)
            abort();
        for (size_t j = 0; j < m->n_media; j++) {
            const struct srv_media *d = &m->media[j];
            if (!d->url[0] || !d->param || d->fps < 0 || (d->min_frames && d->max_frames && d->min_frames > d->max_frames))
                abort();
            if (!strncmp(d->url, "data:", 5))
                check_data_uri(d->url);
        }
        media += m->n_media;
    }
    if (r->n_messages > lim->max_messages || media > lim->max_media || r->n_stop > lim->max_stop ||
        (ep == SRV_CHAT ? !r->n_messages : !r->prompt) || (r->grammar && r->json_schema))
        abort();
    if (r->json_schema) {
        json_t *s = json_loads(r->json_schema, JSON_DECODE_ANY, NULL);
        if (!s)
            abort();
        json_decref(s);
    }
    const char *text = ep == SRV_CHAT ? r->messages[r->n_messages - 1].text : r->prompt;
    struct srv_answer a = {.text = text, .text_len = strlen(text), .reasoning = r->model,
                           .reasoning_len = r->model ? strlen(r->model) : 0, .stop = (enum seer_stop_reason)(r->n_stop % 5)};
    check_body(srv_response_body(ep, "id", r->model, 1, &a), false, ep == SRV_CHAT ? "message" : "text", a.text,
               a.text_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    if (!size)
        return 0;
    enum srv_endpoint ep = data[0] & 1 ? SRV_COMPLETION : SRV_CHAT;
    const char *body = (const char *)data + 1;
    size_t n = size - 1;
    struct srv_limits lim = srv_limits_default();
    lim.max_string = 1 << 16; /* reachable by the fuzzer's inputs */
    struct srv_request r;
    struct srv_error err = {0};
    if (srv_parse_request(ep, body, n, NULL, &lim, &r, &err) == 0) {
        check_request(&r, &lim, ep);
        srv_request_free(&r);
    } else if (err.status < 400 || err.status > 599 || !err.message[0] || !err.type) {
        abort();
    } else {
        check_body(srv_error_body(&err), false, NULL, NULL, 0);
    }
    if (data[0] & 2) {
        char *url = fz_strndup(data + 1, n);
        check_data_uri(url);
        free(url);
    }
    /* raw bytes as model output: any bytes make a valid event */
    enum seer_stop_reason stop = (enum seer_stop_reason)(data[0] >> 2) % 5;
    struct srv_delta d = {.first = data[0] & 4, .content = body, .content_len = n, .finish = data[0] & 8 ? &stop : NULL};
    check_body(srv_chunk_event(ep, "id", "m", 1, &d), true, ep == SRV_CHAT ? "delta" : "text", NULL, 0);
    return 0;
}
