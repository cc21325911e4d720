#!/usr/bin/env python3
"""TAP: seer against Hugging Face transformers 5.23.0 (issue 21 item 3) on images and video, through
transformers' own processor as its users call it: AutoProcessor from an hf_make checkpoint (tiny shape,
real patch 16 / merge 2 / temporal 2, f32, fresh seed each run: SEER_TEST_SEED=N replays one) and
`apply_chat_template(..., tokenize=True, return_dict=True)` with image and video content parts, against
seer_golden's chat mode (seer_chat_add_media, the expanded prompt and its logits at every position) and
pixels mode (vision/preprocess.c's patch rows) on the same files:

- images: one and two, sizes that resize (300x200, 700x500, the extreme 1000x40), two that do not
  (256x256, 640x480), a JPEG with EXIF orientation 6, PNG: input_ids, image_grid_thw, pixel rows (seer's
  default against the default processor, seer's resize "pillow" against its Pillow backend), logits on
  seer's pixel rows (the model's arithmetic) and through transformers' processors (the whole path);
- video: 1 s and 3 s, 10 and 29.97 fps, a rotated clip (display matrix 90), fps and max_frames options,
  a 1280x704 clip: the sampled frame indices (the processor's video_metadata against `seer describe
  --dry-run --json`), each pair's timestamp text (transformers' _calculate_timestamps: frame index / fps),
  the prompt as input_ids (the template's <|vision_start|>/<|vision_end|> kept around the pairs, as 5.23's
  replace_video_token writes it), video_grid_thw, logits. Issue 21's video budget: transformers 5.23's
  Qwen3VLVideoProcessor by default neither caps a frame (cap_pixels_per_frame unset: it warns and keeps
  the whole-clip budget) nor rounds the count to even (the fps 3 case samples 9 frames on both sides);
  the 1280x704 clip is one where the cap would change the grid (asserted), so seer following Qwen's cap
  instead would fail it. A variable-rate clip: the same frames and prompt but for the stamps, which seer
  takes from presentation times (checked against ffprobe's) where transformers divides by the average fps.

AutoProcessor builds Qwen2VLImageProcessor on its default torchvision backend (bicubic with
antialiasing, what the release's preprocessor_config.json asks for), and seer's default resize is
torchvision's (issue 21 item 4, docs/MODEL.md §5.2): pixel rows equal, logits within the model's bound.
seer's resize "pillow" (seer_golden under SEER_GOLDEN_RESIZE=pillow) is checked against the Pillow backend
(backend="pil") the same way, and its logits against the default processor are printed: the measured
cost of choosing it. Runs under the reference venv's python; needs SEER_BUILD_DIR's seer and
seer_golden. About 2-3 minutes on 2 cores.
"""

import contextlib
import functools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tap, ensure_hf_python  # noqa: E402

ensure_hf_python()
import hf_make  # noqa: E402  (loads torch and transformers first)
import numpy as np  # noqa: E402
from hf_make import torch  # noqa: E402
from hf_oracle import (TOL, HFModel, Yardsticks, check_logits, rel_l2, seer_bin, seer_media_chat,  # noqa: E402
                       seer_pixels, worst_row_rel_l2)
import video_ref  # noqa: E402
from PIL import Image  # noqa: E402
from transformers import AutoImageProcessor, AutoProcessor  # noqa: E402

# pixel rows are normalised to [-1, 1] ((v/255 - 0.5) / 0.5): equal inputs give equal rows up to f32
# rounding of that affine map
PIX_EQUAL = 1e-6
PROMPT = "Describe it."

