"""Scrapy crawls (SciELO, KoreaScience) run in a child process.

Twisted's reactor cannot be restarted inside one process, so `run_crawl` starts
`python -m loralay_build.sources.crawl JOB.json`, and the parent reads the child's
item feed (one JSON object per line, fsynced per item) while it runs. Resume rests
on two things: Scrapy's JOBDIR after a clean stop, and, after a kill, the feed itself:
every id already in it (or already recorded by the driver) is passed to the next
child as a skip list, so nothing is fetched or yielded twice.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...atomic import write_text_atomic
from ...failures import FailureClass
from ...layout import RunLayout
from ...records import Candidate, Rejection
from .. import FetchContext, HarvestStopped

CLEAN_MARK = "clean-stop"


def crawl_dir(ctx: FetchContext) -> Path:
    return RunLayout(ctx.out_dir).crawl_dir(ctx.source)


def item_from_json(d: dict[str, Any]) -> Candidate | Rejection:
    cand = Candidate.from_json(d["candidate"]) if d.get("candidate") else None
    if d["kind"] == "candidate":
        assert cand is not None
        return cand
    return Rejection(d["id"], d["source"], d.get("cls") or FailureClass.UNAVAILABLE.value,
                     d.get("message") or "", cand)


def _read_feed(feed: Path, pos: int) -> tuple[list[dict[str, Any]], int]:
    """Whole lines from byte `pos` on; a half-written last line (a kill) waits or is dropped."""
    if not feed.exists():
        return [], pos
    with feed.open("rb") as fh:
        fh.seek(pos)
        data = fh.read()
    out: list[dict[str, Any]] = []
    consumed = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        consumed += len(line)
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out, pos + consumed


def _prepare(ctx: FetchContext) -> tuple[Path, Path]:
    """The job folder and its feed; a killed JOBDIR is dropped."""
    work = crawl_dir(ctx)
    work.mkdir(parents=True, exist_ok=True)
    jobdir = work / "jobdir"
    mark = work / CLEAN_MARK
    reason = mark.read_text().strip() if mark.exists() else ""
    if jobdir.exists() and reason != "shutdown":
        # Scrapy saves its queue only on a clean close: after a kill it is stale, and after
        # a finished crawl its seen-requests file would swallow a new discovery pass
        shutil.rmtree(jobdir)
    mark.unlink(missing_ok=True)
    (work / "stats.json").unlink(missing_ok=True)
    return work, work / "items.jsonl"


def run_crawl(ctx: FetchContext, spider: str, spider_args: dict[str, Any]
              ) -> Iterator[Candidate | Rejection]:
    """Yield the feed's items not yet recorded, then everything a new child crawls."""
    work, feed = _prepare(ctx)
    yielded = 0
    # items a killed run wrote but the driver never recorded come first
    old, pos = _read_feed(feed, 0)
    for d in old:
        if ctx.limit_reached(yielded):
            return
        if ctx.state.status(d["id"], "fetch") is None:
            yield item_from_json(d)
            yielded += 1
    # what is recorded is not crawled again, but for failures a rerun retries
    skip = ctx.settled_ids()
    write_text_atomic(work / "skip.json", json.dumps(sorted(skip)))
    # the child re-validates the settings into the source's model (settings_class)
    job = {"spider": spider, "args": spider_args, "source": ctx.source,
           "settings": ctx.settings.model_dump(mode="json"),
           "feed": str(feed), "skip": str(work / "skip.json"),
           "jobdir": str(work / "jobdir"), "clean_mark": str(work / CLEAN_MARK),
           "log": str(work / "crawl.log"), "stats": str(work / "stats.json")}
    write_text_atomic(work / "job.json", json.dumps(job))
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.sources.crawl",
                             str(work / "job.json")], env=_child_env())
    write_text_atomic(work / "child.pid", str(proc.pid))
    try:
        yield from _follow(ctx, proc, feed, pos, yielded)
    finally:
        _stop(proc)


def _follow(ctx: FetchContext, proc: subprocess.Popen[bytes], feed: Path, pos: int,
            yielded: int) -> Iterator[Candidate | Rejection]:
    while True:
        alive = proc.poll() is None
        items, pos = _read_feed(feed, pos)
        for d in items:
            if ctx.limit_reached(yielded):
                return
            if ctx.already_fetched(d["id"]):
                continue
            yield item_from_json(d)
            yielded += 1
        if ctx.limit_reached(yielded):
            return
        if not alive:
            judge_crawl(ctx, proc.returncode, feed.parent)
            return
        time.sleep(0.1)


def judge_crawl(ctx: FetchContext, returncode: int | None, work: Path) -> None:
    """A crawl that crashed or reached no server stops the harvest (a rerun resumes it);
    one that lost some requests says how many, so an empty harvest is never silent."""
    log_path = work / "crawl.log"
    if returncode not in (0, None):
        raise HarvestStopped(f"{ctx.source} crawl ended with code {returncode}; see {log_path}")
    stats_path = work / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    answered = int(stats.get("downloader/response_count", 0))
    errors = {k.rsplit("/", 1)[-1].rsplit(".", 1)[-1]: int(v) for k, v in stats.items()
              if k.startswith("downloader/exception_type_count/")}
    forbidden = int(stats.get("robotstxt/forbidden", 0))
    if answered == 0 and errors:
        raise HarvestStopped(f"{ctx.source} crawl reached no server ({sum(errors.values())} "
                             f"requests failed: {_counts(errors)}); see {log_path}")
    logged = int(stats.get("log_count/ERROR", 0))
    if errors or forbidden or logged:
        ctx.log.warning("%s crawl: %d responses, %d errors logged, request errors: %s, "
                        "forbidden by robots.txt: %d; see %s", ctx.source, answered, logged,
                        _counts(errors) or "none", forbidden, log_path)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """A SIGINT lets Scrapy close cleanly (JOBDIR saved); a second wait ends it for good."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return env
