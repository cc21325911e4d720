/* strtab.c — see strtab.h. Linear probing over a power-of-two table kept at most half full,
   slots chosen by SipHash-1-3 (Aumasson & Bernstein) under a per-table random key. */
#define _DEFAULT_SOURCE
#include "core/strtab.h"

#include <string.h>
#include <sys/random.h>

#include "core/util.h"
#include "seer.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
    v[0] += v[1], v[1] = ROTL(v[1], 13), v[1] ^= v[0], v[0] = ROTL(v[0], 32);
    v[2] += v[3], v[3] = ROTL(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = ROTL(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = ROTL(v[1], 17), v[1] ^= v[2], v[2] = ROTL(v[2], 32);
}

/* SipHash-1-3: one compression round per 8-byte word, three finalisation rounds (the variant
   Rust's HashMap uses against hash flooding). */
uint64_t strtab_hash(const uint64_t key[2], const void *p, size_t n)
{
    const char *s = p;
    uint64_t v[4] = {key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
                     key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m;
        memcpy(&m, s + i, 8); /* little-endian hosts only, like the readers (gguf.c) */
        v[3] ^= m;
        sip_round(v);
        v[0] ^= m;
    }
    uint64_t last = (uint64_t)n << 56;
    for (size_t k = 0; i + k < n; k++)
        last |= (uint64_t)(uint8_t)s[i + k] << (8 * k);
    v[3] ^= last;
    sip_round(v);
    v[0] ^= last;
    v[2] ^= 0xff;
    sip_round(v);
    sip_round(v);
    sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* A fresh key per table. getrandom only fails before the kernel's pool is seeded or under a
   seccomp filter; the clock and an address still differ between runs, which is all the
   defence needs (an attacker must not predict the key when writing the file). */
void strtab_new_key(uint64_t key[2])
{
    if (getrandom(key, 2 * sizeof key[0], GRND_NONBLOCK) == (ssize_t)(2 * sizeof key[0]))
        return;
    double t = seer_time_now();
    memcpy(&key[0], &t, sizeof t);
    key[1] = (uint64_t)(uintptr_t)key ^ 0x9E3779B97F4A7C15ull;
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
    strtab_new_key(t->key);
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
    for (size_t i = strtab_hash(t->key, key, strlen(key)) & t->mask;; i = (i + 1) & t->mask) {
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
    for (size_t i = strtab_hash(t->key, key, strlen(key)) & t->mask;; i = (i + 1) & t->mask) {
        if (!t->slots[i].key)
            return -1;
        if (!strcmp(t->slots[i].key, key))
            return t->slots[i].idx;
    }
}
