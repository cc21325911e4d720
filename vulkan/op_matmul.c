/* op_matmul.c — vk_matmul (core/ops.h op_matmul): out{M,N,..} = x{K,N,..} · wᵀ for w{K,M}, and
   vk_get_rows (op_get_rows, embedding lookup), for every weight dtype: F32, F16, BF16 read as
   elements, Q8_0 Q4_0 Q4_K Q5_K Q6_K read in place in their GGUF blocks (no dequantised copy
   in device memory; shaders/common/quant.glsl dequantises each element bit-exactly as
   core/quant.c). Activations and accumulation f32.
   Up to 8 x rows run the matrix-vector kernel (decode, short prompts: each weight chunk is
   dequantised once for all of them); more run the tiled matrix-matrix kernel (prefill). When the
   backend is not exact (backend_vulkan_set_exact), decode's products of quantised weights may
   instead take the integer-dot or (Q8_0, Q4_0) the fp16 matvec (mv_path below). The integer-dot
   product of Q4_K and Q5_K weights takes the wide build (matvec_dot.comp WIDE): the weights read
   as 16-byte pieces, consecutive invocations on consecutive pieces, as GPUs load fastest; lavapipe
   runs it too, faster than any other decode kernel there. Q8_0's 34-byte blocks are no whole
   number of pieces, so where that build would run, Q8_0 matrices are rearranged row by row as
   they load (vk_weight_prepare: the split layout) and read by its own wide build, prefill and
   get_rows by SPLIT builds of matmul.comp and get_rows.comp. The wide builds index pieces from
   the window's start, so each weight window is checked at dispatch (wide_ok: the window, the
   first row and the row stride all on 16 bytes) and one that is not runs the word-reading build
   instead. Windows start at a row rounded down to minStorageBufferOffsetAlignment (a power of
   two), so a tensor at a 16-byte offset with rows of whole blocks (144 or 176 bytes) passes in
   every window. Float weights (f32, f16, bf16: the vision tower's) have a wide build of matvec.comp
   too, which reads x and weight rows in 16-byte pieces where both are aligned (wide_float_ok);
   devices with subgroup arithmetic take it in place of matvec_sg.
   Tensors larger than a storage window are split by rows (memory.c's rule: rows never straddle a
   window): x/out rows in the outer loop, weight rows in the inner; get_rows walks the table's
   windows and lets each dispatch write the rows whose id falls in its window. */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"


struct weight_kind {
    enum vk_kernel matvec, matmul, get_rows, matvec_sg;
    size_t unit; /* what the shader indexes weights in: the element (f32 4, f16/bf16 2), or the
                    byte for quantised rows, whose blocks are not 4-byte aligned */
};

/* The kernels for weights of dtype t (every dtype before DT_I32 has a build of each family). */
static bool weight_kind(enum dtype t, struct weight_kind *k)
{
    if ((unsigned)t >= VK_N_WTYPES)
        return false;
    *k = (struct weight_kind){vk_weight_kernel(VK_FAM_MATVEC, t), vk_weight_kernel(VK_FAM_MATMUL, t),
                              vk_weight_kernel(VK_FAM_GET_ROWS, t), vk_weight_kernel(VK_FAM_MATVEC_SG, t),
                              t == DT_F32 ? 4 : t == DT_F16 || t == DT_BF16 ? 2 : 1};
    return true;
}

bool vk_weight_supported(enum dtype t)
{
    struct weight_kind k;
    return weight_kind(t, &k);
}

/* ---- not-exact decode kernels ----------------------------------------------------------- */

