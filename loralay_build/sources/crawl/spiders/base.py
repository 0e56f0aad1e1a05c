"""What both spiders share: the skip list, the PDF step and item shapes.

The PDF is fetched as an ordinary request of the spider (so it goes through robots.txt,
the delay, retries and Retry-After like everything else) and accepted with the same
rule as the HTTP client's downloads (`check_pdf_bytes`, then an atomic write).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import scrapy
from scrapy.exceptions import IgnoreRequest

from ....failures import FailureClass
from ....http import RETRY_STATUSES, check_pdf_bytes, write_atomic
from ....paths import pdf_path_for
from ....records import Candidate


def candidate_item(c: Candidate) -> dict[str, Any]:
    return {"kind": "candidate", "id": c.id, "source": c.source, "candidate": c.to_json()}


def rejection_item(doc_id: str, source: str, cls: FailureClass, message: str,
                   cand: Candidate | None = None) -> dict[str, Any]:
    return {"kind": "rejection", "id": doc_id, "source": source, "cls": cls.value,
            "message": message, "candidate": cand.to_json() if cand else None}


class PdfSpider(scrapy.Spider):
    """Subclasses build a Candidate and hand it to `pdf_request`."""

    def __init__(self, *args: Any, skip_ids: set[str] | None = None, source: str = "",
                 pdf_dir: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip_ids = set(skip_ids or ())
        self.source = source
        self.pdf_dir = Path(pdf_dir)

    def pdf_request(self, cand: Candidate) -> scrapy.Request:
        assert cand.pdf_url
        return scrapy.Request(cand.pdf_url, callback=self.parse_pdf, errback=self.pdf_failed,
                              cb_kwargs={"cand": cand}, priority=10)

    def parse_pdf(self, response: Any, cand: Candidate) -> Iterator[dict[str, Any]]:
        """Accept 2xx bodies that are PDFs under the cap; anything else is `unavailable`."""
        max_bytes = int(self.settings.getint("LORALAY_MAX_PDF_BYTES"))
        problem = check_pdf_bytes(response.body, max_bytes)
        if problem:
            yield rejection_item(cand.id, cand.source, FailureClass.UNAVAILABLE,
                                 f"{response.url}: {problem}", cand)
            return
        dest = pdf_path_for(self.pdf_dir, cand.id)
        write_atomic(dest, response.body)
        yield candidate_item(cand.with_pdf(str(dest)))

    def pdf_failed(self, failure: Any) -> Iterator[dict[str, Any]]:
        cand: Candidate = failure.request.cb_kwargs["cand"]
        yield rejection_item(cand.id, cand.source, failure_class(failure),
                             f"{failure.request.url}: {describe(failure)}", cand)


def failure_class(failure: Any) -> FailureClass:
    """What retries could not get through (the network, 429, 5xx) is `unreachable`, so a
    rerun tries it again; a refusal, a missing file or a body cut short is `unavailable`."""
    value = failure.value
    response = getattr(value, "response", None)
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
