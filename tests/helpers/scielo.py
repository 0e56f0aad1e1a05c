"""SciELO's records and PDFs served for a test, shared by the SciELO and licence tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from loralay_build.conf import load_settings
from loralay_build.sources import FetchContext, get_fetcher, record_fetch_item
from loralay_build.store.fetch import FetchState

from ..conftest import shared_path
from ..fakeserver import Reply

PID = "S0034-89102010000400007"


def _record() -> dict:
    path = shared_path("fixtures", "scielo", f"articlemeta_article_scl_{PID}.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _pdf(name: str) -> bytes:
    return shared_path("corpus", "pdf", f"{name}.pdf").read_bytes()


def _variant(base: dict, pid: str, lang: str, pdf_url: str | None) -> dict:
    """The real record re-labelled: another PID, original language and PDF link."""
    rec = copy.deepcopy(base)
    rec["code"] = pid
    rec["article"]["v40"] = [{"_": lang}]
    rec["fulltexts"]["pdf"] = {lang: pdf_url} if pdf_url else {}
    return rec


def _serve(srv, records: dict[str, dict], page_size: int = 2) -> None:
    pids = list(records)

    def identifiers(req):
        off = int(req.query["offset"][0])
        objs = [{"code": p, "collection": "scl"} for p in pids[off: off + page_size]]
        return Reply(200, json.dumps({"meta": {}, "objects": objs}),
                     {"Content-Type": "application/json"})

    def article(req):
        return Reply(200, json.dumps(records[req.query["code"][0]]),
                     {"Content-Type": "application/json"})

    srv.add_handler("/api/v1/article/identifiers/", identifiers)
    srv.add_handler("/api/v1/article/", article)


def _ctx(tmp_path: Path, srv, source: str = "scielo-pt", limit=None, **over) -> FetchContext:
    cfg = load_settings(source).replace(
        articlemeta_url=srv.url("/api/v1/"), collections=["scl"], download_delay_s=0.0,
        max_retries=2, retry_after_max_s=1, page_size=2, timeout_s=5, **over)
    state = FetchState(tmp_path / "state.sqlite")
    return FetchContext(source, cfg, state, tmp_path, limit=limit)


def _run(ctx: FetchContext) -> list:
    items = []
    for item in get_fetcher(ctx.source)(ctx):
        record_fetch_item(ctx.state, item)
        items.append(item)
    return items
