"""The PDF pipeline's driver on a hand-made run state (no PDF is opened): which documents a
shard plans to do and why, and how an outcome is recorded, in one transaction."""

from __future__ import annotations

import pytest

from loralay_build.conf import load_settings
from loralay_build.failures import Failure, FailureClass
from loralay_build.machinery.ledger import DOCUMENT, Entry, Ledger
from loralay_build.pdf.driver import document_job, in_shard, plan_shard, record_outcome
from loralay_build.pdf.fingerprint import PdfChecksums
from loralay_build.pdf.preflight import ToolVersions
from loralay_build.pdf.steps import StepResults
from loralay_build.records import Candidate, DocSummary, Rejection
from loralay_build.sources import record_fetch_item
from loralay_build.store.fetch import FetchState
from loralay_build.store.shard import ShardState

VERSIONS = ToolVersions("0.1.0+test", "22.12.0")


def cand(doc_id: str, abstract: str = "An abstract.") -> Candidate:
    return Candidate(doc_id, "local", "en", {"en": abstract}, pdf_path=f"/nowhere/{doc_id}.pdf")


@pytest.fixture
def states(tmp_path):
    fstate, sstate = FetchState(tmp_path / "fetch.sqlite"), ShardState(tmp_path / "shard.sqlite")
    sums = PdfChecksums(tmp_path / "sums.sqlite")
    yield fstate, sstate, sums
    sums.close()
    fstate.close()
    sstate.close()


def plan_of(states, **settings):
    fstate, sstate, sums = states
    job = document_job(load_settings("local", None, settings))
    return plan_shard(fstate, Ledger(sstate, DOCUMENT), 0, 1, job, VERSIONS,
                      frozenset(settings.pop("retry", ())), sums)


def test_a_shard_plans_exactly_its_missing_and_stale_documents(states):
    fstate, sstate, _ = states
    for c in (cand("ok"), cand("edited"), cand("bug"), cand("new")):
        record_fetch_item(fstate, c)
    record_fetch_item(fstate, Rejection("gone", "local", "unavailable", "no file"))
    first = plan_of(states)
    assert first.todo == {"ok", "edited", "bug", "new"} and first.total == 4
    assert first.line() == "starting: 4 documents to do"
    led = Ledger(sstate, DOCUMENT)
    sums = states[2]
    with sstate.transaction():
        led.put(Entry("ok", first.fingerprint(cand("ok"), sums)))
        led.put(Entry("edited", first.fingerprint(cand("edited", "Old abstract."), sums)))
        led.put(Entry("bug", first.fingerprint(cand("bug"), sums), "internal_error", "strip",
                      "KeyError"))
    again = plan_of(states)
    assert again.todo == {"edited", "bug", "new"}
    assert again.line() == ("resuming: 1 of 4 done; 3 to do, of which 1 because their metadata "
                            "changed, 1 retried after internal_error, 1 new")
    assert plan_of(states, worker_memory_mb=9999).todo == again.todo  # a limit: no change
    assert plan_of(states, max_edits=1).todo == {"ok", "edited", "bug", "new"}


def test_an_outcome_lands_whole_with_its_ledger_entry(states):
    fstate, sstate, sums = states
    led = Ledger(sstate, DOCUMENT)
    plan = plan_of(states)
    fp = plan.fingerprint(cand("a"), sums)
    summary = DocSummary(
        id="a", source="local", language="en", publication_date=None, given_split=None,
        pages=2, article_words=10, summary_words=3, language_share=1.0,
        detected_language="en", leakage={"en": 0.0}, words_repaired=0, words_unrepaired=0,
        label_words={"paragraph": 10}, dropped_by_label=0, matches=[], license="unknown",
        print="", pdf_sha256=None, ocr_pages=0, ocr_seconds=0.0)
    done = StepResults("a", [("extract", None, 0.25), ("strip", None, 0.5)],
                       stored=(summary, b"LZA1payload"))
    assert record_outcome(sstate, led, done, None, fp, {"document_timeout_s": 600.0}) == "ok"
    assert sstate.document_payload("a") == b"LZA1payload"
    assert list(sstate.document_summaries()) == [summary]  # read back as it was written
    assert led.get("a") == Entry("a", fp, limits={"document_timeout_s": 600.0},
                                 durations={"extract": 0.25, "strip": 0.5})
    failed = StepResults("a", [("extract", None, 0.25),
                               ("strip", Failure(FailureClass.IRRETRIEVABLE_ABSTRACT,
                                                 "not in the body"), 0.1)])
    assert record_outcome(sstate, led, failed, None, fp, {}) == "irretrievable_abstract"
    entry = led.get("a")
    assert (entry.failure, entry.stage, entry.message) == (
        "irretrievable_abstract", "strip", "not in the body")
    with pytest.raises(KeyError):
        sstate.document_payload("a")  # the earlier result went with the new record


def test_shards_split_ids_stably_and_completely():
    ids = [f"doc-{i}" for i in range(200)]
    owners = [[k for k in range(3) if in_shard(i, k, 3)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    assert {o[0] for o in owners} == {0, 1, 2}
    assert [in_shard("hep-th/9608091", k, 4) for k in range(4)] == [False, True, False, False]
