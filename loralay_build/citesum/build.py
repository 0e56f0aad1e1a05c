"""`loralay build --source citesum`: pass 1, pass 2, finish; resumable like every build.

The run state (`state/citesum.sqlite`, the project's `RunState`) records each shard of each
pass once its output file is in place, in one transaction with its funnel counts; a rerun
skips recorded shards, so a run killed at any instant loses at most the shards in flight.
Pass 1 is redone when the settings it reads change; pass 2 when the set of cited ids does;
the scoring when pass 2's outputs or the gate's settings do. Between the passes the cited
ids and the cited papers live in on-disk indexes (`index.py`), never in memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..run.layout import RunLayout
from ..run.pool import TaskLimits
from ..run.preflight import RunLock
from ..state import RunState
from . import index, passes, score
from .report import write_report
from .shards import expand, shard_key
from .split import SPLITS
from .stages import StageRun, check_retry, ok_keys, run_stage, stamp
from .write import write_card, write_rows

log = logging.getLogger("loralay.citesum")
PASS1, PASS2, SCORE = "citesum-pass1", "citesum-pass2", "citesum-score"
STAGES = [PASS1, PASS2, SCORE]
INDEX = "citesum-index:fingerprint"
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


def _stale(state: RunState, stage: str, fingerprint: str, also: tuple[str, ...] = ()) -> None:
    if state.get_checkpoint(f"{stage}:fingerprint") != fingerprint:
        for name in (stage, *also):
            state.clear_stage(name)
        state.set_checkpoint(f"{stage}:fingerprint", fingerprint)


def run_pass1(s: Any, work: Path, state: RunState, citing: list[Path], run: StageRun
              ) -> dict[str, Path]:
    """Candidates file per citing shard key that succeeded; a shard added to the glob is
    only a new task."""
    (work / "pass1").mkdir(parents=True, exist_ok=True)
    fp = _digest([s.s2orc_format, s.related_work_pattern, s.sentence_splitter])
    _stale(state, PASS1, fp, also=(PASS2, SCORE))
    tasks = {f"citing/{p.name}": (str(p), str(work / "pass1" / f"{shard_key(p)}.jsonl"))
             for p in citing}
    cfg = passes.Pass1Config(s.s2orc_format, s.related_work_pattern, s.sentence_splitter,
                             s.drop_examples)
    run_stage(state, PASS1, tasks, passes.pass1, cfg, run)
    return {k: Path(tasks[k][1]) for k in ok_keys(state, PASS1, sorted(tasks))}


def run_pass2(work: Path, state: RunState, cited: dict[str, list[Path]], p1: list[Path],
              run: StageRun) -> tuple[list[Path], str]:
    """The cited papers of each abstracts / metadata shard that succeeded; the fingerprint
    of what they depend on (the cited ids and the shards)."""
    (work / "pass2").mkdir(parents=True, exist_ok=True)
    ids_db = work / "cited-ids.sqlite"
    fp = _digest([index.write_wanted(p1, ids_db),
                  {k: [str(p) for p in v] for k, v in cited.items()}])
    _stale(state, PASS2, fp, also=(SCORE,))
    tasks = {f"{kind}/{p.name}": (kind, str(p), str(work / "pass2" / f"{kind}-{shard_key(p)}"
                                                   ".jsonl"))
             for kind, paths in cited.items() for p in paths}
    run_stage(state, PASS2, tasks, passes.pass2, str(ids_db), run)
    files = [Path(tasks[k][2]) for k in ok_keys(state, PASS2, sorted(tasks))]
    return files, _digest([fp, [(str(p), stamp(p)) for p in files]])


def run_score(s: Any, work: Path, state: RunState, p1: dict[str, Path], p2: list[Path],
              fp2: str, run: StageRun) -> dict[str, Path]:
    """ROUGE gate and split of each candidates file, against the index of cited papers
    (rebuilt only when pass 2's outputs changed); scored file per citing shard key."""
    cited_db = work / "cited.sqlite"
    if state.get_checkpoint(INDEX) != fp2 or not cited_db.exists():
        index.write_cited(p2, cited_db)
        state.set_checkpoint(INDEX, fp2)
    cfg = score.ScoreConfig(str(cited_db), tuple(s.rouge_recall_min), s.min_cited_abstract_chars,
                            tuple(s.split_proportions), s.drop_examples)
    _stale(state, SCORE, _digest([fp2, cfg.floors, cfg.min_chars, cfg.proportions,
                                  cfg.examples]))
    (work / "scored").mkdir(exist_ok=True)
    tasks = {k: (str(p), str(work / "scored" / p.name)) for k, p in p1.items()}
    run_stage(state, SCORE, tasks, score.score, cfg, run)
    return {k: Path(tasks[k][1]) for k in ok_keys(state, SCORE, sorted(tasks))}


def build_citesum(s: Any, out: Path, workers: int = 1, fresh: bool = False,
                  retry: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The whole build into `out`; returns the report's JSON."""
    run = StageRun(workers, TaskLimits(s.shard_timeout_s, s.worker_memory_mb),
                   check_retry(retry))
    citing, cited = inputs(s)
    layout = RunLayout(out)
    with RunLock(layout):
        work = out / "work"
        if fresh:
            shutil.rmtree(work, ignore_errors=True)
            (layout.state_dir / "citesum.sqlite").unlink(missing_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        for leftover in work.glob("**/.*.tmp-*"):  # a killed task's half file (we hold the lock)
            leftover.unlink()
        with RunState(layout.state_dir / "citesum.sqlite") as state:
            p1 = run_pass1(s, work, state, citing, run)
            p2, fp2 = run_pass2(work, state, cited, list(p1.values()), run)
            scored = run_score(s, work, state, p1, p2, fp2, run)
            files = list(scored.values())
            counts = write_rows(out, {sp: score.rows_of(files, sp) for sp in SPLITS},
                                s.rows_per_shard)
            report = write_report(out, s, state, STAGES, list(p1), list(scored), counts)
        write_card(out, s, counts, report["card"])
    log.info("done: %s", ", ".join(f"{k} {v}" for k, v in counts.items()))
    return report


def run_citesum(req: Any) -> Any:
    """`run_build`'s branch for `--source citesum` (a `BuildRequest` in, a `BuildResult` out);
    --limit and --shard have no meaning here: the shards of S2ORC are the unit of work."""
    from ..errors import BuildStopped
    from ..run.pipeline import BuildResult

    req.check()
    if req.limit is not None or req.sharded or req.finish_only:
        raise ConfigError("--source citesum takes --workers, --fresh and --retry; not "
                          "--limit, --shard/--num-shards or --finish")
    check_retry(req.retry)
    report = build_citesum(req.settings, req.out, req.workers, req.fresh, req.retry)
    counts = report["splits"]
    papers = report["funnel"][0]["count"]
    if not any(counts.values()):
        raise BuildStopped(f"{req.out}: no example kept of {papers} papers; "
                           f"{req.out / 'report.md'} says why each was dropped")
    return BuildResult(req.out, counts, papers, report["verdict"])
