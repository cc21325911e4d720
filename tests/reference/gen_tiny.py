#!/usr/bin/env python3
"""Writes a tiny random Qwen3.5 checkpoint of the real architecture (spec §1-§4, §8) in three forms:

  DIR/hf/               config.json, model.safetensors (bf16; sharded + index for some presets),
                        tokenizer.json, tokenizer_config.json, preprocessor_config.json,
                        video_preprocessor_config.json, generation_config.json
  DIR/model-f32.gguf    text model as llama.cpp's converter writes it (spec §11.2-§11.4), all F32
  DIR/model-f16.gguf    same, 2-D weights F16 (1-D, norms, conv1d stay F32 as in the converter)
  DIR/mmproj-f16.gguf   vision tower + merger in llama.cpp mmproj naming (spec §11.6); --mmproj-types
                        f32,f16,bf16,q8_0 writes DIR/mmproj-{type}.gguf for each type listed

Usage: gen_tiny.py --out DIR [--preset tiny|tiny-gqa|tiny-untied] [--seed N] [--vision hd64|hd72|big]
                   [--mmproj-types f16]
The presets' own vision towers have head dim 16; --vision swaps in a tower with the real models' head dim
(hd64: 0.8B/2B/4B, hd72: 9B) at tiny depth and width. Text weights are drawn before vision weights, so they are
the preset's own for a given seed; the MTP block, drawn after the tower, then differs.
Every weight is a bf16 value that f16 also represents exactly, so the HF, F32 and F16 files hold identical
numbers (zero-centred norm weights are kept where 1+w is exact in f32 too).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import numpy as np  # noqa: E402

import hf2gguf  # noqa: E402
import safetensors  # noqa: E402
import tiny_tokenizer  # noqa: E402
from gguf import bf16_round  # noqa: E402

# Sizes are tiny but keep every structural feature (spec §1.1): hybrid schedule with full attention at
# (i+1) % 4 == 0, GQA ratio 4 in attention, partial rotary 0.25 with interleaved MRoPE sections scaled to
# n_rot/2, GDN head sizes llama.cpp's kernels accept (16/32), Hv = 2*Hk in tiny-gqa, MTP block, vision depth 2.
PRESETS = {
    "tiny": dict(hidden=64, layers=4, inter=176, heads=4, kv_heads=1, head_dim=64, lin_k_heads=4,
                 lin_v_heads=4, lin_dim=16, merges=150, tie=True, shards=1,
                 vision=dict(depth=2, hidden=32, heads=2, inter=64, model_type="qwen3_5")),
    "tiny-gqa": dict(hidden=96, layers=8, inter=224, heads=8, kv_heads=2, head_dim=32, lin_k_heads=2,
                     lin_v_heads=4, lin_dim=32, merges=200, tie=True, shards=2,
                     vision=dict(depth=2, hidden=64, heads=4, inter=128, model_type="qwen3_5_vision")),
    "tiny-untied": dict(hidden=128, layers=4, inter=320, heads=4, kv_heads=1, head_dim=64, lin_k_heads=4,
                        lin_v_heads=4, lin_dim=32, merges=250, tie=False, shards=1,
                        vision=dict(depth=2, hidden=32, heads=2, inter=96, model_type="qwen3_5_vision")),
}

# Vision towers with the real head dims (spec §1.1 table). hd72's widths mirror the 9B's awkward ones: 288 is
# whole Q8_0 blocks, the MLP width 272 is not (like 4304), so a Q8_0 mmproj keeps ffn_down in F16 there too.
VISION_PRESETS = {
    "hd64": dict(depth=2, hidden=128, heads=2, inter=320, model_type="qwen3_5_vision"),
    "hd72": dict(depth=2, hidden=288, heads=4, inter=272, model_type="qwen3_5_vision"),
    # a tower far larger than the tiny text model (about 67M weights, 134 MB in bf16), so that whether a run
    # loaded it shows in the process's peak memory (tests/cli/lazy_tower.c)
    "big": dict(depth=4, hidden=1024, heads=16, inter=4096, model_type="qwen3_5_vision"),
}

ROPE_THETA = 10000000.0          # spec §1.1
MAX_POS = 262144                 # spec §1.1
POS_EMBED_ROWS = 2304            # 48 x 48 learned grid, spec §4.3 (kept at full size)


def mrope_sections(n_freq):
    """Scale the real [11, 11, 10] (32 frequencies) to n_freq, keeping T >= H >= W and the sum exact."""
    t = -(-n_freq // 3)
    h = -(-(n_freq - t) // 2)
    return [t, h, n_freq - t - h]


def build_config(p, tok):
    n_tok = len(tok)
    vocab_size = (n_tok // 64 + 1) * 64        # padding rows past the tokenizer, as in the real 248320
    L = p["layers"]
    layer_types = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(L)]
    n_rot = int(p["head_dim"] * 0.25)
    ids = {s: tok.id_of(s) for s in ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>",
                                      "<|vision_end|>", "<|endoftext|>", "<|im_end|>")}
    text = {
        "model_type": "qwen3_5_text",
        "vocab_size": vocab_size,
        "hidden_size": p["hidden"],
        "intermediate_size": p["inter"],
        "num_hidden_layers": L,
        "num_attention_heads": p["heads"],
        "num_key_value_heads": p["kv_heads"],
        "head_dim": p["head_dim"],
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_output_gate": True,
        "linear_num_key_heads": p["lin_k_heads"],
        "linear_num_value_heads": p["lin_v_heads"],
        "linear_key_head_dim": p["lin_dim"],
        "linear_value_head_dim": p["lin_dim"],
        "linear_conv_kernel_dim": 4,
        "full_attention_interval": 4,
        "layer_types": layer_types,
        "max_position_embeddings": MAX_POS,
        "rope_parameters": {"rope_type": "default", "rope_theta": ROPE_THETA, "partial_rotary_factor": 0.25,
                            "mrope_section": mrope_sections(n_rot // 2), "mrope_interleaved": True},
        "eos_token_id": ids["<|endoftext|>"],
        "tie_word_embeddings": p["tie"],
        "mtp_num_hidden_layers": 1,
        "mtp_use_dedicated_embeddings": False,
        "initializer_range": 0.02,
        "use_cache": True,
        "dtype": "bfloat16",
    }
    v = p["vision"]
    vision = {
        "model_type": v["model_type"],
        "depth": v["depth"],
        "hidden_size": v["hidden"],
        "num_heads": v["heads"],
        "intermediate_size": v["inter"],
        "out_hidden_size": p["hidden"],
        "hidden_act": "gelu_pytorch_tanh",
        "in_channels": 3,
        "patch_size": 16,
        "temporal_patch_size": 2,
        "spatial_merge_size": 2,
        "num_position_embeddings": POS_EMBED_ROWS,
        "deepstack_visual_indexes": [],
        "initializer_range": 0.02,
    }
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "tie_word_embeddings": p["tie"],
        "text_config": text,
        "vision_config": vision,
        "transformers_version": "5.0.0",
    }


class Init:
    """Random init with bf16 values that f16 and f32 (1+w) represent exactly (see module doc)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    @staticmethod
    def exact(x):
        x = bf16_round(np.asarray(x, dtype=np.float32))
        # Values below f16's normal range: move onto the f16 subnormal grid, then back onto bf16's; the
        # result lies on both grids (module doc).
        small = np.abs(x) < 2.0 ** -14
        if small.any():
            x[small] = bf16_round(x[small].astype(np.float16).astype(np.float32))
        assert np.array_equal(x.astype(np.float16).astype(np.float32), x)
        return x

    def normal(self, shape, std, mean=0.0):
        return self.exact(self.rng.normal(mean, std, size=shape))

    def linear(self, out, inp, gain=1.0):
        # gain / sqrt(fan_in): outputs of O(gain) for unit-RMS inputs, so activations stay O(1).
        return self.normal((out, inp), gain / np.sqrt(inp))

    def zc_norm(self, n, mean=0.0, std=0.1):
        """Zero-centred RMSNorm weight (effective scale 1 + w, spec §2.3)."""
        w = self.normal((n,), std, mean)
        w[np.abs(w) < 2.0 ** -16] = 0.0   # keeps 1 + w exact in f32 (converter adds 1, spec §11.4)
        return w


