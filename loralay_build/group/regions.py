"""The layout-group stage: Poppler's words in, the same words regrouped (and reordered so
every block is contiguous) out."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import cache
from itertools import accumulate, repeat
from typing import Literal

import numpy as np

from ..records import DisplayBoxes, Document, ReadBoxes, turn_boxes
from .blocks import extend_tables, paragraph_starts, table_regions
from .flow import output_order
from .geometry import (
    Groups,
    expand,
    merge_groups,
    run_sizes,
    run_starts,
    summarise,
)
from .lines import fragment_spaces, join_fragments, vertical_fragments
from .merge import merge_satellites
from .order import SMALL_PRINT, body_height, reading_order
from .upright import upright_frame

Grouping = Literal["geometry", "poppler"]
# an equation number: "(12)", "(3.19)", "(B.31)", "(2a)", perhaps followed by . or ,
EQUATION_NUMBER = re.compile(r"\([A-Za-z]{0,3}[.\-]?\d[\w.\-′']{0,6}\)[.,]?$")
# a number alone: "20", "-0.5", "1,000", "95%" (a chart's tick label, a table's cell)
NUMBER = re.compile(r"[-−+]?\d[\d.,]*%?$")
# what a NUMBER starts with
NUMBER_FIRST = frozenset("-−+0123456789")
# a table's empty cell
DASHES = frozenset({"-", "–", "—", "−"})
# a table's cell as `words_matching` reads it: a NUMBER or a dash alone
CELL_WORD = re.compile("^(?:" + NUMBER.pattern.removesuffix("$") + "|"
                       + "|".join(map(re.escape, sorted(DASHES))) + ")$", re.MULTILINE)
# a caption's label and number: "Figure 3.", "Fig. 2:", "Tabela 4", "TABLE 1:", "그림 1."
CAPTION_LABEL = re.compile(r"(fig(ure|ura)?s?|tab(le|la|ela)|quadro|chart|gr[aá]fic[oa]|"
                           r"esquema|scheme|plate|l[aá]mina|그림|표|도표)\.?$", re.IGNORECASE)
CAPTION_FIRST = frozenset("FfTtQqCcGgEeSsPpLl그표도")
# CAPTION_LABEL as `words_matching` reads it, the first character one of CAPTION_FIRST as
# it is (under IGNORECASE "ſ" would stand for "s"; a literal line break first, not an
# ignored case, lets the scan jump between words)
CAPTION_WORD = re.compile("^(?=[" + "".join(map(re.escape, sorted(CAPTION_FIRST))) + "])(?i:"
                          + CAPTION_LABEL.pattern + ")", re.MULTILINE)
CAPTION_NUMBER = re.compile(r"[A-Z]?\d+(\.\d+)?[a-z]?[.:]?$|[IVX]+[.:]?$")
GROUPINGS: tuple[Grouping, ...] = ("geometry", "poppler")
# in the tool version the run state fingerprints (as glyphs.GLYPH_RULE, pdf/preflight.py):
# bump when the geometric lines or blocks of any document change, so runs redo them
# 2: rotated pages laid out as read (issue 32); 3: page regions and columns (issue 33)
# 4: running headers and footers at their page's ends (issue 33); 5: vertical pages in
# their reading frame, for the labels of `groups: poppler` too (issue 41)
GROUP_RULE = "groups5"


def regroup(doc: Document, how: Grouping = "geometry") -> Document:
    """The document with the named grouping: "geometry" (ours) or "poppler" (as extracted)."""
    if how == "geometry":
        return group_layout(doc)
    if how == "poppler":
        return poppler_groups(doc)
    raise ValueError(f"unknown grouping {how!r}: expected one of {GROUPINGS}")


def poppler_groups(doc: Document) -> Document:
    """Poppler's own lines and blocks, words in Poppler's order (a copy, nothing moved)."""
    return _document_like(doc, list(doc.words), doc.boxes.copy(), list(doc.word_pages),
                          list(doc.line_ids), list(doc.block_ids))


@dataclass(frozen=True, slots=True)
class Grouped:
    """A document's words in a new order with their groups, as columns: what the grouping
    gives and the labels read (`labels.group_and_label`), before any per-word Python list
    is made; `document()` makes the `Document` once, when the order is final.

    The pages, line ids and block ids are kept per *run* (consecutive words of one page,
    line and block: a fragment of a line), not per word: moving blocks (the page
    furniture) then moves a few runs, and only the final document spells them out."""

    source: Document  # the document grouped (its id, pages and counters are kept)
    words: list[str]
    boxes: DisplayBoxes
    read_boxes: ReadBoxes | None  # the boxes as read (`read_frame`); None: `boxes` are
    run_count: np.ndarray  # words per run, runs in word order
    run_page: np.ndarray
    run_line: np.ndarray
    run_block: np.ndarray
    # the pages' sizes in `read_boxes`' frame when a vertical page was turned into its
    # reading frame (`upright.py`); None: each page's `read_size`
    read_sizes: list[tuple[float, float]] | None = None

    def __len__(self) -> int:
        return len(self.words)

    def frame(self) -> tuple[np.ndarray, list[tuple[float, float]]]:
        """The boxes and page sizes as read (`read_frame`), each vertical page in its
        reading frame (`upright.py`): the frame the grouping saw."""
        boxes = self.boxes if self.read_boxes is None else self.read_boxes
        if self.read_sizes is not None:
            return boxes, self.read_sizes
        return boxes, [p.read_size for p in self.source.pages]

    def run_starts(self) -> np.ndarray:
        """Each run's first word."""
        return self.run_count.cumsum() - self.run_count

    def reordered(self, runs: np.ndarray, words: np.ndarray) -> Grouped:
        """The runs in the order `runs` (their words, `words`, indices into this order),
        ids as they are; the words copied run by run (`_copied`)."""
        first = self.run_starts()[runs]
        moved = _copied(self.words, *_spans(first, first + self.run_count[runs]))
        return Grouped(self.source, moved, _rows(self.boxes, words),
                       None if self.read_boxes is None else _rows(self.read_boxes, words),
                       self.run_count[runs], self.run_page[runs], self.run_line[runs],
                       self.run_block[runs], self.read_sizes)

    def document(self, labels: list[int] | None = None) -> Document:
        """The `Document` (its word columns as lists; the boxes as read kept when a page
        was turned, for what reads the groups after; not when a vertical page was turned
        into its reading frame: those are no boxes as read, and whatever groups the
        document again finds that frame again from its boxes)."""
        count = self.run_count
        return _document_like(self.source, self.words, self.boxes,
                              self.run_page.repeat(count).tolist(),
                              self.run_line.repeat(count).tolist(),
                              self.run_block.repeat(count).tolist(),
                              self.read_boxes if self.read_sizes is None else None, labels)

    @classmethod
    def of(cls, doc: Document) -> Grouped:
        """A grouped document's columns (its words not copied)."""
        n = len(doc.words)
        boxes, sizes = read_frame(doc)
        pages = np.fromiter(doc.word_pages, np.int64, n)
        line_ids = np.fromiter(doc.line_ids, np.int64, n)
        block_ids = np.fromiter(doc.block_ids, np.int64, n)
        starts = run_starts(pages, line_ids, block_ids)
        turned = upright_frame(boxes, sizes, summarise(boxes, pages[starts], starts),
                               doc.words) if n else None
        if turned is not None:
            boxes, read_sizes = turned
        return cls(doc, doc.words, doc.boxes, None if boxes is doc.boxes else boxes,
                   run_sizes(starts, n), pages[starts], line_ids[starts],
                   block_ids[starts], None if turned is None else read_sizes)


