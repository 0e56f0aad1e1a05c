"""`loralay build --source citesum`: pass 1, pass 2, finish; resumable like every build.

The run state (`state/citesum.sqlite`, the project's `RunState`) records each shard of each
pass once its output file is in place, in one transaction with its funnel counts; a rerun
skips recorded shards, so a run killed at any instant loses at most the shards in flight.
Pass 1 is redone when the settings it reads change; pass 2 when the set of cited ids does.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..failures import FailureClass
from ..run.layout import RunLayout
from ..run.preflight import RunLock
from ..state import RunState
from . import passes, score
from .report import write_report
from .shards import expand, shard_key
from .split import SPLITS
from .write import write_card, write_rows

log = logging.getLogger("loralay.citesum")
PASS1, PASS2 = "citesum-pass1", "citesum-pass2"
CITED_KINDS = {"2020": ("metadata",), "datasets-api": ("abstracts", "papers")}


def inputs(s: Any) -> tuple[list[Path], dict[str, list[Path]]]:
    """Citing shards and cited shards per kind; a required glob matching nothing is an error."""
    citing_key = "pdf_parses" if s.s2orc_format == "2020" else "s2orc"
    required = {"2020": ("pdf_parses", "metadata"), "datasets-api": ("s2orc", "abstracts")}
    for key in required[s.s2orc_format]:
        if not getattr(s, key):
            raise ConfigError(f"s2orc_format {s.s2orc_format}: set `{key}` (a glob of shards)")
        if not expand(getattr(s, key)):
            raise ConfigError(f"{key}: {getattr(s, key)!r} matches no file")
    return expand(getattr(s, citing_key)), {k: expand(getattr(s, k))
                                            for k in CITED_KINDS[s.s2orc_format]}


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def _map(fn: Callable, tasks: list, workers: int, init: Callable, args: tuple) -> Iterable:
    """Results in completion order; in-process for one worker (no fork, plain tracebacks)."""
    if workers <= 1 or len(tasks) <= 1:
        init(*args)
        yield from map(fn, tasks)
        return
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(min(workers, len(tasks)), initializer=init, initargs=args) as pool:
        yield from pool.imap_unordered(fn, tasks)


def _record(state: RunState, stage: str, key: str, result: dict[str, Any]) -> None:
    with state.transaction():
        for lineno, message in result.get("bad", []):
            state.record_failure_raw(f"{key}#{lineno}", stage,
                                     FailureClass.BAD_METADATA.value, message)
        state.set_checkpoint(f"{stage}:{key}", result)
        state.record(key, stage)


def _run_stage(state: RunState, stage: str, tasks: dict[str, tuple], fn: Callable,
               workers: int, init: Callable, args: tuple) -> None:
    todo = [t for k, t in tasks.items() if not state.settled(k, stage)]
    log.info("%s: %d of %d shards done; %d to do", stage, len(tasks) - len(todo), len(tasks),
             len(todo))
    by_out = {t[-1]: k for k, t in tasks.items()}
    for out, result in _map(fn, todo, workers, init, args):
        _record(state, stage, by_out[out], result)


def _stale(state: RunState, stage: str, fingerprint: str, also: tuple[str, ...] = ()) -> None:
    if state.get_checkpoint(f"{stage}:fingerprint") != fingerprint:
        for name in (stage, *also):
            state.clear_stage(name)
        state.set_checkpoint(f"{stage}:fingerprint", fingerprint)


def run_pass1(s: Any, work: Path, state: RunState, citing: list[Path], workers: int
              ) -> dict[str, Path]:
    """Candidates file per citing shard key; a shard added to the glob is only a new task."""
    (work / "pass1").mkdir(parents=True, exist_ok=True)
    fp = _digest([s.s2orc_format, s.related_work_pattern, s.sentence_splitter])
    _stale(state, PASS1, fp, also=(PASS2,))
    tasks = {f"citing/{p.name}": (str(p), str(work / "pass1" / f"{shard_key(p)}.jsonl"))
             for p in citing}
    _run_stage(state, PASS1, tasks, passes.pass1, workers, passes.init_pass1,
               (s.s2orc_format, s.related_work_pattern, s.sentence_splitter, s.drop_examples))
    return {k: Path(t[1]) for k, t in sorted(tasks.items())}


def cited_ids(files: list[Path], dest: Path) -> str:
    ids: set[str] = set()
    for path in files:
        with open(path, encoding="utf-8") as fh:
            ids.update(json.loads(line)["cited_id"] for line in fh)
    dest.write_text("\n".join(sorted(ids)) + "\n", encoding="utf-8")
    return _digest(sorted(ids))


def run_pass2(work: Path, state: RunState, cited: dict[str, list[Path]], fp: str,
              workers: int) -> list[Path]:
    (work / "pass2").mkdir(parents=True, exist_ok=True)
    _stale(state, PASS2, _digest([fp, {k: [str(p) for p in v] for k, v in cited.items()}]))
    tasks = {f"{kind}/{p.name}": (kind, str(p), str(work / "pass2" / f"{kind}-{shard_key(p)}"
                                                   ".jsonl"))
             for kind, paths in cited.items() for p in paths}
    _run_stage(state, PASS2, tasks, passes.pass2, workers, passes.init_pass2,
               (str(work / "cited-ids.txt"),))
    return [Path(t[2]) for _, t in sorted(tasks.items())]


def finish(s: Any, out: Path, work: Path, p1: list[Path], p2: list[Path],
           workers: int) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """ROUGE gate, split and write; returns split counts and each shard's funnel."""
    (work / "scored").mkdir(exist_ok=True)
    tasks = [(str(p), str(work / "scored" / p.name)) for p in p1]
    args = (passes.load_cited(p2), s.rouge_recall_min, s.min_cited_abstract_chars,
            s.split_proportions, s.drop_examples)
    funnels = list(_map(score.score, tasks, workers, score.init, args))
    scored = [Path(t[1]) for t in tasks]
    counts = write_rows(out, {sp: score.rows_of(scored, sp) for sp in SPLITS},
                        s.rows_per_shard)
    return counts, funnels


