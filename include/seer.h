/* seer.h — public C API of libseer: local Qwen3.5 multimodal inference on CPU and Vulkan.

   USAGE
     #include <seer.h>      link with `pkg-config --libs seer`
     Every fallible function returns an int status: SEER_OK (0) or a negative SEER_E* code.
     After a failure, seer_last_error() gives the calling thread's detailed message (file, key,
     offset, expected vs found); seer_strerror(code) gives the fixed text of a code.

   THREADING
     The error message is per thread. The log callback may be called from any thread and must be
     thread-safe. Contexts, batches and opened videos are not thread-safe: use each from one thread
     at a time. A model may be shared: contexts of one model may run on several threads at once
     (tests/api/threads.c). Their work on the model's device takes turns, one forward pass or frame
     pair at a time (decoding files, preprocessing and tokenizing run side by side), so threads
     share a device rather than speed it up (seer_batch serves several replies in one pass);
     on_progress, called between a prompt's micro-batches, does not hold the device: other
     threads' forward passes (a server's decode steps) run between two micro-batches. The one
     thing a model changes after loading is its vision tower, whose weights are loaded by the first
     image or video that needs them (a text-only run never reads them), under a lock in the model.
     Progress and timings travel with each call (seer_generate_params' callbacks, seer_result). The
     only process-wide state is set once or by you: the log level and callback; the CPU features,
     detected on first use, and seer_system_info's text made from them once; FFmpeg's and Poppler's
     log hooks, installed once (their messages are kept per thread); and the table of mapped model
     files that seer_fault_describe reads (locked). Beyond these, only the tests' fault injectors
     (seer_alloc_fail_after, io_fail_after, gguf_writer_fail_after, io_copy_on_load_always,
     device_set_test_hooks: internal, never set by the library or the command) are process-wide.

   OWNERSHIP
     Whoever creates an object frees it with the matching _free; _free(NULL) does nothing.
     Inputs are borrowed for the duration of the call. A returned const char * stays valid until
     the next call on the same handle, or until the handle is freed. On failure, out-parameters
     are left untouched and no half-built object escapes.

   This header only grows: fields are appended to params structs, never reordered. */
#ifndef SEER_H
#define SEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SEER_BUILDING_LIB)
#define SEER_API __attribute__((visibility("default")))
#else
#define SEER_API
#endif

/* ---- errors ------------------------------------------------------------------------------ */
enum {
    SEER_OK = 0,
    SEER_EINVAL = -1,        /* invalid argument from the caller */
    SEER_ENOMEM = -2,        /* out of memory (host or device) */
    SEER_EIO = -3,           /* a file could not be opened, read, mapped or written */
    SEER_EFORMAT = -4,       /* a file is malformed, truncated or inconsistent */
    SEER_EUNSUPPORTED = -5,  /* valid input that seer does not support (dtype, architecture, op) */
    SEER_EDEVICE = -6,       /* the compute device failed (a VkResult, a lost device) */
    SEER_EDECODE = -7,       /* an image or video could not be decoded */
    SEER_ECANCELED = -8,     /* the operation was cancelled by the caller */
};

/* Fixed English text for a status code; never NULL. */
SEER_API const char *seer_strerror(int code);
/* The calling thread's message for its most recent failure ("" when none). */
SEER_API const char *seer_last_error(void);

/* ---- logging ----------------------------------------------------------------------------- */
typedef enum seer_log_level {
    SEER_LOG_QUIET = -1,  /* as a threshold: print nothing */
    SEER_LOG_ERROR = 0,
    SEER_LOG_WARN = 1,
    SEER_LOG_INFO = 2,
    SEER_LOG_DEBUG = 3,
    SEER_LOG_TRACE = 4,
} seer_log_level;

/* Receives one complete line (no trailing newline) tagged with its component ("gguf", "vulkan").
   Must be thread-safe. */
typedef void (*seer_log_fn)(seer_log_level level, const char *component, const char *msg,
                            void *user_data);

/* Messages at or below `level` are delivered; the default is SEER_LOG_WARN. */
SEER_API void seer_set_log_level(seer_log_level level);
/* NULL restores the default, which writes to stderr (never stdout). */
SEER_API void seer_set_log_callback(seer_log_fn fn, void *user_data);

/* ---- version ----------------------------------------------------------------------------- */
SEER_API const char *seer_version(void);

/* ---- models ------------------------------------------------------------------------------ */
/* A loaded Qwen3.5 model: weights on a compute device plus its tokenizer and chat template.
   Read-only after loading (but for its vision tower, loaded on first use: THREADING); contexts made
   from it must be freed before it. */
typedef struct seer_model seer_model;

typedef struct seer_model_params {
    const char *device; /* "auto" (default): a discrete GPU, else an integrated one, else the CPU;
                           "cpu"; "vulkan" (the auto-chosen Vulkan device) or "vulkan:N" */
    int n_threads;      /* CPU threads; 0 (default) = one per online core */
    const char *mmproj; /* the vision projector GGUF of a GGUF text model; NULL (default): a single
                           mmproj*.gguf beside the text model, if any; an HF directory needs none */
    int64_t image_min_tokens, image_max_tokens; /* per-image token window; 0 (default) = the model's
                           preprocessor_config.json, else HF's 65536..16777216 pixels (64..16384 tokens) */
    int64_t max_image_pixels; /* decoded images larger than this are refused before their pixels are
                           allocated; 0 (default) = 178956970 (PIL's decompression-bomb limit) */
    double pdf_dpi;     /* PDF pages are rasterised at this resolution; 0 (default) = 200 */
    const char *resize; /* the bicubic resize of images and video frames: "torchvision" (default, also
                           NULL) = transformers' default (fast) processor, bit for bit; "pillow" =
                           its PIL backend (Image.resize); they differ by a level or two at some
                           pixels (docs/MODEL.md §5.2) */
    int exact;          /* CPU: 1 = every matmul keeps f32 activations (the path the reference tests
                           check); 0 (default) = with quantised weights, activations are rounded to 8
                           bits per 32 values and multiplied in integers, as llama.cpp does (faster
                           decode; logits differ slightly from the exact ones), and where the CPU has
                           AVX512-BF16 the vision tower's products and attention take bf16 operands
                           (about 1.4x faster; bf16 is the precision the reference runs the models
                           in). Vulkan: 0 lets decode do the same, or multiply in f16, where the GPU
                           accelerates it */
    const char *weights; /* CPU: "map" = weights are read in place from the mapped model file
                           (starts at once, shares the page cache with other processes); "copy" =
                           copied into memory in 2 MiB pages (Q8_0 decode about 15 % faster);
                           "auto" (default, also NULL) = copied while they fit in half of the
                           available memory, the rest mapped */
    int vocab_only;     /* 1 = load only what describes the model (configs, tokenizer, chat template,
                           image and video preprocessing settings) and no weights, as llama.cpp's
                           vocab_only: tokenize, measure images and videos, count a prompt's tokens
                           (seer --dry-run, seer tokenize) in milliseconds and no device memory.
                           Generating on it fails with SEER_EINVAL. A tokenizer alone (a .json file,
                           or a directory with tokenizer.json and no config.json) loads too: it only
                           tokenizes (seer_tokenize, seer_detokenize, seer_token_piece); measuring
                           and contexts fail with SEER_EINVAL "PATH: only a tokenizer". 0 (default)
                           = the whole model */
} seer_model_params;

