"""The corpus-wide finish: thresholds, filters, splits, then the dataset and the report.

It reads per-document summaries from every shard's state (never whole documents) into
columns, decides each document's fate, then streams the kept documents split by split
from the shard states into the Parquet writer and the outcomes into report.json, so what
it holds per document is an id and a few numbers (a 200k-document finish fits in
~0.5 GB; `scripts/bench_finish.py` measures it). Running it twice gives the same bytes of
decisions; the dataset folder is replaced only when the new one is complete.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import platform
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import yaml

from ..atomic import write_text_atomic
from ..corpus.filters import Thresholds, check_document, compute_thresholds
from ..corpus.split import SPLITS, chronological_fates, date_key, given_name
from ..failures import FailureClass
from ..layout import RunLayout
from ..settings import CommonSettings, CorpusSettings
from ..state import OK, RunState
from ..write.doctable import DocTable
from ..write.features import ColumnDoc
from ..write.report import Outcome
from .finish_images import write_images_config
from .ledger import DOCUMENT, Ledger
from .payload import read_columns
from .preflight import ToolVersions

log = logging.getLogger("loralay.finish")


class IncompleteRun(RuntimeError):
    pass


_UNDATED = Outcome.dropped(FailureClass.UNDATED.value, "split",
                           "no publication date (undated: drop)")


class Outcomes(Mapping[str, Outcome]):
    """Every input id's outcome in the report's order (fetch, process and filter drops as
    they came, then the survivors chronologically), read from the decisions' columns
    instead of a dict of dicts."""

    def __init__(self, d: Decisions) -> None:
        self._d = d
        self._index: dict[str, Outcome] | None = None

    def items(self) -> Iterator[tuple[str, Outcome]]:  # type: ignore[override]
        yield from self._d.drops
        for j, split in zip(self._d.order, self._d.fates, strict=True):
            yield self._d.rows.ids[j], (Outcome.kept(split) if split else _UNDATED)

    def values(self) -> Iterator[Outcome]:  # type: ignore[override]
        return (o for _, o in self.items())

    def __iter__(self) -> Iterator[str]:
        return (i for i, _ in self.items())

    def __len__(self) -> int:
        return len(self._d.drops) + len(self._d.order)

    def __getitem__(self, doc_id: str) -> Outcome:
        if self._index is None:  # for a caller that looks one up; the finish never does
            self._index = dict(self.items())
        return self._index[doc_id]


@dataclass
class Decisions:
    thresholds: Thresholds
    rows: DocTable
    drops: list[tuple[str, Outcome]]  # fetch, process and filter drops, in that order
    order: array[int] = field(default_factory=lambda: array("q"))  # kept rows, by date
    fates: list[str | None] = field(default_factory=list)  # their split; None: undated drop
    funnel: list[tuple[str, int]] = field(default_factory=list)
    verdict: str = ""

    @property
    def outcomes(self) -> Outcomes:
        return Outcomes(self)

    def kept_rows(self, split: str) -> Iterator[int]:
        return (j for j, s in zip(self.order, self.fates, strict=True) if s == split)

    @property
    def kept(self) -> dict[str, list[str]]:
        return {s: [self.rows.ids[j] for j in self.kept_rows(s)] for s in SPLITS}


def fetch_outcomes(fstate: RunState) -> tuple[list[tuple[str, Outcome]], int, int]:
    """Outcomes of candidates the fetch gave up on; and how many were proposed / fetched."""
    out: list[tuple[str, Outcome]] = []
    proposed = fetched = 0
    for r in fstate.results("fetch"):
        proposed += 1
        if r.status == OK:
            fetched += 1
        else:
            out.append((r.doc_id, Outcome.dropped(r.failure_class, "fetch",  # type: ignore[arg-type]
                                                  r.message or "")))
    return out, proposed, fetched


def process_outcomes(states: list[RunState], current: set[str]
                     ) -> tuple[list[tuple[str, Outcome]], set[str]]:
    """Per-document outcomes of the documents fetched now (a result left by a document the
    run no longer has is ignored), and the ids that have a result."""
    out: list[tuple[str, Outcome]] = []
    done: set[str] = set()
    for st in states:
        for e in Ledger(st, DOCUMENT).entries():
            if e.key not in current:
                continue
            done.add(e.key)
            if e.failure is not None:
                out.append((e.key, Outcome.dropped(e.failure, e.stage or "process",
                                                   e.message or "")))
    return out, done


def check_complete(fetched: set[str], done: set[str]) -> None:
    missing = [i for i in fetched if i not in done]
    if missing:
        raise IncompleteRun(f"{len(missing)} fetched documents have no result yet (e.g. "
                            f"{sorted(missing)[0]}): run the missing shards, or rerun `build`")


def _survivors(states: list[RunState], current: set[str], failed: set[str]) -> DocTable:
    rows = DocTable()
    for i, st in enumerate(states):
        for s in st.document_summaries():
            if s["id"] in current and s["id"] not in failed:
                rows.add_summary(i, s)
    return rows


def decide(cs: CorpusSettings, layout: RunLayout, states: list[RunState]) -> Decisions:
    with RunState(layout.fetch_db) as fstate:
        drops, proposed, fetched = fetch_outcomes(fstate)
        current = fstate.ids_with("fetch", OK)
    proc_drops, done = process_outcomes(states, current)
    check_complete(current, done)
    del done
    drops += proc_drops
    rows = _survivors(states, current, {i for i, _ in proc_drops})
    del current
    t = compute_thresholds(rows.pages, rows.summary_words, cs.max_pages_percentile,
                           cs.min_summary_percentile)
    d = Decisions(t, rows, drops)
    d.funnel = [("proposed", proposed), ("fetched", fetched), ("processed", len(rows))]
    kept = _apply_filters(d)
    d.funnel.append(("filtered", len(kept)))
    _assign_splits(d, kept, cs)
    d.funnel.append(("kept", sum(1 for f in d.fates if f)))
    return d


def _apply_filters(d: Decisions) -> list[int]:
    """Rows within the thresholds; the others join the drops in row order."""
    kept = []
    r = d.rows
    for j in range(len(r)):
        fail = check_document(r.pages[j], r.summary_words[j], d.thresholds)
        if fail is None:
            kept.append(j)
        else:
            d.drops.append((r.ids[j], Outcome.dropped(fail.cls.value, "filter", fail.message)))
    return kept


def _assign_splits(d: Decisions, kept: list[int], cs: CorpusSettings) -> None:
    """Chronological order (ties by id) of the kept rows, and each one's split."""
    r = d.rows
    if cs.split_mode == "given":
        names = {j: given_name(r.ids[j], r.given[j]) for j in kept}  # refuse in row order
    d.order = array("q", sorted(kept, key=lambda j: (date_key(r.dates[j]), r.ids[j])))
    if cs.split_mode == "given":
        d.fates = [names[j] for j in d.order]
    else:
        d.fates = chronological_fates(r.dates, d.order, cs.split_proportions, cs.undated)
    r.forget_dates()


