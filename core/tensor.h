/* tensor.h — element types and tensor descriptors.
   Shapes use GGUF/ggml order: ne[0] is the innermost, contiguous dimension (a row), so an HF
   linear weight [out, in] is ne = {in, out}. Quantised types store each row as whole blocks of
   GGUF's exact layout (core/quant.h), so ne[0] must be a multiple of the block size. */
#ifndef SEER_CORE_TENSOR_H
#define SEER_CORE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dtype {
    DT_F32,
    DT_F16,
    DT_BF16,
    DT_Q8_0,
    DT_Q4_0,
    DT_Q4_K,
    DT_Q5_K,
    DT_Q6_K,
    DT_I32,
    DT_COUNT
};

struct dtype_info {
    const char *name;   /* "f32", "q4_K" (GGUF spelling) */
    int block_elems;    /* elements per block (1 for plain types) */
    int block_bytes;    /* bytes per block */
    bool quantized;
};

const struct dtype_info *dtype_info(enum dtype t);
static inline const char *dtype_name(enum dtype t);
/* Bytes of a row of n elements; false if n is not a whole number of blocks or it overflows. */
bool dtype_row_bytes(enum dtype t, int64_t n, size_t *out);

#define TENSOR_MAX_DIMS 4
#define TENSOR_NAME_MAX 96

struct backend_buffer;

/* How a matrix's bytes are arranged. TL_ROWS: rows one after another (every file's layout, and
   every tensor the model creates). TL_Q8_0_T16: a Q8_0 weight matrix the CPU backend rearranged
   for its AMX kernel when it copied it (core/cpu/qdot_amx.c): same size, rows no longer
   addressable by nb[1]; only the CPU's matmul and get_rows read it. TL_Q8_0_SPLIT: a Q8_0 weight
   matrix the Vulkan backend rearranged row by row for 16-byte loads (vulkan/op_matmul.c): each
   row's ne[0] int8 values, then its ne[0]/32 f16 scales — rows and strides as before; only
   Vulkan's matmul and get_rows read it. TL_Q4_K_R16: a Q4_K weight matrix the CPU backend
   interleaved 16 rows at a time when it copied it (core/cpu/qdot_q4r.c): same size, rows no longer
   addressable by nb[1]; only the CPU's matmul and get_rows read it. TL_Q8_0_R16: the same for a
   Q8_0 matrix on CPUs with AVX-512 VNNI but no AMX (core/cpu/qdot_q8r.c), TL_Q6_K_R16 for a Q6_K
   matrix (core/cpu/qdot_q6r.c) and TL_Q5_K_R16 for a Q5_K one (core/cpu/qdot_q4r.c, with Q4_K). */
enum tensor_layout { TL_ROWS, TL_Q8_0_T16, TL_Q8_0_SPLIT, TL_Q4_K_R16, TL_Q8_0_R16, TL_Q6_K_R16, TL_Q5_K_R16 };

typedef struct tensor {
    enum dtype type;
    int64_t ne[TENSOR_MAX_DIMS]; /* elements per dimension, ne[0] innermost; unused dims are 1 */
    size_t nb[TENSOR_MAX_DIMS];  /* byte strides; nb[0] = block_bytes (one block steps block_elems) */
    struct backend_buffer *buf;  /* where the bytes live (NULL: plain host memory, e.g. a mapping) */
    size_t offset;               /* byte offset of element 0 inside buf */
    void *data;                  /* host address of element 0 when host-visible, else NULL */
    char name[TENSOR_NAME_MAX];
    enum tensor_layout layout;
} tensor;

/* Fills a contiguous descriptor (strides from the shape); data/buf left NULL. Returns false
   when a dimension is < 1, ne[0] is not a whole number of blocks, or the size overflows. */
bool tensor_init(tensor *t, enum dtype type, int n_dims, const int64_t *ne);
/* Shorthand for tensor_init with up to 4 dims given as arguments (unused trailing dims = 1). */
bool tensor_init4(tensor *t, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
int64_t tensor_nelements(const tensor *t);
int64_t tensor_nrows(const tensor *t); /* ne[1]*ne[2]*ne[3] */
/* Bytes spanned from element 0 to the end of the last element (for strided views too). */
size_t tensor_nbytes(const tensor *t);
bool tensor_is_contiguous(const tensor *t);
bool tensor_same_shape(const tensor *a, const tensor *b);
/* A view of t: new shape and strides (in bytes) starting `offset` bytes after t's element 0.
   The caller guarantees the view lies inside t. */
tensor tensor_view(const tensor *t, int n_dims, const int64_t *ne, const size_t *nb, size_t offset);
/* Host address of row (i1,i2,i3) when t->data is set. */
static inline void *tensor_row(const tensor *t, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *)t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static inline const char *dtype_name(enum dtype t) { return dtype_info(t)->name; }

#endif
