#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/fuzz_*.c) into OUT/<target>/, from a
tiny random Qwen3.5 checkpoint made by tests/reference/gen_tiny.py with a preset smaller still
(a few tens of KB per file, so each execution stays fast), plus small hand-made inputs that start
the fuzzer at edges (empty weight map, one-tensor files, a text with special tokens).

Usage: make_seeds.py OUT        (scripts/fuzz.sh calls it; the output is never checked in)
"""
import json
import os
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import gen_tiny  # noqa: E402

SEP_DIR = b"\n===\n"  # fuzz_safetensors_dir.c
SEP_TEXT = b"\n#TEXT#\n"  # fuzz_tokenizer.c

# Every structural feature of the real models (hybrid schedule, GQA, MTP-free, vision tower) at the
# smallest widths gen_tiny's converter accepts.
gen_tiny.PRESETS["fuzz"] = dict(hidden=16, layers=4, inter=16, heads=2, kv_heads=1, head_dim=16, lin_k_heads=1,
                                lin_v_heads=2, lin_dim=16, merges=20, tie=True, shards=2,
                                vision=dict(depth=1, hidden=16, heads=1, inter=16, model_type="qwen3_5_vision"))


def put(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def st_file(entries):
    """A safetensors file of F32 tensors {name: (shape, begin)} (data zero-filled)."""
    header, end = {}, 0
    for name, (shape, begin) in entries.items():
        n = 4
        for s in shape:
            n *= s
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [begin, begin + n]}
        end = max(end, begin + n)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + bytes(end)


def main():
    out = sys.argv[1]
    tmp = tempfile.mkdtemp()
    try:
        gen_tiny.generate(tmp, preset="fuzz", seed=7)
        hf = os.path.join(tmp, "hf")
        put(out, "fuzz_gguf", "model.gguf", read(os.path.join(tmp, "model-f16.gguf")))
        put(out, "fuzz_gguf", "mmproj.gguf", read(os.path.join(tmp, "mmproj-f16.gguf")))
        put(out, "fuzz_config", "config.json", read(os.path.join(hf, "config.json")))
        put(out, "fuzz_config", "preprocessor_config.json", read(os.path.join(hf, "preprocessor_config.json")))
        tok = read(os.path.join(hf, "tokenizer.json"))
        put(out, "fuzz_tokenizer", "tokenizer.json", tok)
        put(out, "fuzz_tokenizer", "with-text", tok + SEP_TEXT + "Hi <|im_start|>you 12 \u00e9\n\n".encode())
        # The sharded checkpoint: index (shards renamed a/b.safetensors, as the harness writes them) + shards.
        idx = json.loads(read(os.path.join(hf, "model.safetensors.index.json")))
        names = sorted(set(idx["weight_map"].values()))
        rename = {n: "abc"[i] + ".safetensors" for i, n in enumerate(names)}
        idx["weight_map"] = {k: rename[v] for k, v in idx["weight_map"].items()}
        parts = [json.dumps(idx).encode()] + [read(os.path.join(hf, n)) for n in names]
        put(out, "fuzz_safetensors_dir", "sharded", SEP_DIR.join(parts))
        put(out, "fuzz_safetensors_dir", "one-shard",
            json.dumps({"weight_map": {"x": "a.safetensors"}}).encode() + SEP_DIR + st_file({"x": ([2, 3], 0)}))
        for i, n in enumerate(names):
            put(out, "fuzz_safetensors", f"shard{i}.safetensors", read(os.path.join(hf, n)))
        put(out, "fuzz_safetensors", "small.safetensors", st_file({"a": ([3], 0), "b": ([2, 2], 16)}))
        tc = json.loads(read(os.path.join(hf, "tokenizer_config.json")))
        msgs = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is this?"}]},
                {"role": "assistant", "content": "<think>\nhm\n</think>\n\nA cat.",
                 "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1, "y": "z"}}}]},
                {"role": "tool", "content": "ok"}, {"role": "user", "content": "And now?"}]
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        put(out, "fuzz_chat", "conversation", json.dumps(msgs).encode() + b"\0" + json.dumps(tools).encode() + b"\0" +
            tc["chat_template"].encode() + b"\x03")
        put(out, "fuzz_chat", "plain", b'[{"role":"user","content":"hi"}]\0\0\x01')
        # The hub's metadata as tests/support/hub_server.py serves it: LFS and Git files, one not needed.
        sib = [{"rfilename": n, "size": 10 + i, "blobId": "%040x" % i} for i, n in
               enumerate(["config.json", "tokenizer.json", "chat_template.jinja", "README.md"])]
        sib.append({"rfilename": "model.safetensors", "size": 1024, "blobId": "f" * 40,
                    "lfs": {"sha256": "ab" * 32, "size": 1024, "pointerSize": 134}})
        put(out, "fuzz_hub", "metadata.json", json.dumps({"id": "Qwen/Qwen3.5-0.8B", "sha": "1" * 40,
                                                          "siblings": sib}).encode())
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
