/* tensor.c — dtype table and descriptor helpers. Block sizes are GGUF's (ggml-common.h layouts,
   see core/quant.h for the byte layout of each block). */
#include "core/tensor.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"

static const struct dtype_info dtypes[DT_COUNT] = {
    [DT_F32] = {"f32", 1, 4, false},
    [DT_F16] = {"f16", 1, 2, false},
    [DT_BF16] = {"bf16", 1, 2, false},
    [DT_Q8_0] = {"q8_0", 32, 34, true},
    [DT_Q4_0] = {"q4_0", 32, 18, true},
    [DT_Q4_K] = {"q4_K", 256, 144, true},
    [DT_Q5_K] = {"q5_K", 256, 176, true},
    [DT_Q6_K] = {"q6_K", 256, 210, true},
    [DT_I32] = {"i32", 1, 4, false},
};

const struct dtype_info *dtype_info(enum dtype t)
{
    ASSERT1((unsigned)t < DT_COUNT);
    return &dtypes[t];
}

bool dtype_row_bytes(enum dtype t, int64_t n, size_t *out)
{
    const struct dtype_info *di = dtype_info(t);
    if (n < 0 || n % di->block_elems != 0)
        return false;
    return size_mul((size_t)(n / di->block_elems), (size_t)di->block_bytes, out);
}

bool tensor_init(tensor *t, enum dtype type, int n_dims, const int64_t *ne)
{
    memset(t, 0, sizeof *t);
    if (n_dims < 1 || n_dims > TENSOR_MAX_DIMS)
        return false;
    t->type = type;
    for (int i = 0; i < TENSOR_MAX_DIMS; i++) {
        t->ne[i] = i < n_dims ? ne[i] : 1;
        if (t->ne[i] < 1)
            return false;
    }
    const struct dtype_info *di = dtype_info(type);
    t->nb[0] = (size_t)di->block_bytes;
    if (!dtype_row_bytes(type, t->ne[0], &t->nb[1]))
        return false;
    for (int i = 2; i < TENSOR_MAX_DIMS; i++)
        if (!size_mul(t->nb[i - 1], (size_t)t->ne[i - 1], &t->nb[i]))
            return false;
    size_t total;
    return size_mul(t->nb[3], (size_t)t->ne[3], &total);
}

bool tensor_init4(tensor *t, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return tensor_init(t, type, 4, ne);
}

int64_t tensor_nelements(const tensor *t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

int64_t tensor_nrows(const tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

size_t tensor_nbytes(const tensor *t)
{
    size_t row = 0;
    dtype_row_bytes(t->type, t->ne[0], &row);
    size_t n = row;
    for (int i = 1; i < TENSOR_MAX_DIMS; i++)
        n += (size_t)(t->ne[i] - 1) * t->nb[i];
    return n;
}

bool tensor_is_contiguous(const tensor *t)
{
    size_t row;
    if (!dtype_row_bytes(t->type, t->ne[0], &row) || t->nb[1] != row)
        return false;
    for (int i = 2; i < TENSOR_MAX_DIMS; i++)
        if (t->ne[i] > 1 && t->nb[i] != t->nb[i - 1] * (size_t)t->ne[i - 1])
            return false;
    return true;
}

bool tensor_same_shape(const tensor *a, const tensor *b)
{
    for (int i = 0; i < TENSOR_MAX_DIMS; i++)
        if (a->ne[i] != b->ne[i])
            return false;
    return true;
}

tensor tensor_view(const tensor *t, int n_dims, const int64_t *ne, const size_t *nb, size_t offset)
{
    tensor v = *t;
    for (int i = 0; i < TENSOR_MAX_DIMS; i++) {
        v.ne[i] = i < n_dims ? ne[i] : 1;
        v.nb[i] = i < n_dims ? nb[i] : (i > 0 ? v.nb[i - 1] * (size_t)v.ne[i - 1] : t->nb[0]);
    }
    v.offset = t->offset + offset;
    if (t->data)
        v.data = (char *)t->data + offset;
    return v;
}
