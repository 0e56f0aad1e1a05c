"""A shard's page images (`state/images-K-of-N.sqlite`): per document the inputs its pages
were rendered for, and its pages as JPEG. Why a file apart from the shard state, and how
the two stay consistent, is `images/store.py`'s."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .base import FileKind, RunState

KIND = FileKind("images", 1, (
    "CREATE TABLE IF NOT EXISTS docs (doc_id TEXT PRIMARY KEY, inputs TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS pages ("
    "doc_id TEXT NOT NULL, page INTEGER NOT NULL, width INTEGER NOT NULL, "
    "height INTEGER NOT NULL, dpi INTEGER NOT NULL, jpeg BLOB NOT NULL, "
    "PRIMARY KEY (doc_id, page))",
))


@dataclass(frozen=True, slots=True)
class StoredPage:
    page: int
    width: int
    height: int
    dpi: int
    jpeg: bytes


class ImageFile(RunState):
    KIND = KIND

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)

    def delete(self, doc_id: str) -> None:
        """Inside the caller's transaction."""
        self.db.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))
        self.db.execute("DELETE FROM docs WHERE doc_id=?", (doc_id,))

    def put(self, doc_id: str, inputs: str, pages: Iterable[StoredPage]) -> None:
        """Inside the caller's transaction; `pages` read one at a time."""
        self.db.execute("INSERT INTO docs VALUES (?,?)", (doc_id, inputs))
        for p in pages:
            self.db.execute("INSERT INTO pages VALUES (?,?,?,?,?,?)",
                            (doc_id, p.page, p.width, p.height, p.dpi, p.jpeg))

    def inputs(self, doc_id: str) -> str | None:
        row = self.db.execute("SELECT inputs FROM docs WHERE doc_id=?", (doc_id,)).fetchone()
        return row[0] if row else None

    def pages(self, doc_id: str) -> Iterator[StoredPage]:
        rows = self.db.execute("SELECT page, width, height, dpi, jpeg FROM pages "
                               "WHERE doc_id=? ORDER BY page", (doc_id,))
        for row in rows:
            yield StoredPage(*row)

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])