/* Which matvec runs a product of N x rows with w. Exact backends, prefill (more than 8 x rows,
   also where caps.matvec_prefill runs matvec for it) and the float dtypes: matvec.comp. Else the
   integer-dot kernel (activations rounded to int8 blocks as the CPU's not-exact path rounds them:
   per 32 values, per 256 for Q4_K) where the device says its packed 4x8 signed dot product is
   accelerated (for Q4_K and Q5_K the wide build, which CPU implementations take even unaccelerated:
   below); else, for Q8_0 and Q4_0, the fp16 one on GPUs with shaderFloat16 (not on CPU
   implementations: lavapipe emulates both in scalar code, and its decode must not slow down); or what vk_backend_params.force_matvec forces (INT_DOT_WIDE: the
   wide build for Q4_K and Q5_K, the word-reading integer-dot one for the other block types). All
   need subgroup arithmetic (built with that reduction only). */
enum mv_path { MV_PLAIN, MV_INT_DOT, MV_INT_DOT_WIDE, MV_FP16 };

/* Whether decode takes the builds that read 16-byte pieces, for the block types that have one:
   where integer dot products are accelerated, on CPU implementations (lavapipe decoded 0.8B Q4_K at
   2.69 tokens/s with it, 1.15 with matvec.comp and 1.35 with the word-reading build;
   docs/PERFORMANCE.md), or forced. The rule for Q4_K/Q5_K here and for splitting Q8_0 at load. */
static bool wide_wanted(const struct vk_ctx *vk)
{
    const struct vk_caps *c = &vk->caps;
    if (vk->force_matvec != VK_MATVEC_AUTO)
        return vk->force_matvec == VK_MATVEC_INT_DOT_WIDE;
    return c->int_dot && (c->int_dot_fast || c->kind == VK_KIND_CPU);
}

static enum mv_path mv_path(const struct vk_ctx *vk, const tensor *w, int64_t N)
{
    const struct vk_caps *c = &vk->caps;
    const enum dtype t = w->type;
    const bool dot = dtype_info(t)->block_elems > 1, f16 = t == DT_Q8_0 || t == DT_Q4_0;
    const enum mv_path dot_path = t == DT_Q4_K || t == DT_Q5_K ? MV_INT_DOT_WIDE : MV_INT_DOT; /* wide builds */
    if (w->layout == TL_Q8_0_SPLIT) /* its one matvec; prefill too where caps.matvec_prefill */
        return vk->exact || !c->subgroup_arith || !c->int_dot ? MV_PLAIN : MV_INT_DOT_WIDE;
    if (vk->exact || N > VK_MATVEC_MAX_N || !c->subgroup_arith)
        return MV_PLAIN;
    switch (vk->force_matvec) { /* the feature was checked at creation */
    case VK_MATVEC_INT_DOT: return dot ? MV_INT_DOT : MV_PLAIN;
    case VK_MATVEC_INT_DOT_WIDE: return dot ? dot_path : MV_PLAIN;
    case VK_MATVEC_FP16: return f16 ? MV_FP16 : MV_PLAIN;
    case VK_MATVEC_AUTO: break;
    }
    /* the word-reading builds only where dot products are accelerated: lavapipe's Q8_0 gained
       nothing from them */
    if (dot && (dot_path == MV_INT_DOT_WIDE ? wide_wanted(vk) : c->int_dot && c->int_dot_fast))
        return dot_path;
    return f16 && c->fp16 && c->kind != VK_KIND_CPU ? MV_FP16 : MV_PLAIN;
}

/* Whether the wide build may read weight rows from row0 (bytes into window b, mod 2^32) every
   `stride` bytes: its pieces are indexed from the window's start, and aligned in memory only
   when the window is. */
static bool wide_ok(const struct vk_binding *b, uint32_t row0, uint32_t stride)
{
    return b->offset % 16 == 0 && row0 % 16 == 0 && stride % 16 == 0;
}

/* Whether a float weight matrix's matvec may take its build that reads 16-byte pieces
   (matvec.comp WIDE, in place of matvec_sg): the weight rows as wide_ok asks, the x rows too (the
   window, the first element and every stride on 4 floats), and rows of whole 8-element chunks. */
