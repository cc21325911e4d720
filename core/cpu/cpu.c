/* cpu.c — CPU backend object: buffers are aligned host memory (or borrowed mmapped memory),
   tensor_set/get are memcpy, sync is a no-op because ops run when called. */
#include "core/cpu/cpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/cpu/qdot_amx.h"
#include "core/cpu/qdot_q4r.h"
#include "core/cpu/qdot_q6r.h"
#include "core/cpu/qdot_q8r.h"
#include "core/error.h"
#include "core/io.h"
#include "core/util.h"

/* 64 bytes: a cache line, and enough for any SIMD load we use. */
#define CPU_ALIGN 64

/* Buffers from this size up (weights, KV caches, recurrent states: what decode streams) are
   allocated in large pages; smaller ones from the heap. The size alone tells cpu_buffer_free which. */
#define CPU_LARGE ((size_t)2 << 20)

static int cpu_memory(backend *be, uint64_t *free_bytes, uint64_t *total_bytes);

static int cpu_buffer_alloc(backend *be, size_t size, backend_buffer **out)
{
    backend_buffer *b = seer_calloc(1, sizeof *b);
    void *mem = !b ? NULL : size >= CPU_LARGE ? seer_large_alloc(size) : seer_aligned_alloc(CPU_ALIGN, size);
    if (!mem) {
        free(b);
        return seer_err(SEER_ENOMEM, "cpu: cannot allocate %zu bytes", size);
    }
    b->be = be;
    b->size = size;
    b->host = mem;
    *out = b;
    return SEER_OK;
}

/* Whether weights of `size` bytes handed over in host memory are copied (enum cpu_weights). */
static bool copy_weights(backend *be, size_t size)
{
    struct cpu_ctx *c = be->ctx;
    if (c->weights != CPU_WEIGHTS_AUTO)
        return c->weights == CPU_WEIGHTS_COPY;
    if (!c->budget_known) {
        uint64_t avail = 0, total;
        if (cpu_memory(be, &avail, &total) != SEER_OK)
            seer_err_clear(); /* no /proc/meminfo: nothing is copied */
        c->copy_budget = avail / 2;
        c->budget_known = true;
    }
    if (size > c->copy_budget)
        return false;
    c->copy_budget -= size;
    return true;
}

/* Copied weights are packed one after another into arenas of large pages: one allocation per tensor
   would leave each tensor's last partial 2 MiB in small pages (or waste the rest of a large one),
   ~170 tails for 0.8B, a fifth of its weights back on 4 KiB pages (Q8_0 decode 17.8 → 17.1
   tokens/s). An arena's untouched remainder is only reserved address space. */
#define CPU_ARENA_BYTES ((size_t)256 << 20)

struct cpu_arena {
    char *base;
    size_t cap, used;
    size_t live; /* buffers still in it: the arena is unmapped when the last one is freed */
    struct cpu_arena *next;
};

static int arena_buffer(backend *be, size_t size, backend_buffer **out)
{
    struct cpu_ctx *c = be->ctx;
    const size_t need = (size + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
    struct cpu_arena *a = c->arenas;
    backend_buffer *b = seer_calloc(1, sizeof *b);
    if (b && (!a || a->cap - a->used < need)) {
        if ((a = seer_calloc(1, sizeof *a)))
            a->cap = need > CPU_ARENA_BYTES ? need : CPU_ARENA_BYTES;
        if (a && !(a->base = seer_large_alloc(a->cap))) {
            free(a);
            a = NULL;
        }
        if (a) {
            a->next = c->arenas;
            c->arenas = a;
        }
    }
    if (!b || !a) {
        free(b);
        return seer_err(SEER_ENOMEM, "cpu: cannot allocate %zu bytes for weights", size);
    }
    b->be = be;
    b->size = size;
    b->host = a->base + a->used;
    b->ctx = a;
    a->used += need;
    a->live++;
    *out = b;
    return SEER_OK;
}

static void arena_release(struct cpu_ctx *c, struct cpu_arena *a)
{
    if (--a->live)
        return;
    for (struct cpu_arena **p = &c->arenas; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    seer_large_free(a->base, a->cap);
    free(a);
}

static int cpu_buffer_from_host(backend *be, void *ptr, size_t size, backend_buffer **out)
{
    if (copy_weights(be, size)) {
        int rc = arena_buffer(be, size, out);
        if (rc == SEER_OK) {
            memcpy((*out)->host, ptr, size);
            io_release(ptr, size);
        }
        return rc;
    }
    backend_buffer *b = seer_calloc(1, sizeof *b);
    if (!b)
        return seer_err(SEER_ENOMEM, "cpu: no memory for a buffer record");
    b->be = be;
    b->size = size;
    b->host = ptr;
    b->borrowed = true;
    *out = b;
    return SEER_OK;
}

static void cpu_buffer_free(backend_buffer *b)
{
    if (b->ctx)
        arena_release(b->be->ctx, b->ctx);
    else if (!b->borrowed && b->size >= CPU_LARGE)
        seer_large_free(b->host, b->size);
    else if (!b->borrowed)
        seer_aligned_free(b->host);
    free(b);
}

static int cpu_tensor_set(backend *be, tensor *t, const void *src, size_t off, size_t n)
{
    (void)be;
    memcpy((char *)t->data + off, src, n);
    return SEER_OK;
}

static int cpu_tensor_get(backend *be, const tensor *t, void *dst, size_t off, size_t n)
{
    (void)be;
    memcpy(dst, (const char *)t->data + off, n);
    return SEER_OK;
}

static int cpu_sync(backend *be)
{
    (void)be;
    return SEER_OK;
}

/* Host RAM: MemAvailable (what can be allocated without swapping) and MemTotal, in kB in
   /proc/meminfo. */
static int cpu_memory(backend *be, uint64_t *free_bytes, uint64_t *total_bytes)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long avail = 0, total = 0, v;
    (void)be;
    if (!f)
        return seer_err(SEER_EUNSUPPORTED, "cpu: /proc/meminfo is not readable");
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
            avail = v;
        else if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
            total = v;
    }
    fclose(f);
    if (!avail || !total)
        return seer_err(SEER_EUNSUPPORTED, "cpu: /proc/meminfo has no MemAvailable");
    *free_bytes = (uint64_t)avail * 1024;
    *total_bytes = (uint64_t)total * 1024;
    return SEER_OK;
}

