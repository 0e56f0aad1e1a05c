"""One complete chunk of `pdftotext -bbox-layout` output read column-wise, by regex passes,
Arrow and NumPy: the reader behind the compiled one (_fastread.c), which hands it what is
not in Poppler's regular shape, and the one a package built without a C compiler uses.

Why: a Python loop over words (one regex match, four `float()` calls and a clamp per
word) cost ~10 µs a word, a third of Poppler's own time on one core. Here a chunk is
read by four `findall` passes that return flat lists (no tuple per word), the
coordinates of all its words are parsed by one Arrow cast, and the page, line and
block of each word come from running counts over the chunk's element tags (NumPy).
Per word, Python only builds the word's text.

The fast reading trusts Poppler's regular output (one element per line, attributes in
a fixed order, text escaped). Every count is checked against the others; when any
differs, `read_columns` returns None and the parser reads the chunk token by token.
docs/performance.md has the measurements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# the element tags in document order, one byte each: w(ord), l(ine), b(lock), p(age)
# (the whole name is looked at: `<bage ` is no block, as the token reader agrees)
TAG = re.compile(rb"<(?=word |line |block |page )([wlbp])")
SPAN = re.compile(rb'<word xMin="([^>]*)">')
TEXT = re.compile(rb'">([^<]*)</word>')
PAGE = re.compile(rb'<page width="([^"]*)" height="([^"]*)">')
# the letters of ` yMin="`, ` xMax="`, ` yMax="` between the numbers of a word's span
_ATTR_LETTERS = b'xyMina="'
_W, _L, _B, _P = (ord(c) for c in "wlbp")


@dataclass(frozen=True, slots=True)
class Columns:
    """A chunk's words with their ids counted from the chunk's start."""

    texts: list[bytes]  # as Poppler wrote them (escaped, not yet cleaned)
    coords: np.ndarray  # (4, n) float64: xMin, yMin, xMax, yMax as written
    page_step: np.ndarray  # pages opened in this chunk up to each word (0: the open page)
    line_step: np.ndarray  # lines opened in this chunk up to each word
    block_step: np.ndarray
    page_sizes: list[tuple[float, float]]  # width, height of each page opened here
    lines: int  # lines opened in the chunk
    blocks: int


def read_columns(data: bytes) -> Columns | None:
    """The chunk's columns, or None when its output is not in Poppler's regular shape."""
    tags = np.frombuffer(b"".join(TAG.findall(data)), np.uint8)
    is_word = tags == _W
    n = int(np.count_nonzero(is_word))
    spans, texts = SPAN.findall(data), TEXT.findall(data)
    sizes = PAGE.findall(data)
    if not len(spans) == len(texts) == n or len(sizes) != np.count_nonzero(tags == _P):
        return None
    coords = _coordinates(spans)
    if coords is None:
        return None
    steps = [np.cumsum(tags == kind) for kind in (_P, _L, _B)]
    try:
        page_sizes = [(float(w), float(h)) for w, h in sizes]
    except ValueError:
        return None
    page_step, line_step, block_step = (s[is_word] for s in steps)
    lines, blocks = (int(s[-1]) if len(s) else 0 for s in steps[1:])
    return Columns(texts, coords, page_step, line_step, block_step, page_sizes, lines, blocks)


def _coordinates(spans: list[bytes]) -> np.ndarray | None:
    """All four numbers of every span in one Arrow cast (correctly rounded, so each equals
    Python's `float()` of the same text); None when a span holds anything else."""
    if not spans:
        return np.zeros((4, 0))
    blob = b" ".join(spans).translate(None, _ATTR_LETTERS)
    parts = pc.split_pattern(_one_binary(blob), b" ").flatten()
    if len(parts) != 4 * len(spans):
        return None
    try:
        values = parts.cast(pa.large_string()).cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if values.null_count:
        return None
    coords = np.frombuffer(values.buffers()[1], np.float64, len(values), 8 * values.offset)
    if not np.isfinite(coords).all():  # the token reader's rules
        return None
    return coords.reshape(-1, 4).T


def _one_binary(blob: bytes) -> pa.Array:
    """A one-element binary array over `blob`, made from its buffers: `pa.array` on a
    Python list (like `Array.to_numpy`) imports pandas on first use, 0.2-0.3 s in every
    process that extracts (each `loralay extract`, each worker)."""
    offsets = pa.py_buffer(np.array([0, len(blob)], np.int64))
    return pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(blob)])


def clamped_boxes(coords: np.ndarray, widths: np.ndarray, heights: np.ndarray
                  ) -> np.ndarray:
    """(n, 4) boxes clamped to the page and never inverted, as the published datasets
    expect (the same comparisons, in the same order, as the per-word rule this replaced)."""
    x0, y0, x1, y1 = coords
    out = np.empty((len(x0), 4), dtype=np.float64)
    for j, (v, size) in enumerate(((np.minimum(x0, x1), widths), (np.minimum(y0, y1), heights),
                                   (np.maximum(x0, x1), widths), (np.maximum(y0, y1), heights))):
        np.minimum(np.maximum(v, 0.0), size, out=out[:, j])
    return out
