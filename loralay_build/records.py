"""Typed records that travel between stages.

A document's words are kept column-wise (parallel lists, the boxes one (n, 4) array),
which is the shape both the matcher and the Parquet writer want and costs far less than
one object per word on documents of tens of thousands of words.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, fields, replace
from itertools import compress
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .licenses import License, normalise_license

if TYPE_CHECKING:
    import pyarrow as pa

Box = tuple[float, float, float, float]
# The two frames a word's box can be told in, both (n, 4) float64 arrays of (x0, y0, x1,
# y1) points with a top-left origin (docs/rotation.md). Display frame: the page as a
# viewer shows it, after its /Rotate (`Page.rotation`, `Page.width` x `Page.height`);
# `Document.boxes` and everything published are in it. Read frame: the page as Poppler or
# Tesseract read its words, before that turn (`Page.read_size`); the group step lays
# pages out in it. On a page with no rotation the two are the same numbers. `turn_boxes`
# goes from one to the other (by r there, by 360 - r back).
DisplayBoxes: TypeAlias = np.ndarray
ReadBoxes: TypeAlias = np.ndarray
# the per-word columns of a Document, in the order the run state's payload stores them
WORD_COLUMNS = ("words", "boxes", "word_pages", "line_ids", "block_ids", "labels")


def box_array(boxes: Any = ()) -> np.ndarray:
    """Boxes as the (n, 4) float64 array a Document holds: from a list of 4-tuples, a
    flat list of 4n numbers, or an array already (then not copied)."""
    return np.asarray(boxes, dtype=np.float64).reshape(-1, 4)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A paper a source proposes: metadata, abstracts, and (once fetched) a local PDF.

    `abstracts` maps an ISO 639-1 code to the abstract text; the main language's
    abstract is the summary, every other one is only cut out of the body. `language` is
    the source's pick by `language.main_language`, which the body step checks against
    the body; `languages` are those its run keeps (None: any, as a manifest's), so a
    paper the body shows to be in another language is dropped, not relabelled.

    Licence and provenance (issue 27), each None when the source does not say:
    `license` is the licence exactly as the source's metadata states it (an id, a URL or
    free text; `licenses.normalise_license` reads it, docs/licenses.md says which field
    each source reads), `record_url` the URL of the metadata record, `retrieved_at` when
    that record was fetched (UTC, ISO 8601, `2026-11-24T09:30:00Z`) and `pdf_sha256` the
    sha256 of the PDF as downloaded (None for local files).
    """

    id: str
    source: str
    language: str
    abstracts: dict[str, str]
    pdf_path: str | None = None
    pdf_url: str | None = None
    publication_date: str | None = None
    split: str | None = None
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    license: str | None = None
    record_url: str | None = None
    retrieved_at: str | None = None
    pdf_sha256: str | None = None
    languages: tuple[str, ...] | None = None

    def with_pdf(self, path: str) -> Candidate:
        return replace(self, pdf_path=path)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "language": self.language,
            "abstracts": dict(self.abstracts),
            "pdf_path": self.pdf_path,
            "pdf_url": self.pdf_url,
            "publication_date": self.publication_date,
            "split": self.split,
            "title": self.title,
            "extra": dict(self.extra),
            "license": self.license,
            "record_url": self.record_url,
            "retrieved_at": self.retrieved_at,
            "pdf_sha256": self.pdf_sha256,
            # absent when any language is kept: a manifest's candidates print as before
            **({} if self.languages is None else {"languages": list(self.languages)}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Candidate:
        """Also JSON written before the licence and provenance fields: their keys are
        absent, and a download's sha256 was then kept in `extra`."""
        extra = dict(d.get("extra") or {})
        sha = d.get("pdf_sha256") or extra.pop("pdf_sha256", None)
        return cls(
            id=d["id"],
            source=d["source"],
            language=d["language"],
            abstracts=dict(d.get("abstracts") or {}),
            pdf_path=d.get("pdf_path"),
            pdf_url=d.get("pdf_url"),
            publication_date=d.get("publication_date"),
            split=d.get("split"),
            title=d.get("title"),
            extra=extra,
            license=d.get("license"),
            record_url=d.get("record_url"),
            retrieved_at=d.get("retrieved_at"),
            pdf_sha256=sha,
            languages=None if d.get("languages") is None else tuple(d["languages"]),
        )


@dataclass(frozen=True, slots=True)
class Rejection:
    """A candidate a fetcher had to give up on (no PDF, no abstract, ...).

    `bad_record`: an input record that names no document of its own (a manifest line
    that is not JSON, has no usable id, or repeats an id): it is counted by class with
    the first few examples (`failures.BadRecords`), not listed as a document, so a file
    of a million bad lines costs neither memory nor a huge report."""

    id: str
    source: str
    cls: str  # a FailureClass value
    message: str
    candidate: Candidate | None = None
    bad_record: bool = False


@dataclass(frozen=True, slots=True)
class Page:
    """A page as displayed: its size, and `rotation`, the quarter turn (clockwise, degrees)
    from the frame its words were read in to the displayed frame its boxes are given in.
    0 unless extraction read a rotated page unrotated and turned its boxes (the words, their
    order and the layout groups are those of the unrotated page; docs/rotation.md)."""

    number: int  # 1-based physical page number, never renumbered
    width: float
    height: float
    rotation: int = 0  # 0, 90, 180 or 270

    @property
    def read_size(self) -> tuple[float, float]:
        """Width and height in the frame the words were read in."""
        if self.rotation in (90, 270):
            return self.height, self.width
        return self.width, self.height

    def to_json(self) -> list[float | int]:
        """[number, width, height], with the rotation after them when it is not 0."""
        out: list[float | int] = [self.number, self.width, self.height]
        return out + [self.rotation] if self.rotation else out

    @classmethod
    def from_json(cls, v: list[Any]) -> Page:
        return cls(int(v[0]), float(v[1]), float(v[2]), int(v[3]) if len(v) > 3 else 0)


def turn_boxes(boxes: np.ndarray, w: Any, h: Any, rotation: int
               ) -> tuple[np.ndarray, tuple[Any, Any]]:
    """Boxes of a `w` x `h` page (top-left origin) as the page turned clockwise by
    `rotation` (0, 90, 180 or 270) shows them, and that page's size: what /Rotate does on
    screen. `w` and `h` may be arrays, one per box. Turning by 360 - r undoes a turn by r:
    by a page's `rotation` it takes `ReadBoxes` to `DisplayBoxes`, by 360 - it back."""
    x0, y0, x1, y1 = boxes.T
    if rotation == 90:
        return np.stack([h - y1, x0, h - y0, x1], axis=1), (h, w)
    if rotation == 180:
        return np.stack([w - x1, h - y1, w - x0, h - y0], axis=1), (w, h)
    if rotation == 270:
        return np.stack([y0, w - x1, y1, w - x0], axis=1), (h, w)
    return boxes, (w, h)


@dataclass(slots=True, eq=False)
class Document:
    """Words with boxes, pages, and Poppler's line/block groups (VILA's layout groups).

    Line and block ids are unique within the document and increase in reading order.
    `boxes` is an (n, 4) float64 array (x0, y0, x1, y1 in points), not a list of tuples:
    the extractor's clamps produce it in one call, and the run state and the Parquet row
    take it as it is; a tuple per word cost ~0.03 of Poppler's own time (docs/performance.md).
    The constructor also takes a list of 4-tuples.
    """

    id: str
    pages: list[Page]
    words: list[str] = field(default_factory=list)
    boxes: DisplayBoxes = field(default_factory=box_array)
    word_pages: list[int] = field(default_factory=list)
    line_ids: list[int] = field(default_factory=list)
    block_ids: list[int] = field(default_factory=list)
    # each word's block label, a code into group.labels.LABELS (VILA's S2-VL ids); empty
    # until the group step labels the blocks
    labels: list[int] = field(default_factory=list)
    # tokens dropped by the documented invisible-token rule (see pdftext/parse.py)
    dropped_invisible: int = 0
    # words whose ligature codes pdftext/glyphs.py repaired, and words still holding U+FFFD
    words_repaired: int = 0
    words_unrepaired: int = 0
    # body words removed because their label is one of the `drop_labels` setting's
    dropped_by_label: int = 0
    # the 1-based pages whose words Tesseract read (`ocr: auto|always`); stored only when
    # there is one, so a born-digital document's stored bytes are as before OCR existed
    ocr_pages: list[int] = field(default_factory=list)
    ocr_seconds: float = 0.0  # the time Tesseract took on them (the report's)
    # Poppler's raw bytes of the words parsed to U+FFFD, by index: read by the glyph
    # repair, then emptied (never stored)
    raw_broken: dict[int, bytes] = field(default_factory=dict)
    # the boxes in the frame the words were read in, when a page's were turned for display
    # (`Page.rotation`), the very numbers read, not turned back: set by extraction, read by
    # the group step (which lays pages out as read), then not carried (never stored)
    read_boxes: ReadBoxes | None = None

    def __post_init__(self) -> None:
        self.boxes = box_array(self.boxes)

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Document):
            return NotImplemented
        # every field, so one added later is compared too; the box arrays by their values
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name))
                   if f.name in ("boxes", "read_boxes")
                   else getattr(self, f.name) == getattr(other, f.name)
                   for f in fields(self))

    def page_size(self, number: int) -> tuple[float, float]:
        p = self.pages[number - 1]
        return p.width, p.height

    def page_starts(self) -> list[int]:
        """Index of each page's first word, pages 1 to len(pages), and one more entry past
        the last page's words (`word_pages` sorted, as extraction gives them): a page's
        words are starts[p - 1]:starts[p]; an empty page starts where the next does."""
        wp = self.word_pages
        return [bisect_left(wp, p) for p in range(1, len(self.pages) + 2)]

    def to_json(self, word_columns: bool = True) -> dict[str, Any]:
        """Column-wise, boxes flattened: the shape the run state stores (issue: the codec
        belongs to the records). `word_columns=False` leaves out `WORD_COLUMNS`, which
        the columnar payload stores as Arrow arrays instead."""
        out: dict[str, Any] = {"id": self.id,
                               "pages": [p.to_json() for p in self.pages]}
        if word_columns:
            out.update(words=self.words, boxes=self.boxes.ravel().tolist(),
                       word_pages=self.word_pages, line_ids=self.line_ids,
                       block_ids=self.block_ids, labels=self.labels)
        out.update(dropped_invisible=self.dropped_invisible,
                   words_repaired=self.words_repaired, words_unrepaired=self.words_unrepaired,
                   dropped_by_label=self.dropped_by_label)
        if self.ocr_pages:
            out.update(ocr_pages=self.ocr_pages, ocr_seconds=self.ocr_seconds)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Document:
        flat = d["boxes"]
        return cls(id=d["id"], pages=[Page.from_json(p) for p in d["pages"]],
                   words=d["words"],
                   boxes=box_array(flat),
                   word_pages=d["word_pages"], line_ids=d["line_ids"],
                   block_ids=d["block_ids"], labels=d.get("labels", []),
                   dropped_invisible=d["dropped_invisible"],
                   words_repaired=d.get("words_repaired", 0),
                   words_unrepaired=d.get("words_unrepaired", 0),
                   dropped_by_label=d.get("dropped_by_label", 0),
                   ocr_pages=d.get("ocr_pages", []), ocr_seconds=d.get("ocr_seconds", 0.0))

    def keep(self, mask: list[bool]) -> Document:
        """A copy with only the words whose mask entry is True (ids keep their values)."""
        return Document(
            id=self.id,
            pages=self.pages,
            words=list(compress(self.words, mask)),
            boxes=self.boxes[np.asarray(mask, dtype=bool).reshape(-1)],
            word_pages=list(compress(self.word_pages, mask)),
            line_ids=list(compress(self.line_ids, mask)),
            block_ids=list(compress(self.block_ids, mask)),
            labels=list(compress(self.labels, mask)),
            dropped_invisible=self.dropped_invisible,
            words_repaired=self.words_repaired,
            words_unrepaired=self.words_unrepaired,
            ocr_pages=self.ocr_pages, ocr_seconds=self.ocr_seconds,
            dropped_by_label=self.dropped_by_label,
        )


