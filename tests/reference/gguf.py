"""GGUF v3 writer and reader (numpy only) for seer's tiny test models and their self-checks.

Implements the container format as llama.cpp defines it (docs/MODEL.md §11): header, typed
metadata (every scalar type, strings, arrays incl. arrays of strings), tensor infos with ggml-order `ne`,
data section aligned to `general.alignment` (default 32). Tensor payloads: F32, F16, BF16 (round to
nearest even from float32) and raw bytes for any other ggml type.
"""

import struct

import numpy as np

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
DEFAULT_ALIGNMENT = 32

# Metadata value types (gguf.h enum gguf_type).
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)

_SCALAR_FMT = {
    UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
    FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d",
}
TYPE_NAMES = {
    UINT8: "u8", INT8: "i8", UINT16: "u16", INT16: "i16", UINT32: "u32", INT32: "i32", FLOAT32: "f32",
    BOOL: "bool", STRING: "str", ARRAY: "arr", UINT64: "u64", INT64: "i64", FLOAT64: "f64",
}

# ggml tensor types (ggml.h enum ggml_type) and their (block elements, block bytes).
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0 = 0, 1, 2, 8
GGML_Q4_K, GGML_Q5_K, GGML_Q6_K, GGML_I32, GGML_BF16 = 12, 13, 14, 26, 30
GGML_BLOCK = {
    GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_BF16: (1, 2), GGML_I32: (1, 4),
    GGML_Q4_0: (32, 18), GGML_Q8_0: (32, 34), GGML_Q4_K: (256, 144), GGML_Q5_K: (256, 176),
    GGML_Q6_K: (256, 210),
}
GGML_NAMES = {GGML_F32: "F32", GGML_F16: "F16", GGML_BF16: "BF16", GGML_I32: "I32", GGML_Q4_0: "Q4_0",
              GGML_Q8_0: "Q8_0", GGML_Q4_K: "Q4_K", GGML_Q5_K: "Q5_K", GGML_Q6_K: "Q6_K"}


class GGUFError(Exception):
    pass


# ---------------------------------------------------------------------------------------------------------
# bf16 helpers (also used by the safetensors module and the generator)

def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, rounding to nearest even (NaN stays a quiet NaN)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    if nan.any():
        out[nan] = 0x7FC0
    return out


def bf16_bits_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_round(x):
    """Round float32 values to the nearest bf16 value, returned as float32."""
    return bf16_bits_to_f32(f32_to_bf16_bits(x)).reshape(np.shape(x))


# ---------------------------------------------------------------------------------------------------------
# writer

def _pack_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def _pack_value(vtype, value):
    if vtype == STRING:
        return _pack_string(value)
    if vtype == ARRAY:
        etype, items = value
        if etype == ARRAY:
            raise GGUFError("nested arrays are not supported")
        out = [struct.pack("<IQ", etype, len(items))]
        if etype == STRING:
            out.extend(_pack_string(s) for s in items)
        else:
            out.append(np.asarray(items, dtype=np.dtype(_SCALAR_FMT[etype])).tobytes())
        return b"".join(out)
    if vtype not in _SCALAR_FMT:
        raise GGUFError(f"unknown metadata type {vtype}")
    return struct.pack(_SCALAR_FMT[vtype], value)


