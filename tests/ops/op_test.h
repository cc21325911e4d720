/* op_test.h — what a row of the table-driven op test (tests/ops/backend_ops.c) is made of, and
   the helpers its rows share: making inputs on the host once per case (fresh random data), laying
   them out as views on a backend, and reading outputs back with a check that nothing outside the
   output view was written. The rows live in tests/ops/rows_*.h, which backend_ops.c includes
   (headers, because every .c under tests/ is its own TAP program and this is one).

   A row names an op, its input makers, a list of cases (shapes and layouts), a double reference
   from tests/support/op_ref.c and the tolerance of the CPU against it. The harness makes each
   case's inputs once, runs the reference, the CPU backend, and then every Vulkan configuration,
   and compares (backend_ops.c says how). */
#ifndef SEER_TESTS_OPS_OP_TEST_H
#define SEER_TESTS_OPS_OP_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/ops.h"
#include "core/quant.h"
#include "core/util.h"
#include "seer.h"
#include "support/op_ref.h"
#include "support/testutil.h"
#include "tap.h"

#define OP_MAX_IN 8
#define OP_SENTINEL 0xA5 /* every byte of an output parent before the op (f32 −2.9e-16, f16 −0.0219) */
#define OP_EGAPS (-1000) /* run(): the op wrote outside its output view */

/* Case flags; each row says what they mean for it. */
#define OPC_STRIDED 1u  /* inputs (and outputs) are strided views, not contiguous tensors */
#define OPC_IN_PLACE 2u /* out is an input's own view */
#define OPC_SPLIT 4u    /* sized to span many windows: runs on the small-window backend only (and CPU) */
#define OPC_THREADS 8u  /* the CPU must give the same bits on 1 and 3 threads as on 2 */
#define OPC_ALT 16u     /* a row-specific variant (e.g. tiled GDN heads, the other view layout) */
#define OPC_THREADS_REF 64u /* as OPC_THREADS where the thread count changes the summation order:
                               1 and 3 threads each within the tolerance of the reference */
#define OPC_PLAIN 128u /* also on the plain-kernel backend (vk_backend_params.plain_kernels): for ops
                          whose Vulkan kernel has a feature-dependent variant with a plain twin (the
                          subgroup matvec). Every row's first case runs there regardless. */
#define OPC_CPU_ONLY 256u /* a case of the CPU kernel's own sweep (its tiles, K chunks, GDN chunk
                             boundaries): not run on Vulkan, whose kernels block differently and
                             have their own cases in the row */
#define OPC_SPLIT256 32u /* as OPC_SPLIT, for the 256 KiB window (one that holds a GDN chunk's scratch) */
#define OPC_SHARED16 512u /* also on the backend limited to 16 KiB of shared memory (the Vulkan minimum,
                            vk_backend_params.max_shared_override): for kernels whose tiles come from
                            maxComputeSharedMemorySize (attention). Every row's first case runs there. */

struct op_case {
    int64_t ne[4];   /* the main shape */
    int64_t p[4];    /* row-specific sizes */
    enum dtype type; /* row-specific dtype (weights, destination, K/V) */
    unsigned flags;
    double s;        /* row-specific scalar (a scale, a position bound) */
    void (*fill)(float *x, size_t n); /* NULL: the row's input maker, else this case's */
    double tol;      /* 0: the row's tolerance vs the reference; else this case's, and `why` */
    const char *why;
};

/* One parent tensor of a case, the same on every backend: `bytes` in `type` (NULL: an output
   parent, filled with OP_SENTINEL), and `val`, its elements as f32 (what a backend reads after
   the dtype's rounding; dequantised for block types), for the reference. */
struct op_in {
    enum dtype type;
    int64_t ne[4];
    unsigned char *bytes;
    float *val;
    size_t nbytes;
};

struct op_data {
    int n_in;
    struct op_in in[OP_MAX_IN];
    size_t n_out;   /* elements compared: f32 values (OP_L2) or bytes (OP_BITS) */
    size_t n_exact; /* OP_L2: the last n_exact values must equal the reference exactly (copied state) */
    size_t part;    /* OP_L2: when not 0, values [0, part) and [part, n_out) (an output and a state)
                       are compared separately, each within the tolerance */
    void *aux;      /* row-specific host data (positions, ids, segment ids), freed by the harness */
};

/* One backend's copies of a case's parents. */
struct op_bufs {
    backend *be;
    const struct op_data *d;
    tensor *t[OP_MAX_IN];
};

enum op_cmp {
    OP_L2,   /* relative L2 of f32 outputs vs a double reference */
    OP_BITS, /* the output bytes equal the reference's bytes */
};

