"""SciELO through ArticleMeta: identifiers pages (offset paging) → one JSON per article.

An article belongs to SciELO-ES/PT when its original language (`v40`) is the wanted
one; it then needs a PDF (`fulltexts.pdf.<lang>`) and an abstract (`v83`) in that
language. Ids are `<collection>-<PID>`, stable across runs. The processing date an
identifiers page gives each PID is the date ArticleMeta's `from`/`until` filter on: the
newest one listed is the crawl's `HIGH_WATER_STAT` (a refresh asks from it), and each
candidate keeps its own (`extra["processing_date"]`).

Licence: the record's own `license` (ArticleMeta's per-article field, not uniform: `by`,
`by-nc`, `by/4.0`, `by-nc/3.0`, `by/igo` ...), else the Creative Commons link of the
article's `v540` licence text; the issue's and journal's licences are not used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlencode

import scrapy

from ....failures import FailureClass
from ....records import Candidate
from ... import retrieved_now
from .. import HIGH_WATER_STAT
from .base import PdfSpider, rejection_item

_LICENSE_HREF = re.compile(r"""href=["']([^"']+)["']""")


def _tag(article: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    value = article.get(tag) or []
    return value if isinstance(value, list) else []


def article_language(record: dict[str, Any]) -> str | None:
    langs = [t.get("_") for t in _tag(record.get("article") or {}, "v40") if t.get("_")]
    return str(langs[0]).lower()[:2] if langs else None


def abstracts_by_language(record: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in _tag(record.get("article") or {}, "v83"):
        lang, text = str(t.get("l") or "").lower()[:2], str(t.get("a") or "").strip()
        if lang and text and lang not in out:
            out[lang] = text
    return out


def publication_date(record: dict[str, Any]) -> str | None:
    """`v65` is YYYYMMDD with 00 for unknown parts; fall back to the year."""
    raw = next((t.get("_") for t in _tag(record.get("article") or {}, "v65")), None)
    if raw and len(raw) == 8 and raw.isdigit():
        y, m, d = raw[:4], raw[4:6], raw[6:]
        return y if m == "00" else (f"{y}-{m}" if d == "00" else f"{y}-{m}-{d}")
    year = record.get("publication_year")
    return str(year) if year else None


def license_of(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(value, field): the record's `license` as ArticleMeta gives it, else the first
    link of the article's own `v540` licence text (HTML with `<a rel="license" href>`)."""
    value = record.get("license")
    if isinstance(value, str) and value.strip():
        return value.strip(), "license"
    for t in _tag(record.get("article") or {}, "v540"):
        m = _LICENSE_HREF.search(str(t.get("t") or ""))
        if m:
            return m.group(1).strip(), "article.v540"
    return None, None


def title_in(record: dict[str, Any], lang: str) -> str | None:
    for t in _tag(record.get("article") or {}, "v12"):
        if str(t.get("l") or "").lower()[:2] == lang:
            return str(t.get("_") or "") or None
    return None


class ScieloSpider(PdfSpider):
    name = "scielo"

    def __init__(self, *args: Any, articlemeta_url: str = "", collections: Sequence[str] = (),
                 language: str = "es", from_date: str | None = None,
                 until_date: str | None = None, page_size: int = 1000,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.api = articlemeta_url.rstrip("/") + "/"
        self.collections = list(collections)
        self.language = language
        self.dates = {k: v for k, v in (("from", from_date), ("until", until_date)) if v}
        self.page_size = int(page_size)

    def identifiers_url(self, collection: str, offset: int) -> str:
        q = {"collection": collection, **self.dates, "limit": self.page_size, "offset": offset}
        return f"{self.api}article/identifiers/?{urlencode(q)}"

    async def start(self) -> Any:
        for col in self.collections:
            yield scrapy.Request(self.identifiers_url(col, 0), callback=self.parse,
                                 cb_kwargs={"collection": col, "offset": 0})

    def parse(self, response: Any, collection: str = "scl",
              offset: int = 0) -> Iterator[Any]:
        """An identifiers page: each unseen PID's record, then the next page.

        @local_url /api/v1/article/identifiers/?collection=scl&offset=0
        @returns requests 2 2
        """
        if not self.api.startswith("http"):  # `scrapy check` builds the spider without args
            self.api = response.url.split("article/identifiers/")[0]
        try:
            page = json.loads(response.text)
        except (ValueError, RecursionError):
            self.logger.error("%s: identifiers page is not usable JSON; %s stops here",
                              response.url, collection)
            return
        objects = (page.get("objects") if isinstance(page, dict) else None) or []
        for obj in objects:
            col, pid = obj.get("collection") or collection, obj.get("code")
            processed = obj.get("processing_date")
            processed = processed if isinstance(processed, str) and processed else None
            if processed:  # a PID skipped as recorded counts too: it is recorded
                self.crawler.stats.max_value(HIGH_WATER_STAT, processed)
            if not pid or f"{col}-{pid}" in self.skip_ids:
                continue
            q = urlencode({"code": pid, "collection": col, "format": "json", "body": "false"})
            yield scrapy.Request(f"{self.api}article/?{q}", callback=self.parse_article,
                                 cb_kwargs={"collection": col, "pid": pid,
                                            "processed": processed})
        if objects:
            nxt = offset + self.page_size
            yield scrapy.Request(self.identifiers_url(collection, nxt), callback=self.parse,
                                 cb_kwargs={"collection": collection, "offset": nxt})

    def parse_article(self, response: Any, collection: str, pid: str,
                      processed: str | None = None) -> Iterator[Any]:
        doc_id = f"{collection}-{pid}"
        try:
            record = json.loads(response.text)
        except (ValueError, RecursionError):  # not JSON, or nested past the stack
            yield rejection_item(doc_id, self.source, FailureClass.BAD_METADATA,
                                 "ArticleMeta answered something that is not JSON")
            return
        if not isinstance(record, dict) or article_language(record) != self.language:
            return  # another language's article: not a candidate of this source
        cand = self.candidate(doc_id, record, response.url, processed)
        if self.language not in cand.abstracts:
            yield rejection_item(doc_id, self.source, FailureClass.NO_ABSTRACT,
                                 f"no {self.language} abstract in v83", cand)
        elif not cand.pdf_url:
            yield rejection_item(doc_id, self.source, FailureClass.UNAVAILABLE,
                                 f"no {self.language} PDF in fulltexts", cand)
        else:
            yield self.pdf_request(cand)

    def candidate(self, doc_id: str, record: dict[str, Any], record_url: str | None = None,
                  processed: str | None = None) -> Candidate:
        found = abstracts_by_language(record)
        abstracts = {k: found[k] for k in [self.language] if k in found}
        abstracts.update({k: v for k, v in found.items() if k != self.language})
        pdfs = (record.get("fulltexts") or {}).get("pdf") or {}
        licence, where = license_of(record)
        extra = {"collection": doc_id.split("-", 1)[0], "pid": record.get("code"),
                 "doi": record.get("doi")}
        if processed:
            extra["processing_date"] = processed
        return Candidate(
            id=doc_id, source=self.source, language=self.language, abstracts=abstracts,
            pdf_url=pdfs.get(self.language), publication_date=publication_date(record),
            title=title_in(record, self.language),
            extra={**extra, "license_field": where} if where else extra,
            license=licence, record_url=record_url, retrieved_at=retrieved_now(),
            languages=(self.language,),
        )
