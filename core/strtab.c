/* strtab.c — see strtab.h. Linear probing over a power-of-two table kept at most half full. */
#include "core/strtab.h"

#include <string.h>

#include "core/util.h"
#include "seer.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

bool strtab_init(struct strtab *t, size_t n)
{
    size_t cap = 16, want;
    t->slots = NULL;
    t->mask = 0;
    if (!size_mul(n, 2, &want))
        return false;
    while (cap < want) {
        if (cap > SIZE_MAX / 2)
            return false;
        cap *= 2;
    }
    size_t bytes;
    if (!size_mul(cap, sizeof *t->slots, &bytes))
        return false;
    t->slots = seer_calloc(cap, sizeof *t->slots);
    if (!t->slots)
        return false;
    t->mask = cap - 1;
    return true;
}

void strtab_deinit(struct strtab *t)
{
    seer_free(t->slots);
    t->slots = NULL;
    t->mask = 0;
}

int64_t strtab_insert(struct strtab *t, const char *key, int64_t idx)
{
    ASSERT1(t->slots);
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
        if (!t->slots[i].key) {
            t->slots[i].key = key;
            t->slots[i].idx = idx;
            return idx;
        }
        if (!strcmp(t->slots[i].key, key))
            return t->slots[i].idx;
    }
}

int64_t strtab_find(const struct strtab *t, const char *key)
{
    if (!t->slots)
        return -1;
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
        if (!t->slots[i].key)
            return -1;
        if (!strcmp(t->slots[i].key, key))
            return t->slots[i].idx;
    }
}
