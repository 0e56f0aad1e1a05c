"""Each shard's rendered pages, kept between the per-document stage and the finish.

Why a SQLite file of its own per shard (`state/images-K-of-N.sqlite`): pages are large
(~100 KiB each) and the shard state is read whole-table by the finish's decisions, so they
stay out of it; one file per shard keeps shards independent, as their states are.
Consistency with the shard state without a shared transaction: each document's pages
carry the fingerprint digest its result was recorded with in the ledger. The driver stores
the pages first, then records the result; a run killed between the two leaves pages whose
print matches no recorded result, the document is still stale and is redone, and the finish refuses
pages whose print differs from the result's (`pages_for` raises).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..state import connect_shared
from .render import RenderedPages

SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (doc_id TEXT PRIMARY KEY, inputs TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL, page INTEGER NOT NULL, width INTEGER NOT NULL,
    height INTEGER NOT NULL, dpi INTEGER NOT NULL, jpeg BLOB NOT NULL,
    PRIMARY KEY (doc_id, page));
"""


class StaleImages(RuntimeError):
    """A kept document's pages are missing or were rendered for other inputs."""


@dataclass(frozen=True, slots=True)
class StoredPage:
    page: int
    width: int
    height: int
    dpi: int
    jpeg: bytes


class ImageStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = connect_shared(path, SCHEMA)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> ImageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _delete(self, doc_id: str) -> None:
        self.db.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))
        self.db.execute("DELETE FROM docs WHERE doc_id=?", (doc_id,))

    def forget(self, doc_id: str) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self._delete(doc_id)
        self.db.execute("COMMIT")

    def replace(self, rendered: RenderedPages, inputs: str) -> None:
        """The document's pages, in place of any earlier ones, in one transaction; the
        staged files are read one at a time, then removed."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._delete(rendered.doc_id)
            self.db.execute("INSERT INTO docs VALUES (?,?)", (rendered.doc_id, inputs))
            for p in rendered.pages:
                self.db.execute("INSERT INTO pages VALUES (?,?,?,?,?,?)",
                                (rendered.doc_id, p.page, p.width, p.height, rendered.dpi,
                                 Path(p.file).read_bytes()))
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        shutil.rmtree(rendered.folder, ignore_errors=True)

    def inputs(self, doc_id: str) -> str | None:
        row = self.db.execute("SELECT inputs FROM docs WHERE doc_id=?", (doc_id,)).fetchone()
        return row[0] if row else None

    def pages_for(self, doc_id: str, inputs: str) -> Iterator[StoredPage]:
        """The document's pages in page order, one row at a time; StaleImages when they
        were not rendered for the result now recorded."""
        if self.inputs(doc_id) != inputs:
            raise StaleImages(f"{doc_id}: no page images for its current result (rerun "
                              "`build` with the same settings to render them)")
        rows = self.db.execute("SELECT page, width, height, dpi, jpeg FROM pages "
                               "WHERE doc_id=? ORDER BY page", (doc_id,))
        for row in rows:
            yield StoredPage(*row)

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])
