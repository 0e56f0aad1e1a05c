#!/usr/bin/env python3
"""Layout-step benchmark: the whole layout step (`group_and_label`: lines, blocks, reading
order, then the block labels and page furniture to the page's ends) against extraction,
per page, over the bench PDFs (issues 33 and 34: at most 8 % of extraction).

Each document is extracted, then grouped and labelled right after (cold caches, as in a
build), documents interleaved and rotated each run; CPU seconds (this process and
Poppler's), totals over all runs (`eval_groups.time_against_extraction`). Prints the
grouping and the labels apart, the whole step's ratio, and its spread over the runs.

`--fingerprints FILE` checks instead that the step's output is unchanged: a digest of
every word column it writes (words, boxes, pages, line and block ids, labels, hence the
order), for both groupings, of every PDF in the bench folder and in `--corpus`; written to
FILE when it does not exist, else compared with it (exit 1 on any difference).

usage: python scripts/bench_layout.py [PDF_DIR] [--runs N] [--pin CPU]
       python scripts/bench_layout.py [PDF_DIR] --fingerprints FILE [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from eval_groups import GOAL_COST, fingerprint, time_against_extraction  # noqa: E402

from loralay_build.gcpolicy import settle_heap  # noqa: E402
from loralay_build.group.labels import group_and_label  # noqa: E402
from loralay_build.pdftext import ExtractLimits, extract_document  # noqa: E402
from loralay_build.records import Document  # noqa: E402

DEFAULT_DIR = HERE.parent.parent / "shared" / "bench" / "pdfs"


def fingerprints(pdfs: list[Path]) -> list[str]:
    """One line per readable PDF and grouping: its name, the grouping, the digest of the
    layout step's output (`eval_groups.fingerprint`)."""
    out = []
    for pdf in pdfs:
        doc = extract_document(pdf, pdf.stem, ExtractLimits(timeout_s=600))
        if not isinstance(doc, Document):
            continue  # encrypted, broken: no words to lay out
        for how in ("geometry", "poppler"):
            out.append(f"{pdf.parent.name}/{pdf.name} {how} "
                       f"{fingerprint(group_and_label(doc, how))}")
    return out


def check_fingerprints(path: Path, pdfs: list[Path]) -> int:
    lines = fingerprints(pdfs)
    if not path.exists():
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{path}: {len(lines)} fingerprints written")
        return 0
    saved = path.read_text(encoding="utf-8").splitlines()
    differ = sorted(set(lines) ^ set(saved))
    print(f"{path}: {len(lines)} fingerprints, {len(saved)} saved, "
          f"{len(differ)} lines differ")
    for line in differ:
        print(f"  {'now  ' if line in lines else 'saved'} {line}")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pdf_dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pin", type=int, default=None,
                    help="pin this process and its children to one CPU")
    ap.add_argument("--fingerprints", type=Path, metavar="FILE",
                    help="check the output against FILE (written when absent) instead")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="more PDFs for --fingerprints (the shared corpus's pdf folder)")
    args = ap.parse_args(argv)
    pdfs = sorted(args.pdf_dir.glob("*.pdf"))
    if not pdfs:
        sys.exit(f"{args.pdf_dir}: no PDFs found")
    if args.fingerprints:
        extra = sorted(args.corpus.glob("*.pdf")) if args.corpus else []
        return check_fingerprints(args.fingerprints, pdfs + extra)
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    settle_heap()  # as a worker does once its imports are done (machinery/pool.py)
    for pdf in pdfs:  # warms the page cache and the code paths
        group_and_label(extract_document(pdf, pdf.stem, ExtractLimits(timeout_s=600)))
    cost = time_against_extraction(pdfs, args.runs)
    whole = cost.ratio(cost.step_s)
    pinned = f"pinned to CPU {args.pin}" if args.pin is not None else "not pinned"
    print(f"{len(pdfs)} PDFs, {pinned}")
    print(cost.summary())
    print(f"layout step / extraction = {whole:.3f} CPU (target <= {GOAL_COST:.2f})  "
          f"{'PASS' if whole <= GOAL_COST else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
