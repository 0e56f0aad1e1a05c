"""Incremental parser of `pdftotext -bbox-layout` XHTML into a column-wise `Document`.

Why not an XML parser: the original lxml iterparse loop lost or cut about 0.13 % of
words (text read on start events, entities, buffer boundaries), and a recovering XML
parser silently drops characters XML 1.0 forbids. Poppler's output is regular (one
element per line, attributes in a fixed order), so a reader of exactly that shape reads
every word, a chunk of complete elements at a time.

Why three readers: a Python loop that converted and clamped each word's box cost ~10 µs a
word, a third of Poppler's own time on one core; the columnar reader (columns.py: regex
passes, Arrow and NumPy over the whole chunk) brought that to ~0.1 of Poppler, the
compiled one (_fastread.c, one C pass) to ~0.01. The compiled reader takes only Poppler's
regular shape and hands anything else to the columnar one, which hands what it cannot
read to the token reader; each equals the next on what it accepts (tests/test_extract.py;
docs/performance.md has the measurements).

The documented rule for odd characters (see README, "Extraction"):
1. Entities are unescaped (`&amp;` -> `&`).
2. Characters XML 1.0 forbids (C0 controls other than tab/LF/CR, U+FFFE, U+FFFF)
   become U+FFFD, so the word and its box stay and the word count equals Poppler's.
3. Text is NFKC-normalised (ligatures: "ﬁ" -> "fi").
4. Zero-width and other format characters (Unicode category Cf, e.g. U+200B, U+FEFF,
   U+00AD) are removed from inside words.
5. A token left with only invisible characters (category Cf, private use Co such as
   U+F8FF, or white space) is dropped and counted in `Document.dropped_invisible`.

Boxes are clamped to the page and never inverted. On a page turned a quarter (/Rotate 90
or 270) Poppler prints the unrotated size but writes the words where the turned page shows
them: given each page's displayed size (`display`), every reader records and clamps such a
page with its sides swapped (pdftext/rotation.py, docs/rotation.md).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from itertools import compress

import numpy as np

from ..records import Box, Document, Page, box_array

try:  # the compiled reader; a wheel built without a C compiler reads with NumPy and Arrow
    from ._fastread import read_chunk
except ImportError:  # pragma: no cover - exercised by the install without a compiler
    read_chunk = None

# who reads a chunk first: "c" (compiled, Poppler's regular shape only), "columns" (NumPy
# and Arrow), "tokens" (per word, any shape); each hands what it cannot read to the next
READERS = ("c", "columns", "tokens")

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
# what `str.strip` or `isprintable` would see in ASCII, other than the line breaks
_ASCII_SPACE = re.compile("[\x00-\x09\x0b-\x20\x7f]")
# points between a page size Poppler prints (6 decimals) and pdfium's (float32) that still
# count as equal; _fastread.c's DISPLAY_TOLERANCE
DISPLAY_TOLERANCE = 0.01


def clean_word(raw: bytes, may_be_forbidden: bool) -> str:
    """Apply the documented rule to one word's raw bytes; '' means drop the token."""
    return clean_text(raw.decode("utf-8", "replace"), may_be_forbidden)


def clean_text(text: str, may_be_forbidden: bool) -> str:
    """The documented rule on one word's decoded (still escaped) text. `may_be_forbidden`
    False promises that the raw bytes held no forbidden character (an entity may still
    name one, `&#1;`, and is checked for it)."""
    if "&" in text:
        text = html.unescape(text)
        may_be_forbidden = True
    if may_be_forbidden:
        text = FORBIDDEN.sub("\ufffd", text)
    if text.isascii():
        return text.strip()
    text = unicodedata.normalize("NFKC", text)
    if text.isprintable() and " " not in text:
        return text  # no format, private-use or space character: nothing to drop or strip
    return _visible_part(text)


def _visible_part(text: str) -> str:
    """Steps 4-5 of the rule on a normalised word that holds a space or an unprintable."""
    if text.isascii():
        return text.strip()
    if all(unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text):
        return ""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return text.strip()


def has_forbidden_bytes(data: bytes) -> bool:
    """C0 controls XML forbids, or U+FFFE/U+FFFF: `translate` deletes in one C pass,
    several times faster than a regex with an alternation over the same bytes."""
    return (len(data.translate(None, _CONTROL_BYTES)) != len(data)
            or b"\xef\xbf\xbe" in data or b"\xef\xbf\xbf" in data)


