"""The two column sets a dataset can be written with, and one document as an Arrow row.

`compact` (the default) keeps everything the build knows at the smallest exact types:
float32 PDF-point boxes, int16 0-1000 boxes and pages, int32 line and block ids, page
sizes, every other abstract and the provenance.

`published` reproduces the features of the published LoRaLay datasets on the Hugging
Face Hub (nglaura/{arxivlay,pubmedlay,hal,scielo,koreascience}-summarization), column
for column, so that `datasets.concatenate_datasets` accepts a rebuilt split beside a
published one. Where the facts come from:
- laudao/loralay-modeling, `src/loralay/data/datasets/{arxiv_lay,pubmed_lay,hal,scielo,
  koreascience}.py` (the authors' loaders), `_info()`: `article_id` string,
  `article_words` Sequence(string), `article_bboxes` and `article_norm_bboxes`
  Sequence(Sequence(int64)) with no fixed length, `abstract` string, in that order;
- the Hub loading scripts (e.g. `hal-summarization.py`, commit c8daf04, and
  `scielo-summarization.py`, commit 34e8621) add `_ARTICLE_PDF_URL = "article_pdf_url"`,
  and the Hub viewer of nglaura/arxivlay-summarization lists the six columns as
  article_id, article_words, article_bboxes, article_norm_bboxes, abstract,
  article_pdf_url (strings and int64 sequences).
The original TSVs held PDF points rounded with Python's `round` (half to even), so the
float boxes are rounded the same way (`np.rint`); the 0-1000 boxes are the compact
column's values (truncated, clamped) widened to int64. Pages, line and block ids, page
sizes, other abstracts, language, date and source have no published column and are
left out: a published-format dataset cannot carry them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from datasets import ClassLabel, Features, List, Value

from ..group.labels import labels_of
from ..group.sections import references_of, sections_of
from ..labels import LABELS
from ..licenses import License
from ..records import (
    Candidate,
    ColumnDoc,
    OutlineEntry,
    ProcessedDoc,
    WordColumns,
    turn_boxes,
)

COMPACT, PUBLISHED = "compact", "published"

FEATURES = Features({
    "article_id": Value("string"),
    "article_words": List(Value("string")),
    "article_bboxes": List(List(Value("float32"), length=4)),
    "article_norm_bboxes": List(List(Value("int16"), length=4)),
    "article_pages": List(Value("int16")),
    "article_line_ids": List(Value("int32")),
    "article_block_ids": List(Value("int32")),
    # VILA's S2-VL ids with their names (`labels.py`): `datasets` and the Hub show the map
    "article_labels": List(ClassLabel(names=list(LABELS))),
    "article_section_ids": List(Value("int32")),
    "page_sizes": List(List(Value("float32"), length=2)),
    "ocr_pages": List(Value("int16")),
    "sections": List({"title": Value("string"), "level": Value("int8"),
                      "parent": Value("int32")}),
    "references": List(Value("string")),
    "abstract": Value("string"),
    "other_abstracts": List({"language": Value("string"), "text": Value("string")}),
    "article_pdf_url": Value("string"),
    "language": Value("string"),
    "publication_date": Value("string"),
    "source": Value("string"),
    "license": Value("string"),
    "license_url": Value("string"),
    "license_text": Value("string"),
    "record_url": Value("string"),
    "pdf_sha256": Value("string"),
    "retrieved_at": Value("string"),
})
PUBLISHED_FEATURES = Features({
    "article_id": Value("string"),
    "article_words": List(Value("string")),
    "article_bboxes": List(List(Value("int64"))),
    "article_norm_bboxes": List(List(Value("int64"))),
    "abstract": Value("string"),
    "article_pdf_url": Value("string"),
})
FEATURE_SETS = {COMPACT: FEATURES, PUBLISHED: PUBLISHED_FEATURES}
# the Arrow schemas carry the features as JSON under the b"huggingface" metadata key
SCHEMAS = {name: f.arrow_schema for name, f in FEATURE_SETS.items()}
SCHEMA: pa.Schema = SCHEMAS[COMPACT]
SCHEMA_STRUCT = SCHEMA.field("sections").type
COLUMNS = tuple(FEATURES)


def features_for(name: str) -> Features:
    """The Features of a feature set; an unknown name is an error, never a silent default."""
    try:
        return FEATURE_SETS[name]
    except KeyError:
        raise ValueError(f"features must be one of {sorted(FEATURE_SETS)}, not {name!r}") \
            from None


@dataclass(frozen=True, slots=True)
class WordGeometry:
    """A document's word geometry as arrays, validated once for both feature sets."""

    boxes: np.ndarray  # (n, 4) float64 PDF points
    norm: np.ndarray  # (n, 4) int16, 0-1000
    pages: np.ndarray  # (n,) 1-based
    sizes: np.ndarray  # (pages, 2) float64 width, height


