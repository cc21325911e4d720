/* request.h — the bodies `seer serve` reads and writes (docs/SERVING.md): OpenAI-compatible chat
   and completion requests read into plain structs, media references resolved to bytes or paths, and
   the response, streaming-chunk and error objects written back. Pure functions of their arguments:
   no model, no sockets, no global state, so tests/server/request.c and the fuzz target
   tests/fuzz/fuzz_request.c drive them directly. JSON through jansson; every input is hostile
   (sizes, depth and counts bounded by struct srv_limits before anything is allocated from them).

   Strings returned are malloc'ed and released with free(). Functions that can fail return 0, or -1
   after filling *err (status and OpenAI error type set, message one line naming the field). */
#ifndef SEER_SERVER_REQUEST_H
#define SEER_SERVER_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seer.h"

/* ---- errors ----------------------------------------------------------------------------------- */
/* OpenAI's error object ({"error": {"message", "type", "param", "code"}}) and the HTTP status that
   carries it: 400 malformed JSON or field, 401 key, 404 path or model, 413 body too large, 415
   media type not supported, 422 media that cannot be decoded, 429 queue full, 503 loading or
   stopping, 500 a bug. */
struct srv_error {
    int status;
    const char *type;   /* "invalid_request_error", "authentication_error", "not_found_error",
                           "rate_limit_error", "server_error" (static strings) */
    char param[96];     /* the field, as a path: "messages[2].content[0].image_url.url"; "" if none */
    char code[48];      /* e.g. "context_length_exceeded", "invalid_api_key"; "" if none */
    char message[512];
};
/* Fills *err (type from status: 401 authentication_error, 404 not_found_error, 429 rate_limit_error,
   5xx server_error, else invalid_request_error) and returns -1. param may be NULL. */
