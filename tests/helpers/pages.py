"""Made-up pages: words with boxes laid out line by line in a made-up font, for the
grouping and label rules' tests (one builder, so both files measure the same pages)."""

from __future__ import annotations

from collections.abc import Sequence

from loralay_build.records import Document, Page

CHAR = 5.0  # a made-up font: every character 5 pt wide, 10 pt tall
SIZE = 10.0


# ---------------------------------------------------------------- made-up pages

class PageBuilder:
    """Words with boxes, each call one Poppler line (its own Poppler block unless told)."""

    def __init__(self, width: float = 612.0, height: float = 792.0) -> None:
        self.width, self.height = width, height
        self.words: list[str] = []
        self.boxes: list[tuple[float, float, float, float]] = []
        self.pages: list[int] = []
        self.lines: list[int] = []
        self.blocks: list[int] = []
        self.page = 1
        self.n_pages = 1

    def line(self, x: float, y: float, text: str, size: float = SIZE, space: float = 3.0,
             block: int | None = None) -> float:
        """Words of `text` from x on the line whose top is y; returns the line's right end."""
        line_id = (self.lines[-1] + 1) if self.lines else 0
        block_id = block if block is not None else ((self.blocks[-1] + 1) if self.blocks
                                                   else 0)
        for word in text.split():
            w = len(word) * CHAR * size / SIZE
            self.words.append(word)
            self.boxes.append((x, y, x + w, y + size))
            self.pages.append(self.page)
            self.lines.append(line_id)
            self.blocks.append(block_id)
            x += w + space
        return x - space

    def justified(self, x0: float, x1: float, y: float, text: str,
                  block: int | None = None) -> None:
        """A line of `text` set from x0 to exactly x1 (spaces stretched)."""
        words = text.split()
        ink = sum(len(w) for w in words) * CHAR
        space = (x1 - x0 - ink) / max(len(words) - 1, 1)
        self.line(x0, y, text, space=space, block=block)

    def new_page(self) -> None:
        self.page += 1
        self.n_pages += 1

    def doc(self, order: Sequence[int] | None = None) -> Document:
        """The document, words in Poppler's order (or in `order`, a permutation)."""
        idx = list(range(len(self.words))) if order is None else list(order)
        return Document(id="made-up", pages=[Page(i + 1, self.width, self.height)
                                             for i in range(self.n_pages)],
                        words=[self.words[i] for i in idx],
                        boxes=[self.boxes[i] for i in idx],
                        word_pages=[self.pages[i] for i in idx],
                        line_ids=[self.lines[i] for i in idx],
                        block_ids=[self.blocks[i] for i in idx])


def paragraph(b: PageBuilder, x: float, y: float, lines: Sequence[str],
              pitch: float = 12.0) -> float:
    """One Poppler block of lines; returns the y below it."""
    block = (b.blocks[-1] + 1) if b.blocks else 0
    for text in lines:
        b.line(x, y, text, block=block)
        y += pitch
    return y


FULL = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"  # 370pt


def three_pages() -> PageBuilder:
    """Three pages with a running head, two paragraphs and a page number each."""
    b = PageBuilder()
    for page in range(1, 4):
        if page > 1:
            b.new_page()
        b.line(200, 40, "Journal of Made-up Studies 12 (2020)")
        y = paragraph(b, 72, 100, [FULL] * 6)
        y = paragraph(b, 72, y + 20, [FULL] * 5 + ["lorem ipsum"])
        b.line(300, 750, str(page))
    return b
