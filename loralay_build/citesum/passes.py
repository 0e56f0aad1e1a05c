"""The two streaming passes over the shards, one shard per task.

Pass 1 reads citing shards (`pdf_parses` or `s2orc`) and writes the candidate sentences of
each to `work/pass1/<shard>.jsonl`, with the shard's funnel counts; pass 2 reads abstracts
and metadata shards and keeps only the papers pass 1 cited. A task writes its file under a
temporary name and renames it, and the driver records the shard in the run state after the
rename: a killed run redoes at most the shards that were in flight. Memory holds one record
(in pass 2 one batch of records, whose ids are looked up in the on-disk index of cited ids),
never a shard. Each task runs in a worker of `machinery/pool.py` (`fn(task, config)`): the config
comes once per worker, and what it builds (a compiled pattern, a splitter) is kept for the
worker's next tasks.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_text
from ..failures import BadRecords, FailureClass
from . import index, read2020, readapi
from .read2020 import NotARecord
from .sentences import make_splitter
from .shards import BadLine, records
from .steps import NO_CITATION, NO_RELATED_WORK, UNLINKED, candidate, classify, sentences_of

CITING = {"2020": read2020.citing_paper, "datasets-api": readapi.citing_paper}
CITED = {"metadata": read2020.cited_paper, "abstracts": readapi.cited_abstract,
         "papers": readapi.cited_metadata}
ID_OF = {"metadata": read2020.record_id, "abstracts": readapi.record_id,
         "papers": readapi.record_id}
_WORKER: dict[str, Any] = {}
BAD = FailureClass.BAD_METADATA.value


@dataclass(frozen=True, slots=True)
class Pass1Config:
    fmt: str
    pattern: str
    splitter: str
    examples: int


def setup_pass1(cfg: Pass1Config) -> None:
    """Compile and load once per worker (a scispaCy model takes seconds to load); the
    pool runs it before its memory cap (what it loads is the worker at rest)."""
    if _WORKER.get("pass1") != cfg:
        _WORKER.update(pass1=cfg, read=CITING[cfg.fmt], pattern=re.compile(cfg.pattern),
                       split=make_splitter(cfg.splitter), examples=cfg.examples)


class Funnel:
    """Counts of one shard and the first few examples of each drop."""

    def __init__(self, examples: int) -> None:
        self.counts: Counter[str] = Counter()
        self.drops: dict[str, list[str]] = {}
        self.bad = BadRecords()
        self.examples = examples

    def drop(self, reason: str, example: str) -> None:
        self.counts[reason] += 1
        kept = self.drops.setdefault(reason, [])
        if len(kept) < self.examples:
            kept.append(example)

    def to_json(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "drops": self.drops, "bad": self.bad.to_json()}


def _atomic_lines(path: Path, lines: Any) -> int:
    n = 0
    with atomic_text(path) as fh:
        for obj in lines:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    return n


def _paper_candidates(paper: Any, funnel: Funnel) -> Any:
    found = False
    for sid, section, s in sentences_of(paper, _WORKER["pattern"], _WORKER["split"]):
        if not found:
            funnel.counts["with_related_work"] += 1
            found = True
        funnel.counts["sentences"] += 1
        why = classify(s)
        if why == NO_CITATION:
            funnel.counts[NO_CITATION] += 1
            continue
        if why is None or why == UNLINKED:
            funnel.counts["single_citation"] += 1
        if why:
            funnel.drop(why, f"{sid}: {s.text}")
            continue
        yield candidate(paper.paper_id, sid, section, s).to_json()
    if not found:
        funnel.drop(NO_RELATED_WORK, paper.paper_id)


def pass1(task: tuple[str, str], cfg: Pass1Config) -> dict[str, Any]:
    """One citing shard (path, out) -> its candidates file; returns its funnel."""
    setup_pass1(cfg)
    path, out = Path(task[0]), Path(task[1])
    funnel = Funnel(_WORKER["examples"])

    def lines() -> Any:
        for lineno, rec in records(path):
            if isinstance(rec, BadLine):
                funnel.bad.add(BAD, f"{path}:{lineno}: {rec.reason}")
                continue
            try:
                paper = _WORKER["read"](rec)
            except (NotARecord, AttributeError, TypeError, ValueError) as e:
                funnel.bad.add(BAD, f"{path}:{lineno}: {e}")
                continue
            funnel.counts["papers_read"] += 1
            yield from _paper_candidates(paper, funnel)
    funnel.counts["candidates"] = _atomic_lines(out, lines())
    return funnel.to_json()


def _good_records(path: Path, bad: BadRecords) -> Any:
    for lineno, rec in records(path):
        if isinstance(rec, BadLine):
            bad.add(BAD, f"{path}:{lineno}: {rec.reason}")
        else:
            yield lineno, rec


def pass2(task: tuple[str, str, str], ids_db: str) -> dict[str, Any]:
    """One abstracts / metadata shard (kind, path, out) -> the cited papers it holds."""
    kind, path, out = task[0], Path(task[1]), Path(task[2])
    read, id_of = CITED[kind], ID_OF[kind]
    bad = BadRecords()

    def lines(con: Any) -> Any:
        for chunk in index.batches(_good_records(path, bad)):
            ids = [(lineno, rec, id_of(rec)) for lineno, rec in chunk]
            wanted = index.wanted(con, [i for _, _, i in ids if isinstance(i, str)])
            for lineno, rec, rec_id in ids:
                if rec_id not in wanted:
                    continue
                try:
                    yield read(rec).to_json()
                except (NotARecord, AttributeError, TypeError, ValueError) as e:
                    bad.add(BAD, f"{path}:{lineno}: {e}")
    con = index.open_ids(ids_db)
    try:
        found = _atomic_lines(out, lines(con))
    finally:
        con.close()
    return {"counts": {"found": found}, "bad": bad.to_json()}
