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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any

from tqdm.contrib.logging import logging_redirect_tqdm

from ..records import Candidate, Rejection
from ..sources import FetchContext, get_fetcher, record_fetch_item
from ..state import OK, RunState
from .codec import encode, summarize
from .layout import RunLayout
from .process import Outcome, process_candidate
from .progress import Progress

log = logging.getLogger("loralay.run")


def in_shard(doc_id: str, shard: int, num_shards: int) -> bool:
    """Stable across runs and machines (not Python's salted hash)."""
    if num_shards == 1:
        return True
    digest = hashlib.sha1(doc_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % num_shards == shard


def fetch_phase(source: str, cfg: dict[str, Any], layout: RunLayout,
                limit: int | None) -> dict[str, int]:
    """Harvest candidates (and their PDFs) into the fetch state; resumable by the fetcher."""
    fetch = get_fetcher(source)
    counts = {"ok": 0, "failed": 0}
    with RunState(layout.fetch_db) as state:
        ctx = FetchContext(source, cfg, state, layout.out, limit)
        progress = Progress(f"fetch {source}", None, cfg.get("log_every_s", 30))
        with logging_redirect_tqdm():
            for item in fetch(ctx):
                record_fetch_item(state, item)
                if isinstance(item, Rejection):
                    counts["failed"] += 1
                    log.warning("%s: %s: %s", item.id, item.cls, item.message)
                    progress.update(item.cls)
                else:
                    counts["ok"] += 1
                    progress.update("ok")
        progress.close()
    return counts


def pending_candidates(fetch_state: RunState, shard_state: RunState, shard: int,
                       num_shards: int) -> Iterator[Candidate]:
    for c in fetch_state.candidates():
        if (in_shard(c.id, shard, num_shards) and fetch_state.status(c.id, "fetch") == OK
                and shard_state.status(c.id, "process") is None):
            yield c


def record_outcome(state: RunState, outcome: Outcome, pdf_path: str | None) -> str:
    """Every stage's result and the document in one transaction; returns the outcome label."""
    with state.transaction():
        for stage, fail, duration in outcome.stages:
            state.record(outcome.doc_id, stage, fail, duration)
        if outcome.processed is not None:
            p = outcome.processed
            state.put_document(p.candidate.id, summarize(p), encode(p))
            state.record(outcome.doc_id, "process")
            return "ok"
        stage, fail = outcome.failure or ("process", None)
        cls = fail.cls.value if fail else "internal_error"
        message = f"{stage}: {fail.message}" if fail else "no result"
        state.record_failure_raw(outcome.doc_id, "process", cls, message)
    log.warning("%s (%s): %s: %s", outcome.doc_id, pdf_path or "no file", cls, message)
    return cls


def process_phase(cfg: dict[str, Any], layout: RunLayout, workers: int = 1, shard: int = 0,
                  num_shards: int = 1) -> dict[str, int]:
    with RunState(layout.fetch_db) as fstate, \
            RunState(layout.shard_db(shard, num_shards)) as sstate:
        todo = sum(1 for _ in pending_candidates(fstate, sstate, shard, num_shards))
        progress = Progress("process", todo, cfg.get("log_every_s", 30))
        with logging_redirect_tqdm():
            work = pending_candidates(fstate, sstate, shard, num_shards)
            for c, outcome in _map(process_candidate, work, cfg, workers):
                progress.update(record_outcome(sstate, outcome, c.pdf_path))
        progress.close()
        return dict(progress.counts)


def _map(fn: Callable[[Candidate, dict[str, Any]], Outcome], items: Iterable[Candidate],
         cfg: dict[str, Any], workers: int) -> Iterator[tuple[Candidate, Outcome]]:
    """In-process for one worker; else a pool with a bounded window (memory stays flat)."""
    if workers <= 1:
        for c in items:
            yield c, fn(c, cfg)
        return
    window = 2 * workers
    with ProcessPoolExecutor(workers, mp_context=get_context("forkserver")) as pool:
        pending: dict[Future[Outcome], Candidate] = {}
        it = iter(items)
        for c in it:
            pending[pool.submit(fn, c, cfg)] = c
            if len(pending) >= window:
                yield from _drain(pending, FIRST_COMPLETED)
        while pending:
            yield from _drain(pending, FIRST_COMPLETED)


def _drain(pending: dict[Future[Outcome], Candidate], how: str
           ) -> Iterator[tuple[Candidate, Outcome]]:
    done, _ = wait(list(pending), return_when=how)
    for fut in done:
        yield pending.pop(fut), fut.result()
