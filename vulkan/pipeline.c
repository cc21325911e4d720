/* pipeline.c — the kernel registry (docs/ARCHITECTURE.md, "The Vulkan backend": one static table, indexed by kernel,
   gives each its name, SPIR-V blob, bindings, push-constant size, spec-constant builder and
   supports() predicate) and pipelines created from it on first use. Adding a kernel means one
   shader, one row here, one record function in an op_*.c and one test row.
   Divisions: spec-constant builders; the table; the pipeline cache file; creating and destroying
   pipelines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "spv_blobs.h"
#include "vulkan/push.h"
#include "vulkan/vk_internal.h"

/* ---- spec-constant builders: sizes chosen from the caps, never assumed ------------------- */

static uint32_t pow2_floor(uint32_t x)
{
    uint32_t p = 1;
    while (p <= x / 2)
        p *= 2;
    return p;
}

/* A 1-D workgroup of up to `want` invocations, a power of two (the tree reductions halve it). */
static uint32_t wg_1d(const struct vk_caps *c, uint32_t want)
{
    return pow2_floor(MIN(want, MIN(c->max_wg_size[0], c->max_wg_invocations)));
}

/* matvec: NR = 8 weight rows per workgroup of max(32, subgroup size) invocations, each
   invocation one 8-element chunk at a time: a 1024-wide row is 128 chunks, four per invocation
   (of 32), and each chunk of x, read once, serves the 8 rows. The shared reduction (NR·NX·WG
   floats) is kept within the device's shared memory by halving WG (a 128-wide subgroup with
   8 x rows would need 32 KiB; 16 KiB is all some devices have). Measured on
   lavapipe (docs/PERFORMANCE.md): 8 rows × 32 beat 2 × 64 by 1.5–2× per weight; fewer, longer
   workgroups also cut the 248320-row vocabulary head to 31040 of them, still thousands per
   compute unit on any GPU. CPU implementations take one subgroup per workgroup instead: their
   handful of threads need no more workgroups, and the reduction after the products (stores,
   a barrier that switches between the workgroup's subgroups, loads) is what a short row pays
   for there: the tower's 768-wide products ran 1.6× faster on lavapipe with 8 invocations than
   with 32 (docs/PERFORMANCE.md, "The tower on Vulkan"). Variant v is the build for N = v + 1 x
   rows (NX). */
static uint32_t spec_matvec(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    const uint32_t nr = 8, nx = variant + 1;
    uint32_t wg = wg_1d(c, c->kind == VK_KIND_CPU ? c->subgroup_size : MIN(MAX(32u, c->subgroup_size), 128u));
    while (wg > 1 && 4 * nr * nx * wg > c->shared_bytes) /* 128 × 8 × 8 floats is 32 KiB */
        wg /= 2;
    spec[VK_SPEC_WG] = wg;
    spec[VK_SPEC_MV_NR] = nr;
    spec[VK_SPEC_MV_NX] = nx;
    return 3;
}

/* matmul: BM×BN output tile per workgroup, BK-deep slices through shared memory, each
   invocation a 4×4 register tile (TM, TN in matmul.comp), so WG = (BM/4)·(BN/4). 64×64×32
   needs 256 invocations and 16 KiB shared; devices below that get 64×32 (128 invocations,
   12 KiB), inside the minimums every Vulkan device guarantees (128 invocations, 16 KiB). BK 32
   halves the barriers per K of the former 16: each barrier is a full stop of the workgroup
   (on lavapipe a switch through all its invocations). matmul.comp's constant-count staging
   loops need BK | WG and WG | BN·BK, BM·BK/8: true of both shapes. */
static uint32_t spec_matmul(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)variant;
    uint32_t bm = 64, bn = 64, bk = 32;
    uint32_t max_wg = MIN(c->max_wg_size[0], c->max_wg_invocations);
    if (max_wg < 256 || c->shared_bytes < (bm + bn) * bk * 4)
        bn = 32;
    spec[VK_SPEC_WG] = (bm / 4) * (bn / 4);
    spec[VK_SPEC_MM_BM] = bm;
    spec[VK_SPEC_MM_BN] = bn;
    spec[VK_SPEC_MM_BK] = bk;
    return 4;
}

