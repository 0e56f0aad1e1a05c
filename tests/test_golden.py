"""The golden digests (tests/golden/, written by `scripts/golden.py --write` only): each
per-document step's output on the sample and the shared corpus is what was committed, or
its rule constant was bumped (issue 42, 3: "output identical" as a test, not a habit)."""

from __future__ import annotations

import copy
import json

import pytest

from loralay_build.pdftext.poppler import poppler_version

from .conftest import SAMPLE, shared_path

golden = pytest.importorskip("golden")  # scripts/ is on sys.path (conftest)


def saved(name: str) -> dict:
    return json.loads(golden.golden_path(name).read_text(encoding="utf-8"))


def same_poppler(record: dict) -> None:
    """Another Poppler reads other words: the digests hold for the version they name."""
    if record["poppler"] != poppler_version():
        pytest.skip(f"golden digests made with Poppler {record['poppler']}, this is "
                    f"{poppler_version()}")


@pytest.fixture(scope="module")
def sample_now() -> dict:
    return golden.corpus_digests(SAMPLE)


def test_every_step_of_the_sample_is_golden(sample_now):
    record = saved("sample")
    same_poppler(record)
    assert golden.differences(record, sample_now) == []
    assert list(record["rules"]) == list(sample_now["rules"])


def test_every_step_of_the_shared_corpus_is_golden():
    manifest = shared_path("corpus", "manifest.jsonl")
    record = saved("shared-corpus")
    same_poppler(record)
    assert golden.differences(record, golden.corpus_digests(manifest)) == []


def test_a_changed_output_under_the_same_rule_asks_for_the_bump(sample_now):
    """A step's output that moved while its rule constants stayed: the rerun of an old run
    folder would keep the stale result, so the test names the constants to bump."""
    record = copy.deepcopy(sample_now)
    record["documents"]["ko_kci_wifi_parks"]["group"] = "0" * 24
    [line] = golden.differences(record, sample_now)
    assert line.startswith("ko_kci_wifi_parks: group changed (000000000000000000000000 -> ")
    assert line.endswith("while GROUP_RULE, LABEL_RULE did not: bump it, then regenerate")
    record["documents"]["ko_kci_wifi_parks"]["extract"] = "1" * 24  # the first step is named
    [line] = golden.differences(record, sample_now)
    assert line.startswith("ko_kci_wifi_parks: extract changed") and "GLYPH_RULE" in line


def test_new_rules_with_old_digests_ask_for_regeneration(sample_now):
    record = copy.deepcopy(sample_now)
    record["rules"]["strip"] = {"STRIP_RULE": "strip1"}
    assert golden.differences(record, sample_now) == [
        "rules of strip changed but no output did: regenerate with `python "
        "scripts/golden.py --write` (was the bump needed?)"]
    record["documents"]["fr_hal_cover_glaciers"]["strip"] = "2" * 24
    [line] = golden.differences(record, sample_now)
    assert line.startswith("fr_hal_cover_glaciers: strip changed") and "under new rules" in line


def test_a_failed_document_is_golden_at_its_step(sample_now):
    docs = sample_now["documents"]
    assert docs["pt_scanned_aves"] == {"license": "unknown", "extract": "failed: scanned"}
    assert docs["es_encrypted_tutor"]["extract"] == "failed: encrypted"
    kept = [d for d in docs.values() if not any(v.startswith("failed") for v in d.values())]
    # `sections`: the row's structure columns, which no step of its own makes
    assert len(kept) == 8 and all(list(d) == ["license", "extract", "group", "strip", "print",
                                              "sections"] for d in kept)
