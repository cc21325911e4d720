#!/usr/bin/env python3
"""End-to-end tests of `seer ocr --format hocr|alto|tsv|pdf` (issue 23, docs/OCR.md) as a TAP program:
the real pipeline on a tiny random Qwen3.5 with a vision tower (tests/reference/gen_tiny.py, fresh
seed), on pages made here with Pillow: a PNG at 150 dpi, a JPEG stored sideways with EXIF
orientation 6, a 2-page PDF, and a file that is no image. A random model answers garbage, so the
checks are about the machinery, not the text: every output valid (hOCR as XML with its classes, ALTO
against its XSD, TSV's columns, the PDF's pages and sizes), the boxes inside the upright page, and the
text layer equal to what the model said — the words of the same greedy answer printed by
--format jsonl, in hOCR, ALTO, TSV and through pdftotext of the PDF. The bad input fails alone
(exit 3, one line naming it), --resume finds the finished outputs, and --format pdf without --out is
a usage error. The binary is $SEER_BUILD_DIR/seer (default build/seer)."""
import json
import math
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
SEER = os.path.join(ROOT, os.environ.get("SEER_BUILD_DIR", "build"), "seer")
SCHEMA = os.path.join(ROOT, "tests/data/ocr/schema/alto-4-4.xsd")


def header_prompt():
    """SEER_OCR_PROMPT_LINES as include/seer.h defines it (the prompt the layout formats send)."""
    src = open(os.path.join(ROOT, "include/seer.h"), encoding="utf-8").read()
    body = re.search(r"#define SEER_OCR_PROMPT_LINES((?:.*\\\n)*.*)", src).group(1)
    return "".join(json.loads('"%s"' % p) for p in re.findall(r'"((?:[^"\\]|\\.)*)"', body))


PROMPT = header_prompt()
N = 0
FAILED = 0


def ok(cond, name, detail=None):
    global N, FAILED
    N += 1
    FAILED += not cond
    print("%s %d - %s" % ("ok" if cond else "not ok", N, name))
    if not cond and detail is not None:
        for line in str(detail)[:3000].splitlines():
            print("#   " + line)
    return cond


def skip(name, why):
    global N
    N += 1
    print("ok %d - %s # SKIP %s" % (N, name, why))


def run(args, **kw):
    return subprocess.run([SEER] + args, capture_output=True, timeout=900, **kw)


def xml_safe(s):
    """What an XML writer must make of text: characters XML 1.0 forbids become U+FFFD."""
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "\ufffd", s)


def words(s):
    return xml_safe(s).split()


WS = " \t\n\r\f\v"  # what seer trims from a line (ocr/scan.c is_ws)
OBJECT = re.compile(r"\{[%s]*(?:$|[\"'}]|[A-Za-z_]\w*[%s]*(?::|$))" % (WS, WS), re.ASCII)


def plain_words(answer):
    """The words of an answer with no JSON object, as docs/OCR.md reads plain text: one line per
    line, a Markdown fence line (which may open or close the array) is not text, nor is an answer of
    only brackets and commas (an empty array). None when a random model happened to open an object:
    its words then follow the JSON reading, which grounded() checks, and the checks on it are skipped
    (visibly)."""
    if OBJECT.search(answer):
        return None
    lines = [ln.strip(WS) for ln in re.split("[\r\n]", answer)]
    fence = re.compile(r"```[A-Za-z0-9_+-]*[%s\[\]{},`]*" % WS)  # a language name, then only punctuation
    if all(fence.fullmatch(ln) or not ln.strip(WS + "[]{},`") for ln in lines):
        return []
    return words(" ".join(ln for ln in lines if not fence.fullmatch(ln)))


def page_words(answers, name, n_pages):
    """plain_words of an input's pages, in order; None when one of them holds an object."""
    ws = [plain_words(answers.get((name, k + 1), "")) for k in range(n_pages)]
    return None if None in ws else [w for p in ws for w in p]


# UAX #9's default Bidi_Class, R or AL, of unassigned code points in these ranges
RTL_DEFAULT = ((0x0590, 0x08FF), (0xFB1D, 0xFDFF), (0xFE70, 0xFEFF), (0x10800, 0x10FFF), (0x1E800, 0x1EFFF))


def right_to_left(c):
    b = unicodedata.bidirectional(c)
    return b in ("R", "AL", "AN") if b else any(lo <= ord(c) <= hi for lo, hi in RTL_DEFAULT)


