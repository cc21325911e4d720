#!/usr/bin/env python3
"""requant_gguf.py IN.gguf OUT.gguf TYPE — a copy of a GGUF text model with its matrices quantised by
llama.cpp's own gguf-py (gguf.quants.quantize), for tests that run seer and llama.cpp on the same
quantised file (tests/lm/qdot_oracle.c). TYPE is q8_0 or q4_0. Every 2-D tensor whose rows are whole
blocks is quantised (token embedding and head included, as llama.cpp's quantiser does for these types);
1-D tensors and matrices with other row lengths (the conv kernel) are copied as they are. Metadata is
copied key by key."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mmproj_gguf_py import load_gguf_py  # noqa: E402  (extracts gguf-py from node-llama-cpp's bundle)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("q8_0", "q4_0"):
        sys.stderr.write("usage: requant_gguf.py IN.gguf OUT.gguf q8_0|q4_0\n")
        return 2
    gguf = load_gguf_py()
    import numpy as np
    qtype = {"q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0}[sys.argv[3]]
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    r = gguf.GGUFReader(sys.argv[1])
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(sys.argv[2], arch)
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "general.alignment"):
            continue
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), f.types[0], sub_type=f.types[-1])
        else:
            w.add_key_value(name, f.contents(), f.types[0])
    for t in r.tensors:
        data = np.asarray(t.data)
        if t.tensor_type == gguf.GGMLQuantizationType.F32 and data.ndim == 2 and data.shape[1] % block == 0:
            w.add_tensor(t.name, gguf.quants.quantize(data.astype(np.float32), qtype), raw_dtype=qtype)
        else:
            w.add_tensor(t.name, data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