def normalized_box(box: Box, width: float, height: float) -> tuple[int, int, int, int]:
    """LayoutLM's 0-1000 integer box (the published `article_norm_bboxes`)."""
    def n(v: float, size: float) -> int:
        return max(0, min(1000, int(1000 * v / size))) if size > 0 else 0

    x0, y0, x1, y1 = box
    return n(x0, width), n(y0, height), n(x1, width), n(y1, height)


@dataclass(frozen=True, slots=True)
class AbstractMatch:
    """Where one abstract was found in the body, in word indices [start, end)."""

    language: str
    start: int
    end: int
    distance: int
    method: str  # "exact" | "fuzzy"
    pages: tuple[int, ...] = ()

    def to_json(self) -> list[Any]:
        return [self.language, self.start, self.end, self.distance, self.method,
                list(self.pages)]

    @classmethod
    def from_json(cls, v: list[Any]) -> AbstractMatch:
        lang, start, end, dist, method, pages = v
        return cls(lang, start, end, dist, method, tuple(pages))


@dataclass(frozen=True, slots=True)
class DocSummary:
    """What the finish decides on for one processed document (licences, duplicates,
    percentiles, splits, the report), without its words: written by the worker
    (`pdf/payload.summarize`) into the shard state's `documents.summary`, read back by the
    corpus steps and the row table. One record both sides use, so a key is spelled once."""

    id: str
    source: str
    language: str | None
    publication_date: str | None
    given_split: str | None
    pages: int
    article_words: int
    summary_words: int
    language_share: float | None
    detected_language: str | None
    leakage: dict[str, float]  # language -> share of its abstract's n-grams left in the body
    words_repaired: int  # ligature codes repaired (pdftext/glyphs.py)
    words_unrepaired: int  # words still holding U+FFFD
    label_words: dict[str, int]  # body words per label (labels with none left out)
    dropped_by_label: int  # words the `drop_labels` setting removed
    # a list: an abstract printed twice is matched (and removed) twice
    matches: list[dict[str, Any]]
    license: str  # the normalised licence id
    print: str  # the text's MinHash print (corpus/prints.py)
    pdf_sha256: str | None  # two ids of one PDF are the same paper (corpus/duplicates.py)
    ocr_pages: int  # pages whose words Tesseract read
    ocr_seconds: float  # and the time it took on them

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DocSummary:
        """KeyError for a summary without one of the keys (none is optional)."""
        return cls(**{f.name: d[f.name] for f in fields(cls)})


