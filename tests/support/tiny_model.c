/* tiny_model.c — tiny Qwen3.5 checkpoints for reader/config tests (see tiny_model.h). The tensor
   tables below are transcribed from spec §8 (HF) and spec §11.3/§11.6 (GGUF) on their own, not
   shared with lm/config.c or vision/config.c. */
#define _POSIX_C_SOURCE 200809L
#include "support/tiny_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"

void tm_default(struct tm_cfg *c)
{
    *c = (struct tm_cfg){
        .n_layer = 5, .n_embd = 32, .n_ff = 40, .n_vocab = 67, .n_head = 4, .n_head_kv = 2, .head_dim = 16,
        .hk = 2, .hv = 4, .dk = 8, .dv = 8, .conv_k = 4, .n_rot = 8, .n_mtp = 1, .interval = 4,
        .sections = {2, 1, 1}, .tie = true, .eos = 60,
        .v_depth = 2, .v_embd = 16, .v_head = 2, .v_ff = 24, .v_patch = 4, .v_merge = 2, .v_npos = 16,
    };
}

static int rnd(int lo, int hi) { return lo + (int)(test_rand_u64() % (uint64_t)(hi - lo + 1)); }

void tm_random(struct tm_cfg *c)
{
    tm_default(c);
    c->n_layer = rnd(1, 9);
    c->interval = rnd(1, 4);
    c->n_embd = 8 * rnd(1, 6);
    c->n_ff = rnd(3, 70);
    c->n_vocab = rnd(17, 131);
    c->n_head_kv = rnd(1, 2);
    c->n_head = c->n_head_kv * rnd(1, 3);
    c->head_dim = 4 * rnd(1, 6);
    c->n_rot = 2 * rnd(1, c->head_dim / 2);
    c->sections[0] = rnd(0, c->n_rot / 2);
    c->sections[1] = rnd(0, c->n_rot / 2 - c->sections[0]);
    c->sections[2] = c->n_rot / 2 - c->sections[0] - c->sections[1];
    c->hk = rnd(1, 3);
    c->hv = c->hk * rnd(1, 2);
    c->dk = c->dv = rnd(2, 9); /* GGUF has one state size for both (spec §11.2) */
    c->conv_k = rnd(2, 4);
    c->n_mtp = rnd(0, 1);
    c->tie = rnd(0, 1);
    c->eos = rnd(0, c->n_vocab - 1);
    c->v_depth = rnd(1, 3);
    c->v_head = rnd(1, 3);
    c->v_embd = 4 * c->v_head * rnd(1, 3); /* head dim a multiple of 4 (spec §4.4) */
    c->v_ff = rnd(5, 40);
    c->v_patch = rnd(2, 5);
    c->v_merge = rnd(1, 2);
    int side = rnd(1, 5);
    c->v_npos = side * side;
}

/* ---- tensor lists ------------------------------------------------------------------------------ */

static void add(struct tm_list *l, int rank, int64_t a, int64_t b, int64_t d, int64_t e, int64_t f,
                const char *fmt, ...) __attribute__((format(printf, 8, 9)));
static void add(struct tm_list *l, int rank, int64_t a, int64_t b, int64_t d, int64_t e, int64_t f,
                const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->t = realloc(l->t, (size_t)l->cap * sizeof *l->t);
        if (!l->t)
            exit(2);
    }
    struct tm_tensor *t = &l->t[l->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    t->rank = rank;
    int64_t s[5] = {a, b, d, e, f};
    memcpy(t->shape, s, sizeof s);
}

static bool is_attn(const struct tm_cfg *c, int i) { return (i + 1) % c->interval == 0; }

