/* server.h — `seer serve` (docs/SERVING.md): an OpenAI-compatible HTTP server on seer.h alone.
   The parts, in the direction a request flows:
     server/http.c     connections (libmicrohttpd, one thread each), routes, API key, bodies, and the
                       response or its server-sent events;
     server/request.c  bodies → struct srv_request, and the JSON written back (server/request.h);
     server/media.c    a request's images and videos → seer_image_input / seer_video_input, and the
                       content hashes that key the cache;
     server/engine.c   the slots: a bounded queue, one thread feeding prompts (and saving cache
                       snapshots) and one decoding every slot's reply in one seer_batch;
     server/cache.c    the prefix cache: seer_snapshot by token-prefix key, LRU within --cache-ram;
     server/metrics.c  counters for /metrics.
   Nothing is kept between requests but the cache, so any number of servers can stand behind one
   load balancer. */
#ifndef SEER_SERVER_SERVER_H
#define SEER_SERVER_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "seer.h"
#include "server/request.h"

/* ---- what `seer serve` was asked for (cli/serve.c fills it) ----------------------------------- */
struct serve_options {
    const char *model_path;       /* as resolved by -m */
    const char *alias;            /* the model's id in responses and /v1/models (default: the
                                     path's last component) */
    seer_model_params mp;
    seer_context_params cp;       /* per slot: -c is each slot's context */
    seer_generate_params gp;      /* defaults for fields a request leaves out */
    bool fixed_seed;              /* -s given: a request without "seed" uses gp's; else each draws its own */
    const char *host;             /* default 127.0.0.1 */
    int port;                     /* default 8080 */
    int n_slots;                  /* -np: replies decoded together (default 4) */
    int max_queue;                /* requests waiting for a slot before 503 (default 64) */
    const char *api_key;          /* NULL = none */
    const char *media_path;       /* file:// root; NULL = file:// refused */
    bool allow_remote_media;      /* http(s) media fetched (libcurl) */
    size_t max_body;              /* bytes (default 64 MiB) */
    size_t max_media_bytes;       /* one image or video, decoded or fetched (default 64 MiB) */
    int64_t cache_ram;            /* prefix cache bytes; 0 = no cache */
    int timeout;                  /* seconds a connection may stay idle; also the remote fetch limit */
    int grace;                    /* seconds SIGTERM waits for requests in flight (default 30) */
};

/* The process's entry (cli/serve.c): loads the model while /health says 503, serves until SIGTERM
   or SIGINT, then stops accepting, finishes what is in flight within `grace` seconds and returns
   CLI status 0, or 1 when the model or the socket failed (one line on stderr). */
int serve_run(const struct serve_options *o);

/* An absolute CLOCK_REALTIME time ms milliseconds from now, for pthread_cond_timedwait (engine.c). */
void srv_deadline(struct timespec *ts, long ms);

/* ---- metrics (server/metrics.c) ---------------------------------------------------------------- */
struct metrics {
    atomic_llong requests[6];     /* by status class: 2xx, 4xx (not 429), 429/503, 5xx, cancelled, all */
    atomic_llong prompt_tokens, cached_tokens, generated_tokens;
    atomic_llong cache_hits, cache_misses;
    atomic_llong prefill_ns, decode_ns; /* time spent feeding prompts and decoding (engine threads) */
    atomic_int queued, busy_slots, n_slots;
};
enum { M_2XX, M_4XX, M_BUSY, M_5XX, M_CANCELLED, M_ALL };
void metrics_count_status(struct metrics *m, int http_status);
/* Prometheus text format 0.0.4, every metric prefixed seer_ (malloc'ed). */
char *metrics_text(const struct metrics *m, int64_t cache_bytes, int64_t cache_entries);

/* ---- the prefix cache (server/cache.c) ---------------------------------------------------------- */
/* Keys are 128-bit hashes of a conversation prefix (server/media.c builds them: roles, texts, and
   media by content). Entries are seer_snapshots, evicted least recently used past `budget` bytes.
   Thread-safe. */
