"""Reading order of visual lines: page regions, then columns, then down each column.

Why not Poppler's order: where its flow analysis fails it reads a page row by row across
two columns, reads the right column first after a float or a full-width band, or puts a
figure's labels in the middle of a paragraph. Why not down-chains ordered by Poppler's
first word (the previous rule): the chains were right, their order was Poppler's.

The order here is geometric, a recursive cut of each page's line boxes (`_cut`):

1. Where a vertical white strip crosses the whole set of lines (no line's box crosses it,
   a gap of at least `GUTTER` points) and the parts stand side by side (their vertical
   extents overlap), the set is columns: read left to right, each cut again.
2. Otherwise the lines are cut into horizontal bands where no line's core (its mean word
   height around its mean centre, so tight leading still parts two lines) spans the cut.
   Consecutive bands are joined while their union is still columns (the same columns
   continue), so a full-width title, figure, table or footer is a band of its
   own and the columns between two such bands are one region, read column by column.
   Regions and bands are read top to bottom.
3. A set with neither is read by centre, then left edge.

Floats and footnotes between two columns' text leave the flow (`_out_of_flow`): small
print (under `SMALL_PRINT` of the running text's size) at the foot of a column that has a
next one, or at the head of a column that has a previous one, is read after the region's
last column, so a paragraph running on across the columns is read whole.

So: regions top to bottom, columns left to right within a region, a paragraph running
from the foot of one column to the head of the next read whole. Lines are never split
here: a line across a gutter (which `lines.is_gutter` exists to prevent) makes its band
full width.

Down-links between lines (`column_links`: the nearest line below that overlaps, mutual)
still tell where a column's run of lines breaks (a new run starts a block, `blocks.py`).
"""

from __future__ import annotations

import numpy as np

from .geometry import Groups, overlapping, page_key, window_pairs

# the farthest baseline step (in heights) looked at for the next line of a column
MAX_STEP = 3.5
# the narrowest white strip (points) that parts columns: lines are already cut at gutters,
# so any strip across a whole region is one (a ragged right edge never makes one: the
# lines of a column share their left edge)
GUTTER = 1.0
# a line's core for banding: this share of its mean word height around its mean centre
CORE = 0.7
# lines smaller than this share of the running text's size are small print (footnotes,
# captions, a figure's labels); an abstract or a quote set a point smaller is not
SMALL_PRINT = 0.85
# a column holds running text when one of its lines in the running text's size is at
# least this many heights wide
TEXT_WIDTH = 15.0
def _first_per_query(query: np.ndarray, other: np.ndarray, ok: np.ndarray, n: int,
                     last: bool) -> np.ndarray:
    """For each of n queries, the first (or last) `other` among its pairs marked ok (pairs
    come grouped by query, others in rising y: the first below is the nearest, the last
    above is); -1 for none."""
    out = np.full(n, -1, dtype=np.int64)
    q, o = query[ok], other[ok]
    if not len(q):
        return out
    if last:
        edge = np.concatenate((q[1:] != q[:-1], [True]))
    else:
        edge = np.concatenate(([True], q[1:] != q[:-1]))
    out[q[edge]] = o[edge]
    return out


def column_links(lines: Groups, fixed: np.ndarray) -> np.ndarray:
    """For each line, the next line down its column (-1: none); `fixed` lines (rotated
    text) take no part."""
    n = len(lines)
    free = np.flatnonzero(~fixed)
    span = float(lines.y1.max()) + 1.0
    key = page_key(lines.page, lines.mid, span)
    by_y = free[np.argsort(key[free], kind="stable")]
    sorted_key = key[by_y]
    h = lines.height[by_y]
    k, pos = window_pairs(sorted_key, sorted_key + 0.5 * h, sorted_key + MAX_STEP * h)
    upper, lower = by_y[k], by_y[pos]
    below = _first_per_query(upper, lower, overlapping(lines, upper, lower), n, last=False)
    k, pos = window_pairs(sorted_key, sorted_key - MAX_STEP * h, sorted_key - 0.5 * h)
    lower, upper = by_y[k], by_y[pos]
    above = _first_per_query(lower, upper, overlapping(lines, upper, lower), n, last=True)
    mutual = (below >= 0) & (above[np.maximum(below, 0)] == np.arange(n))
    return np.where(mutual, below, -1)


