#!/usr/bin/env python3
"""TAP: seer against Hugging Face transformers 5.23.0, the golden oracle (issue 21), on text, on
checkpoints transformers itself wrote (hf_make.py, fresh seed each run: SEER_TEST_SEED=N replays one):

- every hf_make shape as Qwen3_5ForConditionalGeneration, tiny (tied) and heads (untied) as
  Qwen3_5ForCausalLM, f32: seer loads the directory as written (`seer info`, `seer run`); for prompts of
  1, 63, 64, 65, 128 and 300 random ids (across Gated DeltaNet's 64-token chunk) and one of real text,
  the logits of every position, and 32 greedy tokens (hf_oracle's near-tie rule);
- the same shapes in bf16: seer reading the bf16 weights against transformers computing in f32 on them
  (1e-3) and in bf16 (bounded by transformers' own bf16 rounding error: see BF16_SLACK);
- the tokenizer on real text and the chat template: `apply_chat_template(..., tokenize=True)` against the
  ids seer feeds for the same conversation (system, multi-turn, thinking on, off and default, reasoning
  in earlier turns, tool results, a tool call written in an assistant's text, a template that thinks by
  default).

Runs under the reference venv's python (common.ensure_hf_python re-executes it there); needs
SEER_BUILD_DIR's seer and seer_golden (scripts/test.sh builds both). 1-2 minutes on 2 cores.
"""

import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tap, ensure_hf_python  # noqa: E402

ensure_hf_python()
import hf_make  # noqa: E402  (loads torch and transformers first)
from transformers import AutoTokenizer  # noqa: E402
from hf_make import torch  # noqa: E402
from hf_oracle import (TOL, HFModel, Yardsticks, check_logits, compare_greedy, seer_bin, seer_chat_ids,  # noqa: E402
                       seer_logits, worst_row_rel_l2)

# f32 against f32: both compute in f32 with different summation orders and GDN forms (transformers' torch
# chunked/recurrent delta rule, seer's kernels); 1e-3 is the bound for every well-conditioned
# position (hf_oracle.TOL, whose comment says how ill-conditioned rows are told apart and held).
TOL_F32 = TOL
# bf16 checkpoints: seer computes in f32 over the bf16 weights, so transformers computing in f32 on the same
# weights must agree to TOL_F32. Transformers computing in bf16 rounds every activation to 8 bits: measured
# on these random models, that alone moves its logits 2e-2 to 5e-1 (worst position) from its own f32
# result, so the 1e-2 cannot hold for anyone computing in f32. Seer must then be no farther from
# transformers-bf16 than transformers-f32 is, within BF16_SLACK (measured ratios 0.99-1.02) + TOL_F32.
BF16_SLACK = 1.1
N_GREEDY = 32
LENGTHS = (1, 63, 64, 65, 128, 300)
BF16_LENGTHS = (64, 65, 300)
GREEDY_AT = (64, 300, 0)  # the prompts (0: the real text) continued greedily: transformers' decode is slow
MODELS = (("tiny", "cond"), ("heads", "cond"), ("pattern", "cond"), ("tiny", "causal"), ("heads", "causal"))
TEXT = ("The quick brown fox jumps over the lazy dog. Über den Wolken, 3.14159 — こんにちは世界。\n"
        "def forward(self, x):\n    return x + 1  # 42\n")


def seer_loads(t, d, name):
    """`seer info` and a short greedy `seer run` accept the directory transformers wrote, as it is."""
    info = subprocess.run([seer_bin(), "info", d], capture_output=True, text=True)
    t.ok(info.returncode == 0, f"{name}: seer info reads it{'' if info.returncode == 0 else ': ' + info.stderr.strip()}")
    run = subprocess.run([seer_bin(), "run", "-m", d, "-p", "hi", "-n", "4", "--temp", "0"], capture_output=True)
    t.ok(run.returncode == 0, f"{name}: seer run -p hi -n 4 --temp 0 on it"
         f"{'' if run.returncode == 0 else ': ' + run.stderr.decode(errors='replace').strip()}")


