"""The ledger's tables (`ledger`, `ledger_parts`), held by the shard states (kind
`document`) and the CiteSum state (one kind per pass); what an entry means and when it is
stale is `machinery/ledger.py`'s. Rows come back as `StoredEntry`, their fingerprint still
the JSON it was written as (the machinery above decodes it)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

DDL = (
    "CREATE TABLE IF NOT EXISTS ledger ("
    "kind TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, failure_class TEXT, "
    "stage TEXT, message TEXT, limits TEXT NOT NULL, durations TEXT NOT NULL, "
    "updated_at REAL NOT NULL, PRIMARY KEY (kind, key))",
    "CREATE TABLE IF NOT EXISTS ledger_parts (digest TEXT PRIMARY KEY, body TEXT NOT NULL)",
)
_ENTRY = "key, fingerprint, failure_class, stage, message, limits, durations"


@dataclass(frozen=True, slots=True)
class StoredEntry:
    key: str
    fingerprint: str  # `Fingerprint.to_json()`
    failure: str | None
    stage: str | None
    message: str | None
    limits: dict[str, float]
    durations: dict[str, float]


class LedgerTable:
    """The rows of one kind in a state file's ledger; writes join the caller's
    transaction."""

    def __init__(self, db: sqlite3.Connection, kind: str) -> None:
        self.db = db
        self.kind = kind

    def put(self, e: StoredEntry) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO ledger VALUES (?,?,?,?,?,?,?,?,?)",
            (self.kind, e.key, e.fingerprint, e.failure, e.stage, e.message,
             json.dumps(dict(e.limits), sort_keys=True), json.dumps(dict(e.durations)),
             time.time()))

    def get(self, key: str) -> StoredEntry | None:
        row = self.db.execute(f"SELECT {_ENTRY} FROM ledger WHERE kind=? AND key=?",
                              (self.kind, key)).fetchone()
        return _entry(row) if row else None

    def entries(self) -> Iterator[StoredEntry]:
        rows = self.db.execute(f"SELECT {_ENTRY} FROM ledger WHERE kind=? ORDER BY key",
                               (self.kind,))
        for row in rows:
            yield _entry(row)

    def durations(self) -> Iterator[tuple[str, dict[str, float]]]:
        """(key, seconds per stage) of every entry, in `entries()`'s order; nothing else
        is decoded."""
        rows = self.db.execute(
            "SELECT key, durations FROM ledger WHERE kind=? ORDER BY key", (self.kind,))
        for key, durations in rows:
            yield key, json.loads(durations)

    def forget(self, key: str) -> None:
        self.db.execute("DELETE FROM ledger WHERE kind=? AND key=?", (self.kind, key))

    def remember_part(self, value_digest: str, body: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO ledger_parts VALUES (?,?)", (value_digest, body))

    def part_body(self, value_digest: str) -> str | None:
        row = self.db.execute("SELECT body FROM ledger_parts WHERE digest=?",
                              (value_digest,)).fetchone()
        return row[0] if row else None


def _entry(row: tuple[Any, ...]) -> StoredEntry:
    key, fp, cls, stage, message, limits, durations = row
    return StoredEntry(key, fp, cls, stage, message, json.loads(limits), json.loads(durations))


class HoldsLedger:
    """A state kind whose file holds the ledger's tables (`self.db` its connection)."""

    db: sqlite3.Connection

    def ledger_table(self, kind: str) -> LedgerTable:
        return LedgerTable(self.db, kind)
