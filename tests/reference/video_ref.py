#!/usr/bin/env python3
"""Numpy reference of the Qwen3.5 video path, written from spec §5.3, §5.4, §3.2 and §4 (not from any C code).

Frames come from the ffmpeg/ffprobe command-line tools (a different road through FFmpeg than seer's
in-process libraries): ffprobe decodes the first video stream and lists every frame's best-effort
timestamp; ffmpeg writes the frames as rgb24 with its default autorotation. Resizing, normalising and
patchifying use preprocess_ref.py (Pillow bicubic, as for images); the tower, positions and text decoder
come from vision_ref.py and qwen35_ref.py.

Commands (the C tests call exactly these):

  video_ref.py plan VIDEO [--fps F] [--min-frames N] [--max-frames N] [--min-pixels N] [--max-pixels N]
                          [--start S] [--end S]
      Prints {"n_frames", "fps", "width", "height", "constant_rate", "indices", "seconds",
      "group_seconds", "timestamps" (the "<t.t seconds>" texts), "timestamps_hf" (transformers' idx /
      fps_src whatever the rate), "resized_width", "resized_height", "grid": [t, h, w], "tokens"}
      (spec §5.3). The times are transformers' idx / fps_src when the rate is constant (every frame k
      within half a frame period of k / fps_src), else the frames' presentation times (seer's choice
      for a variable rate, docs/MODEL.md §5.3). --start/--end keep the frames whose time lies in
      [start, end) and sample among them; times stay those of the whole file. --cap-pixels-per-frame:
      transformers' cap_pixels_per_frame=True (at most 768 merged tokens a frame).

  video_ref.py frames VIDEO --out OUT.u8 [plan options]
      The planned frames, resized, as rgb24 bytes [n][resized_height][resized_width][3].

  video_ref.py prompt --model HF_DIR --ids IDS.json --video VIDEO [--video ...] [--image IMG ...]
                      [plan options] --out OUT.json [--logits OUT.f32] [--n-gen K]
      IDS.json holds one <|vision_start|><|video_pad|><|vision_end|> per video (and one image placeholder
      per image). Each <|video_pad|> becomes, per frame pair, the timestamp text (tokenized with the
      model's tokenizer.json: byte-level BPE, exact for this ASCII text) + <|vision_start|> + pads +
      <|vision_end|>, the template's markers staying around them (transformers 5.23's
      replace_video_token, spec §5.4); the tower runs on each clip's (t, h, w) grid, rows go over the pads in
      order (§4.8), positions follow §3.2, and the text decoder runs on the embeddings.
      OUT.json: {"ids", "positions", "rope_delta", "video_tokens", "greedy"} (greedy over the tokenizer's rows,
      not the padding past it); --logits: last token's logits.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ensure_numpy  # noqa: E402

ensure_numpy()
import numpy as np  # noqa: E402

FPS, MIN_FRAMES, MAX_FRAMES = 2.0, 4, 768           # spec §5.3
MIN_PIXELS, MAX_PIXELS = 4096, 25165824
FACTOR, MERGE = 32, 2


# --- the container, through the command-line tools -----------------------------------------------------------
def _rate(s):
    num, _, den = s.partition("/")
    try:
        r = float(num) / float(den or 1)
    except (ValueError, ZeroDivisionError):
        return 0.0
    return r if 0 < r <= 1000 else 0.0


def probe(path):
    """Frame times (seconds from the first frame, sorted), the source fps and the displayed size."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height,avg_frame_rate,r_frame_rate,time_base:stream_side_data=rotation:"
                          "frame=best_effort_timestamp", "-of", "json", path],
                         capture_output=True, text=True)
    if out.returncode:
        raise ValueError(f"{path}: ffprobe failed: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    st = j["streams"][0]
    frames = j.get("frames", [])
    if not frames:
        raise ValueError(f"{path}: no frames")
    fps = _rate(st.get("avg_frame_rate", "0/0")) or _rate(st.get("r_frame_rate", "0/0"))
    if any(f.get("best_effort_timestamp") in (None, "N/A") for f in frames):
        # no presentation times at all (a raw elementary stream): HF's idx / fps is all there is
        fps = fps or 24.0
        sec = [k / fps for k in range(len(frames))]
    else:
        times = sorted(int(f["best_effort_timestamp"]) for f in frames)
        num, _, den = st["time_base"].partition("/")
        tb = int(num) / int(den)                     # timestamps in the stream's time base, as integers
        sec = [(t - times[0]) * tb for t in times]
        if not fps:
            fps = (len(sec) - 1) / sec[-1] if len(sec) > 1 and sec[-1] > 0 else 24.0
    rot = 0
    for sd in st.get("side_data_list", []):
        if "rotation" in sd:
            rot = int(sd["rotation"]) % 360
    w, h = st["width"], st["height"]
    if rot in (90, 270):
        w, h = h, w
    return sec, fps, w, h


# --- the plan (spec §5.3) -----------------------------------------------------------------------------------
def sample_indices(n_src, fps_src, fps=FPS, min_frames=MIN_FRAMES, max_frames=MAX_FRAMES):
    """HF's sample_frames: n = int(total / fps_src * fps), clamped, round(linspace) (numpy: half to even)."""
    n = int(n_src / fps_src * fps)
    n = min(max(n, min_frames), max_frames, n_src)
    return np.linspace(0, n_src - 1, n).round().astype(int).tolist()


def group_times(times):
    """_calculate_timestamps: pad to pairs with the last, mean of each pair."""
    t = list(times)
    if len(t) % 2:
        t.append(t[-1])
    return [(t[i] + t[i + 1]) / 2 for i in range(0, len(t), 2)]


def constant_rate(sec, fps):
    """Every frame k within half a frame period of k / fps: idx / fps names its slot."""
    return all(abs(s - k / fps) < 0.5 / fps for k, s in enumerate(sec))


def plan(path, a):
    import preprocess_ref
    sec, fps_src, w, h = probe(path)
    keep = [k for k, s in enumerate(sec) if s >= a.start and (not a.end or s < a.end)]
    if not keep:
        raise ValueError(f"{path}: no frame in the range")
    lo = keep[0]
    rel = sample_indices(len(keep), fps_src, a.fps, a.min_frames, a.max_frames)
    idx = [lo + i for i in rel]
    n = len(idx)
    # transformers' resize: size.longest_edge over the clip, or with cap_pixels_per_frame its per-frame cap
    max_px = (preprocess_ref.video_capped_max_pixels(n, FACTOR, a.min_pixels, a.max_pixels)
              if a.cap_pixels_per_frame else a.max_pixels)
    rh, rw = preprocess_ref.smart_resize_video(max(n, 2), h, w, FACTOR, a.min_pixels, max_px)
    cfr = constant_rate(sec, fps_src)
    seconds = [i / fps_src for i in idx] if cfr else [sec[i] for i in idx]
    gs = group_times(seconds)
    grid = [(n + 1) // 2, rh // 16, rw // 16]
    return {"n_frames": len(sec), "fps": fps_src, "width": w, "height": h, "constant_rate": cfr, "indices": idx,
            "seconds": seconds,
            "group_seconds": gs, "timestamps": [f"<{t:.1f} seconds>" for t in gs],
            "timestamps_hf": [f"<{t:.1f} seconds>" for t in group_times([i / fps_src for i in idx])],
            "resized_width": rw, "resized_height": rh, "grid": grid, "tokens": grid[0] * (rh // 32) * (rw // 32)}


def frames(path, p):
    """The planned frames: ffmpeg → rgb24 at the displayed size → Pillow bicubic to the planned size."""
    import preprocess_ref
    w, h = p["width"], p["height"]
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True)
    if out.returncode:
        raise ValueError(f"{path}: ffmpeg failed: {out.stderr.decode(errors='replace').strip()}")
    all_frames = np.frombuffer(out.stdout, np.uint8).reshape(-1, h, w, 3)
    return [preprocess_ref.resize_bicubic(all_frames[i], p["resized_width"], p["resized_height"])
            for i in p["indices"]]


# --- tokenizing the timestamp text ---------------------------------------------------------------------------
class ByteBPE:
    """tokenizer.json's byte-level BPE for ASCII text without added tokens (the timestamps)."""

    def __init__(self, hf_dir):
        with open(os.path.join(hf_dir, "tokenizer.json")) as f:
            tj = json.load(f)
        self.vocab = tj["model"]["vocab"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in tj["model"]["merges"]]
        self.ranks = {m: r for r, m in enumerate(merges)}

    def piece(self, s):
        parts = [chr(0x120 + ord(c) - 0x20) if c == " " else c for c in s]   # GPT-2 bytes: space is Ġ
        while len(parts) > 1:
            best = min(range(len(parts) - 1), key=lambda i: self.ranks.get((parts[i], parts[i + 1]), 1 << 30))
            if (parts[best], parts[best + 1]) not in self.ranks:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return [self.vocab[p] for p in parts]

    def encode(self, text):
        # the Qwen pre-tokenizer's splits for "<12.5 seconds>" (spec §6.1): "<", digits one by one, ".",
        # " seconds", ">" — letters, single digits, punctuation runs
        ids = []
        for piece in re.findall(r" ?[A-Za-z]+|\d| ?[^\sA-Za-z\d]+", text):
            ids += self.piece(piece)
        return ids


# --- fused prompt --------------------------------------------------------------------------------------------
def run_prompt(a):
    import preprocess_ref
    from qwen35_ref import Qwen35Ref
    from vision_ref import VisionTower, rope_index

    with open(os.path.join(a.model, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(a.model, "tokenizer.json")) as f:
        added = {t["content"]: t["id"] for t in json.load(f)["added_tokens"]}
    image_id, video_id = cfg["image_token_id"], cfg["video_token_id"]
    vs, ve = added["<|vision_start|>"], added["<|vision_end|>"]
    ids = json.load(open(a.ids))
    if ids.count(video_id) != len(a.video) or ids.count(image_id) != len(a.image):
        raise ValueError("placeholders and inputs differ in number")
    with open(os.path.join(a.model, "preprocessor_config.json")) as f:
        pre = json.load(f)
    bpe = ByteBPE(a.model)
    tower = VisionTower(a.model)
    img_rows, vid_rows, grids, counts = [], [], [], []
    for path in a.image:
        pv, (t, gh, gw) = preprocess_ref.preprocess_image(preprocess_ref.load_rgb(path), pre["size"]["shortest_edge"],
                                                          pre["size"]["longest_edge"], pre["image_mean"],
                                                          pre["image_std"])
        img_rows.append(tower.forward(pv, [(t, gh, gw)]))
        grids.append(("image", t, gh, gw))
    plans = []
    for path in a.video:
        p = plan(path, a)
        fr = frames(path, p)
        pv, (t, gh, gw) = preprocess_ref.patchify(fr, pre["image_mean"], pre["image_std"])
        vid_rows.append(tower.forward(pv, [(t, gh, gw)]))
        plans.append(p)
        counts.append(t * gh * gw // 4)
    expanded, ki, kv, i = [], 0, 0, 0
    order = []
    while i < len(ids):
        tok = ids[i]
        if tok == image_id:
            _, t, gh, gw = grids[ki]
            expanded += [image_id] * (t * gh * gw // 4)
            order.append({"kind": "image", "t": t, "h": gh, "w": gw})
            ki += 1
        elif tok == video_id:
            p = plans[kv]
            t, gh, gw = p["grid"]
            for ts in p["timestamps"]:                 # spec §5.4
                expanded += bpe.encode(ts) + [vs] + [video_id] * (gh * gw // 4) + [ve]
            order.append({"kind": "video", "t": t, "h": gh, "w": gw})
            kv += 1
        else:
            expanded.append(tok)
        i += 1
    ref = Qwen35Ref(a.model)
    arr = np.asarray(expanded, np.int64)
    x = ref.W("model.embed_tokens.weight")[arr].copy()
    if img_rows:
        x[arr == image_id] = np.concatenate(img_rows)
    if vid_rows:
        x[arr == video_id] = np.concatenate(vid_rows)
    pos, delta = rope_index(expanded, [g for g in order if g["kind"] == "image"] +
                            [g for g in order if g["kind"] == "video"], image_id, video_id)
    logits = ref.forward(embeds=x, positions=pos)[-1]
    ref.rope_delta = delta
    greedy = ref.continue_greedy(logits, a.n_gen)
    return {"ids": expanded, "positions": pos.tolist(), "rope_delta": delta, "video_tokens": counts,
            "greedy": greedy}, logits


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def plan_opts(p):
        p.add_argument("--fps", type=float, default=FPS)
        p.add_argument("--min-frames", type=int, default=MIN_FRAMES)
        p.add_argument("--max-frames", type=int, default=MAX_FRAMES)
        p.add_argument("--min-pixels", type=int, default=MIN_PIXELS)
        p.add_argument("--max-pixels", type=int, default=MAX_PIXELS)
        p.add_argument("--start", type=float, default=0.0)
        p.add_argument("--end", type=float, default=0.0)
        p.add_argument("--cap-pixels-per-frame", action="store_true")
    p = sub.add_parser("plan")
    p.add_argument("video")
    plan_opts(p)
    f = sub.add_parser("frames")
    f.add_argument("video")
    f.add_argument("--out", required=True)
    plan_opts(f)
    q = sub.add_parser("prompt")
    q.add_argument("--model", required=True)
    q.add_argument("--ids", required=True)
    q.add_argument("--video", action="append", default=[])
    q.add_argument("--image", action="append", default=[])
    q.add_argument("--out", required=True)
    q.add_argument("--logits")
    q.add_argument("--n-gen", type=int, default=0)
    plan_opts(q)
    a = ap.parse_args()
    try:
        if a.cmd == "plan":
            json.dump(plan(a.video, a), sys.stdout)
            sys.stdout.write("\n")
        elif a.cmd == "frames":
            with open(a.out, "wb") as out:
                for fr in frames(a.video, plan(a.video, a)):
                    out.write(np.ascontiguousarray(fr, np.uint8).tobytes())
        else:
            res, logits = run_prompt(a)
            with open(a.out, "w") as out:
                json.dump(res, out)
            if a.logits:
                logits.astype("<f4").tofile(a.logits)
    except (ValueError, OSError, KeyError) as e:
        print(f"video_ref: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
