"""The finish's per-shard work: resolve each candidate's cited paper, gate it by ROUGE,
give it its split. Always redone from pass 1 and pass 2's files (cheap next to reading S2ORC),
so a change of `rouge_recall_min`, `min_cited_abstract_chars` or the split needs no re-read.
Candidates are read in batches whose cited papers are looked up in the on-disk index
(`index.py`): a worker holds one batch, never every cited abstract."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_text
from . import index
from .passes import Funnel
from .records import CitedPaper
from .split import split_of
from .steps import LOW_ROUGE, NO_ABSTRACT, RougeGate, resolve

_WORKER: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class ScoreConfig:
    cited_db: str
    floors: tuple[float, ...]
    min_chars: int
    proportions: tuple[float, ...]
    examples: int


def setup_score(cfg: ScoreConfig) -> RougeGate:
    """The ROUGE gate, made once per worker; the pool runs this before its memory cap:
    ROUGE's imports (nltk, and through it SciPy, scikit-learn, pandas) map ~450 MB of
    address space, which a task's cap must not pay."""
    if _WORKER.get("cfg") != cfg:
        _WORKER.update(cfg=cfg, gate=RougeGate(list(cfg.floors)))
    return _WORKER["gate"]


def row(c: dict[str, Any], cited: CitedPaper, recalls: tuple[float, ...]) -> dict[str, Any]:
    return {
        "id": c["id"], "src": cited.abstract, "tgt": c["tgt"], "paper_id": c["cited_id"],
        "title": cited.title,
        "discipline": {"venue": cited.venue, "journal": cited.journal,
                       "mag_field_of_study": list(cited.fields)},
        "citing_paper_id": c["citing_paper_id"], "section": c["section"],
        "sentence": c["sentence"], "rouge1_recall": recalls[0], "rouge2_recall": recalls[1],
        "rougeL_recall": recalls[2],
    }


def score(task: tuple[str, str], cfg: ScoreConfig) -> dict[str, Any]:
    """Candidates of one pass-1 file -> `{split, row}` lines in `task[1]`; the funnel."""
    funnel = Funnel(cfg.examples)
    gate = setup_score(cfg)
    out = Path(task[1])
    con = index.open_cited(cfg.cited_db)
    try:
        with open(task[0], encoding="utf-8") as src, atomic_text(out) as fh:
            for chunk in index.batches(src):
                cands = [json.loads(line) for line in chunk]
                cited = index.lookup(con, [c["cited_id"] for c in cands])
                for c in cands:
                    line = _one(c, cited.get(c["cited_id"]), gate, cfg, funnel)
                    if line:
                        fh.write(line)
    finally:
        con.close()
    return funnel.to_json()


def _one(c: dict[str, Any], cited: CitedPaper | None, gate: RougeGate, cfg: ScoreConfig,
         funnel: Funnel) -> str | None:
    """One candidate's output line, or None (its drop counted in the funnel)."""
    why = resolve(cited, cfg.min_chars)
    if why or cited is None or cited.abstract is None:  # resolve said why; mypy needs the rest
        funnel.drop(why or NO_ABSTRACT, f"{c['id']} -> {c['cited_id']}: {c['sentence']}")
        return None
    funnel.counts["resolved"] += 1
    recalls = gate.recalls(c["stripped"], cited.abstract)
    if not gate.passes(recalls):
        shown = "/".join(f"{100 * r:.1f}" for r in recalls)
        funnel.drop(LOW_ROUGE, f"{c['id']} (R {shown}): {c['sentence']}")
        return None
    funnel.counts["rouge_kept"] += 1
    split = split_of(c["cited_id"], list(cfg.proportions))
    return json.dumps({"split": split, "row": row(c, cited, recalls)}, ensure_ascii=False) + "\n"


def rows_of(files: list[Path], split: str) -> Any:
    """One split's rows, shard files in sorted order then file order: the same for any
    number of workers (a shard that failed has no file and no rows)."""
    for path in files:
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                if obj["split"] == split:
                    yield obj["row"]
