"""The blocks' order: running text first, floats after the paragraph they interrupt, a
table's lines row by row.

Why after the blocks are made: what is a float (a table, a figure's labels, a caption,
a footnote) is only known once lines are grouped, and the reading order of lines
(`order.py`) puts a float where it stands on the page: at the head of a column, between
the two halves of a paragraph that runs on from the column (or page) before. A reader
skips it there and reads it once the paragraph is done; so does the word order here.

- A *float* is a block with a table region's line in it, a block all of whose lines are
  small print (under `order.SMALL_PRINT` of the running text's size), or a caption (its
  first line opens with a label and a number, "Figura 3.", `layout.is_caption_start`).
- A paragraph is *open* when its last line is full (it reaches the block's right edge
  within half a height): a greedy line breaker ended it only because the column (or the
  page) did, so the next block of running text continues it.
- *Running text* is a block neither float nor narrow: it spans `order.TEXT_WIDTH` of its
  own heights.
- Floats that follow an open paragraph (on this page or, for the page's first blocks, the
  page before) and stand before its continuation (`_before_continuation`) are read after
  the paragraph, once a block of running text that is not open ends it (a paragraph
  running on through two columns and a page break is read whole first), unless a block
  in a larger size comes first (a heading: the paragraph ended after all); floats left
  waiting at the page's end stay at its end. A running head (`_running_heads`) stays first.

Inside a table block, lines are read by rows (bands of lines whose cores overlap), each
row left to right, whatever columns the page's cut found inside the table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .geometry import Groups, run_starts
from .order import TEXT_WIDTH

# a block whose first line is this many times the open paragraph's size starts anew
HEADING_RATIO = 1.15
# a table line's core, for its row: this share of its height around its centre
ROW_CORE = 0.7
# running heads of two pages stand at the same height within this many points
HEAD_SLACK = 2.0


def output_order(lines: Groups, block: np.ndarray, table: np.ndarray, small: np.ndarray,
                 open_captions: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The lines (numbered in reading order, `block` their labels) in output order:
    blocks placed by the rules above, lines in reading order inside a block except a
    table's, row by row. `table` marks the table regions' lines, `small` small print;
    `open_captions(lines)` tells which of some lines open a caption."""
    n = len(block)
    first = _first_rank(block)
    by_block = first.argsort(kind="stable")  # blocks in order, lines in rank order
    starts = run_starts(first[by_block])
    nb = len(starts)
    ends = np.append(starts[1:], n)
    count = ends - starts
    page = lines.page[by_block[starts]]
    all_small = np.minimum.reduceat(small[by_block].astype(np.int64), starts) == 1
    has_table = np.maximum.reduceat(table[by_block].astype(np.int64), starts) == 1
    floating = all_small | has_table
    rest = (~floating).nonzero()[0]
    floating[rest] = open_captions(by_block[starts][rest])
    last = by_block[ends - 1]
    x0 = np.minimum.reduceat(lines.x0[by_block], starts)
    right = np.maximum.reduceat(lines.x1[by_block], starts)
    size = lines.height[by_block[starts]]
    text = ~floating & (right - x0 >= TEXT_WIDTH * size)
    open_ = text & (count >= 2) & (lines.x1[last] >= right - 0.5 * lines.height[last])
    top = np.minimum.reduceat(lines.y0[by_block], starts)
    bottom = np.maximum.reduceat(lines.y1[by_block], starts)
    tall = bottom - top > 1.5 * size  # more than one line
    blocks = _Blocks(page.tolist(), floating.tolist(), text.tolist(), open_.tolist(),
                     tall.tolist(), size, lines.height[last],
                     _running_heads(page, count, top, size), x0, right, top, bottom)
    place = _place(blocks)
    position = np.empty(nb, dtype=np.int64)
    position[np.asarray(place, dtype=np.int64)] = np.arange(nb)
    block_index = np.empty(n, dtype=np.int64)
    block_index[by_block] = np.arange(nb).repeat(count)
    inner = np.arange(n)
    tables = has_table[block_index].nonzero()[0]
    if len(tables):
        inner[tables] = _row_major(lines, tables, block_index[tables])
    return np.lexsort((inner, position[block_index]))


