/* randweights.c — streamed random-weight tensors for GGUF files (see randweights.h).
   Divisions: the table · random rows · streaming generation. */
#include "core/randweights.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/quant.h"
#include "core/threads.h"
#include "core/util.h"

/* ---- the table -------------------------------------------------------------------------------- */

int rw_add(struct rw_table *tb, const char *name, int n_dims, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
           enum dtype type, enum rw_init init, float mean, float std)
{
    if (!seer_grow(&tb->t, &tb->cap, (size_t)tb->n + 1, sizeof *tb->t, 128))
        return seer_err(SEER_ENOMEM, "random model: no memory for the tensor table");
    struct rw_tensor *t = &tb->t[tb->n++];
    *t = (struct rw_tensor){.n_dims = n_dims, .ne = {ne0, ne1, ne2, ne3}, .type = type, .init = init,
                            .mean = mean, .std = std};
    snprintf(t->name, sizeof t->name, "%s", name);
    return SEER_OK;
}

int rw_add_linear(struct rw_table *tb, const char *name, int64_t in, int64_t out, enum dtype type, double gain)
{
    return rw_add(tb, name, 2, in, out, 1, 1, type, RW_NORMAL, 0.0f, (float)(gain / sqrt((double)in)));
}

void rw_table_free(struct rw_table *tb)
{
    free(tb->t);
    memset(tb, 0, sizeof *tb);
}

int rw_declare(gguf_writer *w, const struct rw_table *tb)
{
    int rc = SEER_OK;
    for (int i = 0; i < tb->n && rc == SEER_OK; i++)
        rc = gguf_writer_add_tensor(w, tb->t[i].name, tb->t[i].type, tb->t[i].n_dims, tb->t[i].ne);
    return rc;
}

/* ---- random rows ------------------------------------------------------------------------------ */

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Approximately standard normal: the sum of four 16-bit uniforms (Irwin–Hall, n = 4), centred
   and scaled to unit variance. Tails stop at ±3.5σ, which suits weights; one 64-bit draw each
   keeps a 9B model's ~10^10 values cheap. */
static inline float approx_normal(uint64_t *st)
{
    const uint64_t r = splitmix64(st);
    const int64_t sum = (int64_t)(r & 0xFFFF) + (int64_t)((r >> 16) & 0xFFFF) + (int64_t)((r >> 32) & 0xFFFF) +
                        (int64_t)(r >> 48);
    return (float)((double)(sum - 131070) * (1.0 / 37837.23)); /* mean 4·32767.5, sd √(4·(65536²−1)/12) */
}

static inline double uniform01(uint64_t *st) { return (double)(splitmix64(st) >> 11) * (1.0 / 9007199254740992.0); }

/* Row `row` of tensor `ti`: its own stream, so the file does not depend on how rows are split. */
static void gen_row(const struct rw_tensor *t, uint64_t seed, int ti, int64_t row, float *dst)
{
    uint64_t st = seed ^ 0x5EE2D00Dull;
    st = splitmix64(&st) + (uint64_t)ti * 0xD1B54A32D192ED03ull;
    st = splitmix64(&st) + (uint64_t)row * 0x8CB92BA72F3D8DD7ull;
    const int64_t n = t->ne[0];
    switch (t->init) {
    case RW_NORMAL:
        for (int64_t i = 0; i < n; i++)
            dst[i] = t->mean + t->std * approx_normal(&st);
        break;
    case RW_DT:
        for (int64_t i = 0; i < n; i++) {
            const double dt = exp(log(1e-3) + uniform01(&st) * (log(1e-1) - log(1e-3)));
            dst[i] = (float)(dt + log(-expm1(-dt))); /* inverse softplus */
        }
        break;
    case RW_A:
        for (int64_t i = 0; i < n; i++)
            dst[i] = (float)-(1.0 + 15.0 * uniform01(&st));
        break;
    }
}

/* ---- streaming generation --------------------------------------------------------------------- */

#define SLAB_BYTES ((size_t)32 << 20) /* output rows generated per round (bounds memory for any size) */

struct slab_job {
    const struct rw_tensor *t;
    int ti;
    uint64_t seed;
    int64_t r0, n_rows;
    size_t row_bytes;
    uint8_t *out;
    float *scratch;    /* n_threads rows of max_ne0 floats */
    int64_t max_ne0;
};

static void slab_worker(void *ctx, int ith, int nth)
{
    const struct slab_job *j = ctx;
    float *row = j->scratch + (size_t)ith * (size_t)j->max_ne0;
    long long lo, hi;
    threadpool_range(j->n_rows, ith, nth, &lo, &hi);
    for (long long r = lo; r < hi; r++) {
        gen_row(j->t, j->seed, j->ti, j->r0 + r, row);
        quantize_row(j->t->type, row, j->out + (size_t)r * j->row_bytes, j->t->ne[0]);
    }
}

int rw_write(gguf_writer *w, const char *path, const struct rw_table *tb, uint64_t seed, int n_threads)
{
    threadpool *pool = NULL;
    uint8_t *slab = NULL;
    float *scratch = NULL;
    int rc;
    if (n_threads < 1)
        return seer_err(SEER_EINVAL, "random model: %d threads", n_threads);
    int64_t max_ne0 = 1;
    for (int i = 0; i < tb->n; i++)
        max_ne0 = MAX(max_ne0, tb->t[i].ne[0]);
    if ((rc = threadpool_create(n_threads, &pool)))
        return rc;
    /* The slab holds at least one row of the widest tensor (a row is ≤ 2^24 f32 values). */
    const size_t slab_bytes = MAX(SLAB_BYTES, (size_t)max_ne0 * 4);
    slab = seer_malloc(slab_bytes);
    scratch = seer_malloc((size_t)n_threads * (size_t)max_ne0 * sizeof *scratch);
    if (!slab || !scratch) {
        rc = seer_err(SEER_ENOMEM, "random model: no memory for a %zu-byte slab", slab_bytes);
        goto done;
    }
    if ((rc = gguf_writer_begin(w, path)))
        goto done;
    for (int i = 0; i < tb->n && rc == SEER_OK; i++) {
        const struct rw_tensor *t = &tb->t[i];
        const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
        size_t row_bytes;
        dtype_row_bytes(t->type, t->ne[0], &row_bytes); /* checked by gguf_writer_add_tensor */
        const int64_t per_slab = MAX(1, (int64_t)(slab_bytes / row_bytes));
        for (int64_t r0 = 0; r0 < rows && rc == SEER_OK; r0 += per_slab) {
            struct slab_job j = {
                .t = t, .ti = i, .seed = seed, .r0 = r0, .n_rows = MIN(per_slab, rows - r0),
                .row_bytes = row_bytes, .out = slab, .scratch = scratch, .max_ne0 = max_ne0,
            };
            threadpool_run(pool, slab_worker, &j);
            rc = gguf_writer_write(w, slab, (size_t)j.n_rows * row_bytes);
        }
    }
    if (rc == SEER_OK)
        rc = gguf_writer_finish(w);
done:
    threadpool_free(pool);
    free(slab);
    free(scratch);
    return rc;
}
