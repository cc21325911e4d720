/* randweights.h — random-weight GGUF files of real model shapes, streamed: a table of tensors (name,
   shape, dtype, how values are drawn) declared to a gguf_writer, then generated slab by slab on a
   thread pool, quantised and written, so a multi-gigabyte file never sits in memory. Every row has
   its own seeded stream, so a file depends only on its table and seed — not on the thread count.
   The text model (lm/randmodel.c) and the vision projector (vision/randmodel.c) share it; they add
   their metadata and tensor tables. Used by `seer bench --preset` to measure without downloads. */
#ifndef SEER_CORE_RANDWEIGHTS_H
#define SEER_CORE_RANDWEIGHTS_H

#include <stdint.h>

#include "core/gguf_write.h"
#include "core/tensor.h"

/* How a tensor's values are drawn. */
enum rw_init {
    RW_NORMAL, /* mean + std·N(0,1) */
    RW_DT,     /* dt_bias = dt + log(−expm1(−dt)), dt log-uniform in [1e-3, 1e-1] (Mamba/GDN init) */
    RW_A,      /* −A, A uniform in [1, 16] (GDN ssm_a as llama.cpp stores it) */
};

struct rw_tensor {
    char name[64];
    int n_dims;
    int64_t ne[4];   /* ggml order; rows of ne[0] values, ne[1]·ne[2]·ne[3] of them */
    enum dtype type;
    enum rw_init init;
    float mean, std;
};

struct rw_table {
    struct rw_tensor *t;
    int n;
    size_t cap;
};

/* Appends a tensor of n_dims dims (1..4) shaped ne0 × ne1 × ne2 × ne3. */
int rw_add(struct rw_table *tb, const char *name, int n_dims, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
           enum dtype type, enum rw_init init, float mean, float std);
/* A matrix {in, out} of `type` with N(0, gain/√in) values: O(1) activations through it. */
int rw_add_linear(struct rw_table *tb, const char *name, int64_t in, int64_t out, enum dtype type, double gain);
void rw_table_free(struct rw_table *tb);

/* Declares every tensor of tb to w (after its metadata). */
int rw_declare(gguf_writer *w, const struct rw_table *tb);
/* Opens `path` through w (atomically, see gguf_write.h), generates and writes every tensor in table
   order with n_threads threads, and finishes the file. */
int rw_write(gguf_writer *w, const char *path, const struct rw_table *tb, uint64_t seed, int n_threads);

#endif
