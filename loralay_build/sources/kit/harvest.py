"""One paged harvest, and the one retry rule of a request whose answer could not be used.

`attempts` is the rule every source applies on top of the HTTP client's own retries
(`http.py`: 429/5xx/network errors, Retry-After): a request whose answer came back but
could not be used (an error page behind a 200, malformed JSON or XML, a body cut short)
is tried `attempts` times in all, `backoff_factor * 2**n` seconds apart (at most 60 s).
Never retried: a blocked host (a 403, a host down: `HostBlocked`) and a definite answer
of the service (`StageError.final`, e.g. an OAI error code such as `idDoesNotExist`).

`PagedHarvest` walks a service's pages (a Solr cursor, an OAI resumption token): the
position after a page is checkpointed with a fingerprint of the query once every item of
the page has been yielded (the driver records each item before asking for the next, so a
kill at any moment loses nothing and duplicates nothing); a changed query starts again
from the first position, still skipping recorded ids; records an earlier run gave up for
a reason this run retries are downloaded again from their stored candidates first (the
position has moved past them).

`HighWater` is the one rule of "ask only for what is new": the newest date a harvest has
seen is kept in the run state, and a `build --refresh` asks the service from that date
less a small overlap (records changed on the mark's day, clocks that differ); what the
overlap brings again is skipped as already recorded. A harvest saving its mark page by page
can keep the start it asks from until it is done, so a refresh killed midway resumes its
own query.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from ...failures import StageError
from ...http import HostBlocked, PoliteClient
from ...records import Candidate, Rejection
from .. import FetchContext, HarvestStopped, download_candidate

T = TypeVar("T")
Item = Candidate | Rejection
MAX_BACKOFF_S = 60.0


def retryable(e: StageError) -> bool:
    """The one rule: every failure of a request but a blocked host and a final answer."""
    return not isinstance(e, HostBlocked) and not getattr(e, "final", False)


def with_attempts(fn: Callable[[], T], attempts: int, backoff_factor: float,
                  on_retry: Callable[[int, int, StageError], None] | None = None,
                  sleep: Callable[[float], None] = time.sleep) -> T:
    """`fn()`, tried `attempts` times in all while it fails `retryable`ly; the last failure
    (or one not to retry) is raised as it is. `on_retry(attempt, attempts, error)` is told
    of each failure that is tried again (attempt counts from 1)."""
    attempts = max(1, attempts)
    for attempt in range(attempts):
        try:
            return fn()
        except StageError as e:
            if attempt + 1 == attempts or not retryable(e):
                raise
            if on_retry is not None:
                on_retry(attempt + 1, attempts, e)
            sleep(min(backoff_factor * 2 ** attempt, MAX_BACKOFF_S))
    raise AssertionError("unreachable")


def fingerprint(query: Any) -> str:
    """A short stable digest of what decides which records a harvest walks over (keys in
    the order given: a checkpoint saved by an earlier version still matches)."""
    key = json.dumps(query)
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Checkpoint:
    """A harvest's position in the run state (`name`), stored as `{key: position, "query":
    fingerprint}`; a position saved under another fingerprint is not resumed."""

    ctx: FetchContext
    name: str
    query: str  # `fingerprint(...)` of the query
    first: str  # where a harvest starts
    key: str = "cursor"  # the position's name, in the state and in messages

    def resume(self) -> str:
        saved = self.ctx.state.get_checkpoint(self.name)
        if not isinstance(saved, dict) or not saved.get(self.key):
            return self.first
        if saved.get("query") != self.query:
            self.ctx.log.warning("%s: the query changed since the saved %s; starting over "
                                 "(records already fetched are skipped)", self.ctx.source,
                                 self.key)
            return self.first
        self.ctx.log.info("%s: resuming from the saved %s %s", self.ctx.source, self.key,
                          saved[self.key])
        return str(saved[self.key])

    def save(self, position: str) -> None:
        self.ctx.state.set_checkpoint(self.name, {self.key: position, "query": self.query})

    def clear(self) -> None:
        """Start the next run from `first` (a position the service no longer knows)."""
        self.ctx.state.set_checkpoint(self.name, None)


@dataclass
class HighWater:
    """The newest date (ISO 8601, a day or a time) the harvests of this folder have seen,
    kept as the checkpoint `name`. `seen` raises it as records come; `since` is the first
    day a refresh asks for; `start` the first day a harvest asks for.

    `save` only once the listing the dates came from is complete (the whole harvest, or a
    whole date window of an OAI listing: `kit.oaipmh.ListedMark`): services list records out
    of date order (by docid, by identifier), so a mark saved midway could pass records
    not yet listed, and a killed refresh run again would then ask from it and skip them.
    Until then the mark stays, so a rerun asks the same query and resumes its position."""

    ctx: FetchContext
    name: str
    mark: str | None = None

    def __post_init__(self) -> None:
        saved = self.ctx.state.get_checkpoint(self.name, None)
        if self.mark is None and isinstance(saved, str) and saved:
            self.mark = saved

    def seen(self, date: str | None) -> None:
        if date and (self.mark is None or date > self.mark):
            self.mark = date

    def save(self) -> None:
        if self.mark is not None:
            self.ctx.state.set_checkpoint(self.name, self.mark)

    def since(self, overlap_days: int | None = None) -> str | None:
        """On a refresh with a mark: its day less `overlap_days` (YYYY-MM-DD); else None
        (a first harvest, or a plain rerun: the configured query as it is)."""
        if not self.ctx.refresh or not self.mark:
            return None
        if overlap_days is None:
            overlap_days = self.ctx.settings.refresh_overlap_days
        try:
            day = dt.date.fromisoformat(self.mark[:10])
        except ValueError:
            self.ctx.log.warning("%s: the saved high-water mark %r is not a date; asking "
                                 "for everything", self.ctx.source, self.mark)
            return None
        return (day - dt.timedelta(days=max(0, overlap_days))).isoformat()

    def start(self, configured: str | None, overlap_days: int | None = None) -> str | None:
        """The first day to ask for: the configured one, or on a refresh the later of it
        and `since` (said once in the log)."""
        since = self.since(overlap_days)
        start = _later(since, configured)
        if start != configured:
            self.ctx.log.info("%s: refresh: asking only for records since %s (the last "
                              "harvest's high-water mark %s, less the overlap)",
                              self.ctx.source, since, self.mark)
        return start


def _later(a: str | None, b: str | None) -> str | None:
    """The later of two first days, None being the service's first record."""
    if a is None or b is None:
        return a or b
    return max(a, b)


@dataclass
class Page(Generic[T]):
    """One answer of a paged service: its records, and where the next page starts (None
    when this was the last)."""

    position: str
    records: list[T]
    next_position: str | None
    retrieved_at: str | None = None
    total: int | None = None  # records the whole query matches, when the service says

    @property
    def is_last(self) -> bool:
        return not self.records or self.next_position is None \
            or self.next_position == self.position


class PagedHarvest(Generic[T]):
    """A harvest over a paged service; a source gives its pages and its records' items.

    Subclasses set `checkpoint`, `client`, `attempts` and `pdf_attempts`, and define
    `fetch_page(position)` and `to_item(record, page)` (a Candidate still to download,
    or a Rejection; its id decides skip-known)."""

    checkpoint: Checkpoint
    client: PoliteClient
    attempts: int
    backoff_factor: float
    pdf_attempts: int

    def __init__(self, ctx: FetchContext) -> None:
        self.ctx = ctx
        self.yielded = 0
        self.retried_now: set[str] = set()  # ids the retry pass of this run tried

    # --- what a source defines ------------------------------------------------------
    def fetch_page(self, position: str) -> Page[T]:
        raise NotImplementedError

    def to_item(self, record: T, page: Page[T]) -> Item:
        raise NotImplementedError

    def page_what(self, position: str) -> str:
        """A page in messages."""
        return f"page at {self.checkpoint.key} {position}"

    def first_page(self, page: Page[T]) -> None:
        """Told of the first page of the run (to log the query's size)."""

    def page_recorded(self, page: Page[T]) -> None:
        """Told once every record of `page` has been yielded, so recorded (not when `--limit`
        stopped the page early): a `HighWater` mark of records listed out of date order is
        saved only when what it covers is all recorded."""

    # --- the rule and the loop ---------------------------------------------------------
    def limit_reached(self) -> bool:
        return self.ctx.limit_reached(self.yielded)

    def get_page(self, position: str) -> Page[T]:
        """One page under the retry rule; a blocked host or a lasting failure stops the
        harvest (`HarvestStopped`), the checkpoint left on this page."""
        what = self.page_what(position)

        def told(attempt: int, attempts: int, e: StageError) -> None:
            self.ctx.log.warning("%s: %s, attempt %d/%d: %s", self.ctx.source, what, attempt,
                                 attempts, e)

        try:
            return with_attempts(lambda: self.fetch_page(position), self.attempts,
                                 self.backoff_factor, told)
        except HostBlocked as e:
            raise HarvestStopped(f"search stopped: {e}") from e
        except StageError as e:
            if not retryable(e):
                raise HarvestStopped(f"search stopped at {self.checkpoint.key} {position}: "
                                     f"{e}") from e
            told(max(1, self.attempts), max(1, self.attempts), e)
            raise HarvestStopped(f"search stopped after {max(1, self.attempts)} attempts at "
                                 f"{self.checkpoint.key} {position}: {e}") from e

    def process(self, record: T, page: Page[T]) -> Item | None:
        """The item to yield for one record, None when it was fetched by an earlier run."""
        item = self.to_item(record, page)
        if item.id in self.retried_now or self.ctx.already_fetched(item.id):
            return None
        if isinstance(item, Rejection):
            return item
        return self.download(item)

    def download(self, cand: Candidate) -> Item:
        return download_candidate(self.ctx, self.client, cand, self.pdf_attempts)

    def can_retry(self, cand: Candidate) -> bool:
        """Whether a stored candidate can be downloaded again (it has a PDF link; a source
        that finds links another way says so)."""
        return bool(cand.pdf_url)

    def retry_recorded(self) -> Iterator[Item]:
        """Records an earlier run gave up for a reason this run retries (`unreachable`,
        `--retry` classes such as `forbidden`, a licence the list now allows), downloaded
        again from their stored candidate: the position moved past them."""
        wanted = self.ctx.to_retry()
        if not wanted:
            return
        cands = [c for c in self.ctx.state.candidates() if c.id in wanted
                 and self.can_retry(c)]
        self.ctx.log.info("%s: %d recorded failures to retry (%s)", self.ctx.source,
                          len(cands), ", ".join(sorted(self.ctx.retried_classes)))
        for cand in sorted(cands, key=lambda c: c.id):
            if self.limit_reached():
                return
            self.retried_now.add(cand.id)
            self.yielded += 1
            yield self.download(replace(cand, pdf_path=None))

    def run(self) -> Iterator[Item]:
        yield from self.retry_recorded()
        position = self.checkpoint.resume()
        first = True
        while not self.limit_reached():
            page = self.get_page(position)
            if first:
                self.first_page(page)
                first = False
            yield from self.run_page(page)
            if self.limit_reached():
                return
            if page.is_last:
                self.ctx.log.info("%s: harvest complete (%s %s)", self.ctx.source,
                                  self.checkpoint.key, position)
                return
            position = str(page.next_position)

    def run_page(self, page: Page[T]) -> Iterator[Item]:
        """Every record of the page, then the next position saved: each record is recorded
        whatever became of it (a refusing PDF host included), so the position never stalls."""
        for record in page.records:
            if self.limit_reached():
                return  # the position stays on this page; a rerun skips what was recorded
            item = self.process(record, page)
            if item is None:
                continue
            self.yielded += 1
            yield item
        self.page_recorded(page)
        if page.next_position is not None:
            self.checkpoint.save(page.next_position)
