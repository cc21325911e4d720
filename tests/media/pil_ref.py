#!/usr/bin/env python3
"""pil_ref.py — test images and their reference decodes, from Debian's python3-pil (Pillow), for
tests/media/decode.c. Pillow is the oracle because Hugging Face's load_image / convert_to_rgb is
Pillow: what seer decodes must equal what transformers would have seen.

  pil_ref.py make DIR SEED        writes the PIL-made test files into DIR (random content)
  pil_ref.py ref FILE...          writes FILE.N.ppm for every page N (0-based) of each FILE:
                                  Pillow's decode, exif_transpose'd, converted to RGB the way
                                  transformers' convert_to_rgb does (alpha over white)

16-bit greyscale: Pillow opens it as mode I / I;16 and Image.convert("RGB") would clip (65535 →
255, 300 → 255), which is no one's intent; the reference keeps the high byte, as Pillow itself
does for 16-bit RGB(A) PNGs ("RGB;16B" unpacking) and libtiff's RGBA interface does.
"""
import struct
import sys

import numpy as np
from PIL import Image, ImageOps, ImageSequence


def to_rgb(im):
    """transformers.image_transforms.convert_to_rgb applied to the image as Pillow opened it
    (after exif_transpose): alpha over white. HF's load_image(path) would call .convert("RGB")
    first and so drop alpha instead; seer composites (docs/FORMATS.md)."""
    if im.mode in ("I", "I;16", "I;16B", "I;16L"):
        a = np.asarray(im).astype(np.int64)
        im = Image.fromarray((a >> 8).clip(0, 255).astype(np.uint8), "L")
    if im.mode == "RGB":
        return im
    rgba = im.convert("RGBA")
    bg = Image.new("RGBA", rgba.size, (255, 255, 255))
    return Image.alpha_composite(bg, rgba).convert("RGB")


def write_ppm(path, im):
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % im.size)
        f.write(im.tobytes())


def ref(files):
    for path in files:
        im = Image.open(path)
        for n, frame in enumerate(ImageSequence.Iterator(im)):
            fr = ImageOps.exif_transpose(frame.copy()) if n == 0 else frame.copy()
            write_ppm("%s.%d.ppm" % (path, n), to_rgb(fr))
            if im.format == "GIF":  # HF takes the first frame of an animation
                break


def bmp_v5_rgba(path, rgba):
    """A 32-bit BITMAPV5HEADER BMP with BI_BITFIELDS and an alpha mask (Pillow reads RGBA; it
    cannot write one)."""
    h, w = rgba.shape[:2]
    rows = rgba[::-1][:, :, [2, 1, 0, 3]].tobytes()  # bottom-up BGRA
    hs = 124
    dib = struct.pack("<IiiHHIIiiII", hs, w, h, 1, 32, 3, len(rows), 2835, 2835, 0, 0)
    dib += struct.pack("<IIII", 0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000) + b"sRGB"
    dib += bytes(hs - len(dib))
    with open(path, "wb") as f:
        f.write(b"BM" + struct.pack("<IHHI", 14 + hs + len(rows), 0, 0, 14 + hs) + dib + rows)


def vector_pdf(path, rng):
    """Two pages of vector content written by hand: filled and stroked shapes and a line of
    Helvetica text; the second page has an odd MediaBox and /Rotate 90 (sizes round up, axes swap)."""
    def shapes():
        ops = []
        for _ in range(6):
            r, g, b = rng.random(3)
            x, y, w, h = rng.integers(0, 120, 4)
            ops.append(f"{r:.3f} {g:.3f} {b:.3f} rg {x} {y} {w + 5} {h + 5} re f")
        ops.append("0 0 0 RG 2 w 5 5 m 150 90 l S")
        ops.append("BT /F1 14 Tf 10 40 Td (seer 0123) Tj ET")
        return "\n".join(ops).encode()
    pages = [(b"[0 0 160 120]", b""), (b"[0 0 200.5 100.25]", b" /Rotate 90")]
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>"]
    for i, (box, extra) in enumerate(pages):
        content = shapes()
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox " + box + extra +
                    b" /Resources << /Font << /F1 7 0 R >> >> /Contents %d 0 R >>" % (4 + 2 * i))
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out, offs = bytearray(b"%PDF-1.4\n"), []
    for n, o in enumerate(objs, 1):
        offs.append(len(out))
        out += b"%d 0 obj\n" % n + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offs)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)


