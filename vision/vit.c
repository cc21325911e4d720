/* vit.c — the Qwen3.5 vision tower's forward pass (spec §4), read top to bottom: patch embedding
   (§4.2) → bilinearly resampled learned position embedding (§4.3) → per block LayerNorm, qkv,
   2-D RoPE (§4.4), attention within each segment, proj, LayerNorm, GELU-tanh MLP (§4.5) → the
   patch merger (vision/merger.c, §4.6). Only core/ops.h ops, so every backend runs it.
   Every product and attention accepts bf16 operands (`.bf16`): a backend that is not exact may take
   them (the CPU with AVX512-BF16: about 1.4x the tower's speed, within 1e-2 of the float64
   reference, tests/vision/vit.c; docs/ARCHITECTURE.md "Exact and not exact"). The text model does
   not: its logits are what users compare with llama.cpp and Hugging Face, bf16 rounding would make
   them depend on how a prompt is split into micro-batches, and its prompt products are quantised.
   Divisions: scratch plan · per-call tables · forward. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/util.h"
#include "vision/vit.h"

/* ---- scratch plan ------------------------------------------------------------------------------
   Every buffer of a call is taken once, before the block loop, and reused by every block:
     big  {F, N}    pixel rows, then each block's qkv {3Dv, N} and MLP hidden {Iv, N}, then the
                    merger's fc1 {M²·Dv, N/M²} (F = the largest of those widths)
     h    {Dv, N}   the residual stream
     a    {Dv, N}   LayerNorm output; then the roped k; then each projection's output
     v    {Dv, N}   v, copied out of qkv (below); first the position-embedding terms
     o    {Dv, N}   attention output; first the summed position embedding
     out  {out_dim, N/M²} merged tokens
   plus the per-call tables: RoPE positions i32 {N, 2}, segment ids i32 {N}, the four bilinear
   taps' rows i32 {N, 4} and weights f32 {N, 4}.
   k and v are copied out of qkv into contiguous tensors because a backend binds each of them as
   one storage window (vulkan/op_attention.c); a view into qkv would span 3·Dv·N floats. */

#define VIT_N_TENSORS 11 /* arena tensors per call: the slack for their alignment */

static int64_t big_width(const struct vit_config *c)
{
    const int64_t cols = c->in_channels * c->temporal_patch_size * c->patch_size * c->patch_size;
    return MAX(MAX(cols, 3 * c->n_embd), MAX(c->n_ff, c->n_embd));
}

size_t vit_scratch_bytes(const struct vit_config *c, int64_t n_patches, size_t alignment)
{
    const int64_t M2 = c->merge_size * c->merge_size;
    /* f32 or i32 values per patch: big, h, a, v, o, then pos 2 + seg 1 + taps 4 + weights 4 */
    const size_t per_patch = (size_t)(big_width(c) + 4 * c->n_embd + 11);
    size_t n = 0, t, tok_vals;
    if (n_patches < 0 || n_patches > INT32_MAX || !size_mul(per_patch, (size_t)n_patches, &n) ||
        !size_mul((size_t)c->out_dim, (size_t)((n_patches + M2 - 1) / M2), &tok_vals) || !size_add(n, tok_vals, &n) ||
        !size_mul(n, 4, &n) || !size_mul(VIT_N_TENSORS, alignment, &t) || !size_add(n, t, &n))
        return SIZE_MAX;
    return n;
}

/* ---- per-call tables ---------------------------------------------------------------------------- */

/* Host-side inputs of one call, computed from the grids alone. */
struct tables {
    int32_t *pos;  /* [2][N]: patch row, then patch column (spec §4.4) */
    int32_t *seg;  /* [N]: one id per (image or video, temporal index) (spec §4.5 step 4) */
    int32_t *tap;  /* [4][N]: table rows E[y0·S+x0], E[y0·S+x1], E[y1·S+x0], E[y1·S+x1] (spec §4.3) */
    float *wt;     /* [4][N]: their bilinear weights */
};

