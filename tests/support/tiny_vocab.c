/* tiny_vocab.c — the hand-checkable tokenizer and its model directory (tiny_vocab.h). */
#include "support/tiny_vocab.h"

#include <jansson.h>
#include <stdio.h>

#include "lm/tok_test.h"
#include "support/tiny_model.h"

static void write_tokenizer(const char *path)
{
    json_t *vocab = json_object();
    char s[8];
    for (unsigned b = 0; b < 256; b++) {
        unsigned char byte = (unsigned char)b;
        ref_bytelevel(&byte, 1, s);
        json_object_set_new(vocab, s, json_integer(b));
    }
    json_object_set_new(vocab, "ab", json_integer(256));
    json_object_set_new(vocab, "abc", json_integer(257));
    json_object_set_new(vocab, "\xc4\xa0x", json_integer(258)); /* "Ġx" = " x" */
    json_t *added = json_array();
    static const char *const contents[] = {"<s>", "<t>", "<|im_end|>", "<|endoftext|>", "</think>", "<|image_pad|>",
                                           "<|video_pad|>"};
    for (int k = 0; k < 7; k++)
        json_array_append_new(added, json_pack("{sI ss sb sb sb sb sb}", "id", (json_int_t)(TV_ID_S + k), "content",
                                               contents[k], "single_word", 0, "lstrip", 0, "rstrip", 0, "normalized",
                                               0, "special", TV_ID_S + k != TV_ID_T));
    json_t *root = json_pack(
        "{so so s{ss s[{ss s{ss} ss sb} {ss sb sb sb}]} s{ss sb sb sb} s{ss so s[sss]}}", "added_tokens", added,
        "normalizer", json_null(), "pre_tokenizer", "type", "Sequence", "pretokenizers", "type", "Split", "pattern",
        "Regex", QWEN35_REGEX_TEXT, "behavior", "Isolated", "invert", 0, "type", "ByteLevel", "add_prefix_space", 0,
        "trim_offsets", 0, "use_regex", 0, "decoder", "type", "ByteLevel", "add_prefix_space", 0, "trim_offsets", 0,
        "use_regex", 0, "model", "type", "BPE", "vocab", vocab, "merges", "a b", "ab c", "\xc4\xa0 x");
    if (!root || json_dump_file(root, path, JSON_COMPACT) != 0)
        BAIL("cannot write %s", path);
    json_decref(root);
}

void tv_write_model(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    write_tokenizer(path);
    struct tm_cfg c;
    tm_default(&c);
    c.n_vocab = TV_N_VOCAB; /* image and video tokens are the config's n_vocab - 3 and - 2 */
    c.eos = TV_ID_IM_END;
    json_t *cfg = tm_config_json(&c, true);
    snprintf(path, sizeof path, "%s/config.json", dir);
    tm_write_json(path, cfg);
    json_decref(cfg);
}
