/* op_gdn.c — vk_gdn_recurrent and vk_gdn_chunked (core/ops.h, spec §2.5 steps 5–8): the Gated
   DeltaNet of Qwen3.5's linear-attention layers on Vulkan.
   Recurrent (decode): one dispatch of shaders/gdn_recurrent.comp, a workgroup per (value head,
   block of value columns) holding its columns' state in registers and stepping the tokens.
   Chunked (prefill): tokens go in batches of whole 64-token chunks; per batch gdn_prep.comp
   computes every chunk's state-independent matrices in parallel (A, (I + A)⁻¹, W, U, P) into the
   context's scratch buffer, then gdn_state.comp walks the batch's chunks in order, parallel over
   value heads and value columns, carrying the state. A batch is bounded by the scratch budget
   and by the storage windows of its tokens (memory.c's rule, by token).
   Divisions: shared checks and bindings · recurrent · chunked. */
#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/op_tokens.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

#define GDN_CH 64                         /* chunk length (spec §2.5 step 8), as gdn_chunk.glsl */
#define GDN_DK_MAX 256                    /* gdn_state.comp holds dk ≤ 256 state rows per column */
#define GDN_SCRATCH_BUDGET ((uint64_t)64 << 20) /* bytes of chunk matrices per batch */

/* ---- shared checks and bindings ------------------------------------------------------------ */

enum { GQ, GK, GV, GG, GB, GO, G_N }; /* the per-token tensors, in walk order */

struct gdn_call {
    const char *op;
    const tensor *t[G_N];       /* q, k, v, g, beta, out */
    tensor *state;
    struct vk_rows tok[G_N];    /* walks by token */
    struct vk_binding b[G_N];   /* windows of the current piece */
    struct vk_binding bs;       /* the whole state */
    struct vk_push_gdn pc;      /* the fields every piece shares */
};

static int gdn_setup(backend *be, const char *op, struct gdn_call *c, tensor *out, const tensor *q,
                     const tensor *k, const tensor *v, const tensor *g, const tensor *beta, tensor *state,
                     float scale, enum gdn_head_order order)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    *c = (struct gdn_call){.op = op, .t = {q, k, v, g, beta, out}, .state = state};
    int rc = SEER_OK;
    for (int i = 0; i < G_N && rc == SEER_OK; i++) {
        struct vk_rows own = vk_rows_of(c->t[i]);
        rc = vk_rows_check(be, &own, 4, op);
        c->tok[i] = vk_token_rows(c->t[i], i == GG || i == GB ? 1 : 2);
    }
    struct vk_rows sr = vk_rows_of(state);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &sr, 4, op);
    if (rc == SEER_OK)
        rc = vk_bind_whole(vk, &sr, 4, op, &c->bs);
    if (rc)
        return rc;
    c->bs.write = true; /* updated in place */
    /* other workgroups read every q/k row a workgroup's output columns would overwrite */
    if (vk_rows_overlap(&c->tok[GO], &c->tok[GQ]) || vk_rows_overlap(&c->tok[GO], &c->tok[GK]))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: out must not overlap q or k", op);
    const int64_t dk = q->ne[0], Hk = q->ne[1], dv = v->ne[0], Hv = v->ne[1];
    if (Hv > (int64_t)vk->caps.max_wg_count[1])
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: %lld value heads exceed the workgroup grid", op, (long long)Hv);
    c->pc = (struct vk_push_gdn){
        .dk = (uint32_t)dk, .dv = (uint32_t)dv, .Hk = (uint32_t)Hk, .Hv = (uint32_t)Hv,
        .tiled = order == GDN_V_TILED, .ratio = (uint32_t)(Hv / Hk),
        .q_s1 = vk_stride(q->nb[1], 4), .q_s2 = vk_stride(q->nb[2], 4),
        .k_s1 = vk_stride(k->nb[1], 4), .k_s2 = vk_stride(k->nb[2], 4),
        .v_s1 = vk_stride(v->nb[1], 4), .v_s2 = vk_stride(v->nb[2], 4),
        .g_s1 = vk_stride(g->nb[1], 4), .b_s1 = vk_stride(beta->nb[1], 4),
        .s_base = c->bs.base, .scale = scale,
    };
    return SEER_OK;
}

