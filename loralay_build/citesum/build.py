"""The CiteSum passes: pass 1 (citing shards), pass 2 (abstract / metadata shards), the
scoring; and the finish that writes the dataset, the report and the card.

Each shard task of each pass is an entry of the run's ledger (`state/citesum.sqlite`, the
`store/citesum.py`), recorded once its output file is in place: a rerun skips what is
current, so a run killed at any instant loses at most the shards in flight. An entry's
fingerprint is its input file's stamp and the digest of what else the stage reads: pass 1
the format, pattern and splitter; pass 2 the set of cited ids (which pass 1 decides) and the
shards; the scoring pass 2's outputs and the gate's settings. Between the passes the cited
ids and the cited papers live in on-disk indexes (`index.py`), never in memory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import TEMP_PREFIX
from ..errors import ConfigError
from ..machinery.ledger import digest
from ..splits import SPLITS
from ..store.citesum import CiteSumState
from . import index, passes, score
from .report import write_report
from .shards import expand, shard_key
from .stages import StageRun, ok_keys, run_stage, stamp
from .write import write_card, write_rows

log = logging.getLogger("loralay.citesum")
PASS1, PASS2, SCORE = "citesum-pass1", "citesum-pass2", "citesum-score"
STAGES = [PASS1, PASS2, SCORE]
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


@dataclass(frozen=True)
class Work:
    """Where a run's passes leave their files (`DIR/work/`)."""

    root: Path

    def pass1_tasks(self, citing: list[Path]) -> dict[str, tuple[str, str]]:
        return {f"citing/{p.name}": (str(p), str(self.root / "pass1" / f"{shard_key(p)}.jsonl"))
                for p in citing}

    def pass2_tasks(self, cited: dict[str, list[Path]]
                    ) -> list[tuple[str, tuple[str, str, str]]]:
        """(key, (kind, shard, output)) per cited shard, in the globs' order; a list, not a
        dict: two shards of one kind with the same name (a recursive glob) share a key."""
        return [(f"{kind}/{p.name}",
                 (kind, str(p), str(self.root / "pass2" / f"{kind}-{shard_key(p)}.jsonl")))
                for kind, paths in cited.items() for p in paths]

    def scored(self, pass1_file: Path) -> Path:
        return self.root / "scored" / pass1_file.name


def run_pass1(s: Any, work: Work, state: CiteSumState, citing: list[Path], run: StageRun
              ) -> dict[str, Path]:
    """Candidates file per citing shard key that succeeded; a shard added to the glob is
    only a new task."""
    (work.root / "pass1").mkdir(parents=True, exist_ok=True)
    settings = digest([s.s2orc_format, s.related_work_pattern, s.sentence_splitter])
    tasks = work.pass1_tasks(citing)
    cfg = passes.Pass1Config(s.s2orc_format, s.related_work_pattern, s.sentence_splitter,
                             s.drop_examples)
    run_stage(state, PASS1, tasks, passes.pass1, cfg, run, settings, passes.setup_pass1)
    return {k: Path(tasks[k][1]) for k in ok_keys(state, PASS1, sorted(tasks))}


def run_pass2(work: Work, state: CiteSumState, cited: dict[str, list[Path]], p1: list[Path],
              run: StageRun) -> tuple[list[Path], str]:
    """The cited papers of each abstracts / metadata shard that succeeded; the digest of
    what they depend on (the cited ids and the shards)."""
    (work.root / "pass2").mkdir(parents=True, exist_ok=True)
    ids_db = work.root / "cited-ids.sqlite"
    settings = digest([index.write_wanted(p1, ids_db),
                       {k: [str(p) for p in v] for k, v in cited.items()}])
    tasks = dict(work.pass2_tasks(cited))
    run_stage(state, PASS2, tasks, passes.pass2, str(ids_db), run, settings)
    files = [Path(tasks[k][2]) for k in ok_keys(state, PASS2, sorted(tasks))]
    return files, digest([settings, [(str(p), stamp(p)) for p in files]])


def run_score(s: Any, work: Work, state: CiteSumState, p1: dict[str, Path], p2: list[Path],
              fp2: str, run: StageRun) -> dict[str, Path]:
    """ROUGE gate and split of each candidates file, against the index of cited papers
    (rebuilt only when pass 2's outputs changed); scored file per citing shard key."""
    cited_db = work.root / "cited.sqlite"
    if state.index_print() != fp2 or not cited_db.exists():
        index.write_cited(p2, cited_db)
        state.set_index_print(fp2)
    cfg = score.ScoreConfig(str(cited_db), tuple(s.rouge_recall_min), s.min_cited_abstract_chars,
                            tuple(s.split_proportions), s.drop_examples)
    settings = digest([fp2, cfg.floors, cfg.min_chars, cfg.proportions, cfg.examples])
    (work.root / "scored").mkdir(exist_ok=True)
    tasks = {k: (str(p), str(work.scored(p))) for k, p in p1.items()}
    run_stage(state, SCORE, tasks, score.score, cfg, run, settings, score.setup_score)
    return {k: Path(tasks[k][1]) for k in ok_keys(state, SCORE, sorted(tasks))}


def run_passes(s: Any, work: Work, state: CiteSumState, run: StageRun) -> None:
    citing, cited = inputs(s)
    work.root.mkdir(parents=True, exist_ok=True)
    # a killed task's half file (its AtomicFile or index temporary; we hold the lock)
    for leftover in work.root.glob(f"**/{TEMP_PREFIX}*"):
        leftover.unlink()
    p1 = run_pass1(s, work, state, citing, run)
    p2, fp2 = run_pass2(work, state, cited, list(p1.values()), run)
    run_score(s, work, state, p1, p2, fp2, run)


def write_outputs(s: Any, out: Path, work: Work, state: CiteSumState) -> dict[str, Any]:
    """The dataset from the shards whose scoring is current, then the report and the card;
    returns the report's JSON."""
    citing, cited = inputs(s)
    tasks = work.pass1_tasks(citing)
    p1 = ok_keys(state, PASS1, sorted(tasks))
    p2 = ok_keys(state, PASS2, sorted(k for k, _ in work.pass2_tasks(cited)))
    scored = {k: work.scored(Path(tasks[k][1])) for k in ok_keys(state, SCORE, p1)}
    files = list(scored.values())
    counts, data_files = write_rows(out, {sp: score.rows_of(files, sp) for sp in SPLITS},
                                    s.rows_per_shard)
    report = write_report(out, s, state, STAGES, {PASS1: p1, PASS2: p2, SCORE: list(scored)},
                          counts)
    write_card(out, s, counts, data_files, report["card"])
    log.info("done: %s", ", ".join(f"{k} {v}" for k, v in counts.items()))
    return report
