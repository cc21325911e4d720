/* randmodel.c — random Qwen3.5 text models of the real shapes as llama.cpp-convention GGUF files
   (see randmodel.h). Shapes from spec §1.1, keys/names/transforms from spec §11.2–§11.4 (as
   tests/reference/hf2gguf.py writes them), weight scales from tests/reference/gen_tiny.py.
   Divisions: 1. presets and checks  2. tokenizer section  3. metadata and the tensor table
              4. writing (core/randweights.c generates and streams the tensors) */
#include "lm/randmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/gguf_write.h"
#include "core/log.h"
#include "core/randweights.h"
#include "core/utf8.h"
#include "core/util.h"

/* ---- 1. presets and checks (spec §1.1) ------------------------------------------------------- */

#define REAL_VOCAB 248320    /* vocab_size of every released size (spec §1.1) */
#define REAL_BPE 248044      /* first added token id, <|endoftext|> (spec §6.1) */
#define N_ADDED 33           /* Qwen added tokens (spec §6.1) */
#define N_BYTE 256
#define MAX_BPE ((int64_t)N_BYTE + 65536 + 65536 * 256) /* what the merge scheme below can name */

int randmodel_preset(const char *name, struct randmodel_shape *s)
{
    static const struct {
        const char *name;
        int64_t H, L, I, nh, nkv, hv;
        bool tie;
    } sizes[] = {
        {"0.8b", 1024, 24, 3584, 8, 2, 16, true},
        {"2b", 2048, 24, 6144, 8, 2, 16, true},
        {"4b", 2560, 32, 9216, 16, 4, 32, true},
        {"9b", 4096, 32, 12288, 16, 4, 32, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
        if (strcmp(name, sizes[i].name) != 0)
            continue;
        *s = (struct randmodel_shape){
            .n_layer = sizes[i].L, .n_embd = sizes[i].H, .n_ff = sizes[i].I,
            .n_head = sizes[i].nh, .n_head_kv = sizes[i].nkv, .head_dim = 256,
            .ssm_n_k_heads = 16, .ssm_n_v_heads = sizes[i].hv, .ssm_d_state = 128, .ssm_conv_kernel = 4,
            .n_vocab = REAL_VOCAB, .n_bpe_tokens = REAL_BPE, .full_attention_interval = 4,
            .n_rot = 64, .sections = {11, 11, 10}, .tie = sizes[i].tie,
        };
        return SEER_OK;
    }
    return seer_err(SEER_EINVAL, "unknown model preset '%.40s' (expected %s)", name, randmodel_preset_names());
}

const char *randmodel_preset_names(void) { return "0.8b|2b|4b|9b"; }

static bool is_attn(const struct randmodel_shape *s, int64_t il)
{
    return (il + 1) % s->full_attention_interval == 0;
}

int randmodel_check(const struct randmodel_shape *s, enum dtype wtype)
{
    const int64_t dims[] = {s->n_embd, s->n_ff, s->n_head, s->n_head_kv, s->head_dim, s->ssm_n_k_heads,
                            s->ssm_n_v_heads, s->ssm_d_state, s->ssm_conv_kernel, s->n_vocab};
    for (size_t i = 0; i < ARRAY_LEN(dims); i++)
        if (dims[i] < 1 || dims[i] > ((int64_t)1 << 24))
            return seer_err(SEER_EINVAL, "random model: dimension %zu = %lld is out of range", i, (long long)dims[i]);
    if (s->n_layer < 1 || s->n_layer > 512 || s->full_attention_interval < 1)
        return seer_err(SEER_EINVAL, "random model: %lld layers / interval %d are out of range", (long long)s->n_layer,
                        s->full_attention_interval);
    if (s->n_head % s->n_head_kv || s->ssm_n_v_heads % s->ssm_n_k_heads)
        return seer_err(SEER_EINVAL, "random model: heads must be multiples of kv heads / linear key heads");
    if (s->n_rot < 2 || s->n_rot % 2 || s->n_rot > s->head_dim || s->sections[0] < 0 || s->sections[1] < 0 ||
        s->sections[2] < 0 || s->sections[0] + s->sections[1] + s->sections[2] > s->n_rot / 2)
        return seer_err(SEER_EINVAL, "random model: rotary dims %d / sections do not fit head_dim %lld", s->n_rot,
                        (long long)s->head_dim);
    if (s->n_bpe_tokens < N_BYTE || s->n_bpe_tokens > MAX_BPE || s->n_bpe_tokens + N_ADDED > s->n_vocab)
        return seer_err(SEER_EINVAL, "random model: %lld BPE tokens + %d added tokens must fit the vocabulary of %lld "
                        "and hold the %d byte tokens", (long long)s->n_bpe_tokens, N_ADDED, (long long)s->n_vocab,
                        N_BYTE);
    if (wtype != DT_F32 && wtype != DT_F16 && wtype != DT_BF16 && wtype != DT_Q8_0 && wtype != DT_Q4_K)
        return seer_err(SEER_EINVAL, "random model: weight dtype %s is not one of f32, f16, bf16, q8_0, q4_K",
                        dtype_name(wtype));
    /* Every matrix row is H, I, value_dim or n_head·head_dim long (ne[0], the input width). */
    const int64_t rows[] = {s->n_embd, s->n_ff, s->ssm_n_v_heads * s->ssm_d_state, s->n_head * s->head_dim};
    const int be = dtype_info(wtype)->block_elems;
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        if (rows[i] % be)
            return seer_err(SEER_EINVAL, "random model: a matrix row of %lld elements is not a whole number of %s "
                            "blocks (%d)", (long long)rows[i], dtype_name(wtype), be);
    return SEER_OK;
}

/* ---- 2. tokenizer section (llama.cpp's gpt2 vocabulary, as hf2gguf.py writes it) ------------ */

/* Qwen's added tokens in id order (spec §6.1), and whether each is special. */
static const struct { const char *s; bool special; } added_tokens[N_ADDED] = {
    {"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true}, {"<|object_ref_start|>", true},
    {"<|object_ref_end|>", true}, {"<|box_start|>", true}, {"<|box_end|>", true}, {"<|quad_start|>", true},
    {"<|quad_end|>", true}, {"<|vision_start|>", true}, {"<|vision_end|>", true}, {"<|vision_pad|>", true},
    {"<|image_pad|>", true}, {"<|video_pad|>", true}, {"<tool_call>", false}, {"</tool_call>", false},
    {"<|fim_prefix|>", false}, {"<|fim_middle|>", false}, {"<|fim_suffix|>", false}, {"<|fim_pad|>", false},
    {"<|repo_name|>", false}, {"<|file_sep|>", false}, {"<tool_response>", false}, {"</tool_response>", false},
    {"<think>", false}, {"</think>", false}, {"<|audio_start|>", true}, {"<|audio_end|>", true},
    {"<tts_pad>", true}, {"<tts_text_bos>", true}, {"<tts_text_eod>", true}, {"<tts_text_bos_single>", true},
    {"<|audio_pad|>", true},
};
enum { TOK_NORMAL = 1, TOK_CONTROL = 3, TOK_USER_DEFINED = 4, TOK_UNUSED = 5 }; /* llama.cpp token types */

struct vocab {
    char *pool;                 /* every string, back to back */
    const char **tok, **merge;  /* n_vocab tokens, n_merges merges (pointers into pool) */
    size_t *tok_len, *merge_len;
    int32_t *type;
    int64_t n_vocab, n_merges;
};

static void vocab_free(struct vocab *v)
{
    free(v->pool);
    free(v->tok);
    free(v->merge);
    free(v->tok_len);
    free(v->merge_len);
    free(v->type);
    memset(v, 0, sizeof *v);
}

/* Token strings: ids 0..255 are GPT-2's printable byte characters in its order (printable ASCII,
   ¡..¬, ®..ÿ, then the remaining bytes mapped to U+0100…), so "Ġ" (space) is 220 and "Ċ" (newline)
   198 as in Qwen. BPE token 256 + i is merge i: pairs of byte characters first (65536 of them),
   then a pair token extended by a byte character — every merge joins two existing tokens, each
   result is new, and a merge's rank is below that of any merge using its result. Then the added
   tokens, then "[PADi]" rows (spec §2.7) marked unused. */
static int vocab_build(const struct randmodel_shape *s, struct vocab *v)
{
    memset(v, 0, sizeof *v);
    v->n_vocab = s->n_vocab;
    v->n_merges = s->n_bpe_tokens - N_BYTE;
    const size_t nv = (size_t)v->n_vocab, nm = (size_t)v->n_merges;
    /* token ≤ 6 bytes (3 two-byte chars) or "[PAD16777215]"/added (< 24): 24 per token; merge ≤ 7. */
    const size_t pool_bytes = nv * 24 + nm * 8 + 4096;
    v->pool = seer_malloc(pool_bytes);
    v->tok = seer_malloc(nv * sizeof *v->tok);
    v->tok_len = seer_malloc(nv * sizeof *v->tok_len);
    v->type = seer_malloc(nv * sizeof *v->type);
    v->merge = seer_malloc((nm ? nm : 1) * sizeof *v->merge);
    v->merge_len = seer_malloc((nm ? nm : 1) * sizeof *v->merge_len);
    if (!v->pool || !v->tok || !v->tok_len || !v->type || !v->merge || !v->merge_len) {
        vocab_free(v);
        return seer_err(SEER_ENOMEM, "random model: no memory for a %lld-token vocabulary", (long long)s->n_vocab);
    }
    char *p = v->pool;
    uint32_t cps[N_BYTE];
    int n = 0, extra = 0;
    for (int b = 0; b < N_BYTE; b++) /* the printable bytes keep their own code point */
        if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))
            cps[n++] = (uint32_t)b;
    for (int b = 0; b < N_BYTE; b++)
        if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)))
            cps[n++] = (uint32_t)(N_BYTE + extra++);
    for (int64_t i = 0; i < v->n_vocab; i++) {
        v->tok[i] = p;
        if (i < N_BYTE) {
            p += utf8_encode(cps[i], p);
            v->type[i] = TOK_NORMAL;
        } else if (i < s->n_bpe_tokens) {
            const int64_t k = i - N_BYTE;
            const int64_t a = k < 65536 ? k / 256 : N_BYTE + (k - 65536) / 256, b = k % 256;
            memcpy(p, v->tok[a], v->tok_len[a]);
            p += v->tok_len[a];
            memcpy(p, v->tok[b], v->tok_len[b]);
            p += v->tok_len[b];
            v->type[i] = TOK_NORMAL;
        } else if (i < s->n_bpe_tokens + N_ADDED) {
            const int j = (int)(i - s->n_bpe_tokens);
            const size_t len = strlen(added_tokens[j].s);
            const bool looks_special = !strncmp(added_tokens[j].s, "<|", 2) && !strcmp(added_tokens[j].s + len - 2, "|>");
            memcpy(p, added_tokens[j].s, len);
            p += len;
            v->type[i] = added_tokens[j].special || looks_special ? TOK_CONTROL : TOK_USER_DEFINED;
        } else {
            p += snprintf(p, 24, "[PAD%lld]", (long long)i);
            v->type[i] = TOK_UNUSED;
        }
        v->tok_len[i] = (size_t)(p - v->tok[i]);
    }
    /* merges as "A B" */
    for (int64_t k = 0; k < v->n_merges; k++) {
        const int64_t a = k < 65536 ? k / 256 : N_BYTE + (k - 65536) / 256, b = k % 256;
        v->merge[k] = p;
        memcpy(p, v->tok[a], v->tok_len[a]);
        p += v->tok_len[a];
        *p++ = ' ';
        memcpy(p, v->tok[b], v->tok_len[b]);
        p += v->tok_len[b];
        v->merge_len[k] = (size_t)(p - v->merge[k]);
    }
    ASSERT1((size_t)(p - v->pool) <= pool_bytes);
    return SEER_OK;
}

