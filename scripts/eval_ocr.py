"""OCR evaluated on scans we make: born-digital pages of `../shared/corpus` rendered at
300 dpi, optionally skewed, noised and JPEG-compressed like a scanner's output, saved as an
image-only PDF and read back through `pdftext/ocr.py`. The original's Poppler words are
the truth.

Per page and per language, for the tuning and the check half (a fixed hash of
`id:page` splits the pages, so a setting chosen on one half is judged on the other):
- word recall: truth words (case and edge punctuation aside, one-character tokens left
  out) found among the read words, as a multiset;
- CER: edit distance over the truth's length, the read words put in the truth's order
  first (each goes to the nearest true word), so reading order does not count here;
- box agreement: share of read words also in the truth whose box centre lies inside a
  true box of the same word, both in the frame the row holds: where the scan shows the
  words (the true boxes turned as the page was; a de-skewed page's boxes turned back).

    python scripts/eval_ocr.py --langs ko --distort clean
    python scripts/eval_ocr.py --distort scan --deskew on
    python scripts/eval_ocr.py --langs ko --psm 6 --tess-langs doc --join-gap 0.4

Tesseract's rows are cached per page, image and setting (`--cache`), so settings of the
joining alone cost no OCR.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loralay_build.pdftext import ExtractLimits, extract_document, ocr  # noqa: E402
from loralay_build.records import Document  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_ocr import cer, recall  # noqa: E402

BORN_DIGITAL = {"article", "cover-page", "long"}


def half(page_id: str) -> str:
    return "tune" if hashlib.sha1(page_id.encode()).digest()[0] % 2 == 0 else "check"


def pick_pages(doc: Document, n: int) -> list[int]:
    """Up to `n` pages with at least 80 words, spread over the document; a page whose text
    layer is partly broken (U+FFFD, glyph soup: `en_hal_reaim` p. 26) is no truth."""
    starts = doc.page_starts()
    full = [p for p in range(1, len(doc.pages) + 1) if starts[p] - starts[p - 1] >= 80
            and ocr.broken_share(doc.words[starts[p - 1]:starts[p]]) < 0.05]
    if len(full) <= n:
        return full
    return [full[round(i * (len(full) - 1) / max(1, n - 1))] for i in range(n)]


def distortion(page_id: str, kind: str) -> tuple[float, float, int]:
    """(skew degrees, noise sigma, JPEG quality; 0 = lossless) fixed per page."""
    if kind == "clean":
        return 0.0, 0.0, 0
    h = hashlib.sha1(page_id.encode()).digest()
    skew = (1 + 2 * h[1] / 255) * (1 if h[2] % 2 else -1)
    return round(skew, 2), 8.0, 60


def scan_pdf(src: str, page: int, page_id: str, kind: str, cache: Path) -> Path:
    """The page as an image-only PDF: rendered, turned, noised, JPEG-compressed."""
    from PIL import Image

    dest = cache / f"{page_id.replace(':', '_')}.{kind}.pdf"
    if dest.exists():
        return dest
    skew, sigma, quality = distortion(page_id, kind)
    img = Image.fromarray(ocr.render_page(src, page).copy())
    if skew:
        img = img.rotate(skew, resample=Image.Resampling.BILINEAR, fillcolor=255)
    if sigma:
        rng = np.random.default_rng(int.from_bytes(hashlib.sha1(page_id.encode()).digest()[:4]))
        a = np.asarray(img, dtype=np.float32) + rng.normal(0, sigma, (img.height, img.width))
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if quality:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        img = Image.open(io.BytesIO(buf.getvalue()))
    img.save(dest, "PDF", resolution=float(ocr.DPI))
    return dest


def read_rows(pdf: Path, langs: str, psm: str, deskew: bool, cache: Path
              ) -> tuple[dict, float]:
    key = hashlib.sha1(f"{pdf.name}|{langs}|{psm}|{deskew}|{ocr.tesseract_version()}"
                       .encode()).hexdigest()[:16]
    hit = cache / f"rows-{key}.json"
    if hit.exists():
        return json.loads(hit.read_text()), 0.0
    t = os.times()
    c0 = t.children_user + t.children_system + time.process_time()
    image = ocr.render_page(str(pdf), 1)
    angle = 0.0
    if deskew:
        image, angle = ocr.deskew(image)
    rows = ocr.tesseract_rows(image, langs, psm)
    t = os.times()
    cpu = t.children_user + t.children_system + time.process_time() - c0
    out = {"rows": rows, "shape": list(image.shape), "angle": angle, "cpu": cpu}
    hit.write_text(json.dumps(out))
    return out, cpu


def score(truth: list[str], tboxes: np.ndarray, read: list[str], rboxes: np.ndarray
          ) -> dict[str, float]:
    if not read:
        return {"recall": 0.0, "cer": 1.0, "boxes": 0.0}
    tc = (tboxes[:, :2] + tboxes[:, 2:]) / 2
    rc = (rboxes[:, :2] + rboxes[:, 2:]) / 2
    nearest = np.argmin(((rc[:, None, :] - tc[None, :, :]) ** 2).sum(axis=2), axis=1)
    ordered = [read[i] for i in np.argsort(nearest, kind="stable")]
    by_word: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(norm_keep(truth)):
        by_word[w].append(i)
    matched = agree = 0
    for w, (cx, cy) in zip(norm_keep(read), rc):
        if w in by_word:
            matched += 1
            b = tboxes[by_word[w]]
            agree += bool(((b[:, 0] <= cx) & (cx <= b[:, 2]) & (b[:, 1] <= cy)
                           & (cy <= b[:, 3])).any())
    return {"recall": recall(truth, read), "cer": cer(" ".join(truth), " ".join(ordered)),
            "boxes": agree / max(1, matched)}


def norm_keep(words: list[str]) -> list[str]:
    """`norm` without dropping any word, so positions still line up with boxes."""
    return [w.casefold().strip(".,;:!?()[]{}'\"’‘“”—–-") for w in words]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent.parent / "shared" / "corpus"))
    ap.add_argument("--langs", default="en,fr,es,pt,ko")
    ap.add_argument("--pages-per-doc", type=int, default=3)
    ap.add_argument("--distort", choices=["clean", "scan"], default="clean")
    ap.add_argument("--deskew", choices=["on", "off", "auto"], default="auto",
                    help="auto: what ocr.py does (ocr.DESKEW)")
    ap.add_argument("--psm", default=None, help="default: what ocr.py uses per language")
    ap.add_argument("--tess-langs", choices=["doc+eng", "doc"], default="doc+eng")
    ap.add_argument("--join-gap", type=float, default=ocr.JOIN_GAP)
    ap.add_argument("--cache", default="/tmp/loralay-eval-ocr")
    ap.add_argument("--quiet", action="store_true", help="summaries only")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    corpus = Path(args.corpus)
    wanted = set(args.langs.split(","))
    deskew = {"on": True, "off": False, "auto": ocr.DESKEW}[args.deskew]
    results: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for line in (corpus / "manifest.jsonl").read_text().splitlines():
        m = json.loads(line)
        if m["kind"] not in BORN_DIGITAL or m["language"] not in wanted:
            continue
        src = str(corpus / m["file"])
        doc = extract_document(src, m["id"], ExtractLimits())
        if not isinstance(doc, Document):
            continue
        langs = ocr.languages_for(m["language"])
        if args.tess_langs == "doc":
            langs = langs.split("+")[0]
        psm = args.psm or (ocr.KOREAN_PSM if "kor" in langs else "3")
        starts = doc.page_starts()
        for p in pick_pages(doc, args.pages_per_doc):
            pid = f"{m['id']}:{p}"
            pdf = scan_pdf(src, p, pid, args.distort, cache)
            got, _ = read_rows(pdf, langs, psm, deskew, cache)
            h, w = got["shape"]
            pw, ph = doc.pages[p - 1].width, doc.pages[p - 1].height
            if doc.pages[p - 1].rotation in (90, 270):
                pw, ph = ph, pw
            words, boxes, _ = ocr.words_from_rows(got["rows"], pw / w, ph / h, args.join_gap)
            skew = distortion(pid, args.distort)[0]
            truth = doc.words[starts[p - 1]:starts[p]]
            # the row's frame: where the scan shows the words (the true boxes turned as the
            # page was; the boxes read on the page turned upright turned back, as ocr_page)
            tboxes = ocr.turn_boxes_by(np.asarray(doc.boxes[starts[p - 1]:starts[p]]),
                                       skew, (pw, ph))
            shown = ocr.turn_boxes_by(np.asarray(boxes, dtype=float).reshape(-1, 4),
                                      got["angle"], (pw, ph))
            s = score(truth, tboxes, words, shown)
            s["cpu"] = got["cpu"]
            results[(m["language"], half(pid))].append(s)
            if not args.quiet:
                print(f"{pid} half={half(pid)} skew={skew:+.2f} found={got['angle']:+.2f} "
                      f"words={len(truth)} recall={s['recall']:.3f} cer={s['cer']:.3f} "
                      f"boxes={s['boxes']:.3f} cpu_s={got['cpu']:.2f}", flush=True)
    print(f"# distort={args.distort} deskew={deskew} psm={args.psm or 'default'} "
          f"tess_langs={args.tess_langs} join_gap={args.join_gap}")
    for part in ("tune", "check"):
        for lang in sorted({k[0] for k in results}):
            rs = results.get((lang, part), [])
            if rs:
                mean = {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]}
                print(f"{part:5} {lang} pages={len(rs)} recall={mean['recall']:.3f} "
                      f"cer={mean['cer']:.3f} boxes={mean['boxes']:.3f} "
                      f"cpu_s={mean['cpu']:.2f}")


if __name__ == "__main__":
    main()
