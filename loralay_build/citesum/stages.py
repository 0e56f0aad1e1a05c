"""One stage of the CiteSum build (pass 1, pass 2, scoring): its shard tasks on the project's
bounded worker pool (`machinery/pool.py`), each outcome an entry of the run's ledger.

Why the bounded pool: a shard task that runs past `shard_timeout_s`, past `worker_memory_mb`,
or crashes its worker becomes that shard's recorded failure (timeout, memory,
internal_error: one line naming the shard and the reason), the other shards go on, and the
report lists it. Which shard is done again is the ledger's rule, the one the PDF pipeline's
documents follow (`machinery/ledger.py`): a shard whose input file or stage settings changed, an
`internal_error`, a failure by a limit that has since been raised, or a class the user names
with `--retry CLASS`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..failures import Failure, FailureClass, RetryRule
from ..machinery.ledger import Entry, Fingerprint, Ledger, digest, stale_reason
from ..machinery.pool import TaskLimits, map_bounded
from ..store.citesum import CiteSumState

log = logging.getLogger("loralay.citesum")


@dataclass(frozen=True, slots=True)
class StageRun:
    """How one run executes stages: workers, limits, classes the user asked to retry."""

    workers: int
    limits: TaskLimits
    retry: frozenset[str] = frozenset()

    def limit_values(self) -> dict[str, float]:
        """The limits under their settings' names (what a ledger entry records)."""
        return {"shard_timeout_s": self.limits.timeout_s,
                "worker_memory_mb": self.limits.memory_mb}

    def rule(self) -> RetryRule:
        return RetryRule(self.retry, self.limit_values())


def stamp(path: str | Path) -> list[int]:
    """What tells a changed input file (re-downloaded, fixed) from the one a result came from."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns]


def task_fingerprint(source: str | Path, settings: str) -> Fingerprint:
    return Fingerprint.of(input=digest(stamp(source)), settings=settings)


def _reason(failure: Failure, run: StageRun) -> str:
    if failure.cls is FailureClass.TIMEOUT:
        return f"ran over shard_timeout_s ({run.limits.timeout_s:g} s)"
    if failure.cls is FailureClass.MEMORY:
        how = "killed (SIGKILL), most likely" if "SIGKILL" in failure.message else "ran"
        return f"{how} over worker_memory_mb ({run.limits.memory_mb} MB)"
    return failure.message


def record(state: CiteSumState, ledger: Ledger, key: str, result: dict[str, Any] | Failure,
           run: StageRun, fingerprint: Fingerprint) -> None:
    """A shard's outcome, its bad lines, its funnel and its ledger entry in one transaction."""
    stage = ledger.kind
    with state.transaction():
        if isinstance(result, Failure):
            line = f"{key}: {_reason(result, run)}"
            log.warning("%s: %s: %s", stage, result.cls.value, line)
            ledger.put(Entry(key, fingerprint, result.cls.value, stage, line,
                             run.limit_values()))
            return
        state.set_task_tally(stage, key, result)  # its funnel and bad-record tally
        ledger.put(Entry(key, fingerprint, limits=run.limit_values()))


def run_stage(state: CiteSumState, stage: str, tasks: dict[str, tuple], fn: Callable,
              config: Any, run: StageRun, settings: str,
              prepare: Callable[[Any], Any] | None = None) -> None:
    """`fn(task, config)` for every task whose ledger entry is not current; `tasks` maps
    shard key -> task, which ends with (input file, output file); `settings` is the digest
    of everything else the stage's result depends on."""
    ledger = Ledger(state, stage)
    rule = run.rule()
    prints = {k: task_fingerprint(t[-2], settings) for k, t in tasks.items()}
    todo = {t: k for k, t in tasks.items()
            if stale_reason(ledger.get(k), prints[k], rule) is not None}
    log.info("%s: %d of %d shards done; %d to do", stage, len(tasks) - len(todo), len(tasks),
             len(todo))
    for task, result in map_bounded(fn, list(todo), config, run.workers, run.limits, prepare):
        key = todo[task]
        record(state, ledger, key, result, run, prints[key])


def ok_keys(state: CiteSumState, stage: str, keys: list[str]) -> list[str]:
    """The keys whose task succeeded (their output file is in place)."""
    done = {e.key for e in Ledger(state, stage).entries() if e.ok}
    return [k for k in keys if k in done]


def failed_shards(state: CiteSumState, stages: list[str]) -> list[dict[str, Any]]:
    """Every shard task whose ledger entry is a failure, stage by stage."""
    return [{"id": e.key, "stage": stage, "class": e.failure, "message": e.message}
            for stage in stages for e in Ledger(state, stage).entries() if not e.ok]