def kept_documents(d: Decisions, states: list[RunState], split: str) -> Iterator[ColumnDoc]:
    """Streams one split's documents, in chronological order, from the shard states, as
    Arrow columns (no Python object per word)."""
    for j in d.kept_rows(split):
        yield read_columns(states[d.rows.shard[j]].document_payload(d.rows.ids[j]))


def open_shard_states(layout: RunLayout, num_shards: int) -> list[RunState]:
    paths: list[Path] = layout.shard_dbs(num_shards)
    if not paths:
        raise IncompleteRun(f"{layout.state_dir}: no processed shards to finish")
    return [RunState(p, any_thread=True) for p in paths]  # read ahead while writing


def _doc_table(d: Decisions) -> DocTable:
    """The kept rows, split by split in the dataset's row order, for the report."""
    rows = [(j, split) for split in SPLITS for j in d.kept_rows(split)]
    return d.rows.select((j for j, _ in rows), (s for _, s in rows))


def split_rule(cs: CorpusSettings) -> str:
    if cs.split_mode == "given":
        return "the split given by the source (kept as published)"
    p = "/".join(f"{100 * x:g}" for x in cs.split_proportions)
    return (f"chronological by publication date, {p} (train/validation/test), ties by id; "
            f"undated documents: {cs.undated}")


