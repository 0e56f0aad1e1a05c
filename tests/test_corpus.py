"""Corpus-wide steps: percentile thresholds, chronological and given splits, language."""

from __future__ import annotations

import numpy as np
import pytest

from loralay_build.corpus.filters import Thresholds, check_document, compute_thresholds
from loralay_build.corpus.split import SplitError, chronological_fates, date_key, given_name
from loralay_build.failures import FailureClass
from loralay_build.language import detect


def test_thresholds_are_the_runs_percentiles():
    pages = list(range(1, 101))
    words = [10 * p for p in pages]
    t = compute_thresholds(pages, words, 95, 5, min_candidates=100)
    assert t.not_applied is None
    assert t.max_pages == pytest.approx(np.percentile(pages, 95))
    assert t.min_summary_words == pytest.approx(np.percentile(words, 5))
    kept = [p for p, w in zip(pages, words) if check_document(p, w, t) is None]
    assert kept == list(range(6, 96))
    assert check_document(100, 1000, t).cls is FailureClass.TOO_MANY_PAGES
    assert check_document(3, 30, t).cls is FailureClass.SUMMARY_TOO_SHORT


def test_disabled_filters_keep_everything():
    t = compute_thresholds([1, 500], [1, 2], None, None, min_candidates=0)
    assert check_document(10_000, 0, t) is None
    assert t.not_applied is None  # nothing asked, nothing to say


def test_percentiles_of_too_few_candidates_do_not_apply_and_say_so():
    """Two good papers of 5 and 6 pages: p95 is 5.95, so the longer one was dropped
    (`6 pages > 5.95 (p95)`); below `percentile_min_candidates` neither bound applies, the
    percentiles asked are kept, and the reason is a threshold of its own. A run-percentile
    over a handful of papers measures nothing."""
    t = compute_thresholds([5, 6], [120, 90], 95, 5, min_candidates=200)
    assert (t.max_pages, t.min_summary_words) == (None, None)
    assert (t.max_pages_percentile, t.min_summary_percentile) == (95, 5)
    assert t.not_applied == "2 candidates < 200 (percentile_min_candidates)"
    assert t.to_json()["not_applied"] == "2 candidates < 200 (percentile_min_candidates)"
    assert check_document(6, 90, t) is None and check_document(5, 120, t) is None
    assert Thresholds.from_json(t.to_json()) == t  # a refresh reads back the same bar
    at_size = compute_thresholds([5, 6], [120, 90], 95, 5, min_candidates=2)
    assert at_size.not_applied is None and at_size.max_pages == pytest.approx(5.95)
    assert "not_applied" not in at_size.to_json()  # a build that applied them reads as before
    assert Thresholds.from_json(at_size.to_json()) == at_size


def chronological(docs: list[tuple[str, str | None]], proportions: list[float],
                  undated: str = "train") -> dict[str, str | None]:
    """id -> split, through the finish's own ordering (date_key, then id) and fates."""
    dates = [d for _, d in docs]
    order = sorted(range(len(docs)), key=lambda j: (date_key(dates[j]), docs[j][0]))
    fates = chronological_fates(dates, order, proportions, undated)
    return {docs[j][0]: fate for j, fate in zip(order, fates, strict=True)}


def test_chronological_split_oldest_train_newest_test_ties_by_id():
    docs = [(f"d{i:03d}", f"{2000 + i // 10}-{1 + i % 10:02d}-01") for i in range(100)]
    docs += [("same-a", "2020-01-01"), ("same-b", "2020-01-01")]
    a = chronological(docs, [0.94, 0.03, 0.03])
    assert a == chronological(docs[::-1], [0.94, 0.03, 0.03])  # input order does not matter
    counts = {s: sum(1 for v in a.values() if v == s) for s in ("train", "validation", "test")}
    assert counts == {"train": 96, "validation": 3, "test": 3}
    assert a["same-b"] == "test" and a["d000"] == "train"
    assert {i: s for i, s in a.items() if s != "train"} == {
        "d096": "validation", "d097": "validation", "d098": "validation",
        "d099": "test", "same-a": "test", "same-b": "test"}
    newest_train = max(d for i, d in docs if a[i] == "train")
    oldest_test = min(d for i, d in docs if a[i] == "test")
    assert newest_train <= oldest_test