static bool wide_float_ok(const struct vk_binding *wb, const struct vk_push_matmul *pc, size_t unit,
                          const struct vk_binding *xb)
{
    return pc->K % 8 == 0 && xb->offset % 16 == 0 && pc->x_base % 4 == 0 && pc->x_s1 % 4 == 0 &&
           pc->x_s2 % 4 == 0 && pc->x_s3 % 4 == 0 &&
           wide_ok(wb, pc->w_base * (uint32_t)unit, pc->w_stride * (uint32_t)unit);
}

static bool wide_float_kernel(enum dtype t, enum vk_kernel *k)
{
    *k = t == DT_F32 ? VK_K_MV_WIDE_F32 : t == DT_F16 ? VK_K_MV_WIDE_F16 : VK_K_MV_WIDE_BF16;
    return t == DT_F32 || t == DT_F16 || t == DT_BF16;
}

/* wide: the build that reads 16-byte pieces (Q4_K, Q5_K, and Q8_0 in the split layout) */
static enum vk_kernel dot_kernel(enum dtype t, bool wide)
{
    return t == DT_Q8_0 ? (wide ? VK_K_MV_DOT_Q8_0_WIDE : VK_K_MV_DOT_Q8_0) : t == DT_Q4_0 ? VK_K_MV_DOT_Q4_0
         : t == DT_Q4_K ? (wide ? VK_K_MV_DOT_Q4_K_WIDE : VK_K_MV_DOT_Q4_K)
         : t == DT_Q5_K ? (wide ? VK_K_MV_DOT_Q5_K_WIDE : VK_K_MV_DOT_Q5_K) : VK_K_MV_DOT_Q6_K;
}

/* Rounds x rows [pc->r0, pc->r0 + pc->N) (bound at *xb) into int8 blocks in the scratch buffer
   (quantize_act.comp: 36 bytes per 32 values, or with k256 260 per 256) and rebinds *xb to them,
   as matvec_dot.comp reads. */
static int quantize_x(struct vk_ctx *vk, struct vk_push_matmul *pc, bool k256, struct vk_binding *xb)
{
    const struct vk_pipeline *pl;
    struct vk_buffer *scr;
    const uint64_t blocks = (uint64_t)pc->N * (pc->K / (k256 ? 256 : 32)), bytes = blocks * (k256 ? 260 : 36);
    int rc = vk_pipeline_get(vk, k256 ? VK_K_QUANTIZE_ACT_Q8K : VK_K_QUANTIZE_ACT, 0, &pl);
    if (rc == SEER_OK)
        rc = vk_scratch_get(vk, bytes, "op_matmul", &scr);
    if (rc)
        return rc;
    struct vk_binding b[2] = {*xb, {.buffer = scr->buffer, .offset = 0, .range = bytes, .base = 0, .write = true}};
    uint32_t gx, gy;
    vk_grid(vk, (blocks + pl->spec[VK_SPEC_WG] - 1) / pl->spec[VK_SPEC_WG], &gx, &gy);
    if ((rc = vk_cmd_dispatch(vk, pl, b, pc, gx, gy, 1)))
        return rc;
    *xb = b[1];
    xb->write = false;
    return SEER_OK;
}

/* ---- the split Q8_0 layout ---------------------------------------------------------------- */

/* Q8_0's 34-byte blocks keep no 16-byte alignment, so for the wide build the backend rearranges
   each Q8_0 matrix as it loads, row by row in place (q8_split.comp; TL_Q8_0_SPLIT: the row's
   values, then its scales): same bytes, same rows, so windows and strides do not change. Done
   where decode reads 16-byte pieces (wide_wanted) and the products are not exact; an exact backend would read it with matmul.comp only (vk_matmul), so
   set exact before loading. Rows must be whole 16-byte pieces (K a multiple of 256, every Qwen3.5
   matrix) at a 16-byte offset, and fit the shader's 16 KiB of shared memory. */
#define Q8_SPLIT_MAX_ROW (16u << 10)

