"""The run's report: the funnel with the paper's numbers beside it, examples of each drop,
the classed failures; and the card's prose (which steps are the paper's, which the code's)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from ..failures import BadRecords
from ..store.citesum import CiteSumState
from ..write.report import bad_records_lines
from .stages import failed_shards
from .steps import DROPS

# (step, what it counts, the paper's count: Mao et al. 2022, §3 and the summary)
FUNNEL = [
    ("papers_read", "papers read", 81_000_000),
    ("with_related_work", "with a Related Work section", 288_000),
    ("sentences", "Related Work sentences", None),
    ("single_citation", "citing exactly one paper", 426_000),
    ("resolved", "cited paper linked, abstract > min chars", None),
    ("rouge_kept", "kept by the ROUGE gate", 92_946),
]
PAPER_SPLITS = {"train": 83_304, "validation": 4_721, "test": 4_921}
CARD = [
    "A CiteSum-style extreme summarization dataset (Mao, Zhong and Han, \"CiteSum: "
    "Citation Text-guided Scientific Extreme Summarization\", 2022): the input `src` is a "
    "cited paper's abstract, the summary `tgt` one Related Work sentence citing it, the "
    "citation replaced by `REF`.", "",
    "## How it was built", "",
    "- From the released code (morningmoni/CiteSum): Related Work paragraphs (first run under "
    "a header matching `related_work_pattern`), sentence splitting with citation spans kept "
    "whole, links through the bibliography, cited abstracts longer than "
    "`min_cited_abstract_chars`.",
    "- From the paper, not in the released code (reimplemented here): exactly one cited paper "
    "per sentence; ROUGE-1/2/L recall of the sentence (citation removed) in the cited abstract "
    "at least `rouge_recall_min` (`rouge-score`, stemming); the citation replaced by `REF`; "
    "a 90/5/5 split by cited paper.",
    "- Choices of this tool: the sentence splitter (`pysbd` by default, the authors used "
    "scispaCy `en_core_sci_sm`); the cited abstract and titles come from the metadata "
    "(2020 `metadata`, Datasets API `abstracts` / `papers`), where the released code read the "
    "PDF parse's abstract; the split is sha256 of the cited id.",
]


def _sum(funnels: Iterable[dict[str, Any]], keep: int
         ) -> tuple[Counter[str], dict[str, list[str]]]:
    """Counts added up; the first `keep` examples of each drop (not every shard's)."""
    counts: Counter[str] = Counter()
    drops: dict[str, list[str]] = {}
    for f in funnels:
        counts.update(f.get("counts", {}))
        for reason, examples in f.get("drops", {}).items():
            kept = drops.setdefault(reason, [])
            kept.extend(examples[:max(0, keep - len(kept))])
    return counts, drops


def _ratio(n: int | None, prev: int | None) -> str:
    return f"{100 * n / prev:.1f} %" if n is not None and prev else "—"


def funnel_rows(counts: Counter[str]) -> list[dict[str, Any]]:
    rows, prev, paper_prev = [], None, None
    for key, label, paper in FUNNEL:
        n = counts.get(key, 0)
        rows.append({"step": key, "label": label, "count": n, "ratio": _ratio(n, prev),
                     "paper": paper, "paper_ratio": _ratio(paper, paper_prev)})
        prev, paper_prev = n, paper
    return rows


def _bad_records(state: CiteSumState, stages: list[str], keys: dict[str, list[str]]
                 ) -> BadRecords:
    """Every current shard's tally of bad lines, added up (counts per class, first few)."""
    bad = BadRecords()
    for stage in stages:
        for key in keys.get(stage, []):
            bad.merge(BadRecords.from_json(state.task_tally(stage, key).get("bad")))
    return bad


def _verdict(failed_shards: int, bad_records: int) -> str:
    if failed_shards:
        return f"incomplete: {failed_shards} shard(s) failed"
    return "complete" if not bad_records else f"complete, {bad_records} bad records"


def _markdown(rows: list[dict[str, Any]], report: dict[str, Any]) -> str:
    lines = ["# CiteSum build report", "", f"Verdict: **{report['verdict']}**", "",
             "## Funnel", "", "| step | count | of previous | paper | paper's ratio |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        paper = f"{r['paper']:,}" if r["paper"] else "—"
        lines.append(f"| {r['label']} | {r['count']:,} | {r['ratio']} | {paper} | "
                     f"{r['paper_ratio']} |")
    kept = rows[-1]["count"]
    single = rows[3]["count"]
    lines += ["", f"Kept of single-citation sentences: {_ratio(kept, single)} (paper: 21.8 %).",
              "", "## Splits", "", "| split | examples | paper |", "|---|---:|---:|"]
    lines += [f"| {s} | {n:,} | {PAPER_SPLITS[s]:,} |" for s, n in report["splits"].items()]
    lines += ["", "## Examples of each drop", ""]
    for reason in DROPS:
        lines.append(f"- **{reason}** ({report['drops'][reason]['count']:,}):")
        lines += [f"  - {e[:300]}" for e in report["drops"][reason]["examples"]]
    lines += ["", f"## Failed shards ({len(report['failed_shards'])})", ""]
    lines += [f"- {f['stage']} `{f['id']}` {f['class']}: {f['message']}"
              for f in report["failed_shards"]]
    if report["failed_shards"]:
        lines += ["", "A rerun retries an `internal_error` shard, and a `timeout` or `memory` "
                  "one when `shard_timeout_s` / `worker_memory_mb` was raised or with "
                  "`--retry timeout` / `--retry memory`."]
    lines += [""] + bad_records_lines(report["bad_records"], "Lines of the shards that are not "
                                      "records (counted by class, the first few shown): "
                                      "the rest of each shard went on.")
    return "\n".join(lines) + "\n"


def write_report(out: Path, settings: Any, state: CiteSumState, stages: list[str],
                 keys: dict[str, list[str]], splits: dict[str, int]) -> dict[str, Any]:
    """`stages`: pass 1, pass 2, scoring; `keys`: per stage, this run's shard keys that
    succeeded (a shard no longer in the glob is not counted)."""
    citing, scored = keys[stages[0]], keys[stages[-1]]
    funnels = chain((state.task_tally(stages[0], key) for key in citing),
                    (state.task_tally(stages[-1], key) for key in scored))
    counts, drops = _sum(funnels, settings.drop_examples)
    rows = funnel_rows(counts)
    failed = failed_shards(state, stages)
    bad = _bad_records(state, stages, keys)
    report = {
        "verdict": _verdict(len(failed), bad.total),
        "funnel": rows, "splits": splits, "failed_shards": failed,
        "drops": {d: {"count": counts.get(d, 0),
                      "examples": drops.get(d, [])[:settings.drop_examples]} for d in DROPS},
        "bad_records": bad.to_json(), "settings": settings.user_view(),
    }
    write_text_atomic(out / "report.json", json.dumps(report, indent=1, ensure_ascii=False))
    write_text_atomic(out / "report.md", _markdown(rows, report))
    return {**report, "card": CARD}
