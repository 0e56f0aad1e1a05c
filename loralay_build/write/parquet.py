"""Stream ProcessedDocs into Parquet shards that `datasets.load_dataset(DIR)` reads.

Why this shape:
- The column types come from one `datasets.Features`, so the Hugging Face JSON sits in
  the Parquet schema metadata (key `huggingface`) and the card's YAML is derived from the
  same object: the three can never disagree.
- Each document becomes a one-row Arrow batch as soon as it arrives and the Python
  lists are dropped, so the buffer holds Arrow bytes we can measure exactly; a row group
  is flushed when it reaches `row_group_bytes` (Hub viewer limit) and a file is closed
  every `rows_per_shard` documents. Memory is bounded by one row group, not the corpus.
- The shards are written into a hidden temporary folder inside DIR, named after their
  content and swapped in for `DIR/data` only once every split is complete
  (`shards.py`); a failed run leaves the previous dataset untouched.
- An id names one paper: a second row with an id already written (in any split) would
  leak a paper between train and test or weigh it twice, so the writer refuses it with
  `DuplicateRowError` and, like any failure, leaves the previous dataset as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..paths import DATA_DIR as DATA_DIR  # the dataset's Parquet folder
from ..records import ColumnDoc, ProcessedDoc
from .features import COMPACT, SCHEMAS, doc_to_batch, features_for
from .readahead import ReadAhead
from .shards import ShardFolder

Doc = ProcessedDoc | ColumnDoc  # a JSON-decoded document, or the finish's columns

DEFAULT_ROWS_PER_SHARD = 2000  # ~500 MB in Arrow at ~209 KB/doc (ecosystem.md B.1)
DEFAULT_ROW_GROUP_BYTES = 100 * 1024 * 1024  # datasets' MAX_ROW_GROUP_SIZE


class DuplicateRowError(ValueError):
    """A document id arrived twice in one dataset; nothing of this run is swapped in."""

    def __init__(self, article_id: str, split: str, first_split: str):
        self.article_id, self.split, self.first_split = article_id, split, first_split
        super().__init__(f"article_id {article_id!r} written twice (first in {first_split!r}, "
                         f"again in {split!r}); the dataset was not replaced")


@dataclass(slots=True)
class WriteResult:
    """What the card and the report need to know about the files just written."""

    counts: dict[str, int]
    shards: dict[str, list[str]] = field(default_factory=dict)  # split -> paths relative to DIR
    features: str = COMPACT  # the feature set the shards were written with
    languages: list[str] = field(default_factory=list)  # `language` values written, sorted


class _Tally:
    """Ids written so far in this dataset (any split) and the languages they bring."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}  # id -> split it was written in
        self.languages: set[str] = set()

    def admit(self, doc_id: str, language: str | None, split: str) -> None:
        if doc_id in self.ids:
            raise DuplicateRowError(doc_id, split, self.ids[doc_id])
        self.ids[doc_id] = split
        if language:
            self.languages.add(language)


@dataclass(frozen=True, slots=True)
class _Options:
    rows_per_shard: int
    row_group_bytes: int
    features: str
    read_ahead: bool


# How each word column of the compact features is encoded in Parquet. Measured on one
# 100 MB row group of 390 distinct real papers (docs/performance.md, round 5): a
# dictionary pays for itself on the words only; the float boxes compress best as byte
# streams, the 0-1000 boxes plain, and the line and block ids, which climb by 0 or 1 from
# word to word, as deltas: 13 % smaller files than a dictionary on every column, in less
# time. The published features' int64 boxes keep their dictionary, as the published
# datasets do (a byte stream of integers needs a reader of 2024 or later).
_WORD_COLUMN_ENCODING = {
    "article_bboxes": ("BYTE_STREAM_SPLIT", pa.float32()),
    "article_norm_bboxes": ("PLAIN", pa.int16()),
    "article_line_ids": ("DELTA_BINARY_PACKED", pa.int32()),
    "article_block_ids": ("DELTA_BINARY_PACKED", pa.int32()),
}


def column_options(schema: pa.Schema) -> dict[str, object]:
    """`use_dictionary`, `column_encoding` and `write_statistics` for a dataset schema:
    the values of each column in `_WORD_COLUMN_ENCODING` of the type named there get that
    encoding and no dictionary; every other leaf keeps its dictionary. Statistics (each
    page's min and max) are written for the one-value-per-row columns only: of a page of
    words or boxes they say nothing a reader can use, and cost 5-7 % of the write."""
    encodings = {}
    for column in schema:
        encoding, of_type = _WORD_COLUMN_ENCODING.get(column.name, (None, None))
        (path, leaf), *_ = _leaves(column.name, column.type)
        if encoding is not None and leaf == of_type:
            encodings[path] = encoding
    leaves = [path for f in schema for path, _ in _leaves(f.name, f.type)]
    return {"use_dictionary": [p for p in leaves if p not in encodings],
            "column_encoding": encodings,
            "write_statistics": [p for p in leaves if ".list." not in p]}


