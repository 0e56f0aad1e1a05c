"""OCR measured on ground truth we make: born-digital pages rendered at 300 dpi into an
image-only PDF and read back by `pdftext/ocr.py`; the original's words are the truth.

Prints per PDF: word recall (case and edge punctuation aside, one-character tokens left
out), character error rate (edit distance of the page's joined text over its length),
CPU-seconds per OCR'd page (Tesseract and pdftoppm, children's CPU), and the router's cost
on the born-digital original as a share of its extraction.

`--router PDF...` measures the router alone on whole born-digital PDFs (`ocr: auto`
deciding which pages need OCR, its own and its children's CPU) against their extraction,
the median of `--runs` runs each, and the total share (goal: <= 1 %).

    python scripts/bench_ocr.py ../shared/corpus/pdf/en_acl_s2orc.pdf:2 ...
    python scripts/bench_ocr.py --router ../shared/corpus/pdf/*.pdf
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loralay_build.pdftext import (  # noqa: E402
    ExtractLimits,
    extract_document,
    ocr,  # noqa: E402
)
from loralay_build.records import Document  # noqa: E402

PUNCT = ".,;:!?()[]{}'\"’‘“”—–-"


def norm(words: list[str]) -> list[str]:
    out = [w.casefold().strip(PUNCT) for w in words]
    return [w for w in out if len(w) > 1]


def recall(truth: list[str], read: list[str]) -> float:
    t, r = Counter(norm(truth)), Counter(norm(read))
    return sum(min(n, r[w]) for w, n in t.items()) / max(1, sum(t.values()))


def cer(truth: str, read: str) -> float:
    """Levenshtein distance row by row in numpy (edlib takes at most 256 distinct symbols,
    fewer than a Korean page has)."""
    import numpy as np

    a = np.frombuffer(truth.encode("utf-32-le"), dtype=np.uint32)
    b = np.frombuffer(read.encode("utf-32-le"), dtype=np.uint32)
    prev = np.arange(len(b) + 1)
    for i, ch in enumerate(a, 1):
        sub = prev[:-1] + (b != ch)
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, sub)
        cur = np.minimum.accumulate(cur - np.arange(len(cur))) + np.arange(len(cur))
        prev = cur
    return float(prev[-1]) / max(1, len(a))


def cpu_children() -> float:
    t = os.times()
    return t.children_user + t.children_system


def measure(spec: str, language: str | None) -> None:
    import subprocess

    from PIL import Image

    path, _, page_s = spec.partition(":")
    page = int(page_s or 1)
    t0 = time.process_time()
    original = extract_document(path, "x", ExtractLimits())
    extract_cpu = time.process_time() - t0
    assert isinstance(original, Document), original
    c0 = time.process_time() + cpu_children()
    ocr.pages_to_ocr("auto", path, original, len(original.pages))
    router = time.process_time() + cpu_children() - c0
    starts = original.page_starts()
    truth = original.words[starts[page - 1]:starts[page]]
    lang = language or Path(path).name[:2]
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(tmp) / "r"
        subprocess.run(["pdftoppm", "-r", "300", "-f", str(page), "-l", str(page), "-gray",
                        "-png", "-singlefile", path, str(stem)], check=True)
        Image.open(stem.with_suffix(".png")).save(Path(tmp) / "s.pdf", resolution=300.0)
        c0 = time.process_time() + cpu_children()
        read = ocr.apply_ocr(str(Path(tmp) / "s.pdf"), "y", None, [1], lang)
        cpu = time.process_time() + cpu_children() - c0
    print(f"{Path(path).name}:{page} lang={lang} words={len(truth)} "
          f"recall={recall(truth, read.words):.3f} "
          f"cer={cer(' '.join(truth), ' '.join(read.words)):.3f} cpu_s_per_page={cpu:.2f} "
          f"router_share_of_extraction={router / max(extract_cpu, 1e-9):.3f}")


def cpu_all() -> float:
    return time.process_time() + cpu_children()


def router_share(paths: list[str], runs: int) -> None:
    """Each born-digital PDF's extraction and routing CPU (median of `runs`); PDFs that do
    not extract (scanned, corrupted, encrypted) are not born-digital and are left out."""
    import statistics

    total_x = total_r = 0.0
    for path in paths:
        xs, rs = [], []
        for _ in range(runs):
            c0 = cpu_all()
            doc = extract_document(path, "x", ExtractLimits())
            xs.append(cpu_all() - c0)
            if not isinstance(doc, Document):
                break
            c0 = cpu_all()
            pages = ocr.pages_to_ocr("auto", path, doc, len(doc.pages))
            rs.append(cpu_all() - c0)
        if not rs:
            continue
        x, r = statistics.median(xs), statistics.median(rs)
        total_x, total_r = total_x + x, total_r + r
        print(f"router {Path(path).name} pages={len(doc.pages)} routed={pages} "
              f"extract_cpu_s={x:.4f} router_cpu_s={r:.5f} share={r / max(x, 1e-9):.4f}")
    print(f"router total extract_cpu_s={total_x:.3f} router_cpu_s={total_r:.4f} "
          f"share={total_r / max(total_x, 1e-9):.4f} (goal <= 0.01)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="PDF[:PAGE] (page 1-based, default 1)")
    ap.add_argument("--router", nargs="+", default=[], metavar="PDF",
                    help="whole born-digital PDFs: the router's CPU against extraction")
    ap.add_argument("--runs", type=int, default=5, help="runs per PDF for --router")
    ap.add_argument("--language", default=None, help="default: the file name's first two letters")
    args = ap.parse_args()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    for spec in args.pages:
        measure(spec, args.language)
    if args.router:
        router_share(args.router, args.runs)


if __name__ == "__main__":
    main()
