"""Locating an abstract in a document's key text: exact, then edlib, then piece by piece.

Everything here works on key strings (see normalise.py): letters and digits only, so the
edit budget is spent on real disagreements. edlib's infix ("HW") alignment is the fuzzy
step (performance.md §4: linear in text x abstract / 64, insensitive to noise and to
repetition, and with a distance bound it returns nothing for an absent abstract).

Inside one alignment, body text that the abstract skips (>= JUNK characters: a footer,
a running head) stays in the body, and abstract text that the body lacks there (>= GAP
characters) is looked for nearby on its own (the end of a sentence before a page break).

Why pieces: a column or page change can put a footer, an affiliation block or another
column's lines inside the abstract (two SciELO articles of the corpus do). The whole
abstract then costs far more than any honest budget, but each part is intact. When the
whole fails, it is cut in two (at a line break, else a sentence end, else a word) and
each half is looked for near where the whole aligns best, recursively down to pieces of
`min_chars`..2*`min_chars` characters, each within its own budget. A piece that still
fails (it straddles the break and lost a word) is a leftover: it must lie between its
found neighbours, with anchors of >= STRICT_ANCHOR characters covering half of it, and
leftovers may add up to a quarter of the abstract at most. So an absent abstract is
never "found" piecewise: most of its pieces would have to pass their budgets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import edlib
import numpy as np

from .normalise import text_key

_CIGAR = re.compile(r"(\d+)([=XID])")
# A stretch of this many key characters of the body inside an alignment is layout junk (a
# footer, a running head, a caption: kept in the body); shorter stretches (a page number,
# a word the metadata lost) go with the abstract.
JUNK = 24
# A stretch of this many key characters of the abstract that the alignment leaves out is
# looked for on its own (printed elsewhere, e.g. before a page break).
GAP = 12
# A leftover piece is looked for between its found neighbours with no edit bound, so its
# anchors must be longer, and must cover at least half of it.
STRICT_ANCHOR = 8
SLACK = 3000  # how far from a found neighbour a leftover piece may be
_SENTENCE_END = re.compile(r"[.!?。？！]\s+")


@dataclass(frozen=True, slots=True)
class Budget:
    """Edits allowed for a needle: relative to its length, capped, and a floor on length."""

    ratio: float = 0.15
    max_edits: int = 60
    min_chars: int = 40

    def edits(self, n: int) -> int:
        return min(self.max_edits, int(self.ratio * n))


@dataclass(frozen=True, slots=True)
class Span:
    """Character range [start, end) of the key text that belongs to the abstract."""

    start: int
    end: int
    distance: int
    method: str  # "exact" | "fuzzy"


class Haystack:
    """A key text with its code points ready for edlib (which wants <= 256 symbols).

    Every body character that does not occur in the needle is mapped to one symbol that
    is not in the needle either: it can never match, so distances are unchanged, and a
    Korean or Chinese body with thousands of distinct characters still fits edlib's alphabet.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        self.masked = np.zeros(len(text), dtype=bool)  # spans already given to an abstract

    def mask(self, spans: list[Span]) -> None:
        for s in spans:
            self.masked[s.start:s.end] = True

    def find_exact(self, needle: str, lo: int, hi: int) -> int:
        """First exact occurrence in [lo, hi) that touches no masked character, or -1."""
        pos = self.text.find(needle, lo, hi)
        while pos >= 0 and self.masked[pos:pos + len(needle)].any():
            pos = self.text.find(needle, pos + 1, hi)
        return pos

    def encode(self, needle: str, lo: int, hi: int) -> tuple[bytes, bytes] | None:
        """Needle and target window as bytes for edlib; None if the needle has > 255 symbols."""
        alphabet = sorted(set(needle))
        if len(alphabet) > 255:
            return None
        cps = np.array([ord(c) for c in alphabet], dtype=np.uint32)
        table = np.zeros(0x110000, dtype=np.uint8)
        table[cps] = np.arange(1, len(alphabet) + 1, dtype=np.uint8)
        query = table[np.frombuffer(needle.encode("utf-32-le"), dtype=np.uint32)]
        target = table[self.codes[lo:hi]]
        target[self.masked[lo:hi]] = 0
        return query.tobytes(), target.tobytes()


