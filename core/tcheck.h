/* tcheck.h — checking a checkpoint's tensor table against what its config implies, shared by the
   text (lm/config.c) and vision (vision/config.c) checks: tensor names are printf-formatted,
   each expectation goes to weights_expect, and the first failure sticks, so a table reads as a
   flat list of expectations with one error check at the end. */
#ifndef SEER_CORE_TCHECK_H
#define SEER_CORE_TCHECK_H

#include "core/error.h"
#include "core/weights.h"

struct tcheck {
    const struct weights *w;
    int rc;         /* SEER_OK until the first failed expectation; its code afterwards */
    char name[256]; /* the last formatted name */
};

/* Formats a tensor name into c->name and returns it. */
const char *tcheck_name(struct tcheck *c, const char *fmt, ...) SEER_PRINTF(2, 3);
/* Expects tensor `name` with shape[0..rank) in the file's own order and WEIGHTS_* flags (see
   weights_expect). Does nothing once an expectation has failed. */
void tcheck_want(struct tcheck *c, const char *name, unsigned flags, int rank, const int64_t *shape);

/* A config's expectations for one checkpoint form; cfg is the reader's own config struct. */
typedef void tcheck_table_fn(struct tcheck *c, const void *cfg);
/* Checks w against cfg with the table for its form (gguf_table for a GGUF file, hf_table for a
   Hugging Face checkpoint: names and dimension orders differ); SEER_OK or the first failure's code. */
int tcheck_run(const struct weights *w, const void *cfg, tcheck_table_fn *gguf_table, tcheck_table_fn *hf_table);

#endif
