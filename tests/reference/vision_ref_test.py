#!/usr/bin/env python3
"""Self-test of the vision reference (vision_ref.py) and the mmproj files gen_tiny.py writes (TAP on stdout).

Each check compares with something written here from the spec text, not with the code under test: the §3.2
worked example and a two-frame video, positions typed out by hand; attention limited to each image / frame
(§4.5) against running each one alone, and against whole-sequence attention, which must differ; a still image's
patch embedding against the two temporal kernels of the mmproj (llama.cpp's Conv3D split) summed on one frame;
the merge-block order of §4.1/§4.6; the §4.3 resample on 48x48 (the table itself) and at hand-computed points;
every mmproj tensor, in F32, F16, BF16 and Q8_0, against the HF weights with the tensor types llama.cpp's
converter picks; the fused prompt's decode positions against one long prefill. Random data comes from a fresh
seed each run (printed; SEER_TEST_SEED=N replays one).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tap, ensure_numpy  # noqa: E402

ensure_numpy()
import numpy as np  # noqa: E402

import gen_tiny  # noqa: E402
import gguf as G  # noqa: E402
import hf2gguf  # noqa: E402
import safetensors  # noqa: E402
import vision_ref as V  # noqa: E402
from qwen35_ref import Qwen35Ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
tap = Tap()


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


# --- positions (spec §3.2) ------------------------------------------------------------------------------
def test_positions():
    # Worked example: <|im_start|> user \n <|vision_start|> + 16 pads (4x4) + <|vision_end|> + 4 text = 25.
    ids = [248045, 846, 198, 248053] + [248056] * 16 + [248054, 11, 12, 13, 14]
    want_t = [0, 1, 2, 3] + [4] * 16 + [8, 9, 10, 11, 12]
    want_h = [0, 1, 2, 3] + [4 + r for r in range(4) for _ in range(4)] + [8, 9, 10, 11, 12]
    want_w = [0, 1, 2, 3] + [4 + c for _ in range(4) for c in range(4)] + [8, 9, 10, 11, 12]
    pos, delta = V.rope_index(ids, [{"kind": "image", "t": 1, "h": 8, "w": 8}])
    tap.ok(len(ids) == 25 and pos.tolist() == [want_t, want_h, want_w] and delta == -12
           and len(ids) + delta == 13, "positions: spec §3.2 worked example (25 tokens, rope_delta -12, next 13)")

    # A video of t = 2 temporal patches, 4x8 patches per frame (merged 2x4): two runs of 8 pads, each frame
    # wrapped in vision_start/end with a timestamp token between them (§5.4); every frame restarts at T = p.
    a, b, vs, ve, ts, vp = 1, 2, 248053, 248054, 7, 248057
    ids = [a, b, vs] + [vp] * 8 + [ve, ts, vs] + [vp] * 8 + [ve, a]
    frame = lambda p: ([p] * 8, [p + r for r in range(2) for _ in range(4)], [p + c for _ in range(2) for c in range(4)])
    f0, f1 = frame(3), frame(10)
    want = [[0, 1, 2] + f0[k] + [7, 8, 9] + f1[k] + [14, 15] for k in range(3)]
    pos, delta = V.rope_index(ids, [{"kind": "video", "t": 2, "h": 4, "w": 8}])
    tap.ok(pos.tolist() == want and delta == 15 + 1 - 24,
           "positions: two-frame video, each frame a run of its own with T = p (rope_delta -8)")

    # An image and a video in one prompt take their grids by kind; a wrong run length is refused.
    ids = [vs] + [vp] * 4 + [ve, vs] + [248056] * 6 + [ve]
    pos, delta = V.rope_index(ids, [{"kind": "image", "t": 1, "h": 4, "w": 6},
                                    {"kind": "video", "t": 1, "h": 4, "w": 4}])
    want = [[0, 1, 1, 1, 1, 3, 4, 5, 5, 5, 5, 5, 5, 8],
            [0, 1, 1, 2, 2, 3, 4, 5, 5, 5, 6, 6, 6, 8],
            [0, 1, 2, 1, 2, 3, 4, 5, 6, 7, 5, 6, 7, 8]]
    tap.ok(pos.tolist() == want and delta == 8 + 1 - 14, "positions: video before image, grids matched by kind")
    try:
        V.rope_index([vs] + [248056] * 3 + [ve], [{"kind": "image", "t": 1, "h": 4, "w": 4}])
        refused = False
    except ValueError:
        refused = True
    tap.ok(refused, "positions: a pad run shorter than its grid is refused")


# --- tower (spec §4) -------------------------------------------------------------------------------------
def test_tower(hf_dir, mmproj_f32, label, rng):
    tower = V.VisionTower(hf_dir)
    grids = [(1, 4, 6), (2, 4, 4), (1, 2, 2)]
    n = sum(t * h * w for t, h, w in grids)
    pix = rng.standard_normal((n, V.PATCH_ROW))
    whole = tower.forward(pix, grids)
    parts, s = [], 0
    for t, h, w in grids:       # each image alone; the video as one run and as two separate frames
        if t == 1:
            parts.append(tower.forward(pix[s:s + h * w], [(1, h, w)]))
        else:
            parts += [tower.forward(pix[s + k * h * w:s + (k + 1) * h * w], [(1, h, w)]) for k in range(t)]
        s += t * h * w
    e = rel_l2(whole, np.concatenate(parts))
    tap.ok(whole.shape == (n // 4, tower.out_dim) and e <= 1e-12,
           f"{label}: segment-limited attention = each image and each video frame run alone "
           f"(rel L2 {e:.1e} <= 1e-12, float64)")
    one = tower.segments
    tower.segments = staticmethod(lambda g: [(0, n)])     # one segment: every patch sees every other
    joint = tower.forward(pix, grids)
    tower.segments = one
    tap.ok(rel_l2(joint, whole) > 1e-3, f"{label}: whole-sequence attention differs (the segmenting matters): "
                                        f"rel L2 {rel_l2(joint, whole):.2e} > 1e-3")

    # A still image: both temporal slices are the same frame; llama.cpp applies its two kernels to that frame
    # and adds them (spec §11.6). Kernels read from the F32 mmproj.
    r = G.GGUFReader(mmproj_f32)
    k0, k1 = r.tensor("v.patch_embd.weight"), r.tensor("v.patch_embd.weight.1")      # [Dv, 3, 16, 16]
    frame = rng.standard_normal((10, 3, 16, 16))
    rows = np.repeat(frame[:, :, None], 2, axis=2).reshape(10, V.PATCH_ROW)         # c, tt, y, x
    want = frame.reshape(10, -1) @ (k0 + k1).reshape(k0.shape[0], -1).T.astype(np.float64) \
        + r.tensor("v.patch_embd.bias")
    e = rel_l2(tower.patch_embed(rows), want)
    tap.ok(e <= 1e-12, f"{label}: still-image patch embedding = sum of the two temporal kernels on the frame "
                       f"(rel L2 {e:.1e} <= 1e-12)")

    # §4.3: on a 48x48 grid the resample is the table; elsewhere, hand-computed samples.
    E = tower.w["pos_embed.weight"]
    T = E.reshape(48, 48, -1)
    same = np.array_equal(V.bilinear_pos_embed(E, 48, 48), E)
    rows, cols = V.patch_coords(1, 48, 48)
    same_tower = np.array_equal(tower.pos_embed([(1, 48, 48)]), E[rows * 48 + cols])
    p22 = V.bilinear_pos_embed(E, 2, 2)
    corners = np.array_equal(p22, np.stack([T[0, 0], T[0, 47], T[47, 0], T[47, 47]]))
    p33 = V.bilinear_pos_embed(E, 3, 3)
    centre = 0.25 * (T[23, 23] + T[23, 24] + T[24, 23] + T[24, 24])          # (23.5, 23.5)
    edge = 0.5 * (T[0, 23] + T[0, 24])                                        # (0, 23.5)
    p1 = V.bilinear_pos_embed(E, 2, 4)                                        # x = 47/3 = 15.67
    fx = 47.0 / 3 - 15
    third = (1 - fx) * T[47, 15] + fx * T[47, 16]
    e = max(rel_l2(p33[4], centre), rel_l2(p33[1], edge), rel_l2(p1[5], third))
    tap.ok(same and same_tower and corners and e <= 1e-14,
           f"{label}: bilinear resample: 48x48 returns the table (also block-major in the tower), 2x2 the "
           f"corners, 3x3/2x4 hand-computed points (rel L2 {e:.1e} <= 1e-14)")


def test_merge_order(rng):
    # §4.1/§4.6: pixel row 4k+i belongs to merge block k = br*(w/2) + bc (raster over the merged grid), patch
    # (0,0),(0,1),(1,0),(1,1) of it for i = 0..3; repeated for each temporal index.
    t, h, w = 2, 6, 8
    rows, cols = V.patch_coords(t, h, w)
    want = []
    for _ in range(t):
        for br in range(h // 2):
            for bc in range(w // 2):
                want += [(2 * br, 2 * bc), (2 * br, 2 * bc + 1), (2 * br + 1, 2 * bc), (2 * br + 1, 2 * bc + 1)]
    tap.ok(list(zip(rows.tolist(), cols.tolist())) == want,
           "merge order: rows 4k..4k+3 are block k's (0,0),(0,1),(1,0),(1,1), blocks in raster order, per t")
    # The merger concatenates those four rows, in that order, into one 4*Dv input.
    Dv = 8
    tower = V.VisionTower.__new__(V.VisionTower)
    tower.Dv = Dv
    tower.w = {"merger.norm.weight": rng.standard_normal(Dv), "merger.norm.bias": rng.standard_normal(Dv)}
    x = rng.standard_normal((16, Dv))
    got = tower.merger_input(x)
    ln = lambda v: (v - v.mean()) / np.sqrt(v.var() + 1e-6) * tower.w["merger.norm.weight"] \
        + tower.w["merger.norm.bias"]
    want = np.stack([np.concatenate([ln(x[4 * k + i]) for i in range(4)]) for k in range(4)])
    tap.ok(rel_l2(got, want) <= 1e-14, "merge order: merger input k = LayerNorm of rows 4k, 4k+1, 4k+2, 4k+3 "
                                       "concatenated (LayerNorm before grouping)")
    try:
        import preprocess_ref
    except ImportError:
        tap.skip("tests/reference/preprocess_ref.py is not in this tree yet", "merge order: patchify agrees")
        return
    # An image whose patch (r, c) holds the value 10*r + c: patchify's rows must carry patch_coords' order.
    img = np.zeros((h * 16, w * 16, 3), np.uint8)
    for r in range(h):
        for c in range(w):
            img[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16] = 10 * r + c
    # mean 0, std 1/255 undo the rescale, so each row's values are the patch's 0..255 value again.
    pv, grid = preprocess_ref.patchify(img[None], (0.0, 0.0, 0.0), (1 / 255,) * 3)
    r1, c1 = V.patch_coords(1, h, w)
    tap.ok(grid == (1, h, w) and np.array_equal(np.round(pv).astype(int), np.repeat((10 * r1 + c1)[:, None],
                                                                                      V.PATCH_ROW, axis=1)),
           "merge order: preprocess_ref.patchify rows follow the same block-major order")


# --- mmproj dtypes -----------------------------------------------------------------------------------------
def dequant_q8_0(raw, shape):
    """Per-block Q8_0 decode written here (ggml block_q8_0: little-endian f16 d, then 32 int8)."""
    blk = np.dtype([("d", "<f2"), ("q", "i1", (32,))])
    b = np.frombuffer(raw, dtype=blk)
    return (b["d"].astype(np.float32)[:, None] * b["q"].astype(np.float32)).reshape(shape)


GGUF_PY_Q8_0 = """import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gguf import quants
from gguf.constants import GGMLQuantizationType
x = np.fromfile(sys.argv[2], dtype="<f4")
sys.stdout.buffer.write(quants.quantize(x, GGMLQuantizationType.Q8_0).tobytes())
"""


def test_mmproj(d, hf_dir, label, tmp):
    hf = {k[len("model.visual."):]: v for k, v in safetensors.read_dir(hf_dir).items() if k.startswith("model.visual.")}
    names = {"norm1": "ln1", "norm2": "ln2", "attn.qkv": "attn_qkv", "attn.proj": "attn_out",
             "mlp.linear_fc1": "ffn_up", "mlp.linear_fc2": "ffn_down"}
    ref = {"v.patch_embd.weight": hf["patch_embed.proj.weight"][:, :, 0],
           "v.patch_embd.weight.1": hf["patch_embed.proj.weight"][:, :, 1],
           "v.patch_embd.bias": hf["patch_embed.proj.bias"], "v.position_embd.weight": hf["pos_embed.weight"],
           "v.post_ln.weight": hf["merger.norm.weight"], "v.post_ln.bias": hf["merger.norm.bias"],
           "mm.0.weight": hf["merger.linear_fc1.weight"], "mm.0.bias": hf["merger.linear_fc1.bias"],
           "mm.2.weight": hf["merger.linear_fc2.weight"], "mm.2.bias": hf["merger.linear_fc2.bias"]}
    j = 0
    while f"blocks.{j}.norm1.weight" in hf:
        for hn, gn in names.items():
            for s in ("weight", "bias"):
                ref[f"v.blk.{j}.{gn}.{s}"] = hf[f"blocks.{j}.{hn}.{s}"]
        j += 1
    for ft, gtype, file_type in (("f32", G.GGML_F32, 0), ("f16", G.GGML_F16, 1), ("bf16", G.GGML_BF16, 32),
                                 ("q8_0", G.GGML_Q8_0, 7)):
        r = G.GGUFReader(os.path.join(d, f"mmproj-{ft}.gguf"))
        bad, worst = [], 0.0
        for name, want in ref.items():
            t = r.tensors.get(name)
            if t is None or t.shape != want.shape:
                bad.append(f"{name} missing or shaped {None if t is None else t.shape}")
                continue
            # llama.cpp's converter: patch kernels F16 only in an F16 file (else F32); vectors, biases and the
            # position table F32; a Q8_0 matrix whose rows are not whole 32-blocks falls back to F16.
            if name.startswith("v.patch_embd.weight"):
                expect = G.GGML_F16 if ft == "f16" else G.GGML_F32
            elif want.ndim == 1 or name == "v.position_embd.weight":
                expect = G.GGML_F32
            elif ft == "q8_0" and want.shape[-1] % 32:
                expect = G.GGML_F16
            else:
                expect = gtype
            if t.type != expect:
                bad.append(f"{name}: type {G.GGML_NAMES.get(t.type)} expected {G.GGML_NAMES[expect]}")
                continue
            if t.type == G.GGML_Q8_0:
                got = dequant_q8_0(r.raw(name), want.shape)
                # Each block: d = max|x|/127 (to f16), values within half a step of d (plus d's own rounding).
                blocks = want.reshape(-1, 32)
                dq = dequant_q8_0(r.raw(name), blocks.shape)
                scale = np.frombuffer(r.raw(name), dtype=np.dtype([("d", "<f2"), ("q", "i1", (32,))]))["d"]
                scale = scale.astype(np.float64)
                amax = np.abs(blocks).max(axis=1)
                d_ok = np.allclose(scale, amax / 127, rtol=2 ** -10, atol=2 ** -24)
                err = np.abs(dq - blocks).max(axis=1)
                if not d_ok or np.any(err > 0.5 * scale * (1 + 2 ** -9) + amax * 2 ** -10):
                    bad.append(f"{name}: Q8_0 blocks off the quantisation bound")
                worst = max(worst, rel_l2(got, want))
            elif not np.array_equal(r.tensor(name), want):
                bad.append(f"{name}: values differ from HF")
        extra = set(r.tensors) - set(ref)
        if extra:
            bad.append(f"unexpected tensors {sorted(extra)[:3]}")
        if r.get("general.file_type") != file_type:
            bad.append(f"general.file_type {r.get('general.file_type')}")
        for b in bad[:5]:
            tap.diag(f"{label} {ft}: {b}")
        note = f" (Q8_0 rel L2 {worst:.1e}, each value within half a step)" if ft == "q8_0" else " (exact)"
        tap.ok(not bad, f"{label}: mmproj-{ft}.gguf tensors equal the HF weights{note}, converter's tensor types")

    # The Q8_0 blocks as llama.cpp's gguf-py reads them (tests/oracle/ggml_dequant.py), when it is installed.
    oracle = os.path.join(HERE, "..", "oracle", "ggml_dequant.py")
    bundle = os.path.join(HERE, "..", "oracle", "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle")
    if not os.path.exists(bundle):
        tap.skip("npm node-llama-cpp not installed in tests/oracle", f"{label}: Q8_0 blocks = gguf-py's decode")
        return
    r = G.GGUFReader(os.path.join(d, "mmproj-q8_0.gguf"))
    q8 = [n for n, t in r.tensors.items() if t.type == G.GGML_Q8_0]
    blob = os.path.join(tmp, "q8.bin")
    with open(blob, "wb") as f:
        for n in q8:
            f.write(r.raw(n))
    p = subprocess.run([sys.executable, oracle, "Q8_0", blob, blob + ".f32"], capture_output=True, text=True)
    if p.returncode != 0:
        tap.ok(False, f"{label}: gguf-py dequantised the Q8_0 blocks ({p.stderr.strip()[-300:]})")
        return
    theirs = np.fromfile(blob + ".f32", dtype="<f4")
    ours = np.concatenate([dequant_q8_0(r.raw(n), (-1,)) for n in q8])
    tap.ok(len(q8) > 0 and np.array_equal(theirs, ours),
           f"{label}: {len(q8)} Q8_0 tensors decode identically in llama.cpp's gguf-py")
    # gguf-py's own quantiser (what the converter calls) on the HF values gives the same bytes.
    src = os.path.join(tmp, "q8_src.f32")
    np.concatenate([ref[n].reshape(-1) for n in q8]).astype("<f4").tofile(src)
    cache = os.path.join(HERE, "..", "oracle", "node_modules", ".seer-gguf-py")
    p = subprocess.run([sys.executable, "-c", GGUF_PY_Q8_0, cache, src], capture_output=True)
    mine = b"".join(r.raw(n) for n in q8)
    tap.ok(p.returncode == 0 and p.stdout == mine,
           f"{label}: Q8_0 bytes = gguf-py's quants.quantize of the HF values"
           + ("" if p.returncode == 0 else f" ({p.stderr.decode()[-300:]})"))


# --- fused prompt (spec §3.2, §4.8, §5.4) -----------------------------------------------------------------
def test_prompt(hf_dir, label, tmp, rng):
    try:
        import preprocess_ref  # noqa: F401
        from PIL import Image
    except ImportError as e:
        tap.skip(f"needs preprocess_ref.py and PIL ({e})", f"{label}: fused prompt")
        return
    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    imgs = []
    for k, (hh, ww) in enumerate(((70, 90), (40, 33))):
        path = os.path.join(tmp, f"img{k}.png")
        Image.fromarray(rng.integers(0, 256, (hh, ww, 3), dtype=np.uint8)).save(path)
        imgs.append(path)
    vs, ip, ve = cfg["vision_start_token_id"], cfg["image_token_id"], cfg["vision_end_token_id"]
    ids = [5, 6, vs, ip, ve, 7, vs, ip, ve, 8, 9]
    lo, hi = 32 * 32 * 4, 32 * 32 * 12
    res, logits = V.run_prompt(hf_dir, ids, imgs, lo, hi, 4)
    ref = Qwen35Ref(hf_dir)
    counts = [g["h"] * g["w"] // 4 for g in res["grids"]]
    tap.ok(res["image_tokens"] == counts and res["ids"].count(ip) == sum(counts)
           and len(res["ids"]) == len(ids) - 2 + sum(counts)
           and all(lo <= g["h"] * g["w"] * 256 <= hi for g in res["grids"])
           and ref.best(logits) == res["greedy"][0],
           f"{label}: fused prompt expands each image pad to gh*gw/4 ({counts}) within the pixel bounds")
    # Pad ids that do not follow <|vision_start|> (a random model's answer in an earlier turn held one,
    # and the reference refused the prompt) are text: embedded as tokens, one position each.
    vp = cfg["video_token_id"]
    stray = ids[:2] + [ip, vp] + ids[2:]
    res2, _ = V.run_prompt(hf_dir, stray, imgs, lo, hi, 1)
    p2 = np.array(res2["positions"])
    tap.ok(res2["image_tokens"] == counts and res2["ids"][2:4] == [ip, vp] and len(res2["ids"]) == len(res["ids"]) + 2
           and (p2[:, :4] == np.arange(4)).all() and res2["rope_delta"] == res["rope_delta"],
           f"{label}: image and video pad ids outside a placeholder are text (positions {p2[0, :4].tolist()})")
    # Decode positions n + rope_delta: one prefill over prompt + greedy tokens must predict the same tokens.
    tower = V.VisionTower(hf_dir)
    ids_all = res["ids"] + res["greedy"][:-1]
    x = ref.W("model.embed_tokens.weight")[np.array(ids_all)].copy()
    pv = [preprocess_ref.preprocess_image(preprocess_ref.load_rgb(p), lo, hi, [0.5] * 3, [0.5] * 3)[0]
          for p in imgs]
    x[np.array(ids_all) == ip] = tower.forward(np.concatenate(pv), [(g["t"], g["h"], g["w"]) for g in res["grids"]])
    n = len(res["ids"])
    pos = np.concatenate([np.array(res["positions"]), np.tile(np.arange(n, len(ids_all)) + res["rope_delta"],
                                                              (3, 1))], axis=1)
    full = ref.forward(embeds=x, positions=pos)
    again = [ref.best(row) for row in full[n - 1:]]
    e = rel_l2(full[n - 1], logits)
    tap.ok(again == res["greedy"] and e <= 1e-12,
           f"{label}: greedy decode at n + rope_delta ({res['rope_delta']}) = one prefill of prompt + tokens "
           f"(last prompt logits rel L2 {e:.1e} <= 1e-12)")


# --- the command lines the C tests call ---------------------------------------------------------------
def test_cli(hf_dir, label, tmp, rng):
    script = os.path.join(HERE, "vision_ref.py")
    run = lambda *args: subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    tower = V.VisionTower(hf_dir)
    grids = [(1, 4, 6), (2, 2, 4)]
    n = sum(t * h * w for t, h, w in grids)
    pix = rng.standard_normal((n, V.PATCH_ROW)).astype("<f4")
    pix_path, out, dd = (os.path.join(tmp, x) for x in ("pix.f32", "out.f32", "dump"))
    pix.tofile(pix_path)
    p = run("tower", "--model", hf_dir, "--pixels", pix_path, "--grid", "1,4,6;2,2,4", "--out", out, "--dump-dir", dd)
    want = tower.forward(pix, grids)
    got = np.fromfile(out, dtype="<f4") if p.returncode == 0 else np.zeros(0)
    sizes = {f"block_{j}": n * tower.Dv for j in range(tower.depth)}
    sizes.update(patch_embed=n * tower.Dv, pos_embed=n * tower.Dv, merger_in=n * tower.Dv)
    dumps_ok = all(os.path.getsize(os.path.join(dd, k + ".f32")) == 4 * v for k, v in sizes.items()
                   if os.path.exists(os.path.join(dd, k + ".f32"))) and len(os.listdir(dd)) == len(sizes)
    e = rel_l2(got, want.reshape(-1)) if got.size == want.size else float("inf")
    tap.ok(p.returncode == 0 and e <= 1e-6 and dumps_ok,
           f"{label}: tower command = in-process tower (rel L2 {e:.1e} <= 1e-6, f32 output), {len(sizes)} dumps")
    pix[:-1].tofile(pix_path)
    p = run("tower", "--model", hf_dir, "--pixels", pix_path, "--grid", "1,4,6;2,2,4", "--out", out)
    lines = p.stderr.strip().splitlines()
    tap.ok(p.returncode == 1 and len(lines) == 1 and pix_path in lines[0],
           f"{label}: tower command refuses a pixel file of the wrong size with one line naming it")

    ids_path, grids_path = os.path.join(tmp, "ids.json"), os.path.join(tmp, "grids.json")
    with open(ids_path, "w") as f:
        json.dump([248045, 846, 198, 248053] + [248056] * 16 + [248054, 11, 12, 13, 14], f)
    with open(grids_path, "w") as f:
        json.dump([{"kind": "image", "t": 1, "h": 8, "w": 8}], f)
    p = run("positions", "--ids", ids_path, "--grids", grids_path)
    res = json.loads(p.stdout) if p.returncode == 0 else {}
    tap.ok(res.get("rope_delta") == -12 and res.get("positions", [[]])[1][4:8] == [4, 4, 4, 4],
           f"{label}: positions command (spec ids without --model): worked example")


def main():
    seed = int(os.environ.get("SEER_TEST_SEED", time.time_ns() % (1 << 31)))
    tap.diag(f"seed {seed}")
    rng = np.random.default_rng(seed)
    t0 = time.time()
    test_positions()
    test_merge_order(rng)
    with tempfile.TemporaryDirectory() as tmp:
        for vision in (None, "hd64", "hd72"):
            label = f"tiny/{vision or 'hd16'}"
            d = os.path.join(tmp, label.replace("/", "-"))
            hf_dir = gen_tiny.generate(d, "tiny", int(rng.integers(1, 1 << 30)), gguf=False, vision=vision)
            for ft in hf2gguf.MMPROJ_FTYPES:
                hf2gguf.convert_mmproj(hf_dir, os.path.join(d, f"mmproj-{ft}.gguf"), ft)
            test_tower(hf_dir, os.path.join(d, "mmproj-f32.gguf"), label, rng)
            test_mmproj(d, hf_dir, label, tmp)
            if vision == "hd64":
                test_prompt(hf_dir, label, tmp, rng)
                test_cli(hf_dir, label, tmp, rng)
    tap.diag(f"{time.time() - t0:.1f} s")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
