/* metrics.c — /metrics in Prometheus' text exposition format 0.0.4 (server/server.h): counters the
   HTTP side and the engine bump with atomics, read here without a lock (each value is
   consistent on its own, which is all a scrape promises). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "server/server.h"

void metrics_count_status(struct metrics *m, int s)
{
    int k = s == 499 ? M_CANCELLED : s < 300 ? M_2XX : s == 429 || s == 503 ? M_BUSY : s < 500 ? M_4XX : M_5XX;
    atomic_fetch_add(&m->requests[k], 1);
    atomic_fetch_add(&m->requests[M_ALL], 1);
}

char *metrics_text(const struct metrics *m, int64_t cache_bytes, int64_t cache_entries)
{
    static const char *const cls[] = {"2xx", "4xx", "busy", "5xx", "cancelled"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "# HELP seer_requests_total HTTP requests answered, by status class (busy: 429 and 503; "
               "cancelled: the client left first).\n# TYPE seer_requests_total counter\n");
    for (int k = 0; k < M_ALL; k++)
        fprintf(f, "seer_requests_total{status=\"%s\"} %lld\n", cls[k], (long long)atomic_load(&m->requests[k]));
    const double prefill_s = (double)atomic_load(&m->prefill_ns) * 1e-9;
    const double decode_s = (double)atomic_load(&m->decode_ns) * 1e-9;
    const long long prompt = atomic_load(&m->prompt_tokens), gen = atomic_load(&m->generated_tokens);
    struct {
        const char *name, *type, *help;
        double value;
    } rows[] = {
        {"prompt_tokens_total", "counter", "Prompt tokens fed to the model (not those served from the cache).", (double)prompt},
        {"prompt_tokens_cached_total", "counter", "Prompt tokens restored from the prefix cache.",
         (double)atomic_load(&m->cached_tokens)},
        {"tokens_generated_total", "counter", "Tokens generated.", (double)gen},
        {"prompt_seconds_total", "counter", "Seconds spent feeding prompts (media encoding included).", prefill_s},
        {"decode_seconds_total", "counter", "Seconds spent in decode steps.", decode_s},
        {"prompt_tokens_per_second", "gauge", "prompt_tokens_total / prompt_seconds_total.",
         prefill_s > 0 ? (double)prompt / prefill_s : 0},
        {"decode_tokens_per_second", "gauge", "tokens_generated_total / decode_seconds_total (all slots together).",
         decode_s > 0 ? (double)gen / decode_s : 0},
        {"cache_hits_total", "counter", "Requests that restored a cached prefix.", (double)atomic_load(&m->cache_hits)},
        {"cache_misses_total", "counter", "Requests that found no cached prefix.", (double)atomic_load(&m->cache_misses)},
        {"cache_bytes", "gauge", "Host memory held by the prefix cache.", (double)cache_bytes},
        {"cache_entries", "gauge", "Snapshots in the prefix cache.", (double)cache_entries},
        {"requests_queued", "gauge", "Requests waiting for a slot.", (double)atomic_load(&m->queued)},
        {"slots_busy", "gauge", "Slots feeding or decoding a request.", (double)atomic_load(&m->busy_slots)},
        {"slots", "gauge", "Slots (seer serve -np).", (double)atomic_load(&m->n_slots)},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "# HELP seer_%s %s\n# TYPE seer_%s %s\nseer_%s %.17g\n", rows[i].name, rows[i].help, rows[i].name,
                rows[i].type, rows[i].name, rows[i].value);
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}