def clean_words(raws: Sequence[bytes]) -> list[str]:
    """`clean_word` of every word, each step of the rule run once over the words joined by
    line breaks where the step cannot cross one (decoding, the forbidden characters,
    NFKC: a line break is a starter nothing composes with), so a paper in Korean or
    Portuguese costs no Python call per word (~2 us each before). A word holding a line
    break, or an entity that makes one, is done word by word."""
    n = len(raws)
    joined = b"\n".join(raws)
    text = joined.decode("utf-8", "replace")
    if text.count("\n") != n - 1:
        return [clean_word(r, True) for r in raws]
    forbidden = has_forbidden_bytes(joined)
    if "&" in text:
        text = "\n".join([html.unescape(t) if "&" in t else t for t in text.split("\n")])
        forbidden = True
        if text.count("\n") != n - 1:
            return [clean_word(r, True) for r in raws]
    if forbidden:
        text = FORBIDDEN.sub("\ufffd", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        if text.count("\n") != n - 1:  # never seen: NFKC makes no line break
            return [clean_word(r, True) for r in raws]
    elif not _ASCII_SPACE.search(text):  # printable ASCII: the rule leaves it as it is
        return text.split("\n")
    return [t if t.isprintable() and " " not in t else _visible_part(t)
            for t in text.split("\n")]


class BBoxLayoutParser:
    """Feed chunks of Poppler's output as they arrive; `finish()` returns the Document.

    `stop_reason` turns non-empty as soon as reading on is pointless (too many pages or
    words, a page without area), so the caller can kill Poppler instead of paying for
    the rest of a file whose verdict is already known.
    """

    def __init__(self, doc_id: str, max_pages: int | None = None,
                 max_words: int | None = None, reader: str = "c",
                 display: Sequence[tuple[float, float]] | None = None) -> None:
        if reader not in READERS:
            raise ValueError(f"reader must be one of {READERS}, not {reader!r}")
        self.doc = Document(id=doc_id, pages=[])
        # the displayed (rotated) width and height of each page, as pdfium sees them (NaN:
        # unknown): Poppler prints the unrotated size but writes the words in the displayed
        # frame, so a page printed as its displayed size turned a quarter is recorded and
        # clamped with its sides swapped (docs/rotation.md)
        self.display = [(float(w), float(h)) for w, h in display] if display else []
        self._display_bytes = (np.array(self.display, dtype=np.float64).tobytes()
                               if self.display else None)
        self.swapped: list[int] = []  # pages recorded with their printed sides swapped
        self.unmatched: list[int] = []  # pages printed as neither displayed orientation
        # the first reader tried (the tests compare each with the one after it)
        self.reader = "columns" if reader == "c" and read_chunk is None else reader
        self.max_pages = max_pages
        self.max_words = max_words
        # (number, width, height) of the first page with no area: its words would all
        # be clamped to [0, 0, 0, 0], which no model can learn from
        self.degenerate_page: tuple[int, float, float] | None = None
        self._buf = b""
        self._boxes: list[np.ndarray] = []  # each chunk's (n, 4) boxes, joined by finish()
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
        if self._boxes:
            self.doc.boxes = np.concatenate([self.doc.boxes, *self._boxes])
            self._boxes = []
        return self.doc

    def _displayed(self, number: int, w: float, h: float) -> tuple[float, float]:
        """The size page `number` is recorded and clamped with (_fastread.c's
        `displayed_size`, to the same comparisons)."""
        if not 1 <= number <= len(self.display):
            return w, h
        dw, dh = self.display[number - 1]
        tol = DISPLAY_TOLERANCE
        same = abs(w - dw) <= tol and abs(h - dh) <= tol
        if abs(w - dh) <= tol and abs(h - dw) <= tol and not same:
            self.swapped.append(number)
            return h, w
        if not same and dw == dw:  # NaN: the size is not known, nothing to compare
            self.unmatched.append(number)
        return w, h

    def _add_page(self, w: float, h: float) -> None:
        number = len(self.doc.pages) + 1
        w, h = self._displayed(number, w, h)
        self.doc.pages.append(Page(number, w, h))
        if (w <= 0 or h <= 0) and self.degenerate_page is None:
            self.degenerate_page = (number, w, h)
        self._w, self._h = w, h

    def _parse(self, data: bytes) -> None:
        if self.reader == "c" and self._parse_compiled(data):
            return
        # imported here: Arrow's compute module costs ~0.1 s of start-up to every
        # `loralay extract` and worker, and the compiled reader needs none of it
        from .columns import clamped_boxes, read_columns

        cols = read_columns(data) if self.reader != "tokens" else None
        if cols is None:
            self._parse_tokens(data)
            return
        first_page = len(self.doc.pages)
        sizes = [(self._w, self._h)]
        for w, h in cols.page_sizes:
            self._add_page(w, h)
            sizes.append((self._w, self._h))
        widths, heights = (np.array(v, dtype=np.float64)[cols.page_step] for v in zip(*sizes))
        raws = cols.texts
        words = clean_words(raws)
        self._append(words, clamped_boxes(cols.coords, widths, heights),
                     (cols.page_step + first_page).tolist(),
                     (cols.line_step + self._line).tolist(),
                     (cols.block_step + self._block).tolist(), _broken(words, raws))
        self._line += cols.lines
        self._block += cols.blocks

    def _parse_compiled(self, data: bytes) -> bool:
        """False when the chunk is not in Poppler's regular shape (nothing read then)."""
        got = read_chunk(data, len(self.doc.pages), self._line, self._block, self._w, self._h,
                         self._display_bytes)
        if got is None:
            return False
        words, odd, boxes, pages, line_ids, block_ids, sizes, self._line, self._block = got
        for w, h in sizes:
            self._add_page(w, h)
        broken = {}
        if odd:  # the words the documented rule may change arrive as raw bytes
            raws = [words[i] for i in odd]
            cleaned = clean_words(raws)
            for i, word in zip(odd, cleaned):
                words[i] = word
            broken = {odd[j]: raw for j, raw in _broken(cleaned, raws).items()}
        self._append(words, np.frombuffer(boxes, np.float64).reshape(-1, 4), pages,
                     line_ids, block_ids, broken)
        return True

    def _append(self, words: list[str], boxes: np.ndarray, pages: list[int],
                line_ids: list[int], block_ids: list[int], broken: dict[int, bytes]) -> None:
        """Add a chunk's columns, without the tokens the rule dropped. `broken`: the raw
        bytes of each word left holding U+FFFD, by index in the chunk, which
        pdftext/glyphs.py's repair reads."""
        if "" in words:
            keep = list(map(bool, words))
            self.doc.dropped_invisible += keep.count(False)
            boxes = boxes[np.array(keep, dtype=bool)]
            words = list(compress(words, keep))
            pages, line_ids, block_ids = (
                list(compress(col, keep)) for col in (pages, line_ids, block_ids))
            if broken:  # a word holding U+FFFD is never dropped: renumber the kept ones
                kept_up_to = np.cumsum(keep)
                broken = {int(kept_up_to[i]) - 1: raw for i, raw in broken.items()}
        doc = self.doc
        base = len(doc.words)
        doc.raw_broken.update((base + i, raw) for i, raw in broken.items())
        doc.words += words
        self._boxes.append(boxes)
        doc.word_pages += pages
        doc.line_ids += line_ids
        doc.block_ids += block_ids

    def _parse_tokens(self, data: bytes) -> None:
        """Token by token, for output not in Poppler's regular shape (slow, rare)."""
        forbidden = has_forbidden_bytes(data)
        raws: list[bytes] = []
        boxes: list[Box] = []
        ids: list[tuple[int, int, int]] = []  # page, line, block of each word
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
            raws.append(raw)
            x0, y0, x1, y1 = m.group(1, 2, 3, 4)
            boxes.append(_box(x0, y0, x1, y1, self._w, self._h))
            ids.append((len(self.doc.pages), self._line, self._block))
        pages: list[int] = [i[0] for i in ids]
        lines: list[int] = [i[1] for i in ids]
        blocks: list[int] = [i[2] for i in ids]
        words = [clean_word(r, forbidden) for r in raws]
        self._append(words, box_array(boxes), pages, lines, blocks, _broken(words, raws))


def _broken(words: list[str], raws: Sequence[bytes]) -> dict[int, bytes]:
    """The raw bytes of the words left holding U+FFFD, by index."""
    if "\ufffd" not in "\n".join(words):
        return {}
    return {i: raws[i] for i, t in enumerate(words) if "\ufffd" in t}


def _box(x0b: bytes, y0b: bytes, x1b: bytes, y1b: bytes, w: float, h: float) -> Box:
    """Clamp to the page and never inverted, as the published datasets expect."""
    x0, y0, x1, y1 = float(x0b), float(y0b), float(x1b), float(y1b)
    if x0 > x1:
        x0, x1 = x1, x0
    if y0 > y1:
        y0, y1 = y1, y0
    return (min(max(x0, 0.0), w), min(max(y0, 0.0), h), min(max(x1, 0.0), w),
            min(max(y1, 0.0), h))


def parse_bbox_layout(data: bytes, doc_id: str = "doc", reader: str = "c",
                      display: Sequence[tuple[float, float]] | None = None) -> Document:
    """Parse a complete output at once (tests, files written by hand)."""
    p = BBoxLayoutParser(doc_id, reader=reader, display=display)
    p.feed(data)
    return p.finish()