def group_layout(doc: Document) -> Document:
    """Visual lines and blocks from the words' geometry, words reordered block by block.

    The words and their boxes and pages are Poppler's, unchanged; only their order and
    their line and block ids are new. Ids start at 0 and increase in reading order.
    Every rule sees a page in the frame its words were read in (a rotated page unturned,
    `Page.rotation`), so turning a page never changes its groups or order; a page whose
    text runs vertically is seen in its reading frame (`upright.py`)."""
    if not doc.words:
        return poppler_groups(doc)
    return group_columns(doc).document()


def group_columns(doc: Document) -> Grouped:
    """`group_layout`'s result as columns (`Grouped`); `doc` holds words."""
    boxes, sizes = read_frame(doc)
    frag_starts, frag_pages = _fragments(doc)
    frags = summarise(boxes, frag_pages, frag_starts)
    turned = upright_frame(boxes, sizes, frags, doc.words)
    if turned is not None:
        boxes, sizes = turned
        frags = summarise(boxes, frag_pages, frag_starts)
    vertical = vertical_fragments(boxes, frags, doc.words)
    if vertical.any():  # a rotated fragment's font size is its width
        frags = replace(frags, height=np.where(vertical, frags.x1 - frags.x0, frags.height))
    spaces, widest_inside = fragment_spaces(boxes, frag_starts)
    widths = np.array([0.0] + [w for w, _ in sizes])
    order, line_starts = join_fragments(frags, spaces, widths, vertical)
    lines = merge_groups(frags, order, line_starts)
    line_vertical = vertical[order[line_starts]]
    body = body_height(lines)  # the running text's size (the same for any order of lines)
    rank, chain_start = reading_order(lines, line_vertical, body)
    lead = frags.first[order[line_starts]][rank]  # each line's first word
    source_block = _rotated_blocks(doc.block_ids, lead, line_vertical[rank])
    widest = _widest_space(frags, order, line_starts, widest_inside)[rank]
    counts = lines.count[rank]
    single = (counts == 1).nonzero()[0]  # the one-word lines and their words
    lone = list(map(doc.words.__getitem__, lead[single].tolist()))
    numbered = _one_word_matches(EQUATION_NUMBER, lone, single, len(lead), frozenset("("))
    numeric = _one_word_matches(NUMBER, lone, single, len(lead), NUMBER_FIRST)
    ranked = _take(lines, rank)

    line_ends = np.append(line_starts[1:], len(order))

    def line_words(r: int) -> list[str]:
        """Line r's words (r in reading order), left to right."""
        j = int(rank[r])
        return [w for k in order[line_starts[j]:line_ends[j]].tolist()
                for w in doc.words[frags.first[k]:frags.first[k] + frags.count[k]]]

    def numeric_shares(rs: np.ndarray) -> np.ndarray:
        """The share of numbers (or dashes: an empty cell) among each line's words (the
        lines `rs`, in reading order)."""
        js = rank[rs]
        frag_n = line_ends[js] - line_starts[js]  # each line's fragments
        frag = order[expand(line_starts[js], frag_n)]
        per_frag = frags.count[frag]
        words = list(map(doc.words.__getitem__, expand(frags.first[frag], per_frag).tolist()))
        hits = words_matching(CELL_WORD, words).astype(np.int64)
        per_line = counts[rs]
        return np.add.reduceat(hits, per_line.cumsum() - per_line) / np.maximum(per_line, 1)

    def open_captions(heads: np.ndarray) -> np.ndarray:
        """Which of the lines `heads` open a caption: "Figure 3.", "Tabela 4 –", "표 1."
        (their first words are looked at first, in one scan: most lines are not captions)."""
        out = words_matching(CAPTION_WORD, list(map(doc.words.__getitem__,
                                                    lead[heads].tolist())))
        for k in out.nonzero()[0].tolist():
            out[k] = is_caption_start(line_words(int(heads[k]))[:3])
        return out

    block, table = _blocks(ranked, chain_start, boxes[lead, 2] - boxes[lead, 0], widest,
                           line_vertical[rank], source_block, counts, numbered, numeric,
                           numeric_shares)
    small = ranked.height < SMALL_PRINT * body
    out = output_order(ranked, block, table, small, open_captions)
    return _assemble(doc, frags, order, line_starts, rank, block, out, boxes,
                     None if turned is None else sizes)


