"""Abstracts printed in pieces: across a page break, around a box, out of reading order.

Two kinds of tests. The rules, on small word lists (the S2ORC abstract of test_locate
and the real footer of its first page). And regressions on real PDFs of ../shared
(skipped without it): papers of the corpus, of DocBank and of the bench, with the page
holding their abstract printed over two pages by `scripts/eval_abstracts.py`'s
`split_page` (the PDF's own content stream rewritten twice, without the text below the
cut and without the text above it; nothing typeset or moved), built in the test's tmp
dir; and a DocBank paper whose abstract really ends on page 2 after the footnotes of
page 1. Before the alignment-guided pieces, the Korean abstract of ko_hufs_tsp (90 key
characters) cut by a page break and the IEEE abstract of the cataracts paper continued
after the other column were dropped as irretrievable.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import numpy as np
import pytest

from loralay_build.conf import load_settings
from loralay_build.failures import Failure, FailureClass
from loralay_build.pdftext import extract_document
from loralay_build.records import Candidate, Document
from loralay_build.strip import leakage, strip_abstracts, strip_document
from loralay_build.strip.locate import GAP, JUNK, MAX_PIECES, MIN_PIECE, Budget, pieces
from loralay_build.strip.normalise import text_key

from .conftest import shared_path
from .helpers.locate import ABSTRACT, AFTER, CFG, _doc
from .helpers.locate import BEFORE as AUTHORS

SHORT = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers "
         "spanning many academic disciplines.")  # 95 key characters
# A longer real abstract: DocBank's arXiv 1702.07095, as printed (its first half).
LONG = ("Simulating complex processes in fractured media requires some type of model "
        "reduction. Well-known approaches include multi-continuum techniques, which have been "
        "commonly used in approximating subgrid effects for flow and transport in fractured "
        "media. Our goal in this paper is to (1) show a relation between multi-continuum "
        "approaches and Generalized Multiscale Finite Element Method (GMsFEM) and (2) to "
        "discuss coupling these approaches for solving problems in complex multiscale "
        "fractured media. The GMsFEM, a systematic approach, constructs multiscale basis "
        "functions via local spectral decomposition in pre-computed snapshot spaces. We show "
        "that GMsFEM can automatically identify separate fracture networks via local spectral "
        "problems. We discuss the relation between these basis functions and continuums in "
        "multi-continuum methods. The GMsFEM can automatically detect each continuum and "
        "represent the interaction between the continuum and its surrounding (matrix). For "
        "problems with simplified fracture networks, we propose a simplified basis "
        "construction with the GMsFEM.")
BEFORE = [*AUTHORS, "Abstract"]
# the real page break of the S2ORC paper: its first page's footer, the second page's number
FOOTER = ["Proceedings", "of", "the", "58th", "Annual", "Meeting", "of", "the", "Association",
          "for", "Computational", "Linguistics,", "pages", "4969–4983", "July", "5", "-", "10,",
          "2020.", "4970"]
PARAGRAPH = 30 * [  # ~180 key characters a sentence
    "Most", "text-mining", "research", "relies", "on", "corpora", "whose", "documents",
    "were", "chosen", "for", "their", "licences", "rather", "than", "their", "content,",
    "and", "whose", "size", "is", "set", "by", "what", "one", "group", "could", "annotate."]


def _strip(words: list[str], abstract: str = ABSTRACT):
    return strip_abstracts(_doc(words), Candidate("t", "x", "en", {"en": abstract}), CFG)


def _found(words: list[str], abstract: str = ABSTRACT) -> tuple[Document, list]:
    r = _strip(words, abstract)
    assert not isinstance(r, Failure), r
    return r


def _dropped(words: list[str], abstract: str = ABSTRACT) -> bool:
    r = _strip(words, abstract)
    return isinstance(r, Failure) and r.cls is FailureClass.IRRETRIEVABLE_ABSTRACT


# --- the rules ---------------------------------------------------------------------------

def test_an_alignment_is_cut_into_pieces_at_junk_and_chance_makes_no_piece():
    # 40 matched, 30 body characters more than the abstract, 40 matched: two pieces
    assert [(p.qs, p.qe, p.ts, p.te) for p in pieces("40=30D40=", 100, 80, 0.15)] == \
        [(0, 40, 100, 140), (40, 80, 170, 210)]
    # fewer than JUNK body characters (a page number) stay inside the piece, as edits
    assert [(p.qs, p.qe, p.edits) for p in pieces(f"40={JUNK - 1}D40=", 0, 80, 0.15)] == \
        [(0, 80, JUNK - 1)]
    # abstract characters the alignment does not match there (>= GAP): two pieces, the
    # characters between them unplaced
    parts = pieces(f"40={GAP}I40=", 0, 80 + GAP, 0.15)
    assert [(p.qs, p.qe) for p in parts] == [(0, 40), (40 + GAP, 80 + GAP)]
    # chance: short anchors far apart, or too few matched characters, make no piece
    assert pieces("3=5X4=9X3=6X5=8X", 0, 43, 0.15) == []
    assert pieces(f"{MIN_PIECE - 1}=30X", 0, MIN_PIECE + 29, 0.15) == []
    # a chain with more than twice the ratio unmatched inside it is chance too
    assert pieces("5=3X5=3X5=3X5=", 0, 29, 0.15) == []


def test_a_short_abstract_across_a_page_break_is_found_and_the_footer_stays():
    """A one-sentence abstract (95 key characters) cut by the page's footer and the next
    page's number: more junk than its budget (14 edits), and too short to halve into
    pieces of `min_chars`; the old search dropped it."""
    words = SHORT.split()
    for k in range(2, len(words) - 1, 3):
        body, matches = _found(BEFORE + words[:k] + FOOTER + words[k:] + AFTER, SHORT)
        assert body.words == AUTHORS + FOOTER + AFTER, k
        assert [m.method for m in matches] == ["split"]


def test_parts_in_another_order_are_found():
    """The reading order (or a layout stage regrouping blocks) puts the abstract's last
    lines before its first ones, with a box between: every part is found, the box stays."""
    words, box = ABSTRACT.split(), ["Keywords:", "corpus,", "text", "mining"]
    for k in (5, 15, 30, 40):
        body, matches = _found(BEFORE + words[k:] + box + words[:k] + AFTER)
        assert body.words == AUTHORS + box + AFTER, k


def test_a_part_after_the_next_heading_and_a_long_paragraph_is_found():
    """The last lines read after "1 Introduction" and 900 words of it (beyond any fixed
    window around the rest): found, and the introduction stays whole."""
    words = ABSTRACT.split()
    intro = ["1", "Introduction"] + PARAGRAPH
    for k in (10, 30, 45):
        body, _ = _found(BEFORE + words[:k] + intro + words[k:] + AFTER)
        assert body.words == AUTHORS + intro + AFTER, k


def test_a_side_box_read_line_by_line_into_the_abstract_stays_in_the_body():
    words = ABSTRACT.split()
    box = [["Received:", "4", "September", "2020"], ["Accepted:", "12", "March", "2021"],
           ["Published:", "30", "April", "2021"], ["Keywords:", "corpus,", "citations"]]
    mixed = list(BEFORE)
    for i in range(0, len(words), 12):
        mixed += words[i:i + 12] + (box[i // 12] if i // 12 < len(box) else [])
    body, _ = _found(mixed + AFTER)
    assert body.words == AUTHORS + [w for line in box for w in line] + AFTER


def _without(part: list[str], chars: int) -> list[str]:
    """`part` without words from its fourth on, until >= `chars` key characters are gone."""
    end, gone = 3, 0
    while gone < chars:
        gone += len(text_key(part[end]))
        end += 1
    return part[:3] + part[end:]


def test_the_budget_is_the_whole_abstract_s_across_its_pieces():
    """Three parts, each printed without a phrase of the metadata's. With >= 20 key
    characters gone from each, every part would pass on its own (15 % of a third is 24)
    but the abstract does not (>= 60 > 51 edits): dropped, whether its parts are printed
    together or apart. With ~8 gone from each it is found either way."""
    words = ABSTRACT.split()
    thirds = [words[:17], words[17:34], words[34:]]
    for chars, found in ((20, False), (8, True)):
        a, b, c = (_without(t, chars) for t in thirds)
        together = BEFORE + a + b + c + AFTER
        apart = BEFORE + a + FOOTER + b + PARAGRAPH[:60] + c + AFTER
        assert _dropped(together) is not found and _dropped(apart) is not found, chars


def test_a_missing_part_drops_the_paper_however_the_rest_is_printed():
    words = ABSTRACT.split()
    other = ["Peer", "review", "is", "the", "slowest", "step", "of", "publishing,", "and",
             "its", "delays", "fall", "hardest", "on", "early-career", "authors", "whose",
             "contracts", "end", "before", "their", "papers", "appear."]
    for k in (15, 30):
        # a part replaced by other text, at the page break or after a box: never found
        assert _dropped(BEFORE + words[:k] + FOOTER + other + AFTER)
        assert _dropped(BEFORE + other + FOOTER + words[k:] + AFTER)
    assert _dropped(BEFORE + SHORT.split()[:8] + FOOTER + AFTER, SHORT)


def test_more_pieces_than_max_pieces_drop_the_paper():
    """A box's lines read one by one between the abstract's lines (a line of 12 words):
    found while the abstract is in at most MAX_PIECES pieces, dropped beyond."""
    words, box = LONG.split(), ["Electronic", "copy", "available", "at:", "ssrn.com"]

    def interleaved(lines: int) -> list[str]:
        out = list(BEFORE)
        for i in range(0, len(words), 12):
            out += words[i:i + 12] + (box if i // 12 < lines else [])
        return out + AFTER
    body, _ = _found(interleaved(MAX_PIECES - 1), LONG)
    assert body.words == AUTHORS + (MAX_PIECES - 1) * box + AFTER
    assert _dropped(interleaved(MAX_PIECES + 2), LONG)


def test_budget_rules_are_the_settings():
    assert Budget(0.15, 60, 40).edits(len(text_key(SHORT))) == 14
    assert Budget(0.15, 60, 40).edits(len(text_key(ABSTRACT))) == 51


# --- real PDFs -------------------------------------------------------------------------

SETTINGS = load_settings("local")
DOC, THRESHOLD = SETTINGS.document(), SETTINGS.corpus().leak_threshold
# corpus and bench papers whose page is cut: the two the old search dropped, one ACL
# two-column paper, one bilingual SciELO paper with its boxes, one Elsevier 5p page
DERIVED = ("ko_hufs_tsp", "cataracts", "en_acl_s2orc", "es_scielo_malaga", "elsarticle-5p")
WRONG_CUT = 40


@pytest.fixture(scope="module")
def ev():
    import eval_abstracts  # scripts/, on the path from conftest

    return eval_abstracts


@pytest.fixture(scope="module")
def derived(ev, tmp_path_factory) -> dict:
    """case id -> (case, original Document, derived Document)."""
    shared = shared_path()
    shared_path("corpus", "manifest.jsonl")
    if shutil.which("qpdf") is None:
        pytest.skip("qpdf is not installed")
    work = tmp_path_factory.mktemp("pagebreak")
    out = {}
    originals: dict[str, Document] = {}
    for name in DERIVED:
        for case in ev.pagebreak_cases(shared, work, only=name):
            base = case.id.split("~")[0]
            src = next(c for c in ev.corpus_cases(shared) + ev.extra_cases(shared)
                       if c.id == base)
            if base not in originals:
                originals[base] = extract_document(src.pdf, base)
            out[case.id] = (case, originals[base],
                            extract_document(case.pdf, case.id) if case.how != "underived"
                            else None)
    return out


def _candidate(case, abstracts: dict[str, str] | None = None) -> Candidate:
    return Candidate(case.id, "local", case.language,
                     case.abstracts if abstracts is None else abstracts)


def _wrong_cut(ev, doc: Document, stripped, abstracts: dict[str, str]) -> int:
    """The longest run of removed key characters that is not its abstract's."""
    from loralay_build.strip.normalise import word_keys
    mask, keys, worst = ev.removed_mask(doc, stripped.body), word_keys(doc.words), 0
    for m in stripped.matches:
        for a, b in ev._runs(mask, m.start, m.end):
            worst = max(worst, ev.foreign("".join(keys[a:b]), text_key(abstracts[m.language]))[1])
    return worst


