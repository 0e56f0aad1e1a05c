"""Visual lines: Poppler's line fragments joined along one baseline within one column.

Why not Poppler's lines as they are: Poppler cuts a justified line wherever a wide word
space lines up with spaces on the lines around it (it takes the river for a column
boundary), and on Korean justified text it cuts at nearly every space. Its fragments never
hold two baselines or two columns, though, so they are the atoms here: fragments on one
baseline are joined unless the space between them is a column gutter.

What makes a gutter (`is_gutter`): a space wider than the line's own word spaces that
opens a vertical white strip - no text a few lines above, or below, crosses it - with a
column of text beside it: wide lines sharing an edge at the strip. A wide word space in
justified text, or the space after a section number, has text crossing it a line or two
away; a table's cells, a list's labels, an equation and its number open strips too, but no
column of wide lines stands at their edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import (
    SIZE_RATIO,
    Groups,
    merge_groups,
    page_key,
    run_sizes,
    run_starts,
)

# a fragment space this many times the line's word space (or wider than WIDE_SPACE of the
# height when that is unknown) is tested for a gutter; narrower ones are word spaces
SPACE_RATIO = 1.6
WIDE_SPACE = 0.45
# fragments whose cores overlap by this share of the smaller height share a line
SAME_LINE = 0.5
# how far above and below (in heights) text is looked for across a candidate gutter
STRIP_REACH = 4.0
# how far above and below (in heights) a column's wide lines are looked for
WIDTH_REACH = 15.0
# two font sizes further apart than SIZE_RATIO (geometry.py) never join across more than
# FAR heights
FAR = 1.5
# a row's spaces tell its word spacing when it holds at least this many
ROW_SPACES = 4
# no word space is wider than this share of the height
MAX_SPACE = 1.0
# points a fragment may pass the row's right end and still lie under it
COVER_SLACK = 0.5
# an exponent or an index is at most this share of its line's height
SATELLITE = 0.85
# rotated words hold at least this many characters on average (a tall glyph holds one)
ROTATED_CHARS = 2.5
# the narrowest white strip (in heights) across a candidate gap that may be a gutter
HOLE = 0.1
# text narrower than this (in heights) on either side of a strip makes no column
COLUMN_WIDTH = 12.0
# wide lines sharing an edge that make a column
COLUMN_LINES = 3
# a column's lines end (left) or start (right) inside the space or within this many
# heights of it
COLUMN_EDGE = 6.0
# points within which lines share an edge
ALIGN = 1.0
# the narrowest gutter, in heights
GUTTER_MIN = 0.8
# pairs of a candidate and a wide piece in its window looked at in one batch (each
# candidate has its own column): 12288 pairs keep each array of the batch under 100 KiB;
# larger ones come fresh from the system at each allocation (glibc's default mmap
# threshold is 128 KiB) and fault in every page they touch, which on a long document
# costs more than the NumPy calls of a few more batches
COLUMN_PAIRS = 12288


def fragment_spaces(boxes: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and widest space between consecutive words inside each fragment (0 for
    one-word ones): the line's own word spacing, which justification stretches, and
    (widest) a table's cell gap that Poppler kept inside one line."""
    n = len(boxes)
    gaps = np.zeros(n)
    gaps[:-1] = np.clip(boxes[1:, 0] - boxes[:-1, 2], 0.0, None)
    gaps[starts[1:] - 1] = 0.0  # the space after a fragment's last word is not its own
    count = run_sizes(starts, n)
    return (np.add.reduceat(gaps, starts) / np.maximum(count - 1, 1),
            np.maximum.reduceat(gaps, starts))


@dataclass(frozen=True, slots=True)
class _Cores:
    """Each fragment's core, the mean word height around its mean centre (`top` to
    `bottom`), with its `height` and `page`: what `share_baseline` compares, made once
    for its three passes over every fragment."""

    top: np.ndarray
    bottom: np.ndarray
    height: np.ndarray
    page: np.ndarray


