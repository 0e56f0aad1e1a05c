"""The report's per-document numbers as columns (see `DocColumns`)."""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .report import DocFacts


class DocColumns:
    """The kept documents' numbers as columns, in the order they arrived.

    Why columns: a DocFacts with its own leak dict costs ~400 bytes; a report over 200 K
    papers would hold 80 MB of them. Here a document costs its id pointer, a few machine
    numbers and ~20 bytes per abstract language, and numpy reads the arrays directly.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.splits: list[str] = []
        self.article_words = array("q")
        self.summary_words = array("q")
        self.pages = array("q")
        self.language_share = array("d")  # NaN where the share is None
        self.words_repaired = array("q")  # ligature codes repaired (extract/glyphs.py)
        self.words_unrepaired = array("q")  # words still holding U+FFFD
        self.leak_doc = array("q")  # per (document, language) pair, sorted by language
        self.leak_lang: list[str] = []
        self.leak_share = array("d")

    def add(self, doc_id: str, split: str, article_words: int, summary_words: int, pages: int,
            language_share: float | None, leak: Iterable[tuple[str, float]],
            words_repaired: int = 0, words_unrepaired: int = 0) -> None:
        """`leak`: (language, share) pairs sorted by language."""
        row = len(self.ids)
        self.ids.append(doc_id)
        self.splits.append(sys.intern(split))
        self.article_words.append(article_words)
        self.summary_words.append(summary_words)
        self.pages.append(pages)
        self.language_share.append(math.nan if language_share is None else language_share)
        self.words_repaired.append(words_repaired)
        self.words_unrepaired.append(words_unrepaired)
        for lang, share in leak:
            self.leak_doc.append(row)
            self.leak_lang.append(sys.intern(lang))
            self.leak_share.append(float(share))

    @classmethod
    def from_docs(cls, docs: Iterable[DocFacts] | DocColumns) -> DocColumns:
        if isinstance(docs, DocColumns):
            return docs
        cols = cls()
        for d in docs:
            cols.add(d.id, d.split, d.article_words, d.summary_words, d.pages,
                     d.language_share, sorted(d.leak.items()), d.words_repaired,
                     d.words_unrepaired)
        return cols

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, attr: str, split: str) -> np.ndarray:
        """One split's values of `attr`, in arrival order, without the missing shares."""
        mask = np.asarray(self.splits, dtype=object) == split
        values = np.asarray(getattr(self, attr), dtype=float)[mask]
        return values[~np.isnan(values)] if attr == "language_share" else values