void tm_text_tensors(const struct tm_cfg *c, bool g, struct tm_list *l)
{
    int64_t H = c->n_embd, I = c->n_ff, V = c->n_vocab, hd = c->head_dim, nh = c->n_head, kv = c->n_head_kv;
    int64_t KD = c->hk * c->dk, VD = c->hv * c->dv, CD = 2 * KD + VD, Hv = c->hv;
    if (g) {
        add(l, 2, H, V, 0, 0, 0, "token_embd.weight");
        add(l, 1, H, 0, 0, 0, 0, "output_norm.weight");
        if (!c->tie)
            add(l, 2, H, V, 0, 0, 0, "output.weight");
        for (int i = 0; i < c->n_layer + c->n_mtp; i++) {
            add(l, 1, H, 0, 0, 0, 0, "blk.%d.attn_norm.weight", i);
            add(l, 1, H, 0, 0, 0, 0, "blk.%d.post_attention_norm.weight", i);
            add(l, 2, H, I, 0, 0, 0, "blk.%d.ffn_gate.weight", i);
            add(l, 2, H, I, 0, 0, 0, "blk.%d.ffn_up.weight", i);
            add(l, 2, I, H, 0, 0, 0, "blk.%d.ffn_down.weight", i);
            if (i >= c->n_layer || is_attn(c, i)) {
                add(l, 2, H, 2 * nh * hd, 0, 0, 0, "blk.%d.attn_q.weight", i);
                add(l, 2, H, kv * hd, 0, 0, 0, "blk.%d.attn_k.weight", i);
                add(l, 2, H, kv * hd, 0, 0, 0, "blk.%d.attn_v.weight", i);
                add(l, 2, nh * hd, H, 0, 0, 0, "blk.%d.attn_output.weight", i);
                add(l, 1, hd, 0, 0, 0, 0, "blk.%d.attn_q_norm.weight", i);
                add(l, 1, hd, 0, 0, 0, 0, "blk.%d.attn_k_norm.weight", i);
            } else {
                add(l, 2, H, CD, 0, 0, 0, "blk.%d.attn_qkv.weight", i);
                add(l, 2, H, VD, 0, 0, 0, "blk.%d.attn_gate.weight", i);
                add(l, 2, H, Hv, 0, 0, 0, "blk.%d.ssm_beta.weight", i);
                add(l, 2, H, Hv, 0, 0, 0, "blk.%d.ssm_alpha.weight", i);
                add(l, 2, c->conv_k, CD, 0, 0, 0, "blk.%d.ssm_conv1d.weight", i);
                add(l, 1, Hv, 0, 0, 0, 0, "blk.%d.ssm_dt.bias", i);
                add(l, 1, Hv, 0, 0, 0, 0, "blk.%d.ssm_a", i);
                add(l, 1, c->dv, 0, 0, 0, 0, "blk.%d.ssm_norm.weight", i);
                add(l, 2, VD, H, 0, 0, 0, "blk.%d.ssm_out.weight", i);
            }
            if (i >= c->n_layer) {
                add(l, 2, 2 * H, H, 0, 0, 0, "blk.%d.nextn.eh_proj.weight", i);
                add(l, 1, H, 0, 0, 0, 0, "blk.%d.nextn.enorm.weight", i);
                add(l, 1, H, 0, 0, 0, 0, "blk.%d.nextn.hnorm.weight", i);
                add(l, 1, H, 0, 0, 0, 0, "blk.%d.nextn.shared_head_norm.weight", i);
            }
        }
        return;
    }
    const char *p = "model.language_model.";
    add(l, 2, V, H, 0, 0, 0, "%sembed_tokens.weight", p);
    add(l, 1, H, 0, 0, 0, 0, "%snorm.weight", p);
    if (!c->tie)
        add(l, 2, V, H, 0, 0, 0, "lm_head.weight");
    for (int i = 0; i < c->n_layer + c->n_mtp; i++) {
        char q[64];
        if (i < c->n_layer)
            snprintf(q, sizeof q, "%slayers.%d.", p, i);
        else
            snprintf(q, sizeof q, "mtp.layers.%d.", i - c->n_layer);
        add(l, 1, H, 0, 0, 0, 0, "%sinput_layernorm.weight", q);
        add(l, 1, H, 0, 0, 0, 0, "%spost_attention_layernorm.weight", q);
        add(l, 2, I, H, 0, 0, 0, "%smlp.gate_proj.weight", q);
        add(l, 2, I, H, 0, 0, 0, "%smlp.up_proj.weight", q);
        add(l, 2, H, I, 0, 0, 0, "%smlp.down_proj.weight", q);
        if (i >= c->n_layer || is_attn(c, i)) {
            add(l, 2, 2 * nh * hd, H, 0, 0, 0, "%sself_attn.q_proj.weight", q);
            add(l, 2, kv * hd, H, 0, 0, 0, "%sself_attn.k_proj.weight", q);
            add(l, 2, kv * hd, H, 0, 0, 0, "%sself_attn.v_proj.weight", q);
            add(l, 2, H, nh * hd, 0, 0, 0, "%sself_attn.o_proj.weight", q);
            add(l, 1, hd, 0, 0, 0, 0, "%sself_attn.q_norm.weight", q);
            add(l, 1, hd, 0, 0, 0, 0, "%sself_attn.k_norm.weight", q);
        } else {
            add(l, 2, CD, H, 0, 0, 0, "%slinear_attn.in_proj_qkv.weight", q);
            add(l, 2, VD, H, 0, 0, 0, "%slinear_attn.in_proj_z.weight", q);
            add(l, 2, Hv, H, 0, 0, 0, "%slinear_attn.in_proj_b.weight", q);
            add(l, 2, Hv, H, 0, 0, 0, "%slinear_attn.in_proj_a.weight", q);
            add(l, 3, CD, 1, c->conv_k, 0, 0, "%slinear_attn.conv1d.weight", q);
            add(l, 1, Hv, 0, 0, 0, 0, "%slinear_attn.dt_bias", q);
            add(l, 1, Hv, 0, 0, 0, 0, "%slinear_attn.A_log", q);
            add(l, 1, c->dv, 0, 0, 0, 0, "%slinear_attn.norm.weight", q);
            add(l, 2, H, VD, 0, 0, 0, "%slinear_attn.out_proj.weight", q);
        }
    }
    if (c->n_mtp > 0) {
        add(l, 2, H, 2 * H, 0, 0, 0, "mtp.fc.weight");
        add(l, 1, H, 0, 0, 0, 0, "mtp.pre_fc_norm_embedding.weight");
        add(l, 1, H, 0, 0, 0, 0, "mtp.pre_fc_norm_hidden.weight");
        add(l, 1, H, 0, 0, 0, 0, "mtp.norm.weight");
    }
}

