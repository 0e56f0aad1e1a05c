"""Pages whose text runs vertically, turned so that it runs left to right (issue 41).

Every rule of the grouping (lines on a baseline, columns side by side, tables of rows)
and of the labels reads text that runs left to right, lines going down the page. Two
kinds of page break that: vertical CJK writing (columns top to bottom, read right to
left) and a table or a page set sideways on an upright page (`\\rotatebox`, a
`sidewaystable` with no `/Rotate`: its lines run bottom to top, and follow each other
left to right). On such a page Poppler's lines stand on end: the grouping then joined
side by side what are consecutive lines (the whole page one line, read left to right)
and took a sideways table's rows for columns of a figure. Such a page is laid out in
its *reading frame*: the quarter turn that makes its lines run left to right, one
below the other, so that every rule sees it as it sees a page of upright text. Only
the frame the grouping and labels work in turns; the boxes written are Poppler's.

The evidence is the shape of Poppler's lines, which are long along their text: a page
is vertical when more of its words are in lines far taller than wide than in lines far
wider than tall. A page of upright text has a few tall lines at most (a margin stamp,
an axis title, a tall glyph), so looking costs two comparisons per line and a count per
page; the characters are read only on pages that pass, so that a column of single
glyphs (brackets, one-digit cells) is no evidence. The sense from the lines of several
words (first word to last, down or up); without it, top to bottom, as CJK is written.
"""

from __future__ import annotations

import numpy as np

from ..records import turn_boxes
from .geometry import Groups, expand

# a line far taller than wide (or wider than tall) by this factor: its text runs along
# that side (three characters of a proportional font are ~1.7 heights long)
LONG_SIDE = 1.5
# a tall line whose words average fewer characters is a tall glyph, not vertical text
VERTICAL_CHARS = 2.0
# a page is vertical on two such lines at least (one is a page number, "ii", or a stamp)
VERTICAL_LINES = 2
# turn (clockwise, `turn_boxes`) that makes text reading top to bottom (lines right to
# left: vertical CJK, text turned clockwise) or bottom to top (lines left to right: a
# table turned counter-clockwise) read left to right, lines top to bottom
TURN_DOWNWARD, TURN_UPWARD = 270, 90


def reading_turns(boxes: np.ndarray, lines: Groups, words: list[str], pages: int
                  ) -> np.ndarray:
    """Per page (index page - 1), the quarter turn into its reading frame: 0 for a page of
    upright text, else TURN_DOWNWARD or TURN_UPWARD. `lines` are Poppler's lines (or any
    runs inside lines) of the words `boxes`."""
    turns = np.zeros(pages, dtype=np.int64)
    w, h = lines.x1 - lines.x0, lines.y1 - lines.y0
    tall = h > LONG_SIDE * w
    if not tall.any():
        return turns
    size = pages + 1
    if lines.page.max() >= size:  # a word on a page the document lacks: the writer refuses it
        return turns
    wide_words = np.bincount(lines.page, lines.count * (w > LONG_SIDE * h), size)
    tall_words = np.bincount(lines.page, lines.count * tall, size)
    if not (tall_words > wide_words).any():
        return turns
    candidates = (tall_words > wide_words)[lines.page] & tall
    picked = candidates.nonzero()[0]
    first, count = lines.first[picked], lines.count[picked]
    chars = np.array([sum(map(len, words[s:s + c]))
                      for s, c in zip(first.tolist(), count.tolist())]) / count
    lettered = picked[chars >= VERTICAL_CHARS]
    if not len(lettered):
        return turns
    page = lines.page[lettered]
    vertical = ((np.bincount(page, lines.count[lettered], size) > wide_words)
                & (np.bincount(page, None, size) >= VERTICAL_LINES))
    # the sense: each line of several words from its first word's centre to its last's
    first, last = lines.first[lettered], lines.first[lettered] + lines.count[lettered] - 1
    step = (boxes[last, 1] + boxes[last, 3]) - (boxes[first, 1] + boxes[first, 3])
    weight = lines.count[lettered] * (lines.count[lettered] > 1)
    down = np.bincount(page, weight * (step > 0), size)
    up = np.bincount(page, weight * (step < 0), size)
    turns[:] = np.where(up > down, TURN_UPWARD, TURN_DOWNWARD)[1:]
    turns[~vertical[1:]] = 0
    return turns


def upright_frame(boxes: np.ndarray, sizes: list[tuple[float, float]], lines: Groups,
                  words: list[str]) -> tuple[np.ndarray, list[tuple[float, float]]] | None:
    """The boxes and page sizes with every vertical page in its reading frame
    (`reading_turns`), or None when no page is vertical (nothing copied)."""
    turns = reading_turns(boxes, lines, words, len(sizes))
    if not turns.any():
        return None
    return turn_pages(boxes, sizes, lines, turns)


def turn_pages(boxes: np.ndarray, sizes: list[tuple[float, float]], lines: Groups,
               turns: np.ndarray) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """`boxes` (a copy) and `sizes` with each page turned by `turns` (`reading_turns`)."""
    out = boxes.copy()
    sizes = list(sizes)
    for number in (turns.nonzero()[0] + 1).tolist():
        on = lines.page == number
        rows = expand(lines.first[on], lines.count[on])
        w, h = sizes[number - 1]
        out[rows], sizes[number - 1] = turn_boxes(boxes[rows], w, h, int(turns[number - 1]))
    return out, sizes
