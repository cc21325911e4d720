"""THE FAKE seer of tests/ocrmypdf/plugin_test.py: not seer, a stand-in that keeps to the contract of
`seer ocr --format hocr IMAGE` (one hOCR 1.2 document on stdout, its page box the image's pixels;
exit 3 and one line on stderr naming the file for a page that fails), so that the plugin's glue is
tested without a model. What it writes depends on the image and $FAKE_SEER_SEED only:

- `--version`: "seer 0.1.0";
- a square image: the failing page (exit 3, "IMAGE: the fake seer fails on square pages");
- any other: two lines of words drawn from WORDS (non-ASCII ones among them) plus a word naming the
  image's size, with x_wconf: the first with boxes inside the image, the second as seer writes a line
  the model gave no box for (the page's box, its words dividing the width, each the page's height).
$FAKE_SEER_MODE=fatal makes it fail as seer does on a bad model (exit 1), =badbox write a page box
twice the image's width.
The real end-to-end test (plugin_test.py's last part) runs the built seer instead.
"""

import os
import random
import sys
from html import escape

from PIL import Image

WORDS = ("alpha", "Bravo", "charlie-7", "Grüße", "naïve", "1984", "zeta", "Ωmega", "x/y", "quote's")


def hocr(width, height, rng, page_width):
    lines, y = [], max(1, height // 10)
    for li in range(2):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 5))] + ([f"{width}x{height}"] if li == 0 else [])
        x, spans = max(1, width // 20), []
        step = max(2, (width - 2 * x) // len(words))
        top, bottom = (y, y + 40) if li == 0 else (0, height)
        for wi, w in enumerate(words):
            spans.append(f'<span class="ocrx_word" id="word_1_{li + 1}_{wi + 1}" title="bbox {x} {top} {x + step - 1} '
                         f'{bottom}; x_wconf {rng.randint(50, 99)}">{escape(w)}</span>')
            x += step
        line_box = f"{width // 20} {y} {x} {y + 40}" if li == 0 else f"0 0 {width} {height}"
        lines.append(f'<span class="ocr_line" id="line_1_{li + 1}" title="bbox {line_box}">' + " ".join(spans) + "</span>")
        y += 80
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
<head><title></title><meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
<meta name="ocr-system" content="fake seer (tests/ocrmypdf/fake_seer.py)"/>
<meta name="ocr-capabilities" content="ocr_page ocr_carea ocr_par ocr_line ocrx_word"/></head>
<body><div class="ocr_page" id="page_1" title="bbox 0 0 {page_width} {height}; ppageno 0; scan_res 300 300">
<div class="ocr_carea" id="block_1_1" title="bbox 0 0 {width} {height}"><p class="ocr_par" id="par_1_1" title="bbox 0 0 {width} {height}">
{chr(10).join(lines)}
</p></div></div></body></html>
"""


def main():
    if sys.argv[1:] == ["--version"]:
        print("seer 0.1.0")
        return 0
    image, mode = sys.argv[-1], os.environ.get("FAKE_SEER_MODE")
    if mode == "fatal":
        print(f"{sys.argv[sys.argv.index('-m') + 1]}: the fake seer's model does not load", file=sys.stderr)
        return 1
    with Image.open(image) as im:
        width, height = im.size
    if width == height:
        print(f"{image}: the fake seer fails on square pages", file=sys.stderr)
        return 3
    rng = random.Random(f"{os.environ.get('FAKE_SEER_SEED', '0')} {width} {height}")
    sys.stdout.write(hocr(width, height, rng, 2 * width if mode == "badbox" else width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
