"""The corpus-wide decisions: every input id's fate, from the run's current results.

In order: what the fetch gave up on; what a per-document step dropped; documents outside
the `licenses:` allow-list (`license_excluded`); duplicates (the same paper under two ids,
or a paper of an `exclude_datasets` dataset: `corpus/duplicates.py`); the percentile
filters, computed over the documents left; then the splits. Each document's numbers live
in one `DocTable` row (a few numbers, never the words), and the duplicate detector holds
signatures, not texts, so memory stays flat in the number of documents.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ..corpus.duplicates import DocPrint, Duplicate, DuplicateDetector, ExternalPrint
from ..corpus.filters import Thresholds, check_document, compute_thresholds
from ..corpus.split import SPLITS, chronological_fates, date_key, given_name
from ..failures import BadRecords, FailureClass
from ..layout import RunLayout
from ..licenses import UNKNOWN, allowed
from ..settings import CorpusSettings
from ..sources import read_bad_records
from ..state import OK, RunState
from ..write.doctable import DocTable
from ..write.report import Outcome
from .ledger import DOCUMENT, Ledger

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
    duplicates: Mapping[str, Duplicate] = field(default_factory=dict)  # dropped id ->
    bad_records: BadRecords = field(default_factory=BadRecords)  # input lines, not documents
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


def _survivors(states: list[RunState], current: set[str], failed: set[str],
               cs: CorpusSettings, drops: list[tuple[str, Outcome]],
               detector: DuplicateDetector) -> DocTable:
    """The processed documents of this run as table rows (each also shown to the duplicate
    detector); a document outside the licence allow-list joins the drops instead."""
    rows = DocTable()
    for i, st in enumerate(states):
        for s in st.document_summaries():
            if s["id"] not in current or s["id"] in failed:
                continue
            license_id = s.get("license", UNKNOWN)
            if cs.licenses is not None and not allowed(license_id, cs.licenses):
                drops.append((s["id"], Outcome.dropped(
                    FailureClass.LICENSE_EXCLUDED.value, "licenses",
                    f"licence {license_id} is not in licenses: {', '.join(cs.licenses)}")))
                continue
            rows.add_summary(i, s)
            detector.add(s["id"], s.get("publication_date"), _sha(s.get("pdf_sha256")),
                         DocPrint.from_str(s["print"]))
    return rows


def _sha(value: str | None) -> str | None:
    """A real sha256 ("missing", "none" say the PDF could not be hashed)."""
    return value if value and len(value) == 64 else None


def decide(cs: CorpusSettings, layout: RunLayout, states: list[RunState],
           external: Iterable[ExternalPrint] = ()) -> Decisions:
    """Every id's fate; `external`: the prints of the `exclude_datasets` datasets."""
    with RunState(layout.fetch_db) as fstate:
        drops, proposed, fetched = fetch_outcomes(fstate)
        current = fstate.ids_with("fetch", OK)
        bad_records = read_bad_records(fstate)
    proc_drops, done = process_outcomes(states, current)
    check_complete(current, done)
    del done
    drops += proc_drops
    detector = DuplicateDetector()
    before = len(drops)
    rows = _survivors(states, current, {i for i, _ in proc_drops}, cs, drops, detector)
    del current
    d = Decisions(Thresholds(None, None, None, None), rows, drops, bad_records=bad_records)
    d.funnel = [("proposed", proposed), ("fetched", fetched),
                ("processed", len(rows) + len(drops) - before)]
    if cs.licenses is not None:
        d.funnel.append(("licensed", len(rows)))
    detector.exclude(external)
    d.duplicates = detector.decide().duplicates
    distinct = []
    for j, doc_id in enumerate(rows.ids):  # in row order, as every other drop
        dup = d.duplicates.get(doc_id)
        if dup is None:
            distinct.append(j)
        else:
            drops.append((doc_id, Outcome.dropped(FailureClass.DUPLICATE.value, "duplicates",
                                                  dup.message())))
    d.funnel.append(("distinct", len(distinct)))
    d.thresholds = compute_thresholds([rows.pages[j] for j in distinct],
                                      [rows.summary_words[j] for j in distinct],
                                      cs.max_pages_percentile, cs.min_summary_percentile)
    kept = _apply_filters(d, distinct)
    d.funnel.append(("filtered", len(kept)))
    _assign_splits(d, kept, cs)
    d.funnel.append(("kept", sum(1 for f in d.fates if f)))
    return d


def _apply_filters(d: Decisions, rows: list[int]) -> list[int]:
    """The rows within the thresholds; the others join the drops in row order."""
    kept = []
    r = d.rows
    for j in rows:
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


