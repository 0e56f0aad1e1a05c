"""Drives the PDF pipeline's shard work: the fetch, then each shard's documents.

State lives in SQLite files under DIR/state (see layout.py): one for the fetch, one per
shard for the per-document results, one for the finish. Each document's outcome is
written in one transaction with its ledger entry, so a run killed at any instant resumes
with nothing lost or duplicated. The per-document work is `steps.process_candidate`,
which knows nothing of the executor: the same function runs in one worker or many, in
one shard or several.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections import Counter
from collections.abc import Container, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm.contrib.logging import logging_redirect_tqdm

from .. import registry
from ..conf import CommonSettings, DocumentSettings
from ..failures import BadRecords, Failure, RetryRule
from ..images.render import renderer_version
from ..images.store import ImageStore
from ..machinery.ledger import DOCUMENT, Entry, Fingerprint, Ledger, changed_keys, stale_reason
from ..machinery.pool import TaskLimits, map_bounded
from ..machinery.progress import Progress
from ..machinery.request import BuildRequest
from ..records import Candidate, Rejection
from ..runfolder import RunFolder
from ..sources import FetchContext, get_fetcher, record_fetch_item
from ..store.fetch import OK, FetchState
from ..store.shard import ShardState
from .fingerprint import PdfChecksums, document_fingerprint, real_sha256, settings_print
from .payload import FORMAT
from .preflight import ToolVersions
from .refresh import read_base
from .steps import DocumentJob, StepResults, prepare_worker, process_candidate

log = logging.getLogger("loralay.run")


def in_shard(doc_id: str, shard: int, num_shards: int) -> bool:
    """Stable across runs and machines (not Python's salted hash)."""
    if num_shards == 1:
        return True
    digest = hashlib.sha1(doc_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % num_shards == shard


def fetch_phase(settings: CommonSettings, layout: RunFolder, limit: int | None,
                retry: frozenset[str] = frozenset(), refresh: bool = False
                ) -> dict[str, int]:
    """Harvest candidates (and their PDFs) into the fetch state; resumable by the fetcher.

    A source that lists every candidate on each run (a manifest) also forgets the ones it no
    longer lists, so a rerun builds what a fresh run of the same inputs builds. Every
    candidate's licence comes from its metadata, so one outside `licenses:` is
    `license_excluded` here, before its PDF is read (a network source asks the same rule
    before it downloads; a manifest's PDFs are already on disk), but for a refresh's
    documents already in the dataset, which stay as they are."""
    source = settings.source
    fetch = get_fetcher(source)
    counts = {"ok": 0, "failed": 0}
    seen: set[str] = set()
    spec = registry.source(source)
    relists = spec.relists
    with FetchState(layout.fetch_db) as state:
        # a source that lists everything (or reads its input files) again counts its bad
        # records again
        bad = BadRecords() if relists or spec.rereads_inputs else state.bad_records()
        ctx = FetchContext(source, settings, state, layout.out, limit, retry=retry,
                           refresh=refresh)
        progress = Progress(f"fetch {source}", None, settings.log_every_s)
        frozen = frozen_ids(refresh, layout)
        with logging_redirect_tqdm():
            for item in fetch(ctx):
                if isinstance(item, Rejection) and item.bad_record:
                    _count_bad_record(item, bad, counts, progress)
                    continue
                if isinstance(item, Candidate) and item.id not in frozen:
                    item = ctx.license_excluded(item) or item
                record_fetch_item(state, item)
                seen.add(item.id)
                _count_fetched(item, counts, progress)
        progress.close()
        with state.transaction():
            state.set_bad_records(bad)
        if bad.hidden > 0:
            log.warning("%s bad input records in all (%s); the report shows the first %d "
                        "of each class", f"{bad.total:,}", _classes(bad), bad.keep)
        if relists:
            with state.transaction():
                dropped = state.forget_candidates_except(seen)
            if dropped:
                log.info("%d documents no longer in the manifest are left out", dropped)
    return counts


def _classes(bad: BadRecords) -> str:
    return ", ".join(f"{c} {n:,}" for c, n in sorted(bad.counts.items()))


def _count_bad_record(item: Rejection, bad: BadRecords, counts: dict[str, int],
                      progress: Progress) -> None:
    """Counted by class; said on stderr as long as it is one of the report's examples."""
    bad.add(item.cls, item.message)
    counts["failed"] += 1
    if bad.shown(item.cls):
        log.warning("%s: %s: %s", item.id, item.cls, item.message)
    progress.update(item.cls)


def _count_fetched(item: Candidate | Rejection, counts: dict[str, int], progress: Progress
                   ) -> None:
    if isinstance(item, Rejection):
        counts["failed"] += 1
        log.warning("%s: %s: %s", item.id, item.cls, item.message)
        progress.update(item.cls)
    else:
        counts["ok"] += 1
        progress.update("ok")


@dataclass
class ShardPlan:
    """Which fetched documents of a shard are (re)done, and why, in one line."""

    settings_digest: str
    settings_json: str  # kept in the ledger, so a later rerun can name the keys that changed
    tools: str  # tool versions, part of every document's fingerprint
    rule: RetryRule
    total: int = 0
    # ids only: a Candidate (abstracts, provenance) held per document to do grew the
    # driver by ~2.8 KB a document, ~0.5 GB at arXiv-Lay's 200k (scripts/bench_scale.py)
    todo: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)

    def fingerprint(self, c: Candidate, sums: PdfChecksums) -> Fingerprint:
        return document_fingerprint(c, sums.sha256(c.pdf_path), self.settings_digest,
                                    self.tools)

    def line(self) -> str:
        todo = len(self.todo)
        done = self.total - todo
        reasons = self.reasons
        if reasons["new"] == self.total:
            return f"starting: {self.total:,} documents to do"
        if todo == 0:
            return f"resuming: all {self.total:,} documents done; nothing to redo"
        why = ", ".join(f"{n:,} {reason}" for reason, n in reasons.most_common())
        return f"resuming: {done:,} of {self.total:,} done; {todo:,} to do, of which {why}"


def tools_of(versions: ToolVersions, settings: DocumentSettings) -> str:
    """Every program and format a result depends on (pdfium only renders images)."""
    tools = f"{versions}; {FORMAT}"
    return tools + (f"; {renderer_version()}" if settings.images else "")


def plan_shard(fstate: FetchState, ledger: Ledger, shard: int, num_shards: int,
               job: DocumentJob, versions: ToolVersions, retry: frozenset[str],
               sums: PdfChecksums, frozen: Container[str] = ()) -> ShardPlan:
    """Every fetched document of the shard whose result is missing or no longer current;
    `frozen`: a refresh's documents already in the dataset, never done again (their rows
    stay as they are) once they have a result."""
    rule = RetryRule(retry, job.limits.model_dump())
    plan = ShardPlan(*settings_print(job.settings), tools_of(versions, job.settings), rule)

    # every document sharing an old settings digest names the same keys: asked once each
    named: dict[tuple[str | None, bool], list[str]] = {}

    def name_changes(part: str, old: str | None, new: str | None) -> list[str]:
        if part != "settings":
            return []
        key = (old, not new)  # `new` only matters as present or not
        if key not in named:
            named[key] = changed_keys(ledger.part_body(old),
                                      plan.settings_json if new else None)
        return named[key]

    for c in fetch_state_candidates(fstate, shard, num_shards):
        plan.total += 1
        if c.id in frozen and ledger.get(c.id) is not None:
            continue
        why = stale_reason(ledger.get(c.id), plan.fingerprint(c, sums), rule, name_changes)
        if why is not None:
            plan.todo.add(c.id)
            plan.reasons[why] += 1
    return plan


def plan_shard_of(req: BuildRequest, layout: RunFolder, versions: ToolVersions, shard: int,
                  num_shards: int) -> ShardPlan:
    """The plan shard K itself would make (what a submitter asks before submitting it)."""
    path = layout.shard_db(shard, num_shards)
    with FetchState(layout.fetch_db) as fstate, ShardState(path) as sstate:
        sums = PdfChecksums(layout.checksums_db)
        try:
            return plan_shard(fstate, Ledger(sstate, DOCUMENT), shard, num_shards,
                              document_job(req.settings), versions, req.retry, sums,
                              frozen_ids(req.refresh, layout))
        finally:
            sums.close()


def fetch_state_candidates(fstate: FetchState, shard: int, num_shards: int
                           ) -> Iterator[Candidate]:
    fetched = fstate.ids_with("fetch", OK)
    yield from fstate.candidates(
        keep=lambda doc_id: doc_id in fetched and in_shard(doc_id, shard, num_shards))


def planned_work(fstate: FetchState, plan: ShardPlan, shard: int, num_shards: int,
                 sums: PdfChecksums, prints: dict[str, Fingerprint]) -> Iterator[Candidate]:
    """The plan's documents read again from the fetch state as the workers take them, in
    fetch order; `prints` holds the fingerprints of those handed out and not yet recorded
    (a window's worth, not the corpus)."""
    for c in fetch_state_candidates(fstate, shard, num_shards):
        if c.id in plan.todo:
            prints[c.id] = fp = plan.fingerprint(c, sums)
            yield with_checksum(c, fp)


def with_checksum(c: Candidate, fingerprint: Fingerprint) -> Candidate:
    """The candidate as its steps see it: with the sha256 of the very file its words are
    read from (the fingerprint's `pdf` part, hashed once, cached by path, size and mtime),
    the one home of `pdf_sha256` from here on (summary, payload, column). A source's own
    hash of its download is the same file's; a file that could not be hashed ("missing")
    fails extraction anyway."""
    sha = fingerprint.part("pdf")
    if real_sha256(sha) and sha != c.pdf_sha256:
        return replace(c, pdf_sha256=sha)
    return c


def record_outcome(state: ShardState, ledger: Ledger, outcome: StepResults,
                   pdf_path: str | None, fingerprint: Fingerprint, limits: dict[str, float],
                   images: ImageStore | None = None) -> str:
    """The document's result and its ledger entry in one transaction, in place of whatever
    an earlier run recorded; returns the outcome label. Page images go first, tied to the
    fingerprint (see images/store.py for why that order)."""
    if images is not None:
        if outcome.rendered is not None and outcome.passed:
            images.replace(outcome.rendered, fingerprint.digest())
        else:
            images.forget(outcome.doc_id)
    durations = {stage: seconds for stage, _, seconds in outcome.stages}
    failed = outcome.failure
    with state.transaction():
        state.forget(outcome.doc_id)
        if outcome.stored is not None and failed is None:
            summary, payload = outcome.stored
            state.put_document(outcome.doc_id, summary, payload)
            ledger.put(Entry(outcome.doc_id, fingerprint, limits=limits, durations=durations))
            return "ok"
        stage, fail = failed or ("store", None)
        cls = fail.cls.value if fail else "internal_error"
        message = fail.message if fail else "no result"
        ledger.put(Entry(outcome.doc_id, fingerprint, cls, stage, message, limits, durations))
    log.warning("%s (%s): %s: %s: %s", outcome.doc_id, pdf_path or "no file", cls, stage,
                message)
    return cls


def frozen_ids(refresh: bool, layout: RunFolder) -> Container[str]:
    """A refresh's documents already in the dataset (none for any other build)."""
    if not refresh:
        return ()
    base = read_base(layout.finish_db)
    return base.prior.kept if base else ()


def document_job(settings: CommonSettings, staging: Path | None = None) -> DocumentJob:
    return DocumentJob(settings.document(), settings.limits(),
                       str(staging) if staging else None)


def process_phase(req: BuildRequest, layout: RunFolder, versions: ToolVersions,
                  shard: int = 0, num_shards: int = 1) -> dict[str, int]:
    staging = layout.images_staging(shard, num_shards)
    job = document_job(req.settings, staging)
    with FetchState(layout.fetch_db) as fstate, \
            ShardState(layout.shard_db(shard, num_shards)) as sstate:
        ledger = Ledger(sstate, DOCUMENT)
        sums = PdfChecksums(layout.checksums_db)
        try:
            plan = plan_shard(fstate, ledger, shard, num_shards, job, versions, req.retry,
                              sums, frozen_ids(req.refresh, layout))
            log.info(plan.line())
            ledger.remember_part(plan.settings_digest, plan.settings_json)
            counts = _process_plan(fstate, sstate, ledger, plan, sums, layout, job,
                                   (req.workers, shard, num_shards), req.settings.log_every_s)
        finally:
            sums.close()
        return counts


def _process_plan(fstate: FetchState, sstate: ShardState, ledger: Ledger, plan: ShardPlan,
                  sums: PdfChecksums, layout: RunFolder, job: DocumentJob,
                  where: tuple[int, int, int], log_every_s: float) -> dict[str, int]:
    workers, shard, num_shards = where
    progress = Progress("process", len(plan.todo), log_every_s)
    staging = layout.images_staging(shard, num_shards)
    shutil.rmtree(staging, ignore_errors=True)  # what a killed run left
    db = layout.images_db(shard, num_shards)
    prints: dict[str, Fingerprint] = {}
    limits = dict(plan.rule.limits)
    with logging_redirect_tqdm(), \
            (ImageStore(db) if job.settings.images or db.exists() else nullcontext()) as im:
        work = planned_work(fstate, plan, shard, num_shards, sums, prints)
        for c, outcome in process_all(work, job, workers):
            progress.update(record_outcome(sstate, ledger, outcome, c.pdf_path,
                                           prints.pop(c.id), limits, im))
    shutil.rmtree(staging, ignore_errors=True)
    progress.close()
    return dict(progress.counts)


def process_all(items: Iterable[Candidate], job: DocumentJob, workers: int
                ) -> Iterator[tuple[Candidate, StepResults]]:
    """Each document in a worker process bounded in time and memory (every step,
    parsing and matching included); an overrun is that document's failure only."""
    limits = TaskLimits(job.limits.document_timeout_s, job.limits.worker_memory_mb)
    for c, result in map_bounded(process_candidate, items, job, workers, limits,
                                 prepare_worker):
        if isinstance(result, Failure):
            result = StepResults(c.id, [("process", result, 0.0)])
        yield c, result

