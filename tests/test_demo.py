"""The CI smoke run: the README's demo build on the committed sample corpus.

Needs nothing beyond the repository, so it runs on every machine, with or without
../shared. It checks what a new user looks at first: every input accounted for, the
broken files classed, no abstract left in a kept body, three non-empty splits, and a
folder that `datasets.load_dataset` reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SAMPLE

BROKEN = {"en_corrupted_sensors": "corrupted", "es_encrypted_tutor": "encrypted",
          "pt_scanned_aves": "scanned"}


pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def demo(built_sample) -> tuple[Path, subprocess.CompletedProcess]:
    """The README's demo: the sample built with the CLI, two workers (`make demo`)."""
    return built_sample


def test_every_sample_document_is_kept_or_dropped_for_its_reason(demo):
    out, proc = demo
    ids = [json.loads(x)["id"] for x in SAMPLE.read_text().splitlines() if x.strip()]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert sorted(docs) == sorted(ids)
    for stem, cls in BROKEN.items():
        assert (docs[stem]["status"], docs[stem]["class"]) == ("dropped", cls)
        assert any(stem in ln and f": {cls}: " in ln for ln in proc.stderr.splitlines())
    kept = [i for i, o in docs.items() if o["status"] == "kept"]
    assert len(kept) >= 5
    assert {i[:2] for i in kept} >= {"en", "fr", "es", "ko"}
    last = proc.stderr.strip().splitlines()[-1]
    assert f"done: OK: {len(kept)} kept of {len(ids)}; 0 leaks;" in last
    assert str(out / "report.md") in last


def test_demo_dataset_loads_with_three_splits_and_no_abstract_inside(demo, tmp_path):
    from datasets import load_dataset

    out, _ = demo
    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert set(ds) == {"train", "validation", "test"}
    assert all(len(ds[s]) >= 1 for s in ds)
    for split in ds:
        for row in ds[split]:
            body = " ".join(row["article_words"])
            # authors repeat a sentence of the abstract in the results now and then (the
            # glacier paper does), so most 8-word runs must be gone, not every one
            for text in [row["abstract"]] + [a["text"] for a in row["other_abstracts"]]:
                words = text.split()
                probes = [" ".join(words[i:i + 8]) for i in range(0, len(words) - 8, 4)]
                found = sum(p in body for p in probes)
                assert found <= 0.2 * len(probes), (row["article_id"], found, len(probes))
    report = json.loads((out / "report.json").read_text())
    assert report["leakage"]["above_threshold"] == 0


def test_report_says_how_the_dataset_was_built(demo):
    import yaml

    out, _ = demo
    run = json.loads((out / "report.json").read_text())["run"]
    version = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True).stderr
    assert run["poppler"] in version and run["python"] == sys.version.split()[0]
    used = yaml.safe_load((out / run["config"]).read_text())
    assert used["manifest"] == str(SAMPLE) and used["split_proportions"] == [0.9, 0.05, 0.05]
    assert "| poppler | " in (out / "report.md").read_text()
