"""SciELO-ES and SciELO-PT: the ArticleMeta spider in a child process (see `crawl`).

A refresh asks ArticleMeta only `from` the newest processing date the last harvest saw,
less the overlap (`HighWater`); the child hands that date over with its stats, and the
mark is kept only from a whole crawl that lost nothing (`crawl.run_crawl`)."""

from __future__ import annotations

from collections.abc import Iterator

from ..conf import ScieloSettings
from ..records import Candidate, Rejection
from . import FetchContext
from .crawl import run_crawl
from .kit.harvest import HighWater


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """`ctx.source` (scielo-es / scielo-pt) picks the language an article must be in."""
    s = ctx.settings
    assert isinstance(s, ScieloSettings)
    language = ctx.source.rsplit("-", 1)[-1]
    high_water = HighWater(ctx, f"{ctx.source}.high_water")
    args = {"articlemeta_url": s.articlemeta_url, "collections": list(s.collections),
            "language": language, "from_date": high_water.start(s.from_date),
            "until_date": s.until_date, "page_size": s.page_size, "source": ctx.source,
            "pdf_dir": str(ctx.pdf_dir)}
    yield from run_crawl(ctx, "scielo", args, high_water)