int vk_weight_prepare(backend *be, tensor *t)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    const struct vk_caps *c = &vk->caps;
    const size_t row_bytes = (size_t)t->ne[0] / 32 * 34;
    if (t->type != DT_Q8_0 || t->layout != TL_ROWS || vk->exact || !wide_wanted(vk) || !c->subgroup_arith ||
        t->ne[0] % 256 || row_bytes > Q8_SPLIT_MAX_ROW || t->nb[1] != row_bytes || t->ne[2] * t->ne[3] != 1 ||
        t->offset % 16)
        return SEER_OK;
    struct vk_rows wr = vk_rows_of(t);
    const struct vk_pipeline *pl;
    const int64_t M = t->ne[1];
    int rc = vk_rows_check(be, &wr, 1, "weight_prepare");
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_Q8_SPLIT, 0, &pl);
    if (rc) /* nothing written: the matrix stays as it is */
        return seer_err_clear(), SEER_OK;
    for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
        if ((rc = vk_split(vk, &wr, 1, m0, M, (int64_t)vk_grid_max(vk), &m1, "weight_prepare")))
            return rc;
        struct vk_binding b = vk_bind(vk, &wr, m0, m1, 1, true);
        struct vk_push_matmul pc = {.M = (uint32_t)(m1 - m0), .K = (uint32_t)t->ne[0],
                                    .w_base = b.base + (uint32_t)m0 * (uint32_t)row_bytes,
                                    .w_stride = (uint32_t)row_bytes};
        uint32_t gx, gy;
        vk_grid(vk, (uint64_t)(m1 - m0), &gx, &gy);
        if ((rc = vk_cmd_dispatch(vk, pl, &b, &pc, gx, gy, 1)))
            return rc;
    }
    t->layout = TL_Q8_0_SPLIT;
    return SEER_OK;
}

/* ---- matmul ------------------------------------------------------------------------------ */

/* Both kernels take the same push constants and bindings; they differ in what a workgroup
   covers: matvec NR weight rows × NX (<= 8) x rows (grid z: consecutive groups of NX rows),
   matmul a BM×BN tile. Prefill uses matmul, except where caps.matvec_prefill says the matvec
   kernel in groups of 8 x rows is faster (CPU implementations: vk_caps). With an epilogue (op_linear),
   matvec.comp and matmul.comp apply it as they store (*fused set); the other kernels leave it to
   the caller. */