SEER_API seer_model_params seer_model_params_default(void);
/* Loads a GGUF text model or a Hugging Face model directory (config.json + safetensors +
   tokenizer.json). NULL params = defaults. */
SEER_API int seer_model_load(const char *path, const seer_model_params *params, seer_model **out);
SEER_API void seer_model_free(seer_model *model);
/* "cpu (4 threads)", "vulkan: NVIDIA …": where the model runs. */
SEER_API const char *seer_model_device(const seer_model *model);

/* Text → token ids (*ids released with seer_free). parse_special: special tokens written in the
   text (<|im_start|>) become their ids; otherwise they are plain text. */
SEER_API int seer_tokenize(const seer_model *model, const char *text, size_t len, int parse_special,
                           int32_t **ids, size_t *n_ids);
/* Token ids → UTF-8 text (*text released with seer_free). */
SEER_API int seer_detokenize(const seer_model *model, const int32_t *ids, size_t n_ids, char **text,
                             size_t *len);

/* ---- contexts: one conversation each ------------------------------------------------------ */
typedef struct seer_context seer_context;

typedef struct seer_context_params {
    int64_t n_ctx;   /* tokens the conversation may hold (default 4096); 0 = the model's trained
                        context, lowered to what the device's free memory holds */
    int64_t n_batch; /* prompt tokens per forward micro-batch (default 512) */
    const char *cache_type; /* KV cache element type: "f16" (default, also NULL), "f32" or "q8_0"
                               (34 bytes per 32 values, ~0.4 % rounding; llama.cpp's q8_0 cache) */
} seer_context_params;

SEER_API seer_context_params seer_context_params_default(void);
SEER_API int seer_context_create(seer_model *model, const seer_context_params *params, seer_context **out);
SEER_API void seer_context_free(seer_context *ctx);
/* Forgets the conversation (history and state). */
SEER_API int seer_context_reset(seer_context *ctx);

/* ---- generation -------------------------------------------------------------------------- */
/* Defaults are the model card's for the small models' default (non-thinking) mode (spec §10.4):
   temperature 1.0, top_k 20, top_p 1.0, presence_penalty 2.0 — the card warns that greedy decoding
   falls into repetition loops. */
typedef struct seer_sampling {
    float temperature;       /* 0 = greedy (default 1.0) */
    int32_t top_k;           /* 0 = off (default 20) */
    float top_p;             /* 1 = off (default 1.0) */
    float min_p;             /* 0 = off (default 0) */
    float repeat_penalty;    /* 1 = off (default 1) */
    float presence_penalty;  /* 0 = off (default 2.0); counts generated tokens only */
    float frequency_penalty; /* 0 = off (default 0): this times a token's count in the reply taken
                                off its logit (OpenAI's); with presence_penalty, after
                                repeat_penalty */
    uint64_t seed;           /* same seed, same device → same output (default 0) */
} seer_sampling;

/* Streaming callback: `text` is complete UTF-8 (never half a character). Return non-zero to stop
   (the generation then ends with SEER_STOP_CANCELED, not an error). */
typedef int (*seer_text_fn)(const char *text, size_t len, void *user_data);

enum seer_stop_reason {
    SEER_STOP_EOS = 0,     /* the model ended its turn (<|im_end|> or <|endoftext|>) */
    SEER_STOP_LENGTH = 1,  /* max_tokens reached */
    SEER_STOP_STRING = 2,  /* a stop string appeared (it is not part of the text) */
    SEER_STOP_CONTEXT = 3, /* the context is full */
    SEER_STOP_CANCELED = 4 /* the callback asked to stop */
};

typedef struct seer_generate_params {
    seer_sampling sampling;
    int64_t max_tokens;      /* default 1024; -1 = until the end of the turn or of the context */
    const char *const *stop; /* [n_stop] extra stop strings */
    size_t n_stop;
    int think;               /* 1 = open a reasoning block before answering, 0 = the closed empty block
                                (answer at once), -1 (default) = the model's chat template default (the
                                small models' template does not think unless asked, spec §6.2) */
    int show_thinking;       /* stream/return the reasoning too (default 0: only the answer) */
    seer_text_fn on_text;    /* optional streaming callback */
    void *user_data;
    /* optional: called after each prompt micro-batch (prompt_done of prompt_total tokens fed,
       generated 0) and after each generated token (prompt_done == prompt_total). Non-zero stops
       the generation (SEER_STOP_CANCELED): a stop inside the prompt sets result->prompt_cut, and
       seer_chat_generate then forgets the state and the unanswered message (the next call feeds the
       conversation again). Gets user_data. */
    int (*on_progress)(int64_t prompt_done, int64_t prompt_total, int64_t generated, void *user_data);
    /* optional structured output, enforced token by token whatever the model prefers (at most one
       of the two): a llama.cpp GBNF grammar's text, or a JSON schema's text (json_schema "{}" is
       any JSON value). With think, the constraint starts after </think>. The turn ends as soon as
       the output is complete; a stop by max_tokens or the context leaves it incomplete. A grammar
       or schema that cannot be enforced fails with SEER_EINVAL / SEER_EUNSUPPORTED. */
    const char *grammar;
    const char *json_schema;
    /* optional: called after each frame pair of a video in the prompt is encoded (a prompt's videos
       are encoded before it is fed, so this comes before on_progress): the video's path, pairs done
       of its pairs. Non-zero stops the call, which fails with SEER_ECANCELED (the context is as after
       any failed call). Called on the generating thread; gets user_data. */
    int (*on_video_progress)(const char *path, int64_t pairs_done, int64_t pairs, void *user_data);
    /* optional: the reasoning of a think block as it is generated (complete UTF-8, the whitespace
       after <think> dropped), apart from the answer and whether or not show_thinking; e.g. a
       server's "reasoning_content" deltas. Non-zero stops (SEER_STOP_CANCELED). Gets user_data. */
    seer_text_fn on_thinking;
    /* with think: the most reasoning tokens; once spent, the block is closed as the template
       closes it ("\n</think>\n\n", those ids forced) and the answer follows. 0 (default) = no
       limit (llama.cpp's --reasoning-budget, Qwen's API thinking_budget) */
    int64_t thinking_budget;
    /* non-zero: fill seer_result.logprobs and text_ends (one log-softmax over the vocabulary per
       token). Default 0. */
    int logprobs;
    /* with logprobs: also the top_logprobs most probable tokens of each step (0..SEER_TOP_LOGPROBS_MAX,
       OpenAI's top_logprobs), into seer_result.top_ids / top_logprobs. Default 0. */
    int top_logprobs;
} seer_generate_params;

