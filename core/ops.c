/* ops.c — shape and dtype checks for every op, then dispatch to the backend's slot.
   Backends may assume what is checked here; contracts are in core/ops.h. */
#include "core/ops.h"

#include "core/backend.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/quant.h"

static void shape_str(const tensor *t, char *s, size_t n)
{
    snprintf(s, n, "%s{%lld,%lld,%lld,%lld}", dtype_name(t->type), (long long)t->ne[0],
             (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3]);
}

static int bad_shape(const char *op, const char *what, const tensor *a, const tensor *b)
{
    char sa[96], sb[96] = "";
    shape_str(a, sa, sizeof sa);
    if (b)
        shape_str(b, sb, sizeof sb);
    return seer_err(SEER_EINVAL, "%s: %s (%s%s%s)", op, what, sa, b ? " vs " : "", sb);
}

static int no_slot(backend *be, const char *op)
{
    return seer_err(SEER_EUNSUPPORTED, "%s: not available on the %s backend", op, backend_name(be));
}

#define DISPATCH(be, slot, ...) \
    ((be)->iface->ops.slot ? (be)->iface->ops.slot((be), __VA_ARGS__) : no_slot((be), "op_" #slot))

static bool is_f32(const tensor *t) { return t->type == DT_F32; }
static bool is_weight_type(enum dtype t) { return t != DT_I32; }
static bool is_vec(const tensor *w, int64_t n)
{
    return w->type == DT_F32 && w->ne[0] == n && w->ne[1] == 1 && w->ne[2] == 1 && w->ne[3] == 1;
}

static int matmul_check(const char *name, const tensor *out, const tensor *w, const tensor *x)
{
    if (!is_weight_type(w->type) || !is_f32(x) || !is_f32(out))
        return bad_shape(name, "dtypes: w any weight type, x and out f32", w, x);
    if (w->ne[0] != x->ne[0] || w->ne[2] != 1 || w->ne[3] != 1)
        return bad_shape(name, "w{K,M} and x{K,N} disagree on K", w, x);
    if (out->ne[0] != w->ne[1] || out->ne[1] != x->ne[1] || out->ne[2] != x->ne[2] || out->ne[3] != x->ne[3])
        return bad_shape(name, "out must be {M,N} for w{K,M}", out, w);
    if (!tensor_is_contiguous(out))
        return bad_shape(name, "out must be contiguous", out, NULL);
    return SEER_OK;
}

int op_matmul(backend *be, tensor *out, const tensor *w, const tensor *x)
{
    int rc = matmul_check("op_matmul", out, w, x);
    return rc ? rc : DISPATCH(be, matmul, out, w, x);
}

int op_linear(backend *be, tensor *out, const tensor *w, const tensor *x, const struct linear_epilogue *ep)
{
    int rc = matmul_check("op_linear", out, w, x);
    if (rc)
        return rc;
    if (ep->bias && !is_vec(ep->bias, w->ne[1]))
        return bad_shape("op_linear", "bias must be f32 {M}", ep->bias, w);
    if (ep->act && (unsigned)ep->unary >= UNARY_COUNT)
        return seer_err(SEER_EINVAL, "op_linear: unary op %d out of range", (int)ep->unary);
    if (ep->res) {
        const tensor *r = ep->res;
        if (!is_f32(r) || !tensor_is_contiguous(r) || memcmp(r->ne, out->ne, sizeof r->ne))
            return bad_shape("op_linear", "res must be f32, contiguous, shaped as out", r, out);
        if (r->buf && r->buf == out->buf && r->offset < out->offset + tensor_nbytes(out) &&
            out->offset < r->offset + tensor_nbytes(r))
            return bad_shape("op_linear", "res overlaps out", r, out);
    }
    return DISPATCH(be, linear, out, w, x, ep);
}

int op_matmul_n(backend *be, int n, tensor *const *outs, const tensor *const *ws, const tensor *x)
{
    if (n < 1 || n > OP_MATMUL_N_MAX)
        return seer_err(SEER_EINVAL, "op_matmul_n: %d products (1..%d)", n, OP_MATMUL_N_MAX);
    for (int i = 0; i < n; i++) {
        int rc = matmul_check("op_matmul_n", outs[i], ws[i], x);
        if (rc)
            return rc;
        for (int j = 0; j < i; j++) /* the outputs are written in one pass: none may overlap another */
            if (outs[j]->buf && outs[j]->buf == outs[i]->buf &&
                outs[j]->offset < outs[i]->offset + tensor_nbytes(outs[i]) &&
                outs[i]->offset < outs[j]->offset + tensor_nbytes(outs[j]))
                return bad_shape("op_matmul_n", "outputs overlap", outs[j], outs[i]);
    }
    return DISPATCH(be, matmul_n, n, outs, ws, x);
}

int op_get_rows(backend *be, tensor *out, const tensor *table, const tensor *ids)
{
    if (!is_weight_type(table->type) || ids->type != DT_I32 || !is_f32(out))
        return bad_shape("op_get_rows", "dtypes: table any weight type, ids i32, out f32", table, ids);
    if (out->ne[0] != table->ne[0] || out->ne[1] != ids->ne[0] || ids->ne[1] * ids->ne[2] * ids->ne[3] != 1 ||
        table->ne[2] * table->ne[3] != 1)
        return bad_shape("op_get_rows", "out{H,N} needs table{H,V} and ids{N}", out, table);
    return DISPATCH(be, get_rows, out, table, ids);
}

static int binary(backend *be, enum binary_op op, const char *name, tensor *out, const tensor *a, const tensor *b)
{
    if (!is_f32(out) || !is_f32(a) || !is_f32(b))
        return bad_shape(name, "dtypes must be f32", a, b);
    if (!tensor_same_shape(out, a))
        return bad_shape(name, "out must have a's shape", out, a);
    for (int i = 0; i < TENSOR_MAX_DIMS; i++)
        if (b->ne[i] != a->ne[i] && b->ne[i] != 1)
            return bad_shape(name, "b must match a or be 1 in each dim", a, b);
    return DISPATCH(be, binary, op, out, a, b);
}

int op_add(backend *be, tensor *out, const tensor *a, const tensor *b) { return binary(be, BINARY_ADD, "op_add", out, a, b); }
int op_mul(backend *be, tensor *out, const tensor *a, const tensor *b) { return binary(be, BINARY_MUL, "op_mul", out, a, b); }

int op_unary(backend *be, enum unary_op op, tensor *out, const tensor *x)
{
    if ((unsigned)op >= UNARY_COUNT)
        return seer_err(SEER_EINVAL, "op_unary: unknown op %d", (int)op);
    if (!is_f32(out) || !is_f32(x) || !tensor_same_shape(out, x))
        return bad_shape("op_unary", "out and x must be f32 of one shape", out, x);
    return DISPATCH(be, unary, op, out, x);
}

int op_silu(backend *be, tensor *out, const tensor *x) { return op_unary(be, UNARY_SILU, out, x); }
int op_sigmoid(backend *be, tensor *out, const tensor *x) { return op_unary(be, UNARY_SIGMOID, out, x); }

int op_scale(backend *be, tensor *out, const tensor *x, float s)
{
    if (!is_f32(out) || !is_f32(x) || !tensor_same_shape(out, x))
        return bad_shape("op_scale", "out and x must be f32 of one shape", out, x);
    return DISPATCH(be, scale, out, x, s);
}

int op_cpy(backend *be, tensor *dst, const tensor *src)
{
    if (!is_f32(src) || (dst->type != DT_F32 && dst->type != DT_F16 && dst->type != DT_BF16 && dst->type != DT_Q8_0))
        return bad_shape("op_cpy", "src f32, dst f32/f16/bf16/q8_0", dst, src);
    if (!tensor_same_shape(dst, src))
        return bad_shape("op_cpy", "shapes differ", dst, src);
    if (dst->type == DT_Q8_0 && dst->ne[0] % QK8_0 != 0)
        return bad_shape("op_cpy", "q8_0 rows are whole 32-value blocks", dst, src);
    return DISPATCH(be, cpy, dst, src);
}

/* The row ops' common operands: out and x f32 of one shape, and the per-column vectors a norm
   scales and shifts by (w, b; NULL where the op has none) f32{ne0}. */
static int check_norm(const char *name, const tensor *out, const tensor *x, const tensor *w, const tensor *b)
{
    if (!is_f32(out) || !is_f32(x) || !tensor_same_shape(out, x))
        return bad_shape(name, "out and x must be f32 of one shape", out, x);
    const tensor *bad = w && !is_vec(w, x->ne[0]) ? w : b && !is_vec(b, x->ne[0]) ? b : NULL;
    return bad ? bad_shape(name, bad == w ? "w must be f32{ne0}" : "b must be f32{ne0}", bad, x) : SEER_OK;
}

int op_rmsnorm(backend *be, tensor *out, const tensor *x, const tensor *w, float w_shift, float eps)
{
    int rc = check_norm("op_rmsnorm", out, x, w, NULL);
    return rc ? rc : DISPATCH(be, rmsnorm, out, x, w, w_shift, eps);
}

int op_rmsnorm_gated(backend *be, tensor *out, const tensor *x, const tensor *z, const tensor *w, float eps)
{
    int rc = check_norm("op_rmsnorm_gated", out, x, w, NULL);
    if (rc)
        return rc;
    if (!is_f32(z) || !tensor_same_shape(z, x))
        return bad_shape("op_rmsnorm_gated", "z must be f32 shaped as x", z, x);
    return DISPATCH(be, rmsnorm_gated, out, x, z, w, eps);
}

int op_layernorm(backend *be, tensor *out, const tensor *x, const tensor *w, const tensor *b, float eps)
{
    int rc = check_norm("op_layernorm", out, x, w, b);
    return rc ? rc : DISPATCH(be, layernorm, out, x, w, b, eps);
}

int op_l2norm(backend *be, tensor *out, const tensor *x, float eps)
{
    int rc = check_norm("op_l2norm", out, x, NULL, NULL);
    return rc ? rc : DISPATCH(be, l2norm, out, x, eps);
}

int op_softmax(backend *be, tensor *out, const tensor *x, float scale)
{
    int rc = check_norm("op_softmax", out, x, NULL, NULL);
    return rc ? rc : DISPATCH(be, softmax, out, x, scale);
}

int op_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p)
{
    int rc = check_norm("op_rope_text", out, x, NULL, NULL);
    if (rc)
        return rc;
    if (pos->type != DT_I32 || pos->ne[0] != x->ne[2] || pos->ne[1] != 3 || !tensor_is_contiguous(pos))
        return bad_shape("op_rope_text", "pos must be contiguous i32{T,3} for x{hd,nh,T}", pos, x);
    if (p->n_rot <= 0 || p->n_rot % 2 || p->n_rot > x->ne[0] || x->ne[3] != 1)
        return bad_shape("op_rope_text", "n_rot must be even and <= head_dim", x, NULL);
    return DISPATCH(be, rope_text, out, x, pos, p);
}

int op_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta)
{
    int rc = check_norm("op_rope_vision", out, x, NULL, NULL);
    if (rc)
        return rc;
    if (pos->type != DT_I32 || pos->ne[0] != x->ne[2] || pos->ne[1] != 2 || !tensor_is_contiguous(pos))
        return bad_shape("op_rope_vision", "pos must be contiguous i32{N,2} for x{dh,nh,N}", pos, x);
    if (x->ne[0] % 4 || x->ne[3] != 1)
        return bad_shape("op_rope_vision", "head dim must be a multiple of 4", x, NULL);
    return DISPATCH(be, rope_vision, out, x, pos, theta);
}