def gen_weights(p, cfg, seed):
    """HF-named bf16-exact float32 tensors (spec §8), in checkpoint order."""
    ini = Init(seed)
    tc = cfg["text_config"]
    H, I, V = tc["hidden_size"], tc["intermediate_size"], tc["vocab_size"]
    nh, nkv, hd = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
    Hk, Hv, dk = tc["linear_num_key_heads"], tc["linear_num_value_heads"], tc["linear_key_head_dim"]
    dv = tc["linear_value_head_dim"]
    CD, VD = 2 * Hk * dk + Hv * dv, Hv * dv
    w = {}
    lm = "model.language_model."
    # Embeddings small against layer outputs (O(1)), so the residual stream is not dominated by the
    # current token's own row (with a tied head that would make every step repeat its input). The final
    # norm then scales the normed state so logits have std ~3: peaked, never flat, rarely one-hot.
    emb_std = 0.05
    w[lm + "embed_tokens.weight"] = ini.normal((V, H), emb_std)

    def attn_block(prefix):
        w[prefix + "self_attn.q_proj.weight"] = ini.linear(2 * nh * hd, H)   # per-head [q | gate], §2.6
        w[prefix + "self_attn.k_proj.weight"] = ini.linear(nkv * hd, H)
        w[prefix + "self_attn.v_proj.weight"] = ini.linear(nkv * hd, H)
        w[prefix + "self_attn.o_proj.weight"] = ini.linear(H, nh * hd)
        w[prefix + "self_attn.q_norm.weight"] = ini.zc_norm(hd)
        w[prefix + "self_attn.k_norm.weight"] = ini.zc_norm(hd)

    def mlp_block(prefix):
        w[prefix + "mlp.gate_proj.weight"] = ini.linear(I, H, 1.5)
        w[prefix + "mlp.up_proj.weight"] = ini.linear(I, H, 1.5)
        w[prefix + "mlp.down_proj.weight"] = ini.linear(H, I)

    for i, kind in enumerate(tc["layer_types"]):
        pre = f"{lm}layers.{i}."
        w[pre + "input_layernorm.weight"] = ini.zc_norm(H)
        w[pre + "post_attention_layernorm.weight"] = ini.zc_norm(H)
        if kind == "linear_attention":
            la = pre + "linear_attn."
            w[la + "in_proj_qkv.weight"] = ini.linear(CD, H)
            w[la + "in_proj_z.weight"] = ini.linear(VD, H)
            w[la + "in_proj_b.weight"] = ini.linear(Hv, H)          # beta = sigmoid(b): 5-95% in (0.15, 0.85)
            w[la + "in_proj_a.weight"] = ini.linear(Hv, H, 1.5)
            w[la + "conv1d.weight"] = ini.normal((CD, 1, 4), 0.4)
            # Realistic GDN ranges (Mamba/GDN init): A in [1, 16], dt in [1e-3, 1e-1] through softplus.
            # Measured per-step decays exp(g): median 0.94, 5-95% in (0.15, 0.998): long and short memory.
            dt = np.exp(ini.rng.uniform(np.log(1e-3), np.log(1e-1), size=Hv))
            w[la + "dt_bias"] = ini.exact(dt + np.log(-np.expm1(-dt)))
            w[la + "A_log"] = ini.exact(np.log(ini.rng.uniform(1.0, 16.0, size=Hv)))
            w[la + "norm.weight"] = ini.normal((dv,), 0.1, 1.0)       # plain weight (not 1 + w), §2.3
            w[la + "out_proj.weight"] = ini.linear(H, VD)
        else:
            attn_block(pre)
        mlp_block(pre)
    # Tied: logits = E . (1 + w) * normed -> std = emb_std * sqrt(H) * (1 + w); choose 1 + w for std 3.
    final_mean = 3.0 / (emb_std * np.sqrt(H)) - 1.0 if p["tie"] else 0.0
    w[lm + "norm.weight"] = ini.zc_norm(H, mean=final_mean)
    if not p["tie"]:
        w["lm_head.weight"] = ini.linear(V, H, 3.0)

    # Vision tower + merger (spec §4, names §8).
    vc = cfg["vision_config"]
    Dv, Iv = vc["hidden_size"], vc["intermediate_size"]
    vis = "model.visual."
    w[vis + "patch_embed.proj.weight"] = ini.normal((Dv, 3, 2, 16, 16), 1.0 / np.sqrt(1536))
    w[vis + "patch_embed.proj.bias"] = ini.normal((Dv,), 0.02)
    w[vis + "pos_embed.weight"] = ini.normal((POS_EMBED_ROWS, Dv), 0.1)
    for j in range(vc["depth"]):
        b = f"{vis}blocks.{j}."
        for n in ("norm1", "norm2"):
            w[b + n + ".weight"] = ini.normal((Dv,), 0.1, 1.0)
            w[b + n + ".bias"] = ini.normal((Dv,), 0.02)
        w[b + "attn.qkv.weight"] = ini.linear(3 * Dv, Dv)
        w[b + "attn.qkv.bias"] = ini.normal((3 * Dv,), 0.02)
        w[b + "attn.proj.weight"] = ini.linear(Dv, Dv)
        w[b + "attn.proj.bias"] = ini.normal((Dv,), 0.02)
        w[b + "mlp.linear_fc1.weight"] = ini.linear(Iv, Dv)
        w[b + "mlp.linear_fc1.bias"] = ini.normal((Iv,), 0.02)
        w[b + "mlp.linear_fc2.weight"] = ini.linear(Dv, Iv)
        w[b + "mlp.linear_fc2.bias"] = ini.normal((Dv,), 0.02)
    w[vis + "merger.norm.weight"] = ini.normal((Dv,), 0.1, 1.0)
    w[vis + "merger.norm.bias"] = ini.normal((Dv,), 0.02)
    w[vis + "merger.linear_fc1.weight"] = ini.linear(4 * Dv, 4 * Dv)
    w[vis + "merger.linear_fc1.bias"] = ini.normal((4 * Dv,), 0.02)
    w[vis + "merger.linear_fc2.weight"] = ini.linear(H, 4 * Dv)
    w[vis + "merger.linear_fc2.bias"] = ini.normal((H,), 0.02)

    # MTP block (spec §7/§8): norms zero-centred, one full-attention layer.
    w["mtp.fc.weight"] = ini.linear(H, 2 * H)
    w["mtp.pre_fc_norm_embedding.weight"] = ini.zc_norm(H)
    w["mtp.pre_fc_norm_hidden.weight"] = ini.zc_norm(H)
    w["mtp.layers.0.input_layernorm.weight"] = ini.zc_norm(H)
    w["mtp.layers.0.post_attention_layernorm.weight"] = ini.zc_norm(H)
    attn_block("mtp.layers.0.")
    mlp_block("mtp.layers.0.")
    w["mtp.norm.weight"] = ini.zc_norm(H)
    return w