class GGUFWriter:
    """Collects metadata and tensors, then writes one GGUF v3 file with `write(path)`.

    Tensors are given in PyTorch order (outermost dimension first); the file stores ne reversed, as ggml
    does. Keys keep insertion order; a repeated key is an error (llama.cpp refuses duplicates too)."""

    def __init__(self, alignment=DEFAULT_ALIGNMENT):
        if alignment <= 0 or alignment % 8:
            raise GGUFError("alignment must be a positive multiple of 8")
        self.alignment = alignment
        self.kv = {}          # key -> (vtype, value)
        self.tensors = []     # (name, ne tuple, ggml type, bytes)
        if alignment != DEFAULT_ALIGNMENT:
            self.add_u32("general.alignment", alignment)

    # metadata -------------------------------------------------------------------------------------------
    def add(self, key, vtype, value):
        if key in self.kv:
            raise GGUFError(f"duplicate key {key}")
        self.kv[key] = (vtype, value)

    def add_u8(self, k, v): self.add(k, UINT8, int(v))
    def add_i8(self, k, v): self.add(k, INT8, int(v))
    def add_u16(self, k, v): self.add(k, UINT16, int(v))
    def add_i16(self, k, v): self.add(k, INT16, int(v))
    def add_u32(self, k, v): self.add(k, UINT32, int(v))
    def add_i32(self, k, v): self.add(k, INT32, int(v))
    def add_u64(self, k, v): self.add(k, UINT64, int(v))
    def add_i64(self, k, v): self.add(k, INT64, int(v))
    def add_f32(self, k, v): self.add(k, FLOAT32, float(v))
    def add_f64(self, k, v): self.add(k, FLOAT64, float(v))
    def add_bool(self, k, v): self.add(k, BOOL, bool(v))
    def add_string(self, k, v): self.add(k, STRING, str(v))

    def add_array(self, key, etype, values):
        vals = list(values)
        if etype == STRING:
            vals = [str(s) for s in vals]
        elif etype == BOOL:
            vals = [bool(x) for x in vals]
        self.add(key, ARRAY, (etype, vals))

    # tensors --------------------------------------------------------------------------------------------
    def add_tensor(self, name, array, ggml_type):
        """array: numpy array in PyTorch order; stored as F32, F16 or BF16."""
        a = np.asarray(array)
        if ggml_type == GGML_F32:
            data = a.astype("<f4").tobytes()
        elif ggml_type == GGML_F16:
            data = a.astype("<f2").tobytes()
        elif ggml_type == GGML_BF16:
            data = f32_to_bf16_bits(a.astype(np.float32)).astype("<u2").tobytes()
        elif ggml_type == GGML_I32:
            data = a.astype("<i4").tobytes()
        else:
            raise GGUFError(f"{name}: use add_tensor_raw for ggml type {ggml_type}")
        self.add_tensor_raw(name, tuple(reversed(a.shape)) if a.ndim else (1,), ggml_type, data)

    def add_tensor_raw(self, name, ne, ggml_type, data):
        """ne in ggml order (ne[0] innermost); data already encoded in ggml_type's block layout."""
        if any(t[0] == name for t in self.tensors):
            raise GGUFError(f"duplicate tensor {name}")
        if not 1 <= len(ne) <= 4:
            raise GGUFError(f"{name}: 1..4 dimensions allowed")
        blk, bsz = GGML_BLOCK[ggml_type]
        n = int(np.prod(ne))
        if ne[0] % blk or n // blk * bsz != len(data):
            raise GGUFError(f"{name}: {len(data)} bytes do not match ne={ne} type {ggml_type}")
        self.tensors.append((name, tuple(int(x) for x in ne), ggml_type, bytes(data)))

    # output ---------------------------------------------------------------------------------------------
    def _pad(self, n):
        return (-n) % self.alignment

    def to_bytes(self):
        out = [GGUF_MAGIC, struct.pack("<IQQ", GGUF_VERSION, len(self.tensors), len(self.kv))]
        for key, (vtype, value) in self.kv.items():
            out += [_pack_string(key), struct.pack("<I", vtype), _pack_value(vtype, value)]
        offset = 0
        for name, ne, gtype, data in self.tensors:
            out += [_pack_string(name), struct.pack("<I", len(ne)), struct.pack(f"<{len(ne)}Q", *ne),
                    struct.pack("<IQ", gtype, offset)]
            offset += len(data) + self._pad(len(data))
        head = b"".join(out)
        parts = [head, b"\0" * self._pad(len(head))]
        for _, _, _, data in self.tensors:
            parts += [data, b"\0" * self._pad(len(data))]
        return b"".join(parts)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())


# ---------------------------------------------------------------------------------------------------------
# reader

class TensorInfo:
    def __init__(self, name, ne, ggml_type, offset, nbytes):
        self.name, self.ne, self.type, self.offset, self.nbytes = name, ne, ggml_type, offset, nbytes

    @property
    def shape(self):
        """PyTorch-order shape."""
        return tuple(reversed(self.ne))

    def __repr__(self):
        return f"TensorInfo({self.name}, ne={self.ne}, {GGML_NAMES.get(self.type, self.type)})"


