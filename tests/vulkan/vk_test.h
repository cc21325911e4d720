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

static inline void vk_test_tensor_free(tensor *t)
{
    if (t) {
        backend_buffer_free(t->buf);
        free(t);
    }
}

#endif
