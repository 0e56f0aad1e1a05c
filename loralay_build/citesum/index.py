"""On-disk indexes between the passes: the cited ids pass 1 found, the cited papers pass 2 kept.

Why SQLite files and not Python sets and dicts: at S2ORC scale there are ~426K cited ids and
as many abstracts (~0.5 GB of text); held in memory they would be copied into every worker.
Here the driver builds each index by streaming the shard outputs into a table keyed by id
(written under a temporary name, renamed when whole), and workers open it read-only and look
ids up in batches, so every step holds at most one batch of one shard.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TypeVar

from ..atomic import TEMP_PREFIX, place, refuse_link
from .records import CitedPaper

BATCH = 200  # ids or records per lookup: bounds what a step holds (and under SQLite's bound)
T = TypeVar("T")


def batches(items: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _fresh_db(dest: Path, schema: str) -> tuple[sqlite3.Connection, Path]:
    tmp = refuse_link(dest.with_name(f"{TEMP_PREFIX}{dest.name}-{os.getpid()}"))
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(str(tmp), isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute(schema)
    con.execute("BEGIN")
    return con, tmp


def _close_into(con: sqlite3.Connection, tmp: Path, dest: Path) -> None:
    con.execute("COMMIT")
    con.close()
    place(tmp, dest)


def open_ro(path: str | Path) -> sqlite3.Connection:
    """A worker's read-only handle (several workers read one index at once)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)


def write_wanted(candidate_files: Iterable[Path], dest: Path) -> str:
    """The cited ids of every candidate, one row each; returns their digest (sha256 of the
    sorted ids), which decides whether pass 2 must be redone."""
    con, tmp = _fresh_db(dest, "CREATE TABLE ids (id TEXT PRIMARY KEY) WITHOUT ROWID")
    for path in candidate_files:
        with open(path, encoding="utf-8") as fh:
            for chunk in batches(fh, 5000):
                con.executemany("INSERT OR IGNORE INTO ids VALUES (?)",
                                ((json.loads(line)["cited_id"],) for line in chunk))
    digest = hashlib.sha256()
    for (cited_id,) in con.execute("SELECT id FROM ids ORDER BY id"):
        digest.update(cited_id.encode("utf-8") + b"\n")
    _close_into(con, tmp, dest)
    return digest.hexdigest()


def wanted(con: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Which of `ids` (one batch) pass 1 cited."""
    if not ids:
        return set()
    rows = con.execute(f"SELECT id FROM ids WHERE id IN ({','.join('?' * len(ids))})", ids)
    return {r[0] for r in rows}


def write_cited(pass2_files: Iterable[Path], dest: Path) -> None:
    """The cited papers pass 2 kept, merged field by field across kinds and shards in the
    order given (sorted: the first non-empty value wins, whatever the workers' order)."""
    con, tmp = _fresh_db(dest, "CREATE TABLE cited (id TEXT PRIMARY KEY, paper TEXT NOT NULL)"
                               " WITHOUT ROWID")
    for path in pass2_files:
        with open(path, encoding="utf-8") as fh:
            for chunk in batches(fh):
                _merge_batch(con, [CitedPaper.from_json(json.loads(line)) for line in chunk])
    _close_into(con, tmp, dest)


def _merge_batch(con: sqlite3.Connection, papers: list[CitedPaper]) -> None:
    known = lookup(con, [p.paper_id for p in papers])
    for p in papers:
        if p.paper_id in known:
            known[p.paper_id].merge(p)
        else:
            known[p.paper_id] = p
    con.executemany("INSERT OR REPLACE INTO cited VALUES (?, ?)",
                    ((k, json.dumps(v.to_json(), ensure_ascii=False)) for k, v in known.items()))


def lookup(con: sqlite3.Connection, ids: list[str]) -> dict[str, CitedPaper]:
    """The cited papers of one batch of ids (absent ids are not in the result)."""
    found: dict[str, CitedPaper] = {}
    for chunk in batches(dict.fromkeys(ids)):
        rows = con.execute(
            f"SELECT id, paper FROM cited WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        found.update((k, CitedPaper.from_json(json.loads(v))) for k, v in rows)
    return found
