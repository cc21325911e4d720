/* Tests the one list of ops (core/ops.h SEER_OPS) and what core/backend.c derives from it: every op
   has a distinct name; a backend whose slot is empty is named by backend_missing_op and answers
   no in backend_supports; a backend's supports() answer is asked at model load (lm/load.c), so a
   weight dtype it cannot run is refused with SEER_EUNSUPPORTED naming the tensor, before any
   forward pass. The model is a tiny f16 GGUF (tests/support/tiny_model.h, random shape). */
#include <stdio.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/error.h"
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
    backend_free(cpu);
    return done_testing();
}
