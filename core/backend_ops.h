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
};

/* Which key head a value head reads when Hv > Hk (spec §2.5 step 5). HF checkpoints group value
   heads by key head: v-head j reads key head j/(Hv/Hk). llama.cpp's GGUF converter reorders
   value heads to a tiled order instead: j reads j mod Hk (spec §11.4 item 6). */
enum gdn_head_order { GDN_V_GROUPED, GDN_V_TILED };

/* ---- the one list of ops ---------------------------------------------------------------------
   Adding an op: a row here, its slot in struct backend_ops below (the static assert fails until
   both agree), its contract and checking wrapper op_* (core/ops.h, core/ops.c), cpu_<name> in
   core/cpu/ and vk_<name> in vulkan/op_*.c. The backends build their slot tables from this list,
   so a backend without a function of that name does not compile. */
#define SEER_OPS(X)                                                                                \
    X(matmul, MATMUL) X(matmul_n, MATMUL_N) X(get_rows, GET_ROWS) X(binary, BINARY) X(unary, UNARY) X(scale, SCALE)     \
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

/* One slot per op, in SEER_OPS order; contracts are in core/ops.h next to each op_* wrapper. */
struct backend_ops {
    int (*matmul)(backend *be, tensor *out, const tensor *w, const tensor *x);
    int (*matmul_n)(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x);
    int (*get_rows)(backend *be, tensor *out, const tensor *table, const tensor *ids);
    int (*binary)(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b);
    int (*unary)(backend *be, enum unary_op op, tensor *out, const tensor *x);
    int (*scale)(backend *be, tensor *out, const tensor *x, float s);
    int (*cpy)(backend *be, tensor *dst, const tensor *src);
    int (*rmsnorm)(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps);
    int (*rmsnorm_gated)(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps);
    int (*layernorm)(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps);
    int (*l2norm)(backend *be, tensor *out, const tensor *x, float eps);
    int (*softmax)(backend *be, tensor *out, const tensor *x, float scale);
    int (*rope_text)(backend *be, tensor *out, const tensor *x, const tensor *pos,
                     const struct rope_text_params *p);
    int (*rope_vision)(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta);
    int (*conv1d_causal)(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state);
    int (*gdn_recurrent)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                         const tensor *g, const tensor *beta, tensor *state, float scale,
                         enum gdn_head_order order);
    int (*gdn_chunked)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                       const tensor *g, const tensor *beta, tensor *state, float scale,
                       enum gdn_head_order order);
    int (*attention)(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                     float scale, const struct attn_mask *mask);
};

/* every slot has a row in SEER_OPS and every row a slot */
_Static_assert(sizeof(struct backend_ops) == OP_COUNT * sizeof(int (*)(void)),
               "struct backend_ops and SEER_OPS disagree: add the op to both");

#endif
