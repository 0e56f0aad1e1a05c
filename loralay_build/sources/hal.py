"""HAL (CCSD): French articles and conference papers from the Solr search API, with their PDFs.

The harvest is the kit's paged harvest (`kit/harvest.py`: checkpoint, retry rule,
skip-known, download); this module gives its pages and records. Paging uses Solr's
`cursorMark` sorted on the unique key (`docid asc`), so pages stay
consistent while HAL keeps indexing and a rerun started from the saved cursor also picks
up documents deposited since. The cursor is saved only once every record of a page has
been recorded, so a kill at any moment loses nothing (the driver records each item
before asking for the next). A search service that keeps failing or answers 403, or a
PDF host that is down, stops the harvest with `HarvestStopped` (an OSError, which the
driver prints as one line) and leaves the checkpoint in place. A PDF host that answers
403 costs only its records (`forbidden`): the cursor moves on, and a rerun asked to
(`--retry forbidden`) downloads them again from their stored candidates, as every rerun
does for `unreachable` ones.

A refresh (`build --refresh`) asks only for what was submitted since the last harvest:
the newest `submittedDate_tdate` seen is the high-water mark (`kit.harvest.HighWater`,
saved once the whole query is walked), and the refresh's query adds
`fq=submittedDate_tdate:[mark less the overlap TO *]`, a query of its own whose cursor
starts at `*`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from ..conf import HalSettings
from ..conf.sources import HAL_FIELDS
from ..failures import FailureClass, StageError
from ..http import PoliteClient
from ..records import Candidate, Rejection
from . import FetchContext, retrieved_now
from .hal_records import to_candidate
from .kit.harvest import Checkpoint, HighWater, Page, PagedHarvest, fingerprint

CHECKPOINT = "hal.cursor"
FIRST_CURSOR = "*"
SORT = "docid asc"  # a cursor needs a sort ending on the unique key
DEFAULT_FIELDS = tuple(HAL_FIELDS)
# asked for on top of `fields`, so a user's own `fields` cannot lose a document's licence
# and record URL (`licence_s` is rare in old deposits)
PROVENANCE_FIELDS = ("uri_s", "licence_s", "submittedDate_tdate")
HIGH_WATER = "hal.high_water"
SUBMITTED = "submittedDate_tdate"  # what a refresh asks from (HAL's submission date)


def search_filters(s: HalSettings, since: str | None = None) -> list[str]:
    """Separate `fq`s, which Solr intersects (LoRaLay's single `a+b+c` fq was an OR);
    `since`: a refresh's first day of submission (YYYY-MM-DD)."""
    fq = [f"language_s:{s.language}", f"submitType_s:{s.submit_type}"]
    if s.doc_types:
        fq.append(f"docType_s:({' OR '.join(s.doc_types)})")
    if since is not None:
        fq.append(f"{SUBMITTED}:[{since}T00:00:00Z TO *]")
    return fq + list(s.extra_filters)


def search_params(s: HalSettings, cursor: str, since: str | None = None
                  ) -> list[tuple[str, str]]:
    fields = [*s.fields, *(f for f in PROVENANCE_FIELDS if f not in s.fields)]
    base = [("q", "*:*"), ("wt", "json"), ("sort", SORT), ("rows", str(s.rows)),
            ("cursorMark", cursor), ("fl", ",".join(fields))]
    return base + [("fq", f) for f in search_filters(s, since)]


def query_fingerprint(s: HalSettings, since: str | None = None) -> str:
    """What decides which records the cursor walks over; a changed query restarts."""
    return fingerprint({"q": "*:*", "fq": search_filters(s, since), "sort": SORT})


SearchPage = Page[dict[str, Any]]


def parse_page(cursor: str, data: Any) -> SearchPage:
    """The parts of a search response the harvest needs; any other shape is an error."""
    response = data.get("response") if isinstance(data, dict) else None
    docs = response.get("docs") if isinstance(response, dict) else None
    if not isinstance(docs, list) or not isinstance(response, dict):
        raise StageError(FailureClass.BAD_METADATA, "search response without response.docs")
    nxt = data.get("nextCursorMark")
    found = response.get("numFound")
    return Page(cursor, [d for d in docs if isinstance(d, dict)],
                str(nxt) if nxt is not None else None,
                total=int(found) if isinstance(found, int) else None)


class HalHarvest(PagedHarvest[dict[str, Any]]):
    """One run over the search API: its pages and records in the kit's paged harvest."""

    def __init__(self, ctx: FetchContext, settings: HalSettings, client: PoliteClient,
                 today: dt.date | None = None) -> None:
        super().__init__(ctx)
        self.settings = settings
        self.client = client
        self.today = today or dt.date.today()
        self.attempts = settings.attempts
        self.backoff_factor = settings.backoff_factor
        self.pdf_attempts = settings.pdf_attempts
        self.high_water = HighWater(ctx, HIGH_WATER)
        self.since = self.high_water.start(None)
        self.checkpoint = Checkpoint(ctx, CHECKPOINT, query_fingerprint(settings, self.since),
                                     FIRST_CURSOR)

    def fetch_page(self, position: str) -> SearchPage:
        data = self.client.get_json(self.settings.api_url,
                                    search_params(self.settings, position, self.since))
        page = parse_page(position, data)
        page.retrieved_at = retrieved_now()
        return page

    def first_page(self, page: SearchPage) -> None:
        """numFound and what it means in time: one PDF per request interval dominates."""
        if page.total is None:
            return
        rate = max(self.client.settings.requests_per_second, 1e-9)
        pages = -(-page.total // max(self.settings.rows, 1))
        self.ctx.log.info("hal: %d records match (%d search pages); at %g PDF/s the downloads "
                          "take at least %.1f h", page.total, pages, rate,
                          page.total / rate / 3600)

    def process(self, record: dict[str, Any], page: SearchPage) -> Candidate | Rejection | None:
        submitted = record.get(SUBMITTED)
        self.high_water.seen(submitted if isinstance(submitted, str) else None)
        return super().process(record, page)

    def run_page(self, page: SearchPage) -> Iterator[Candidate | Rejection]:
        yield from super().run_page(page)
        if page.is_last and not self.limit_reached():
            # the whole query walked: the cursor runs in docid order, not by date, so a
            # mark saved midway could pass records of pages not yet walked
            self.high_water.save()

    def to_item(self, record: dict[str, Any], page: SearchPage) -> Candidate | Rejection:
        return to_candidate(record, self.today, self.settings.max_future_years,
                            self.settings.language, page.retrieved_at, self.settings.api_url)


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """The fetch contract of `loralay_build.sources` for HAL."""
    settings = ctx.settings
    assert isinstance(settings, HalSettings)
    client = PoliteClient(settings.http_fields())
    yield from HalHarvest(ctx, settings, client).run()
