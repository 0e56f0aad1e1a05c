"""Each corpus step on its own, over a document table made from workers' summaries (as the
per-document steps are tested one by one), then the record of the finish's decisions:
written once, read back by the report and the card, the split of every kept id in it."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from loralay_build.conf import load_settings
from loralay_build.corpus.duplicates import DuplicateDetector
from loralay_build.pdf.corpus_steps import (
    CORPUS_STEPS,
    CorpusRun,
    Duplicates,
    Filters,
    Licenses,
    Splits,
    decide,
    read_table,
    run_corpus_steps,
)
from loralay_build.pdf.decisions import RecordedDecisions, record_decisions
from loralay_build.pdf.refresh import Prior
from loralay_build.records import DocSummary
from loralay_build.store.fetch import FetchState

from .conftest import SAMPLE, build_local
from .helpers.finish import make_run, summary


def corpus(**keys) -> object:
    return load_settings("local", None, {"manifest": "m.jsonl", **keys}).corpus()


def run_of(docs: list[dict], cs, steps=()) -> CorpusRun:
    """The table as the finish reads it (with the `admit` of `steps`), ready for a step."""
    detector = DuplicateDetector()
    drops: list = []
    rows = read_table([_Summaries(docs)], {d["id"] for d in docs}, set(), cs, steps, drops,
                      detector)
    c = CorpusRun(cs, rows, detector)
    c.drops = drops
    return c


class _Summaries:
    """What `read_table` reads of a shard state: its documents' summaries."""

    def __init__(self, docs: list[dict]) -> None:
        self.docs = docs

    def document_summaries(self):
        return iter(DocSummary.from_json(d) for d in sorted(self.docs, key=lambda d: d["id"]))


def ids(c: CorpusRun) -> list[str]:
    return [c.rows.ids[j] for j in c.alive]


def test_the_steps_are_licences_duplicates_filters_splits_in_that_order():
    assert [(s.name, s.funnel) for s in CORPUS_STEPS] == [
        ("licenses", "licensed"), ("duplicates", "distinct"), ("filter", "filtered"),
        ("split", "kept")]


def test_licences_admits_only_the_allowed_and_applies_only_with_a_list():
    cs = corpus(licenses=["cc-by-4.0"])
    docs = [summary("a", 10, 100, "2001"), summary("b", 10, 100, "2002", license="unknown")]
    c = run_of(docs, cs, [Licenses()])
    assert ids(c) == ["a"]
    assert [(i, o.cls, o.stage, o.message) for i, o in c.drops] == [
        ("b", "license_excluded", "licenses", "licence unknown is not in licenses: cc-by-4.0")]
    assert Licenses().applies(cs) and not Licenses().applies(corpus())


def test_duplicates_keeps_the_earliest_copy_and_drops_the_others_in_row_order():
    docs = [summary("a", 10, 100, "2003", body="same"), summary("b", 10, 100, "2001",
                                                                   body="same"),
            summary("c", 10, 100, "2002", body="same"), summary("d", 10, 100, "2004")]
    c = run_of(docs, corpus())
    Duplicates().run(c)
    assert ids(c) == ["b", "d"]
    assert [(i, o.cls, o.message) for i, o in c.drops] == [
        ("a", "duplicate", "same text as b, which is kept"),
        ("c", "duplicate", "same text as b, which is kept")]


def test_filters_take_their_thresholds_from_the_rows_left_only():
    docs = [summary(f"d{k}", 10 + k, 100 + k, "2001") for k in range(10)]
    c = run_of(docs, corpus(max_pages_percentile=80, min_summary_percentile=None,
                            percentile_min_candidates=5))
    c.alive = c.alive[:5]  # rows an earlier step dropped do not count
    Filters().run(c)
    assert c.thresholds.max_pages == pytest.approx(13.2)
    assert ids(c) == ["d0", "d1", "d2", "d3"]
    assert [(i, o.cls, o.stage) for i, o in c.drops] == [("d4", "too_many_pages", "filter")]


def test_filters_of_fewer_rows_left_than_percentile_min_candidates_do_not_apply(caplog):
    """Ten rows read, five left by the steps before: five is what the minimum is held to;
    none is dropped, and the thresholds (and the log) say why."""
    docs = [summary(f"d{k}", 10 + k, 100 + k, "2001") for k in range(10)]
    c = run_of(docs, corpus(max_pages_percentile=80, min_summary_percentile=5,
                            percentile_min_candidates=6))
    c.alive = c.alive[:5]
    with caplog.at_level("INFO", logger="loralay.finish"):
        Filters().run(c)
    assert ids(c) == ["d0", "d1", "d2", "d3", "d4"] and c.drops == []
    assert c.thresholds.to_json() == {
        "max_pages": None, "max_pages_percentile": 80, "min_summary_words": None,
        "min_summary_percentile": 5,
        "not_applied": "5 candidates < 6 (percentile_min_candidates)"}
    assert "percentile filters not applied: 5 candidates < 6" in caplog.text