void tm_vision_tensors(const struct tm_cfg *c, bool g, struct tm_list *l)
{
    int64_t D = c->v_embd, F = c->v_ff, P = c->v_patch, M = (int64_t)c->v_merge * c->v_merge * D, H = c->n_embd;
    if (g) {
        add(l, 4, P, P, 3, D, 0, "v.patch_embd.weight");
        add(l, 4, P, P, 3, D, 0, "v.patch_embd.weight.1");
        add(l, 1, D, 0, 0, 0, 0, "v.patch_embd.bias");
        add(l, 2, D, c->v_npos, 0, 0, 0, "v.position_embd.weight");
        for (int j = 0; j < c->v_depth; j++) {
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.ln1.weight", j);
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.ln1.bias", j);
            add(l, 2, D, 3 * D, 0, 0, 0, "v.blk.%d.attn_qkv.weight", j);
            add(l, 1, 3 * D, 0, 0, 0, 0, "v.blk.%d.attn_qkv.bias", j);
            add(l, 2, D, D, 0, 0, 0, "v.blk.%d.attn_out.weight", j);
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.attn_out.bias", j);
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.ln2.weight", j);
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.ln2.bias", j);
            add(l, 2, D, F, 0, 0, 0, "v.blk.%d.ffn_up.weight", j);
            add(l, 1, F, 0, 0, 0, 0, "v.blk.%d.ffn_up.bias", j);
            add(l, 2, F, D, 0, 0, 0, "v.blk.%d.ffn_down.weight", j);
            add(l, 1, D, 0, 0, 0, 0, "v.blk.%d.ffn_down.bias", j);
        }
        add(l, 1, D, 0, 0, 0, 0, "v.post_ln.weight");
        add(l, 1, D, 0, 0, 0, 0, "v.post_ln.bias");
        add(l, 2, M, M, 0, 0, 0, "mm.0.weight");
        add(l, 1, M, 0, 0, 0, 0, "mm.0.bias");
        add(l, 2, M, H, 0, 0, 0, "mm.2.weight");
        add(l, 1, H, 0, 0, 0, 0, "mm.2.bias");
        return;
    }
    const char *v = "model.visual.";
    add(l, 5, D, 3, 2, P, P, "%spatch_embed.proj.weight", v);
    add(l, 1, D, 0, 0, 0, 0, "%spatch_embed.proj.bias", v);
    add(l, 2, c->v_npos, D, 0, 0, 0, "%spos_embed.weight", v);
    for (int j = 0; j < c->v_depth; j++) {
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.norm1.weight", v, j);
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.norm1.bias", v, j);
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.norm2.weight", v, j);
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.norm2.bias", v, j);
        add(l, 2, 3 * D, D, 0, 0, 0, "%sblocks.%d.attn.qkv.weight", v, j);
        add(l, 1, 3 * D, 0, 0, 0, 0, "%sblocks.%d.attn.qkv.bias", v, j);
        add(l, 2, D, D, 0, 0, 0, "%sblocks.%d.attn.proj.weight", v, j);
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.attn.proj.bias", v, j);
        add(l, 2, F, D, 0, 0, 0, "%sblocks.%d.mlp.linear_fc1.weight", v, j);
        add(l, 1, F, 0, 0, 0, 0, "%sblocks.%d.mlp.linear_fc1.bias", v, j);
        add(l, 2, D, F, 0, 0, 0, "%sblocks.%d.mlp.linear_fc2.weight", v, j);
        add(l, 1, D, 0, 0, 0, 0, "%sblocks.%d.mlp.linear_fc2.bias", v, j);
    }
    add(l, 1, D, 0, 0, 0, 0, "%smerger.norm.weight", v);
    add(l, 1, D, 0, 0, 0, 0, "%smerger.norm.bias", v);
    add(l, 2, M, M, 0, 0, 0, "%smerger.linear_fc1.weight", v);
    add(l, 1, M, 0, 0, 0, 0, "%smerger.linear_fc1.bias", v);
    add(l, 2, H, M, 0, 0, 0, "%smerger.linear_fc2.weight", v);
    add(l, 1, H, 0, 0, 0, 0, "%smerger.linear_fc2.bias", v);
}

