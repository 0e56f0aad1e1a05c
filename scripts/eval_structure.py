"""Section headings, their levels and the reference list (group/sections.py, issue 45)
against ground truth others made: the structure trees of tagged PDFs (H, H1-H6 and
BibEntry elements; walked with pdfminer, pdfplumber's `structure_tree` raising on two of
them) in ../shared/layout/tagged/ and among ../shared/corpus's PDFs; the publisher's JATS
XML of the corpus's papers (`meta/ID.xml`: `<sec><title>` nesting, the abstracts' and
back matter's titles, `<ref-list>`); the PDF outline (pypdfium2) as a baseline.

Per document: heading recall and precision (a match: texts agree once lower-cased,
numbering, punctuation and spaces aside), level agreement (a matched heading's parent is
the match of the true parent, both -1 alike), the share of words in the right section (a
word's true section: the last true heading found in the words at or before it), true and
found reference counts and the share of true entries one found entry matches. Documents
are split into a tuning half and a check half by the parity of sha1(id)'s first byte, so
the rules are tuned on one half and reported on the other as well.

    python scripts/eval_structure.py [--shared ../shared] [--json OUT]
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

import numpy as np

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
# what is no heading or entry, and whose children are none either
_LEAVES = frozenset({"P", "Span", "TD", "TH", "LBody", "Lbl", "Link", "Figure", "Formula",
                     "Caption", "Note", "FENote", "TOCI", "Reference"})


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


def _name(v: Any) -> str:
    from pdfminer.psparser import PSLiteral

    v = v.name if isinstance(v, PSLiteral) else v
    return v.decode("latin-1") if isinstance(v, bytes) else str(v)


class _Tree:
    """A structure tree walked with pdfminer itself (pdfplumber's `structure_tree` raises
    on two of the README's files: a float where it wants a dict, a dangling reference):
    role maps resolved, PDF 2.0's per-namespace ones (RoleMapNS) first, /Pg inherited."""

    def __init__(self, pdf: Any) -> None:
        from pdfminer.pdftypes import resolve1

        self.r = resolve1
        root = resolve1(pdf.doc.catalog.get("StructTreeRoot"))
        self.root = root if isinstance(root, dict) else None
        self.roles = {k: _name(v) for k, v in
                      (resolve1(self.root.get("RoleMap")) or {}).items()} if self.root else {}
        self.pages = {p.page_obj.pageid: p.page_number for p in pdf.pages}
        self.texts = _texts(pdf) if self.root else {}
        self.seen: set[int] = set()

    def kind(self, el: dict[str, Any]) -> str:
        s = _name(self.r(el.get("S", "")))
        ns = self.r(el.get("NS"))
        for _ in range(4):  # a role maps to a role at most a few times
            mapped = None
            if isinstance(ns, dict):
                rm = self.r(ns.get("RoleMapNS")) or {}
                if s in rm:
                    target = self.r(rm[s])
                    if isinstance(target, list):
                        mapped, ns = _name(self.r(target[0])), self.r(target[1])
                    else:
                        mapped, ns = _name(target), None
            if mapped is None and s in self.roles:
                mapped = self.roles[s]
            if mapped is None or mapped == s:
                break
            s = mapped
        return s

    def text(self, k: Any, page: int) -> str:
        k = self.r(k)
        if isinstance(k, int):
            return self.texts.get((page, k), "")
        if isinstance(k, list):
            return " ".join(self.text(x, page) for x in k)
        if isinstance(k, dict):
            if "Pg" in k:
                page = self.pages.get(getattr(k["Pg"], "objid", -1), page)
            if "MCID" in k:
                return self.texts.get((page, self.r(k["MCID"])), "")
            if "K" in k:
                return self.text(k["K"], page)
        return ""

    def walk(self, k: Any, page: int, depth: int, out: dict[str, list[Any]]) -> None:
        oid = getattr(k, "objid", None)
        if oid is not None:
            if oid in self.seen:
                return
            self.seen.add(oid)
        k = self.r(k)
        if isinstance(k, list):
            for x in k:
                self.walk(x, page, depth, out)
            return
        if not isinstance(k, dict) or "S" not in k:
            return
        if "Pg" in k:
            page = self.pages.get(getattr(k["Pg"], "objid", -1), page)
        kind = self.kind(k)
        m = _HEAD.match(kind)
        if m:
            text = " ".join(self.text(k.get("K"), page).split())
            if norm(text):
                out["headings"].append((text, int(m.group(1)) if m.group(1) else depth))
            return
        if kind == "BibEntry":
            out["references"].append(" ".join(self.text(k.get("K"), page).split()))
            return
        if kind not in _LEAVES and "K" in k:
            self.walk(k["K"], page, depth + (kind == "Sect"), out)


def tagged_truth(path: Path) -> dict[str, Any] | None:
    """A tagged PDF's headings [(text, level)] and BibEntry texts; None without a tree."""
    import pdfplumber

    try:
        with pdfplumber.open(path) as pdf:
            tree = _Tree(pdf)
            if tree.root is None:
                return None
            out: dict[str, list[Any]] = {"headings": [], "references": []}
            tree.walk(tree.root.get("K"), 0, 1, out)
    except Exception as e:  # an encrypted or broken file: no truth, said
        print(f"  {path.name}: no readable structure tree ({type(e).__name__})")
        return None
    return out


def _itext(el: Any, skip: frozenset[str] = frozenset({"xref", "table-wrap", "fig", "fn"})
           ) -> str:
    """An element's text, without the floats and cross-references nested in a title."""
    parts = [el.text or ""]
    for c in el:
        if not isinstance(c.tag, str) or c.tag not in skip:
            parts.append(_itext(c, skip) if isinstance(c.tag, str) else "")
        parts.append(c.tail or "")
    return " ".join("".join(parts).split())


def jats_truth(xml: Path) -> dict[str, Any] | None:
    """A JATS article's printed headings: the titles of the abstracts, the body's nested
    `<sec>`s and the back matter's sections (acknowledgements, references, appendices),
    levels by nesting; and the `<ref-list>` entries. None without a body of sections."""
    from lxml import etree

    parser = etree.XMLParser(recover=True, resolve_entities=False, load_dtd=False,
                             no_network=True)
    root = etree.parse(str(xml), parser).getroot()
    body = root.find(".//body")
    if body is None or body.find("sec") is None:
        return None
    heads: list[tuple[str, int]] = []

    def secs(el: Any, depth: int) -> None:
        for s in el:
            if not isinstance(s.tag, str) or s.tag not in ("sec", "ack", "ref-list", "app",
                                                            "app-group"):
                continue
            t = s.find("title")
            if t is not None and norm(_itext(t)):
                heads.append((_itext(t), depth))
            secs(s, depth + 1 if t is not None else depth)

    for ab in root.findall("./front/article-meta/abstract") + \
            root.findall("./front/article-meta/trans-abstract"):
        t = ab.find("title")
        if t is not None and norm(_itext(t)):
            heads.append((_itext(t), 1))
    secs(body, 1)
    back = root.find("back")
    if back is not None:
        secs(back, 1)
    refs = [_itext(r.find("mixed-citation") if r.find("mixed-citation") is not None else r)
            for r in root.iterfind(".//ref-list/ref")]
    return {"headings": heads, "references": refs}


def score(true: list[tuple[str, int]], found: list[tuple[str, int]]) -> dict[str, Any]:
    """Recall, precision and level agreement of `found` headings against `true`, matched
    in order (each true heading to the first unmatched found one of the same text);
    `match` maps a true heading's index to its found one's."""
    tk, fk = [norm(t) for t, _ in true], [norm(t) for t, _ in found]
    tp, fp = parents_of([lv for _, lv in true]), parents_of([lv for _, lv in found])
    match: dict[int, int] = {}
    j0 = 0
    for i, k in enumerate(tk):
        for j in range(j0, len(fk)):
            if fk[j] == k:
                match[i] = j
                j0 = j + 1
                break
    agree = sum(1 for i, j in match.items()
                if (tp[i] == -1 and fp[j] == -1) or (tp[i] >= 0 and match.get(tp[i]) == fp[j]))
    return {"recall": len(match) / len(true) if true else 1.0,
            "precision": len(match) / len(found) if found else (1.0 if not true else 0.0),
            "levels": agree / len(match) if match else 0.0, "match": match}


def true_section_ids(words: list[str], true: list[tuple[str, int]],
                     found_at: dict[int, int]) -> np.ndarray:
    """Each word's true section: each true heading where it is printed, each word under
    the last one at or before it. Where it is printed: the found heading it matched
    (`found_at`, its first word), else the first run of words after the previous one whose
    keys join to its text (a heading the rules missed)."""
    keys = [norm(w) for w in words]
    starts: list[tuple[int, int]] = []  # (first word, true heading)
    pos = 0
    for t, (text, _) in enumerate(true):
        if t in found_at:
            starts.append((found_at[t], t))
            pos = found_at[t] + 1
            continue
        want = norm(text)
        for i in range(pos, len(words)):
            if not keys[i] or not want.startswith(keys[i]):
                continue
            got, j = "", i
            while j < len(words) and len(got) < len(want):
                got += keys[j]
                j += 1
            if got == want:
                starts.append((i, t))
                pos = j
                break
    starts.sort()
    ids = np.full(len(words), -1, dtype=np.int64)
    for (i, t), nxt in zip(starts, [*starts[1:], (len(words), -1)]):
        ids[i:nxt[0]] = t
    return ids


def words_right(true_ids: np.ndarray, found_ids: np.ndarray, match: dict[int, int]) -> float:
    """The share of words whose found section is the match of their true one (-1 alike)."""
    if not len(true_ids):
        return 1.0
    want = np.array([match.get(int(t), -2) if t >= 0 else -1 for t in true_ids])
    return float((want == np.asarray(found_ids)).mean())


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if len(t) > 1 or t.isdigit()]


