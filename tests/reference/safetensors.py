"""safetensors writer and reader (numpy only): single files and sharded checkpoints with
`model.safetensors.index.json`, as Hugging Face writes them (docs/ARCHITECTURE.md, "Model files"; spec §8 names).

Format: u64 little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
"__metadata__": {str: str}} padded with spaces to a multiple of 8, then the raw little-endian tensor bytes.
Dtypes handled: F32, F16, BF16 (bf16 written from float32 by round-to-nearest-even).
"""

import json
import os
import struct

import numpy as np

from gguf import bf16_bits_to_f32, f32_to_bf16_bits

DTYPE_SIZE = {"F32": 4, "F16": 2, "BF16": 2}
INDEX_NAME = "model.safetensors.index.json"


class SafetensorsError(Exception):
    pass


def _encode(a, dtype):
    a = np.asarray(a)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        return f32_to_bf16_bits(a.astype(np.float32)).astype("<u2").tobytes()
    raise SafetensorsError(f"unsupported dtype {dtype}")


def write(path, tensors, dtype="BF16", metadata=None):
    """tensors: dict name -> numpy array (or (array, dtype) to override the file-wide dtype).
    Tensors are laid out in the order given."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, val in tensors.items():
        arr, dt = val if isinstance(val, tuple) else (val, dtype)
        data = _encode(arr, dt)
        header[name] = {"dtype": dt, "shape": list(np.shape(arr)), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((-len(hjson)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    return offset


def write_sharded(directory, tensors, n_shards, dtype="BF16", metadata=None):
    """Splits tensors (in order) into n_shards files model-0000i-of-0000n.safetensors of roughly equal
    byte size and writes model.safetensors.index.json mapping each name to its file."""
    names = list(tensors)
    sizes = [int(np.prod(np.shape(tensors[n][0] if isinstance(tensors[n], tuple) else tensors[n])))
             * DTYPE_SIZE[tensors[n][1] if isinstance(tensors[n], tuple) else dtype] for n in names]
    total = sum(sizes)
    shards, cur, acc = [[] for _ in range(n_shards)], 0, 0
    for n, s in zip(names, sizes):
        if acc >= total * (cur + 1) / n_shards and cur < n_shards - 1 and shards[cur]:
            cur += 1
        shards[cur].append(n)
        acc += s
    if any(not s for s in shards):
        raise SafetensorsError("too few tensors for that many shards")
    weight_map = {}
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{n_shards:05d}.safetensors"
        write(os.path.join(directory, fname), {n: tensors[n] for n in shard}, dtype,
              metadata if metadata is not None else {"format": "pt"})
        for n in shard:
            weight_map[n] = fname
    with open(os.path.join(directory, INDEX_NAME), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


def read_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise SafetensorsError(f"{path}: truncated header length")
        n = struct.unpack("<Q", raw)[0]
        size = os.fstat(f.fileno()).st_size
        if n > size - 8 or n > 100 << 20:
            raise SafetensorsError(f"{path}: header length {n} exceeds the file")
        header = json.loads(f.read(n).decode("utf-8"))
    return header, 8 + n, size


def read(path, raw=False):
    """Returns dict name -> float32 array (raw=True: (dtype, uint8 bytes, shape) instead)."""
    header, start, size = read_header(path)
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt, shape, (b, e) = info["dtype"], info["shape"], info["data_offsets"]
        if dt not in DTYPE_SIZE:
            raise SafetensorsError(f"{path}: {name}: unsupported dtype {dt}")
        n = int(np.prod(shape)) if shape else 1
        if not (0 <= b <= e and start + e <= size and e - b == n * DTYPE_SIZE[dt]):
            raise SafetensorsError(f"{path}: {name}: bad data_offsets {b}..{e}")
        blob = data[start + b:start + e]
        if raw:
            out[name] = (dt, blob, tuple(shape))
            continue
        if dt == "F32":
            a = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        elif dt == "F16":
            a = np.frombuffer(blob, dtype="<f2").astype(np.float32)
        else:
            a = bf16_bits_to_f32(np.frombuffer(blob, dtype="<u2"))
        out[name] = a.reshape(shape)
    return out


def read_dir(directory, raw=False):
    """Loads every tensor of a HF checkpoint directory: the index's shards, else model.safetensors."""
    index = os.path.join(directory, INDEX_NAME)
    if os.path.exists(index):
        with open(index) as f:
            weight_map = json.load(f)["weight_map"]
        out = {}
        for fname in sorted(set(weight_map.values())):
            part = read(os.path.join(directory, fname), raw)
            for name in part:
                if weight_map.get(name) != fname:
                    raise SafetensorsError(f"{fname}: {name} not mapped to this shard by the index")
            out.update(part)
        missing = set(weight_map) - set(out)
        if missing:
            raise SafetensorsError(f"{directory}: index lists tensors no shard holds: {sorted(missing)[:3]}")
        return out
    return read(os.path.join(directory, "model.safetensors"), raw)
