"""The corpus-wide finish: thresholds, filters, splits, then the dataset and the report.

It reads per-document summaries from every shard's state (never whole documents),
decides each document's fate, then streams the kept documents split by split from
the shard states into the Parquet writer. Running it twice gives the same bytes of
decisions; the dataset folder is replaced only when the new one is complete.
"""

from __future__ import annotations

import datetime as dt
import logging
import platform
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..corpus.filters import Thresholds, check_document, compute_thresholds
from ..corpus.split import SPLITS, Dated, chronological, chronological_key, given
from ..failures import FailureClass
from ..images.finish import write_images_config
from ..records import ProcessedDoc
from ..settings import CommonSettings, CorpusSettings
from ..state import OK, RunState
from .codec import decode
from .layout import RunLayout
from .preflight import ToolVersions

log = logging.getLogger("loralay.finish")


class IncompleteRun(RuntimeError):
    pass


@dataclass
class Decisions:
    thresholds: Thresholds
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # every input id
    kept: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in SPLITS})
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)  # kept ids only
    where: dict[str, int] = field(default_factory=dict)  # kept id -> shard state index
    funnel: list[tuple[str, int]] = field(default_factory=list)


def fetch_outcomes(fstate: RunState) -> tuple[dict[str, dict[str, Any]], int, int]:
    """Outcomes of candidates the fetch gave up on; and how many were proposed / fetched."""
    out: dict[str, dict[str, Any]] = {}
    proposed = fetched = 0
    for r in fstate.results("fetch"):
        proposed += 1
        if r.status == OK:
            fetched += 1
        else:
            out[r.doc_id] = {"status": "dropped", "stage": "fetch", "class": r.failure_class,
                             "message": r.message}
    return out, proposed, fetched


def process_outcomes(states: list[RunState], current: set[str]
                     ) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Per-document outcomes of the documents fetched now (a result left by a document the
    run no longer has is ignored)."""
    out: dict[str, dict[str, Any]] = {}
    done: set[str] = set()
    for st in states:
        for r in st.results("process"):
            if r.doc_id not in current:
                continue
            done.add(r.doc_id)
            if r.status != OK:
                stage, _, msg = (r.message or "").partition(": ")
                out[r.doc_id] = {"status": "dropped", "stage": stage or "process",
                                 "class": r.failure_class, "message": msg or r.message}
    return out, done


def check_complete(fetched: set[str], done: set[str]) -> None:
    missing = [i for i in fetched if i not in done]
    if missing:
        raise IncompleteRun(f"{len(missing)} fetched documents have no result yet (e.g. "
                            f"{sorted(missing)[0]}): run the missing shards, or rerun `build`")


def decide(cs: CorpusSettings, layout: RunLayout, states: list[RunState]) -> Decisions:
    with RunState(layout.fetch_db) as fstate:
        outcomes, proposed, fetched = fetch_outcomes(fstate)
        current = fstate.ids_with("fetch", OK)
    proc_out, done = process_outcomes(states, current)
    check_complete(current, done)
    outcomes.update(proc_out)
    survivors: list[tuple[int, dict[str, Any]]] = [
        (i, s) for i, st in enumerate(states) for s in st.document_summaries()
        if s["id"] in current and s["id"] not in proc_out]
    t = compute_thresholds([s["pages"] for _, s in survivors],
                           [s["summary_words"] for _, s in survivors],
                           cs.max_pages_percentile, cs.min_summary_percentile)
    d = Decisions(t, outcomes)
    d.funnel = [("proposed", proposed), ("fetched", fetched), ("processed", len(survivors))]
    kept = _apply_filters(d, survivors)
    d.funnel.append(("filtered", len(kept)))
    _assign_splits(d, kept, cs)
    d.funnel.append(("kept", sum(len(v) for v in d.kept.values())))
    return d


def _apply_filters(d: Decisions, survivors: list[tuple[int, dict[str, Any]]]
                   ) -> list[tuple[int, dict[str, Any]]]:
    kept = []
    for i, s in survivors:
        fail = check_document(s["pages"], s["summary_words"], d.thresholds)
        if fail is None:
            kept.append((i, s))
        else:
            d.outcomes[s["id"]] = {"status": "dropped", "stage": "filter",
                                   "class": fail.cls.value, "message": fail.message}
    return kept


def _assign_splits(d: Decisions, kept: list[tuple[int, dict[str, Any]]],
                   cs: CorpusSettings) -> None:
    dated = [Dated(s["id"], s.get("publication_date"), s.get("given_split")) for _, s in kept]
    if cs.split_mode == "given":
        assignment = given(dated)
    else:
        assignment = chronological(dated, cs.split_proportions, cs.undated)
    for (i, s), _ in sorted(zip(kept, dated), key=lambda x: chronological_key(x[1])):
        split = assignment[s["id"]]
        if split is None:
            d.outcomes[s["id"]] = {"status": "dropped", "stage": "split",
                                   "class": FailureClass.UNDATED.value,
                                   "message": "no publication date (undated: drop)"}
            continue
        d.kept[split].append(s["id"])
        d.summaries[s["id"]] = s
        d.where[s["id"]] = i
        d.outcomes[s["id"]] = {"status": "kept", "split": split}


def kept_documents(d: Decisions, states: list[RunState], split: str) -> Iterator[ProcessedDoc]:
    """Streams one split's documents, in chronological order, from the shard states."""
    for doc_id in d.kept[split]:
        yield decode(states[d.where[doc_id]].document_payload(doc_id))


