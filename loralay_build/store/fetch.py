"""The fetch's state (`state/fetch.sqlite`): the candidates in fetch order, each id's fetch
outcome (`results`, stage `fetch`), and the harvest's checkpoints (paging positions, the
shard count, the bad records' tally)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..failures import BadRecords, Failure
from ..records import Candidate
from . import checkpoints
from .base import FileKind, RunState

OK, FAILED = "ok", "failed"
# the fetch's own checkpoints (a source names its paging positions itself)
_SHARDS, _BAD_RECORDS = "run.num_shards", "fetch:bad_records"

KIND = FileKind("fetch", 1, (
    "CREATE TABLE IF NOT EXISTS candidates ("
    "id TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL)",
    # each new candidate takes MAX(seq) + 1: without an index that is a scan of every row,
    # and the fetch of n candidates costs n^2/2 row reads (145 docs/s at 20k and falling)
    "CREATE INDEX IF NOT EXISTS candidates_seq ON candidates (seq)",
    "CREATE TABLE IF NOT EXISTS results ("
    "doc_id TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL, "
    "failure_class TEXT, message TEXT, duration_s REAL, updated_at REAL, "
    "PRIMARY KEY (doc_id, stage))",
    checkpoints.DDL,
))


@dataclass(frozen=True, slots=True)
class StageResult:
    doc_id: str
    stage: str
    status: str
    failure_class: str | None
    message: str | None
    duration_s: float | None


class FetchState(checkpoints.Checkpoints, RunState):
    """Fetched candidates, their per-stage outcomes, the harvest's checkpoints."""

    KIND = KIND

    # --- stage results ------------------------------------------------------------
    def record(self, doc_id: str, stage: str, failure: Failure | None = None,
               duration_s: float | None = None) -> None:
        status = OK if failure is None else FAILED
        self.db.execute(
            "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?)",
            (doc_id, stage, status, failure.cls.value if failure else None,
             failure.message if failure else None, duration_s, time.time()),
        )

    def record_failure_raw(self, doc_id: str, stage: str, cls: str, message: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?)",
            (doc_id, stage, FAILED, cls, message, None, time.time()),
        )

    def status(self, doc_id: str, stage: str) -> str | None:
        row = self.db.execute("SELECT status FROM results WHERE doc_id=? AND stage=?",
                              (doc_id, stage)).fetchone()
        return row[0] if row else None

    def settled(self, doc_id: str, stage: str, retried: Iterable[str] = ()) -> bool:
        """Recorded for this stage, and not as a failure of one of the `retried` classes."""
        row = self.db.execute("SELECT failure_class FROM results WHERE doc_id=? AND stage=?",
                              (doc_id, stage)).fetchone()
        return row is not None and row[0] not in set(retried)

    def ids_with_class(self, stage: str, classes: Iterable[str]) -> set[str]:
        wanted = sorted(classes)
        if not wanted:  # SQLite rejects an empty IN ()
            return set()
        rows = self.db.execute(
            "SELECT doc_id FROM results WHERE stage=? AND failure_class IN "
            f"({','.join('?' * len(wanted))})", (stage, *wanted))
        return {r[0] for r in rows}

    def ids_with(self, stage: str, status: str | None = None) -> set[str]:
        if status is None:
            rows = self.db.execute("SELECT doc_id FROM results WHERE stage=?", (stage,))
        else:
            rows = self.db.execute("SELECT doc_id FROM results WHERE stage=? AND status=?",
                                   (stage, status))
        return {r[0] for r in rows}

    def results(self, stage: str | None = None) -> Iterator[StageResult]:
        sql = "SELECT doc_id, stage, status, failure_class, message, duration_s FROM results"
        rows = self.db.execute(sql + (" WHERE stage=?" if stage else "") + " ORDER BY doc_id",
                               (stage,) if stage else ())
        for r in rows:
            yield StageResult(*r)

    # --- candidates -----------------------------------------------------------------
    def put_candidate(self, c: Candidate) -> None:
        """Insert or update; the first insertion fixes the candidate's order in the run."""
        body = json.dumps(c.to_json(), ensure_ascii=False)
        cur = self.db.execute("UPDATE candidates SET body=? WHERE id=?", (body, c.id))
        if cur.rowcount == 0:
            seq = self.db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM candidates").fetchone()
            self.db.execute("INSERT INTO candidates VALUES (?,?,?)", (c.id, seq[0], body))

    def forget_candidates_except(self, keep: set[str]) -> int:
        """Drop candidates (and their results) no longer proposed: a manifest line removed."""
        return self.forget_candidates([r[0] for r in self.db.execute("SELECT id FROM candidates")
                                       if r[0] not in keep])

    def forget_candidates(self, ids: Iterable[str]) -> int:
        """Drop these candidates and their results (the source no longer offers them); the
        count of those that were recorded."""
        gone = 0
        for doc_id in ids:
            gone += self.db.execute("DELETE FROM candidates WHERE id=?", (doc_id,)).rowcount
            self.db.execute("DELETE FROM results WHERE doc_id=?", (doc_id,))
        return gone

    def candidates(self, keep: Callable[[str], bool] | None = None) -> Iterator[Candidate]:
        """In fetch order; `keep`, if given, picks by id before a row's body is decoded."""
        for doc_id, body in self.db.execute("SELECT id, body FROM candidates ORDER BY seq"):
            if keep is None or keep(doc_id):
                yield Candidate.from_json(json.loads(body))

    def candidate(self, doc_id: str) -> Candidate | None:
        hit = self.db.execute("SELECT body FROM candidates WHERE id = ?", (doc_id,)).fetchone()
        return Candidate.from_json(json.loads(hit[0])) if hit else None

    def count_candidates(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0])

    # --- the fetch's checkpoints ----------------------------------------------------
    def num_shards(self) -> int | None:
        """The shard count the run folder was processed with (None: not processed yet)."""
        value = self.get_checkpoint(_SHARDS)
        return value if isinstance(value, int) else None

    def set_num_shards(self, num_shards: int) -> None:
        self.set_checkpoint(_SHARDS, num_shards)

    def bad_records(self) -> BadRecords:
        """The fetch's tally of bad input records (`Rejection.bad_record`), by class with
        the first few examples; empty in a state written before it was kept."""
        return BadRecords.from_json(self.get_checkpoint(_BAD_RECORDS, None))

    def set_bad_records(self, bad: BadRecords) -> None:
        self.set_checkpoint(_BAD_RECORDS, bad.to_json())