/* Checks the grids (spec §4.1: sides are whole merge blocks) and counts the patches. */
static int count_patches(const struct vit_config *c, const struct vis_grid *grids, int n_grids, int64_t *n)
{
    const int64_t M = c->merge_size;
    int64_t total = 0;
    if (n_grids < 1 || !grids)
        return seer_err(SEER_EINVAL, "vit_encode: no grids");
    for (int i = 0; i < n_grids; i++) {
        const struct vis_grid *g = &grids[i];
        if (g->t < 1 || g->h < M || g->w < M || g->t > VIT_MAX_DIM || g->h > VIT_MAX_DIM || g->w > VIT_MAX_DIM ||
            g->h % M || g->w % M)
            return seer_err(SEER_EINVAL, "vit_encode: grid %d (t %lld, h %lld, w %lld) must have t >= 1 and sides "
                            "that are positive multiples of %lld up to %lld", i, (long long)g->t, (long long)g->h,
                            (long long)g->w, (long long)M, (long long)VIT_MAX_DIM);
        int64_t rows;
        if (__builtin_mul_overflow(g->t, g->h * g->w, &rows) || __builtin_add_overflow(total, rows, &total) ||
            total > INT32_MAX) /* positions, segment ids and tap rows are i32 */
            return seer_err(SEER_EINVAL, "vit_encode: more than %d patches in one call", INT32_MAX);
    }
    *n = total;
    return SEER_OK;
}

/* One axis of the bilinear resample (spec §4.3, align_corners = True, in fp32 as the newest HF):
   the patch at index i of n maps to s = i·(S−1)/(n−1) on the S-point table axis. */
static void bilinear_axis(int64_t i, int64_t n, int64_t S, int32_t *i0, int32_t *i1, float *f)
{
    float s = n > 1 ? (float)i * ((float)(S - 1) / (float)(n - 1)) : 0.0f;
    int64_t lo = MIN((int64_t)floorf(s), S - 1);
    *i0 = (int32_t)lo;
    *i1 = (int32_t)MIN(lo + 1, S - 1);
    *f = s - (float)lo;
}

