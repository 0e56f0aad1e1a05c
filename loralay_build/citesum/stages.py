"""One stage of the CiteSum build (pass 1, pass 2, scoring): its shard tasks on the project's
bounded worker pool (`run/pool.py`), each outcome recorded in the run state.

Why the bounded pool: a shard task that runs past `shard_timeout_s`, past `worker_memory_mb`,
or crashes its worker becomes that shard's recorded failure (timeout, memory,
internal_error: one line naming the shard and the reason), the other shards go on, and the
report lists it. A rerun tries a failed shard again when it failed as internal_error (like a
document of the PDF pipeline), when the limit it ran over has changed since, or when the
user asks for its class (`--retry timeout`, `--retry memory`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..failures import Failure, FailureClass
from ..run.pool import TaskLimits, map_bounded
from ..state import RunState

log = logging.getLogger("loralay.citesum")
SHARD_CLASSES = frozenset({FailureClass.TIMEOUT.value, FailureClass.MEMORY.value})


@dataclass(frozen=True, slots=True)
class StageRun:
    """How one run executes stages: workers, limits, classes the user asked to retry."""

    workers: int
    limits: TaskLimits
    retry: frozenset[str] = frozenset()


def check_retry(classes: frozenset[str]) -> frozenset[str]:
    """A CiteSum shard fails only by its limits or a bug; other --retry classes are fetch's."""
    bad = sorted(set(classes) - SHARD_CLASSES)
    if bad:
        raise ConfigError(f"--retry {bad[0]}: a CiteSum shard can be retried only as "
                          f"{' or '.join(sorted(SHARD_CLASSES))} (internal_error always is)")
    return classes


def _limits_of(run: StageRun) -> list[float]:
    return [run.limits.timeout_s, run.limits.memory_mb]


def stamp(path: str | Path) -> list[int]:
    """What tells a changed input file (re-downloaded, fixed) from the one a result came from."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns]


def _settled(state: RunState, stage: str, key: str, source: str, run: StageRun) -> bool:
    """Recorded, from this very input, and not a failure this run tries again."""
    cls, status = state.failure_class(key, stage), state.status(key, stage)
    kept = state.get_checkpoint(f"{stage}:{key}", {})
    if status is None or kept.get("input") != stamp(source):
        return False
    if cls is None:
        return True
    if cls == FailureClass.INTERNAL_ERROR.value or cls in run.retry:
        return False
    return cls not in SHARD_CLASSES or kept.get("failed_under") == _limits_of(run)


def _reason(failure: Failure, run: StageRun) -> str:
    if failure.cls is FailureClass.TIMEOUT:
        return f"ran over shard_timeout_s ({run.limits.timeout_s:g} s)"
    if failure.cls is FailureClass.MEMORY:
        how = "killed (SIGKILL), most likely" if "SIGKILL" in failure.message else "ran"
        return f"{how} over worker_memory_mb ({run.limits.memory_mb} MB)"
    return failure.message


def record(state: RunState, stage: str, key: str, result: dict[str, Any] | Failure,
           run: StageRun, source: list[int]) -> None:
    """A shard's outcome, its bad lines, its funnel and its input's stamp in one transaction."""
    with state.transaction():
        if isinstance(result, Failure):
            line = f"{key}: {_reason(result, run)}"
            log.warning("%s: %s: %s", stage, result.cls.value, line)
            state.set_checkpoint(f"{stage}:{key}", {"failed_under": _limits_of(run),
                                                    "input": source})
            state.record(key, stage, Failure(result.cls, line))
            return
        for lineno, message in result.get("bad", []):
            state.record_failure_raw(f"{key}#{lineno}", stage,
                                     FailureClass.BAD_METADATA.value, message)
        state.set_checkpoint(f"{stage}:{key}", {**result, "input": source})
        state.record(key, stage)


def run_stage(state: RunState, stage: str, tasks: dict[str, tuple], fn: Callable, config: Any,
              run: StageRun) -> None:
    """`fn(task, config)` for every task not settled; `tasks` maps shard key -> task, which
    ends with (input file, output file): a changed input file redoes its task."""
    source = {k: t[-2] for k, t in tasks.items()}
    todo = {t: k for k, t in tasks.items() if not _settled(state, stage, k, source[k], run)}
    log.info("%s: %d of %d shards done; %d to do", stage, len(tasks) - len(todo), len(tasks),
             len(todo))
    stamps = {k: stamp(source[k]) for k in todo.values()}  # before the task reads it
    for task, result in map_bounded(fn, list(todo), config, run.workers, run.limits):
        record(state, stage, todo[task], result, run, stamps[todo[task]])


def ok_keys(state: RunState, stage: str, keys: list[str]) -> list[str]:
    """The keys whose task succeeded (their output file is in place)."""
    done = state.ids_with(stage, "ok")
    return [k for k in keys if k in done]