def reference_match(true: list[str], found: list[str], least: float = 0.6) -> float:
    """The share of true entries matched by one found entry: at least `least` of the
    true entry's tokens in it and of its tokens in the true entry (two entries run
    together match neither), each found entry used once, in order."""
    if not true:
        return 1.0
    fsets = [set(_tokens(f)) for f in found]
    used: set[int] = set()
    hits = 0
    for t in true:
        ts = set(_tokens(t))
        if not ts:
            continue
        for j, fs in enumerate(fsets):
            if j in used or not fs:
                continue
            common = len(ts & fs)
            if common >= least * len(ts) and common >= least * len(fs):
                used.add(j)
                hits += 1
                break
    return hits / len(true)


def evaluate(path: Path, doc_id: str, gt: dict[str, Any], truth_kind: str
             ) -> dict[str, Any]:
    d = extract(path)
    outline = outline_of(str(path))
    secs, ids = sections_of(d.words, d.boxes, d.block_ids, d.labels, outline, d.word_pages)
    refs = references_of(d.words, d.boxes, d.line_ids, d.block_ids, d.labels)
    found = [(s.title, s.level) for s in secs]
    s = score(gt["headings"], found)
    match = s.pop("match")
    first = {k: int(np.argmax(ids == k)) for k in set(match.values())}
    at = {t: first[f] for t, f in match.items()}
    right = words_right(true_section_ids(d.words, gt["headings"], at), ids, match)
    o = score(gt["headings"], outline)
    o.pop("match")
    return {"id": doc_id, "half": half(doc_id), "truth": truth_kind,
            "true_headings": len(gt["headings"]), "found": len(found), **s,
            "words_right": right, "outline": o, "has_outline": bool(outline),
            "true_refs": len(gt["references"]), "found_refs": len(refs),
            "refs_matched": reference_match(gt["references"], refs)}