def _runs(cigar: str, lo: int, qlen: int, anchor: int = 4, gap: int = GAP
          ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """Body character ranges the alignment really uses, and needle ranges it does not.

    Anchors are runs of >= `anchor` equal characters (unrelated texts agree on runs of
    1-3 characters by chance, rarely on more). Between two anchors, a stretch of >= JUNK
    body characters is junk (kept in the body) and a stretch of >= `gap` needle characters
    is missing here (looked for on its own), whether edlib spent it as insertions,
    deletions or substitutions of one text for another. Also returns how many needle
    characters the anchors cover.
    """
    anchors: list[tuple[int, int, int, int]] = []  # query start/end, target start/end
    t, q = lo, 0
    for count, op in _CIGAR.findall(cigar):
        n = int(count)
        if op == "=" and n >= anchor:
            anchors.append((q, q + n, t, t + n))
        t += 0 if op == "I" else n
        q += 0 if op == "D" else n
    if not anchors:
        return [], [(0, qlen)], 0
    missing = [(0, anchors[0][0])] if anchors[0][0] >= gap else []
    span_start = anchors[0][2] if missing else lo
    spans: list[tuple[int, int]] = []
    for prev, nxt in zip(anchors, anchors[1:], strict=False):
        if nxt[0] - prev[1] >= gap:
            missing.append((prev[1], nxt[0]))
        if nxt[2] - prev[3] >= JUNK:
            spans.append((span_start, prev[3]))
            span_start = nxt[2]
    tail = qlen - anchors[-1][1]
    spans.append((span_start, anchors[-1][3] if tail >= gap else t))
    if tail >= gap:
        missing.append((anchors[-1][1], qlen))
    return spans, missing, sum(a[1] - a[0] for a in anchors)


def align(hay: Haystack, needle: str, lo: int, hi: int, k: int
          ) -> tuple[list[Span], list[tuple[int, int]]] | None:
    """Best placement of `needle` in [lo, hi) within k edits: spans, and needle parts left out."""
    pos = hay.find_exact(needle, lo, hi)
    if pos >= 0:
        return [Span(pos, pos + len(needle), 0, "exact")], []
    enc = hay.encode(needle, lo, hi)
    if enc is None or k <= 0:
        return None
    r = edlib.align(enc[0], enc[1], mode="HW", task="path", k=k)
    if r["editDistance"] < 0:
        return None
    start, _ = r["locations"][0]
    ranges, missing, _ = _runs(r["cigar"], lo + start, len(needle))
    dist = int(r["editDistance"])
    if not ranges:
        return None
    return [Span(s, e, dist if i == 0 else 0, "fuzzy") for i, (s, e) in enumerate(ranges)], missing


def locate(hay: Haystack, abstract: str, budget: Budget) -> list[Span] | None:
    """Spans of the key text holding `abstract`, or None when it is not (all) there."""
    key = text_key(abstract)
    whole = _place(hay, key, 0, len(hay.text), budget)
    if whole is not None:
        return whole
    lo, hi = _window(hay, key)
    items: list[list[Span] | str] = []
    try:
        if not _pieces(hay, abstract, lo, hi, budget, items, [len(key) // 4]):
            return None
    except _GiveUp:
        return None
    return _settle(hay, items)


def more_copies(hay: Haystack, abstract: str, budget: Budget, limit: int = 3) -> list[Span]:
    """Further whole copies of an abstract (a thesis may print it twice), masked spans excluded."""
    key, found = text_key(abstract), []
    for _ in range(limit):
        spans = _place(hay, key, 0, len(hay.text), budget)
        if not spans:
            break
        hay.mask(spans)
        found.extend(spans)
    return found


def _place(hay: Haystack, key: str, lo: int, hi: int, budget: Budget) -> list[Span] | None:
    """One needle within budget, plus the parts of it the alignment left out, if found nearby."""
    if len(key) < budget.min_chars:
        pos = hay.find_exact(key, lo, hi)  # too short to trust a fuzzy match
        return [Span(pos, pos + len(key), 0, "exact")] if pos >= 0 else None
    hit = align(hay, key, lo, hi, budget.edits(len(key)))
    if hit is None:
        return None
    spans, missing = hit
    hay.mask(spans)
    pad = len(key) + 2000
    near_lo, near_hi = max(0, spans[0].start - pad), min(len(hay.text), spans[-1].end + pad)
    for a, b in missing:  # e.g. the end of a sentence on the next page
        part = key[a:b]
        extra = align(hay, part, near_lo, near_hi, budget.edits(len(part))
                      if len(part) >= budget.min_chars else 0)
        if extra is not None:
            hay.mask(extra[0])
            spans.extend(extra[0])
    return sorted(spans, key=lambda s: s.start)


def _window(hay: Haystack, key: str) -> tuple[int, int]:
    """Where the whole abstract aligns best at any cost, widened: the pieces are looked for
    there, so that a sentence the authors repeat elsewhere cannot draw a piece away."""
    enc = hay.encode(key, 0, len(hay.text))
    if enc is None:
        return 0, len(hay.text)
    r = edlib.align(enc[0], enc[1], mode="HW", task="locations")
    if not r["locations"]:
        return 0, len(hay.text)
    start, end = r["locations"][0]
    pad = len(key) + 2000
    return max(0, start - pad), min(len(hay.text), end + 1 + pad)


class _GiveUp(Exception):
    """More of the abstract is unplaced than a quarter: it is not there."""


def _pieces(hay: Haystack, text: str, lo: int, hi: int, budget: Budget,
            out: list[list[Span] | str], left: list[int]) -> bool:
    """Both halves of `text` looked for in [lo, hi), recursively, in order, into `out`.

    A half too short to cut again that cannot be placed within its budget is left as its
    key (a leftover, settled later between its neighbours), as long as leftovers stay
    under a quarter of the abstract (`left`). False when `text` has no place to cut.
    """
    halves = split_in_two(text)
    if halves is None:
        return False
    for half in halves:
        key = text_key(half)
        spans = _place(hay, key, lo, hi, budget)
        if spans is not None:
            out.append(spans)
        elif len(key) < 2 * budget.min_chars or not _pieces(hay, half, lo, hi, budget, out, left):
            left[0] -= len(key)
            if left[0] < 0:
                raise _GiveUp
            out.append(key)
    return True


def _settle(hay: Haystack, items: list[list[Span] | str]) -> list[Span] | None:
    """All pieces as spans: each leftover found between the pieces found around it."""
    found: list[Span] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            before = [s.end for x in items[:i] if isinstance(x, list) for s in x]
            after = [s.start for x in items[i + 1:] if isinstance(x, list) for s in x]
            if not before and not after:
                return None
            lo = max(before) if before else max(0, min(after) - len(item) - SLACK)
            hi = min(after) if after else min(len(hay.text), lo + len(item) + SLACK)
            item = _squeeze(hay, item, lo, min(hi, lo + len(item) + SLACK))
            if item is None:
                return None
        found.extend(item)
    return [Span(s.start, s.end, s.distance, "split") for s in found]


def _squeeze(hay: Haystack, key: str, lo: int, hi: int) -> list[Span] | None:
    """A leftover piece in a tight window: long anchors covering half of it, and the short
    parts it leaves out (a word before a page break) found exactly in the same window."""
    enc = hay.encode(key, lo, hi) if hi - lo >= STRICT_ANCHOR else None
    if enc is None:
        return None
    r = edlib.align(enc[0], enc[1], mode="HW", task="path")
    start, _ = r["locations"][0]
    ranges, missing, anchored = _runs(r["cigar"], lo + start, len(key), STRICT_ANCHOR,
                                      STRICT_ANCHOR)
    if 2 * anchored < len(key):
        return None
    spans = [Span(s, e, len(key) - anchored, "fuzzy") for s, e in ranges]
    hay.mask(spans)
    for a, b in missing:
        pos = hay.find_exact(key[a:b], lo, hi)
        if pos >= 0:
            spans.append(Span(pos, pos + b - a, 0, "exact"))
            hay.mask(spans[-1:])
    return spans


def split_in_two(text: str) -> tuple[str, str] | None:
    """Cut near the middle, at the strongest boundary available in the middle half:
    a line break (a section of a structured abstract, a paragraph), a sentence end, a space."""
    text = text.strip()
    n = len(text)
    for pattern in (r"\n+", _SENTENCE_END.pattern, r"\s+"):
        cuts = [m.end() for m in re.finditer(pattern, text) if n / 4 <= m.end() <= 3 * n / 4]
        if cuts:
            cut = min(cuts, key=lambda c: abs(c - n / 2))
            return text[:cut], text[cut:]
    return None