def make(d, seed):
    rng = np.random.default_rng(seed)

    def size():
        return int(rng.integers(7, 90)), int(rng.integers(7, 90))

    def rand(shape, dtype=np.uint8, hi=256):
        return rng.integers(0, hi, size=shape).astype(dtype)

    def smooth(w, h):
        # JPEG of white noise is all artefacts; a gradient plus mild noise is a fairer picture
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) * 127 // max(w + h - 2, 1)], -1)
        return (base + rand((h, w, 3), np.int16, 24) - 12).clip(0, 255).astype(np.uint8)

    def alpha(h, w):
        a = rand((h, w))
        a[0, :] = 0      # fully transparent and fully opaque rows are always present
        a[-1, :] = 255
        return a

    w, h = size()
    Image.fromarray(rand((h, w, 3)), "RGB").save(f"{d}/src.png")          # ffmpeg's input
    Image.fromarray(smooth(w, h), "RGB").save(f"{d}/smooth.png")
    w, h = size()
    Image.fromarray(np.dstack([rand((h, w, 3)), alpha(h, w)]), "RGBA").save(f"{d}/rgba.png")
    w, h = size()
    Image.fromarray(np.dstack([rand((h, w)), alpha(h, w)]), "LA").save(f"{d}/la.png")
    w, h = size()
    Image.fromarray(rand((h, w)), "L").save(f"{d}/gray.png")
    w, h = size()
    Image.fromarray(rand((h, w), np.uint16, 65536), "I;16").save(f"{d}/gray16.png")
    w, h = size()
    Image.fromarray(rand((h, w)) > 127).save(f"{d}/bilevel.png")
    w, h = size()
    p = Image.fromarray(rand((h, w), hi=40), "P")
    p.putpalette(list(rand(40 * 3)))
    trns = bytes(rand(40))
    p.save(f"{d}/pal_trns.png", transparency=trns)
    Image.fromarray(rand((h, w), hi=4) * 60, "L").save(f"{d}/gray_trns.png", transparency=60)
    Image.fromarray(rand((h, w, 3), hi=2) * 200, "RGB").save(f"{d}/rgb_trns.png", transparency=(200, 0, 200))
    p.save(f"{d}/pal.gif")
    p.save(f"{d}/pal_trns.gif", transparency=3)
    p.save(f"{d}/pal.bmp")
    p.save(f"{d}/pal.tif")
    Image.open(f"{d}/src.png").save(f"{d}/rgb.bmp")
    bmp_v5_rgba(f"{d}/rgba_v5.bmp", np.dstack([rand((h, w, 3)), alpha(h, w)]))
    Image.open(f"{d}/src.png").save(f"{d}/rgb_lzw.tif", compression="tiff_lzw")
    Image.open(f"{d}/rgba.png").save(f"{d}/rgba.tif")
    Image.open(f"{d}/gray16.png").convert("I;16").save(f"{d}/gray16.tif")
    Image.open(f"{d}/bilevel.png").save(f"{d}/bilevel.tif")
    w, h = size()
    Image.fromarray(rand((h, w, 4)), "CMYK").save(f"{d}/cmyk.tif")
    Image.fromarray(smooth(w, h)).convert("CMYK").save(f"{d}/cmyk.jpg", quality=90)
    Image.fromarray(smooth(w, h)[:, :, 0], "L").save(f"{d}/gray.jpg", quality=85)
    # every EXIF orientation, on a picture whose width and height differ
    w, h = size()
    img = Image.fromarray(smooth(w, h + 5))
    for o in range(1, 9):
        ex = Image.Exif()
        ex[0x0112] = o
        img.save(f"{d}/exif{o}.jpg", quality=92, exif=ex.tobytes())
    img.save(f"{d}/sub444.jpg", quality=95, subsampling=0)
    img.save(f"{d}/progressive.jpg", quality=90, progressive=True)
    ex = Image.Exif()
    ex[0x0112] = 6
    img.save(f"{d}/exif6.png", exif=ex.tobytes())
    ex[0x0112] = 7
    img.save(f"{d}/exif7.webp", lossless=True, exif=ex.tobytes())
    Image.fromarray(smooth(w, h)).save(f"{d}/orient6.tif", tiffinfo={274: 6})
    # a three-page TIFF whose pages differ in size and colour layout
    pages = [Image.fromarray(rand((h, w, 3))) for (w, h) in (size(), size())]
    pages.append(Image.fromarray(rand((19, 23)), "L"))
    pages[0].save(f"{d}/multi.tif", save_all=True, append_images=pages[1:])
    vector_pdf(f"{d}/vector.pdf", rng)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "ref":
        ref(sys.argv[2:])
    else:
        sys.exit("usage: pil_ref.py make DIR SEED | ref FILE...")