def open_shard_states(layout: RunLayout, num_shards: int) -> list[RunState]:
    paths: list[Path] = layout.shard_dbs(num_shards)
    if not paths:
        raise IncompleteRun(f"{layout.state_dir}: no processed shards to finish")
    return [RunState(p) for p in paths]


def _outcome(o: dict[str, Any]) -> Any:
    from ..write import Outcome

    if o["status"] == "kept":
        return Outcome.kept(o["split"])
    return Outcome.dropped(o["class"], o["stage"], o["message"] or "")


def _doc_facts(d: Decisions) -> Iterator[Any]:
    from ..write import DocFacts

    for split, ids in d.kept.items():
        for doc_id in ids:
            s = d.summaries[doc_id]
            yield DocFacts(id=doc_id, split=split, article_words=s["article_words"],
                           summary_words=s["summary_words"], pages=s["pages"],
                           language_share=s["language_share"], leak=s["leakage"],
                           words_repaired=s.get("words_repaired", 0),
                           words_unrepaired=s.get("words_unrepaired", 0))


def split_rule(cs: CorpusSettings) -> str:
    if cs.split_mode == "given":
        return "the split given by the source (kept as published)"
    p = "/".join(f"{100 * x:g}" for x in cs.split_proportions)
    return (f"chronological by publication date, {p} (train/validation/test), ties by id; "
            f"undated documents: {cs.undated}")


def finish_run(settings: CommonSettings, layout: RunLayout, num_shards: int,
               versions: ToolVersions) -> Decisions:
    """Decide every document's fate from the current results, write the dataset and report."""
    from ..write import CardFacts, RunFacts, write_dataset, write_report

    cs = settings.corpus()
    states = open_shard_states(layout, num_shards)
    try:
        d = decide(cs, layout, states)
        name = cs.dataset_name or f"loralay-{settings.source}"
        language = getattr(settings, "language", None)
        thresholds = d.thresholds.to_json()
        facts = CardFacts(name=name, source=settings.source, language=language,
                          config_name=cs.config_name, license=cs.license,
                          split_rule=split_rule(cs), thresholds=thresholds,
                          images=settings.images)
        # before the card that names it: `images/` is complete whenever the card lists it
        costs = write_images_config(layout.out, settings.images, d, states)
        splits = {s: kept_documents(d, states, s) for s in SPLITS}
        write_dataset(layout.out, splits, facts, rows_per_shard=cs.rows_per_shard,
                      row_group_bytes=cs.row_group_bytes, features=cs.features)
        run = RunFacts(name=name, source=settings.source, funnel=d.funnel,
                       thresholds=thresholds,
                       outcomes={k: _outcome(v) for k, v in d.outcomes.items()},
                       leak_threshold=cs.leak_threshold, leak_ngram=settings.leak_ngram,
                       language=language, split_rule=split_rule(cs),
                       extra={**provenance(write_config(settings, layout), layout, versions),
                              **costs})
        write_report(layout.out, run, _doc_facts(d))
        _record_decisions(layout, d)
    finally:
        for st in states:
            st.close()
    return d


def write_config(settings: CommonSettings, layout: RunLayout) -> Path:
    """The exact configuration of the build, as YAML a `--config` accepts to redo it."""
    conf = layout.out / "report" / "config.yaml"
    conf.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(settings.user_view(), sort_keys=True, allow_unicode=True)
    conf.write_text(text, encoding="utf-8")
    return conf


def provenance(config_file: Path, layout: RunLayout, versions: ToolVersions
               ) -> dict[str, str]:
    """What a reader needs to trust or redo the build: tool versions, when, and with what."""
    return {"loralay_build": versions.loralay_build, "poppler": versions.poppler,
            "python": platform.python_version(),
            "built_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "config": str(config_file.relative_to(layout.out))}


def _record_decisions(layout: RunLayout, d: Decisions) -> None:
    """The finish's own drops and the thresholds, kept in the state beside the rest."""
    with RunState(layout.finish_db) as st, st.transaction():
        st.clear_stage("finish")
        for doc_id, o in d.outcomes.items():
            if o["status"] == "kept":
                st.record(doc_id, "finish")
            elif o["stage"] in ("filter", "split"):
                st.record_failure_raw(doc_id, "finish", o["class"], o["message"])
        st.set_checkpoint("thresholds", d.thresholds.to_json())
        st.set_checkpoint("funnel", d.funnel)
