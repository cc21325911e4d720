/* op_matmul.c — vk_matmul (core/ops.h op_matmul): out{M,N,..} = x{K,N,..} · wᵀ for w{K,M} with
   F32, F16 or BF16 weights read in place, f32 activations and accumulation. One x row runs the
   matrix-vector kernel (decode), more run the tiled matrix-matrix kernel (prefill). Tensors larger
   than a storage window are split by rows (memory.c's rule: rows never straddle a window): weight
   rows for both kernels, x/out rows for the tiled one. Other weight dtypes: SEER_EUNSUPPORTED. */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

struct weight_kind {
    enum vk_kernel matvec, matmul;
    size_t unit; /* bytes per weight element as the shader indexes them */
};

static bool weight_kind(enum dtype t, struct weight_kind *k)
{
    switch (t) {
    case DT_F32: *k = (struct weight_kind){VK_K_MATVEC_F32, VK_K_MATMUL_F32, 4}; return true;
    case DT_F16: *k = (struct weight_kind){VK_K_MATVEC_F16, VK_K_MATMUL_F16, 2}; return true;
    case DT_BF16: *k = (struct weight_kind){VK_K_MATVEC_BF16, VK_K_MATMUL_BF16, 2}; return true;
    default: return false;
    }
}

/* x is a single row: one workgroup per weight row, weight rows split into windows. */
static int matvec(struct vk_ctx *vk, const struct weight_kind *wk, const struct vk_rows *wr,
                  const struct vk_rows *xr, const struct vk_rows *outr)
{
    const tensor *w = wr->t;
    int64_t M = w->ne[1], r1;
    const struct vk_pipeline *pl;
    int rc = vk_pipeline_get(vk, wk->matvec, 0, &pl);
    if (rc == SEER_OK)
        rc = vk_split(vk, xr, 1, 0, 1, 1, &r1, "op_matmul");
    if (rc == SEER_OK)
        rc = vk_split(vk, outr, 1, 0, 1, 1, &r1, "op_matmul");
    if (rc)
        return rc;
    struct vk_binding b[3];
    b[1] = vk_bind(vk, xr, 0, 1, 4, false);
    b[2] = vk_bind(vk, outr, 0, 1, 4, true);
    uint32_t w_stride = vk_stride(w->nb[1], wk->unit);
    for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
        if ((rc = vk_split(vk, wr, 1, m0, M, (int64_t)vk_grid_max(vk), &m1, "op_matmul")))
            return rc;
        b[0] = vk_bind(vk, wr, m0, m1, wk->unit, false);
        struct vk_push_matvec pc = {
            .M = (uint32_t)(m1 - m0),
            .K = (uint32_t)w->ne[0],
            .w_base = b[0].base + (uint32_t)m0 * w_stride, /* row m0, mod 2^32 */
            .w_stride = w_stride,
            .x_base = b[1].base,
            .out_base = b[2].base + (uint32_t)m0,
        };
        uint32_t gx, gy;
        vk_grid(vk, (uint64_t)(m1 - m0), &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}

/* Several x rows: BM×BN tiles; x/out rows split in the outer loop, weight rows in the inner. */
static int matmul_tiled(struct vk_ctx *vk, const struct weight_kind *wk, const struct vk_rows *wr,
                        const struct vk_rows *xr, const struct vk_rows *outr)
{
    const tensor *w = wr->t, *x = xr->t;
    int64_t M = w->ne[1], N = tensor_nrows(x);
    const struct vk_pipeline *pl;
    int rc = vk_pipeline_get(vk, wk->matmul, 0, &pl);
    if (rc)
        return rc;
    const uint32_t BM = pl->spec[VK_SPEC_MM_BM], BN = pl->spec[VK_SPEC_MM_BN];
    const int64_t max_m = (int64_t)vk->caps.max_wg_count[0] * BM, max_n = (int64_t)vk->caps.max_wg_count[1] * BN;
    const struct vk_rows x_and_out[2] = {*xr, *outr}; /* they share the row index */
    uint32_t w_stride = vk_stride(w->nb[1], wk->unit);
    struct vk_binding b[3];
    for (int64_t r0 = 0, r1; r0 < N; r0 = r1) {
        if ((rc = vk_split(vk, x_and_out, 2, r0, N, max_n, &r1, "op_matmul")))
            return rc;
        b[1] = vk_bind(vk, xr, r0, r1, 4, false);
        b[2] = vk_bind(vk, outr, r0, r1, 4, true);
        for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
            if ((rc = vk_split(vk, wr, 1, m0, M, max_m, &m1, "op_matmul")))
                return rc;
            b[0] = vk_bind(vk, wr, m0, m1, wk->unit, false);
            struct vk_push_matmul pc = {
                .M = (uint32_t)(m1 - m0),
                .K = (uint32_t)w->ne[0],
                .N = (uint32_t)(r1 - r0),
                .w_base = b[0].base + (uint32_t)m0 * w_stride,
                .w_stride = w_stride,
                .x_base = b[1].base,
                .x_s1 = vk_stride(x->nb[1], 4),
                .x_s2 = vk_stride(x->nb[2], 4),
                .x_s3 = vk_stride(x->nb[3], 4),
                .x_ne1 = (uint32_t)x->ne[1],
                .x_ne2 = (uint32_t)x->ne[2],
                .r0 = (uint32_t)r0,
                /* out is contiguous {M, N…}: element (r0, m0) */
                .out_base = b[2].base + (uint32_t)r0 * (uint32_t)M + (uint32_t)m0,
                .out_stride = (uint32_t)M,
            };
            uint32_t gx = (uint32_t)((m1 - m0 + BM - 1) / BM), gy = (uint32_t)((r1 - r0 + BN - 1) / BN);
            if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
                return rc;
        }
    }
    return SEER_OK;
}

int vk_matmul(backend *be, tensor *out, const tensor *w, const tensor *x)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    struct weight_kind wk;
    if (!weight_kind(w->type, &wk))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: op_matmul: weight dtype %s has no Vulkan kernel yet", dtype_name(w->type));
    struct vk_rows wr = vk_rows_of(w), xr = vk_rows_of(x), outr = vk_rows_of(out);
    int rc = vk_rows_check(be, &wr, wk.unit, "op_matmul");
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &xr, 4, "op_matmul");
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &outr, 4, "op_matmul");
    if (rc)
        return rc;
    return tensor_nrows(x) == 1 ? matvec(vk, &wk, &wr, &xr, &outr) : matmul_tiled(vk, &wk, &wr, &xr, &outr);
}