class _Blocks:
    """Per block (in reading order), what `_place` reads: as Python lists what it reads
    for every block (a page holds a dozen blocks: a loop over lists beats NumPy's
    per-call cost there), as arrays what only a float left waiting, or a block after it,
    is asked about (those reads are few: converting every block's cost more)."""

    __slots__ = ("bottom", "floating", "head", "last_size", "open", "page", "right",
                 "size", "tall", "text", "top", "x0")

    def __init__(self, page: list[int], floating: list[bool], text: list[bool],
                 open_: list[bool], tall: list[bool], size: np.ndarray,
                 last_size: np.ndarray, head: np.ndarray, x0: np.ndarray,
                 right: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> None:
        self.page, self.floating, self.text, self.open = page, floating, text, open_
        self.tall, self.size, self.last_size, self.head = tall, size, last_size, head
        self.x0, self.right, self.top, self.bottom = x0, right, top, bottom


def _place(b: _Blocks) -> list[int]:
    """The blocks (numbered in reading order) in output order (the module's rules). A
    float waits only when it stands before the open paragraph's continuation: on a later
    page, or higher on the page (the head of a later column), or beside it; one below
    the paragraph in its own column (a heading, a figure under the text) stays. Blocks
    that are neither floats nor running text (a table's header row, a figure's label in
    the text's size, a page number) join the floats while some wait."""
    page, floating, text, open_, tall = b.page, b.floating, b.text, b.open, b.tall
    out: list[int] = []
    waiting: list[int] = []
    last = -1  # the last block of running text of more than one line
    previous_page = page[0] if page else 0
    for k, (on, float_k, text_k) in enumerate(zip(page, floating, text)):
        if on != previous_page:
            out.extend(waiting)
            waiting = []
            previous_page = on
        if float_k:
            if last >= 0 and open_[last] and _before_continuation(b, last, k):
                waiting.append(k)
            else:
                out.append(k)
            continue
        if not text_k:
            (waiting if waiting else out).append(k)
            continue
        if waiting and b.size[k] > HEADING_RATIO * b.last_size[last]:
            out.extend(waiting)
            waiting = []
        out.append(k)
        if waiting and not open_[k]:  # the paragraph ended here: the floats follow it
            out.extend(waiting)
            waiting = []
        if tall[k]:
            last = k
    out.extend(waiting)
    return out


def _before_continuation(b: _Blocks, paragraph: int, k: int) -> bool:
    """Whether float k stands where the open paragraph's continuation is still to come:
    on a later page (not its running head, `_running_heads`), higher
    on the page than the paragraph's foot, or beside it."""
    if b.page[k] != b.page[paragraph]:
        return not b.head[k]
    return (b.top[k] < b.bottom[paragraph]
            or b.x0[k] >= b.right[paragraph] or b.right[k] <= b.x0[paragraph])


def _running_heads(page: np.ndarray, count: np.ndarray, top: np.ndarray,
                   size: np.ndarray) -> np.ndarray:
    """Per block: whether it is a page's running head: the page's first block, one line,
    and another page's first block stands at the same height (within `HEAD_SLACK`
    points) in the same size (a caption at a page's top recurs nowhere)."""
    head = np.zeros(len(page), dtype=bool)
    first = np.concatenate(([True], page[1:] != page[:-1])).nonzero()[0]
    first = first[count[first] == 1]
    if len(first) < 2:
        return head
    key = np.round(top[first] / HEAD_SLACK) * 1000 + np.round(size[first])
    # keys shared, by sorting them (np.unique's hashing costs ~40 us a document); NaNs
    # (sorted last) count as equal, as np.unique counts them
    by_key = key.argsort(kind="stable")
    k = key[by_key]
    same = (k[1:] == k[:-1]) | np.isnan(k[:-1])  # a key the next one repeats
    shared = np.zeros(len(k), dtype=bool)
    shared[1:] = same
    shared[:-1] |= same
    head[first[by_key]] = shared
    return head


def _row_major(lines: Groups, rows: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """For the table lines `rows` (reading-order indices, `owner` their block), the same
    indices handed out again in row-major order within each block: the line first in its
    table by row, then by left edge, takes the block's smallest index."""
    half = ROW_CORE * lines.height[rows] / 2
    top, bottom = lines.mid[rows] - half, lines.mid[rows] + half
    by_top = np.lexsort((top, owner))
    o, t, b = owner[by_top], top[by_top], bottom[by_top]
    shift = float(max(np.abs(t).max(), np.abs(b).max())) * 4 + 1.0
    reach = np.maximum.accumulate(o * shift + b) - o * shift
    new_row = np.ones(len(rows), dtype=bool)
    new_row[1:] = (o[1:] != o[:-1]) | (t[1:] > reach[:-1])
    row = np.empty(len(rows), dtype=np.int64)
    row[by_top] = new_row.cumsum()
    row_major = np.lexsort((lines.x0[rows], row, owner))
    as_read = np.lexsort((rows, owner))
    out = np.empty(len(rows), dtype=np.int64)
    out[row_major] = rows[as_read]
    return out


def _first_rank(block: np.ndarray) -> np.ndarray:
    """For each line, the smallest rank (index) among its block's lines."""
    first = np.full(int(block.max()) + 1, len(block), dtype=np.int64)
    np.minimum.at(first, block, np.arange(len(block)))
    return first[block]