static int matmul_run(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep,
                      bool *fused)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    struct weight_kind wk;
    *fused = false;
    if (!weight_kind(w->type, &wk))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: op_matmul: weight dtype %s has no Vulkan kernel", dtype_name(w->type));
    struct vk_rows wr = vk_rows_of(w), xr = vk_rows_of(x), outr = vk_rows_of(out);
    struct vk_rows resr = ep && ep->res ? vk_rows_of(ep->res) : outr;
    int rc = vk_rows_check(be, &wr, wk.unit, "op_matmul");
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &xr, 4, "op_matmul");
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &outr, 4, "op_matmul");
    if (rc == SEER_OK && ep && ep->res)
        rc = vk_rows_check(be, &resr, 4, "op_linear");
    const int64_t M = w->ne[1], N = tensor_nrows(x), G = VK_MATVEC_MAX_N;
    const bool split = w->layout == TL_Q8_0_SPLIT; /* read by no plain matvec: matmul.comp instead */
    const enum mv_path path = mv_path(vk, w, N);
    const bool mv = (N <= G || vk->caps.matvec_prefill) && !(split && path == MV_PLAIN);
    const bool q8 = w->type == DT_Q8_0, dot = mv && (path == MV_INT_DOT || path == MV_INT_DOT_WIDE);
    if (split)
        wk.matmul = VK_K_MATMUL_Q8_0_SPLIT;
    const enum vk_kernel mvk = dot ? dot_kernel(w->type, false)
                               : path == MV_FP16  ? (q8 ? VK_K_MV_F16_Q8_0 : VK_K_MV_F16_Q4_0)
                               : vk->caps.subgroup_arith ? wk.matvec_sg
                                                         : wk.matvec;
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, mv ? mvk : wk.matmul, 0, &pl);
    /* the epilogue rides on the kernels built from matvec.comp and matmul.comp */
    const bool epi = ep && (ep->bias || ep->act || ep->res) &&
                     (mv ? (mvk == wk.matvec || mvk == wk.matvec_sg) : !split);
    struct vk_binding bbias = {0};
    if (rc == SEER_OK && epi && ep->bias) {
        struct vk_rows br = vk_rows_of(ep->bias);
        rc = vk_rows_check(be, &br, 4, "op_linear");
        if (rc == SEER_OK)
            rc = vk_bind_whole(vk, &br, 4, "op_linear", &bbias);
    }
    if (rc)
        return rc;
    const uint32_t ep_bits = !epi ? 0 : (ep->bias ? VK_EP_BIAS : 0) | (ep->act ? VK_EP_ACT : 0) | (ep->res ? VK_EP_RES : 0);
    /* rows of w per workgroup along grid x (matvec: x and y), rows of x along grid y (matvec: z) */
    const uint32_t BM = mv ? pl->spec[VK_SPEC_MV_NR] : pl->spec[VK_SPEC_MM_BM];
    const uint32_t BN = mv ? (uint32_t)G : pl->spec[VK_SPEC_MM_BN];
    const int64_t max_m = mv ? (int64_t)vk_grid_max(vk) * BM : (int64_t)vk->caps.max_wg_count[0] * BM;
    const int64_t max_n = (int64_t)vk->caps.max_wg_count[mv ? 2 : 1] * BN;
    const struct vk_rows x_out_res[3] = {xr, outr, resr}; /* they share the row index */
    const uint32_t w_stride = vk_stride(w->nb[1], wk.unit);
    struct vk_binding b[5];
    for (int64_t r0 = 0, r1; r0 < N; r0 = r1) {
        if ((rc = vk_split(vk, x_out_res, ep_bits & VK_EP_RES ? 3 : 2, r0, N, max_n, &r1, "op_matmul")))
            return rc;
        b[1] = vk_bind(vk, &xr, r0, r1, 4, false);
        b[2] = vk_bind(vk, &outr, r0, r1, 4, true);
        /* without an epilogue, any readable binding stands in for bias and residual */
        b[3] = ep_bits & VK_EP_BIAS ? bbias : b[1];
        b[4] = ep_bits & VK_EP_RES ? vk_bind(vk, &resr, r0, r1, 4, false) : b[1];
        const bool k256 = w->type == DT_Q4_K;
        if (dot && vk->qx.reuse && vk->qx.have && vk->qx.k256 == k256 && vk->qx.r0 == r0 &&
            vk->qx.r1 == r1) {
            b[1] = vk->qx.bind; /* an earlier product of this op_matmul_n rounded these rows */
        } else if (dot) { /* once per x window, for every weight window */
            struct vk_push_matmul qp = {
                .K = (uint32_t)w->ne[0], .N = (uint32_t)(r1 - r0), .x_base = b[1].base,
                .x_s1 = vk_stride(x->nb[1], 4), .x_s2 = vk_stride(x->nb[2], 4), .x_s3 = vk_stride(x->nb[3], 4),
                .x_ne1 = (uint32_t)x->ne[1], .x_ne2 = (uint32_t)x->ne[2], .r0 = (uint32_t)r0,
            };
            if ((rc = quantize_x(vk, &qp, k256, &b[1])))
                return rc;
            vk->qx.have = vk->qx.reuse, vk->qx.k256 = k256, vk->qx.r0 = r0, vk->qx.r1 = r1, vk->qx.bind = b[1];
        }
        for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
            if ((rc = vk_split(vk, &wr, 1, m0, M, max_m, &m1, "op_matmul")))
                return rc;
            b[0] = vk_bind(vk, &wr, m0, m1, wk.unit, false);
            struct vk_push_matmul pc = {
                .M = (uint32_t)(m1 - m0),
                .K = (uint32_t)w->ne[0],
                .N = (uint32_t)(r1 - r0),
                .w_base = b[0].base + (uint32_t)m0 * w_stride, /* row m0, mod 2^32 */
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
                .ep = ep_bits,
                .ep_act = ep_bits & VK_EP_ACT ? (uint32_t)ep->unary : 0,
                .b_base = b[3].base + (uint32_t)m0,
                .r_base = b[4].base + (uint32_t)r0 * (uint32_t)M + (uint32_t)m0,
            };
            uint32_t gx, gy;
            uint64_t m_groups = (uint64_t)(m1 - m0 + BM - 1) / BM;
            if (!mv) {
                gx = (uint32_t)m_groups;
                gy = (uint32_t)((r1 - r0 + BN - 1) / BN);
                if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
                    return rc;
                continue;
            }
            /* matvec: whole groups of G x rows in one dispatch (the build for G), then the
               remaining rows in one more (the build for their count); the outputs are disjoint.
               The wide build and the one it stands in for share the spec constants (BM). */
            const bool wide = path == MV_INT_DOT_WIDE && wide_ok(&b[0], pc.w_base, w_stride);
            if (split && !wide) /* vk_weight_prepare splits only rows that every window keeps aligned */
                return seer_err(SEER_EUNSUPPORTED, "vulkan: op_matmul: split Q8_0 rows of '%s' off 16 bytes", w->name);
            enum vk_kernel k = wide ? dot_kernel(w->type, true) : mvk, kf;
            if (mvk == wk.matvec_sg && wide_float_kernel(w->type, &kf) && wide_float_ok(&b[0], &pc, wk.unit, &b[1]))
                k = kf;
            vk_grid(vk, m_groups, &gx, &gy);
            for (int64_t n0 = r0, n; n0 < r1; n0 += n) {
                /* the integer-dot kernels read their NX rounded rows from x_base on (no grid z):
                   one dispatch per group (prefill on split rows, caps.matvec_prefill) */
                const int64_t groups = dot ? MIN((r1 - n0) / G, 1) : (r1 - n0) / G;
                n = groups ? groups * G : r1 - n0;
                if ((rc = vk_pipeline_get(vk, k, groups ? (uint32_t)G - 1 : (uint32_t)n - 1, &pl)))
                    return rc;
                pc.N = groups ? (uint32_t)G : (uint32_t)n;
                pc.r0 = (uint32_t)n0;
                if (dot) /* quantize_x's words per row: 9 per 32 values, 65 per 256 for Q4_K */
                    pc.x_base = b[1].base + (uint32_t)(n0 - r0) * (uint32_t)(k256 ? w->ne[0] / 256 * 65 : w->ne[0] / 32 * 9);
                pc.out_base = b[2].base + (uint32_t)n0 * (uint32_t)M + (uint32_t)m0;
                pc.r_base = b[4].base + (uint32_t)n0 * (uint32_t)M + (uint32_t)m0;
                if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, groups ? (uint32_t)groups : 1)))
                    return rc;
            }
        }
    }
    *fused = ep_bits != 0;
    return SEER_OK;
}

