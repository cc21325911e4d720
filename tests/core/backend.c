/* Tests the one list of ops (core/ops.h SEER_OPS) and what core/backend.c derives from it: every op
   has a distinct name; a backend whose slot is empty is named by backend_missing_op and answers
   no in backend_supports; a backend's supports() answer is asked at model load (lm/load.c), so a
   weight dtype it cannot run is refused with SEER_EUNSUPPORTED naming the tensor, before any
   forward pass. The model is a tiny f16 GGUF (tests/support/tiny_model.h, random shape). Also the
   CPU's weight placement (backend_cpu_set_weights): map borrows the caller's bytes, copy and auto
   copy them into 2 MiB-aligned large-page arenas, packed, and dropping the file's pages after a copy
   (io_release) leaves the mapping reading the file's bytes and other memory untouched. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/error.h"
#include "core/io.h"
#include "core/util.h"
#include "core/ops.h"
#include "lm/qwen35.h"
#include "support/tiny_model.h"
#include "support/testutil.h"
#include "tap.h"

static void test_names(void)
{
    int bad = 0;
    for (int i = 0; i < OP_COUNT; i++) {
        const char *n = op_name((enum op_id)i);
        bad += !n || !n[0] || !strcmp(n, "?");
        for (int j = 0; j < i; j++)
            bad += n && !strcmp(n, op_name((enum op_id)j));
    }
    ok(bad == 0 && !strcmp(op_name(OP_MATMUL), "matmul") && !strcmp(op_name(OP_ATTENTION), "attention") &&
           !strcmp(op_name(OP_COUNT), "?"),
       "%d ops, each with one distinct name (%d bad)", OP_COUNT, bad);
}

/* a backend that refuses f16 weights */
static bool no_f16(backend *be, enum op_id op, const tensor *const *t, int n)
{
    (void)be;
    return !((op == OP_MATMUL || op == OP_GET_ROWS) && n >= 1 && t[0]->type == DT_F16);
}

static void test_slots(backend *cpu)
{
    ok(backend_missing_op(cpu) == NULL, "the CPU backend fills every slot");
    tensor w;
    tensor_init4(&w, DT_Q4_K, 256, 4, 1, 1);
    const tensor *args[] = {&w};
    ok(backend_supports(cpu, OP_MATMUL, args, 1) && !backend_supports(cpu, OP_COUNT, args, 1),
       "CPU supports q4_K matmul; an op id past OP_COUNT is refused");
    struct backend_i iface = *cpu->iface;
    backend fake = *cpu;
    fake.iface = &iface;
    iface.ops.rope_vision = NULL;
    const char *m = backend_missing_op(&fake);
    ok(m && !strcmp(m, "rope_vision") && !backend_supports(&fake, OP_ROPE_VISION, args, 0),
       "an empty slot is named (%s) and not supported", m ? m : "none");
    iface.ops.rope_vision = cpu->iface->ops.rope_vision;
    iface.supports = no_f16;
    tensor h;
    tensor_init4(&h, DT_F16, 256, 4, 1, 1);
    const tensor *hargs[] = {&h};
    ok(!backend_supports(&fake, OP_MATMUL, hargs, 1) && backend_supports(&fake, OP_MATMUL, args, 1),
       "a backend's supports() answer is what backend_supports gives");
}

static void test_load_refused(backend *cpu)
{
    struct tm_cfg c;
    struct tm_list l = {0};
    char path[700];
    tm_random(&c);
    tm_text_tensors(&c, true, &l);
    struct gw_file *f = gw_new();
    tm_text_meta(&c, f);
    tm_gguf_add(f, &l, GGML_F16);
    snprintf(path, sizeof path, "%s/f16.gguf", test_tmp_dir());
    gw_write(f, path);
    gw_free(f);
    tm_list_free(&l);

    qwen35_model *m = NULL;
    int rc = qwen35_load(path, cpu, &m);
    if (!ok(rc == SEER_OK, "the f16 model loads on the CPU (%s)", rc ? seer_last_error() : "ok"))
        return;
    qwen35_free(m);
    struct backend_i iface = *cpu->iface;
    backend fake = *cpu;
    fake.iface = &iface;
    iface.supports = no_f16;
    m = (qwen35_model *)0x1;
    rc = qwen35_load(path, &fake, &m);
    const char *e = seer_last_error();
    ok(rc == SEER_EUNSUPPORTED && m == (qwen35_model *)0x1 && strstr(e, "f16.gguf") && strstr(e, "f16 weights") &&
           strstr(e, "token_embd"),
       "a backend that cannot run f16 weights refuses the model at load: %s", e);
}

