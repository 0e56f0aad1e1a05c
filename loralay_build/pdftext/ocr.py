"""OCR of pages without a usable text layer: Tesseract's words and boxes in Poppler's frame.

A page is rendered by pdftoppm at `DPI` (the CropBox, /Rotate applied: the displayed page,
the frame Poppler's boxes are given in), turned upright when it is skewed, Tesseract reads
it (`tsv`: a box per word), and the pixel boxes are scaled to points with the top-left
origin. The result is a `Document` like
Poppler's, so grouping, order, labels, the abstract cut and the filters run unchanged
(docs/ocr.md). Routing (`pages_to_ocr`) keeps blank pages and vector-only figures away from
Tesseract: only pages an image covers, or pages whose text layer is broken, are read.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import unicodedata
from functools import lru_cache

import numpy as np

from ..errors import ToolMissing
from ..group.regions import read_frame
from ..records import Document, Page

ENGINE = "tesseract"
DPI = 300
# the document's language -> Tesseract's code; English is always added
TESSERACT_LANGS = {"en": "eng", "fr": "fra", "es": "spa", "pt": "por", "ko": "kor"}
MIN_IMAGE_COVER = 0.3  # share of the page an image must cover for a textless page to be read
BROKEN_SHARE = 0.5  # share of a page's words holding U+FFFD (or glyph soup) that is broken
MIN_PAGE_WORDS = 5  # fewer words on a page is no usable text layer
MIN_CONF = 0  # Tesseract's -1 marks non-word rows
KOREAN_PSM = "4"  # page segmentation for Korean pages (docs/ocr.md: measured per mode)
DESKEW = True  # turn skewed scans upright before reading them (docs/ocr.md: measured)
DESKEW_MIN_DEGREES = 0.3  # a smaller skew is left as it is
JOIN_GAP = 0.5  # Hangul pieces closer than this share of their line's height are one word


def require_tesseract() -> None:
    """Raised at plan time when OCR is asked for but the binary is missing."""
    if shutil.which("tesseract") is None:
        raise ToolMissing("--ocr needs the tesseract binary: apt-get install tesseract-ocr "
                             "tesseract-ocr-{eng,fra,spa,por,kor} (or make system-packages), "
                             "or build with --ocr off")


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    try:
        out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True,
                             timeout=30, check=False)
    except OSError:
        return "missing"
    first = (out.stdout or out.stderr).splitlines()
    return first[0].strip() if first else "unknown"


def ocr_identity() -> dict[str, object]:
    """What an OCR'd result depends on beyond the mode: part of the settings fingerprint,
    so a change of de-skew or of Korean joining redoes the OCR'd documents (and only
    them: `--ocr off` fingerprints hold none of it)."""
    return {"engine": ENGINE, "version": tesseract_version(), "dpi": DPI,
            "languages": sorted(set(TESSERACT_LANGS.values())),
            "deskew": DESKEW_MIN_DEGREES if DESKEW else None,
            "korean": {"psm": KOREAN_PSM, "join_gap": JOIN_GAP}}


def languages_for(language: str | None) -> str:
    """Tesseract's `-l` argument: the document's language plus English."""
    code = TESSERACT_LANGS.get((language or "").split("-")[0].lower())
    return "+".join(dict.fromkeys([c for c in (code, "eng") if c]))


def page_boxes(pdf: str) -> list[tuple[float, float]]:
    """Each page's displayed size in points (CropBox, /Rotate applied), from pdfinfo."""
    out = subprocess.run(["pdfinfo", "-f", "1", "-l", "100000", pdf], capture_output=True,
                         text=True, timeout=60, check=False).stdout
    sizes = {int(m[1]): (float(m[2]), float(m[3]))
             for m in re.finditer(r"Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)", out)}
    rots = {int(m[1]): int(m[2]) % 360 for m in re.finditer(r"Page\s+(\d+) rot:\s+(\d+)", out)}
    return [(h, w) if rots.get(n, 0) in (90, 270) else (w, h)
            for n, (w, h) in sorted(sizes.items())]