@dataclass(slots=True)
class ProcessedDoc:
    """A document after the per-document stages: body without abstracts, plus summary facts
    that the corpus-wide steps (percentiles, splits, report) read without the words."""

    candidate: Candidate
    document: Document
    matches: list[AbstractMatch]
    language_share: float | None  # share of the body in the main language (cld2)
    detected_language: str | None
    leakage: dict[str, float]  # language -> share of the abstract's n-grams left in the body
    # the candidate's licence normalised, once, here: the finish's decisions (through the
    # summary), the stored payload and the Parquet columns all read this one value, so
    # they cannot disagree (the column was normalised again when written)
    license: License | None = None
    # the PDF's bookmarks, read once by the extract step (the PDF is not at hand when the
    # row is written); stored only when there are some, so a PDF without any stores the
    # bytes it stored before the outline was read
    outline: tuple[OutlineEntry, ...] = ()

    def __post_init__(self) -> None:
        if self.license is None:
            self.license = normalise_license(self.candidate.license)

    @property
    def terms(self) -> License:
        assert self.license is not None  # set in __post_init__
        return self.license

    def to_json(self, word_columns: bool = True) -> dict[str, Any]:
        lic = self.terms
        out = {"candidate": self.candidate.to_json(),
               "document": self.document.to_json(word_columns),
               "matches": [m.to_json() for m in self.matches],
               "language_share": self.language_share,
               "detected_language": self.detected_language, "leakage": self.leakage,
               "license": {"id": lic.id, "url": lic.url, "text": lic.text}}
        if self.outline:
            out["outline"] = [e.to_json() for e in self.outline]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ProcessedDoc:
        lic = d.get("license")
        return cls(Candidate.from_json(d["candidate"]), Document.from_json(d["document"]),
                   [AbstractMatch.from_json(m) for m in d["matches"]], d["language_share"],
                   d["detected_language"], d["leakage"], License(**lic) if lic else None,
                   outline_from_json(d.get("outline")))

    @property
    def summary(self) -> str:
        return self.candidate.abstracts.get(self.candidate.language, "")

    @property
    def num_pages(self) -> int:
        return len(self.document.pages)

    @property
    def summary_words(self) -> int:
        return len(self.summary.split())


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one input id, as `report.json["documents"]` shows it."""

    status: str  # "kept" | "dropped"
    split: str | None = None
    cls: str | None = None  # a FailureClass value when dropped
    stage: str | None = None
    message: str | None = None

    @classmethod
    def kept(cls, split: str) -> Outcome:
        return cls("kept", split=split)

    @classmethod
    def dropped(cls, failure_class: str, stage: str, message: str) -> Outcome:
        return cls("dropped", cls=str(failure_class), stage=stage, message=message)

    def to_json(self) -> dict[str, Any]:
        if self.status == "kept":
            return {"status": "kept", "split": self.split}
        return {"status": self.status, "class": self.cls, "stage": self.stage,
                "message": self.message}

    @classmethod
    def from_json(cls, data: object) -> Outcome | None:
        """The outcome `to_json` wrote; None for anything else (a damaged or foreign
        report is not a reason to fail the command that only wanted to explain)."""
        if not isinstance(data, dict) or data.get("status") not in ("kept", "dropped"):
            return None
        fields = (data.get("split"), data.get("class"), data.get("stage"), data.get("message"))
        if not all(v is None or isinstance(v, str) for v in fields):
            return None
        return cls(data["status"], *fields)


@dataclass(frozen=True, slots=True)
class WordColumns:
    """A body's word columns as arrays: what a row is built from, whichever payload
    they came from (lists of a `ProcessedDoc`, or Arrow buffers of `pdf/payload.py`)."""

    words: pa.Array  # string
    boxes: np.ndarray  # (n, 4) float64 PDF points
    pages: np.ndarray  # (n,) 1-based
    line_ids: pa.Array | list[int]
    block_ids: pa.Array | list[int]
    labels: np.ndarray  # (n,) int8 codes into group.labels.LABELS


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One bookmark of the PDF's outline: the author's own section tree, read by the
    extract step and carried to the row, where it gives the `sections` column the
    headings it matches (`group/sections.py`)."""

    title: str
    level: int  # 1 = top

    def to_json(self) -> list[Any]:
        return [self.title, self.level]

    @classmethod
    def from_json(cls, v: list[Any]) -> OutlineEntry:
        return cls(str(v[0]), int(v[1]))


def outline_from_json(v: list[Any] | None) -> tuple[OutlineEntry, ...]:
    return tuple(OutlineEntry.from_json(e) for e in v or ())


@dataclass(frozen=True, slots=True)
class ColumnDoc:
    """A kept document as the finish reads it: the candidate, page sizes, word columns."""

    candidate: Candidate
    sizes: np.ndarray  # (pages, 2) float64 width, height
    columns: WordColumns
    license: License  # as the worker normalised it (`ProcessedDoc.license`)
    ocr_pages: tuple[int, ...] = ()  # the pages whose words came from OCR (`Document`)
    rotations: tuple[int, ...] = ()  # each page's `Page.rotation` (empty: none turned)
    outline: tuple[OutlineEntry, ...] = ()  # the PDF's bookmarks (`ProcessedDoc.outline`)

    @property
    def summary(self) -> str:
        return self.candidate.abstracts.get(self.candidate.language, "")