/* ---- 3. metadata and the tensor table (spec §11.2–§11.3) ------------------------------------- */

/* The text model's tensors in converter order. Linear weights N(0, gain/√fan_in) keep O(1)
   activations; zero-centred norms are stored 1 + N(0, 0.1) (the +1 folded in, spec §11.4 item 2);
   the tied head's final norm is set so logits have std ≈ 3 (gen_tiny.py's reasoning). */
/* llama.cpp's use_more_bits (llama-quant.cpp): layer i of n gets more bits in the first and last
   eighths and every third layer between. */
static bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

static int build_table(const struct randmodel_shape *s, enum dtype wt, enum randmodel_mix mix, struct rw_table *tb)
{
    const bool km = mix == RANDMODEL_Q4_K_M;
    int64_t n_attn = 0, i_attn = 0; /* attention layers: llama.cpp counts attn_v tensors */
    for (int64_t il = 0; il < s->n_layer; il++)
        n_attn += is_attn(s, il);
    const int64_t H = s->n_embd, I = s->n_ff, V = s->n_vocab, hd = s->head_dim, Hv = s->ssm_n_v_heads;
    const int64_t KD = s->ssm_n_k_heads * s->ssm_d_state, VD = Hv * s->ssm_d_state, CD = 2 * KD + VD;
    const float emb_std = 0.05f;
    char n[64];
    int rc = SEER_OK;
#define LIN(name, in, out, gain) rw_add_linear(tb, name, in, out, wt, gain)
#define NORM(name, len, mean) rw_add(tb, name, 1, len, 1, 1, 1, DT_F32, RW_NORMAL, 1.0f + (mean), 0.1f)
#define NM(suffix) (snprintf(n, sizeof n, "blk.%lld.%s", (long long)il, suffix), n)
    /* tied: llama.cpp quantises the embedding as the output it also is */
    rc = rw_add(tb, "token_embd.weight", 2, H, V, 1, 1, km && s->tie ? DT_Q6_K : wt, RW_NORMAL, 0.0f, emb_std);
    for (int64_t il = 0; il < s->n_layer && rc == SEER_OK; il++) {
        if ((rc = NORM(NM("attn_norm.weight"), H, 0.0f)) || (rc = NORM(NM("post_attention_norm.weight"), H, 0.0f)) ||
            (rc = LIN(NM("ffn_gate.weight"), H, I, 1.5)) || (rc = LIN(NM("ffn_up.weight"), H, I, 1.5)) ||
            (rc = rw_add_linear(tb, NM("ffn_down.weight"), I, H, km && more_bits(il, s->n_layer) ? DT_Q6_K : wt, 1.0)))
            break;
        if (is_attn(s, il)) {
            const enum dtype vt = km && more_bits(i_attn++, n_attn) ? DT_Q6_K : wt;
            if ((rc = LIN(NM("attn_q.weight"), H, 2 * s->n_head * hd, 1.0)) || /* per head [q | gate], spec §2.6 */
                (rc = LIN(NM("attn_k.weight"), H, s->n_head_kv * hd, 1.0)) ||
                (rc = rw_add_linear(tb, NM("attn_v.weight"), H, s->n_head_kv * hd, vt, 1.0)) ||
                (rc = LIN(NM("attn_output.weight"), s->n_head * hd, H, 1.0)) ||
                (rc = NORM(NM("attn_q_norm.weight"), hd, 0.0f)) || (rc = NORM(NM("attn_k_norm.weight"), hd, 0.0f)))
                break;
        } else {
            if ((rc = rw_add_linear(tb, NM("attn_qkv.weight"), H, CD, km ? DT_Q5_K : wt, 1.0)) || (rc = LIN(NM("attn_gate.weight"), H, VD, 1.0)) ||
                (rc = LIN(NM("ssm_beta.weight"), H, Hv, 1.0)) || (rc = LIN(NM("ssm_alpha.weight"), H, Hv, 1.5)) ||
                (rc = rw_add(tb, NM("ssm_conv1d.weight"), 2, s->ssm_conv_kernel, CD, 1, 1, DT_F32, RW_NORMAL, 0.0f, 0.4f)) ||
                (rc = rw_add(tb, NM("ssm_dt.bias"), 1, Hv, 1, 1, 1, DT_F32, RW_DT, 0, 0)) ||
                (rc = rw_add(tb, NM("ssm_a"), 1, Hv, 1, 1, 1, DT_F32, RW_A, 0, 0)) ||
                /* the gated norm's weight is a plain scale, not 1 + w (spec §2.3) */
                (rc = rw_add(tb, NM("ssm_norm.weight"), 1, s->ssm_d_state, 1, 1, 1, DT_F32, RW_NORMAL, 1.0f, 0.1f)) ||
                (rc = LIN(NM("ssm_out.weight"), VD, H, 1.0)))
                break;
        }
    }
    if (rc == SEER_OK) {
        /* tied: logits ≈ E·(scale·normed) has std emb_std·√H·scale; pick scale for std 3 */
        const float final_mean = s->tie ? (float)(3.0 / (emb_std * sqrt((double)H))) - 1.0f : 0.0f;
        rc = NORM("output_norm.weight", H, final_mean);
    }
    if (rc == SEER_OK && !s->tie)
        rc = rw_add_linear(tb, "output.weight", H, V, km ? DT_Q6_K : wt, 3.0);
#undef LIN
#undef NORM
#undef NM
    return rc;
}

