#!/usr/bin/env python3
"""mtmd_gguf_compare.py — compares two GGUF files with llama.cpp's own reader (gguf-py's GGUFReader, from
the source bundle in node-llama-cpp; see mmproj_gguf_py.py): every metadata key with its type and value,
and every tensor's name, ggml type, shape and bytes. tests/scripts/mtmd_oracle.sh uses it to check seer's
mmproj writer (tests/reference/hf2gguf.py through gen_tiny.py) against the file gguf-py writes.

usage: mtmd_gguf_compare.py A.gguf B.gguf [--ignore-key KEY]...
Prints one line per difference and a summary; exit status 0 when the files agree, 1 when they differ,
2 when gguf-py or numpy is missing."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mmproj_gguf_py import load_gguf_py  # noqa: E402


def fields(reader):
    """{key: (value type name, python value)}, GGUF's own bookkeeping fields (GGUF.*) left out."""
    out = {}
    for key, f in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        types = "/".join(t.name for t in f.types)
        out[key] = (types, f.contents())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--ignore-key", action="append", default=[])
    args = ap.parse_args()
    gguf = load_gguf_py()
    import numpy as np
    ra, rb = gguf.GGUFReader(args.a), gguf.GGUFReader(args.b)
    diffs = []

    fa, fb = fields(ra), fields(rb)
    for key in sorted(set(fa) | set(fb)):
        if key in args.ignore_key:
            continue
        if key not in fa or key not in fb:
            diffs.append(f"key {key}: only in {args.a if key in fa else args.b}")
        elif fa[key][0] != fb[key][0]:
            diffs.append(f"key {key}: type {fa[key][0]} vs {fb[key][0]}")
        elif fa[key][1] != fb[key][1]:
            diffs.append(f"key {key}: {fa[key][1]!r} vs {fb[key][1]!r}")

    ta = {t.name: t for t in ra.tensors}
    tb = {t.name: t for t in rb.tensors}
    for name in sorted(set(ta) | set(tb)):
        if name not in ta or name not in tb:
            diffs.append(f"tensor {name}: only in {args.a if name in ta else args.b}")
            continue
        x, y = ta[name], tb[name]
        if x.tensor_type != y.tensor_type:
            diffs.append(f"tensor {name}: type {x.tensor_type.name} vs {y.tensor_type.name}")
        elif list(x.shape) != list(y.shape):
            diffs.append(f"tensor {name}: shape {list(x.shape)} vs {list(y.shape)}")
        elif not np.array_equal(np.asarray(x.data).view(np.uint8), np.asarray(y.data).view(np.uint8)):
            n = int(np.count_nonzero(np.asarray(x.data) != np.asarray(y.data)))
            diffs.append(f"tensor {name}: {n} of {x.n_elements} elements differ")

    for d in diffs:
        print(d)
    print(f"{len(fa)} / {len(fb)} keys, {len(ta)} / {len(tb)} tensors compared "
          f"({', '.join(args.ignore_key) or 'no key'} ignored): {len(diffs)} differences")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