struct tm_tensor *tm_get(struct tm_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->t[i].name, name))
            return &l->t[i];
    return NULL;
}

void tm_remove(struct tm_list *l, const char *name)
{
    struct tm_tensor *t = tm_get(l, name);
    if (!t)
        exit(2);
    memmove(t, t + 1, (size_t)(l->t + l->n - t - 1) * sizeof *t);
    l->n--;
}

void tm_list_free(struct tm_list *l)
{
    free(l->t);
    memset(l, 0, sizeof *l);
}

/* ---- metadata ---------------------------------------------------------------------------------- */

void tm_text_meta(const struct tm_cfg *c, struct gw_file *f)
{
    gw_add_str(f, "general.architecture", "qwen35");
    gw_add_str(f, "general.name", "tiny test model");
    gw_add_u32(f, "qwen35.block_count", (uint32_t)(c->n_layer + c->n_mtp));
    if (c->n_mtp)
        gw_add_u32(f, "qwen35.nextn_predict_layers", (uint32_t)c->n_mtp);
    gw_add_u32(f, "qwen35.context_length", 4096);
    gw_add_u32(f, "qwen35.embedding_length", (uint32_t)c->n_embd);
    gw_add_u32(f, "qwen35.feed_forward_length", (uint32_t)c->n_ff);
    gw_add_u32(f, "qwen35.attention.head_count", (uint32_t)c->n_head);
    gw_add_u32(f, "qwen35.attention.head_count_kv", (uint32_t)c->n_head_kv);
    gw_add_u32(f, "qwen35.attention.key_length", (uint32_t)c->head_dim);
    gw_add_u32(f, "qwen35.attention.value_length", (uint32_t)c->head_dim);
    gw_add_f32(f, "qwen35.attention.layer_norm_rms_epsilon", 1e-6f);
    gw_add_u32(f, "qwen35.rope.dimension_count", (uint32_t)c->n_rot);
    int32_t sec[4] = {c->sections[0], c->sections[1], c->sections[2], 0};
    gw_add_arr(f, "qwen35.rope.dimension_sections", GGUF_TYPE_INT32, 4, sec);
    gw_add_f32(f, "qwen35.rope.freq_base", 1e7f);
    gw_add_u32(f, "qwen35.ssm.conv_kernel", (uint32_t)c->conv_k);
    gw_add_u32(f, "qwen35.ssm.state_size", (uint32_t)c->dk);
    gw_add_u32(f, "qwen35.ssm.group_count", (uint32_t)c->hk);
    gw_add_u32(f, "qwen35.ssm.time_step_rank", (uint32_t)c->hv);
    gw_add_u32(f, "qwen35.ssm.inner_size", (uint32_t)(c->hv * c->dv));
    gw_add_u32(f, "qwen35.full_attention_interval", (uint32_t)c->interval);
    gw_add_u32(f, "tokenizer.ggml.eos_token_id", (uint32_t)c->eos);
}

void tm_vision_meta(const struct tm_cfg *c, struct gw_file *f)
{
    const float mean[3] = {0.48145466f, 0.4578275f, 0.40821073f}, std[3] = {0.26862954f, 0.26130258f, 0.27577711f};
    uint8_t deep[64] = {0};
    gw_add_str(f, "general.architecture", "clip");
    gw_add_str(f, "clip.projector_type", "qwen3vl_merger");
    gw_add_bool(f, "clip.has_vision_encoder", true);
    gw_add_u32(f, "clip.vision.block_count", (uint32_t)c->v_depth);
    gw_add_u32(f, "clip.vision.embedding_length", (uint32_t)c->v_embd);
    gw_add_u32(f, "clip.vision.feed_forward_length", (uint32_t)c->v_ff);
    gw_add_u32(f, "clip.vision.attention.head_count", (uint32_t)c->v_head);
    gw_add_u32(f, "clip.vision.projection_dim", (uint32_t)c->n_embd);
    gw_add_u32(f, "clip.vision.patch_size", (uint32_t)c->v_patch);
    gw_add_u32(f, "clip.vision.spatial_merge_size", (uint32_t)c->v_merge);
    gw_add_f32(f, "clip.vision.attention.layer_norm_epsilon", 1e-6f);
    gw_add_arr(f, "clip.vision.image_mean", GGUF_TYPE_FLOAT32, 3, mean);
    gw_add_arr(f, "clip.vision.image_std", GGUF_TYPE_FLOAT32, 3, std);
    gw_add_arr(f, "clip.vision.is_deepstack_layers", GGUF_TYPE_BOOL, (uint64_t)c->v_depth, deep);
}