int op_conv1d_causal(backend *be, tensor *out, const tensor *x, const tensor *w, tensor *state)
{
    int64_t C = x->ne[0], K = w->ne[0];
    if (!is_f32(x) || !is_f32(out) || !is_f32(w) || !is_f32(state))
        return bad_shape("op_conv1d_causal", "dtypes must be f32", x, w);
    if (w->ne[1] != C || K < 2 || state->ne[0] != C || state->ne[1] != K - 1 || !tensor_same_shape(out, x) ||
        x->ne[2] * x->ne[3] != 1)
        return bad_shape("op_conv1d_causal", "need x{C,T}, w{K,C}, state{C,K-1}", x, w);
    if (!tensor_is_contiguous(out) || !tensor_is_contiguous(state) || !tensor_is_contiguous(w))
        return bad_shape("op_conv1d_causal", "out, w and state must be contiguous", out, state);
    return DISPATCH(be, conv1d_causal, out, x, w, state);
}

static int check_gdn(const char *name, enum gdn_head_order order, const tensor *out, const tensor *q, const tensor *k, const tensor *v,
                     const tensor *g, const tensor *beta, const tensor *state)
{
    int64_t dk = q->ne[0], Hk = q->ne[1], T = q->ne[2], dv = v->ne[0], Hv = v->ne[1];
    const tensor *all[] = {out, q, k, v, g, beta, state};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!is_f32(all[i]))
            return bad_shape(name, "dtypes must be f32", all[i], NULL);
    if ((unsigned)order > GDN_V_TILED)
        return seer_err(SEER_EINVAL, "%s: unknown head order %d", name, (int)order);
    if (!tensor_same_shape(q, k) || v->ne[2] != T || Hv % Hk != 0)
        return bad_shape(name, "need q,k{dk,Hk,T}, v{dv,Hv,T} with Hv a multiple of Hk", q, v);
    if (g->ne[0] != Hv || g->ne[1] != T || !tensor_same_shape(g, beta))
        return bad_shape(name, "need g and beta{Hv,T}", g, v);
    if (state->ne[0] != dv || state->ne[1] != dk || state->ne[2] != Hv || !tensor_is_contiguous(state))
        return bad_shape(name, "need contiguous state{dv,dk,Hv}", state, v);
    if (!tensor_same_shape(out, v) || !tensor_is_contiguous(out))
        return bad_shape(name, "need contiguous out{dv,Hv,T}", out, v);
    return SEER_OK;
}

