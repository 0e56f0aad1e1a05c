"""Reading order of visual lines: down each column, columns in Poppler's order.

Why not Poppler's order alone: where Poppler's flow analysis fails it reads a page row by
row across two columns (or down the pieces of cut justified lines), so consecutive lines
in its order are not the lines that follow each other in the text. The line that follows
another in a column is geometric: the nearest line below that overlaps it horizontally,
when that line in turn has it as its nearest line above (mutual, so a full-width line
under two columns continues at most one of them). Such links make chains; a chain's lines
are read top to bottom, and chains in the order Poppler reached their first word.
"""

from __future__ import annotations

import numpy as np

from .geometry import Groups, overlapping, page_key, window_pairs

# the farthest baseline step (in heights) looked at for the next line of a column
MAX_STEP = 3.5


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
    """A permutation of the lines (chains top to bottom, chains by the Poppler position of
    their earliest word) and, in that order, whether each line starts a chain."""
    n = len(lines)
    poppler = np.empty(n, dtype=np.int64)
    poppler[np.lexsort((lines.first, lines.page))] = np.arange(n)
    below = column_links(lines, fixed)
    head = np.arange(n)
    linked = below >= 0
    head[below[linked]] = np.flatnonzero(linked)  # each line's predecessor, or itself
    while True:  # pointer jumping: every line ends at its chain's top line
        nxt = head[head]
        if np.array_equal(nxt, head):
            break
        head = nxt
    first = np.full(n, n, dtype=np.int64)
    np.minimum.at(first, head, poppler)
    order = np.argsort(page_key(first[head], lines.mid, span=float(lines.y1.max()) + 1.0),
                       kind="stable")
    chain = head[order]
    start = np.concatenate(([True], chain[1:] != chain[:-1]))
    return order, start