def same_text_layer(got, want):
    """pdftotext's words against the answer's: equal, except on a page holding right-to-left
    characters (Arabic, Hebrew, and Arabic digits and signs such as U+06DD, bidi class AN: a random
    model writes them). poppler writes such a run in visual order between U+202B and U+202C, and the
    neutral characters and spaces beside it may move across it, so that page is compared as its
    characters (controls and spaces removed). A code point this Python's Unicode leaves unassigned
    takes its block's default class (UAX #9: Hebrew, Arabic, Syriac, ... are right-to-left), as
    poppler's newer tables may assign it (U+05CA at seed 558196391)."""
    if not any(right_to_left(c) for w in want for c in w):
        return got == want
    return sorted(re.sub("[\u202a-\u202e\u2066-\u2069]", "", "".join(got))) == sorted("".join(want))


def bbox(title):
    m = re.search(r"bbox (-?\d+) (-?\d+) (-?\d+) (-?\d+)", title or "")
    return tuple(int(v) for v in m.groups()) if m else None


def make_pages(d, seed):
    from PIL import Image, ImageDraw
    r = random.Random(seed)

    def page(w, h):
        im = Image.new("RGB", (w, h), "white")
        dr = ImageDraw.Draw(im)
        for k in range(6):
            y = 10 + k * (h - 20) // 6
            dr.text((10 + r.randrange(20), y), "Line %d of page %d" % (k, r.randrange(1000)), fill="black")
        return im

    pages = {}
    page(320, 224).save(os.path.join(d, "a.png"), dpi=(150, 150))
    pages["a.png"] = [(320, 224, 150.0)]
    # stored 224 wide and 288 high; EXIF orientation 6 turns it upright to 288 x 224 (Pillow's exif_transpose)
    exif = Image.Exif()
    exif[0x0112] = 6
    page(224, 288).save(os.path.join(d, "b.jpg"), exif=exif.tobytes(), dpi=(200, 200))
    pages["b.jpg"] = [(288, 224, 200.0)]
    ims = [page(256, 320), page(320, 256)]
    ims[0].save(os.path.join(d, "c.pdf"), save_all=True, append_images=ims[1:], resolution=72)
    # a PDF page is rasterised at --dpi (here 72: the page's points are its pixels)
    pages["c.pdf"] = [(256, 320, 72.0), (320, 256, 72.0)]
    with open(os.path.join(d, "bad.png"), "w") as f:
        f.write("not an image")
    return pages


def hocr_pages(path):
    root = ET.parse(path).getroot()
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    out = []
    for pg in root.iter("{http://www.w3.org/1999/xhtml}div"):
        if pg.get("class") != "ocr_page":
            continue
        lines = []
        for ln in pg.iter("{http://www.w3.org/1999/xhtml}span"):
            if ln.get("class") != "ocr_line":
                continue
            ws = [w for w in ln.findall("h:span", ns) if w.get("class") == "ocrx_word"]
            lines.append((bbox(ln.get("title")), [("".join(w.itertext()), w.get("title")) for w in ws]))
        out.append((pg.get("title"), lines))
    return out


# A random model writes no boxes unprompted; a JSON schema (seer's structured output) makes it write
# the grounding answer's exact shape, with random boxes (reversed corners too) and random text. The
# boxes must then come through the whole pipeline mapped onto the upright page: x * width / 1000,
# rounded outwards (docs/OCR.md), within a pixel here.
SCHEMA_LINES = {"type": "array", "minItems": 1, "maxItems": 4, "items": {
    "type": "object", "additionalProperties": False, "required": ["bbox_2d", "text_content"],
    "properties": {"bbox_2d": {"type": "array", "minItems": 4, "maxItems": 4,
                               "items": {"type": "integer", "minimum": 0, "maximum": 1000}},
                   "text_content": {"type": "string", "maxLength": 16}}}}


def complete_items(answer):
    """The array's complete objects: all of them, or those before the cut when -n ended the answer
    inside one (seer keeps exactly those)."""
    dec, items = json.JSONDecoder(), []
    at = answer.index("[") + 1
    while True:
        while at < len(answer) and answer[at] in " \t\r\n,":
            at += 1
        if at >= len(answer) or answer[at] == "]":
            return items
        try:
            it, at = dec.raw_decode(answer, at)
        except ValueError:
            return items
        items.append(it)


