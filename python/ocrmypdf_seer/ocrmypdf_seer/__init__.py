"""OCRmyPDF plugin: seer (Qwen3.5 vision-language models; this repository's `seer` command) as the
OCR engine. `ocrmypdf --plugin ocrmypdf_seer --seer-model MODEL in.pdf out.pdf`.

For every page image OCRmyPDF hands over, the plugin runs

    seer ocr [-m MODEL] [--mmproj F] [--device D] [--threads N] [-p PROMPT] --format hocr IMAGE

which writes one hOCR 1.2 document (bbox in the image's pixels) to stdout: exit 0 done, 3 the page
failed (one line on stderr), 1 fatal (model, device), 2 usage. The hOCR goes to OCRmyPDF (its
unplaced lines given strips: place_unplaced_lines), whose own renderer (fpdf2, the default) makes
the invisible text layer; for --pdf-renderer sandwich the plugin
renders the same hOCR with that renderer into the text-only PDF the sandwich grafter expects.

Written against OCRmyPDF 17's pluginspec (OcrEngine, register_options, OcrOptions namespaces);
python/ocrmypdf_seer/README.md has the options and the limits.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import ocrmypdf
from ocrmypdf import hookimpl
from ocrmypdf.exceptions import BadArgsError, MissingDependencyError, SubprocessOutputError
from ocrmypdf.hocrtransform import HocrParseError, HocrParser
from ocrmypdf.pluginspec import OcrEngine, OrientationConfidence
from PIL import Image
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

# SEER_OCR_PROMPT_LINES in include/seer.h: the prompt seer ocr sends for --format hocr (Qwen's
# line-level text-spotting prompt). A hint must extend it, not replace it, since `-p` replaces the
# whole instruction and the hOCR needs the boxes this prompt asks for. The plugin's test checks the
# two stay the same.
SEER_OCR_PROMPT_LINES = (
    "Spotting all the text in the image with line-level, and output in JSON format as "
    "[{'bbox_2d': [x1, y1, x2, y2], 'text_content': 'text'}, ...]."
)

# OCRmyPDF's -l takes Tesseract's codes (ISO 639-2 and Tesseract's script variants); a model reads a
# language's name better than its code. Codes not listed here go into the hint as they are.
LANGUAGE_NAMES = {
    'ara': 'Arabic', 'ces': 'Czech', 'chi_sim': 'Simplified Chinese', 'chi_tra': 'Traditional Chinese',
    'dan': 'Danish', 'deu': 'German', 'ell': 'Greek', 'eng': 'English', 'fin': 'Finnish',
    'fra': 'French', 'heb': 'Hebrew', 'hin': 'Hindi', 'hun': 'Hungarian', 'ita': 'Italian',
    'jpn': 'Japanese', 'kor': 'Korean', 'lat': 'Latin', 'nld': 'Dutch', 'nor': 'Norwegian',
    'pol': 'Polish', 'por': 'Portuguese', 'ron': 'Romanian', 'rus': 'Russian', 'spa': 'Spanish',
    'swe': 'Swedish', 'tha': 'Thai', 'tur': 'Turkish', 'ukr': 'Ukrainian', 'vie': 'Vietnamese',
}
DEFAULT_LANGUAGES = ['eng']  # OCRmyPDF's default -l: not a statement about the document
XHTML = 'http://www.w3.org/1999/xhtml'
BBOX = re.compile(r'bbox\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)')
# the height of an unplaced line's strip, as a part of the page's: a line of text on a scan
STRIP_PARTS = 40


class SeerOptions(BaseModel):
    """The --seer-* options (options.seer.* in the plugin, seer_* in ocrmypdf.ocr(...))."""

    binary: str = 'seer'
    model: str | None = None
    mmproj: str | None = None
    device: str | None = None
    threads: int | None = Field(default=None, ge=1)
    prompt_hint: str | None = None
    timeout: float = Field(default=0.0, ge=0)
    skip_failed_pages: bool = False


@hookimpl
def initialize(plugin_manager):
    # Tesseract's plugin checks for the tesseract program in check_options even when another engine
    # does the OCR; seer replaces it (orientation and deskew included), so it is blocked.
    plugin_manager.set_blocked('ocrmypdf.builtin_plugins.tesseract_ocr')


@hookimpl
def register_options():
    # OCRmyPDF's option checks (_validation_coordinator.py) read options.tesseract.* whatever the
    # engine, and blocking the Tesseract plugin took its namespace away: the same model, which needs
    # no tesseract program, keeps it (at its defaults; the --tesseract-* flags are gone with the plugin).
    from ocrmypdf.builtin_plugins.tesseract_ocr import TesseractOptions

    return {'seer': SeerOptions, 'tesseract': TesseractOptions}


@hookimpl
def add_options(parser):
    g = parser.add_argument_group('seer', 'OCR by seer with a Qwen3.5 vision-language model (ocrmypdf_seer)')
    g.add_argument('--seer-model', metavar='MODEL', dest='seer_model',
                   help="seer's -m: a Hugging Face model directory, a GGUF file, or a name from `seer pull` "
                        "(default: seer's own, qwen3.5-0.8b once pulled)")
    g.add_argument('--seer-mmproj', metavar='FILE', dest='seer_mmproj',
                   help="the vision projector of a GGUF model (default: seer finds mmproj*.gguf beside it)")
    g.add_argument('--seer-device', metavar='DEVICE', dest='seer_device',
                   help="seer's --device: cpu, or a Vulkan device as `seer info --devices` lists them")
    g.add_argument('--seer-threads', metavar='N', type=int, dest='seer_threads',
                   help="CPU threads of each seer process (OCRmyPDF runs up to -j of them at once, each "
                        "loading the model)")
    g.add_argument('--seer-binary', metavar='PATH', default='seer', dest='seer_binary',
                   help="the seer command to run (default: seer on PATH)")
    g.add_argument('--seer-prompt-hint', metavar='TEXT', dest='seer_prompt_hint',
                   help="a sentence added to seer's line-spotting prompt (with -l's languages)")
    g.add_argument('--seer-timeout', metavar='SECONDS', type=float, default=0.0, dest='seer_timeout',
                   help="give up on a page after this long (default 0: no limit); it then fails as a page "
                        "seer could not read")
    g.add_argument('--seer-skip-failed-pages', action='store_true', dest='seer_skip_failed_pages',
                   help="a page seer fails on (its exit 3, or --seer-timeout) keeps its image without text, "
                        "with a warning, instead of ending the run with exit 7")


def _engine_selected(options) -> bool:
    # --ocr-engine's choices are OCRmyPDF's own: this plugin answers to 'auto' (the default)
    return options is None or getattr(options, 'ocr_engine', 'auto') == 'auto'


@hookimpl
def check_options(options):
    if options.ocr_engine == 'tesseract':
        raise BadArgsError('ocrmypdf_seer replaces Tesseract: leave out --ocr-engine tesseract, or the plugin')
    if not _engine_selected(options):
        return
    seer = options.seer
    if shutil.which(seer.binary) is None:
        raise MissingDependencyError(
            f"{seer.binary}: not found (build seer, put it on PATH or name it with --seer-binary)")
    _seer_version(shutil.which(seer.binary))  # a binary that does not run fails here, once, not per page


@lru_cache(maxsize=None)
def _seer_version(binary: str) -> str:
    try:
        p = subprocess.run([binary, '--version'], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise MissingDependencyError(f"{binary} --version: {e}") from e
    words = p.stdout.split()
    if p.returncode != 0 or len(words) != 2 or words[0] != 'seer':
        raise MissingDependencyError(
            f"{binary} --version: exit {p.returncode}, printed {p.stdout.strip()!r}: not seer")
    return words[1]


def language_hint(languages) -> str:
    """'The text is in German and French.' for -l deu+fra; '' for OCRmyPDF's default."""
    if not languages or list(languages) == DEFAULT_LANGUAGES:
        return ''
    names = [LANGUAGE_NAMES.get(code, code) for code in languages]
    listed = names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]
    return f'The text is in {listed}.'


