/* serve.c — `seer serve`: the command line of the OpenAI-compatible server (server/server.h,
   docs/SERVING.md). Flags are spelled as llama-server spells them (--host, --port, -np, -c,
   --api-key, --api-key-file, --media-path, --cache-ram, --timeout, -a/--alias); the model, device
   and sampling defaults are the other subcommands' (cli/options.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/util.h"
#include "seer.h"
#include "server/server.h"

enum {
    S_HOST = 1, S_PORT, S_SLOTS, S_API_KEY, S_API_KEY_FILE, S_MEDIA_PATH, S_REMOTE, S_CACHE_RAM, S_TIMEOUT,
    S_GRACE, S_ALIAS, S_MMPROJ, S_QUEUE, S_MAX_BODY, S_MAX_MEDIA, S_HELP
};

static const struct cli_opt serve_opts_table[] = {
    {{"--host"}, "ADDR", "address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface)", S_HOST},
    {{"--port"}, "N", "port (default 8080)", S_PORT},
    {{"-np", "--parallel"}, "N", "slots: requests decoded together (default 4)", S_SLOTS},
    {{"--api-key"}, "KEY", "require Authorization: Bearer KEY on /v1/ (default: none)", S_API_KEY},
    {{"--api-key-file"}, "FILE", "... the key read from FILE's first line (keeps it off the process list)", S_API_KEY_FILE},
    {{"--media-path"}, "DIR", "file:// media are read only inside DIR (default: refused)", S_MEDIA_PATH},
    {{"--allow-remote-media"}, NULL, "fetch http(s) image and video URLs (default: refused)", S_REMOTE},
    {{"--cache-ram"}, "MiB", "prefix cache size in MiB (default 2048; 0 = no cache)", S_CACHE_RAM},
    {{"-to", "--timeout"}, "S", "seconds a connection may idle or a body take; remote fetch limit (default 600)", S_TIMEOUT},
    {{"--grace"}, "S", "on SIGTERM, seconds to finish requests in flight (default 30)", S_GRACE},
    {{"-a", "--alias"}, "NAME", "the model's id in responses (default: the model file's name)", S_ALIAS},
    {{"--mmproj"}, "FILE", "the vision projector of a GGUF text model (default: the one mmproj*.gguf beside it)", S_MMPROJ},
    {{"--max-queue"}, "N", "requests waiting for a slot before 503 (default 64)", S_QUEUE},
    {{"--max-body"}, "MiB", "largest request body (default 64)", S_MAX_BODY},
    {{"--max-media-bytes"}, "MiB", "largest image or video in a request (default 64)", S_MAX_MEDIA},
    {{"-h", "--help"}, NULL, "this help", S_HELP},
};
#define N_SERVE_OPTS (sizeof serve_opts_table / sizeof serve_opts_table[0])

struct serve_cmd {
    struct gen_opts g;
    struct serve_options s;
    char *key_buf;
};

/* The first line of --api-key-file, kept for the process's life. */
static int read_key(struct serve_cmd *c, const char *path)
{
    char *text;
    size_t len;
    if (cli_read_file(path, &text, &len))
        return fprintf(stderr, "seer serve: %s\n", cli_last_error()), -1;
    text[strcspn(text, "\r\n")] = '\0';
    if (!*text) {
        free(text);
        return fprintf(stderr, "seer serve: --api-key-file %s: the first line is empty\n", path), -1;
    }
    free(c->key_buf);
    c->key_buf = text;
    c->s.api_key = text;
    return 0;
}

static int own_opt(const struct cli_opt *opt, const char *v, void *user)
{
    struct serve_cmd *c = user;
    struct serve_options *s = &c->s;
    long long x = 0;
    if (!opt)
        return fprintf(stderr, "seer serve: unexpected argument '%s' (see seer serve --help)\n", v), CLI_USAGE;
    const char *nm = opt->name[0];
    static const struct {
        int key;
        long long lo, hi;
    } ranges[] = {
        {S_PORT, 0, 65535}, {S_SLOTS, 1, SEER_BATCH_MAX}, {S_CACHE_RAM, 0, (long long)1 << 30},
        {S_TIMEOUT, 1, 86400}, {S_GRACE, 0, 86400}, {S_QUEUE, 1, 1 << 20},
        {S_MAX_BODY, 1, 1 << 16}, {S_MAX_MEDIA, 1, 1 << 16},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (ranges[i].key == opt->key && cli_count_opt("serve", nm, v, ranges[i].lo, ranges[i].hi, &x))
            return CLI_USAGE;
    switch (opt->key) {
    case S_HOST: s->host = v; break;
    case S_PORT: s->port = (int)x; break;
    case S_SLOTS: s->n_slots = (int)x; break;
    case S_API_KEY: s->api_key = v; break;
    case S_API_KEY_FILE:
        if (read_key(c, v))
            return CLI_USAGE;
        break;
    case S_MEDIA_PATH: s->media_path = v; break;
    case S_REMOTE: s->allow_remote_media = true; break;
    case S_CACHE_RAM: s->cache_ram = (int64_t)x << 20; break;
    case S_TIMEOUT: s->timeout = (int)x; break;
    case S_GRACE: s->grace = (int)x; break;
    case S_ALIAS: s->alias = v; break;
    case S_MMPROJ: c->g.mp.mmproj = v; break;
    case S_QUEUE: s->max_queue = (int)x; break;
    case S_MAX_BODY: s->max_body = (size_t)x << 20; break;
    case S_MAX_MEDIA: s->max_media_bytes = (size_t)x << 20; break;
    case S_HELP:
        printf("usage: seer serve -m MODEL [--mmproj FILE] [--host ADDR] [--port N] [-np N] [-c N] [options]\n"
               "  An OpenAI-compatible HTTP server: POST /v1/chat/completions, /v1/completions; GET /v1/models,\n"
               "  /health, /metrics (docs/SERVING.md). -c is each slot's context; sampling flags are the\n"
               "  defaults for fields a request leaves out. SIGTERM finishes requests in flight, then exits 0.\n");
        cli_opt_help(stdout, serve_opts_table, N_SERVE_OPTS);
        printf("%s", gen_help);
        return CLI_OK;
    }
    return GEN_NEXT;
}

int cli_serve(int argc, char **argv)
{
    struct serve_cmd c = {0};
    gen_opts_init(&c.g);
    c.s = (struct serve_options){.host = "127.0.0.1", .port = 8080, .n_slots = 4, .max_queue = 64,
                                 .max_body = (size_t)64 << 20, .max_media_bytes = (size_t)64 << 20,
                                 .cache_ram = (int64_t)2048 << 20, .timeout = 600, .grace = 30};
    int status = gen_parse_args("serve", serve_opts_table, N_SERVE_OPTS, false, argc, argv, &c.g, own_opt, &c);
    if (status != GEN_NEXT)
        goto out;
    if (!c.g.model) {
        status = cli_no_model("serve");
        goto out;
    }
    if (cli_model_arg(c.g.model, &c.s.model_path)) {
        status = CLI_FAIL;
        goto out;
    }
    c.s.mp = c.g.mp;
    c.s.cp = c.g.cp;
    c.s.gp = c.g.gp;
    c.s.gp.n_stop = 0; /* stops are per request */
    c.s.fixed_seed = c.g.seed_given;
    if (c.s.cp.n_ctx == 0) {
        /* each slot's context must be known to check requests against it */
        fprintf(stderr, "seer serve: -c 0 is not supported: give each slot's context in tokens\n");
        status = CLI_USAGE;
        goto out;
    }
    status = serve_run(&c.s);
out:
    free(c.key_buf);
    return status;
}
