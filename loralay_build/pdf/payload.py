"""How a processed document is kept in the run state: one format, the word columns as Arrow.

A payload is `MAGIC` then an Arrow IPC stream of one batch: the body's word columns
(zstd-compressed buffers) with everything else of the document (candidate, page sizes,
matches, counts) as JSON in the schema's metadata. Why Arrow: the finish builds each
Parquet row from these buffers and numpy views (`read_columns`), with no Python object
per word (it used to decode JSON into lists only to turn them back into Arrow arrays:
~16 of a document's ~17 ms there). A state written in another format is not decoded:
`FORMAT` is part of every result's fingerprint, so such results are redone.
The summary beside it is what the corpus-wide steps read without the words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pyarrow as pa

from ..group.labels import label_counts, labels_of
from ..licenses import License
from ..records import Candidate, DocSummary, Document, Page, ProcessedDoc

if TYPE_CHECKING:  # the write side imports `datasets` (~0.7 s): workers only encode
    from ..corpus.prints import DocPrint
    from ..records import ColumnDoc

MAGIC = b"LZA3"  # 2: the words' labels (issue 34); 3: the licence as normalised (issue 31)
FORMAT = "payload-" + MAGIC.decode("ascii")  # in the fingerprint: another format is redone
_META = b"doc"
_OPTIONS = pa.ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=1))
_SCHEMA = pa.schema([
    ("words", pa.string()),
    ("boxes", pa.list_(pa.float64(), 4)),
    ("word_pages", pa.int32()),
    ("line_ids", pa.int32()),
    ("block_ids", pa.int32()),
    ("labels", pa.int8()),  # codes into group.labels.LABELS
])


def _word_batch(d: Document) -> pa.RecordBatch:
    """int32 ids and pages: a value that does not fit is refused here, as the compact
    row's int32/int16 casts would refuse it later. Every array is made from its buffers:
    `pa.array` imports pandas on first use (~0.35 s and ~50 MB in every worker)."""
    flat = _from_numpy(np.ascontiguousarray(d.boxes, np.float64).reshape(-1), pa.float64())
    return pa.RecordBatch.from_arrays([
        _strings(d.words),
        pa.FixedSizeListArray.from_arrays(flat, 4),
        _int32s(d.word_pages),
        _int32s(d.line_ids),
        _int32s(d.block_ids),
        _from_numpy(np.ascontiguousarray(labels_of(d), np.int8), pa.int8()),
    ], schema=_SCHEMA)


def _from_numpy(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def _int32s(values: list[int]) -> pa.Array:
    wide = np.array(values, dtype=np.int64)
    if wide.size and (wide.min() < -(2**31) or wide.max() >= 2**31):
        raise OverflowError(f"a value outside int32: {int(wide.min())}..{int(wide.max())}")
    return _from_numpy(wide.astype(np.int32), pa.int32())


def _strings(words: list[str]) -> pa.Array:
    """UTF-8 data and int32 offsets; a word's byte length is its length unless the
    document holds a non-ASCII word."""
    text = "".join(words)
    data = text.encode("utf-8")
    sizes = map(len, words) if len(data) == len(text) else map(len, map(str.encode, words))
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(sizes, np.int64, len(words)), out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise OverflowError(f"{offsets[-1]:,} bytes of words: more than an Arrow string holds")
    return pa.Array.from_buffers(pa.string(), len(words), [
        None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def encode(p: ProcessedDoc) -> bytes:
    """The payload: the word columns as Arrow, the rest as JSON metadata."""
    meta = p.to_json(word_columns=False)
    batch = _word_batch(p.document)
    schema = _SCHEMA.with_metadata({_META: orjson.dumps(meta)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=_OPTIONS) as w:
        w.write_batch(batch)
    return MAGIC + sink.getvalue().to_pybytes()


def read(payload: bytes) -> tuple[dict[str, Any], pa.RecordBatch]:
    """The metadata and the word batch; ValueError for bytes in another format."""
    if payload[:4] != MAGIC:
        raise ValueError("not a payload of this format")
    reader = pa.ipc.open_stream(pa.py_buffer(payload)[4:])
    batch = reader.read_next_batch()
    return orjson.loads(reader.schema.metadata[_META]), batch


def read_columns(payload: bytes) -> ColumnDoc:
    """What the finish's row needs, word columns as Arrow/numpy (no per-word objects)."""
    from ..records import ColumnDoc, WordColumns, outline_from_json

    meta, b = read(payload)
    sizes = np.asarray([p[1:3] for p in meta["document"]["pages"]], np.float64)
    boxes = b.column(1).flatten().to_numpy().reshape(-1, 4)
    cols = WordColumns(words=b.column(0), boxes=boxes,
                       pages=b.column(2).to_numpy().astype(np.int64),
                       line_ids=b.column(3), block_ids=b.column(4),
                       labels=b.column(5).to_numpy())
    return ColumnDoc(Candidate.from_json(meta["candidate"]), sizes.reshape(-1, 2), cols,
                     License(**meta["license"]), tuple(meta["document"].get("ocr_pages", [])),
                     tuple(Page.from_json(p).rotation for p in meta["document"]["pages"]),
                     outline_from_json(meta.get("outline")))


def summarize(p: ProcessedDoc, text_print: DocPrint) -> DocSummary:
    """What the finish decides on (licences, duplicates, percentiles, splits, the report),
    without the words."""
    c = p.candidate
    return DocSummary(
        id=c.id, source=c.source, language=c.language,
        publication_date=c.publication_date, given_split=c.split, pages=p.num_pages,
        article_words=len(p.document.words), summary_words=p.summary_words,
        language_share=p.language_share, detected_language=p.detected_language,
        leakage=p.leakage, words_repaired=p.document.words_repaired,
        words_unrepaired=p.document.words_unrepaired,
        label_words=label_counts(p.document), dropped_by_label=p.document.dropped_by_label,
        matches=[{"language": m.language, "distance": m.distance, "method": m.method,
                  "pages": list(m.pages)} for m in p.matches],
        license=p.terms.id, print=text_print.to_str(), pdf_sha256=c.pdf_sha256,
        ocr_pages=len(p.document.ocr_pages), ocr_seconds=p.document.ocr_seconds)