/* Tokens [t0, t1) as the next piece: the largest t1 ≤ t0 + max_tokens whose rows of every
   tensor fit a window; binds them and moves the push bases to token t0 (mod 2^32). */
static int gdn_piece(struct vk_ctx *vk, struct gdn_call *c, int64_t t0, int64_t max_tokens, int64_t *t1)
{
    const int64_t T = c->t[GQ]->ne[2];
    int rc = vk_split(vk, c->tok, G_N, t0, T, max_tokens, t1, c->op);
    if (rc)
        return rc;
    for (int i = 0; i < G_N; i++)
        c->b[i] = vk_bind(vk, &c->tok[i], t0, *t1, 4, i == GO);
    const uint32_t t = (uint32_t)t0;
    struct vk_push_gdn *p = &c->pc;
    p->T = (uint32_t)(*t1 - t0);
    p->q_base = c->b[GQ].base + t * p->q_s2;
    p->k_base = c->b[GK].base + t * p->k_s2;
    p->v_base = c->b[GV].base + t * p->v_s2;
    p->g_base = c->b[GG].base + t * p->g_s1;
    p->b_base = c->b[GB].base + t * p->b_s1;
    p->o_base = c->b[GO].base + t * p->Hv * p->dv; /* out is contiguous {dv, Hv, T} */
    return SEER_OK;
}

/* ---- recurrent (spec §2.5 step 7) ---------------------------------------------------------- */

int vk_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g,
                     const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    struct gdn_call c;
    const struct vk_pipeline *pl;
    int rc = gdn_setup(be, "op_gdn_recurrent", &c, out, q, k, v, g, beta, state, scale, order);
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_GDN_RECURRENT, 0, &pl);
    if (rc)
        return rc;
    /* lanes per value column: enough for dk rows at RPL registers each, a power of two ≤ WG */
    const uint32_t WG = pl->spec[VK_SPEC_WG], RPL = pl->spec[VK_SPEC_GDN_RPL];
    uint32_t nl = 1;
    while ((int64_t)nl * RPL < q->ne[0] && nl < WG)
        nl *= 2;
    if ((int64_t)nl * RPL < q->ne[0])
        return seer_err(SEER_EUNSUPPORTED, "vulkan: op_gdn_recurrent: dk %lld exceeds %u", (long long)q->ne[0], nl * RPL);
    c.pc.nl = nl;
    const int64_t cols = WG / nl, gx = (v->ne[0] + cols - 1) / cols;
    if (gx > (int64_t)vk->caps.max_wg_count[0])
        return seer_err(SEER_EUNSUPPORTED, "vulkan: op_gdn_recurrent: dv %lld exceeds the workgroup grid", (long long)v->ne[0]);
    const int64_t T = q->ne[2];
    /* the state stays in global memory between pieces, so any token split is exact */
    for (int64_t t0 = 0, t1; t0 < T; t0 = t1) {
        if ((rc = gdn_piece(vk, &c, t0, T, &t1)))
            return rc;
        struct vk_binding b[7] = {c.b[GQ], c.b[GK], c.b[GV], c.b[GG], c.b[GB], c.bs, c.b[GO]};
        if ((rc = vk_cmd_dispatch(vk, pl, b, &c.pc, (uint32_t)gx, (uint32_t)v->ne[1], 1)))
            return rc;
    }
    return SEER_OK;
}

/* ---- chunked (spec §2.5 step 8) ------------------------------------------------------------ */