int op_gdn_recurrent(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                     const tensor *g, const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    int rc = check_gdn("op_gdn_recurrent", order, out, q, k, v, g, beta, state);
    return rc ? rc : DISPATCH(be, gdn_recurrent, out, q, k, v, g, beta, state, scale, order);
}

int op_gdn_chunked(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                   const tensor *g, const tensor *beta, tensor *state, float scale, enum gdn_head_order order)
{
    int rc = check_gdn("op_gdn_chunked", order, out, q, k, v, g, beta, state);
    return rc ? rc : DISPATCH(be, gdn_chunked, out, q, k, v, g, beta, state, scale, order);
}

int op_attention(backend *be, tensor *out, const tensor *q, const tensor *k, const tensor *v,
                 float scale, const struct attn_mask *mask)
{
    int64_t hd = q->ne[0], nh = q->ne[1], T = q->ne[2], nkv = k->ne[1], Tk = k->ne[2];
    if (!is_f32(q) || !is_f32(out) || (k->type != DT_F32 && k->type != DT_F16 && k->type != DT_Q8_0) ||
        v->type != k->type)
        return bad_shape("op_attention", "q, out f32; k, v f32, f16 or q8_0", q, k);
    if (k->type == DT_Q8_0 && hd % QK8_0 != 0)
        return bad_shape("op_attention", "q8_0 k, v need a head dim multiple of 32", q, k);
    /* a block's f16 step is read as one 2-byte value: q8_0 rows start on even bytes, as in any
       cache of whole 34-byte blocks */
    if (k->type == DT_Q8_0 && ((k->offset | k->nb[1] | k->nb[2] | v->offset | v->nb[1] | v->nb[2] |
                                (size_t)(uintptr_t)k->data | (size_t)(uintptr_t)v->data) & 1))
        return bad_shape("op_attention", "q8_0 k, v rows must start on even bytes", q, k);
    if (k->ne[0] != hd || !tensor_same_shape(k, v) || nkv < 1 || nh % nkv != 0 || q->ne[3] != 1 || k->ne[3] != 1)
        return bad_shape("op_attention", "need q{hd,nh,T}, k,v{hd,nkv,Tk}, nh multiple of nkv", q, k);
    if (!tensor_same_shape(out, q) || !tensor_is_contiguous(out))
        return bad_shape("op_attention", "need contiguous out shaped as q", out, q);
    if (mask->kind == ATTN_CAUSAL) {
        if (mask->q_pos0 < 0 || mask->q_pos0 + T > Tk)
            return seer_err(SEER_EINVAL, "op_attention: causal q_pos0 %lld + T %lld exceeds Tk %lld",
                            (long long)mask->q_pos0, (long long)T, (long long)Tk);
    } else if (mask->kind == ATTN_SEGMENTS) {
        if (!mask->seg || mask->seg->type != DT_I32 || mask->seg->ne[0] != T || T != Tk)
            return seer_err(SEER_EINVAL, "op_attention: segment mask needs seg i32{T} and T == Tk");
    } else {
        return seer_err(SEER_EINVAL, "op_attention: unknown mask kind %d", (int)mask->kind);
    }
    return DISPATCH(be, attention, out, q, k, v, scale, mask);
}