int srv_fail(struct srv_error *err, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* {"error": {...}} */
char *srv_error_body(const struct srv_error *err);

/* ---- requests --------------------------------------------------------------------------------- */
struct srv_limits {
    size_t max_depth;      /* JSON nesting (default 32): deeper bodies are 400 before building a tree */
    size_t max_messages;   /* default 1024 */
    size_t max_media;      /* images and videos in one request (default 64) */
    size_t max_stop;       /* stop strings (default 16) */
    size_t max_string;     /* bytes of one string value other than a data: URI (default 1 MiB) */
};
struct srv_limits srv_limits_default(void);

enum srv_endpoint { SRV_CHAT, SRV_COMPLETION };
enum srv_media_kind { SRV_IMAGE, SRV_VIDEO };

struct srv_media {
    enum srv_media_kind kind;
    char *url;             /* as given: "data:…", "file://…", "http(s)://…", or a bare path (Qwen's
                              {"type": "video", "video": "/path"}) */
    double fps;            /* video: frames sampled per second; 0 = the model's */
    int64_t min_frames, max_frames; /* video: 0 = the model's */
    int64_t max_tokens;    /* video token budget; 0 = none */
    char *param;           /* where it was in the body, for error messages ("messages[0].content[1]") */
};

struct srv_message {
    char *role;            /* "system", "user", "assistant" or "tool" */
    char *text;            /* the text parts joined in order ("" when none) */
    struct srv_media *media; /* images and videos in the order given (the template renders them
                                before the text: seer_chat_add_media) */
    size_t n_media;
};

struct srv_request {
    enum srv_endpoint endpoint;
    char *model;                       /* NULL when absent */
    struct srv_message *messages;      /* chat */
    size_t n_messages;
    char *prompt;                      /* completion: a string, or an array of exactly one string */
    seer_sampling sampling;            /* the defaults given to the parser, overridden by the body:
                                          temperature, top_p, top_k, min_p, presence_penalty,
                                          repetition_penalty (repeat_penalty), seed */
    int64_t max_tokens;                /* max_completion_tokens or max_tokens; -1 when absent */
    char **stop;                       /* "stop": a string or an array of strings */
    size_t n_stop;
    char *grammar;                     /* top-level "grammar" (llama.cpp): GBNF text */
    char *json_schema;                 /* response_format {"type": "json_object"} → "{}";
                                          {"type": "json_schema", "json_schema": {"schema": S}} (OpenAI)
                                          or {"type": "json_schema"|"json_object", "schema": S}
                                          (llama.cpp), or top-level "json_schema": S → S serialised */
    int think;                         /* chat_template_kwargs.enable_thinking: 1 or 0; -1 absent */
    int64_t thinking_budget;           /* "thinking_budget" (Qwen's API) or "reasoning_budget": the
                                          most reasoning tokens; 0 absent */
    bool stream;
    bool include_usage;                /* stream_options.include_usage */
    bool logprobs;                     /* chat: "logprobs": true; completion: "logprobs": N present */
    int top_logprobs;                  /* chat: "top_logprobs"; completion: N (0..SEER_TOP_LOGPROBS_MAX) */
};

/* Reads a request body. `defaults` is the sampling used for fields the body leaves out. Unknown
   fields are ignored as OpenAI's clients send many; known fields of the wrong type or range are
   400 naming them; "n" other than 1 and tools are 400 "not supported" (seer has no such feature,
   and silently ignoring them would answer a different question). A chat needs at least one message; a completion a prompt. */
int srv_parse_request(enum srv_endpoint ep, const char *body, size_t len, const seer_sampling *defaults,
                      const struct srv_limits *lim, struct srv_request *out, struct srv_error *err);
void srv_request_free(struct srv_request *r);

/* ---- media references ------------------------------------------------------------------------- */
/* A data: URI (RFC 2397) decoded: base64 or percent-encoded payload into *bytes (*n bytes), its
   media type into mime (lower case, "" when absent). 400 for a malformed URI or bad base64; 415
   for a media type that is neither image/… nor video/… nor application/octet-stream. max_bytes
   bounds the decoded size (413 past it). */
int srv_data_uri(const char *url, size_t max_bytes, uint8_t **bytes, size_t *n, char mime[64],
                 struct srv_error *err);
/* A file:// URL or a bare path, resolved (realpath) and accepted only inside `root` (itself
   resolved); *path is the resolved path. 400 when root is NULL ("start the server with
   --media-path"), the path escapes root (.., symlinks) or does not exist. param names the field. */
int srv_media_file(const char *root, const char *url, const char *param, char **path, struct srv_error *err);

/* ---- responses -------------------------------------------------------------------------------- */
struct srv_usage {
    int64_t prompt_tokens, completion_tokens, cached_tokens; /* cached: prompt tokens served from the cache */
};

/* One finished answer. reasoning NULL = none (no "reasoning_content" field). */
/* A reply's "logprobs": per generated token its bytes and log-probability, the n_top most probable
   alternatives of its step, and where its text begins in the answer (text_offset). */
struct srv_token_lp {
    char *bytes;
    size_t len;
    float logprob;
};
struct srv_logprobs {
    size_t n;
    int n_top;
    struct srv_token_lp *tok;          /* [n] */
    struct srv_token_lp *top;          /* [n * n_top] */
    size_t *text_offset;               /* [n] */
};
void srv_logprobs_free(struct srv_logprobs *lp);

struct srv_answer {
    const char *text;
    size_t text_len;
    const char *reasoning;
    size_t reasoning_len;
    enum seer_stop_reason stop;
    struct srv_usage usage;
    const struct srv_logprobs *logprobs; /* NULL: "logprobs": null */
};
/* "stop" (end of turn, stop string, cancelled), "length" (max_tokens, context full). */
const char *srv_finish_reason(enum seer_stop_reason stop);

/* The whole response object: "chat.completion" (choices[0].message with role, content and
   reasoning_content) or "text_completion" (choices[0].text); id, created, model, usage
   (prompt_tokens_details.cached_tokens). */
char *srv_response_body(enum srv_endpoint ep, const char *id, const char *model, int64_t created,
                        const struct srv_answer *a);

/* One server-sent event, "data: {…}\n\n", of a "chat.completion.chunk" or "text_completion" chunk:
   role "assistant" in the delta when first; content and/or reasoning_content when given (len
   bytes; NULL = absent); finish_reason when finish is non-NULL, with the whole reply's logprobs when
   given (they come with the last chunk); with usage non-NULL the usage chunk (choices [] , usage). */
struct srv_delta {
    bool first;
    const char *content;
    size_t content_len;
    const char *reasoning;
    size_t reasoning_len;
    const enum seer_stop_reason *finish;
    const struct srv_logprobs *logprobs;
    const struct srv_usage *usage;
};
char *srv_chunk_event(enum srv_endpoint ep, const char *id, const char *model, int64_t created,
                      const struct srv_delta *d);

/* GET /v1/models: {"object": "list", "data": [{"id", "object": "model", "created", "owned_by": "seer",
   "meta": {"n_ctx_train"…}, "input_modalities": ["text", "image", "video"] as has_vision}]} */
char *srv_models_body(const char *id, int64_t created, bool has_vision, int64_t n_ctx);

#endif
