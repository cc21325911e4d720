/* strtab.h — a string → index hash table (open addressing) used by the model-file readers to
   find keys and tensors by name and to reject duplicate names in O(n). Names come from hostile
   files, so the hash is keyed with a random key drawn per table (SipHash-1-3): names cannot be
   chosen to collide, which an unkeyed hash (FNV-1a) allowed — 65,536 crafted GGUF keys made a
   load 370× slower. The table borrows the key strings: they must outlive it. */
#ifndef SEER_CORE_STRTAB_H
#define SEER_CORE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strtab_slot {
    const char *key; /* NULL: empty slot */
    int64_t idx;
};

struct strtab {
    struct strtab_slot *slots;
    size_t mask;     /* capacity − 1 (capacity is a power of two) */
    uint64_t key[2]; /* SipHash key, random per table */
};

/* Sizes the table for up to n entries (load ≤ 1/2). False on overflow or out of memory (the
   caller sets the message). An initialised empty table (n = 0) is valid. */
bool strtab_init(struct strtab *t, size_t n);
void strtab_deinit(struct strtab *t);
/* Inserts key → idx and returns idx, or returns the index already stored under key (the caller
   reports the duplicate). The table must have been sized for every insert. */
int64_t strtab_insert(struct strtab *t, const char *key, int64_t idx);
/* The index stored under key, or −1. */
int64_t strtab_find(const struct strtab *t, const char *key);

/* The keyed hash itself, for other tables indexed by hostile strings (the tokenizer's). */
void strtab_new_key(uint64_t key[2]);
uint64_t strtab_hash(const uint64_t key[2], const void *s, size_t n);

#endif
