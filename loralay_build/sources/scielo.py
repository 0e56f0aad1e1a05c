"""SciELO-ES and SciELO-PT: the ArticleMeta spider in a child process (see `crawl`)."""

from __future__ import annotations

from collections.abc import Iterator

from ..records import Candidate, Rejection
from . import FetchContext
from .crawl import run_crawl


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """`ctx.source` (scielo-es / scielo-pt) picks the language an article must be in."""
    cfg = ctx.config
    language = ctx.source.rsplit("-", 1)[-1]
    args = {"articlemeta_url": cfg["articlemeta_url"], "collections": list(cfg["collections"]),
            "language": language, "from_date": cfg.get("from_date"),
            "until_date": cfg.get("until_date"), "page_size": cfg.get("page_size", 1000),
            "source": ctx.source, "pdf_dir": str(ctx.pdf_dir)}
    yield from run_crawl(ctx, "scielo", args, cfg)
