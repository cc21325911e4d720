#!/usr/bin/env python3
"""Reference of Qwen3.5's image/video preprocessing, written from docs/MODEL.md
§4.1 (pixel rows), §5.1–§5.3 (smart_resize, rescale/normalise, video budget), with Pillow as the resizer
(what Hugging Face's PIL backend calls: Image.resize(size, BICUBIC)). Python 3 + Debian's python3-numpy
and python3-pil.

Importable (tests/reference/vision_ref.py uses it):
    smart_resize(h, w, factor=32, min_pixels=65536, max_pixels=16777216) -> (h, w)   ValueError if refused
    smart_resize_video(n, h, w, factor=32, min_pixels=4096, max_pixels=25165824) -> (h, w)
    video_capped_max_pixels(n, factor=32, shortest_edge=4096, longest_edge=25165824) -> max_pixels
    load_rgb(path) -> PIL RGB image (exif_transpose, alpha composited over white)
    resize_bicubic(rgb uint8 [H,W,3], dw, dh) -> uint8 [dh,dw,3]
    patchify(frames uint8 [F,H,W,3], mean, std) -> (float32 [N,1536], (t, gh, gw))
    preprocess_image(pil_img, min_pixels, max_pixels, mean, std) -> (float32 [N,1536], (t, gh, gw))

CLI (for tests/vision/preprocess.c; each batches many cases into one process):
    preprocess_ref.py check             exit 0 when numpy and PIL import
    preprocess_ref.py selftest          checks load_rgb (alpha over white, grey and palette modes, EXIF
                                        orientation) against formulas written here; exit 1 on a failure
    preprocess_ref.py sizes < TABLE     lines "image H W F MIN MAX", "video N H W F MIN MAX",
                                        "cap N F SHORTEST LONGEST"; prints "H W" / "P" or "error" per line
    preprocess_ref.py resize LIST       lines "IN W H DW DH OUT" (raw packed RGB files)
    preprocess_ref.py resize-torchvision LIST   the same through transformers' default (torchvision)
                                        processor's resize; needs the pinned HF venv (torch, torchvision)
    preprocess_ref.py patchify LIST     lines "IN F W H M0 M1 M2 S0 S1 S2 OUT" (IN: F frames back to back;
                                        OUT: float32 rows); prints "t gh gw" per line
    preprocess_ref.py image LIST        lines "IN W H MIN MAX OUT": preprocess_image with mean = std = 0.5;
                                        prints "t gh gw" per line
"""

import math
import os
import sys


def _ensure_deps():
    """Re-runs under Debian's /usr/bin/python3 when the python3 on PATH (pyenv, venv) lacks numpy or PIL."""
    try:
        import numpy  # noqa: F401
        import PIL  # noqa: F401
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
            os.execv(system, [system] + sys.argv)
        raise


if __name__ == "__main__":
    _ensure_deps()

import numpy as np  # noqa: E402

PATCH = 16
TEMPORAL_PATCH = 2
MERGE = 2
FACTOR = PATCH * MERGE
IMAGE_MEAN = (0.5, 0.5, 0.5)  # spec §5.1
IMAGE_STD = (0.5, 0.5, 0.5)


