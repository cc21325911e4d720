"""Tiny random Qwen3.5 checkpoints written by Hugging Face transformers itself (issue 21 item 2).

Run by the reference venv's python (scripts/reference-venv.sh). Each model is built from a config object
(Qwen3_5Config with Qwen3_5TextConfig and Qwen3_5VisionConfig, or Qwen3_5TextConfig alone for
Qwen3_5ForCausalLM), seeded, and written with `save_pretrained` (safetensors), beside the
Qwen3VLProcessor's (or, for the text-only model, the tokenizer's) own `save_pretrained`: tokenizer.json,
tokenizer_config.json, chat_template.jinja, and the image and video processors' preprocessor_config.json
and video_preprocessor_config.json — the layout of the released checkpoints. The tokenizer and chat
template come from tiny_tokenizer.py (the real added tokens and template form), the config values from
gen_tiny.py's build_config, so the numpy-reference checkpoints and these share one description. No hub
access.

    hf_make.py --out DIR [--shape tiny,heads,pattern] [--arch cond,causal] [--dtype f32,bf16] [--seed N]

writes DIR/<shape>-<arch>-<dtype>/ for every combination. Importable: `make(out, shape, arch, dtype, seed)`
(returns the directory; the image and video tests build theirs with it).

Shapes (all: patch 16, temporal patch 2, merge 2, full attention at (i+1) % 4 == 0, MRoPE interleaved):
  tiny     gen_tiny's preset: H 64, 4 layers, attention 4/1 heads x 64, GDN 4/4 x 16, tied
  heads    the real head sizes: attention head 256, GDN key/value heads 128 (2/4: Hv = 2 Hk), vision
           head 64 as in 0.8B-4B; untied head
  pattern  the 0.8B layer pattern with few layers: 8 layers (3 linear + 1 full, twice), attention 8/2 x
           256, GDN 16/16 x 128, tied, as the 0.8B; H 128
"""

import argparse
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# tests/reference/safetensors.py would shadow the real package that transformers imports (lazily): the
# real one is imported first, and the folder joins the path at its end (reference_env does both).


def reference_env():
    """Offline hub, the script's folder last on sys.path; returns (torch, transformers)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    import safetensors.torch  # noqa: F401
    import torch
    import transformers
    sys.path.append(HERE)
    # one thread: the reference's many small ops run 3x faster so on a busy 2-core machine (measured)
    torch.set_num_threads(1)
    return torch, transformers


torch, transformers = reference_env()
import gen_tiny  # noqa: E402
import tiny_tokenizer  # noqa: E402

VISION_HD64 = gen_tiny.VISION_PRESETS["hd64"]
SHAPES = {
    "tiny": gen_tiny.PRESETS["tiny"],
    "heads": dict(hidden=128, layers=4, inter=256, heads=2, kv_heads=1, head_dim=256, lin_k_heads=2,
                  lin_v_heads=4, lin_dim=128, merges=150, tie=False, shards=1, vision=VISION_HD64),
    "pattern": dict(hidden=128, layers=8, inter=352, heads=8, kv_heads=2, head_dim=256, lin_k_heads=16,
                    lin_v_heads=16, lin_dim=128, merges=150, tie=True, shards=1, vision=VISION_HD64),
}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}  # f64: transformers as the exact arithmetic
ARCHS = ("cond", "causal")


def configs(shape):
    """(Qwen3_5Config, tokenizer) for a shape: gen_tiny's config values, through transformers' classes."""
    from transformers import Qwen3_5Config
    tok = tiny_tokenizer.TinyTokenizer(SHAPES[shape]["merges"])
    cfg = gen_tiny.build_config(SHAPES[shape], tok)
    # gen_tiny describes the numpy reference's checkpoints (an MTP block transformers does not build,
    # the version that wrote them): let transformers fill those fields itself
    for key in ("mtp_num_hidden_layers", "mtp_use_dedicated_embeddings", "dtype"):
        cfg["text_config"].pop(key)
    for key in ("transformers_version", "architectures"):
        cfg.pop(key)
    return Qwen3_5Config(**cfg), tok


def randomize(model, seed):
    """Weights with some spread (transformers' init gives near-uniform logits and unit norms, which would
    hide mistakes): matrices ~ N(0, 1/fan_in), vectors (norm gains, A_log, dt_bias, biases) + N(0, 0.1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() >= 2:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in))
            else:
                p.add_(0.1 * torch.randn(p.shape, generator=g))


def processor(tok, hf_tmp, text_only):
    """The Qwen3VLProcessor (or the tokenizer alone) built from tiny_tokenizer's files."""
    from transformers import AutoTokenizer, Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor
    tiny_tokenizer.write_files(tok, hf_tmp, gen_tiny.MAX_POS)
    hf_tok = AutoTokenizer.from_pretrained(hf_tmp)
    if text_only:
        return hf_tok
    drop = ("processor_class", "image_processor_type", "video_processor_type")
    image, video = ({k: v for k, v in d.items() if k not in drop} for d in gen_tiny.preprocessor_configs())
    return Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**image), tokenizer=hf_tok,
                            video_processor=Qwen3VLVideoProcessor(**video), chat_template=tiny_tokenizer.CHAT_TEMPLATE)


def make(out, shape="tiny", arch="cond", dtype="f32", seed=1234):
    """Writes out/<shape>-<arch>-<dtype>/ (whole or not at all: built beside it, then renamed); returns it.
    An existing directory is kept."""
    from transformers import Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration
    path = os.path.join(out, f"{shape}-{arch}-{dtype}")
    if os.path.isdir(path):
        return path
    os.makedirs(out, exist_ok=True)
    cfg, tok = configs(shape)
    torch.manual_seed(seed)
    model = Qwen3_5ForConditionalGeneration(cfg) if arch == "cond" else Qwen3_5ForCausalLM(cfg.text_config)
    randomize(model, seed)
    model = model.to(DTYPES[dtype]).eval()
    tmp = tempfile.mkdtemp(prefix=f".{shape}-{arch}-{dtype}.", dir=out)
    try:
        model.save_pretrained(tmp)
        with tempfile.TemporaryDirectory() as tok_dir:
            proc = processor(tok, tok_dir, arch == "causal")
        proc.save_pretrained(tmp)
        if arch == "cond":
            # transformers 5 writes one processor_config.json; the released checkpoints carry the older
            # layout, which the image and video processors' own save_pretrained still write
            os.remove(os.path.join(tmp, "processor_config.json"))
            proc.image_processor.save_pretrained(tmp)
            proc.video_processor.save_pretrained(tmp)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shape", default="tiny", help="comma-separated: " + ",".join(SHAPES))
    ap.add_argument("--arch", default="cond", help="comma-separated: cond (Qwen3_5ForConditionalGeneration), "
                    "causal (Qwen3_5ForCausalLM)")
    ap.add_argument("--dtype", default="f32", help="comma-separated: " + ",".join(DTYPES))
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    wanted = [(s, r, d) for s in a.shape.split(",") for r in a.arch.split(",") for d in a.dtype.split(",")]
    for s, r, d in wanted:
        if s not in SHAPES or r not in ARCHS or d not in DTYPES:
            sys.exit(f"hf_make.py: unknown shape, arch or dtype in {s}-{r}-{d}")
    for s, r, d in wanted:
        print(make(a.out, s, r, d, a.seed))


if __name__ == "__main__":
    main()
