"""Section headings, their levels and the reference list (group/sections.py, issue 45)
against ground truth others made: the structure trees of tagged PDFs (H, H1-H6 and
BibEntry elements, read with pdfplumber's `structure_tree`) in ../shared/layout/tagged/
and among ../shared/corpus's PDFs; the PDF outline (pypdfium2) as a baseline.

Per document: heading recall and precision (a match: texts agree once lower-cased,
numbering, punctuation and spaces aside), level agreement (a matched heading's parent is
the match of the true parent, both -1 alike), true and found reference counts. Documents
are split into a tuning half and a check half by the parity of sha1(id)'s first byte, so
the rules are tuned on one half and reported on the other as well.

    python scripts/eval_structure.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from loralay_build.api import extract  # noqa: E402
from loralay_build.group.sections import (  # noqa: E402
    outline_of,
    parents_of,
    references_of,
    sections_of,
    title_key,
)

_HEAD = re.compile(r"^H([1-6]?)$")


def half(doc_id: str) -> str:
    """The fixed half a document is in: sha1 parity of its id."""
    return "tune" if hashlib.sha1(doc_id.encode()).digest()[0] % 2 == 0 else "check"


def norm(title: str) -> str:
    """A heading's text for matching: numbering, punctuation, spaces and case aside."""
    return title_key(title)


def _texts(pdf: Any) -> dict[tuple[int, int], str]:
    """Each (page number, mcid)'s characters, in content order."""
    out: dict[tuple[int, int], list[str]] = defaultdict(list)
    for page in pdf.pages:
        for ch in page.chars:
            if ch.get("mcid") is not None:
                out[(page.page_number, ch["mcid"])].append(ch["text"])
    return {k: "".join(v) for k, v in out.items()}


def truth(path: Path) -> dict[str, Any] | None:
    """The tree's headings [(text, level)] and BibEntry count; None without a tree."""
    import pdfplumber

    try:
        with pdfplumber.open(path) as pdf:
            tree = pdf.structure_tree
            if not tree:
                return None
            texts = _texts(pdf)
    except Exception as e:  # pdfplumber raises on some trees (README: two of them)
        print(f"  {path.name}: no readable structure tree ({type(e).__name__})")
        return None
    heads: list[tuple[str, int]] = []
    bib = 0

    def text_of(el: dict[str, Any]) -> str:
        own = "".join(texts.get((el.get("page_number", 0), m), "") for m in el.get("mcids", []))
        return own + " ".join(text_of(c) for c in el.get("children", []))

    def walk(el: dict[str, Any], depth: int) -> None:
        nonlocal bib
        kind = el.get("type", "")
        m = _HEAD.match(kind)
        if m:
            text = " ".join(text_of(el).split())
            if norm(text):
                heads.append((text, int(m.group(1)) if m.group(1) else depth))
            return
        if kind == "BibEntry":
            bib += 1
            return
        for c in el.get("children", []):
            walk(c, depth + (kind == "Sect"))

    for el in tree:
        walk(el, 1)
    return {"headings": heads, "references": bib}


def score(true: list[tuple[str, int]], found: list[tuple[str, int]]) -> dict[str, float]:
    """Recall, precision and level agreement of `found` headings against `true`, matched
    in order (each true heading to the first unmatched found one of the same text)."""
    tk, fk = [norm(t) for t, _ in true], [norm(t) for t, _ in found]
    tp, fp = parents_of([lv for _, lv in true]), parents_of([lv for _, lv in found])
    used: set[int] = set()
    match: dict[int, int] = {}
    j0 = 0
    for i, k in enumerate(tk):
        for j in range(j0, len(fk)):
            if j not in used and fk[j] == k:
                match[i] = j
                used.add(j)
                j0 = j + 1
                break
    agree = sum(1 for i, j in match.items()
                if (tp[i] == -1 and fp[j] == -1) or (tp[i] >= 0 and match.get(tp[i]) == fp[j]))
    return {"recall": len(match) / len(true) if true else 1.0,
            "precision": len(match) / len(found) if found else (1.0 if not true else 0.0),
            "levels": agree / len(match) if match else 0.0}


def evaluate(path: Path, doc_id: str) -> dict[str, Any] | None:
    gt = truth(path)
    if gt is None or not gt["headings"]:
        return None
    d = extract(path)
    secs, _ = sections_of(d.words, d.boxes, d.block_ids, d.labels, outline_of(str(path)))
    refs = references_of(d.words, d.boxes, d.line_ids, d.block_ids, d.labels)
    found = [(s.title, s.level) for s in secs]
    row = {"id": doc_id, "half": half(doc_id), "true_headings": len(gt["headings"]),
           "found": len(found), **score(gt["headings"], found),
           "outline": score(gt["headings"], outline_of(str(path))),
           "true_refs": gt["references"], "found_refs": len(refs)}
    return row


def documents(shared: Path) -> list[tuple[Path, str]]:
    out = []
    for folder in (shared / "layout" / "tagged", shared / "corpus"):
        manifest = folder / "manifest.jsonl"
        if not manifest.exists():
            continue
        for line in manifest.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            f = rec.get("file") or rec.get("pdf") or f"pdf/{rec['id']}.pdf"
            p = folder / f
            if p.suffix == ".pdf" and p.exists() and rec.get("kind", "tagged") == "tagged":
                out.append((p, rec["id"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    args = ap.parse_args(argv)
    rows = [r for p, i in documents(args.shared) if (r := evaluate(p, i)) is not None]
    print(f"{'id':42} half   true found recall prec  levels | outline R/P | refs true/found")
    for r in sorted(rows, key=lambda r: (r["half"], r["id"])):
        o = r["outline"]
        print(f"{r['id'][:42]:42} {r['half']:6} {r['true_headings']:4} {r['found']:5} "
              f"{r['recall']:6.2f} {r['precision']:5.2f} {r['levels']:6.2f} | "
              f"{o['recall']:4.2f}/{o['precision']:4.2f} | {r['true_refs']}/{r['found_refs']}")
    for h in ("tune", "check"):
        part = [r for r in rows if r["half"] == h]
        if part:
            mean = {k: sum(r[k] for r in part) / len(part) for k in ("recall", "precision",
                                                                    "levels")}
            print(f"{h}: {len(part)} documents; mean recall {mean['recall']:.2f}, precision "
                  f"{mean['precision']:.2f}, level agreement {mean['levels']:.2f}; min recall "
                  f"{min(r['recall'] for r in part):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
