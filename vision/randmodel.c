/* randmodel.c — random Qwen3.5 vision towers as llama.cpp mmproj files (see randmodel.h). Shapes from
   spec §1.1, keys and names from spec §11.6 as tests/reference/hf2gguf.py writes them; the tensors
   are generated and streamed by core/randweights.c. */
#include "vision/randmodel.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/gguf_write.h"
#include "core/randweights.h"

#define PATCH 16        /* spec §1.1 patch_size */
#define POS_ROWS 2304   /* the 48 × 48 learned position grid (spec §4.3) */
#define MERGE 2         /* spatial_merge_size */

int randvit_preset(const char *name, struct randvit_shape *s)
{
    static const struct { const char *name; struct randvit_shape s; } sizes[] = {
        {"0.8b", {12, 768, 12, 3072, 1024}},
        {"2b", {24, 1024, 16, 4096, 2048}},
        {"4b", {24, 1024, 16, 4096, 2560}},
        {"9b", {27, 1152, 16, 4304, 4096}},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(name, sizes[i].name)) {
            *s = sizes[i].s;
            return SEER_OK;
        }
    return seer_err(SEER_EINVAL, "unknown vision preset '%s' (0.8b, 2b, 4b, 9b)", name ? name : "");
}

/* The converter's choice for a matrix of row length `in` (spec §11.6). */
static enum dtype matrix_type(enum dtype wtype, int64_t in)
{
    return wtype == DT_Q8_0 && in % 32 ? DT_F16 : wtype;
}

static int build_table(const struct randvit_shape *s, enum dtype wt, struct rw_table *tb)
{
    const int64_t D = s->n_embd, I = s->n_ff, M4 = MERGE * MERGE * D;
    const enum dtype patch_t = wt == DT_F32 ? DT_F32 : DT_F16;
    char n[64];
    int rc;
#define VEC(name, len, mean, std) rw_add(tb, name, 1, len, 1, 1, 1, DT_F32, RW_NORMAL, mean, std)
#define LIN(name, in, out) rw_add_linear(tb, name, in, out, matrix_type(wt, in), 1.0)
#define NM(suffix) (snprintf(n, sizeof n, "v.blk.%lld.%s", (long long)j, suffix), n)
    /* Conv3d split along time into two Conv2D kernels {P, P, 3, Dv}; fan-in 3·2·P·P */
    const float patch_std = (float)(1.0 / 39.19); /* 1/√1536 */
    if ((rc = rw_add(tb, "v.patch_embd.weight", 4, PATCH, PATCH, 3, D, patch_t, RW_NORMAL, 0, patch_std)) ||
        (rc = rw_add(tb, "v.patch_embd.weight.1", 4, PATCH, PATCH, 3, D, patch_t, RW_NORMAL, 0, patch_std)) ||
        (rc = VEC("v.patch_embd.bias", D, 0, 0.02f)) ||
        (rc = rw_add(tb, "v.position_embd.weight", 2, D, POS_ROWS, 1, 1, DT_F32, RW_NORMAL, 0, 0.1f)))
        return rc;
    for (int64_t j = 0; j < s->depth; j++)
        if ((rc = VEC(NM("ln1.weight"), D, 1, 0.1f)) || (rc = VEC(NM("ln1.bias"), D, 0, 0.02f)) ||
            (rc = LIN(NM("attn_qkv.weight"), D, 3 * D)) || (rc = VEC(NM("attn_qkv.bias"), 3 * D, 0, 0.02f)) ||
            (rc = LIN(NM("attn_out.weight"), D, D)) || (rc = VEC(NM("attn_out.bias"), D, 0, 0.02f)) ||
            (rc = VEC(NM("ln2.weight"), D, 1, 0.1f)) || (rc = VEC(NM("ln2.bias"), D, 0, 0.02f)) ||
            (rc = LIN(NM("ffn_up.weight"), D, I)) || (rc = VEC(NM("ffn_up.bias"), I, 0, 0.02f)) ||
            (rc = LIN(NM("ffn_down.weight"), I, D)) || (rc = VEC(NM("ffn_down.bias"), D, 0, 0.02f)))
            return rc;
    if ((rc = VEC("v.post_ln.weight", D, 1, 0.1f)) || (rc = VEC("v.post_ln.bias", D, 0, 0.02f)) ||
        (rc = LIN("mm.0.weight", M4, M4)) || (rc = VEC("mm.0.bias", M4, 0, 0.02f)) ||
        (rc = LIN("mm.2.weight", M4, s->out_dim)) || (rc = VEC("mm.2.bias", s->out_dim, 0, 0.02f)))
        return rc;
#undef VEC
#undef LIN
#undef NM
    return SEER_OK;
}