def image_cover(pdf: str, pages: list[int]) -> dict[int, float]:
    """The share of each of `pages` (1-based) its images cover, from where the page places
    them (pdfium's image objects, clipped to the CropBox): only the pages asked about are
    read, where `pdfimages -list` parsed every page of the PDF (0.3 CPU-s on a 198-page
    thesis with six blank pages, half its extraction)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    cover: dict[int, float] = {}
    doc = pdfium.PdfDocument(pdf)
    try:
        for p in pages:
            page = doc[p - 1]
            left, bottom, right, top = page.get_bbox()
            area = 0.0
            for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,)):
                bounds = obj.get_bounds if hasattr(obj, "get_bounds") else obj.get_pos
                x0, y0, x1, y1 = bounds()
                area += (max(0.0, min(x1, right) - max(x0, left))
                         * max(0.0, min(y1, top) - max(y0, bottom)))
            cover[p] = min(1.0, area / max((right - left) * (top - bottom), 1.0))
    finally:
        doc.close()
    return cover


def broken_share(words: list[str]) -> float:
    """Share of words holding U+FFFD or private-use / control glyph soup."""
    if not words:
        return 0.0
    bad = sum(1 for w in words if "\ufffd" in w
              or any(unicodedata.category(ch) in ("Co", "Cc", "Cn") for ch in w))
    return bad / len(words)


def _looks_broken(words: list[str]) -> bool:
    """A page's text layer is broken (`broken_share` >= `BROKEN_SHARE`). A clean page is
    settled by passes of C over its joined text (every character printable, few U+FFFD):
    the per-character check in Python cost 0.2-1.2x the extraction itself on born-digital
    papers, and only a page that fails the screen pays it. A page with a few lost ligatures
    (U+FFFD) passes it too: no more words can hold one than there are."""
    if len(words) < MIN_PAGE_WORDS:
        return False
    text = "".join(words)
    if text.isprintable() and text.count("\ufffd") < BROKEN_SHARE * len(words):
        return False
    return broken_share(words) >= BROKEN_SHARE


def pages_to_ocr(mode: str, pdf: str, doc: Document | None, n_pages: int) -> list[int]:
    """The 1-based pages to OCR: every page (`always`), or (`auto`) those with no usable text
    layer that an image covers much of, and those whose text layer is broken. A blank page
    or a vector-only figure has neither an image nor broken text, so it is not read."""
    if mode == "always":
        return list(range(1, n_pages + 1))
    if mode != "auto":
        return []
    starts = doc.page_starts() if doc is not None else [0] * (n_pages + 1)
    words = doc.words if doc is not None else []
    per_page = [words[starts[p - 1]:starts[p]] for p in range(1, n_pages + 1)]
    broken = [p for p, w in enumerate(per_page, 1) if _looks_broken(w)]
    textless = [p for p, w in enumerate(per_page, 1) if len(w) < MIN_PAGE_WORDS]
    if not textless:  # a born-digital document: no PDF parsing, the router costs ~nothing
        return broken
    cover = image_cover(pdf, textless)
    return sorted(broken + [p for p in textless if cover.get(p, 0.0) >= MIN_IMAGE_COVER])


def _is_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" for ch in text)


def _tesseract_env() -> dict[str, str]:
    """One OpenMP thread: Tesseract 5's threads burn CPU-time for little wall time, and the
    build's parallelism is its `--workers`."""
    return {**os.environ, "OMP_THREAD_LIMIT": "1"}


def render_page(pdf: str, page: int, dpi: int = DPI) -> np.ndarray:
    """The displayed page as 8-bit gray pixels (rows top first): pdftoppm's uncompressed
    PGM read from its stdout (encoding a PNG cost ~1 CPU-s a page, a third of Tesseract)."""
    out = subprocess.run(["pdftoppm", "-r", str(dpi), "-f", str(page), "-l", str(page),
                          "-gray", "-singlefile", pdf], capture_output=True, timeout=300,
                         check=True).stdout
    m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", out)
    if m is None or m[3] != b"255":
        raise ValueError(f"pdftoppm gave no 8-bit PGM for page {page} of {pdf}")
    w, h = int(m[1]), int(m[2])
    return np.frombuffer(out, dtype=np.uint8, count=w * h, offset=m.end()).reshape(h, w)


def tesseract_rows(image: np.ndarray, langs: str, psm: str | None = None) -> list[list[str]]:
    """Tesseract's word rows (TSV, confidence >= 0) for a gray image given on its stdin."""
    if psm is None:
        psm = KOREAN_PSM if "kor" in langs else "3"
    h, w = image.shape
    pgm = b"P5\n%d %d\n255\n" % (w, h) + image.tobytes()
    out = subprocess.run(["tesseract", "stdin", "stdout", "-l", langs, "--psm", psm,
                          "--dpi", str(DPI), "tsv"], input=pgm, capture_output=True,
                         timeout=600, check=True, env=_tesseract_env()).stdout
    rows = [r.split("\t") for r in out.decode("utf-8", "replace").splitlines()[1:]]
    return [r for r in rows if len(r) == 12 and r[11].strip() and float(r[10]) >= MIN_CONF]


