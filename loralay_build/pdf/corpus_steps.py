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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..conf import CorpusSettings
from ..corpus.duplicates import Duplicate, DuplicateDetector
from ..corpus.filters import Thresholds, check_document, compute_thresholds
from ..corpus.prints import DocPrint, ExternalPrint
from ..corpus.split import chronological_fates, chronological_fates_by, date_key, given_name
from ..failures import BadRecords, FailureClass
from ..licenses import LICENSE_STAGE, exclusion
from ..machinery.ledger import DOCUMENT, Ledger
from ..records import DocSummary, Outcome
from ..runfolder import RunFolder
from ..splits import SPLITS
from ..store.fetch import OK, FetchState
from ..store.shard import ShardState
from ..write.doctable import DocTable
from .fingerprint import real_sha256
from .refresh import OldOffers, Prior, Untaken

log = logging.getLogger("loralay.finish")


class IncompleteRun(RuntimeError):
    pass


_UNDATED = Outcome.dropped(FailureClass.UNDATED.value, "split",
                           "no publication date (undated: drop)")


class Outcomes(Mapping[str, Outcome]):
    """Every input id's outcome in the report's order (fetch, process and filter drops as
    they came, then the survivors chronologically), read from the decisions' columns
    instead of a dict of dicts."""

    def __init__(self, d: CorpusDecisions) -> None:
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
class CorpusDecisions:
    thresholds: Thresholds
    rows: DocTable
    drops: list[tuple[str, Outcome]]  # fetch, process and filter drops, in that order
    order: array[int] = field(default_factory=lambda: array("q"))  # kept rows, by date
    fates: list[str | None] = field(default_factory=list)  # their split; None: undated drop
    funnel: list[tuple[str, int]] = field(default_factory=list)
    duplicates: Mapping[str, Duplicate] = field(default_factory=dict)  # dropped id ->
    bad_records: BadRecords = field(default_factory=BadRecords)  # input lines, not documents
    verdict: str = ""
    old: frozenset[int] = frozenset()  # a refresh: the rows already in the dataset
    missing: list[str] = field(default_factory=list)  # ... that the source no longer offers
    untaken: Untaken | None = None  # ... what the source says of the others, not taken

    @property
    def outcomes(self) -> Outcomes:
        return Outcomes(self)

    def kept_rows(self, split: str) -> Iterator[int]:
        return (j for j, s in zip(self.order, self.fates, strict=True) if s == split)

    def new_rows(self, split: str) -> Iterator[int]:
        """The split's rows to write: all of them, but a refresh's old ones."""
        return (j for j in self.kept_rows(split) if j not in self.old)

    @property
    def kept(self) -> dict[str, list[str]]:
        return {s: [self.rows.ids[j] for j in self.kept_rows(s)] for s in SPLITS}


def fetch_outcomes(fstate: FetchState) -> tuple[list[tuple[str, Outcome]], int, int]:
    """Outcomes of candidates the fetch gave up on; and how many were proposed / fetched."""
    out: list[tuple[str, Outcome]] = []
    proposed = fetched = 0
    for r in fstate.results("fetch"):
        proposed += 1
        if r.status == OK:
            fetched += 1
        else:  # a licence outside the list is the licence stage's drop wherever decided
            stage = LICENSE_STAGE if r.failure_class == FailureClass.LICENSE_EXCLUDED.value \
                else "fetch"
            out.append((r.doc_id, Outcome.dropped(r.failure_class, stage,  # type: ignore[arg-type]
                                                  r.message or "")))
    return out, proposed, fetched


