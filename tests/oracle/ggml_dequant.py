#!/usr/bin/env python3
"""ggml_dequant.py — dequantises GGUF blocks with llama.cpp's own Python package (gguf-py,
gguf/quants.py, numpy): an oracle for seer's block decoders (core/quant.c), written without them.

gguf-py is read from the llama.cpp source that npm node-llama-cpp ships as a git bundle
(tests/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle); the three modules it needs
(quants, constants, lazy) are extracted once into tests/oracle/node_modules/.seer-gguf-py/gguf.

usage: ggml_dequant.py TYPE IN OUT    TYPE: Q8_0 Q4_0 Q4_K Q5_K Q6_K (any gguf-py type name);
                                      IN: whole blocks of that type; OUT: little-endian f32
Exit status 2 with one line on stderr when the bundle or numpy is missing."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle")
CACHE = os.path.join(HERE, "node_modules", ".seer-gguf-py")
MODULES = ("quants.py", "constants.py", "lazy.py")


def fail(msg):
    sys.stderr.write(f"ggml_dequant: {msg}\n")
    sys.exit(2)


def extract():
    """Writes gguf-py's modules into CACHE/gguf (a package with an empty __init__, so importing it
    does not pull in gguf-py's writer and its optional dependencies)."""
    pkg = os.path.join(CACHE, "gguf")
    if all(os.path.exists(os.path.join(pkg, m)) for m in MODULES):
        return
    if not os.path.exists(BUNDLE):
        fail(f"{BUNDLE} is missing (npm install in tests/oracle)")
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "llama.git")
        subprocess.run(["git", "clone", "-q", "--bare", BUNDLE, repo], check=True)
        staging = os.path.join(tmp, "gguf")
        os.makedirs(staging)
        for m in MODULES:
            text = subprocess.run(["git", "--git-dir", repo, "show", f"HEAD:gguf-py/gguf/{m}"], check=True,
                                  capture_output=True).stdout
            with open(os.path.join(staging, m), "wb") as f:
                f.write(text)
        open(os.path.join(staging, "__init__.py"), "w").close()
        os.makedirs(CACHE, exist_ok=True)
        if not os.path.exists(pkg):  # another test process may have won the race
            os.replace(staging, pkg)


def main():
    if len(sys.argv) != 4:
        fail("usage: ggml_dequant.py TYPE IN OUT")
    sys.path.insert(0, os.path.join(HERE, "..", "reference"))
    from common import ensure_numpy  # re-runs under /usr/bin/python3 when this python lacks numpy
    try:
        ensure_numpy()
        import numpy as np
    except ImportError:
        fail("numpy is missing (python3-numpy)")
    extract()
    sys.path.insert(0, CACHE)
    from gguf import quants
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    qtype = GGMLQuantizationType[sys.argv[1]]
    block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
    raw = np.fromfile(sys.argv[2], dtype=np.uint8)
    if raw.size % block_bytes:
        fail(f"{sys.argv[2]}: {raw.size} bytes is not a whole number of {block_bytes}-byte blocks")
    out = quants.dequantize(raw.reshape(-1, block_bytes), qtype).astype("<f4").reshape(-1)
    assert out.size == raw.size // block_bytes * block_elems
    out.tofile(sys.argv[3])


if __name__ == "__main__":
    main()
