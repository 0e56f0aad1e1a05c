"""Blocks: visual lines joined into paragraphs, headings, captions, list items, tables.

Paragraphs come from pairs of consecutive lines in reading order (down each column, see
order.py), so they vectorise:

1. Stacks. Lines that follow each other down one column at the document's usual line
   pitch, in one font size, overlapping horizontally, form a stack. A wider pitch (the space
   between paragraphs, around a display equation or a heading), a font change, a jump to
   another column or page ends it.
2. Paragraphs inside a stack. Many layouts space paragraphs like lines and mark them only
   by a short last line or by indentation:
   - a short line: when the next line's first word would have fitted at the end of this
     line, this line ended its paragraph (a greedy line breaker never leaves such room);
   - indentation, inside each run of lines the short lines leave: a line is flush with the
     run's left edge or indented, and whichever kind is rarer marks a block's first line
     (a first-line indent in running text, the flush label of a hanging-indent list or
     bibliography). Cutting at short lines first keeps a paragraph and the list after it
     from voting together.
   Centred stacks (titles, centred captions) have neither meaning and are left whole.

Tables are found apart (`table_regions`): their rows are lines holding cell gaps far wider
than any word space, and everything inside the box their rows span is one block. Pieces
of display equations are joined afterwards (merge.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .geometry import (
    SIZE_RATIO,
    Groups,
    components,
    expand,
    ids_from_starts,
    overlapping,
    page_key,
    run_sizes,
    run_starts,
    window_pairs,
)

# an indent deeper than this share of the line height is an indent
INDENT = 0.6
# white left at a line's end beyond the next word's width, in heights, that ends a paragraph
ROOM = 0.5
# a space this many heights wide inside a line is a table's cell gap (justified word spaces
# stay under ~1 height even in Korean)
CELL_GAP = 1.5
# table rows further apart than this many heights are different tables
ROW_GAP = 2.5
# a line beside a table whose words are at least this share numbers is one of its rows
NUMERIC_ROW = 0.6
# and holds at least this many words
NUMERIC_WORDS = 3
# rounds of growing tables by such rows (each adds the rows next to the last ones)
GROW_ROUNDS = 8
# line pitches looked at (in heights), in bins of 0.05
PITCH_RANGE = (0.8, 3.0)
PITCH_BINS = 44


def usual_pitch(lines: Groups) -> float:
    """The document's most common baseline-to-baseline distance, in line heights, between
    consecutive lines of one size that overlap: 1.1-1.3 for single spacing, ~2 double.
    (Per page it was worse: a page of code or table rows sets its own pitch.)"""
    if len(lines) < 2:
        return 1.2
    h = np.maximum(lines.height[1:], lines.height[:-1])
    ratio = (lines.mid[1:] - lines.mid[:-1]) / np.maximum(h, 1e-6)
    like = ((lines.page[1:] == lines.page[:-1]) & (_overlap(lines) > 0)
            & (np.minimum(lines.height[1:], lines.height[:-1]) > h / 1.15)
            & (ratio > PITCH_RANGE[0]) & (ratio < PITCH_RANGE[1]))
    if not like.any():
        return 1.2
    width = (PITCH_RANGE[1] - PITCH_RANGE[0]) / PITCH_BINS
    cell = ((ratio[like] - PITCH_RANGE[0]) / width).astype(np.int64)
    k = int(np.argmax(np.bincount(cell, minlength=PITCH_BINS)))
    return PITCH_RANGE[0] + (k + 0.5) * width


def _overlap(lines: Groups) -> np.ndarray:
    """Horizontal overlap of each line with the next (negative: apart)."""
    return (np.minimum(lines.x1[1:], lines.x1[:-1])
            - np.maximum(lines.x0[1:], lines.x0[:-1]))


def stack_breaks(lines: Groups, pitch: float, vertical: np.ndarray, source_block: np.ndarray
                 ) -> np.ndarray:
    """True before line i+1 when it cannot continue line i's stack. Rotated lines stack
    only with rotated lines of the same Poppler block (`source_block`, read only where
    two rotated lines follow each other)."""
    h_hi = np.maximum(lines.height[1:], lines.height[:-1])
    h_lo = np.minimum(lines.height[1:], lines.height[:-1])
    step = lines.mid[1:] - lines.mid[:-1]
    limit = (pitch + max(0.3, 0.2 * pitch)) * h_hi
    horizontal = ((lines.page[1:] != lines.page[:-1]) | (step < 0.5 * h_lo) | (step > limit)
                  | (_overlap(lines) <= 0) | (h_hi > SIZE_RATIO * h_lo))
    rotated = ~(vertical[1:] & vertical[:-1]) | (source_block[1:] != source_block[:-1])
    either = vertical[1:] | vertical[:-1]
    return np.where(either, rotated, horizontal)


def _centred(lines: Groups, starts: np.ndarray) -> np.ndarray:
    """Per group of lines (from `starts`): its lines share a centre but not a left edge."""
    centre = (lines.x0 + lines.x1) / 2
    spread_c = np.maximum.reduceat(centre, starts) - np.minimum.reduceat(centre, starts)
    spread_l = np.maximum.reduceat(lines.x0, starts) - np.minimum.reduceat(lines.x0, starts)
    h = np.maximum.reduceat(lines.height, starts)
    return (spread_c <= INDENT * h) & (spread_l > INDENT * h)


def short_line_breaks(lines: Groups, stack_start: np.ndarray, first_width: np.ndarray
                      ) -> np.ndarray:
    """True before line i+1 when line i, inside one stack, left room for the next line's
    first word (against the wider of its neighbours in the stack): it ended a paragraph."""
    n = len(lines)
    starts = stack_start.nonzero()[0]
    centred = _centred(lines, starts).repeat(run_sizes(starts, n))
    x1 = lines.x1
    prev_x1 = np.concatenate(([-np.inf], x1[:-1]))
    prev_x1[stack_start] = -np.inf
    room = np.maximum(prev_x1[:-1], x1[1:]) - x1[:-1]
    short = (room > first_width[1:] + ROOM * lines.height[:-1]) & ~centred[:-1]
    return short & ~stack_start[1:]


def indent_breaks(lines: Groups, segment_start: np.ndarray) -> np.ndarray:
    """True before line i+1 when, inside one segment (a stack cut at its short lines), it
    is of the kind that marks first lines: flush or indented against the segment's left
    edge, whichever is rarer; on a tie, or when the segment's first line is of the rarer
    kind, the first line's kind (a two-line paragraph, a two-line list item)."""
    n = len(lines)
    starts = segment_start.nonzero()[0]
    sizes = run_sizes(starts, n)
    segment = ids_from_starts(starts, n)
    left = np.minimum.reduceat(lines.x0, starts)[segment]
    indented = lines.x0 - left > INDENT * lines.height
    n_ind = np.add.reduceat(indented.astype(np.int64), starts)
    n_flush = sizes - n_ind
    first_ind = indented[starts]
    first_count = np.where(first_ind, n_ind, n_flush)
    start_kind = np.where(first_count <= sizes - first_count, first_ind, n_ind < n_flush)
    marks = (indented == start_kind[segment]) & ~_centred(lines, starts)[segment]
    return marks[1:] & ~segment_start[1:]