int vk_matmul(backend *be, tensor *out, const tensor *w, const tensor *x)
{
    bool fused;
    return matmul_run(be, out, w, x, NULL, &fused);
}

/* The products one after another in the command buffer: each is its own dispatch, and the device
   runs them with no host round trip between them. On the int-dot path x is rounded once for all
   (the scratch buffer holds the last rounding; nothing else writes it between the products). */
int vk_matmul_n(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    int rc = SEER_OK;
    vk->qx.reuse = true, vk->qx.have = false;
    for (int i = 0; i < n && rc == SEER_OK; i++)
        rc = vk_matmul(be, outs[i], ws[i], x);
    vk->qx.reuse = false, vk->qx.have = false;
    return rc;
}

/* The product with its epilogue applied at the stores where the kernel has it (matvec.comp,
   matmul.comp: the vision tower's F16 products), which saves three passes over out; else the
   epilogue as the ops it stands for, in place on out (ordered by the barriers between dispatches).
   Both give the same floats (tests/ops/op_checks.h check_linear_ops). */
int vk_linear(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep)
{
    bool fused;
    int rc = matmul_run(be, out, w, x, ep, &fused);
    if (rc || fused)
        return rc;
    if (ep->bias)
        rc = vk_binary(be, BINARY_ADD, out, out, ep->bias);
    if (rc == SEER_OK && ep->act)
        rc = vk_unary(be, ep->unary, out, out);
    if (rc == SEER_OK && ep->res)
        rc = vk_binary(be, BINARY_ADD, out, out, ep->res);
    return rc;
}