struct cache_key {
    uint64_t a, b;
};
typedef struct prefix_cache prefix_cache;
prefix_cache *cache_create(int64_t budget);
void cache_free(prefix_cache *c);
/* Keeps snap under key (the cache owns it from now; one larger than the budget is freed at once).
   A key already present keeps its entry and frees snap. */
void cache_put(prefix_cache *c, struct cache_key key, seer_snapshot *snap);
/* Restores the entry of the longest of keys[0..n) present into ctx (seer_context_restore) and returns
   its index, or -1 when none is present or the restore failed (ctx is then reset). *tokens gets the
   snapshot's token count. */
int cache_restore_longest(prefix_cache *c, const struct cache_key *keys, size_t n, seer_context *ctx,
                          int64_t *tokens);
void cache_stats(prefix_cache *c, int64_t *bytes, int64_t *entries);

/* ---- media and keys (server/media.c) ----------------------------------------------------------- */
/* One message's media resolved: inputs for seer_chat_add_media, with what they own. */
struct media_set {
    seer_image_input *images;
    size_t n_images;
    seer_video_input *videos;
    size_t n_videos;
    void **owned;            /* decoded data: URIs and fetched bytes */
    size_t n_owned;
    char **paths;            /* resolved files, and temporary files (video bytes) to unlink */
    size_t n_paths;
    bool *temporary;         /* [n_paths] */
    struct cache_key *hashes; /* one per media item, in the message's order (images, then videos) */
};
/* Resolves every medium of msg (data: decoded, file:// under o->media_path, http(s) fetched when
   allowed) and hashes its content; 0, or -1 with err (400, 413, 415). */
int media_resolve(const struct serve_options *o, const struct srv_message *msg, struct media_set *out,
                  struct srv_error *err);
void media_set_free(struct media_set *s);
/* Prefix keys of a chat: keys[i] covers messages 0..i (i < n_messages); *media_key covers messages
   0..n-2 and the last message's media (valid when *has_media_key). */
void media_prefix_keys(const struct srv_request *r, const struct media_set *sets, struct cache_key *keys,
                       struct cache_key *media_key, bool *has_media_key);

/* ---- jobs and the engine (server/engine.c) ------------------------------------------------------ */
/* One request from parse to the last byte sent. The request thread (server/http.c) owns it until it is submitted; then
   the engine writes the output fields under mu and signals cv, and the request thread reads them.
   refs counts the two owners; the last job_release frees it. */
struct job {
    struct srv_request req;
    struct media_set *media;      /* [req.n_messages] */
    char id[40];
    int64_t created;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_bool cancelled;        /* the client went away: the engine stops the reply at its next token */
    /* output, under mu */
    char *text, *reasoning;       /* streamed so far */
    size_t text_len, reasoning_len, text_cap, reasoning_cap;
    bool done;
    int http_status;              /* 200, or the error's */
    struct srv_error err;
    enum seer_stop_reason stop;
    struct srv_usage usage;
    struct srv_logprobs logprobs; /* asked for (req.logprobs): filled when it ends */
    double t_submit, t_first;
    int refs;
};
struct job *job_new(void);
void job_release(struct job *j);

typedef struct engine engine;
/* Starts the engine's threads on a loaded model. */
int engine_create(seer_model *m, const struct serve_options *o, struct metrics *met, engine **out);
/* Queues j (takes a reference); -1 with err 503 when the queue is full or the engine stops. The
   context limit is checked when the job reaches a slot (400 context_length_exceeded then). */
int engine_submit(engine *e, struct job *j, struct srv_error *err);
/* Stops taking jobs (engine_submit answers 503 from then on), lets those in flight finish for up to
   `grace` seconds, cancels the rest and joins the threads. */
void engine_stop(engine *e, int grace);
/* Frees a stopped engine, once no request thread can reach it: one still resolving media (a remote
   fetch) when SIGTERM came submits afterwards, and must find the engine stopped, not freed. */
void engine_free(engine *e);
prefix_cache *engine_cache(engine *e);

#endif
