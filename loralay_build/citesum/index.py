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
import sqlite3
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TypeVar

from ..store.citesum import (
    CITED,
    IDS,
    add_ids,
    cited_rows,
    close_into,
    fresh_index,
    known_ids,
    open_index,
    put_cited,
    sorted_ids,
)
from .records import CitedPaper

BATCH = 200  # ids or records per lookup: bounds what a step holds (and under SQLite's bound)
T = TypeVar("T")


def batches(items: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def open_ids(path: str | Path) -> sqlite3.Connection:
    """A worker's read-only handle on pass 1's cited ids (several workers read at once)."""
    return open_index(path, IDS)


def open_cited(path: str | Path) -> sqlite3.Connection:
    """A worker's read-only handle on pass 2's cited papers."""
    return open_index(path, CITED)


def write_wanted(candidate_files: Iterable[Path], dest: Path) -> str:
    """The cited ids of every candidate, one row each; returns their digest (sha256 of the
    sorted ids), which decides whether pass 2 must be redone."""
    con, tmp = fresh_index(dest, IDS)
    for path in candidate_files:
        with open(path, encoding="utf-8") as fh:
            for chunk in batches(fh, 5000):
                add_ids(con, (json.loads(line)["cited_id"] for line in chunk))
    digest = hashlib.sha256()
    for cited_id in sorted_ids(con):
        digest.update(cited_id.encode("utf-8") + b"\n")
    close_into(con, tmp, dest)
    return digest.hexdigest()


def wanted(con: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Which of `ids` (one batch) pass 1 cited."""
    return known_ids(con, ids)


def write_cited(pass2_files: Iterable[Path], dest: Path) -> None:
    """The cited papers pass 2 kept, merged field by field across kinds and shards in the
    order given (sorted: the first non-empty value wins, whatever the workers' order)."""
    con, tmp = fresh_index(dest, CITED)
    for path in pass2_files:
        with open(path, encoding="utf-8") as fh:
            for chunk in batches(fh):
                _merge_batch(con, [CitedPaper.from_json(json.loads(line)) for line in chunk])
    close_into(con, tmp, dest)


def _merge_batch(con: sqlite3.Connection, papers: list[CitedPaper]) -> None:
    known = lookup(con, [p.paper_id for p in papers])
    for p in papers:
        if p.paper_id in known:
            known[p.paper_id].merge(p)
        else:
            known[p.paper_id] = p
    put_cited(con, ((k, json.dumps(v.to_json(), ensure_ascii=False)) for k, v in known.items()))


def lookup(con: sqlite3.Connection, ids: list[str]) -> dict[str, CitedPaper]:
    """The cited papers of one batch of ids (absent ids are not in the result)."""
    found: dict[str, CitedPaper] = {}
    for chunk in batches(dict.fromkeys(ids)):
        found.update((k, CitedPaper.from_json(json.loads(v))) for k, v in cited_rows(con, chunk))
    return found
