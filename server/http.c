/* http.c — the HTTP side of `seer serve` (server/server.h, docs/SERVING.md). libmicrohttpd (GNU,
   in Debian, HTTP/1.1 with keep-alive, chunked bodies and per-connection limits) parses HTTP in its
   event mode: two threads poll every connection (epoll), so an idle, slow or hostile client costs a
   socket and its buffer, never a thread. A generation gets a thread of its own once its body is in
   (request_main: parsing, media, submitting, then waiting on the job), its connection suspended
   meanwhile; the number of such threads is bounded by the slots and the queue. Routes:
     GET  /health                  200 {"status":"ok"}, 503 while the model loads or the server stops
     GET  /metrics                 Prometheus text (server/metrics.c)
     GET  /v1/models               the model, with its input modalities
     POST /v1/chat/completions     chat (server/request.h), streamed as server-sent events on request
     POST /v1/completions          raw prompts
   (each /v1/ path also without /v1, as llama-server answers both). /v1/ routes need the API key
   when one is set; /health and /metrics never do, so probes and scrapers need no secret. */
#define _GNU_SOURCE /* asprintf, strsignal */
#include <curl/curl.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "server/server.h"

enum { STATE_LOADING, STATE_READY, STATE_STOPPING };
/* libmicrohttpd's polling threads: they read headers and bodies and write answers, nothing slower */
enum { HTTP_POLL_THREADS = 2 };
/* Request threads past the slots and the queue: those still parsing or fetching media (a burst past
   them gets the queue's 503 at once, not a thread each) */
enum { REQUEST_THREADS_STARTING = 16 };
enum route { R_NONE, R_HEALTH, R_METRICS, R_MODELS, R_CHAT, R_COMPLETION };

struct server {
    const struct serve_options *o;
    struct MHD_Daemon *d;
    seer_model *m;
    engine *e;
    atomic_int state;
    struct metrics met;
    char *model_id;
    int64_t created;
    bool vision;
    struct srv_limits lim;
    atomic_ullong next_id;
    atomic_int responding;        /* requests with a job whose response is not yet fully sent */
    atomic_int request_threads;   /* request_main threads running */
};

/* One request (libmicrohttpd's con_cls). A generation's is shared by libmicrohttpd's thread and its
   request thread (request_main): refs counts the two, the last conn_release frees it. */
struct conn {
    struct server *s;
    struct MHD_Connection *c;
    enum route route;
    bool post, answered;
    char *body;
    size_t n, cap;
    int body_status;              /* 413 / 408 found while reading the body, else 0 */
    double t_start;
    struct job *job;
    /* streaming */
    size_t sent_text, sent_reasoning;
    bool sent_first, sent_end;
    char *ev;                     /* the event being written, and how far */
    size_t ev_len, ev_off;
    /* the access log line (log_request) */
    int status;                   /* what was answered: an HTTP status, 499 when the client left */
    char why[160];                /* an error's message, cut */
    atomic_int refs;
    /* under job->mu once the request thread runs */
    bool suspended;               /* waiting for the request thread to resume the connection */
    bool closed;                  /* on_completed ran: the connection is gone (k->c not to be used) */
};

static void conn_release(struct conn *k)
{
    if (atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    if (k->job)
        job_release(k->job);
    free(k->body);
    free(k->ev);
    free(k);
}

/* ---- answering -------------------------------------------------------------------------------- */

static enum MHD_Result send_body(struct conn *k, int status, char *body, const char *type)
{
    if (!body)
        body = strdup("{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}"), status = 500;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(k->c, (unsigned)status, r);
    MHD_destroy_response(r);
    metrics_count_status(&k->s->met, status);
    k->answered = true;
    k->status = status;
    return ret;
}

static enum MHD_Result send_error(struct conn *k, const struct srv_error *err)
{
    snprintf(k->why, sizeof k->why, "%.*s", (int)sizeof k->why - 1, err->message);
    for (char *p = k->why; *p; p++) /* a message may quote the client's bytes: one log line, always */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (err->status == 499) { /* the client left: nothing to send */
        metrics_count_status(&k->s->met, 499);
        k->status = 499;
        return MHD_NO;
    }
    return send_body(k, err->status, srv_error_body(err), "application/json");
}

static enum MHD_Result fail(struct conn *k, int status, const char *fmt, const char *arg)
{
    struct srv_error err = {0};
    srv_fail(&err, status, NULL, fmt, arg);
    return send_error(k, &err);
}

/* Whether the client closed its end: poll's POLLRDHUP (Linux: the peer shut its side down, seen
   even when a read would still return buffered bytes or EAGAIN), else a read that would see EOF. */
static bool client_gone(struct conn *k)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    struct pollfd pf = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)))
        return true;
    char b;
    ssize_t r = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* The request thread's wait (under j->mu): until the job changes or 200 ms; false when the client
   went away meanwhile (the job is then cancelled) or the connection is closed. */
