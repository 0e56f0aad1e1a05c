"""`loralay build --source local` end to end on real PDFs: the dataset a user would load.

The whole real corpus of ../shared is built once per module (about ten seconds) and
several properties are checked on that one run.
"""

from __future__ import annotations

import functools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .conftest import REPO, copy_run, loralay, shared_path

BROKEN = {"en_truncated_jcap": "corrupted", "en_encrypted_phoenix": "encrypted",
          "en_scanned_fama1973": "scanned"}
pytestmark = pytest.mark.e2e


def table(out: Path) -> list[tuple[str, list[dict]]]:
    """The dataset as written: each file in name order, its rows in file order."""
    files = sorted((out / "data").glob("*.parquet"))
    return [(p.name, pq.read_table(p).to_pylist()) for p in files]


@pytest.fixture(scope="module")
def manifest() -> Path:
    return shared_path("corpus", "manifest.jsonl")


@pytest.fixture(scope="module")
def built(built_corpus, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A copy of the session's corpus build: a test here reruns into it."""
    out, proc = built_corpus
    return copy_run(out, tmp_path_factory.mktemp("corpus") / "ds"), proc


def test_every_input_is_accounted_for(built, manifest):
    out, _ = built
    ids = [json.loads(x)["id"] for x in manifest.read_text().splitlines() if x.strip()]
    report = json.loads((out / "report.json").read_text())
    docs = report["documents"]
    assert sorted(docs) == sorted(ids)
    for stem, cls in BROKEN.items():
        assert docs[stem]["status"] == "dropped" and docs[stem]["class"] == cls
    kept = {i for i, o in docs.items() if o["status"] == "kept"}
    assert len(kept) >= 14
    for i, o in docs.items():
        if o["status"] == "dropped":
            assert o["class"] in {"corrupted", "encrypted", "scanned", "too_many_pages",
                                  "summary_too_short", "irretrievable_abstract"}, (i, o)


def test_broken_files_get_one_line_errors(built):
    _, proc = built
    for stem, cls in BROKEN.items():
        lines = [ln for ln in proc.stderr.splitlines() if stem in ln]
        assert lines and f": {cls}: " in lines[0]


def test_dataset_loads_with_datasets_and_nothing_leaks(built, tmp_path):
    from datasets import load_dataset

    out, _ = built
    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    report = json.loads((out / "report.json").read_text())
    kept = {i: o["split"] for i, o in report["documents"].items() if o["status"] == "kept"}
    assert sum(len(ds[s]) for s in ds) == len(kept)
    for split in ds:
        for row in ds[split]:
            assert kept[row["article_id"]] == split
            n = len(row["article_words"])
            assert n == len(row["article_bboxes"]) == len(row["article_pages"]) \
                == len(row["article_line_ids"]) == len(row["article_block_ids"])
            body = " ".join(row["article_words"])
            # an independent check of the audit: most 12-word runs of every abstract are gone
            # (authors do repeat sentences of it in the introduction and conclusion)
            for text in [row["abstract"]] + [a["text"] for a in row["other_abstracts"]]:
                words = text.split()
                probes = [" ".join(words[i:i + 12]) for i in range(0, max(len(words) - 12, 1), 6)]
                found = sum(p in body for p in probes)
                assert found < 0.5 * len(probes), (row["article_id"], found, len(probes))


def test_leakage_audit_is_zero_for_kept_documents(built):
    out, _ = built
    report = json.loads((out / "report.json").read_text())
    assert report["leakage"]["above_threshold"] == 0 and report["leakage"]["leaks"] == []
    assert report["leakage"]["checked"] >= 20  # every abstract of every kept document


def test_workers_do_not_change_the_output(built, manifest, tmp_path):
    out, _ = built
    one = tmp_path / "one"
    loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(one),
            check=True)
    assert table(one) == table(out)


def test_shards_merge_into_the_same_dataset(built, manifest, tmp_path):
    out, _ = built
    sharded = tmp_path / "sharded"
    for k in range(3):
        loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(sharded),
                "--shard", str(k), "--num-shards", "3", check=True)
    assert not (sharded / "data").exists()
    loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(sharded),
            "--finish", check=True)
    assert table(sharded) == table(out)


def test_finish_refuses_missing_shards(manifest, tmp_path):
    out = tmp_path / "partial"
    loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(out),
            "--shard", "0", "--num-shards", "2", check=True)
    proc = loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(out),
                   "--finish", check=False)
    assert proc.returncode == 2 and "no result yet" in proc.stderr