#define SEER_TOP_LOGPROBS_MAX 20

SEER_API seer_generate_params seer_generate_params_default(void);

typedef struct seer_result {
    char *text;               /* the answer (reasoning removed unless show_thinking) */
    int32_t *tokens;          /* every generated id, in order (stop token excluded) */
    size_t n_tokens;
    int64_t prompt_tokens;    /* tokens fed to the model for this call */
    double prefill_seconds, decode_seconds;
    enum seer_stop_reason stop;
    double vision_seconds;    /* preprocessing and encoding this call's images (part of prefill) */
    char *thinking;           /* the reasoning of a think block (without <think> tags, trimmed); "" when none */
    int reasoning_cut;        /* the token limit or the context ended the reasoning: no answer was given */
    int prompt_cut;           /* on_progress stopped the prompt before it was all fed */
    size_t text_len;          /* bytes of text and of thinking: a model may write U+0000, which the */
    size_t thinking_len;      /*   NUL-terminated strings alone would cut short */
    /* where this call's videos went (all of them together; part of vision_seconds): */
    double video_demux_seconds;    /* opening files and reading their containers (0 for a seer_video) */
    double video_decode_seconds;   /* decoding the sampled frames, keyframe seeks included */
    double video_resize_seconds;   /* converting them to RGB and resizing */
    double video_patchify_seconds; /* normalising them into patch rows */
    double video_encode_seconds;   /* the vision tower */
    int64_t video_frames;          /* frames sampled */
    int64_t video_pairs;           /* their pairs: one timestamp and one run of tokens each */
    int64_t video_frames_decoded;  /* frames the decoder produced to reach them */
    int64_t video_seeks;           /* seeks it made */
    int64_t video_tokens;          /* video tokens fed */
    /* with seer_generate_params.logprobs (else NULL), one entry per generated token (n_tokens):
       logprobs[i], the natural log of token i's probability under the model's distribution
       (softmax of the raw logits over the tokenizer's tokens, the padding rows past it left out,
       before temperature, penalties, top-k/p or a grammar), and
       text_ends[i], the bytes of `text` once token i is in (a token outside the answer, such as
       reasoning, adds none), so token i wrote text[text_ends[i-1] .. text_ends[i]) (seer_ocr_parse
       turns them into word confidences). */
    float *logprobs;
    size_t *text_ends;
    /* with seer_generate_params.top_logprobs = n_top > 0 (else NULL and 0): for token i, the n_top
       most probable ids of that step, most probable first (a tie: the lower id), and their
       log-probabilities as logprobs', at top_ids[i * n_top ...] and top_logprobs[i * n_top ...] */
    int n_top;
    int32_t *top_ids;
    float *top_logprobs;
} seer_result;

/* Releases what a result holds and zeroes it; NULL is fine. */
SEER_API void seer_result_clear(seer_result *result);

/* Appends a message ("system", "user", "assistant" or "tool") to the conversation. The content is
   text: special tokens written in it (<|im_end|>, <|im_start|>, <|image_pad|>) are tokenized as the
   characters they are, never as the template's markup, so a message cannot close its turn or open
   another (seer_generate_text is the way to write them); the non-special added tokens (<think>,
   <tool_call>) are vocabulary and become their ids, as in Hugging Face's apply_chat_template. */
SEER_API int seer_chat_add(seer_context *ctx, const char *role, const char *content);
/* Renders the conversation with the chat template exactly as Hugging Face's apply_chat_template
   does, feeds only what the context has not seen yet, generates the assistant's reply and appends
   it to the history. Earlier turns are never re-processed, except the last reply: the template
   drops its reasoning (and the empty think block) once a user message follows it, so the next turn
   goes back to where that reply began (a copy of the state kept there: the recurrent state, not the
   KV cache) and feeds it again as rendered, then the new message. prompt_tokens counts both. On
   failure the result is zeroed. */
SEER_API int seer_chat_generate(seer_context *ctx, const seer_generate_params *params, seer_result *result);
/* Continues the context with raw text (no chat template; special tokens in it are parsed). */
SEER_API int seer_generate_text(seer_context *ctx, const char *prompt, const seer_generate_params *params,
                                seer_result *result);
/* Continues the context with token ids. */
SEER_API int seer_generate_tokens(seer_context *ctx, const int32_t *ids, size_t n_ids,
                                  const seer_generate_params *params, seer_result *result);

/* ---- several replies at once --------------------------------------------------------------- */
/* Decoding is bound by reading the weights, so one pass over them can serve several contexts. A
   batch holds replies of different contexts of one model; each seer_batch_step decodes one token of
   every reply in it in one pass. A prompt with images or videos is fed when its reply is added;
   a text prompt (for a chat, the messages the context has not seen and the assistant's opening)
   is fed by the steps, in the same passes as the other replies' tokens, up to 128 prompt rows a
   step (512 when no reply is decoding), so several prompts share a pass and a long one delays the
   replies beside it by a step, not by the whole prompt. A step carries one whole micro-batch of a
   prompt (its context's n_batch rows, or the rest), as the prompt passes through the model alone;
   only a micro-batch larger than the step's room (an n_batch above 128 beside decoding replies,
   such as the default 512) is cut at the room. Replies join and leave as they start and end. Each
   reply is the one seer_chat_generate (or seer_generate_text) would give its context alone: the
   same sampler, stop rules, grammar and callbacks, and — greedy — the same tokens, except that a
   prompt cut at a step's room is rounded differently, so its reply may part from the one alone
   where two tokens nearly tie. Each context keeps its own KV cache and state, so memory grows
   with the number of contexts, not with the batch. A loop:

       for each of the first N jobs: set up its context, seer_batch_add_chat(b, ctx, &params)
       while (seer_batch_active(b) > 0) {
           seer_batch_step(b);
           while (seer_batch_take(b, &ctx, &result, &status)) { use it; add the next job on ctx }
       }
   The handles are not thread-safe: one thread drives the batch and its contexts. */
