"""What `loralay build` and `loralay fetch` do, phase by phase, with user-facing errors."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sources import BadRunInput, SourceNotBuilt
from .driver import fetch_phase, process_phase
from .finish import IncompleteRun
from .layout import RunLayout

log = logging.getLogger("loralay.build")
Fail = Callable[[str], None]


@dataclass
class BuildRequest:
    source: str
    cfg: dict[str, Any]
    out: Path
    limit: int | None = None
    workers: int = 1
    shard: int | None = None
    num_shards: int | None = None
    finish_only: bool = False

    @property
    def sharded(self) -> bool:
        return self.num_shards is not None


def run_fetch(source: str, cfg: dict[str, Any], out: Path, limit: int | None,
              fail: Fail) -> str | None:
    """Fetch; a harvest that had to stop is reported, and what it fetched is kept.

    Returns the one-line reason when the harvest stopped early (a rerun resumes it)."""
    try:
        counts = fetch_phase(source, cfg, RunLayout(out), limit)
    except (SourceNotBuilt, BadRunInput) as e:
        fail(str(e))
    except (ValueError, OSError) as e:
        message = f"fetch {source} stopped early: {e}; rerun the same command to resume"
        log.error(message)
        return message
    log.info("fetched %d, rejected %d", counts["ok"], counts["failed"])
    return None


def run_build(req: BuildRequest, fail: Fail) -> None:
    layout = RunLayout(req.out)
    stopped = None
    if not req.finish_only:
        if not req.sharded or req.source == "local":
            stopped = run_fetch(req.source, req.cfg, req.out, req.limit, fail)
        elif not layout.fetch_db.exists():
            fail(f"{req.out}: nothing fetched yet; run `loralay fetch --source {req.source} "
                 f"--out {req.out}` before the shards")
        counts = process_phase(req.cfg, layout, req.workers, req.shard or 0, req.num_shards or 1)
        log.info("processed: %s", counts or "nothing new")
        if req.sharded:
            log.info("shard %d of %d done; when all are, run the same command with --finish",
                     req.shard, req.num_shards)
            return
    try:
        from .finish import finish_run

        decisions = finish_run(req.source, req.cfg, layout)
    except IncompleteRun as e:
        fail(str(e))
    if stopped:
        held = "the dataset holds what was fetched so far" if any(decisions.kept.values()) \
            else "no dataset yet"
        fail(f"{stopped}; {held}")
    if not any(decisions.kept.values()):
        fail(f"{req.out}: no document kept of {len(decisions.outcomes)}; "
             f"{req.out / 'report.md'} says why each was dropped")
    log.info("done: %s", done_line(req.out, decisions.kept))


def done_line(out: Path, kept: dict[str, list[str]]) -> str:
    """The last thing a user reads: the report's verdict, the split sizes, where to look."""
    verdict = json.loads((out / "report.json").read_text(encoding="utf-8"))["verdict"]
    splits = ", ".join(f"{name} {len(ids)}" for name, ids in kept.items())
    return f"{verdict}; {splits}; dataset {out}, report {out / 'report.md'}"