def check_model(t, d, name, dtype, ids, text_ids, tmp):
    """seer's logits for the prefixes of `ids` named by LENGTHS, and for `text_ids`, against transformers'.
    A causal model's logits at position t depend on ids[:t + 1] only, and both sides' GDN chunks start at
    position 0, so transformers runs once on the longest prompt and seer once per length. A bf16
    checkpoint is compared with transformers computing in f32 on its weights (seer's arithmetic: f32
    activations) and with transformers computing in bf16 (BF16_SLACK)."""
    hf = HFModel(d, "f32")
    hb = HFModel(d, "bf16") if dtype == "bf16" else None
    lengths = LENGTHS if dtype == "f32" else BF16_LENGTHS
    cases = [(f"{n} random ids", ids[:n], n) for n in lengths] + [(f"real text ({len(text_ids)} ids)", text_ids, 0)]
    full = hf.logits(ids)
    full_b = hb.logits(ids) if hb else None
    for label, prompt, n in cases:
        want = full[:n] if n else hf.logits(prompt)
        try:
            got, toks = seer_logits(d, prompt, N_GREEDY, tmp)
        except RuntimeError as err:
            t.ok(False, f"{name}: {label}: seer_golden: {err}")
            continue
        desc = f"{name}: {label}: logits of all {len(prompt)} positions vs transformers in f32"
        if got.shape != want.shape:
            t.ok(False, f"{desc}: seer's {got.shape} against {want.shape}")
        else:
            check_logits(t, desc, got, Yardsticks(hf, {"input_ids": torch.tensor([prompt])}, f32=want))
        if hb:
            want_b = full_b[:n] if n else hb.logits(prompt)
            own = worst_row_rel_l2(want, want_b)
            eb = worst_row_rel_l2(got, want_b) if got.shape == want_b.shape else float("inf")
            bound = BF16_SLACK * own + TOL_F32
            t.ok(eb <= bound, f"{name}: {label}: vs transformers in bf16, worst rel L2 {eb:.2e} (<= {bound:.1e}: "
                 f"{BF16_SLACK} x transformers' own bf16 error {own:.1e} + {TOL_F32:.0e})")
        if dtype == "f32" and n in GREEDY_AT:
            hf_toks, hf_steps = hf.greedy(prompt, N_GREEDY)
            agree, _, note = compare_greedy(toks, hf_toks, hf_steps)
            t.ok(agree, f"{name}: {label}: {N_GREEDY} greedy tokens equal ({note})")


# (name, messages, think (None: both sides' default))
CHATS = [
    ("one user turn", [{"role": "user", "content": "Hello, who are you?"}], False),
    ("one user turn, thinking", [{"role": "user", "content": "Hello, who are you?"}], True),
    ("one user turn, default thinking", [{"role": "user", "content": "Hello, who are you?"}], None),
    ("system + user, whitespace and non-ASCII trimmed as Jinja trims",
     [{"role": "system", "content": "  You are terse.\n"}, {"role": "user", "content": "\n Ça va? 你好 \n"}],
     False),
    ("two turns", [{"role": "system", "content": "You are terse."},
                   {"role": "user", "content": "What is 2+2?"},
                   {"role": "assistant", "content": "4."},
                   {"role": "user", "content": "And 3+3?"}], False),
    ("two turns, thinking, reasoning in the first answer",
     [{"role": "user", "content": "What is 2+2?"},
      {"role": "assistant", "content": "<think>\nAdd them.\n</think>\n\n4."},
      {"role": "user", "content": "And 3+3?"}], True),
    ("tool results after a reasoning turn (kept: after the last user query)",
     [{"role": "system", "content": "Use the tools."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "<think>\nAsk the tool.\n</think>\n\nLet me check."},
      {"role": "tool", "content": "{\"temp\": 21}"},
      {"role": "tool", "content": "{\"sky\": \"clear\"}"}], True),
    # <tool_call> is a non-special added token: the id in the rendered text on both sides (docs/MODEL.md §6.1)
    ("a tool call written in the assistant's text",
     [{"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "<tool_call>\n<function=get>\n<parameter=city>\nParis\n</parameter>\n"
                                       "</function>\n</tool_call>"},
      {"role": "tool", "content": "21"}], False),
]


