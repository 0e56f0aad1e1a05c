"""A built dataset read back, checked first: what `export`, `show` and `eval` read.

Why not `datasets.load_dataset`: it copies every shard into its cache first; an export or a
picture needs one pass (or one row), and the split is already in each file's name.
Why the checks: a truncated download, a build killed before its finish, a folder that is
not a dataset, a split name that is a glob or a path gave tracebacks, or (`--split '*'`)
silently scored every split together. Each is now one `ConfigError` naming the file or the
folder and the problem. Every shard is opened when the dataset is, and read from the open
file: a build that swaps `data/` meanwhile (it renames, never rewrites in place) cannot pull
a shard from under a reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import ConfigError
from .paths import DATA_DIR, SHARD_NAME

# columns an export or a picture cannot do without; `--features published` lacks them
LAYOUT_COLUMNS = ("article_id", "article_words", "article_bboxes", "article_norm_bboxes",
                  "article_pages", "article_line_ids", "article_block_ids", "page_sizes")
_SPLIT = re.compile(r"^\w{1,64}$")
_ARROW_ERRORS = (pa.ArrowException, OSError, ValueError)


def _reason(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:200] or type(e).__name__


@dataclass
class Dataset:
    """A dataset folder whose shards all opened as Parquet."""

    root: Path
    splits: dict[str, list[tuple[Path, pq.ParquetFile]]] = field(default_factory=dict)

    @classmethod
    def open(cls, root: str | Path, folder: str = DATA_DIR) -> Dataset:
        root = Path(root)
        if not root.is_dir():
            what = "not found" if not root.exists() else "not a folder"
            raise ConfigError(f"{root}: {what} (give the --out folder of a finished build)")
        data = root / folder
        if not data.is_dir():
            raise ConfigError(f"{root}: no {folder}/ folder (not a dataset, or a build killed "
                              "before its finish: rerun the same `loralay build`)")
        ds = cls(root)
        for path, split, k, n in _shard_files(data):
            ds.splits.setdefault(split, []).append((path, _open_parquet(path)))
            if len(ds.splits[split]) != k + 1 or n < k + 1:
                raise ConfigError(f"{path}: shard {k + 1} of {n} out of sequence (a "
                                  "dataset folder being rewritten, or files missing)")
        for split, files in ds.splits.items():
            n = int(SHARD_NAME.match(files[0][0].name).group(3))  # type: ignore[union-attr]
            if len(files) != n:
                raise ConfigError(f"{data}: {split} has {len(files)} of its {n} shards "
                                  "(files missing: rebuild, or copy the folder again)")
        if not ds.splits:
            raise ConfigError(f"{data}: no dataset shards (give the --out folder of a "
                              "finished `loralay build`)")
        return ds

    def split(self, name: str) -> list[tuple[Path, pq.ParquetFile]]:
        """One split's shards; a name that is not a plain word, or not in the dataset, is
        refused (never read as a pattern or a path)."""
        if not _SPLIT.match(name):
            raise ConfigError(f"--split {name!r}: not a split name (a word such as test)")
        if name not in self.splits:
            raise ConfigError(f"{self.root}: no split {name!r} (it has "
                              f"{', '.join(self.splits)})")
        return self.splits[name]

    def check_columns(self, needed: tuple[str, ...]) -> None:
        for files in self.splits.values():
            for path, pf in files:
                names = set(pf.schema_arrow.names)
                missing = [c for c in needed if c not in names]
                if missing:
                    raise ConfigError(f"{path}: no {', '.join(missing)} column (a `--features "
                                      "published` dataset?); rebuild with the default compact "
                                      "features")

    def rows(self, split: str, columns: tuple[str, ...] | None = None
             ) -> Iterator[dict[str, Any]]:
        """Rows as dicts in file order, one row group in memory at a time; a row group
        that cannot be read is a ConfigError naming its file."""
        for path, pf in self.split(split):
            for i in range(pf.num_row_groups):
                try:
                    table = pf.read_row_group(i, columns=list(columns) if columns else None)
                except _ARROW_ERRORS as e:
                    raise ConfigError(f"{path}: row group {i} cannot be read ({_reason(e)}); "
                                      "the file is damaged: rebuild the dataset") from None
                yield from table.to_pylist()

    def find(self, article_id: str) -> tuple[str, dict[str, Any]]:
        """(split, full row) of one document; an unknown id is a ConfigError."""
        for split, files in self.splits.items():
            for path, pf in files:
                try:
                    ids = pf.read(columns=["article_id"]).column(0).to_pylist()
                except (KeyError, *_ARROW_ERRORS) as e:
                    raise ConfigError(f"{path}: cannot read its article_id column "
                                      f"({_reason(e)})") from None
                if article_id in ids:
                    row = ids.index(article_id)
                    try:
                        table = pf.read()
                    except _ARROW_ERRORS as e:
                        raise ConfigError(f"{path}: cannot be read ({_reason(e)})") from None
                    return split, table.slice(row, 1).to_pylist()[0]
        raise ConfigError(f"{self.root}: no document {article_id!r} in the dataset")


def _shard_files(data: Path) -> Iterator[tuple[Path, str, int, int]]:
    """(path, split, index, total) of every shard, in split and index order."""
    try:
        names = sorted(p.name for p in data.iterdir())
    except OSError as e:
        raise ConfigError(f"{data}: cannot be read ({e.strerror})") from None
    for name in names:
        m = SHARD_NAME.match(name)
        if m:
            yield data / name, m.group(1), int(m.group(2)), int(m.group(3))


def _open_parquet(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except _ARROW_ERRORS as e:
        raise ConfigError(f"{path}: not a readable Parquet file ({_reason(e)}); truncated "
                          "or damaged: rebuild the dataset") from None


def find_row(dataset_dir: Path, article_id: str) -> tuple[str, dict[str, Any]]:
    """(split, full row) of one document of a layout dataset."""
    ds = Dataset.open(dataset_dir)
    ds.check_columns(LAYOUT_COLUMNS)
    return ds.find(article_id)
