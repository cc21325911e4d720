/* cpu_internal.h — what the CPU op files share: the backend context (thread pool) and the
   declarations of every cpu_* op, one function per op, grouped by file:
     matmul.c      cpu_matmul, cpu_matmul_n, cpu_get_rows
     elementwise.c cpu_binary, cpu_unary, cpu_scale, cpu_cpy, cpu_softmax
     norm.c        cpu_rmsnorm, cpu_rmsnorm_gated, cpu_layernorm, cpu_l2norm
     rope.c        cpu_rope_text, cpu_rope_vision
     conv.c        cpu_conv1d_causal
     gdn.c         cpu_gdn_recurrent, cpu_gdn_chunked
     attention.c   cpu_attention
   Shapes were checked by core/ops.c before these run. */
#ifndef SEER_CORE_CPU_INTERNAL_H
#define SEER_CORE_CPU_INTERNAL_H

#include "core/backend.h"
#include "core/cpu/cpu.h"
#include "core/threads.h"

struct cpu_ctx {
    threadpool *pool;
    bool exact;        /* matmul keeps f32 activations (backend_cpu_set_exact) */
    void *qbuf;        /* matmul's rounded activations (qdot.h; the AVX-512 tiles' int8, int16
                          or bf16 rows), grown on demand and kept, so decode allocates nothing per
                          token and a prompt's or image's products touch no fresh pages */
    size_t qbuf_bytes;
    enum cpu_weights weights; /* backend_cpu_set_weights */
    bool budget_known;        /* AUTO: copy_budget has been read from the available memory */
    uint64_t copy_budget;     /* AUTO: bytes of weights that may still be copied */
    struct cpu_arena *arenas; /* where copied weights live (cpu.c), newest first */
};

static inline threadpool *cpu_pool(backend *be) { return ((struct cpu_ctx *)be->ctx)->pool; }

/* ---- work splitting, shared by every op file ---- */

/* Below these amounts of work a job runs on the caller: waking the pool costs a few
   microseconds, more than the loops take at that size. Elements for the row-wise ops (norms,
   elementwise, rope), multiply-adds for conv, GDN and attention. */
#define CPU_PAR_MIN_ELEMS 32768
#define CPU_PAR_MIN_WORK 65536

/* Whether a job of `work` is worth the pool (and the pool has more than one thread). */
static inline bool cpu_parallel(backend *be, double work, double min_work)
{
    return work >= min_work && threadpool_size(cpu_pool(be)) > 1;
}

/* Runs fn(ctx, ith, nth) on every pool thread when `par`, else once on the caller (0, 1). */
static inline void cpu_run(backend *be, threadpool_fn fn, void *ctx, bool par)
{
    if (par)
        threadpool_run(cpu_pool(be), fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* Address of row r (flat over ne[1..3]) of a host-visible tensor. */
static inline char *cpu_row_at(const tensor *t, int64_t r)
{
    int64_t i1 = r % t->ne[1], i23 = r / t->ne[1];
    return (char *)t->data + i1 * t->nb[1] + (i23 % t->ne[2]) * t->nb[2] + (i23 / t->ne[2]) * t->nb[3];
}

/* ---- row-wise ops (norms, softmax): one function per ne[0]-long row ---- */

/* Row r of the op: x its input row, y its output row (may be x), n = ne[0]. */
typedef void (*cpu_row_fn)(const void *ctx, int64_t r, const float *x, float *y, int64_t n);

struct cpu_rows_job {
    tensor *out;
    const tensor *x;
    cpu_row_fn row;
    const void *ctx;
};

static inline void cpu_rows_worker(void *p, int ith, int nth)
{
    const struct cpu_rows_job *j = p;
    long long lo, hi;
    threadpool_range(tensor_nrows(j->x), ith, nth, &lo, &hi);
    for (int64_t r = lo; r < hi; r++)
        j->row(j->ctx, r, (const float *)cpu_row_at(j->x, r), (float *)cpu_row_at(j->out, r), j->x->ne[0]);
}

/* Calls row for every row of x (f32) and out, split over the pool when the op is large enough. */
static inline void cpu_run_rows(backend *be, tensor *out, const tensor *x, cpu_row_fn row, const void *ctx)
{
    struct cpu_rows_job j = {out, x, row, ctx};
    cpu_run(be, cpu_rows_worker, &j, cpu_parallel(be, (double)tensor_nelements(x), CPU_PAR_MIN_ELEMS));
}

/* elementwise.c: the row function of unary op `op` (< UNARY_COUNT): y[j] = f(x[j]), y may be x; the
   same instructions for an element wherever it sits in a row (matmul.c's epilogue applies it to
   column blocks). */
typedef void (*cpu_unary_row_fn)(float *y, const float *x, int64_t n);
cpu_unary_row_fn cpu_unary_row(enum unary_op op);

/* the op slots of struct backend_ops, one cpu_<name> of type op_<name>_fn per row of SEER_OPS */
#define CPU_OP_DECL(name, NAME) op_##name##_fn cpu_##name;
SEER_OPS(CPU_OP_DECL)
#undef CPU_OP_DECL

#endif
