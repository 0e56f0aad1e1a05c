"""CiteSum's files: its run state (`state/citesum.sqlite`: the ledger, one kind per pass,
and each shard task's funnel and bad-record tally as checkpoints), and the two indexes
between the passes (`work/cited-ids.sqlite`, `work/cited.sqlite`), rebuilt whole under a
temporary name and read by the workers read-only."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..atomic import TEMP_PREFIX, place, refuse_link
from . import checkpoints, ledger
from .base import FileKind, RunState, user_version, version_error

KIND = FileKind("citesum", 1, (*ledger.DDL, checkpoints.DDL))
IDS = FileKind("citesum cited-ids index", 1,
               ("CREATE TABLE ids (id TEXT PRIMARY KEY) WITHOUT ROWID",))
CITED = FileKind("citesum cited-papers index", 1,
                 ("CREATE TABLE cited (id TEXT PRIMARY KEY, paper TEXT NOT NULL) WITHOUT ROWID",))


_INDEX = "citesum-index:fingerprint"  # what the cited-papers index was built from


class CiteSumState(checkpoints.Checkpoints, ledger.HoldsLedger, RunState):
    KIND = KIND

    def task_tally(self, stage: str, key: str) -> dict[str, Any]:
        """A shard task's funnel counts and bad-record tally ({} before it succeeded)."""
        return dict(self.get_checkpoint(f"{stage}:{key}", {}))

    def set_task_tally(self, stage: str, key: str, tally: dict[str, Any]) -> None:
        self.set_checkpoint(f"{stage}:{key}", tally)

    def index_print(self) -> str | None:
        value = self.get_checkpoint(_INDEX)
        return value if isinstance(value, str) else None

    def set_index_print(self, fingerprint: str) -> None:
        self.set_checkpoint(_INDEX, fingerprint)


def fresh_index(dest: Path, kind: FileKind) -> tuple[sqlite3.Connection, Path]:
    """A new index under a temporary name, in an open transaction; no journal: a killed
    build leaves a temporary that the next one removes."""
    tmp = refuse_link(dest.with_name(f"{TEMP_PREFIX}{dest.name}-{os.getpid()}"))
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(str(tmp), isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    for statement in kind.ddl:
        con.execute(statement)
    con.execute(f"PRAGMA user_version = {int(kind.version)}")
    con.execute("BEGIN")
    return con, tmp


def close_into(con: sqlite3.Connection, tmp: Path, dest: Path) -> None:
    con.execute("COMMIT")
    con.close()
    place(tmp, dest)


def open_index(path: str | Path, kind: FileKind) -> sqlite3.Connection:
    """A worker's read-only handle (several workers read one index at once); an index
    built before versions (0) has today's one table."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    found = user_version(con)
    if found not in (0, kind.version):
        con.close()
        raise version_error(Path(path), kind, found)
    return con


def _marks(n: int) -> str:
    return ",".join("?" * n)


def add_ids(con: sqlite3.Connection, ids: Iterable[str]) -> None:
    con.executemany("INSERT OR IGNORE INTO ids VALUES (?)", ((i,) for i in ids))


def sorted_ids(con: sqlite3.Connection) -> Iterator[str]:
    for (cited_id,) in con.execute("SELECT id FROM ids ORDER BY id"):
        yield cited_id


def known_ids(con: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Which of `ids` (one batch, within SQLite's bound) the index holds."""
    if not ids:
        return set()
    return {r[0] for r in con.execute(f"SELECT id FROM ids WHERE id IN ({_marks(len(ids))})",
                                      ids)}


def put_cited(con: sqlite3.Connection, rows: Iterable[tuple[str, str]]) -> None:
    """(id, the paper's JSON) rows, replacing any of the same id."""
    con.executemany("INSERT OR REPLACE INTO cited VALUES (?, ?)", rows)


def cited_rows(con: sqlite3.Connection, ids: list[str]) -> Iterator[tuple[str, str]]:
    """(id, the paper's JSON) of those of `ids` (one batch) the index holds."""
    yield from con.execute(f"SELECT id, paper FROM cited WHERE id IN ({_marks(len(ids))})", ids)
