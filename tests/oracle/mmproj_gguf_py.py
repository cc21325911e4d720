#!/usr/bin/env python3
"""mmproj_gguf_py.py — writes the vision tower + merger of an HF Qwen3.5 directory as a `qwen3vl_merger`
mmproj GGUF with llama.cpp's own gguf-py: GGUFWriter, its key setters (clip.*), its tensor-name tables
(TENSOR_NAMES, TensorNameMap for MODEL_ARCH.MMPROJ) and its F16 conversion. An oracle for seer's own
tests/reference/hf2gguf.py: nothing here comes from seer's code.

What is written follows llama.cpp's converter (conversion/qwen3vl.py Qwen3VLVisionModel and
conversion/base.py MmprojModel/ModelBase.prepare_tensors in the same source bundle), re-stated here
because the converter itself needs torch:
  keys     clip.has_vision_encoder, projection_dim (text hidden size), image_size (sqrt(num_position_
           embeddings) * patch_size when config.json has none), patch_size, embedding_length,
           feed_forward_length, block_count (depth), head_count (num_heads), image_mean/std from
           preprocessor_config.json, projector_type qwen3vl_merger, use_gelu, spatial_merge_size,
           attention.layer_norm_epsilon = text_config.rms_norm_eps (the converter's choice),
           is_deepstack_layers; general.type mmproj, file_type, quantization_version.
  tensors  model.visual.* only; the Conv3D patch kernel split along time into v.patch_embd.weight and
           v.patch_embd.weight.1; merger.linear_fc1/2 -> mm.0/mm.2, merger.norm -> v.post_ln; the rest
           through TensorNameMap.
  types    F16 file: patch kernels F16 (forced), 1-D tensors, *_norm.weight, the position embedding and
           anything not named *.weight F32, other matrices F16. F32 file: all F32.

gguf-py is read from the llama.cpp source that npm node-llama-cpp ships as a git bundle
(node_modules/node-llama-cpp/llama/gitRelease.bundle) and cached in node_modules/.seer-gguf-writer/gguf.

usage: mmproj_gguf_py.py HF_DIR OUT.gguf [--type f32|f16]
Exit status 2 with one line on stderr when the bundle or numpy is missing, 1 when HF_DIR is unusable."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle")
CACHE = os.path.join(HERE, "node_modules", ".seer-gguf-writer")
MODULES = ("constants.py", "lazy.py", "quants.py", "gguf_reader.py", "gguf_writer.py", "tensor_mapping.py")
# gguf-py's own __init__ also pulls in vocab/metadata/utility (sentencepiece, yaml, ...): not needed here.
INIT = "".join(f"from .{m[:-3]} import *\n" for m in MODULES)


def fail(msg, status=2):
    sys.stderr.write(f"mmproj_gguf_py: {msg}\n")
    sys.exit(status)


def load_gguf_py():
    """Imports llama.cpp's gguf-py (writer, reader, constants, tensor maps), extracting it once."""
    sys.path.insert(0, os.path.join(HERE, "..", "reference"))
    from common import ensure_numpy  # re-runs under /usr/bin/python3 when this python lacks numpy
    sys.path.pop(0)  # tests/reference has a gguf.py of seer's own: it must not shadow llama.cpp's
    try:
        ensure_numpy()
    except ImportError:
        fail("numpy is missing (apt-get install python3-numpy)")
    pkg = os.path.join(CACHE, "gguf")
    if not all(os.path.exists(os.path.join(pkg, m)) for m in MODULES + ("__init__.py",)):
        if not os.path.exists(BUNDLE):
            fail(f"{BUNDLE} is missing (npm install --ignore-scripts --omit=optional in tests/oracle)")
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
            with open(os.path.join(staging, "__init__.py"), "w") as f:
                f.write(INIT)
            os.makedirs(CACHE, exist_ok=True)
            if not os.path.exists(pkg):  # another test process may have won the race
                os.replace(staging, pkg)
    sys.path.insert(0, CACHE)
    import gguf
    return gguf


def read_safetensors(hf_dir, np):
    """Every tensor of HF_DIR/*.safetensors as float32 numpy arrays (BF16, F16 and F32 files)."""
    out = {}
    files = sorted(f for f in os.listdir(hf_dir) if f.endswith(".safetensors"))
    if not files:
        fail(f"{hf_dir}: no *.safetensors file", 1)
    for name in files:
        path = os.path.join(hf_dir, name)
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 8:
            fail(f"{path}: truncated header", 1)
        (n,) = struct.unpack("<Q", data[:8])
        if n > len(data) - 8:
            fail(f"{path}: header length {n} past the end", 1)
        header = json.loads(data[8:8 + n])
        base = 8 + n
        for tname, t in header.items():
            if tname == "__metadata__":
                continue
            lo, hi = t["data_offsets"]
            if not 0 <= lo <= hi <= len(data) - base:
                fail(f"{path}: {tname}: data offsets {lo}..{hi} out of range", 1)
            raw = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=base + lo)
            if t["dtype"] == "BF16":
                arr = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
            elif t["dtype"] in ("F16", "F32"):
                arr = raw.view("<f2" if t["dtype"] == "F16" else "<f4").astype(np.float32)
            else:
                fail(f"{path}: {tname}: dtype {t['dtype']} not handled", 1)
            if arr.size != int(np.prod(t["shape"])):
                fail(f"{path}: {tname}: {arr.size} elements for shape {t['shape']}", 1)
            out[tname] = arr.reshape(t["shape"])
    return out


