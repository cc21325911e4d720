/* Tests Vulkan faults injected through the backend (vk_backend_params.fail_alloc_after,
   lose_device_after; api/device.h's test hooks for backends opened by --device): out of device
   memory and a lost device are one line naming the device and the call; a lost device refuses
   everything after; --device auto loads the model on the CPU, with a warning saying why, when the
   GPU cannot take it (an allocation fails, the memory plan refuses, the device is lost while
   loading), while an explicit --device vulkan reports the error; a device lost mid-generation is
   an error naming the device, as is one lost while creating a context. Runs on lavapipe (auto is
   allowed to pick it through the hook). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/device.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "vk_test.h"
#include "vulkan/vulkan.h"

static char g_name[256]; /* the device auto picks (lavapipe allowed), as the loader names it */
static int g_index;      /* its device_index */

/* The 1-based position of the first vkQueueSubmit / vkAllocateMemory is what the countdowns
   count: a fresh backend does neither before its first buffer or submit. */
static backend *open_be(long fail_alloc, long lose, bool staging)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.device_index = g_index;
    p.fail_alloc_after = fail_alloc;
    p.lose_device_after = lose;
    p.force_staging = staging;
    backend *be = NULL;
    return backend_vulkan_create(&p, &be) == SEER_OK ? be : NULL;
}

static tensor *make(backend *be, int64_t n, int *rc)
{
    tensor *t = calloc(1, sizeof *t);
    backend_buffer *buf = NULL;
    tensor_init4(t, DT_F32, n, 1, 1, 1);
    snprintf(t->name, sizeof t->name, "faults_%lld", (long long)n);
    *rc = backend_tensor_alloc(be, t, &buf);
    if (*rc) {
        free(t);
        return NULL;
    }
    return t;
}

static void test_backend_faults(void)
{
    char want[512];
    int rc;
    /* the 2nd allocation fails: the first tensor is fine, the second is refused */
    backend *be = open_be(2, 0, false);
    if (!ok(be != NULL, "backend with allocation-failure injection"))
        return;
    const int64_t n = 1024 + (int64_t)(test_rand_u64() % 4096);
    tensor *a = make(be, n, &rc), *b = make(be, n, &rc);
    snprintf(want, sizeof want, "vulkan: %s: out of device memory (VK_ERROR_OUT_OF_DEVICE_MEMORY) in vkAllocateMemory of ",
             g_name);
    ok(a && !b && rc == SEER_ENOMEM && !strncmp(seer_last_error(), want, strlen(want)) &&
           !strchr(seer_last_error(), '\n'),
       "2nd allocation injected: SEER_ENOMEM, one line naming the device: %s", seer_last_error());
    tensor *c = make(be, n, &rc);
    ok(c != NULL, "the next allocation works again (a full heap is not a broken device)");
    test_tensor_free(a), test_tensor_free(c);
    backend_free(be);

    /* the 1st submit is lost: a staged upload submits a copy */
    be = open_be(0, 1, true);
    if (!ok(be != NULL, "backend with device-lost injection (staging forced)"))
        return;
    a = make(be, n, &rc);
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    test_fill_uniform(x, (size_t)n, -1, 1);
    rc = a ? backend_tensor_set(a, x, 0, sizeof(float) * (size_t)n) : SEER_EINVAL;
    snprintf(want, sizeof want,
             "vulkan: %s: the device was lost (VK_ERROR_DEVICE_LOST) in vkQueueSubmit; nothing more runs on it", g_name);
    ok(rc == SEER_EDEVICE && !strcmp(seer_last_error(), want), "upload's submit lost: SEER_EDEVICE, '%s'",
       seer_last_error());
    rc = a ? backend_tensor_get(a, y, 0, sizeof(float) * (size_t)n) : SEER_EINVAL;
    ok(rc == SEER_EDEVICE && strstr(seer_last_error(), g_name) && strstr(seer_last_error(), "failed earlier"),
       "every later call is refused, naming the device: %s", seer_last_error());
    free(x), free(y);
    test_tensor_free(a);
    backend_free(be);
}