/* Keys as llama.cpp's converter writes them for a qwen3vl_merger projector (spec §11.6). */
static int declare(gguf_writer *w, const struct randvit_shape *s, enum dtype wt)
{
    const float half[3] = {0.5f, 0.5f, 0.5f}; /* image_mean = image_std (spec §5.1) */
    const bool no_deepstack[64] = {false};      /* Qwen3.5 has no DeepStack layers (spec §1) */
    const uint32_t file_type = wt == DT_F32 ? 0 : wt == DT_F16 ? 1 : wt == DT_Q8_0 ? 7 : 32;
    int rc;
    if (s->depth > 64)
        return seer_err(SEER_EINVAL, "vision preset: %lld blocks is more than 64", (long long)s->depth);
    if ((rc = gguf_writer_add_str(w, "general.architecture", "clip")) ||
        (rc = gguf_writer_add_str(w, "general.type", "mmproj")) ||
        (rc = gguf_writer_add_str(w, "general.name", "seer-random-vision")) ||
        (rc = gguf_writer_add_u32(w, "general.file_type", file_type)) ||
        (rc = gguf_writer_add_bool(w, "clip.has_vision_encoder", true)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.projection_dim", (uint32_t)s->out_dim)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.image_size", 48 * PATCH)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.patch_size", PATCH)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.embedding_length", (uint32_t)s->n_embd)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.feed_forward_length", (uint32_t)s->n_ff)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.block_count", (uint32_t)s->depth)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.attention.head_count", (uint32_t)s->n_head)) ||
        (rc = gguf_writer_add_array(w, "clip.vision.image_mean", GGUF_TYPE_FLOAT32, 3, half)) ||
        (rc = gguf_writer_add_array(w, "clip.vision.image_std", GGUF_TYPE_FLOAT32, 3, half)) ||
        (rc = gguf_writer_add_str(w, "clip.projector_type", "qwen3vl_merger")) ||
        (rc = gguf_writer_add_bool(w, "clip.use_gelu", true)) ||
        (rc = gguf_writer_add_u32(w, "clip.vision.spatial_merge_size", MERGE)) ||
        (rc = gguf_writer_add_f32(w, "clip.vision.attention.layer_norm_epsilon", 1e-6f)))
        return rc;
    return gguf_writer_add_array(w, "clip.vision.is_deepstack_layers", GGUF_TYPE_BOOL, (uint64_t)s->depth,
                                 no_deepstack);
}

int randvit_write(const char *path, const struct randvit_shape *s, enum dtype wtype, uint64_t seed, int n_threads)
{
    struct rw_table tb = {0};
    gguf_writer *w = NULL;
    int rc;
    if (wtype != DT_F32 && wtype != DT_F16 && wtype != DT_BF16 && wtype != DT_Q8_0)
        return seer_err(SEER_EINVAL, "a random vision tower is F32, F16, BF16 or Q8_0, not %s", dtype_name(wtype));
    if ((rc = build_table(s, wtype, &tb)) == SEER_OK && (rc = gguf_writer_create(&w)) == SEER_OK &&
        (rc = declare(w, s, wtype)) == SEER_OK && (rc = rw_declare(w, &tb)) == SEER_OK)
        rc = rw_write(w, path, &tb, seed, n_threads);
    gguf_writer_free(w);
    rw_table_free(&tb);
    return rc;
}
