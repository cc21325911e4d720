/* snapshot.h — a context's whole state copied to host memory and back (api/snapshot.c): the public
   seer_context_save / seer_context_restore, and the rollback seer_chat_feed takes before it feeds. */
#ifndef SEER_API_SNAPSHOT_H
#define SEER_API_SNAPSHOT_H

#include <stdbool.h>

#include "seer.h"

/* Copies c's state to host memory: the recurrent and conv state, positions, logits, pending and fed
   tokens, history and fed text, and with `kv` the KV rows in use. Without `kv` it is a rollback
   point for c alone: api_snapshot_put then leaves the KV cache as it is (rows past the saved n_past
   are never read again) and only the cheap part (no KV rows) is copied. */
int api_snapshot_take(const seer_context *c, bool kv, seer_snapshot **out);
/* A rollback point (no KV rows) of c at a mark inside its last feed (qwen35_eval_mark): the recurrent
   half and positions from rec, the logits given, no pending token, c's first n_fed fed ids, the
   rendered text given, c's history. c's turn point (seer_context.turn) is taken this way when the
   messages and the assistant's opening go in one pass. */
int api_snapshot_take_mark(const seer_context *c, const qwen35_state *rec, const float *logits, size_t n_fed,
                           const char *text, size_t len, seer_snapshot **out);
/* How many fed ids s holds (the context's first ones then). */
size_t api_snapshot_fed(const seer_snapshot *s);
/* Makes c what it was when s was taken (s from this model; for a snapshot without KV rows, from c
   itself, whose queued images and videos are then kept). Checks nothing; on failure c is reset (the
   state may be half written). */
int api_snapshot_put(seer_context *c, const seer_snapshot *s);
/* api_snapshot_put of a rollback point that keeps c's history and queued media as they are: the
   state goes back to s, the messages added since stay (seer_context.turn). */
int api_snapshot_rewind(seer_context *c, const seer_snapshot *s);
/* The rendered text the state held when s was taken (*len bytes; NULL when none), and its pending
   tokens: what a measure counts from a rollback point without putting it. */
const char *api_snapshot_text(const seer_snapshot *s, size_t *len);
size_t api_snapshot_pending(const seer_snapshot *s);

#endif
