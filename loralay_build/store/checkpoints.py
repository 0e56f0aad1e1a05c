"""The `checkpoints` table: named JSON values a run keeps beside its records (harvest
positions, the shard count, the finish's thresholds and funnel, CiteSum's tallies), in the
fetch, finish and CiteSum files alike."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

DDL = "CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, value TEXT NOT NULL)"


def get(db: sqlite3.Connection, name: str, default: Any = None) -> Any:
    row = db.execute("SELECT value FROM checkpoints WHERE name=?", (name,)).fetchone()
    return json.loads(row[0]) if row else default


def put(db: sqlite3.Connection, name: str, value: Any) -> None:
    db.execute("INSERT OR REPLACE INTO checkpoints VALUES (?,?)",
               (name, json.dumps(value, ensure_ascii=False)))


class Checkpoints:
    """The accessors of a state kind that holds the table (`self.db` its connection)."""

    db: sqlite3.Connection

    def get_checkpoint(self, name: str, default: Any = None) -> Any:
        return get(self.db, name, default)

    def set_checkpoint(self, name: str, value: Any) -> None:
        put(self.db, name, value)