typedef struct seer_batch seer_batch;

#define SEER_BATCH_MAX 64

/* A batch of at most max_replies (1..SEER_BATCH_MAX) replies, counting finished ones not yet taken. */
SEER_API int seer_batch_create(seer_model *model, int max_replies, seer_batch **out);
/* Replies still generating end as cancelled (a chat's history keeps what they generated); results
   not taken are released. */
SEER_API void seer_batch_free(seer_batch *batch);
/* How many replies at once suit this model's device: the contexts' states (params as for
   seer_context_create, NULL = defaults) must fit in half the free memory, and the CPU gains little
   past 4 rows per weight pass, 8 where its matrices took a several-row layout (docs/PERFORMANCE.md);
   at least 1. */
SEER_API int seer_batch_size_default(const seer_model *model, const seer_context_params *params);
/* Begins ctx's reply as seer_chat_generate would and adds it to the batch: renders the
   conversation; messages the context has not seen that hold images or videos are fed here, up to
   the turn point; a text prompt (text messages and the assistant's opening) is left to the steps,
   which keep the turn point on the way (seer_context_save_turn works once the prompt is in, and
   after the reply). `params` (NULL = defaults) is copied, but what it points to
   (stop strings, grammar, callbacks, user_data) must stay valid until the reply is taken. A context
   may have one reply in the batch. On failure nothing is added and the context is as a failed
   seer_chat_generate leaves it. A reply whose on_progress cancels its prompt finishes then (here,
   or in the step that fed part of it), cut short (prompt_cut). */
SEER_API int seer_batch_add_chat(seer_batch *batch, seer_context *ctx, const seer_generate_params *params);
/* The same for a raw continuation, as seer_generate_text. */
SEER_API int seer_batch_add_text(seer_batch *batch, seer_context *ctx, const char *prompt,
                                 const seer_generate_params *params);
/* One token for every generating reply, and the next part of the prompts still to feed, in one pass
   over the weights. A reply that ends (end of turn,
   stop string, max_tokens, callback, full context, or its own error) waits for seer_batch_take.
   A device failure ends every reply of the step with that error, and is returned; those contexts'
   states are then undefined (seer_context_reset them). */
SEER_API int seer_batch_step(seer_batch *batch);
/* Replies still generating. */
SEER_API int seer_batch_active(const seer_batch *batch);
/* Prompt tokens the replies in the batch have yet to feed (the next steps feed them). */
SEER_API int64_t seer_batch_prompt_left(const seer_batch *batch);
/* The oldest finished reply: its context, its result (owned by the caller: seer_result_clear) and its
   status: SEER_OK, or the error that ended it (the result is then zeroed, and seer_last_error() gives
   its message until the next failing call). Returns 1, or 0 when no reply has finished. */
SEER_API int seer_batch_take(seer_batch *batch, seer_context **ctx, seer_result *result, int *status);

/* ---- snapshots and partial feeding --------------------------------------------------------- */
/* A server that answers many conversations sharing their beginnings (a system prompt, earlier turns,
   the same image) feeds a shared part once, saves the context, and restores it for each request that
   continues it (prefix caching); a C program saves a conversation and picks it up later. */
enum seer_feed { SEER_FEED_MESSAGES = 0, SEER_FEED_MEDIA = 1, SEER_FEED_REPLY = 2 };
/* Feeds the conversation so far without generating: SEER_FEED_MESSAGES every message (as
   seer_chat_generate would feed them, without the assistant's opening); SEER_FEED_MEDIA stops after
   the last message's last image or video (its text and end not fed; with no media in the last
   message, the same as feeding all but the last message: the chat template wants a user message, so
   a system prompt alone is fed this way, before the first question). The next seer_chat_generate /
   seer_batch_add_chat feeds only the rest, and gives what it gives without the feed. params (NULL =
   defaults; think as the generation will use it): on_progress / on_video_progress / user_data are
   called as in generation (non-zero cancels: SEER_ECANCELED, nothing of the unfed part kept: the
   context is as before the call); *n_fed (may be NULL) gets the tokens fed.
   SEER_FEED_REPLY feeds everything the next reply needs before its first token: the messages, then
   the assistant's opening, in one pass when the messages left to feed are text (the next
   seer_chat_generate / seer_batch_add_chat then feeds nothing and samples at once), and keeps the
   turn point between them (seer_context_save_turn). Cancelling it forgets the state, not the
   messages: the next reply feeds the whole conversation again, and gives what it gives without
   the feed. */
SEER_API int seer_chat_feed(seer_context *ctx, const seer_generate_params *params, enum seer_feed until,
                            int64_t *n_fed);
/* After a reply: feeds it again in the form the chat template gives it once a user message follows
   (Qwen3.5's drops the reply's think block, even an empty one: docs/MODEL.md §6.2), back from where
   the reply began, so that the next user turn feeds only its own message. A chat front end calls it
   while the user types (seer chat does, on a thread of its own: the context is not used elsewhere
   meanwhile); the next turn gives exactly what it gives without the call, which only moves the work
   earlier. Nothing to do (SEER_OK, nothing fed) before a reply or when a message already follows it.
   params and *n_fed as for seer_chat_feed (cancelling leaves the next turn to feed it). */
SEER_API int seer_chat_settle(seer_context *ctx, const seer_generate_params *params, int64_t *n_fed);

typedef struct seer_snapshot seer_snapshot;
/* Copies what the context holds (its state: KV cache rows in use, recurrent and conv state,
   positions; the history and rendered text it was fed; the last logits; pending tokens) into host
   memory. Fails (SEER_EINVAL) while images or videos are queued but not fed. */
SEER_API int seer_context_save(const seer_context *ctx, seer_snapshot **out);
/* What seer_context_save would have copied at the context's turn point: where the latest assistant
   turn began, after the messages before it (after a reply, or seer_chat_feed with SEER_FEED_REPLY,
   which passes it without stopping). A prefix cache keys it by the messages; restoring it, the next
   reply feeds its own opening. SEER_EINVAL before there is a turn point. */