def _line_key(r: list[str]) -> tuple[int, int]:
    return int(r[2]), int(r[3]) * 1000 + int(r[4])


def words_from_rows(rows: list[list[str]], sx: float, sy: float, join_gap: float = JOIN_GAP
                    ) -> tuple[list[str], list[tuple[float, float, float, float]],
                               list[tuple[int, int]]]:
    """Words, boxes in points (pixels scaled by `sx`, `sy`) and (block, line) keys.
    Tesseract splits Hangul words into syllables: two Hangul pieces of one line are one
    word when the gap between them is under `join_gap` of the line's median piece height
    (a space between words is wider than the gap between syllables; the median, because
    one piece's box can be twice the line's height)."""
    heights: dict[tuple[int, int], list[int]] = {}
    for r in rows:
        heights.setdefault(_line_key(r), []).append(int(r[9]))
    line_h = {k: float(np.median(v)) for k, v in heights.items()}
    words: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    keys: list[tuple[int, int]] = []
    ends: list[int] = []  # each word's right edge in pixels
    for r in rows:
        left, top, w, h = (int(v) for v in r[6:10])
        key = _line_key(r)
        box = (left * sx, top * sy, (left + w) * sx, (top + h) * sy)
        text = unicodedata.normalize("NFC", r[11].strip())
        if (words and keys[-1] == key and _is_hangul(text) and _is_hangul(words[-1])
                and left - ends[-1] < join_gap * line_h[key]):
            b = boxes[-1]
            words[-1] += text
            boxes[-1] = (min(b[0], box[0]), min(b[1], box[1]), max(b[2], box[2]),
                         max(b[3], box[3]))
            ends[-1] = left + w
            continue
        words.append(text)
        boxes.append(box)
        keys.append(key)
        ends.append(left + w)
    return words, boxes, keys


def estimate_skew(image: np.ndarray) -> float:
    """The page's skew in degrees (counter-clockwise), by projection profile: dark pixels
    of the page at half resolution sheared by each candidate angle and counted per row,
    each half of the page apart; lines of text are sharpest (the largest sum of squared
    row counts) at the page's skew. Counted over the whole width, a two-column page's lines
    of one column lined up with the other's at a wrong angle (1.65 found for 2.5); at a
    quarter resolution, rounding to rows biased level pages. 5 degrees either way, to
    0.05 degree; ~0.1 s of numpy."""
    small = image[::2, ::2]
    ys, xs = np.nonzero(small < 128)
    if len(ys) < 100:
        return 0.0
    height, width = small.shape
    offset = (xs >= width // 2).astype(np.int64) * (3 * height)  # each half its own rows
    xs_c = xs.astype(np.float64) - width / 2
    ys_f = ys.astype(np.float64) + height

    def sharpness(deg: float) -> float:
        rows = np.round(ys_f + xs_c * math.tan(math.radians(deg))).astype(np.int64)
        counts = np.bincount(rows + offset)
        return float(np.dot(counts, counts))

    best = max(np.arange(-5.0, 5.01, 0.25), key=sharpness)
    best = max(np.arange(best - 0.25, best + 0.26, 0.05), key=sharpness)
    return round(float(best), 2)


def deskew(image: np.ndarray) -> tuple[np.ndarray, float]:
    """The page turned upright when its skew is at least `DESKEW_MIN_DEGREES` (else as
    it is), and the skew it was turned by. Words read on the turned page are reported in
    the upright frame: the page as printed, with level lines for the grouping."""
    from PIL import Image

    angle = estimate_skew(image)
    if abs(angle) < DESKEW_MIN_DEGREES:
        return image, 0.0
    turned = Image.fromarray(image).rotate(-angle, resample=Image.Resampling.BILINEAR,
                                           fillcolor=255)
    return np.asarray(turned), angle


def turn_points(points: np.ndarray, degrees: float, centre: tuple[float, float]
                ) -> np.ndarray:
    """Points (x, y; y down) turned counter-clockwise on the page by `degrees`, as PIL's
    `rotate` turns an image."""
    t = math.radians(degrees)
    d = points - np.asarray(centre)
    x = d[:, 0] * math.cos(t) + d[:, 1] * math.sin(t)
    y = -d[:, 0] * math.sin(t) + d[:, 1] * math.cos(t)
    return np.stack([x, y], axis=1) + np.asarray(centre)


def turn_boxes_by(boxes: np.ndarray, degrees: float, size: tuple[float, float]
                  ) -> np.ndarray:
    """Boxes turned about the page's centre by `degrees`: each box's corners turned and the
    box around them, kept on the page."""
    if not degrees or not len(boxes):
        return boxes
    centre = (size[0] / 2, size[1] / 2)
    corners = [boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [0, 3]], boxes[:, [2, 3]]]
    turned = np.stack([turn_points(c, degrees, centre) for c in corners])
    out = np.concatenate([turned.min(axis=0), turned.max(axis=0)], axis=1)
    return np.clip(out, 0, [size[0], size[1], size[0], size[1]])