def build_citesum(s: Any, out: Path, workers: int = 1, fresh: bool = False) -> dict[str, Any]:
    """The whole build into `out`; returns the report's JSON."""
    citing, cited = inputs(s)
    layout = RunLayout(out)
    with RunLock(layout):
        work = out / "work"
        if fresh:
            shutil.rmtree(work, ignore_errors=True)
            (layout.state_dir / "citesum.sqlite").unlink(missing_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        with RunState(layout.state_dir / "citesum.sqlite") as state:
            p1 = run_pass1(s, work, state, citing, workers)
            fp = cited_ids(list(p1.values()), work / "cited-ids.txt")
            p2 = run_pass2(work, state, cited, fp, workers)
            counts, scored = finish(s, out, work, list(p1.values()), p2, workers)
            report = write_report(out, s, state, [PASS1, PASS2], list(p1), scored, counts)
        write_card(out, s, counts, report["card"])
    log.info("done: %s", ", ".join(f"{k} {v}" for k, v in counts.items()))
    return report


def run_citesum(req: Any) -> Any:
    """`run_build`'s branch for `--source citesum` (a `BuildRequest` in, a `BuildResult` out);
    --limit and --shard have no meaning here: the shards of S2ORC are the unit of work."""
    from ..errors import BuildStopped
    from ..run.pipeline import BuildResult

    req.check()
    if req.limit is not None or req.sharded or req.finish_only or req.retry:
        raise ConfigError("--source citesum takes --workers and --fresh; not --limit, "
                          "--shard/--num-shards, --finish or --retry")
    report = build_citesum(req.settings, req.out, req.workers, req.fresh)
    counts = report["splits"]
    papers = report["funnel"][0]["count"]
    if not any(counts.values()):
        raise BuildStopped(f"{req.out}: no example kept of {papers} papers; "
                           f"{req.out / 'report.md'} says why each was dropped")
    return BuildResult(req.out, counts, papers, report["verdict"])
