/* op_ref.h — double-precision references for every op of core/ops.h, written from the op
   contracts there and the spec sections they cite, shared by all op tests (tests/ops/). Each
   takes the logical (packed, ne-ordered) inputs as f32 — the values the backends really read,
   i.e. already rounded to the tensor's dtype — and writes double outputs. Nothing here calls
   the code under test; f16/bf16 rounding has its own encoders (ref_f16_bits, ref_bf16_bits). */
#ifndef SEER_TESTS_OP_REF_H
#define SEER_TESTS_OP_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend.h"

/* enum unary_op in double. The GELUs use 1 + tanh u = 2/(1 + e^(−2u)) and 1 + erf z = erfc(−z)
   so the reference stays exact in the far negative tail. softplus is x above 20 (spec §2.5
   step 4, PyTorch's threshold). */
double ref_unary(enum unary_op op, double x);

/* out = a (+|*) b with b broadcast (b_ne[i] is a_ne[i] or 1); all packed. */
void ref_binary(enum binary_op op, const int64_t a_ne[4], const float *a, const int64_t b_ne[4], const float *b,
                double *out);

/* One row of n: softmax of scale·x with the max subtracted; −inf entries give 0 and a row that
   is −inf throughout gives zeros (core/ops.h). */
void ref_softmax_row(const float *x, int64_t n, double scale, double *out);

/* The norms of core/ops.h on one row of n (spec §2.3, §4.5, §2.5 step 6):
   RMS:       x·rsqrt(mean x² + eps)·(w + shift), w NULL → 1
   GATED:     x·rsqrt(mean x² + eps)·w·silu(z)
   LAYER:     (x − mean)·rsqrt(var + eps)·w + b, biased variance
   L2:        x·rsqrt(Σx² + eps) */
enum ref_norm { REF_RMS, REF_RMS_GATED, REF_LAYER, REF_L2 };
void ref_norm_row(enum ref_norm kind, const float *x, const float *z, const float *w, const float *b, double shift,
                  double eps, int64_t n, double *out);

/* Text MRoPE (spec §3.3) on packed x{hd, nh, T}, pos[a*T + t]. f32_angles: inv_freq rounded to
   f32 and pos·inv_freq taken in f32, as the spec says HF forms the angle (what matters at long
   positions); otherwise all in double. Dims ≥ n_rot are copied. */
void ref_rope_text(const float *x, int64_t hd, int64_t nh, int64_t T, const int32_t *pos,
                   const struct rope_text_params *p, bool f32_angles, double *out);
/* Vision 2-D RoPE (spec §4.4) on packed x{dh, nh, N}, pos[t] = row, pos[N + t] = col, with the
   same choice of angle rounding. */
void ref_rope_vision(const float *x, int64_t dh, int64_t nh, int64_t N, const int32_t *pos, double theta,
                     bool f32_angles, double *out);

/* out[n][m] = Σ_k w[m][k]·x[n][k]; w packed {K, M} (dequantised values), x packed {K, N}. */
void ref_matmul(const float *w, const float *x, int64_t K, int64_t M, int64_t N, double *out);

/* Causal depthwise conv (spec §2.5 step 2) over a whole history m{C, Ttot} (inputs before t = 0
   are zero); w{K, C}; outputs for t0 ≤ t < Ttot go to out[(t − t0)·C + c]. */
void ref_conv(const float *m, const float *w, int64_t C, int64_t K, int64_t Ttot, int64_t t0, double *out);

/* One Gated DeltaNet step for one value head (spec §2.5 step 7 verbatim): S ← αS; kv = Sᵀk;
   δ = β(v − kv); S += k⊗δ; o = Sᵀ(q·scale); S {dk×dv} row-major, kv scratch of dv doubles. */
void ref_gdn_step(double *S, const float *q, const float *k, const float *v, double alpha, double beta, double scale,
                  int64_t dk, int64_t dv, double *kv, double *o);

/* Softmax attention (spec §2.6 step 6, §4.5) on packed q{hd,nh,T}, k and v{hd,nkv,Tk}: query
   head h reads kv head h/(nh/nkv); causal (key j visible to query t when j ≤ q_pos0 + t) when
   seg == NULL, else key j visible when seg[j] == seg[t]. */
void ref_attention(const float *q, const float *k, const float *v, int64_t hd, int64_t nh, int64_t nkv, int64_t T,
                   int64_t Tk, int64_t q_pos0, const int32_t *seg, double scale, double *out);

/* IEEE binary16 / bfloat16 bits of f rounded to nearest, ties to even, computed in double
   (independent of core/fp16.h): overflow gives ±inf, NaN a quiet NaN (sign | 0x7e00 for f16;
   the top half with the quiet bit set for bf16). */
uint16_t ref_f16_bits(float f);
uint16_t ref_bf16_bits(float f);
/* The value f holds once stored as `type` (F32, F16 or BF16). */
float ref_round(enum dtype type, float f);
/* The value of IEEE binary16 bits h (subnormals, infinities and NaN included). */
double ref_f16_value(uint16_t h);
/* Q8_0 (34-byte blocks: f16 d little-endian, int8 q[32]) of n finite values, n a multiple of
   32, by llama.cpp's reference rule (d = amax/127, q = round(x/d) half away from zero, taken as
   x times the f32 inverse of d); and back (d·q per value). Independent of core/quant.c. */
void ref_quantize_q8_0(const float *x, int64_t n, unsigned char *out);
void ref_dequantize_q8_0(const unsigned char *blocks, int64_t n, float *out);

#endif
