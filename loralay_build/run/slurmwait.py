"""`--wait`: follow a submission from `squeue` and the jobs' status files, one line per
finished shard, the finish's verdict at the end, a failed shard named with its log."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BuildStopped
from ..machinery.request import NOTHING_NEW, BuildResult
from ..paths import REPORT_JSON
from ..reportfile import ReportSummary
from .jobscript import SlurmDir
from .squeue import queue

log = logging.getLogger("loralay.slurm")
SQUEUE_TRIES = 10  # squeue failing this many polls in a row ends the wait


class JobFailed(BuildStopped):
    """A job of the submission ended badly; re-submitting the same command redoes it."""

    exit_status = 1


@dataclass
class Submission:
    where: SlurmDir
    num_shards: int
    shards: list[int]
    jobs: dict[str, str | None]  # fetch | shards | finish -> job id

    def to_json(self) -> dict[str, Any]:
        return {"num_shards": self.num_shards, "shards": self.shards, "jobs": self.jobs}

    def ids(self) -> list[str]:
        return [i for i in self.jobs.values() if i]

    def follow_line(self) -> str:
        parts = [f"fetch as job {self.jobs['fetch']}"] if self.jobs["fetch"] else []
        if self.jobs["shards"]:
            parts.append(f"shards {_ranges(self.shards)} of {self.num_shards} as array job "
                         f"{self.jobs['shards']}")
        else:
            parts.append(f"no shard (all {self.num_shards} done)")
        parts.append(f"the finish as job {self.jobs['finish']}")
        return (f"submitted {', '.join(parts)}; follow with `squeue -j {','.join(self.ids())}`"
                f" and the logs in {self.where.logs}")

    def task(self, shard: int) -> str:
        return f"{self.jobs['shards']}_{shard}"

    def log_of(self, shard: int) -> str:
        return str(self.where.shard_log(str(self.jobs["shards"]), shard))

    def exit_status(self, job: str) -> int | None:
        """None: the job wrote no status (cancelled, killed, timed out, or never started)."""
        path = self.where.rc_file(job)
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            return None


def _ranges(shards: list[int]) -> str:
    return ",".join(map(str, shards)) if len(shards) < 8 else f"{len(shards)} shards"


def _ended(status: int | None) -> str:
    return "cancelled or killed" if status is None else f"exit {status}"


def poll(sub: Submission, poll_s: float, tries: list[int]) -> dict[str, str]:
    time.sleep(poll_s)
    try:
        q = queue()
    except BuildStopped as e:
        tries.append(1)
        if len(tries) >= SQUEUE_TRIES:
            raise
        log.warning("%s; asking again", e)
        return {j: "?" for j in sub.ids()}  # as if all still queued
    tries.clear()
    return q


def wait_for(sub: Submission, poll_s: float) -> BuildResult:
    """Until the finish left the queue; JobFailed names every job that ended badly."""
    try:
        return _follow(sub, poll_s)
    except KeyboardInterrupt:
        raise BuildStopped(f"stopped waiting; the jobs go on: `squeue -j "
                           f"{','.join(sub.ids())}`, logs in {sub.where.logs}") from None


def _follow(sub: Submission, poll_s: float) -> BuildResult:
    left = list(sub.shards)
    failed: list[str] = []
    tries: list[int] = []
    fetch, finish = sub.jobs["fetch"], str(sub.jobs["finish"])
    while True:
        q = poll(sub, poll_s, tries)
        live = {j.split("_")[0] for j in q} | set(q)
        if fetch and fetch not in live:
            if sub.exit_status(fetch) != 0:
                failed.append(f"the fetch job {fetch} ({_ended(sub.exit_status(fetch))}; "
                              f"log {sub.where.job_log('fetch', fetch)})")
            fetch = None
        for k in [k for k in left if sub.task(k) not in q]:
            left.remove(k)
            status = sub.exit_status(sub.task(k))
            if status == 0:
                log.info("shard %d of %d done (%d of %d submitted shards finished)", k,
                         sub.num_shards, len(sub.shards) - len(left), len(sub.shards))
            else:
                failed.append(f"shard {k} ({_ended(status)}; log {sub.log_of(k)})")
                log.error("shard %d of %d failed: %s; log %s", k, sub.num_shards,
                          _ended(status), sub.log_of(k))
        if finish not in live and not left:
            break
    return _verdict(sub, finish, failed)


def _verdict(sub: Submission, finish: str, failed: list[str]) -> BuildResult:
    status = sub.exit_status(finish)
    if failed:
        raise JobFailed(f"{sub.where.root.parent}: {'; '.join(failed)}; re-submit the same "
                        "command to run what is missing and the finish")
    if status != 0:
        raise JobFailed(f"{sub.where.root.parent}: the finish job {finish} failed "
                        f"({_ended(status)}); log {sub.where.job_log('finish', finish)}")
    out = sub.where.root.parent
    report = ReportSummary.read(out / REPORT_JSON)
    said = _nothing_new(sub.where.job_log("finish", finish))
    result = BuildResult(out, report.kept, report.documents, said or report.verdict or "")
    log.info("done: %s", said or result.line())
    return result


def _nothing_new(finish_log: Path) -> str | None:
    """A refresh's finish that found nothing new rewrote no report: its one line, from
    its log, is the verdict (as a local refresh says it)."""
    try:
        text = finish_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = [ln.split("done: ", 1)[1] for ln in text.splitlines()
             if f"done: {NOTHING_NEW} " in ln]
    return lines[-1] if lines else None