static bool wait_job(struct conn *k)
{
    struct job *j = k->job;
    struct timespec until;
    srv_deadline(&until, 200);
    /* the client is looked at after every wake-up, not only after 200 ms without one: a reply's
       tokens wake this thread more often than that, and a client that left an unstreamed request
       went unnoticed until the whole reply was generated */
    pthread_cond_timedwait(&j->cv, &j->mu, &until);
    if (k->closed || client_gone(k)) {
        atomic_store(&j->cancelled, true);
        return false;
    }
    return true;
}

static void answer_of(const struct job *j, struct srv_answer *a)
{
    *a = (struct srv_answer){j->text ? j->text : "", j->text_len, j->reasoning, j->reasoning_len, j->stop, j->usage,
                             j->req.logprobs ? &j->logprobs : NULL};
}

/* The next event of a stream into k->ev: reasoning and text deltas as they come, then the finish
   chunk, the usage chunk when asked, and [DONE]. Called with j->mu held; false when nothing is
   ready yet. */
static bool next_event(struct conn *k)
{
    struct job *j = k->job;
    const struct srv_request *r = &j->req;
    struct srv_delta d = {.first = !k->sent_first};
    if (k->sent_reasoning < j->reasoning_len || k->sent_text < j->text_len) {
        d.reasoning = k->sent_reasoning < j->reasoning_len ? j->reasoning + k->sent_reasoning : NULL;
        d.reasoning_len = j->reasoning_len - k->sent_reasoning;
        d.content = k->sent_text < j->text_len ? j->text + k->sent_text : NULL;
        d.content_len = j->text_len - k->sent_text;
        k->sent_reasoning = j->reasoning_len, k->sent_text = j->text_len;
    } else if (!j->done) {
        return false;
    } else if (j->http_status != 200) {
        /* an error after the stream began: an error event, then the end */
        char *body = srv_error_body(&j->err);
        k->ev_len = body ? (size_t)asprintf(&k->ev, "data: %s\n\ndata: [DONE]\n\n", body) : 0;
        free(body);
        k->sent_end = true;
        return k->ev_len > 0;
    } else if (!k->sent_end) {
        d.finish = &j->stop;
        d.logprobs = j->req.logprobs ? &j->logprobs : NULL; /* the whole reply's, with the last chunk */
        k->ev = srv_chunk_event(r->endpoint, j->id, k->s->model_id, j->created, &d);
        if (r->include_usage) {
            struct srv_delta u = {.usage = &j->usage};
            char *uev = srv_chunk_event(r->endpoint, j->id, k->s->model_id, j->created, &u), *both = NULL;
            if (k->ev && uev && asprintf(&both, "%s%s", k->ev, uev) > 0)
                free(k->ev), k->ev = both;
            free(uev);
        }
        char *done = NULL;
        if (k->ev && asprintf(&done, "%sdata: [DONE]\n\n", k->ev) > 0)
            free(k->ev), k->ev = done;
        k->ev_len = k->ev ? strlen(k->ev) : 0;
        k->sent_end = true;
        return k->ev_len > 0;
    } else {
        return false;
    }
    k->ev = srv_chunk_event(r->endpoint, j->id, k->s->model_id, j->created, &d);
    k->ev_len = k->ev ? strlen(k->ev) : 0;
    k->sent_first = true;
    return k->ev_len > 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct conn *k = cls;
    struct job *j = k->job;
    (void)pos;
    if (k->ev_off == k->ev_len) {
        free(k->ev);
        k->ev = NULL;
        k->ev_len = k->ev_off = 0;
        if (k->sent_end)
            return MHD_CONTENT_READER_END_OF_STREAM;
        pthread_mutex_lock(&j->mu);
        if (!next_event(k)) {
            if (atomic_load(&j->cancelled)) { /* the client left: its request thread saw it */
                pthread_mutex_unlock(&j->mu);
                return MHD_CONTENT_READER_END_WITH_ERROR;
            }
            /* nothing yet: the request thread resumes the connection at the next output (the flag
               and the suspension under one lock, so that output cannot slip in between) */
            k->suspended = true;
            MHD_suspend_connection(k->c);
            pthread_mutex_unlock(&j->mu);
            return 0;
        }
        pthread_mutex_unlock(&j->mu);
    }
    size_t n = k->ev_len - k->ev_off < max ? k->ev_len - k->ev_off : max;
    memcpy(buf, k->ev + k->ev_off, n);
    k->ev_off += n;
    return (ssize_t)n;
}