struct op_row {
    const char *name;
    int arg; /* row-specific: which unary op, norm, binary op, form */
    void (*make)(const struct op_row *r, const struct op_case *c, struct op_data *d);
    /* fills want: n_out doubles (OP_L2) or n_out bytes (OP_BITS) */
    void (*ref)(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want);
    /* runs the op on b->be and fills got: n_out floats or bytes; returns a SEER_* code or OP_EGAPS */
    int (*run)(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got);
    void (*fill)(float *x, size_t n); /* the main input's maker (a case may name another) */
    enum op_cmp cmp;
    double tol;      /* CPU vs the reference (relative L2), justified by `why` */
    const char *why;
    const struct op_case *cases;
    size_t n_cases;
    const char *ne_names, *p_names; /* what ne[] and p[] hold, space-separated, for the test names;
                                       NULL: printed as {ne} p{p} */
};

#define OP_CASES(a) (a), ARRAY_LEN(a)
/* Shorthands for the case tables: {NE(37, 5, 3, 2), PAR(1, 39), .type = DT_F16} */
#define NE(...) .ne = {__VA_ARGS__}
#define PAR(...) .p = {__VA_ARGS__}

/* ---- input makers --------------------------------------------------------------------------- */

typedef void (*op_fill)(float *x, size_t n);

/* N(0, scale²) from the seeded generator, both Box–Muller outputs used (test_fill_normal keeps
   one; the makers fill tens of millions of values a run) */