SEER_API int seer_context_save_turn(const seer_context *ctx, seer_snapshot **out);
/* Makes ctx (of the same model and KV cache type, n_ctx >= the snapshot's tokens) exactly as the
   saved context was: the next generation gives what the saved one would have. A snapshot is
   read-only: several contexts, on several threads, may restore from one at once. Fails with
   SEER_EINVAL (ctx unchanged) for another model, cache type or too small an n_ctx. */
SEER_API int seer_context_restore(seer_context *ctx, const seer_snapshot *snap);
SEER_API size_t seer_snapshot_bytes(const seer_snapshot *snap);   /* host memory it holds */
SEER_API int64_t seer_snapshot_tokens(const seer_snapshot *snap); /* tokens of state it holds */
SEER_API void seer_snapshot_free(seer_snapshot *snap);

/* ---- images ------------------------------------------------------------------------------ */
/* An image for a prompt: a file (JPEG, PNG, WebP, BMP, GIF, a TIFF or PDF page; the format comes
   from the bytes; "-" reads stdin), the encoded bytes of one in memory, or 8-bit RGB pixels the
   caller owns (borrowed for the call): exactly one of data, path, rgb. Images are preprocessed
   exactly as Hugging Face's Qwen3.5 processor does (spec §5.1, §5.2). */
typedef struct seer_image_input {
    const char *path;      /* the file, or NULL for pixels */
    int32_t page;          /* 0-based page of a multi-page TIFF or PDF; 0 otherwise */
    const uint8_t *rgb;    /* pixels: `height` rows of `width` RGB triples, `stride` bytes apart */
    int32_t width, height;
    size_t stride;         /* 0 = width * 3 */
    const void *data;      /* encoded file bytes (JPEG, PNG, ...) the caller owns, borrowed for the call;
                              path, if set, then only names it in messages */
    size_t data_size;
} seer_image_input;

/* What an image costs: its decoded size, the size the model sees, and its tokens. */
typedef struct seer_image_info {
    int32_t width, height;
    int32_t resized_width, resized_height;
    int64_t tokens;
} seer_image_info;

/* Appends a user message whose content is the images, in order, followed by `text` (the chat
   template's image parts, spec §6.2). The images are decoded now (a file that cannot be read fails
   here, naming it; the caller's pixels are copied) and encoded by the next seer_chat_generate; the
   model needs its vision tower (SEER_EUNSUPPORTED otherwise). */
SEER_API int seer_chat_add_images(seer_context *ctx, const char *role, const seer_image_input *images,
                                  size_t n_images, const char *text);
/* Continues the context with raw text in which each "<|vision_start|><|image_pad|><|vision_end|>"
   takes the next image, in order (the counts must match). */
SEER_API int seer_generate_text_images(seer_context *ctx, const char *prompt, const seer_image_input *images,
                                       size_t n_images, const seer_generate_params *params, seer_result *result);
/* Sizes and token count of one image as this model would see it (decodes it, runs no tower). */
SEER_API int seer_image_measure(const seer_model *model, const seer_image_input *image, seer_image_info *info);
/* Decodes an image input to 8-bit RGB as seer_chat_add_images would (the model's max_image_pixels and
   pdf_dpi): *rgb, released with seer_free, holds *height rows of *width RGB triples. For input read
   once, such as "-" (stdin): decode it here, then measure and feed its pixels. */
SEER_API int seer_image_decode(const seer_model *model, const seer_image_input *image, uint8_t **rgb,
                               int32_t *width, int32_t *height);

/* ---- videos ------------------------------------------------------------------------------ */
/* A video file for a prompt (any container and codec the system's FFmpeg decodes). Frames are
   sampled, resized and timestamped as Hugging Face's Qwen3.5 video processor does (spec §5.3):
   zero fields take the model's video_preprocessor_config.json values (fps 2, 4..768 frames). */
typedef struct seer_video_input {
    const char *path;
    double fps;                   /* frames sampled per second; 0 = the model's */
    int64_t min_frames, max_frames; /* 0 = the model's */
    int64_t max_tokens;           /* 0 = no limit; else lower the resolution, then the frame count, to fit */
    double start_seconds, end_seconds; /* the part of the file to use; end 0 = to its end. Timestamps
                                          the model sees stay those of the whole file */
    struct seer_video *video;     /* an opened video (seer_video_open) read instead of path, which is
                                     then ignored: its container is not read again. NULL = path */
} seer_video_input;

/* seer_chat_add_images with videos too: the message's content is the images, then the videos, then
   `text`. Videos are decoded, sampled and encoded (one frame pair at a time) by the next
   seer_chat_generate, which fails naming the file when one cannot be read. An opened video
   (seer_video_input.video) is borrowed until then. */
SEER_API int seer_chat_add_media(seer_context *ctx, const char *role, const seer_image_input *images,
                                 size_t n_images, const seer_video_input *videos, size_t n_videos, const char *text);

/* Appends text to the last message's text (after its images and videos): a prompt whose media were
   fed apart (seer_chat_feed with SEER_FEED_MEDIA, or a restored snapshot taken there) gets its
   question afterwards, e.g. a server's second question about a cached image. The message's end
   must not have been fed yet, else the next generation fails (the history changed). */
SEER_API int seer_chat_append_text(seer_context *ctx, const char *text);

/* A video file whose container was read once (every frame's time; nothing decoded): measure parts
   of it and add them to prompts (seer_video_input.video) without reading the file again, e.g. a
   long video described a minute at a time. Used by one thread at a time, like a context; a
   context that was given it borrows it until its next seer_chat_generate. */
typedef struct seer_video seer_video;

/* Opens `path` (any container and codec the system's FFmpeg decodes) with the model's decoding
   limits (frames above max_image_pixels are refused, n_threads decoder threads). The model (a
   vocab_only one will do) must outlive the video; NULL = the default limits. SEER_EDECODE for a
   file that is not a video. */
SEER_API int seer_video_open(const seer_model *model, const char *path, seer_video **out);
SEER_API void seer_video_free(seer_video *video);

/* What a video input costs the model: the source, the plan (spec §5.3: which frames, at what size)
   and the tokens. */
