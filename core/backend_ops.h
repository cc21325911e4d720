/* backend_ops.h — the one list of ops (SEER_OPS), their ids and names, the parameter types of
   their slots, and struct backend_ops, the slot table each backend fills. It sits below both
   core/backend.c (which names the ops and checks the slots) and core/ops.c (whose op_* wrappers
   check shapes and dispatch through the slots), so neither needs the other's header to agree on
   the list. The contracts are in core/ops.h. */
#ifndef SEER_CORE_BACKEND_OPS_H
#define SEER_CORE_BACKEND_OPS_H

#include <stdint.h>

#include "core/tensor.h"

typedef struct backend backend;

enum unary_op {
    UNARY_SILU,      /* x * sigmoid(x) */
    UNARY_GELU_TANH, /* 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))  (vision block MLP, spec §4.5) */
    UNARY_GELU_ERF,  /* 0.5x(1 + erf(x/sqrt 2))                        (merger MLP, spec §4.6) */
    UNARY_SIGMOID,   /* 1/(1+e^-x) */
    UNARY_SOFTPLUS,  /* log(1+e^x), x for x > 20 as PyTorch (spec §2.5 step 4) */
    UNARY_EXP,
    UNARY_COUNT
};

enum binary_op { BINARY_ADD, BINARY_MUL, BINARY_COUNT };

/* What op_linear does after its product, each part optional: out = act(x·wᵀ + bias) + res. */
struct linear_epilogue {
    const tensor *bias;  /* f32 {M}, added to every row, or NULL */
    bool act;            /* apply `unary` to the biased product */
    enum unary_op unary;
    const tensor *res;   /* f32 shaped as out, contiguous, not overlapping out (the residual stream), or NULL */
    bool bf16;           /* the caller accepts bf16 operands: a backend that is not exact may round x and
                            F16/BF16 weights to bf16 (the CPU where it has AVX512-BF16; docs/ARCHITECTURE.md,
                            "Exact and not exact") */
};

/* Text MRoPE (spec §3.3): rotate-half over the first n_rot dims of each head; frequency i
   (0..n_rot/2-1) uses inv_freq = theta^(-2i/n_rot) and the position of an axis chosen by the
   interleaved sections rule: axis 0 (T) by default, axis a in {1,2} for i = a, a+3, … < 3*sections[a]. */
struct rope_text_params {
    int n_rot;        /* rotated dims per head (64) */
    float theta;      /* rope_theta (1e7) */
    int sections[3];  /* mrope_section (11, 11, 10) */
};

/* Masks for op_attention. CAUSAL: query t (0-based in this call) sees keys 0..q_pos0+t.
   SEGMENTS: query i sees key j iff seg[i] == seg[j] (vision tower, spec §4.5 step 4). */
enum attn_mask_kind { ATTN_CAUSAL, ATTN_SEGMENTS };
struct attn_mask {
    enum attn_mask_kind kind;
    int64_t q_pos0;      /* CAUSAL: index of this call's first query in the key sequence */
    const tensor *seg;   /* SEGMENTS: i32 {T} segment id per token (queries and keys alike) */
    bool bf16;           /* the caller accepts bf16 operands for the two products, as linear_epilogue's */
};

/* Which key head a value head reads when Hv > Hk (spec §2.5 step 5). HF checkpoints group value
   heads by key head: v-head j reads key head j/(Hv/Hk). llama.cpp's GGUF converter reorders
   value heads to a tiled order instead: j reads j mod Hk (spec §11.4 item 6). */
enum gdn_head_order { GDN_V_GROUPED, GDN_V_TILED };

/* ---- the one list of ops ---------------------------------------------------------------------
   Adding an op: a row here, its function type op_<name>_fn below (struct backend_ops is built
   from this list), its contract and checking wrapper op_* (core/ops.h, core/ops.c), cpu_<name> in
   core/cpu/ and vk_<name> in vulkan/op_*.c. The backends build their slot tables from this list,
   so a backend without a function of that name does not compile. */
#define SEER_OPS(X)                                                                                \
    X(matmul, MATMUL) X(matmul_n, MATMUL_N) X(linear, LINEAR) X(get_rows, GET_ROWS) X(binary, BINARY) X(unary, UNARY) X(scale, SCALE)     \
    X(cpy, CPY) X(rmsnorm, RMSNORM) X(rmsnorm_gated, RMSNORM_GATED) X(layernorm, LAYERNORM)       \
    X(l2norm, L2NORM) X(softmax, SOFTMAX) X(rope_text, ROPE_TEXT) X(rope_vision, ROPE_VISION)     \
    X(conv1d_causal, CONV1D_CAUSAL) X(gdn_recurrent, GDN_RECURRENT) X(gdn_chunked, GDN_CHUNKED)   \
    X(attention, ATTENTION)

enum op_id {
#define SEER_OP_ENUM(name, NAME) OP_##NAME,
    SEER_OPS(SEER_OP_ENUM)
#undef SEER_OP_ENUM
    OP_COUNT
};

/* "matmul", "rmsnorm", … (the slot's name; core/backend.c). */
const char *op_name(enum op_id op);

/* One function type per op, in SEER_OPS order; contracts are in core/ops.h next to each op_*
   wrapper. A backend implements op X as <prefix>_X of type op_X_fn (cpu_internal.h and
   vk_internal.h declare theirs from SEER_OPS). */
typedef int op_matmul_fn(backend *be, tensor *out, const tensor *w, const tensor *x);
typedef int op_matmul_n_fn(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x);
typedef int op_linear_fn(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep);
typedef int op_get_rows_fn(backend *be, tensor *out, const tensor *table, const tensor *ids);
typedef int op_binary_fn(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b);
typedef int op_unary_fn(backend *be, enum unary_op op, tensor *out, const tensor *x);
typedef int op_scale_fn(backend *be, tensor *out, const tensor *x, float s);
typedef int op_cpy_fn(backend *be, tensor *dst, const tensor *src);
typedef int op_rmsnorm_fn(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps);
typedef int op_rmsnorm_gated_fn(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w,
                                float eps);
typedef int op_layernorm_fn(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps);
typedef int op_l2norm_fn(backend *be, tensor *out, const tensor *x, float eps);
typedef int op_softmax_fn(backend *be, tensor *out, const tensor *x, float scale);
typedef int op_rope_text_fn(backend *be, tensor *out, const tensor *x, const tensor *pos,
                            const struct rope_text_params *p);
typedef int op_rope_vision_fn(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta);
typedef int op_conv1d_causal_fn(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state);
typedef int op_gdn_recurrent_fn(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                                const tensor *g, const tensor *beta, tensor *state, float scale,
                                enum gdn_head_order order);
typedef int op_gdn_chunked_fn(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                              const tensor *g, const tensor *beta, tensor *state, float scale,
                              enum gdn_head_order order);
typedef int op_attention_fn(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, float scale,
                            const struct attn_mask *mask);

/* One slot per op, in SEER_OPS order: a row there without its op_<name>_fn here does not compile. */
struct backend_ops {
#define SEER_OP_SLOT(name, NAME) op_##name##_fn *name;
    SEER_OPS(SEER_OP_SLOT)
#undef SEER_OP_SLOT
};

#endif
