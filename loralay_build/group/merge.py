"""Satellites: one-line blocks that belong to a block beside, above or below them.

Why: a display equation is set on several baselines (limits under a sum, a fraction's
numerator and denominator, an equation number pushed below a long formula), and each
baseline is a visual line of its own that the paragraph rules, which follow text down a
column, leave alone. Such pieces touch or overlap a line of the block they belong to,
which running text never does with a line of another paragraph:

- side by side: a one-line block overlapping another line's height by half of the
  smaller, with less than SIDE_GAP line heights of white between them;
- a small piece (at most SMALL_WORDS words, its box not taller than SMALL_SIZE times the
  other line's): within SMALL_GAP of its height above or below another line and within
  SMALL_REACH beside it; it joins the nearest such line only;
- an equation number alone, "(3.12)": the nearest line on its row, left of it (else right),
  however far (`_number_rows`).

Only the lines near a one-line block are looked at (a window over lines sorted by page
and top), so the cost follows the pieces; the pairs' components become blocks.
"""

from __future__ import annotations

import numpy as np

from .geometry import Groups, components, page_key, window_pairs

SIDE_GAP = 0.8
SMALL_WORDS = 2
SMALL_GAP = 0.6
SMALL_REACH = 1.0
SMALL_SIZE = 1.15
# an equation number's row: vertical overlap with the formula, share of the lower box
NUMBER_ROW = 0.3
# a chart's stacked tick labels: lone numbers at most this many heights apart
TICK_GAP = 2.5


def merge_satellites(lines: Groups, word_counts: np.ndarray, block: np.ndarray,
                     fixed: np.ndarray, numbered: np.ndarray, numeric: np.ndarray
                     ) -> np.ndarray:
    """New block label per line: each one-line satellite joined to the block it belongs
    to. `block` labels the lines (any integers), `word_counts` their words; `fixed` lines
    (rotated text) never join;
    `numbered` lines are lone equation numbers, which join their row (`_number_rows`)."""
    nlines_of = np.bincount(block)  # labels are small non-negative integers
    uniq = nlines_of.nonzero()[0]
    block_ix = ((nlines_of > 0).cumsum() - 1)[block]
    one_line = nlines_of[uniq][block_ix] == 1  # per line: its block is that line alone
    alone = (one_line & ~fixed).nonzero()[0]
    if not len(alone):
        return block
    span = float(lines.y1.max()) + 1.0
    free = (~fixed).nonzero()[0]
    key = page_key(lines.page[free], lines.y0[free], span)
    top_order = key.argsort(kind="stable")
    by_top = free[top_order]
    h = lines.height
    reach = np.maximum(SMALL_GAP, TICK_GAP * numeric[alone]) * h[alone] + 1.0
    tallest = float((lines.y1 - lines.y0)[free].max())
    start = page_key(lines.page[alone], lines.y0[alone], span) - tallest - reach
    stop = page_key(lines.page[alone], lines.y1[alone], span) + reach
    k, pos = window_pairs(key[top_order], start, stop)
    p, q = alone[k], by_top[pos]
    keep = (block_ix[p] != block_ix[q]) & (lines.page[p] == lines.page[q])
    p, q = p[keep], q[keep]
    side, small = _belongs(lines, word_counts, p, q)
    pick = side | _nearest(lines, p, q, small & ~side)
    num_p, num_q = _number_rows(lines, p, q, numbered & one_line)
    ticks = _ticks(lines, p, q, numeric & one_line)
    label = components(len(uniq),
                       np.concatenate((block_ix[p[pick]], block_ix[num_p], block_ix[p[ticks]])),
                       np.concatenate((block_ix[q[pick]], block_ix[num_q], block_ix[q[ticks]])))
    return uniq[label[block_ix]]


def _belongs(lines: Groups, word_counts: np.ndarray, p: np.ndarray, q: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Whether one-line block p sits beside line q, and whether it is a small piece near
    q (the two rules above)."""
    dx = np.maximum(lines.x0[p], lines.x0[q]) - np.minimum(lines.x1[p], lines.x1[q])
    dy = np.maximum(lines.y0[p], lines.y0[q]) - np.minimum(lines.y1[p], lines.y1[q])
    hp, hq = lines.height[p], lines.height[q]
    box_p, box_q = lines.y1[p] - lines.y0[p], lines.y1[q] - lines.y0[q]
    tall = np.minimum(box_p, box_q)
    side = (-dy >= 0.5 * tall) & (dx <= SIDE_GAP * np.minimum(hp, hq))
    # sizes compared by box: a math font's word boxes can be far shorter than its glyphs
    small = ((word_counts[p] <= SMALL_WORDS) & (dx <= SMALL_REACH * hp) & (dy <= SMALL_GAP * hp)
             & (box_p <= SMALL_SIZE * box_q))
    return side, small


def _number_rows(lines: Groups, p: np.ndarray, q: np.ndarray, numbered: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Pairs joining each lone equation number to the nearest line on its row on its left
    (on its right when it has none there): a number set at the margin, far from the
    formula it numbers, shares the formula's row and nothing stands between them."""
    pick = numbered[p]
    p, q = p[pick], q[pick]
    top = np.maximum(lines.y0[p], lines.y0[q])
    bottom = np.minimum(lines.y1[p], lines.y1[q])
    row = (bottom - top) >= NUMBER_ROW * np.minimum(lines.y1[p] - lines.y0[p],
                                                    lines.y1[q] - lines.y0[q])
    left = row & (lines.x1[q] <= lines.x0[p])
    right = row & (lines.x0[q] >= lines.x1[p])
    # a line on the left wins over any on the right
    dist = np.where(left, lines.x0[p] - lines.x1[q], lines.x0[q] - lines.x1[p] + 1e6)
    ok = left | right
    if not ok.any():
        return p[:0], q[:0]
    idx = ok.nonzero()[0]
    order = idx[np.lexsort((q[idx], dist[idx], p[idx]))]
    first = np.concatenate(([True], p[order][1:] != p[order][:-1]))
    return p[order[first]], q[order[first]]


def _ticks(lines: Groups, p: np.ndarray, q: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """Pairs of lone numbers stacked within TICK_GAP heights of each other, overlapping
    horizontally: a chart's axis labels (or a column of a table's cells), one unit."""
    dy = np.maximum(lines.y0[p], lines.y0[q]) - np.minimum(lines.y1[p], lines.y1[q])
    overlap = np.minimum(lines.x1[p], lines.x1[q]) - np.maximum(lines.x0[p], lines.x0[q])
    return numeric[p] & numeric[q] & (dy <= TICK_GAP * lines.height[p]) & (overlap > 0)


def _nearest(lines: Groups, p: np.ndarray, q: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Among the pairs marked `ok`, only each p's nearest q (vertically, then across): a
    small piece joins one block, never bridges the two around it."""
    out = np.zeros(len(p), dtype=bool)
    idx = ok.nonzero()[0]
    if not len(idx):
        return out
    dy = np.abs(lines.mid[p[idx]] - lines.mid[q[idx]])
    dx = np.abs(lines.x0[p[idx]] - lines.x0[q[idx]])
    order = idx[np.lexsort((q[idx], dx, dy, p[idx]))]
    first = np.concatenate(([True], p[order][1:] != p[order][:-1]))
    out[order[first]] = True
    return out
