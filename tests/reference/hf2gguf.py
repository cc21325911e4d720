"""HF Qwen3.5 directory -> GGUF, following llama.cpp's converter conventions (docs/MODEL.md
§11.2-§11.4 for the text file `qwen35`, §11.6 for the `qwen3vl_merger` mmproj). Written from those notes (and the
converter's behaviour they describe), not copied: metadata keys and types, tensor names, and transforms —
zero-centred norms +1 (not linear_attn.norm), ssm_a = -exp(A_log), conv1d squeezed to ne {K, conv_dim},
dt_bias -> ssm_dt.bias, V heads reordered from grouped to tiled order when Hv > Hk, MTP block as layer L
(nextn.*). Which tensors stay F32 in an F16 file also follows the converter: 1-D tensors, *_norm.weight,
ssm_conv1d, position embeddings, anything not named *.weight. The mmproj can be written F32, F16, BF16 or
Q8_0 with the converter's choices for llama.cpp's MmprojModel: the patch embedding is F16 in an F16 file and
F32 in every other; 1-D tensors, biases and the position embedding stay F32; a Q8_0 tensor whose rows are not
whole 32-value blocks falls back to F16 (as gguf-py's QuantError path does; the real 9B ffn_down, 4304 wide).
"""

import json
import os

import numpy as np

import gguf as G
import safetensors

_TOKEN_NORMAL, _TOKEN_CONTROL, _TOKEN_USER_DEFINED, _TOKEN_UNUSED = 1, 3, 4, 5
_FTYPES = {"f32": (0, G.GGML_F32), "f16": (1, G.GGML_F16)}   # general.file_type ALL_F32 / MOSTLY_F16
# general.file_type (llama_ftype) and tensor type of each mmproj output type.
MMPROJ_FTYPES = {"f32": (0, G.GGML_F32), "f16": (1, G.GGML_F16), "q8_0": (7, G.GGML_Q8_0),
                 "bf16": (32, G.GGML_BF16)}


def _load(hf_dir):
    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    return cfg, safetensors.read_dir(hf_dir)


def reorder_v_heads(x, axis, n_k, n_v_per_k, head_dim):
    """Grouped order [G0v0..G0v(r-1), G1v0, ...] -> tiled [G0v0, G1v0, ..., G0v1, G1v1, ...] along axis
    (spec §11.4 item 6): split the axis as (n_k, r, head_dim) and swap the first two."""
    x = np.asarray(x)
    axis %= x.ndim
    shp = x.shape
    y = x.reshape(shp[:axis] + (n_k, n_v_per_k, head_dim) + shp[axis + 1:])
    return np.swapaxes(y, axis, axis + 1).reshape(shp)


def _text_tensor_type(gname, arr, ftype_tensor):
    if ftype_tensor == G.GGML_F32:
        return G.GGML_F32
    if arr.ndim <= 1 or gname.endswith("_norm.weight") or ".ssm_conv1d." in gname \
            or not gname.endswith(".weight"):
        return G.GGML_F32
    return ftype_tensor


