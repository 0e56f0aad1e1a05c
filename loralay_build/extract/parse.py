"""Incremental parser of `pdftotext -bbox-layout` XHTML into a column-wise `Document`.

Why a byte regex and not an XML parser: the original lxml iterparse loop lost or cut
about 0.13 % of words (text read on start events, entities, buffer boundaries), and a
recovering XML parser silently drops characters XML 1.0 forbids. Poppler's output is
regular (one element per line, attributes in a fixed order), so one compiled regex
over complete elements reads every word and lets us parse each chunk while Poppler is
still writing the next one.

Why columns and not a loop per word: a Python loop that converted and clamped each
word's box cost ~10 µs a word, a third of Poppler's own time on one core. A chunk is
now split at pages, blocks and lines (a few hundred splits, not thousands of words),
each line's words come out of one `findall`, and the coordinates of the whole chunk
are turned into floats and clamped by Arrow and NumPy in a handful of calls
(docs/performance.md has the measurements).

The documented rule for odd characters (see README, "Extraction"):
1. Entities are unescaped (`&amp;` -> `&`).
2. Characters XML 1.0 forbids (C0 controls other than tab/LF/CR, U+FFFE, U+FFFF)
   become U+FFFD, so the word and its box stay and the word count equals Poppler's.
3. Text is NFKC-normalised (ligatures: "ﬁ" -> "fi").
4. Zero-width and other format characters (Unicode category Cf, e.g. U+200B, U+FEFF,
   U+00AD) are removed from inside words.
5. A token left with only invisible characters (category Cf, private use Co such as
   U+F8FF, or white space) is dropped and counted in `Document.dropped_invisible`.
"""

from __future__ import annotations

import html
import re
import unicodedata

import numpy as np

from ..records import Box, Document, Page
from .columns import clamped_boxes, read_columns

# the token reader's grammar, used when a chunk is not in Poppler's regular shape
TOKEN = re.compile(
    rb'<word xMin="([^"]*)" yMin="([^"]*)" xMax="([^"]*)" yMax="([^"]*)">(.*?)</word>'
    rb'|<line |<block |<page width="([^"]*)" height="([^"]*)">',
    re.S,
)
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_CLOSERS = (b"</word>", b"</page>", b"</line>")
# bytes gathered before a parse: each parse has a fixed cost (~20 Arrow and NumPy calls),
# and parsing while Poppler still runs on the same core costs more than parsing after it
# (the two evict each other's caches): 4 MB, most papers' whole output, measured 1.22x
# bare Poppler on one core against 1.27x at 256 KB (docs/performance.md). The caps below
# still stop Poppler early, at most 4 MB (~35k words) past the cap.
BATCH = 1 << 22
INVISIBLE_CATEGORIES = frozenset({"Cf", "Co", "Zs", "Zl", "Zp", "Cc"})


def clean_word(raw: bytes, may_be_forbidden: bool) -> str:
    """Apply the documented rule to one word's raw bytes; '' means drop the token."""
    return clean_text(raw.decode("utf-8", "replace"), may_be_forbidden)


def clean_text(text: str, may_be_forbidden: bool) -> str:
    """The documented rule on one word's decoded (still escaped) text."""
    if "&" in text:
        text = html.unescape(text)
    if may_be_forbidden:
        text = FORBIDDEN.sub("\ufffd", text)
    if text.isascii():
        return text.strip()
    text = unicodedata.normalize("NFKC", text)
    if text.isprintable() and " " not in text:
        return text  # no format, private-use or space character: nothing to drop or strip
    if all(unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text):
        return ""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return text.strip()


def has_forbidden_bytes(data: bytes) -> bool:
    """C0 controls XML forbids, or U+FFFE/U+FFFF: `translate` deletes in one C pass,
    several times faster than a regex with an alternation over the same bytes."""
    return (len(data.translate(None, _CONTROL_BYTES)) != len(data)
            or b"\xef\xbf\xbe" in data or b"\xef\xbf\xbf" in data)


def clean_words(raws: tuple[bytes, ...]) -> list[str]:
    """The documented rule over a chunk's words, decoded in one call: plain ASCII words
    without an entity (most of them) pass as they are, the rest go through `clean_text`."""
    joined = b"\n".join(raws)
    forbidden = has_forbidden_bytes(joined)
    text = joined.decode("utf-8", "replace")
    parts = text.split("\n")
    if len(parts) != len(raws):  # a word holding a line break: one by one
        return [clean_word(r, forbidden) for r in raws]
    if forbidden or " " in text or "\t" in text or "\r" in text:
        # printable ASCII without an entity or a space is left as it is by the rule
        return [t if t.isascii() and t.isprintable() and "&" not in t and " " not in t
                else clean_text(t, forbidden) for t in parts]
    if "&" not in text and text.isascii():
        return parts
    return [t if t.isascii() and "&" not in t else clean_text(t, False) for t in parts]


