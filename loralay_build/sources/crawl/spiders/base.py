"""What both spiders share: the skip list, the PDF step and item shapes.

The PDF is fetched as an ordinary request of the spider (so it goes through robots.txt,
the delay, retries and Retry-After like everything else) and accepted with the same
rule as the HTTP client's downloads (`check_pdf_bytes`, then an atomic write).

A PDF host that answers 403 gets no further PDF request this run, as with the HTTP
client: its papers are recorded `forbidden` (a rerun retries them only when asked,
`--retry forbidden`) and the crawl goes on with every other host. Requests already
for that host wait in `ForbiddenHostMiddleware` and are dropped, never sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredLock

from ....atomic import write_atomic
from ....failures import FailureClass
from ....http import RETRY_STATUSES, check_pdf_bytes, forbidden_message
from ....licenses import stated_exclusion
from ....paths import pdf_path_for
from ....records import Candidate


def candidate_item(c: Candidate) -> dict[str, Any]:
    return {"kind": "candidate", "id": c.id, "source": c.source, "candidate": c.to_json()}


def rejection_item(doc_id: str, source: str, cls: FailureClass, message: str,
                   cand: Candidate | None = None) -> dict[str, Any]:
    return {"kind": "rejection", "id": doc_id, "source": source, "cls": cls.value,
            "message": message, "candidate": cand.to_json() if cand else None}


PDF_META = "loralay_pdf"  # request meta flag: a PDF download (the API pages are not)
_MIDDLEWARE = "loralay_build.sources.crawl.spiders.base.ForbiddenHostMiddleware"


class HostForbidden(IgnoreRequest):
    """A PDF request dropped unsent: its host answered 403 earlier this run."""


class ForbiddenHostMiddleware:
    """One PDF request in flight per host, and none to a host that answered 403.

    Scrapy hands several requests to its downloader before the first answer comes back,
    so a check when a request is queued would let a few more reach a refusing host:
    each PDF request waits here for the previous one to the same host to be answered.
    Placed after every middleware that re-issues requests (retries, redirects), it sees
    each answer first and lets the lock go before a retry or redirect asks for it again."""

    HELD = "loralay_pdf_lock"

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.locks: dict[str, DeferredLock] = {}
        self.refused: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> ForbiddenHostMiddleware:
        return cls(crawler)

    async def process_request(self, request: Any, spider: Any = None) -> None:
        if not request.meta.get(PDF_META):
            return
        host = urlsplit(request.url).netloc
        lock = self.locks.setdefault(host, DeferredLock())
        await maybe_deferred_to_future(lock.acquire())
        spider = spider or self.crawler.spider
        if host in self.refused or host in getattr(spider, "forbidden_hosts", ()):
            lock.release()
            raise HostForbidden(forbidden_message(host))
        request.meta[self.HELD] = host

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        if response.status == 403 and request.meta.get(self.HELD):
            self.refused.add(request.meta[self.HELD])
        self._release(request)
        return response

    def process_exception(self, request: Any, exception: Any, spider: Any = None) -> None:
        self._release(request)

    def _release(self, request: Any) -> None:
        host = request.meta.pop(self.HELD, None)
        if host is not None:
            self.locks[host].release()


class PdfSpider(scrapy.Spider):
    """Subclasses build a Candidate and hand it to `pdf_request`."""

    def __init__(self, *args: Any, skip_ids: set[str] | None = None, source: str = "",
                 pdf_dir: str = "", licenses: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip_ids = set(skip_ids or ())
        self.source = source
        self.pdf_dir = Path(pdf_dir)
        self.licenses = licenses  # the `licenses:` allow-list, applied before a download
        self.forbidden_hosts: set[str] = set()  # PDF hosts that answered 403 this run

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """Adds `ForbiddenHostMiddleware` to the configured middlewares, keeping them."""
        super().update_settings(settings)
        middlewares = dict(settings.getdict("DOWNLOADER_MIDDLEWARES"))
        middlewares.setdefault(_MIDDLEWARE, 950)  # answers reach it before retry, redirect
        settings.set("DOWNLOADER_MIDDLEWARES", middlewares, priority="spider")

    def pdf_request(self, cand: Candidate) -> scrapy.Request | dict[str, Any]:
        """The PDF's request, or at once a `license_excluded` item when `licenses:` leaves
        its licence out, or a `forbidden` one when its host refused us."""
        assert cand.pdf_url
        excluded = stated_exclusion(cand.license, self.licenses)
        if excluded is not None:
            return rejection_item(cand.id, cand.source, FailureClass.LICENSE_EXCLUDED,
                                  excluded, cand)
        host = urlsplit(cand.pdf_url).netloc
        if host in self.forbidden_hosts:
            return rejection_item(cand.id, cand.source, FailureClass.FORBIDDEN,
                                  forbidden_message(host), cand)
        return scrapy.Request(cand.pdf_url, callback=self.parse_pdf, errback=self.pdf_failed,
                              cb_kwargs={"cand": cand}, priority=10, meta={PDF_META: True})

    def parse_pdf(self, response: Any, cand: Candidate) -> Iterator[dict[str, Any]]:
        """Accept 2xx bodies that are PDFs under the cap; anything else is `unavailable`."""
        max_bytes = int(self.settings.getint("LORALAY_MAX_PDF_BYTES"))
        problem = check_pdf_bytes(response.body, max_bytes)
        if problem:
            yield rejection_item(cand.id, cand.source, FailureClass.UNAVAILABLE,
                                 f"{response.url}: {problem}", cand)
            return
        dest = pdf_path_for(self.pdf_dir, cand.id)
        got = write_atomic(dest, response.body)
        yield candidate_item(replace(cand, pdf_path=str(dest), pdf_sha256=got.sha256))

    def pdf_failed(self, failure: Any) -> Iterator[dict[str, Any]]:
        cand: Candidate = failure.request.cb_kwargs["cand"]
        cls = failure_class(failure)
        if cls is FailureClass.FORBIDDEN:
            host = urlsplit(failure.request.url).netloc
            if host not in self.forbidden_hosts:
                self.logger.warning("%s; its papers are recorded forbidden",
                                    forbidden_message(host))
            self.forbidden_hosts.add(host)
            yield rejection_item(cand.id, cand.source, cls, forbidden_message(host), cand)
            return
        yield rejection_item(cand.id, cand.source, cls,
                             f"{failure.request.url}: {describe(failure)}", cand)


def failure_class(failure: Any) -> FailureClass:
    """What retries could not get through (the network, 429, 5xx) is `unreachable`, so a
    rerun tries it again; a 403 is `forbidden` (retried when asked); a missing file, a
    body cut short or robots.txt's refusal is `unavailable`."""
    value = failure.value
    if isinstance(value, HostForbidden):
        return FailureClass.FORBIDDEN
    response = getattr(value, "response", None)
    if response is not None and response.status == 403:
        return FailureClass.FORBIDDEN
    if response is not None:
        return FailureClass.UNREACHABLE if response.status in RETRY_STATUSES \
            else FailureClass.UNAVAILABLE
    if isinstance(value, IgnoreRequest) or "DataLoss" in repr(value):
        return FailureClass.UNAVAILABLE
    return FailureClass.UNREACHABLE


def describe(failure: Any) -> str:
    """A failure in a few words: the HTTP status, robots.txt, or the network error's name."""
    value = failure.value
    response = getattr(value, "response", None)
    if response is not None:
        return f"HTTP {response.status}"
    if isinstance(value, IgnoreRequest):
        return f"not fetched ({value or 'forbidden by robots.txt'})"
    return f"{value.__class__.__name__} after retries"
