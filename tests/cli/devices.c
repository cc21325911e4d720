/* Tests `seer info --devices` (cli/devices.c): exit 0, the CPU backend listed, exactly one device
   marked "(auto)", and with a Vulkan device present (lavapipe in CI) its type, subgroup size and
   feature lines. */
#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "tap.h"

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

int main(void)
{
    plan_no_plan();
    /* lavapipe leaks a little at exit under ASan; not ours (see tests/cli/info.c) */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=detect_leaks=0 '%s/seer' info --devices", SEER_BINARY_DIR);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 0, "exit status 0 (%d)", r.status);
    ok(!strncmp(r.out, "cpu", 3) && strstr(r.out, "threads"), "the CPU backend is listed first with its threads");
    ok(count(r.out, "(auto)") == 1, "exactly one device is marked (auto)");
    ok(!*r.err, "nothing on stderr");
    const char *req = getenv("SEER_REQUIRE_VULKAN");
    if (strstr(r.out, "vulkan:0")) {
        ok(strstr(r.out, "subgroup size") && strstr(r.out, "memory heap 0") && strstr(r.out, "16-bit storage") &&
               strstr(r.out, "int8 dot product") && strstr(r.out, "cooperative matrix") && strstr(r.out, "fp16"),
           "a Vulkan device block has type, heaps, subgroup size and feature support");
        /* lavapipe is a CPU-type device: auto keeps the CPU backend (docs/ARCHITECTURE.md, "The Vulkan
           backend": device choice) */
        if (strstr(r.out, "type               cpu"))
            ok(strstr(r.out, "cpu  (auto)") && strstr(r.out, "(--device vulkan)"),
               "with only a CPU-type Vulkan device, auto runs on the CPU backend");
    } else if (req && !strcmp(req, "1")) {
        ok(0, "SEER_REQUIRE_VULKAN=1 but no Vulkan device is listed");
    } else {
        skip("no Vulkan device on this machine (install mesa-vulkan-drivers for lavapipe)", "vulkan device block");
    }
    test_run_free(&r);
    return done_testing();
}
