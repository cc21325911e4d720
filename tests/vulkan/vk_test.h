/* vk_test.h — what the Vulkan TAP programs share: whether a missing device is a skip or a failure
   (SEER_REQUIRE_VULKAN=1, set by CI), and making/reading tensors without core/quant.c (so F16 and
   BF16 bits are exactly the ones the references use). */
#ifndef SEER_TESTS_VK_TEST_H
#define SEER_TESTS_VK_TEST_H

#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/fp16.h"
#include "seer.h"
#include "tap.h"

static inline int vk_test_required(void)
{
    const char *e = getenv("SEER_REQUIRE_VULKAN");
    return e && !strcmp(e, "1");
}

/* The value a weight element really holds once stored as `type` (what every backend reads). */
static inline float vk_test_round(enum dtype type, float v)
{
    if (type == DT_F16)
        return f16_to_f32(f32_to_f16(v));
    if (type == DT_BF16)
        return bf16_to_f32(f32_to_bf16(v));
    return v;
}

/* A contiguous F32/F16/BF16 tensor of shape ne0..ne3 in its own buffer on `be`, filled from
   `data` (rounded to the dtype). NULL on failure, with a failed test naming why. */
static inline tensor *vk_test_tensor(backend *be, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2,
                                     int64_t ne3, const float *data)
{
    tensor *t = calloc(1, sizeof *t);
    backend_buffer *buf = NULL;
    if (!t || !tensor_init4(t, type, ne0, ne1, ne2, ne3)) {
        ok(0, "test tensor shape {%lld,%lld,%lld,%lld}", (long long)ne0, (long long)ne1, (long long)ne2, (long long)ne3);
        free(t);
        return NULL;
    }
    snprintf(t->name, sizeof t->name, "t_%s_%lld", dtype_name(type), (long long)ne0);
    int rc = backend_tensor_alloc(be, t, &buf);
    if (rc == SEER_OK && data) {
        size_t n = (size_t)tensor_nelements(t), bytes = tensor_nbytes(t);
        char *raw = malloc(bytes);
        for (size_t i = 0; raw && i < n; i++) {
            if (type == DT_F16) {
                uint16_t h = f32_to_f16(data[i]);
                memcpy(raw + 2 * i, &h, 2);
            } else if (type == DT_BF16) {
                uint16_t h = f32_to_bf16(data[i]);
                memcpy(raw + 2 * i, &h, 2);
            } else {
                memcpy(raw + 4 * i, &data[i], 4);
            }
        }
        rc = raw ? backend_tensor_set(t, raw, 0, bytes) : SEER_ENOMEM;
        free(raw);
    }
    if (rc != SEER_OK) {
        ok(0, "test tensor on %s: %s", backend_name(be), seer_last_error());
        backend_buffer_free(buf);
        free(t);
        return NULL;
    }
    return t;
}

/* All of a contiguous f32 tensor as a new array (syncs its backend); a failed read is reported
   with diag() and leaves zeros, which the comparison then catches. */
static inline float *vk_test_read_f32(const tensor *t)
{
    size_t n = (size_t)tensor_nelements(t);
    float *v = calloc(n, sizeof *v);
    int rc = v ? backend_tensor_get(t, v, 0, n * sizeof *v) : SEER_ENOMEM;
    if (rc != SEER_OK)
        diag("read %s: %s", t->name, seer_last_error());
    return v;
}

static inline void vk_test_tensor_free(tensor *t)
{
    if (t) {
        backend_buffer_free(t->buf);
        free(t);
    }
}

#if SEER_HAVE_VULKAN
#include <stdio.h>

#include "core/cpu/cpu.h"
#include "vulkan/vulkan.h"

/* A Vulkan backend with the validation layer requested and a storage window of `window` bytes
   (0: the device's own limit), for tests that compare Vulkan with the CPU; `plain`: only the
   kernels that need no optional feature. NULL after a failed test naming why. */
static inline backend *vk_test_backend_with(uint64_t window, bool plain)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.enable_validation = true;
    p.max_storage_range_override = window;
    p.plain_kernels = plain;
    backend *be = NULL;
    int rc = backend_vulkan_create(&p, &be);
    if (!ok(rc == SEER_OK, "vulkan backend with a %llu-byte storage window (%s)", (unsigned long long)window,
            rc ? seer_last_error() : "ok"))
        return NULL;
    return be;
}

static inline backend *vk_test_backend(uint64_t window) { return vk_test_backend_with(window, false); }

/* Opens what the op tests compare: the default Vulkan device (validation requested) in *vk and a
   2-thread CPU backend in *cpu. Returns false when the program cannot go on; the TAP outcome is
   then settled and *status is main's return value: a visible skip of the whole program when
   this machine has no Vulkan device, a failure under SEER_REQUIRE_VULKAN=1 or when the CPU
   backend cannot be made. */
static inline bool vk_test_open(backend **vk, backend **cpu, int *status)
{
    struct vk_backend_params p = vk_backend_params_default();
    p.enable_validation = true;
    *vk = *cpu = NULL;
    if (backend_vulkan_create(&p, vk) != SEER_OK) {
        if (vk_test_required()) {
            ok(0, "SEER_REQUIRE_VULKAN=1 but no Vulkan backend: %s", seer_last_error());
            *status = done_testing();
            return false;
        }
        char reason[1100];
        snprintf(reason, sizeof reason, "no Vulkan device on this machine (%s)", seer_last_error());
        *status = plan_skip_all(reason);
        return false;
    }
    if (backend_cpu_create(2, cpu) != SEER_OK) {
        ok(0, "cpu backend: %s", seer_last_error());
        backend_free(*vk);
        *status = done_testing();
        return false;
    }
    diag("%s", (*vk)->description);
    return true;
}

/* Zero validation-layer errors on `be` so far; a visible skip when the layer is not installed. */
static inline void vk_test_validation_check(backend *be, const char *what)
{
    if (backend_vulkan_validation_active(be))
        ok(backend_vulkan_validation_errors(be) == 0, "%s: zero validation errors (%llu)", what,
           (unsigned long long)backend_vulkan_validation_errors(be));
    else
        skip("VK_LAYER_KHRONOS_validation is not installed", "zero validation errors");
}
#endif /* SEER_HAVE_VULKAN */

#endif
