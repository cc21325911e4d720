/* op_norm.c — vk_rmsnorm (core/ops.h op_rmsnorm, spec §2.3): out = x · rsqrt(mean(x²) + eps) ·
   (w + w_shift) per row, w optional. One workgroup per row; rows split across storage windows
   when x or out exceed one (memory.c's rule). The other norms (gated, layer, l2) come later. */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

int vk_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    /* walks[2] is w, the same vector for every row (strides 0); x stands in when w is NULL */
    struct vk_rows walks[3] = {vk_rows_of(x), vk_rows_of(out), vk_rows_of(w ? w : x)};
    walks[2].ne1 = x->ne[1];
    walks[2].ne2 = x->ne[2];
    walks[2].ne3 = x->ne[3];
    walks[2].nb1 = walks[2].nb2 = walks[2].nb3 = 0;
    int rc = SEER_OK;
    for (int i = 0; i < 3 && rc == SEER_OK; i++)
        rc = vk_rows_check(be, &walks[i], 4, "op_rmsnorm");
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_RMSNORM, 0, &pl);
    if (rc)
        return rc;
    int64_t n_rows = tensor_nrows(x);
    for (int64_t r0 = 0, r1; r0 < n_rows; r0 = r1) {
        if ((rc = vk_split(vk, walks, 3, r0, n_rows, (int64_t)vk_grid_max(vk), &r1, "op_rmsnorm")))
            return rc;
        struct vk_binding b[3] = {
            vk_bind(vk, &walks[0], r0, r1, 4, false),
            vk_bind(vk, &walks[2], r0, r1, 4, false),
            vk_bind(vk, &walks[1], r0, r1, 4, true),
        };
        struct vk_push_norm pc = {
            .ne0 = (uint32_t)x->ne[0], .ne1 = (uint32_t)x->ne[1], .ne2 = (uint32_t)x->ne[2],
            .r0 = (uint32_t)r0, .n_rows = (uint32_t)(r1 - r0),
            .x_base = b[0].base, .x_s1 = vk_stride(x->nb[1], 4), .x_s2 = vk_stride(x->nb[2], 4),
            .x_s3 = vk_stride(x->nb[3], 4),
            .o_base = b[2].base, .o_s1 = vk_stride(out->nb[1], 4), .o_s2 = vk_stride(out->nb[2], 4),
            .o_s3 = vk_stride(out->nb[3], 4),
            .w_base = b[1].base, .has_w = w != NULL,
            .w_shift = w_shift, .eps = eps,
        };
        uint32_t gx, gy;
        vk_grid(vk, (uint64_t)(r1 - r0), &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}