# The larger Qwen3.5 models' form of the generation prompt: thinking unless enable_thinking is false.
OPT_IN = ("{%- if enable_thinking is defined and enable_thinking is true -%}{{- '<think>\\n' -}}\n"
          "{%- else -%}{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}")
OPT_OUT = ("{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\\n\\n</think>\\n\\n' -}}\n"
           "{%- else -%}{{- '<think>\\n' -}}{%- endif -%}")


def thinking_by_default(d, out):
    """A copy of checkpoint d (links) whose chat template thinks unless told not to."""
    os.makedirs(out)
    for f in os.listdir(d):
        if f != "chat_template.jinja":
            os.symlink(os.path.join(d, f), os.path.join(out, f))
    with open(os.path.join(d, "chat_template.jinja"), encoding="utf-8") as f:
        text = f.read()
    assert OPT_IN in text, "tiny_tokenizer's generation prompt changed: update OPT_IN"
    with open(os.path.join(out, "chat_template.jinja"), "w", encoding="utf-8") as f:
        f.write(text.replace(OPT_IN, OPT_OUT))
    return out


def check_chat(t, d, name, msgs, think, tmp):
    tok = AutoTokenizer.from_pretrained(d)
    kw = {} if think is None else {"enable_thinking": think}
    want = list(tok.apply_chat_template(msgs, tokenize=True, add_generation_prompt=True, **kw)["input_ids"])
    try:
        got = seer_chat_ids(d, msgs, think, tmp)
    except RuntimeError as err:
        t.ok(False, f"chat: {name}: seer_golden: {err}")
        return
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    same = got == want
    desc = f"chat: {name}: seer's {len(got)} ids = apply_chat_template's {len(want)}" + (
        "" if same else f" (first difference at {at}: {tok.decode(got[at:at + 8])!r} vs {tok.decode(want[at:at + 8])!r})")
    t.ok(same, desc)


def check_chats(t, d, tmp):
    tok = AutoTokenizer.from_pretrained(d)
    seer_text = subprocess.run([seer_bin(), "tokenize", "-m", d, "--json", "--", TEXT], capture_output=True,
                               text=True)
    want = tok(TEXT)["input_ids"]
    t.ok(seer_text.returncode == 0 and seer_text.stdout.strip() == str(want).replace(" ", ""),
         f"tokenizer: seer tokenize = transformers on {len(want)} ids of mixed-script text")
    for name, msgs, think in CHATS:
        check_chat(t, d, name, msgs, think, tmp)
    thinks = thinking_by_default(d, os.path.join(tmp, "thinks-by-default"))
    hello = [{"role": "user", "content": "Hello, who are you?"}]
    for think in (None, False, True):
        check_chat(t, thinks, f"a template that thinks by default, enable_thinking {think}", hello, think, tmp)


def main():
    t = Tap()
    seed = int(os.environ.get("SEER_TEST_SEED") or random.SystemRandom().randrange(1 << 31))
    t.replay = f"SEER_TEST_SEED={seed}"
    t.diag(f"seed {seed}")
    rng = random.Random(seed)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="seer-hf-text-") as tmp:
        for dtype in ("f32", "bf16"):
            for shape, arch in MODELS:
                if dtype == "bf16" and arch == "causal":
                    continue
                d = hf_make.make(tmp, shape, arch, dtype, seed)
                name = os.path.basename(d)
                seer_loads(t, d, name)
                tok = AutoTokenizer.from_pretrained(d)
                vocab = len(tok)  # real tokens only: no padding rows
                ids = [rng.randrange(vocab) for _ in range(max(LENGTHS))]
                check_model(t, d, name, dtype, ids, tok(TEXT)["input_ids"], tmp)
        check_chats(t, os.path.join(tmp, "tiny-cond-f32"), tmp)
    t.diag(f"{time.time() - start:.0f} s")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
