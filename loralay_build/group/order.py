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

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

import numpy as np

from .geometry import Groups, expand, page_key, run_starts

# the farthest baseline step (in heights) looked at for the next line of a column
MAX_STEP = 3.5
# the narrowest white strip (points) that parts columns: lines are already cut at gutters,
# so any strip across a whole region is one (a ragged right edge never makes one: the
# lines of a column share their left edge)
GUTTER = 1.0
# a line's core for banding: this share of its mean word height around its mean centre
CORE = 0.7
# a run of lines read as one unit (`_units`): left edges within this many heights,
# overlapping across this share of the wider, sizes within this ratio
UNIT_INDENT = 3.0
UNIT_OVERLAP = 0.6
UNIT_SIZE = 1.15
# lines smaller than this share of the running text's size are small print (footnotes,
# captions, a figure's labels); an abstract or a quote set a point smaller is not
SMALL_PRINT = 0.85
# a column holds running text when one of its lines in the running text's size is at
# least this many heights wide
TEXT_WIDTH = 15.0
Span = tuple[float, float, float, float]  # a stretch across a page: x0, x1, top, bottom
def _window_overlaps(x0: np.ndarray, x1: np.ndarray, page: np.ndarray,
                     mine: tuple[np.ndarray, np.ndarray, np.ndarray], start: np.ndarray,
                     stop: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For queries with extents `mine` (x0, x1, page) and windows [start, stop) of lines
    (x0, x1, page: all in one order), every position in each window, concatenated,
    whether its line lies on the query's page and overlaps it horizontally, and each
    window's size. A query's extents are repeated over its window (a few lines), not
    gathered per pair."""
    size = np.maximum(stop - start, 0)
    pos = expand(start, size)
    my_x0, my_x1, my_page = mine
    ok = ((np.minimum(my_x1.repeat(size), x1[pos]) > np.maximum(my_x0.repeat(size), x0[pos]))
          & (my_page.repeat(size) == page[pos]))
    return pos, ok, size


def column_links(lines: Groups, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each line, the next line down its column (-1: none): the nearest line below it
    (its centre 0.5 to MAX_STEP heights lower) that overlaps it, when it is in turn the
    nearest line above that one (in the window of the lower's heights) that overlaps it;
    `fixed` lines (rotated text) take no part. And the other lines in the order by
    (page, mid) that the search runs in (`_units` groups them): a window is a run of
    it, and the nearest line above is not searched for every line, only checked for each
    link found, over the lines between the two (a third of column_links' time)."""
    n = len(lines)
    free = (~fixed).nonzero()[0]
    span = float(lines.y1.max()) + 1.0
    key = page_key(lines.page, lines.mid, span)
    by_y = free[key[free].argsort(kind="stable")]
    sorted_key = key[by_y]
    h = lines.height[by_y]
    x0, x1, page = lines.x0[by_y], lines.x1[by_y], lines.page[by_y]
    pos, ok, size = _window_overlaps(
        x0, x1, page, (x0, x1, page), sorted_key.searchsorted(sorted_key + 0.5 * h),
        sorted_key.searchsorted(sorted_key + MAX_STEP * h, side="right"))
    asked = (size > 0).nonzero()[0]
    out = np.full(n, -1, dtype=np.int64)
    if not len(asked):
        return out, by_y
    m = len(by_y)
    nearest = np.minimum.reduceat(np.where(ok, pos, m), (size.cumsum() - size)[asked])
    upper, lower = asked[nearest < m], nearest[nearest < m]
    # the upper line is the lower's nearest above when it lies in the lower's window and
    # no line after it there (in the order) overlaps the lower
    low_key, low_h = sorted_key[lower], h[lower]
    stop = sorted_key.searchsorted(low_key - 0.5 * low_h, side="right")
    _, ok, size = _window_overlaps(x0, x1, page, (x0[lower], x1[lower], page[lower]),
                                   upper + 1, stop)
    nearer = np.zeros(len(upper), dtype=bool)
    nearer[np.arange(len(upper)).repeat(size)[ok]] = True
    mutual = (sorted_key[upper] >= low_key - MAX_STEP * low_h) & (upper < stop) & ~nearer
    out[by_y[upper[mutual]]] = by_y[lower[mutual]]
    return out, by_y


def reading_order(lines: Groups, fixed: np.ndarray, body: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """A permutation of the lines (pages in turn, each cut into regions and columns by
    `_cut`) and, in that order, whether each line starts a run of its column (it is not
    the line below the previous one, `column_links`). `body` is the running text's size
    (`body_height`)."""
    n = len(lines)
    below, by_y = column_links(lines, fixed)
    unit_lines, unit_starts = _units(lines, below, np.concatenate((by_y, fixed.nonzero()[0])))
    lead = unit_lines[unit_starts]  # each unit's top line
    ends = np.append(unit_starts[1:], n)
    half = CORE * lines.height / 2
    x0 = np.minimum.reduceat(lines.x0[unit_lines], unit_starts)
    x1 = np.maximum.reduceat(lines.x1[unit_lines], unit_starts)
    top = np.minimum.reduceat((lines.mid - half)[unit_lines], unit_starts)
    bottom = np.maximum.reduceat((lines.mid + half)[unit_lines], unit_starts)
    pages = _PageCuts(lines.page[lead], x0, x1, top, bottom)
    # a page read top to bottom keeps its run of `by_top`; the cut takes the others
    order = pages.by_top.tolist()
    boxes = None  # made for the first page that needs the cut
    for a, z, bands, columns in pages.to_cut():
        if boxes is None:
            small_print = lines.height[lead] < SMALL_PRINT * body
            text = ~small_print & (x1 - x0 >= TEXT_WIDTH * body)
            boxes = _Boxes(x0, x1, top, bottom, lines.mid[lead], small_print, text)
        if columns:
            order[a:z] = _cut_columns(boxes, order[a:z], columns)
        elif bands:
            order[a:z] = _read_bands(boxes, order[a:z], bands)
        else:
            order[a:z] = _cut(boxes, order[a:z], pages.by_left[a:z].tolist())
    units = np.asarray(order, dtype=np.int64)
    out = unit_lines[expand(unit_starts[units], (ends - unit_starts)[units])]
    start = np.ones(n, dtype=bool)
    start[1:] = below[out[:-1]] != out[1:]
    return out, start


class _PageCuts:
    """Every page's first cut, found for all pages at once (a page then costs no Python
    per unit for it): the units in the orders (page, top, index) and (page, x0, index),
    where each page's bands start (`_bands`) and, when its stretches are columns, their
    left edges (`_columns`). A page whose every unit is a band of its own and whose
    stretches are not side by side is read simply top to bottom (bands of one stretch
    never join), so its units keep the order by top."""

    def __init__(self, page: np.ndarray, x0: np.ndarray, x1: np.ndarray, top: np.ndarray,
                 bottom: np.ndarray) -> None:
        self.by_top = by_top = np.lexsort((top, page))  # lexsort is stable: ties by index
        self.by_left = by_left = np.lexsort((x0, page))
        p = page[by_top]  # the pages in either order
        same = p[1:] == p[:-1]
        band, band_sure = _chain_starts(p, same, top[by_top], bottom[by_top], 0.0)
        stretch, stretch_sure = _chain_starts(p, same, x0[by_left], x1[by_left], GUTTER)
        self.sure = band_sure and stretch_sure
        starts = stretch.nonzero()[0]
        s_top = np.minimum.reduceat(top[by_left], starts)
        s_bottom = np.maximum.reduceat(bottom[by_left], starts)
        s_page = p[starts[1:]]
        pair = s_page == p[starts[:-1]]  # each stretch but the first and the one before
        beside = pair & (np.maximum(s_top[1:], s_top[:-1])
                         < np.minimum(s_bottom[1:], s_bottom[:-1]))
        n_pages = int(page.max()) + 1
        simple = np.ones(n_pages, dtype=bool)
        simple[p[1:][same & ~band[1:]]] = False  # a band of several units
        simple[s_page[beside]] = False
        columns = np.zeros(n_pages, dtype=bool)
        columns[s_page[pair]] = True
        columns[s_page[pair & ~beside]] = False
        first = np.append(0, (~same).nonzero()[0] + 1)  # each page's run in the orders
        self.bounds = [*first.tolist(), len(p)]
        # the pages to cut, in turn: all of them when a test was too close to call
        runs = (~simple[p[first]] | (not self.sure)).nonzero()[0]
        self.runs = runs.tolist()
        self.columns = columns[p[first[runs]]].tolist()
        self.band_starts = band.nonzero()[0].tolist()
        self.stretch_starts = starts.tolist()
        self.edges = x0[by_left[starts]].tolist()

    def to_cut(self) -> Iterator[tuple[int, int, list[int], list[float]]]:
        """Each page that is not read simply top to bottom: where its units lie in the
        orders, where its bands start (from its first unit) and, when its stretches
        are columns, their left edges (no bands then); neither, for every page, when a
        test here was too close to call (`_chain_starts`): `_cut` finds them."""
        for k, columns in zip(self.runs, self.columns):
            a, z = self.bounds[k], self.bounds[k + 1]
            if not self.sure:
                yield a, z, [], []
            elif columns:
                cuts = self.stretch_starts
                yield a, z, [], self.edges[bisect_left(cuts, a):bisect_left(cuts, z)]
            else:
                cuts = self.band_starts
                yield a, z, [c - a for c in cuts[bisect_left(cuts, a):bisect_left(cuts, z)]], []


def _chain_starts(p: np.ndarray, same: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  gap: float) -> tuple[np.ndarray, bool]:
    """Along units sorted by (page `p`, `lo`), where a chain starts (`_bands`' and
    `_columns`' loops, for all pages at once): at a page's first unit, and where a unit's
    lo passes every earlier hi of its page by more than `gap`; and whether every test was
    clear (the running maximum over pages is taken on page-offset keys, whose rounding
    may move it by a few units in the last place). `same`: whether each unit is on the
    page of the one before."""
    span = float(np.abs(lo).max() + np.abs(hi).max()) * 2 + 10.0
    offset = p * span
    past = lo[1:] - ((np.maximum.accumulate(offset + hi) - offset)[:-1] + gap)
    starts = np.ones(len(p), dtype=bool)
    starts[1:] = ~same | (past > 0)
    close = 4 * np.spacing((float(p.max()) + 1) * span)
    return starts, not bool((np.abs(past[same]) <= close).any())


def _units(lines: Groups, below: np.ndarray, by_y: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Runs of lines down a column that `_cut` never parts, as its units: a line and the
    one below it (`column_links`) in one size, their left edges within UNIT_INDENT
    heights and overlapping across UNIT_OVERLAP of the wider (so a full-width line never
    joins the column under it). The lines grouped by run (in the order of their top
    lines), each run top to bottom, and where each run starts. (`_cut` in Python costs
    per unit: a paragraph is one.) `by_y`: every line once, in an order that is by mid
    within each run, such as `column_links`' (a run is on one page, each line below the
    one before; a fixed line is a run alone): grouping them by run with a stable sort is
    then a sort of near-sorted integers, a tenth of `lexsort`'s time on the two keys."""
    n = len(lines)
    a = (below >= 0).nonzero()[0]
    b = below[a]
    width = lines.x1 - lines.x0
    across = np.minimum(lines.x1[a], lines.x1[b]) - np.maximum(lines.x0[a], lines.x0[b])
    h_hi = np.maximum(lines.height[a], lines.height[b])
    h_lo = np.minimum(lines.height[a], lines.height[b])
    ok = ((np.abs(lines.x0[a] - lines.x0[b]) <= UNIT_INDENT * h_hi)
          & (across >= UNIT_OVERLAP * np.maximum(width[a], width[b]))
          & (h_hi <= UNIT_SIZE * h_lo))
    head = np.arange(n)
    head[b[ok]] = a[ok]  # each line's line above in its run, or itself
    while True:  # pointer jumping: every line ends at its run's top line
        nxt = head[head]
        if (nxt == head).all():
            break
        head = nxt
    grouped = by_y[head[by_y].argsort(kind="stable")]
    return grouped, run_starts(head[grouped])


class _Boxes:
    """The units' extents as Python lists (a page holds tens of units: list access beats
    NumPy's per-call cost there). The cut takes each page's units already in the orders
    by band and by left edge (`_PageCuts`'), and keeps the order by band as it parts
    them; the centres, which only a leaf sorts by (a few hundred units a document at
    most), are listed when first asked (`mids`)."""

    __slots__ = ("_mid", "_mids", "bottom", "small", "span", "text", "top", "x0", "x1")

    def __init__(self, x0: np.ndarray, x1: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                 mid: np.ndarray, small: np.ndarray, text: np.ndarray) -> None:
        self.x0, self.x1, self.top, self.bottom = x0.tolist(), x1.tolist(), top.tolist(), \
            bottom.tolist()
        self.small, self.text = small.tolist(), text.tolist()
        self.span = list(zip(self.x0, self.x1, self.top, self.bottom))
        self._mid = mid
        self._mids: list[float] | None = None

    def mids(self) -> list[float]:
        """Each unit's centre (its top line's mean centre)."""
        if self._mids is None:
            self._mids = self._mid.tolist()
        return self._mids


def body_height(lines: Groups) -> float:
    """The running text's size: the word-weighted median of the lines' heights."""
    order = lines.height.argsort(kind="stable")
    weight = lines.count[order].cumsum()
    k = int(weight.searchsorted(weight[-1] / 2))
    return float(lines.height[order][k])


def _out_of_flow(b: _Boxes, columns: list[list[int]]) -> list[int]:
    """The columns read in turn, with the small print that sits between one column's text
    and the next's (footnotes at the foot of a column, a figure's labels and caption at
    the head of the next) taken out of the flow and put after the last column: a reader
    skips them, and a paragraph running on from one column to the next stays whole. A
    column of small print alone (a side box) stays where it is."""
    small, text = b.small.__getitem__, b.text.__getitem__
    # only between columns of running text (a wide line in the running text's size):
    # the pieces of a display formula or a table's cells are columns too
    running = [any(map(text, col)) for col in columns]
    body: list[list[int]] = []
    moved: list[int] = []
    last = len(columns) - 1
    for k, col in enumerate(columns):
        flags = list(map(small, col))
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


def _columns(b: _Boxes, srt: list[int]) -> list[float]:
    """Where `srt` (units in the order by left edge) is parted at every vertical white
    strip across all of them (at least GUTTER wide), when the parts are columns: each
    beside the next (their vertical extents overlap); each column's left edge, left to
    right. Text beside nothing is not a column: a heading set left of an indented
    section, above or below it, is a band (`_bands`). One left edge otherwise."""
    x0, x1 = b.x0, b.x1
    out = [[srt[0]]]
    reach = x1[srt[0]]
    for i in srt[1:]:
        if x0[i] > reach + GUTTER:
            out.append([i])
        else:
            out[-1].append(i)
        if x1[i] > reach:
            reach = x1[i]
    if len(out) > 1:
        top, bottom = b.top, b.bottom
        extents = [(min(top[i] for i in col), max(bottom[i] for i in col)) for col in out]
        if all(max(s[0], t[0]) < min(s[1], t[1]) for s, t in zip(extents, extents[1:])):
            return [x0[col[0]] for col in out]
    return [x0[srt[0]]]


def _bands(b: _Boxes, srt: list[int]) -> list[int]:
    """Where `srt` (units in the order by band) is parted into bands, top to bottom:
    wherever no line's core spans the cut."""
    top, bottom = b.top, b.bottom
    starts = [0]
    units = iter(srt)
    reach = bottom[next(units)]
    for k, i in enumerate(units, 1):
        if top[i] > reach:
            starts.append(k)
        if bottom[i] > reach:
            reach = bottom[i]
    return starts


def _cut(b: _Boxes, by_band: list[int], by_left: list[int]) -> list[int]:
    """The reading order of one page's units (the module's rules 1-3), given in the orders
    by band (top, index) and by left edge (x0, index)."""
    if len(by_band) < 2:
        return by_band
    columns = _columns(b, by_left)
    if len(columns) > 1:
        return _cut_columns(b, by_band, columns)
    return _cut_regions(b, by_band)


def _cut_regions(b: _Boxes, srt: list[int]) -> list[int]:
    """`_cut`'s rules 2 and 3, for units that are not columns, in the order by band:
    bands top to bottom, consecutive bands joined into a region while their union is
    columns, each region cut again (`_read_bands`)."""
    if len(srt) < 2:
        return srt
    if len(srt) == 2:  # without the lists of the general case (pages hold many pairs)
        upper, lower = srt
        return srt if b.top[lower] > b.bottom[upper] else _leaf(b, srt)
    return _read_bands(b, srt, _bands(b, srt))


def _read_bands(b: _Boxes, srt: list[int], starts: list[int]) -> list[int]:
    """`srt` (units in the order by band) cut into bands at `starts`, read top to bottom:
    the bands joined while their union is still columns (as `_columns` would part it),
    each region of several units read as a leaf or, when its stretches stand side by
    side, as columns (`_cut_columns`). A region's stretches are kept while bands join
    it, so a join costs the stretches, not the region's units; a region is a run of
    `srt`, taken when it ends."""
    if len(starts) == 1:
        return _leaf(b, srt)
    if len(starts) == len(srt):  # a unit per band: no two join (one stretch each)
        return srt
    span = b.span
    out: list[int] = []
    ends = [*starts[1:], len(srt)]
    first = 0  # the current region's first unit
    # a region of one unit (one stretch) and a band of one unit never join: most bands
    # are such, so a region of one unit makes its stretch only when a wider band asks
    lone = ends[0] == 1
    spans = [] if lone else _spans(b, srt[:ends[0]])
    beside = not lone and _side_by_side(spans)
    for a, z in zip(starts[1:], ends[1:]):
        if z - a == 1:
            if lone:
                out.append(srt[first])
                first = a
                continue
            if len(spans) > 1:
                joined = _joined(spans, span[srt[a]], beside)
                if joined is not None:
                    spans, beside = joined, True
                    continue
            out.extend(_read_region(b, srt[first:a], spans, beside))
            first, lone = a, True
            continue
        own = _merged([span[i] for i in srt[a:z]])
        if lone:
            spans = [span[srt[first]]]
        # one stretch and one stretch are never side by side (bands' cores never
        # overlap): a single column costs no merge
        if len(spans) > 1 or len(own) > 1:
            if len(own) == 1:
                joined = _joined(spans, own[0], beside)
            elif len(spans) == 1:
                joined = _joined(own, spans[0], False)
            else:
                joined = _merged(spans + own)
                if not _side_by_side(joined):
                    joined = None
            if joined is not None:
                spans, beside, lone = joined, True, False
                continue
        if lone:
            out.append(srt[first])
        else:
            out.extend(_read_region(b, srt[first:a], spans, beside))
        first, spans, beside, lone = a, own, len(own) > 1 and _side_by_side(own), False
    if lone:
        out.append(srt[first])
    else:
        out.extend(_read_region(b, srt[first:], spans, beside))
    return out


def _read_region(b: _Boxes, region: list[int], spans: list[Span], beside: bool
                 ) -> list[int]:
    """A region of `_read_bands` of several units (in the order by band) with its
    stretches: one band that is not columns read as a leaf, else columns
    (`_cut_columns`)."""
    if not beside:
        return _leaf(b, region)
    return _cut_columns(b, region, [s[0] for s in spans])


def _cut_columns(b: _Boxes, srt: list[int], columns: list[float]) -> list[int]:
    """Units in the order by band that are columns with these left edges (left to right:
    the units `_columns` would chain, or a region's stretches), read column by column,
    each cut again (a column is one stretch: never columns itself). Each unit goes to
    the column its left edge lies in, so each column keeps the order by band."""
    x0 = b.x0
    parts: list[list[int]] = [[] for _ in columns]
    for i in srt:
        parts[bisect_right(columns, x0[i]) - 1].append(i)
    if len(parts) == len(srt):  # a unit per column: nothing leaves the flow
        return [part[0] for part in parts]
    return _out_of_flow(b, [_cut_regions(b, part) for part in parts])


def _joined(spans: list[Span], one: Span, beside: bool) -> list[Span] | None:
    """`_merged(spans + [one])` when its stretches stand side by side, else None, where
    `one` lies above or below all the (merged) `spans` (a band and the region before
    it), without the sort: `one` joins the stretches it touches (their extents widened
    by GUTTER meet; never two neighbours' alone, which are apart), a run of them; if
    none, it lies beside none. `beside`: whether `spans` stand side by side: then only
    the joined stretch's neighbours are asked, and one stretch grown alone (in height
    only, its neighbours' too) stays beside them."""
    x0, x1, top, bottom = one
    if x1 < x0:  # no extent to touch with
        joined = _merged([*spans, one])
        return joined if _side_by_side(joined) else None
    reach = x1 + GUTTER
    i = j = -1
    for k, s in enumerate(spans):
        if s[0] > reach:
            break
        if x0 <= s[1] + GUTTER:
            if i < 0:
                i = k
            j = k
    if i < 0 or (i == 0 and j == len(spans) - 1):
        return None
    s0, s1, s_top, s_bottom = spans[i]
    for s in spans[i + 1:j + 1]:
        s1 = s[1] if s[1] > s1 else s1
        s_top = s[2] if s[2] < s_top else s_top
        s_bottom = s[3] if s[3] > s_bottom else s_bottom
    joined = spans[:i]
    joined.append((x0 if x0 < s0 else s0, x1 if x1 > s1 else s1,
                   top if top < s_top else s_top, bottom if bottom > s_bottom else s_bottom))
    joined.extend(spans[j + 1:])
    if not beside:
        return joined if _side_by_side(joined) else None
    if i == j:
        return joined
    return joined if _side_by_side(joined[max(i - 1, 0):i + 2]) else None


def _leaf(b: _Boxes, items: list[int]) -> list[int]:
    """A set with neither columns nor bands, read by centre, then left edge."""
    mid, x0 = b.mids(), b.x0
    return sorted(items, key=lambda i: (mid[i], x0[i], i))


def _spans(b: _Boxes, items: list[int]) -> list[Span]:
    """The stretches across the page that `items` cover, (x0, x1, top, bottom) left to
    right: lines closer than GUTTER are one stretch (`_columns`' columns, before the
    side-by-side test). A region's stretches are kept while bands join it, so a join
    costs the stretches, not the region's lines."""
    if len(items) == 1:
        return [b.span[items[0]]]
    return _merged([b.span[i] for i in items])


def _merged(spans: list[Span]) -> list[Span]:
    """Stretches merged where closer than GUTTER, left to right."""
    spans = sorted(spans)
    out = []
    x0, x1, top, bottom = spans[0]
    for s in spans[1:]:
        if s[0] > x1 + GUTTER:
            out.append((x0, x1, top, bottom))
            x0, x1, top, bottom = s
            continue
        if s[1] > x1:
            x1 = s[1]
        if s[2] < top:
            top = s[2]
        if s[3] > bottom:
            bottom = s[3]
    out.append((x0, x1, top, bottom))
    return out


def _side_by_side(spans: list[Span]) -> bool:
    """Two stretches or more, each beside the next (their vertical extents overlap)."""
    if len(spans) < 2:
        return False
    s = spans[0]
    for t in spans[1:]:
        if not max(s[2], t[2]) < min(s[3], t[3]):
            return False
        s = t
    return True
