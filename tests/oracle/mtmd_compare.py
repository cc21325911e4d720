#!/usr/bin/env python3
"""mtmd_compare.py — compares seer's greedy answer (`seer ask --json`) with llama.cpp's libmtmd
(tests/oracle/mtmd_logits.mjs output) for one image prompt, with the text oracle's rule
(tests/lm/oracle.c): prompt token counts identical, generated ids identical up to the first step where
they differ, and a difference is excused only at a near tie, where libmtmd's two most probable tokens
are within TIE in probability (there a rounding-level difference may legitimately flip the argmax).
Comparison stops at an excused difference (the two then continue different sequences). A difference at
a step where libmtmd's probabilities are unknown (mtmd_logits.mjs gives them only where the greedy prefix
round-trips through text) cannot be excused and fails.

usage: mtmd_compare.py SEER.json MTMD.json
Prints one line describing the outcome; exit status 0 when they agree, 1 when not."""
import json
import sys

TIE = 2e-3  # the text oracle's near-tie bound (tests/lm/oracle.c: f32 vs f32)


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
    for i in range(min(len(s), len(m))):
        if s[i] == m[i]:
            continue
        probs = mtmd["probs"][i] if i < len(mtmd["probs"]) else None
        if not probs or len(probs) < 2:
            print(f"step {i}: seer {s[i]}, libmtmd {m[i]}; libmtmd's probabilities there are unknown "
                  f"(seer {s}, libmtmd {m})")
            return 1
        gap = probs[0]["p"] - probs[1]["p"]
        if gap <= TIE:
            print(f"step {i}: seer {s[i]}, libmtmd {m[i]} at a near tie (top-2 gap {gap:.2e} <= {TIE}); "
                  f"{i} steps identical before it")
            return 0
        print(f"step {i}: seer {s[i]}, libmtmd {m[i]}, libmtmd's top-2 gap {gap:.3g} > {TIE} "
              f"(seer {s}, libmtmd {m})")
        return 1
    # Same ids as far as both go. A stop on an end-of-generation token may be listed by one side only.
    if len(s) != len(m) and not (abs(len(s) - len(m)) == 1 and mtmd.get("stop") == "eog"):
        print(f"lengths differ: seer {len(s)} tokens {s}, libmtmd {len(m)} tokens {m} (stop {mtmd.get('stop')})")
        return 1
    print(f"{min(len(s), len(m))} greedy tokens identical, {mtmd['prompt_tokens']} prompt tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