def _norm_boxes(boxes: np.ndarray, pages: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Vectorised `records.normalized_box` (same float64 ops, truncation and clamp), in
    place on one scratch array: the finish runs it on every word of the corpus."""
    wh = sizes[pages - 1]  # (n, 2): width, height per word
    dims = np.concatenate([wh, wh], axis=1)  # x0/w, y0/h, x1/w, y1/h
    sized = dims > 0
    vals = np.multiply(boxes, 1000)
    if sized.all():
        np.divide(vals, dims, out=vals)
    else:  # a page without a size gives 0, as `normalized_box` does
        np.divide(vals, np.where(sized, dims, 1.0), out=vals)
        vals[~sized] = 0
    np.trunc(vals, out=vals)
    np.clip(vals, 0, 1000, out=vals)
    return vals.astype(np.int16)


def column_doc(p: ProcessedDoc) -> ColumnDoc:
    """A `ProcessedDoc`'s lists as columns (the path of payloads stored as JSON)."""
    d = p.document
    n = len(d.words)
    if not (len(d.boxes) == len(d.word_pages) == len(d.line_ids) == len(d.block_ids) == n):
        raise ValueError(f"{p.candidate.id}: word columns have different lengths")
    cols = WordColumns(pa.array(d.words, pa.string()),
                       np.asarray(d.boxes, dtype=np.float64).reshape(n, 4),
                       np.asarray(d.word_pages, dtype=np.int64).reshape(n),
                       d.line_ids, d.block_ids, labels_of(d))
    sizes = np.asarray([(pg.width, pg.height) for pg in d.pages], dtype=np.float64)
    return ColumnDoc(p.candidate, sizes.reshape(len(d.pages), 2), cols, p.terms,
                     tuple(d.ocr_pages), tuple(pg.rotation for pg in d.pages), p.outline)


def word_geometry(doc: ColumnDoc) -> WordGeometry:
    """Raises if the word columns disagree or a word points at a page the document lacks."""
    c, n = doc.columns, len(doc.columns.words)
    if not (len(c.boxes) == len(c.pages) == len(c.line_ids) == len(c.block_ids)
            == len(c.labels) == n):
        raise ValueError(f"{doc.candidate.id}: word columns have different lengths")
    pages, sizes = c.pages, doc.sizes
    if n and (pages.min() < 1 or pages.max() > len(sizes)):
        raise ValueError(f"{doc.candidate.id}: word page outside 1..{len(sizes)}")
    return WordGeometry(c.boxes, _norm_boxes(c.boxes, pages, sizes), pages, sizes)


def _one_list(values: pa.Array) -> pa.Array:
    """Wrap a flat array as a single list value (one row)."""
    return pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)


def _fixed(values: np.ndarray, width: int, arrow_type: pa.DataType) -> pa.Array:
    """One row of fixed-size lists (`List(..., length=width)`)."""
    flat = pa.array(values.reshape(-1), type=arrow_type)
    return _one_list(pa.FixedSizeListArray.from_arrays(flat, width))


def _nested(values: np.ndarray, width: int) -> pa.Array:
    """One row of variable-size int64 lists (`Sequence(Sequence(int64))`), `width` each."""
    flat = pa.array(values.reshape(-1), type=pa.int64())
    offsets = pa.array(np.arange(0, len(flat) + 1, width, dtype=np.int32))
    return _one_list(pa.ListArray.from_arrays(offsets, flat))


def _int32(values: pa.Array | list[int]) -> pa.Array:
    """int32 ids; the safe cast refuses an id that does not fit instead of wrapping it."""
    if isinstance(values, pa.Array):
        return values.cast(pa.int32())
    return pa.array(values, pa.int32())


def label_ids(codes: np.ndarray) -> pa.Array:
    """The labels' ids as the ClassLabel stores them (int64; Parquet keeps them as a
    dictionary of at most 16 entries)."""
    return pa.array(np.asarray(codes, dtype=np.int64), pa.int64())


def other_abstracts(p: ProcessedDoc | ColumnDoc) -> list[dict[str, str]]:
    """Every abstract but the summary, sorted by language so reruns give identical bytes."""
    c = p.candidate
    return [{"language": lang, "text": text}
            for lang, text in sorted(c.abstracts.items()) if lang != c.language]