static void fill_tables(const struct vit_config *c, const struct vis_grid *grids, int n_grids, int64_t N,
                        struct tables *tb)
{
    const int64_t M = c->merge_size, S = (int64_t)llround(sqrt((double)c->n_pos)); /* config.c: a square */
    int64_t r = 0;
    int32_t seg = 0;
    for (int gi = 0; gi < n_grids; gi++) {
        const struct vis_grid *g = &grids[gi];
        /* block-major order (spec §4.1): t, merge-block row, merge-block column, row, column in it */
        for (int64_t t = 0; t < g->t; t++, seg++)
            for (int64_t br = 0; br < g->h / M; br++)
                for (int64_t bc = 0; bc < g->w / M; bc++)
                    for (int64_t ir = 0; ir < M; ir++)
                        for (int64_t ic = 0; ic < M; ic++, r++) {
                            const int64_t row = M * br + ir, col = M * bc + ic;
                            int32_t y0, y1, x0, x1;
                            float fy, fx;
                            bilinear_axis(row, g->h, S, &y0, &y1, &fy);
                            bilinear_axis(col, g->w, S, &x0, &x1, &fx);
                            tb->pos[r] = (int32_t)row;
                            tb->pos[N + r] = (int32_t)col;
                            tb->seg[r] = seg;
                            const int32_t taps[4] = {y0 * (int32_t)S + x0, y0 * (int32_t)S + x1,
                                                     y1 * (int32_t)S + x0, y1 * (int32_t)S + x1};
                            const float wts[4] = {(1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx};
                            for (int k = 0; k < 4; k++) {
                                tb->tap[k * N + r] = taps[k];
                                tb->wt[k * N + r] = wts[k];
                            }
                        }
    }
}

/* ---- forward ------------------------------------------------------------------------------------ */

/* The contiguous {ne0, ne1} f32 matrix at the start of buffer t. */
static tensor mat(const tensor *t, int64_t ne0, int64_t ne1)
{
    return tensor_view(t, 2, (int64_t[]){ne0, ne1}, (size_t[]){4, (size_t)ne0 * 4}, 0);
}

struct bufs {
    tensor big, h, a, v, o, out, pos, seg, tap, wt;
};

/* Patch embedding (spec §4.2: Conv3d = one matmul over the 3·2·P·P row, + bias) plus the learned
   position embedding (spec §4.3: the four taps' rows weighted and summed in f32, then added). */
static int embed(const vit_model *m, struct bufs *b, int64_t N)
{
    backend *be = m->be;
    tensor pix = mat(&b->big, m->patch_w.ne[0], N);
    int rc;
    if ((rc = op_linear(be, &b->h, &m->patch_w, &pix, &(struct linear_epilogue){.bias = &m->patch_b, .bf16 = true})))
        return rc;
    for (int k = 0; k < 4; k++) {
        tensor rows = tensor_view(&b->tap, 1, (int64_t[]){N}, (size_t[]){4}, (size_t)(k * N) * 4);
        tensor w = tensor_view(&b->wt, 2, (int64_t[]){1, N}, (size_t[]){4, 4}, (size_t)(k * N) * 4);
        tensor *term = k == 0 ? &b->o : &b->v; /* o accumulates the sum */
        if ((rc = op_get_rows(be, term, &m->pos_embd, &rows)) || (rc = op_mul(be, term, term, &w)))
            return rc;
        if (k > 0 && (rc = op_add(be, &b->o, &b->o, &b->v)))
            return rc;
    }
    return op_add(be, &b->h, &b->h, &b->o);
}

/* One pre-norm block (spec §4.5); h{Dv, N} is updated in place. */
static int block(const vit_model *m, const struct vit_block *bl, struct bufs *b, int64_t N)
{
    const struct vit_config *c = &m->cfg;
    backend *be = m->be;
    const int64_t Dv = c->n_embd, nh = c->n_head, hd = vit_head_dim(c);
    tensor qkv = mat(&b->big, 3 * Dv, N), ff = mat(&b->big, c->n_ff, N);
    int rc;

    /* steps 1–2: LayerNorm1, qkv + bias; rows are [q heads | k heads | v heads], dh per head */
    if ((rc = op_layernorm(be, &b->a, &b->h, &bl->ln1_w, &bl->ln1_b, c->eps)) ||
        (rc = op_linear(be, &qkv, &bl->qkv_w, &b->a, &(struct linear_epilogue){.bias = &bl->qkv_b, .bf16 = true})))
        return rc;
    const size_t row = (size_t)(3 * Dv) * 4;
    tensor q = tensor_view(&qkv, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, row}, 0);
    tensor kv = tensor_view(&qkv, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, row}, (size_t)Dv * 4);
    tensor vv = tensor_view(&qkv, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, row},
                            (size_t)(2 * Dv) * 4);
    tensor k = tensor_view(&b->a, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, (size_t)Dv * 4}, 0);
    tensor v = tensor_view(&b->v, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, (size_t)Dv * 4}, 0);
    tensor o = tensor_view(&b->o, 3, (int64_t[]){hd, nh, N}, (size_t[]){4, (size_t)hd * 4, (size_t)Dv * 4}, 0);

    /* step 3: 2-D RoPE on q (in place) and k (into its own tensor), over the full head dim */
    if ((rc = op_rope_vision(be, &q, &q, &b->pos, c->rope_theta)) ||
        (rc = op_rope_vision(be, &k, &kv, &b->pos, c->rope_theta)) || (rc = op_cpy(be, &v, &vv)))
        return rc;

    /* step 4: bidirectional attention within each segment (image, or one temporal index of a
       video), scale dh^-1/2; streamed over keys, no N×N scores */
    const struct attn_mask mask = {.kind = ATTN_SEGMENTS, .seg = &b->seg, .bf16 = true};
    if ((rc = op_attention(be, &o, &q, &k, &v, 1.0f / sqrtf((float)hd), &mask)))
        return rc;

    /* step 5: h + proj(o) + b, into a (op_linear's residual lies apart from its output) */
    const struct linear_epilogue proj = {.bias = &bl->proj_b, .res = &b->h, .bf16 = true};
    if ((rc = op_linear(be, &b->a, &bl->proj_w, &b->o, &proj)))
        return rc;

    /* step 6: h = a + fc2(gelu_tanh(fc1(LayerNorm2(a)) + b1)) + b2, the norm into o (free again) */
    const struct linear_epilogue fc1 = {.bias = &bl->fc1_b, .act = true, .unary = UNARY_GELU_TANH, .bf16 = true},
                                  fc2 = {.bias = &bl->fc2_b, .res = &b->a, .bf16 = true};
    if ((rc = op_layernorm(be, &b->o, &b->a, &bl->ln2_w, &bl->ln2_b, c->eps)) ||
        (rc = op_linear(be, &ff, &bl->fc1_w, &b->o, &fc1)))
        return rc;
    return op_linear(be, &b->h, &bl->fc2_w, &ff, &fc2);
}

