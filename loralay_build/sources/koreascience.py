"""KoreaScience: the advanced-search spider in a child process (see `crawl`)."""

from __future__ import annotations

from collections.abc import Iterator

from ..records import Candidate, Rejection
from . import FetchContext
from .crawl import run_crawl


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    cfg = ctx.config
    args = {"search_url": cfg["search_url"], "years": list(cfg["years"]),
            "publisher_filter": cfg.get("publisher_filter", "korean"),
            "page_size": cfg.get("page_size", 50),
            "source": ctx.source, "pdf_dir": str(ctx.pdf_dir)}
    yield from run_crawl(ctx, "koreascience", args, cfg)
