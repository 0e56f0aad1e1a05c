"""Drives a build: fetch, then the per-document stages, then the corpus-wide finish.

State lives in SQLite files under DIR/state (see layout.py): one for the fetch, one
per shard for the per-document stages, one for the finish. Each document's outcome is
written in one transaction, so a run killed at any instant resumes with nothing lost
or duplicated. The per-document work is `process_candidate`, which knows nothing of
the executor: the same function runs in-process, in a local pool, or sharded.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import astuple
from functools import partial
from pathlib import Path

from tqdm.contrib.logging import logging_redirect_tqdm

from ..failures import Failure, FailureClass
from ..images.render import renderer_version
from ..images.store import ImageStore, images_db, inputs_key, staging_dir
from ..records import Candidate, Rejection
from ..settings import CommonSettings, DocumentSettings
from ..sources import FetchContext, get_fetcher, record_fetch_item
from ..state import OK, RunState
from .fingerprint import (
    InputPrint,
    PdfChecksums,
    Plan,
    candidate_print,
    changed_keys,
    reason_for,
    settings_print,
)
from .layout import RunLayout
from .pool import TaskLimits, map_bounded
from .preflight import ToolVersions
from .process import StageResults, process_candidate
from .progress import Progress

log = logging.getLogger("loralay.run")
# sources whose fetch lists every candidate on each run (a manifest, re-read whole)
RELISTING_SOURCES = frozenset({"local"})


def in_shard(doc_id: str, shard: int, num_shards: int) -> bool:
    """Stable across runs and machines (not Python's salted hash)."""
    if num_shards == 1:
        return True
    digest = hashlib.sha1(doc_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % num_shards == shard


def fetch_phase(settings: CommonSettings, layout: RunLayout, limit: int | None,
                retry: frozenset[str] = frozenset()) -> dict[str, int]:
    """Harvest candidates (and their PDFs) into the fetch state; resumable by the fetcher.

    A source that lists every candidate on each run (a manifest) also forgets the ones it no
    longer lists, so a rerun builds what a fresh run of the same inputs builds."""
    source = settings.source
    fetch = get_fetcher(source)
    counts = {"ok": 0, "failed": 0}
    seen: set[str] = set()
    with RunState(layout.fetch_db) as state:
        ctx = FetchContext(source, settings, state, layout.out, limit, retry=retry)
        progress = Progress(f"fetch {source}", None, settings.log_every_s)
        with logging_redirect_tqdm():
            for item in fetch(ctx):
                record_fetch_item(state, item)
                seen.add(item.id)
                _count_fetched(item, counts, progress)
        progress.close()
        if source in RELISTING_SOURCES:
            with state.transaction():
                dropped = state.forget_candidates_except(seen)
            if dropped:
                log.info("%d documents no longer in the manifest are left out", dropped)
    return counts


def _count_fetched(item: Candidate | Rejection, counts: dict[str, int], progress: Progress
                   ) -> None:
    if isinstance(item, Rejection):
        counts["failed"] += 1
        log.warning("%s: %s: %s", item.id, item.cls, item.message)
        progress.update(item.cls)
    else:
        counts["ok"] += 1
        progress.update("ok")


def plan_shard(fstate: RunState, sstate: RunState, shard: int, num_shards: int,
               settings: DocumentSettings, versions: ToolVersions, sums: PdfChecksums) -> Plan:
    """Every fetched document of the shard whose stored result is missing or stale."""
    tools = str(versions) + (f"; {renderer_version()}" if settings.images else "")
    plan = Plan(*settings_print(settings), tools)
    for c in fetch_state_candidates(fstate, shard, num_shards):
        plan.total += 1
        why = stale_reason(sstate, c.id, input_print(c, plan, sums), plan.settings_json)
        if why is not None:
            plan.todo.add(c.id)
            plan.reasons[why] += 1
    return plan


def input_print(c: Candidate, plan: Plan, sums: PdfChecksums) -> InputPrint:
    return InputPrint(candidate_print(c), sums.sha256(c.pdf_path), plan.settings_digest,
                      plan.tools)


def planned_work(fstate: RunState, plan: Plan, shard: int, num_shards: int,
                 sums: PdfChecksums, prints: dict[str, InputPrint]) -> Iterator[Candidate]:
    """The plan's documents read again from the fetch state as the workers take them, in
    fetch order; `prints` holds the inputs of those handed out and not yet recorded (a
    window's worth, not the corpus)."""
    for c in fetch_state_candidates(fstate, shard, num_shards):
        if c.id in plan.todo:
            prints[c.id] = input_print(c, plan, sums)
            yield c


def fetch_state_candidates(fstate: RunState, shard: int, num_shards: int
                           ) -> Iterator[Candidate]:
    fetched = fstate.ids_with("fetch", OK)
    for c in fstate.candidates():
        if c.id in fetched and in_shard(c.id, shard, num_shards):
            yield c


def stale_reason(sstate: RunState, doc_id: str, now: InputPrint, settings_json: str
                 ) -> str | None:
    """None when the stored result stands; else why the document is (re)done."""
    status = sstate.failure_class(doc_id, "process")
    if status is None:
        return "new"
    if status == FailureClass.INTERNAL_ERROR.value:
        return "retried after internal_error"
    stored = sstate.inputs(doc_id)
    if stored is None:
        return "without a record of their inputs"
    changes = now.changes(InputPrint(*stored))
    if not changes:
        return None
    keys = changed_keys(sstate.settings_body(stored[2]), settings_json) \
        if "settings" in changes else []
    return reason_for(changes, keys)


def record_outcome(state: RunState, outcome: StageResults, pdf_path: str | None,
                   inputs: InputPrint, images: ImageStore | None = None) -> str:
    """Every stage's result, the document and what produced it, in one transaction, in
    place of whatever an earlier run recorded for this document; returns the outcome label.
    Page images go first, tied to `inputs` (see images/store.py for why that order)."""
    if images is not None:
        if outcome.rendered is not None and outcome.passed:
            images.replace(outcome.rendered, inputs_key(astuple(inputs)))
        else:
            images.forget(outcome.doc_id)
    with state.transaction():
        state.forget(outcome.doc_id)
        state.put_inputs(outcome.doc_id, astuple(inputs))
        for stage, fail, duration in outcome.stages:
            state.record(outcome.doc_id, stage, fail, duration)
        stored = outcome.stored_form()
        if stored is not None:
            state.put_document(outcome.doc_id, *stored)
            state.record(outcome.doc_id, "process")
            return "ok"
        stage, fail = outcome.failure or ("process", None)
        cls = fail.cls.value if fail else "internal_error"
        message = f"{stage}: {fail.message}" if fail else "no result"
        state.record_failure_raw(outcome.doc_id, "process", cls, message)
    log.warning("%s (%s): %s: %s", outcome.doc_id, pdf_path or "no file", cls, message)
    return cls


def process_phase(settings: CommonSettings, layout: RunLayout, versions: ToolVersions,
                  workers: int = 1, shard: int = 0, num_shards: int = 1) -> dict[str, int]:
    doc_settings = settings.document()
    with RunState(layout.fetch_db) as fstate, \
            RunState(layout.shard_db(shard, num_shards)) as sstate:
        sums = PdfChecksums(layout.checksums_db)
        try:
            plan = plan_shard(fstate, sstate, shard, num_shards, doc_settings, versions, sums)
            log.info(plan.line())
            sstate.remember_settings(plan.settings_digest, plan.settings_json)
            counts = _process_plan(fstate, sstate, plan, sums, layout, doc_settings,
                                   (workers, shard, num_shards), settings.log_every_s)
        finally:
            sums.close()
        return counts


def _process_plan(fstate: RunState, sstate: RunState, plan: Plan, sums: PdfChecksums,
                  layout: RunLayout, doc_settings: DocumentSettings,
                  where: tuple[int, int, int], log_every_s: float) -> dict[str, int]:
    workers, shard, num_shards = where
    progress = Progress("process", len(plan.todo), log_every_s)
    staging = staging_dir(layout.state_dir, shard, num_shards)
    shutil.rmtree(staging, ignore_errors=True)  # what a killed run left
    db = images_db(layout.state_dir, shard, num_shards)
    prints: dict[str, InputPrint] = {}
    with logging_redirect_tqdm(), \
            (ImageStore(db) if doc_settings.images or db.exists() else nullcontext()) as im:
        work = planned_work(fstate, plan, shard, num_shards, sums, prints)
        for c, outcome in process_all(work, doc_settings, workers, staging):
            progress.update(record_outcome(sstate, outcome, c.pdf_path, prints.pop(c.id), im))
    shutil.rmtree(staging, ignore_errors=True)
    progress.close()
    return dict(progress.counts)


def process_all(items: Iterable[Candidate], settings: DocumentSettings, workers: int,
                staging: Path | None = None) -> Iterator[tuple[Candidate, StageResults]]:
    """Each document in a worker process bounded in time and memory (the whole per-document
    stage, parsing and matching included); an overrun is that document's failure only.
    `staging` is where workers leave rendered pages (`images: true`)."""
    limits = TaskLimits(settings.document_timeout_s, settings.worker_memory_mb)
    fn = partial(process_candidate, staging=str(staging) if staging else None, seal=True)
    for c, result in map_bounded(fn, items, settings, workers, limits):
        if isinstance(result, Failure):
            result = StageResults(c.id, [("process", result, 0.0)])
        yield c, result
