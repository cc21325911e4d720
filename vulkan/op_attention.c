/* op_attention.c — vk_attention (core/ops.h op_attention; spec §2.6 step 6: causal GQA over the
   KV cache, spec §4.5 step 4: the vision tower's per-segment bidirectional attention) with
   shaders/attention.comp: flash-style, a workgroup per (tile of query-head rows of one kv head,
   key range), online softmax over key blocks. With few row tiles (decoding: one query) the keys
   are split into ranges run by separate workgroups (split-K), whose partial sums
   attention_combine.comp merges, so a single query still fills the device.
   K and V (f32, f16 or q8_0, any row strides: views of a cache) must each fit one storage
   window; q and out are split by queries when they do not. */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/op_tokens.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

/* Split-K: aim for this many workgroups in all, with at least ATTN_MIN_KEYS keys per range
   (fewer would cost more in the combine than the extra workgroups gain), and partials within
   ATTN_PART_BUDGET bytes of scratch (and one storage window). */
#define ATTN_TARGET_GROUPS 128
#define ATTN_MIN_KEYS 128
#define ATTN_PART_BUDGET ((uint64_t)16 << 20)

int vk_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, float scale,
                 const struct attn_mask *mask)
{
    static const char op[] = "op_attention";
    struct vk_ctx *vk = vk_ctx_of(be);
    const int64_t hd = q->ne[0], nh = q->ne[1], T = q->ne[2], nkv = k->ne[1], Tk = k->ne[2], r = nh / nkv;
    const bool causal = mask->kind == ATTN_CAUSAL;
    /* the shader indexes K/V in elements (f32, f16) or bytes (q8_0's 34-byte blocks) */
    const size_t kv_unit = k->type == DT_F32 ? 4 : k->type == DT_F16 ? 2 : 1;
    if (hd > VK_ATTN_HEAD_DIM_MAX)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: head dim %lld exceeds %d", op, (long long)hd,
                        VK_ATTN_HEAD_DIM_MAX);
    const uint32_t variant = hd <= 64 ? 0 : hd <= 128 ? 1 : 2; /* head dims up to 64 << variant */
    /* Many query rows per kv head (the tower, prefill): attention_tiled.comp where its tile fits
       the device; decode's few rows: attention.comp, whose row tiles waste less on them. */
    uint32_t tbr, tbk;
    const bool tiled = T * r >= 16 && vk_attn_tiled_tile(&vk->caps, variant, &tbr, &tbk);
    const enum vk_kernel kern = k->type == DT_F32   ? (tiled ? VK_K_ATTN_TILED_F32 : VK_K_ATTN_F32)
                                : k->type == DT_F16 ? (tiled ? VK_K_ATTN_TILED_F16 : VK_K_ATTN_F16)
                                                    : (tiled ? VK_K_ATTN_TILED_Q8_0 : VK_K_ATTN_Q8_0);

    struct vk_rows qr = vk_rows_of(q), kr = vk_rows_of(k), vr = vk_rows_of(v), orow = vk_rows_of(out);
    int rc = vk_rows_check(be, &qr, 4, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &kr, kv_unit, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &vr, kv_unit, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &orow, 4, op);
    struct vk_binding bk, bv, bseg;
    if (rc == SEER_OK)
        rc = vk_bind_whole(vk, &kr, kv_unit, op, &bk);
    if (rc == SEER_OK)
        rc = vk_bind_whole(vk, &vr, kv_unit, op, &bv);
    if (rc == SEER_OK && !causal) {
        struct vk_rows sr = vk_rows_of(mask->seg);
        rc = vk_rows_check(be, &sr, 4, op);
        if (rc == SEER_OK)
            rc = vk_bind_whole(vk, &sr, 4, op, &bseg);
    }
    const struct vk_pipeline *pl, *comb = NULL;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, kern, variant, &pl);
    if (rc)
        return rc;
    if (nkv > (int64_t)vk->caps.max_wg_count[1])
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: %lld kv heads exceed the workgroup grid", op, (long long)nkv);
    const int64_t BR = pl->spec[VK_SPEC_ATTN_BR], BK = pl->spec[VK_SPEC_ATTN_BK];

    /* Keys per range: the tiles of the whole call decide; a causal call's queries see at most
       q_pos0 + T keys. */
    const int64_t tiles = (T * r + BR - 1) / BR * nkv;
    const int64_t keys = causal ? mask->q_pos0 + T : Tk;
    int64_t n_split = 1;
    if (tiles < ATTN_TARGET_GROUPS && keys >= 2 * ATTN_MIN_KEYS) {
        n_split = MIN((ATTN_TARGET_GROUPS + tiles - 1) / tiles, keys / ATTN_MIN_KEYS);
        const uint64_t row_bytes = (uint64_t)(hd + 2) * 4 * (uint64_t)(T * nh);
        const uint64_t budget = MIN(ATTN_PART_BUDGET, vk->caps.max_storage_range);
        n_split = MIN(n_split, (int64_t)MAX(budget / row_bytes, (uint64_t)1));
        n_split = MIN(n_split, (int64_t)vk->caps.max_wg_count[2]);
    }
    int64_t kps = (keys + n_split - 1) / n_split;
    kps = (kps + BK - 1) / BK * BK; /* whole key blocks per range */
    n_split = (keys + kps - 1) / kps;
    struct vk_binding bpart;
    if (n_split > 1) {
        struct vk_buffer *scr;
        VkDeviceSize bytes = (VkDeviceSize)(hd + 2) * 4 * (VkDeviceSize)(T * nh) * (VkDeviceSize)n_split;
        if ((rc = vk_pipeline_get(vk, VK_K_ATTN_COMBINE, 0, &comb)) || (rc = vk_scratch_get(vk, bytes, op, &scr)))
            return rc;
        bpart = (struct vk_binding){.buffer = scr->buffer, .offset = 0, .range = (bytes + 3) & ~(VkDeviceSize)3,
                                    .base = 0, .write = true};
    }

    /* q and out by queries; a piece also stays within the row-tile grid */
    const struct vk_rows qo_tok[2] = {vk_token_rows(q, 2), vk_token_rows(out, 2)};
    const int64_t max_q = MAX((int64_t)vk->caps.max_wg_count[0] * BR / r, (int64_t)1);
    for (int64_t t0 = 0, t1; t0 < T; t0 = t1) {
        if ((rc = vk_split(vk, qo_tok, 2, t0, T, max_q, &t1, op)))
            return rc;
        struct vk_binding b[6];
        b[0] = vk_bind(vk, &qo_tok[0], t0, t1, 4, false);
        b[1] = bk;
        b[2] = bv;
        b[3] = vk_bind(vk, &qo_tok[1], t0, t1, 4, true);
        b[4] = causal ? b[0] : bseg;  /* unused when causal: any readable binding */
        b[5] = n_split > 1 ? bpart : b[3]; /* unused without split-K */
        const uint32_t t = (uint32_t)t0;
        struct vk_push_attn pc = {
            .hd = (uint32_t)hd, .nh = (uint32_t)nh, .nkv = (uint32_t)nkv, .Tk = (uint32_t)Tk,
            .t0 = t, .nt = (uint32_t)(t1 - t0),
            .q_s1 = vk_stride(q->nb[1], 4), .q_s2 = vk_stride(q->nb[2], 4),
            .k_base = bk.base, .k_s1 = vk_stride(k->nb[1], kv_unit), .k_s2 = vk_stride(k->nb[2], kv_unit),
            .v_base = bv.base, .v_s1 = vk_stride(v->nb[1], kv_unit), .v_s2 = vk_stride(v->nb[2], kv_unit),
            .seg_base = causal ? 0 : bseg.base, .causal = causal, .q_pos0 = causal ? (uint32_t)mask->q_pos0 : 0,
            .n_split = (uint32_t)n_split, .kps = (uint32_t)kps, .p_base = 0, .scale = scale,
        };
        pc.q_base = b[0].base + t * pc.q_s2;
        pc.o_base = b[3].base + t * (uint32_t)(nh * hd);
        const uint32_t gx = (uint32_t)(((t1 - t0) * r + BR - 1) / BR);
        if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, (uint32_t)nkv, (uint32_t)n_split)))
            return rc;
        if (n_split > 1) {
            struct vk_binding bc[2] = {bpart, b[3]};
            bc[0].write = false;
            const uint64_t rows = (uint64_t)(t1 - t0) * (uint64_t)nh;
            struct vk_push_attn_combine cc = {.hd = (uint32_t)hd, .n_rows = (uint32_t)rows, .n_split = (uint32_t)n_split,
                                              .p_base = 0, .o_base = pc.o_base};
            uint32_t cx, cy;
            vk_grid(vk, rows, &cx, &cy);
            if ((rc = vk_cmd_dispatch(vk, comb, bc, &cc, cx, cy, 1)))
                return rc;
        }
    }
    return SEER_OK;
}