def process_outcomes(states: list[ShardState], current: set[str]
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


class CorpusRun:
    """What the corpus steps work on: the document table, the rows still in (row order),
    and what the steps before decided (drops, funnel lines, thresholds, duplicates)."""

    def __init__(self, cs: CorpusSettings, rows: DocTable, detector: DuplicateDetector,
                 external: Iterable[ExternalPrint] = (), prior: Prior | None = None) -> None:
        self.cs, self.rows, self.detector, self.external = cs, rows, detector, external
        # a refresh: what the dataset already holds (kept, split and row as they are)
        self.prior = prior
        self.old = frozenset(j for j, i in enumerate(rows.ids) if prior and i in prior.kept)
        self.alive: list[int] = list(range(len(rows)))
        self.drops: list[tuple[str, Outcome]] = []
        self.funnel: list[tuple[str, int]] = []
        self.thresholds = Thresholds(None, None, None, None)
        self.duplicates: Mapping[str, Duplicate] = {}
        self.order: array[int] = array("q")
        self.fates: list[str | None] = []


class CorpusStep:
    """One corpus-wide rule. `admit` judges a document as the table is read (a rule that
    needs no other document: the licence); `run` judges the table (duplicates,
    percentiles, splits). `name` is the rule a drop records; `funnel` names the funnel
    line counting the documents left after it (None: no line)."""

    name: str = ""
    funnel: str | None = None

    def applies(self, cs: CorpusSettings) -> bool:
        return True

    def admit(self, summary: DocSummary, cs: CorpusSettings) -> Outcome | None:
        return None

    def run(self, c: CorpusRun) -> None:
        return None


class Licenses(CorpusStep):
    """A document outside the `licenses:` allow-list is `license_excluded` (before the
    duplicates, so an excluded copy never stands in for a kept one)."""

    name, funnel = LICENSE_STAGE, "licensed"

    def applies(self, cs: CorpusSettings) -> bool:
        return cs.licenses is not None

    def admit(self, summary: DocSummary, cs: CorpusSettings) -> Outcome | None:
        """The fetch applies the same rule before any PDF is read (`licenses.exclusion`);
        here it meets what an earlier, wider list fetched."""
        excluded = exclusion(summary.license, cs.licenses)
        if excluded is None:
            return None
        return Outcome.dropped(FailureClass.LICENSE_EXCLUDED.value, self.name, excluded)


class Duplicates(CorpusStep):
    """The same paper under two ids, or a paper of an `exclude_datasets` dataset: every
    copy but the kept one is `duplicate`, naming it (`corpus/duplicates.py`)."""

    name, funnel = "duplicates", "distinct"

    def run(self, c: CorpusRun) -> None:
        c.detector.exclude(c.external)
        first = c.prior.kept if c.prior else ()
        # an old document is never dropped: not for a new copy (it ranks first), nor when
        # a new one joins two old ones in one group, nor for an excluded dataset
        old_ids = {c.rows.ids[j] for j in c.old}
        c.duplicates = {i: dup for i, dup in c.detector.decide(first).duplicates.items()
                        if i not in old_ids}
        distinct = []
        for j in c.alive:  # in row order, as every other drop
            dup = c.duplicates.get(c.rows.ids[j])
            if dup is None:
                distinct.append(j)
            else:
                c.drops.append((c.rows.ids[j], Outcome.dropped(
                    FailureClass.DUPLICATE.value, self.name, dup.message())))
        c.alive = distinct


class Filters(CorpusStep):
    """Page-count and summary-length bounds at percentiles of the documents left (none
    when fewer are left than `percentile_min_candidates`)."""

    name, funnel = "filter", "filtered"

    def run(self, c: CorpusRun) -> None:
        r = c.rows
        if c.prior is not None:  # a refresh judges new documents by the dataset's own bar
            c.thresholds = c.prior.thresholds
        else:
            c.thresholds = compute_thresholds([r.pages[j] for j in c.alive],
                                              [r.summary_words[j] for j in c.alive],
                                              c.cs.max_pages_percentile,
                                              c.cs.min_summary_percentile,
                                              min_candidates=c.cs.percentile_min_candidates)
            if c.thresholds.not_applied:
                log.info("percentile filters not applied: %s", c.thresholds.not_applied)
        kept = []
        for j in c.alive:
            if j in c.old:
                kept.append(j)
                continue
            fail = check_document(r.pages[j], r.summary_words[j], c.thresholds)
            if fail is None:
                kept.append(j)
            else:
                c.drops.append((r.ids[j], Outcome.dropped(fail.cls.value, self.name,
                                                          fail.message)))
        c.alive = kept


class Splits(CorpusStep):
    """Chronological order (ties by id) of the rows left, and each one's split: the
    source's own (`split_mode: given`) or by date (`corpus/split.py`)."""

    name, funnel = "split", "kept"

    def run(self, c: CorpusRun) -> None:
        r, cs = c.rows, c.cs
        new = [j for j in c.alive if j not in c.old]  # a refresh splits the new rows alone
        if cs.split_mode == "given":
            names = {j: given_name(r.ids[j], r.given[j]) for j in new}  # refuse in order
        order = sorted(new, key=lambda j: (date_key(r.dates[j]), r.ids[j]))
        if cs.split_mode == "given":
            fates: list[str | None] = [names[j] for j in order]
        elif cs.split_mode == "chronological_by_language":
            fates = chronological_fates_by(r.languages, r.dates, order, cs.split_proportions,
                                           cs.undated)
        else:
            fates = chronological_fates(r.dates, order, cs.split_proportions, cs.undated)
        if c.prior is not None:  # the old rows first, as the dataset holds them
            rank = c.prior.rank()
            old = sorted(c.old, key=lambda j: rank[r.ids[j]])
            order = old + order
            fates = [*(c.prior.kept[r.ids[j]][0] for j in old), *fates]
        c.order, c.fates = array("q", order), fates
        r.forget_dates()
        c.alive = [j for j, f in zip(c.order, c.fates, strict=True) if f]


# the corpus-wide rules, in the order they decide (a drop is recorded by the first rule
# that makes it)
CORPUS_STEPS: tuple[CorpusStep, ...] = (Licenses(), Duplicates(), Filters(), Splits())


def read_table(states: list[ShardState], current: set[str], failed: set[str],
               cs: CorpusSettings, steps: Sequence[CorpusStep], drops: list[tuple[str, Outcome]],
               detector: DuplicateDetector, prior: Prior | None = None,
               offers: OldOffers | None = None) -> DocTable:
    """The processed documents of this run as table rows, each shown to the duplicate
    detector; a document a step does not `admit` joins the drops instead. A refresh's old
    documents are rows whatever the source offers now (read from the shard they are in),
    each shown to `offers`."""
    rows = DocTable()
    old = prior.kept if prior else {}
    for i, st in enumerate(states):
        for s in st.document_summaries():
            if s.id in old:
                if old[s.id][1] != i:
                    continue
                if offers is not None:
                    offers.see(s)
            elif s.id not in current or s.id in failed:
                continue
            refused = None if s.id in old else next(
                (o for o in (step.admit(s, cs) for step in steps) if o), None)
            if refused is not None:
                drops.append((s.id, refused))
                continue
            rows.add_summary(i, s)
            detector.add(s.id, s.publication_date, real_sha256(s.pdf_sha256),
                         DocPrint.from_str(s.print))
    return rows


def decide(cs: CorpusSettings, layout: RunFolder, states: list[ShardState],
           external: Iterable[ExternalPrint] = (),
           steps: Sequence[CorpusStep] = CORPUS_STEPS, prior: Prior | None = None
           ) -> CorpusDecisions:
    """Every id's fate: the fetch's and the per-document steps' drops, then each corpus
    step in turn; `external`: the prints of the `exclude_datasets` datasets. `prior`: a
    refresh's dataset so far (`refresh.py`), whose documents stay kept as they are."""
    with FetchState(layout.fetch_db) as fstate:
        drops, proposed, fetched = fetch_outcomes(fstate)
        current = fstate.ids_with("fetch", OK)
        bad_records = fstate.bad_records()
        offers = None if prior is None else OldOffers(
            fstate, prior, current, layout.checksums_db, cs.split_mode == "given")
    proc_drops, done = process_outcomes(states, current)
    check_complete(current, done)
    del done
    old = prior.kept if prior else {}
    missing = [i for i in old if i not in current]  # kept before, not offered now
    drops = [(i, o) for i, o in drops + proc_drops if i not in old]
    active = [step for step in steps if step.applies(cs)]
    detector = DuplicateDetector()
    admitted: list[tuple[str, Outcome]] = []
    rows = read_table(states, current, {i for i, _ in proc_drops}, cs, active, admitted,
                      detector, prior, offers)
    del current
    if prior is not None:
        have = set(rows.ids)
        lost = [i for i in old if i not in have]
        if lost:
            raise IncompleteRun(f"{len(lost)} documents of the dataset have no result in the "
                                f"run state (e.g. {lost[0]}): the refresh cannot stand on "
                                f"it; rebuild without --refresh")
    c = CorpusRun(cs, rows, detector, external, prior)
    c.drops = drops + admitted
    c.funnel = [("proposed", proposed), ("fetched", fetched),
                ("processed", len(rows) + len(admitted))]
    run_corpus_steps(c, active)
    return CorpusDecisions(c.thresholds, rows, c.drops, c.order, c.fates, c.funnel, c.duplicates,
                     bad_records, old=c.old, missing=sorted(missing),
                     untaken=offers.untaken() if offers else None)


def run_corpus_steps(c: CorpusRun, steps: Sequence[CorpusStep]) -> None:
    """Each step over what the ones before left, with its funnel line."""
    for step in steps:
        step.run(c)
        if step.funnel:
            c.funnel.append((step.funnel, len(c.alive)))