/* ---- --device auto through seer_model_load -------------------------------------------------------- */

static char g_warn[2048];
static int g_n_warn;

static void on_log(seer_log_level level, const char *component, const char *msg, void *user)
{
    (void)user;
    if (level == SEER_LOG_WARN && !strcmp(component, "device")) {
        snprintf(g_warn, sizeof g_warn, "%s", msg);
        g_n_warn++;
    }
}

/* Loads `path` with the hooks; returns the device it ended on ("" on failure, rc in *rc). */
static const char *load_with(const char *path, const char *device, struct device_test_hooks h, int *rc,
                             seer_model **out)
{
    static char dev[256];
    seer_model_params mp = seer_model_params_default();
    mp.device = device; /* "vulkan" is the device auto picks, as g_name */
    mp.n_threads = 2;
    g_warn[0] = 0, g_n_warn = 0;
    h.auto_takes_cpu_devices = true;
    device_set_test_hooks(&h);
    seer_model *m = NULL;
    *rc = seer_model_load(path, &mp, &m);
    device_set_test_hooks(NULL);
    snprintf(dev, sizeof dev, "%s", m ? seer_model_device(m) : "");
    if (out)
        *out = m;
    else
        seer_model_free(m);
    return dev;
}

static void test_auto_fallback(const char *path)
{
    int rc;
    const char *dev = load_with(path, "auto", (struct device_test_hooks){0}, &rc, NULL);
    if (!ok(rc == SEER_OK && !strncmp(dev, "vulkan", 6) && g_n_warn == 0,
            "auto (lavapipe allowed) loads the model on Vulkan without a warning: %s", dev))
        return;

    /* allocation failures at the 1st, and at a later, allocation */
    const long afters[] = {1, 2 + (long)(test_rand_u64() % 8)};
    for (int i = 0; i < 2; i++) {
        dev = load_with(path, "auto", (struct device_test_hooks){.fail_alloc_after = afters[i]}, &rc, NULL);
        ok(rc == SEER_OK && !strncmp(dev, "cpu", 3) && g_n_warn == 1 && strstr(g_warn, "cannot use the GPU") &&
               strstr(g_warn, g_name) && strstr(g_warn, "VK_ERROR_OUT_OF_DEVICE_MEMORY") &&
               strstr(g_warn, "on the CPU instead"),
           "auto, allocation %ld fails: loaded on %s, one warning: %s", afters[i], dev, g_warn);
        dev = load_with(path, "vulkan", (struct device_test_hooks){.fail_alloc_after = afters[i]}, &rc, NULL);
        ok(rc == SEER_ENOMEM && !dev[0] && g_n_warn == 0 && strstr(seer_last_error(), g_name),
           "--device vulkan, allocation %ld fails: an error naming the device, no fallback: %s", afters[i],
           seer_last_error());
    }

    /* the memory plan refuses (a device reporting 1 MiB) */
    dev = load_with(path, "auto", (struct device_test_hooks){.memory_limit = 1 << 20}, &rc, NULL);
    ok(rc == SEER_OK && !strncmp(dev, "cpu", 3) && g_n_warn == 1 && strstr(g_warn, "on the CPU instead"),
       "auto, the memory plan refuses 1 MiB: loaded on %s, warning: %s", dev, g_warn);
}