# (name, [(width, height, kind)]): kind png, jpeg (quality 95) or exif6 (a JPEG whose pixels are stored
# turned, with EXIF orientation 6: the viewer turns it 90 degrees clockwise)
IMAGES = [
    ("256x256 PNG (no resize)", [(256, 256, "png")]),
    ("300x200 PNG (resized up to the 65536-pixel minimum)", [(300, 200, "png")]),
    ("640x480 JPEG (no resize: both sides multiples of 32)", [(640, 480, "jpeg")]),
    ("700x500 JPEG (resized to 704x512)", [(700, 500, "jpeg")]),
    ("1000x40 PNG (extreme aspect)", [(1000, 40, "png")]),
    ("EXIF orientation 6 JPEG, stored 200x300", [(200, 300, "exif6")]),
    ("two images: 300x200 PNG and 256x256 PNG", [(300, 200, "png"), (256, 256, "png")]),
]
# (name, clip (seconds, fps as ffmpeg's -r, rotate, size), sampling options). The 1 s clips at 10 fps
# sample frames 0, 3, 6, 9: the first pair's time is the .x5 case, (0/10 + 3/10) / 2 just below 0.15
# (<0.1 seconds>), where presentation times (0.30000000000000004 / 2) would print <0.2 seconds>.
VIDEOS = [
    ("1 s at 10 fps, defaults", (1, "10", 0, "96x64"), {}),
    ("3 s at 10 fps, fps 4", (3, "10", 0, "96x64"), {"fps": 4}),
    ("3 s at 10 fps, fps 3 (9 frames: an odd count)", (3, "10", 0, "96x64"), {"fps": 3}),
    ("3 s at 29.97 fps, defaults", (3, "30000/1001", 0, "96x64"), {}),
    ("3 s at 29.97 fps, max_frames 6", (3, "30000/1001", 0, "96x64"), {"max_frames": 6}),
    ("1 s at 10 fps, rotated 90 (display matrix)", (1, "10", 90, "96x64"), {}),
    # 4 frames of 1280x704: the clip budget keeps them whole (multiples of 32: no resize, so the
    # resize decision stays out of it), Qwen's per-frame cap (768 tokens a frame) would give 1184x640
    ("1 s at 10 fps, 1280x704 (where a per-frame cap would differ)", (1, "10", 0, "1280x704"), {}),
]


def smooth_image(rng, w, h):
    """Random smooth content (a few blobs on gradients): like a photo, so resampling differences are
    typical rather than the worst case of white noise."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.zeros((h, w, 3))
    for c in range(3):
        img[..., c] = 128 + 60 * np.sin(x / rng.uniform(5, 40) + rng.uniform(0, 6)) * np.cos(y / rng.uniform(5, 40))
    img += rng.normal(0, 8, img.shape)
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


def write_image(rng, w, h, kind, path):
    img = smooth_image(rng, w, h)
    if kind == "png":
        img.save(path)
    elif kind == "jpeg":
        img.save(path, quality=95)
    else:
        exif = Image.Exif()
        exif[0x0112] = 6
        img.save(path, quality=95, exif=exif.tobytes())


def write_video(seconds, rate, rotate, size, path):
    # with noise, as the images: testsrc2's flat areas make patches of one colour, whose LayerNorm in the
    # tower amplifies f32 rounding in transformers as in seer (seed 1590922122, a 1280x704 clip: one
    # video-token row 3.0e-3 from float64 in transformers' own f32, 2.4e-3 in seer's)
    src = f"testsrc2=size={size}:rate={rate}:duration={seconds},noise=alls=16:allf=t+u"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", src, "-pix_fmt", "yuv420p",
                    "-c:v", "libx264", path + ".plain.mp4"], check=True)
    meta = ["-metadata:s:v:0", f"rotate={rotate}"] if rotate else []
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", path + ".plain.mp4", "-c", "copy", *meta, path],
                   check=True)


def hf_inputs(proc, images, videos, opts):
    """apply_chat_template's output for one user turn: the images, the videos, then PROMPT."""
    content = ([{"type": "image", "path": p} for p in images] + [{"type": "video", "path": p} for p in videos]
               + [{"type": "text", "text": PROMPT}])
    return proc.apply_chat_template([{"role": "user", "content": content}], tokenize=True, return_dict=True,
                                    add_generation_prompt=True, enable_thinking=False, return_tensors="pt",
                                    processor_kwargs=opts)


def inputs_on(proc, want, ids, pixels=None):
    """The processor's inputs with seer's prompt ids (and, given, seer's image pixel rows): transformers'
    model on them is the model's arithmetic compared apart from the prompt and the resize."""
    x = dict(want)
    x["input_ids"] = torch.tensor([ids])
    x["attention_mask"] = torch.ones_like(x["input_ids"])
    x["mm_token_type_ids"] = torch.tensor(proc.create_mm_token_type_ids([ids]))
    if pixels is not None:
        x["pixel_values"] = torch.from_numpy(pixels)
    return x


