"""KoreaScience: advanced search by year (publisher filter) → article pages.

Selectors anchor on text labels ("Abstract", "Published", "PDF") and on `/article/`
links, not on element positions, which moved between 2019 and 2025.

No licence field is known on KoreaScience's pages: `license` stays None (`unknown`);
the provenance is the article page and when it was fetched.

A refresh (`refresh=True`) asks LoRaLay's very query (no sort parameter of the advanced
search is documented) and stops paging a year at the first result page holding an id
recorded before (`known`, the skip list as the parent passed it): it relies on the search
listing a year's newest articles first, which could not be verified live.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlencode

import pycld2
import scrapy

from ....failures import FailureClass
from ....records import Candidate
from ... import retrieved_now
from .base import PdfSpider, rejection_item

_PAGER = re.compile(r"(\d[\d,]*)\s*/\s*(\d[\d,]*)\s*pages?", re.I)
_JAKO = re.compile(r"/article/([A-Z]{4}\d+)\.page")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def paragraph_language(text: str) -> str | None:
    """cld2 first; a Hangul share decides when cld2 is unsure (short or mixed paragraphs)."""
    try:
        reliable, _, details = pycld2.detect(text)
        code = details[0][1]
        if reliable and code not in ("un", "xxx"):
            return code[:2]
    except pycld2.error:
        pass
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    share = sum(1 for c in letters if _HANGUL.match(c)) / len(letters)
    return "ko" if share > 0.3 else "en"


def split_abstracts(paragraphs: list[str]) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for p in paragraphs:
        lang = paragraph_language(p)
        if lang:
            out.setdefault(lang, []).append(p)
    return {k: "\n".join(v) for k, v in out.items()}


class KoreaScienceSpider(PdfSpider):
    name = "koreascience"

    def __init__(self, *args: Any, search_url: str = "", years: Sequence[int] = (),
                 publisher_filter: str = "korean", page_size: int = 50,
                 refresh: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.search_url = search_url
        self.years = [int(y) for y in years]
        self.pubs = publisher_filter
        self.page_size = int(page_size)
        self.refresh = bool(refresh)
        # ids recorded before this crawl; `skip_ids` also grows with the ones it follows
        self.known = frozenset(self.skip_ids)

    def page_url(self, year: int, page: int) -> str:
        q = {"pubs": self.pubs, "pubYr": year, "pageSize": self.page_size, "pageNo": page}
        return f"{self.search_url}?{urlencode(q)}"

    async def start(self) -> Any:
        for year in self.years:
            yield scrapy.Request(self.page_url(year, 1), callback=self.parse,
                                 cb_kwargs={"year": year, "page": 1})

    def parse(self, response: Any, year: int = 2012, page: int = 1) -> Iterator[Any]:
        """A result page: every unseen article, then the next page while the pager says so
        (on a refresh, unless this page holds an article recorded before).

        @local_url /search/advanced.page?pubs=korean&pubYr=2015&pageNo=1
        @returns requests 3 3
        """
        self.search_url = self.search_url or response.url.split("?")[0]  # for `scrapy check`
        on_page: set[str] = set()
        for href in response.css("article.srched-box a::attr(href)").getall():
            m = _JAKO.search(href)
            if not m:
                continue
            on_page.add(m.group(1))
            if m.group(1) in self.skip_ids:
                continue
            self.skip_ids.add(m.group(1))  # one request per article even if linked twice
            yield response.follow(href, callback=self.parse_article,
                                  cb_kwargs={"doc_id": m.group(1)})
        if self.refresh and not on_page.isdisjoint(self.known):
            self.logger.info("refresh: %d page %d holds an article recorded before; the "
                             "later pages of %d are not asked for", year, page, year)
            return
        pager = _PAGER.search(" ".join(response.css("nav *::text").getall()))
        if pager:
            total = int(pager.group(2).replace(",", ""))
            if page < total:
                yield scrapy.Request(self.page_url(year, page + 1), callback=self.parse,
                                     cb_kwargs={"year": year, "page": page + 1})

    def parse_article(self, response: Any, doc_id: str) -> Iterator[Any]:
        cand = self.candidate(response, doc_id)
        if "ko" not in cand.abstracts:
            yield rejection_item(doc_id, self.source, FailureClass.NO_ABSTRACT,
                                 "no Korean paragraph in the Abstract block", cand)
        elif not cand.pdf_url:
            yield rejection_item(doc_id, self.source, FailureClass.UNAVAILABLE,
                                 "no PDF link on the article page", cand)
        else:
            yield self.pdf_request(cand)

    def candidate(self, response: Any, doc_id: str) -> Candidate:
        box = response.xpath('//*[h4[contains(normalize-space(.), "Abstract")]]')
        paragraphs = [" ".join(p.xpath(".//text()").getall()).strip()
                      for p in box.xpath("./p")]
        found = split_abstracts([p for p in paragraphs if p])
        abstracts = {k: found[k] for k in ["ko"] if k in found}
        abstracts.update({k: v for k, v in found.items() if k != "ko"})
        pdf = next((h for h in response.css("a::attr(href)").getall()
                    if h.lower().split("?")[0].endswith(".pdf")), None)
        published = response.xpath('//li[contains(normalize-space(.), "Published")]//text()')
        date = re.search(r"\d{4}(?:[.-]\d{1,2}){0,2}", " ".join(published.getall()))
        title = " ".join(response.css("h1 ::text").getall()).strip() or None
        return Candidate(
            id=doc_id, source=self.source, language="ko", abstracts=abstracts,
            pdf_url=response.urljoin(pdf) if pdf else None,
            publication_date=date.group(0).replace(".", "-") if date else None,
            title=title, extra={"article_url": response.url},
            record_url=response.url, retrieved_at=retrieved_now(), languages=("ko",),
        )
