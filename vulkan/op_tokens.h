/* op_tokens.h — what the sequence ops (op_conv.c, op_gdn.c, op_attention.c) share: walking a
   tensor by tokens, so that memory.c's splitting rule keeps every token whole in a storage
   window for all of an op's tensors at once, and telling whether two tensors share bytes. */
#ifndef SEER_VULKAN_OP_TOKENS_H
#define SEER_VULKAN_OP_TOKENS_H

#include "core/error.h"
#include "vulkan/vk_internal.h"

/* Rows of the walk = indices of dimension `dim` (the token dimension); a row covers every
   element of the lower dimensions. t has at most dim+1 dimensions above 1. */
static inline struct vk_rows vk_token_rows(const tensor *t, int dim)
{
    struct vk_rows w = vk_rows_of(t);
    size_t span = w.row_bytes;
    for (int i = 1; i < dim; i++)
        span += (size_t)(t->ne[i] - 1) * t->nb[i];
    return (struct vk_rows){t, t->ne[dim], 1, 1, t->nb[dim], 0, 0, span};
}

/* Whether the bytes of two walks overlap (same buffer, intersecting [first, last row end)). */
static inline bool vk_rows_overlap(const struct vk_rows *a, const struct vk_rows *b)
{
    if (a->t->buf != b->t->buf)
        return false;
    size_t a_end = a->t->offset + (size_t)(a->ne1 - 1) * a->nb1 + (size_t)(a->ne2 - 1) * a->nb2 +
                   (size_t)(a->ne3 - 1) * a->nb3 + a->row_bytes;
    size_t b_end = b->t->offset + (size_t)(b->ne1 - 1) * b->nb1 + (size_t)(b->ne2 - 1) * b->nb2 +
                   (size_t)(b->ne3 - 1) * b->nb3 + b->row_bytes;
    return a->t->offset < b_end && b->t->offset < a_end;
}

#endif