int vk_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g,
                   const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    static const char op[] = "op_gdn_chunked";
    struct vk_ctx *vk = vk_ctx_of(be);
    struct gdn_call c;
    const struct vk_pipeline *prep, *walk;
    int rc = gdn_setup(be, op, &c, out, q, k, v, g, beta, state, scale, order);
    if (rc)
        return rc;
    const int64_t dk = q->ne[0], dv = v->ne[0], Hv = v->ne[1], T = q->ne[2];
    /* one (chunk, head) block: W {CH×dk}, U {CH×dv}, P {CH×CH}, fq, fk {CH}, dec (+ padding) —
       gdn_chunk.glsl's layout; the sizes are bounded by the tensors, which exist */
    const uint64_t per = (uint64_t)GDN_CH * (uint64_t)(dk + dv + GDN_CH + 2) + 4;
    const uint64_t chunk_bytes = per * (uint64_t)Hv * 4;
    const uint64_t budget = MIN(GDN_SCRATCH_BUDGET, vk->caps.max_storage_range);
    /* Where the chunk kernels cannot run (a device without 256 invocations or 20 KiB of shared
       memory, dk beyond gdn_state.comp's rows, a chunk's matrices beyond the scratch budget or
       dv beyond the grid) the token-by-token kernel gives the same result (ops.h). */
    bool fits = dk <= GDN_DK_MAX && chunk_bytes <= budget && (dv + 15) / 16 <= (int64_t)vk->caps.max_wg_count[0];
    if (fits && (rc = vk_pipeline_get(vk, VK_K_GDN_PREP, 0, &prep)) == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_GDN_STATE, 0, &walk);
    if (!fits || rc == SEER_EUNSUPPORTED) {
        LOG_DEBUG("vulkan", "%s: dk %lld, dv %lld, %lld heads: token by token (%s)", op, (long long)dk, (long long)dv,
                  (long long)Hv, fits ? seer_last_error() : "outside the chunk kernels' limits");
        return vk_gdn_recurrent(be, out, q, k, v, g, beta, state, scale, order);
    }
    if (rc)
        return rc;
    const int64_t n_chunks = (T + GDN_CH - 1) / GDN_CH;
    int64_t batch = (int64_t)MIN(budget / chunk_bytes, (uint64_t)vk->caps.max_wg_count[0]);
    batch = MIN(batch, n_chunks);
    struct vk_buffer *scr;
    if ((rc = vk_scratch_get(vk, (VkDeviceSize)batch * chunk_bytes, op, &scr)))
        return rc;
    c.pc.per = (uint32_t)per;
    c.pc.scr_base = 0;
    const int64_t gx_cols = (dv + 15) / 16; /* gdn_state.comp: 16 columns per workgroup */
    for (int64_t t0 = 0, t1; t0 < T; t0 = t1) {
        if ((rc = gdn_piece(vk, &c, t0, batch * GDN_CH, &t1)))
            return rc;
        /* a batch cut short by a window still ends on a chunk boundary when it can, so the
           chunks are the same as in one pass */
        if (t1 < T && t1 - t0 > GDN_CH && (t1 - t0) % GDN_CH)
            if ((rc = gdn_piece(vk, &c, t0, (t1 - t0) / GDN_CH * GDN_CH, &t1)))
                return rc;
        const int64_t nc = (t1 - t0 + GDN_CH - 1) / GDN_CH;
        struct vk_binding bscr = {.buffer = scr->buffer, .offset = 0,
                                  .range = (VkDeviceSize)nc * chunk_bytes, .base = 0, .write = true};
        struct vk_binding bp[6] = {c.b[GQ], c.b[GK], c.b[GV], c.b[GG], c.b[GB], bscr};
        if ((rc = vk_cmd_dispatch(vk, prep, bp, &c.pc, (uint32_t)nc, (uint32_t)Hv, 1)))
            return rc;
        bscr.write = false;
        struct vk_binding bw[5] = {c.b[GQ], c.b[GK], bscr, c.bs, c.b[GO]};
        if ((rc = vk_cmd_dispatch(vk, walk, bw, &c.pc, (uint32_t)gx_cols, (uint32_t)Hv, 1)))
            return rc;
    }
    return SEER_OK;
}
