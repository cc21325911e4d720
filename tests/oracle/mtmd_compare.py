#!/usr/bin/env python3
"""mtmd_compare.py — compares seer's greedy answer (`seer ask --json`) with llama.cpp's libmtmd
(tests/oracle/mtmd_logits.mjs output) for one image prompt, with the text oracle's rule
(tests/lm/oracle.c): prompt token counts identical, generated ids identical up to the first step where
they differ, and a difference is excused only at a near tie, where libmtmd's two most probable tokens
are within TIE in probability (there a rounding-level difference may legitimately flip the argmax; TIE
is wider than the text oracle's, see below).
Comparison stops at an excused difference (the two then continue different sequences). Where
mtmd_logits.mjs has no probabilities for a step (they need the greedy prefix to round-trip through text),
its exact top-2 logit gap g gives the probability gap as p1 (1 - exp(-g)), p1 libmtmd's top probability
there, which is bounded from above twice: by 1 / (1 + exp(-g)) (the two sum to at most 1), and by
seer's probability of its own pick plus P_SLACK (seer's --json logprobs; see P_SLACK). So the bound
excuses no more than the rule does; where both are unknown a difference fails. seer's logprobs are a
softmax over the tokenizer's rows, libmtmd's probabilities one over every row, the padding rows too (on
a random model they hold a few percent), so where both picked the same token seer's probability must
be at least libmtmd's, less P_SLACK (the --json logprobs against an independent implementation, one
sided). A padding row (an id past the
tokenizer, which llama.cpp may pick and seer never samples, spec §2.7, §10 item 9) chosen by libmtmd
ends the comparison as agreed — also where seer, its best real token being the end of the turn, stops
there (the stop token is not in seer's --json tokens, so its list is just shorter).

usage: mtmd_compare.py SEER.json MTMD.json
Prints one line describing the outcome; exit status 0 when they agree, 1 when not."""
import json
import math
import sys