/* softmax: one workgroup per row, reductions in shared memory. */
static uint32_t spec_softmax(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)variant;
    spec[VK_SPEC_WG] = wg_1d(c, 128);
    return 1;
}

/* 64 invocations and no other constant: get_rows (one invocation per 8 output elements),
   quantize_act and q8_split (per 32- or 256-element block), rope (per rotated pair, or
   passed-through dim, of a head), attention_combine (one workgroup per row, invocations over the
   head dims). */
static uint32_t spec_wg64(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)variant;
    spec[VK_SPEC_WG] = wg_1d(c, 64);
    return 1;
}

/* norms: one workgroup per row as rmsnorm; variant = norm.comp's MODE (op_norm.c). */
static uint32_t spec_norm_mode(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    spec[VK_SPEC_WG] = wg_1d(c, 128);
    spec[VK_SPEC_NORM_MODE] = variant;
    return 2;
}

/* unary, cpy and binary: one invocation per element (cpy: per word); variant = the OP constant
   (enum binary_op for binary) or cpy's DST, all in the same slot. */
static uint32_t spec_elementwise(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    _Static_assert((int)VK_SPEC_UNARY_OP == VK_SPEC_BINARY_OP && (int)VK_SPEC_UNARY_OP == VK_SPEC_CPY_DST,
                   "one slot for the elementwise kernels' variant");
    spec[VK_SPEC_WG] = wg_1d(c, 256);
    spec[VK_SPEC_UNARY_OP] = variant;
    return 2;
}

/* conv: one invocation per (channel, block of TB tokens); TB ≥ K−1 lets one block own the
   state (conv.comp), and 16 tokens amortise the state/tap reads over a prefill. */
static uint32_t spec_conv(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)variant;
    spec[VK_SPEC_WG] = wg_1d(c, 64);
    spec[VK_SPEC_CONV_TB] = 16;
    return 2;
}

/* gdn_recurrent: 16 state rows per invocation in registers (dk = 128 takes 8 lanes per column),
   little enough for mobile GPUs' register files. */
static uint32_t spec_gdn_recurrent(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)variant;
    spec[VK_SPEC_WG] = wg_1d(c, 128);
    spec[VK_SPEC_GDN_RPL] = 16;
    return 2;
}

/* Kernels whose sizes are fixed in the shader (gdn_prep, gdn_state: 256 invocations). */
static uint32_t spec_none(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    (void)c, (void)variant, (void)spec;
    return 0;
}

/* the *_sg matvec builds declare subgroup arithmetic (cleared by vk_backend_params.plain_kernels) */
static bool supports_subgroup_arith(const struct vk_caps *c) { return c->subgroup_arith; }

/* the not-exact decode matvecs: their feature, and subgroup arithmetic (built with that reduction only) */
static bool supports_int_dot(const struct vk_caps *c) { return c->int_dot && c->subgroup_arith; }
static bool supports_fp16(const struct vk_caps *c) { return c->fp16 && c->subgroup_arith; }

static bool supports_gdn_chunk(const struct vk_caps *c)
{
    /* gdn_state.comp: 256 invocations, 20 KiB of shared memory (gdn_prep.comp needs less) */
    return c->max_wg_invocations >= 256 && c->max_wg_size[0] >= 256 && c->shared_bytes >= 20480;
}

/* attention: variant v holds head dims up to 64 << v. 128 invocations; per head-dim class the
   largest row tile BR and key block BK whose shared arrays fit the device (at most 48 KiB, so
   several workgroups stay resident), with each invocation holding ≤ 32 output dims and ≤ 8
   scores (attention.comp). Each class's last tile fits the 16 KiB every Vulkan device
   guarantees (maxComputeSharedMemorySize minimum; many mobile GPUs have no more): head dim 256
   in 4 rows × 8 keys is 12.3 KiB, 128 in 8 × 16 is 12.8 KiB. Four rows is also exactly one
   decode step of a kv head shared by four query heads (the 0.8B–9B models' GQA). */