def _processed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM ledger WHERE kind='document'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


PHASES = (("fetch", "fetch local"), ("process", "documents to do"), ("finish", "processed:"),
          ("done", "done:"))


def _phase_reached(log: str) -> str:
    """The last phase the killed run had announced in its log."""
    reached = "start"
    for name, marker in PHASES:
        if marker in log:
            reached = name
    return reached


def _start_build(manifest: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                             "local", "--manifest", str(manifest), "--out", str(out),
                             "--workers", "2"], cwd=REPO, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _kill(proc: subprocess.Popen, seen: str = "") -> str:
    os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate()
    return _phase_reached(seen + err)


def _run_and_kill(manifest: Path, out: Path, delay: float) -> str:
    proc = _start_build(manifest, out)
    time.sleep(delay)
    return _kill(proc)


def _kill_in_parquet_write(manifest: Path, out: Path) -> str:
    """Kill the build while its finish writes a Parquet file (a `.partial` exists):
    triggered by the run itself, since times taken from another run missed the finish
    whenever the host's load changed between the two runs (a flaky test)."""
    proc = _start_build(manifest, out)
    seen = ""
    assert proc.stderr is not None
    for line in proc.stderr:
        seen += line
        if dict(PHASES)["finish"] in line:
            break
    while proc.poll() is None and not any(out.glob(".data-tmp-*/*.partial")):
        time.sleep(0.001)
    return _kill(proc, seen)


def _timed_build(manifest: Path, out: Path) -> float:
    t0 = time.monotonic()
    loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(out),
            "--workers", "2", check=True)
    return time.monotonic() - t0


@pytest.mark.stress
def test_sigkill_at_random_moments_then_resume_equals_a_clean_run(built, manifest, tmp_path):
    """Kills across the phases (fetch, process with two workers, finish and its Parquet
    write); each killed folder, resumed, must hold exactly the clean run's rows in order."""
    out, _ = built
    clean = table(out)
    rng = random.Random(20261123)
    duration = _timed_build(manifest, tmp_path / "timed")
    delays = [share * duration for share in (0.05, 0.2, 0.35, 0.5)]
    kills = [functools.partial(_run_and_kill, delay=d) for d in delays]
    kills += [_kill_in_parquet_write,
              functools.partial(_run_and_kill, delay=rng.uniform(0.2, 0.9) * duration)]
    reached = []
    for trial, kill in enumerate(kills):
        killed = tmp_path / f"killed{trial}"
        reached.append(kill(manifest, killed))
        loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(killed),
                "--workers", "2", check=True)
        assert table(killed) == clean, (trial, reached[-1])
        with sqlite3.connect(killed / "state" / "shard-00000-of-00001.sqlite") as con:
            rows = con.execute("SELECT key, COUNT(*) FROM ledger WHERE kind='document' "
                               "GROUP BY key").fetchall()
        assert len(rows) == 21 and all(n == 1 for _, n in rows)
    assert {"process", "finish"} <= set(reached), reached


def test_rerun_of_a_finished_build_redoes_nothing(built, manifest):
    out, _ = built
    again = loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(out),
                    check=True)
    assert "resuming: all 21 documents done; nothing to redo" in again.stderr
    assert "process: 0/0" in again.stderr


# the corpus manifest's `license` values, as this tool must read them (docs/licenses.md)
CORPUS_LICENSES = {
    "en_hal_reaim": ("cc-by-4.0", None, "CC-BY-4.0 (per HAL TEI metadata)"),
    "en_hal_cover_febs": ("cc-by-4.0", None, "CC-BY-4.0 (per HAL TEI metadata)"),
    "fr_ahrf_censure": ("all-rights-reserved", None,
                        "Tous droits réservés (as stated on the cover page)"),
    "es_scielo_malaga": ("cc-by-4.0", "http://creativecommons.org/licenses/by/4.0/", None),
    "pt_scielo_hoehnea_senna": ("cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/",
                                None),
    "pt_scielo_tinf_brasil_china": ("cc-by-4.0",
                                    "https://creativecommons.org/licenses/by/4.0/", None),
    "pt_scielo_rsp_hindex": ("cc-by-nc-3.0", "http://creativecommons.org/licenses/by-nc/3.0/",
                             None),
}


