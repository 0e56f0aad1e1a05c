"""KoreaScience's pages made for a test, shared by the KoreaScience and licence tests."""

from __future__ import annotations

import json
from pathlib import Path

from loralay_build.conf import load_settings
from loralay_build.sources import FetchContext
from loralay_build.store.fetch import FetchState

from ..conftest import shared_path

FIX = Path(__file__).parent.parent / "fixtures" / "koreascience"
HTML = {"Content-Type": "text/html; charset=utf-8"}


def _paper(name: str) -> tuple[dict, bytes]:
    man = shared_path("corpus", "manifest.jsonl").read_text(encoding="utf-8")
    rec = next(json.loads(x) for x in man.splitlines() if x.strip() and f'"{name}"' in x)
    return rec, shared_path("corpus", rec["file"]).read_bytes()


def _page(template: str, doc_id: str, rec: dict, pdf: str) -> str:
    text = (FIX / template).read_text(encoding="utf-8")
    for key, value in (("{id}", doc_id), ("{ko}", rec["abstracts"]["ko"]),
                       ("{en}", rec["abstracts"]["en"]), ("{pdf}", pdf)):
        text = text.replace(key, value)
    return text


def _ctx(tmp_path: Path, srv) -> FetchContext:
    cfg = load_settings("koreascience").replace(
        search_url=srv.url("/search/advanced.page"), years=[2015], download_delay_s=0.0,
        max_retries=1, timeout_s=5)
    return FetchContext("koreascience", cfg, FetchState(tmp_path / "state.sqlite"), tmp_path)
