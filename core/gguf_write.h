/* gguf_write.h — writer of GGUF v3 files (the format core/gguf.h reads; facts from ggml's GGUF
   spec): metadata of every value type and arrays of them, tensor infos, general.alignment, and
   tensor data streamed in the order the tensors were declared, so a multi-gigabyte model never has
   to be in memory at once. The file appears atomically: everything goes to a temporary file in the
   destination's directory, which is renamed over `path` only by a successful gguf_writer_finish;
   any failure (or gguf_writer_free before finish) removes it, so no partial output file is left.

   Usage:
       gguf_writer *w;  gguf_writer_create(&w);
       gguf_writer_add_str(w, "general.architecture", "qwen35");  ... more metadata ...
       gguf_writer_add_tensor(w, "token_embd.weight", DT_Q8_0, 2, ne);  ... more infos ...
       gguf_writer_begin(w, path);                 // header written, data section opened
       gguf_writer_write(w, bytes, n);  ...         // each tensor's bytes, in declaration order,
                                                    // in as many pieces as the caller likes
       gguf_writer_finish(w);  gguf_writer_free(w);
   Metadata and tensors must all be declared before begin. Keys and tensor names are 1..65536
   bytes without NUL and unique; shapes have 1..4 dims, each ≥ 1, ne[0] a whole number of blocks.
   Errors: SEER_EINVAL (misuse: duplicate key, bad shape, writing past a tensor, finishing early),
   SEER_EIO (create/write/rename failed: message names the path and errno text), SEER_ENOMEM.
   A failed declaration changes nothing. A failure from begin/write/finish fails the writer: the
   temporary file is removed at once and later calls return SEER_EINVAL.
   Not thread-safe: one thread drives a writer. */
#ifndef SEER_CORE_GGUF_WRITE_H
#define SEER_CORE_GGUF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gguf.h"
#include "core/tensor.h"

typedef struct gguf_writer gguf_writer;

int gguf_writer_create(gguf_writer **out);
/* Removes the temporary file if the writer was not finished. NULL is fine. */
void gguf_writer_free(gguf_writer *w);

/* Data alignment (a power of two, 1..2^30; default 32). A value other than 32 is also written as
   the u32 key general.alignment, as the format requires. Call before declaring tensors. */
int gguf_writer_set_alignment(gguf_writer *w, size_t alignment);

/* ---- metadata (stored in call order) ------------------------------------------------------- */
/* A scalar of any non-string, non-array type; `value` points at a host value of that type
   (uint8_t, int8_t, … double; bool for GGUF_TYPE_BOOL). */
int gguf_writer_add_scalar(gguf_writer *w, const char *key, enum gguf_type type, const void *value);
int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v);
int gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v);
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v);
int gguf_writer_add_bool(gguf_writer *w, const char *key, bool v);
/* A string of `len` bytes (may hold any bytes but NUL is allowed only through this form). */
int gguf_writer_add_strn(gguf_writer *w, const char *key, const char *s, size_t len);
int gguf_writer_add_str(gguf_writer *w, const char *key, const char *s);
/* An array of n scalars of elem_type, from a host array of that type (bool[] for BOOL). */
int gguf_writer_add_array(gguf_writer *w, const char *key, enum gguf_type elem_type, uint64_t n,
                          const void *data);
/* An array of n strings; len == NULL means each s[i] is NUL-terminated. */
int gguf_writer_add_str_array(gguf_writer *w, const char *key, uint64_t n, const char *const *s,
                              const size_t *len);

/* The metadata entries declared so far, encoded as the file stores them (each key as a GGUF
   string, its type id, its value), in call order; valid until the next call on w. Test fixtures
   that assemble (and corrupt) files byte by byte take their values from here, so the encoding is
   written once. */
const uint8_t *gguf_writer_kv_bytes(const gguf_writer *w, size_t *len);

/* ---- tensors ------------------------------------------------------------------------------- */
/* Declares a tensor: name, dtype (F32 F16 BF16 Q8_0 Q4_0 Q4_K Q5_K Q6_K; not I32), n_dims ne
   values in ggml order. Its data offset is the previous tensor's end rounded up to the alignment. */
int gguf_writer_add_tensor(gguf_writer *w, const char *name, enum dtype type, int n_dims, const int64_t *ne);
int64_t gguf_writer_n_tensors(const gguf_writer *w);
/* Bytes of tensor i's data (from its shape and dtype). */
size_t gguf_writer_tensor_nbytes(const gguf_writer *w, int64_t i);
/* Total size the finished file will have (valid once every tensor is declared). */
uint64_t gguf_writer_file_size(const gguf_writer *w);

/* ---- output -------------------------------------------------------------------------------- */
/* Creates the temporary file next to `path` and writes the header and tensor infos. */
int gguf_writer_begin(gguf_writer *w, const char *path);
/* Appends n bytes of tensor data: the current tensor's next bytes, moving to the next tensor (and
   writing the alignment padding) once one is complete. A piece may not span two tensors. */
int gguf_writer_write(gguf_writer *w, const void *data, size_t n);
/* Index of the tensor the next gguf_writer_write continues (n_tensors when all are written). */
int64_t gguf_writer_current(const gguf_writer *w);
/* Checks every tensor is complete, flushes, syncs and renames the temporary file onto `path`. */
int gguf_writer_finish(gguf_writer *w);

/* Test hook: the Nth write(2) from now (1 = the next) fails with ENOSPC, as a full disk would;
   0 disables. Not thread-safe (tests only). */
void gguf_writer_fail_after(long n);

#endif
