"""A shard's state (`state/shard-K-of-N.sqlite`): each processed document's summary and
payload, and the ledger entry (kind `document`) that says what it was made from. A
document's result and its entry are written in one transaction, so a run killed at any
instant leaves each document either fully recorded or not at all."""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..records import DocSummary
from . import ledger
from .base import FileKind, RunState

KIND = FileKind("shard", 1, (
    "CREATE TABLE IF NOT EXISTS documents ("
    "id TEXT PRIMARY KEY, summary TEXT NOT NULL, payload BLOB NOT NULL)",
    *ledger.DDL,
))


class ShardState(ledger.HoldsLedger, RunState):
    KIND = KIND

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