/* llama_ftype of the file (informational; llama.cpp prints it). */
static uint32_t file_type(enum dtype t, enum randmodel_mix mix)
{
    if (mix == RANDMODEL_Q4_K_M)
        return 15; /* MOSTLY_Q4_K_M */
    switch (t) {
    case DT_F16: return 1;   /* MOSTLY_F16 */
    case DT_Q8_0: return 7;  /* MOSTLY_Q8_0 */
    case DT_Q4_K: return 14; /* MOSTLY_Q4_K_S: every matrix Q4_K */
    case DT_BF16: return 32; /* MOSTLY_BF16 */
    default: return 0;       /* ALL_F32 */
    }
}

/* Metadata as hf2gguf.py writes it (spec §11.2), then the tokenizer, then the tensor infos. */
static int declare(gguf_writer *w, const struct randmodel_shape *s, const struct randmodel_params *p,
                   const struct rw_table *tb, const struct vocab *v)
{
    const int32_t sections[4] = {s->sections[0], s->sections[1], s->sections[2], 0};
    bool *rec = seer_malloc((size_t)s->n_layer * sizeof *rec);
    int rc;
    if (!rec)
        return seer_err(SEER_ENOMEM, "random model: no memory");
    for (int64_t il = 0; il < s->n_layer; il++)
        rec[il] = !is_attn(s, il);
    const char *name = p->name ? p->name : "seer-random";
    if ((rc = gguf_writer_add_str(w, "general.architecture", "qwen35")) ||
        (rc = gguf_writer_add_str(w, "general.type", "model")) || (rc = gguf_writer_add_str(w, "general.name", name)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.block_count", (uint32_t)s->n_layer)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.context_length", 262144)) || /* spec §1.1 */
        (rc = gguf_writer_add_u32(w, "qwen35.embedding_length", (uint32_t)s->n_embd)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.feed_forward_length", (uint32_t)s->n_ff)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.attention.head_count", (uint32_t)s->n_head)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.attention.head_count_kv", (uint32_t)s->n_head_kv)) ||
        (rc = gguf_writer_add_array(w, "qwen35.rope.dimension_sections", GGUF_TYPE_INT32, 4, sections)) ||
        (rc = gguf_writer_add_f32(w, "qwen35.rope.freq_base", 1e7f)) || /* spec §1.1 */
        (rc = gguf_writer_add_f32(w, "qwen35.attention.layer_norm_rms_epsilon", 1e-6f)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.attention.key_length", (uint32_t)s->head_dim)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.attention.value_length", (uint32_t)s->head_dim)) ||
        (rc = gguf_writer_add_u32(w, "general.file_type", file_type(p->wtype, p->mix))) ||
        (rc = gguf_writer_add_u32(w, "qwen35.ssm.conv_kernel", (uint32_t)s->ssm_conv_kernel)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.ssm.state_size", (uint32_t)s->ssm_d_state)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.ssm.group_count", (uint32_t)s->ssm_n_k_heads)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.ssm.time_step_rank", (uint32_t)s->ssm_n_v_heads)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.ssm.inner_size", (uint32_t)(s->ssm_n_v_heads * s->ssm_d_state))) ||
        (rc = gguf_writer_add_array(w, "qwen35.attention.recurrent_layers", GGUF_TYPE_BOOL, (uint64_t)s->n_layer, rec)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.full_attention_interval", (uint32_t)s->full_attention_interval)) ||
        (rc = gguf_writer_add_u32(w, "qwen35.rope.dimension_count", (uint32_t)s->n_rot)) ||
        (rc = gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2")) ||
        (rc = gguf_writer_add_str(w, "tokenizer.ggml.pre", "qwen35")) ||
        (rc = gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", (uint64_t)v->n_vocab, v->tok, v->tok_len)) ||
        (rc = gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, (uint64_t)v->n_vocab, v->type)) ||
        (rc = gguf_writer_add_str_array(w, "tokenizer.ggml.merges", (uint64_t)v->n_merges, v->merge, v->merge_len)) ||
        /* eos <|im_end|>, pad <|endoftext|>, no bos (the Qwen tokenizer_config, spec §6.1) */
        (rc = gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)(s->n_bpe_tokens + 2))) ||
        (rc = gguf_writer_add_u32(w, "tokenizer.ggml.padding_token_id", (uint32_t)s->n_bpe_tokens)) ||
        (rc = gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", false)) ||
        (rc = gguf_writer_add_u32(w, "general.quantization_version", 2)))
        goto done;
    rc = rw_declare(w, tb);