def paragraph_starts(lines: Groups, chain_start: np.ndarray, first_width: np.ndarray,
                     vertical: np.ndarray, source_block: np.ndarray) -> np.ndarray:
    """Boolean per line (reading order): True where a paragraph starts."""
    n = len(lines)
    start = np.ones(n, dtype=bool)
    if n < 2:
        return start
    pitch = usual_pitch(lines)
    # a new column chain starts a block (rotated lines form no chains: their own rule)
    rotated = vertical[1:] & vertical[:-1]
    start[1:] = stack_breaks(lines, pitch, vertical, source_block) | (chain_start[1:] & ~rotated)
    start[1:] |= short_line_breaks(lines, start, first_width)
    start[1:] |= indent_breaks(lines, start)
    return start


def table_regions(lines: Groups, widest_space: np.ndarray) -> np.ndarray:
    """Region number per line (-1: none). Lines holding cell gaps (table rows, aligned
    equations with their numbers, a figure's axis labels) that overlap horizontally and lie
    within ROW_GAP heights of each other are linked; each linked set of at least two is a
    region, and every line whose centre lies inside the region's box belongs to it (a
    table's header cells, a row label spanning two rows). (Linking short lines with
    narrower gaps too, to catch a ruled table's header row, cost purity on displayed
    equations around a line of text: not done.)"""
    n = len(lines)
    region = np.full(n, -1, dtype=np.int64)
    rows = (widest_space >= CELL_GAP * lines.height).nonzero()[0]
    if len(rows) < 2:
        return region
    span = float(lines.y1.max()) + 1.0
    key = page_key(lines.page[rows], lines.y0[rows], span)
    by_y = key.argsort(kind="stable")
    rows, key = rows[by_y], key[by_y]
    h = lines.height[rows]
    reach = key + (lines.y1[rows] - lines.y0[rows]) + ROW_GAP * h
    i, j = window_pairs(key, key, reach)
    keep = (j > i)
    i, j = i[keep], j[keep]
    a, b = rows[i], rows[j]
    linked = (overlapping(lines, a, b)
              & (lines.y0[b] - lines.y1[a] <= ROW_GAP * np.maximum(h[i], h[j])))
    label = components(len(rows), i[linked], j[linked])
    order = label.argsort(kind="stable")
    lab = label[order]
    starts = run_starts(lab)
    members = rows[order]
    keep_set = run_sizes(starts, len(lab)) >= 2
    if not keep_set.any():
        return region
    box_page = lines.page[members][starts][keep_set]
    bx0 = np.minimum.reduceat(lines.x0[members], starts)[keep_set]
    by0 = np.minimum.reduceat(lines.y0[members], starts)[keep_set]
    bx1 = np.maximum.reduceat(lines.x1[members], starts)[keep_set]
    by1 = np.maximum.reduceat(lines.y1[members], starts)[keep_set]
    return _inside(lines, box_page, bx0, by0, bx1, by1)