def test_derived_pages_hold_every_word_of_the_real_page(derived):
    assert len(derived) >= 12
    for cid, (case, original, doc) in derived.items():
        assert case.how != "underived" and isinstance(doc, Document), cid
        assert len(doc.pages) == len(original.pages) + 1, cid
        assert len(doc.words) >= len(original.words), cid


def test_abstracts_across_a_derived_page_break_are_found_in_pieces(ev, derived):
    """Found on both pages, the leak no higher than on the real page, no wrong cut (no
    stretch of >= 40 cut key characters that the abstract does not hold), and as many
    words cut as from the real page: the footer and running head between the pieces
    stay in the body."""
    for cid, (case, original, doc) in derived.items():
        r = strip_document(doc, _candidate(case), DOC)
        assert not isinstance(r, Failure), (cid, r)
        whole = strip_document(original, _candidate(case), DOC)
        main = [m for m in r.matches if m.language == case.language]
        page, pages = int(case.how.split()[1]), {p for m in main for p in m.pages}
        # both pages; a last line of one word that the reading order puts beyond NEAR
        # (cataracts: after the other column) is left, and counted as edits
        assert page in pages and (page + 1 in pages or main[0].distance < GAP), (cid, main)
        after = leakage(r.body, case.abstracts, DOC.leak_ngram, r.body_keys)
        before = leakage(whole.body, case.abstracts, DOC.leak_ngram, whole.body_keys)
        for lang in case.abstracts:
            assert after[lang] < THRESHOLD and after[lang] <= before[lang] + 0.02, (cid, lang)
        assert _wrong_cut(ev, doc, r, case.abstracts) < WRONG_CUT, cid
        # as many words cut as from the real page, give or take a page number
        cut, cut_whole = len(doc.words) - len(r.body.words), len(original.words) - len(
            whole.body.words)
        assert abs(cut - cut_whole) <= 3, (cid, cut, cut_whole)