def expected_lines(answer, w, h):
    """(box or None, words) per line in the order seer_ocr_parse documents: boxed lines as written,
    then the box-less ones (a zero-area box has none) in one last block. A text on several lines
    (a "\\n" in it, or \\r, U+2028, U+2029) is that many lines, sharing its box as equal bands from
    top to bottom (include/seer.h), y0 + height * j / k for line j of k."""
    boxed, boxless = [], []
    for it in complete_items(answer):
        x1, y1, x2, y2 = it["bbox_2d"]
        x0, x1 = sorted((x1, x2))
        y0, y1 = sorted((y1, y2))
        lines = [ws for ws in map(words, re.split("[\r\n\u2028\u2029]", it["text_content"])) if ws]
        if x0 < x1 and y0 < y1:
            box = (math.floor(x0 * w / 1000), math.floor(y0 * h / 1000), math.ceil(x1 * w / 1000),
                   math.ceil(y1 * h / 1000))
            k, bh = len(lines), box[3] - box[1]
            for j, ws in enumerate(lines):
                band = (box[1] + bh * j // k, box[1] + bh * (j + 1) // k) if bh >= k else (box[1], box[3])
                boxed.append(((box[0], band[0], box[2], band[1]), ws))
        else:
            boxless += [(None, ws) for ws in lines]
    return boxed + boxless


def grounded(tmp, common, inputs, pages):
    schema = os.path.join(tmp, "lines.json")
    with open(schema, "w") as f:
        json.dump(SCHEMA_LINES, f)
    forced = common[:] + ["-j", "@" + schema]
    forced[forced.index("-n") + 1] = "160"
    j = run(["ocr"] + forced + ["--format", "jsonl", "-p", PROMPT] + inputs)
    answers = {(os.path.basename(o["path"]), o["page"]): o["text"]
               for o in map(json.loads, j.stdout.decode().splitlines()) if "text" in o}
    ok(j.returncode == 0 and len(answers) == 4, "schema-forced grounding answers for 4 pages", j.stderr.decode())
    od = os.path.join(tmp, "grounded")
    r = run(["ocr"] + forced + ["--format", "hocr", "-o", od] + inputs)
    ok(r.returncode == 0, "--format hocr of the same pages (exit %d)" % r.returncode, r.stderr.decode())
    for name, pgs in pages.items():
        try:
            doc = hocr_pages(os.path.join(od, name + ".hocr"))
        except (ET.ParseError, OSError) as e:
            ok(False, "%s.hocr (grounded) parses" % name, e)
            continue
        for k, ((w, h, _), (_, lines)) in enumerate(zip(pgs, doc)):
            try:
                want = expected_lines(answers.get((name, k + 1), "[]"), w, h)
            except (ValueError, KeyError) as e:
                ok(False, "%s page %d: the forced answer is grounding JSON" % (name, k + 1), e)
                continue
            got = [(b, [t for t, _ in ws]) for b, ws in lines]
            same = len(got) == len(want) and all(
                gw == ww and (gb == (0, 0, w, h) if wb is None else all(abs(a - c) <= 1 for a, c in zip(gb, wb)))
                for (gb, gw), (wb, ww) in zip(got, want))
            # a random model's answer may hold only zero-area boxes: its lines then carry the page's
            ok(same, "%s page %d: %d lines (%d boxed) at the answer's boxes mapped onto the %dx%d page, with its "
               "words" % (name, k + 1, len(want), sum(1 for wb, _ in want if wb), w, h),
               "got  %r\nwant %r" % (got, want))


def main():
    if not os.access(SEER, os.X_OK):
        print("1..0 # SKIP %s is not built" % SEER)
        return 0
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("1..0 # SKIP python3 has no Pillow")
        return 0
    seed = int(os.environ.get("SEER_TEST_SEED", random.randrange(1 << 30)))
    print("# seed %d (replay with SEER_TEST_SEED=%d)" % (seed, seed), file=sys.stderr)  # prove shows stderr
    tmp = tempfile.mkdtemp(prefix="seer-ocr-formats-")
    try:
        return tests(tmp, seed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tests(tmp, seed):
    m = os.path.join(tmp, "m")
    g = subprocess.run([sys.executable, os.path.join(ROOT, "tests/reference/gen_tiny.py"), "--out", m, "--preset",
                        "tiny", "--seed", str(seed % 1000000)], capture_output=True)
    if not ok(g.returncode == 0, "tiny model with a vision tower generated", g.stderr.decode()[-2000:]):
        return 1
    model = os.path.join(m, "model-f32.gguf")
    d = os.path.join(tmp, "in")
    os.mkdir(d)
    pages = make_pages(d, seed)
    inputs = [os.path.join(d, n) for n in ("a.png", "b.jpg", "c.pdf", "bad.png")]
    # one page at a time and greedy: every run gives each page the same answer
    common = ["-m", model, "--parallel", "1", "-n", "40", "--dpi", "72", "-t", "2"]

    j = run(["ocr"] + common + ["--format", "jsonl", "-p", PROMPT] + inputs)
    answers = {}
    for line in j.stdout.decode().splitlines():
        o = json.loads(line)
        if "text" in o:
            answers[(os.path.basename(o["path"]), o["page"])] = o["text"]
    ok(j.returncode == 3 and len(answers) == 4, "jsonl with the grounding prompt: 4 pages answered, the bad input "
       "failed (exit %d)" % j.returncode, j.stderr.decode())

    outs = {}
    for fmt, ext in (("hocr", ".hocr"), ("alto", ".xml"), ("tsv", ".tsv"), ("pdf", ".pdf")):
        od = os.path.join(tmp, "out-" + fmt)
        r = run(["ocr"] + common + ["--format", fmt, "-o", od] + inputs)
        err = r.stderr.decode()
        bad_lines = [ln for ln in err.splitlines() if "bad.png" in ln]
        files = sorted(os.listdir(od)) if os.path.isdir(od) else []
        ok(r.returncode == 3 and files == sorted(["a.png" + ext, "b.jpg" + ext, "c.pdf" + ext]) and len(bad_lines) == 1
           and r.stdout == b"", "--format %s -o: one file per good input, exit 3, one line for bad.png, stdout empty"
           % fmt, "exit %d files %s\n%s" % (r.returncode, files, err))
        outs[fmt] = od

    # hOCR: valid XML, the page's size, ppageno, scan_res, boxes inside the upright page, the words
    for name, pgs in pages.items():
        base = name  # outputs are named INPUT + the format's extension
        try:
            doc = hocr_pages(os.path.join(outs["hocr"], base + ".hocr"))
        except (ET.ParseError, OSError) as e:
            ok(False, "%s.hocr parses as XML" % base, e)
            continue
        ok(len(doc) == len(pgs), "%s.hocr: %d ocr_page" % (base, len(pgs)), doc)
        for k, ((w, h, dpi), (title, lines)) in enumerate(zip(pgs, doc)):
            want = answers.get((name, k + 1), "")
            got_words = [t for _, ws in lines for t, _ in ws]
            inside = all(b and 0 <= b[0] <= b[2] <= w and 0 <= b[1] <= b[3] <= h for b, _ in lines)
            confs = [float(re.search(r"x_wconf (\d+(?:\.\d+)?)", t).group(1)) for _, ws in lines for _, t in ws
                     if t and "x_wconf" in t]
            ok(bbox(title) == (0, 0, w, h) and ("ppageno %d" % k) in title and ("scan_res %d %d" % (dpi, dpi)) in title
               and inside, "%s page %d: hOCR page bbox 0 0 %d %d (upright), ppageno, scan_res %d, lines inside it"
               % (name, k + 1, w, h, dpi), title)
            what = "%s page %d: hOCR's words are the model's answer's words (%d)" % (name, k + 1, len(got_words))
            want_words = plain_words(want)
            if want_words is None:
                skip(what, "the random answer opened a JSON object")
            else:
                ok(got_words == want_words, what, "hocr %r\nanswer %r" % (got_words[:40], want[:400]))
            ok(len(confs) == len(got_words) and all(0 <= c <= 100 for c in confs),
               "%s page %d: every word has x_wconf in 0..100 (from the tokens' probabilities)" % (name, k + 1), confs)

    # hOCR against the specification's own rules: kba's hocr-spec validator (classes, required
    # capabilities and metadata, property syntax), from the OCRmyPDF test venv where it is pinned
    venv = subprocess.run([os.path.join(ROOT, "scripts/ocrmypdf-venv.sh")], capture_output=True, text=True)
    vpy = venv.stdout.strip().splitlines()[-1] if venv.returncode == 0 and venv.stdout.strip() else None
    ok(vpy is not None, "the pinned venv with hocr-spec (scripts/ocrmypdf-venv.sh)", venv.stderr[-2000:])
    for name in pages if vpy else ():
        v = subprocess.run([vpy, "-W", "ignore", "-m", "hocr_spec.cli", "--parse-strict",
                            os.path.join(outs["hocr"], name + ".hocr")], capture_output=True, text=True)
        ok(v.returncode == 0 and "[OK]" in v.stdout and "[ERROR]" not in v.stdout,
           "%s.hocr is valid hOCR by hocr-spec --parse-strict" % name, v.stdout + v.stderr)

    # ALTO: valid against the ALTO 4.4 schema, the same words as hOCR
    lint = shutil.which("xmllint")
    for name in pages:
        base = name  # outputs are named INPUT + the format's extension
        path = os.path.join(outs["alto"], base + ".xml")
        if lint and os.path.exists(SCHEMA):
            v = subprocess.run([lint, "--noout", "--schema", SCHEMA, path], capture_output=True)
            ok(v.returncode == 0, "%s.xml is valid ALTO 4.4 (xmllint --schema)" % base, v.stderr.decode())
        else:
            skip("%s.xml is valid ALTO 4.4" % base, "no xmllint or no schema at %s" % SCHEMA)
        try:
            root = ET.parse(path).getroot()
            alto_words = [s.get("CONTENT") for s in root.iter() if s.tag.endswith("}String")]
            want = page_words(answers, name, len(pages[name]))
            if want is None:
                skip("%s.xml: ALTO's Strings are the answer's words" % base, "a random answer opened a JSON object")
            else:
                ok(alto_words == want, "%s.xml: ALTO's Strings are the answer's words" % base,
                   (alto_words[:30], want[:30]))
        except (ET.ParseError, OSError) as e:
            ok(False, "%s.xml parses" % base, e)

    # TSV: Tesseract's 12 columns, word rows (level 5) with the answer's words
    for name in pages:
        base = name  # outputs are named INPUT + the format's extension
        rows = open(os.path.join(outs["tsv"], base + ".tsv"), encoding="utf-8").read().rstrip("\n").split("\n")
        head = rows[0].split("\t")
        body = [r.split("\t") for r in rows[1:]]
        want = page_words(answers, name, len(pages[name]))
        if want is None:
            skip("%s.tsv: the word rows are the answer's words" % base, "a random answer opened a JSON object")
            want = [r[11] for r in body if r[0] == "5"]
        ok(head == ["level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width",
                    "height", "conf", "text"] and all(len(r) == 12 for r in body)
           and [r[11] for r in body if r[0] == "5"] == want, "%s.tsv: Tesseract's columns; the word rows are the "
           "answer's words" % base, rows[:5])

    # PDF: pages at width * 72 / dpi points, the scan as an image, the text layer = the answer
    have_poppler = shutil.which("pdftotext") and shutil.which("pdfinfo")
    for name, pgs in pages.items():
        base = name  # outputs are named INPUT + the format's extension
        path = os.path.join(outs["pdf"], base + ".pdf")
        if not have_poppler:
            skip("%s.pdf: pages and text layer" % base, "poppler-utils missing")
            continue
        info = subprocess.run(["pdfinfo", "-l", "99", path], capture_output=True).stdout.decode()
        sizes = [tuple(float(v) for v in s) for s in re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts", info)]
        want_sizes = [(w * 72 / dpi, h * 72 / dpi) for w, h, dpi in pgs]
        ok(len(sizes) == len(pgs) and all(abs(a - c) < 0.5 and abs(b - e) < 0.5 for (a, b), (c, e) in
                                          zip(sizes, want_sizes)),
           "%s.pdf: %d pages of %s points (pixels * 72 / dpi)" % (base, len(pgs), want_sizes), info)
        for k in range(len(pgs)):
            t = subprocess.run(["pdftotext", "-f", str(k + 1), "-l", str(k + 1), path, "-"],
                               capture_output=True).stdout.decode("utf-8", "replace")
            want = plain_words(answers.get((name, k + 1), ""))
            if want is None:
                skip("%s.pdf page %d: pdftotext gives the answer's words" % (base, k + 1),
                     "the random answer opened a JSON object")
                continue
            ok(same_text_layer(t.split(), want), "%s.pdf page %d: pdftotext gives the answer's words (%d)" % (base, k + 1, len(want)),
               "pdf %r\nwant %r" % (t.split()[:40], want[:40]))

    grounded(tmp, common, inputs[:3], pages)

    # stdout: one hOCR document for one input; pdf needs --out; --resume finds everything done
    r = run(["ocr"] + common + ["--format", "hocr", inputs[0]])
    try:
        n_pages = sum(e.get("class") == "ocr_page" for e in ET.fromstring(r.stdout).iter())
    except ET.ParseError:
        n_pages = -1
    ok(r.returncode == 0 and n_pages == 1,
       "--format hocr to stdout: one valid document (exit %d)" % r.returncode, r.stderr.decode())
    r = run(["ocr"] + common + ["--format", "pdf", inputs[0]])
    ok(r.returncode == 2 and b"--out" in r.stderr, "--format pdf without --out: usage error, exit 2", r.stderr)
    r = run(["ocr", "-m", "/nonexistent.gguf", "--format", "hocr", "-o", outs["hocr"], "--resume"] + inputs[:3])
    ok(r.returncode == 0 and b"3 skipped" in r.stderr, "--resume with hocr: the three finished inputs are skipped "
       "(the model is not even loaded)", r.stderr.decode())
    print("1..%d" % N)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