def test_splits_order_by_date_then_id_and_drop_the_undated_when_asked():
    docs = [summary("b", 10, 100, "2002"), summary("a", 10, 100, "2002"),
            summary("c", 10, 100, None), summary("d", 10, 100, "2001")]
    c = run_of(docs, corpus(split_proportions=[0.34, 0.33, 0.33], undated="drop"))
    Splits().run(c)
    assert [c.rows.ids[j] for j in c.order] == ["c", "d", "a", "b"]
    assert c.fates == [None, "train", "validation", "test"]
    assert ids(c) == ["d", "a", "b"]


def test_splits_by_language_split_each_language_by_its_own_dates():
    """Issue 46, 11: `split_mode: chronological_by_language`; plain chronological order
    gives the newest papers (here all Korean) every evaluation place."""
    en = [{**summary(f"en{k}", 10, 100, f"20{10 + k}"), "language": "en"} for k in range(6)]
    ko = [{**summary(f"ko{k}", 10, 100, f"20{20 + k}"), "language": "ko"} for k in range(4)]
    split = [0.5, 0.25, 0.25]
    plain = run_of(en + ko, corpus(split_proportions=split))
    Splits().run(plain)
    assert {c: [plain.rows.ids[j] for j, f in zip(plain.order, plain.fates, strict=True)
                if f == c] for c in ("validation", "test")} == {
        "validation": ["ko0", "ko1"], "test": ["ko2", "ko3"]}
    c = run_of(en + ko, corpus(split_proportions=split, split_mode="chronological_by_language"))
    Splits().run(c)
    assert [c.rows.ids[j] for j in c.order] == [d["id"] for d in en + ko]  # still by date
    fate = dict(zip((c.rows.ids[j] for j in c.order), c.fates, strict=True))
    assert [fate[f"en{k}"] for k in range(6)] == ["train"] * 2 + ["validation"] * 2 + ["test"] * 2
    assert [fate[f"ko{k}"] for k in range(4)] == ["train", "train", "validation", "test"]


def test_run_steps_writes_one_funnel_line_per_step_that_has_one():
    docs = [summary("a", 10, 100, "2001", body="x"), summary("b", 10, 100, "2002", body="x"),
            summary("c", 10, 100, "2003")]
    c = run_of(docs, corpus())
    run_corpus_steps(c, [s for s in CORPUS_STEPS if s.applies(c.cs)])
    assert c.funnel == [("distinct", 2), ("filtered", 2), ("kept", 2)]


def test_the_record_reads_back_every_outcome_in_order_with_split_and_shard(tmp_path):
    docs = [summary("d1", 10, 100, "2001"), summary("d2", 12, 120, "2005-03"),
            summary("d3", 500, 150, "2002"), summary("d7", 13, 130, "2000")]
    layout, shard = make_run(tmp_path, docs, {"broken": "corrupted"}, ["missing"])
    cs = corpus(max_pages_percentile=90, split_proportions=[0.5, 0.25, 0.25],
                percentile_min_candidates=0)
    try:
        d = decide(cs, layout, [shard])
    finally:
        shard.close()
    record_decisions(layout.finish_db, d)
    with RecordedDecisions(layout.finish_db) as rec:
        assert list(rec.items()) == list(d.outcomes.items())
        assert len(rec) == 6 and rec["d3"].cls == "too_many_pages"
        assert rec.kept_counts() == {"train": 1, "validation": 1, "test": 1}
        assert [rec.split_and_shard(i) for i in ("d7", "d1", "d2", "d3")] == [
            ("train", 0), ("validation", 0), ("test", 0), None]
        assert rec.funnel() == [list(f) for f in d.funnel]
        assert rec.thresholds() == d.thresholds.to_json()
    record_decisions(layout.finish_db, d)  # a second finish replaces, never adds
    with RecordedDecisions(layout.finish_db) as rec:
        assert len(rec) == 6


