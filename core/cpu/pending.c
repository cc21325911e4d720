/* TEMPORARY during parallel bring-up: weak fallbacks so the library links while op files are
   written. Deleted before the foundation lands. */
#include "core/cpu/cpu_internal.h"
#include "core/error.h"
#include "core/quant.h"
#define W __attribute__((weak))
#define NA return seer_err(SEER_EUNSUPPORTED, "pending")
W int cpu_matmul(backend *be, tensor *out, const tensor *w, const tensor *x) { (void)be;(void)out;(void)w;(void)x; NA; }
W int cpu_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids) { (void)be;(void)out;(void)table;(void)ids; NA; }
W int cpu_binary(backend *be, enum binary_op op, tensor *out, const tensor *a, const tensor *b) { (void)be;(void)op;(void)out;(void)a;(void)b; NA; }
W int cpu_unary(backend *be, enum unary_op op, tensor *out, const tensor *x) { (void)be;(void)op;(void)out;(void)x; NA; }
W int cpu_scale(backend *be, tensor *out, const tensor *x, float s) { (void)be;(void)out;(void)x;(void)s; NA; }
W int cpu_cpy(backend *be, tensor *dst, const tensor *src) { (void)be;(void)dst;(void)src; NA; }
W int cpu_softmax(backend *be, tensor *out, const tensor *x, float scale) { (void)be;(void)out;(void)x;(void)scale; NA; }
W int cpu_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps) { (void)be;(void)out;(void)x;(void)w;(void)w_shift;(void)eps; NA; }
W int cpu_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps) { (void)be;(void)out;(void)x;(void)z;(void)w;(void)eps; NA; }
W int cpu_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps) { (void)be;(void)out;(void)x;(void)w;(void)b;(void)eps; NA; }
W int cpu_l2norm(backend *be, tensor *out, const tensor *x, float eps) { (void)be;(void)out;(void)x;(void)eps; NA; }
W int cpu_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p) { (void)be;(void)out;(void)x;(void)pos;(void)p; NA; }
W int cpu_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta) { (void)be;(void)out;(void)x;(void)pos;(void)theta; NA; }
W int cpu_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state) { (void)be;(void)out;(void)x;(void)w;(void)state; NA; }
W int cpu_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g, const tensor *beta, tensor *state, float scale) { (void)be;(void)out;(void)q;(void)k;(void)v;(void)g;(void)beta;(void)state;(void)scale; NA; }
W int cpu_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, const tensor *g, const tensor *beta, tensor *state, float scale) { (void)be;(void)out;(void)q;(void)k;(void)v;(void)g;(void)beta;(void)state;(void)scale; NA; }
W int cpu_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v, float scale, const struct attn_mask *mask) { (void)be;(void)out;(void)q;(void)k;(void)v;(void)scale;(void)mask; NA; }
W void dequantize_row(enum dtype t, const void *src, float *dst, int64_t n) { (void)t;(void)src;(void)dst;(void)n; }
W void quantize_row_q8_0(const float *src, void *dst, int64_t n) { (void)src;(void)dst;(void)n; }
W void quantize_row_q4_K(const float *src, void *dst, int64_t n) { (void)src;(void)dst;(void)n; }
W bool quantize_row(enum dtype t, const float *src, void *dst, int64_t n) { (void)t;(void)src;(void)dst;(void)n; return false; }
