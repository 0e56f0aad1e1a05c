"""The per-document numbers of a run as columns: the one store the finish decides on and
the report describes (pages, lengths, language share, leak shares, dates, splits).

Why columns: a dict or small object per document costs ~0.4-1.5 KB; at arXiv-Lay's 215 K
papers the finish's decisions and the report's tables held gigabytes. Here a row is its id
pointer, a few machine numbers and ~20 bytes per abstract language, and numpy reads the
arrays directly.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from ..labels import LABELS
from ..licenses import UNKNOWN
from ..records import DocSummary


class DocTable:
    """One row per document, in the order rows were added."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.shard = array("i")  # the shard state holding its payload
        self.pages = array("q")
        self.summary_words = array("q")
        self.article_words = array("q")
        self.words_repaired = array("q")  # ligature codes repaired (pdftext/glyphs.py)
        self.words_unrepaired = array("q")  # words still holding U+FFFD
        self.language_share = array("d")  # NaN: no share
        self.dates: list[str | None] = []  # dropped by `forget_dates` once splits are decided
        self.given: list[str | None] = []  # the split a source published it in
        self.splits: list[str | None] = []  # the split it was written in (None: not kept)
        self.licenses: list[str] = []  # its normalised licence id (licenses.py)
        # abstract-language leak shares, sorted by language, of row j at
        # leak_start[j]:leak_start[j + 1]
        self.leak_start = array("q", [0])
        self.leak_lang: list[str] = []
        self.leak_share = array("d")
        self.languages: list[str] = []  # the document's main language
        # words per label (LABELS' order), len(LABELS) numbers per row; and the words the
        # `drop_labels` setting removed
        self.label_words = array("q")
        self.dropped_by_label = array("q")
        self.ocr_pages = array("q")  # pages read by OCR, and the seconds it took
        self.ocr_seconds = array("d")

    def add(self, doc_id: str, *, pages: int, summary_words: int, article_words: int,
            language_share: float | None, leak: Iterable[tuple[str, float]],
            words_repaired: int = 0, words_unrepaired: int = 0, shard: int = 0,
            date: str | None = None, given: str | None = None,
            split: str | None = None, license: str = UNKNOWN, language: str = "",
            label_words: Mapping[str, int] | Iterable[int] | None = None,
            dropped_by_label: int = 0, ocr_pages: int = 0, ocr_seconds: float = 0.0
            ) -> None:
        """`leak`: (language, share) pairs in any order (kept sorted by language);
        `label_words`: words per label name, or the len(LABELS) counts in order."""
        self.ids.append(doc_id)
        self.shard.append(shard)
        self.pages.append(pages)
        self.summary_words.append(summary_words)
        self.article_words.append(article_words)
        self.words_repaired.append(words_repaired)
        self.words_unrepaired.append(words_unrepaired)
        self.language_share.append(math.nan if language_share is None else language_share)
        self.dates.append(date)
        self.given.append(given)
        self.splits.append(sys.intern(split) if split else None)
        self.licenses.append(sys.intern(license))
        for lang, share in sorted(leak):
            self.leak_lang.append(sys.intern(lang))
            self.leak_share.append(float(share))
        self.leak_start.append(len(self.leak_share))
        self.languages.append(sys.intern(language))
        if isinstance(label_words, Mapping):
            self.label_words.extend(int(label_words.get(name, 0)) for name in LABELS)
        elif label_words is None:
            self.label_words.extend([0] * len(LABELS))
        else:
            self.label_words.extend(label_words)
        self.dropped_by_label.append(dropped_by_label)
        self.ocr_pages.append(ocr_pages)
        self.ocr_seconds.append(ocr_seconds)

    def labels_of(self, j: int) -> array:
        return self.label_words[j * len(LABELS):(j + 1) * len(LABELS)]

    def add_summary(self, shard: int, s: DocSummary) -> None:
        """A row from a processed document's summary in the run state (`pdf/payload.py`)."""
        self.add(s.id, pages=s.pages, summary_words=s.summary_words,
                 article_words=s.article_words, language_share=s.language_share,
                 leak=s.leakage.items(), words_repaired=s.words_repaired,
                 words_unrepaired=s.words_unrepaired, shard=shard,
                 date=s.publication_date, given=s.given_split, license=s.license,
                 language=s.language or "", label_words=s.label_words,
                 dropped_by_label=s.dropped_by_label, ocr_pages=s.ocr_pages,
                 ocr_seconds=s.ocr_seconds)

    def __len__(self) -> int:
        return len(self.ids)

    def leak(self, j: int) -> Iterator[tuple[str, float]]:
        for k in range(self.leak_start[j], self.leak_start[j + 1]):
            yield self.leak_lang[k], self.leak_share[k]

    def share(self, j: int) -> float | None:
        return None if math.isnan(self.language_share[j]) else self.language_share[j]

    def leak_rows(self) -> np.ndarray:
        """The row of each (document, language) leak share."""
        return np.repeat(np.arange(len(self.ids)), np.diff(np.asarray(self.leak_start)))

    def forget_dates(self) -> None:
        """Dates and given splits are needed only to decide splits: their memory goes back."""
        self.dates, self.given = [], []

    def select(self, rows: Iterable[int], splits: Iterable[str]) -> DocTable:
        """The given rows, in that order, each in the split given with it (the dataset's
        rows as written, for the report)."""
        out = DocTable()
        for j, split in zip(rows, splits, strict=True):
            out.add(self.ids[j], pages=self.pages[j], summary_words=self.summary_words[j],
                    article_words=self.article_words[j], language_share=self.share(j),
                    leak=self.leak(j), words_repaired=self.words_repaired[j],
                    words_unrepaired=self.words_unrepaired[j], shard=self.shard[j],
                    split=split, license=self.licenses[j], language=self.languages[j],
                    label_words=self.labels_of(j),
                    dropped_by_label=self.dropped_by_label[j],
                    ocr_pages=self.ocr_pages[j], ocr_seconds=self.ocr_seconds[j])
        return out

    def column(self, attr: str, split: str) -> np.ndarray:
        """One split's values of `attr`, in row order, without the missing shares."""
        mask = np.asarray(self.splits, dtype=object) == split
        values = np.asarray(getattr(self, attr), dtype=float)[mask]
        return values[~np.isnan(values)] if attr == "language_share" else values
