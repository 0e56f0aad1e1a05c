"""A built dataset read back, checked first: what `export`, `show`, `eval` and a build's
`exclude_datasets` read.

Why not `datasets.load_dataset`: it copies every shard into its cache first; an export or a
picture needs one pass (or one row), and the split is already in each file's name.
Why the checks: a truncated download, a build killed before its finish, a folder that is
not a dataset, a split name that is a glob or a path gave tracebacks, or (`--split '*'`)
silently scored every split together. Each is now one `ConfigError` naming the file or the
folder and the problem. Every shard is opened when the dataset is, and read from the open
file: a build that swaps `data/` meanwhile (it renames, never rewrites in place) cannot pull
a shard from under a reader. A shard is opened only once `stat` says it is a regular file:
a FIFO or a device named `*.parquet` would block the reader's `open` for good.

`exclude_datasets` (a build's other datasets, whose papers it leaves out) reads through
the same `Dataset`, and also refuses the build's own `--out`, anything inside it (its
`data/`) or a folder holding it, links resolved: read back, the run's own dataset would
make every document a duplicate of itself.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import ConfigError
from .paths import DATA_DIR, SHARD_NAME

if TYPE_CHECKING:  # the prints (numpy, MinHash) only when a build excludes datasets:
    # `show`, `export` and `eval` read a dataset without them
    from .corpus.prints import ExternalPrint

# columns an export or a picture cannot do without; `--features published` lacks them
LAYOUT_COLUMNS = ("article_id", "article_words", "article_bboxes", "article_norm_bboxes",
                  "article_pages", "article_line_ids", "article_block_ids", "article_labels",
                  "page_sizes")
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
            # the last file's total: a refresh numbers its new files after the split's
            # earlier ones (`train-00001-of-00002-...` beside `train-00000-of-00001-...`),
            # whose names it never changes
            n = int(SHARD_NAME.match(files[-1][0].name).group(3))  # type: ignore[union-attr]
            if len(files) != n:
                raise ConfigError(f"{data}: {split} has {len(files)} of its {n} shards "
                                  "(files missing: rebuild, or copy the folder again)")
        if not ds.splits:
            raise ConfigError(f"{data}: no dataset shards (give the --out folder of a "
                              "finished `loralay build`)")
        return ds

    @classmethod
    def open_any(cls, root: str | Path) -> Dataset:
        """This tool's layout (`data/`, checked as `open` checks it) or else the Hub's
        Parquet export (the published LoRaLay datasets: no `data/`, every `*.parquet`
        below the folder, e.g. `default/train/0000.parquet`, whose folder names the
        split)."""
        root = Path(root)
        if not root.is_dir() or (root / DATA_DIR).is_dir():
            return cls.open(root)
        ds = cls(root)
        for path in sorted(root.rglob("*.parquet")):
            ds.splits.setdefault(path.parent.name, []).append((path, _open_parquet(path)))
        if not ds.splits:
            raise ConfigError(f"{root}: no {DATA_DIR}/ folder and no *.parquet below it (not a "
                              "built dataset: give the --out folder of a finished build)")
        return ds

    def files(self) -> Iterator[tuple[Path, pq.ParquetFile]]:
        for files in self.splits.values():
            yield from files

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
        raise NoSuchDocument(self.root, article_id)


class NoSuchDocument(ConfigError):
    """An id no row of the dataset has; `show` says why, from the run's report."""

    def __init__(self, root: Path, article_id: str, why: str = "") -> None:
        super().__init__(f"{root}: no document {article_id!r} in the dataset{why}")
        self.root, self.article_id = root, article_id


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
    """The shard opened, once `stat` (which never blocks) says it is a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{path}: not a regular file (a FIFO, a device or a folder named "
                          "*.parquet); a dataset's shards are files")
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


# -- other datasets, whose papers a build leaves out (`exclude_datasets`) -----------------

WORDS_COLUMN, ID_COLUMN, ABSTRACT_COLUMN = "article_words", "article_id", "abstract"


def _excluded(folder: str | Path, reason: str) -> ConfigError:
    return ConfigError(f"exclude_datasets: {folder}: {reason}")


def _contains(outer: Path, inner: Path) -> bool:
    return outer == inner or outer in inner.parents


def open_excluded(folders: Sequence[str | Path], own: Path | None = None
                  ) -> list[tuple[str, Dataset]]:
    """Each folder (as the user named it) opened as a built dataset (`Dataset.open_any`)
    whose every shard has an `article_id` string and an `article_words` list-of-strings
    column; `own`: the run's `--out`, which none may be, hold or be inside, links
    resolved (nor may any shard's real path be inside it). An `abstract` string column,
    when there is one, is read too (the abstracts a near pair must agree on; without it
    the bodies alone decide). Every folder is checked before
    any is read; a bad one is one `ConfigError` naming it and the reason."""
    real_own = own.resolve() if own is not None else None
    out: list[tuple[str, Dataset]] = []
    for folder in folders:
        if real_own is not None:
            real = Path(folder).resolve()
            if real == real_own:
                raise _excluded(folder, "this run's own --out; a run cannot leave out its "
                                        "own documents")
            if _contains(real_own, real):
                raise _excluded(folder, f"inside this run's --out {own} (its own dataset: "
                                        "a run cannot leave out its own documents)")
            if _contains(real, real_own):
                raise _excluded(folder, f"holds this run's --out {own} (its own dataset "
                                        "would be read: give the other dataset's folder)")
        try:
            ds = Dataset.open_any(folder)
        except ConfigError as e:
            raise ConfigError(f"exclude_datasets: {e}") from None
        for path, pf in ds.files():
            where = path.relative_to(ds.root)
            if real_own is not None and _contains(real_own, path.resolve()):
                raise _excluded(folder, f"{where} is inside this run's --out {own}")
            schema = pf.schema_arrow
            for name, ok, want in ((WORDS_COLUMN, _is_word_list, "a list of strings"),
                                   (ID_COLUMN, _is_text, "a string")):
                if name not in schema.names:
                    raise _excluded(folder, f"{where} has no {name} column (columns: "
                                            f"{', '.join(schema.names[:8])})")
                if not ok(schema.field(name).type):
                    raise _excluded(folder, f"{where}: {name} is {schema.field(name).type}, "
                                            f"not {want}")
        out.append((str(folder), ds))
    return out


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _is_word_list(t: pa.DataType) -> bool:
    return bool((pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_text(t.value_type))


def exclude_datasets(folders: Sequence[str | Path], own: Path | None = None,
                     batch_rows: int = 64) -> Iterator[ExternalPrint]:
    """The prints of every document of the built datasets in `folders`, streamed row
    group by row group (`batch_rows` documents decoded at a time; one document's words
    as Python strings at a time). Every folder is checked first (`open_excluded`), so a
    bad one fails before anything is read."""
    return _dataset_prints(open_excluded(folders, own), batch_rows)


def _dataset_prints(checked: list[tuple[str, Dataset]], batch_rows: int
                    ) -> Iterator[ExternalPrint]:
    from .corpus.prints import ExternalPrint, doc_print

    for folder, ds in checked:
        for path, parquet in ds.files():
            field = parquet.schema_arrow.field(ABSTRACT_COLUMN) \
                if ABSTRACT_COLUMN in parquet.schema_arrow.names else None
            columns = [ID_COLUMN, WORDS_COLUMN] + (
                [ABSTRACT_COLUMN] if field is not None and _is_text(field.type) else [])
            try:
                for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
                    ids, words = batch.column(0), batch.column(1)
                    abstracts = batch.column(2) if len(columns) == 3 else None
                    for i in range(batch.num_rows):
                        doc_id = ids[i].as_py()
                        body = words[i].values  # None for a null row
                        text = [w for w in body.to_pylist() if w] if body is not None else []
                        abstract = (abstracts[i].as_py() or "") if abstracts else ""
                        yield ExternalPrint(folder, "" if doc_id is None else doc_id,
                                            doc_print(text, abstract=abstract.split()))
            except _ARROW_ERRORS as e:
                raise _excluded(folder, f"{path.relative_to(ds.root)} cannot be read: "
                                        f"{_reason(e)}") from None