static uint32_t attn_shared_bytes(uint32_t hdm, uint32_t br, uint32_t bk)
{
    return 4 * (br * hdm + bk * (hdm + 1) + br * (bk + 1) + 5 * br + bk + 2);
}

#define ATTN_TILES 4
static const uint32_t attn_tiles[3][ATTN_TILES][2] = {{{32, 32}, {16, 16}, {16, 16}, {16, 16}},
                                                       {{32, 32}, {32, 16}, {16, 16}, {8, 16}},
                                                       {{16, 16}, {16, 8}, {8, 16}, {4, 8}}};

static uint32_t spec_attention(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    const uint32_t hdm = 64u << variant, budget = MIN(c->shared_bytes, 48u << 10);
    const uint32_t(*cand)[2] = attn_tiles[variant];
    uint32_t k = 0;
    while (k < ATTN_TILES - 1 && attn_shared_bytes(hdm, cand[k][0], cand[k][1]) > budget)
        k++;
    spec[VK_SPEC_WG] = 128;
    spec[VK_SPEC_ATTN_HDM] = hdm;
    spec[VK_SPEC_ATTN_BR] = cand[k][0];
    spec[VK_SPEC_ATTN_BK] = cand[k][1];
    return 4;
}

static bool supports_attention(const struct vk_caps *c)
{
    /* every class's smallest tile (spec_attention) */
    for (uint32_t v = 0; v < 3; v++)
        if (c->shared_bytes < attn_shared_bytes(64u << v, attn_tiles[v][ATTN_TILES - 1][0],
                                                attn_tiles[v][ATTN_TILES - 1][1]))
            return false;
    return true;
}

/* attention_tiled.comp: per head-dim class, the first (BR, BK) whose shared arrays fit the device
   (at most 48 KiB, as above). Its invocations hold BR/8 × HDM/16 outputs and BR/16 × BK/8 scores
   (≤ 4 × 16 and ≤ 4 × 4, the shader's register arrays). Head dim 64 in 16 × 16 is 14.8 KiB, within
   the 16 KiB every device has: the vision towers' 64 (0.8B, 2B) always run tiled. The larger
   classes need 26.8 KiB (128) and 34.3 KiB (256); on smaller devices they keep attention.comp.
   The arrays: q rows padded by a 4-float piece, K and V blocks, probability rows padded by a
   piece, the maxima's and sums' partials, the running maxima, row and key state. */
static uint32_t attn_tiled_bytes(uint32_t hdm, uint32_t br, uint32_t bk)
{
    return 4 * (br * (hdm + 4) + 2 * bk * hdm + br * (bk + 4) + 2 * 8 * br + 4 * br + bk + 2);
}

static const uint32_t attn_tiled_tiles[3][2][2] = {{{32, 32}, {16, 16}}, {{32, 16}, {16, 16}}, {{16, 8}, {16, 8}}};

bool vk_attn_tiled_tile(const struct vk_caps *c, uint32_t variant, uint32_t *br, uint32_t *bk)
{
    const uint32_t hdm = 64u << variant, budget = MIN(c->shared_bytes, 48u << 10);
    for (uint32_t k = 0; variant < 3 && k < 2; k++)
        if (attn_tiled_bytes(hdm, attn_tiled_tiles[variant][k][0], attn_tiled_tiles[variant][k][1]) <= budget) {
            *br = attn_tiled_tiles[variant][k][0], *bk = attn_tiled_tiles[variant][k][1];
            return true;
        }
    return false;
}

static uint32_t spec_attention_tiled(const struct vk_caps *c, uint32_t variant, uint32_t *spec)
{
    uint32_t br = 16, bk = 8; /* never used: op_attention asks only for classes that fit */
    vk_attn_tiled_tile(c, variant, &br, &bk);
    spec[VK_SPEC_WG] = 128;
    spec[VK_SPEC_ATTN_HDM] = 64u << variant;
    spec[VK_SPEC_ATTN_BR] = br;
    spec[VK_SPEC_ATTN_BK] = bk;
    return 4;
}

/* ---- the table --------------------------------------------------------------------------- */

