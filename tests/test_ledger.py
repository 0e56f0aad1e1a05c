"""The one record of what is done and still current (machinery/ledger.py) and the one retry rule
(failures.py): a result's fingerprint holds what can change it and nothing else; a failure
is retried when a rerun can change it, the same way for documents and CiteSum shards."""

from __future__ import annotations

import pytest

from loralay_build.conf import load_settings
from loralay_build.errors import ConfigError
from loralay_build.failures import RetryRule, check_retry
from loralay_build.machinery.ledger import (
    DOCUMENT,
    Entry,
    Fingerprint,
    Ledger,
    changed_keys,
    digest,
    stale_reason,
)
from loralay_build.pdf.fingerprint import document_fingerprint, settings_print
from loralay_build.records import Candidate
from loralay_build.store.shard import ShardState

FP = Fingerprint.of(candidate="c1", pdf="p1", settings="s1", versions="v1")
LIMITS = {"document_timeout_s": 600.0, "worker_memory_mb": 6144.0,
          "extract_timeout_s": 120.0, "extract_memory_mb": 2048.0}


def test_a_current_result_stands_and_a_changed_part_is_named():
    rule = RetryRule(frozenset(), LIMITS)
    assert stale_reason(Entry("a", FP), FP, rule) is None
    assert stale_reason(None, FP, rule) == "new"
    pdf = Fingerprint.of(candidate="c1", pdf="p2", settings="s1", versions="v1")
    assert stale_reason(Entry("a", FP), pdf, rule) == "because their PDF changed"
    both = Fingerprint.of(candidate="c2", pdf="p1", settings="s1", versions="v2")
    assert FP.changed(both) == ["candidate", "versions"]
    assert stale_reason(Entry("a", FP), both, rule) == "because their metadata changed"
    fewer = Fingerprint.of(candidate="c1", pdf="p1", settings="s1")
    assert fewer.changed(FP) == ["versions"]  # a part gone counts as changed


def test_changed_settings_are_named_by_key():
    rule = RetryRule()
    now = Fingerprint.of(candidate="c1", pdf="p1", settings="s2", versions="v1")
    bodies = {"s1": '{"max_edits": 60, "images": false}', "s2": '{"max_edits": 59, '
              '"images": false}'}
    reason = stale_reason(Entry("a", FP), now, rule,
                          lambda part, old, new: changed_keys(bodies.get(old), bodies.get(new)))
    assert reason == "because `max_edits` changed"


def test_limits_are_not_in_the_document_fingerprint():
    """Raising a limit must not redo a document that succeeded (11 of 11 were, before)."""
    low = load_settings("local", None, {"worker_memory_mb": 512, "document_timeout_s": 10.0,
                                         "extract_timeout_s": 5.0, "extract_memory_mb": 256})
    high = load_settings("local")
    assert settings_print(low.document()) == settings_print(high.document())
    other = load_settings("local", None, {"max_edits": 59})
    assert settings_print(other.document())[0] != settings_print(high.document())[0]
    cand = Candidate("x", "local", "en", {"en": "abstract"})
    at_low = document_fingerprint(cand, "sha", settings_print(low.document())[0], "v")
    at_high = document_fingerprint(cand, "sha", settings_print(high.document())[0], "v")
    assert at_low.digest() == at_high.digest() and at_low.changed(at_high) == []
    at_other = document_fingerprint(cand, "sha", settings_print(other.document())[0], "v")
    assert at_other.changed(at_high) == ["settings"]


@pytest.mark.parametrize("cls,then,now,again", [
    ("timeout", {"document_timeout_s": 10.0}, {"document_timeout_s": 600.0},
     "retried because `document_timeout_s` was raised"),
    ("timeout", {"document_timeout_s": 600.0}, {"document_timeout_s": 10.0}, None),
    ("timeout", {"extract_timeout_s": 10.0}, {"extract_timeout_s": 11.0},
     "retried because `extract_timeout_s` was raised"),
    ("memory", {"worker_memory_mb": 512.0}, {"worker_memory_mb": 9000.0},
     "retried because `worker_memory_mb` was raised"),
    ("memory", {"shard_timeout_s": 1.0, "worker_memory_mb": 512.0},
     {"shard_timeout_s": 100.0, "worker_memory_mb": 512.0}, None),  # the other limit
    ("timeout", {"shard_timeout_s": 1.0}, {"shard_timeout_s": 100.0},
     "retried because `shard_timeout_s` was raised"),
    ("scanned", {"document_timeout_s": 10.0}, {"document_timeout_s": 600.0}, None),
    ("internal_error", {}, {}, "retried after internal_error"),
    ("unreachable", {}, {}, "retried after unreachable"),
    ("corrupted", {}, {}, None),
])
def test_a_failure_by_a_limit_is_retried_once_that_limit_is_raised(cls, then, now, again):
    assert RetryRule(frozenset(), now).why_again(cls, then) == again


def test_retry_classes_are_one_set_for_every_source():
    assert check_retry(("timeout", "memory", "forbidden")) == {"timeout", "memory", "forbidden"}
    with pytest.raises(ConfigError, match="--retry scanned: not a class a rerun can retry"):
        check_retry(("scanned",))
    rule = RetryRule(frozenset({"timeout"}), LIMITS)
    assert rule.why_again("timeout", LIMITS) == "retried as asked (--retry timeout)"
    assert rule.why_again("memory", LIMITS) is None
    assert rule.classes() == {"internal_error", "unreachable", "timeout"}


def test_entries_are_stored_with_their_transaction(tmp_path):
    with ShardState(tmp_path / "s.sqlite") as st:
        led = Ledger(st, DOCUMENT)
        with st.transaction():
            led.put(Entry("a", FP, durations={"extract": 0.5}, limits=LIMITS))
        with pytest.raises(RuntimeError), st.transaction():
            led.put(Entry("b", FP, "timeout", "process", "ran over", LIMITS))
            raise RuntimeError("killed between the two writes")
        other = Ledger(st, "citesum-pass1")
        with st.transaction():
            other.put(Entry("a", FP, "memory", "citesum-pass1", "ran over", {}))
    with ShardState(tmp_path / "s.sqlite") as st:
        assert [e.key for e in Ledger(st, DOCUMENT).entries()] == ["a"]
        got = Ledger(st, DOCUMENT).get("a")
        assert got == Entry("a", FP, durations={"extract": 0.5}, limits=LIMITS)
        assert got is not None and got.ok and got.fingerprint.digest() == FP.digest()
        assert Ledger(st, "citesum-pass1").get("a").failure == "memory"


def test_digest_ignores_key_order_and_sees_values():
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
