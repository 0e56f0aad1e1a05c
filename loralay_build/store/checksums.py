"""The PDFs' checksums (`state/pdf-checksums.sqlite`, kept by `--fresh` with the PDFs):
each path's sha256 with the size and mtime it was read at."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .base import FileKind, RunState

KIND = FileKind("pdf-checksums", 1, (
    "CREATE TABLE IF NOT EXISTS sums (path TEXT PRIMARY KEY, "
    "size INTEGER, mtime_ns INTEGER, sha256 TEXT NOT NULL)",
), remedy="remove it (a cache, which --fresh keeps: the PDFs are hashed again)")


@dataclass(frozen=True, slots=True)
class StoredSum:
    size: int
    mtime_ns: int
    sha256: str


class ChecksumFile(RunState):
    KIND = KIND

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)

    def get(self, pdf: str) -> StoredSum | None:
        row = self.db.execute("SELECT size, mtime_ns, sha256 FROM sums WHERE path=?",
                              (pdf,)).fetchone()
        return StoredSum(int(row[0]), int(row[1]), str(row[2])) if row else None

    def put(self, pdf: str, s: StoredSum) -> None:
        self.db.execute("INSERT OR REPLACE INTO sums VALUES (?,?,?,?)",
                        (pdf, s.size, s.mtime_ns, s.sha256))
