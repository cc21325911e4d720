#!/usr/bin/env python3
"""TAP: the OCRmyPDF plugin (python/ocrmypdf_seer) end to end, `ocrmypdf --plugin ocrmypdf_seer in.pdf
out.pdf` with OCRmyPDF 17.13.0 (the venv scripts/ocrmypdf-venv.sh makes; the plugin pip-installed from the
work tree into a temporary folder), on scans made here: Pillow draws text into page images of
different sizes, one page stored sideways with /Rotate 90, one square page that fails.

Part 1 runs THE FAKE seer (tests/ocrmypdf/fake_seer.py, not seer: a fixed-format hOCR writer that fails
on square pages, and writes one line without a box, as seer writes a line the model did not place)
behind a recorder that keeps what it printed for each page image. Checked: options
reach seer (-m, --mmproj, --device, --threads, -l and --seer-prompt-hint as a prompt that extends
seer's own, which must equal SEER_OCR_PROMPT_LINES in include/seer.h); out.pdf claims PDF/A-2B; page
count, sizes and /Rotate are the input's (--rotate-pages leaves every page: seer reports no
orientation); pdftotext of each page gives exactly the words of that page's hOCR, each at its box
(pdftotext -bbox on the page as displayed), the failed page none; the sidecar; a failing page ends
the run with OCRmyPDF's exit 7 and seer's stderr line, or with --seer-skip-failed-pages is kept
without text and a warning, as is every page past --seer-timeout; the sandwich renderer with
--output-type pdfa (Ghostscript); seer's fatal exit 1 and an hOCR page box unlike the image are exit 7,
--ocr-engine tesseract exit 1, a missing seer binary exit 3 (MissingDependencyError).
Part 2 runs the built seer (SEER_BUILD_DIR/seer) on a tiny random model (tests/reference/gen_tiny.py,
fresh seed: SEER_TEST_SEED replays) and checks PDF/A, the sidecar against the words seer's hOCR held,
and that the text layer holds nothing but seer's characters (why not equality: part_real); it skips,
visibly, while `seer ocr` has no --format hocr.
"""

import json
from collections import Counter
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "ocrmypdf")


def ensure_venv_python():
    """Re-executes this script under the OCRmyPDF venv's python; a venv that cannot be made is a
    failure ("Bail out!"), never a skip: CI must run the plugin's tests."""
    if os.environ.get("SEER_OCRMYPDF_REEXEC") == "1":
        return
    p = subprocess.run([os.path.join(ROOT, "scripts", "ocrmypdf-venv.sh")], stdout=subprocess.PIPE, text=True)
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        print(f"Bail out! scripts/ocrmypdf-venv.sh failed (exit {p.returncode})", flush=True)
        sys.exit(1)
    os.environ["SEER_OCRMYPDF_REEXEC"] = "1"
    os.execv(lines[-1], [lines[-1], os.path.abspath(__file__)] + sys.argv[1:])


ensure_venv_python()
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import pikepdf  # noqa: E402
from common import Tap  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

DPI = 100
# (width, height) in pixels at DPI as displayed, and the /Rotate the page is stored with
PAGES = [((850, 1100), 0), ((1100, 850), 0), ((800, 1000), 90), ((900, 900), 0)]
FAILING = 3  # index of the square page: the fake seer fails on it


def make_scan(path, pages, rng):
    """A scanned PDF: each page one image with a few lines of text; a page with /Rotate R stores its
    image turned by -R, so that viewers (and OCRmyPDF's rasteriser) show it upright."""
    images = []
    for (w, h), rot in pages:
        im = Image.new("L", (w, h), 255)
        d = ImageDraw.Draw(im)
        for i in range(3):
            d.text((60, 80 + 60 * i), " ".join(rng.choice(["scan", "page", "text", str(w)]) for _ in range(5)), fill=0)
        images.append(im.rotate(rot, expand=True) if rot else im)
    images[0].save(path, save_all=True, append_images=images[1:], resolution=DPI)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        for page, (_, rot) in zip(pdf.pages, pages):
            if rot:
                page.Rotate = rot
        pdf.save(path)


def page_shapes(path):
    with pikepdf.open(path) as pdf:
        return [([round(float(v), 1) for v in p.mediabox], int(p.obj.get("/Rotate", 0))) for p in pdf.pages]


