/* sampler.h — picking the next token from a logits vector: greedy, temperature, top-k, top-p, min-p,
   repetition / presence / frequency penalties, with a seeded RNG owned by the sampler. Ids at or
   above the tokenizer's real length are never picked (padding rows, spec §2.7 and §10.9).

   Order of the filters (llama.cpp's default chain; HF differs only in applying temperature first):
     1. penalties      repetition (HF: positive logits divided, negative multiplied) over the tokens seen
                       in the window, prompt and generated; presence (−p once) and frequency (−f per
                       occurrence) over the generated tokens in the window (OpenAI/vLLM semantics, so a
                       prompt is not penalised for being copied from)
     2. top-k          keep the k highest logits
     3. top-p          softmax over what is left (temperature 1); keep the shortest prefix, by decreasing
                       probability, whose mass is ≥ top_p
     4. min-p          keep tokens whose probability is ≥ min_p × the largest probability
     5. temperature    softmax of logit / temperature over the survivors
     6. draw           one uniform number from the sampler's RNG
   temperature 0 means greedy: the argmax of the penalised logits (lowest id on a tie), no RNG draw.
   Because temperature comes after top-p and min-p, those two pick the same tokens at any temperature.

   A sampler is not thread-safe; use one per generation stream. Same seed, same calls → same tokens. */
#ifndef SEER_LM_SAMPLER_H
#define SEER_LM_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

typedef struct sampler_params {
    float temperature;        /* 0 = greedy; > 0 scales the logits (default 1) */
    int32_t top_k;            /* keep the k most likely tokens; 0 = off (default 0) */
    float top_p;              /* nucleus mass in (0, 1]; 1 = off (default 1) */
    float min_p;              /* in [0, 1]; 0 = off (default 0) */
    float repetition_penalty; /* > 0; 1 = off (default 1) */
    float presence_penalty;   /* 0 = off (default 0) */
    float frequency_penalty;  /* 0 = off (default 0) */
    int32_t penalty_window;   /* only the last N accepted tokens count for penalties; 0 = all (default 0) */
    uint64_t seed;            /* RNG seed (default 0) */
    int32_t n_vocab_valid;    /* ids >= this are never sampled (the tokenizer's length, 248077 for Qwen3.5,
                                 spec §6.1); 0 = every id of the logits vector (default 0) */
} sampler_params;

/* The defaults above (plain softmax sampling at temperature 1, no filters, no penalties). Model
   recommendations (spec §10.4) are the caller's to set. */
sampler_params sampler_params_default(void);

typedef struct sampler sampler;

/* Makes a sampler for logits vectors of n_vocab floats. SEER_EINVAL for out-of-range parameters (the
   message names the field), SEER_ENOMEM. *out untouched on failure. params NULL = defaults. */
int sampler_create(const sampler_params *params, int32_t n_vocab, sampler **out);
void sampler_free(sampler *s); /* NULL is fine */

/* Records tokens for the penalties. Prompt tokens count for the repetition penalty only; generated
   tokens (sampler_accept) for all three. SEER_EINVAL for an id outside [0, n_vocab). */
int sampler_accept_prompt(sampler *s, const int32_t *ids, size_t n);
int sampler_accept(sampler *s, int32_t id);
/* Forgets the history and restarts the RNG from the seed. */
void sampler_reset(sampler *s);

/* Applies the penalties in place to logits[n_vocab] (nothing else changes). */
void sampler_penalize(const sampler *s, float *logits);

/* Restricts the next picks to the ids whose bit is set in allow[(n_vocab + 31) / 32] (bit i of
   word i/32: a grammar's mask, lm/grammar.h); NULL lifts the restriction. Other ids are treated as
   −inf logits before every filter. The mask is borrowed until the next call of this function. */
void sampler_set_allowed(sampler *s, const uint32_t *allow);

/* Picks the next token from logits[n_vocab] (not modified). Does not record it: call sampler_accept.
   SEER_EINVAL when a logit is NaN or +inf, or when no valid id has a finite logit. */
int sampler_sample(sampler *s, const float *logits, int32_t *out_id);

/* The distribution sampler_sample draws from, after penalties and every filter: *ids[i] with
   probability *probs[i] (sum 1), i < *n, in no particular order. The arrays belong to the sampler and
   stay valid until its next call. Greedy gives one id with probability 1. For speculative decoding
   (rejection sampling needs the probabilities) and tests. Errors as sampler_sample. */
int sampler_distribution(sampler *s, const float *logits, const int32_t **ids, const float **probs, size_t *n);

#endif
