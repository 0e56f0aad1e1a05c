"""Scrapy crawls (SciELO, KoreaScience) run in a child process.

Twisted's reactor cannot be restarted inside one process, so `run_crawl` starts
`python -m loralay_build.sources.crawl JOB.json`, and the parent reads the child's
item feed (one JSON object per line, fsynced per item) while it runs. Resume rests
on two things: Scrapy's JOBDIR after a clean stop, and, after a kill, the feed itself:
every id already in it (or already recorded by the driver) is passed to the next
child as a skip list, so nothing is fetched or yielded twice.

A source that asks its service only for what is new (`build --refresh`) hands `run_crawl`
its `HighWater`; its spider keeps the newest date the service pages by among every record
it listed (the stat `HIGH_WATER_STAT`), and the mark takes it only from a crawl that ran
to its end, lost nothing and resumed no JOBDIR: then each record it listed is recorded
(or was already, or is not the source's). Scrapy answers many requests at once, so a
mark saved part way could pass over a record still in flight, and one past a request
lost after its retries (a listing page, a record) would hide that record from every later
refresh. Any other crawl leaves the saved mark where it was: the next refresh asks a
little more, and what it had is skipped as recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from ...atomic import write_text_atomic
from ...failures import FailureClass
from ...records import Candidate, Rejection
from ...runfolder import RunFolder
from .. import FetchContext, HarvestStopped
from ..kit.harvest import HighWater

CLEAN_MARK = "clean-stop"
# the child's stat of the newest date the service pages by among every record it listed
# (set by a spider whose source keeps a high-water mark; see above)
HIGH_WATER_STAT = "loralay/high_water"


def crawl_dir(ctx: FetchContext) -> Path:
    return RunFolder(ctx.out_dir).crawl_dir(ctx.source)


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


def _prepare(ctx: FetchContext) -> tuple[Path, Path, bool]:
    """The job folder, its feed, and whether the child resumes a JOBDIR (a killed one is
    dropped)."""
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
    return work, work / "items.jsonl", jobdir.exists()


def run_crawl(ctx: FetchContext, spider: str, spider_args: dict[str, Any],
              high_water: HighWater | None = None) -> Iterator[Candidate | Rejection]:
    """Yield the feed's items not yet recorded, then everything a new child crawls;
    `high_water` is raised and saved after a whole crawl (see the module's doc)."""
    work, feed, resumed = _prepare(ctx)
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
        complete = yield from _follow(ctx, proc, feed, pos, yielded)
    finally:
        _stop(proc)
    if high_water is not None and complete and not resumed:
        high_water.seen(read_stats(work).get(HIGH_WATER_STAT))
        high_water.save()


def _follow(ctx: FetchContext, proc: subprocess.Popen[bytes], feed: Path, pos: int,
            yielded: int) -> Generator[Candidate | Rejection, None, bool]:
    """The child's items as they come; True when its whole crawl is recorded and lost
    nothing, False when the limit stopped it."""
    while True:
        alive = proc.poll() is None
        items, pos = _read_feed(feed, pos)
        for d in items:
            if ctx.limit_reached(yielded):
                return False
            if ctx.already_fetched(d["id"]):
                continue
            yield item_from_json(d)
            yielded += 1
        if ctx.limit_reached(yielded):
            return False
        if not alive:
            return judge_crawl(ctx, proc.returncode, feed.parent)
        time.sleep(0.1)


def read_stats(work: Path) -> dict[str, Any]:
    """The child's Scrapy counters (`__main__.write_stats`); empty when it wrote none."""
    path = work / "stats.json"
    return json.loads(path.read_text()) if path.exists() else {}


def judge_crawl(ctx: FetchContext, returncode: int | None, work: Path) -> bool:
    """A crawl that crashed or reached no server stops the harvest (a rerun resumes it);
    one that lost some requests says how many, so an empty harvest is never silent.
    True when the crawl ran to its end (`finished`) and lost nothing (no request failed,
    no answer was ignored for its status)."""
    log_path = work / "crawl.log"
    if returncode not in (0, None):
        raise HarvestStopped(f"{ctx.source} crawl ended with code {returncode}; see {log_path}")
    stats = read_stats(work)
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
        return False
    # an answer refused for its status (a record's 404 or 403) loses that record too
    ignored = int(stats.get("httperror/response_ignored_count", 0))
    return stats.get("finish_reason") == "finished" and not ignored


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