struct vk_kernel_desc {
    const char *name;
    const uint32_t *spv;       /* embedded SPIR-V (spv_blobs.h) */
    const size_t *spv_bytes;
    uint32_t n_bindings;       /* storage buffers 0..n-1 */
    uint32_t push_bytes;
    uint32_t n_variants;       /* specialisations the record function may ask for */
    uint32_t (*spec)(const struct vk_caps *c, uint32_t variant, uint32_t *spec); /* returns count */
    bool (*supports)(const struct vk_caps *c); /* (optional) NULL: every Vulkan 1.1 device */
};

/* Weight kernels: one row per family; the blob comes from weight_blobs below. matvec.comp and
   matmul.comp have five bindings: the last two are op_linear's bias and residual (epilogue.glsl). */
static const struct vk_kernel_desc families[VK_FAM_COUNT] = {
    [VK_FAM_MATVEC] = {"matvec", NULL, NULL, 5, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, NULL},
    [VK_FAM_MATVEC_SG] = {"matvec_sg", NULL, NULL, 5, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec,
                          supports_subgroup_arith},
    [VK_FAM_MATMUL] = {"matmul", NULL, NULL, 5, sizeof(struct vk_push_matmul), 1, spec_matmul, NULL},
    [VK_FAM_GET_ROWS] = {"get_rows", NULL, NULL, 3, sizeof(struct vk_push_get_rows), 1, spec_wg64, NULL},
};

/* [family][dtype] SPIR-V: the plain build of the family's .comp reads f32 weights; the others are
   the #define variants of shaders/variants.cmake, in enum dtype order (a variant missing from
   variants.cmake is an undeclared blob here, so the build fails). */
