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

from .conftest import REPO, SAMPLE, loralay

BROKEN = {"en_corrupted_sensors": "corrupted", "es_encrypted_tutor": "encrypted"}
SCANNED = "pt_scanned_aves"  # kept: `make demo` reads its pages with --ocr auto


pytestmark = pytest.mark.e2e


def demo_arguments(out: Path) -> list[str]:
    """`make demo`'s own `loralay build` line, read from the Makefile (so the test builds
    exactly what the README's first command builds), with its make variables filled in."""
    lines = (REPO / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1]
    recipe = lines.split("\n\n", 1)[0].replace("\\\n", " ")
    command = next(ln for ln in recipe.splitlines() if "loralay build" in ln)
    words = command.split("loralay build", 1)[1].split()
    fill = {"$(OUT)/sample": str(out), "$(WORKERS)": "2",
            "data/sample/manifest.jsonl": str(SAMPLE)}
    return [fill.get(w, w) for w in words if w != "$(CONFIG_ARG)"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The README's demo: `make demo`'s build of the sample, with the CLI."""
    out = tmp_path_factory.mktemp("demo") / "sample"
    args = demo_arguments(out)
    assert "--ocr" in args and not any("$(" in a for a in args), args
    return out, loralay("build", *args, check=True)


def test_every_sample_document_is_kept_or_dropped_for_its_reason(demo):
    out, proc = demo
    ids = [json.loads(x)["id"] for x in SAMPLE.read_text().splitlines() if x.strip()]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert sorted(docs) == sorted(ids)
    for stem, cls in BROKEN.items():
        assert (docs[stem]["status"], docs[stem]["class"]) == ("dropped", cls)
        assert any(stem in ln and f": {cls}: " in ln for ln in proc.stderr.splitlines())
    kept = [i for i, o in docs.items() if o["status"] == "kept"]
    assert SCANNED in kept and len(kept) == len(ids) - len(BROKEN)
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
    scanned = [row for split in ds for row in ds[split] if row["article_id"] == SCANNED]
    assert [row["ocr_pages"] for row in scanned] == [[1, 2]]


def test_report_says_how_the_dataset_was_built(demo):
    import yaml

    out, _ = demo
    run = json.loads((out / "report.json").read_text())["run"]
    version = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True).stderr
    assert run["poppler"] in version and run["python"] == sys.version.split()[0]
    used = yaml.safe_load((out / run["config"]).read_text())
    assert used["manifest"] == str(SAMPLE) and used["split_proportions"] == [0.9, 0.05, 0.05]
    assert "| poppler | " in (out / "report.md").read_text()
