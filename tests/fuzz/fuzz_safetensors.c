/* fuzz_safetensors.c — libFuzzer target: one .safetensors file through safetensors_open and
   every accessor (each tensor's first and last byte is read, so ASan proves it lies in the
   mapping), then the Qwen3.5 text and vision tensor-table checks against it. */
#include "fuzz_util.h"

#include "core/safetensors.h"
#include "core/weights.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    safetensors *st = NULL;
    const char *path = fz_file(0, data, size);
    int rc = safetensors_open(path, &st);
    fz_check_message(rc);
    if (rc != SEER_OK)
        return 0;
    volatile uint8_t sink = 0;
    for (int64_t i = 0; i < safetensors_n_tensors(st); i++) {
        const tensor *t = safetensors_tensor(st, i);
        int64_t shape[SAFETENSORS_MAX_DIMS];
        if (safetensors_find(st, safetensors_tensor_name(st, i)) != i ||
            safetensors_tensor_shape(st, i, shape) > SAFETENSORS_MAX_DIMS || !safetensors_tensor_file(st, i))
            abort();
        sink ^= ((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[tensor_nbytes(t) - 1];
    }
    (void)sink;
    struct weights w = weights_from_safetensors(st);
    for (int64_t i = 0; i < weights_count(&w); i++) {
        int64_t shape[WEIGHTS_MAX_DIMS];
        char buf[128];
        weights_format_shape(buf, sizeof buf, weights_file_shape(&w, i, shape), shape);
    }
    fz_check_message(weights_expect(&w, "model.embed_tokens.weight", 2, (const int64_t[]){16, 8}, 0, NULL));
    safetensors_free(st);
    return 0;
}
