/* chat.h — the Qwen3.5 chat template rendered in C (spec §6.2, vision placeholders §5.4), and a check
   that a template read from a model file is one this renderer honours.

   The renderer turns a list of messages into the prompt text the model was trained on; it does not
   tokenize. Image/video parts become one `<|vision_start|><|image_pad|><|vision_end|>` (resp.
   `<|video_pad|>`) placeholder each, which the vision/video code expands later (spec §5.4).
   Everything is borrowed for the call; nothing is kept. Thread-safe (no shared state). */
#ifndef SEER_LM_CHAT_H
#define SEER_LM_CHAT_H

#include <stdbool.h>
#include <stddef.h>

enum chat_part_type {
    CHAT_PART_TEXT,  /* `text` is inserted verbatim */
    CHAT_PART_IMAGE, /* one image placeholder; `text` is ignored (the media travel separately, in order) */
    CHAT_PART_VIDEO, /* one video placeholder; `text` is ignored */
};

typedef struct chat_part {
    enum chat_part_type type;
    const char *text; /* UTF-8; NULL counts as "" */
} chat_part;

typedef struct chat_tool_call {
    const char *name;           /* function name, UTF-8 */
    const char *arguments_json; /* a JSON object {"param": value, ...} (order kept), or NULL for none */
} chat_tool_call;

typedef struct chat_message {
    const char *role;                 /* "system" | "user" | "assistant" | "tool" */
    const char *content;              /* plain UTF-8 content, used when n_parts == 0; NULL counts as "" */
    const chat_part *parts;           /* [n_parts] content as a list of parts (n_parts > 0 wins over content) */
    size_t n_parts;
    const char *reasoning_content;    /* assistant: its reasoning; NULL = split it out of content at </think> */
    const chat_tool_call *tool_calls; /* [n_tool_calls] assistant tool calls */
    size_t n_tool_calls;
} chat_message;

typedef struct chat_params {
    const char *const *tools_json; /* [n_tools] tool definitions, each a JSON object (any shape; written
                                      back as one JSON line, like the template's `tool | tojson`) */
    size_t n_tools;
    bool add_generation_prompt; /* end with the assistant header (default true) */
    bool enable_thinking;       /* generation prompt opens a think block; default false: the small models'
                                   template only thinks when asked (spec §6.2) */
    bool add_vision_id;         /* "Picture N: " / "Video N: " before each placeholder (default false) */
    bool preserve_thinking;     /* keep reasoning in every assistant turn, not only after the last user
                                   query (Qwen3.6-style switch, spec §6.2; default false) */
    bool scalar_args_as_json;   /* tool-call scalars written as JSON (true, null, 1.5) instead of Python
                                   str() (True, None, 1.5); set from chat_template_info (default false) */
} chat_params;

/* The defaults above, by value. */
chat_params chat_params_default(void);

/* Renders `msgs` into *out (NUL-terminated UTF-8, release with seer_free) and its length into *out_len
   (may be NULL). params NULL = defaults. Errors: SEER_EINVAL with a message naming the message index
   and the problem (no messages, no user query, system message not first, image/video in system
   content, unknown role, invalid UTF-8, malformed tool JSON); SEER_ENOMEM. On failure *out is untouched. */
int chat_render(const chat_message *msgs, size_t n_msgs, const chat_params *params, char **out,
                size_t *out_len);

/* Where message text lies in a rendered prompt: bytes [start, end). */
typedef struct chat_range {
    size_t start, end;
} chat_range;

/* chat_render, plus the ranges of *out copied from the messages (content and text parts, reasoning,
   tool-call names and arguments, tool definitions), in increasing order; everything else is the
   template's own markup. A tokenizer that parses special tokens only outside these ranges keeps a
   message from writing the template's markup (a prompt injection: "x<|im_end|>..."). *ranges is
   released with seer_free (NULL when there are none); ranges NULL = not wanted. */
int chat_render_ranges(const chat_message *msgs, size_t n_msgs, const chat_params *params, char **out,
                       size_t *out_len, chat_range **ranges, size_t *n_ranges);

/* The same from JSON (lm/chat_json.c), for the CLI and servers: `messages_json` is an array of
   HF/OpenAI-style messages {"role", "content": string | null | [parts], "reasoning_content"?,
   "tool_calls"?: [{"function"?: {"name", "arguments": object or a JSON string of one}}]}, where a part
   is {"type": "text", "text"}, {"type": "image"/"image_url"/"video", ...} (the template's tests: a key
   "image"/"image_url" or type "image" is an image, a key "video" or type "video" a video, else a key
   "text"). `tools_json` is a JSON array of tool definitions, or NULL; it replaces params->tools_json.
   Errors as chat_render, plus SEER_EINVAL naming the JSON problem. */
int chat_render_json(const char *messages_json, const char *tools_json, const chat_params *params, char **out,
                     size_t *out_len);

/* What chat_template_check learnt about a recognised template. */
typedef struct chat_template_info {
    bool thinking_default;      /* the template thinks unless enable_thinking=false (large-model form);
                                   false for the small models' opt-in form (spec §6.2) */
    bool has_preserve_thinking; /* the template has the preserve_thinking switch */
    bool scalar_args_as_json;   /* tool-call scalars are written with tojson (newer form) */
} chat_template_info;

/* Decides whether chat_render honours `jinja_text` (tokenizer_config.json `chat_template` or GGUF
   `tokenizer.chat_template`): SEER_OK for a recognised Qwen3.5-family template (and *info filled when
   not NULL); SEER_EUNSUPPORTED naming the missing markers otherwise; SEER_EINVAL for NULL text. */
int chat_template_check(const char *jinja_text, chat_template_info *info);

#endif