/* ---- get_rows ---------------------------------------------------------------------------- */

int vk_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids)
{
    static const char *op = "op_get_rows";
    struct vk_ctx *vk = vk_ctx_of(be);
    struct weight_kind wk;
    if (!weight_kind(table->type, &wk))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: table dtype %s has no Vulkan kernel", op, dtype_name(table->type));
    struct vk_rows tr = vk_rows_of(table), ir = vk_rows_of(ids), outr = vk_rows_of(out);
    int rc = vk_rows_check(be, &tr, wk.unit, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &ir, 4, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &outr, 4, op);
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, table->layout == TL_Q8_0_SPLIT ? VK_K_GET_ROWS_Q8_0_SPLIT : wk.get_rows, 0, &pl);
    struct vk_binding b[3];
    if (rc == SEER_OK)
        rc = vk_bind_whole(vk, &ir, 4, op, &b[1]);
    if (rc)
        return rc;
    const int64_t H = table->ne[0], V = table->ne[1], N = ids->ne[0];
    const uint64_t chunks = (uint64_t)(H + 7) / 8, WG = pl->spec[VK_SPEC_WG];
    /* ids per dispatch: invocations below 2^31 and within the grid */
    const int64_t max_n = (int64_t)MAX(MIN(vk_grid_max(vk) * WG, (uint64_t)1 << 31) / chunks, (uint64_t)1);
    const uint32_t t_stride = vk_stride(table->nb[1], wk.unit);
    for (int64_t n0 = 0, n1; n0 < N; n0 = n1) {
        if ((rc = vk_split(vk, &outr, 1, n0, N, max_n, &n1, op)))
            return rc;
        b[2] = vk_bind(vk, &outr, n0, n1, 4, true);
        for (int64_t v0 = 0, v1; v0 < V; v0 = v1) {
            if ((rc = vk_split(vk, &tr, 1, v0, V, V, &v1, op)))
                return rc;
            b[0] = vk_bind(vk, &tr, v0, v1, wk.unit, false);
            struct vk_push_get_rows pc = {
                .H = (uint32_t)H, .n_ids = (uint32_t)(n1 - n0), .V = (uint32_t)V,
                .v_lo = (uint32_t)v0, .v_hi = (uint32_t)v1, .zero_bad = v0 == 0,
                .t_base = b[0].base, .t_stride = t_stride,
                .ids_base = b[1].base + (uint32_t)n0,
                .out_base = b[2].base + (uint32_t)n0 * vk_stride(out->nb[1], 4),
                .out_stride = vk_stride(out->nb[1], 4),
            };
            uint32_t gx, gy;
            vk_grid(vk, ((uint64_t)(n1 - n0) * chunks + WG - 1) / WG, &gx, &gy);
            if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
                return rc;
        }
    }
    return SEER_OK;
}