/* Takes the call's buffers from the arena and uploads pixels and tables. */
static int setup(const vit_model *m, arena *ar, struct bufs *b, const float *pixels, const struct tables *tb,
                 int64_t N)
{
    const struct vit_config *c = &m->cfg;
    const int64_t Dv = c->n_embd, M2 = c->merge_size * c->merge_size;
    int rc;
    if ((rc = arena_tensor(ar, &b->big, DT_F32, big_width(c) * N, 1, 1, 1)) ||
        (rc = arena_tensor(ar, &b->h, DT_F32, Dv, N, 1, 1)) || (rc = arena_tensor(ar, &b->a, DT_F32, Dv, N, 1, 1)) ||
        (rc = arena_tensor(ar, &b->v, DT_F32, Dv, N, 1, 1)) || (rc = arena_tensor(ar, &b->o, DT_F32, Dv, N, 1, 1)) ||
        (rc = arena_tensor(ar, &b->out, DT_F32, c->out_dim, N / M2, 1, 1)) ||
        (rc = arena_tensor(ar, &b->pos, DT_I32, N, 2, 1, 1)) || (rc = arena_tensor(ar, &b->seg, DT_I32, N, 1, 1, 1)) ||
        (rc = arena_tensor(ar, &b->tap, DT_I32, N, 4, 1, 1)) || (rc = arena_tensor(ar, &b->wt, DT_F32, N, 4, 1, 1)))
        return rc;
    tensor pix = mat(&b->big, m->patch_w.ne[0], N);
    if ((rc = backend_tensor_set(&pix, pixels, 0, tensor_nbytes(&pix))) ||
        (rc = backend_tensor_set(&b->pos, tb->pos, 0, tensor_nbytes(&b->pos))) ||
        (rc = backend_tensor_set(&b->seg, tb->seg, 0, tensor_nbytes(&b->seg))) ||
        (rc = backend_tensor_set(&b->tap, tb->tap, 0, tensor_nbytes(&b->tap))))
        return rc;
    return backend_tensor_set(&b->wt, tb->wt, 0, tensor_nbytes(&b->wt));
}

int vit_encode(vit_model *m, const float *pixels, const struct vis_grid *grids, int n_grids, float *out)
{
    return vit_encode_yielding(m, pixels, grids, n_grids, out, NULL, NULL);
}

int vit_encode_yielding(vit_model *m, const float *pixels, const struct vis_grid *grids, int n_grids, float *out,
                        void (*between)(void *user), void *user)
{
    const struct vit_config *c = &m->cfg;
    const int64_t M2 = c->merge_size * c->merge_size;
    struct tables tb = {0};
    struct bufs b;
    arena ar = {0};
    int64_t N = 0;
    int rc = count_patches(c, grids, n_grids, &N);
    if (rc)
        return rc;
    /* 11 values per patch (vit_scratch_bytes), in one host allocation */
    int32_t *host = seer_malloc((size_t)N * 11 * sizeof(int32_t));
    if (!host)
        return seer_err(SEER_ENOMEM, "vit_encode: no memory for the tables of %lld patches", (long long)N);
    tb.pos = host, tb.seg = host + 2 * N, tb.tap = host + 3 * N, tb.wt = (float *)(void *)(host + 7 * N);
    fill_tables(c, grids, n_grids, N, &tb);

    size_t bytes = vit_scratch_bytes(c, N, m->be->alignment);
    if (bytes == SIZE_MAX) {
        rc = seer_err(SEER_EINVAL, "vit_encode: scratch for %lld patches overflows", (long long)N);
        goto done;
    }
    if ((rc = arena_init(&ar, m->be, bytes)) || (rc = setup(m, &ar, &b, pixels, &tb, N)) || (rc = embed(m, &b, N)))
        goto done;
    for (int64_t j = 0; j < c->depth && rc == SEER_OK; j++) {
        rc = block(m, &m->blocks[j], &b, N);
        if (between && rc == SEER_OK && j + 1 < c->depth && (rc = backend_sync(m->be)) == SEER_OK)
            between(user);
    }
    if (rc)
        goto done;
    tensor fc1 = mat(&b.big, M2 * c->n_embd, N / M2);
    if ((rc = vit_merger_forward(m, &b.h, &b.a, &fc1, &b.out)))
        goto done;
    rc = backend_tensor_get(&b.out, out, 0, tensor_nbytes(&b.out));
done:
    if (ar.buf) /* on Vulkan nothing recorded may still read the arena when it is freed */
        backend_sync(m->be);
    arena_deinit(&ar);
    free(host);
    return rc;
}
