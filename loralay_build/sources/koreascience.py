"""KoreaScience: the advanced-search spider in a child process (see `crawl`).

A refresh pages each year only until a result page holds an id already recorded (the
skip list `run_crawl` passes); see the spider and docs/koreascience.md."""

from __future__ import annotations

from collections.abc import Iterator

from ..conf import KoreaScienceSettings
from ..records import Candidate, Rejection
from . import FetchContext
from .crawl import run_crawl


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    s = ctx.settings
    assert isinstance(s, KoreaScienceSettings)
    args = {"search_url": s.search_url, "years": list(s.years),
            "publisher_filter": s.publisher_filter, "page_size": s.page_size,
            "source": ctx.source, "pdf_dir": str(ctx.pdf_dir), "refresh": ctx.refresh}
    yield from run_crawl(ctx, "koreascience", args)