typedef struct seer_video_info {
    double duration;               /* seconds: the container's length (its longest stream) */
    double video_seconds;          /* the video stream's own length: its last frame's time plus one
                                      frame (a container's duration may count a longer audio track) */
    int32_t width, height;         /* as displayed */
    int32_t rotation;              /* 0, 90, 180, 270: the clockwise turn the display applies */
    int64_t frames;                /* source frames */
    double fps;                    /* source frame rate */
    const char *fps_source;        /* where the rate came from: "avg_frame_rate", "r_frame_rate",
                                      "measured", "default"; a static string */
    const char *codec;             /* the decoder's name; a static string */
    int64_t sampled_frames;        /* frames the model sees (before the last pair repeats its frame) */
    int64_t pairs;                 /* their pairs: one "<t.t seconds>" stamp and one token run each */
    int32_t resized_width, resized_height; /* the size every frame is resized to */
    int64_t tokens;                /* video tokens: pairs · (resized_height/32) · (resized_width/32) */
    int64_t prompt_tokens;         /* what the video puts in a prompt in place of its placeholder:
                                      per pair the stamp's tokens, <|vision_start|>, the pads and
                                      <|vision_end|> (spec §5.4) */
    int64_t memory_bytes;          /* what encoding it holds at once: the embeddings kept plus one
                                      pair's pixels and patch rows */
    char note[160];                /* what max_tokens made the planner lower (size, then frames), or "" */
    /* With an opened video (seer_video_input.video), the plan itself, held by the video until the
       next call on it; NULL when the input is a path: */
    const int64_t *frame_index;    /* [sampled_frames] the source frame numbers */
    const double *frame_seconds;   /* [sampled_frames] their times */
    const double *pair_seconds;    /* [pairs] the time each pair's stamp shows */
} seer_video_info;

/* Plans a video input as the next seer_chat_generate would (the model's sampling settings with the
   input's overrides) and says what it costs; reads the container (or uses the opened video), decodes
   no frame and runs no tower. Works on a vocab_only model; model NULL plans with the default
   settings (spec §5.3) and gives prompt_tokens and memory_bytes -1. */
SEER_API int seer_video_measure(const seer_model *model, const seer_video_input *video, seer_video_info *info);

/* ---- measuring a prompt (seer --dry-run) ---------------------------------------------------- */
/* A context of a vocab_only model measures instead of generating: messages are added as usual
   (images decoded, videos queued), generating fails with SEER_EINVAL, and these count the tokens a
   real context would feed, expanded image and video placeholders included, without encoding
   anything. Both work on any context and change nothing in it. */

/* Tokens the next seer_chat_generate with `params` (NULL = defaults; think changes the rendering)
   would feed: the turns it has not fed yet, the tokens it holds pending, and each image's and
   video's tokens. Videos are planned (their containers read); a file that cannot be read fails as
   seer_chat_generate would. */
SEER_API int seer_chat_measure(seer_context *ctx, const seer_generate_params *params, int64_t *prompt_tokens);
/* Tokens seer_generate_text_images(ctx, prompt, images, n_images, ...) would feed (n_images 0:
   seer_generate_text). The images are decoded to measure them. */
SEER_API int seer_text_measure(seer_context *ctx, const char *prompt, const seer_image_input *images,
                               size_t n_images, int64_t *prompt_tokens);

/* Whether a file is a video (seer_chat_add_media's videos) rather than an image: its bytes say so,
   or (MPEG-TS, raw streams) no image reader takes it and FFmpeg's demuxer does. 1 or 0; never an
   error ("-", a missing file: 0). */
SEER_API int seer_is_video(const char *path);

/* ---- tokens and pages -------------------------------------------------------------------- */
/* The bytes token `id` stands for, as seer_detokenize joins them (*len bytes, not NUL-terminated,
   not always valid UTF-8 alone: a character may span two tokens), or NULL when the id has no
   token (negative, past the vocabulary, a padding slot). Valid until the model is freed. */
SEER_API const char *seer_token_piece(const seer_model *model, int32_t id, size_t *len);

/* Byte offset of the first invalid UTF-8 sequence in text[0..len) (a stray or truncated byte, an
   overlong form, a surrogate, a code point past U+10FFFF), or len when all of it is valid: the
   text that seer_tokenize and seer_chat_add accept. A program can name its file and the byte
   before it loads a model. */
SEER_API size_t seer_utf8_check(const char *text, size_t len);

/* A document opened for its pages: an image file (one page), a multi-page TIFF or a PDF, each page
   decoded to the 8-bit RGB pixels a seer_image_input takes, exactly as seer_chat_add_images decodes
   a file (orientation applied, alpha composited over white). For a program that decodes the next
   page on another thread while the model reads the current one, and opens a long PDF once (seer
   ocr). It belongs to no model: one thread at a time per document, any number of documents. */
typedef struct seer_document seer_document;

/* Opens `path` ("-" reads stdin; the format comes from the bytes) and counts its pages. params
   (NULL = defaults) gives max_image_pixels and pdf_dpi, applied as a model loaded with the same
   params applies them; its other fields are ignored. A video or a file that is no image fails
   with one message naming the file. */
SEER_API int seer_document_open(const char *path, const seer_model_params *params, seer_document **out);
/* Its pages: 1 for a single image, at least 1. */
SEER_API int32_t seer_document_pages(const seer_document *doc);
/* Decodes page `page` (0-based) into *rgb: *height rows of *width RGB triples, no padding (release
   with seer_free). A page larger than max_image_pixels is refused before its pixels exist. */
SEER_API int seer_document_decode(seer_document *doc, int32_t page, uint8_t **rgb, int32_t *width,
                                  int32_t *height);
/* Page `page`'s (0-based) resolution in pixels per inch, to write it back at its printed size: a
   PDF's rasterisation dpi, a TIFF's XResolution, a JPEG's JFIF density, a PNG's pHYs; 0 when the
   file does not say. */
SEER_API double seer_document_dpi(seer_document *doc, int32_t page);
/* NULL is fine. */
SEER_API void seer_document_close(seer_document *doc);

/* ---- OCR layout: lines and words with boxes (docs/OCR.md) ---------------------------------- */
/* What the model's answer to a grounding prompt (SEER_OCR_PROMPT_LINES) says about a page, read
   into blocks, lines and words with boxes in the page's pixels, for hOCR, ALTO, TSV and a
   searchable PDF. Parsing and rendering are pure functions of the page geometry and the answer:
   no model is needed, and the answer is treated as hostile input. */

/* The prompt seer ocr sends for --format hocr|alto|tsv|pdf: lines of text, each with its box, as
   the JSON that Qwen's text-spotting prompts ask for. Word for word Qwen's line-level text-spotting
   prompt (Qwen3-VL cookbooks/ocr.ipynb; single quotes as Qwen writes them), since a model answers
   best the prompt it was shown; tests/data/ocr/answers/SOURCES.md cites it. */