def first_difference(tok, got, want):
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"first difference at {at}: {tok.decode(got[at:at + 6])!r} vs {tok.decode(want[at:at + 6])!r}"


def compare_prompt(t, tok, name, got_ids, want_ids):
    same = got_ids == want_ids
    t.ok(same, f"{name}: seer's {len(got_ids)} prompt ids = apply_chat_template's {len(want_ids)}" + (
        "" if same else f" ({first_difference(tok, got_ids, want_ids)})"))
    return same


def check_images(t, d, hf, proc, pil, rng, tmp):
    for name, specs in IMAGES:
        paths = []
        for i, (w, h, kind) in enumerate(specs):
            paths.append(os.path.join(tmp, f"img{len(paths)}-{w}x{h}.{'png' if kind == 'png' else 'jpg'}"))
            write_image(rng, w, h, kind, paths[-1])
        want = hf_inputs(proc, paths, [], {})
        want_ids = want["input_ids"][0].tolist()
        try:
            got_ids, got_lg = seer_media_chat(d, [{"role": "user", "content": PROMPT, "images": paths}], False, tmp)
            rows = [seer_pixels(d, p, tmp) for p in paths]
        except RuntimeError as err:
            t.ok(False, f"image {name}: seer_golden: {err}")
            continue
        same = compare_prompt(t, proc.tokenizer, f"image {name}", got_ids, want_ids)
        grids = [list(g) for _, g in rows]
        t.ok(grids == want["image_grid_thw"].tolist(), f"image {name}: grids {grids} = image_grid_thw "
             f"{want['image_grid_thw'].tolist()}")
        # pixel rows: seer's default resize (torchvision's) against transformers' default processor, and
        # seer's "pillow" option against its Pillow backend
        seer_rows = np.concatenate([r for r, _ in rows])
        with resize_option("pillow"):
            pil_rows = np.concatenate([seer_pixels(d, p, tmp)[0] for p in paths])
        pil_want = hf_inputs(pil, paths, [], {})
        diffs = {label: float(np.abs(ours - pv).max()) if pv.shape == ours.shape else float("inf")
                 for label, ours, pv in (("torchvision", seer_rows, want["pixel_values"].numpy()),
                                         ("pil", pil_rows, pil_want["pixel_values"].numpy()))}
        t.ok(diffs["torchvision"] <= PIX_EQUAL, f"image {name}: pixel rows max abs diff {diffs['torchvision']:.2e} vs "
             f"the default (torchvision) processor (<= {PIX_EQUAL:.0e})")
        t.ok(diffs["pil"] <= PIX_EQUAL, f"image {name}: with resize \"pillow\", pixel rows max abs diff "
             f"{diffs['pil']:.2e} vs the Pillow backend (<= {PIX_EQUAL:.0e})")
        if not same:
            continue
        # the model itself: transformers on seer's pixel rows, then the whole path on transformers' own
        check_logits(t, f"image {name}: logits of all {len(got_ids)} positions on seer's pixel rows", got_lg,
                     Yardsticks(hf, inputs_on(proc, want, got_ids, seer_rows)))
        # equal pixel rows make this the check above through transformers' own preprocessing: the same
        # bound, for the same open finding
        whole = Yardsticks(hf, want)
        check_logits(t, f"image {name}: logits of all {len(got_ids)} positions through transformers' default "
                     "processor", got_lg, whole)
        # the measured cost of the other resize (docs/MODEL.md §5.2): seer with resize "pillow" against
        # transformers' default processor, and against its Pillow backend (equal rows: the model's bound)
        if np.array_equal(pil_rows, seer_rows):
            continue
        with resize_option("pillow"):
            pil_ids, pil_lg = seer_media_chat(d, [{"role": "user", "content": PROMPT, "images": paths}], False, tmp)
        if pil_ids != got_ids:
            t.ok(False, f"image {name}: resize \"pillow\" changed the prompt ids")
            continue
        t.diag(f"image {name}: resize \"pillow\": {int((pil_rows != seer_rows).sum())} of {seer_rows.size} pixel "
               f"values differ from torchvision's; logits vs the default processor worst rel L2 "
               f"{worst_row_rel_l2(pil_lg, whole.f32):.2e}")
        check_logits(t, f"image {name}: with resize \"pillow\", logits of all {len(got_ids)} positions through the "
                     "Pillow backend", pil_lg, Yardsticks(hf, pil_want))


