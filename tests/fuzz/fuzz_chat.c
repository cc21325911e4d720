/* fuzz_chat.c — libFuzzer target: the chat template renderer and template check. The input is
   messages JSON, NUL, tools JSON (empty: none), NUL, a template text; the last byte picks the
   params' switches. */
#include "fuzz_util.h"

#include "lm/chat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    const uint8_t *msgs, *rest, *tools, *tmpl;
    size_t n_msgs, n_rest, n_tools, n_tmpl;
    msgs = data, n_msgs = size;
    const uint8_t *z = memchr(data, 0, size);
    if (z) {
        n_msgs = (size_t)(z - data);
        rest = z + 1, n_rest = size - n_msgs - 1;
    } else {
        rest = data + size, n_rest = 0;
    }
    const uint8_t *z2 = memchr(rest, 0, n_rest);
    tools = rest, n_tools = z2 ? (size_t)(z2 - rest) : n_rest;
    tmpl = z2 ? z2 + 1 : rest + n_rest, n_tmpl = z2 ? n_rest - n_tools - 1 : 0;
    char *m = fz_strndup(msgs, n_msgs), *t = n_tools ? fz_strndup(tools, n_tools) : NULL,
         *tp = fz_strndup(tmpl, n_tmpl);
    chat_params p = chat_params_default();
    uint8_t flags = size ? data[size - 1] : 0;
    p.add_generation_prompt = flags & 1;
    p.enable_thinking = flags & 2;
    p.add_vision_id = flags & 4;
    p.preserve_thinking = flags & 8;
    p.scalar_args_as_json = flags & 16;
    char *out = NULL;
    size_t len = 0;
    int rc = chat_render_json(m, t, &p, &out, &len);
    fz_check_message(rc);
    if (rc == SEER_OK && strlen(out) > len)
        abort();
    if (rc != SEER_OK && out)
        abort(); /* "on failure *out is untouched" */
    seer_free(out);
    chat_template_info info;
    fz_check_message(chat_template_check(tp, &info));
    free(m), free(t), free(tp);
    return 0;
}