#define SEER_OCR_PROMPT_LINES \
    "Spotting all the text in the image with line-level, and output in JSON format as " \
    "[{'bbox_2d': [x1, y1, x2, y2], 'text_content': 'text'}, ...]."

/* A box in page pixels: (x0, y0) the top-left corner, (x1, y1) one past the bottom-right, as
   hOCR's bbox; 0 <= x0 <= x1 <= width, 0 <= y0 <= y1 <= height. */
typedef struct seer_box {
    int32_t x0, y0, x1, y1;
} seer_box;

/* How the answer's numbers are to be read. */
typedef enum seer_ocr_coords {
    SEER_OCR_COORDS_REL1000 = 0, /* 0..1000 across the image the model saw (Qwen3-VL and later,
                                    Qwen3.5): proportional, so the resize does not matter */
    SEER_OCR_COORDS_MODEL_PIXELS = 1 /* pixels of the resized image the model saw (Qwen2.5-VL):
                                        model_width x model_height */
} seer_ocr_coords;

/* The page as the model saw it and as the output shows it. Pixels are those seer_document_decode
   gives: EXIF orientation already applied, so boxes are in the upright page a viewer shows; a PDF
   page rasterised at `dpi`. */
typedef struct seer_ocr_geometry {
    int32_t width, height;             /* the decoded page, in pixels */
    int32_t model_width, model_height; /* the image after the model's resize (spec §5.2; 0 = same
                                          as width, height); used by SEER_OCR_COORDS_MODEL_PIXELS */
    seer_ocr_coords coords;
    double dpi;                        /* pixels per inch (PDF: the rasterisation dpi; an image: its
                                          density, else 0 = unknown, which writers take as 300) */
} seer_ocr_geometry;

typedef struct seer_ocr_word {
    char *text;      /* UTF-8, NUL-terminated, no whitespace */
    seer_box box;    /* the line's box divided in proportion to characters (the model gives lines) */
    float conf;      /* 0..100: the geometric mean probability of the tokens that wrote the word;
                        -1 when the answer came without logprobs */
} seer_ocr_word;

typedef struct seer_ocr_line {
    char *text;           /* the line as the model wrote it (UTF-8, no newline) */
    seer_box box;
    int32_t has_box;      /* 0: the model gave text without a usable box; box is then the page's */
    float conf;           /* as a word's, over the whole line; -1 without logprobs */
    seer_ocr_word *words;
    size_t n_words;
} seer_ocr_line;

/* A block is a run of lines the model wrote together: one per answer object that holds several
   lines, else one line each; text outside any box is one last block without a box. */
typedef struct seer_ocr_block {
    seer_box box;         /* the union of its lines' boxes */
    int32_t has_box;
    seer_ocr_line *lines;
    size_t n_lines;
} seer_ocr_block;

typedef struct seer_ocr_page {
    int32_t number;       /* 0-based page number in its document (hOCR ppageno); the caller sets it */
    int32_t width, height;
    double dpi;           /* from the geometry (0 = unknown) */
    seer_ocr_block *blocks;
    size_t n_blocks;
    int32_t n_dropped;    /* answer items that could not be read (malformed, truncated, no text) */
} seer_ocr_page;

/* Reads the model's answer (answer->text, text_len; logprobs and text_ends when present) into a
   page (release with seer_ocr_page_free). Accepted: the JSON array of the grounding prompt (in a
   ```json fence or not; "bbox_2d" or "bbox"; "text_content", "text", "content" or a grounding
   answer's "label"), a truncated one (the complete items kept), Qwen's HTML with data-bbox
   attributes, and plain text (one block of lines without boxes). Boxes are clamped to the page and
   ordered corners (rounded outwards to whole pixels); an item with no usable box keeps its text in
   the box-less last block; a box given to text on several lines is shared among them as equal
   bands; nothing the answer holds is lost or fatal except SEER_ENOMEM and SEER_EINVAL for a
   geometry with no pixels. */
SEER_API int seer_ocr_parse(const seer_result *answer, const seer_ocr_geometry *geometry, seer_ocr_page **out);
/* NULL is fine. */
SEER_API void seer_ocr_page_free(seer_ocr_page *page);

typedef enum seer_ocr_format {
    SEER_OCR_HOCR = 0, /* hOCR 1.2 (XHTML): ocr_page, ocr_carea, ocr_par, ocr_line, ocrx_word */
    SEER_OCR_ALTO = 1, /* ALTO 4.x XML, pixel units */
    SEER_OCR_TSV = 2   /* Tesseract's TSV: level, page_num … conf, text */
} seer_ocr_format;

/* Writes pages[0..n_pages) as one document of `format` into *out (*out_len bytes, NUL-terminated,
   release with seer_free). `source` (may be NULL) names the scanned file: hOCR's image property,
   ALTO's fileName. A NULL entry in pages is a page that failed: it keeps its place (an empty
   page of that number where the format has pages, counted on from the pages around it) and nothing
   else. n_pages >= 1 (ALTO cannot hold an empty document): 0 is SEER_EINVAL. */
SEER_API int seer_ocr_render(const seer_ocr_page *const *pages, size_t n_pages, seer_ocr_format format,
                             const char *source, char **out, size_t *out_len);

/* A searchable PDF being built in memory: each page the scan as an image, at its size in points
   (pixels * 72 / dpi), with the recognised text invisible at its boxes, so that selecting, search
   and pdftotext find it where it is printed. Needs a build with cairo (SEER_EUNSUPPORTED else). */
typedef struct seer_ocr_pdf seer_ocr_pdf;

SEER_API int seer_ocr_pdf_create(seer_ocr_pdf **out);
/* Adds one page: rgb as seer_document_decode gives it (width x height); page (may be NULL: the
   image alone, for a page that failed, at the dpi of the page before) gives the text and the dpi;
   its width and height must be the image's (SEER_EINVAL else). A photographic scan is stored as a
   JPEG of quality 90 where the build has turbojpeg; any other, losslessly. */
SEER_API int seer_ocr_pdf_add(seer_ocr_pdf *pdf, const uint8_t *rgb, int32_t width, int32_t height,
                              const seer_ocr_page *page);
/* Finishes the document into *bytes (*len bytes, release with seer_free) and frees pdf, whatever
   happens; at least one page must have been added. */
