"""The run state: SQLite files inside the output folder (fetch, each shard, the finish).

Why SQLite: a document's result and its ledger entry (`machinery/ledger.py`) are written in one
transaction, so a run killed with SIGKILL at any instant leaves each document either fully
recorded or not at all, and a rerun picks up exactly the rest. WAL mode keeps readers (the
report, a merge) from blocking the writer. The `results` table holds the fetch's and the
finish's per-id outcomes; per-document results are the ledger's.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .atomic import refuse_link
from .failures import Failure
from .records import Candidate, DocSummary

SCHEMA = """
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, body TEXT NOT NULL);
-- each new candidate takes MAX(seq) + 1: without an index that is a scan of every row,
-- and the fetch of n candidates costs n^2/2 row reads (145 docs/s at 20k and falling)
CREATE INDEX IF NOT EXISTS candidates_seq ON candidates (seq);
CREATE TABLE IF NOT EXISTS results (
    doc_id TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL,
    failure_class TEXT, message TEXT, duration_s REAL, updated_at REAL,
    PRIMARY KEY (doc_id, stage));
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, summary TEXT NOT NULL, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

OK, FAILED = "ok", "failed"


def connect_shared(path: Path, schema: str, any_thread: bool = False) -> sqlite3.Connection:
    """A WAL database that processes started at the same moment (shards side by side) may
    all open: turning a new file to WAL takes an exclusive lock for which SQLite calls no
    busy handler, so the loser got "database is locked" at once instead of waiting."""
    db = sqlite3.connect(str(refuse_link(path)), timeout=60, isolation_level=None,
                         check_same_thread=not any_thread)
    _while_locked(lambda: db.execute("PRAGMA journal_mode=WAL"), 60)
    db.execute("PRAGMA synchronous=NORMAL")
    _while_locked(lambda: db.executescript(schema), 60)
    return db


def _while_locked(step: Callable[[], object], timeout_s: float) -> None:
    deadline, pause = time.monotonic() + timeout_s, 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.2)


@dataclass(frozen=True, slots=True)
class StageResult:
    doc_id: str
    stage: str
    status: str
    failure_class: str | None
    message: str | None
    duration_s: float | None


class RunState:
    """Per-document, per-stage outcomes, fetched candidates, processed documents, checkpoints."""

    def __init__(self, path: str | Path, any_thread: bool = False) -> None:
        """`any_thread`: the connection may be used from another thread than this one (one
        thread at a time; the finish reads payloads in a read-ahead thread)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = connect_shared(self.path, SCHEMA, any_thread=any_thread)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> RunState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transactions -------------------------------------------------------------
    def transaction(self) -> _Tx:
        return _Tx(self.db)

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

    def clear_stage(self, stage: str) -> None:
        self.db.execute("DELETE FROM results WHERE stage=?", (stage,))

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

    @classmethod
    def read_only(cls, path: Path) -> RunState:
        """An existing state opened for reading alone (`loralay show` on someone's dataset
        must neither create nor change a file there): no schema, no WAL switch."""
        self = cls.__new__(cls)
        self.path = Path(path)
        self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
        return self

    def count_candidates(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0])

    # --- processed documents ------------------------------------------------------
    def put_document(self, doc_id: str, summary: DocSummary, payload: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO documents VALUES (?,?,?)",
                        (doc_id, json.dumps(summary.to_json(), ensure_ascii=False), payload))

    def document_summaries(self) -> Iterator[DocSummary]:
        for (s,) in self.db.execute("SELECT summary FROM documents ORDER BY id"):
            yield DocSummary.from_json(json.loads(s))

    def document_payload(self, doc_id: str) -> bytes:
        row = self.db.execute("SELECT payload FROM documents WHERE id=?", (doc_id,)).fetchone()
        if row is None:
            raise KeyError(doc_id)
        return bytes(row[0])

    def forget(self, doc_id: str) -> None:
        """The stored document of `doc_id`, before a redo writes the new one."""
        self.db.execute("DELETE FROM documents WHERE id=?", (doc_id,))

    # --- checkpoints --------------------------------------------------------------
    def get_checkpoint(self, name: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM checkpoints WHERE name=?", (name,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_checkpoint(self, name: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO checkpoints VALUES (?,?)",
                        (name, json.dumps(value, ensure_ascii=False)))


class _Tx:
    """`with state.transaction():` groups writes so they land together or not at all."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
