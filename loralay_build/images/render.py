"""Pages of a PDF as pictures, with what the build removed painted white.

Why pypdfium2: it renders a page to JPEG in about 7 ms at 100 dpi where `pdftoppm` takes
17 and the original `pdf2image` path 27 (`docs/performance.md`), and it runs in-process,
so the per-document worker's time and memory limits bound it like the rest of the stage.
Pages are rendered, redacted, encoded and written one at a time: a worker never holds
more than one page's pixels, whatever the length of the document.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import refuse_link
from ..failures import Failure, FailureClass
from ..records import Box

POINTS_PER_INCH = 72.0
# one more pixel white around each box: anti-aliased glyph edges reach a little past
# Poppler's box, and a half-covered pixel of ink would survive rounding outwards alone
REDACT_PAD_PX = 1


def renderer_version() -> str:
    """Part of a document's input print with `images: true`: another pdfium, other pixels."""
    import pypdfium2

    return f"pypdfium2 {pypdfium2.PYPDFIUM_INFO}, pdfium {pypdfium2.PDFIUM_INFO}"


@contextmanager
def open_pdf(path: str | Path) -> Iterator[Any]:
    """A pypdfium2 document, closed on exit."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        yield doc
    finally:
        doc.close()


def render_rgb(pdf: Any, page: int, scale: float) -> Any:
    """Page `page` (1-based) of an open document as an RGB PIL image, `scale` pixels/point."""
    p = pdf[page - 1]
    try:
        return p.render(scale=scale).to_pil().convert("RGB")
    finally:
        p.close()


def outward_px(box: Box, scale: float, pad: int = REDACT_PAD_PX) -> tuple[int, int, int, int]:
    """The pixels a box in points touches at `scale`, rounded outwards and padded (PIL's
    rectangle includes both corners)."""
    x0, y0, x1, y1 = box
    return (math.floor(x0 * scale) - pad, math.floor(y0 * scale) - pad,
            math.ceil(x1 * scale) + pad - 1, math.ceil(y1 * scale) + pad - 1)


def paint_white(img: Any, boxes: Iterable[Box], scale: float) -> None:
    """Paint each box white. Boxes are in points from the top-left corner of the page as
    pdfium renders it (the CropBox, turned by the page's /Rotate), which is where extraction
    puts every word, rotated pages included (docs/rotation.md): no other transform here."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(img)
    for box in boxes:
        draw.rectangle(outward_px(box, scale), fill=(255, 255, 255))


@dataclass(frozen=True, slots=True)
class RenderedPage:
    page: int  # 1-based physical page, as `article_pages`
    width: int
    height: int
    file: str  # the JPEG in the staging folder


@dataclass(frozen=True, slots=True)
class RenderedPages:
    """One document's redacted pages, as files a worker left for the driver to store."""

    doc_id: str
    dpi: int
    folder: str
    pages: tuple[RenderedPage, ...]


def staging_folder(staging: str | Path, doc_id: str) -> Path:
    """A fresh folder per attempt: a killed attempt's leftovers never mix with the next."""
    key = hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:16]
    folder = refuse_link(Path(staging) / f"{key}-{uuid.uuid4().hex[:8]}")
    folder.mkdir(parents=True)
    return folder


def render_pages(pdf_path: str | Path, doc_id: str, pages: Iterable[int],
                 redact: dict[int, list[Box]], dpi: int, quality: int,
                 staging: str | Path) -> RenderedPages | Failure:
    """Each of `pages` rendered at `dpi`, its `redact` boxes painted white, into a JPEG;
    on any failure the folder goes with it."""
    import pypdfium2 as pdfium

    folder = staging_folder(staging, doc_id)
    result: RenderedPages | Failure | None = None
    try:
        result = _render_into(folder, pdf_path, doc_id, pages, redact, dpi, quality)
    except pdfium.PdfiumError as e:
        result = _failure(e)
    finally:
        if not isinstance(result, RenderedPages):
            shutil.rmtree(folder, ignore_errors=True)
    return result


def _failure(e: Exception) -> Failure:
    """The class Poppler would have given: a password is `encrypted`, the rest `corrupted`."""
    import pypdfium2.raw as pdfium_c

    if getattr(e, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
        return Failure(FailureClass.ENCRYPTED, f"pdfium needs a password to render it: {e}")
    return Failure(FailureClass.CORRUPTED, f"pdfium cannot render it: {e}")


def _render_into(folder: Path, pdf_path: str | Path, doc_id: str, pages: Iterable[int],
                 redact: dict[int, list[Box]], dpi: int, quality: int
                 ) -> RenderedPages | Failure:
    scale = dpi / POINTS_PER_INCH
    done: list[RenderedPage] = []
    with open_pdf(pdf_path) as pdf:
        count = len(pdf)
        for page in pages:
            if page > count:
                return Failure(FailureClass.CORRUPTED,
                               f"pdfium sees {count} pages, Poppler at least {page}")
            img = render_rgb(pdf, page, scale)
            paint_white(img, redact.get(page, ()), scale)
            file = folder / f"{page:05d}.jpg"
            img.save(file, format="JPEG", quality=quality)
            done.append(RenderedPage(page, img.width, img.height, str(file)))
    return RenderedPages(doc_id, dpi, str(folder), tuple(done))
