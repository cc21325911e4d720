/* cache.c — the prefix cache of `seer serve` (server/server.h, docs/SERVING.md "Prefix cache"):
   seer_snapshots keyed by a 128-bit hash of the conversation prefix they hold, kept while their
   bytes fit the --cache-ram budget, the least recently used evicted first. A few hundred entries
   at most (each holds a whole prompt's state), so a list scanned in full is simpler than a map and
   costs nothing beside a restore. Restores run under the lock: an entry cannot be evicted while it
   is copied, and restores are memory copies of a few MiB. */
#include <stdlib.h>

#include "server/server.h"

struct entry {
    struct cache_key key;
    seer_snapshot *snap;
    size_t bytes;
    unsigned long long used; /* the clock when last put or restored */
    struct entry *next;
};

struct prefix_cache {
    pthread_mutex_t mu;
    int64_t budget, bytes, entries;
    unsigned long long clock;
    struct entry *head;
};

prefix_cache *cache_create(int64_t budget)
{
    prefix_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->budget = budget;
    return c;
}

void cache_free(prefix_cache *c)
{
    if (!c)
        return;
    for (struct entry *e = c->head, *next; e; e = next) {
        next = e->next;
        seer_snapshot_free(e->snap);
        free(e);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static bool key_eq(struct cache_key x, struct cache_key y)
{
    return x.a == y.a && x.b == y.b;
}

static struct entry *find(prefix_cache *c, struct cache_key key)
{
    for (struct entry *e = c->head; e; e = e->next)
        if (key_eq(e->key, key))
            return e;
    return NULL;
}

/* Evicts least recently used entries until `need` more bytes fit. */
static void make_room(prefix_cache *c, int64_t need)
{
    while (c->head && c->bytes + need > c->budget) {
        struct entry **victim = &c->head;
        for (struct entry **p = &c->head; *p; p = &(*p)->next)
            if ((*p)->used < (*victim)->used)
                victim = p;
        struct entry *e = *victim;
        *victim = e->next;
        c->bytes -= (int64_t)e->bytes;
        c->entries--;
        seer_snapshot_free(e->snap);
        free(e);
    }
}

void cache_put(prefix_cache *c, struct cache_key key, seer_snapshot *snap)
{
    const size_t bytes = seer_snapshot_bytes(snap);
    pthread_mutex_lock(&c->mu);
    struct entry *e = find(c, key);
    if (e || (int64_t)bytes > c->budget || !(e = calloc(1, sizeof *e))) {
        if (e)
            e->used = ++c->clock;
        pthread_mutex_unlock(&c->mu);
        seer_snapshot_free(snap);
        return;
    }
    make_room(c, (int64_t)bytes);
    *e = (struct entry){key, snap, bytes, ++c->clock, c->head};
    c->head = e;
    c->bytes += (int64_t)bytes;
    c->entries++;
    pthread_mutex_unlock(&c->mu);
}

int cache_restore_longest(prefix_cache *c, const struct cache_key *keys, size_t n, seer_context *ctx,
                          int64_t *tokens)
{
    int hit = -1;
    pthread_mutex_lock(&c->mu);
    for (size_t i = n; i-- > 0 && hit < 0;) {
        struct entry *e = find(c, keys[i]);
        if (!e)
            continue;
        if (seer_context_restore(ctx, e->snap) != SEER_OK) {
            seer_context_reset(ctx);
            break;
        }
        e->used = ++c->clock;
        *tokens = seer_snapshot_tokens(e->snap);
        hit = (int)i;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void cache_stats(prefix_cache *c, int64_t *bytes, int64_t *entries)
{
    *bytes = *entries = 0;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    *bytes = c->bytes;
    *entries = c->entries;
    pthread_mutex_unlock(&c->mu);
}
