"""Sentences of a paragraph, each citation span whole inside one of them.

Why merging: sentence splitters cut inside citations ("Taigman et al. | [8] proposed ..."
with pysbd, since "al." ends a sentence for it). A boundary that falls inside a citation, as
`extend` widens it, joins the two pieces, so a citation is never split between sentences.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Protocol

from ..errors import ConfigError
from .records import Span

# "Taigman et al. [8]", "Smith and Jones (3)": the names belong to the citation when the span
# the parser marked is only the number (the paper's "Taigman et al. [8]" -> "REF")
_NAMES_BEFORE = re.compile(r"([A-Z][\w'’-]+(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’-]+))"
                           r"\s*$")
_NUMERIC = re.compile(r"^[\[(]\s*\d")
_PAIRS = {"(": ")", "[": "]"}


class Splitter(Protocol):
    def __call__(self, text: str) -> list[tuple[int, int]]: ...


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int
    end: int
    text: str
    spans: tuple[Span, ...]  # offsets relative to the sentence, extended by `extend`


def extend(text: str, span: Span) -> Span:
    """The citation as the dataset masks it: with "Name et al." before a numeric span, and
    with the brackets around a span that is alone inside them ("(" "Smith, 2020" ")")."""
    start, end = span.start, span.end
    if _NUMERIC.match(text[start:end]):
        m = _NAMES_BEFORE.search(text[:start])
        if m:
            start = m.start(1)
    if start > 0 and end < len(text) and _PAIRS.get(text[start - 1]) == text[end]:
        start, end = start - 1, end + 1
    return Span(start, end, span.ref, span.cited_id)


def pysbd_splitter() -> Splitter:
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(text: str) -> list[tuple[int, int]]:
        return [(s.start, s.end) for s in seg.segment(text)]
    return split


def scispacy_splitter() -> Splitter:
    """The authors' choice; imported by name so that it stays optional (not a dependency)."""
    try:
        spacy = importlib.import_module("spacy")
        nlp = spacy.load("en_core_sci_sm")
    except (ImportError, OSError) as e:
        raise ConfigError(f"sentence_splitter: scispacy needs spaCy and the en_core_sci_sm "
                          f"model installed ({e}); or use pysbd") from None

    def split(text: str) -> list[tuple[int, int]]:
        return [(s.start_char, s.end_char) for s in nlp(text).sents]
    return split


def make_splitter(name: str) -> Splitter:
    return scispacy_splitter() if name == "scispacy" else pysbd_splitter()


def _bounds(pieces: list[tuple[int, int]], spans: list[Span], length: int) -> list[int]:
    """Sentence starts after 0, minus those inside a citation."""
    cuts = sorted({max(0, min(length, s)) for s, _ in pieces} - {0})
    return [c for c in cuts if not any(sp.start < c < sp.end for sp in spans)]


def split_sentences(text: str, spans: tuple[Span, ...], splitter: Splitter) -> list[Sentence]:
    """Sentences with surrounding blanks trimmed; each span lies in exactly one of them."""
    wide = [extend(text, sp) for sp in spans]
    cuts = [0, *_bounds(splitter(text), wide, len(text)), len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        raw = text[a:b]
        lead = len(raw) - len(raw.lstrip())
        start, end = a + lead, a + len(raw.rstrip())
        if start >= end:
            continue
        inside = tuple(Span(sp.start - start, sp.end - start, sp.ref, sp.cited_id)
                       for sp in wide if start <= sp.start and sp.end <= end)
        out.append(Sentence(start, end, text[start:end], inside))
    return out