def front_matter(out: Path) -> dict:
    import yaml

    return yaml.safe_load((out / "README.md").read_text(encoding="utf-8").split("---\n")[1])


def test_every_row_carries_its_licence_and_provenance(built, manifest):
    """A manifest's `license` as written (an id, a URL, free text), normalised per row; the
    PDF's hash; no record or retrieval time for local files. The card and the report
    count the licences of the kept rows."""
    out, _ = built
    sha = {e["id"]: e["sha256"] for e in map(json.loads, manifest.read_text().splitlines())}
    rows = [r for _, rs in table(out) for r in rs]
    for r in rows:
        assert (r["license"], r["license_url"], r["license_text"]) == \
            CORPUS_LICENSES.get(r["article_id"], ("unknown", None, None)), r["article_id"]
        assert (r["record_url"], r["retrieved_at"], r["pdf_sha256"]) == \
            (None, None, sha[r["article_id"]])
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["license"]] = counts.get(r["license"], 0) + 1
    report = json.loads((out / "report.json").read_text())
    assert report["licenses"] == {"unknown": 11, "cc-by-4.0": 5, "all-rights-reserved": 1,
                                  "cc-by-nc-3.0": 1} == counts
    assert front_matter(out)["license"] == "other"
    card = (out / "README.md").read_text(encoding="utf-8")
    for lid, n in counts.items():
        assert f"| `{lid}` | {n:,} |" in card


@pytest.mark.parametrize("allow,excluded,card_license", [
    (["cc-by-4.0"], None, "cc-by-4.0"),  # None: every line but the five cc-by-4.0
    (["open", "unknown"], ["fr_ahrf_censure"], "other"),  # redistributable, or not stated
])
def test_the_licence_filter_keeps_exactly_the_allowed(built, manifest, tmp_path, allow,
                                                      excluded, card_license):
    """A rerun with `licenses:` redoes no document: the licence is decided from the
    manifest's line, before any PDF is read; every other line is `license_excluded` in
    the report, whatever its PDF gave (an encrypted or scanned one too)."""
    out = copy_run(built[0], tmp_path / "ds")
    before = {r["article_id"] for _, rs in table(out) for r in rs}
    cfg = tmp_path / "licences.yaml"
    cfg.write_text(json.dumps({"licenses": allow}))
    proc = loralay("build", "--source", "local", "--manifest", str(manifest), "--out", str(out),
                   "--config", str(cfg), check=True)
    assert "process: 0/0" in proc.stderr
    if excluded is None:
        lines = {json.loads(x)["id"] for x in manifest.read_text().splitlines() if x.strip()}
        excluded = sorted(lines - {i for i, v in CORPUS_LICENSES.items() if v[0] in allow})
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert sorted(i for i, o in docs.items() if o["status"] == "dropped"
                  and o["class"] == "license_excluded") == excluded
    assert all(docs[i]["stage"] == "licenses" for i in excluded)
    assert sorted(r["article_id"] for _, rs in table(out) for r in rs) == \
        sorted(before - set(excluded))
    assert front_matter(out)["license"] == card_license


def test_one_config_per_language_loads_in_a_new_process(built_sample):
    """Issue 46, 1: `load_dataset(DIR, "pt")` failed: only `default` (and `images`)."""
    out = built_sample[0]
    code = ("import json, sys; from datasets import load_dataset\n"
            "out = {c: {s: [r['article_id'] for r in d] for s, d in load_dataset(sys.argv[1], c)"
            ".items()} for c in sys.argv[2:]}\nprint(json.dumps(out))")
    langs = ["en", "es", "fr", "ko", "pt"]
    proc = subprocess.run([sys.executable, "-c", code, str(out), *langs, "default"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert got["ko"] == {"test": ["ko_kci_wifi_parks"]}
    assert got["fr"] == {"train": ["fr_hal_cover_glaciers"], "validation": ["fr_twocol_acoustique"]}
    assert got["en"] == {"train": ["en_onecol_timing_note", "en_twocol_graphs",
                                   "en_structured_trial"]}
    for split, ids in got["default"].items():  # the languages' configs partition default's
        assert sorted(ids) == sorted(i for lang in langs for i in got[lang].get(split, []))
    card = (out / "README.md").read_text()
    assert "- config_name: pt\n" in card and "`load_dataset(\"path/to/" in card
    assert len(list((out / "data").glob("*.parquet"))) == 3  # no copies: the same files