class BBoxLayoutParser:
    """Feed chunks of Poppler's output as they arrive; `finish()` returns the Document.

    `stop_reason` turns non-empty as soon as reading on is pointless (too many pages or
    words, a page without area), so the caller can kill Poppler instead of paying for
    the rest of a file whose verdict is already known.
    """

    def __init__(self, doc_id: str, max_pages: int | None = None,
                 max_words: int | None = None, columnar: bool = True) -> None:
        self.doc = Document(id=doc_id, pages=[])
        # False: the token reader alone, the reference the columnar reader is tested on
        self.columnar = columnar
        self.max_pages = max_pages
        self.max_words = max_words
        # (number, width, height) of the first page with no area: its words would all
        # be clamped to [0, 0, 0, 0], which no model can learn from
        self.degenerate_page: tuple[int, float, float] | None = None
        self._buf = b""
        self._pending: list[bytes] = []
        self._size = 0
        self._line = -1
        self._block = -1
        self._w = 0.0
        self._h = 0.0

    @property
    def too_many_pages(self) -> bool:
        return self.max_pages is not None and len(self.doc.pages) > self.max_pages

    @property
    def too_many_words(self) -> bool:
        return self.max_words is not None and len(self.doc.words) > self.max_words

    @property
    def stop_reason(self) -> str:
        if self.too_many_pages:
            return "pages"
        if self.too_many_words:
            return "words"
        return "degenerate" if self.degenerate_page else ""

    def feed(self, chunk: bytes) -> None:
        self._pending.append(chunk)
        self._size += len(chunk)
        if self._size >= BATCH:
            self._cut()

    def _cut(self) -> None:
        """Parse up to the last complete element; keep the rest for the next batch."""
        data = self._buf + b"".join(self._pending)
        self._pending, self._size = [], 0
        end = max(data.rfind(c) for c in _CLOSERS)
        if end < 0:
            self._buf = data
            return
        end = data.index(b">", end) + 1
        self._buf = data[end:]
        self._parse(data[:end])

    def flush(self) -> None:
        """Parse all that was fed (at the end of Poppler's output), so the caps apply."""
        if self._pending:
            self._cut()
        if self._buf:
            self._parse(self._buf)
            self._buf = b""

    def finish(self) -> Document:
        self.flush()
        return self.doc

    def _add_page(self, w: float, h: float) -> None:
        number = len(self.doc.pages) + 1
        self.doc.pages.append(Page(number, w, h))
        if (w <= 0 or h <= 0) and self.degenerate_page is None:
            self.degenerate_page = (number, w, h)
        self._w, self._h = w, h

    def _parse(self, data: bytes) -> None:
        cols = read_columns(data) if self.columnar else None
        if cols is None:
            self._parse_tokens(data)
            return
        first_page = len(self.doc.pages)
        sizes = [(self._w, self._h), *cols.page_sizes]
        for w, h in cols.page_sizes:
            self._add_page(w, h)
        widths, heights = (np.array(v, dtype=np.float64)[cols.page_step] for v in zip(*sizes))
        raws = tuple(cols.texts)
        self._append(raws, clean_words(raws),
                     clamped_boxes(cols.coords, widths, heights),
                     (cols.page_step + first_page).tolist(),
                     (cols.line_step + self._line).tolist(),
                     (cols.block_step + self._block).tolist())
        self._line += cols.lines
        self._block += cols.blocks

    def _append(self, raws: tuple[bytes, ...], words: list[str], boxes: list[Box],
                pages: list[int], line_ids: list[int], block_ids: list[int]) -> None:
        """Add a chunk's columns, without the tokens the rule dropped."""
        if "" in words:
            keep = [i for i, t in enumerate(words) if t]
            self.doc.dropped_invisible += len(words) - len(keep)
            raws, words, boxes, pages, line_ids, block_ids = (
                [col[i] for i in keep]
                for col in (raws, words, boxes, pages, line_ids, block_ids))
        doc = self.doc
        if "\ufffd" in "\n".join(words):  # raw bytes kept for extract/glyphs.py's repair
            base = len(doc.words)
            doc.raw_broken.update((base + i, raws[i]) for i, t in enumerate(words)
                                  if "\ufffd" in t)
        doc.words += words
        doc.boxes += boxes
        doc.word_pages += pages
        doc.line_ids += line_ids
        doc.block_ids += block_ids

    def _parse_tokens(self, data: bytes) -> None:
        """Token by token, for output not in Poppler's regular shape (slow, rare)."""
        forbidden = has_forbidden_bytes(data)
        for m in TOKEN.finditer(data):
            raw = m.group(5)
            if raw is None:
                first = m.group(0)[1]
                if first == 108:  # "l"
                    self._line += 1
                elif first == 98:  # "b"
                    self._block += 1
                else:
                    self._add_page(float(m.group(6)), float(m.group(7)))
                continue
            box = _box(*m.group(1, 2, 3, 4), self._w, self._h)
            self._append((raw,), [clean_word(raw, forbidden)], [box], [len(self.doc.pages)],
                         [self._line], [self._block])


def _box(x0b: bytes, y0b: bytes, x1b: bytes, y1b: bytes, w: float, h: float) -> Box:
    """Clamp to the page and never inverted, as the published datasets expect."""
    x0, y0, x1, y1 = float(x0b), float(y0b), float(x1b), float(y1b)
    if x0 > x1:
        x0, x1 = x1, x0
    if y0 > y1:
        y0, y1 = y1, y0
    return (min(max(x0, 0.0), w), min(max(y0, 0.0), h), min(max(x1, 0.0), w),
            min(max(y1, 0.0), h))


def parse_bbox_layout(data: bytes, doc_id: str = "doc", columnar: bool = True) -> Document:
    """Parse a complete output at once (tests, files written by hand)."""
    p = BBoxLayoutParser(doc_id, columnar=columnar)
    p.feed(data)
    return p.finish()
