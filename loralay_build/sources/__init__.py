"""Sources: each turns a service (or a manifest) into `Candidate`s with a local PDF.

The contract, shared by every source module:

    def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]

- yield a `Candidate` whose `pdf_path` points at a downloaded, accepted PDF, or a
  `Rejection` with a failure class when the paper cannot be used;
- skip ids already recorded (`ctx.already_fetched(id)`), so a rerun does not fetch twice;
- save paging positions with `ctx.state.set_checkpoint(...)` *after* yielding the
  items of a page: the driver records each yielded item before asking for the next,
  so a kill at any moment loses nothing and duplicates nothing;
- stop after `ctx.limit` yielded items when it is set;
- fill the candidate's licence and provenance from the source's own metadata: `license`
  as the metadata states it (never guessed), `record_url` (the metadata record),
  `retrieved_at` (`retrieved_now()` when the record was fetched) and `pdf_sha256` (set
  by `download_candidate`); docs/licenses.md lists the field each source reads.

Modules are imported lazily, so a missing optional dependency of one source never
breaks another.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import registry
from ..atomic import file_digest, utc_now_iso
from ..conf import CommonSettings
from ..failures import FailureClass, RetryRule, StageError
from ..http import HostDown, HostForbidden, PoliteClient
from ..licenses import stated_exclusion
from ..paths import pdf_path_for
from ..pdfmagic import is_pdf_file
from ..records import Candidate, Rejection
from ..runfolder import RunFolder
from ..store.fetch import FetchState


class SourceNotBuilt(RuntimeError):
    pass


class BadRunInput(ValueError):
    """The run cannot start (a missing manifest, a missing argument): unlike a harvest
    stopped by a service, a rerun of the same command would not help."""


class HarvestStopped(ConnectionError):
    """A service stopped this run (a host refused us, a search kept failing); what was
    fetched is kept and a rerun continues from the saved position.

    An OSError, so the driver reports it as one line and goes on to build what it has."""


class HarvestRefused(HarvestStopped):
    """The service refused the query itself (a format or set it does not have, an address
    that is no endpoint): a rerun of the same command is refused again, so the message
    says which setting to change, never to rerun."""


@dataclass
class FetchContext:
    source: str
    settings: CommonSettings  # the source's own typed settings (conf/sources.py)
    state: FetchState
    out_dir: Path
    limit: int | None = None
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("loralay.fetch"))
    # failure classes the user asked this run to try again (`--retry CLASS`), on top of
    # those every rerun retries (`unreachable`); a `forbidden` record waits for this
    retry: frozenset[str] = frozenset()
    # `build --refresh`: a source with a high-water mark asks only for what is new since it
    # (`kit.harvest.HighWater`); every other run harvests as configured
    refresh: bool = False

    @property
    def pdf_dir(self) -> Path:
        return RunFolder(self.out_dir).pdf_dir

    def limit_reached(self, yielded: int) -> bool:
        """The one `--limit` rule: a fetcher stops once it has yielded `limit` items."""
        return self.limit is not None and yielded >= self.limit

    @property
    def retried_classes(self) -> frozenset[str]:
        """Failure classes this run fetches again: the project's retry rule (`failures.py`)."""
        return RetryRule(frozenset(self.retry)).classes()

    def already_fetched(self, doc_id: str) -> bool:
        """Recorded by an earlier run, unless as a failure this run retries."""
        if doc_id in self.readmitted:
            return False
        return self.state.settled(doc_id, "fetch", self.retried_classes)

    def settled_ids(self) -> set[str]:
        """Every id `already_fetched` is true of, in one query (for skip lists)."""
        return self.state.ids_with("fetch") - self.to_retry()

    def to_retry(self) -> set[str]:
        """Ids recorded with a failure this run tries again (and those `readmitted`)."""
        return self.state.ids_with_class("fetch", self.retried_classes) | self.readmitted

    @functools.cached_property
    def readmitted(self) -> frozenset[str]:
        """Ids an earlier run left `license_excluded` whose licence this run's `licenses:`
        allows: their PDF was never fetched, so they are fetched now."""
        excluded = self.state.ids_with_class("fetch", {FailureClass.LICENSE_EXCLUDED.value})
        if not excluded:
            return frozenset()
        allow = self.settings.licenses
        return frozenset(c.id for c in self.state.candidates(keep=excluded.__contains__)
                         if stated_exclusion(c.license, allow) is None)

    def withdraw(self, doc_id: str) -> bool:
        """The source says it no longer offers `doc_id` (an OAI `deleted` record, a retracted
        deposit): it is forgotten as a manifest line removed is, so a refresh lists it as
        missing upstream and keeps its row. True when it had been recorded."""
        with self.state.transaction():
            return self.state.forget_candidates([doc_id]) > 0

    def license_excluded(self, cand: Candidate) -> Rejection | None:
        """The candidate's `license_excluded` when `licenses:` leaves its (known) licence
        out: the one rule (`licenses.exclusion`), applied before any download."""
        why = stated_exclusion(cand.license, self.settings.licenses)
        if why is None:
            return None
        return Rejection(cand.id, cand.source, FailureClass.LICENSE_EXCLUDED.value, why,
                         replace(cand, pdf_path=None, pdf_sha256=None))


