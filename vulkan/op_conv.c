/* op_conv.c — vk_conv1d_causal (core/ops.h op_conv1d_causal, spec §2.5 step 2, conv-state notes
   after step 10): the GDN layer's causal depthwise conv with its carried state of the last K−1
   inputs, one invocation per (channel, block of tokens) (shaders/conv.comp). x and out larger
   than a storage window are split by tokens; each piece's x window starts K−1 rows early, since
   its first outputs read the rows before it. The state is read by the first piece and rewritten
   by the last (conv.comp explains why no invocation reads a state row another has rewritten). */
#include "core/error.h"
#include "core/util.h"
#include "vulkan/op_tokens.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

int vk_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state)
{
    static const char op[] = "op_conv1d_causal";
    struct vk_ctx *vk = vk_ctx_of(be);
    const int64_t C = x->ne[0], T = x->ne[1], K = w->ne[0];
    struct vk_rows xr = vk_rows_of(x), orow = vk_rows_of(out), wr = vk_rows_of(w), sr = vk_rows_of(state);
    const struct vk_rows *walks[] = {&xr, &orow, &wr, &sr};
    int rc = SEER_OK;
    for (size_t i = 0; i < ARRAY_LEN(walks) && rc == SEER_OK; i++)
        rc = vk_rows_check(be, walks[i], 4, op);
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_CONV, 0, &pl);
    if (rc)
        return rc;
    const uint32_t WG = pl->spec[VK_SPEC_WG], TB = pl->spec[VK_SPEC_CONV_TB];
    if (K - 1 > (int64_t)TB)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: kernel size %lld exceeds %u + 1 taps", op, (long long)K, TB);
    if ((C + WG - 1) / WG > (int64_t)vk->caps.max_wg_count[0])
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: %lld channels exceed the workgroup grid", op, (long long)C);
    struct vk_binding b[4];
    if ((rc = vk_bind_whole(vk, &wr, 4, op, &b[1])) || (rc = vk_bind_whole(vk, &sr, 4, op, &b[2])))
        return rc;
    b[2].write = true; /* the state is rewritten */
    const int64_t max_tokens = (int64_t)vk->caps.max_wg_count[1] * TB;
    for (int64_t t0 = 0, t1; t0 < T; t0 = t1) {
        /* x rows [lo, t1) feed outputs [t0, t1); a later piece must not need the state */
        int64_t lo = t0 == 0 ? 0 : t0 - (K - 1), x_end;
        if (lo < 0)
            return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: the storage window holds fewer than %lld tokens of '%s'",
                            op, (long long)(K - 1), x->name);
        if ((rc = vk_split(vk, &xr, 1, lo, T, max_tokens + (t0 - lo), &x_end, op)))
            return rc;
        if (x_end <= t0)
            return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: the storage window holds fewer than %lld tokens of '%s'",
                            op, (long long)K, x->name);
        if ((rc = vk_split(vk, &orow, 1, t0, x_end, max_tokens, &t1, op)))
            return rc;
        b[0] = vk_bind(vk, &xr, lo, t1, 4, false);
        b[3] = vk_bind(vk, &orow, t0, t1, 4, true);
        struct vk_push_conv pc = {
            .C = (uint32_t)C, .K = (uint32_t)K, .T = (uint32_t)T, .t0 = (uint32_t)t0, .n = (uint32_t)(t1 - t0),
            .x_base = b[0].base, .x_s1 = vk_stride(x->nb[1], 4),
            .w_base = b[1].base, .s_base = b[2].base, .o_base = b[3].base,
            .write_state = t1 == T,
        };
        uint32_t gx = (uint32_t)((C + WG - 1) / WG), gy = (uint32_t)((t1 - t0 + TB - 1) / TB);
        if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
            return rc;
    }
    return SEER_OK;
}
