"""The finish's per-shard work: resolve each candidate's cited paper, gate it by ROUGE,
give it its split. Always redone from pass 1 and pass 2's files (cheap next to reading S2ORC),
so a change of `rouge_recall_min`, `min_cited_abstract_chars` or the split needs no re-read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .passes import Funnel
from .records import CitedPaper
from .split import split_of
from .steps import LOW_ROUGE, RougeGate, resolve

_WORKER: dict[str, Any] = {}


def init(cited: dict[str, CitedPaper], floors: list[float], min_chars: int,
         proportions: list[float], examples: int) -> None:
    _WORKER.update(cited=cited, gate=RougeGate(floors), min_chars=min_chars,
                   proportions=proportions, examples=examples)


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


def score(task: tuple[str, str]) -> dict[str, Any]:
    """Candidates of one pass-1 file -> `{split, row}` lines in `task[1]`; the funnel."""
    funnel = Funnel(_WORKER["examples"])
    gate: RougeGate = _WORKER["gate"]
    with open(task[0], encoding="utf-8") as src, open(task[1], "w", encoding="utf-8") as out:
        for line in src:
            c = json.loads(line)
            cited = _WORKER["cited"].get(c["cited_id"])
            why = resolve(cited, _WORKER["min_chars"])
            if why:
                funnel.drop(why, f"{c['id']} -> {c['cited_id']}: {c['sentence']}")
                continue
            funnel.counts["resolved"] += 1
            recalls = gate.recalls(c["stripped"], cited.abstract)
            if not gate.passes(recalls):
                shown = "/".join(f"{100 * r:.1f}" for r in recalls)
                funnel.drop(LOW_ROUGE, f"{c['id']} (R {shown}): {c['sentence']}")
                continue
            funnel.counts["rouge_kept"] += 1
            split = split_of(c["cited_id"], _WORKER["proportions"])
            out.write(json.dumps({"split": split, "row": row(c, cited, recalls)},
                                 ensure_ascii=False) + "\n")
    return funnel.to_json()


def rows_of(files: list[Path], split: str) -> Any:
    """One split's rows, shard files in sorted order then file order: the same for any
    number of workers."""
    for path in files:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                if obj["split"] == split:
                    yield obj["row"]
