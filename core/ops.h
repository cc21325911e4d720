/* ops.h — the operations model code calls. Each op_* checks shapes and dtypes, then runs (CPU)
   or records (Vulkan) the backend's implementation. All tensors of one call live on `be`.
   Activations are f32. Shapes are in ne order (ne[0] innermost); "rows" are ne[0]-long vectors
   and every input may have arbitrary row strides nb[1..3] unless a contract says contiguous;
   ne[0] itself is always contiguous. Outputs are written in full. Unless noted, `out` may alias
   an input of the same shape (in-place).

   Errors: SEER_EINVAL with a message naming the op and the mismatched shape; SEER_EUNSUPPORTED
   when the backend lacks the op or the dtype. */
#ifndef SEER_CORE_OPS_H
#define SEER_CORE_OPS_H

#include <stddef.h>

#include "core/backend_ops.h"
#include "core/tensor.h"

/* ---- contracts ------------------------------------------------------------------------------ */

/* out{M,N,..} = x{K,N,..} · wᵀ, w{K,M} of any weight dtype (F32 F16 BF16 Q8_0 Q4_0 Q4_K Q5_K
   Q6_K): out[n][m] = Σ_k w[m][k]·x[n][k]. x and out f32; out contiguous, must not alias x. */
int op_matmul(backend *be, tensor *out, const tensor *w, const tensor *x);
/* Several weight matrices times one input: outs[i] = x · ws[i]ᵀ for i < n (1..OP_MATMUL_N_MAX),
   each under op_matmul's contract (any mix of weight dtypes; the ws share K). The decoder's
   projections of one normed input — attention's q|gate, k and v, the GDN's four, the MLP's gate
   and up (spec §2.4–§2.6) — go through it, so a backend can take them in one pass: the CPU rounds
   the activations once per format and splits all the matrices' rows over its threads in one job.
   Each outs[i] equals what op_matmul gives for it. */
#define OP_MATMUL_N_MAX 4
int op_matmul_n(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x);
/* A linear layer with its epilogue (struct linear_epilogue): out = act(x·wᵀ + bias) + res, under
   op_matmul's contract, bias f32 {M}, res f32 shaped as out, contiguous and apart from out. The
   same floats as op_matmul then op_add of the bias, op_unary, op_add of res (each in place on out);
   a backend may apply them while the product's outputs are still in cache (the CPU's prefill
   kernel does: the vision tower's bias, GELU and residual passes, issue 22 item 2). */
int op_linear(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep);
/* Embedding lookup: out{H,N} f32, table{H,V} any weight dtype, ids i32{N}; out[n] = table[ids[n]].
   An id outside [0,V) is SEER_EINVAL on backends that can check it (CPU). */
int op_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids);
/* out = a (+|*) b elementwise, b broadcast: each b->ne[i] equals a->ne[i] or 1. out shaped as a. */
int op_add(backend *be, tensor *out, const tensor *a, const tensor *b);
int op_mul(backend *be, tensor *out, const tensor *a, const tensor *b);
int op_unary(backend *be, enum unary_op op, tensor *out, const tensor *x);
int op_silu(backend *be, tensor *out, const tensor *x);
int op_sigmoid(backend *be, tensor *out, const tensor *x);
int op_scale(backend *be, tensor *out, const tensor *x, float s);
/* dst = src converted to dst's dtype (F32, F16, BF16 or Q8_0 destinations); same shape, any
   strides on both sides. Used to write K/V into cache views. Q8_0 (a q8_0 KV cache): ne[0] a
   multiple of 32, each 32 values of a row one block rounded as core/quant.h's quantize_row_q8_0
   (d = amax/127, q = round(x/d), llama.cpp's reference); dst must not alias src. */
int op_cpy(backend *be, tensor *dst, const tensor *src);

/* RMSNorm over each row: out = x · rsqrt(mean(x²) + eps) · (w + w_shift). w f32{ne0} or NULL
   (scale 1). w_shift = 1 gives the zero-centred (1+w) form of spec §2.3 for HF weights; 0 for
   weights already stored +1 (llama.cpp GGUF) or plain weights. */
int op_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps);
/* Gated RMSNorm (spec §2.3, GDN output): out = x · rsqrt(mean(x²)+eps) · w · silu(z); z shaped as
   x, w f32{ne0} a plain scale. */
int op_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps);
/* LayerNorm with bias (spec §4.5): out = (x − mean)·rsqrt(var + eps)·w + b; w, b f32{ne0}. */
int op_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps);
/* L2 norm per row (spec §2.5 step 6): out = x · rsqrt(Σx² + eps). */
int op_l2norm(backend *be, tensor *out, const tensor *x, float eps);
/* Softmax per row of scale·x, computed with the row max subtracted. */
int op_softmax(backend *be, tensor *out, const tensor *x, float scale);

/* Text MRoPE (spec §3.3) on x{head_dim, n_head, T}: pos i32{T,3} holds the T, H, W position of
   each token (pos[a*T + t]). Dims ≥ n_rot pass through. */
int op_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p);
/* Vision 2-D RoPE (spec §4.4) on x{dh, n_head, N}: pos i32{N,2} holds (row, col) per patch
   (pos[t] = row, pos[N + t] = col); inv_freq[j] = theta^(−2j/(dh/2)), j < dh/4; angle i < dh/2 is
   row·inv_freq[i] for i < dh/4 else col·inv_freq[i − dh/4]; rotate-half pairs (i, i + dh/2). */
int op_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta);

/* Causal depthwise conv (spec §2.5 step 2, no activation): x{C,T}, w f32{K,C}, state f32{C,K−1}
   holding the previous K−1 inputs (oldest first). With h = [state rows; x rows]:
   out[t][c] = Σ_{k<K} w[c][k]·h[t+k][c]; afterwards state = the last K−1 rows of h.
   out{C,T} contiguous, must not alias x. */
int op_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state);

/* Gated DeltaNet (spec §2.5 steps 5–8). q, k{dk,Hk,T} already L2-normalised; v{dv,Hv,T};
   g{Hv,T} log-decay (≤ 0); beta{Hv,T} in (0,1); state f32{dv,dk,Hv}: S[j][i][c] at
   j*dk*dv + i*dv + c, updated in place; out{dv,Hv,T} contiguous. `order` maps value heads to
   key heads (above). q is multiplied by `scale` (1/sqrt(dk)) inside. The recurrent form
   steps token by token; the chunked form (chunk 64) gives the same result up to rounding. */
int op_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                     const tensor *g, const tensor *beta, tensor *state, float scale,
                     enum gdn_head_order order);
int op_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                   const tensor *g, const tensor *beta, tensor *state, float scale, enum gdn_head_order order);

/* Attention: q{hd,nh,T}, k and v{hd,nkv,Tk} (f32, F16 or Q8_0 — hd then a multiple of 32 and
   rows starting on even bytes —, e.g. views of a KV cache; each is read in its own type, never
   converted as a whole), nh a multiple of nkv; query head h uses kv head h/(nh/nkv) (spec §2.6 step 6). Scores scale·q·k,
   masked per `mask`, softmax over keys, times v. out{hd,nh,T} contiguous f32. */
int op_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                 float scale, const struct attn_mask *mask);

#endif
