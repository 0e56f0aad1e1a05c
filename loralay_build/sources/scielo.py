"""SciELO-ES and SciELO-PT: the ArticleMeta spider in a child process (see `crawl`)."""

from __future__ import annotations

from collections.abc import Iterator

from ..records import Candidate, Rejection
from ..settings import ScieloSettings
from . import FetchContext
from .crawl import run_crawl


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """`ctx.source` (scielo-es / scielo-pt) picks the language an article must be in."""
    s = ctx.settings
    assert isinstance(s, ScieloSettings)
    language = ctx.source.rsplit("-", 1)[-1]
    args = {"articlemeta_url": s.articlemeta_url, "collections": list(s.collections),
            "language": language, "from_date": s.from_date, "until_date": s.until_date,
            "page_size": s.page_size, "source": ctx.source, "pdf_dir": str(ctx.pdf_dir)}
    yield from run_crawl(ctx, "scielo", args)
