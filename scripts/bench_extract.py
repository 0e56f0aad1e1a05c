#!/usr/bin/env python3
"""Extraction benchmark: ratios measured in one run, order interleaved and rotated.

(a) loralay's extractor (pdftotext -bbox-layout to a pipe, parsed while it runs)
(b) the bare `pdftotext -bbox-layout FILE /dev/null` process (the floor)
(c) the original LoRaLay approach: pdftotext to a file, then lxml iterparse reading
    the text on start events, with its per-word regex clean-up and rounding
(d) `loralay extract --format jsonl --out-dir TMP` over the whole set, one process per
    run, against the sum of (b) in the same run

Targets: (a)/(c) <= 0.72, (a)/(b) <= 1.10, (d)/(b) <= 1.20. Absolute speed drifts with
the machine's load; the ratios are what to compare (docs/performance.md). The ratios
are of CPU seconds (this process and its children, `os.times`): on a machine shared
with other jobs, wall time on a pinned core also counts their work. Wall-clock ratios
are printed beside them.

usage: python scripts/bench_extract.py [PDF_DIR] [--runs N] [--pin CPU]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loralay_build.gcpolicy import settle_heap  # noqa: E402
from loralay_build.pdftext import ExtractLimits, extract_document  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO.parent / "shared" / "bench" / "pdfs"
_SPACES = re.compile(r"\s+")
_QUOTE = re.compile("[\u2019]")


def run_ours(pdf: Path) -> int:
    doc = extract_document(pdf, pdf.stem, ExtractLimits(timeout_s=600))
    return len(doc.words)


def run_bare(pdf: Path) -> int:
    subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "/dev/null"], check=True,
                   stderr=subprocess.DEVNULL)
    return 0


def run_original(pdf: Path) -> int:
    """The original's shape: a file on disk, iterparse start+end, clean and round per word."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.html"
        subprocess.run(f"pdftotext -f 1 -bbox-layout '{pdf}' '{out}'", shell=True, check=True,
                       stderr=subprocess.DEVNULL)
        n = 0
        width = height = 0.0
        for event, el in etree.iterparse(str(out), events=("start", "end"), recover=True,
                                         huge_tree=True):
            tag = el.tag.rsplit("}", 1)[-1]
            if event == "start" and tag == "page":
                width, height = float(el.get("width")), float(el.get("height"))
            elif event == "start" and tag == "word":
                text = _QUOTE.sub("'", _SPACES.sub("", el.text or ""))
                box = [round(float(el.get(k))) for k in ("xMin", "yMin", "xMax", "yMax")]
                box = [min(max(v, 0), width if i % 2 == 0 else height) for i, v in enumerate(box)]
                if box[0] > box[2]:
                    box[0], box[2] = box[2], box[0]
                if text:
                    n += 1
            if event == "end":
                el.clear()
        return n


METHODS = {"a_ours": run_ours, "b_bare": run_bare, "c_original": run_original}


def page_count(pdf: Path) -> int:
    out = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    m = re.search(r"^Pages:\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


def cpu_now() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn: Callable[..., object], *args: object) -> tuple[float, float]:
    """Wall and CPU seconds of one call (the CPU of its children included)."""
    w, c = time.perf_counter(), cpu_now()
    fn(*args)
    return time.perf_counter() - w, cpu_now() - c


def run_cli(pdfs: list[Path]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "loralay_build.cli", "extract", "--format",
                        "jsonl", "--out-dir", tmp, *map(str, pdfs)], check=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))


def one_run(pdfs: list[Path], order: list[str]) -> dict[str, tuple[float, float]]:
    """Corpus (wall, CPU) of each method, each PDF timed with all methods back to back;
    then the CLI over the whole set."""
    totals = {k: (0.0, 0.0) for k in order}
    for pdf in pdfs:
        for name in order:
            w, c = timed(METHODS[name], pdf)
            totals[name] = (totals[name][0] + w, totals[name][1] + c)
    totals["d_cli_jsonl"] = timed(run_cli, pdfs)
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pdf_dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pin", type=int, default=None,
                    help="pin this process and its children to one CPU (per-core figures)")
    args = ap.parse_args()
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    settle_heap()  # as a worker and `loralay extract` do once their imports are done
    pdfs = sorted(args.pdf_dir.glob("*.pdf"))
    if not pdfs:
        sys.exit(f"{args.pdf_dir}: no PDFs found")
    pages = sum(page_count(p) for p in pdfs)
    words = sum(run_ours(p) for p in pdfs)  # also warms the page cache
    order = list(METHODS)
    runs = []
    for r in range(args.runs):
        runs.append(one_run(pdfs, order[r % 3:] + order[:r % 3]))
    report(runs, pages, words, len(pdfs), args.pin)


TARGETS = (("a_ours", "c_original", 0.72), ("a_ours", "b_bare", 1.10),
           ("d_cli_jsonl", "b_bare", 1.20))


def report(runs: list[dict[str, tuple[float, float]]], pages: int, words: int, n: int,
           pin: int | None) -> None:
    print(f"{n} PDFs, {pages} pages, {words} words; {len(runs)} runs, "
          f"{f'pinned to CPU {pin}' if pin is not None else 'not pinned'}")
    for k in runs[0]:
        wall = statistics.median(r[k][0] for r in runs)
        cpu = statistics.median(r[k][1] for r in runs)
        print(f"  {k:12s} {cpu:7.2f} s CPU ({wall:6.2f} s wall)  {pages / cpu:7.0f} pages/s  "
              f"{words / cpu:9.0f} words/s")
    for a, b, target in TARGETS:
        cpu = statistics.median(r[a][1] / r[b][1] for r in runs)
        wall = statistics.median(r[a][0] / r[b][0] for r in runs)
        print(f"({a[0]})/({b[0]}) = {cpu:.3f} CPU, {wall:.3f} wall  (target <= {target:.2f})  "
              f"{'PASS' if cpu <= target else 'FAIL'}")


if __name__ == "__main__":
    main()
