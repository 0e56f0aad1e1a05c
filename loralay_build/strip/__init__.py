"""Abstract removal: every listed abstract is found in the body and cut out, or the
document is dropped (`irretrievable_abstract`); never kept with an abstract left in.

    strip_abstracts(doc, candidate, settings) -> (Document, [AbstractMatch]) | Failure
    strip_document(doc, candidate, settings) -> Stripped | Failure  (the same, with the
        body's word keys, which `leakage` then need not compute a second time)
    leakage(doc, abstracts, n, keys=None) -> {language: share of the abstract's n-grams}

Matching happens on word keys (normalise.py), first exactly, then with edlib, then in
pieces (locate.py; docs/abstract-matching.md). One AbstractMatch per located copy of an
abstract (a second whole copy, e.g. a thesis printing it twice, gives a second match of
the same language): `start`/`end` are the first and last removed word + 1, as indices
into the *input* document (cover page included), its heading ("Abstract" on its own
line or run in) included; the words between them that are not the
abstract's (a footer and running head at a page break, a box or column read in between)
stay. `method` is "exact", "fuzzy" (one alignment within the budget) or "split" (found
in pieces, the junk between them free); `distance` is the edits of its parts plus the
abstract characters placed nowhere; `pages` the physical pages of the removed words.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING

import numpy as np

from ..failures import Failure, FailureClass
from ..records import AbstractMatch, Candidate, Document
from .cover import cover_page
from .leakage import leakage
from .locate import Budget, Haystack, Lines, Span, more_copies
from .locate import locate as locate_abstract
from .normalise import KeyedText, is_heading, text_key, word_keys

# in the tool version the run state fingerprints (as group.GROUP_RULE, pdf/preflight.py):
# a change to where an abstract is found or what a cover page is redoes earlier results
STRIP_RULE = "strip3"  # 2: far parts paid for or near the main piece; covers need every sign
# 3: a part printed apart fills its lines; an abstract's heading goes with it

if TYPE_CHECKING:
    from ..conf import DocumentSettings

__all__ = ["Stripped", "leakage", "strip_abstracts", "strip_document"]


@dataclass(frozen=True, slots=True)
class Stripped:
    """The body, where its abstracts were, and the body's word keys: the keys cost as much
    as the matching itself (one NFKC/NFKD pass over every word), and the leakage audit
    needs exactly these, so they are handed on instead of being computed again."""

    body: Document
    matches: list[AbstractMatch]
    body_keys: list[str]


def budget_from(s: DocumentSettings) -> Budget:
    return Budget(ratio=s.max_edit_ratio, max_edits=s.max_edits, min_chars=s.min_abstract_chars)


def strip_abstracts(doc: Document, candidate: Candidate, settings: DocumentSettings
                    ) -> tuple[Document, list[AbstractMatch]] | Failure:
    """The body without its cover page and without any of its abstracts, and where they were."""
    stripped = strip_document(doc, candidate, settings)
    if isinstance(stripped, Failure):
        return stripped
    return stripped.body, stripped.matches


def strip_document(doc: Document, candidate: Candidate, settings: DocumentSettings
                   ) -> Stripped | Failure:
    """`strip_abstracts`, keeping the body's word keys for `leakage`.

    A cover page's words get empty keys instead of being cut first, so that every index
    (and every match) stays an index into `doc`.
    """
    keys = all_keys = word_keys(doc.words)
    pages = np.asarray(doc.word_pages, dtype=np.int64)
    removed = np.zeros(len(doc), dtype=bool)
    if settings.drop_cover_page and cover_page(doc, keys):
        removed |= pages == 1
        keys = ["" if r else k for k, r in zip(keys, removed, strict=True)]
    text = KeyedText(keys, doc.words)
    # each character's page: an abstract's parts are looked for far from its pieces only
    # on the pages those lie on
    # and each character's printed line: a part printed apart from the rest fills its lines
    lines = pages * (1 + max(doc.line_ids, default=0)) + np.asarray(doc.line_ids, dtype=np.int64)
    hay = Haystack(text.text, np.repeat(pages, text.lengths), Lines.of(text.lengths, lines))
    budget = budget_from(settings)
    matches: list[AbstractMatch] = []
    for lang, abstract in candidate.abstracts.items():
        if not text_key(abstract):
            continue  # nothing printable to look for (an empty metadata field)
        # each abstract is looked for in the whole text, including what another abstract
        # took: metadata may give the same text twice, or one field holding both languages
        hay.masked[:] = False
        spans = locate_abstract(hay, abstract, budget)
        if spans is None:
            return Failure(FailureClass.IRRETRIEVABLE_ABSTRACT,
                           f"the {lang} abstract ({len(abstract)} chars) is not in the body "
                           f"within {budget.ratio:.0%} / {budget.max_edits} edits")
        hay.mask(spans)
        copies = [spans, *more_copies(hay, abstract, budget)]
        for group in copies:
            match = _remove(text, group, lang, pages, lines, removed)
            if match is not None:
                matches.append(match)
    kept = (~removed).tolist()
    # the keys of the input words, not the blanked cover page's: those words are all removed
    return Stripped(doc.keep(kept), matches, list(compress(all_keys, kept)))


def _remove(text: KeyedText, spans: list[Span], lang: str, pages: np.ndarray,
            lines: np.ndarray, removed: np.ndarray) -> AbstractMatch | None:
    """Mark the words of one located copy as removed, with its heading; its summary as an
    AbstractMatch."""
    idx: list[int] = []
    for s in spans:
        first, last = text.words_covered(s.start, s.end)
        if last > first:
            first = _heading(text.keys, lines, removed, first)
            removed[first:last] = True
            idx.extend((first, last))
    if not idx:
        return None
    start, end = min(idx), max(idx)
    methods = {s.method for s in spans}
    method = "split" if "split" in methods else ("fuzzy" if "fuzzy" in methods else "exact")
    touched = sorted({int(p) for s in spans for p in _pages_of(text, s, pages)})
    return AbstractMatch(lang, start, end, sum(s.distance for s in spans), method,
                         tuple(touched))


def _heading(keys: list[str], lines: np.ndarray, removed: np.ndarray, first: int) -> int:
    """Where the cut starting at word `first` starts with its heading: an abstract's
    heading ("Abstract", "RESUMO:", "요 약") that fills its printed line up to the cut, on
    a line of its own or run in before the abstract's first word. The heading belongs
    to the abstract; left alone in the body, it would be a paragraph of one word. A
    keywords line is the paper's, not the abstract's, and stays."""
    last = first - 1
    while last >= 0 and not keys[last] and not removed[last]:
        last -= 1  # a lone dash or bullet
    if last < 0 or removed[last]:
        return first
    begin = last
    while begin > 0 and lines[begin - 1] == lines[last] and not removed[begin - 1]:
        begin -= 1
    return begin if is_heading("".join(keys[begin:last + 1])) else first


def _pages_of(text: KeyedText, span: Span, pages: np.ndarray) -> set[int]:
    first, last = text.words_covered(span.start, span.end)
    return set(pages[first:last].tolist())