/* ---- generation ------------------------------------------------------------------------------- */

/* Parses the request, resolves its media and submits it: 0, or -1 with err. In the request thread:
   a body of megabytes of JSON and base64, or a remote fetch, waits there, not in the poll loop. */
static int start_job(struct conn *k, struct srv_error *err)
{
    struct server *s = k->s;
    struct job *j = k->job;
    const enum srv_endpoint ep = k->route == R_CHAT ? SRV_CHAT : SRV_COMPLETION;
    seer_sampling defaults = s->o->gp.sampling;
    if (!s->o->fixed_seed) /* a seed of its own, as OpenAI's API and llama-server draw: two such
                              requests at temperature 1 differ */
        defaults.seed = cli_random_seed(atomic_fetch_add(&s->next_id, 1));
    if (srv_parse_request(ep, k->body ? k->body : "", k->n, &defaults, &s->lim, &j->req, err))
        return -1;
    /* any "model" is accepted, as llama-server does: one server serves one model */
    j->media = calloc(j->req.n_messages ? j->req.n_messages : 1, sizeof *j->media);
    if (!j->media)
        return srv_fail(err, 503, NULL, "out of memory");
    for (size_t i = 0; i < j->req.n_messages; i++) {
        if (j->req.messages[i].n_media && !s->vision)
            return srv_fail(err, 400, j->req.messages[i].media[0].param, "%s has no vision tower: it reads text only",
                            s->model_id);
        if (media_resolve(s->o, &j->req.messages[i], &j->media[i], err))
            return -1;
    }
    snprintf(j->id, sizeof j->id, "%s-%llx%04llx", ep == SRV_CHAT ? "chatcmpl" : "cmpl",
             (unsigned long long)time(NULL), (unsigned long long)atomic_fetch_add(&s->next_id, 1));
    j->created = (int64_t)time(NULL);
    return engine_submit(s->e, j, err) ? -1 : 0;
}

/* The response, queued on the suspended connection (libmicrohttpd allows it from any thread then): an
   error, the whole answer, or the event stream. Nothing when the client left (the connection closes
   once resumed: on_request answers MHD_NO). */
static void queue_answer(struct conn *k, const struct srv_error *err)
{
    struct server *s = k->s;
    struct job *j = k->job;
    if (err) {
        send_error(k, err);
        return;
    }
    pthread_mutex_lock(&j->mu);
    const bool done = j->done, gone = atomic_load(&j->cancelled);
    pthread_mutex_unlock(&j->mu);
    if (gone && !done) {
        metrics_count_status(&s->met, 499);
        k->status = 499;
        return;
    }
    if (done && j->http_status != 200) {
        send_error(k, &j->err);
        return;
    }
    const enum srv_endpoint ep = k->route == R_CHAT ? SRV_CHAT : SRV_COMPLETION;
    if (!j->req.stream) { /* done: the engine writes no more */
        struct srv_answer a;
        answer_of(j, &a);
        send_body(k, 200, srv_response_body(ep, j->id, s->model_id, j->created, &a), "application/json");
        return;
    }
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, k, NULL);
    if (!r)
        return;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no"); /* nginx: pass events on at once */
    if (MHD_queue_response(k->c, MHD_HTTP_OK, r) == MHD_YES) {
        metrics_count_status(&s->met, 200);
        k->answered = true;
        k->status = 200;
    }
    MHD_destroy_response(r);
}