struct vk_blob {
    const uint32_t *spv;
    const size_t *bytes;
};
#define BLOB(n) {spv_##n, &spv_##n##_size}
#define WEIGHT_BLOBS(f) \
    {BLOB(f), BLOB(f##_f16), BLOB(f##_bf16), BLOB(f##_q8_0), BLOB(f##_q4_0), BLOB(f##_q4_k), BLOB(f##_q5_k), BLOB(f##_q6_k)}
_Static_assert(DT_F32 == 0 && DT_F16 == 1 && DT_BF16 == 2 && DT_Q8_0 == 3 && DT_Q4_0 == 4 && DT_Q4_K == 5 &&
                   DT_Q5_K == 6 && DT_Q6_K == 7 && VK_N_WTYPES == 8,
               "WEIGHT_BLOBS lists one blob per weight dtype in enum dtype order");
static const struct vk_blob weight_blobs[VK_FAM_COUNT][VK_N_WTYPES] = {
    [VK_FAM_MATVEC] = WEIGHT_BLOBS(matvec),
    [VK_FAM_MATVEC_SG] = WEIGHT_BLOBS(matvec_sg),
    [VK_FAM_MATMUL] = WEIGHT_BLOBS(matmul),
    [VK_FAM_GET_ROWS] = WEIGHT_BLOBS(get_rows),
};
#undef WEIGHT_BLOBS
#undef BLOB

/* Every other kernel: one row each. */
static const struct vk_kernel_desc kernels[VK_KERNEL_COUNT] = {
    [VK_K_NORM] = {"norm", spv_norm, &spv_norm_size, 4, sizeof(struct vk_push_norm), 4, spec_norm_mode, NULL},
    [VK_K_UNARY] = {"unary", spv_unary, &spv_unary_size, 2, sizeof(struct vk_push_rows), UNARY_COUNT + 1, spec_elementwise, NULL},
    [VK_K_CPY] = {"cpy", spv_cpy, &spv_cpy_size, 2, sizeof(struct vk_push_rows), 4, spec_elementwise, NULL},
    [VK_K_SOFTMAX] = {"softmax", spv_softmax, &spv_softmax_size, 2, sizeof(struct vk_push_rows), 1, spec_softmax, NULL},
    [VK_K_ROPE] = {"rope", spv_rope, &spv_rope_size, 3, sizeof(struct vk_push_rope), 1, spec_wg64, NULL},
    [VK_K_BINARY] = {"binary", spv_elementwise, &spv_elementwise_size, 3, sizeof(struct vk_push_binary), BINARY_COUNT, spec_elementwise, NULL},
    [VK_K_CONV] = {"conv", spv_conv, &spv_conv_size, 4, sizeof(struct vk_push_conv), 1, spec_conv, NULL},
    [VK_K_GDN_RECURRENT] = {"gdn_recurrent", spv_gdn_recurrent, &spv_gdn_recurrent_size, 7, sizeof(struct vk_push_gdn), 1, spec_gdn_recurrent, NULL},
    [VK_K_GDN_PREP] = {"gdn_prep", spv_gdn_prep, &spv_gdn_prep_size, 6, sizeof(struct vk_push_gdn), 1, spec_none, supports_gdn_chunk},
    [VK_K_GDN_STATE] = {"gdn_state", spv_gdn_state, &spv_gdn_state_size, 5, sizeof(struct vk_push_gdn), 1, spec_none, supports_gdn_chunk},
    [VK_K_ATTN_F32] = {"attention_f32", spv_attention, &spv_attention_size, 6, sizeof(struct vk_push_attn), 3, spec_attention, supports_attention},
    [VK_K_ATTN_F16] = {"attention_f16", spv_attention_f16, &spv_attention_f16_size, 6, sizeof(struct vk_push_attn), 3, spec_attention, supports_attention},
    [VK_K_ATTN_Q8_0] = {"attention_q8_0", spv_attention_q8_0, &spv_attention_q8_0_size, 6, sizeof(struct vk_push_attn), 3, spec_attention, supports_attention},
    [VK_K_ATTN_TILED_F32] = {"attention_tiled_f32", spv_attention_tiled, &spv_attention_tiled_size, 6, sizeof(struct vk_push_attn), 3, spec_attention_tiled, NULL},
    [VK_K_ATTN_TILED_F16] = {"attention_tiled_f16", spv_attention_tiled_f16, &spv_attention_tiled_f16_size, 6, sizeof(struct vk_push_attn), 3, spec_attention_tiled, NULL},
    [VK_K_ATTN_TILED_Q8_0] = {"attention_tiled_q8_0", spv_attention_tiled_q8_0, &spv_attention_tiled_q8_0_size, 6, sizeof(struct vk_push_attn), 3, spec_attention_tiled, NULL},
    [VK_K_ATTN_COMBINE] = {"attention_combine", spv_attention_combine, &spv_attention_combine_size, 2, sizeof(struct vk_push_attn_combine), 1, spec_wg64, NULL},
    [VK_K_QUANTIZE_ACT] = {"quantize_act", spv_quantize_act, &spv_quantize_act_size, 2, sizeof(struct vk_push_matmul), 1, spec_wg64, supports_int_dot},
    [VK_K_MV_DOT_Q8_0] = {"matvec_dot_q8_0", spv_matvec_dot, &spv_matvec_dot_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_DOT_Q4_0] = {"matvec_dot_q4_0", spv_matvec_dot_q4_0, &spv_matvec_dot_q4_0_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_QUANTIZE_ACT_Q8K] = {"quantize_act_q8k", spv_quantize_act_q8k, &spv_quantize_act_q8k_size, 2, sizeof(struct vk_push_matmul), 1, spec_wg64, supports_int_dot},
    [VK_K_MV_DOT_Q4_K] = {"matvec_dot_q4_K", spv_matvec_dot_q4_k, &spv_matvec_dot_q4_k_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_DOT_Q5_K] = {"matvec_dot_q5_K", spv_matvec_dot_q5_k, &spv_matvec_dot_q5_k_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_DOT_Q6_K] = {"matvec_dot_q6_K", spv_matvec_dot_q6_k, &spv_matvec_dot_q6_k_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_DOT_Q4_K_WIDE] = {"matvec_dot_q4_K_wide", spv_matvec_dot_q4_k_wide, &spv_matvec_dot_q4_k_wide_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_DOT_Q5_K_WIDE] = {"matvec_dot_q5_K_wide", spv_matvec_dot_q5_k_wide, &spv_matvec_dot_q5_k_wide_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MV_F16_Q8_0] = {"matvec_fp16_q8_0", spv_matvec_fp16, &spv_matvec_fp16_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_fp16},
    [VK_K_MV_F16_Q4_0] = {"matvec_fp16_q4_0", spv_matvec_fp16_q4_0, &spv_matvec_fp16_q4_0_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_fp16},
    [VK_K_Q8_SPLIT] = {"q8_split", spv_q8_split, &spv_q8_split_size, 1, sizeof(struct vk_push_matmul), 1, spec_wg64, NULL},
    [VK_K_MV_DOT_Q8_0_WIDE] = {"matvec_dot_q8_0_wide", spv_matvec_dot_q8_0_wide, &spv_matvec_dot_q8_0_wide_size, 3, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_int_dot},
    [VK_K_MATMUL_Q8_0_SPLIT] = {"matmul_q8_0_split", spv_matmul_q8_0_split, &spv_matmul_q8_0_split_size, 5, sizeof(struct vk_push_matmul), 1, spec_matmul, NULL},
    [VK_K_MV_WIDE_F32] = {"matvec_sg_wide", spv_matvec_sg_wide, &spv_matvec_sg_wide_size, 5, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_subgroup_arith},
    [VK_K_MV_WIDE_F16] = {"matvec_sg_f16_wide", spv_matvec_sg_f16_wide, &spv_matvec_sg_f16_wide_size, 5, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_subgroup_arith},
    [VK_K_MV_WIDE_BF16] = {"matvec_sg_bf16_wide", spv_matvec_sg_bf16_wide, &spv_matvec_sg_bf16_wide_size, 5, sizeof(struct vk_push_matmul), VK_MATVEC_MAX_N, spec_matvec, supports_subgroup_arith},
    [VK_K_GET_ROWS_Q8_0_SPLIT] = {"get_rows_q8_0_split", spv_get_rows_q8_0_split, &spv_get_rows_q8_0_split_size, 3, sizeof(struct vk_push_get_rows), 1, spec_wg64, NULL},
};

/* ---- the pipeline cache file ------------------------------------------------------------ */

/* A cache blob opens with VkPipelineCacheHeaderVersionOne: 32 bytes, least significant byte
   first whatever the host (Vulkan spec). The file is input like any other: the driver only gets
   it when its header names this very device and driver build. */
#define CACHE_HEADER_BYTES 32
#define CACHE_MAX_BYTES ((long)256 << 20) /* caches are a few MiB; larger is not one of ours */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool cache_matches(const struct vk_ctx *vk, const unsigned char *d, size_t n)
{
    return n >= CACHE_HEADER_BYTES && le32(d) >= CACHE_HEADER_BYTES && le32(d) <= n &&
           le32(d + 4) == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && le32(d + 8) == vk->caps.vendor_id &&
           le32(d + 12) == vk->caps.device_id && !memcmp(d + 16, vk->caps.cache_uuid, VK_UUID_SIZE);
}

/* The file's bytes when it exists and matches; NULL otherwise (a missing or stale cache only
   costs compile time, so nothing here is an error). */
static unsigned char *cache_load(const struct vk_ctx *vk, size_t *n)
{
    const char *path = vk->pipeline_cache_path;
    FILE *f = fopen(path, "rb");
    if (!f) {
        LOG_DEBUG("vulkan", "pipeline cache %s not found: starting empty", path);
        return NULL;
    }
    unsigned char *d = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && size <= CACHE_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0 &&
        (d = seer_malloc((size_t)size)) && fread(d, 1, (size_t)size, f) == (size_t)size && cache_matches(vk, d, (size_t)size)) {
        fclose(f);
        *n = (size_t)size;
        return d;
    }
    fclose(f);
    free(d);
    LOG_WARN("vulkan", "pipeline cache %s (%ld bytes) is unreadable or for another device/driver: ignored", path, size);
    return NULL;
}

/* Written to a temporary name and renamed, so a crash never leaves half a cache behind. */
static void cache_save(const struct vk_ctx *vk)
{
    size_t n = 0;
    if (vkGetPipelineCacheData(vk->device, vk->pipeline_cache, &n, NULL) != VK_SUCCESS || n == 0)
        return;
    unsigned char *d = seer_malloc(n);
    char *tmp = seer_malloc(strlen(vk->pipeline_cache_path) + 5);
    bool saved = false;
    if (d && tmp && vkGetPipelineCacheData(vk->device, vk->pipeline_cache, &n, d) == VK_SUCCESS) {
        sprintf(tmp, "%s.tmp", vk->pipeline_cache_path);
        FILE *f = fopen(tmp, "wb");
        if (f) {
            bool written = fwrite(d, 1, n, f) == n;
            saved = (fclose(f) == 0) && written && rename(tmp, vk->pipeline_cache_path) == 0;
            if (!saved)
                remove(tmp);
        }
    }
    if (!saved)
        LOG_WARN("vulkan", "could not write the pipeline cache %s", vk->pipeline_cache_path);
    free(d);
    free(tmp);
}

int vk_pipelines_init(struct vk_ctx *vk)
{
    size_t n = 0;
    unsigned char *seed = vk->pipeline_cache_path ? cache_load(vk, &n) : NULL;
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = n,
                                    .pInitialData = seed};
    VkResult r = vkCreatePipelineCache(vk->device, &ci, NULL, &vk->pipeline_cache);
    if (r != VK_SUCCESS && seed) {
        /* a driver may still refuse data it wrote itself: start empty rather than fail */
        LOG_WARN("vulkan", "pipeline cache %s refused by the driver (%s): ignored", vk->pipeline_cache_path,
                 vk_result_name(r));
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = vkCreatePipelineCache(vk->device, &ci, NULL, &vk->pipeline_cache);
    }
    free(seed);
    if (r != VK_SUCCESS) {
        vk->pipeline_cache = VK_NULL_HANDLE;
        return vk_fail(r, "vkCreatePipelineCache");
    }
    return SEER_OK;
}

