"""Stream ProcessedDocs into Parquet shards that `datasets.load_dataset(DIR)` reads.

Why this shape:
- The column types come from one `datasets.Features`, so the Hugging Face JSON sits in
  the Parquet schema metadata (key `huggingface`) and the card's YAML is derived from the
  same object: the three can never disagree.
- Each document becomes a one-row Arrow batch as soon as it arrives and the Python
  lists are dropped, so the buffer holds Arrow bytes we can measure exactly; a row group
  is flushed when it reaches `row_group_bytes` (Hub viewer limit) and a file is closed
  every `rows_per_shard` documents. Memory is bounded by one row group, not the corpus.
- The `-of-NNNNN` total is only known at the end, so shards are written into a hidden
  temporary folder inside DIR and swapped in for `DIR/data` only once every split is
  complete; a failed run leaves the previous dataset untouched.
- An id names one paper: a second row with an id already written (in any split) would
  leak a paper between train and test or weigh it twice, so the writer refuses it with
  `DuplicateRowError` and, like any failure, leaves the previous dataset as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, List, Value

from ..records import ProcessedDoc

DATA_DIR = "data"
DEFAULT_ROWS_PER_SHARD = 2000  # ~500 MB in Arrow at ~209 KB/doc (ecosystem.md B.1)
DEFAULT_ROW_GROUP_BYTES = 100 * 1024 * 1024  # datasets' MAX_ROW_GROUP_SIZE
_SPLIT_NAME = re.compile(r"^\w+$")

FEATURES = Features({
    "article_id": Value("string"),
    "article_words": List(Value("string")),
    "article_bboxes": List(List(Value("float32"), length=4)),
    "article_norm_bboxes": List(List(Value("int16"), length=4)),
    "article_pages": List(Value("int16")),
    "article_line_ids": List(Value("int32")),
    "article_block_ids": List(Value("int32")),
    "page_sizes": List(List(Value("float32"), length=2)),
    "abstract": Value("string"),
    "other_abstracts": List({"language": Value("string"), "text": Value("string")}),
    "article_pdf_url": Value("string"),
    "language": Value("string"),
    "publication_date": Value("string"),
    "source": Value("string"),
})
SCHEMA: pa.Schema = FEATURES.arrow_schema  # carries b"huggingface" metadata
COLUMNS = tuple(FEATURES)


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


def _one_list(values: pa.Array) -> pa.Array:
    """Wrap a flat array as a single list value (one row)."""
    return pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)


def _fixed(values: np.ndarray, width: int, arrow_type: pa.DataType) -> pa.Array:
    flat = pa.array(values.reshape(-1), type=arrow_type)
    return _one_list(pa.FixedSizeListArray.from_arrays(flat, width))


def _norm_boxes(boxes: np.ndarray, pages: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Vectorised `records.normalized_box` (same float64 ops, truncation and clamp)."""
    wh = sizes[pages - 1].astype(np.float64)  # (n, 2): width, height per word
    dims = np.concatenate([wh, wh], axis=1)  # x0/w, y0/h, x1/w, y1/h
    safe = np.where(dims > 0, dims, 1.0)
    vals = np.trunc(1000 * boxes / safe)
    vals = np.clip(vals, 0, 1000)
    return np.where(dims > 0, vals, 0).astype(np.int16)


def _layout_arrays(p: ProcessedDoc) -> list[pa.Array]:
    """The word-level columns; raises if a word points at a page the document lacks."""
    d = p.document
    n = len(d.words)
    if not (len(d.boxes) == len(d.word_pages) == len(d.line_ids) == len(d.block_ids) == n):
        raise ValueError(f"{p.candidate.id}: word columns have different lengths")
    boxes = np.asarray(d.boxes, dtype=np.float64).reshape(n, 4)
    pages = np.asarray(d.word_pages, dtype=np.int64).reshape(n)
    sizes = np.asarray([(pg.width, pg.height) for pg in d.pages], dtype=np.float64)
    sizes = sizes.reshape(len(d.pages), 2)
    if n and (pages.min() < 1 or pages.max() > len(d.pages)):
        raise ValueError(f"{p.candidate.id}: word page outside 1..{len(d.pages)}")
    return [
        _one_list(pa.array(d.words, pa.string())),
        _fixed(boxes.astype(np.float32), 4, pa.float32()),
        _fixed(_norm_boxes(boxes, pages, sizes), 4, pa.int16()),
        _one_list(pa.array(pages, pa.int16())),
        _one_list(pa.array(d.line_ids, pa.int32())),
        _one_list(pa.array(d.block_ids, pa.int32())),
        _fixed(sizes.astype(np.float32), 2, pa.float32()),
    ]


def other_abstracts(p: ProcessedDoc) -> list[dict[str, str]]:
    """Every abstract but the summary, sorted by language so reruns give identical bytes."""
    c = p.candidate
    return [{"language": lang, "text": text}
            for lang, text in sorted(c.abstracts.items()) if lang != c.language]