class GGUFReader:
    """Parses a whole GGUF file into memory and checks every size and bound as it goes."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.path = path
        self.pos = 0
        if self._take(4) != GGUF_MAGIC:
            raise GGUFError(f"{path}: bad magic")
        self.version, n_tensors, n_kv = struct.unpack("<IQQ", self._take(20))
        if self.version != GGUF_VERSION:
            raise GGUFError(f"{path}: version {self.version}, expected 3")
        if n_tensors > 1 << 20 or n_kv > 1 << 20:
            raise GGUFError(f"{path}: implausible counts {n_tensors} tensors, {n_kv} keys")
        self.fields = {}
        for _ in range(n_kv):
            key = self._string()
            if key in self.fields:
                raise GGUFError(f"{path}: duplicate key {key}")
            vtype = self._u32()
            self.fields[key] = (vtype, self._value(vtype))
        self.alignment = DEFAULT_ALIGNMENT
        if "general.alignment" in self.fields:
            t, a = self.fields["general.alignment"]
            if t != UINT32 or a == 0 or a % 8:
                raise GGUFError(f"{path}: bad general.alignment")
            self.alignment = a
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            nd = self._u32()
            if not 1 <= nd <= 4:
                raise GGUFError(f"{path}: tensor {name}: {nd} dims")
            ne = struct.unpack(f"<{nd}Q", self._take(8 * nd))
            gtype, off = struct.unpack("<IQ", self._take(12))
            if gtype not in GGML_BLOCK:
                raise GGUFError(f"{path}: tensor {name}: unsupported ggml type {gtype}")
            blk, bsz = GGML_BLOCK[gtype]
            n = 1
            for x in ne:
                n *= x
            if ne[0] % blk:
                raise GGUFError(f"{path}: tensor {name}: ne[0]={ne[0]} not a multiple of {blk}")
            if off % self.alignment:
                raise GGUFError(f"{path}: tensor {name}: offset {off} not aligned")
            infos.append(TensorInfo(name, tuple(ne), gtype, off, n // blk * bsz))
        self.data_start = self.pos + (-self.pos) % self.alignment
        self.tensors = {}
        for t in infos:
            if t.name in self.tensors:
                raise GGUFError(f"{path}: duplicate tensor {t.name}")
            if self.data_start + t.offset + t.nbytes > len(self.buf):
                raise GGUFError(f"{path}: tensor {t.name} runs past the end of the file")
            self.tensors[t.name] = t

    def _take(self, n):
        if self.pos + n > len(self.buf):
            raise GGUFError(f"{self.path}: truncated at offset {self.pos}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def _u32(self):
        return struct.unpack("<I", self._take(4))[0]

    def _string(self):
        n = struct.unpack("<Q", self._take(8))[0]
        return self._take(n).decode("utf-8")

    def _value(self, vtype):
        if vtype == STRING:
            return self._string()
        if vtype == ARRAY:
            etype = self._u32()
            n = struct.unpack("<Q", self._take(8))[0]
            if etype == STRING:
                return (etype, [self._string() for _ in range(n)])
            if etype not in _SCALAR_FMT:
                raise GGUFError(f"{self.path}: bad array element type {etype}")
            dt = np.dtype(_SCALAR_FMT[etype])
            arr = np.frombuffer(self._take(dt.itemsize * n), dtype=dt)
            return (etype, [x.item() for x in arr])
        if vtype not in _SCALAR_FMT:
            raise GGUFError(f"{self.path}: bad metadata type {vtype}")
        fmt = _SCALAR_FMT[vtype]
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    # convenience ----------------------------------------------------------------------------------------
    def get(self, key, default=None):
        """Metadata value without its type (arrays as a plain list)."""
        if key not in self.fields:
            return default
        vtype, value = self.fields[key]
        return value[1] if vtype == ARRAY else value

    def type_of(self, key):
        """(type, element type or None) of a metadata key."""
        vtype, value = self.fields[key]
        return (vtype, value[0] if vtype == ARRAY else None)

    def raw(self, name):
        t = self.tensors[name]
        start = self.data_start + t.offset
        return self.buf[start:start + t.nbytes]

    def tensor(self, name):
        """Tensor as a float32 numpy array in PyTorch order (F32/F16/BF16; I32 stays int32)."""
        t = self.tensors[name]
        raw = self.raw(name)
        if t.type == GGML_F32:
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif t.type == GGML_F16:
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif t.type == GGML_BF16:
            a = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        elif t.type == GGML_I32:
            a = np.frombuffer(raw, dtype="<i4").copy()
        else:
            raise GGUFError(f"{self.path}: {name}: no dequantizer for type {t.type} here")
        return a.reshape(t.shape)