def vision_tensors(gguf, hf, n_blocks):
    """(gguf name, float32 array) for model.visual.*, renamed as Qwen3VLVisionModel.modify_tensors does."""
    T, names = gguf.MODEL_TENSOR, gguf.TENSOR_NAMES
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, n_blocks)
    for name, arr in hf.items():
        if not name.startswith("model.visual."):
            continue
        name = "visual." + name[len("model.visual."):]
        if name.startswith("visual.deepstack_merger_list."):
            fail(f"{name}: deepstack mergers are not part of Qwen3.5 (spec §4)", 1)
        if name.startswith("visual.merger."):
            part, suffix = name[len("visual.merger."):].split(".", 1)
            if part in ("linear_fc1", "linear_fc2"):
                yield names[T.V_MMPROJ].format(bid=0 if part == "linear_fc1" else 2) + "." + suffix, arr
            elif part == "norm":
                yield names[T.V_POST_NORM] + "." + suffix, arr
            else:
                fail(f"unexpected merger tensor {name}", 1)
        elif name == "visual.patch_embed.proj.weight":
            if arr.shape[2] != 2:
                fail(f"{name}: temporal patch size {arr.shape[2]}, the converter handles only 2", 1)
            yield names[T.V_ENC_EMBD_PATCH] + ".weight", arr[:, :, 0]
            yield names[T.V_ENC_EMBD_PATCH] + ".weight.1", arr[:, :, 1]
        elif name == "visual.patch_embed.proj.bias":
            yield names[T.V_ENC_EMBD_PATCH] + ".bias", arr
        else:
            new = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
            if new is None:
                fail(f"gguf-py's TensorNameMap cannot map {name}", 1)
            yield new, arr


def tensor_type(gguf, new_name, arr, ftype):
    """ModelBase.prepare_tensors' choice for an MMPROJ tensor (module doc)."""
    Q = gguf.GGMLQuantizationType
    if ftype == "f32":
        return Q.F32
    if ".patch_embd.weight" in new_name:
        return Q.F16                              # MmprojModel.tensor_force_quant
    pos = gguf.TENSOR_NAMES[gguf.MODEL_TENSOR.V_ENC_EMBD_POS] + ".weight"
    if arr.ndim <= 1 or new_name.endswith("_norm.weight") or new_name == pos \
            or new_name[-7:] not in (".weight", ".lora_a", ".lora_b"):
        return Q.F32
    return Q.F16


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hf_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=("f32", "f16"), default="f16")
    a = ap.parse_args()
    gguf = load_gguf_py()
    import numpy as np
    try:
        with open(os.path.join(a.hf_dir, "config.json")) as f:
            cfg = json.load(f)
        with open(os.path.join(a.hf_dir, "preprocessor_config.json")) as f:
            pre = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{a.hf_dir}: {e}", 1)
    vc = cfg.get("vision_config")
    if not vc:
        fail(f"{a.hf_dir}/config.json: no vision_config", 1)
    tc = {**cfg, **cfg.get("text_config", {})}
    hf = read_safetensors(a.hf_dir, np)

    LFT = gguf.LlamaFileType
    ftype = LFT.ALL_F32 if a.type == "f32" else LFT.MOSTLY_F16
    w = gguf.GGUFWriter(path=None, arch=gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.MMPROJ])
    w.add_type(gguf.GGUFType.MMPROJ)
    w.add_name(os.path.basename(os.path.normpath(a.hf_dir)))
    w.add_file_type(ftype)
    w.add_clip_has_vision_encoder(True)
    w.add_vision_projection_dim(tc["hidden_size"])
    patch = vc.get("patch_size", 16)
    w.add_vision_image_size(vc.get("image_size", int(vc.get("num_position_embeddings", 2304) ** 0.5 * patch)))
    w.add_vision_patch_size(patch)
    w.add_vision_embedding_length(vc["hidden_size"])
    w.add_vision_feed_forward_length(vc["intermediate_size"])
    w.add_vision_block_count(vc["depth"])
    w.add_vision_head_count(vc["num_heads"])
    w.add_vision_image_mean(pre["image_mean"])
    w.add_vision_image_std(pre["image_std"])
    w.add_clip_projector_type(gguf.VisionProjectorType.QWEN3VL)
    w.add_vision_use_gelu(True)
    if vc.get("spatial_merge_size") is not None:
        w.add_vision_spatial_merge_size(int(vc["spatial_merge_size"]))
    w.add_vision_attention_layernorm_eps(cfg.get("text_config", {}).get("rms_norm_eps", 1e-6))
    deepstack = [False] * vc["depth"]
    for i in vc.get("deepstack_visual_indexes", []):
        deepstack[i] = True
    if deepstack:
        w.add_vision_is_deepstack_layers(deepstack)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)

    for name, arr in vision_tensors(gguf, hf, vc["depth"]):
        qtype = tensor_type(gguf, name, arr, a.type)
        data = gguf.quants.quantize(np.ascontiguousarray(arr, dtype=np.float32), qtype)
        w.add_tensor(name, data, raw_dtype=qtype)
    w.write_header_to_file(path=a.out)
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