SEER_API int seer_ocr_pdf_finish(seer_ocr_pdf *pdf, uint8_t **bytes, size_t *len);
/* Frees an unfinished document. NULL is fine. */
SEER_API void seer_ocr_pdf_free(seer_ocr_pdf *pdf);

/* ---- faults ------------------------------------------------------------------------------ */
/* On the CPU with weights "map" (or what "auto" leaves mapped: seer_model_params.weights), weights
   are read in place from a read-only mapping of the model file, and GGUF metadata always is. A file that
   is truncated while mapped (rewritten by a download, a network file system failing) makes the
   read of a lost page raise SIGBUS. The library installs no signal handlers: a program that wants
   to say what happened calls this from its own SIGBUS handler (sigaction with SA_SIGINFO, passing
   info->si_addr). When addr lies in a file the library has mapped, it writes one line, "PATH: the
   file changed size while in use (was N bytes, now M)" or "PATH: could not be read at byte K of
   the mapped file (N bytes): an I/O error under the mapping", plus a newline into buf
   (NUL-terminated, truncated to size) and returns its length; else 0 (not the library's: restore
   the default action). Async-signal-safe. The lost pages cannot be read again, so the handler
   should write the line and _exit (docs/RELIABILITY.md). */
SEER_API size_t seer_fault_describe(const void *addr, char *buf, size_t size);
/* Whether every file the library has mapped still has the size and modification time it had when
   mapped: SEER_OK, or SEER_EIO with "PATH: the file changed size while in use (was N bytes, now M)"
   or "PATH: the file was modified while in use (same size, new modification time)". Call it after
   writing a result computed from a mapped model, so an answer from changed weights is not reported
   as a success. Any thread. */
SEER_API int seer_fault_check(void);

/* ---- devices and model files --------------------------------------------------------------- */
/* What `--device` can name, as seer_device_list finds it. The CPU backend is always there; each
   Vulkan device is one entry (a CPU-type one such as Mesa's lavapipe too). */
typedef enum seer_device_type {
    SEER_DEVICE_CPU = 0,            /* the CPU backend */
    SEER_DEVICE_GPU_DISCRETE = 1,
    SEER_DEVICE_GPU_INTEGRATED = 2,
    SEER_DEVICE_GPU_VIRTUAL = 3,
    SEER_DEVICE_VULKAN_CPU = 4,     /* a Vulkan driver computing on the CPU (lavapipe) */
    SEER_DEVICE_OTHER = 5
} seer_device_type;

/* seer_device_info.features, or-ed */
enum {
    SEER_DEVICE_USABLE = 1 << 0,         /* seer can run on it (Vulkan 1.1 and a compute queue) */
    SEER_DEVICE_FP16 = 1 << 1,           /* 16-bit float arithmetic in shaders */
    SEER_DEVICE_STORAGE16 = 1 << 2,      /* 16-bit values in storage buffers */
    SEER_DEVICE_INT_DOT = 1 << 3,        /* int8 dot products */
    SEER_DEVICE_COOPMAT = 1 << 4,        /* cooperative matrices */
    SEER_DEVICE_SUBGROUP_ARITH = 1 << 5  /* subgroup arithmetic (subgroupAdd …) */
};

/* seer_device_info.picked: which choice runs on this device. */
enum {
    SEER_DEVICE_PICKED_AUTO = 1,   /* --device auto */
    SEER_DEVICE_PICKED_VULKAN = 2  /* plain --device vulkan, where auto prefers the CPU backend to it */
};

#define SEER_DEVICE_MAX_HEAPS 16

typedef struct seer_device_info {
    char spec[16];                 /* what seer_model_params.device takes for it: "cpu", "vulkan:0" … */
    char name[256];                /* the driver's device name; "CPU" for the CPU backend */
    seer_device_type type;
    int32_t picked;                /* SEER_DEVICE_PICKED_*, or 0 */
    int32_t n_threads;             /* the CPU backend: threads it runs by default (online cores); else 0 */
    uint32_t features;             /* SEER_DEVICE_* flags; 0 for the CPU backend */
    /* Vulkan devices only (zero or "" for the CPU backend): */
    uint32_t vendor_id, device_id; /* PCI ids */
    char api_version[16];          /* "1.3.255" */
    char driver[400];              /* the driver's name, its description and version, as it reports them */
    uint64_t memory_bytes;         /* device-local memory: its heaps added up */
    int32_t n_heaps;
    struct { uint64_t bytes; int32_t device_local; } heaps[SEER_DEVICE_MAX_HEAPS];
    uint32_t subgroup_size;
    uint64_t max_storage_bytes;    /* the largest buffer a shader may bind */
    uint64_t max_allocation_bytes;
    uint32_t max_workgroup_size[3], max_workgroup_invocations;
    uint32_t shared_memory_bytes;  /* a workgroup's shared memory */
} seer_device_info;

/* The devices this build can run on, without opening any: the CPU backend first, then every
   Vulkan device in the loader's order. *devices (released with seer_free) holds *n_devices
   entries. Where no Vulkan device is listed (no driver or device, or Vulkan not built) `note`
   (may be NULL; note_size bytes) says why in one line; else it is "". Touches no process state;
   any thread. */
SEER_API int seer_device_list(seer_device_info **devices, size_t *n_devices, char *note, size_t note_size);

/* The CPU features the library detected and uses, as one line (like llama.cpp's system info):
   "x86-64 | AVX2 = 1 | AVX512F = 0 | … | int8 kernels = avx2", then whether Vulkan is built.
   Detected once; a static string. */
SEER_API const char *seer_system_info(void);

/* Describes a model file without loading its weights, as `seer info` prints it: *json (released
   with seer_free) is one JSON object with "path", "kind" (GGUF text model, mmproj, HF directory,
   safetensors file or index), "format", "architecture", the "text" and/or "vision" hyperparameters
   under their Hugging Face config names, and the tensors ("tensors", "dtypes": count and bytes by
   dtype, "total_bytes"). The hyperparameters are checked against the tensors when the file is a
   whole checkpoint. `device` non-NULL ("auto", "cpu", "vulkan:N") adds "plan" for a text model:
   the memory a context of the model's default size needs there (weights, KV cache per 1K tokens,
   recurrent state, scratch) and whether it fits. Errors name the file. */
SEER_API int seer_model_file_info(const char *path, const char *device, char **json);

/* ---- memory ------------------------------------------------------------------------------ */
/* Frees memory that the API documents as "release with seer_free". NULL is fine. */
SEER_API void seer_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* SEER_H */