/* from_host of n random bytes at p under `mode`: borrowed exactly for MAP, else a copy with the same
   bytes, 2 MiB-aligned from that size up; p's own bytes must still equal `want` afterwards. */
static void check_place(backend *cpu, enum cpu_weights mode, const char *what, const uint8_t *p, const uint8_t *want,
                        size_t n)
{
    backend_buffer *b = NULL;
    backend_cpu_set_weights(cpu, mode);
    if (!ok(backend_buffer_from_host(cpu, (void *)p, n, &b) == SEER_OK, "%s: from_host of %zu bytes", what, n))
        return;
    const bool copied = b->host != p && !b->borrowed, large = n >= ((size_t)2 << 20);
    ok(mode == CPU_WEIGHTS_MAP ? b->host == p && b->borrowed : copied, "%s: %s", what,
       mode == CPU_WEIGHTS_MAP ? "borrowed in place" : "copied");
    ok(!memcmp(b->host, want, n) && !memcmp(p, want, n), "%s: the buffer and the source hold the bytes given", what);
    if (copied && large)
        ok(((uintptr_t)b->host & (((uintptr_t)2 << 20) - 1)) == 0, "%s: a large copy starts on a 2 MiB boundary",
           what);
    backend_buffer_free(b);
}

static void test_weights(backend *cpu)
{
    const size_t n = ((size_t)5 << 20) + 4096 * 3 + 17; /* large, not a whole number of pages */
    uint8_t *want = malloc(n), *heap = malloc(n);
    char path[700];
    snprintf(path, sizeof path, "%s/weights.bin", test_tmp_dir());
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; want && i < n; i++)
        want[i] = (uint8_t)test_rand_u64();
    if (!ok(want && heap && f && fwrite(want, 1, n, f) == n && fclose(f) == 0, "a %zu-byte weight file", n)) {
        free(want);
        free(heap);
        return;
    }
    memcpy(heap, want, n);
    struct io_map m;
    if (ok(io_map(path, &m) == SEER_OK && m.size == n, "mapped")) {
        /* an offset that is not page-aligned, as a tensor inside a GGUF */
        const size_t off = 4096 + 32, len = n - off - 100;
        check_place(cpu, CPU_WEIGHTS_MAP, "map", m.data + off, want + off, len);
        check_place(cpu, CPU_WEIGHTS_COPY, "copy from the mapped file", m.data + off, want + off, len);
        check_place(cpu, CPU_WEIGHTS_AUTO, "auto (fits in half the free memory)", m.data + off, want + off, len);
        ok(!memcmp(m.data, want, n), "after the copies released its pages the mapping still reads the file");
        io_unmap(&m);
    }
    check_place(cpu, CPU_WEIGHTS_COPY, "copy from heap memory", heap, want, n);
    /* copies made together are packed one after another (64-byte aligned) in one large-page arena,
       so no tensor leaves a partial 2 MiB of small pages behind */
    backend_buffer *b1 = NULL, *b2 = NULL;
    backend_cpu_set_weights(cpu, CPU_WEIGHTS_COPY);
    if (ok(backend_buffer_from_host(cpu, heap, n, &b1) == SEER_OK &&
               backend_buffer_from_host(cpu, heap + 7, 1000, &b2) == SEER_OK,
           "two copies in a row"))
        ok((char *)b2->host == (char *)b1->host + (n + 63) / 64 * 64 && !memcmp(b2->host, want + 7, 1000),
           "the second copy follows the first in the same arena, 64-byte aligned, with its bytes");
    backend_buffer_free(b1);
    backend_buffer_free(b2);
    check_place(cpu, CPU_WEIGHTS_COPY, "a small copy", heap + 1, want + 1, 1000);
    backend_cpu_set_weights(cpu, CPU_WEIGHTS_MAP);
    free(want);
    free(heap);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *cpu;
    if (!ok(backend_cpu_create(1, &cpu) == SEER_OK, "cpu backend"))
        return done_testing();
    test_names();
    test_slots(cpu);
    test_load_refused(cpu);
    test_weights(cpu);
    backend_free(cpu);
    return done_testing();
}