def smart_resize(h, w, factor=FACTOR, min_pixels=65536, max_pixels=16777216):
    """spec §5.2 steps 1–4 (Python round = half to even)."""
    if max(h, w) / min(h, w) > 200:
        raise ValueError(f"aspect ratio of {w}x{h} exceeds 200")
    hb = round(h / factor) * factor
    wb = round(w / factor) * factor
    if hb * wb > max_pixels:
        beta = math.sqrt((h * w) / max_pixels)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def smart_resize_video(n, h, w, factor=FACTOR, min_pixels=4096, max_pixels=25165824,
                       temporal_factor=TEMPORAL_PATCH):
    """spec §5.3 steps 1–3: the budget covers all n sampled frames."""
    if n < temporal_factor:
        raise ValueError(f"{n} frames, fewer than {temporal_factor}")
    if h < factor or w < factor:
        scale = max(factor / h, factor / w)
        h, w = int(h * scale), int(w * scale)
    if max(h, w) / min(h, w) > 200:
        raise ValueError(f"aspect ratio of {w}x{h} exceeds 200")
    hb = round(h / factor) * factor
    wb = round(w / factor) * factor
    tb = round(n / temporal_factor) * temporal_factor
    if tb * hb * wb > max_pixels:
        beta = math.sqrt((n * h * w) / max_pixels)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif tb * hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (n * h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def video_capped_max_pixels(n, factor=FACTOR, shortest_edge=4096, longest_edge=25165824):
    """spec §5.3 step 4 (cap_pixels_per_frame): the max_pixels handed to smart_resize_video."""
    per_frame = max(min(768 * factor * factor, longest_edge // n), int(shortest_edge * 1.05))
    return per_frame * n


def convert_to_rgb(img):
    """transformers' convert_to_rgb: non-RGB images go through RGBA and are composited over white."""
    from PIL import Image

    if img.mode == "RGB":
        return img
    rgba = img.convert("RGBA")
    background = Image.new("RGBA", rgba.size, (255, 255, 255))
    return Image.alpha_composite(background, rgba).convert("RGB")


def load_rgb(path):
    from PIL import Image, ImageOps

    img = Image.open(path)
    img = ImageOps.exif_transpose(img)
    return convert_to_rgb(img)


def resize_bicubic(rgb, dw, dh):
    """Pillow's Image.resize((dw, dh), BICUBIC) of a uint8 [H,W,3] array (a copy when sizes match)."""
    from PIL import Image

    img = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8), "RGB")
    return np.asarray(img.resize((dw, dh), Image.BICUBIC, reducing_gap=None))


def resize_torchvision(rgb, dw, dh):
    """transformers' TorchvisionBackend.resize(BICUBIC) of a uint8 [H,W,3] array, as its default
    Qwen2-VL image processor calls it: torchvision's resize(antialias=True) of the uint8 CHW tensor."""
    from hf_make import reference_env

    torch, _ = reference_env()  # the real safetensors first, not this folder's
    from transformers.image_processing_backends import TorchvisionBackend
    from transformers.image_utils import PILImageResampling, SizeDict

    t = torch.from_numpy(np.ascontiguousarray(rgb)).permute(2, 0, 1).contiguous()
    out = TorchvisionBackend.resize(None, t, SizeDict(height=dh, width=dw), resample=PILImageResampling.BICUBIC)
    return out.permute(1, 2, 0).numpy()


def patchify(frames, mean=IMAGE_MEAN, std=IMAGE_STD):
    """spec §4.1 / §5.2: rescale (float64 product, stored float32), normalise in float32, pad the frames
    to a multiple of Tp with the last one, then rows in block-major order with (c, tt, py, px) columns."""
    frames = np.asarray(frames)
    assert frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[3] == 3
    x = (frames.astype(np.float64) * (1 / 255)).astype(np.float32)
    x = (x - np.asarray(mean, dtype=np.float32)) / np.asarray(std, dtype=np.float32)
    x = x.transpose(0, 3, 1, 2)  # [F, C, H, W]
    pad = -x.shape[0] % TEMPORAL_PATCH
    if pad:
        x = np.concatenate([x, np.repeat(x[-1:], pad, axis=0)], axis=0)
    f, c, h, w = x.shape
    gt, gh, gw = f // TEMPORAL_PATCH, h // PATCH, w // PATCH
    assert h % FACTOR == 0 and w % FACTOR == 0
    x = x.reshape(gt, TEMPORAL_PATCH, c, gh // MERGE, MERGE, PATCH, gw // MERGE, MERGE, PATCH)
    # axes: t, tt, c, br, ir, py, bc, ic, px  ->  rows (t, br, bc, ir, ic), columns (c, tt, py, px)
    x = x.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return np.ascontiguousarray(x.reshape(gt * gh * gw, c * TEMPORAL_PATCH * PATCH * PATCH)), (gt, gh, gw)


def preprocess_image(pil_img, min_pixels=65536, max_pixels=16777216, mean=IMAGE_MEAN, std=IMAGE_STD):
    img = convert_to_rgb(pil_img)
    rgb = np.asarray(img, dtype=np.uint8)
    h, w = rgb.shape[:2]
    hb, wb = smart_resize(h, w, FACTOR, min_pixels, max_pixels)
    rgb = resize_bicubic(rgb, wb, hb)
    return patchify(rgb[None], mean, std)


# ---- CLI -----------------------------------------------------------------------------------------------

def _read_rgb(path, w, h, frames=1):
    data = np.fromfile(path, dtype=np.uint8)
    assert data.size == frames * h * w * 3, f"{path}: {data.size} bytes for {frames} x {w}x{h} RGB"
    return data.reshape(frames, h, w, 3)


def _sizes():
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "image":
                print("%d %d" % smart_resize(int(f[1]), int(f[2]), *map(int, f[3:6])))
            elif f[0] == "video":
                print("%d %d" % smart_resize_video(*map(int, f[1:7])))
            elif f[0] == "cap":
                print(video_capped_max_pixels(*map(int, f[1:5])))
            else:
                raise SystemExit(f"preprocess_ref.py: unknown sizes line {line!r}")
        except (ValueError, ZeroDivisionError):
            print("error")


def _lines(path):
    with open(path) as fh:
        return [ln.split() for ln in fh if ln.strip()]


def _selftest(tmp_dir):
    """load_rgb against what the spec says it does (§5.2 'composites transparent images over white')."""
    from PIL import Image

    rng = np.random.default_rng()
    failures = []
    rgba = rng.integers(0, 256, size=(13, 17, 4), dtype=np.uint8)
    rgba[0, :, 3], rgba[1, :, 3] = 0, 255
    path = os.path.join(tmp_dir, "alpha.png")
    Image.fromarray(rgba, "RGBA").save(path)
    got = np.asarray(load_rgb(path)).astype(np.float64)
    a = rgba[..., 3:].astype(np.float64) / 255
    want = rgba[..., :3] * a + 255 * (1 - a)  # "over" onto opaque white; Pillow rounds in integers: within 1
    if np.abs(got - want).max() > 1 or (got[0] != 255).any() or (got[1] != rgba[1, :, :3]).any():
        failures.append("RGBA is not composited over white")
    grey = rng.integers(0, 256, size=(5, 6), dtype=np.uint8)
    Image.fromarray(grey, "L").save(path)
    if (np.asarray(load_rgb(path)) != grey[..., None]).any():
        failures.append("a grey image does not replicate into R, G and B")
    pal = Image.fromarray(rgba[..., :3], "RGB").quantize(colors=16)
    pal.save(path)
    if (np.asarray(load_rgb(path)) != np.asarray(pal.convert("RGB"))).any():
        failures.append("a palette image does not map through its palette")
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    Image.fromarray(rgba[..., :3], "RGB").save(path, exif=exif)
    img = load_rgb(path)
    if img.size != (13, 17) or (np.asarray(img) != np.rot90(rgba[..., :3], k=-1)).any():
        failures.append(f"EXIF orientation 6 not applied (size {img.size})")
    for f in failures:
        print(f"preprocess_ref.py selftest: {f}", file=sys.stderr)
    return 1 if failures else 0


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "check":
        return 0
    if cmd == "selftest":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp_dir:
            return _selftest(tmp_dir)
    if cmd == "sizes":
        _sizes()
        return 0
    if cmd == "resize":
        for src, w, h, dw, dh, out in _lines(argv[2]):
            resize_bicubic(_read_rgb(src, int(w), int(h))[0], int(dw), int(dh)).tofile(out)
        return 0
    if cmd == "resize-torchvision":
        for src, w, h, dw, dh, out in _lines(argv[2]):
            resize_torchvision(_read_rgb(src, int(w), int(h))[0], int(dw), int(dh)).tofile(out)
        return 0
    if cmd == "patchify":
        for src, nf, w, h, *ms, out in _lines(argv[2]):
            frames = _read_rgb(src, int(w), int(h), int(nf))
            mean = np.array([float(v) for v in ms[:3]], dtype=np.float32)
            std = np.array([float(v) for v in ms[3:]], dtype=np.float32)
            rows, grid = patchify(frames, mean, std)
            rows.tofile(out)
            print("%d %d %d" % grid)
        return 0
    if cmd == "image":
        from PIL import Image

        for src, w, h, lo, hi, out in _lines(argv[2]):
            img = Image.fromarray(_read_rgb(src, int(w), int(h))[0], "RGB")
            rows, grid = preprocess_image(img, int(lo), int(hi))
            rows.tofile(out)
            print("%d %d %d" % grid)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
