/* op_elementwise.c — vk_binary (core/ops.h op_add, op_mul): out = a (+|·) b with b broadcast
   where its dimension is 1. One invocation per element; rows of a split across storage windows
   when a tensor exceeds one (memory.c's rule). Unary ops, scale and cpy come later. */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

int vk_binary(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    /* b walked over a's rows: stride 0 on every dimension it broadcasts */
    struct vk_rows walks[3] = {vk_rows_of(a), vk_rows_of(b), vk_rows_of(out)};
    walks[1].ne1 = a->ne[1];
    walks[1].ne2 = a->ne[2];
    walks[1].ne3 = a->ne[3];
    walks[1].nb1 = b->ne[1] == 1 ? 0 : b->nb[1];
    walks[1].nb2 = b->ne[2] == 1 ? 0 : b->nb[2];
    walks[1].nb3 = b->ne[3] == 1 ? 0 : b->nb[3];
    int rc = SEER_OK;
    for (int i = 0; i < 3 && rc == SEER_OK; i++)
        rc = vk_rows_check(be, &walks[i], 4, op == BINARY_ADD ? "op_add" : "op_mul");
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_BINARY, (uint32_t)op, &pl);
    if (rc)
        return rc;
    const uint32_t WG = pl->spec[VK_SPEC_WG];
    const int64_t ne0 = a->ne[0], n_rows = tensor_nrows(a);
    /* elements per dispatch: below 2^31 (the shader's uint index) and within the grid */
    int64_t max_elems = (int64_t)MIN(vk_grid_max(vk) * WG, (uint64_t)1 << 31);
    int64_t max_rows = MAX(max_elems / ne0, (int64_t)1);
    for (int64_t r0 = 0, r1; r0 < n_rows; r0 = r1) {
        if ((rc = vk_split(vk, walks, 3, r0, n_rows, max_rows, &r1, op == BINARY_ADD ? "op_add" : "op_mul")))
            return rc;
        struct vk_binding bind[3] = {
            vk_bind(vk, &walks[0], r0, r1, 4, false),
            vk_bind(vk, &walks[1], r0, r1, 4, false),
            vk_bind(vk, &walks[2], r0, r1, 4, true),
        };
        struct vk_push_binary pc = {
            .ne0 = (uint32_t)ne0, .ne1 = (uint32_t)a->ne[1], .ne2 = (uint32_t)a->ne[2],
            .r0 = (uint32_t)r0, .n_rows = (uint32_t)(r1 - r0),
            .a_base = bind[0].base, .a_s1 = vk_stride(a->nb[1], 4), .a_s2 = vk_stride(a->nb[2], 4),
            .a_s3 = vk_stride(a->nb[3], 4),
            .b_base = bind[1].base, .b_s0 = b->ne[0] == 1 ? 0 : 1, .b_s1 = vk_stride(walks[1].nb1, 4),
            .b_s2 = vk_stride(walks[1].nb2, 4), .b_s3 = vk_stride(walks[1].nb3, 4),
            .o_base = bind[2].base, .o_s1 = vk_stride(out->nb[1], 4), .o_s2 = vk_stride(out->nb[2], 4),
            .o_s3 = vk_stride(out->nb[3], 4),
        };
        uint32_t gx, gy;
        vk_grid(vk, (uint64_t)(((r1 - r0) * ne0 + WG - 1) / WG), &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, bind, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}