def seer_prompt(languages, hint: str | None) -> str | None:
    """The -p for seer: its own hOCR prompt plus the hints, or None (seer's default) without any."""
    extra = ' '.join(h for h in (language_hint(languages), (hint or '').strip()) if h)
    return f'{SEER_OCR_PROMPT_LINES} {extra}' if extra else None


def seer_command(input_file: Path, options) -> list[str]:
    seer = options.seer
    cmd = [seer.binary, '-q', 'ocr', '--format', 'hocr']
    for flag, value in (('-m', seer.model), ('--mmproj', seer.mmproj), ('--device', seer.device),
                        ('--threads', seer.threads),
                        ('-p', seer_prompt(options.languages, seer.prompt_hint))):
        if value is not None:
            cmd += [flag, str(value)]
    return cmd + [str(input_file)]


def _run_seer(input_file: Path, options) -> str | None:
    """seer's hOCR for one page image; None for a page that failed and is to be skipped."""
    seer = options.seer
    cmd = seer_command(input_file, options)
    log.debug('running %s', cmd)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=seer.timeout or None)
    except subprocess.TimeoutExpired:
        return _page_failed(f'seer ocr: {input_file}: no answer within --seer-timeout {seer.timeout:g} s', options)
    except OSError as e:
        raise MissingDependencyError(f'{seer.binary}: {e}') from e
    err = p.stderr.decode(errors='replace').strip()
    if p.returncode == 3:
        return _page_failed(err or f'seer ocr: {input_file}: the page failed (exit 3)', options)
    if p.returncode != 0:
        raise SubprocessOutputError(f'seer ocr exited {p.returncode} on {input_file}: {err}')
    return p.stdout.decode('utf-8', errors='replace')


