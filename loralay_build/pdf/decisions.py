"""What the finish decided, recorded: one row per input id in the finish's state (kept,
with its split and the shard holding it; or dropped, with its class, the rule that
dropped it and why), beside the thresholds, the funnel and the duplicate pairs.

Why a record and not only the Parquet files: a paper's split must outlive the build that
chose it (a refresh keeps it; a user asks where an id went), and the report, the card's
counts and `report.json` are read back from this record rather than recomputed beside it,
so what the dataset says and what the state says cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..records import Outcome
from ..splits import SPLITS
from ..state import RunState
from .decide import Decisions

SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    split TEXT, shard INTEGER, class TEXT, rule TEXT, message TEXT);
"""
KEPT, DROPPED = "kept", "dropped"


def record_decisions(path: Path, d: Decisions) -> None:
    """Replaces the record with `d`, in one transaction (a kill leaves the last one)."""
    shard_of = {d.rows.ids[j]: d.rows.shard[j] for j in d.order}
    with RunState(path) as st:
        st.db.executescript(SCHEMA)
        with st.transaction():
            st.db.execute("DELETE FROM decisions")
            st.db.executemany(
                "INSERT INTO decisions VALUES (?,?,?,?,?,?,?,?)",
                ((seq, doc_id, o.status, o.split, shard_of.get(doc_id) if o.split else None,
                  o.cls, o.stage, o.message)
                 for seq, (doc_id, o) in enumerate(d.outcomes.items())))
            st.clear_stage("finish")  # what earlier versions kept instead of this record
            st.set_checkpoint("thresholds", d.thresholds.to_json())
            st.set_checkpoint("funnel", d.funnel)
            st.set_checkpoint("duplicates", [dup.to_json() for dup in d.duplicates.values()])


class RecordedDecisions(Mapping[str, Outcome]):
    """The record, read back: every id's outcome in the report's order (streamed from the
    state, so a report over 200k ids holds no dict of them), the splits' counts, and the
    facts recorded with them."""

    def __init__(self, path: Path) -> None:
        self._state = RunState(path, any_thread=True)
        self._state.db.executescript(SCHEMA)

    def close(self) -> None:
        self._state.close()

    def __enter__(self) -> RecordedDecisions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def items(self) -> Iterator[tuple[str, Outcome]]:  # type: ignore[override]
        rows = self._state.db.execute(
            "SELECT id, status, split, class, rule, message FROM decisions ORDER BY seq")
        for doc_id, status, split, cls, rule, message in rows:
            yield doc_id, (Outcome.kept(split) if status == KEPT
                           else Outcome(status, None, cls, rule, message))

    def values(self) -> Iterator[Outcome]:  # type: ignore[override]
        return (o for _, o in self.items())

    def __iter__(self) -> Iterator[str]:
        return (i for i, _ in self.items())

    def __len__(self) -> int:
        return int(self._state.db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0])

    def __getitem__(self, doc_id: str) -> Outcome:
        row = self._state.db.execute(
            "SELECT status, split, class, rule, message FROM decisions WHERE id = ?",
            (doc_id,)).fetchone()
        if row is None:
            raise KeyError(doc_id)
        status, split, cls, rule, message = row
        return Outcome.kept(split) if status == KEPT else Outcome(status, None, cls, rule,
                                                                    message)

    def kept_counts(self) -> dict[str, int]:
        """Kept ids per split, every split named (zero when empty), in SPLITS order."""
        got = dict(self._state.db.execute(
            "SELECT split, COUNT(*) FROM decisions WHERE status = ? GROUP BY split", (KEPT,)))
        return {s: int(got.get(s, 0)) for s in SPLITS}

    def split_and_shard(self, doc_id: str) -> tuple[str, int] | None:
        """Where a kept id is: its split and the shard state holding it; None if not kept."""
        row = self._state.db.execute(
            "SELECT split, shard FROM decisions WHERE id = ? AND status = ?",
            (doc_id, KEPT)).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def fact(self, name: str) -> Any:
        """`thresholds`, `funnel` or `duplicates`, as recorded with the decisions."""
        return self._state.get_checkpoint(name)
