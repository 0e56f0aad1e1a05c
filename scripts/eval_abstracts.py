#!/usr/bin/env python3
"""How well abstracts are located and cut, on real PDFs with their true abstracts.

Sets (all read from ../shared at run time; nothing of it is copied into the repository):

- `corpus`: every document of ../shared/corpus with its manifest abstracts.
- `extra`: real papers of ../shared/layout/docbank and ../shared/bench/pdfs with their
  printed abstracts (pdftotext, hand-cleaned as the corpus README says; EXTRA below):
  one whose abstract really ends on the next page, after the first page's footnotes;
  two-column and boxed first pages; an abstract printed twice.
- `pagebreak`: the papers of both sets whose main abstract lies on one page, with that
  page printed over two pages, cut between two lines of the abstract (after a third of
  its lines, after two thirds, and before its last line). Derived here, in a temporary
  folder, by `split_page`: the PDF's own content stream is rewritten twice, once without
  the text below the cut (down to the page's footer band) and once without the text
  above it (below the header band); nothing is typeset, moved or added, so the break
  carries the page's own footer and running head and, on two-column pages, the other
  column's text beside the cut. A derived file that lost a word of the page is reported
  as not derivable. Needs `qpdf` (the set is skipped without it).

For every document: whether each abstract was found, how (exact / fuzzy / split, and in
how many runs of removed words), the key characters cut against the abstract's own, the
leakage share left in the body, and what the cut removed beyond the abstract ("beyond":
key characters the abstract does not hold, "longest": their longest stretch). Then
totals: found %, leaks, wrong cuts, and the CPU of stripping against extracting.

A *wrong cut* is a run of removed words that is not the abstract: every run of removed
words is aligned inside its abstract's key text, and a stretch of >= WRONG_CUT key
characters of the run that the abstract does not hold (matches of < 4 characters count
as not held) is body text cut away. Short furniture (a page number, a label such as
"Abstract—", a short running head) stays below that. A *leak* is a leakage share at or
above the corpus `leak_threshold` (0.5).

usage: python scripts/eval_abstracts.py [--shared DIR] [--set corpus,extra,pagebreak]
                                        [--only ID_SUBSTRING] [-q]
Skips cleanly (exit 0, one line) when ../shared is absent.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import edlib

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from loralay_build.conf import load_settings  # noqa: E402
from loralay_build.failures import Failure  # noqa: E402
from loralay_build.pdftext import ExtractLimits, extract_document  # noqa: E402
from loralay_build.records import Candidate, Document  # noqa: E402
from loralay_build.sources.manifest import read_manifest  # noqa: E402
from loralay_build.strip import leakage, strip_document  # noqa: E402
from loralay_build.strip.normalise import is_heading, text_key, word_keys  # noqa: E402

WRONG_CUT = 40  # key characters of body text in one removed stretch
CUTS = (("third", 1 / 3), ("twothirds", 2 / 3), ("lastline", 1.0))
BAND = 0.07  # header and footer bands, as a share of the page height
_CIGAR = re.compile(r"(\d+)([=XID])")

# Real papers of ../shared/layout/docbank (arXiv sources recompiled by DocBank) and
# ../shared/bench/pdfs (class samples of texlive-publishers-doc), with the abstract as
# printed: pdftotext (Poppler 22.12) of its page, line breaks joined, end-of-line hyphens
# of split words removed (compound hyphens kept), subscripts written with "_".
EXTRA = {
    # The abstract fills page 1 and ends on page 2, after page 1's four author footnotes
    # (affiliations, e-mails, a grant) and its page number.
    "layout/docbank/37.tar_1702.07095.gz_paper10_revised4_withbib_black.pdf": (
        "en",
        "Simulating complex processes in fractured media requires some type of model "
        "reduction. Well-known approaches include multi-continuum techniques, which have "
        "been commonly used in approximating subgrid effects for flow and transport in "
        "fractured media. Our goal in this paper is to (1) show a relation between "
        "multi-continuum approaches and Generalized Multiscale Finite Element Method "
        "(GMsFEM) and (2) to discuss coupling these approaches for solving problems in "
        "complex multiscale fractured media. The GMsFEM, a systematic approach, constructs "
        "multiscale basis functions via local spectral decomposition in pre-computed "
        "snapshot spaces. We show that GMsFEM can automatically identify separate fracture "
        "networks via local spectral problems. We discuss the relation between these basis "
        "functions and continuums in multi-continuum methods. The GMsFEM can automatically "
        "detect each continuum and represent the interaction between the continuum and its "
        "surrounding (matrix). For problems with simplified fracture networks, we propose a "
        "simplified basis construction with the GMsFEM. This simplified approach is "
        "effective when the fracture networks are known and have simplified geometries. We "
        "show that this approach can achieve a similar result compared to the results "
        "using the GMsFEM with spectral basis functions. Further, we discuss the coupling "
        "between the GMsFEM and multi-continuum approaches. In this case, many fractures "
        "are resolved while for unresolved fractures, we use a multi-continuum approach "
        "with local Representative Volume Element (RVE) information. As a result, the "
        "method deals with a system of equations on a coarse grid, where each equation "
        "represents one of the continua on the fine grid. We present various basis "
        "construction mechanisms and numerical results. The GMsFEM framework, in addition, "
        "can provide adaptive and online basis functions to improve the accuracy of "
        "coarse-grid simulations. These are discussed in the paper. In addition, we present "
        "an example of the application of our approach to shale gas transport in "
        "fractured media."),
    # Two columns (IEEE): Poppler reads the right column's first paragraph before the
    # left column's abstract, whose label is glued to it ("Abstract—"); "Index Terms" follow.
    "layout/docbank/135.tar_1805.05760.gz_cataracts_black.pdf": (
        "en",
        "Automatic tool detection from surgical imagery has a multitude of useful "
        "applications, such as real-time computer assistance for the surgeon. Using the "
        "successful residual network architecture, a system that can distinguish 21 "
        "different tools in cataract surgery videos is created. The videos are provided as "
        "part of the 2017 CATARACTS challenge and pose difficulties found in many "
        "real-world datasets, for example a strong class imbalance. The construction of "
        "the detection system is guided by a wide array of experiments that explore "
        "different design decisions."),
    # Two columns (ACL): the abstract is the left column's first block, the introduction
    # follows it in the same column.
    "layout/docbank/246.tar_1808.08720.gz_conll2018_black.pdf": (
        "en",
        "Inducing sparseness while training neural networks has been shown to yield models "
        "with a lower memory footprint but similar effectiveness to dense models. However, "
        "sparseness is typically induced starting from a dense model, and thus this "
        "advantage does not hold during training. We propose techniques to enforce "
        "sparseness upfront in recurrent sequence models for NLP applications, to also "
        "benefit training. First, in language modeling, we show how to increase hidden "
        "state sizes in recurrent layers without increasing the number of parameters, "
        "leading to more expressive models. Second, for sequence labeling, we show that "
        "word embeddings with predefined sparseness lead to similar performance as dense "
        "embeddings, at a fraction of the number of trainable parameters."),
    # Elsevier proceedings: journal banner above, keywords line right below the abstract.
    "layout/docbank/132.tar_1410.2655.gz_CRBTSM_parizot_final_black.pdf": (
        "en",
        "We examine the question of the origin of the Galactic cosmic-rays (GCRs) in the "
        "light of the data available at the highest energy end of the spectrum. We argue "
        "that the data of the Pierre Auger Observatory and of the KASCADE-Grande experiment "
        "suggest that the transition between the Galactic and the extragalactic components "
        "takes place at the energy of the ankle in the all-particle cosmic-ray spectrum, and "
        "at an energy of the order of 10¹⁷ eV for protons. Such a high energy for Galactic "
        "protons appears difficult to reconcile with the general view that GCRs are "
        "accelerated by the standard diffusive shock acceleration process at the forward "
        "shock of individual supernova remnants (SNRs). We also review various difficulties "
        "of the standard SNR-GCR connection, related to the evolution of the light element "
        "abundances and to significant isotopic anomalies. We point out that most of the "
        "power injected by the supernovæ in the Galaxy is actually released inside "
        "superbubbles, which may thus play an important role in the origin of cosmic-rays, "
        "and could solve some persistent problems of the standard SNR-GCR scenario in a "
        "rather natural way."),
    # Elsevier 5p: math inside the abstract, and the whole abstract printed again in the
    # body as "Theorem 1" (a second copy, cut too).
    "bench/pdfs/elsarticle-5p.pdf": (
        "en",
        "In this work we demonstrate a_b the formation Y_1 of a new type of polariton on the "
        "interface between a cuprous oxide slab and a polystyrene micro-sphere placed on the "
        "slab. The evanescent field of the resonant whispering gallery mode (WGM) of the "
        "micro sphere has a substantial gradient, and therefore effectively couples with the "
        "quadrupole 1S excitons in cuprous oxide. This evanescent polariton has a long "
        "life-time, which is determined only by its excitonic and WGM component. The "
        "polariton lower branch has a well pronounced minimum. This suggests that this "
        "excitation is localized and can be utilized for possible BEC. The spatial coherence "
        "of the polariton can be improved by assembling the micro-spheres into a linear "
        "chain."),
}


@dataclass
class Case:
    """One real document to evaluate: its PDF and its printed abstracts."""

    set: str
    id: str
    pdf: Path
    language: str
    abstracts: dict[str, str]
    how: str = ""  # for derived files: how the PDF was made from a real one


@dataclass
class Row:
    case: Case
    status: str  # "found" | "dropped" | "unreadable" | "underived"
    detail: str = ""
    # per language: method, removed runs, leakage share, foreign chars, longest foreign
    # stretch, key characters cut, key characters of the abstract
    per_lang: dict[str, tuple[str, int, float, int, int, int, int]] = field(default_factory=dict)
    strip_cpu: float = 0.0
    extract_cpu: float = 0.0

    def wrong_cuts(self) -> int:
        return sum(1 for x in self.per_lang.values() if x[4] >= WRONG_CUT)

    def leaks(self, threshold: float) -> int:
        return sum(1 for x in self.per_lang.values() if x[2] >= threshold)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# --- deriving a page break from a real page ---------------------------------------------

_WS = b"\x00\t\n\x0c\r "
_DELIM = b"()<>[]{}/%"
_SHOW = {b"Tj", b"TJ", b"'", b'"'}
_NUMBER = re.compile(rb"[+-]?(\d+\.?\d*|\.\d+)")
_END_OF_IMAGE = re.compile(rb"[\x00\t\n\x0c\r ]EI(?=[\x00\t\n\x0c\r ]|$)")


def _tokens(data: bytes) -> Iterator[tuple[int, int, bool, object]]:
    """A content stream as (start, end, is_operator, value): value is the operator's
    bytes, a number's float, a name's bytes, or None (strings, arrays, dictionaries)."""
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c in _WS:
            i += 1
        elif c == 0x25:  # a comment
            j = data.find(b"\n", i)
            i = n if j < 0 else j + 1
        elif c == 0x28:  # (a string), with nested parentheses and escapes
            j, depth = i + 1, 1
            while j < n and depth:
                if data[j] == 0x5C:
                    j += 2
                    continue
                depth += {0x28: 1, 0x29: -1}.get(data[j], 0)
                j += 1
            yield i, j, False, None
            i = j
        elif data.startswith((b"<<", b">>"), i):
            yield i, i + 2, False, None
            i += 2
        elif c == 0x3C:  # <hex string>
            j = data.index(b">", i) + 1
            yield i, j, False, None
            i = j
        elif c in b"[]{}":
            yield i, i + 1, False, None
            i += 1
        else:
            j = i + 1
            while j < n and data[j] not in _WS and data[j] not in _DELIM:
                j += 1
            tok = data[i:j]
            if c == 0x2F:
                yield i, j, False, tok
            elif _NUMBER.fullmatch(tok):
                yield i, j, False, float(tok)
            elif tok == b"ID":  # inline image data, up to EI
                m = _END_OF_IMAGE.search(data, j + 1)
                j = m.end() if m else n
                yield i, j, True, b"EI"
            else:
                yield i, j, True, tok
            i = j


def _mul(m: tuple, n: tuple) -> tuple:
    a, b, c, d, e, f = m
    aa, bb, cc, dd, ee, ff = n
    return (a * aa + b * cc, a * bb + b * dd, c * aa + d * cc, c * bb + d * dd,
            e * aa + f * cc + ee, e * bb + f * dd + ff)


def drop_text(data: bytes, drop: Callable[[float, float], bool]) -> tuple[bytes, int, int]:
    """A content stream without the text-showing operators whose text origin (x, y) in
    the page's default space satisfies `drop`; how many were dropped and kept. Everything
    else (graphics, images, the text state, positioning) is left as it is, and the
    positions of the text kept do not depend on the text dropped (Td moves from the line
    start, not from the end of the text shown)."""
    ident = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    ctm, stack, tm, tlm, leading = ident, [], ident, ident, 0.0
    out, last, args = bytearray(), 0, []
    dropped = kept = 0
    for start, end, is_op, value in _tokens(data):
        if not is_op:
            args.append((start, value))
            continue
        op, nums = value, [v for _, v in args if isinstance(v, float)]
        if op == b"q":
            stack.append(ctm)
        elif op == b"Q":
            ctm = stack.pop() if stack else ident
        elif op == b"cm" and len(nums) >= 6:
            ctm = _mul(tuple(nums[-6:]), ctm)
        elif op == b"BT":
            tm = tlm = ident
        elif op in (b"Td", b"TD") and len(nums) >= 2:
            tlm = tm = _mul((1, 0, 0, 1, nums[-2], nums[-1]), tlm)
            leading = -nums[-1] if op == b"TD" else leading
        elif op == b"Tm" and len(nums) >= 6:
            tlm = tm = tuple(nums[-6:])
        elif op == b"TL" and nums:
            leading = nums[-1]
        if op in (b"T*", b"'", b'"'):
            tlm = tm = _mul((1, 0, 0, 1, 0, -leading), tlm)
        if op in _SHOW:
            x, y = _mul(tm, ctm)[4:]
            if drop(x, y):
                out += data[last:args[0][0] if args else start]
                if op in (b"'", b'"'):  # keep the line feed (and the spacing " sets)
                    out += b" %g Tw %g Tc T* " % tuple(nums[-2:]) if op == b'"' else b" T* "
                last = end
                dropped += 1
            else:
                kept += 1
        args = []
    out += data[last:]
    return bytes(out), dropped, kept


def _qpdf(*args: object) -> None:
    subprocess.run(["qpdf", "--warning-exit-0", *map(str, args)], check=True,
                   capture_output=True, timeout=120)


def _objects(path: Path) -> dict:
    out = path.with_suffix(".json")
    _qpdf("--json-output", "--json-stream-data=inline", "--decode-level=generalized", path, out)
    return json.loads(out.read_bytes().decode("utf-8", "surrogateescape"))["qpdf"][1]


def _page_refs(objs: dict) -> list[str]:
    refs: list[str] = []
    stack = [objs[f"obj:{objs['trailer']['value']['/Root']}"]["value"]["/Pages"]]
    while stack:
        ref = stack.pop()
        node = objs[f"obj:{ref}"]["value"]
        if node.get("/Type") == "/Pages":
            stack.extend(reversed(node["/Kids"]))
        else:
            refs.append(ref)
    return refs


def _edit_page(src: Path, dst: Path, index: int, drop: Callable[[float, float], bool]
               ) -> tuple[int, int]:
    """`src` with page `index` (0-based) rewritten without the text `drop` selects, in
    top-left coordinates (those of Poppler's word boxes)."""
    objs = _objects(src)
    ref = _page_refs(objs)[index]
    node, box = ref, None
    while box is None and node:
        value = objs[f"obj:{node}"]["value"]
        box, node = value.get("/MediaBox"), value.get("/Parent")
    contents = objs[f"obj:{ref}"]["value"]["/Contents"]
    refs = contents if isinstance(contents, list) else [contents]
    # the page's streams are one content stream cut anywhere: joined, edited, put back
    # into the first, the others emptied
    data = b"\n".join(base64.b64decode(objs[f"obj:{r}"]["stream"]["data"]) for r in refs)
    new, dropped, kept = drop_text(data, lambda x, y: drop(x - box[0], box[3] - y))
    update = {}
    for k, r in enumerate(refs):
        d = {key: v for key, v in objs[f"obj:{r}"]["stream"]["dict"].items()
             if key not in ("/Filter", "/DecodeParms", "/Length")}
        update[f"obj:{r}"] = {"stream": {"dict": d,
                                         "data": base64.b64encode(new if k == 0 else b"").decode()}}
    changes = dst.with_suffix(".update.json")
    changes.write_text(json.dumps({"qpdf": [{"jsonversion": 2}, update]}))
    _qpdf(src, dst, f"--update-from-json={changes}")
    return dropped, kept


def split_page(src: Path, dst: Path, page: int, cut: float, header: float, footer: float,
               work: Path) -> None:
    """`src` with its page `page` (1-based) printed over two pages, cut `cut` points from
    the top: the first copy keeps the text above the cut and the footer band (below
    `footer`), the second the header band (above `header`) and the text below the cut."""
    a, b = work / "upper.pdf", work / "lower.pdf"
    _qpdf(src, "--pages", src, f"1-{page}", "--", a)
    _qpdf(src, "--pages", src, f"{page}-z", "--", b)
    _edit_page(a, work / "upper2.pdf", page - 1, lambda x, y: cut < y < footer)
    _edit_page(b, work / "lower2.pdf", 0, lambda x, y: header < y < cut)
    _qpdf("--empty", "--pages", work / "upper2.pdf", work / "lower2.pdf", "--", dst)


def _abstract_lines(doc: Document, start: int, end: int) -> tuple[int, list[tuple[float, float]]]:
    """The page of words [start, end) and the (middle, height) of each of their lines
    there, top to bottom."""
    page = doc.word_pages[start]
    lines: dict[int, list[float]] = {}
    for i in range(start, end):
        if doc.word_pages[i] == page:
            top, bottom = float(doc.boxes[i][1]), float(doc.boxes[i][3])
            box = lines.setdefault(doc.line_ids[i], [top, bottom])
            box[0], box[1] = min(box[0], top), max(box[1], bottom)
    return page, sorted(((t + b) / 2, b - t) for t, b in lines.values())


def _after_heading(doc: Document, start: int) -> int:
    """The abstract's first word, after the heading its match starts with ("Abstract",
    "RESUMO:", "요 약"): the page is cut between lines of the abstract itself."""
    keys = word_keys(doc.words[start:start + 6])
    heads = [n for n in range(1, len(keys) + 1) if is_heading("".join(keys[:n]))]
    if not heads:
        return start
    n = heads[-1]
    while n < len(keys) and not keys[n]:
        n += 1
    return start + n


def pagebreak_cases(shared: Path, work: Path, only: str = "") -> Iterator[Case]:
    """The corpus and docbank papers whose main abstract lies on one page, that page cut
    in two."""
    if shutil.which("qpdf") is None:
        print("pagebreak: skipped (qpdf is not installed)")
        return
    settings = load_settings("local").document()
    for case in corpus_cases(shared) + extra_cases(shared):
        if only and only not in case.id:
            continue
        doc = extract_document(case.pdf, case.id, ExtractLimits())
        if isinstance(doc, Failure):
            continue
        # where the abstract is, on the unchanged PDF
        r = strip_document(doc, Candidate(case.id, "local", case.language, case.abstracts),
                           settings)
        main = [m for m in ([] if isinstance(r, Failure) else r.matches)
                if m.language == case.language][:1]
        if not main or len(main[0].pages) != 1:
            continue
        page, lines = _abstract_lines(doc, _after_heading(doc, main[0].start), main[0].end)
        height = doc.pages[page - 1].height
        header, footer = BAND * height, (1 - BAND) * height
        for name, share in CUTS:
            k = min(len(lines) - 1, max(1, round(share * len(lines))))
            # between the middles of two lines: the text above goes by its baseline (below
            # its middle), the text below too; lines side by side (two columns) give no cut
            if len(lines) < 2 or lines[k][0] - lines[k - 1][0] < 0.5 * max(lines[k][1],
                                                                             lines[k - 1][1]):
                continue
            cut = (lines[k - 1][0] + lines[k][0]) / 2
            if not header < cut < footer:
                continue
            out = work / f"{case.id}~{name}.pdf"
            split_page(case.pdf, out, page, cut, header, footer, work)
            derived = extract_document(out, case.id, ExtractLimits())
            how = (f"page {page} cut before line {k + 1} of the {len(lines)} lines of the "
                   f"{case.language} abstract")
            if isinstance(derived, Failure) or not _same_words(doc, derived, page):
                how = "underived"
            yield Case("pagebreak", f"{case.id}~{name}", out, case.language, case.abstracts,
                       how)


def _same_words(doc: Document, derived: Document, page: int) -> bool:
    """The two halves hold every word of the cut page, and twice only words printed on
    both (the bands' lines, a title running up the margin)."""
    before = Counter(w for w, p in zip(doc.words, doc.word_pages, strict=True) if p == page)
    halves = [Counter(w for w, p in zip(derived.words, derived.word_pages, strict=True)
                      if p == half) for half in (page, page + 1)]
    after = halves[0] + halves[1]
    return not before - after and not (after - before) - (halves[0] & halves[1])


def corpus_cases(shared: Path) -> list[Case]:
    man = shared / "corpus" / "manifest.jsonl"
    kinds = {json.loads(x)["id"]: json.loads(x).get("kind", "")
             for x in man.read_text().splitlines() if x.strip()}
    return [Case("corpus", c.id, Path(c.pdf_path), c.language, c.abstracts, kinds[c.id])
            for line in read_manifest(man) if isinstance(c := line.item, Candidate)]


def extra_cases(shared: Path) -> list[Case]:
    return [Case("extra", Path(path).stem.removesuffix("_black"), shared / path, lang,
                 {lang: text})
            for path, (lang, text) in EXTRA.items() if (shared / path).exists()]


def cases(shared: Path, work: Path, sets: list[str], only: str = "") -> Iterator[Case]:
    for name in sets:
        if name == "corpus":
            yield from (c for c in corpus_cases(shared) if only in c.id)
        elif name == "pagebreak":
            yield from pagebreak_cases(shared, work, only)
        elif name == "extra":
            yield from (c for c in extra_cases(shared) if only in c.id)
        else:
            raise SystemExit(f"unknown set {name!r} (corpus, pagebreak, extra)")


# --- measuring one document ------------------------------------------------------------

def removed_mask(doc: Document, body: Document) -> list[bool]:
    """Which words of `doc` the body lost (the body is an order-kept subsequence)."""
    boxes, kept_boxes = doc.boxes.tolist(), body.boxes.tolist()
    out, j = [], 0
    for i in range(len(doc)):
        same = j < len(body) and doc.words[i] == body.words[j] \
            and doc.word_pages[i] == body.word_pages[j] \
            and doc.line_ids[i] == body.line_ids[j] and boxes[i] == kept_boxes[j]
        out.append(not same)
        j += same
    return out


def foreign(run_key: str, abstract_key: str) -> tuple[int, int]:
    """Key characters of a removed run that the abstract does not hold: in all, and the
    longest stretch. The run is aligned as an infix of the abstract; matches of < 4
    characters (chance agreement) count as not held."""
    if not run_key:
        return 0, 0
    held = {c: i + 1 for i, c in enumerate(sorted(set(abstract_key))[:254])}
    query = bytes(held.get(c, 255) for c in run_key)
    target = bytes(held.get(c, 255) for c in abstract_key)
    if not target:
        return len(run_key), len(run_key)
    r = edlib.align(query, target, mode="HW", task="path")
    total = longest = stretch = 0
    for count, op in _CIGAR.findall(r["cigar"] or ""):
        n = int(count)
        if op == "D":
            continue
        if op == "=" and n >= 4:
            stretch = 0
            continue
        stretch += n
        total += n
        longest = max(longest, stretch)
    return total, longest


def _runs(mask: list[bool], lo: int, hi: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in range(lo, hi):
        if mask[i]:
            if out and out[-1][1] == i:
                out[-1] = (out[-1][0], i + 1)
            else:
                out.append((i, i + 1))
    return out


def evaluate(case: Case, settings) -> Row:
    if case.how == "underived":
        return Row(case, "underived", "the derived PDF lost words of the cut page")
    t = _cpu()
    doc = extract_document(case.pdf, case.id, ExtractLimits())
    extract_cpu = _cpu() - t
    if isinstance(doc, Failure):
        return Row(case, "unreadable", doc.cls.value, extract_cpu=extract_cpu)
    cand = Candidate(case.id, "local", case.language, case.abstracts)
    t = _cpu()
    r = strip_document(doc, cand, settings)
    strip_cpu = _cpu() - t
    if isinstance(r, Failure):
        return Row(case, "dropped", r.message, strip_cpu=strip_cpu, extract_cpu=extract_cpu)
    mask, keys = removed_mask(doc, r.body), word_keys(doc.words)
    leaks = leakage(r.body, case.abstracts, settings.leak_ngram, r.body_keys)
    row = Row(case, "found", strip_cpu=strip_cpu, extract_cpu=extract_cpu)
    for lang, abstract in case.abstracts.items():
        matches = [m for m in r.matches if m.language == lang]
        akey, runs, total, worst, cut = text_key(abstract), 0, 0, 0, 0
        for m in matches:
            for a, b in _runs(mask, m.start, m.end):
                run = "".join(keys[a:b])
                f, w = foreign(run, akey)
                runs, cut, total, worst = runs + 1, cut + len(run), total + f, max(worst, w)
        method = "/".join(sorted({m.method for m in matches})) or "-"
        row.per_lang[lang] = (method, runs, leaks[lang], total, worst, cut, len(akey))
    return row


# --- report ----------------------------------------------------------------------------

def print_row(row: Row, threshold: float) -> None:
    c = row.case
    if row.status != "found":
        print(f"{c.set:9} {c.id:46} {row.status.upper():8} {row.detail[:80]}")
        return
    for lang, (method, runs, leak, extra, worst, cut, size) in row.per_lang.items():
        flags = (" LEAK" if leak >= threshold else "") + \
            (" WRONG-CUT" if worst >= WRONG_CUT else "")
        print(f"{c.set:9} {c.id[:44]:44} {lang:2} {method:11} runs={runs:<2} "
              f"cut={cut:>4}/{size:<4} leak={leak:.2f} beyond={extra:<3} longest={worst:<3}"
              f"{flags}")


def totals(rows: list[Row], threshold: float) -> dict[str, float]:
    readable = [r for r in rows if r.status in ("found", "dropped")]
    found = [r for r in readable if r.status == "found"]
    n_abs = sum(len(r.case.abstracts) for r in readable)
    n_found = sum(len(r.case.abstracts) for r in found)
    out = {"documents": len(readable), "found": len(found),
           "found_pct": 100 * len(found) / max(1, len(readable)),
           "abstracts": n_abs, "abstracts_found": n_found,
           "leaks": sum(r.leaks(threshold) for r in found),
           "wrong_cuts": sum(r.wrong_cuts() for r in found),
           "unreadable": sum(r.status == "unreadable" for r in rows),
           "underived": sum(r.status == "underived" for r in rows),
           "strip_cpu": sum(r.strip_cpu for r in readable),
           "extract_cpu": sum(r.extract_cpu for r in readable)}
    out["cpu_ratio"] = out["strip_cpu"] / max(out["extract_cpu"], 1e-9)
    return out


def print_totals(label: str, t: dict[str, float]) -> None:
    print(f"{label:9} documents {t['documents']:3}: found {t['found']:3} "
          f"({t['found_pct']:5.1f} %), abstracts {t['abstracts_found']}/{t['abstracts']}, "
          f"leaks {t['leaks']}, wrong cuts {t['wrong_cuts']}; "
          f"strip/extract CPU {t['strip_cpu']:.2f}/{t['extract_cpu']:.2f} s "
          f"= {t['cpu_ratio']:.3f}"
          + (f"; {t['unreadable']} unreadable" if t["unreadable"] else "")
          + (f"; {t['underived']} not derivable" if t["underived"] else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--shared", type=Path,
                    default=Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared")))
    ap.add_argument("--set", default="corpus,extra,pagebreak")
    ap.add_argument("--only", default="", help="only documents whose id holds this")
    ap.add_argument("-q", "--quiet", action="store_true", help="totals only")
    args = ap.parse_args(argv)
    if not (args.shared / "corpus" / "manifest.jsonl").exists():
        print(f"skipped: {args.shared}/corpus is absent (../shared is not here)")
        return 0
    s = load_settings("local")
    settings, threshold = s.document(), s.corpus().leak_threshold
    rows: list[Row] = []
    sets = args.set.split(",")
    with tempfile.TemporaryDirectory(prefix="loralay-eval-") as tmp:
        for case in cases(args.shared, Path(tmp), sets, args.only):
            rows.append(evaluate(case, settings))
            if not args.quiet:
                print_row(rows[-1], threshold)
    print()
    for name in sets:
        print_totals(name, totals([r for r in rows if r.case.set == name], threshold))
    print_totals("all", totals(rows, threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
