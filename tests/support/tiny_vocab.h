/* tiny_vocab.h — a model directory with a tokenizer small enough to work out ids by hand (the
   tokenize tests: tests/cli/tokenize.c, tests/api/pages.c): tokenizer.json with the 256 byte tokens
   (id = the byte), "ab" 256, "abc" 257, " x" 258 (merges "a b", "ab c", "Ġ x"), the added tokens
   <s> 259 (special) and <t> 260 (not special), and the Qwen3.5 template's special tokens a model
   needs (<|im_end|> 261, <|endoftext|> 262, </think> 263, <|image_pad|> 264, <|video_pad|> 265);
   config.json of a small Qwen3.5 (tests/support/tiny_model.h) with 267 rows. No weights: it loads
   with seer_model_params.vocab_only. */
#ifndef SEER_TESTS_TINY_VOCAB_H
#define SEER_TESTS_TINY_VOCAB_H

#define TV_ID_S 259
#define TV_ID_T 260
#define TV_ID_IM_END 261
#define TV_N_VOCAB 267

/* Writes dir/tokenizer.json and dir/config.json (dir exists); exits the test on failure. */
void tv_write_model(const char *dir);

#endif
