"""Read a built dataset's rows back, one document at a time, straight from its Parquet.

Why not `datasets.load_dataset`: it copies every shard into its cache first; an export
or a picture needs one pass (or one row), and the split is already in each file's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from .errors import ConfigError
from .write.parquet import DATA_DIR

# columns an export or a picture cannot do without; `--features published` lacks them
LAYOUT_COLUMNS = ("article_id", "article_words", "article_bboxes", "article_norm_bboxes",
                  "article_pages", "article_line_ids", "article_block_ids", "page_sizes")
_SHARD = re.compile(r"^(\w+?)-\d{5}-of-\d{5}\.parquet$")


def shards(dataset_dir: Path) -> dict[str, list[Path]]:
    """Split name -> its shard files in order; a folder without shards is a ConfigError."""
    found: dict[str, list[Path]] = {}
    for path in sorted((Path(dataset_dir) / DATA_DIR).glob("*.parquet")):
        m = _SHARD.match(path.name)
        if m:
            found.setdefault(m.group(1), []).append(path)
    if not found:
        raise ConfigError(f"{dataset_dir}: no dataset shards in {DATA_DIR}/ "
                          "(give the --out folder of a finished `loralay build`)")
    return found


def check_layout_columns(path: Path) -> None:
    """A dataset written with `--features published` has no pages, lines or blocks."""
    names = set(pq.read_schema(path).names)
    missing = [c for c in LAYOUT_COLUMNS if c not in names]
    if missing:
        raise ConfigError(f"{path}: no {', '.join(missing)} column (a `--features published` "
                          "dataset?); rebuild with the default compact features")


def iter_rows(files: list[Path], columns: tuple[str, ...] = LAYOUT_COLUMNS
              ) -> Iterator[dict[str, Any]]:
    """Rows as dicts, one row group in memory at a time."""
    for path in files:
        check_layout_columns(path)
        pf = pq.ParquetFile(path)
        for i in range(pf.num_row_groups):
            yield from pf.read_row_group(i, columns=list(columns)).to_pylist()


def find_row(dataset_dir: Path, article_id: str) -> tuple[str, dict[str, Any]]:
    """(split, full row) of one document; an unknown id is a ConfigError."""
    for split, files in shards(dataset_dir).items():
        for path in files:
            check_layout_columns(path)
            table = pq.read_table(path, filters=[("article_id", "=", article_id)])
            if table.num_rows:
                return split, table.slice(0, 1).to_pylist()[0]
    raise ConfigError(f"{dataset_dir}: no document {article_id!r} in the dataset")