/* Whether k's connection waits to be resumed, the flag cleared (with j->mu held; the resume itself
   comes after the lock: only the request thread resumes, and a suspended connection is neither read
   nor closed meanwhile). */
static bool take_suspension(struct conn *k)
{
    const bool was = k->suspended;
    k->suspended = false;
    return was;
}

/* A generation's own thread: the request started, then its first output (or end) waited for, the
   response queued, the connection resumed; for a stream, the connection resumed again at each output
   until the end. It watches the client meanwhile (a suspended connection's hang-up is seen by no one
   else) and cancels the job when it leaves. */
static void *request_main(void *arg)
{
    struct conn *k = arg;
    struct server *s = k->s;
    struct job *j = k->job;
    struct srv_error err = {0};
    const bool failed = start_job(k, &err) != 0;
    pthread_mutex_lock(&j->mu);
    /* an error found while feeding the prompt (context too small, an undecodable image) still gets its
       own status, not a 200 stream: wait for the first output or the end */
    while (!failed && !j->done && !(j->req.stream && (j->text_len || j->reasoning_len)))
        if (!wait_job(k))
            break;
    pthread_mutex_unlock(&j->mu);
    queue_answer(k, failed ? &err : NULL);
    pthread_mutex_lock(&j->mu);
    const bool resume = take_suspension(k), streaming = k->answered && j->req.stream && !failed;
    pthread_mutex_unlock(&j->mu);
    if (resume)
        MHD_resume_connection(k->c);
    pthread_mutex_lock(&j->mu);
    while (streaming) {
        const bool ended = k->closed || j->done || atomic_load(&j->cancelled);
        /* the reader suspends only when it has nothing to write: resumed at the next output or the end
           (its reader then writes the rest, or ends the stream of a client that left) */
        if ((ended || k->sent_text < j->text_len || k->sent_reasoning < j->reasoning_len) && !k->closed &&
            take_suspension(k)) {
            pthread_mutex_unlock(&j->mu);
            MHD_resume_connection(k->c);
            pthread_mutex_lock(&j->mu);
            continue;
        }
        if (ended)
            break;
        wait_job(k); /* the client leaving cancels the job: ended */
    }
    pthread_mutex_unlock(&j->mu);
    atomic_fetch_sub(&s->request_threads, 1);
    conn_release(k);
    return NULL;
}

static enum MHD_Result generate(struct conn *k)
{
    struct server *s = k->s;
    if (atomic_load(&s->request_threads) >= s->o->n_slots + s->o->max_queue + REQUEST_THREADS_STARTING)
        return fail(k, 503, "%s", "the server is busy: every slot and the queue are taken, try again later");
    struct job *j = job_new();
    if (!j)
        return fail(k, 503, "%s", "out of memory");
    k->job = j;
    atomic_fetch_add(&s->responding, 1); /* until on_completed: SIGTERM waits for the last byte */
    atomic_fetch_add(&k->refs, 1);
    atomic_fetch_add(&s->request_threads, 1);
    /* suspended before the thread starts: it may queue the answer and resume at once */
    k->suspended = true;
    MHD_suspend_connection(k->c);
    pthread_attr_t attr;
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    rc = rc ? rc : pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = rc ? rc : pthread_create(&t, &attr, request_main, k);
    pthread_attr_destroy(&attr);
    if (rc) {
        k->suspended = false;
        MHD_resume_connection(k->c);
        atomic_fetch_sub(&s->request_threads, 1);
        atomic_fetch_sub(&k->refs, 1);
        return fail(k, 503, "cannot start a thread for the request: %s", strerror(rc));
    }
    return MHD_YES;
}

/* ---- routing ---------------------------------------------------------------------------------- */

