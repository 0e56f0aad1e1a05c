"""Rotated pages: every word's box where the page shows it, the words as the page reads.

What the tools do (measured with Poppler 22.12 and pdfium 159; docs/rotation.md):
- `pdftotext -bbox-layout` prints a page's *unrotated* width and height, but writes its
  words in the *displayed* frame (the page turned by its `/Rotate`, inherited or not,
  negative or over 360). On a 90 or 270 page the words lie in a box of the other shape,
  and clamping them to the printed size collapsed about a fifth of them onto the edge.
- Poppler also *reads* the page in the displayed frame: the same page turned by
  `qpdf --rotate` comes out in another order (footnotes before the abstract, headings
  merged into lines), so the words would depend on how a page happens to be shown.
- pdfium, which renders the page images, draws the displayed page, and gives its size
  without loading the page (`FPDF_GetPageSizeByIndexF`, ~0.02 ms a page; loading a page
  to read its `/Rotate` parses its content: ~15 % of Poppler's run).

The rule: a rotated page is read as written (unrotated, so turning a page never changes
its words, their order, lines or blocks) and its boxes are turned into the displayed frame,
where the page images draw it; except when the rotation is what stands the text upright on
screen (a landscape table set sideways and turned for display, as `pdflscape` does): that
page Poppler already reads right, as shown.
1. pdfium's displayed sizes go to the parser (`BBoxLayoutParser(display=...)`), which
   records and clamps a page printed as its displayed size turned a quarter with its sides
   swapped, so no box collapses even if step 2 cannot run.
2. Only when a page was swapped (or did not match either way), or its words read right to
   left (upside-down text: a 180 page), or top to bottom on a square page: `pdfinfo` says
   which rotation Poppler applied to every page, and the rotated pages not upright as shown
   are read again from a copy where they have `/Rotate 0` (qpdf), their boxes turned
   (`turn_boxes`): the unrotated page's words, order, lines and blocks, its boxes turned.
   Each such page records its turn (`Page.rotation`) and the document the boxes as read
   (`Document.read_boxes`): the group step lays the page out as read (group/regions.py).
A document with no rotated page pays for step 1 only (~0.7 % of Poppler's CPU).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..failures import Failure
from ..records import Document, Page, turn_boxes
from .parse import DISPLAY_TOLERANCE, BBoxLayoutParser

Size = tuple[float, float]
# for the tool version the run state fingerprints (as glyphs.GLYPH_RULE, pdf/preflight.py):
# bump when the boxes or the words of rotated or cropped pages change, so runs redo them
ROTATION_RULE = "rotation1"
# steps between words on one level that must go right to left before a page's text counts as
# upside down: at least this many, more than go left to right, and this share of the page's
# words (an upside-down page steps back on most of its words; stray ones occur on any page:
# sub- and superscripts, the one-letter cells of a sideways table)
MIN_BACKWARD_STEPS = 5
MIN_BACKWARD_SHARE = 0.2
_PAGE_INFO = re.compile(rb"^Page\s+(\d+)\s+(size|rot):\s+(.*)$", re.M)
_SIZE = re.compile(rb"([-+\d.eE]+) x ([-+\d.eE]+)")


def displayed_sizes(path: Path, pages: int) -> list[Size] | None:
    """The displayed width and height of the first `pages` pages (pdfium: the CropBox within
    the MediaBox, turned by the page's rotation), or None when pdfium cannot open the file
    (Poppler's own page list then decides, at the cost of a pdfinfo run)."""
    try:
        import pypdfium2 as pdfium
    except ImportError:  # pragma: no cover - a dependency; without it, pdfinfo decides
        return None
    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError, ValueError):
        return None
    try:
        return [pdf.get_page_size(i) for i in range(min(len(pdf), pages))]
    except pdfium.PdfiumError:
        return None
    finally:
        pdf.close()


def pdfium_rotation(path: Path, page: int) -> int | None:
    """The rotation pdfium displays page `page` (1-based) with; loads the page (costly)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return None
    try:
        if page > len(pdf):
            return None
        p = pdf[page - 1]
        try:
            return int(p.get_rotation()) % 360
        finally:
            p.close()
    except pdfium.PdfiumError:
        return None
    finally:
        pdf.close()


def poppler_pages(path: Path, last: int, timeout_s: float) -> dict[int, tuple[Size, int]]:
    """Each page's (size, rotation) as Poppler reads them (`pdfinfo -f 1 -l last`): the size
    unrotated (the crop box), the rotation as written, brought into 0-359. {} on failure."""
    exe = shutil.which("pdfinfo")
    if exe is None or last < 1:
        return {}
    try:
        out = subprocess.run([exe, "-f", "1", "-l", str(last), str(path)],
                             capture_output=True, timeout=timeout_s, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    sizes: dict[int, Size] = {}
    rots: dict[int, int] = {}
    for number, kind, value in _PAGE_INFO.findall(out):
        n = int(number)
        if kind == b"rot":
            try:
                rots[n] = int(value.split()[0]) % 360
            except (ValueError, IndexError):
                pass
        elif (m := _SIZE.search(value)) is not None:
            try:
                sizes[n] = (float(m.group(1)), float(m.group(2)))
            except ValueError:
                pass
    return {n: (sizes.get(n, (math.nan, math.nan)), r) for n, r in rots.items()}


def poppler_frame(rotation: int) -> int:
    """The rotation Poppler draws a page with: only quarter turns count, anything else is 0
    (pdfium rounds other values down to a quarter turn: /Rotate 135 displays as 90)."""
    return rotation if rotation in (90, 180, 270) else 0


def displayed_from_poppler(info: dict[int, tuple[Size, int]], pages: int) -> list[Size]:
    """Displayed sizes from Poppler's own view, when pdfium cannot open the file."""
    out = []
    for n in range(1, pages + 1):
        (w, h), rot = info.get(n, ((math.nan, math.nan), 0))
        out.append((h, w) if poppler_frame(rot) in (90, 270) else (w, h))
    return out


def _steps(boxes: np.ndarray, vertical: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per step between consecutive words, both shaped like text of that axis (wider than
    tall, or taller than wide for `vertical`) and on one level (sharing half the smaller
    one's extent across the text): forwards (centre further right, or further down), and
    backwards."""
    a, b = (1, 3) if not vertical else (0, 2)  # the extent across the text
    c, d = (0, 2) if not vertical else (1, 3)  # the extent along it
    lo, hi = boxes[:, a], boxes[:, b]
    across = hi - lo
    shaped = (boxes[:, d] - boxes[:, c]) >= across
    shared = np.minimum(hi[:-1], hi[1:]) - np.maximum(lo[:-1], lo[1:])
    level = (shared > 0.5 * np.minimum(across[:-1], across[1:])) & shaped[:-1] & shaped[1:]
    centre = boxes[:, c] + boxes[:, d]
    return level & (centre[1:] > centre[:-1]), level & (centre[1:] < centre[:-1])


def _per_page(flags: np.ndarray, starts: Sequence[int]) -> list[int]:
    """How many of the steps inside each page are set (a step i joins words i and i+1)."""
    total = np.concatenate([[0], np.cumsum(flags)])  # total[i]: set steps before step i
    return [int(total[e - 1] - total[s]) if e - s > 1 else 0 for s, e in zip(starts, starts[1:])]


def suspect_pages(doc: Document, starts: Sequence[int]) -> set[int]:
    """Pages whose words read right to left on one level (upside-down text: a 180 page), or,
    on a square page (no size evidence), top to bottom or bottom to top. Cheap: a few NumPy
    passes over the boxes, no per-word Python."""
    if len(doc.boxes) < 2:
        return set()
    words = [e - s for s, e in zip(starts, starts[1:])]
    right, left = (_per_page(f, starts) for f in _steps(doc.boxes, vertical=False))
    out = {n for n, (r, lf, k) in enumerate(zip(right, left, words), 1)
           if lf >= max(MIN_BACKWARD_STEPS, MIN_BACKWARD_SHARE * k) and lf > r}
    square = [p.number for p in doc.pages
              if abs(p.width - p.height) <= DISPLAY_TOLERANCE and p.number not in out]
    if square:
        down, up = (_per_page(f, starts) for f in _steps(doc.boxes, vertical=True))
        out.update(n for n in square
                   if down[n - 1] + up[n - 1] >= max(MIN_BACKWARD_STEPS,
                                                     MIN_BACKWARD_SHARE * words[n - 1])
                   and down[n - 1] + up[n - 1] > right[n - 1] + left[n - 1])
    return out


def text_direction(doc: Document, start: int, end: int) -> int | None:
    """The direction most of a page's text reads in on screen (Poppler's `rot`: 0 left to
    right, 1 top to bottom, 2 right to left, 3 bottom to top), or None when unclear. The
    axis from the shape of every word of three characters or more (wider than tall along
    its text: single-word table cells count too); the sense from Poppler's lines along that
    axis, first word to last, weighted by their words."""
    if end - start < 2:
        return None
    b = doc.boxes[start:end]
    long = np.fromiter((len(t) >= 3 for t in doc.words[start:end]), bool, end - start)
    wide = (b[:, 2] - b[:, 0]) >= (b[:, 3] - b[:, 1])
    flat, tall = int(np.count_nonzero(wide & long)), int(np.count_nonzero(~wide & long))
    if flat == tall:
        return None
    vertical = tall > flat
    along = (b[:, 1] + b[:, 3]) if vertical else (b[:, 0] + b[:, 2])
    across = (b[:, 0] + b[:, 2]) if vertical else (b[:, 1] + b[:, 3])
    cut = np.flatnonzero(np.diff(np.asarray(doc.line_ids[start:end]))) + 1
    first = np.concatenate([[0], cut])
    last = np.concatenate([cut, [end - start]]) - 1
    words = last - first + 1
    step, drift = along[last] - along[first], across[last] - across[first]
    on_axis = (words > 1) & (np.abs(step) > np.abs(drift))
    ahead = int(words[on_axis & (step > 0)].sum())
    back = int(words[on_axis & (step < 0)].sum())
    if ahead == back:
        return None
    return (1 if ahead > back else 3) if vertical else (0 if ahead > back else 2)


def upright_copy(src: Path, dst: Path, pages: Sequence[int], timeout_s: float) -> Path | None:
    """`dst`: `src` with `/Rotate 0` on `pages` (qpdf), or None when qpdf cannot write it."""
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        return None
    try:
        done = subprocess.run([qpdf, str(src), f"--rotate=0:{','.join(map(str, pages))}",
                               str(dst)], capture_output=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # qpdf exits 3 when it wrote the file but warned (common on real-world PDFs)
    return dst if done.returncode in (0, 3) and dst.exists() else None


Reread = Callable[[Path, list[Size]], "Document | Failure"]


def to_turn(doc: Document, parser: BBoxLayoutParser, path: Path, timeout_s: float
            ) -> tuple[dict[int, int], list[Size]]:
    """The pages to read again unrotated, each with the rotation pdfium displays it with,
    and the displayed sizes to read with. {} without running anything on a document with
    no evidence of a rotated page; once one page is evidence, Poppler's rotation of every
    page is read (pdfinfo), so an upside-down page with too few words to show it is found
    too. A rotated page whose text reads left to right as shown stays as Poppler read it."""
    display = list(parser.display)
    starts = doc.page_starts()
    suspects = bool(parser.swapped or parser.unmatched or suspect_pages(doc, starts))
    if not suspects and display:
        return {}, display
    info = poppler_pages(path, len(doc.pages), timeout_s)
    if not info:
        return {}, display
    if not display:  # pdfium could not open the file: Poppler's view of the sizes
        display = displayed_from_poppler(info, len(doc.pages))
    plan: dict[int, int] = {}
    for page in doc.pages:
        if page.number not in info:
            continue
        rotation = info[page.number][1]
        frame = poppler_frame(rotation)
        # a rotation that is no quarter turn: Poppler reads it as 0, pdfium rounds it
        shown = frame if rotation % 90 == 0 else pdfium_rotation(path, page.number)
        square = abs(page.width - page.height) <= DISPLAY_TOLERANCE
        swap_wrong = (page.number in parser.swapped) != (frame in (90, 270) and not square)
        if shown is None or (frame == 0 and shown == 0 and not swap_wrong):
            continue
        if (frame == shown and not swap_wrong and frame != 0
                and text_direction(doc, starts[page.number - 1], starts[page.number]) == 0):
            continue  # the rotation stands the text upright (pdflscape): read as shown
        plan[page.number] = shown
    return plan, display


def settle_rotation(doc: Document, parser: BBoxLayoutParser, path: Path, timeout_s: float,
                    reread: Reread) -> Document:
    """`doc` with its rotated pages read unrotated and their boxes turned into the displayed
    frame (see the module docstring); `doc` itself when there is none, or when reading
    again fails (its boxes are then Poppler's, in the displayed frame, in Poppler's order
    for the displayed page)."""
    plan, display = to_turn(doc, parser, path, timeout_s)
    if not plan:
        return doc
    unknown = (math.nan, math.nan)  # a page read unrotated is clamped as printed
    display = [unknown if n in plan else size for n, size in enumerate(display, 1)]
    with tempfile.TemporaryDirectory(prefix="loralay-rotate-") as tmp:
        copy = upright_copy(path, Path(tmp) / "upright.pdf", sorted(plan), timeout_s)
        again = reread(copy, display) if copy is not None else None
    if not isinstance(again, Document) or len(again.pages) != len(doc.pages):
        return doc
    starts = again.page_starts()
    again.read_boxes = again.boxes.copy()  # the frame the group step lays the pages out in
    for number, rotation in plan.items():
        s, e = starts[number - 1], starts[number]
        page = again.pages[number - 1]
        turned, (w, h) = turn_boxes(again.boxes[s:e], page.width, page.height, rotation)
        again.boxes[s:e] = turned
        again.pages[number - 1] = Page(number, w, h, rotation)
    return again