def _cores(f: Groups) -> _Cores:
    """`f`'s fragments' `_Cores`."""
    half = f.height / 2
    return _Cores(f.mid - half, f.mid + half, f.height, f.page)


def share_baseline(core: _Cores, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """True where fragments a and b sit on one line: their cores (`_Cores`) overlap by
    SAME_LINE of the smaller one. A superscript label or an exponent fragment overlaps
    its line; the line above or below does not."""
    top = np.maximum(core.top.take(a), core.top.take(b))
    bottom = np.minimum(core.bottom.take(a), core.bottom.take(b))
    return ((core.page.take(a) == core.page.take(b))
            & (bottom - top >= SAME_LINE * np.minimum(core.height.take(a),
                                                      core.height.take(b))))


def baseline_rows(f: Groups, core: _Cores) -> np.ndarray:
    """Each fragment's row: fragments sorted by page and centre, chained wherever two
    consecutive ones share a baseline (`share_baseline`)."""
    order = page_key(f.page, f.mid, float(f.y1.max()) + 1.0).argsort(kind="stable")
    near = share_baseline(core, order[:-1], order[1:])
    row_sorted = np.concatenate(([0], (~near).cumsum()))
    row = np.empty_like(row_sorted)
    row[order] = row_sorted
    return row


def row_space(row: np.ndarray, gaps: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """For each gap, the smallest *other* valid gap of its row, when the row holds at least
    ROW_SPACES valid gaps (inf otherwise): on a row Poppler cut at every space (Korean
    justified text), the spaces between its fragments are the line's word spaces.

    Few rows hold that many, so only theirs are looked at, and with no sort: a row's
    smallest gap, and for the one gap that alone is that small the next smallest."""
    m = len(gaps)
    out = np.full(m, np.inf)
    pick = valid.nonzero()[0]
    if not len(pick):
        return out
    order = pick.take(row.take(pick).argsort(kind="stable"))  # rows come together already
    size = run_sizes(run_starts(row.take(order)), len(order))
    enough = size >= ROW_SPACES
    if not enough.any():
        return out
    order = order.compress(enough.repeat(size))
    size = size.compress(enough)
    starts = size.cumsum() - size
    g = gaps.take(order)
    smallest = np.minimum.reduceat(g, starts)
    is_min = g == smallest.repeat(size)
    alone = np.add.reduceat(is_min, starts, dtype=np.int64) == 1
    second = np.minimum.reduceat(np.where(is_min, np.inf, g), starts)
    out[order] = np.where(is_min & alone.repeat(size), second.repeat(size),
                          smallest.repeat(size))
    return out


def _baseline_key(f: Groups) -> np.ndarray:
    """Each piece's (page, baseline) as one sortable number (`_neighbours`' key)."""
    return page_key(f.page, f.mid, _page_span(f))


def _page_span(f: Groups) -> float:
    """How far apart `_baseline_key` sets the pages: twice the lowest bottom and more."""
    return max(float(f.y1.max()), 1.0) * 2 + 10.0


@dataclass(frozen=True, slots=True)
class _Pieces:
    """Pieces sorted by their baseline key (`_baseline_key`), with what `_neighbours`
    reads of them gathered once for all its windows: `key`, `height`, `x0`, `x1`, `page`;
    and `page_reach`, how far (points) a window may reach from a key with no piece of
    another page in it."""

    key: np.ndarray
    height: np.ndarray
    x0: np.ndarray
    x1: np.ndarray
    page: np.ndarray
    page_reach: float


def _pieces(f: Groups, key: np.ndarray, by_key: np.ndarray) -> _Pieces:
    """The pieces `by_key` (sorted by `key`) as `_Pieces`. The pages lie `_page_span`
    apart in the key and a page's centres within their spread: a window reaching less
    far than the difference (less a margin far above the keys' rounding) holds only
    pieces of its own page. Only a huge font size reaches that far."""
    spread = float(f.mid.max()) - float(f.mid.min())
    margin = 1e-9 * (float(np.abs(key).max()) + 1.0)
    return _Pieces(key.take(by_key), f.height.take(by_key), f.x0.take(by_key),
                   f.x1.take(by_key), f.page.take(by_key), _page_span(f) - spread - margin)


@dataclass(frozen=True, slots=True)
class _Near:
    """`_neighbours`' pairs of a candidate space and a piece in its window, one entry per
    pair, candidate by candidate (`size` pairs each): the candidate `cand`, the piece's
    `x0` and `x1` and its `distance` (points from the candidate's baseline, negative
    above), the candidate's space from `a` to `b`, and whether the piece `counts` (it
    lies on the candidate's page, off its row). Pairs that do not count are kept, and
    masked by the tests: one mask costs less than picking every array."""

    size: np.ndarray
    cand: np.ndarray
    x0: np.ndarray
    x1: np.ndarray
    distance: np.ndarray
    a: np.ndarray
    b: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True, slots=True)
class _Windows:
    """Each candidate's window among `_Pieces` (`_windows`): where it `start`s in key
    order and how many pieces it holds (`size`); and whether any window may reach
    another page (`off_page`: only a huge font size does)."""

    start: np.ndarray
    size: np.ndarray
    off_page: bool

    def part(self, which: np.ndarray) -> _Windows:
        """The windows of the candidates `which`."""
        return _Windows(self.start.take(which), self.size.take(which), self.off_page)


def _windows(f: Groups, left: np.ndarray, right: np.ndarray, key: np.ndarray,
             pieces: _Pieces, reach: float) -> _Windows:
    """The `pieces` within `reach` heights above or below each candidate pair's baseline
    (its `key`)."""
    h = np.maximum(f.height.take(left), f.height.take(right))
    centre = key.take(left)
    start = pieces.key.searchsorted(centre - reach * h, side="left")
    size = np.maximum(pieces.key.searchsorted(centre + reach * h, side="right") - start, 0)
    return _Windows(start, size, bool(len(h)) and float(h.max()) * reach >= pieces.page_reach)


def _neighbours(f: Groups, left: np.ndarray, right: np.ndarray, key: np.ndarray,
                pieces: _Pieces, windows: _Windows) -> _Near:
    """Every one of `pieces` in each candidate pair's window (`_windows`); those on its
    page and off its own row count.

    Why `take` and `repeat` rather than fancy indexing: these pairs are the bulk of the
    gutter test, and NumPy gathers by `take` in about half the time; the pieces' values
    are gathered by their positions in key order, which lie together."""
    height_l, height_r = f.height.take(left), f.height.take(right)
    centre = key.take(left)
    size = windows.size
    cand = np.arange(len(left)).repeat(size)
    pos = np.arange(int(size.sum())) + (windows.start - (size.cumsum() - size)).repeat(size)
    distance = pieces.key.take(pos) - centre.repeat(size)
    # the pair's own row: pieces within half a height of its baseline, in the smaller
    # size (a small-print column's next line beside a large title is not on its row)
    low = np.minimum(np.minimum(height_l, height_r).repeat(size), pieces.height.take(pos))
    counts = np.abs(distance) > 0.5 * low
    if windows.off_page:
        counts &= pieces.page.take(pos) == f.page.take(left).repeat(size)
    return _Near(size, cand, pieces.x0.take(pos), pieces.x1.take(pos), distance,
                 f.x1.take(left).repeat(size), f.x0.take(right).repeat(size), counts)


def is_gutter(f: Groups, left: np.ndarray, right: np.ndarray, page_width: np.ndarray,
              upright: np.ndarray) -> np.ndarray:
    """True where the space between pieces `left` and `right` (one baseline) is a column
    gutter: it opens a white strip (`_white_strip`) and a column stands beside it
    (`_column_beside`). A table's cells, a list's labels, an equation and its number stay
    on their rows: their spaces open strips too, but no column of text lines them."""
    m = len(left)
    if m == 0:
        return np.zeros(0, dtype=bool)
    key = _baseline_key(f)
    pieces = upright.nonzero()[0]
    by_key = pieces.take(key.take(pieces).argsort(kind="stable"))  # upright, by baseline
    strip = _pieces(f, key, by_key)
    near = _neighbours(f, left, right, key, strip,
                       _windows(f, left, right, key, strip, STRIP_REACH))
    opened = _white_strip(f, left, right, near)
    if not opened.any():
        return opened
    test = opened.nonzero()[0]
    lone_left, lone_right = _lone_sides(f, left, right, near)
    wide = (f.x1 - f.x0) >= COLUMN_WIDTH * f.height
    wide_pieces = _pieces(f, key, by_key.compress(wide.take(by_key)))
    windows = _windows(f, left.take(test), right.take(test), key, wide_pieces, WIDTH_REACH)
    for part in _batches(windows.size):
        which = test.take(part)
        opened[which] = _column_beside(f, left.take(which), right.take(which),
                                       page_width.take(which), key, wide_pieces,
                                       windows.part(part), lone_left.take(which),
                                       lone_right.take(which))
    return opened


def _batches(size: np.ndarray) -> list[np.ndarray]:
    """The candidates (indices) in runs whose windows of `size` pieces hold about
    COLUMN_PAIRS pairs in all."""
    end = size.cumsum()
    if not len(end) or end[-1] <= COLUMN_PAIRS:
        return [np.arange(len(size))]
    cuts = end.searchsorted(np.arange(COLUMN_PAIRS, int(end[-1]), COLUMN_PAIRS), side="right")
    return [part for part in np.split(np.arange(len(size)), cuts) if len(part)]


def _white_strip(f: Groups, left: np.ndarray, right: np.ndarray, near: _Near) -> np.ndarray:
    """Somewhere across the space, the text within STRIP_REACH heights above, or below,
    leaves a strip at least HOLE heights wide uncovered, that side holding text at all.
    The whole span is searched (the union of the covering pieces), not a few points: a
    narrow gutter inside a wide space (a short last line beside the next column's
    hanging indent) lies anywhere in it. Both sides in one pass (fewer NumPy calls):
    each side of each candidate is a group, those above numbered 0..m-1, below m..2m-1."""
    m = len(left)
    hole = HOLE * np.maximum(f.height.take(left), f.height.take(right))
    above = near.counts & (near.distance < 0)
    below = near.counts & (near.distance > 0)
    group = near.cand + np.where(below, m, 0)
    has = np.bincount(group.compress(above | below), minlength=2 * m) > 0
    # only the pieces crossing the space can cover it; those above first, so that the
    # groups come in order
    crossing = (near.x1 > near.a) & (near.x0 < near.b)
    pick = np.concatenate(((above & crossing).nonzero()[0], (below & crossing).nonzero()[0]))
    g, a, b = group.take(pick), near.a.take(pick), near.b.take(pick)
    shift = float(min(f.x0.min(), 0.0)) - 1.0
    lo = np.maximum(near.x0.take(pick), a) - shift
    hi = np.minimum(near.x1.take(pick), b) - shift
    order = _by_group(g, lo)  # pieces tied in lo: the first gives the gap, any order
    g, lo, hi, a, b = g.take(order), lo.take(order), hi.take(order), a.take(order), b.take(order)
    c = g % m  # the candidate
    split = int(np.count_nonzero(g < m))
    reach = np.concatenate((_reach(c[:split], hi[:split]), _reach(c[split:], hi[split:])))
    first = np.concatenate(([True], g[1:] != g[:-1]))
    last = np.concatenate((g[1:] != g[:-1], [True]))
    gap_before = np.where(first, lo - (a - shift),
                          lo - np.concatenate(([0.0], reach[:-1])))
    hole_c = hole.take(c)
    inner = np.bincount(g.compress(gap_before > hole_c), minlength=2 * m) > 0
    tail = np.bincount(g.compress(last & ((b - shift) - reach > hole_c)), minlength=2 * m) > 0
    covered = np.bincount(g, minlength=2 * m) > 0
    opened = has & (~covered | inner | tail)
    return opened[:m] | opened[m:]


def _by_group(group: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Positions by `group` (that come in order), then by `value`: np.lexsort's order but
    for ties, which come in any order. Why not lexsort: it sorts the values, then the
    groups from scratch; here the values' ranks join the groups in one number, and a
    stable sort finds that number's runs (a group's few pieces) and orders them."""
    n = len(value)
    rank = np.empty(n, dtype=np.int64)
    rank[value.argsort()] = np.arange(n)
    return (group * n + rank).argsort(kind="stable")


def _reach(c: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The right end so far of each candidate `c`'s covering pieces (sorted by candidate,
    then by left end). One side's at a time, as when each side had its own pass: the
    side's largest `hi` sets the offset between candidates, and so how the values round."""
    if not len(c):
        return hi
    big = float(hi.max()) + 1.0
    return np.maximum.accumulate(c * big + hi) - c * big


def _lone_sides(f: Groups, left: np.ndarray, right: np.ndarray, near: _Near
                ) -> tuple[np.ndarray, np.ndarray]:
    """Whether nothing else near the space (within STRIP_REACH) ends before it (left) or
    starts after it (right): the piece there is alone, a page number or a margin note."""
    m = len(left)
    h = np.maximum(f.height.take(left), f.height.take(right))
    edge = (COLUMN_EDGE * h).repeat(near.size)
    ends = near.counts & (near.x1 <= near.b) & (near.x1 >= near.a - edge)
    starts = near.counts & (near.x0 >= near.a) & (near.x0 <= near.b + edge)
    return (np.bincount(near.cand.compress(ends), minlength=m) == 0,
            np.bincount(near.cand.compress(starts), minlength=m) == 0)


def _column_beside(f: Groups, left: np.ndarray, right: np.ndarray, page_width: np.ndarray,
                   key: np.ndarray, wide_pieces: _Pieces, windows: _Windows,
                   lone_left: np.ndarray, lone_right: np.ndarray) -> np.ndarray:
    """A column on one side: COLUMN_LINES pieces at least COLUMN_WIDTH wide within
    WIDTH_REACH heights ending together inside the space or just before it (a justified
    column on the left), or starting together inside it or just after it (any column on
    the right); and on the other side a wide piece too, or a lone one, or (right of a
    justified column) anything starting a gutter's width past the column's edge. The
    wide pieces are sought in `windows` (`_windows`, WIDTH_REACH)."""
    m = len(left)
    a, b = f.x1.take(left), f.x0.take(right)
    h = np.maximum(f.height.take(left), f.height.take(right))
    # each side's column is wide in its own size (a side box in small print beside the body)
    wide_l = np.minimum(COLUMN_WIDTH * f.height.take(left), 0.25 * page_width)
    wide_r = np.minimum(COLUMN_WIDTH * f.height.take(right), 0.25 * page_width)
    edge = COLUMN_EDGE * h
    near = _neighbours(f, left, right, key, wide_pieces, windows)
    cand, x0, x1, size = near.cand, near.x0, near.x1, near.size
    width = x1 - x0
    ends = (near.counts & (width >= wide_l.repeat(size)) & (x1 <= near.b)
            & (x1 >= (a - edge).repeat(size))).nonzero()[0]
    starts = (near.counts & (width >= wide_r.repeat(size)) & (x0 >= near.a)
              & (x0 <= (b + edge).repeat(size))).nonzero()[0]
    cand_ends, cand_starts = cand.take(ends), cand.take(starts)
    left_own = (a - f.x0.take(left)) >= wide_l
    right_own = (f.x1.take(right) - b) >= wide_r
    own_l, own_r = left_own.nonzero()[0], right_own.nonzero()[0]
    # the edges of both sides in one pass (fewer NumPy calls), each candidate's own among
    # them: the left side's ends, then the right side's starts as candidates m on
    both_n, both_edge = _aligned(2 * m,
                                 np.concatenate((cand_ends, own_l, cand_starts + m, own_r + m)),
                                 np.concatenate((x1.take(ends), a.take(own_l),
                                                 x0.take(starts), b.take(own_r))))
    left_n, right_n, left_edge = both_n[:m], both_n[m:], both_edge[:m]
    left_any = left_own | (np.bincount(cand_ends, minlength=m) > 0) | lone_left
    right_any = (right_own | (np.bincount(cand_starts, minlength=m) > 0) | lone_right
                 | (b - np.where(np.isnan(left_edge), np.inf, left_edge) >= GUTTER_MIN * h))
    return (((left_n >= COLUMN_LINES) & right_any)
            | ((right_n >= COLUMN_LINES) & left_any))


def _aligned(m: int, cand: np.ndarray, edge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate (0..m-1), the most of its `edge`s sharing one position (within ALIGN
    points), and where that edge lies (nan: none; the farthest right on a tie): a
    column's justified right edge, or its left edge; a table's wide rows share none with
    the text beside them."""
    best = np.zeros(m, dtype=np.int64)
    where = np.full(m, np.nan)
    if not len(cand):
        return best, where
    cell = np.floor(edge / ALIGN).astype(np.int64)
    low = int(cell.min())
    cell -= low
    stride = int(cell.max()) + 2
    # the keys come nearly sorted (in a few runs by candidate): NumPy's stable sort
    # (timsort) runs ~4x faster on them than its quicksort
    key = np.sort(cand * stride + cell, kind="stable")
    starts = np.concatenate(([True], key[1:] != key[:-1])).nonzero()[0]
    count = run_sizes(starts, len(key))
    uniq = key.take(starts)
    # a run of edges may straddle two cells: count each cell with the next one
    total = count.copy()
    total[:-1] += np.where(uniq[1:] == uniq[:-1] + 1, count[1:], 0)
    owner, uniq_cell = np.divmod(uniq, stride)
    runs = np.concatenate(([True], owner[1:] != owner[:-1])).nonzero()[0]
    most = np.maximum.reduceat(total, runs)
    at = np.where(total == most.repeat(run_sizes(runs, len(total))), uniq_cell, -1)
    lead = owner.take(runs)
    best[lead] = most
    where[lead] = (np.maximum.reduceat(at, runs) + low) * ALIGN
    return best, where


def join_fragments(f: Groups, spaces: np.ndarray, page_width: np.ndarray,
                   vertical: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fragments ordered row by row, left to right, and the start of each visual line in
    that order: consecutive fragments of one row are one line unless a gutter parts them.
    Vertical (rotated) fragments are lines of their own.

    First the pieces: fragments parted by no more than the line's word space. Then each
    wider space between two pieces of a row is a gutter or not (`is_gutter`)."""
    core = _cores(f)
    row = baseline_rows(f, core)
    row = np.where(vertical, -1 - np.arange(len(row)), row)
    order = page_key(row, f.x0, float(f.x1.max()) + 1.0).argsort(kind="stable")
    same_row, covered, anchor, reach = _row_runs(f, row, order)
    a, b = order.take(anchor[:-1]), order[1:]
    height_a, height_b = f.height.take(a), f.height.take(b)
    hmin = np.minimum(height_a, height_b)
    hmax = np.maximum(height_a, height_b)
    same_base = same_row & (share_baseline(core, a, b) | share_baseline(core, order[:-1], b))
    gap = f.x0.take(b) - reach[:-1]
    idx = same_base.nonzero()[0]
    a_idx, gap_idx, hmin_idx = a.take(idx), gap.take(idx), hmin.take(idx)
    other = row_space(row.take(a_idx), gap_idx, gap_idx > 0.1 * hmin_idx)
    ref = np.maximum(np.minimum(spaces.take(a_idx), spaces.take(b.take(idx))),
                     np.where(np.isfinite(other), other, 0.0))
    ref = np.minimum(ref, MAX_SPACE * hmin_idx)
    near = np.zeros(len(a), dtype=bool)
    near[idx] = gap_idx <= np.maximum(SPACE_RATIO * ref, WIDE_SPACE * hmin_idx)
    # a piece under the row's span joins when it shares the baseline, or is an exponent or
    # an index (smaller, touching the line's box); a stacked fraction's parts stay lines
    small = ((height_b <= SATELLITE * height_a)
             & (np.minimum(f.y1.take(a), f.y1.take(b)) > np.maximum(f.y0.take(a), f.y0.take(b))))
    near |= covered & (same_base | small)
    # a space far wider than a word space between two sizes (a caption and a page
    # number in the margin) parts them
    wide = same_base & ~near & ((hmax <= SIZE_RATIO * hmin) | (gap <= FAR * hmax))
    piece_starts = np.concatenate(([True], ~near)).nonzero()[0]
    pieces = merge_groups(f, order, piece_starts)
    piece_wide = wide[piece_starts[1:] - 1]
    join = near.copy()
    # narrower than any gutter: a wide word space, joined untested
    narrow = (pieces.x0[1:] - pieces.x1[:-1]
              < GUTTER_MIN * np.maximum(pieces.height[1:], pieces.height[:-1]))
    join[piece_starts[1:][piece_wide & narrow] - 1] = True
    test = (piece_wide & ~narrow).nonzero()[0]
    gutter = is_gutter(pieces, test, test + 1, page_width[pieces.page[test]],
                       ~vertical[order[piece_starts]])
    join[piece_starts[1:][test] - 1] = ~gutter
    starts = np.concatenate(([True], ~join)).nonzero()[0]
    return order, starts


def _row_runs(f: Groups, row: np.ndarray, order: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Along `order` (row by row, left to right): whether each consecutive pair is in one
    row; whether the second lies wholly under the row's span so far (an exponent, a
    limit, a stacked fraction: it belongs to the line around it); the position of the last
    fragment not so covered (the one the next is compared with); the row's right end so
    far at each position."""
    n = len(order)
    ro = row.take(order)
    same_row = ro[1:] == ro[:-1]
    x1 = f.x1.take(order)
    offset = ro * (2.0 * float(np.abs(x1).max()) + 1.0)
    reach = np.maximum.accumulate(offset + x1) - offset
    covered = same_row & (x1[1:] <= reach[:-1] + COVER_SLACK)
    lead = np.ones(n, dtype=bool)
    lead[1:] = ~covered
    anchor = np.maximum.accumulate(np.where(lead, np.arange(n), 0))
    return same_row, covered, anchor, reach


def vertical_fragments(boxes: np.ndarray, f: Groups, words: list[str]) -> np.ndarray:
    """Fragments of rotated text (a margin stamp, an axis title, a rotated table): Poppler
    stacks their words top to bottom, so the fragment is far taller than wide. A tall
    glyph (a big bracket, an integral, pieces of one stacked together) is not: rotated
    words are written with letters, at least ROTATED_CHARS of them on average."""
    tall = ((f.y1 - f.y0) > 2.0 * (f.x1 - f.x0)).nonzero()[0]
    out = np.zeros(len(f), dtype=bool)
    if not len(tall):
        return out
    w = boxes[f.first[tall]]
    several = f.count[tall] > 1
    # the lower median height (np.percentile's "lower" 50th, without its ~40 us of
    # wrapping: the heights are finite)
    middle = (len(f.height) - 1) // 2
    typical = float(np.partition(f.height, middle)[middle])
    lone = (w[:, 3] - w[:, 1]) > 3.0 * typical
    maybe = tall[several | lone]
    if not len(maybe):
        return out
    chars = [sum(map(len, words[s:s + c])) / c
             for s, c in zip(f.first[maybe].tolist(), f.count[maybe].tolist())]
    out[maybe] = np.array(chars) >= ROTATED_CHARS
    return out
