#!/usr/bin/env python3
"""Readable numpy reference of the Qwen3.5 vision path, written from spec §3.2, §4, §5.4 (not from any C code).

Everything is computed in float64 from the checkpoint's bf16 weights widened exactly, like qwen35_ref.py: it is
the exact math that seer's f32 tower approximates (HF's bf16 activation rounding, spec §9, is not imitated).
Position-embedding interpolation weights, RoPE angles and softmax are float64 too (the newest HF computes the
first in fp32, spec §4.3; the difference is at f32 rounding level).

Commands (the C tests call exactly these):

  vision_ref.py tower --model HF_DIR --pixels PIX.f32 --grid "t,h,w[;t,h,w...]" --out OUT.f32 [--dump-dir D]
      PIX.f32: pixel rows, f32 little-endian [N][1536], N = sum of t*h*w, images/videos concatenated in
      --grid order (h, w in 16-px patches, even). OUT.f32: merged embeddings f32 [N/4][out_hidden_size].
      --dump-dir D writes D/patch_embed.f32 [N,Dv] (§4.2), D/pos_embed.f32 [N,Dv] (the resampled table,
      §4.3, before it is added), D/block_{j}.f32 [N,Dv] (output of block j, §4.5) and D/merger_in.f32
      [N/4,4Dv] (after the merger's LayerNorm and 2x2 grouping: the input of linear_fc1, §4.6).

  vision_ref.py positions --ids IDS.json --grids GRIDS.json [--model HF_DIR]
      IDS.json: token ids with the pad runs already expanded; GRIDS.json: [{"kind": "image"|"video", "t", "h",
      "w"}, ...] in the order the runs appear. Prints {"positions": [[T...],[H...],[W...]], "rope_delta": n}
      (spec §3.2). Pad ids come from the model's config.json with --model, else the spec's 248056/248057.

  vision_ref.py prompt --model HF_DIR --ids IDS.json --image IMG [--image IMG...] [--min-pixels N]
                       [--max-pixels N] --out OUT.json [--logits OUT.f32] [--n-gen K]
      IDS.json holds one <|vision_start|><|image_pad|><|vision_end|> per image. Preprocesses each image
      (preprocess_ref.py, bounds and mean/std from the model's preprocessor_config.json unless given),
      expands each image pad to gh*gw/4 copies (§5.4), runs the tower, scatters its rows over the pads
      (§4.8), computes the positions (§3.2) and runs the text decoder (qwen35_ref.py) on the embeddings.
      OUT.json: {"ids", "positions", "rope_delta", "image_tokens", "grids", "greedy"}; --logits gets the last
      prompt token's logits (f32 [V]); greedy decoding uses position n + rope_delta for sequence index n.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import numpy as np  # noqa: E402

import safetensors  # noqa: E402

PATCH_ROW = 3 * 2 * 16 * 16          # channels x temporal x patch x patch (spec §4.1)
MERGE = 2                            # spatial_merge_size (spec §1.1)
LN_EPS = 1e-6                        # every vision LayerNorm (spec §4.5, §4.6, §9)
SPEC_IDS = {"image": 248056, "video": 248057}   # spec §1.1, used when no config is given

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu_tanh(x):
    """Block MLP activation: gelu_pytorch_tanh (spec §4.5)."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    """Merger activation: exact erf GELU (spec §4.6)."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(x.dtype))


def layer_norm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LN_EPS) * w + b


def softmax(s):
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return s / s.sum(axis=-1, keepdims=True)


def parse_grids(text):
    """'t,h,w;t,h,w' -> [(t, h, w), ...]; h and w must be even (2x2 merge) and everything positive."""
    grids = []
    for part in text.split(";"):
        vals = [int(v) for v in part.split(",")]
        if len(vals) != 3 or min(vals) < 1 or vals[1] % MERGE or vals[2] % MERGE:
            raise ValueError(f"grid {part!r}: need t,h,w with t >= 1 and even h, w >= 2")
        grids.append(tuple(vals))
    return grids


