"""KoreaScience: the advanced-search spider in a child process (see `crawl`)."""

from __future__ import annotations

from collections.abc import Iterator

from ..records import Candidate, Rejection
from ..settings import KoreaScienceSettings
from . import FetchContext
from .crawl import run_crawl


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    s = ctx.settings
    assert isinstance(s, KoreaScienceSettings)
    args = {"search_url": s.search_url, "years": list(s.years),
            "publisher_filter": s.publisher_filter, "page_size": s.page_size,
            "source": ctx.source, "pdf_dir": str(ctx.pdf_dir)}
    yield from run_crawl(ctx, "koreascience", args)