/* ---- creating and destroying pipelines --------------------------------------------------- */

static int kernel_layouts(struct vk_ctx *vk, const struct vk_kernel_desc *d, struct vk_kernel_objs *o)
{
    VkDescriptorSetLayoutBinding bind[VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < d->n_bindings; i++)
        bind[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = d->n_bindings,
        .pBindings = bind,
    };
    VkResult r = vkCreateDescriptorSetLayout(vk->device, &dci, NULL, &o->dsl);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = d->push_bytes};
    VkPipelineLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &o->dsl,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &pcr,
    };
    if ((r = vkCreatePipelineLayout(vk->device, &lci, NULL, &o->layout)) != VK_SUCCESS) {
        o->layout = VK_NULL_HANDLE;
        vkDestroyDescriptorSetLayout(vk->device, o->dsl, NULL); /* so a retry starts clean */
        o->dsl = VK_NULL_HANDLE;
        return vk_fail(r, "vkCreatePipelineLayout");
    }
    return SEER_OK;
}

static int create_pipeline(struct vk_ctx *vk, const struct vk_kernel_desc *d, struct vk_kernel_objs *o,
                           uint32_t variant, struct vk_pipeline *pl)
{
    uint32_t spec[VK_MAX_SPEC] = {0};
    uint32_t n_spec = d->spec(&vk->caps, variant, spec);
    ASSERT1(n_spec <= VK_MAX_SPEC);
    VkSpecializationMapEntry map[VK_MAX_SPEC];
    for (uint32_t i = 0; i < n_spec; i++)
        map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
    VkSpecializationInfo si = {.mapEntryCount = n_spec, .pMapEntries = map, .dataSize = n_spec * 4, .pData = spec};

    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = *d->spv_bytes,
                                    .pCode = d->spv};
    VkShaderModule module;
    VkResult r = vkCreateShaderModule(vk->device, &mci, NULL, &module);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkCreateShaderModule");
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main",
                  .pSpecializationInfo = &si},
        .layout = o->layout,
    };
    r = vkCreateComputePipelines(vk->device, vk->pipeline_cache, 1, &ci, NULL, &pl->pipeline);
    /* the module is only needed while the pipeline is compiled */
    vkDestroyShaderModule(vk->device, module, NULL);
    if (r != VK_SUCCESS) {
        pl->pipeline = VK_NULL_HANDLE;
        int rc = vk_fail(r, "vkCreateComputePipelines"); /* for the code; the message names the kernel */
        return seer_err(rc, "vulkan: vkCreateComputePipelines failed for kernel %s on %s: %s (%d)", d->name,
                        vk->info.name, vk_result_name(r), (int)r);
    }
    pl->layout = o->layout;
    pl->dsl = o->dsl;
    pl->n_bindings = d->n_bindings;
    pl->push_bytes = d->push_bytes;
    memcpy(pl->spec, spec, sizeof spec);
    LOG_DEBUG("vulkan", "pipeline %s variant %u: spec {%u %u %u %u}", d->name, variant, spec[0], spec[1], spec[2], spec[3]);
    return SEER_OK;
}