void tm_gguf_add(struct gw_file *f, const struct tm_list *l, uint32_t type)
{
    for (int i = 0; i < l->n; i++) {
        uint64_t ne[4];
        for (int d = 0; d < l->t[i].rank && d < 4; d++)
            ne[d] = (uint64_t)l->t[i].shape[d];
        /* converter convention: vectors and the conv kernel stay F32 */
        bool vec = l->t[i].rank == 1 || strstr(l->t[i].name, "conv1d");
        gw_add_tensor(f, l->t[i].name, vec ? GGML_F32 : type, (uint32_t)l->t[i].rank, ne, NULL);
    }
}

/* ---- HF files ---------------------------------------------------------------------------------- */

json_t *tm_config_json(const struct tm_cfg *c, bool with_vision)
{
    json_t *types = json_array();
    for (int i = 0; i < c->n_layer; i++)
        json_array_append_new(types, json_string(is_attn(c, i) ? "full_attention" : "linear_attention"));
    json_t *text = json_pack(
        "{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:i, s:o, s:i, s:i, s:i}",
        "model_type", "qwen3_5_text", "vocab_size", c->n_vocab, "hidden_size", c->n_embd, "intermediate_size",
        c->n_ff, "num_hidden_layers", c->n_layer, "num_attention_heads", c->n_head, "num_key_value_heads",
        c->n_head_kv, "head_dim", c->head_dim, "linear_num_key_heads", c->hk, "linear_num_value_heads", c->hv,
        "linear_key_head_dim", c->dk, "linear_value_head_dim", c->dv, "linear_conv_kernel_dim", c->conv_k,
        "rms_norm_eps", 1e-6, "full_attention_interval", c->interval, "layer_types", types,
        "max_position_embeddings", 4096, "mtp_num_hidden_layers", c->n_mtp, "eos_token_id", c->eos);
    json_object_set_new(text, "rope_parameters",
                        json_pack("{s:s, s:f, s:f, s:[i,i,i], s:b}", "rope_type", "default", "rope_theta", 1e7,
                                  "partial_rotary_factor", (double)c->n_rot / c->head_dim, "mrope_section",
                                  c->sections[0], c->sections[1], c->sections[2], "mrope_interleaved", 1));
    json_t *root = json_pack("{s:[s], s:s, s:b, s:i, s:i, s:o}", "architectures", "Qwen3_5ForConditionalGeneration",
                             "model_type", "qwen3_5", "tie_word_embeddings", c->tie, "image_token_id", c->n_vocab - 3,
                             "video_token_id", c->n_vocab - 2, "text_config", text);
    if (with_vision)
        json_object_set_new(
            root, "vision_config",
            json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:[]}", "model_type",
                      "qwen3_5_vision", "depth", c->v_depth, "hidden_size", c->v_embd, "num_heads", c->v_head,
                      "intermediate_size", c->v_ff, "out_hidden_size", c->n_embd, "hidden_act", "gelu_pytorch_tanh",
                      "in_channels", 3, "patch_size", c->v_patch, "temporal_patch_size", 2, "spatial_merge_size",
                      c->v_merge, "num_position_embeddings", c->v_npos, "deepstack_visual_indexes"));
    if (!root || !text)
        exit(2);
    return root;
}

void tm_write_json(const char *path, const json_t *j)
{
    if (json_dump_file(j, path, JSON_INDENT(2)) != 0)
        exit(2);
}

void tm_write_safetensors(const char *path, const struct tm_list *l)
{
    struct st_entry *e = calloc((size_t)l->n + 1, sizeof *e);
    if (!e)
        exit(2);
    for (int i = 0; i < l->n; i++) {
        e[i].name = l->t[i].name;
        e[i].dtype = "BF16";
        e[i].rank = l->t[i].rank;
        memcpy(e[i].shape, l->t[i].shape, sizeof l->t[i].shape);
    }
    st_write(path, e, l->n);
    free(e);
}