def pdfa_status(path):
    with pikepdf.open(path) as pdf:
        return pdf.open_metadata().pdfa_status


def hocr_boxes(text):
    """[(word, (x0, y0, x1, y1) in points, or None)] of an hOCR document's ocrx_words, in order, its
    pixels taken at DPI; None for the words of a line whose box is the page's, the line seer could not
    place (stdlib XML: not the parser under test)."""
    def box(e):
        m = re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", e.get("title", ""))
        return tuple(int(v) for v in m.groups()) if m else None

    def classes(e):
        return (e.get("class") or "").split()

    root = ET.fromstring(text.encode())
    page = box(next(e for e in root.iter() if "ocr_page" in classes(e)))
    words = []
    for line in (e for e in root.iter() if "ocr_line" in classes(e)):
        for w in (e for e in line.iter() if "ocrx_word" in classes(e)):
            words.append(("".join(w.itertext()).strip(),
                          None if box(line) == page else tuple(v * 72 / DPI for v in box(w))))
    return words


def hocr_words(text):
    return [w for w, _ in hocr_boxes(text)]


def pdf_boxes(path, page):
    """[(word, (x0, y0, x1, y1))] of pdftotext -bbox: points, in the page as displayed (/Rotate applied)."""
    out = subprocess.run(["pdftotext", "-bbox", "-f", str(page), "-l", str(page), path, "-"],
                         capture_output=True, text=True, check=True).stdout
    return [(e.text or "", tuple(float(e.get(k)) for k in ("xMin", "yMin", "xMax", "yMax")))
            for e in ET.fromstring(out.encode()).iter() if e.tag.endswith("word")]


def centre_inside(got, want, slack=2.0):
    """The centre of the box pdftotext found lies in the hOCR's box, within `slack` points: fpdf2 sets
    a word's baseline and font size from its box, so the glyphs' extent differs from the box by the
    font's ascent and descent, never by a word's place."""
    cx, cy = (got[0] + got[2]) / 2, (got[1] + got[3]) / 2
    return want[0] - slack <= cx <= want[2] + slack and want[1] - slack <= cy <= want[3] + slack


def header_prompt():
    """SEER_OCR_PROMPT_LINES as include/seer.h spells it (adjacent C string literals joined)."""
    src = open(os.path.join(ROOT, "include", "seer.h"), encoding="utf-8").read()
    m = re.search(r"#define SEER_OCR_PROMPT_LINES((?:[^\n]*\\\n)*[^\n]*)", src)
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))) if m else None


class Runner:
    """Runs ocrmypdf with the plugin, seer being a recorder that runs `target` and keeps, per page
    image (000001_ocr.png ...), its arguments and what it printed under `log`."""

    def __init__(self, tmp, site):
        self.tmp, self.site = tmp, site
        self.bin = os.path.join(os.path.dirname(sys.executable), "ocrmypdf")

    def recorder(self, name, target):
        log = os.path.join(self.tmp, name)
        os.makedirs(log)
        path = os.path.join(self.tmp, name + ".sh")
        with open(path, "w") as f:
            f.write(f"""#!/bin/sh
[ "$1" = --version ] && exec {target} "$@"
for last; do :; done
key="{log}/$(basename "$last")"
printf '%s\\n' "$@" >"$key.args"
{target} "$@" >"$key.out"
rc=$?
cat "$key.out"
exit $rc
""")
        os.chmod(path, 0o755)
        return path, log

    def run(self, args, env=None):
        e = dict(os.environ, PYTHONPATH=self.site, **(env or {}))
        return subprocess.run([self.bin, "--plugin", "ocrmypdf_seer"] + args, capture_output=True, text=True,
                              env=e, timeout=600)


def recorded(log):
    """{page number: (argv, stdout)} of the recorder's log."""
    got = {}
    for name in os.listdir(log):
        m = re.match(r"0*(\d+)_ocr\.png\.out$", name)
        if m:
            base = os.path.join(log, name[:-4])
            argv = open(base + ".args", encoding="utf-8").read().split("\n")[:-1]
            got[int(m.group(1))] = (argv, open(base + ".out", encoding="utf-8").read())
    return got