static inline void op_fill_normal(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i += 2) {
        double u1 = ((test_rand_u64() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
        double u2 = (test_rand_u64() >> 11) * (1.0 / 9007199254740992.0), r = sqrt(-2.0 * log(u1)) * scale;
        x[i] = (float)(r * cos(6.283185307179586 * u2));
        if (i + 1 < n)
            x[i + 1] = (float)(r * sin(6.283185307179586 * u2));
    }
}

static inline void fill_normal(float *x, size_t n) { op_fill_normal(x, n, 1.0f); }
static inline void fill_normal3(float *x, size_t n) { op_fill_normal(x, n, 3.0f); }
static inline void fill_half(float *x, size_t n) { op_fill_normal(x, n, 0.5f); }
static inline void fill_unit(float *x, size_t n) { test_fill_uniform(x, n, -1.0f, 1.0f); }
/* N(1/4, 1): matmul's inputs. With mean 0 a single dot product (M = N = 1) of K ≈ 2000 terms
   lands near 0 now and then, and its relative error then measures the cancellation, not the
   kernel (a 1.08e-4 against 1e-4 was seen once); with mean 1/4 on both sides it is ≈ K/16, about
   4 standard deviations from 0, while the signs stay mixed. */
static inline void fill_shifted(float *x, size_t n)
{
    op_fill_normal(x, n, 1.0f);
    for (size_t i = 0; i < n; i++)
        x[i] += 0.25f;
}
/* [-30, 30]: silu/sigmoid's overflow side, gelu's far tails, softplus's threshold */
static inline void fill_wide(float *x, size_t n) { test_fill_uniform(x, n, -30.0f, 30.0f); }
/* exp within [-12, 12], so one value cannot hold all of the L2 norm */
static inline void fill_exp(float *x, size_t n) { test_fill_uniform(x, n, -12.0f, 12.0f); }

/* Adds parent i: `type` of shape ne, values from `fill` (rounded to the dtype), or an output
   parent (fill NULL) of sentinel bytes. Returns its f32 values. */
static inline float *op_add_input(struct op_data *d, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2,
                                  int64_t ne3, op_fill fill)
{
    struct op_in *in = &d->in[d->n_in++];
    const size_t n = (size_t)(ne0 * ne1 * ne2 * ne3), es = type == DT_F32 || type == DT_I32 ? 4 : 2;
    *in = (struct op_in){type, {ne0, ne1, ne2, ne3}, NULL, calloc(n, sizeof(float)), n * es};
    if (!fill)
        return in->val;
    fill(in->val, n);
    in->bytes = malloc(in->nbytes);
    for (size_t i = 0; i < n; i++) {
        if (type == DT_F16 || type == DT_BF16) {
            uint16_t h = type == DT_F16 ? ref_f16_bits(in->val[i]) : ref_bf16_bits(in->val[i]);
            memcpy(in->bytes + 2 * i, &h, 2);
            in->val[i] = ref_round(type, in->val[i]);
        } else {
            memcpy(in->bytes + 4 * i, &in->val[i], 4);
        }
    }
    return in->val;
}

/* Stores v (rounded to the parent's dtype) as element i of parent `in`. */
static inline void op_put(struct op_in *in, size_t i, float v)
{
    if (in->type == DT_F16 || in->type == DT_BF16) {
        uint16_t h = in->type == DT_F16 ? ref_f16_bits(v) : ref_bf16_bits(v);
        memcpy(in->bytes + 2 * i, &h, 2);
        v = ref_round(in->type, v);
    } else {
        memcpy(in->bytes + 4 * i, &v, 4);
    }
    in->val[i] = v;
}

/* Re-encodes an f32 parent's bytes after a maker changed its values (masking, specials). */
static inline void op_sync_f32(struct op_in *in)
{
    memcpy(in->bytes, in->val, in->nbytes);
}

/* Adds parent i of block dtype `type` holding `bytes` (taken over), rows of ne0; val dequantised
   with core/quant.c (itself checked bit for bit against gguf-py by tests/core/quant_oracle.c). */
static inline float *op_add_blocks(struct op_data *d, enum dtype type, int64_t ne0, int64_t ne1, unsigned char *bytes)
{
    struct op_in *in = &d->in[d->n_in++];
    size_t row_bytes = 0;
    dtype_row_bytes(type, ne0, &row_bytes);
    *in = (struct op_in){type, {ne0, ne1, 1, 1}, bytes, malloc((size_t)(ne0 * ne1) * sizeof(float)),
                         row_bytes * (size_t)ne1};
    for (int64_t r = 0; r < ne1; r++)
        dequantize_row(type, bytes + (size_t)r * row_bytes, in->val + r * ne0, ne0);
    return in->val;
}

/* Adds an i32 parent {ne0, ne1} holding v (copied). */
static inline void op_add_i32(struct op_data *d, int64_t ne0, int64_t ne1, const int32_t *v)
{
    struct op_in *in = &d->in[d->n_in++];
    *in = (struct op_in){DT_I32, {ne0, ne1, 1, 1}, malloc((size_t)(ne0 * ne1) * 4), NULL, (size_t)(ne0 * ne1) * 4};
    memcpy(in->bytes, v, in->nbytes);
}

/* ---- views ---------------------------------------------------------------------------------- */

/* The f32 "swapped" view layout of the strided cases: the parent is {ne0 + 3, ne2, ne1, ne3} and
   the view {ne0, ne1, ne2, ne3} starts 2 floats in with dims 1 and 2 stored swapped, so an op
   that assumes contiguous rows or a dim order reads wrong values. */
static inline float *op_add_swapped(struct op_data *d, const int64_t ne[4], op_fill fill)
{
    return op_add_input(d, DT_F32, ne[0] + 3, ne[2], ne[1], ne[3], fill);
}

static inline tensor op_swapped_view(const tensor *parent, const int64_t ne[4])
{
    const size_t nb[4] = {4, parent->nb[2], parent->nb[1], parent->nb[3]};
    return tensor_view(parent, 4, ne, nb, 2 * sizeof(float));
}

/* Host address (in a parent's f32 values) of element (i0..i3) of a view built on it. */
static inline size_t op_view_index(const tensor *parent, const tensor *v, int64_t i0, int64_t i1, int64_t i2,
                                   int64_t i3)
{
    size_t at = v->offset - parent->offset + (size_t)i0 * v->nb[0] + (size_t)i1 * v->nb[1] + (size_t)i2 * v->nb[2] +
                (size_t)i3 * v->nb[3];
    return at / (size_t)v->nb[0];
}

/* Packs the f32 values a view sees out of its parent's values (for the references). */
static inline void op_gather_vals(const struct op_in *in, const tensor *parent, const tensor *v, float *out)
{
    size_t n = 0;
    for (int64_t i3 = 0; i3 < v->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < v->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < v->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < v->ne[0]; i0++)
                    out[n++] = in->val[op_view_index(parent, v, i0, i1, i2, i3)];
}

/* A host-only descriptor of parent i (for computing views in make/ref without a backend). */
static inline tensor op_host_parent(const struct op_data *d, int i)
{
    tensor t;
    tensor_init4(&t, d->in[i].type, d->in[i].ne[0], d->in[i].ne[1], d->in[i].ne[2], d->in[i].ne[3]);
    return t;
}

/* Reads the f32 view v of parent i back into got (packed) and checks that every byte of the
   parent outside the view still holds what it held before the op (its input bytes, or the
   sentinel). Returns SEER_OK, OP_EGAPS or the read's error. */
static inline int op_read_view(struct op_bufs *b, int i, const tensor *v, float *got)
{
    const struct op_in *in = &b->d->in[i];
    unsigned char *all = malloc(in->nbytes), *mark = calloc(in->nbytes, 1);
    int rc = backend_tensor_get(b->t[i], all, 0, in->nbytes);
    size_t n = 0;
    for (int64_t i3 = 0; rc == SEER_OK && i3 < v->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < v->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < v->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < v->ne[0]; i0++) {
                    size_t at = op_view_index(b->t[i], v, i0, i1, i2, i3) * 4;
                    memcpy(&got[n++], all + at, 4);
                    memset(mark + at, 1, 4);
                }
    for (size_t k = 0; rc == SEER_OK && k < in->nbytes; k++)
        if (!mark[k] && all[k] != (in->bytes ? in->bytes[k] : OP_SENTINEL))
            rc = OP_EGAPS;
    free(all);
    free(mark);
    return rc;
}

/* All bytes of parent i into got. */
static inline int op_read_bytes(struct op_bufs *b, int i, void *got)
{
    return backend_tensor_get(b->t[i], got, 0, b->d->in[i].nbytes);
}

#endif