def reading_order(lines: Groups, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A permutation of the lines (pages in turn, each cut into regions and columns by
    `_cut`) and, in that order, whether each line starts a run of its column (it is not
    the line below the previous one, `column_links`)."""
    n = len(lines)
    below = column_links(lines, fixed)
    by_page = np.lexsort((lines.first, lines.page))
    pages = lines.page[by_page]
    cuts = np.flatnonzero(pages[1:] != pages[:-1]) + 1
    x0, x1 = lines.x0.tolist(), lines.x1.tolist()
    half = CORE * lines.height / 2
    top, bottom = (lines.mid - half).tolist(), (lines.mid + half).tolist()
    mid = lines.mid.tolist()
    body = body_height(lines)
    small_print = lines.height < SMALL_PRINT * body
    small = small_print.tolist()
    text = (~small_print & (lines.x1 - lines.x0 >= TEXT_WIDTH * body)).tolist()
    boxes = _Boxes(x0, x1, top, bottom, mid, small, text)
    order: list[int] = []
    for part in np.split(by_page, cuts):
        order.extend(_cut(boxes, part.tolist()))
    out = np.asarray(order, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = below[out[:-1]] != out[1:]
    return out, start


class _Boxes:
    """The lines' extents as Python lists (a page holds tens of lines: list access beats
    NumPy's per-call cost there)."""

    __slots__ = ("bottom", "mid", "small", "text", "top", "x0", "x1")

    def __init__(self, x0: list[float], x1: list[float], top: list[float],
                 bottom: list[float], mid: list[float], small: list[bool],
                 text: list[bool]) -> None:
        self.x0, self.x1, self.top, self.bottom, self.mid = x0, x1, top, bottom, mid
        self.small, self.text = small, text


def body_height(lines: Groups) -> float:
    """The running text's size: the word-weighted median of the lines' heights."""
    order = np.argsort(lines.height, kind="stable")
    weight = np.cumsum(lines.count[order])
    k = int(np.searchsorted(weight, weight[-1] / 2))
    return float(lines.height[order][k])


def _out_of_flow(b: _Boxes, columns: list[list[int]]) -> list[int]:
    """The columns read in turn, with the small print that sits between one column's text
    and the next's (footnotes at the foot of a column, a figure's labels and caption at
    the head of the next) taken out of the flow and put after the last column: a reader
    skips them, and a paragraph running on from one column to the next stays whole. A
    column of small print alone (a side box) stays where it is."""
    small, text = b.small, b.text
    # only between columns of running text (a wide line in the running text's size):
    # the pieces of a display formula or a table's cells are columns too
    running = [any(text[i] for i in col) for col in columns]
    body: list[list[int]] = []
    moved: list[int] = []
    last = len(columns) - 1
    for k, col in enumerate(columns):
        flags = [small[i] for i in col]
        if all(flags) or not running[k]:
            body.append(col)
            continue
        lo, hi = 0, len(col)
        if k > 0 and running[k - 1]:
            while flags[lo]:
                lo += 1
        if k < last and running[k + 1]:
            while flags[hi - 1]:
                hi -= 1
        moved.extend(col[:lo])
        body.append(col[lo:hi])
        moved.extend(col[hi:])
    return [i for col in body for i in col] + moved


def _columns(b: _Boxes, items: list[int]) -> list[list[int]]:
    """`items` parted at every vertical white strip across all of them (at least GUTTER
    wide), left to right, when they are columns: each beside the next (their vertical
    extents overlap). Text beside nothing is not a column: a heading set left of an
    indented section, above or below it, is a band (`_bands`). `[items]` otherwise."""
    x0, x1 = b.x0, b.x1
    srt = sorted(items, key=lambda i: (x0[i], i))
    out = [[srt[0]]]
    reach = x1[srt[0]]
    for i in srt[1:]:
        if x0[i] > reach + GUTTER:
            out.append([i])
        else:
            out[-1].append(i)
        if x1[i] > reach:
            reach = x1[i]
    if len(out) == 1:
        return out
    top, bottom = b.top, b.bottom
    spans = [(min(top[i] for i in col), max(bottom[i] for i in col)) for col in out]
    if all(max(s[0], t[0]) < min(s[1], t[1]) for s, t in zip(spans, spans[1:])):
        return out
    return [items]


def _bands(b: _Boxes, items: list[int]) -> list[list[int]]:
    """`items` parted wherever no line's core spans the cut, top to bottom."""
    top, bottom = b.top, b.bottom
    srt = sorted(items, key=lambda i: (top[i], i))
    out = [[srt[0]]]
    reach = bottom[srt[0]]
    for i in srt[1:]:
        if top[i] > reach:
            out.append([i])
        else:
            out[-1].append(i)
        if bottom[i] > reach:
            reach = bottom[i]
    return out


def _cut(b: _Boxes, items: list[int]) -> list[int]:
    """The reading order of one page's lines `items` (the module's rules 1-3)."""
    if len(items) < 2:
        return items
    columns = _columns(b, items)
    if len(columns) > 1:
        return _out_of_flow(b, [_cut(b, col) for col in columns])
    bands = _bands(b, items)
    if len(bands) == 1:
        mid, x0 = b.mid, b.x0
        return sorted(items, key=lambda i: (mid[i], x0[i], i))
    regions = [bands[0]]
    for band in bands[1:]:
        joined = regions[-1] + band
        if len(_columns(b, joined)) > 1:
            regions[-1] = joined
        else:
            regions.append(band)
    return [i for region in regions for i in _cut(b, region)]