def check_text_layer(t, label, out, rec, pages, failing=()):
    """Each page's pdftotext words are exactly its hOCR's words (none for a failed page), each where its
    hOCR box says on the page as displayed."""
    for n in range(1, len(pages) + 1):
        got = pdf_boxes(out, n)
        words = [w for w, _ in got]
        if n - 1 in failing:
            t.ok(words == [], f"{label}: page {n} (failed) has no text layer (got {words[:5]})")
            continue
        want = hocr_boxes(rec[n][1]) if n in rec else []
        if not t.ok(want and words == [w for w, _ in want],
                    f"{label}: page {n}: pdftotext gives exactly the hOCR's {len(want)} words"):
            t.diag(f"pdftotext: {words}\nhOCR:      {[w for w, _ in want]}")
        else:
            bad = [(w, g, b) for (w, g), (_, b) in zip(got, want) if b and not centre_inside(g, b)]
            if not t.ok(not bad, f"{label}: page {n}: every word is at its hOCR box (/Rotate kept aligned)"):
                t.diag(f"word, pdftotext box, hOCR box (pt): {bad[:3]}")


def part_fake(t, run, tmp, rng):
    fake = f"'{sys.executable}' '{os.path.join(HERE, 'fake_seer.py')}'"
    seer, log = run.recorder("fake1", fake)
    scan = os.path.join(tmp, "scan.pdf")
    make_scan(scan, PAGES, rng)
    out, sidecar = os.path.join(tmp, "out.pdf"), os.path.join(tmp, "out.txt")
    env = {"FAKE_SEER_SEED": str(rng.randrange(1 << 30))}
    hint = "Dates are ISO 8601."
    opts = ["--seer-binary", seer, "--seer-model", "/models/m", "--seer-mmproj", "/models/p.gguf",
            "--seer-device", "cpu", "--seer-threads", "3", "-l", "deu+fra", "--seer-prompt-hint", hint]
    r = run.run(opts + ["--seer-skip-failed-pages", "--rotate-pages", "--sidecar", sidecar, scan, out], env)
    if not t.ok(r.returncode == 0, f"the fake seer, failing page skipped: ocrmypdf exits 0 (got {r.returncode})"):
        t.diag(r.stderr[-3000:])
        return
    t.ok(re.search(r"fake seer fails on square pages.*--seer-skip-failed-pages", r.stderr) is not None,
         "the failed page is reported as a warning with seer's stderr line")
    rec = recorded(log)
    t.ok(sorted(rec) == [1, 2, 3, 4], f"seer ran once per page (images {sorted(rec)})")
    want_prompt = f"{header_prompt()} The text is in German and French. {hint}"
    argv_ok = all(a[:-1] == ["-q", "ocr", "--format", "hocr", "-m", "/models/m", "--mmproj", "/models/p.gguf",
                             "--device", "cpu", "--threads", "3", "-p", want_prompt] for a, _ in rec.values())
    if not t.ok(argv_ok, "seer gets -m, --mmproj, --device, --threads and a prompt: seer's own + -l deu+fra + the hint"):
        t.diag(json.dumps(rec.get(1, ([], ""))[0], ensure_ascii=False))
    t.ok(header_prompt() is not None and __import__("ocrmypdf_seer").SEER_OCR_PROMPT_LINES == header_prompt(),
         "the plugin's SEER_OCR_PROMPT_LINES equals include/seer.h's")
    status = pdfa_status(out)
    t.ok(status == "2B", f"out.pdf claims PDF/A-2B in its XMP (got {status!r})")
    t.ok(page_shapes(out) == page_shapes(scan),
         f"pages, sizes and /Rotate kept (in {page_shapes(scan)}, out {page_shapes(out)})")
    check_text_layer(t, "fake", out, rec, PAGES, failing={FAILING})
    side = open(sidecar, encoding="utf-8").read().split("\f")
    t.ok(len(side) >= len(PAGES) and side[FAILING].strip() == "[skipped page]"
         and all(side[i].split() == hocr_words(rec[i + 1][1]) for i in range(len(PAGES)) if i != FAILING),
         "the sidecar holds each page's hOCR text and '[skipped page]' for the failed one")

    # the same without --seer-skip-failed-pages: OCRmyPDF's child_process_error
    out2 = os.path.join(tmp, "out2.pdf")
    r = run.run(opts + [scan, out2], env)
    t.ok(r.returncode == 7, f"a failing page without --seer-skip-failed-pages: exit 7, ExitCode.child_process_error (got {r.returncode})")
    t.ok(re.search(r"0*4_ocr\.png: the fake seer fails on square pages", r.stderr) is not None,
         "... and OCRmyPDF prints seer's stderr line, which names the page image")
    t.ok(not os.path.exists(out2), "... and writes no output file")

    # sandwich renderer (generate_pdf) and the PDF/A that only Ghostscript may write
    seer3, log3 = run.recorder("fake3", fake)
    scan3, out3 = os.path.join(tmp, "scan3.pdf"), os.path.join(tmp, "out3.pdf")
    make_scan(scan3, PAGES[:FAILING], rng)
    r = run.run(["--seer-binary", seer3, "--pdf-renderer", "sandwich", "--output-type", "pdfa", scan3, out3], env)
    if t.ok(r.returncode == 0, f"--pdf-renderer sandwich --output-type pdfa: exit 0 (got {r.returncode})"):
        t.ok(pdfa_status(out3) == "2B", "... PDF/A-2B")
        t.ok(page_shapes(out3) == page_shapes(scan3), "... pages, sizes and /Rotate kept")
        check_text_layer(t, "sandwich", out3, recorded(log3), PAGES[:FAILING])
    else:
        t.diag(r.stderr[-3000:])

    # a page image takes the fake well over 20 ms (a Python start and Pillow), so every page times out
    out5 = os.path.join(tmp, "out5.pdf")
    r = run.run(["--seer-binary", seer3, "--seer-timeout", "0.02", "--seer-skip-failed-pages", scan3, out5], env)
    t.ok(r.returncode == 0 and len(re.findall(r"no answer within --seer-timeout 0.02 s", r.stderr)) == FAILING
         and all(pdf_boxes(out5, n) == [] for n in range(1, FAILING + 1)),
         f"--seer-timeout with --seer-skip-failed-pages: each page warned of and left without text (exit {r.returncode})")

    r = run.run(["--seer-binary", seer3, "--seer-model", "/models/gone", scan3, out5], dict(env, FAKE_SEER_MODE="fatal"))
    t.ok(r.returncode == 7 and "seer ocr exited 1 on" in r.stderr and "/models/gone: the fake seer's model does not load"
         in r.stderr, f"seer's fatal error (its exit 1): exit 7 with seer's line (got {r.returncode})")
    r = run.run(["--seer-binary", seer3, scan3, out5], dict(env, FAKE_SEER_MODE="badbox"))
    t.ok(r.returncode == 7 and re.search(r"the hOCR page box is .*, not the image \(0, 0, \d+, \d+\)", r.stderr),
         f"an hOCR page box that is not the image: exit 7, said (got {r.returncode})")
    r = run.run(["--seer-binary", seer3, "--ocr-engine", "tesseract", scan3, out5])
    t.ok(r.returncode == 1 and "replaces Tesseract" in r.stderr,
         f"--ocr-engine tesseract with the plugin: exit 1, bad_args (got {r.returncode})")

    r = run.run(["--seer-binary", os.path.join(tmp, "no-such-seer"), scan3, os.path.join(tmp, "out4.pdf")])
    t.ok(r.returncode == 3 and "no-such-seer: not found" in r.stderr,
         f"a missing seer binary: exit 3, MissingDependencyError, named (got {r.returncode}: {r.stderr.strip()[-200:]})")


