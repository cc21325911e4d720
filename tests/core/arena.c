/* Tests core/arena.c and core/backend.c placement on the CPU backend: alignment, exhaustion with
   a message, reset, peak tracking, set/get round trips and range checks. */
#include <string.h>

#include "core/arena.h"
#include "core/cpu/cpu.h"
#include "seer.h"
#include "tap.h"

int main(void)
{
    plan_no_plan();
    backend *be;
    if (backend_cpu_create(1, &be) != SEER_OK)
        return ok(0, "cpu backend: %s", seer_last_error()), done_testing();
    arena a;
    ok(arena_init(&a, be, 4096) == SEER_OK, "arena of 4096 bytes");
    tensor t1, t2, t3;
    ok(arena_tensor(&a, &t1, DT_F32, 3, 1, 1, 1) == SEER_OK && t1.offset == 0, "first tensor at offset 0");
    ok(arena_tensor(&a, &t2, DT_F32, 5, 2, 1, 1) == SEER_OK && t2.offset % be->alignment == 0 && t2.offset >= 12,
       "second tensor aligned after the first");
    int rc = arena_tensor(&a, &t3, DT_F32, 1024, 1, 1, 1);
    ok(rc == SEER_ENOMEM && strstr(seer_last_error(), "arena"), "exhaustion is SEER_ENOMEM: %s", seer_last_error());
    size_t peak = a.peak;
    arena_reset(&a);
    ok(arena_tensor(&a, &t3, DT_F32, 1000, 1, 1, 1) == SEER_OK && t3.offset == 0 && a.peak >= peak,
       "after reset the space is reused; peak kept");
    float in[1000], out[1000];
    for (int i = 0; i < 1000; i++)
        in[i] = (float)i * 0.5f - 7.0f;
    ok(backend_tensor_set(&t3, in, 0, sizeof in) == SEER_OK && backend_tensor_get(&t3, out, 0, sizeof out) == SEER_OK &&
       !memcmp(in, out, sizeof in), "set/get round trip");
    ok(backend_tensor_get(&t3, out, 8, sizeof out) == SEER_EINVAL, "reading past the tensor is rejected");
    tensor bad;
    tensor_init4(&bad, DT_F32, 4, 1, 1, 1);
    ok(backend_tensor_place(&bad, a.buf, 3) == SEER_EINVAL, "misaligned placement is rejected");
    ok(backend_tensor_place(&bad, a.buf, 4096) == SEER_EINVAL, "placement past the buffer is rejected");
    arena_deinit(&a);
    backend_free(be);
    return done_testing();
}