def text_tensors(cfg, hf):
    """Yields (gguf name, float32 array in PyTorch order) for the text model + MTP block."""
    tc = {**cfg, **cfg.get("text_config", {})}
    L = tc["num_hidden_layers"]
    Hk, Hv = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
    dk, dv = tc["linear_key_head_dim"], tc["linear_value_head_dim"]
    r = Hv // Hk
    lm = "model.language_model."

    def norm1(x):  # zero-centred RMSNorm weight stored as 1 + w (spec §2.3, spec §11.4 item 2)
        return (x.astype(np.float32) + np.float32(1.0)).astype(np.float32)

    def vre(x, axis, hd):
        return reorder_v_heads(x, axis, Hk, r, hd) if Hv != Hk else x

    yield "token_embd.weight", hf[lm + "embed_tokens.weight"]

    def attn_and_mlp(src, blk):
        yield f"{blk}.attn_q.weight", hf[src + "self_attn.q_proj.weight"]
        yield f"{blk}.attn_k.weight", hf[src + "self_attn.k_proj.weight"]
        yield f"{blk}.attn_v.weight", hf[src + "self_attn.v_proj.weight"]
        yield f"{blk}.attn_output.weight", hf[src + "self_attn.o_proj.weight"]
        yield f"{blk}.attn_q_norm.weight", norm1(hf[src + "self_attn.q_norm.weight"])
        yield f"{blk}.attn_k_norm.weight", norm1(hf[src + "self_attn.k_norm.weight"])

    def common(src, blk):
        yield f"{blk}.attn_norm.weight", norm1(hf[src + "input_layernorm.weight"])
        yield f"{blk}.post_attention_norm.weight", norm1(hf[src + "post_attention_layernorm.weight"])
        yield f"{blk}.ffn_gate.weight", hf[src + "mlp.gate_proj.weight"]
        yield f"{blk}.ffn_up.weight", hf[src + "mlp.up_proj.weight"]
        yield f"{blk}.ffn_down.weight", hf[src + "mlp.down_proj.weight"]

    for i in range(L):
        src, blk = f"{lm}layers.{i}.", f"blk.{i}"
        yield from common(src, blk)
        la = src + "linear_attn."
        if la + "in_proj_qkv.weight" in hf:
            qkv = hf[la + "in_proj_qkv.weight"]
            kd = Hk * dk
            yield f"{blk}.attn_qkv.weight", np.concatenate([qkv[:2 * kd], vre(qkv[2 * kd:], 0, dv)], 0)
            yield f"{blk}.attn_gate.weight", vre(hf[la + "in_proj_z.weight"], 0, dv)
            yield f"{blk}.ssm_beta.weight", vre(hf[la + "in_proj_b.weight"], 0, 1)
            yield f"{blk}.ssm_alpha.weight", vre(hf[la + "in_proj_a.weight"], 0, 1)
            conv = hf[la + "conv1d.weight"].reshape(hf[la + "conv1d.weight"].shape[0], -1)   # [C,1,K] -> [C,K]
            yield f"{blk}.ssm_conv1d.weight", np.concatenate([conv[:2 * kd], vre(conv[2 * kd:], 0, dv)], 0)
            yield f"{blk}.ssm_dt.bias", vre(hf[la + "dt_bias"], 0, 1)
            a_log = hf[la + "A_log"].astype(np.float32)
            yield f"{blk}.ssm_a", vre(-np.exp(a_log), 0, 1)                  # spec §11.4 item 1
            yield f"{blk}.ssm_norm.weight", hf[la + "norm.weight"]           # plain weight, no +1
            yield f"{blk}.ssm_out.weight", vre(hf[la + "out_proj.weight"], 1, dv)
        else:
            yield from attn_and_mlp(src, blk)

    if "mtp.fc.weight" in hf:
        blk = f"blk.{L}"
        yield from common("mtp.layers.0.", blk)
        yield from attn_and_mlp("mtp.layers.0.", blk)
        yield f"{blk}.nextn.eh_proj.weight", hf["mtp.fc.weight"]
        yield f"{blk}.nextn.enorm.weight", norm1(hf["mtp.pre_fc_norm_embedding.weight"])
        yield f"{blk}.nextn.hnorm.weight", norm1(hf["mtp.pre_fc_norm_hidden.weight"])
        yield f"{blk}.nextn.shared_head_norm.weight", norm1(hf["mtp.norm.weight"])

    yield "output_norm.weight", norm1(hf[lm + "norm.weight"])
    if "lm_head.weight" in hf:
        yield "output.weight", hf["lm_head.weight"]