def _page_failed(message: str, options) -> None:
    """Raises OCRmyPDF's error for a page seer could not read, or, with --seer-skip-failed-pages,
    warns and returns None (the page is kept without text)."""
    if not options.seer.skip_failed_pages:
        raise SubprocessOutputError(message)
    log.warning('%s; the page keeps no text (--seer-skip-failed-pages)', message)
    return None


def _bbox(element):
    m = BBOX.search(element.get('title') or '')
    return tuple(int(v) for v in m.groups()) if m else None


def place_unplaced_lines(hocr: str, width: int, height: int) -> str:
    """seer gives a line the model wrote without a usable box the whole page as its box (its words
    dividing the width). OCRmyPDF's renderer leaves out a line whose box is much taller than its text
    is wide (a check meant for rotated text Tesseract misread), which on a portrait page is every such
    line, so their text would not be in the PDF. Each gets a strip of the page instead, a text line's
    height (1/STRIP_PARTS of the page, less when more lines than that share it), stacked at the foot
    of the page in the order seer wrote them: seer puts them in the last block, so text extraction
    still reads them last. Their words stay searchable, at a place that says nothing."""
    root = ET.fromstring(hocr)
    lines = [e for e in root.iter()
             if 'ocr_line' in (e.get('class') or '').split() and _bbox(e) == (0, 0, width, height)]
    if not lines:
        return hocr
    strip = min(height / len(lines), height / STRIP_PARTS)
    top = height - strip * len(lines)
    for i, line in enumerate(lines):
        y0 = min(round(top + i * strip), height - 1)
        y1 = min(max(round(top + (i + 1) * strip), y0 + 1), height)
        for e in line.iter():
            box = _bbox(e)
            if box:
                e.set('title', BBOX.sub(f'bbox {box[0]} {y0} {box[2]} {y1}', e.get('title'), count=1))
    ET.register_namespace('', XHTML)
    return ET.tostring(root, encoding='unicode')