static enum route route_of(const char *url, bool *v1)
{
    static const struct {
        const char *path;
        enum route r;
        bool v1;
    } table[] = {
        {"/health", R_HEALTH, false},          {"/metrics", R_METRICS, false},
        {"/v1/models", R_MODELS, true},        {"/models", R_MODELS, true},
        {"/v1/chat/completions", R_CHAT, true}, {"/chat/completions", R_CHAT, true},
        {"/v1/completions", R_COMPLETION, true}, {"/completions", R_COMPLETION, true},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(url, table[i].path)) {
            *v1 = table[i].v1;
            return table[i].r;
        }
    *v1 = !strncmp(url, "/v1/", 4);
    return R_NONE;
}

/* The API key, compared in time independent of where it differs. */
static bool key_ok(const struct server *s, struct MHD_Connection *c)
{
    if (!s->o->api_key)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncmp(h, "Bearer ", 7))
        return false;
    const char *given = h + 7, *want = s->o->api_key;
    size_t gl = strlen(given), wl = strlen(want);
    unsigned diff = (unsigned)(gl ^ wl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)(i < gl ? given[i] : 0);
    return diff == 0;
}

static enum MHD_Result dispatch(struct conn *k)
{
    struct server *s = k->s;
    const int state = atomic_load(&s->state);
    if (k->body_status)
        return fail(k, k->body_status, "%s",
                    k->body_status == 413 ? "the request body is too large (seer serve --max-body)"
                                          : "the request body came too slowly (seer serve --timeout)");
    switch (k->route) {
    case R_HEALTH:
        if (state != STATE_READY) {
            struct srv_error err = {0};
            srv_fail(&err, 503, NULL, state == STATE_LOADING ? "loading the model" : "shutting down");
            return send_error(k, &err);
        }
        return send_body(k, 200, strdup("{\"status\":\"ok\"}"), "application/json");
    case R_METRICS: {
        int64_t bytes = 0, entries = 0;
        if (state == STATE_READY)
            cache_stats(engine_cache(s->e), &bytes, &entries);
        return send_body(k, 200, metrics_text(&s->met, bytes, entries), "text/plain; version=0.0.4");
    }
    default:
        break;
    }
    if (state != STATE_READY)
        return fail(k, 503, "%s", state == STATE_LOADING ? "loading the model" : "shutting down");
    if (k->route == R_MODELS)
        return send_body(k, 200, srv_models_body(s->model_id, s->created, s->vision, s->o->cp.n_ctx),
                         "application/json");
    return generate(k);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct server *s = cls;
    struct conn *k = *con_cls;
    (void)version;
    if (!k) { /* headers read: route, method, key and declared size checked before any body */
        if (!(k = calloc(1, sizeof *k)))
            return MHD_NO;
        *con_cls = k;
        k->s = s, k->c = c, k->t_start = cli_time_now();
        atomic_init(&k->refs, 1);
        bool v1;
        k->route = route_of(url, &v1);
        k->post = !strcmp(method, "POST");
        const bool want_post = k->route == R_CHAT || k->route == R_COMPLETION;
        if (k->route == R_NONE)
            return fail(k, 404, "no such endpoint: %s", url);
        if (k->post != want_post || (!k->post && strcmp(method, "GET") && strcmp(method, "HEAD")))
            return fail(k, 405, "%s: method not allowed here", method);
        if (v1 && !key_ok(s, c)) {
            struct srv_error err = {0};
            srv_fail(&err, 401, NULL, "a missing or wrong API key: send Authorization: Bearer KEY");
            snprintf(err.code, sizeof err.code, "invalid_api_key");
            return send_error(k, &err);
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->o->max_body)
            k->body_status = 413;
        return MHD_YES;
    }
    if (k->answered)
        return MHD_YES; /* answered early (404, 401 …): the rest of the body is read and dropped */
    if (k->job)
        return MHD_NO; /* resumed with no answer: the client left while it was generated */
    if (*upload_size) {
        if (!k->body_status && cli_time_now() - k->t_start > (s->o->timeout > 0 ? s->o->timeout : 600))
            k->body_status = 408;
        if (!k->body_status && k->n + *upload_size > s->o->max_body)
            k->body_status = 413;
        if (!k->body_status) {
            if (k->n + *upload_size + 1 > k->cap) {
                size_t cap = k->cap ? k->cap : 4096;
                while (cap < k->n + *upload_size + 1)
                    cap *= 2;
                char *b = realloc(k->body, cap);
                if (!b)
                    return MHD_NO;
                k->body = b, k->cap = cap;
            }
            memcpy(k->body + k->n, upload, *upload_size);
            k->n += *upload_size;
            k->body[k->n] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(k);
}

static const char *route_path(enum route r)
{
    static const char *const paths[] = {
        [R_NONE] = "-", [R_HEALTH] = "/health", [R_METRICS] = "/metrics", [R_MODELS] = "/v1/models",
        [R_CHAT] = "/v1/chat/completions", [R_COMPLETION] = "/v1/completions",
    };
    return paths[r];
}

/* One line per request on stderr, as operators read a server's log (docs/SERVING.md "Logs"): the
   status, the route, the time from the request to the last byte, and for a generation the time to
   its first token and its token counts; an error's message. Probes and scrapes (/health, /metrics)
   only with -v; nothing with -q. */
static void log_request(const struct conn *k, bool cut)
{
    const bool probe = k->route == R_HEALTH || k->route == R_METRICS;
    if (cli_log_level < (probe ? SEER_LOG_INFO : SEER_LOG_WARN))
        return;
    /* a stream cut before its end, or a request whose client left unanswered: 499, as /metrics counts it */
    const int status = cut || !k->status ? 499 : k->status;
    char usage[200] = "";
    struct job *j = k->job;
    if (j) { /* a reply cut short may still be running: its fields under its lock */
        pthread_mutex_lock(&j->mu);
        if (j->done && j->http_status == 200)
            snprintf(usage, sizeof usage, ", first token %.2f s, prompt %lld (cached %lld), generated %lld",
                     j->t_first > 0 ? j->t_first - j->t_submit : 0.0, (long long)j->usage.prompt_tokens,
                     (long long)j->usage.cached_tokens, (long long)j->usage.completion_tokens);
        pthread_mutex_unlock(&j->mu);
    }
    fprintf(stderr, "seer serve: %d %s %.2f s%s%s%s\n", status, route_path(k->route), cli_time_now() - k->t_start,
            usage, k->why[0] ? ": " : "", k->why);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    struct conn *k = *con_cls;
    (void)cls, (void)c;
    if (!k)
        return;
    /* A stream cut before its end (the client left, or a write failed) was counted 200 when it
       began; count it as cancelled too, or /metrics never shows clients leaving streams. */
    const bool cut = k->job && k->answered && k->job->req.stream &&
                     (why != MHD_REQUEST_TERMINATED_COMPLETED_OK || !k->sent_end);
    log_request(k, cut);
    if (k->job) {
        if (cut)
            metrics_count_status(&k->s->met, 499);
        pthread_mutex_lock(&k->job->mu);
        k->closed = true; /* the request thread leaves k->c alone from here */
        pthread_mutex_unlock(&k->job->mu);
        atomic_store(&k->job->cancelled, true); /* a no-op once it is done */
        pthread_cond_broadcast(&k->job->cv);    /* its request thread need not wait out its 200 ms */
        atomic_fetch_sub(&k->s->responding, 1);
    }
    *con_cls = NULL;
    conn_release(k);
}

/* ---- the process ------------------------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const char *b = path + n;
    while (b > path && b[-1] != '/')
        b--;
    return b;
}

/* Connections at once: as many as the open-file limit allows, raised to its hard maximum, less room
   for the model's files, the cache's and libcurl's. Idle ones cost a socket and a buffer
   (MHD_OPTION_CONNECTION_MEMORY_LIMIT), no thread. */
static unsigned connection_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r))
        return 256;
    if (r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
        getrlimit(RLIMIT_NOFILE, &r);
    }
    const rlim_t room = r.rlim_cur > 128 + 64 ? r.rlim_cur - 128 : 64;
    return room < 65536 ? (unsigned)room : 65536;
}