FetchFn = Callable[[FetchContext], Iterator[Candidate | Rejection]]


def retrieved_now() -> str:
    """`Candidate.retrieved_at` of a record fetched now: UTC, ISO 8601, to the second."""
    return utc_now_iso()


def file_sha256(path: str | Path) -> str:
    return file_digest(path)


def get_fetcher(source: str) -> FetchFn:
    """The registry's fetcher of `source`, imported on first use."""
    try:
        name = registry.source(source).fetcher
    except registry.UnknownSource as e:
        raise SourceNotBuilt(str(e)) from None
    if name is None:
        raise SourceNotBuilt(f"source {source!r} has no fetcher: it reads files on disk")
    fetch: FetchFn = importlib.import_module(name).fetch
    return fetch


def record_fetch_item(state: FetchState, item: Candidate | Rejection) -> None:
    """What the driver does with each item a fetcher yields (tests use it too)."""
    with state.transaction():
        if isinstance(item, Candidate):
            state.put_candidate(item)
            state.record(item.id, "fetch")
        else:
            if item.candidate is not None:
                state.put_candidate(item.candidate)
            state.record_failure_raw(item.id, "fetch", item.cls, item.message)


def download_candidate(ctx: FetchContext, client: PoliteClient, cand: Candidate,
                       attempts: int) -> Candidate | Rejection:
    """The candidate with its PDF on disk, or a classed rejection; the PDF step of every
    source that downloads through `PoliteClient`.

    A PDF already at the destination comes from a run killed between the download and
    the record: it was written atomically and checked, so it is reused. A PDF host that
    answered 403 costs only its own papers (`forbidden`, said once per host), so the
    harvest goes on with the others; a host that is down stops it (`HarvestStopped`)
    instead of burning the rest of the list. A candidate whose licence `licenses:` leaves
    out is `license_excluded` first: its PDF is never fetched."""
    assert cand.pdf_url is not None
    excluded = ctx.license_excluded(cand)
    if excluded is not None:
        return excluded
    dest = pdf_path_for(ctx.pdf_dir, cand.id)
    if is_pdf_file(dest):
        try:
            sha = file_sha256(dest)
        except OSError:
            sha = None  # gone since: the extractor will say so
        return replace(cand, pdf_path=str(dest), pdf_sha256=sha,
                       extra={**cand.extra, "pdf_reused": True})
    try:
        got = client.download_pdf(cand.pdf_url, dest, attempts)
    except HostDown as e:
        raise HarvestStopped(f"{ctx.source}: {e}") from e
    except HostForbidden as e:
        return forbidden(ctx, cand, e)
    except StageError as e:
        return Rejection(cand.id, cand.source, e.failure.cls.value, e.failure.message, cand)
    return replace(cand, pdf_path=str(got.path), pdf_sha256=got.sha256,
                   extra={**cand.extra, "pdf_bytes": got.size})


def forbidden(ctx: FetchContext, cand: Candidate, e: HostForbidden) -> Rejection:
    """A paper whose PDF host refused us; one warning per host, the first time it refuses."""
    if e.refused_now:
        ctx.log.warning("%s: %s; its papers are recorded `forbidden` (rerun with --retry "
                        "forbidden to try them again)", ctx.source, e)
    return Rejection(cand.id, cand.source, e.failure.cls.value, e.failure.message, cand)
