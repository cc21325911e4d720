/* op_norm.c — the row normalisations of core/ops.h on one kernel (norm.comp, MODE by variant):
   vk_rmsnorm (spec §2.3: x · rsqrt(mean(x²) + eps) · (w + w_shift), w optional),
   vk_rmsnorm_gated (spec §2.3, GDN output: · w · silu(z)), vk_layernorm (spec §4.5, with bias)
   and vk_l2norm (spec §2.5 step 6: x · rsqrt(Σx² + eps)). One workgroup per row; rows split
   across storage windows when x, z or out exceed one (memory.c's rule). */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

enum norm_mode { NORM_RMS, NORM_RMS_GATED, NORM_LAYER, NORM_L2 }; /* norm.comp's MODE */

/* A vector {ne0} read by every row of x: the walk of x's rows with strides 0. */
static struct vk_rows per_row_vector(const tensor *v, const tensor *x)
{
    struct vk_rows r = vk_rows_of(v);
    r.ne1 = x->ne[1];
    r.ne2 = x->ne[2];
    r.ne3 = x->ne[3];
    r.nb1 = r.nb2 = r.nb3 = 0;
    return r;
}

/* w and a (z or b) may be NULL: x stands in for the binding the mode does not read. z is walked
   like x; w and b are vectors. */
static int norm(backend *be, const char *op, enum norm_mode mode, tensor *out, const tensor *x, const tensor *w,
                const tensor *z, const tensor *b, float w_shift, float eps)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    /* walks: x, out, w, aux; only the first n_walks are real tensors to check and split by */
    struct vk_rows walks[4] = {vk_rows_of(x), vk_rows_of(out), per_row_vector(w ? w : x, x),
                               z ? vk_rows_of(z) : per_row_vector(b ? b : x, x)};
    int rc = SEER_OK;
    for (int i = 0; i < 4 && rc == SEER_OK; i++)
        rc = vk_rows_check(be, &walks[i], 4, op);
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_NORM, (uint32_t)mode, &pl);
    if (rc)
        return rc;
    const int64_t n_rows = tensor_nrows(x);
    for (int64_t r0 = 0, r1; r0 < n_rows; r0 = r1) {
        if ((rc = vk_split(vk, walks, 4, r0, n_rows, (int64_t)vk_grid_max(vk), &r1, op)))
            return rc;
        struct vk_binding bd[4] = {
            vk_bind(vk, &walks[0], r0, r1, 4, false),
            vk_bind(vk, &walks[2], r0, r1, 4, false),
            vk_bind(vk, &walks[3], r0, r1, 4, false),
            vk_bind(vk, &walks[1], r0, r1, 4, true),
        };
        const tensor *a = z ? z : x; /* a's strides: z's own; b's are 0 (a vector) */
        struct vk_push_norm pc = {
            .ne0 = (uint32_t)x->ne[0], .ne1 = (uint32_t)x->ne[1], .ne2 = (uint32_t)x->ne[2],
            .r0 = (uint32_t)r0, .n_rows = (uint32_t)(r1 - r0),
            .x_base = bd[0].base, .x_s1 = vk_stride(x->nb[1], 4), .x_s2 = vk_stride(x->nb[2], 4),
            .x_s3 = vk_stride(x->nb[3], 4),
            .o_base = bd[3].base, .o_s1 = vk_stride(out->nb[1], 4), .o_s2 = vk_stride(out->nb[2], 4),
            .o_s3 = vk_stride(out->nb[3], 4),
            .w_base = bd[1].base, .has_w = w != NULL,
            .w_shift = w_shift, .eps = eps,
            .a_base = bd[2].base, .a_s1 = z ? vk_stride(a->nb[1], 4) : 0, .a_s2 = z ? vk_stride(a->nb[2], 4) : 0,
            .a_s3 = z ? vk_stride(a->nb[3], 4) : 0,
        };
        uint32_t gx, gy;
        vk_grid(vk, (uint64_t)(r1 - r0), &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, bd, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}

int vk_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps)
{
    return norm(be, "op_rmsnorm", NORM_RMS, out, x, w, NULL, NULL, w_shift, eps);
}

int vk_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps)
{
    return norm(be, "op_rmsnorm_gated", NORM_RMS_GATED, out, x, w, z, NULL, 0.0f, eps);
}

int vk_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps)
{
    return norm(be, "op_layernorm", NORM_LAYER, out, x, w, NULL, b, 0.0f, eps);
}

int vk_l2norm(backend *be, tensor *out, const tensor *x, float eps)
{
    return norm(be, "op_l2norm", NORM_L2, out, x, NULL, NULL, NULL, 0.0f, eps);
}
