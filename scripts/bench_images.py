#!/usr/bin/env python3
"""Page images against extraction: cost per page measured in one run, interleaved.

Per PDF and run, in rotating order:
(a) extraction: loralay's extractor (`extract_document`, Poppler's pdftotext)
(b) the render stage of `images: true`: every page rendered by pypdfium2 at `--dpi`,
    the words of the first 300 painted white (as many boxes as an abstract), encoded
    to JPEG and written to a file (`render_pages`)
(c) `pdftoppm -r DPI -jpeg` on the same PDF, the Poppler way to the same files
Reported: median ms/page over the runs of the summed corpus time, and the ratios b/a
and c/a (absolute speed drifts with the machine's load: compare ratios).

usage: python scripts/bench_images.py [PDF_DIR] [--runs N] [--dpi DPI]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loralay_build.images.render import render_pages  # noqa: E402
from loralay_build.pdftext import extract_document  # noqa: E402

REDACTED_WORDS = 300


def _extract(pdf: Path, tmp: Path, dpi: int) -> None:
    extract_document(pdf, pdf.stem)


def _render(pdf: Path, tmp: Path, dpi: int) -> None:
    doc = extract_document(pdf, pdf.stem)  # outside the timing: see `timed`
    boxes: dict[int, list] = {}
    for p, b in list(zip(doc.word_pages, doc.boxes, strict=True))[:REDACTED_WORDS]:
        boxes.setdefault(p, []).append(b)
    t = time.perf_counter()
    render_pages(pdf, pdf.stem, [p.number for p in doc.pages], boxes, dpi, 75, tmp)
    _render.last = time.perf_counter() - t  # type: ignore[attr-defined]


def _pdftoppm(pdf: Path, tmp: Path, dpi: int) -> None:
    subprocess.run(["pdftoppm", "-r", str(dpi), "-jpeg", str(pdf), str(tmp / pdf.stem)],
                   check=True)


METHODS: dict[str, Callable[[Path, Path, int], None]] = {
    "extract": _extract, "render": _render, "pdftoppm": _pdftoppm}


def timed(name: str, pdf: Path, tmp: Path, dpi: int) -> float:
    t = time.perf_counter()
    METHODS[name](pdf, tmp, dpi)
    if name == "render":
        return _render.last  # type: ignore[attr-defined]
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pdf_dir", nargs="?", default="../shared/bench/pdfs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dpi", type=int, default=100)
    args = ap.parse_args()
    pdfs = sorted(Path(args.pdf_dir).glob("*.pdf"))
    pages = sum(len(extract_document(p, p.stem).pages) for p in pdfs)
    names = list(METHODS)
    totals: dict[str, list[float]] = {n: [] for n in names}
    for run in range(args.runs):
        sums = dict.fromkeys(names, 0.0)
        for i, pdf in enumerate(pdfs):
            order = names[(i + run) % 3:] + names[:(i + run) % 3]
            for name in order:
                with tempfile.TemporaryDirectory() as tmp:
                    sums[name] += timed(name, pdf, Path(tmp), args.dpi)
        for n in names:
            totals[n].append(sums[n])
    med = {n: statistics.median(v) for n, v in totals.items()}
    print(f"{len(pdfs)} PDFs, {pages} pages, {args.runs} runs, {args.dpi} dpi")
    for n in names:
        print(f"{n:9s} {1000 * med[n] / pages:6.2f} ms/page  ratio to extract "
              f"{med[n] / med['extract']:.2f}")


if __name__ == "__main__":
    main()