/* A device lost after the model is on it: the generation fails with one line naming the device. */
static void test_lost_device(const char *path)
{
    int rc;
    char want[512];
    snprintf(want, sizeof want, "vulkan: %s: the device was lost (VK_ERROR_DEVICE_LOST) in vkQueueSubmit", g_name);
    /* Staged uploads (a discrete GPU, or forced) submit while loading: the 3rd submit is lost. */
    const struct device_test_hooks staged = {.lose_device_after = 3, .force_staging = true};
    const char *dev = load_with(path, "vulkan", staged, &rc, NULL);
    ok(rc == SEER_EDEVICE && strstr(seer_last_error(), want), "--device vulkan, lost while loading: %s",
       seer_last_error());
    dev = load_with(path, "auto", staged, &rc, NULL);
    ok(rc == SEER_OK && !strncmp(dev, "cpu", 3) && g_n_warn == 1 && strstr(g_warn, "VK_ERROR_DEVICE_LOST"),
       "auto, the device lost while loading: loaded on %s, warning: %s", dev, g_warn);

    /* After loading, a lost submit ends whatever runs it: creating a context (which clears the
       state on the device) or generating. How many submits each phase takes depends on the device
       and the kernels, so k counts up: the first k that loading survives is lost while creating
       the context, the first that the context survives too is lost while generating. */
    const char *phases[] = {"creating the context", "generating"};
    int phase_seen[2] = {0, 0};
    for (long k = 1; k <= 256 && !(phase_seen[0] && phase_seen[1]); k++) {
        seer_model *m = NULL;
        dev = load_with(path, "vulkan", (struct device_test_hooks){.lose_device_after = k}, &rc, &m);
        if (rc == SEER_EDEVICE)
            continue;
        if (!ok(rc == SEER_OK && m, "load with submit %ld to be lost: %s", k, rc ? seer_last_error() : dev))
            return;
        seer_context *ctx = NULL;
        seer_context_params cp = seer_context_params_default();
        cp.n_ctx = 256;
        seer_generate_params gp = seer_generate_params_default();
        gp.max_tokens = 4;
        seer_result r = {0};
        const int32_t ids[] = {5, 6, 7, 8};
        rc = seer_context_create(m, &cp, &ctx);
        const int phase = ctx != NULL;
        if (rc == SEER_OK)
            rc = seer_generate_tokens(ctx, ids, 4, &gp, &r);
        if (!phase_seen[phase]) {
            phase_seen[phase] = 1;
            ok(rc == SEER_EDEVICE && strstr(seer_last_error(), want), "submit %ld lost while %s: SEER_EDEVICE, %s", k,
               phases[phase], rc ? seer_last_error() : "no error");
            /* the lost device refuses whatever comes next on this model */
            int rc2 = ctx ? seer_generate_tokens(ctx, ids, 4, &gp, &r) : seer_context_create(m, &cp, &ctx);
            ok(rc2 == SEER_EDEVICE, "the next call is refused too (%s)", seer_last_error());
        }
        seer_result_clear(&r);
        seer_context_free(ctx);
        seer_model_free(m);
    }
    ok(phase_seen[0] && phase_seen[1], "a device lost while creating a context and while generating were both seen");
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    struct vk_device_info *list = NULL;
    int n = 0;
    int pick = vk_device_list(&list, &n, NULL, 0) == SEER_OK ? vk_device_pick_auto(list, n) : -1;
    if (pick < 0) {
        vk_device_list_free(list);
        if (vk_test_required())
            ok(0, "a Vulkan device (SEER_REQUIRE_VULKAN=1)");
        else
            skip("no usable Vulkan device", "every Vulkan fault test");
        return done_testing();
    }
    snprintf(g_name, sizeof g_name, "%s", list[pick].name);
    g_index = list[pick].index;
    vk_device_list_free(list);
    test_backend_faults();

    char dir[600], cmd[2048], path[700];
    snprintf(dir, sizeof dir, "%s/tiny", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu >/dev/null 2>&1",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)(seed >> 1));
    if (!ok(system(cmd) == 0, "tiny model generated"))
        return done_testing();
    snprintf(path, sizeof path, "%s/model-f32.gguf", dir);
    seer_set_log_callback(on_log, NULL);
    test_auto_fallback(path);
    test_lost_device(path);
    seer_set_log_callback(NULL, NULL);
    return done_testing();
}