def sane(headings: list[tuple[str, int]]) -> bool:
    """A tree whose headings are headings: no more than a tenth of them longer than the
    longest printed heading the rules take (20 words; a tree tagging paragraphs as H,
    as `ko_hufs_tsp`'s does, is no heading truth)."""
    long = sum(len(t.split()) > 20 for t, _ in headings)
    return long <= 0.1 * len(headings)


def documents(shared: Path) -> list[tuple[Path, str, dict[str, Any], str]]:
    """(PDF, id, truth, its kind) of every document with true headings: the tagged PDFs
    of the layout set and the corpus, the corpus's papers with JATS XML."""
    out = []
    for folder in (shared / "layout" / "tagged", shared / "corpus"):
        manifest = folder / "manifest.jsonl"
        if not manifest.exists():
            continue
        for line in manifest.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            f = rec.get("file") or rec.get("pdf") or f"pdf/{rec['id']}.pdf"
            p = folder / f
            if p.suffix != ".pdf" or not p.exists() or rec.get("kind") == "icdar2013":
                continue
            xml = folder / "meta" / f"{rec['id']}.xml"
            gt = jats_truth(xml) if xml.exists() else None
            kind = "jats"
            if gt is None:
                gt, kind = tagged_truth(p), "tagged"
            if gt is not None and gt["headings"] and sane(gt["headings"]):
                out.append((p, rec["id"], gt, kind))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    rows = [evaluate(p, i, gt, kind) for p, i, gt, kind in documents(args.shared)]
    print(f"{'id':36} half  truth  true found recall prec  levels words | outline R/P/L "
          "| refs true/found matched")
    for r in sorted(rows, key=lambda r: (r["half"], r["id"])):
        o = r["outline"]
        out = f"{o['recall']:4.2f}/{o['precision']:4.2f}/{o['levels']:4.2f}" \
            if r["has_outline"] else "    (none)    "
        print(f"{r['id'][:36]:36} {r['half']:5} {r['truth']:6} {r['true_headings']:4} "
              f"{r['found']:5} {r['recall']:6.2f} {r['precision']:5.2f} {r['levels']:6.2f} "
              f"{r['words_right']:5.2f} | {out} | {r['true_refs']:4}/{r['found_refs']:<4} "
              + (f"{r['refs_matched']:4.2f}" if r["true_refs"] else " n/a"))
    for h in ("tune", "check"):
        part = [r for r in rows if r["half"] == h]
        if part:
            mean = {k: sum(r[k] for r in part) / len(part)
                    for k in ("recall", "precision", "levels", "words_right")}
            with_refs = [r for r in part if r["true_refs"]]
            refs = (sum(r["refs_matched"] for r in with_refs) / len(with_refs)
                    if with_refs else float("nan"))
            print(f"{h}: {len(part)} documents; mean recall {mean['recall']:.2f}, precision "
                  f"{mean['precision']:.2f}, level agreement {mean['levels']:.2f}, words in "
                  f"the right section {mean['words_right']:.2f}; min recall "
                  f"{min(r['recall'] for r in part):.2f}; references matched {refs:.2f} "
                  f"({len(with_refs)} lists)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