def _inside(lines: Groups, page: np.ndarray, x0: np.ndarray, y0: np.ndarray,
            x1: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """For each line, the first box (by number) holding its centre on its page, or -1.
    `lines` come page by page: each box is paired with its page's lines (a search per
    box, not per line: boxes are few)."""
    n = len(lines)
    region = np.full(n, len(page), dtype=np.int64)
    box, line_k = window_pairs(lines.page, page, page)
    cx = (lines.x0[line_k] + lines.x1[line_k]) / 2
    cy = lines.mid[line_k]
    hit = (cx >= x0[box]) & (cx <= x1[box]) & (cy >= y0[box]) & (cy <= y1[box])
    np.minimum.at(region, line_k[hit], box[hit])
    return np.where(region == len(page), -1, region)


def extend_tables(lines: Groups, region: np.ndarray,
                  numeric_shares: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """`region` grown by rows of numbers: a line of NUMERIC_WORDS words or more next to a
    table (within ROW_GAP heights above or below its box, overlapping it across at least
    half of the line and half of the table) whose words are mostly numbers
    (`numeric_shares(lines)` at least NUMERIC_ROW) is a row whose cells Poppler set closer
    than a cell gap (a totals row, a dense row of counts), not running text. Tables are
    grown a row at a time (at most GROW_ROUNDS). `lines` come page by page."""
    region = region.copy()
    share = np.full(len(lines), np.nan)  # found when first needed
    # the tables whose box changed: all at first, then those that took a row (a line near
    # an unchanged table was tested against it already, and its share does not change)
    changed = (region >= 0).nonzero()[0]
    for _ in range(GROW_ROUNDS):
        if not len(changed):
            return region
        order = changed[region[changed].argsort(kind="stable")]
        starts = run_starts(region[order])
        label = region[order][starts]
        page = lines.page[order][starts]
        bx0 = np.minimum.reduceat(lines.x0[order], starts)
        by0 = np.minimum.reduceat(lines.y0[order], starts)
        bx1 = np.maximum.reduceat(lines.x1[order], starts)
        by1 = np.maximum.reduceat(lines.y1[order], starts)
        # every (table, candidate line of its page) pair: lines come page by page
        free = ((region < 0) & (lines.count >= NUMERIC_WORDS)).nonzero()[0]
        free_page = lines.page[free]
        lo = free_page.searchsorted(page, side="left")
        hi = free_page.searchsorted(page, side="right")
        size = hi - lo
        k = np.arange(len(label)).repeat(size)
        i = free[expand(lo, size)]
        x0, x1 = lines.x0[i], lines.x1[i]
        gap = np.maximum(lines.y0[i] - by1[k], by0[k] - lines.y1[i])
        across = np.minimum(x1, bx1[k]) - np.maximum(x0, bx0[k])
        near = ((gap <= ROW_GAP * lines.height[i]) & (across >= 0.5 * (x1 - x0))
                & (across >= 0.5 * (bx1[k] - bx0[k])))
        # each line near a table joins the first such table (by number) when numeric
        near_lines, first = np.unique(i[near], return_index=True)
        todo = near_lines[np.isnan(share[near_lines])]
        if len(todo):
            share[todo] = numeric_shares(todo)
        rows = share[near_lines] >= NUMERIC_ROW
        if not rows.any():
            break
        region[near_lines[rows]] = label[k[near][first[rows]]]
        took = np.zeros(int(region.max()) + 1, dtype=bool)
        took[region[near_lines[rows]]] = True
        changed = (region >= 0).nonzero()[0]
        changed = changed[took[region[changed]]]
    return region
