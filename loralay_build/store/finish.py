"""The finish's state (`state/finish.sqlite`): what the last finish decided for every input
id (`decisions`), the decisions of the dataset version last published (`base_decisions`,
what a refresh keeps), and the facts recorded with them (checkpoints: thresholds, funnel,
duplicates, the committed dataset's files)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass
from typing import Any

from . import checkpoints
from .base import FileKind, RunState

KEPT, DROPPED = "kept", "dropped"
# the facts recorded with the decisions, and those of the committed base
_THRESHOLDS, _FUNNEL, _DUPLICATES, _DATASET = "thresholds", "funnel", "duplicates", "dataset"

# the one list of a decision's columns: both tables' DDL, the insert, the copy, the reads
_DECISION = (("seq", "INTEGER PRIMARY KEY"), ("id", "TEXT NOT NULL UNIQUE"),
             ("status", "TEXT NOT NULL"), ("split", "TEXT"), ("shard", "INTEGER"),
             ("class", "TEXT"), ("rule", "TEXT"), ("message", "TEXT"))
_COLUMNS = ", ".join(name for name, _ in _DECISION)
_MARKS = ",".join("?" * len(_DECISION))


def _decisions_ddl(table: str) -> str:
    spec = ", ".join(f"{name} {kind}" for name, kind in _DECISION)
    return f"CREATE TABLE IF NOT EXISTS {table} ({spec})"


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One id's decision: kept (its split and the shard state holding it), or dropped
    (its class, the rule that dropped it and why)."""

    seq: int
    id: str
    status: str
    split: str | None
    shard: int | None
    cls: str | None
    rule: str | None
    message: str | None

    @property
    def kept(self) -> bool:
        return self.status == KEPT


def _drop_finish_results(db: sqlite3.Connection) -> None:
    """Versions before the decisions record kept the finish's outcomes as `results` rows
    of stage `finish`; the record replaces them."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'results'").fetchone():
        db.execute("DELETE FROM results WHERE stage = 'finish'")


KIND = FileKind("finish", 1, (_decisions_ddl("decisions"), _decisions_ddl("base_decisions"),
                              checkpoints.DDL), upgrade_unversioned=_drop_finish_results)


class FinishState(checkpoints.Checkpoints, RunState):
    KIND = KIND

    def replace_decisions(self, rows: Iterable[DecisionRow]) -> None:
        """Inside the caller's transaction."""
        self.db.execute("DELETE FROM decisions")
        self.db.executemany(f"INSERT INTO decisions ({_COLUMNS}) VALUES ({_MARKS})",
                            (astuple(r) for r in rows))

    def decisions(self) -> Iterator[DecisionRow]:
        """In the report's order (streamed: a report over 200k ids holds no list of them)."""
        return self._rows("decisions")

    def base_decisions(self) -> Iterator[DecisionRow]:
        return self._rows("base_decisions")

    def _rows(self, table: str) -> Iterator[DecisionRow]:
        for row in self.db.execute(f"SELECT {_COLUMNS} FROM {table} ORDER BY seq"):
            yield DecisionRow(*row)

    def decision(self, doc_id: str) -> DecisionRow | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM decisions WHERE id = ?",
                              (doc_id,)).fetchone()
        return DecisionRow(*row) if row else None

    def count_decisions(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0])

    def kept_counts(self) -> dict[str, int]:
        """Kept ids per split, of the splits that keep any."""
        rows = self.db.execute(
            "SELECT split, COUNT(*) FROM decisions WHERE status = ? GROUP BY split", (KEPT,))
        return {str(split): int(n) for split, n in rows}

    def kept_place(self, doc_id: str) -> tuple[str, int] | None:
        """A kept id's split and the shard state holding it; None if not kept."""
        row = self.db.execute("SELECT split, shard FROM decisions WHERE id = ? AND status = ?",
                              (doc_id, KEPT)).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def record_facts(self, thresholds: dict[str, Any], funnel: list[Any],
                     duplicates: list[Any]) -> None:
        """The facts of the decisions just written (inside their transaction)."""
        self.set_checkpoint(_THRESHOLDS, thresholds)
        self.set_checkpoint(_FUNNEL, funnel)
        self.set_checkpoint(_DUPLICATES, duplicates)

    def thresholds(self) -> Any:
        """The filters' thresholds as `Thresholds.to_json()` wrote them (None: none yet)."""
        return self.get_checkpoint(_THRESHOLDS)

    def funnel(self) -> list[Any]:
        return list(self.get_checkpoint(_FUNNEL, []))

    def duplicates(self) -> list[Any]:
        return list(self.get_checkpoint(_DUPLICATES, []))

    def dataset(self) -> dict[str, Any] | None:
        """The committed base's facts (version, files, ...: `pdf/refresh.py`); None
        when no finish of this tool completed here."""
        facts = self.get_checkpoint(_DATASET)
        return facts if isinstance(facts, dict) else None

    def set_dataset(self, facts: dict[str, Any]) -> None:
        self.set_checkpoint(_DATASET, facts)

    def decisions_become_base(self) -> None:
        """Inside the caller's transaction, with the facts that make the base."""
        self.db.execute("DELETE FROM base_decisions")
        self.db.execute(f"INSERT INTO base_decisions ({_COLUMNS}) "
                        f"SELECT {_COLUMNS} FROM decisions")