@contextlib.contextmanager
def resize_option(name):
    """seer_golden runs with seer_model_params.resize = name (SEER_GOLDEN_RESIZE) inside the block."""
    os.environ["SEER_GOLDEN_RESIZE"] = name
    try:
        yield
    finally:
        del os.environ["SEER_GOLDEN_RESIZE"]


def seer_video_plan(d, path, opts):
    """seer's plan for the video (`seer describe --dry-run --json`): frames, resized size, groups."""
    args = [seer_bin(), "describe", "--dry-run", "--json", "-m", d, path]
    for key, flag in (("fps", "--fps"), ("max_frames", "--max-frames")):
        if key in opts:
            args += [flag, str(opts[key])]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout.splitlines()[0])


def hf_stamps(proc, meta):
    """transformers' own timestamp texts for a video's metadata (processing_qwen3_vl.replace_video_token)."""
    times = proc._calculate_timestamps(meta.frames_indices, meta.fps, proc.video_processor.temporal_patch_size)
    return [f"<{x:.1f} seconds>" for x in times]


def check_videos(t, d, hf, proc, tmp):
    # the pinned default the video cases follow (issue 21's video budget): no per-frame cap
    cap = proc.video_processor.cap_pixels_per_frame
    t.ok(cap is None, f"transformers' video processor default: cap_pixels_per_frame {cap} (unset: uncapped, warned)")
    for name, (seconds, rate, rotate, size), opts in VIDEOS:
        path = os.path.join(tmp, f"v{seconds}-{rate.replace('/', '_')}-{rotate}-{size}.mp4")
        write_video(seconds, rate, rotate, size, path)
        want = hf_inputs(proc, [], [path], opts)
        want_ids = want["input_ids"][0].tolist()
        meta = proc.video_processor(videos=[path], return_metadata=True, **opts)["video_metadata"][0]
        hf_idx = [int(i) for i in meta.frames_indices]
        try:
            plan = seer_video_plan(d, path, opts)
            seer_idx = [f["index"] for f in plan["frames"]]
            got_ids, got_lg = seer_media_chat(d, [{"role": "user", "content": PROMPT, "videos": [{"path": path, **opts}]}],
                                              False, tmp)
        except (RuntimeError, ValueError, KeyError) as err:
            t.ok(False, f"video {name}: seer: {err}")
            continue
        t.ok(seer_idx == hf_idx, f"video {name}: sampled frames {seer_idx} = transformers' {hf_idx}")
        stamps = [f"<{g['seconds']:.1f} seconds>" for g in plan["groups"]]
        want_stamps = hf_stamps(proc, meta)
        t.ok(stamps == want_stamps, f"video {name}: timestamps {' '.join(stamps)} = transformers' "
             f"{' '.join(want_stamps)}")
        same = compare_prompt(t, proc.tokenizer, f"video {name} (timestamps included)", got_ids, want_ids)
        gt, gh, gw = want["video_grid_thw"][0].tolist()
        grid = [len(plan["groups"]), plan["resized_height"] // 16, plan["resized_width"] // 16]
        t.ok(grid == [gt, gh, gw], f"video {name}: seer's grid {grid} = video_grid_thw {[gt, gh, gw]}")
        if size != "96x64":
            # the case must tell the defaults apart: Qwen's cap gives another grid here
            capped = proc.video_processor(videos=[path], cap_pixels_per_frame=True, **opts)["video_grid_thw"]
            capped = capped[0].tolist()
            t.ok(capped != [gt, gh, gw], f"video {name}: with cap_pixels_per_frame=True transformers' grid would be "
                 f"{capped}, not {[gt, gh, gw]}")
        # and its prompt holds one pad run of (h/2)(w/2) per frame pair
        pads = np.array(got_ids) == proc.tokenizer.convert_tokens_to_ids("<|video_pad|>")
        runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], pads.astype(int), [0]]))))[::2].tolist()
        t.ok(runs == [gh * gw // 4] * gt, f"video {name}: seer's pad runs {runs} = {gt} x {gh * gw // 4}")
        if same:
            # transformers' whole path (its processor's pixels, its model) against seer's
            check_video_logits(t, f"video {name}", got_lg, Yardsticks(hf, want), pads)


def check_video_logits(t, name, got_lg, ys, pads):
    """The positions before the video, then those from the video on (check_logits each: the text right
    after a pair attends to the video's ill-conditioned rows)."""
    v0 = int(np.flatnonzero(pads)[0])
    check_logits(t, f"{name}: logits of the {v0} positions before the video", got_lg[:v0], ys, slice(None, v0))
    check_logits(t, f"{name}: logits of the {len(got_lg) - v0} positions from the video on", got_lg[v0:], ys,
                 slice(v0, None))


def check_vfr(t, d, hf, proc, tmp):
    """A variable frame rate (frames 20.. shown from 0.9 s on, 30 fps apart): seer's documented choice
    (docs/MODEL.md §5.3) stamps presentation times where transformers stamps index / average fps. The
    frames and every other token must still be transformers'; the stamps are checked against
    ffprobe's frame times (video_ref.probe), and the model on seer's prompt with transformers' pixels."""
    path = os.path.join(tmp, "vfr.mp4")
    src = "testsrc2=size=96x64:rate=30:duration=2,noise=alls=16:allf=t+u"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", src, "-vf",
                    "setpts='if(lt(N,20),N/30,0.7+N/90)/TB'", "-fps_mode", "vfr", "-c:v", "libx264", "-pix_fmt",
                    "yuv420p", path], check=True)
    want = hf_inputs(proc, [], [path], {})
    meta = proc.video_processor(videos=[path], return_metadata=True)["video_metadata"][0]
    hf_idx = [int(i) for i in meta.frames_indices]
    try:
        plan = seer_video_plan(d, path, {})
        got_ids, got_lg = seer_media_chat(d, [{"role": "user", "content": PROMPT, "videos": [{"path": path}]}],
                                          False, tmp)
    except (RuntimeError, ValueError, KeyError) as err:
        t.ok(False, f"variable-rate video: seer: {err}")
        return
    seer_idx = [f["index"] for f in plan["frames"]]
    t.ok(seer_idx == hf_idx, f"variable-rate video: sampled frames {seer_idx} = transformers' {hf_idx}")
    sec = video_ref.probe(path)[0]
    truth = [f"<{x:.1f} seconds>" for x in video_ref.group_times([sec[i] for i in hf_idx])]
    # transformers' prompt text with each of its stamps, in order, replaced by the true one
    real = iter(truth)
    hf_text = re.sub(r"<\d+\.\d seconds>", lambda m: next(real), proc.tokenizer.decode(want["input_ids"][0].tolist()))
    t.ok(truth != hf_stamps(proc, meta) and proc.tokenizer.decode(got_ids) == hf_text,
         f"variable-rate video: seer's prompt is transformers' with the presentation-time stamps {' '.join(truth)} "
         f"for its {' '.join(hf_stamps(proc, meta))}")
    pads = np.array(got_ids) == proc.tokenizer.convert_tokens_to_ids("<|video_pad|>")
    check_video_logits(t, "variable-rate video (seer's prompt, transformers' pixels)", got_lg,
                       Yardsticks(hf, inputs_on(proc, want, got_ids)), pads)


def main():
    t = Tap()
    seed = int(os.environ.get("SEER_TEST_SEED") or random.SystemRandom().randrange(1 << 31))
    t.replay = f"SEER_TEST_SEED={seed}"
    t.diag(f"seed {seed}")
    rng = np.random.default_rng(seed)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="seer-hf-vision-") as tmp:
        d = hf_make.make(tmp, "tiny", "cond", "f32", seed)
        hf = HFModel(d, "f32")
        proc = AutoProcessor.from_pretrained(d)
        pil = AutoProcessor.from_pretrained(d)  # the same, its image processor on the Pillow backend
        pil.image_processor = AutoImageProcessor.from_pretrained(d, backend="pil")
        t.diag(f"transformers' processors: {type(proc.image_processor).__name__}, {type(pil.image_processor).__name__} "
               f"(backend=\"pil\"), {type(proc.video_processor).__name__}")
        check_images(t, d, hf, proc, pil, rng, tmp)
        check_videos(t, d, hf, proc, tmp)
        check_vfr(t, d, hf, proc, tmp)
    t.diag(f"{time.time() - start:.0f} s")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