/* --host as a socket address (numeric only: a server binds an address, it does not resolve one). */
static int listen_address(const char *host, int port, struct sockaddr_storage *out)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    if (getaddrinfo(host, portstr, &hints, &res) || !res)
        return -1;
    memset(out, 0, sizeof *out);
    memcpy(out, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int serve_run(const struct serve_options *o)
{
    static struct server srv; /* the one server of this process; its threads read it until the end */
    struct server *s = &srv;
    sigset_t sigs;
    int sig = 0, rc = 1;
    s->o = o;
    s->lim = srv_limits_default();
    s->created = (int64_t)time(NULL);
    s->model_id = o->alias ? strdup(o->alias) : strndup(base_name(o->model_path), strcspn(base_name(o->model_path), "/"));
    /* SIGTERM and SIGINT are taken by sigwait below: blocked in every thread made from here */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    struct sockaddr_storage addr;
    if (listen_address(o->host, o->port, &addr)) {
        fprintf(stderr, "seer serve: --host %s: not an IPv4 or IPv6 address\n", o->host);
        goto out;
    }
    s->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                                (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
                            (uint16_t)o->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, &addr,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_POLL_THREADS, MHD_OPTION_CONNECTION_LIMIT,
                            connection_limit(), MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)(o->timeout > 0 ? o->timeout : 600), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)256 * 1024, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d) {
        fprintf(stderr, "seer serve: cannot listen on %s:%d: %s\n", o->host, o->port, strerror(errno));
        goto out;
    }
    fprintf(stderr, "seer serve: listening on http://%s:%d (loading %s)\n", o->host, o->port, o->model_path);
    int lrc = seer_model_load(o->model_path, &o->mp, &s->m);
    if (lrc) {
        fprintf(stderr, "seer: %s\n", seer_last_error());
        goto out;
    }
    seer_image_info probe;
    s->vision = seer_image_measure(s->m, &(seer_image_input){.rgb = (const uint8_t[3]){0}, .width = 1, .height = 1},
                                   &probe) == SEER_OK;
    if ((lrc = engine_create(s->m, o, &s->met, &s->e))) {
        fprintf(stderr, "seer: %s\n", seer_last_error());
        goto out;
    }
    atomic_store(&s->state, STATE_READY);
    fprintf(stderr, "seer serve: ready: %s on %s, %d slots of %lld tokens\n", s->model_id, seer_model_device(s->m),
            o->n_slots, (long long)o->cp.n_ctx);
    sigwait(&sigs, &sig);
    /* Stop: no new connections (a balancer's retry goes to another server), requests in flight
       finish within the grace period, then the rest are cancelled. */
    fprintf(stderr, "seer serve: %s: finishing requests in flight (at most %d s)\n", strsignal(sig), o->grace);
    atomic_store(&s->state, STATE_STOPPING);
    MHD_socket ls = MHD_quiesce_daemon(s->d);
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
    /* + 1 s: requests the grace period cut short still get their last event and [DONE] written */
    const double deadline = cli_time_now() + o->grace + 1;
    engine_stop(s->e, o->grace);
    /* The engine's jobs are finished, but their connections may still be writing the last events
       or the body: MHD_stop_daemon below would cut those connections (a stream lost its tail and
       [DONE]), so wait for them. Idle keep-alive connections hold no job and do not delay the exit. */
    while ((atomic_load(&s->responding) > 0 || atomic_load(&s->request_threads) > 0) && cli_time_now() < deadline)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    rc = 0;
    if (atomic_load(&s->request_threads) > 0) {
        /* a request thread still running past the grace period (a remote fetch within --timeout) may
           hold a suspended connection, which MHD_stop_daemon must not meet, and may yet submit to the
           engine: the process exits with them, freeing nothing */
        fprintf(stderr, "seer serve: %d requests still starting after the grace period: left to the exit\n",
                atomic_load(&s->request_threads));
        return rc;
    }
out:
    if (s->d)
        MHD_stop_daemon(s->d); /* waits for its polling threads */
    engine_free(s->e);     /* only now: a request thread may have submitted to it until here */
    seer_model_free(s->m);
    curl_global_cleanup();
    free(s->model_id);
    return rc;
}