@pytest.mark.e2e
def test_a_build_records_the_split_of_every_kept_id_as_the_dataset_has_it(tmp_path):
    out = tmp_path / "ds"
    build_local(SAMPLE, out, check=True)
    in_parquet = {row["article_id"]: p.name.split("-")[0]
                  for p in sorted((out / "data").glob("*.parquet"))
                  for row in pq.read_table(p, columns=["article_id"]).to_pylist()}
    with RecordedDecisions(out / "state" / "finish.sqlite") as rec:
        recorded = {i: o.split for i, o in rec.items() if o.status == "kept"}
        dropped = {i: (o.cls, o.stage) for i, o in rec.items() if o.status != "kept"}
        assert recorded == in_parquet
        assert dropped == {"en_corrupted_sensors": ("corrupted", "extract"),
                           "es_encrypted_tutor": ("encrypted", "extract"),
                           "pt_scanned_aves": ("scanned", "extract")}
        assert {i: rec.split_and_shard(i)[1] for i in recorded} == {i: 0 for i in recorded}


# -- a refresh: the same steps given the dataset so far (`pdf/refresh.py` Prior) -----------


def prior_of(kept: dict[str, str], thresholds=None) -> Prior:
    """A base whose kept ids (in row order) are in shard 0 with these splits."""
    from loralay_build.corpus.filters import Thresholds

    return Prior({i: (s, 0) for i, s in kept.items()},
                 thresholds or Thresholds(None, None, None, None),
                 {i: None for i in kept})


def refresh_of(docs: list[dict], cs, prior: Prior) -> CorpusRun:
    detector = DuplicateDetector()
    drops: list = []
    rows = read_table([_Summaries(docs)], {d["id"] for d in docs}, set(), cs, CORPUS_STEPS,
                      drops, detector, prior)
    c = CorpusRun(cs, rows, detector, (), prior)
    c.drops = drops
    return c


def test_an_old_document_wins_against_any_new_copy_even_an_older_one():
    """The keep rule would keep the earliest copy; an id of the dataset ranks first."""
    docs = [summary("old", 10, 100, "2020", body="same"),
            summary("new_older", 10, 100, "1999", body="same"),
            summary("other", 10, 100, "2021")]
    c = refresh_of(docs, corpus(), prior_of({"old": "test"}))
    Duplicates().run(c)
    assert ids(c) == ["old", "other"]
    assert [(i, o.cls, o.message) for i, o in c.drops] == [
        ("new_older", "duplicate", "same text as old, which is kept")]


def test_a_new_document_joining_two_old_ones_never_drops_an_old_one():
    a = [f"a{k}" for k in range(80)]
    b = [f"b{k}" for k in range(80)]
    from loralay_build.corpus.prints import doc_print

    docs = [summary("old1", 10, 100, "2001"), summary("old2", 10, 100, "2002"),
            summary("bridge", 10, 100, "2003")]
    docs[0]["print"] = doc_print(a).to_str()
    docs[1]["print"] = doc_print(b).to_str()
    docs[2]["print"] = doc_print(a).to_str()
    docs[2]["pdf_sha256"] = docs[1]["pdf_sha256"]  # the same PDF as old2, the text of old1
    c = refresh_of(docs, corpus(), prior_of({"old1": "train", "old2": "train"}))
    Duplicates().run(c)
    assert ids(c) == ["old1", "old2"]
    assert [i for i, _ in c.drops] == ["bridge"]
    assert set(c.duplicates) == {"bridge"}


def test_a_refresh_applies_the_bases_thresholds_and_never_drops_an_old_document():
    """Percentiles of the new rows would move the bar (p50 of 3, 4, 50 pages is 4); the
    base's max_pages = 20 keeps `new_ok` and drops `new_long`; `old_long` stays."""
    from loralay_build.corpus.filters import Thresholds

    t = Thresholds(20.0, None, 95.0, None)
    docs = [summary("old_long", 60, 100, "2001"), summary("new_ok", 4, 100, "2020"),
            summary("new_small", 3, 100, "2021"), summary("new_long", 50, 100, "2022")]
    c = refresh_of(docs, corpus(max_pages_percentile=50), prior_of({"old_long": "train"}, t))
    Filters().run(c)
    assert c.thresholds == t
    assert ids(c) == ["new_ok", "new_small", "old_long"]
    assert [(i, o.cls, o.message) for i, o in c.drops] == [
        ("new_long", "too_many_pages", "50 pages > 20 (p95)")]


