"""Locating an abstract in a document's key text: exact, then edlib, then in pieces.

Everything here works on key strings (see normalise.py): letters and digits only, so the
edit budget is spent on real disagreements. edlib's infix ("HW") alignment is the fuzzy
step (performance.md §4: linear in text x abstract / 64, insensitive to noise and to
repetition, and with a distance bound it returns nothing for an absent abstract).

An alignment is read as *pieces*. Its anchors are runs of >= ANCHOR equal characters
(unrelated texts agree on runs of 1-3 characters by chance, rarely on more); consecutive
anchors stay in one piece unless the body holds >= JUNK characters more than the abstract
between them (a footer and the next page's running head, a keyword box, a side column's
line: *junk*, which stays in the body) or the abstract has >= GAP characters that the
alignment does not match there. A piece must be solid (>= MIN_PIECE characters matched,
at most twice the edit ratio unmatched inside it), else it is chance and dissolves. The
abstract's characters outside every solid piece are *unplaced*: each stretch of >= GAP of
them is looked for on its own, near the pieces first (on the next page, or before the
rest when the reading order puts its block first); when it is not near, it is paid for
if the budget allows, else looked for far from the pieces on the main piece's page and
the page before (after the next heading, after the other column), never farther: that is
the body, where authors repeat their abstract (`_elsewhere`); and near or far, only where
it fills its printed lines, as a continuation does and a body sentence does not
(`Haystack.fills_lines`). When it is not found whole,
it is looked for by halves down to `min_chars` (a part read line by line with a side
column's lines, which an alignment substitutes rather than skips); a shorter stretch (a
last line of one word) only exactly, next to its pieces; what is still placed nowhere
counts as edits.

The budget is the whole abstract's: the edits inside its pieces plus every unplaced
character must stay within `Budget.edits(len(abstract))`, in at most MAX_PIECES pieces.
Junk between pieces costs nothing because it is not cut: the words between two pieces
stay in the body. So an abstract printed in a few parts costs what it costs printed in
one, while an absent abstract, whose alignment has no solid piece, costs its whole
length: the paper is dropped, never cut somewhere it does not match.

Two passes: the alignment bounded by the budget over the whole text (cheap, and enough
when the junk inside the abstract fits in the budget: "fuzzy"); when it fails, the
unbounded alignment in the window where the abstract aligns best, whose junk is free
("split", as is every part found on its own). Further copies (`more_copies`) get the
second pass only where most of the abstract is printed word for word in one place, and
a copy in pieces spread over more than twice its length is not a copy.
The second pass is what a page break needs: a footer and running head of 36 characters
inside a Korean abstract of 90 are more junk than any honest budget, but both parts are
intact. (It replaced a search that halved the abstract down to pieces of
`min_chars` and settled up to a quarter of it loosely: a short abstract had no pieces
to halve into, parts in another order or beyond a fixed window were not looked for, and
a part that an alignment left out and that was not found nearby was silently dropped.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import edlib
import numpy as np

from .normalise import is_heading, text_key

_CIGAR = re.compile(r"(\d+)([=XID])")
# Matches this long are anchors; shorter ones are chance (aligned with each other, the
# corpus's unrelated English abstracts agree on 1-3 characters 35 times as often as on 4+).
ANCHOR = 4
# When the body has this many key characters more than the abstract between two anchors,
# they are layout junk (a footer and a running head, a caption, a side box's line: kept
# in the body); fewer (a page number, a short word the metadata lost) go with the abstract.
JUNK = 12
# A stretch of this many key characters of the abstract that the alignment does not match
# is looked for on its own (printed elsewhere, e.g. after a page break); shorter ones
# (a word split by a page break) are edits.
GAP = 12
# Matched characters a piece needs to stand on its own (chance anchors between unrelated
# texts rarely chain to 16); and how many pieces an abstract may be printed in.
MIN_PIECE = 16
MAX_PIECES = 12
# How deep an unplaced part is itself looked for in pieces.
MAX_DEPTH = 2
NEAR = 2000  # key characters around the abstract where its parts are looked for first


@dataclass(frozen=True, slots=True)
class Budget:
    """Edits allowed for a needle: relative to its length, capped, and a floor on length."""

    ratio: float = 0.15
    max_edits: int = 60
    min_chars: int = 40

    def edits(self, n: int) -> int:
        return min(self.max_edits, int(self.ratio * n))


@dataclass(frozen=True, slots=True)
class Lines:
    """For every character of a key text: the first and end character of its word and of
    its printed line (`Lines.of`)."""

    word_begin: np.ndarray
    word_end: np.ndarray
    line_begin: np.ndarray
    line_end: np.ndarray

    @classmethod
    def of(cls, lengths: np.ndarray, line_keys: np.ndarray) -> Lines:
        """From each word's key length and its line's identity (words in reading order)."""
        ends = np.cumsum(lengths)
        word = np.repeat(np.arange(len(lengths)), lengths)
        begins = ends - lengths
        # a line is a run of words with one identity; words with empty keys hold no character
        new = np.concatenate(([True], line_keys[1:] != line_keys[:-1])) if len(lengths) \
            else np.zeros(0, dtype=bool)
        run = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        line_begin = begins[starts]
        line_end = np.append(begins[starts[1:]], ends[-1] if len(ends) else 0)
        of_char = run[word]
        return cls(begins[word], ends[word], line_begin[of_char], line_end[of_char])


@dataclass(frozen=True, slots=True)
class Span:
    """Character range [start, end) of the key text that belongs to the abstract."""

    start: int
    end: int
    distance: int
    method: str  # "exact" | "fuzzy" | "split"


class Haystack:
    """A key text with its code points ready for edlib (which wants <= 256 symbols).

    Every body character that does not occur in the needle is mapped to one symbol that
    is not in the needle either: it can never match, so distances are unchanged, and a
    Korean or Chinese body with thousands of distinct characters still fits edlib's alphabet.
    """

    def __init__(self, text: str, pages: np.ndarray | None = None,
                 lines: Lines | None = None) -> None:
        self.text = text
        self.codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        self.masked = np.zeros(len(text), dtype=bool)  # spans already given to an abstract
        self.pages = pages  # the page of every character, or None: all on one page
        self.lines = lines  # where words and printed lines start and end, or None: unknown

    def fills_lines(self, span: Span, before: str = "", after: str = "") -> bool:
        """Whether `span` shares no printed line with the body: what its first line holds
        before it is the abstract's (masked, or the abstract's text just before the part,
        `before`) or its heading ("Abstract:" run in), and what its last line holds after
        it is the abstract's too (masked, or `after`, the text that follows the part). A
        part of an abstract printed apart from the rest (after a page break, the other
        column, a box) starts and ends its lines; the same sentence in the introduction or
        the conclusion shares its lines with the paragraph around it. Without lines (a bare
        word list), every span does."""
        ln = self.lines
        if ln is None or span.end <= span.start:
            return True
        # the line's words around the part's own (the edge words whole: an alignment may
        # start or end inside a word), up to the nearest masked character
        head, start = int(ln.line_begin[span.start]), int(ln.word_begin[span.start])
        held = np.flatnonzero(self.masked[head:start])
        rest = self.text[head + (int(held[-1]) + 1 if len(held) else 0):start]
        if rest and not before.endswith(rest + self.text[start:span.start]) and not (
                not len(held) and is_heading(rest)):
            return False
        tail, end = int(ln.line_end[span.end - 1]), int(ln.word_end[span.end - 1])
        held = np.flatnonzero(self.masked[end:tail])
        rest = self.text[end:end + (int(held[0]) if len(held) else tail - end)]
        return not rest or after.startswith(self.text[span.end:end] + rest)

    def scope(self, lo: int, hi: int) -> tuple[int, int]:
        """From the first to the last character of the pages that [lo, hi) touches and of
        the page before them: where a part of an abstract whose main piece is [lo, hi) may
        lie far from its pieces (`_elsewhere`). An abstract crosses at most one page break,
        and when its main piece is the part after the break, its first lines are on the
        page before, possibly far back (the other column read first); the pages after the
        main piece's are the paper's body, where authors repeat their abstract. Pages need
        not come in order (a layout stage may move a block)."""
        if self.pages is None or hi <= lo:
            return 0, len(self.text)
        touched = self.pages[lo:hi]
        first, last = int(touched.min()) - 1, int(touched.max())
        on = np.flatnonzero((self.pages >= first) & (self.pages <= last))
        return int(on[0]), int(on[-1]) + 1

    def mask(self, spans: list[Span]) -> None:
        for s in spans:
            self.masked[s.start:s.end] = True

    def find_exact(self, needle: str, lo: int, hi: int) -> int:
        """First exact occurrence in [lo, hi) that touches no masked character, or -1."""
        pos = self.text.find(needle, lo, hi)
        while pos >= 0 and self.masked[pos:pos + len(needle)].any():
            pos = self.text.find(needle, pos + 1, hi)
        return pos

    def find_last(self, needle: str, lo: int, hi: int) -> int:
        """Last exact occurrence in [lo, hi) that touches no masked character, or -1."""
        pos = self.text.rfind(needle, lo, hi)
        while pos >= 0 and self.masked[pos:pos + len(needle)].any():
            pos = self.text.rfind(needle, lo, pos + len(needle) - 1)
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


@dataclass(frozen=True, slots=True)
class Piece:
    """A solid part of an alignment: needle [qs, qe) on body [ts, te), with its edits."""

    qs: int
    qe: int
    ts: int
    te: int
    edits: int


def pieces(cigar: str, t0: int, qlen: int, ratio: float) -> list[Piece]:
    """The solid pieces of an alignment of a needle of `qlen` characters starting at body
    position `t0` (see the module docstring): anchors chained while the body between them
    holds < JUNK characters more than the needle, and the needle < GAP; a chain is a piece
    when it matches >= MIN_PIECE characters (or the whole needle) and leaves at most
    twice `ratio` of its needle span unmatched. The first and last piece reach the ends
    of the alignment when fewer than GAP needle characters lie beyond them with fewer than
    ANCHOR edits (the part of a word before the first anchor)."""
    chains: list[list[int]] = []  # qs, qe, ts, te, edits, matched
    t, q, edits, head = t0, 0, 0, 0
    ops = _CIGAR.findall(cigar)
    for count, op in ops:
        n = int(count)
        if op == "=" and n >= ANCHOR:
            last = chains[-1] if chains else None
            gap = q - last[1] if last is not None else 0
            if last is not None and gap < GAP and t - last[3] - gap < JUNK:
                last[1], last[3] = q + n, t + n
                last[4] += edits
                last[5] += n
            else:
                head = edits if last is None else head
                chains.append([q, q + n, t, t + n, 0, n])
            edits = 0
        elif op != "=":
            edits += n
        t += 0 if op == "I" else n
        q += 0 if op == "D" else n
    if not chains:
        return []
    # the alignment's own ends: a first or last few characters that differ a little (a lost
    # ligature, a glued label), not ones that the alignment only put somewhere
    first, last = chains[0], chains[-1]
    if 0 < first[0] < GAP and first[2] - t0 < JUNK and head < ANCHOR:
        first[4] += max(first[0], first[2] - t0)
        first[0], first[2] = 0, t0
    if 0 < qlen - last[1] < GAP and t - last[3] < JUNK and edits < ANCHOR:
        last[4] += max(qlen - last[1], t - last[3])
        last[1], last[3] = qlen, t
    floor = min(MIN_PIECE, qlen)
    return [Piece(c[0], c[1], c[2], c[3], c[4]) for c in chains
            if c[5] >= floor and c[1] - c[0] - c[5] <= 2 * ratio * (c[1] - c[0])]


@dataclass(slots=True)
class Found:
    """Where a needle is: its spans, what it cost (edits inside the pieces plus needle
    characters placed nowhere) and in how many pieces."""

    spans: list[Span]
    cost: int
    count: int


def locate(hay: Haystack, abstract: str, budget: Budget) -> list[Span] | None:
    """Spans of the key text holding `abstract`, or None when it is not (all) there."""
    saved = hay.masked.copy()
    found = find(hay, text_key(abstract), 0, len(hay.text), budget, 0)
    hay.masked[:] = saved  # the caller masks what it keeps
    return None if found is None else found.spans


def more_copies(hay: Haystack, abstract: str, budget: Budget, limit: int = 3
                ) -> list[list[Span]]:
    """Further copies of an abstract (a thesis may print it twice), masked spans excluded,
    each as its spans, within the whole abstract's budget like the first. A copy is
    printed in one place: in pieces only when its text, from its first piece to its last,
    is at most twice its length, i.e. what lies between the pieces (a page break, a block
    the layout moved) is less than the copy itself. With the abstract's own text cut,
    what is left of its sentences is mostly the authors repeating them (an introduction
    restating it sentence by sentence), and pieces far apart would gather those."""
    key, copies = text_key(abstract), []
    for _ in range(limit):
        # in pieces only where most of it is printed word for word in one place: the
        # unbounded pass costs more than the rest of stripping
        saved = hay.masked.copy()
        found = find(hay, key, 0, len(hay.text), budget, 0 if _copy_likely(hay, key)
                     else MAX_DEPTH)
        if found is None:
            break
        if max(s.end for s in found.spans) - min(s.start for s in found.spans) > 2 * len(key) \
                or len(found.spans) > 1 and not all(map(hay.fills_lines, found.spans)):
            hay.masked[:] = saved  # sentences spread over the body, or inside it: not a copy
            break
        copies.append(found.spans)  # find() left them masked
    return copies


def _copy_likely(hay: Haystack, key: str, n: int = 5, size: int = 20) -> bool:
    """Whether all but one of `n` stretches of `size` characters spread over `key` are in
    the text (unmasked) word for word, within twice the length of `key` (a copy's bound,
    `more_copies`)."""
    if len(key) < n * size:
        return False
    step = (len(key) - size) // (n - 1)
    found = [hay.find_exact(key[i:i + size], 0, len(hay.text))
             for i in range(0, len(key) - size + 1, step)[:n]]
    at = [p for p in found if p >= 0]
    return len(at) >= n - 1 and max(at) - min(at) <= 2 * len(key)


def find(hay: Haystack, key: str, lo: int, hi: int, budget: Budget, depth: int,
         scope: tuple[int, int] | None = None) -> Found | None:
    """`key` in [lo, hi) within its budget, masked there on success; None otherwise.

    Exact first; a needle shorter than `min_chars` is only ever matched exactly (too short
    to trust a fuzzy match). Then the alignment bounded by the budget, then (unless `depth`
    is MAX_DEPTH: a part of a part of a part) the unbounded one in the window where the
    needle aligns best. `scope`: where a part of the needle may be looked for far from
    its pieces (None: the pages of its main piece and the one before, `Haystack.scope`)."""
    pos = hay.find_exact(key, lo, hi)
    if pos >= 0:
        spans = [Span(pos, pos + len(key), 0, "exact")]
        hay.mask(spans)
        return Found(spans, 0, 1)
    k = budget.edits(len(key))
    if len(key) < budget.min_chars or k <= 0:
        return None
    enc = hay.encode(key, lo, hi)
    if enc is None:
        return None
    found = _aligned(hay, key, lo, enc, budget, depth, k, "fuzzy", (lo, hi), scope)
    if found is not None or depth >= MAX_DEPTH:
        return found
    # a failed alignment leaves the mask as it found it, so `enc` still holds: the window
    # is a slice of it (what `hay.encode(key, wlo, whi)` would give)
    wlo, whi = _window(key, lo, hi, enc)
    if (wlo, whi) != (lo, hi):
        enc = enc[0], enc[1][wlo - lo:whi - lo]
    return _aligned(hay, key, wlo, enc, budget, depth, None, "split", (lo, hi), scope)


def _aligned(hay: Haystack, key: str, lo: int, enc: tuple[bytes, bytes], budget: Budget,
             depth: int, k: int | None, method: str, bounds: tuple[int, int],
             scope: tuple[int, int] | None) -> Found | None:
    """One alignment of `key` (encoded by `hay.encode` over a window starting at `lo`)
    within k edits, or unbounded, read as pieces, its unplaced parts looked for on their
    own; None when over the budget. `bounds`: the range the needle is looked for in; its
    parts are looked for near it within that range only, so that a part found near
    (itself a part of the abstract) cannot carry the search farther away."""
    r = edlib.align(enc[0], enc[1], mode="HW", task="path", k=-1 if k is None else k)
    if r["editDistance"] < 0 or not r["cigar"]:
        return None
    t0 = lo + r["locations"][0][0]
    parts = pieces(r["cigar"], t0, len(key), budget.ratio)
    limit = budget.edits(len(key))
    cost = sum(p.edits for p in parts)
    if not parts or cost > limit:
        return None
    spans = [Span(p.ts, p.te, p.edits, method) for p in parts]
    saved = hay.masked.copy()
    hay.mask(spans)
    near = (max(bounds[0], parts[0].ts - len(key) - NEAR),
            min(bounds[1], parts[-1].te + len(key) + NEAR))
    if scope is None:  # the pages of its main piece: the one holding most of the needle
        main = max(parts, key=lambda p: p.qe - p.qs)
        scope = hay.scope(main.ts, main.te)
    count, lost = len(parts), 0
    ends = [0] + [e for p in parts for e in (p.qs, p.qe)] + [len(key)]
    for i, (a, b) in enumerate(zip(ends[::2], ends[1::2], strict=True)):
        if b <= a:
            continue
        if b - a >= GAP and depth > MAX_DEPTH:  # a part of a part of a part of a part
            extra, unplaced = None, b - a
        elif b - a >= GAP:  # near the rest, else paid, else far on the abstract's pages
            extra, unplaced = _elsewhere(hay, key[a:b], near, scope, budget, depth,
                                         (key[:a], key[b:]),
                                         limit - cost)
        else:  # a word or two cut off by junk, e.g. the abstract's last line
            extra = _beside(hay, key[a:b], parts, i)
            unplaced = b - a if extra is None else 0
        if extra is not None:
            cost += extra.cost
            count += extra.count
            spans.extend(Span(s.start, s.end, s.distance, "split") for s in extra.spans)
        cost += unplaced
        lost += unplaced
        if cost > limit or count > MAX_PIECES:
            hay.masked[:] = saved
            return None
    spans.sort(key=lambda s: s.start)
    joined = [spans[0]]
    for s in spans[1:]:  # a remnant found next to its piece lengthens it
        last = joined[-1]
        if s.start == last.end:
            joined[-1] = Span(last.start, s.end, last.distance + s.distance,
                              "split" if "split" in (last.method, s.method) else last.method)
        else:
            joined.append(s)
    first = joined[0]  # the characters placed nowhere are edits too: the first span says so
    joined[0] = Span(first.start, first.end, first.distance + lost, first.method)
    return Found(joined, cost, count)


def _elsewhere(hay: Haystack, part: str, near: tuple[int, int], scope: tuple[int, int],
               budget: Budget, depth: int, context: tuple[str, str], room: int,
               whole: bool = True
               ) -> tuple[Found | None, int]:
    """An unplaced part of >= GAP characters looked for on its own: near its pieces (a
    page break, a box, a moved block); else, only when its characters cost more than the
    `room` left in the budget and it is long enough to be trusted alone, far from them on
    the abstract's pages (`scope`: the main piece's page and the one before it; a block
    the reading order put after the other column or the next heading). A part that fits
    the room is never taken from far away: it is paid for as printed nowhere, since far
    from the abstract the same words are the authors repeating it (an introduction, a
    conclusion). When not found whole, the part
    is halved and each half looked for near (a part read line by line with a side column's
    lines between, which an alignment substitutes rather than skips), down to halves of
    `min_chars`. Found whole or by halves, the part is taken only where it fills its
    printed lines (`_apart`; `context`: the abstract's text before and after it, which
    may share them). What was found, and how many characters of `part` are placed
    nowhere; stops once those exceed `room`."""
    if whole:
        found = _apart(hay, part, near, budget, depth + 1, scope, context)
        if found is None and len(part) > room and len(part) >= budget.min_chars:
            found = _apart(hay, part, scope, budget, depth + 1, scope, context)
    else:
        found = find(hay, part, near[0], near[1], budget, MAX_DEPTH, scope)
    if found is not None:
        return found, 0
    if len(part) < 2 * budget.min_chars:
        return None, len(part)
    saved = hay.masked.copy()
    halves = _halves(hay, part, near, scope, budget, depth, context, room)
    if whole and halves[0] is not None and not _fills(hay, halves[0], context):
        hay.masked[:] = saved  # halves of a body sentence: placed nowhere
        return None, len(part)
    return halves


def _apart(hay: Haystack, part: str, where: tuple[int, int], budget: Budget, depth: int,
           scope: tuple[int, int], context: tuple[str, str], tries: int = 3) -> Found | None:
    """`find` of a part in `where`, taken only where it fills its printed lines
    (`Haystack.fills_lines`): a copy that shares its lines with the body (the introduction
    restating a sentence, the conclusion repeating it) is set aside and the next one
    looked for, up to `tries` copies."""
    saved = hay.masked.copy()
    refused: list[Span] = []
    found = None
    for _ in range(tries):
        found = find(hay, part, where[0], where[1], budget, depth, scope)
        if found is None or _fills(hay, found, context):
            break
        refused.extend(found.spans)  # left masked while the next copy is looked for
        found = None
    for s in refused:
        hay.masked[s.start:s.end] = saved[s.start:s.end]
    return found


def _fills(hay: Haystack, found: Found, context: tuple[str, str]) -> bool:
    """Whether every span of a part fills its lines; `context`: the abstract's text before
    and after the part."""
    return all(hay.fills_lines(s, *context) for s in found.spans)


def _halves(hay: Haystack, part: str, near: tuple[int, int], scope: tuple[int, int],
            budget: Budget, depth: int, context: tuple[str, str], room: int
            ) -> tuple[Found | None, int]:
    """`part` looked for by halves near its pieces (`_elsewhere`)."""
    mid = len(part) // 2
    one, lost = _elsewhere(hay, part[:mid], near, scope, budget, depth,
                           (context[0], part[mid:] + context[1]), room, False)
    if lost > room:
        return one, lost + len(part) - mid
    two, lost_two = _elsewhere(hay, part[mid:], near, scope, budget, depth,
                               (context[0] + part[:mid], context[1]), room - lost, False)
    both = [f for f in (one, two) if f is not None]
    if not both:
        return None, lost + lost_two
    return Found([s for f in both for s in f.spans], sum(f.cost for f in both),
                 sum(f.count for f in both)), lost + lost_two


def _beside(hay: Haystack, part: str, parts: list[Piece], i: int) -> Found | None:
    """A short unplaced part (< GAP characters) printed on the other side of junk: an
    alignment never skips junk for it (substituting a few characters is cheaper), so it
    is looked for exactly where such a remnant is. Between two pieces: right after the
    first or right before the second, else (>= ANCHOR characters) the first copy between
    them; before the first piece or after the last (>= ANCHOR characters): the nearest copy
    within NEAR."""
    n = len(part)
    if 0 < i < len(parts):
        lo, hi = parts[i - 1].te, parts[i].ts
        if hi - lo < n:
            return None
        pos = lo if hay.find_exact(part, lo, lo + n) == lo else \
            hi - n if hay.find_exact(part, hi - n, hi) == hi - n else \
            hay.find_exact(part, lo, hi) if n >= ANCHOR else -1
    elif n < ANCHOR:
        return None
    elif i == 0:
        pos = hay.find_last(part, max(0, parts[0].ts - NEAR), parts[0].ts)
    else:
        lo = parts[-1].te
        pos = hay.find_exact(part, lo, min(len(hay.text), lo + NEAR))
    if pos < 0:
        return None
    spans = [Span(pos, pos + n, 0, "split")]
    hay.mask(spans)
    touching = any(pos == p.te or pos + n == p.ts for p in parts)
    return Found(spans, 0, 0 if touching else 1)  # next to a piece, it only lengthens it


def _window(key: str, lo: int, hi: int, enc: tuple[bytes, bytes]) -> tuple[int, int]:
    """Where the needle aligns best in [lo, hi) (encoded as `enc`) at any cost, widened by
    its length and NEAR: the pieces are looked for there, so that a sentence the authors
    repeat elsewhere cannot draw a piece away."""
    r = edlib.align(enc[0], enc[1], mode="HW", task="locations")
    if not r["locations"]:
        return lo, hi
    start, end = r["locations"][0]
    pad = len(key) + NEAR
    return max(lo, lo + start - pad), min(hi, lo + end + 1 + pad)