def preprocessor_configs():
    """The releases' preprocessor_config.json and video_preprocessor_config.json (spec §5.1, §5.3); also the
    settings hf_make.py gives transformers' own processors."""
    mean_std = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}   # spec §5.1
    common = {"do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
              "rescale_factor": 1 / 255, "resample": 3, "patch_size": 16, "temporal_patch_size": 2,
              "merge_size": 2, **mean_std, "processor_class": "Qwen3VLProcessor"}
    image = {**common, "size": {"shortest_edge": 65536, "longest_edge": 16777216},
             "image_processor_type": "Qwen2VLImageProcessorFast"}
    video = {**common, "size": {"shortest_edge": 4096, "longest_edge": 25165824},        # spec §5.3
             "video_processor_type": "Qwen3VLVideoProcessor", "fps": 2, "min_frames": 4, "max_frames": 768,
             "do_sample_frames": True}
    return image, video


def write_hf(hf_dir, cfg, weights, tok, shards):
    os.makedirs(hf_dir, exist_ok=True)
    with open(os.path.join(hf_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    if shards > 1:
        safetensors.write_sharded(hf_dir, weights, shards, "BF16")
    else:
        safetensors.write(os.path.join(hf_dir, "model.safetensors"), weights, "BF16", {"format": "pt"})
    tiny_tokenizer.write_files(tok, hf_dir, MAX_POS)
    image, video = preprocessor_configs()
    gen = {"bos_token_id": tok.id_of("<|endoftext|>"), "pad_token_id": tok.id_of("<|endoftext|>"),
           "eos_token_id": [tok.id_of("<|im_end|>"), tok.id_of("<|endoftext|>")],     # spec §6.1
           "do_sample": True, "temperature": 1.0, "top_p": 1.0, "top_k": 20, "transformers_version": "5.0.0"}
    for name, obj in (("preprocessor_config.json", image), ("video_preprocessor_config.json", video),
                      ("generation_config.json", gen)):
        with open(os.path.join(hf_dir, name), "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")


def generate(out, preset="tiny", seed=1234, gguf=True, vision=None, mmproj_types=("f16",)):
    p = PRESETS[preset] if vision is None else {**PRESETS[preset], "vision": VISION_PRESETS[vision]}
    tok = tiny_tokenizer.TinyTokenizer(p["merges"])
    cfg = build_config(p, tok)
    weights = gen_weights(p, cfg, seed)
    hf_dir = os.path.join(out, "hf")
    write_hf(hf_dir, cfg, weights, tok, p["shards"])
    if gguf:
        name = f"seer-{preset}-seed{seed}"
        hf2gguf.convert_text(hf_dir, os.path.join(out, "model-f32.gguf"), "f32", name)
        hf2gguf.convert_text(hf_dir, os.path.join(out, "model-f16.gguf"), "f16", name)
        if vision:
            name += f"-vision-{vision}"
        for t in mmproj_types:
            hf2gguf.convert_mmproj(hf_dir, os.path.join(out, f"mmproj-{t}.gguf"), t, name)
    return hf_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--no-gguf", action="store_true", help="write only the HF directory")
    ap.add_argument("--vision", choices=sorted(VISION_PRESETS), help="vision tower with head dim 64 or 72, or a big one")
    ap.add_argument("--mmproj-types", default="f16", help="comma-separated: " + ",".join(hf2gguf.MMPROJ_FTYPES))
    a = ap.parse_args()
    types = [t for t in a.mmproj_types.split(",") if t]
    bad = [t for t in types if t not in hf2gguf.MMPROJ_FTYPES]
    if bad or not types:
        ap.error(f"--mmproj-types: unknown {bad}; choose from {','.join(hf2gguf.MMPROJ_FTYPES)}")
    os.makedirs(a.out, exist_ok=True)
    generate(a.out, a.preset, a.seed, not a.no_gguf, a.vision, types)
    print(f"gen_tiny: wrote preset {a.preset} (seed {a.seed}{', vision ' + a.vision if a.vision else ''}) "
          f"to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