def _leaves(name: str, t: pa.DataType) -> list[tuple[str, pa.DataType]]:
    """Parquet's path and type of each leaf of a column (`x.list.element` per list)."""
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t):
        return _leaves(f"{name}.list.element", t.value_type)
    if pa.types.is_struct(t):
        return [leaf for i in range(t.num_fields)
                for leaf in _leaves(f"{name}.{t.field(i).name}", t.field(i).type)]
    return [(name, t)]


class _SplitWriter:
    """Writes one split's shards; buffers at most one row group of Arrow batches."""

    def __init__(self, folder: ShardFolder, split: str, opts: _Options):
        self.folder, self.split = folder, split
        self.rows_per_shard, self.row_group_bytes = opts.rows_per_shard, opts.row_group_bytes
        self.schema = SCHEMAS[opts.features]
        self.count = 0
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0
        self._buffer: list[pa.RecordBatch] = []
        self._buffered_bytes = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            path = self.folder.part(self.split)
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd",
                                            write_page_index=True, **column_options(self.schema))
        self._buffer.append(batch)
        self._buffered_bytes += batch.nbytes
        self._in_shard += 1
        self.count += 1
        if self._buffered_bytes >= self.row_group_bytes:
            self._flush()
        if self._in_shard >= self.rows_per_shard:
            self._close_shard()

    def _flush(self) -> None:
        if self._buffer and self._writer is not None:
            table = pa.Table.from_batches(self._buffer, schema=self.schema)
            self._writer.write_table(table, row_group_size=table.num_rows)
        self._buffer, self._buffered_bytes = [], 0

    def _close_shard(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        self._writer, self._in_shard = None, 0

    def finish(self) -> list[str]:
        """Close the last shard; the split's files under their final names."""
        self._close_shard()
        return self.folder.seal(self.split)

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer, self._buffer = None, []


def _write_split(folder: ShardFolder, split: str, docs: Iterable[Doc], opts: _Options,
                 tally: _Tally) -> tuple[int, list[str]]:
    """One split's shards; `tally` refuses an id any split already wrote."""
    writer = _SplitWriter(folder, split, opts)
    rows: Iterator[tuple[str, str, pa.RecordBatch]] = (
        (p.candidate.id, p.candidate.language, doc_to_batch(p, opts.features)) for p in docs)
    if opts.read_ahead:  # half of the next row group is made while this one is written
        rows = iter(ReadAhead(rows, opts.row_group_bytes // 2, lambda row: row[2].nbytes))
    try:
        for doc_id, language, batch in rows:
            tally.admit(doc_id, language, split)
            writer.add(batch)
    except BaseException:
        writer.abort()
        raise
    return writer.count, writer.finish()


def write_shards(out_dir: str | Path, splits: Mapping[str, Iterable[Doc]], *,
                 rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
                 row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
                 features: str = COMPACT, read_ahead: bool = False,
                 carry: Mapping[str, Sequence[str]] | None = None,
                 carried: Mapping[str, int] | None = None) -> WriteResult:
    """Write every split into `DIR/data/` (replacing it only on success); no card.

    `features` is "compact" (every column, small exact types) or "published" (the six
    columns and int64 boxes of the published LoRaLay datasets, see `features.py`).
    `read_ahead`: make the next rows in a thread while a row group is written (a second
    core busy, half a row group more in memory; the same bytes).
    A split whose iterator yields nothing gets no file: `datasets` cannot load a split
    from a Parquet file without rows, so the card omits such splits instead.
    `carry`, `carried`: a refresh's files already in `data/` (per split, paths relative to
    DIR) and their rows: kept byte for byte beside the new ones, which `splits` yields; the
    result counts and lists both (`carried` ids are not read back: the caller vouches
    that no new row repeats one). No split to write leaves `data/` untouched.
    """
    if rows_per_shard < 1 or row_group_bytes < 1:
        raise ValueError("rows_per_shard and row_group_bytes must be positive")
    features_for(features)  # refuse an unknown set before touching DIR
    opts = _Options(rows_per_shard, row_group_bytes, features, read_ahead)
    result = WriteResult(counts={}, features=features)
    tally = _Tally()
    before = dict(carried or {})
    if carry is not None and not splits:
        result.counts = {s: before.get(s, 0) for s in {*before, *carry}}
        result.shards = {s: list(v) for s, v in carry.items()}
        return result
    with ShardFolder(Path(out_dir), DATA_DIR, carry) as folder:
        for split, docs in splits.items():
            n, result.shards[split] = _write_split(folder, split, docs, opts, tally)
            result.counts[split] = before.get(split, 0) + n
        for split, files in folder.files.items():
            result.shards.setdefault(split, files)
            result.counts.setdefault(split, before.get(split, 0))
        result.languages = sorted(tally.languages)
    return result

