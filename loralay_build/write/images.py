"""The `images` config: one row per kept page, its JPEG as a `datasets.Image`.

Why its own folder (`DIR/images/{split}-NNNNN-of-NNNNN.parquet`) and its own config: the
pages are ~100 KiB each, so a document row holding them would put megabytes in every read
of the words; a second config leaves `load_dataset(DIR)` exactly as it was and gives the
pages with `load_dataset(DIR, "images")`. Pages are streamed from the shards' image stores
one at a time into row groups of `ROWS_PER_GROUP` (what `datasets` itself uses for image
datasets, so the Hub viewer can page through them); a file is closed past `SHARD_BYTES`.
Like `data/`, the folder is written aside and swapped in whole, and a refresh carries the
old documents' files into it unchanged, its new pages going to new files after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, Image, Value

from ..images.store import StoredPage
from ..paths import IMAGES_DIR
from .shards import ShardFolder, remove_folder

IMAGES_CONFIG = "images"
IMAGE_FEATURES = Features({
    "article_id": Value("string"),
    "page": Value("int16"),
    "image": Image(),
    "width": Value("int32"),
    "height": Value("int32"),
    "dpi": Value("int16"),
})
IMAGE_SCHEMA: pa.Schema = IMAGE_FEATURES.arrow_schema
ROWS_PER_GROUP = 100  # datasets' PARQUET_ROW_GROUP_SIZE_FOR_IMAGE_DATASETS
SHARD_BYTES = 500 * 1024 * 1024  # datasets' default max_shard_size


@dataclass(frozen=True, slots=True)
class PageRow:
    article_id: str
    page: StoredPage

    def to_dict(self) -> dict[str, object]:
        p = self.page
        return {"article_id": self.article_id, "page": p.page,
                "image": {"bytes": p.jpeg, "path": None},
                "width": p.width, "height": p.height, "dpi": p.dpi}


class _SplitPages:
    """One split's files; holds at most one row group of pages."""

    def __init__(self, folder: ShardFolder, split: str) -> None:
        self.folder, self.split = folder, split
        self.count = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows: list[dict[str, object]] = []
        self._bytes = 0

    def add(self, row: PageRow) -> None:
        if self._writer is None:
            path = self.folder.part(self.split)
            self._writer = pq.ParquetWriter(path, IMAGE_SCHEMA, compression="zstd")
        self._rows.append(row.to_dict())
        self._bytes += len(row.page.jpeg)
        self.count += 1
        if len(self._rows) >= ROWS_PER_GROUP:
            self._flush()
        if self._bytes >= SHARD_BYTES:
            self._close()

    def _flush(self) -> None:
        if self._rows and self._writer is not None:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=IMAGE_SCHEMA))
        self._rows = []

    def _close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        self._writer, self._bytes = None, 0

    def finish(self) -> list[str]:
        self._close()
        return self.folder.seal(self.split)


def write_image_shards(out_dir: str | Path, splits: Mapping[str, Iterable[PageRow]],
                       carry: Mapping[str, Sequence[str]] | None = None
                       ) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Every split's pages into `DIR/images/` (replaced only on success); pages written
    per split, and the files per split. A split without pages gets no file, as in `data/`.
    `carry`: a refresh's files already in `images/` (per split, paths relative to DIR),
    kept byte for byte and listed first; `splits` then yields the new pages only, and no
    split to write leaves `images/` untouched (as `write_shards` leaves `data/`)."""
    counts: dict[str, int] = {}
    if carry is not None and not splits:
        return counts, {s: list(v) for s, v in carry.items()}
    with ShardFolder(Path(out_dir), IMAGES_DIR, carry) as folder:
        for split, rows in splits.items():
            writer = _SplitPages(folder, split)
            for row in rows:
                writer.add(row)
            writer.finish()
            counts[split] = writer.count
    return counts, folder.files


def remove_image_shards(out_dir: str | Path) -> None:
    """A build without images leaves none of an earlier build's (as a fresh build would)."""
    remove_folder(Path(out_dir), IMAGES_DIR)
