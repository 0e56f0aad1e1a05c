"""The corpus-wide finish's decisions on a hand-made run state (no PDF, no Parquet): every
input id gets one outcome, in the report's order (fetch drops, per-document drops, filter
drops, then the kept documents by date), thresholds are the run's own percentiles, splits
are chronological, and a fetched document without a result stops the finish."""

from __future__ import annotations

import pytest

from loralay_build.conf import load_settings
from loralay_build.pdf.finish import IncompleteRun, _doc_table, decide
from loralay_build.records import Candidate
from loralay_build.sources import record_fetch_item
from loralay_build.store.fetch import FetchState

from .helpers.finish import make_run, summary


def test_every_id_gets_one_outcome_in_the_reports_order(tmp_path):
    docs = [summary("d1", 10, 100, "2001"), summary("d2", 12, 120, "2005-03"),
            summary("d3", 500, 150, "2002"), summary("d4", 11, 3, "2003"),
            summary("d5", 9, 90, None), summary("d6", 8, 80, "2004-01-02"),
            summary("d7", 13, 130, "2000")]
    layout, shard = make_run(tmp_path, docs, {"broken": "corrupted"}, ["missing"])
    cs = load_settings("local", None, {"max_pages_percentile": 90,
                                       "min_summary_percentile": 10,
                                       "percentile_min_candidates": 0,
                                       "split_proportions": [0.6, 0.2, 0.2]}).corpus()
    try:
        d = decide(cs, layout, [shard])
    finally:
        shard.close()
    out = list(d.outcomes.items())
    assert [i for i, _ in out] == ["missing", "broken", "d3", "d4",
                                   "d5", "d7", "d1", "d6", "d2"]
    assert [(o.status, o.cls, o.stage) for _, o in out[:4]] == [
        ("dropped", "unavailable", "fetch"), ("dropped", "corrupted", "extract"),
        ("dropped", "too_many_pages", "filter"), ("dropped", "summary_too_short", "filter")]
    assert {i: o.split for i, o in out[4:]} == {"d5": "train", "d7": "train", "d1": "train",
                                               "d6": "validation", "d2": "test"}
    assert d.funnel == [("proposed", 9), ("fetched", 8), ("processed", 7), ("distinct", 7),
                        ("filtered", 5), ("kept", 5)]
    assert d.kept == {"train": ["d5", "d7", "d1"], "validation": ["d6"], "test": ["d2"]}
    table = _doc_table(d)
    assert (table.ids, table.splits) == (["d5", "d7", "d1", "d6", "d2"],
                                         ["train", "train", "train", "validation", "test"])


def test_licences_then_duplicates_then_filters_each_drop_in_row_order(tmp_path):
    """The licence filter comes first (a paper outside the allow-list is not anyone's
    duplicate), then duplicates (the earliest copy kept), then the percentiles over the
    distinct documents only: three copies of a short paper must not move the threshold."""
    docs = [summary("a", 10, 100, "2003", body="same"), summary("b", 10, 100, "2001",
                                                                   body="same"),
            summary("c", 10, 100, "2002", body="same", license="all-rights-reserved"),
            summary("d", 10, 100, "2004"), summary("e", 10, 100, "2005")]
    layout, shard = make_run(tmp_path, docs, {}, [])
    cs = load_settings("local", None, {"licenses": ["cc-by-4.0"],
                                       "split_proportions": [0.5, 0.25, 0.25]}).corpus()
    try:
        d = decide(cs, layout, [shard])
    finally:
        shard.close()
    out = list(d.outcomes.items())
    assert [(i, o.status, o.cls, o.stage) for i, o in out] == [
        ("c", "dropped", "license_excluded", "licenses"),
        ("a", "dropped", "duplicate", "duplicates"),
        ("b", "kept", None, None), ("d", "kept", None, None), ("e", "kept", None, None)]
    assert out[0][1].message == "licence all-rights-reserved is not in licenses: cc-by-4.0"
    assert out[1][1].message == "same text as b, which is kept"
    assert d.funnel == [("proposed", 5), ("fetched", 5), ("processed", 5), ("licensed", 4),
                        ("distinct", 3), ("filtered", 3), ("kept", 3)]


def test_a_fetched_document_without_a_result_stops_the_finish(tmp_path):
    layout, shard = make_run(tmp_path, [summary("d1", 3, 50, "2001")], {}, [])
    with FetchState(layout.fetch_db) as fstate:
        record_fetch_item(fstate, Candidate("late", "local", "en", {"en": "a"}))
    try:
        with pytest.raises(IncompleteRun, match="1 fetched documents have no result yet "
                                                r"\(e.g. late\)"):
            decide(load_settings("local").corpus(), layout, [shard])
    finally:
        shard.close()