/* Kernel k's row: its own, or for a weight kernel its family's row with the dtype's blob and a
   name such as "matvec_q4_K" written to name. */
static struct vk_kernel_desc kernel_desc(enum vk_kernel k, char name[static 32])
{
    if (k >= VK_K_WEIGHT_COUNT)
        return kernels[k];
    const int f = (int)k / VK_N_WTYPES, t = (int)k % VK_N_WTYPES;
    struct vk_kernel_desc d = families[f];
    snprintf(name, 32, "%s_%s", d.name, dtype_name((enum dtype)t));
    d.name = name;
    d.spv = weight_blobs[f][t].spv;
    d.spv_bytes = weight_blobs[f][t].bytes;
    return d;
}

int vk_pipeline_get(struct vk_ctx *vk, enum vk_kernel k, uint32_t variant, const struct vk_pipeline **out)
{
    ASSERT1((unsigned)k < VK_KERNEL_COUNT);
    char name[32];
    const struct vk_kernel_desc desc = kernel_desc(k, name), *d = &desc;
    ASSERT1(variant < d->n_variants && d->n_variants <= VK_MAX_VARIANTS);
    struct vk_kernel_objs *o = &vk->kernels[k];
    struct vk_pipeline *pl = &o->variants[variant];
    if (pl->pipeline != VK_NULL_HANDLE) {
        *out = pl;
        return SEER_OK;
    }
    if (d->supports && !d->supports(&vk->caps))
        return seer_err(SEER_EUNSUPPORTED, "vulkan: kernel %s is not supported on %s", d->name, vk->info.name);
    if (d->push_bytes > vk->caps.max_push_bytes)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: kernel %s needs %u bytes of push constants, %s offers %u", d->name,
                        d->push_bytes, vk->info.name, vk->caps.max_push_bytes);
    int rc;
    if (o->layout == VK_NULL_HANDLE && (rc = kernel_layouts(vk, d, o)))
        return rc;
    if ((rc = create_pipeline(vk, d, o, variant, pl)))
        return rc;
    *out = pl;
    return SEER_OK;
}

/* The caller has waited for the device to be idle. */
void vk_pipelines_destroy(struct vk_ctx *vk)
{
    if (vk->device == VK_NULL_HANDLE)
        return;
    if (vk->pipeline_cache_path && vk->pipeline_cache != VK_NULL_HANDLE)
        cache_save(vk);
    for (int k = 0; k < VK_KERNEL_COUNT; k++) {
        struct vk_kernel_objs *o = &vk->kernels[k];
        for (int v = 0; v < VK_MAX_VARIANTS; v++)
            vkDestroyPipeline(vk->device, o->variants[v].pipeline, NULL);
        vkDestroyPipelineLayout(vk->device, o->layout, NULL);
        vkDestroyDescriptorSetLayout(vk->device, o->dsl, NULL);
        memset(o, 0, sizeof *o);
    }
    vkDestroyPipelineCache(vk->device, vk->pipeline_cache, NULL);
    vk->pipeline_cache = VK_NULL_HANDLE;
}
