"""OCR of pages without a usable text layer: Tesseract's words and boxes in Poppler's frame.

A page is rendered by pdftoppm at `DPI` (the CropBox, /Rotate applied: the displayed page,
the frame Poppler's boxes are given in), Tesseract reads it (`tsv`: a box per word), and the
pixel boxes are scaled to points with the top-left origin. The result is a `Document` like
Poppler's, so grouping, order, labels, the abstract cut and the filters run unchanged
(docs/ocr.md). Routing (`pages_to_ocr`) keeps blank pages and vector-only figures away from
Tesseract: only pages an image covers, or pages whose text layer is broken, are read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import unicodedata
from functools import lru_cache

import numpy as np

from ..errors import ToolMissing
from ..records import Document, Page

ENGINE = "tesseract"
DPI = 300
# the document's language -> Tesseract's code; English is always added
TESSERACT_LANGS = {"en": "eng", "fr": "fra", "es": "spa", "pt": "por", "ko": "kor"}
MIN_IMAGE_COVER = 0.3  # share of the page an image must cover for a textless page to be read
BROKEN_SHARE = 0.5  # share of a page's words holding U+FFFD (or glyph soup) that is broken
MIN_PAGE_WORDS = 5  # fewer words on a page is no usable text layer
MIN_CONF = 0  # Tesseract's -1 marks non-word rows


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
    """What an OCR'd result depends on beyond the mode: part of the settings fingerprint."""
    return {"engine": ENGINE, "version": tesseract_version(), "dpi": DPI,
            "languages": sorted(set(TESSERACT_LANGS.values()))}


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
    if not textless:  # a born-digital document: no pdfimages run, the router costs ~nothing
        return broken
    cover = image_cover(pdf, textless)
    return sorted(broken + [p for p in textless if cover.get(p, 0.0) >= MIN_IMAGE_COVER])


def _is_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" for ch in text)


def _tesseract_env() -> dict[str, str]:
    """One OpenMP thread: Tesseract 5's threads burn CPU-time for little wall time, and the
    build's parallelism is its `--workers`."""
    return {**os.environ, "OMP_THREAD_LIMIT": "1"}


def _tsv_rows(pdf: str, page: int, langs: str) -> tuple[tuple[int, int], list[list[str]]]:
    """The page's image size in pixels and Tesseract's word rows. pdftoppm writes an
    uncompressed grayscale PGM into Tesseract's stdin: encoding a PNG cost ~1 CPU-s a page,
    as much as a third of Tesseract's own time."""
    psm = "4" if "kor" in langs else "3"
    render = subprocess.Popen(["pdftoppm", "-r", str(DPI), "-f", str(page), "-l", str(page),
                               "-gray", "-singlefile", pdf], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        out = subprocess.run(["tesseract", "stdin", "stdout", "-l", langs, "--psm", psm,
                              "--dpi", str(DPI), "tsv"], stdin=render.stdout,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=600, check=True,
                             env=_tesseract_env()).stdout
    finally:
        assert render.stdout is not None
        render.stdout.close()
        if render.wait(timeout=300) != 0:
            raise subprocess.CalledProcessError(render.returncode, "pdftoppm")
    rows = [r.split("\t") for r in out.splitlines()[1:]]
    size = next(((int(r[8]), int(r[9])) for r in rows if len(r) >= 10 and r[0] == "1"), (1, 1))
    return size, [r for r in rows if len(r) == 12 and r[11].strip() and float(r[10]) >= MIN_CONF]


def ocr_page(pdf: str, page: int, size: tuple[float, float], langs: str
             ) -> tuple[list[str], list[tuple[float, float, float, float]], list[tuple[int, int]]]:
    """One page's words, boxes in points (top-left origin) and (block, line) keys."""
    (px_w, px_h), rows = _tsv_rows(pdf, page, langs)
    sx, sy = size[0] / px_w, size[1] / px_h
    words: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    keys: list[tuple[int, int]] = []
    for r in rows:
        left, top, w, h = (int(v) for v in r[6:10])
        key = (int(r[2]), int(r[3]) * 1000 + int(r[4]))
        box = (left * sx, top * sy, (left + w) * sx, (top + h) * sy)
        text = unicodedata.normalize("NFC", r[11].strip())
        # Tesseract splits Hangul words into syllables: rejoin those of one line that touch
        if (words and keys[-1] == key and _is_hangul(text) and _is_hangul(words[-1])
                and box[0] - boxes[-1][2] < 0.25 * (box[3] - box[1])):
            b = boxes[-1]
            words[-1] += text
            boxes[-1] = (min(b[0], box[0]), min(b[1], box[1]), max(b[2], box[2]),
                         max(b[3], box[3]))
            continue
        words.append(text)
        boxes.append(box)
        keys.append(key)
    return words, boxes, keys


def apply_ocr(pdf: str, doc_id: str, doc: Document | None, pages: list[int],
              language: str | None) -> Document:
    """`doc` with the words of `pages` replaced by Tesseract's (a new Document from the page
    sizes when Poppler gave none). Line and block ids are renumbered in page order."""
    sizes = page_boxes(pdf)
    langs = languages_for(language)
    ocr_words: dict[int, tuple[list[str], list[tuple[float, float, float, float]],
                               list[tuple[int, int]]]] = {}
    for p in pages:
        ocr_words[p] = ocr_page(pdf, p, sizes[p - 1], langs)
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
            w, b, k = ocr_words[p]
            lines = {key: i for i, key in enumerate(dict.fromkeys(k))}
            blocks = {b: i for i, b in enumerate(dict.fromkeys(x[0] for x in k))}
            words += w
            boxes += b
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
        if doc.read_boxes is not None and not ocr_words:
            out.read_boxes = doc.read_boxes
    return out