def patch_coords(t, h, w):
    """(row, col) of every pixel row of one image/video in its block-major order (spec §4.1): for each t,
    each 2x2 merge block in raster order, the block's patches (0,0),(0,1),(1,0),(1,1)."""
    br, bc, ir, ic = np.meshgrid(np.arange(h // MERGE), np.arange(w // MERGE), np.arange(MERGE), np.arange(MERGE),
                                 indexing="ij")
    rows = (br * MERGE + ir).reshape(-1)
    cols = (bc * MERGE + ic).reshape(-1)
    return np.tile(rows, t), np.tile(cols, t)


def bilinear_pos_embed(table, h, w):
    """Learned S x S table resampled to an h x w patch grid with align_corners = True (spec §4.3), returned
    in raster order [h*w, Dv]: patch (r, c) samples the table at (r*(S-1)/(h-1), c*(S-1)/(w-1))."""
    S = int(round(math.sqrt(table.shape[0])))
    if S * S != table.shape[0]:
        raise ValueError(f"position table of {table.shape[0]} rows is not square")
    sy = np.arange(h) * (S - 1) / (h - 1) if h > 1 else np.zeros(1)
    sx = np.arange(w) * (S - 1) / (w - 1) if w > 1 else np.zeros(1)
    y0, x0 = np.floor(sy).astype(int), np.floor(sx).astype(int)
    y1, x1 = np.minimum(y0 + 1, S - 1), np.minimum(x0 + 1, S - 1)
    fy, fx = (sy - y0)[:, None, None], (sx - x0)[None, :, None]
    E = table.reshape(S, S, -1)
    pe = ((1 - fy) * (1 - fx) * E[y0][:, x0] + (1 - fy) * fx * E[y0][:, x1]
          + fy * (1 - fx) * E[y1][:, x0] + fy * fx * E[y1][:, x1])
    return pe.reshape(h * w, -1)


class VisionTower:
    """Qwen3.5 ViT + 2x2 patch merger (spec §4) on HF weights (`model.visual.*`, spec §8)."""

    def __init__(self, hf_dir, dtype=np.float64):
        with open(os.path.join(hf_dir, "config.json")) as f:
            cfg = json.load(f)
        vc = cfg["vision_config"]
        self.dt = dtype
        self.depth, self.Dv, self.nh = vc["depth"], vc["hidden_size"], vc["num_heads"]
        self.dh = self.Dv // self.nh
        self.theta = vc.get("rope_parameters", {}).get("rope_theta", 10000.0)   # spec §4.4
        if vc.get("patch_size", 16) != 16 or vc.get("temporal_patch_size", 2) != 2 \
                or vc.get("spatial_merge_size", MERGE) != MERGE or self.dh % 4:
            raise ValueError(f"{hf_dir}: vision config outside spec §4 (patch 16, temporal 2, merge 2, dh % 4)")
        self.w = {}
        for name, a in safetensors.read_dir(hf_dir).items():
            if name.startswith("model.visual."):
                self.w[name[len("model.visual."):]] = a.astype(dtype)
        if "patch_embed.proj.weight" not in self.w:
            raise ValueError(f"{hf_dir}: no model.visual.* weights")
        self.out_dim = self.w["merger.linear_fc2.weight"].shape[0]

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    # --- stages (spec §4.2-§4.6) ----------------------------------------------------------------------
    def patch_embed(self, pixels):
        """Conv3d with kernel = stride = (2,16,16) == a linear map of each 1536-value row (spec §4.2)."""
        W = self.w["patch_embed.proj.weight"].reshape(self.Dv, PATCH_ROW)      # same C,T,H,W order as a row
        return pixels @ W.T + self.w["patch_embed.proj.bias"]

    def pos_embed(self, grids):
        """Resampled table for every pixel row: raster order -> block-major, repeated for each t (§4.3)."""
        out = []
        for t, h, w in grids:
            pe = bilinear_pos_embed(self.w["pos_embed.weight"], h, w)
            rows, cols = patch_coords(t, h, w)
            out.append(pe[rows * w + cols])
        return np.concatenate(out)

    def rope_angles(self, grids):
        """2-D axial angles [N, dh/2] = [row * inv_freq, col * inv_freq], dh/4 frequencies (spec §4.4)."""
        nf = self.dh // 4
        inv_freq = self.theta ** (-np.arange(nf, dtype=np.float64) * 2.0 / (self.dh // 2))
        ang = []
        for t, h, w in grids:
            rows, cols = patch_coords(t, h, w)
            ang.append(np.concatenate([rows[:, None] * inv_freq, cols[:, None] * inv_freq], axis=1))
        return np.concatenate(ang).astype(self.dt)

    def apply_rope(self, x, ang):
        """Rotate-half over the full head dim, pairs (i, i + dh/2) (spec §4.4). x: [N, nh, dh]."""
        half = self.dh // 2
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def block(self, j, h, ang, segments):
        p = f"blocks.{j}."
        N = h.shape[0]
        a = layer_norm(h, self.w[p + "norm1.weight"], self.w[p + "norm1.bias"])
        qkv = self.linear(a, p + "attn.qkv").reshape(N, 3, self.nh, self.dh)   # [q all heads | k | v]
        q, k, v = self.apply_rope(qkv[:, 0], ang), self.apply_rope(qkv[:, 1], ang), qkv[:, 2]
        o = np.empty_like(q)
        for s, n in segments:    # bidirectional attention inside one image / one temporal index (§4.5 step 4)
            qs, ks, vs = (x[s:s + n].transpose(1, 0, 2) for x in (q, k, v))   # [nh, n, dh]
            att = softmax(qs @ ks.transpose(0, 2, 1) / math.sqrt(self.dh))
            o[s:s + n] = (att @ vs).transpose(1, 0, 2)
        h = h + self.linear(o.reshape(N, self.Dv), p + "attn.proj")
        m = layer_norm(h, self.w[p + "norm2.weight"], self.w[p + "norm2.bias"])
        return h + self.linear(gelu_tanh(self.linear(m, p + "mlp.linear_fc1")), p + "mlp.linear_fc2")

    def merger_input(self, h):
        """LayerNorm per patch, then every 4 consecutive rows (one 2x2 block) concatenated (spec §4.6)."""
        n = layer_norm(h, self.w["merger.norm.weight"], self.w["merger.norm.bias"])
        return n.reshape(-1, MERGE * MERGE * self.Dv)

    def merger(self, x):
        return self.linear(gelu_erf(self.linear(x, "merger.linear_fc1")), "merger.linear_fc2")

    @staticmethod
    def segments(grids):
        """(start, length) of each attention segment: one per image/video and temporal index (§4.5)."""
        out, s = [], 0
        for t, h, w in grids:
            for _ in range(t):
                out.append((s, h * w))
                s += h * w
        return out

    def forward(self, pixels, grids, dump=None):
        """pixels [N, 1536] (block-major rows, spec §4.1), grids [(t, h, w)] -> merged [N/4, out_dim].
        dump: optional callback(name, array) that receives the intermediate stages."""
        n = sum(t * h * w for t, h, w in grids)
        pixels = np.asarray(pixels, self.dt)
        if pixels.shape != (n, PATCH_ROW):
            raise ValueError(f"pixels {pixels.shape} do not match the grids ({n} rows of {PATCH_ROW})")
        dump = dump or (lambda name, a: None)
        x = self.patch_embed(pixels)
        dump("patch_embed", x)
        pe = self.pos_embed(grids)
        dump("pos_embed", pe)
        h = x + pe
        ang, seg = self.rope_angles(grids), self.segments(grids)
        for j in range(self.depth):
            h = self.block(j, h, ang, seg)
            dump(f"block_{j}", h)
        m = self.merger_input(h)
        dump("merger_in", m)
        return self.merger(m)


# --- positions (spec §3.2) ------------------------------------------------------------------------------
def rope_index(ids, grids, image_id=SPEC_IDS["image"], video_id=SPEC_IDS["video"], text_at=()):
    """Three-axis positions [3, T] and rope_delta for ids whose pad runs are expanded. grids: dicts
    {"kind", "t", "h", "w"} in run order; a video of t temporal patches is t runs of (1, h, w) (one per
    frame group, separated by timestamp text). Each run gets T = p, H = p + r, W = p + c over its merged
    raster (r, c), then p += max(Gh, Gw); text advances p by one per token. text_at: indices of pad ids
    that are text (a model's own earlier answer may hold them), not placeholders."""
    kind_of = {image_id: "image", video_id: "video"}
    queue = {"image": [], "video": []}
    for g in grids:
        if g["kind"] not in queue or g["t"] < 1 or g["h"] % MERGE or g["w"] % MERGE or min(g["h"], g["w"]) < 2:
            raise ValueError(f"bad grid {g}")
        queue[g["kind"]] += [(g["h"] // MERGE, g["w"] // MERGE)] * g["t"]
    used = {"image": 0, "video": 0}
    pos = np.zeros((3, len(ids)), np.int64)
    p, i = 0, 0
    while i < len(ids):
        kind = None if i in text_at else kind_of.get(ids[i])
        if kind is None:
            pos[:, i] = p
            p += 1
            i += 1
            continue
        if used[kind] == len(queue[kind]):
            raise ValueError(f"{kind} pad at index {i} has no grid left")
        gh, gw = queue[kind][used[kind]]
        used[kind] += 1
        n = gh * gw
        if ids[i:i + n] != [ids[i]] * n:
            raise ValueError(f"{kind} run at index {i} is shorter than its grid's {n} tokens")
        r, c = np.divmod(np.arange(n), gw)
        pos[0, i:i + n], pos[1, i:i + n], pos[2, i:i + n] = p, p + r, p + c
        p += max(gh, gw)
        i += n
    for kind in queue:
        if used[kind] != len(queue[kind]):
            raise ValueError(f"{len(queue[kind]) - used[kind]} {kind} grid(s) left without a pad run")
    delta = int(pos.max()) + 1 - len(ids) if len(ids) else 0
    return pos, delta


# --- fused prompt (spec §4.8, §5.4) ----------------------------------------------------------------------
def run_prompt(hf_dir, ids, images, min_pixels=None, max_pixels=None, n_gen=0):
    """Returns (result dict for OUT.json, last prompt logits)."""
    import preprocess_ref
    from qwen35_ref import Qwen35Ref

    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(hf_dir, "preprocessor_config.json")) as f:
        pre = json.load(f)
    image_id, video_id, vs_id = cfg["image_token_id"], cfg["video_token_id"], cfg["vision_start_token_id"]
    # a placeholder is a pad right after <|vision_start|>; any other pad id is text (a random model's
    # answer in an earlier chat turn may be one), embedded and positioned as text, as seer does
    placed = {i for i, tok in enumerate(ids) if tok in (image_id, video_id) and i > 0 and ids[i - 1] == vs_id}
    if sum(ids[i] == image_id for i in placed) != len(images):
        raise ValueError(f"{sum(ids[i] == image_id for i in placed)} image placeholders in the ids for {len(images)} images")
    if any(ids[i] == video_id for i in placed):
        raise ValueError("prompt mode takes images only")
    lo = pre["size"]["shortest_edge"] if min_pixels is None else min_pixels
    hi = pre["size"]["longest_edge"] if max_pixels is None else max_pixels
    pixels, grids = [], []
    for path in images:
        pv, (t, gh, gw) = preprocess_ref.preprocess_image(preprocess_ref.load_rgb(path), lo, hi,
                                                          pre["image_mean"], pre["image_std"])
        pixels.append(pv)
        grids.append((t, gh, gw))
    expanded, text_at, k = [], set(), 0
    for i, tok in enumerate(ids):                # one placeholder -> gh*gw/4 pads (spec §5.4)
        if i in placed:
            t, gh, gw = grids[k]
            expanded += [image_id] * (t * gh * gw // (MERGE * MERGE))
            k += 1
        else:
            if tok in (image_id, video_id):
                text_at.add(len(expanded))
            expanded.append(tok)
    ref = Qwen35Ref(hf_dir)
    ids_arr = np.asarray(expanded, np.int64)
    if ids_arr.size == 0 or ids_arr.max() >= ref.lm_head.shape[0]:
        raise ValueError(f"ids must be non-empty and below the vocabulary size {ref.lm_head.shape[0]}")
    x = ref.W("model.embed_tokens.weight")[ids_arr].copy()
    if images:                                   # image rows in image order over the pads (spec §4.8)
        pads = (ids_arr == image_id) & ~np.isin(np.arange(ids_arr.size), sorted(text_at))
        x[pads] = VisionTower(hf_dir).forward(np.concatenate(pixels), grids)
    gdicts = [{"kind": "image", "t": t, "h": h, "w": w} for t, h, w in grids]
    pos, delta = rope_index(expanded, gdicts, image_id, video_id, text_at)
    logits = ref.forward(embeds=x, positions=pos)[-1]
    ref.rope_delta = delta                       # decode: T = H = W = n + rope_delta (spec §3.2)
    greedy = ref.continue_greedy(logits, n_gen)
    counts = [t * gh * gw // (MERGE * MERGE) for t, gh, gw in grids]
    return {"ids": expanded, "positions": pos.tolist(), "rope_delta": delta, "image_tokens": counts,
            "grids": gdicts, "greedy": greedy}, logits


# --- command line ------------------------------------------------------------------------------------------
def read_json(path):
    with open(path) as f:
        try:
            return json.load(f)
        except ValueError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None


def read_ids(path):
    """A JSON list of ids, or an object with an "ids" list (a prompt command's OUT.json)."""
    v = read_json(path)
    ids = v.get("ids") if isinstance(v, dict) else v
    if not isinstance(ids, list) or not all(isinstance(t, int) and t >= 0 for t in ids):
        raise ValueError(f"{path}: expected a list of non-negative token ids")
    return ids


def cmd_tower(a):
    grids = parse_grids(a.grid)
    n = sum(t * h * w for t, h, w in grids)
    size = os.path.getsize(a.pixels)
    if size != n * PATCH_ROW * 4:
        raise ValueError(f"{a.pixels}: {size} bytes, the grids need {n} rows of {PATCH_ROW} f32")
    pixels = np.fromfile(a.pixels, dtype="<f4").reshape(n, PATCH_ROW)
    dump = None
    if a.dump_dir:
        os.makedirs(a.dump_dir, exist_ok=True)

        def dump(name, arr):
            arr.astype("<f4").tofile(os.path.join(a.dump_dir, name + ".f32"))
    out = VisionTower(a.model).forward(pixels, grids, dump)
    out.astype("<f4").tofile(a.out)
    print(f"vision_ref: {n} patches -> {out.shape[0]} x {out.shape[1]}", file=sys.stderr)


def cmd_positions(a):
    ids = read_ids(a.ids)
    grids = read_json(a.grids)
    if not isinstance(grids, list) or not all(isinstance(g, dict) and {"kind", "t", "h", "w"} <= set(g)
                                              for g in grids):
        raise ValueError(f'{a.grids}: expected a list of {{"kind", "t", "h", "w"}} objects')
    image_id, video_id = SPEC_IDS["image"], SPEC_IDS["video"]
    if a.model:
        with open(os.path.join(a.model, "config.json")) as f:
            cfg = json.load(f)
        image_id, video_id = cfg["image_token_id"], cfg["video_token_id"]
    pos, delta = rope_index(ids, grids, image_id, video_id)
    json.dump({"positions": pos.tolist(), "rope_delta": delta}, sys.stdout)
    sys.stdout.write("\n")


def cmd_prompt(a):
    res, logits = run_prompt(a.model, read_ids(a.ids), a.image, a.min_pixels, a.max_pixels, a.n_gen)
    with open(a.out, "w") as f:
        json.dump(res, f)
    if a.logits:
        logits.astype("<f4").tofile(a.logits)
    print(f"vision_ref: {len(res['ids'])} tokens, image tokens {res['image_tokens']}, "
          f"rope_delta {res['rope_delta']}, greedy {res['greedy']}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tower", help="pixel rows -> merged embeddings (spec §4)")
    t.add_argument("--model", required=True)
    t.add_argument("--pixels", required=True)
    t.add_argument("--grid", required=True, help='"t,h,w[;t,h,w...]" in 16-px patches')
    t.add_argument("--out", required=True)
    t.add_argument("--dump-dir")
    p = sub.add_parser("positions", help="three-axis MRoPE positions (spec §3.2)")
    p.add_argument("--ids", required=True)
    p.add_argument("--grids", required=True)
    p.add_argument("--model")
    q = sub.add_parser("prompt", help="images + ids -> expanded prompt, logits, greedy tokens")
    q.add_argument("--model", required=True)
    q.add_argument("--ids", required=True)
    q.add_argument("--image", action="append", default=[])
    q.add_argument("--min-pixels", type=int)
    q.add_argument("--max-pixels", type=int)
    q.add_argument("--out", required=True)
    q.add_argument("--logits")
    q.add_argument("--n-gen", type=int, default=0)
    a = ap.parse_args()
    try:
        {"tower": cmd_tower, "positions": cmd_positions, "prompt": cmd_prompt}[a.cmd](a)
    except (ValueError, OSError, KeyError) as e:
        print(f"vision_ref: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
