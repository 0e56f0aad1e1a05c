"""Column-wise boxes of word groups (fragments, lines) and the NumPy helpers that build them.

Why columns and `reduceat`: a document may hold 100k+ words and the whole stage must cost
a few per cent of extraction, so nothing here makes a Python object per word or per line;
every group's extent is one `reduceat` over words already contiguous in the group's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# font sizes (box heights) further apart than this ratio are different sizes: fragments of
# two sizes join across no more than lines.FAR heights, and lines of two sizes never stack
# into one block (blocks.py)
SIZE_RATIO = 1.3


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Indices where a run of equal key tuples starts (the first element always does)."""
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for k in keys:
        change[1:] |= k[1:] != k[:-1]
    return change.nonzero()[0]


def run_sizes(starts: np.ndarray, n: int) -> np.ndarray:
    """The length of each run starting at `starts` (sorted; the last one runs to n):
    `np.diff(np.append(starts, n))` without its wrappers' cost (~3 us a call)."""
    sizes = np.empty(len(starts), dtype=np.int64)
    sizes[:-1] = starts[1:] - starts[:-1]
    sizes[-1:] = n - starts[-1:]
    return sizes


def ids_from_starts(starts: np.ndarray, n: int) -> np.ndarray:
    """Group id of each of `n` elements, the groups starting at `starts` (sorted, starts[0]=0)."""
    mark = np.zeros(n, dtype=np.int64)
    if n:
        mark[starts[1:]] = 1
    return mark.cumsum()


@dataclass(frozen=True, slots=True)
class Groups:
    """Extents of groups of words, one entry per group.

    `first` is the group's earliest word (its index in Poppler's order) and `count` its
    number of words; a fragment's words are first..first+count-1. `height` is the mean
    word height (a font-size proxy: Poppler's word boxes span the font's ascent and
    descent, so words of one size on one line share it), `mid` the mean of the words'
    vertical centres (a baseline proxy that tolerates one superscript).
    """

    page: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    height: np.ndarray
    mid: np.ndarray
    first: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.page)


def summarise(boxes: np.ndarray, pages: np.ndarray, starts: np.ndarray) -> Groups:
    """The extent of each run of `boxes` starting at `starts` (rows in group order);
    `pages` holds each run's page."""
    n = len(boxes)
    count = run_sizes(starts, n)
    low = np.minimum.reduceat(boxes[:, :2], starts, axis=0)  # x0, y0
    high = np.maximum.reduceat(boxes[:, 2:], starts, axis=0)  # x1, y1
    tops, bottoms = np.add.reduceat(boxes[:, 1::2], starts, axis=0).T  # sums of y0, y1
    return Groups(
        page=pages,
        x0=low[:, 0].copy(),
        y0=low[:, 1].copy(),
        x1=high[:, 0].copy(),
        y1=high[:, 1].copy(),
        height=(bottoms - tops) / count,
        mid=(bottoms + tops) / (2 * count),
        first=starts,
        count=count,
    )


def merge_groups(g: Groups, order: np.ndarray, starts: np.ndarray) -> Groups:
    """Groups of groups: `g` taken in `order`, consecutive runs from `starts` joined.

    Heights and mids are count-weighted means, so a line's height is its words' mean.
    Gathered by `take`: NumPy gathers by it in about half the time of a fancy index, and
    the lines' gutter test merges every row's pieces through here."""
    weight = g.count.take(order)
    count = np.add.reduceat(weight, starts)
    return Groups(
        page=g.page.take(order.take(starts)),
        x0=np.minimum.reduceat(g.x0.take(order), starts),
        y0=np.minimum.reduceat(g.y0.take(order), starts),
        x1=np.maximum.reduceat(g.x1.take(order), starts),
        y1=np.maximum.reduceat(g.y1.take(order), starts),
        height=np.add.reduceat(g.height.take(order) * weight, starts) / count,
        mid=np.add.reduceat(g.mid.take(order) * weight, starts) / count,
        first=np.minimum.reduceat(g.first.take(order), starts),
        count=count,
    )


def expand(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """first[k], first[k]+1, ..., first[k]+count[k]-1 for every k, concatenated: each
    element's position plus its range's shift (first[k] less where the range lands), one
    `repeat` of the shifts for the whole output."""
    end = count.cumsum()
    total = int(end[-1]) if len(end) else 0
    return (first - (end - count)).repeat(count) + np.arange(total)


def window_pairs(sorted_keys: np.ndarray, lo: np.ndarray, hi: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every (query k, position j) with lo[k] <= sorted_keys[j] <= hi[k]: the neighbours
    of each query inside a window, found by two binary searches instead of all pairs."""
    start = sorted_keys.searchsorted(lo, side="left")
    stop = sorted_keys.searchsorted(hi, side="right")
    size = np.maximum(stop - start, 0)
    return np.arange(len(lo)).repeat(size), expand(start, size)


def components(n: int, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Connected components of the graph on 0..n-1 with edges (p, q): each node's label is
    the smallest node of its component (label propagation with pointer jumping)."""
    label = np.arange(n)
    if not len(p):
        return label
    while True:
        low = np.minimum(label[p], label[q])
        new = label.copy()
        np.minimum.at(new, p, low)
        np.minimum.at(new, q, low)
        new = new[new]
        if (new == label).all():
            return label
        label = new


def overlapping(g: Groups, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether groups a and b (index arrays) lie on one page and overlap horizontally."""
    return ((np.minimum(g.x1[a], g.x1[b]) > np.maximum(g.x0[a], g.x0[b]))
            & (g.page[a] == g.page[b]))


def page_key(page: np.ndarray, y: np.ndarray, span: float) -> np.ndarray:
    """One sortable number for (page, y): pages apart by more than any y."""
    return page * span + y
