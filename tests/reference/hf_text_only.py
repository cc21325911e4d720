#!/usr/bin/env python3
"""Rewrites a composite Qwen3.5 HF directory (gen_tiny.py's DIR/hf) as transformers saves a text-only
fine-tune, Qwen3_5ForCausalLM: config.json is the text config alone at the top level ("model_type":
"qwen3_5_text", "architectures": ["Qwen3_5ForCausalLM"], no text_config or vision_config), and the
tensors are the text model's renamed model.language_model.* -> model.* with model.visual.* and mtp.*
left out. Where that comes from: docs/MODEL.md §1 and §8 (source S11, transformers'
conversion mapping for qwen3_5_text: model.language_model. becomes model., the tower and the MTP block are
not part of it), and the class layout Qwen3_5ForCausalLM shares with Qwen3ForCausalLM (a text model as
`model` beside `lm_head`: model.embed_tokens, model.layers.N.*, model.norm, lm_head when untied).
Every tensor keeps its dtype and bytes; the tokenizer files are copied.

Usage: hf_text_only.py SRC_HF_DIR OUT_DIR
"""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import safetensors  # noqa: E402

TEXT_PREFIX = "model.language_model."
COPIED = ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "chat_template.jinja")


def convert(src, out):
    with open(os.path.join(src, "config.json")) as f:
        composite = json.load(f)
    cfg = dict(composite["text_config"])
    cfg["architectures"] = ["Qwen3_5ForCausalLM"]
    cfg["model_type"] = "qwen3_5_text"
    if "tie_word_embeddings" not in cfg and "tie_word_embeddings" in composite:
        cfg["tie_word_embeddings"] = composite["tie_word_embeddings"]
    raw = safetensors.read_dir(src, raw=True)
    values = safetensors.read_dir(src)
    tensors = {}
    for name, (dtype, _, _) in raw.items():
        if name.startswith(("model.visual.", "mtp.")):
            continue
        new = "model." + name[len(TEXT_PREFIX):] if name.startswith(TEXT_PREFIX) else name
        tensors[new] = (values[name], dtype)   # bf16 -> f32 -> bf16 is exact: the same bytes
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    safetensors.write(os.path.join(out, "model.safetensors"), tensors, "BF16", {"format": "pt"})
    for name in COPIED:
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(out, name))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    convert(sys.argv[1], sys.argv[2])