def ocr_page(pdf: str, page: int, size: tuple[float, float], langs: str
             ) -> tuple[list[str], np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """One page's words, their boxes in points (top-left origin) on the page as scanned
    (where the page image shows them), the same boxes on the page turned upright (the
    frame it was read in, level lines for the grouping), and (block, line) keys."""
    image = render_page(pdf, page)
    angle = 0.0
    if DESKEW:
        image, angle = deskew(image)
    rows = tesseract_rows(image, langs)
    words, boxes, keys = words_from_rows(rows, size[0] / image.shape[1],
                                         size[1] / image.shape[0])
    read = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return words, turn_boxes_by(read, angle, size), read, keys


def apply_ocr(pdf: str, doc_id: str, doc: Document | None, pages: list[int],
              language: str | None) -> Document:
    """`doc` with the words of `pages` replaced by Tesseract's (a new Document from the page
    sizes when Poppler gave none). Line and block ids are renumbered in page order."""
    sizes = page_boxes(pdf)
    langs = languages_for(language)
    ocr_words: dict[int, tuple[list[str], np.ndarray, np.ndarray, list[tuple[int, int]]]] = {}
    for p in pages:
        ocr_words[p] = ocr_page(pdf, p, sizes[p - 1], langs)
    # the frame each word was read in: a de-skewed scan's upright boxes, a born-digital
    # page's as Poppler read it (`Document.read_boxes`, or its turned page turned back)
    born_read = read_frame(doc)[0] if doc is not None else None
    reads: list[np.ndarray] = []
    base_pages = doc.pages if doc is not None else [Page(i + 1, w, h)
                                                    for i, (w, h) in enumerate(sizes)]
    words: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    word_pages: list[int] = []
    line_ids: list[int] = []
    block_ids: list[int] = []
    starts = doc.page_starts() if doc is not None else []
    line_base = block_base = 0
    for page in base_pages:
        p = page.number
        if p in ocr_words:
            w, shown, read, k = ocr_words[p]
            lines = {key: i for i, key in enumerate(dict.fromkeys(k))}
            blocks = {b: i for i, b in enumerate(dict.fromkeys(x[0] for x in k))}
            words += w
            boxes += [tuple(x) for x in shown.tolist()]
            reads.append(read)
            word_pages += [p] * len(w)
            line_ids += [line_base + lines[key] for key in k]
            block_ids += [block_base + blocks[key[0]] for key in k]
            line_base += len(lines)
            block_base += len(blocks)
        elif doc is not None:
            lo, hi = starts[p - 1], starts[p]
            if hi > lo:
                lmin, bmin = min(doc.line_ids[lo:hi]), min(doc.block_ids[lo:hi])
                words += doc.words[lo:hi]
                boxes += [tuple(x) for x in doc.boxes[lo:hi]]
                assert born_read is not None
                reads.append(np.asarray(born_read[lo:hi], dtype=np.float64).reshape(-1, 4))
                word_pages += doc.word_pages[lo:hi]
                line_ids += [line_base + i - lmin for i in doc.line_ids[lo:hi]]
                block_ids += [block_base + i - bmin for i in doc.block_ids[lo:hi]]
                line_base = line_ids[-1] + 1
                block_base = block_ids[-1] + 1
    out = Document(id=doc_id, pages=list(base_pages) if doc is None else
                   [Page(pg.number, pg.width, pg.height, 0 if pg.number in ocr_words
                         else pg.rotation) for pg in base_pages],
                   words=words, boxes=np.array(boxes, dtype=np.float64).reshape(-1, 4),
                   word_pages=word_pages, line_ids=line_ids, block_ids=block_ids)
    if doc is not None:
        out.dropped_invisible = doc.dropped_invisible
        out.words_repaired = doc.words_repaired
    read_boxes = np.concatenate(reads) if reads else out.boxes
    if (doc is not None and doc.read_boxes is not None) or not np.array_equal(read_boxes,
                                                                               out.boxes):
        out.read_boxes = read_boxes  # the group step lays the pages out as read
    return out