def _write_hocr(input_file: Path, output_hocr: Path, output_text: Path, options):
    """Runs seer and writes its hOCR and plain text; returns the parsed page (None: skipped)."""
    hocr = _run_seer(input_file, options)
    if hocr is None:
        # what OCRmyPDF's Tesseract plugin writes for a page it gives up on: an empty hOCR (the
        # grafter then adds no text) and this sidecar text
        output_hocr.write_text('', encoding='utf-8')
        output_text.write_text('[skipped page]', encoding='utf-8')
        return None
    with Image.open(input_file) as im:
        size = im.size
    try:
        output_hocr.write_text(place_unplaced_lines(hocr, *size), encoding='utf-8')
        page = HocrParser(output_hocr).parse()
    except (ET.ParseError, HocrParseError, ValueError) as e:
        raise SubprocessOutputError(f'seer ocr: {input_file}: its hOCR does not parse: {e}') from e
    # OCRmyPDF stretches the text layer's page (bbox / scan_res) over the PDF page, so every word is
    # where it belongs only if the page box is the image
    box = page.bbox
    if box is None or (box.left, box.top, box.right, box.bottom) != (0, 0, *size):
        raise SubprocessOutputError(
            f'seer ocr: {input_file}: the hOCR page box is {box}, not the image (0, 0, {size[0]}, {size[1]})')
    output_text.write_text(''.join(line.get_text_recursive() + '\n' for line in page.lines), encoding='utf-8')
    return page


class SeerOcrEngine(OcrEngine):
    """seer as OCRmyPDF's OCR engine; holds the binary so that version() can ask it."""

    def __init__(self, binary: str = 'seer'):
        self.binary = binary

    def version(self) -> str:
        path = shutil.which(self.binary)
        return _seer_version(path) if path else 'unknown'

    def creator_tag(self, options) -> str:
        return f'seer {self.version()} (ocrmypdf_seer)'

    def __str__(self) -> str:
        return f'seer {self.version()}'

    @staticmethod
    def languages(options):
        # A vision-language model reads what it reads; -l only becomes a prompt hint, so every code is
        # accepted (an empty set turns OCRmyPDF's language check off).
        return set()

    @staticmethod
    def get_orientation(input_file, options):
        # seer does not detect page orientation: no rotation, confidence 0, so --rotate-pages turns no
        # page on seer's account (OCRmyPDF turns a page only above --rotate-pages-threshold)
        return OrientationConfidence(angle=0, confidence=0.0)

    @staticmethod
    def get_deskew(input_file, options) -> float:
        return 0.0  # nor skew

    @staticmethod
    def generate_hocr(input_file, output_hocr, output_text, options):
        _write_hocr(Path(input_file), Path(output_hocr), Path(output_text), options)

    @staticmethod
    def generate_pdf(input_file, output_pdf, output_text, options):
        # --pdf-renderer sandwich: a text-only PDF of the image's size, made from seer's hOCR by
        # OCRmyPDF's own renderer (seer's --format pdf would include the image, which must not be there)
        from ocrmypdf.font import MultiFontManager
        from ocrmypdf.fpdf_renderer import Fpdf2PdfRenderer

        output_pdf = Path(output_pdf)
        page = _write_hocr(Path(input_file), output_pdf.with_suffix('.hocr'), Path(output_text), options)
        if page is None:
            output_pdf.write_bytes(b'')  # the sandwich grafter's sign of a skipped page
            return
        fonts = MultiFontManager(Path(ocrmypdf.__file__).parent / 'data')
        Fpdf2PdfRenderer(page=page, dpi=page.dpi or 300.0, multi_font_manager=fonts,
                         invisible_text=True).render(output_pdf)


@hookimpl
def get_ocr_engine(options):
    if not _engine_selected(options):
        return None
    return SeerOcrEngine(options.seer.binary if options is not None else 'seer')
