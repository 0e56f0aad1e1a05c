"""The corpus-wide finish: thresholds, filters, splits, then the dataset and the report.

It reads per-document summaries from every shard's state (never whole documents) into
columns, decides each document's fate, then streams the kept documents split by split
from the shard states into the Parquet writer and the outcomes into report.json, so what
it holds per document is an id and a few numbers (a 200k-document finish fits in
~0.5 GB; `scripts/bench_finish.py` measures it). Running it twice gives the same bytes of
decisions; the dataset folder is replaced only when the new one is complete.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import yaml

from ..atomic import utc_now_iso, write_text_atomic
from ..conf import CommonSettings, CorpusSettings
from ..dataset import exclude_datasets
from ..diffs import DatasetDiff
from ..machinery.request import NOTHING_NEW
from ..owned import remove
from ..paths import DATA_DIR, README
from ..records import ColumnDoc
from ..runfolder import RunFolder
from ..splits import SPLITS
from ..store.shard import ShardState
from ..write.doctable import DocTable
from .corpus_steps import CorpusDecisions, IncompleteRun, decide
from .decisions import RecordedDecisions, record_decisions
from .finish_images import write_images_config
from .payload import read_columns
from .preflight import ToolVersions
from .refresh import (
    Base,
    check_refresh,
    commit_base,
    count_line,
    make_diff,
    nothing_new,
    read_base,
    remove_diff,
    row_settings,
    say_untaken,
    source_identity,
    write_diff,
)

log = logging.getLogger("loralay.finish")


def kept_documents(d: CorpusDecisions, states: list[ShardState], split: str) -> Iterator[ColumnDoc]:
    """Streams one split's documents to write (a refresh: its new ones), in chronological
    order, from the shard states, as Arrow columns (no Python object per word)."""
    for j in d.new_rows(split):
        yield read_columns(states[d.rows.shard[j]].document_payload(d.rows.ids[j]))


def open_shard_states(layout: RunFolder, num_shards: int) -> list[ShardState]:
    paths: list[Path] = layout.shard_dbs(num_shards)
    if not paths:
        raise IncompleteRun(f"{layout.state_dir}: no processed shards to finish")
    return [ShardState(p, any_thread=True) for p in paths]  # read ahead while writing


def language_splits(d: CorpusDecisions) -> dict[str, list[str]]:
    """Each kept language's splits, in split order (the card's per-language configs)."""
    held: dict[str, set[str]] = {}
    for split in SPLITS:
        for j in d.kept_rows(split):
            held.setdefault(d.rows.languages[j], set()).add(split)
    return {lang: [s for s in SPLITS if s in splits] for lang, splits in held.items()}


def _doc_table(d: CorpusDecisions) -> DocTable:
    """The kept rows, split by split in the dataset's row order, for the report."""
    rows = [(j, split) for split in SPLITS for j in d.kept_rows(split)]
    return d.rows.select((j for j, _ in rows), (s for _, s in rows))


def split_rule(cs: CorpusSettings) -> str:
    if cs.split_mode == "given":
        return "the split given by the source (kept as published)"
    p = "/".join(f"{100 * x:g}" for x in cs.split_proportions)
    within = " within each language" if cs.split_mode == "chronological_by_language" else ""
    return (f"chronological by publication date{within}, {p} (train/validation/test), ties "
            f"by id; undated documents: {cs.undated}")


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


