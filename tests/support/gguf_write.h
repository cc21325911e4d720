/* gguf_write.h — test-only writers for the model-file formats seer reads, so tests can build valid
   files and then corrupt them byte by byte:
     - bbuf: a growable byte buffer with little-endian appenders;
     - gw_*: a GGUF v3 builder (metadata of every type, tensor infos, aligned data) that records
       where each field landed (gw_layout) so a test can patch a count, a length or an offset;
     - st_*: safetensors files (from a tensor list, or raw header text) and shard index files.
   Metadata values are encoded by the library's writer (core/gguf_write.h); the rest is written
   from the format descriptions (ggml's GGUF spec, the safetensors README), because these files
   must be able to break the rules the library's writer enforces. Failures to allocate or write
   abort the test program (exit 2): these are test fixtures, not library code. */
#ifndef SEER_TESTS_GGUF_WRITE_H
#define SEER_TESTS_GGUF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gguf.h"

/* ---- byte buffer ------------------------------------------------------------------------------- */
struct bbuf {
    uint8_t *p;
    size_t len, cap;
};

void bb_bytes(struct bbuf *b, const void *p, size_t n);
void bb_u8(struct bbuf *b, uint8_t v);
void bb_u32(struct bbuf *b, uint32_t v);
void bb_u64(struct bbuf *b, uint64_t v);
void bb_gstr(struct bbuf *b, const char *s); /* GGUF string: u64 length + bytes */
void bb_zero_to(struct bbuf *b, size_t align); /* pad with zeros to a multiple of align */
void bb_free(struct bbuf *b);
void put_u32_at(uint8_t *p, uint32_t v);
void put_u64_at(uint8_t *p, uint64_t v);
/* Writes n bytes to path (replacing it). */
void write_file(const char *path, const void *p, size_t n);
void write_text(const char *path, const char *text);

/* ggml type ids used by tests (the reader maps them to core dtypes). */
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q4_1 = 3, GGML_Q8_0 = 8, GGML_Q4_K = 12, GGML_Q5_K = 13,
       GGML_Q6_K = 14, GGML_BF16 = 30 };
/* Bytes of a row of n elements of ggml type `type` (0 when not whole blocks / unknown). */
size_t ggml_row_bytes(uint32_t type, uint64_t n);

/* ---- GGUF builder ------------------------------------------------------------------------------ */
struct gw_kv {
    char *key;
    struct bbuf val; /* type id + encoded value */
};

struct gw_tensor {
    char *name;
    uint32_t n_dims;
    uint64_t ne[4];
    uint32_t type;
    uint8_t *data; /* nbytes, owned */
    size_t nbytes;
};

/* Where each field of the built file lies (byte offsets into gw_file.out). */
struct gw_layout {
    size_t n_tensors_off, n_kv_off;
    size_t *kv_off;     /* start of each kv (its key length) */
    size_t *ti_off;     /* start of each tensor info (its name length) */
    size_t *ti_ndims_off, *ti_type_off, *ti_offset_off;
    size_t header_end;  /* end of the last tensor info */
    size_t data_off;    /* aligned start of the data section */
};

struct gw_file {
    uint32_t version;
    size_t alignment; /* used for padding; add general.alignment yourself when not 32 */
    struct gw_kv *kv;
    int n_kv;
    struct gw_tensor *t;
    int n_t;
    struct bbuf out;  /* filled by gw_build */
    struct gw_layout lay;
};

struct gw_file *gw_new(void);
void gw_free(struct gw_file *f);
void gw_add_scalar(struct gw_file *f, const char *key, enum gguf_type type, const void *value);
void gw_add_u32(struct gw_file *f, const char *key, uint32_t v);
void gw_add_f32(struct gw_file *f, const char *key, float v);
void gw_add_bool(struct gw_file *f, const char *key, bool v);
void gw_add_str(struct gw_file *f, const char *key, const char *s);
/* Array of a fixed-size scalar type: n elements from `data` (already little-endian). */
void gw_add_arr(struct gw_file *f, const char *key, enum gguf_type elem, uint64_t n, const void *data);
void gw_add_arr_str(struct gw_file *f, const char *key, uint64_t n, const char *const *s);
/* A raw value: the type id then `n` bytes exactly as given (for corrupt values). */
void gw_add_raw(struct gw_file *f, const char *key, uint32_t type, const void *bytes, size_t n);
int gw_find_kv(const struct gw_file *f, const char *key);
void gw_remove_kv(struct gw_file *f, const char *key);
/* A tensor in ne order (ne[0] innermost). `data` may be NULL: filled with a non-zero pattern. */
void gw_add_tensor(struct gw_file *f, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *ne,
                   const void *data);
int gw_find_tensor(const struct gw_file *f, const char *name);
void gw_remove_tensor(struct gw_file *f, const char *name);
/* Encodes the file into f->out and fills f->lay. */
void gw_build(struct gw_file *f);
/* gw_build + write_file. */
void gw_write(struct gw_file *f, const char *path);

/* ---- safetensors ------------------------------------------------------------------------------- */
struct st_entry {
    const char *name;
    const char *dtype; /* "F32", "F16", "BF16", or anything (for unsupported-dtype tests) */
    int rank;
    int64_t shape[8];  /* PyTorch order */
    const void *data;  /* NULL: non-zero pattern */
};
/* Element size of a dtype string (F32 4, F16/BF16 2, I64 8, …; 1 when unknown). */
size_t st_dtype_size(const char *dtype);
/* Writes a valid file: header (padded with spaces to a multiple of 8) + data in entry order. */
void st_write(const char *path, const struct st_entry *e, int n);
/* Writes an 8-byte length `hlen` (normally strlen(header)), the header text, then `data`. */
void st_write_raw(const char *path, uint64_t hlen, const char *header, const void *data, size_t data_len);

#endif