def _vocab(hf_dir, vocab_size):
    with open(os.path.join(hf_dir, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    with open(os.path.join(hf_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        tcfg = json.load(f)
    rev = {i: s for s, i in tj["model"]["vocab"].items()}
    added = {a["id"]: a for a in tj["added_tokens"]}
    tokens, types = [], []
    for i in range(vocab_size):
        if i in added:
            s = added[i]["content"]
            looks_special = s.startswith("<|") and s.endswith("|>")
            tokens.append(s)
            types.append(_TOKEN_CONTROL if added[i]["special"] or looks_special else _TOKEN_USER_DEFINED)
        elif i in rev:
            tokens.append(rev[i])
            types.append(_TOKEN_NORMAL)
        else:
            tokens.append(f"[PAD{i}]")           # rows past the tokenizer (spec §2.7)
            types.append(_TOKEN_UNUSED)
    merges = [" ".join(m) if isinstance(m, list) else m for m in tj["model"]["merges"]]
    by_content = {a["content"]: a["id"] for a in tj["added_tokens"]}
    special = {}
    for typ in ("bos", "eos", "unk", "sep", "pad", "cls", "mask"):
        v = tcfg.get(f"{typ}_token")
        if isinstance(v, dict):
            v = v.get("content")
        if isinstance(v, str) and v in by_content:
            special[typ] = by_content[v]
    return tokens, types, merges, special, tcfg


def convert_text(hf_dir, out_path, ftype="f32", name="seer-tiny"):
    cfg, hf = _load(hf_dir)
    tc = {**cfg, **cfg.get("text_config", {})}
    file_type, ttype = _FTYPES[ftype]
    L = tc["num_hidden_layers"]
    n_mtp = tc.get("mtp_num_hidden_layers", 0) if "mtp.fc.weight" in hf else 0
    rope = tc["rope_parameters"]
    arch = "qwen35"
    w = G.GGUFWriter()
    w.add_string("general.architecture", arch)
    w.add_string("general.type", "model")
    w.add_string("general.name", name)
    w.add_u32(f"{arch}.block_count", L + n_mtp)
    w.add_u32(f"{arch}.context_length", tc["max_position_embeddings"])
    w.add_u32(f"{arch}.embedding_length", tc["hidden_size"])
    w.add_u32(f"{arch}.feed_forward_length", tc["intermediate_size"])
    w.add_u32(f"{arch}.attention.head_count", tc["num_attention_heads"])
    w.add_u32(f"{arch}.attention.head_count_kv", tc["num_key_value_heads"])
    sections = list(rope.get("mrope_section", [11, 11, 10])) + [0] * 4
    w.add_array(f"{arch}.rope.dimension_sections", G.INT32, sections[:4])
    w.add_f32(f"{arch}.rope.freq_base", rope["rope_theta"])
    w.add_f32(f"{arch}.attention.layer_norm_rms_epsilon", tc["rms_norm_eps"])
    w.add_u32(f"{arch}.attention.key_length", tc["head_dim"])
    w.add_u32(f"{arch}.attention.value_length", tc["head_dim"])
    w.add_u32("general.file_type", file_type)
    w.add_u32(f"{arch}.ssm.conv_kernel", tc["linear_conv_kernel_dim"])
    w.add_u32(f"{arch}.ssm.state_size", tc["linear_key_head_dim"])
    w.add_u32(f"{arch}.ssm.group_count", tc["linear_num_key_heads"])
    w.add_u32(f"{arch}.ssm.time_step_rank", tc["linear_num_value_heads"])
    w.add_u32(f"{arch}.ssm.inner_size", tc["linear_value_head_dim"] * tc["linear_num_value_heads"])
    if "layer_types" in tc:
        rec = [t == "linear_attention" for t in tc["layer_types"]] + [False] * n_mtp
        w.add_array(f"{arch}.attention.recurrent_layers", G.BOOL, rec)
    w.add_u32(f"{arch}.full_attention_interval", tc.get("full_attention_interval", 4))
    w.add_u32(f"{arch}.rope.dimension_count", int(tc["head_dim"] * rope.get("partial_rotary_factor", 0.25)))
    if n_mtp:
        w.add_u32(f"{arch}.nextn_predict_layers", n_mtp)

    tokens, types, merges, special, tcfg = _vocab(hf_dir, tc["vocab_size"])
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_string("tokenizer.ggml.pre", "qwen35")
    w.add_array("tokenizer.ggml.tokens", G.STRING, tokens)
    w.add_array("tokenizer.ggml.token_type", G.INT32, types)
    w.add_array("tokenizer.ggml.merges", G.STRING, merges)
    # gguf key names (llama.cpp spells "seperator"); cls has no key, the converter skips it.
    key = {"bos": "bos", "eos": "eos", "unk": "unknown", "sep": "seperator", "pad": "padding", "mask": "mask"}
    for typ, tid in special.items():
        if typ in key:
            w.add_u32(f"tokenizer.ggml.{key[typ]}_token_id", tid)
    if isinstance(tcfg.get("add_bos_token"), bool):
        w.add_bool("tokenizer.ggml.add_bos_token", tcfg["add_bos_token"])
    if isinstance(tcfg.get("add_eos_token"), bool):
        w.add_bool("tokenizer.ggml.add_eos_token", tcfg["add_eos_token"])
    if tcfg.get("chat_template"):
        w.add_string("tokenizer.chat_template", tcfg["chat_template"])
    w.add_u32("general.quantization_version", 2)

    for gname, arr in text_tensors(cfg, hf):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        w.add_tensor(gname, arr, _text_tensor_type(gname, arr, ttype))
    w.write(out_path)


def mmproj_tensors(cfg, hf):
    vc = cfg["vision_config"]
    v = "model.visual."
    pw = hf[v + "patch_embed.proj.weight"]                  # [Dv, 3, 2, 16, 16]
    if pw.shape[2] != 2:
        raise ValueError("mmproj: temporal_patch_size must be 2 (spec §11.6)")
    yield "v.patch_embd.weight", pw[:, :, 0]                 # split Conv3D along time into two Conv2D
    yield "v.patch_embd.weight.1", pw[:, :, 1]
    yield "v.patch_embd.bias", hf[v + "patch_embed.proj.bias"]
    yield "v.position_embd.weight", hf[v + "pos_embed.weight"]
    names = {"norm1": "ln1", "norm2": "ln2", "attn.qkv": "attn_qkv", "attn.proj": "attn_out",
             "mlp.linear_fc1": "ffn_up", "mlp.linear_fc2": "ffn_down"}
    for j in range(vc["depth"]):
        for hfn, gn in names.items():
            for suf in ("weight", "bias"):
                yield f"v.blk.{j}.{gn}.{suf}", hf[f"{v}blocks.{j}.{hfn}.{suf}"]
    for hfn, gn in (("merger.norm", "v.post_ln"), ("merger.linear_fc1", "mm.0"), ("merger.linear_fc2", "mm.2")):
        for suf in ("weight", "bias"):
            yield f"{gn}.{suf}", hf[f"{v}{hfn}.{suf}"]


def quantize_q8_0(x):
    """float32 rows -> Q8_0 blocks (ggml block_q8_0: f16 scale d, 32 int8), as ggml's reference quantiser and
    gguf-py do it: d = max|x| / 127 in f32, q = x * (1/d) rounded half away from zero (a product with the
    reciprocal, not a division: the two round differently at exact halves), d stored as f16."""
    b = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, np.float32(0), np.float32(1) / d)
    r = b * inv
    a = np.abs(r)
    q = np.sign(r) * (np.floor(a) + (a - np.floor(a) >= 0.5))
    return np.concatenate([d.astype("<f2").view(np.uint8), q.astype(np.int8).view(np.uint8)], axis=1).tobytes()


def dequantize_q8_0(raw, shape):
    """Inverse of quantize_q8_0 (d * q per block), float32 in PyTorch order."""
    blk = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
    d = blk[:, :2].copy().view("<f2").astype(np.float32)
    q = blk[:, 2:].copy().view(np.int8).astype(np.float32)
    return (d * q).reshape(shape)


def mmproj_tensor_type(gname, arr, ftype):
    """Tensor type llama.cpp's converter picks in an mmproj of output type ftype (module doc)."""
    ttype = MMPROJ_FTYPES[ftype][1]
    if gname.startswith("v.patch_embd.weight"):
        return G.GGML_F16 if ftype == "f16" else G.GGML_F32
    if arr.ndim <= 1 or gname == "v.position_embd.weight" or not gname.endswith(".weight"):
        return G.GGML_F32
    if ttype == G.GGML_Q8_0 and arr.shape[-1] % 32:
        return G.GGML_F16
    return ttype


def convert_mmproj(hf_dir, out_path, ftype="f16", name="seer-tiny"):
    cfg, hf = _load(hf_dir)
    vc = cfg["vision_config"]
    tc = cfg.get("text_config", cfg)
    file_type = MMPROJ_FTYPES[ftype][0]
    with open(os.path.join(hf_dir, "preprocessor_config.json")) as f:
        pre = json.load(f)
    w = G.GGUFWriter()
    w.add_string("general.architecture", "clip")
    w.add_string("general.type", "mmproj")
    w.add_string("general.name", name)
    w.add_u32("general.file_type", file_type)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_u32("clip.vision.projection_dim", tc["hidden_size"])
    image_size = vc.get("image_size", int(vc.get("num_position_embeddings", 2304) ** 0.5 * vc["patch_size"]))
    w.add_u32("clip.vision.image_size", image_size)
    w.add_u32("clip.vision.patch_size", vc["patch_size"])
    w.add_u32("clip.vision.embedding_length", vc["hidden_size"])
    w.add_u32("clip.vision.feed_forward_length", vc["intermediate_size"])
    w.add_u32("clip.vision.block_count", vc["depth"])
    w.add_u32("clip.vision.attention.head_count", vc["num_heads"])
    w.add_array("clip.vision.image_mean", G.FLOAT32, pre["image_mean"])
    w.add_array("clip.vision.image_std", G.FLOAT32, pre["image_std"])
    w.add_string("clip.projector_type", "qwen3vl_merger")
    w.add_bool("clip.use_gelu", True)
    w.add_u32("clip.vision.spatial_merge_size", vc["spatial_merge_size"])
    w.add_f32("clip.vision.attention.layer_norm_epsilon", tc.get("rms_norm_eps", 1e-6))
    deepstack = [False] * vc["depth"]
    for i in vc.get("deepstack_visual_indexes", []):
        deepstack[i] = True
    w.add_array("clip.vision.is_deepstack_layers", G.BOOL, deepstack)
    w.add_u32("general.quantization_version", 2)
    for gname, arr in mmproj_tensors(cfg, hf):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        t = mmproj_tensor_type(gname, arr, ftype)
        if t == G.GGML_Q8_0:
            w.add_tensor_raw(gname, tuple(reversed(arr.shape)), t, quantize_q8_0(arr))
        else:
            w.add_tensor(gname, arr, t)
    w.write(out_path)