# Near tie. The text oracle uses 2e-3 (tests/lm/oracle.c, f32 vs f32), where llama.cpp matches the float64
# reference to ~1e-5. libmtmd's image path is coarser: on f32 files, its first-step probabilities differ
# from tests/reference/vision_ref.py's (float64, which seer matches to 1e-4 logits rel L2, tests/api/fused)
# by up to 1.9e-3 (max |dp| over the top 10, 22 random models and images), and erode the top-2 lead by up
# to 2.0e-3 (seer's share is within tests/api/fused's 1e-4 logits bound). So a difference is excused
# below 5e-3, ~2.5x the worst seen.
TIE = 5e-3
# A token's probability: libmtmd's within 1.9e-3 of the float64 reference's, as measured above, and
# seer's within 1e-4 logits of it; so seer's and libmtmd's within 5e-3 (~2.5x the worst seen).
P_SLACK = 5e-3


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mtmd_compare.py SEER.json MTMD.json")
    with open(sys.argv[1]) as f:
        seer = json.load(f)
    with open(sys.argv[2]) as f:
        mtmd = json.load(f)
    s, m = seer.get("tokens"), mtmd["tokens"]
    if not isinstance(s, list) or not isinstance(seer.get("prompt_tokens"), int):
        print(f"seer's --json lacks tokens/prompt_tokens: {sorted(seer)}")
        return 1
    if seer["prompt_tokens"] != mtmd["prompt_tokens"]:
        print(f"prompt tokens: seer {seer['prompt_tokens']}, libmtmd {mtmd['prompt_tokens']}")
        return 1
    pad = mtmd.get("padding_from")
    # seer's --json tokens leave its stop token out: where its list ends before libmtmd's, seer ended
    # the turn at step len(s), and that step is compared like a different id. libmtmd may list its own
    # end-of-generation token last (stop "eog"): that one is no step to compare.
    m_cmp = m[:-1] if mtmd.get("stop") == "eog" and len(m) == len(s) + 1 else m
    lps = seer.get("logprobs") or []
    n_p = 0  # steps where seer's probability was held to libmtmd's
    for i in range(min(len(s) + 1, len(m_cmp))):
        seer_id = s[i] if i < len(s) else "end of turn"
        seer_p = math.exp(lps[i]) if i < len(lps) and lps[i] is not None else None
        probs = mtmd["probs"][i] if i < len(mtmd["probs"]) else None
        if seer_id == m[i]:
            if seer_p is not None and probs and probs[0]["id"] == m[i] and seer_p < probs[0]["p"] - P_SLACK:
                print(f"step {i}: both picked {m[i]}, seer with probability {seer_p:.6f} (its logprob), libmtmd "
                      f"{probs[0]['p']:.6f}: seer's, over fewer rows, is lower by more than {P_SLACK}")
                return 1
            n_p += seer_p is not None and bool(probs) and probs[0]["id"] == m[i]
            continue
        if pad is not None and m[i] >= pad and (i >= len(s) or pad > s[i]):
            # seer never samples the padding rows past the tokenizer (spec §2.7, §10 item 9); llama.cpp does
            print(f"step {i}: libmtmd picked padding row {m[i]}, which seer never samples "
                  f"(spec §2.7, §10 item 9), seer {seer_id}; {i} steps identical before it")
            return 0
        gaps = mtmd.get("top2_logit_gap") or []
        logit_gap = gaps[i] if i < len(gaps) else None
        if probs and len(probs) >= 2:
            gap, what = probs[0]["p"] - probs[1]["p"], "top-2 probability gap"
        elif logit_gap is not None:
            # p1 - p2 = p1 (1 - exp(-g)) with p2 = p1 exp(-g). p1 + p2 <= 1 gives p1 <= 1 / (1 + exp(-g)),
            # so the gap is at most tanh(g / 2); and seer gives libmtmd's pick no more than its own pick
            # (it is seer's argmax), which libmtmd's p1 exceeds by at most P_SLACK (libmtmd's softmax
            # also spreads over the padding rows: only lower)
            p1 = 1 / (1 + math.exp(-logit_gap))
            if seer_p is not None:
                p1 = min(p1, seer_p + P_SLACK)
            gap, what = p1 * -math.expm1(-logit_gap), "top-2 probability gap at most"
        else:
            print(f"step {i}: seer {seer_id}, libmtmd {m[i]}; libmtmd's probabilities there are unknown "
                  f"(seer {s}, libmtmd {m})")
            return 1
        if gap <= TIE:
            print(f"step {i}: seer {seer_id}, libmtmd {m[i]} at a near tie ({what} {gap:.2e} <= {TIE}); "
                  f"{i} steps identical before it")
            return 0
        print(f"step {i}: seer {seer_id}, libmtmd {m[i]}, libmtmd's {what} {gap:.3g} > {TIE} "
              f"(seer {s}, libmtmd {m})")
        return 1
    # Same ids as far as both go. llama.cpp ends a generation on more tokens than the model's
    # generation config names (its end-of-generation set adds <|fim_pad|>, <|repo_name|>,
    # <|file_sep|> for this vocabulary): where libmtmd stopped on a token seer chose too and went on
    # past (seer, like HF, ends the turn only on <|im_end|> and <|endoftext|>), they agree up to there.
    if mtmd.get("stop") == "eog" and 0 < len(m) < len(s) and s[len(m) - 1] == m[-1]:
        print(f"{len(m)} greedy tokens identical; libmtmd stopped on {m[-1]}, an end of generation for "
              f"llama.cpp only, where seer (as HF) goes on")
        return 0
    # A stop on an end-of-generation token may be listed by one side only.
    if len(s) != len(m) and not (abs(len(s) - len(m)) == 1 and mtmd.get("stop") == "eog"):
        print(f"lengths differ: seer {len(s)} tokens {s}, libmtmd {len(m)} tokens {m} (stop {mtmd.get('stop')})")
        return 1
    known = sum(1 for x in mtmd["probs"] if x)
    gaps = sum(1 for x in mtmd.get("top2_logit_gap") or [] if x is not None)
    print(f"{min(len(s), len(m))} greedy tokens identical, {mtmd['prompt_tokens']} prompt tokens "
          f"(libmtmd's probabilities known at {known}, top-2 logit gaps at {gaps} of {len(mtmd['probs'])} steps; "
          f"seer's probability at least libmtmd's less {P_SLACK} at {n_p})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
