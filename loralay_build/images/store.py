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
from pathlib import Path

from ..store.images import ImageFile, StoredPage
from .render import RenderedPages

__all__ = ["ImageStore", "StaleImages", "StoredPage"]


class StaleImages(RuntimeError):
    """A kept document's pages are missing or were rendered for other inputs."""


class ImageStore:
    def __init__(self, path: Path) -> None:
        self.file = ImageFile(path)

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> ImageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def forget(self, doc_id: str) -> None:
        with self.file.transaction():
            self.file.delete(doc_id)

    def replace(self, rendered: RenderedPages, inputs: str) -> None:
        """The document's pages, in place of any earlier ones, in one transaction; the
        staged files are read one at a time, then removed."""
        with self.file.transaction():
            self.file.delete(rendered.doc_id)
            self.file.put(rendered.doc_id, inputs, (
                StoredPage(p.page, p.width, p.height, rendered.dpi, Path(p.file).read_bytes())
                for p in rendered.pages))
        shutil.rmtree(rendered.folder, ignore_errors=True)

    def inputs(self, doc_id: str) -> str | None:
        return self.file.inputs(doc_id)

    def pages_for(self, doc_id: str, inputs: str) -> Iterator[StoredPage]:
        """The document's pages in page order, one row at a time; StaleImages when they
        were not rendered for the result now recorded."""
        if self.inputs(doc_id) != inputs:
            raise StaleImages(f"{doc_id}: no page images for its current result (rerun "
                              "`build` with the same settings to render them)")
        yield from self.file.pages(doc_id)

    def count(self) -> int:
        return self.file.count()