def test_the_words_between_the_pieces_stay(derived):
    """ko_hufs_tsp: the footer of the cut page ("2023 년 컴퓨터공학부 졸업논문
    computer.hufs.ac.kr") lies between the two parts of the Korean abstract; cataracts:
    the other column's paragraphs do. Both stay, the footer on both halves."""
    for cid, (case, _, doc) in derived.items():
        r = strip_document(doc, _candidate(case), DOC)
        text = " ".join(r.body.words)
        if cid.startswith("ko_hufs_tsp"):
            footer = "2023 년 컴퓨터공학부 졸업논문"
            assert text.count(footer) == " ".join(doc.words).count(footer) > 0, cid
            assert "외판원 문제(TSP)를 전역최적화를" not in text
        if cid.startswith("135.tar_1805.05760.gz_cataracts"):
            assert "CNNs have significantly improved the state of the art" in text, cid
            assert "The construction of the detection system is guided" not in text, cid


def test_parts_reordered_block_by_block_are_found(derived):
    """A layout stage may put blocks in another order: the block holding the abstract's
    continuation moved before its first block, the same words are cut (give or take a
    word where the two parts now touch)."""
    for cid, (case, _, doc) in derived.items():
        r = strip_document(doc, _candidate(case), DOC)
        main = next(m for m in r.matches if m.language == case.language)
        touched = sorted({doc.block_ids[i] for i in range(main.start, main.end)})
        if len(touched) < 2:
            continue
        first, last = touched[0], touched[-1]
        blocks: dict[int, list[int]] = {}
        for i, b in enumerate(doc.block_ids):
            blocks.setdefault(b, []).append(i)
        order = []
        for b in sorted(blocks):
            order += blocks[last] if b == first else []
            order += [] if b == last else blocks[b]
        moved = Document(doc.id, doc.pages, [doc.words[i] for i in order],
                         doc.boxes[np.array(order)], [doc.word_pages[i] for i in order],
                         [doc.line_ids[i] for i in order], [doc.block_ids[i] for i in order])
        r2 = strip_document(moved, _candidate(case), DOC)
        assert not isinstance(r2, Failure), cid
        # where two parts now touch, a word or two may go to the other side of the cut
        a, b = Counter(r2.body.words), Counter(r.body.words)
        assert (a - b).total() + (b - a).total() <= 6, cid


