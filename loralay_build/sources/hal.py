"""HAL (CCSD): French articles and conference papers from the Solr search API, with their PDFs.

Paging uses Solr's `cursorMark` sorted on the unique key (`docid asc`), so pages stay
consistent while HAL keeps indexing and a rerun started from the saved cursor also picks
up documents deposited since. The cursor is saved only once every record of a page has
been recorded, so a kill at any moment loses nothing (the driver records each item
before asking for the next). A search service that keeps failing or answers 403, or a
PDF host that is down, stops the harvest with `HarvestStopped` (an OSError, which the
driver prints as one line) and leaves the checkpoint in place. A PDF host that answers
403 costs only its records (`forbidden`): the cursor moves on, and a rerun asked to
(`--retry forbidden`) downloads them again from their stored candidates, as every rerun
does for `unreachable` ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..failures import FailureClass, StageError
from ..http import HostBlocked, PoliteClient
from ..records import Candidate, Rejection
from ..settings import HalSettings
from ..settings.sources import HAL_FIELDS
from . import FetchContext, HarvestStopped, download_candidate, retrieved_now
from .hal_records import to_candidate

CHECKPOINT = "hal.cursor"
FIRST_CURSOR = "*"
SORT = "docid asc"  # a cursor needs a sort ending on the unique key
DEFAULT_FIELDS = tuple(HAL_FIELDS)
# asked for on top of `fields`, so a user's own `fields` cannot lose a document's licence
# and record URL (`licence_s` is rare in old deposits)
PROVENANCE_FIELDS = ("uri_s", "licence_s")


def search_filters(s: HalSettings) -> list[str]:
    """Separate `fq`s, which Solr intersects (LoRaLay's single `a+b+c` fq was an OR)."""
    fq = [f"language_s:{s.language}", f"submitType_s:{s.submit_type}"]
    if s.doc_types:
        fq.append(f"docType_s:({' OR '.join(s.doc_types)})")
    return fq + list(s.extra_filters)


def search_params(s: HalSettings, cursor: str) -> list[tuple[str, str]]:
    fields = [*s.fields, *(f for f in PROVENANCE_FIELDS if f not in s.fields)]
    base = [("q", "*:*"), ("wt", "json"), ("sort", SORT), ("rows", str(s.rows)),
            ("cursorMark", cursor), ("fl", ",".join(fields))]
    return base + [("fq", f) for f in search_filters(s)]


def query_fingerprint(s: HalSettings) -> str:
    """What decides which records the cursor walks over; a changed query restarts."""
    key = json.dumps({"q": "*:*", "fq": search_filters(s), "sort": SORT})
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class SearchPage:
    cursor: str
    next_cursor: str | None
    docs: list[dict[str, Any]]
    num_found: int | None
    retrieved_at: str | None = None  # when the page was answered (UTC ISO 8601)

    @property
    def is_last(self) -> bool:
        return not self.docs or self.next_cursor is None or self.next_cursor == self.cursor


def parse_page(cursor: str, data: Any) -> SearchPage:
    """The parts of a search response the harvest needs; any other shape is an error."""
    response = data.get("response") if isinstance(data, dict) else None
    docs = response.get("docs") if isinstance(response, dict) else None
    if not isinstance(docs, list) or not isinstance(response, dict):
        raise StageError(FailureClass.BAD_METADATA, "search response without response.docs")
    nxt = data.get("nextCursorMark")
    found = response.get("numFound")
    return SearchPage(cursor, str(nxt) if nxt is not None else None,
                      [d for d in docs if isinstance(d, dict)],
                      int(found) if isinstance(found, int) else None)


class HalHarvest:
    """One run over the search API: pages, checkpoints, downloads, the limit."""

    def __init__(self, ctx: FetchContext, settings: HalSettings, client: PoliteClient,
                 today: dt.date | None = None) -> None:
        self.ctx = ctx
        self.settings = settings
        self.client = client
        self.today = today or dt.date.today()
        self.yielded = 0
        self.retried_now: set[str] = set()  # ids the retry pass of this run tried

    # --- checkpoint -----------------------------------------------------------
    def resume_cursor(self) -> str:
        saved = self.ctx.state.get_checkpoint(CHECKPOINT)
        if not isinstance(saved, dict) or not saved.get("cursor"):
            return FIRST_CURSOR
        if saved.get("query") != query_fingerprint(self.settings):
            self.ctx.log.warning("hal: the query changed since the saved cursor; starting over "
                                 "(records already fetched are skipped)")
            return FIRST_CURSOR
        self.ctx.log.info("hal: resuming from the saved cursor %s", saved["cursor"])
        return str(saved["cursor"])

    def save_cursor(self, cursor: str) -> None:
        self.ctx.state.set_checkpoint(CHECKPOINT, {"cursor": cursor,
                                                   "query": query_fingerprint(self.settings)})

    # --- search pages -----------------------------------------------------------
    def get_page(self, cursor: str) -> SearchPage:
        """One page, tried `page_attempts` times; a 403 or a lasting error stops the harvest."""
        attempts = max(1, self.settings.page_attempts)
        for attempt in range(attempts):
            try:
                params = search_params(self.settings, cursor)
                data = self.client.get_json(self.settings.api_url, params)
                return replace(parse_page(cursor, data), retrieved_at=retrieved_now())
            except HostBlocked as e:
                raise HarvestStopped(f"search stopped: {e}") from e
            except StageError as e:
                self.ctx.log.warning("hal: page at cursor %s, attempt %d/%d: %s",
                                     cursor, attempt + 1, attempts, e)
                if attempt + 1 == attempts:
                    raise HarvestStopped(f"search stopped after {attempts} attempts at "
                                         f"cursor {cursor}: {e}") from e
                time.sleep(min(self.settings.backoff_factor * 2 ** attempt, 60.0))
        raise AssertionError("unreachable")

    def log_size(self, page: SearchPage) -> None:
        """numFound and what it means in time: one PDF per request interval dominates."""
        if page.num_found is None:
            return
        rate = max(self.client.settings.requests_per_second, 1e-9)
        pages = -(-page.num_found // max(self.settings.rows, 1))
        self.ctx.log.info("hal: %d records match (%d search pages); at %g PDF/s the downloads "
                          "take at least %.1f h", page.num_found, pages, rate,
                          page.num_found / rate / 3600)

    # --- records ----------------------------------------------------------------
    def process(self, doc: dict[str, Any], retrieved_at: str | None = None
                ) -> Candidate | Rejection | None:
        """The item to yield for one record, None when it was fetched by an earlier run."""
        item = to_candidate(doc, self.today, self.settings.max_future_years,
                            self.settings.language, retrieved_at, self.settings.api_url)
        if item.id in self.retried_now or self.ctx.already_fetched(item.id):
            return None
        if isinstance(item, Rejection):
            return item
        return self.download(item)

    def download(self, cand: Candidate) -> Candidate | Rejection:
        return download_candidate(self.ctx, self.client, cand, self.settings.pdf_attempts)

    def retry_recorded(self) -> Iterator[Candidate | Rejection]:
        """Records an earlier run gave up for a reason this run retries (`unreachable`,
        and `--retry` classes such as `forbidden`), downloaded again from their stored
        candidate: the cursor moved past them, so the page walk would not see them."""
        wanted = self.ctx.to_retry()
        if not wanted:
            return
        cands = [c for c in self.ctx.state.candidates() if c.id in wanted and c.pdf_url]
        self.ctx.log.info("hal: %d recorded failures to retry (%s)", len(cands),
                          ", ".join(sorted(self.ctx.retried_classes)))
        for cand in sorted(cands, key=lambda c: c.id):
            if self.limit_reached():
                return
            self.retried_now.add(cand.id)
            self.yielded += 1
            yield self.download(replace(cand, pdf_path=None))

    # --- the loop ---------------------------------------------------------------------
    def limit_reached(self) -> bool:
        return self.ctx.limit_reached(self.yielded)

    def run(self) -> Iterator[Candidate | Rejection]:
        yield from self.retry_recorded()
        cursor = self.resume_cursor()
        first = True
        while not self.limit_reached():
            page = self.get_page(cursor)
            if first:
                self.log_size(page)
                first = False
            yield from self.run_page(page)
            if self.limit_reached():
                return
            if page.is_last:
                self.ctx.log.info("hal: harvest complete (cursor %s)", cursor)
                return
            cursor = str(page.next_cursor)

    def run_page(self, page: SearchPage) -> Iterator[Candidate | Rejection]:
        """Every record of the page, then the next cursor saved: each record is recorded
        whatever became of it (a refusing PDF host included), so the cursor never stalls."""
        for doc in page.docs:
            if self.limit_reached():
                return  # the cursor stays on this page; a rerun skips what was recorded
            item = self.process(doc, page.retrieved_at)
            if item is None:
                continue
            self.yielded += 1
            yield item
        if page.next_cursor is not None:
            self.save_cursor(page.next_cursor)


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """The fetch contract of `loralay_build.sources` for HAL."""
    settings = ctx.settings
    assert isinstance(settings, HalSettings)
    client = PoliteClient(settings.http_fields())
    yield from HalHarvest(ctx, settings, client).run()