def test_small_runs_still_get_every_evaluation_split():
    docs = [(f"d{i}", f"2020-01-0{i + 1}") for i in range(6)]
    a = chronological(docs, [0.9, 0.05, 0.05])
    assert [a[f"d{i}"] for i in range(6)] == ["train"] * 4 + ["validation", "test"]
    two = chronological(docs[:2], [0.9, 0.05, 0.05])
    assert set(two.values()) == {"train"}  # too few to hold out anything
    assert set(chronological(docs, [1.0, 0.0, 0.0]).values()) == {"train"}


def test_year_only_dates_sort_before_dates_in_that_year_and_undated_rule():
    docs = [("x", "2014-03-02"), ("y", "2014"), ("z", None)]
    a = chronological(docs, [0.34, 0.33, 0.33])
    assert (a["y"], a["x"], a["z"]) == ("validation", "test", "train")
    assert chronological(docs, [0.34, 0.33, 0.33], undated="drop")["z"] is None
    with pytest.raises(SplitError):
        chronological(docs, [0.5, 0.5])


def test_given_split_keeps_names_and_rejects_unknown():
    assert [given_name(i, s) for i, s in (("a", "train"), ("b", "val"), ("c", "test"))] == \
        ["train", "validation", "test"]
    with pytest.raises(SplitError, match="holdout"):
        given_name("a", "holdout")


@pytest.mark.parametrize("lang,text", [
    ("fr", "La présente étude analyse la production scientifique des universités françaises "
           "et propose une méthode de classement fondée sur les citations."),
    ("pt", "Este estudo analisa a produção científica das universidades brasileiras e propõe "
           "um método de classificação baseado nas citações recebidas."),
    ("ko", "본 연구는 한국 대학의 과학 연구 성과를 분석하고 "
           "인용 기반의 새로운 평가 방법을 제안한다."),
])
def test_language_share(lang, text):
    g = detect(text * 3)
    assert g.top == lang and g.share(lang) > 0.9


def test_language_of_nothing_or_control_characters():
    assert detect("").top is None
    assert detect("\x00\x01\ufffd").top is None
    assert detect("\u3000\u00a0\x85 \ud800").reliable is False  # Unicode spaces alone


def test_cld2_bytes_equal_the_character_class_applied_to_the_text():
    """cld2's input is cleaned on bytes (translate, one C1 pattern, replaces); on 20,000
    seeded texts over every character the class names, its neighbours, surrogates and
    characters whose UTF-8 shares their bytes, it equals the class applied to the text."""
    import random
    import re

    from loralay_build.language import cld2_bytes

    refused = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ufffe\uffff]")
    pool = [chr(i) for i in range(0x250)] + ["\ufffc", "\ufffd", "\ufffe", "\uffff", "\ud800",
                                             "\udfff", "\u0fff", "\uefbf", "\u3000", "한",
                                             "\U0001f600", "\u2028"]
    rng = random.Random(15)
    for _ in range(20_000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 24)))
        expected = refused.sub(" ", text).encode("utf-8", "ignore")
        assert cld2_bytes(text) == expected, repr(text)


def test_chronological_fates_count_only_the_documents_in_order():
    """The finish passes the dates of every processed document and the positions that
    passed the filters; sizing the splits on all dates put a validation paper in train
    (found on a replicated sample run with the page filter on)."""
    dates = [f"20{10 + i}" for i in range(6)] + [None]
    survivors = [0, 2, 3, 5, 6]  # the documents of 2011 and 2014 were filtered out
    order = sorted(survivors, key=lambda j: date_key(dates[j]))
    got = chronological_fates(dates, order, [0.5, 0.25, 0.25], "drop")
    assert got == [None, "train", "train", "validation", "test"]


@pytest.mark.parametrize("shares", [[0.0, 0.5, 0.5], [1.2, -0.1, -0.1], [0.5, 0.5]])
def test_a_split_takes_the_shares_the_settings_take(shares):
    """One rule for both: a zero train share was refused by the settings and accepted by a
    split called directly; negative shares summing to 1 likewise."""
    from loralay_build.conf import ConfigError, load_settings

    with pytest.raises(SplitError, match="split_proportions"):
        chronological([("a", "2020")], shares)
    with pytest.raises(ConfigError, match="split_proportions"):
        load_settings("local", None, {"manifest": "m.jsonl", "split_proportions": shares})