def lean_memory_pool() -> None:
    """Arrow buffers on jemalloc that returns freed pages after 0.1 s.

    Why: each kept document passes through the Arrow pool several times (its decoded
    columns, its row, the row group, the Parquet pages); with the wheel's default mimalloc
    the finish's peak RSS was ~100 MB above what Arrow held (414 MB against 78 MB on
    5,019 replicated corpus documents), with jemalloc returning pages at once 317 MB.
    Returning them at once cost system time, though (each row group faulted its pages in
    again): on 10,017 documents with --workers 2, 9.9 s of it against 5.6 s at 0.1 s, for
    the same peak (505 and 502 MB; jemalloc's default decay: 531 MB) (docs/performance.md).
    An explicit `ARROW_DEFAULT_MEMORY_POOL` is left alone.
    """
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc keeps its default
        return
    pa.set_memory_pool(pool)
    pa.jemalloc_set_decay_ms(100)


def finish_run(settings: CommonSettings, layout: RunLayout, num_shards: int,
               versions: ToolVersions, workers: int = 1) -> Decisions:
    """Decide every document's fate from the current results, write the dataset and report.
    `workers` > 1: a second core makes each next row group while one is written."""
    from ..write import CardFacts, RunFacts, write_dataset, write_report

    lean_memory_pool()
    cs = settings.corpus()
    states = open_shard_states(layout, num_shards)
    try:
        d = decide(cs, layout, states)
        name = cs.dataset_name or f"loralay-{settings.source}"
        language = getattr(settings, "language", None)
        thresholds = d.thresholds.to_json()
        # before the card that names it: `images/` is complete whenever the card lists it
        costs, image_files = write_images_config(layout.out, settings.images, d, states)
        facts = CardFacts(name=name, source=settings.source, language=language,
                          config_name=cs.config_name, license=cs.license,
                          split_rule=split_rule(cs), thresholds=thresholds,
                          images=settings.images, image_files=image_files)
        splits = {s: kept_documents(d, states, s) for s in SPLITS}
        write_dataset(layout.out, splits, facts, rows_per_shard=cs.rows_per_shard,
                      row_group_bytes=cs.row_group_bytes, features=cs.features,
                      read_ahead=workers > 1)
        run = RunFacts(name=name, source=settings.source, funnel=d.funnel,
                       thresholds=thresholds, outcomes=d.outcomes,
                       leak_threshold=cs.leak_threshold, leak_ngram=settings.leak_ngram,
                       language=language, split_rule=split_rule(cs),
                       extra={**provenance(write_config(settings, layout), layout, versions),
                              **costs})
        d.verdict = write_report(layout.out, run, _doc_table(d))["verdict"]
        _record_decisions(layout, d)
    finally:
        for st in states:
            st.close()
    return d


def write_config(settings: CommonSettings, layout: RunLayout) -> Path:
    """The exact configuration of the build, as YAML a `--config` accepts to redo it."""
    conf = layout.out / "report" / "config.yaml"
    write_text_atomic(conf, yaml.safe_dump(settings.user_view(), sort_keys=True,
                                           allow_unicode=True))
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
            if o.status == "kept":
                st.record(doc_id, "finish")
            elif o.stage in ("filter", "split"):
                st.record_failure_raw(doc_id, "finish", o.cls or "", o.message or "")
        st.set_checkpoint("thresholds", d.thresholds.to_json())
        st.set_checkpoint("funnel", d.funnel)