def _compact_columns(p: ColumnDoc, lay: WordGeometry) -> dict[str, pa.Array]:
    d, c = p.columns, p.candidate
    return {
        "article_bboxes": _fixed(lay.boxes.astype(np.float32), 4, pa.float32()),
        "article_norm_bboxes": _fixed(lay.norm, 4, pa.int16()),
        "article_pages": _one_list(pa.array(lay.pages, pa.int16())),
        "article_line_ids": _one_list(_int32(d.line_ids)),
        "article_block_ids": _one_list(_int32(d.block_ids)),
        "article_labels": _one_list(label_ids(d.labels)),
        "page_sizes": _fixed(lay.sizes.astype(np.float32), 2, pa.float32()),
        "ocr_pages": _one_list(pa.array(p.ocr_pages, pa.int16())),
        **_structure_columns(d, _read_frame(lay, p.rotations), p.outline),
        "other_abstracts": pa.array([other_abstracts(p)],
                                    SCHEMA.field("other_abstracts").type),
        "language": pa.array([c.language], pa.string()),
        "publication_date": pa.array([c.publication_date], pa.string()),
        "source": pa.array([c.source], pa.string()),
        **_provenance(c, p.license),
    }


def _read_frame(lay: WordGeometry, rotations: tuple[int, ...]) -> WordGeometry:
    """The boxes turned back to the frame the page was read in (`Page.rotation`): the
    section and reference rules read indents and sizes, which a page shown upside down
    or sideways must not change (a turned paper gives the same tree and entries)."""
    if not any(rotations):
        return lay
    boxes = lay.boxes.copy()
    rot = np.asarray(rotations, dtype=np.int64)[lay.pages - 1]
    wh = lay.sizes[lay.pages - 1]
    for r in (90, 180, 270):
        m = rot == r
        if m.any():
            boxes[m], _ = turn_boxes(lay.boxes[m], wh[m, 0], wh[m, 1], 360 - r)
    return WordGeometry(boxes, lay.norm, lay.pages, lay.sizes)


def _structure_columns(d: WordColumns, lay: WordGeometry, outline: tuple[OutlineEntry, ...] = ()
                       ) -> dict[str, pa.Array]:
    """The section tree, each word's section and the reference entries
    (`group/sections.py`, issue 45), from the word columns the row is made of and the
    PDF's outline (SECTIONS_RULE)."""
    words = d.words.to_pylist()
    blocks = np.asarray(d.block_ids, dtype=np.int64)
    lines = np.asarray(d.line_ids, dtype=np.int64)
    secs, ids = sections_of(words, lay.boxes, blocks, d.labels,
                            [(e.title, e.level) for e in outline], lay.pages)
    refs = references_of(words, lay.boxes, lines, blocks, d.labels)
    tree = [{"title": s.title, "level": s.level, "parent": s.parent} for s in secs]
    return {
        "article_section_ids": _one_list(pa.array(ids, pa.int32())),
        "sections": pa.array([tree], SCHEMA_STRUCT),
        "references": pa.array([refs], pa.list_(pa.string())),
    }


def _provenance(c: Candidate, lic: License) -> dict[str, pa.Array]:
    """The document's licence as the worker normalised it (id; the URL and the words its
    source gave) and where it came from (the sources' metadata)."""
    return {name: pa.array([value], pa.string()) for name, value in (
        ("license", lic.id), ("license_url", lic.url), ("license_text", lic.text),
        ("record_url", c.record_url), ("pdf_sha256", c.pdf_sha256),
        ("retrieved_at", c.retrieved_at))}


def _published_columns(lay: WordGeometry) -> dict[str, pa.Array]:
    return {
        "article_bboxes": _nested(np.rint(lay.boxes).astype(np.int64), 4),
        "article_norm_bboxes": _nested(lay.norm.astype(np.int64), 4),
    }


def doc_to_batch(doc: ProcessedDoc | ColumnDoc, features: str = COMPACT) -> pa.RecordBatch:
    """One document as a one-row batch with exactly the feature set's types and order
    (the casts validate ranges: an int16 overflow is an error, not a wrapped value)."""
    schema = SCHEMAS[features] if features in SCHEMAS else features_for(features).arrow_schema
    p = doc if isinstance(doc, ColumnDoc) else column_doc(doc)
    lay = word_geometry(p)
    c = p.candidate
    cols = {
        "article_id": pa.array([c.id], pa.string()),
        "article_words": _one_list(p.columns.words),
        "abstract": pa.array([p.summary], pa.string()),
        "article_pdf_url": pa.array([c.pdf_url], pa.string()),
    }
    cols |= _compact_columns(p, lay) if features == COMPACT else _published_columns(lay)
    return pa.RecordBatch.from_arrays([cols[n] for n in schema.names], schema=schema)