def test_other_abstracts_are_never_found_in_pieces(ev, derived):
    """Every other abstract of the corpus in the document's languages, alone or spliced
    onto the true abstract's first half: dropped, never found in parts."""
    shared = shared_path()
    pool = [c for c in ev.corpus_cases(shared) + ev.extra_cases(shared)]
    checked = 0
    for cid, (case, _, doc) in derived.items():
        if not cid.endswith("~twothirds"):
            continue
        own = case.id.split("~")[0]
        for other in pool:
            if other.id == own:
                continue
            for lang, text in other.abstracts.items():
                if lang not in case.abstracts:
                    continue
                main = case.abstracts[lang]
                for abstract in (text, main[: len(main) // 2] + " " + text[len(text) // 2:]):
                    r = strip_document(doc, _candidate(case, {**case.abstracts, lang: abstract}),
                                       DOC)
                    assert isinstance(r, Failure), (cid, other.id, lang)
                    assert r.cls is FailureClass.IRRETRIEVABLE_ABSTRACT
                    checked += 1
    assert checked >= 100


def test_a_real_abstract_ending_on_the_next_page_after_the_footnotes(ev):
    """DocBank 1702.07095: the abstract fills page 1 and ends on page 2 after four author
    footnotes and the page number; the footnotes stay, both parts go."""
    shared = shared_path("layout", "docbank")
    case = next(c for c in ev.extra_cases(shared.parent.parent) if c.id.startswith("37.tar"))
    doc = extract_document(case.pdf, case.id)
    r = strip_document(doc, _candidate(case), DOC)
    assert not isinstance(r, Failure), r
    text = " ".join(r.body.words)
    assert "Department of Mathematics, The Chinese University of Hong Kong" in text
    assert "Yakutsk, Republic of Sakha (Yakutia)" in text
    assert "simulations. These are discussed in the paper." not in text
    assert "Simulating complex processes in fractured media" not in text
    assert r.matches[0].pages == (1, 2) and r.matches[0].method == "split"
    assert _wrong_cut(ev, doc, r, case.abstracts) < WRONG_CUT
    assert leakage(r.body, case.abstracts, DOC.leak_ngram, r.body_keys)["en"] < 0.05


@pytest.mark.perf
def test_stripping_in_pieces_stays_cheap(ev, derived):
    """The second pass (the unbounded alignment in a window, parts looked for on their
    own) runs on every derived page break: all of them together cost a small part of
    extracting the same PDFs (test_strip.py's bound, 0.35)."""
    extract = strip = 0.0
    for _, (case, _, _) in derived.items():
        t = ev._cpu()
        doc = extract_document(case.pdf, case.id)
        extract += ev._cpu() - t
        t = ev._cpu()
        strip_document(doc, _candidate(case), DOC)
        strip += ev._cpu() - t
    assert strip < 0.35 * extract, (strip, extract)


# --- the abstract's own text, not the body repeating it ----------------------------------
# Edited copies of the real words of en_acl_s2orc (its abstract on page 1, the introduction
# on pages 1-2, the conclusion on page 9): a sentence added to the metadata or to the body,
# the printed abstract reworded. Before the search kept to the abstract's place, each of
# them cut the body's sentences instead of (or besides) the abstract's own.

ABSTRACT_S2ORC = (
    ABSTRACT + " In S2ORC, we aggregate papers from hundreds of academic publishers and "
    "digital archives into a unified source, and create the largest publicly-available "
    "collection of machine-readable academic text to date. We hope this resource will "
    "facilitate research and development of tools and tasks for text mining over academic "
    "text.")
S2ORC_SENTENCES = re.split(r"(?<=\.) (?=[A-Z])", ABSTRACT_S2ORC)


@pytest.fixture(scope="module")
def s2orc() -> Document:
    manifest = shared_path("corpus", "manifest.jsonl")
    entry = next(m for m in map(json.loads, manifest.read_text().splitlines())
                 if m["id"] == "en_acl_s2orc")
    assert entry["abstracts"]["en"] == ABSTRACT_S2ORC
    return extract_document(manifest.parent / entry["file"], entry["id"])


def _edited(doc: Document, at: int, new: list[str], remove: int = 0) -> Document:
    """`doc` with `remove` words from `at` replaced by `new`, which take the box, page,
    line and block of the word before them."""
    idx = [*range(at), *[at - 1] * len(new), *range(at + remove, len(doc))]
    return Document(doc.id, doc.pages, doc.words[:at] + new + doc.words[at + remove:],
                    doc.boxes[np.array(idx)], [doc.word_pages[i] for i in idx],
                    [doc.line_ids[i] for i in idx], [doc.block_ids[i] for i in idx])


def _at(doc: Document, phrase: str, start: int = 0) -> int:
    words = phrase.split()
    return next(i for i in range(start, len(doc)) if doc.words[i:i + len(words)] == words)


def _s2orc(doc: Document, abstract: str = ABSTRACT_S2ORC):
    return strip_document(doc, Candidate("s2orc", "local", "en", {"en": abstract}), DOC)


def test_a_sentence_the_print_lacks_is_paid_for_never_cut_from_the_introduction(s2orc):
    """The metadata holds one sentence more than the print, and the introduction (page 2)
    has it: within the budget it is paid for as printed nowhere and stays in the
    introduction; beyond the budget the paper is dropped. The abstract itself is cut
    either way it is found."""
    short = "Yet, existing corpora are not without their limi- tations."  # 41 characters
    long = ("Some cover a small number of papers (e.g. AAN), are domain-specific (e.g. AAN, "
            "PubMed Central, Saier and Färber (2019)), or may not pro- vide usable full text "
            "(e.g. Saier and Färber (2019) and RefSeer).")  # 152 characters
    assert s2orc.word_pages[_at(s2orc, short)] == s2orc.word_pages[_at(s2orc, long)] == 2
    r = _s2orc(s2orc, ABSTRACT_S2ORC + " " + short.replace("limi- ", "limi"))
    assert not isinstance(r, Failure), r
    text = " ".join(r.body.words)
    assert short in text and "We introduce S2ORC, 1 a large corpus" not in text
    assert [m.pages for m in r.matches] == [(1,)]
    assert r.matches[0].distance >= len(text_key(short))  # paid for
    r = _s2orc(s2orc, ABSTRACT_S2ORC + " " + long.replace("pro- ", "pro"))
    assert isinstance(r, Failure) and r.cls is FailureClass.IRRETRIEVABLE_ABSTRACT, r


def test_an_introduction_restating_each_sentence_keeps_them(s2orc):
    """Each sentence of the abstract restated in the introduction, one every other
    sentence of it: the printed abstract is cut, the five restatements stay (the leakage
    audit sees them; they are the authors', not the abstract)."""
    ends = [i for i in range(_at(s2orc, "Introduction Academic") + 1, _at(s2orc, "To address"))
            if s2orc.words[i - 1].endswith(".") and s2orc.words[i][:1].isupper()]
    doc = s2orc
    for sentence, at in reversed(list(zip(S2ORC_SENTENCES, ends[::2], strict=False))):
        doc = _edited(doc, at, sentence.split())
    assert len(S2ORC_SENTENCES) == 5 and len(ends[::2]) >= 5
    r = _s2orc(doc)
    assert not isinstance(r, Failure), r
    text = " ".join(r.body.words)
    assert "We introduce S2ORC, 1 a large corpus" not in text
    assert all(s in text for s in S2ORC_SENTENCES)
    assert [m.pages for m in r.matches] == [(1,)]


def test_a_reworded_last_sentence_never_takes_the_conclusion_s_copy(s2orc):
    """The print rewords the abstract's last sentence and the conclusion (page 9) repeats
    the metadata's wording. Reworded a little, the printed sentence is cut as the
    abstract's (its edits paid for; a reworded phrase of two words between its pieces
    stays) and the conclusion keeps its copy; reworded beyond the budget, the paper is
    dropped: the conclusion's copy is never cut in its place."""
    at = _at(s2orc, "We demonstrate that S2ORC can")
    assert s2orc.word_pages[at] == 9
    _reworded_last_sentence(s2orc, at)


def _reworded_last_sentence(s2orc: Document, at: int) -> None:
    """The metadata's last sentence edited in at word `at`, the print's reworded a little
    (found: the print's cut, the copy kept) and beyond the budget (dropped)."""
    last = S2ORC_SENTENCES[-1]
    for reworded, found in (
            ("We hope this new resource can help research and the development of tools and "
             "tasks for text mining on scientific text.", True),
            ("We expect that this corpus will help both research and the building of tools "
             "for mining scholarly writing.", False)):
        doc = _edited(s2orc, at, last.split())
        first = _at(doc, "We hope this resource")
        doc = _edited(doc, first, reworded.split(), len(last.split()))
        r = _s2orc(doc)
        if not found:
            assert isinstance(r, Failure) and r.cls is FailureClass.IRRETRIEVABLE_ABSTRACT, r
            continue
        assert not isinstance(r, Failure), r
        text = " ".join(r.body.words)
        assert last in text and "text mining on scientific text." not in text
        assert [m.pages for m in r.matches] == [(1,)]


def test_the_strip_rule_is_in_the_fingerprinted_tool_version():
    """What is cut as an abstract changed (far parts, covers): a run made before must redo
    its documents, or a rerun would keep cuts a fresh build no longer makes."""
    from loralay_build.pdf.preflight import tool_versions
    from loralay_build.strip import STRIP_RULE

    assert f"+{STRIP_RULE}" in tool_versions().loralay_build


# The same three edits beside the printed abstract: in the introduction's first column on
# page 1, within NEAR of the abstract and on its page. A sentence edited into a paragraph
# takes the line of the word before it (`_edited`): it shares its printed line with the
# paragraph, as a body sentence does, where a part of the abstract printed apart (after
# a page break, the other column, a box) fills lines of its own. Before that rule, each
# of them cut the introduction's sentence as the abstract's.

INTRO_1 = "Different types of resources have been used"  # page 1, ~100 words after it


def test_a_sentence_the_print_lacks_is_never_cut_from_the_introduction_beside_it(s2orc):
    """The metadata's extra sentence is in the introduction right below the abstract: paid
    for within the budget (the introduction keeps it), dropped beyond; never cut."""
    at = _at(s2orc, INTRO_1)
    assert s2orc.word_pages[at] == 1
    short = "Yet, existing corpora are not without their limitations."  # 41 characters
    long = ("Some cover a small number of papers, are domain-specific, or may not provide "
            "usable full text, and few of them link citations to the papers they cite.")
    doc = _edited(s2orc, at, short.split())
    r = _s2orc(doc, ABSTRACT_S2ORC + " " + short)
    assert not isinstance(r, Failure), r
    assert short in " ".join(r.body.words)
    assert "We introduce S2ORC, 1 a large corpus" not in " ".join(r.body.words)
    assert r.matches[0].distance >= len(text_key(short))  # paid for
    base = _s2orc(s2orc)
    assert not isinstance(base, Failure)  # the abstract's words are cut, no more
    assert len(doc.words) - len(r.body.words) == len(s2orc.words) - len(base.body.words)
    doc = _edited(s2orc, at, long.split())
    r = _s2orc(doc, ABSTRACT_S2ORC + " " + long)
    assert isinstance(r, Failure) and r.cls is FailureClass.IRRETRIEVABLE_ABSTRACT, r


def test_an_introduction_restating_each_sentence_beside_the_abstract_keeps_them(s2orc):
    """The five sentences restated in one paragraph right below the abstract, a short
    remark after each: closer together than twice the abstract (a copy's bound) and more
    junk than a copy's budget. They share their lines with the remarks: not a copy in
    pieces, the introduction keeps them; the printed abstract is cut."""
    remark = "This matters for many readers."
    block = [w for s in S2ORC_SENTENCES for w in (s + " " + remark).split()]
    doc = _edited(s2orc, _at(s2orc, INTRO_1), block)
    r = _s2orc(doc)
    assert not isinstance(r, Failure), r
    text = " ".join(r.body.words)
    assert "We introduce S2ORC, 1 a large corpus" not in text
    assert all(s in text for s in S2ORC_SENTENCES), [s in text for s in S2ORC_SENTENCES]
    assert len(r.matches) == 1


def test_a_reworded_last_sentence_never_takes_the_introduction_s_copy(s2orc):
    """The print rewords its last sentence and the introduction right below it has the
    metadata's wording: reworded a little, the printed sentence is cut as the abstract's
    and the introduction keeps its copy; reworded beyond the budget, the paper is
    dropped."""
    _reworded_last_sentence(s2orc, _at(s2orc, INTRO_1))
