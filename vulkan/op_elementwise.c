/* op_elementwise.c — elementwise and row-wise ops of core/ops.h: vk_binary (op_add, op_mul: out
   = a (+|·) b with b broadcast where its dimension is 1), vk_unary (op_unary: silu, gelu tanh/erf
   for spec §4.5/§4.6, sigmoid, softplus for spec §2.5 step 4, exp), vk_scale, vk_cpy (f32 → f32,
   f16, bf16, q8_0, any strides both sides) and vk_softmax (per row). One invocation per element
   (cpy to f16/bf16: per 32-bit word; to q8_0: per block), one workgroup per row for softmax;
   rows split across storage windows when a tensor exceeds one (memory.c's rule). */
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

/* ---- one input, one output: unary, scale, cpy, softmax ------------------------------------ */

enum rows_grid {
    PER_ELEMENT, /* one invocation per element */
    PER_WORD,    /* one per 32-bit word of a 16-bit destination row: ne0/2 + 1 a row */
    PER_BLOCK,   /* one per 32-value block of a q8_0 destination row: ne0/32 a row */
    PER_ROW,     /* one workgroup per row */
};

/* Records kernel k (specialisation `variant`) over every row of x, out (same shape), splitting
   rows across storage windows; out is indexed in `out_unit`-byte elements. */
static int rows_op(backend *be, const char *op, enum vk_kernel k, uint32_t variant, enum rows_grid grid, tensor *out,
                   size_t out_unit, const tensor *x, float s)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    struct vk_rows walks[2] = {vk_rows_of(x), vk_rows_of(out)};
    int rc = vk_rows_check(be, &walks[0], 4, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &walks[1], out_unit, op);
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, k, variant, &pl);
    if (rc)
        return rc;
    const uint64_t WG = pl->spec[VK_SPEC_WG];
    const int64_t ne0 = x->ne[0], n_rows = tensor_nrows(x);
    const int64_t per_row = grid == PER_ELEMENT ? ne0
                            : grid == PER_WORD  ? ne0 / 2 + 1
                            : grid == PER_BLOCK ? ne0 / 32
                                                : 1;
    /* per dispatch: invocations below 2^31 (the shaders' uint index) and within the grid */
    int64_t max_rows = (int64_t)vk_grid_max(vk);
    if (grid != PER_ROW)
        max_rows = MAX((int64_t)MIN(vk_grid_max(vk) * WG, (uint64_t)1 << 31) / per_row, (int64_t)1);
    for (int64_t r0 = 0, r1; r0 < n_rows; r0 = r1) {
        if ((rc = vk_split(vk, walks, 2, r0, n_rows, max_rows, &r1, op)))
            return rc;
        struct vk_binding b[2] = {vk_bind(vk, &walks[0], r0, r1, 4, false), vk_bind(vk, &walks[1], r0, r1, out_unit, true)};
        struct vk_push_rows pc = {
            .ne0 = (uint32_t)ne0, .ne1 = (uint32_t)x->ne[1], .ne2 = (uint32_t)x->ne[2],
            .r0 = (uint32_t)r0, .n_rows = (uint32_t)(r1 - r0),
            .x_base = b[0].base, .x_s1 = vk_stride(x->nb[1], 4), .x_s2 = vk_stride(x->nb[2], 4),
            .x_s3 = vk_stride(x->nb[3], 4),
            .o_base = b[1].base, .o_s1 = vk_stride(out->nb[1], out_unit), .o_s2 = vk_stride(out->nb[2], out_unit),
            .o_s3 = vk_stride(out->nb[3], out_unit),
            .s = s,
        };
        uint64_t groups = grid == PER_ROW ? (uint64_t)(r1 - r0) : ((uint64_t)(r1 - r0) * (uint64_t)per_row + WG - 1) / WG;
        uint32_t gx, gy;
        vk_grid(vk, groups, &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}

/* unary.comp's OP: the enum unary_op values, then scale */
#define UNARY_OP_SCALE UNARY_COUNT

int vk_unary(backend *be, enum unary_op op, tensor *out, const tensor *x)
{
    return rows_op(be, "op_unary", VK_K_UNARY, (uint32_t)op, PER_ELEMENT, out, 4, x, 0.0f);
}

int vk_scale(backend *be, tensor *out, const tensor *x, float s)
{
    return rows_op(be, "op_scale", VK_K_UNARY, UNARY_OP_SCALE, PER_ELEMENT, out, 4, x, s);
}

/* cpy.comp's DST: 0 f32, 1 f16, 2 bf16, 3 q8_0 (ops.c admits no other destination); a q8_0
   destination is indexed in bytes (its 34-byte blocks keep no other alignment). */
int vk_cpy(backend *be, tensor *dst, const tensor *src)
{
    if (dst->type == DT_F32)
        return rows_op(be, "op_cpy", VK_K_CPY, 0, PER_ELEMENT, dst, 4, src, 0.0f);
    if (dst->type == DT_Q8_0)
        return rows_op(be, "op_cpy", VK_K_CPY, 3, PER_BLOCK, dst, 1, src, 0.0f);
    return rows_op(be, "op_cpy", VK_K_CPY, dst->type == DT_F16 ? 1 : 2, PER_WORD, dst, 2, src, 0.0f);
}

int vk_softmax(backend *be, tensor *out, const tensor *x, float scale)
{
    return rows_op(be, "op_softmax", VK_K_SOFTMAX, 0, PER_ROW, out, 4, x, scale);
}