def doc_to_batch(p: ProcessedDoc) -> pa.RecordBatch:
    """One document as a one-row batch with exactly SCHEMA's types (casts validate ranges)."""
    c = p.candidate
    arrays = [pa.array([c.id], pa.string()), *_layout_arrays(p)]
    arrays += [
        pa.array([p.summary], pa.string()),
        pa.array([other_abstracts(p)], SCHEMA.field("other_abstracts").type),
        pa.array([c.pdf_url], pa.string()),
        pa.array([c.language], pa.string()),
        pa.array([c.publication_date], pa.string()),
        pa.array([c.source], pa.string()),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


class _SplitWriter:
    """Writes one split's shards; buffers at most one row group of Arrow batches."""

    def __init__(self, folder: Path, split: str, rows_per_shard: int, row_group_bytes: int):
        self.folder, self.split = folder, split
        self.rows_per_shard, self.row_group_bytes = rows_per_shard, row_group_bytes
        self.paths: list[Path] = []
        self.count = 0
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0
        self._buffer: list[pa.RecordBatch] = []
        self._buffered_bytes = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            path = self.folder / f"{self.split}-{len(self.paths):05d}.partial"
            self.paths.append(path)
            self._writer = pq.ParquetWriter(path, SCHEMA, compression="zstd",
                                            write_page_index=True)
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
            table = pa.Table.from_batches(self._buffer, schema=SCHEMA)
            self._writer.write_table(table, row_group_size=table.num_rows)
        self._buffer, self._buffered_bytes = [], 0

    def _close_shard(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        self._writer, self._in_shard = None, 0

    def finish(self) -> list[Path]:
        """Close the last shard and give each file its final `-NNNNN-of-NNNNN` name."""
        self._close_shard()
        total = len(self.paths)
        final = []
        for i, path in enumerate(self.paths):
            target = self.folder / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            os.replace(path, target)
            final.append(target)
        return final

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer, self._buffer = None, []


def _clean_stale(out_dir: Path) -> None:
    """Undo what a killed run left: its temp folder, or an old folder moved aside for good.

    Only the instant between the two renames of `_swap_in` can leave no `data/`; then the
    previous data is still whole in `.data-old-*` and is put back.
    """
    for tmp in out_dir.glob(f".{DATA_DIR}-tmp-*"):
        shutil.rmtree(tmp, ignore_errors=True)
    olds = sorted(out_dir.glob(f".{DATA_DIR}-old-*"))
    if not (out_dir / DATA_DIR).exists() and len(olds) == 1:
        os.replace(olds.pop(), out_dir / DATA_DIR)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def _swap_in(out_dir: Path, tmp: Path) -> None:
    """Replace DIR/data by the complete temporary folder (renames within one filesystem)."""
    data = out_dir / DATA_DIR
    old = out_dir / f".{DATA_DIR}-old-{uuid.uuid4().hex[:8]}"
    if data.exists():
        os.replace(data, old)
    os.replace(tmp, data)
    shutil.rmtree(old, ignore_errors=True)


def _write_split(tmp: Path, split: str, docs: Iterable[ProcessedDoc],
                 rows_per_shard: int, row_group_bytes: int,
                 seen: dict[str, str]) -> tuple[int, list[Path]]:
    """One split's shards; `seen` maps every id written so far (all splits) to its split."""
    writer = _SplitWriter(tmp, split, rows_per_shard, row_group_bytes)
    try:
        for p in docs:
            doc_id = p.candidate.id
            if doc_id in seen:
                raise DuplicateRowError(doc_id, split, seen[doc_id])
            seen[doc_id] = split
            writer.add(doc_to_batch(p))
    except BaseException:
        writer.abort()
        raise
    return writer.count, writer.finish()


def write_shards(out_dir: str | Path, splits: Mapping[str, Iterable[ProcessedDoc]], *,
                 rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
                 row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES) -> WriteResult:
    """Write every split into `DIR/data/` (replacing it only on success); no card.

    A split whose iterator yields nothing gets no file: `datasets` cannot load a split
    from a Parquet file without rows, so the card omits such splits instead.
    """
    if rows_per_shard < 1 or row_group_bytes < 1:
        raise ValueError("rows_per_shard and row_group_bytes must be positive")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clean_stale(out)
    tmp = out / f".{DATA_DIR}-tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    result = WriteResult(counts={})
    seen: dict[str, str] = {}
    try:
        for split, docs in splits.items():
            if not _SPLIT_NAME.match(split):
                raise ValueError(f"split name {split!r} is not a plain word")
            count, paths = _write_split(tmp, split, docs, rows_per_shard, row_group_bytes,
                                         seen)
            result.counts[split] = count
            result.shards[split] = [f"{DATA_DIR}/{p.name}" for p in paths]
        _swap_in(out, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result

