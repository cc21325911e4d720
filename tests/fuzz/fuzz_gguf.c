/* fuzz_gguf.c — libFuzzer target: a GGUF file through gguf_open, every getter on every key and
   tensor, then what a model load reads from it (the Qwen3.5 text and vision configs and their
   tensor tables, the tokenizer from tokenizer.ggml.*, the chat template check). */
#include "fuzz_util.h"

#include "core/gguf.h"
#include "core/weights.h"
#include "lm/chat.h"
#include "lm/config.h"
#include "lm/tok_gguf.h"
#include "vision/config.h"

static void every_getter(const gguf *g, const char *key)
{
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    int64_t i64, arr[64];
    double f64;
    float f32, farr[64];
    bool b;
    const char *s;
    size_t len, n;
    enum gguf_type et;
    const void *data;
    fz_check_message(gguf_get_u32(g, key, &u32));
    fz_check_message(gguf_get_i32(g, key, &i32));
    fz_check_message(gguf_get_u64(g, key, &u64));
    fz_check_message(gguf_get_i64(g, key, &i64));
    fz_check_message(gguf_get_f64(g, key, &f64));
    fz_check_message(gguf_get_f32(g, key, &f32));
    fz_check_message(gguf_get_bool(g, key, &b));
    if (gguf_get_str(g, key, &s, &len) == SEER_OK && strlen(s) > len)
        abort(); /* the copy is NUL-terminated within its length (NULs inside are allowed) */
    seer_err_clear();
    fz_check_message(gguf_get_arr_i64(g, key, arr, 64, &n));
    fz_check_message(gguf_get_arr_f32(g, key, farr, 64, &n));
    fz_check_message(gguf_get_arr_data(g, key, &et, &u64, &data));
    if (gguf_get_arr_info(g, key, &et, &u64) == SEER_OK && et == GGUF_TYPE_STRING) {
        volatile char sink = 0;
        for (uint64_t i = 0; i < u64 && i < 4096; i++)
            if (gguf_get_arr_str(g, key, i, &s, &len) == SEER_OK && len)
                sink ^= s[len - 1]; /* touches the last byte: ASan checks the bound */
        (void)sink;
        fz_check_message(gguf_get_arr_str(g, key, u64, &s, &len)); /* one past the end */
    }
    seer_err_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    gguf *g = NULL;
    int rc = gguf_open(fz_file(0, data, size), &g);
    fz_check_message(rc);
    if (rc != SEER_OK)
        return 0;
    for (int64_t i = 0; i < gguf_n_kv(g); i++)
        every_getter(g, gguf_key(g, i));
    every_getter(g, "no.such.key");
    volatile uint8_t sink = 0;
    for (int64_t i = 0; i < gguf_n_tensors(g); i++) {
        const tensor *t = gguf_tensor(g, i);
        size_t nb = tensor_nbytes(t);
        if (gguf_find_tensor(g, gguf_tensor_name(g, i)) != i)
            abort();
        sink ^= ((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[nb - 1]; /* inside the mapping */
    }
    (void)sink;
    struct weights w = weights_from_gguf(g);
    struct qwen35_config qc;
    if ((rc = qwen35_config_from_gguf(g, &qc)) == SEER_OK)
        rc = qwen35_check_tensors(&qc, &w);
    fz_check_message(rc);
    struct vit_config vc;
    if ((rc = vit_config_from_gguf(g, &vc)) == SEER_OK)
        rc = vit_check_tensors(&vc, &w);
    fz_check_message(rc);
    tokenizer *tok = NULL;
    if ((rc = tok_load_gguf(g, &tok)) == SEER_OK) {
        tok_ids ids = {0};
        static const char text[] = "Hello, world! <|im_start|>user\n 123 héllo\r\n\t  x";
        if (tok_encode(tok, text, sizeof text - 1, true, &ids) == SEER_OK) {
            char *out;
            size_t len;
            if (tok_decode(tok, ids.ids, ids.n, false, &out, &len) == SEER_OK)
                seer_free(out);
        }
        tok_ids_free(&ids);
        tok_free(tok);
    }
    fz_check_message(rc);
    const char *tmpl;
    if (gguf_get_str(g, "tokenizer.chat_template", &tmpl, NULL) == SEER_OK)
        fz_check_message(chat_template_check(tmpl, NULL));
    seer_err_clear();
    gguf_free(g);
    return 0;
}