def give_back_freed_memory() -> None:
    """Returns the C heap's free pages to the system (glibc's `malloc_trim`).

    Why: deciding parses every document's summary (a 1,424-character print among small
    objects) and the duplicate detector's buffers; freed, they leave holes in the heap
    between objects that stay, which the system still counts while the Parquet is
    written, the finish's peak. Elsewhere than glibc, nothing is done."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def finish_run(settings: CommonSettings, layout: RunFolder, num_shards: int,
               versions: ToolVersions, workers: int = 1, refresh: bool = False,
               stopped: str | None = None) -> CorpusDecisions:
    """Decide every document's fate from the current results, write the dataset and report.
    `workers` > 1: a second core makes each next row group while one is written.
    `refresh`: the dataset already built grows by what is new (`refresh.py`); the base it
    grows is committed again only once every file of the new version is in place.
    `stopped`: why this run's harvest stopped early, for the report (its reader sees why
    there are so few documents, or none)."""

    lean_memory_pool()
    cs = settings.corpus()
    base = check_refresh(layout, settings) if refresh else None
    if not refresh:
        _warn_if_refreshed(layout)
    states = open_shard_states(layout, num_shards)
    try:
        d = decide(cs, layout, states, exclude_datasets(cs.exclude_datasets),
                   prior=base.prior if base else None)
        give_back_freed_memory()
        diff = None
        if base is not None:
            diff = make_diff(base, list(d.outcomes.items()), d.duplicates, d.missing,
                             d.untaken)
            say_untaken(diff.untaken)
            if nothing_new(diff, base):
                d.verdict = f"{NOTHING_NEW} v{base.version}; no file rewritten"
                return d
        record_decisions(layout.finish_db, d)
        with RecordedDecisions(layout.finish_db) as recorded:
            d.verdict = _write_outputs(settings, layout, d, recorded, states, workers,
                                       versions, base, diff, stopped)
    finally:
        for st in states:
            st.close()
    return d


def _write_outputs(settings: CommonSettings, layout: RunFolder, d: CorpusDecisions,
                   recorded: RecordedDecisions, states: list[ShardState], workers: int,
                   versions: ToolVersions, base: Base | None = None,
                   diff: DatasetDiff | None = None, stopped: str | None = None) -> str:
    """The dataset, its card and the report, every count and outcome read from the
    recorded decisions; the rows themselves from the shard states. Returns the verdict.
    A refresh (`base`, `diff`) writes its new rows (and pages) only, beside the base's
    files, then `diff.json`; any other build removes a `diff.json` left by one. The base
    is committed last. A build that keeps no document writes no dataset (a card of no
    rows would be published as one): only the report, which says why."""
    from ..write import CardFacts, RunFacts, WriteResult, write_dataset, write_report
    from ..write.report import licenses_of

    cs = settings.corpus()
    name = cs.dataset_name or f"loralay-{settings.source}"
    language = getattr(settings, "language", None)
    thresholds = recorded.thresholds()
    # before the card that names it: `images/` is complete whenever the card lists it; a
    # refresh carries the base's (`check_refresh` recorded them) and adds its new pages
    costs, image_files = write_images_config(
        layout.out, settings.images, d, states,
        carry=(base.image_files or {}) if base is not None else None)
    counts = recorded.kept_counts()
    version = diff.version if diff else 1
    changelog = [*base.changelog, diff.line()] if base and diff else \
        [f"v1: {count_line(counts)}"]
    kept = [j for s in SPLITS for j in d.kept_rows(s)]
    facts = CardFacts(name=name, source=settings.source, language=language,
                      config_name=cs.config_name, license=cs.license,
                      license_counts=licenses_of(d.rows.licenses[j] for s in SPLITS
                                                 for j in d.kept_rows(s)),
                      split_rule=split_rule(cs), thresholds=thresholds,
                      images=settings.images, image_files=image_files,
                      counts=counts, languages=base.languages if base else (),
                      version=version, changelog=changelog, groups=settings.groups,
                      labels=settings.labels, drop_labels=tuple(settings.drop_labels),
                      language_splits=language_splits(d),
                      dropped=dict(Counter(o.cls or "" for _, o in d.drops)),
                      ocr_rows=sum(1 for j in kept if d.rows.ocr_pages[j]),
                      ocr_pages=sum(d.rows.ocr_pages[j] for j in kept))
    if base is None:
        splits = {s: kept_documents(d, states, s) for s in SPLITS}
    else:  # only the splits that grow: none leaves data/ untouched
        splits = {s: kept_documents(d, states, s) for s in SPLITS
                  if next(d.new_rows(s), None) is not None}
    if base is None and not any(counts.values()):
        remove_dataset(layout)
        written = WriteResult({})
    else:
        written = write_dataset(layout.out, splits, facts, rows_per_shard=cs.rows_per_shard,
                                row_group_bytes=cs.row_group_bytes, features=cs.features,
                                read_ahead=workers > 1, carry=base.files if base else None,
                                carried=base.counts() if base else None)
    run = RunFacts(name=name, source=settings.source,
                   funnel=[(str(s), int(n)) for s, n in recorded.funnel()],
                   thresholds=thresholds, outcomes=recorded,
                   leak_threshold=cs.leak_threshold, leak_ngram=settings.leak_ngram,
                   language=language, split_rule=split_rule(cs),
                   duplicates=recorded.duplicates(),
                   bad_records=d.bad_records, stopped=stopped,
                   extra={**provenance(write_config(settings, layout), layout, versions),
                          **costs, **refresh_facts(version, base, diff)})
    report = write_report(layout.out, run, _doc_table(d))
    for warning in report["warnings"]:  # said where the verdict is read, not only in report.md
        log.warning("%s", warning)
    verdict = str(report["verdict"])
    if diff is not None:
        write_diff(layout.out, diff)
    else:
        remove_diff(layout.out)
    commit_base(layout.finish_db, version, written.shards,
                {*(base.languages if base else ()), *written.languages}, thresholds,
                row_settings(settings), source_identity(settings), changelog, d.missing,
                image_files, diff.untaken if diff else None)
    return verdict


def remove_dataset(layout: RunFolder) -> None:
    """The card and `data/` an earlier build of this folder left, which a build keeping no
    document replaces by none."""
    for name in (README, DATA_DIR):
        remove(layout.out / name)


def _warn_if_refreshed(layout: RunFolder) -> None:
    """A plain build of a refreshed folder decides every split again: said once."""
    before = read_base(layout.finish_db)
    if before is not None and before.version > 1:
        log.warning("%s held version %d of its dataset; this build without --refresh "
                    "decides every split again and writes a new version 1", layout.out,
                    before.version)


def refresh_facts(version: int, base: Base | None, diff: DatasetDiff | None) -> dict[str, str]:
    """The report's lines on the version: what a refresh added, and whose thresholds."""
    facts = {"dataset_version": str(version)}
    if base is not None and diff is not None:
        facts["refresh"] = (f"{diff.line()} (since v{base.version}; its rows, splits and "
                            f"files are kept as they were)")
        facts["refresh_thresholds"] = ("those of the dataset's first build, never computed "
                                       "again: an old document is never dropped, nor a new "
                                       "one judged by a moved bar")
    return facts


def write_config(settings: CommonSettings, layout: RunFolder) -> Path:
    """The exact configuration of the build, as YAML a `--config` accepts to redo it."""
    conf = layout.config_file
    write_text_atomic(conf, yaml.safe_dump(settings.user_view(), sort_keys=True,
                                           allow_unicode=True))
    return conf


def provenance(config_file: Path, layout: RunFolder, versions: ToolVersions
               ) -> dict[str, str]:
    """What a reader needs to trust or redo the build: tool versions, when, and with what."""
    return {"loralay_build": versions.loralay_build, "poppler": versions.poppler,
            "python": platform.python_version(),
            "built_at": utc_now_iso(),
            "config": str(config_file.relative_to(layout.out))}