done:
    free(rec);
    return rc;
}

/* ---- 4. writing ----------------------------------------------------------------------------------- */

/* Builds the vocabulary, the table and the writer's declarations. */
static int prepare(const struct randmodel_shape *s, const struct randmodel_params *p, struct vocab *v,
                   struct rw_table *tb, gguf_writer **w)
{
    int rc;
    memset(v, 0, sizeof *v);
    if ((rc = randmodel_check(s, p->wtype)) || (rc = vocab_build(s, v)))
        return rc;
    if (p->mix == RANDMODEL_Q4_K_M && p->wtype != DT_Q4_K)
        return seer_err(SEER_EINVAL, "random model: the Q4_K_M mix needs weight dtype q4_K, not %s", dtype_name(p->wtype));
    if ((rc = build_table(s, p->wtype, p->mix, tb)) || (rc = gguf_writer_create(w)))
        return rc;
    return declare(*w, s, p, tb, v);
}

uint64_t randmodel_file_size(const struct randmodel_shape *s, const struct randmodel_params *p)
{
    struct vocab v;
    struct rw_table tb = {0};
    gguf_writer *w = NULL;
    uint64_t size = 0;
    if (prepare(s, p, &v, &tb, &w) == SEER_OK)
        size = gguf_writer_file_size(w);
    gguf_writer_free(w);
    vocab_free(&v);
    rw_table_free(&tb);
    return size;
}

int randmodel_write(const char *path, const struct randmodel_shape *s, const struct randmodel_params *p)
{
    struct vocab v;
    struct rw_table tb = {0};
    gguf_writer *w = NULL;
    int rc;
    const double t0 = seer_time_now();
    if ((rc = prepare(s, p, &v, &tb, &w)) == SEER_OK && (rc = rw_write(w, path, &tb, p->seed, p->n_threads)) == SEER_OK)
        LOG_INFO("randmodel", "%s: %d tensors, %.1f MiB of %s weights in %.1f s", path, tb.n,
                 (double)gguf_writer_file_size(w) / (1 << 20), p->mix == RANDMODEL_Q4_K_M ? "Q4_K_M" : dtype_name(p->wtype),
                 seer_time_now() - t0);
    gguf_writer_free(w);
    vocab_free(&v);
    rw_table_free(&tb);
    return rc;
}
