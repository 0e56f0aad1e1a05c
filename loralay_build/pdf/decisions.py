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
from ..store.finish import DecisionRow, FinishState
from .corpus_steps import CorpusDecisions


def record_decisions(path: Path, d: CorpusDecisions) -> None:
    """Replaces the record with `d`, in one transaction (a kill leaves the last one)."""
    shard_of = {d.rows.ids[j]: d.rows.shard[j] for j in d.order}
    with FinishState(path) as st, st.transaction():
        st.replace_decisions(
            DecisionRow(seq, doc_id, o.status, o.split,
                        shard_of.get(doc_id) if o.split else None, o.cls, o.stage, o.message)
            for seq, (doc_id, o) in enumerate(d.outcomes.items()))
        st.record_facts(d.thresholds.to_json(), list(d.funnel),
                        [dup.to_json() for dup in d.duplicates.values()])


def _outcome(row: DecisionRow) -> Outcome:
    if row.kept and row.split is not None:
        return Outcome.kept(row.split)
    return Outcome(row.status, None, row.cls, row.rule, row.message)


class RecordedDecisions(Mapping[str, Outcome]):
    """The record, read back: every id's outcome in the report's order (streamed from the
    state, so a report over 200k ids holds no dict of them), the splits' counts, and the
    facts recorded with them."""

    def __init__(self, path: Path) -> None:
        self._state = FinishState(path, any_thread=True)

    def close(self) -> None:
        self._state.close()

    def __enter__(self) -> RecordedDecisions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def items(self) -> Iterator[tuple[str, Outcome]]:  # type: ignore[override]
        for row in self._state.decisions():
            yield row.id, _outcome(row)

    def values(self) -> Iterator[Outcome]:  # type: ignore[override]
        return (o for _, o in self.items())

    def __iter__(self) -> Iterator[str]:
        return (i for i, _ in self.items())

    def __len__(self) -> int:
        return self._state.count_decisions()

    def __getitem__(self, doc_id: str) -> Outcome:
        row = self._state.decision(doc_id)
        if row is None:
            raise KeyError(doc_id)
        return _outcome(row)

    def kept_counts(self) -> dict[str, int]:
        """Kept ids per split, every split named (zero when empty), in SPLITS order."""
        return kept_per_split(self._state)

    def split_and_shard(self, doc_id: str) -> tuple[str, int] | None:
        """Where a kept id is: its split and the shard state holding it; None if not kept."""
        return self._state.kept_place(doc_id)

    def thresholds(self) -> Any:
        """As recorded with the decisions (`Thresholds.to_json()`)."""
        return self._state.thresholds()

    def funnel(self) -> list[Any]:
        return self._state.funnel()

    def duplicates(self) -> list[Any]:
        return self._state.duplicates()


def kept_per_split(st: FinishState) -> dict[str, int]:
    """Every split named (zero when empty), in SPLITS order."""
    got = st.kept_counts()
    return {s: got.get(s, 0) for s in SPLITS}
