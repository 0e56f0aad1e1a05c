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
import math
import os
import platform
import sys
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from ..corpus.filters import Thresholds, check_document, compute_thresholds
from ..corpus.split import SPLITS, chronological_fates, date_key, given_name
from ..failures import FailureClass
from ..images.finish import write_images_config
from ..records import ProcessedDoc
from ..settings import CommonSettings, CorpusSettings
from ..state import OK, RunState
from ..write.columns import DocColumns
from ..write.features import ColumnDoc
from ..write.report import Outcome
from .codec import decode
from .columns_payload import is_columnar, read_columns
from .layout import RunLayout
from .preflight import ToolVersions

log = logging.getLogger("loralay.finish")


class IncompleteRun(RuntimeError):
    pass


class Survivors:
    """The processed documents the finish decides on, as columns (one row per document).

    Why columns: a summary dict costs ~1.5 KB and the old per-id dicts of outcomes,
    summaries and shard indexes another ~1 KB; at arXiv-Lay's 215 K documents that was
    gigabytes. Here a row is its id, a few machine numbers and its leak shares.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.shard = array("i")
        self.pages = array("q")
        self.summary_words = array("q")
        self.article_words = array("q")
        self.repaired = array("q")  # words whose ligature codes were repaired (glyphs.py)
        self.unrepaired = array("q")  # words still holding U+FFFD
        self.share = array("d")  # NaN: no share
        self.dates: list[str | None] = []  # emptied once the splits are decided
        self.given: list[str | None] = []
        # abstract-language leak shares, sorted by language, of row j at
        # leak_start[j]:leak_start[j + 1]
        self.leak_start = array("q", [0])
        self.leak_lang: list[str] = []
        self.leak_share = array("d")

    def add(self, shard: int, s: dict[str, Any]) -> None:
        self.ids.append(s["id"])
        self.shard.append(shard)
        self.pages.append(s["pages"])
        self.summary_words.append(s["summary_words"])
        self.article_words.append(s["article_words"])
        self.repaired.append(s.get("words_repaired", 0))
        self.unrepaired.append(s.get("words_unrepaired", 0))
        share = s["language_share"]
        self.share.append(math.nan if share is None else share)
        self.dates.append(s.get("publication_date"))
        self.given.append(s.get("given_split"))
        for lang, v in sorted(s["leakage"].items()):
            self.leak_lang.append(sys.intern(lang))
            self.leak_share.append(v)
        self.leak_start.append(len(self.leak_share))

    def leak(self, j: int) -> Iterator[tuple[str, float]]:
        for k in range(self.leak_start[j], self.leak_start[j + 1]):
            yield self.leak_lang[k], self.leak_share[k]

    def language_share(self, j: int) -> float | None:
        return None if math.isnan(self.share[j]) else self.share[j]

    def __len__(self) -> int:
        return len(self.ids)


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
    rows: Survivors
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
        for r in st.results("process"):
            if r.doc_id not in current:
                continue
            done.add(r.doc_id)
            if r.status != OK:
                stage, _, msg = (r.message or "").partition(": ")
                out.append((r.doc_id, Outcome.dropped(r.failure_class, stage or "process",  # type: ignore[arg-type]
                                                      msg or r.message or "")))
    return out, done


def check_complete(fetched: set[str], done: set[str]) -> None:
    missing = [i for i in fetched if i not in done]
    if missing:
        raise IncompleteRun(f"{len(missing)} fetched documents have no result yet (e.g. "
                            f"{sorted(missing)[0]}): run the missing shards, or rerun `build`")


def _survivors(states: list[RunState], current: set[str], failed: set[str]) -> Survivors:
    rows = Survivors()
    for i, st in enumerate(states):
        for s in st.document_summaries():
            if s["id"] in current and s["id"] not in failed:
                rows.add(i, s)
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
    r.dates, r.given = [], []  # no longer needed: their memory goes back now


def kept_documents(d: Decisions, states: list[RunState], split: str
                   ) -> Iterator[ProcessedDoc | ColumnDoc]:
    """Streams one split's documents, in chronological order, from the shard states: a
    columnar payload as Arrow columns (no Python object per word), an older one decoded."""
    for j in d.kept_rows(split):
        payload = states[d.rows.shard[j]].document_payload(d.rows.ids[j])
        yield read_columns(payload) if is_columnar(payload) else decode(payload)


def open_shard_states(layout: RunLayout, num_shards: int) -> list[RunState]:
    paths: list[Path] = layout.shard_dbs(num_shards)
    if not paths:
        raise IncompleteRun(f"{layout.state_dir}: no processed shards to finish")
    return [RunState(p, any_thread=True) for p in paths]  # read ahead while writing


def _doc_columns(d: Decisions) -> DocColumns:
    """The report's per-document numbers, split by split in the dataset's row order."""
    cols, r = DocColumns(), d.rows
    for split in SPLITS:
        for j in d.kept_rows(split):
            cols.add(r.ids[j], split, r.article_words[j], r.summary_words[j], r.pages[j],
                     r.language_share(j), r.leak(j), r.repaired[j], r.unrepaired[j])
    return cols


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
        facts = CardFacts(name=name, source=settings.source, language=language,
                          config_name=cs.config_name, license=cs.license,
                          split_rule=split_rule(cs), thresholds=thresholds,
                          images=settings.images)
        # before the card that names it: `images/` is complete whenever the card lists it
        costs = write_images_config(layout.out, settings.images, d, states)
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
        d.verdict = write_report(layout.out, run, _doc_columns(d))["verdict"]
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
            if o.status == "kept":
                st.record(doc_id, "finish")
            elif o.stage in ("filter", "split"):
                st.record_failure_raw(doc_id, "finish", o.cls or "", o.message or "")
        st.set_checkpoint("thresholds", d.thresholds.to_json())
        st.set_checkpoint("funnel", d.funnel)
