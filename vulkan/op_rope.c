/* op_rope.c — rotary position embeddings (core/ops.h): vk_rope_text, the text decoder's partial
   interleaved MRoPE (spec §3.3), and vk_rope_vision, the vision tower's 2-D axial RoPE (spec
   §4.4). Both rotate rotate-half pairs (i, i + half) by pos_axis(i)·inv_freq(i); they differ in
   the per-pair tables built here exactly as core/cpu/rope.c builds them (inv_freq rounded to f32
   from a double pow, so every angle is the CPU's f32 product). The tables travel in push
   constants, 16 pairs a dispatch (VK_ROPE_PAIRS): no upload, no buffer to keep; rope.comp takes
   sin/cos of the angle with an exact range reduction (shaders/common/math.glsl). */
#include <math.h>

#include "core/error.h"
#include "core/util.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

/* Per-pair tables for `half` pairs: freq[i] and axis[i] (0..2), as core/cpu/rope.c. */
typedef void (*rope_table_fn)(const void *params, int64_t i, float *freq, uint32_t *axis);

static int rope(backend *be, const char *op, tensor *out, const tensor *x, const tensor *pos, int64_t half,
                rope_table_fn table, const void *params)
{
    struct vk_ctx *vk = vk_ctx_of(be);
    const int64_t hd = x->ne[0], nh = x->ne[1], T = x->ne[2], n_rows = nh * T;
    if (hd > 0xffff)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: %s: head dim %lld exceeds 65535", op, (long long)hd);
    struct vk_rows walks[2] = {vk_rows_of(x), vk_rows_of(out)}, pr = vk_rows_of(pos);
    int rc = vk_rows_check(be, &walks[0], 4, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &walks[1], 4, op);
    if (rc == SEER_OK)
        rc = vk_rows_check(be, &pr, 4, op);
    const struct vk_pipeline *pl;
    if (rc == SEER_OK)
        rc = vk_pipeline_get(vk, VK_K_ROPE, 0, &pl);
    struct vk_binding b[3];
    if (rc == SEER_OK)
        rc = vk_bind_whole(vk, &pr, 4, op, &b[1]);
    if (rc)
        return rc;
    const uint64_t WG = pl->spec[VK_SPEC_WG];
    const int64_t n_copy = hd - 2 * half; /* dims past the rotated ones pass through (spec §3.3) */
    const int64_t per_row_max = MAX((int64_t)VK_ROPE_PAIRS, n_copy + VK_ROPE_PAIRS);
    const int64_t max_rows = MAX((int64_t)MIN(vk_grid_max(vk) * WG, (uint64_t)1 << 31) / per_row_max, (int64_t)1);
    for (int64_t r0 = 0, r1; r0 < n_rows; r0 = r1) {
        if ((rc = vk_split(vk, walks, 2, r0, n_rows, max_rows, &r1, op)))
            return rc;
        b[0] = vk_bind(vk, &walks[0], r0, r1, 4, false);
        b[2] = vk_bind(vk, &walks[1], r0, r1, 4, true);
        for (int64_t i0 = 0; i0 < half; i0 += VK_ROPE_PAIRS) { /* half >= 1: ops.c */
            const int64_t n_pairs = MIN((int64_t)VK_ROPE_PAIRS, half - i0), copy = i0 == 0 ? n_copy : 0;
            struct vk_push_rope pc = {
                .nh = (uint32_t)nh, .T = (uint32_t)T, .r0 = (uint32_t)r0, .n_rows = (uint32_t)(r1 - r0),
                .x_base = b[0].base, .x_s1 = vk_stride(x->nb[1], 4), .x_s2 = vk_stride(x->nb[2], 4),
                .o_base = b[2].base, .o_s1 = vk_stride(out->nb[1], 4), .o_s2 = vk_stride(out->nb[2], 4),
                .pos_base = b[1].base,
                .pairs = (uint32_t)i0 | (uint32_t)n_pairs << 16,
                .half_copy = (uint32_t)half | (uint32_t)copy << 16,
            };
            for (int64_t j = 0; j < n_pairs; j++) {
                uint32_t axis;
                table(params, i0 + j, &pc.freq[j], &axis);
                pc.axes |= axis << (2 * j);
            }
            uint32_t gx, gy;
            vk_grid(vk, ((uint64_t)(r1 - r0) * (uint64_t)(n_pairs + copy) + WG - 1) / WG, &gx, &gy);
            if ((rc = vk_cmd_dispatch(vk, pl, b, &pc, gx, gy, 1)))
                return rc;
        }
    }
    return SEER_OK;
}

static void text_table(const void *params, int64_t i, float *freq, uint32_t *axis)
{
    const struct rope_text_params *p = params;
    /* spec §3.3: inv_freq = theta^(−2i/n_rot), rounded to f32 as HF keeps it */
    *freq = (float)pow((double)p->theta, -2.0 * (double)i / (double)p->n_rot);
    /* interleaved sections (backend.h rope_text_params, spec §3.3): T by default; H for
       i = 1, 4, … < 3·sections[1]; W for i = 2, 5, … < 3·sections[2] */
    int a = (int)(i % 3);
    *axis = (a == 1 || a == 2) && i < 3 * (int64_t)p->sections[a] ? (uint32_t)a : 0;
}

int vk_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p)
{
    return rope(be, "op_rope_text", out, x, pos, p->n_rot / 2, text_table, p);
}

struct vision_params {
    double theta;
    int64_t half, quarter;
};

static void vision_table(const void *params, int64_t i, float *freq, uint32_t *axis)
{
    const struct vision_params *p = params;
    /* spec §4.4: inv_freq[j] = theta^(−2j/(dh/2)), j < dh/4, in f32; the first dh/4 angles use
       the patch row (axis 0 of pos), the next dh/4 the column (axis 1) */
    int64_t j = i < p->quarter ? i : i - p->quarter;
    *freq = (float)pow(p->theta, -2.0 * (double)j / (double)p->half);
    *axis = i < p->quarter ? 0 : 1;
}

int vk_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta)
{
    /* ops.c: dh is a multiple of 4 */
    struct vision_params vp = {(double)theta, x->ne[0] / 2, x->ne[0] / 4};
    return rope(be, "op_rope_vision", out, x, pos, vp.half, vision_table, &vp);
}