def words_matching(pattern: re.Pattern[str], ws: list[str]) -> np.ndarray:
    """Which of the words `pattern` matches whole, in one scan: the words (which hold no
    line break) joined by line breaks and searched line by line (`pattern` is compiled
    with re.MULTILINE and anchored by ^ and $). The scan looks for the line breaks
    themselves (`_after_line_break`): the engine jumps from one to the next instead of
    testing ^ at every character. A match's word is the number of line breaks before
    it, counted from the match before (in C): matches are few, and measuring every word
    to place them cost more."""
    out = np.zeros(len(ws), dtype=bool)
    if not ws:
        return out
    text = "\n" + "\n".join(ws)
    at = [m.start() for m in _after_line_break(pattern).finditer(text)]
    if at:
        out[list(accumulate(map(text.count, repeat("\n"), [0, *at[:-1]], at)))] = True
    return out


@cache
def _after_line_break(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` (anchored by ^) with its ^ made a line break to match."""
    if not pattern.pattern.startswith("^"):
        raise ValueError(f"{pattern.pattern!r}: not anchored by ^")
    return re.compile("\n" + pattern.pattern[1:], pattern.flags)


def is_caption_start(words: list[str]) -> bool:
    """Whether a block opening with `words` is a caption: a label ("Figure", "Tabela",
    "그림", ...) and a number, the number ending in "." or ":" or followed by a dash or a
    colon ("Tabla 2 – Índices"); "Table 1 shows ..." is running text."""
    if len(words) < 2 or not CAPTION_LABEL.match(words[0]):
        return False
    number = words[1]
    if not CAPTION_NUMBER.match(number):
        return False
    return (number[-1] in ".:" or len(words) == 2
            or words[2] in DASHES or words[2] in (":", ".", "|"))


def read_frame(doc: Document) -> tuple[ReadBoxes, list[tuple[float, float]]]:
    """The words' boxes and the pages' sizes in the frame the words were read in: the
    boxes as read when extraction kept them (`Document.read_boxes`), `doc`'s own boxes
    when no page was turned for display (neither copied), else each turned page's boxes
    turned back (by the rest of the full turn, `turn_boxes`; turning there and back moves
    a box by rounding, ~1e-13 pt, which can tip a rule sitting exactly on its threshold)."""
    sizes = [p.read_size for p in doc.pages]
    if doc.read_boxes is not None:
        return doc.read_boxes, sizes
    if not any(p.rotation for p in doc.pages):
        return doc.boxes, sizes
    per_page = np.array([(0.0, 0.0, 0.0)] + [(p.width, p.height, p.rotation)
                                             for p in doc.pages])
    w, h, rotation = per_page[np.asarray(doc.word_pages, dtype=np.int64)].T
    boxes = doc.boxes.copy()
    for r in (90, 180, 270):
        on = rotation == r
        if on.any():
            boxes[on] = turn_boxes(doc.boxes[on], w[on], h[on], 360 - r)[0]
    return boxes, sizes


def _fragments(doc: Document) -> tuple[np.ndarray, np.ndarray]:
    """Where each of Poppler's lines (a run of one line id) starts in the word order, and
    its page. Poppler's line ids never repeat across pages, so the pages are only read at
    the runs' ends (`_run_pages`); a document where they do is cut at every page change
    too."""
    n = len(doc.words)
    line_ids = np.fromiter(doc.line_ids, np.int64, n)
    starts = run_starts(line_ids)
    pages = _run_pages(doc, starts)
    if pages is not None:
        return starts, pages
    page_arr = np.asarray(doc.word_pages, dtype=np.int64)
    starts = run_starts(line_ids, page_arr)
    return starts, page_arr[starts]


def _run_pages(doc: Document, starts: np.ndarray) -> np.ndarray | None:
    """The page of each run of words (from `starts`), or None when a run's first and last
    words are on two pages. Extraction gives the words page by page: then the pages'
    own runs (`Document.page_starts`: a sorted copy compared, a binary search per page,
    ~2 ns a word, against ~16 for looking up both ends of every run) show that no page
    starts inside a run."""
    pages = doc.word_pages
    if sorted(pages) == pages:
        bounds = np.asarray(doc.page_starts(), dtype=np.int64)
        if bounds[0] == 0 and bounds[-1] == len(pages):  # every word on one of its pages
            filled = (bounds[:-1] < bounds[1:]).nonzero()[0]
            run = starts.searchsorted(bounds[filled])
            if (starts[np.minimum(run, len(starts) - 1)] != bounds[filled]).any():
                return None
            return (filled + 1).repeat(run_sizes(run, len(starts)))
    first = np.fromiter(map(pages.__getitem__, starts.tolist()), np.int64, len(starts))
    ends = np.append(starts[1:], len(pages)) - 1
    last = np.fromiter(map(pages.__getitem__, ends.tolist()), np.int64, len(starts))
    return first if (first == last).all() else None


def _widest_space(frags: Groups, order: np.ndarray, line_starts: np.ndarray,
                  inside: np.ndarray) -> np.ndarray:
    """Per line (in `order`'s line numbering), its widest space between consecutive words:
    inside one of its fragments, or between two fragments it joined."""
    between = np.full(len(order), -np.inf)
    between[1:] = frags.x0[order[1:]] - frags.x1[order[:-1]]
    between[line_starts] = -np.inf
    return np.maximum(np.maximum.reduceat(between, line_starts),
                      np.maximum.reduceat(inside[order], line_starts))


def _assemble(doc: Document, frags: Groups, order: np.ndarray, line_starts: np.ndarray,
              rank: np.ndarray, block: np.ndarray, out: np.ndarray, read_boxes: ReadBoxes,
              read_sizes: list[tuple[float, float]] | None = None) -> Grouped:
    """The words block by block, line by line in `out` (`flow.output_order`), each
    line's fragments left to right, each fragment's words in Poppler's order.
    `line_starts` are the lines' first fragments in `order` (join_fragments'
    numbering); `block` labels the lines in reading order (`rank`); `out` is that
    numbering in output order (each block's lines together)."""
    n_lines = len(rank)
    line_order = rank[out]  # the lines (join_fragments' numbering) in output order
    frags_per_line = run_sizes(line_starts, len(order))[line_order]
    # the fragments line by line in output order (a line's are together in `order`)
    seq = order[expand(line_starts[line_order], frags_per_line)]
    counts = frags.count[seq]
    first = frags.first[seq]
    perm = expand(first, counts)
    block_out = block[out]
    new_block = np.concatenate(([0], block_out[1:] != block_out[:-1])).cumsum()
    # the boxes as read travel with the words when a page was turned, so what reads the
    # groups after (the labels) sees the page as the grouping did
    read = None if read_boxes is doc.boxes else _rows(read_boxes, perm)
    # each fragment (in `seq`) a run: its line and block numbered in output order
    return Grouped(doc, _copied(doc.words, *_spans(first, first + counts)), _rows(doc.boxes, perm),
                   read, counts, frags.page[seq], np.arange(n_lines).repeat(frags_per_line),
                   new_block.repeat(frags_per_line), read_sizes)


def _rotated_blocks(block_ids: list[int], lead: np.ndarray, vertical: np.ndarray
                    ) -> np.ndarray:
    """Each line's Poppler block (its first word's, `lead`), read for the rotated lines
    only (the others 0): only two rotated lines in a row compare their blocks
    (`blocks.stack_breaks`), and a list lookup for every line cost ~1 % of the step."""
    out = np.zeros(len(lead), dtype=np.int64)
    rotated = vertical.nonzero()[0]
    if len(rotated):
        out[rotated] = list(map(block_ids.__getitem__, lead[rotated].tolist()))
    return out


def _one_word_matches(pattern: re.Pattern[str], lone: list[str], single: np.ndarray,
                      n: int, first: frozenset[str]) -> np.ndarray:
    """Which of `n` lines are one word matching `pattern` (an equation's number, a number):
    `single` are the one-word lines, `lone` their words; `first` holds every character a
    match can start with (a set lookup spares most words the regex)."""
    out = np.zeros(n, dtype=bool)
    out[single] = [w[:1] in first and bool(pattern.match(w)) for w in lone]
    return out


def _blocks(lines: Groups, chain_start: np.ndarray, first_width: np.ndarray,
            widest: np.ndarray, vertical: np.ndarray, source_block: np.ndarray,
            word_counts: np.ndarray, numbered: np.ndarray, numeric: np.ndarray,
            numeric_shares: Callable[[np.ndarray], np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray]:
    """Block label per line (reading order): paragraphs, then table regions over them
    (grown by rows of numbers), then satellites joined to their blocks; and which lines
    are a table region's."""
    starts = paragraph_starts(lines, chain_start, first_width, vertical, source_block)
    block = starts.cumsum() - 1
    region = extend_tables(lines, table_regions(lines, np.where(vertical, 0.0, widest)),
                           numeric_shares)
    inside = region >= 0
    block = np.where(inside, region + len(block), block)
    return merge_satellites(lines, word_counts, block, vertical, numbered, numeric), inside


def _spans(start: np.ndarray, stop: np.ndarray) -> tuple[list[int], list[int]]:
    """The ranges start[k]..stop[k] (stop exclusive) with each range that continues the
    one before joined to it, as two lists."""
    opens = np.ones(len(start), dtype=bool)
    opens[1:] = start[1:] != stop[:-1]
    closes = np.ones(len(start), dtype=bool)
    closes[:-1] = opens[1:]
    return start[opens].tolist(), stop[closes].tolist()


def _copied(words: list[str], first: list[int], last: list[int]) -> list[str]:
    """words[first[0]:last[0]] + words[first[1]:last[1]] + ...: a new word order keeps
    long runs of Poppler's (whole lines and paragraphs), a slice copies a run in C, and
    extending the list by it costs about half of `list(chain(...))`, which takes the
    words one by one (and, even for runs of 4-8 words, no more than a list comprehension
    over the indices)."""
    out: list[str] = []
    for a, b in zip(first, last):
        out += words[a:b]
    return out


def _rows(boxes: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """boxes[idx] (rows): `take` copies a row whole, 5-7x faster than the fancy index
    (NumPy 2), which copies element by element."""
    return boxes.take(idx, axis=0)


def _take(g: Groups, idx: np.ndarray) -> Groups:
    """The groups `idx`, in that order."""
    return Groups(*(getattr(g, f.name)[idx] for f in fields(Groups)))


def _document_like(doc: Document, words: list[str], boxes: DisplayBoxes,
                   pages: list[int], line_ids: list[int], block_ids: list[int],
                   read_boxes: ReadBoxes | None = None,
                   labels: list[int] | None = None) -> Document:
    """A new Document with these word columns and `doc`'s id, pages and counters (the raw
    bytes of broken words are the glyph repair's, spent by now: not carried)."""
    return Document(id=doc.id, pages=doc.pages, words=words, boxes=boxes, word_pages=pages,
                    line_ids=line_ids, block_ids=block_ids, labels=labels or [],
                    dropped_invisible=doc.dropped_invisible, read_boxes=read_boxes,
                    words_repaired=doc.words_repaired, words_unrepaired=doc.words_unrepaired,
                    ocr_pages=doc.ocr_pages, ocr_seconds=doc.ocr_seconds)
