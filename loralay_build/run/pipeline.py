"""What `loralay build` and `loralay fetch` do, phase by phase.

Everything that can be checked is checked before any work (settings, options, tools,
inputs, the run folder's lock and shard count); problems are raised as the typed errors of
`errors.py`, which the CLI turns into one line and exit status 2.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BuildStopped, ConfigError
from ..settings import CommonSettings
from ..sources import BadRunInput, SourceNotBuilt
from .driver import fetch_phase, process_phase
from .finish import Decisions, IncompleteRun, finish_run
from .layout import RunLayout
from .preflight import (
    RunLock,
    ToolVersions,
    check_inputs,
    check_retry,
    claim_shards,
    recorded_shards,
    tool_versions,
    wipe_run,
)
from .shardlock import ShardLock

log = logging.getLogger("loralay.build")
EXECUTORS = ("local", "slurm")


@dataclass
class BuildRequest:
    settings: CommonSettings
    out: Path
    limit: int | None = None
    workers: int = 1
    shard: int | None = None
    num_shards: int | None = None
    finish_only: bool = False
    fresh: bool = False
    retry: frozenset[str] = field(default_factory=frozenset)
    executor: str = "local"  # local | slurm: where the per-document shards run
    wait: bool = False  # slurm: stay attached until the finish is done
    fetch_job: bool = False  # slurm: fetch in a job of its own, not on this machine
    fetched: bool = False  # a shard of a submitted run: the submitter already fetched

    @property
    def sharded(self) -> bool:
        return self.num_shards is not None

    def check(self) -> None:
        """Options a user types; each wrong one is a ConfigError naming it."""
        if self.workers < 1:
            raise ConfigError(f"--workers {self.workers}: must be 1 or more")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit {self.limit}: must be 1 or more")
        self._check_executor()
        if self.executor == "local" and ((self.shard is None) != (self.num_shards is None) or (
                self.num_shards is not None and not 0 <= self.shard < self.num_shards)):  # type: ignore[operator]
            raise ConfigError("--shard K and --num-shards N go together, with 0 <= K < N")
        if self.executor == "local" and self.fresh and (self.finish_only or self.sharded):
            raise ConfigError("--fresh starts the whole run over: use it without --shard/--finish")
        self.retry = check_retry(self.retry)

    def _check_executor(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError(f"--executor {self.executor}: one of {', '.join(EXECUTORS)}")
        if self.executor == "local" and (self.wait or self.fetch_job):
            raise ConfigError("--wait and --fetch-job go with --executor slurm")
        if self.executor != "local" and (self.shard is not None or self.finish_only):
            raise ConfigError(f"--executor {self.executor} runs every shard and the finish "
                              "itself: give --num-shards N, not --shard or --finish")
        if self.executor != "local" and self.workers != 1:
            raise ConfigError(f"--workers {self.workers}: a submitted shard has one worker per "
                              "CPU Slurm gives it; set --slurm-cpus-per-task instead")
        if self.num_shards is not None and self.num_shards < 1:
            raise ConfigError(f"--num-shards {self.num_shards}: must be 1 or more")
        if self.fetched and (not self.sharded or self.finish_only):
            raise ConfigError("--fetched is for one shard (--shard K --num-shards N) of a "
                              "submitted run")


@dataclass(frozen=True)
class BuildResult:
    out: Path
    kept: dict[str, int]
    documents: int
    verdict: str

    def line(self) -> str:
        splits = ", ".join(f"{name} {n}" for name, n in self.kept.items())
        return (f"{self.verdict}; {splits}; dataset {self.out}, report "
                f"{self.out / 'report.md'}")


def run_fetch(settings: CommonSettings, out: Path, limit: int | None = None,
              retry: frozenset[str] = frozenset()) -> str | None:
    """Fetch under the run lock; returns the one-line reason when the harvest stopped early
    (what it fetched is kept and a rerun resumes it)."""
    check_inputs(settings)
    with RunLock(RunLayout(out)):
        return fetch_locked(settings, RunLayout(out), limit, retry)


def fetch_locked(settings: CommonSettings, layout: RunLayout, limit: int | None,
           retry: frozenset[str]) -> str | None:
    try:
        counts = fetch_phase(settings, layout, limit, retry)
    except (SourceNotBuilt, BadRunInput) as e:
        raise ConfigError(str(e)) from e
    except (ValueError, OSError) as e:
        message = (f"fetch {settings.source} stopped early: {e}; rerun the same command "
                   f"to resume")
        log.error(message)
        return message
    log.info("fetched %d, rejected %d", counts["ok"], counts["failed"])
    return None


def run_build(req: BuildRequest) -> BuildResult:
    if req.settings.source == "citesum" and req.executor != "local":
        raise ConfigError(f"--source citesum --executor {req.executor}: not supported; "
                          "CiteSum builds on one machine (--workers N)")
    if req.settings.source == "citesum":  # S2ORC shards on disk: its own two-pass build
        from ..citesum.build import run_citesum

        return run_citesum(req)
    req.check()
    check_inputs(req.settings)
    if req.executor == "slurm":
        from .slurm import submit_build

        return submit_build(req)
    versions = tool_versions()
    _note_slow_reader()
    layout = RunLayout(req.out)
    shard_only = req.sharded and not req.finish_only
    with ShardLock(layout, req.shard, req.num_shards) if shard_only else RunLock(layout):  # type: ignore[arg-type]
        if req.fresh:
            wipe_run(layout)
        stopped = _process(req, layout, versions) if not req.finish_only else None
        if req.sharded and not req.finish_only:
            log.info("shard %d of %d done; when all are, run the same command with --finish",
                     req.shard, req.num_shards)
            return BuildResult(req.out, {}, 0, "shard done")
        return _finish(req, layout, versions, stopped)


def _note_slow_reader() -> None:
    """A package built where no C compiler was found reads Poppler's output in Python:
    the same words, more CPU. Said once, so a user can fix the install."""
    from ..extract.parse import read_chunk

    if read_chunk is None:
        log.warning("the compiled reader of Poppler's output is not built (no C compiler "
                    "or Python headers when loralay-build was installed): extraction takes "
                    "~10 %% more CPU, same words; `make install` or `apt-get install gcc "
                    "python3-dev`, then reinstall")


def _process(req: BuildRequest, layout: RunLayout, versions: ToolVersions) -> str | None:
    """Fetch (unless shards share one earlier fetch), then this shard's documents."""
    n = req.num_shards or 1
    if req.sharded and req.settings.source != "local" and not layout.fetch_db.exists():
        raise ConfigError(f"{req.out}: nothing fetched yet; run `loralay fetch --source "
                          f"{req.settings.source} --out {req.out}` before the shards")
    claim_shards(layout, n)  # before fetching: a mismatch must cost nothing
    stopped = None
    if not req.fetched and (not req.sharded or req.settings.source == "local"):
        stopped = fetch_locked(req.settings, layout, req.limit, req.retry)
    counts = process_phase(req.settings, layout, versions, req.workers, req.shard or 0, n)
    log.info("processed: %s", counts or "nothing new")
    return stopped


def _finish(req: BuildRequest, layout: RunLayout, versions: ToolVersions,
            stopped: str | None) -> BuildResult:
    num_shards = recorded_shards(layout) or 1
    try:
        decisions = finish_run(req.settings, layout, num_shards, versions, req.workers)
    except IncompleteRun as e:
        raise BuildStopped(str(e)) from e
    result = _result(req.out, decisions)
    if stopped:
        held = "the dataset holds what was fetched so far" if result.documents and any(
            result.kept.values()) else "no dataset yet"
        raise BuildStopped(f"{stopped}; {held}")
    if not any(result.kept.values()):
        raise BuildStopped(f"{req.out}: no document kept of {result.documents}; "
                           f"{req.out / 'report.md'} says why each was dropped")
    log.info("done: %s", result.line())
    return result


def _result(out: Path, d: Decisions) -> BuildResult:
    return BuildResult(out, {k: len(v) for k, v in d.kept.items()}, len(d.outcomes), d.verdict)