static void cpu_free(backend *be)
{
    struct cpu_ctx *c = be->ctx;
    threadpool_free(c->pool);
    free(c->qbuf);
    free(c);
    free(be);
}

/* Matrices in memory of the backend's own (copied, not the mapped file), where the products round
   activations: Q8_0 to the AMX tiles' layout where the CPU has them (qdot_amx.c), else Q8_0, Q4_K
   and Q6_K to 16 rows interleaved where it has AVX-512 VNNI (qdot_q8r.c, qdot_q4r.c, qdot_q6r.c). The exact path
   still reads them (the portable kernels, through their dequant functions), slowly: set exact
   before loading. */
static int cpu_weight_prepare(backend *be, tensor *t)
{
    const struct cpu_ctx *c = be->ctx;
    if (c->exact || !t->buf || t->buf->borrowed || !t->data)
        return SEER_OK;
    if (qamx_layout_fits(t) && qamx_ready())
        qamx_layout(t);
    else if (q8r_layout_fits(t) && q8r_ready())
        q8r_layout(t);
    else if (q4r_layout_fits(t) && q4r_ready())
        q4r_layout(t);
    else if (q6r_layout_fits(t) && q6r_ready())
        q6r_layout(t);
    return SEER_OK;
}

#define CPU_OP(name, NAME) .name = cpu_##name,
static const struct backend_i cpu_iface = {
    .name = "cpu",
    .free = cpu_free,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_from_host = cpu_buffer_from_host,
    .buffer_free = cpu_buffer_free,
    .tensor_set = cpu_tensor_set,
    .tensor_get = cpu_tensor_get,
    .sync = cpu_sync,
    .memory = cpu_memory,
    .weight_prepare = cpu_weight_prepare,
    /* one slot per row of SEER_OPS (core/ops.h): a missing cpu_<op> does not compile */
    .ops = {SEER_OPS(CPU_OP)},
};

int backend_cpu_create(int n_threads, backend **out)
{
    backend *be = seer_calloc(1, sizeof *be);
    struct cpu_ctx *c = seer_calloc(1, sizeof *c);
    if (!be || !c) {
        free(be);
        free(c);
        return seer_err(SEER_ENOMEM, "cpu: no memory for the backend");
    }
    int rc = threadpool_create(n_threads, &c->pool);
    if (rc) {
        free(be);
        free(c);
        return rc;
    }
    c->exact = true;
    be->iface = &cpu_iface;
    be->ctx = c;
    be->alignment = CPU_ALIGN;
    be->max_buffer_size = SIZE_MAX / 2;
    snprintf(be->description, sizeof be->description, "cpu (%d thread%s)", n_threads, n_threads == 1 ? "" : "s");
    *out = be;
    return SEER_OK;
}

void backend_cpu_set_exact(backend *be, bool exact)
{
    if (be->iface == &cpu_iface)
        ((struct cpu_ctx *)be->ctx)->exact = exact;
}

void backend_cpu_set_weights(backend *be, enum cpu_weights mode)
{
    if (be->iface == &cpu_iface)
        ((struct cpu_ctx *)be->ctx)->weights = mode;
}

bool cpu_weights_parse(const char *s, enum cpu_weights *mode)
{
    static const char *const names[] = {[CPU_WEIGHTS_AUTO] = "auto", [CPU_WEIGHTS_MAP] = "map", [CPU_WEIGHTS_COPY] = "copy"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s ? s : "auto", names[i]))
            return *mode = (enum cpu_weights)i, true;
    return false;
}