def test_a_refresh_splits_the_new_rows_alone_and_keeps_the_old_ones_first_as_they_were():
    """20 new dated rows at 90/5/5: 18 train, 1 validation, 1 test, by date; the old rows
    keep their split (even a test one older than every new row) in the base's order."""
    old = {"o2": "test", "o1": "train"}
    docs = [summary("o1", 10, 100, "2030"), summary("o2", 10, 100, "1990")]
    docs += [summary(f"n{k:02d}", 10, 100, f"{2000 + k}") for k in range(20)]
    c = refresh_of(docs, corpus(), prior_of(old))
    Splits().run(c)
    got = [(c.rows.ids[j], f) for j, f in zip(c.order, c.fates)]
    assert got[:2] == [("o2", "test"), ("o1", "train")]
    assert got[2:] == [(f"n{k:02d}", "train") for k in range(18)] + [
        ("n18", "validation"), ("n19", "test")]


def test_a_refresh_keeps_an_old_id_the_source_no_longer_offers_and_lists_it(tmp_path):
    """`missing`: kept before, not fetched now; it stays kept with its split; its old
    fetch or per-document failure now never drops it."""
    docs = [summary("gone", 10, 100, "2001"), summary("stays", 10, 100, "2002"),
            summary("new", 10, 100, "2003")]
    layout, shard = make_run(tmp_path, docs, {}, [])
    with FetchState(layout.fetch_db) as fstate:
        fstate.forget_candidates_except({"stays", "new"})
    try:
        d = decide(corpus(), layout, [shard],
                   prior=prior_of({"gone": "validation", "stays": "train"}))
    finally:
        shard.close()
    assert d.missing == ["gone"]
    assert [(i, o.status, o.split) for i, o in d.outcomes.items()] == [
        ("gone", "kept", "validation"), ("stays", "kept", "train"), ("new", "kept", "train")]
    assert [d.rows.ids[j] for s in ("train", "validation", "test")
            for j in d.new_rows(s)] == ["new"]


def test_a_refresh_honours_a_given_split_for_the_new_rows_and_keeps_the_old_ones():
    docs = [summary("old", 10, 100, "2001"), summary("n1", 10, 100, "2002"),
            summary("n2", 10, 100, "2003")]
    docs[0]["given_split"], docs[1]["given_split"], docs[2]["given_split"] = \
        "train", "test", "val"  # old's given split changed upstream: it stays in validation
    c = refresh_of(docs, corpus(split_mode="given"), prior_of({"old": "validation"}))
    Splits().run(c)
    assert [(c.rows.ids[j], f) for j, f in zip(c.order, c.fates)] == [
        ("old", "validation"), ("n1", "test"), ("n2", "validation")]


@pytest.mark.e2e
def test_percentiles_of_a_small_build_do_not_apply_and_the_report_says_so(tmp_path):
    """Two good sample papers (3 and 4 pages) with the paper's filters (p95 pages, p5
    summary length): p95 is 3.95 pages, so the 4-page one was dropped as `too_many_pages`.
    Of two candidates (< 200) the percentiles measure nothing: both are kept, and
    report.json and report.md say why; a rerun that lowers the minimum applies them, as a
    fresh build of those settings would."""
    import json

    from .conftest import config

    lines = {json.loads(x)["id"]: json.loads(x) for x in SAMPLE.read_text().splitlines()}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(
        json.dumps({**lines[i], "file": str(SAMPLE.parent / lines[i]["file"])}) + "\n"
        for i in ("en_twocol_graphs", "en_structured_trial")))
    out = tmp_path / "ds"
    on = {"max_pages_percentile": 95, "min_summary_percentile": 5}
    build_local(manifest, out, "--config", str(config(tmp_path, **on)), check=True)
    report = json.loads((out / "report.json").read_text())
    assert {i: o["status"] for i, o in report["documents"].items()} == {
        "en_twocol_graphs": "kept", "en_structured_trial": "kept"}
    assert report["thresholds"] == {
        "max_pages": None, "max_pages_percentile": 95, "min_summary_words": None,
        "min_summary_percentile": 5,
        "not_applied": "2 candidates < 200 (percentile_min_candidates)"}
    assert "| not_applied | 2 candidates < 200 (percentile_min_candidates) |" in \
        (out / "report.md").read_text()

    build_local(manifest, out, "--config",
                str(config(tmp_path, **on, percentile_min_candidates=2)), check=True)
    again = json.loads((out / "report.json").read_text())
    assert again["documents"]["en_structured_trial"] == {
        "status": "dropped", "class": "too_many_pages", "stage": "filter",
        "message": "4 pages > 3.95 (p95)"}
    assert "not_applied" not in again["thresholds"]