def part_real(t, run, tmp, seed):
    build = os.environ.get("SEER_BUILD_DIR", "build")
    seer = os.path.join(ROOT, build) if not os.path.isabs(build) else build
    seer = os.path.join(seer, "seer")
    if not os.access(seer, os.X_OK):
        t.ok(False, f"{seer} is built (cmake --build {build} --target seer)")
        return
    help_text = subprocess.run([seer, "ocr", "--help"], capture_output=True, text=True)
    if "hocr" not in help_text.stdout + help_text.stderr:
        t.skip("seer ocr has no --format hocr yet (cli/ocr.c, issue 23 item 1)", "the real seer, end to end")
        return
    model = os.path.join(tmp, "model")
    g = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "reference", "gen_tiny.py"), "--out", model,
                        "--preset", "tiny", "--no-gguf", "--seed", str(seed % 1000000)], capture_output=True, text=True)
    if not t.ok(g.returncode == 0, "tests/reference/gen_tiny.py writes a tiny random model"):
        t.diag(g.stderr[-2000:])
        return
    rec_bin, log = run.recorder("real", f"'{seer}'")
    pages = [((400, 300), 0), ((300, 420), 90)]
    scan, out = os.path.join(tmp, "real.pdf"), os.path.join(tmp, "real-out.pdf")
    make_scan(scan, pages, random.Random(seed))
    sidecar = os.path.join(tmp, "real-out.txt")
    r = run.run(["--seer-binary", rec_bin, "--seer-model", os.path.join(model, "hf"), "--seer-threads", "1",
                 "-j", "2", "--sidecar", sidecar, scan, out])
    if not t.ok(r.returncode == 0, f"the real seer on a random model: ocrmypdf exits 0 (got {r.returncode})"):
        t.diag(r.stderr[-3000:])
        return
    t.ok(pdfa_status(out) == "2B", "... out.pdf claims PDF/A-2B")
    t.ok(page_shapes(out) == page_shapes(scan), "... pages, sizes and /Rotate kept")
    rec, side = recorded(log), open(sidecar, encoding="utf-8").read().split("\f")
    for n in range(1, len(pages) + 1):
        # compared without whitespace (a model can write what str.split() takes for it: U+001C-U+001F) and
        # in NFKC, as OCRmyPDF's hOCR parser reads every engine's words (hocr_parser.py), so the text
        # layer and the sidecar hold ˣ as x
        want = "".join(unicodedata.normalize("NFKC", "".join(hocr_words(rec[n][1]))).split()) if n in rec else None
        if not t.ok(want is not None and "".join(side[n - 1].split()) == want,
                    f"real seer: page {n}: the sidecar holds exactly the words of seer's hOCR"):
            t.diag(f"sidecar: {side[n - 1]!r}\nhOCR:    {want!r}")
        # Not equality: a random model's boxes are anything, and OCRmyPDF's renderer leaves out a line
        # whose box is far taller than its text is wide (fpdf_renderer's aspect-ratio check, meant for
        # rotated text Tesseract misread), and pdftotext merges the overlapping repeated glyphs of a
        # word squeezed into a tiny box. The fake seer's part checks equality, with boxes that fit.
        got = "".join(w for w, _ in pdf_boxes(out, n))
        if not t.ok(want is not None and not Counter(got) - Counter(want),
                    f"real seer: page {n}: every character of the text layer ({len(got)}) is seer's"):
            t.diag(f"pdftotext: {got}\nhOCR:      {want}")
        # A random model gives no usable boxes: seer's lines then have the page's box, which the plugin
        # turns into strips OCRmyPDF keeps (place_unplaced_lines), so some text must be there.
        t.ok(not want or got, f"real seer: page {n}: the text layer is not empty ({len(want or '')} characters in the hOCR)")


def main():
    t = Tap()
    seed = int(os.environ.get("SEER_TEST_SEED") or random.SystemRandom().randrange(1 << 31))
    t.replay = f"SEER_TEST_SEED={seed}"
    t.diag(f"seed {seed}")
    with tempfile.TemporaryDirectory(prefix="ocrmypdf_plugin.") as tmp:
        site, src = os.path.join(tmp, "site"), os.path.join(tmp, "src")
        # installed the way a user installs it (pip install ./python/ocrmypdf_seer), from a copy, since
        # setuptools leaves build/ and *.egg-info beside the sources; --no-build-isolation takes the
        # venv's pinned setuptools instead of fetching one
        shutil.copytree(os.path.join(ROOT, "python", "ocrmypdf_seer"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                            "--target", site, src], capture_output=True, text=True)
        if not t.ok(p.returncode == 0, "pip installs python/ocrmypdf_seer"):
            t.diag(p.stderr[-2000:])
            return t.done()
        sys.path.insert(0, site)
        run = Runner(tmp, site)
        part_fake(t, run, tmp, random.Random(seed))
        part_real(t, run, tmp, seed)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
