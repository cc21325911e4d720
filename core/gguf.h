/* gguf.h — reader for GGUF model files (versions 2 and 3; little-endian only).
   The file is mmapped and validated completely in gguf_open before anything is used: every count,
   length and offset is checked against the bytes that remain before memory is allocated, so a
   hostile header cannot make us allocate or read out of bounds. Tensors come back as `tensor`
   descriptors (ggml ne order, as stored) whose `data` points into the read-only mapping; they live
   as long as the gguf handle. Metadata is read with typed getters that check the stored type.

   Conventions (spec §11; ggml's gguf format): values are u8 i8 u16 i16 u32 i32 u64 i64 f32 f64
   bool string array; arrays hold one scalar or string type — arrays of arrays are rejected with
   SEER_EUNSUPPORTED. `general.alignment` (default 32) must be a power of two. Keys and tensor
   names are 1..65536 bytes without NUL bytes and must be unique. Tensor types map from ggml ids:
   F32=0 F16=1 Q4_0=2 Q8_0=8 Q4_K=12 Q5_K=13 Q6_K=14 BF16=30; any other id is SEER_EUNSUPPORTED.

   Errors: SEER_EIO (open/map), SEER_EFORMAT (malformed: message names the file, the offset and the
   key/tensor), SEER_EUNSUPPORTED (valid but unsupported: version 1, unknown tensor type, nested
   arrays), SEER_ENOMEM. Getters return SEER_EFORMAT when the key is missing or has the wrong
   type or a value that does not fit; call gguf_find_key first for optional keys. */
#ifndef SEER_CORE_GGUF_H
#define SEER_CORE_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

enum gguf_type {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT
};

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_NAME 65536 /* bytes in a key or tensor name */

typedef struct gguf gguf;

/* Opens, maps and validates path. On success *out owns the mapping (release with gguf_free). */
int gguf_open(const char *path, gguf **out);
void gguf_free(gguf *g); /* NULL is fine */

const char *gguf_path(const gguf *g);
uint32_t gguf_version(const gguf *g);
size_t gguf_alignment(const gguf *g);
size_t gguf_data_offset(const gguf *g); /* file offset of the aligned tensor-data section */
size_t gguf_file_size(const gguf *g);
const char *gguf_type_name(enum gguf_type t); /* "u32", "string", "array", … */
/* Bytes of one value of a fixed-size type; 0 for string, array and unknown types. */
size_t gguf_type_size(enum gguf_type t);
/* The ggml type id a GGUF file gives tensors of dtype t; false for a dtype it cannot hold (I32).
   The reader maps ids back through the same table. */
bool gguf_ggml_type(enum dtype t, uint32_t *id);

/* ---- metadata ------------------------------------------------------------------------------ */
int64_t gguf_n_kv(const gguf *g);
const char *gguf_key(const gguf *g, int64_t i);
enum gguf_type gguf_kv_type(const gguf *g, int64_t i);
int64_t gguf_find_key(const gguf *g, const char *key); /* index, or −1 when absent */

/* Integer getters accept any stored integer type whose value fits the requested one (not bool). */
int gguf_get_u32(const gguf *g, const char *key, uint32_t *v);
int gguf_get_i32(const gguf *g, const char *key, int32_t *v);
int gguf_get_u64(const gguf *g, const char *key, uint64_t *v);
int gguf_get_i64(const gguf *g, const char *key, int64_t *v);
/* Float getters accept f32 and f64 (f64 must be finite and within f32 range for gguf_get_f32). */
int gguf_get_f32(const gguf *g, const char *key, float *v);
int gguf_get_f64(const gguf *g, const char *key, double *v);
int gguf_get_bool(const gguf *g, const char *key, bool *v);
/* A NUL-terminated copy owned by g; *len (optional) is the stored length, which can exceed
   strlen(*s) if the value contains NUL bytes. */
int gguf_get_str(const gguf *g, const char *key, const char **s, size_t *len);

/* Arrays: element type and count. */
int gguf_get_arr_info(const gguf *g, const char *key, enum gguf_type *elem_type, uint64_t *n);
/* Copies an integer or bool array into out[0..n); fails when it has more than cap entries. */
int gguf_get_arr_i64(const gguf *g, const char *key, int64_t *out, size_t cap, size_t *n);
/* Copies an f32 or f64 array into out[0..n); fails when it has more than cap entries. */
int gguf_get_arr_f32(const gguf *g, const char *key, float *out, size_t cap, size_t *n);
/* Element i of a string array: a pointer into the mapping (NOT NUL-terminated) and its length. */
int gguf_get_arr_str(const gguf *g, const char *key, uint64_t i, const char **s, size_t *len);
/* Raw little-endian elements of a non-string array, pointing into the mapping (may be unaligned:
   read with memcpy). */
int gguf_get_arr_data(const gguf *g, const char *key, enum gguf_type *elem_type, uint64_t *n,
                      const void **data);

/* ---- tensors ------------------------------------------------------------------------------- */
int64_t gguf_n_tensors(const gguf *g);
/* Descriptor i (0 ≤ i < n): contiguous, `data` in the read-only mapping, buf NULL, offset 0,
   `name` truncated to TENSOR_NAME_MAX − 1 bytes; the full name is gguf_tensor_name. */
const tensor *gguf_tensor(const gguf *g, int64_t i);
const char *gguf_tensor_name(const gguf *g, int64_t i);
int gguf_tensor_n_dims(const gguf *g, int64_t i);      /* as stored (1..4) */
uint64_t gguf_tensor_offset(const gguf *g, int64_t i); /* absolute file offset of its data */
int64_t gguf_find_tensor(const gguf *g, const char *name); /* index, or −1 when absent */

#endif
