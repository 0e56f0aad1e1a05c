"""Reruns into a used folder equal a fresh build of the same inputs (issue: reruns you can
trust), on the committed sample corpus; and the run folder's guards (lock, shard count,
Poppler, --fresh). Outputs are compared as written: file by file, rows in file order."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from loralay_build.locks import RunLock
from loralay_build.owned import BUILD, claim_folder
from loralay_build.runfolder import RunFolder

from .conftest import REPO, build_local, config, loralay, rows_as_written

SAMPLE = REPO / "data" / "sample"
pytestmark = pytest.mark.e2e


def copy_sample(tmp: Path) -> Path:
    """A private copy of the sample (PDFs and manifest) that a test may edit."""
    dest = tmp / "sample"
    shutil.copytree(SAMPLE, dest)
    return dest / "manifest.jsonl"


def build(manifest: Path, out: Path, *extra: str, env: dict | None = None
          ) -> subprocess.CompletedProcess:
    return build_local(manifest, out, *extra, env=env)


def edit_manifest(manifest: Path, doc_id: str, **changes: object) -> None:
    lines = manifest.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        obj = json.loads(line)
        if obj["id"] == doc_id:
            obj.update(changes)
        out.append(json.dumps(obj, ensure_ascii=False))
    manifest.write_text("\n".join(out) + "\n", encoding="utf-8")


def first_readable(manifest: Path) -> dict:
    for line in manifest.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj.get("kind") == "article":
            return obj
    raise AssertionError("no readable sample document")


def test_an_edited_abstract_is_redone_and_equals_a_fresh_build(tmp_path):
    manifest = copy_sample(tmp_path)
    used = tmp_path / "used"
    assert build(manifest, used).returncode == 0
    doc = first_readable(manifest)
    # the abstract gets a sentence it does not have: the paper must now be dropped, as a
    # fresh build drops it, and not kept with its old abstract and old cut
    edit_manifest(manifest, doc["id"], abstracts={**doc["abstracts"], doc["language"]:
                  doc["abstracts"][doc["language"]] + " " + "Zebra quantum lantern " * 30})
    rerun = build(manifest, used)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "resuming: 10 of 11 done; 1 to do, of which 1 because their metadata changed" \
        in rerun.stderr
    fresh = tmp_path / "fresh"
    assert build(manifest, fresh).returncode == 0
    assert rows_as_written(used) == rows_as_written(fresh)
    report = json.loads((used / "report.json").read_text())
    assert report["documents"][doc["id"]]["class"] == "irretrievable_abstract"


def test_a_changed_setting_redoes_every_document_and_names_the_key(tmp_path):
    manifest = copy_sample(tmp_path)
    used = tmp_path / "used"
    assert build(manifest, used).returncode == 0
    conf = tmp_path / "c.yaml"
    conf.write_text("min_language_share: 0.95\n")
    rerun = build(manifest, used, "--config", str(conf))
    assert rerun.returncode in (0, 2), rerun.stderr[-2000:]
    assert "because `min_language_share` changed" in rerun.stderr
    fresh = tmp_path / "fresh"
    build(manifest, fresh, "--config", str(conf))
    assert rows_as_written(used) == rows_as_written(fresh)
    assert json.loads((used / "report.json").read_text())["documents"] == \
        json.loads((fresh / "report.json").read_text())["documents"]


def test_a_removed_manifest_line_leaves_the_dataset(tmp_path):
    manifest = copy_sample(tmp_path)
    used = tmp_path / "used"
    assert build(manifest, used).returncode == 0
    gone = first_readable(manifest)["id"]
    lines = [x for x in manifest.read_text().splitlines() if json.loads(x)["id"] != gone]
    manifest.write_text("\n".join(lines) + "\n")
    assert build(manifest, used).returncode == 0
    fresh = tmp_path / "fresh"
    assert build(manifest, fresh).returncode == 0
    assert rows_as_written(used) == rows_as_written(fresh)
    assert gone not in json.loads((used / "report.json").read_text())["documents"]


def test_an_internal_error_is_retried_on_the_next_run(tmp_path):
    manifest = copy_sample(tmp_path)
    out = tmp_path / "out"
    assert build(manifest, out).returncode == 0
    before = rows_as_written(out)
    doc = first_readable(manifest)["id"]
    # what a run with a bug (or without a tool) left behind for one document
    db = sqlite3.connect(out / "state" / "shard-00000-of-00001.sqlite")
    with db:
        db.execute("DELETE FROM documents WHERE id=?", (doc,))
        db.execute("UPDATE ledger SET failure_class='internal_error', stage='extract', "
                   "message='RuntimeError: boom' WHERE key=? AND kind='document'", (doc,))
    db.close()
    rerun = build(manifest, out)
    assert "1 retried after internal_error" in rerun.stderr
    assert rows_as_written(out) == before


def test_missing_poppler_is_one_line_before_anything_is_recorded(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    env = {**os.environ, "PATH": str(bin_dir)}
    out = tmp_path / "out"
    proc = build(SAMPLE / "manifest.jsonl", out, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "pdftotext not found" in proc.stderr and "poppler-utils" in proc.stderr
    assert not out.exists()


def test_shard_counts_cannot_mix(tmp_path):
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    assert build(manifest, out).returncode == 0
    rows = rows_as_written(out)
    mixed = build(manifest, out, "--shard", "0", "--num-shards", "2")
    assert mixed.returncode == 2 and "--fresh" in mixed.stderr
    assert mixed.stderr.strip().splitlines()[-1].startswith("loralay: ")
    assert rows_as_written(out) == rows  # nothing written by the refused command

    sharded = tmp_path / "sharded"
    for k in ("0", "1"):
        assert build(manifest, sharded, "--shard", k, "--num-shards", "2").returncode == 0
    plain = build(manifest, sharded)
    assert plain.returncode == 2 and "--num-shards 2" in plain.stderr
    assert build(manifest, sharded, "--finish").returncode == 0
    assert rows_as_written(sharded) == rows


def test_a_finish_over_states_of_different_counts_is_refused(tmp_path):
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    assert build(manifest, out, "--shard", "0", "--num-shards", "2").returncode == 0
    stray = out / "state" / "shard-00000-of-00003.sqlite"
    shutil.copy(out / "state" / "shard-00000-of-00002.sqlite", stray)
    with sqlite3.connect(out / "state" / "fetch.sqlite") as db:
        db.execute("DELETE FROM checkpoints WHERE name='run.num_shards'")
    proc = build(manifest, out, "--finish")
    assert proc.returncode == 2 and "different shard counts (2, 3)" in proc.stderr


def test_a_state_of_a_newer_schema_is_refused_in_one_line_and_fresh_starts_over(tmp_path):
    """A run folder written by a later loralay-build (its fetch state at user_version 2):
    refused before anything is written, in one line naming the file and both versions."""
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    assert build(manifest, out).returncode == 0
    rows = rows_as_written(out)
    fetch_db = out / "state" / "fetch.sqlite"
    with sqlite3.connect(fetch_db) as db:
        db.execute("PRAGMA user_version = 2")
    proc = build(manifest, out)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"loralay: {fetch_db}: fetch state of schema version 2, this "
                    "loralay-build reads version 1; use the loralay-build that wrote it, "
                    "or start over with --fresh")
    assert "Traceback" not in proc.stderr
    assert rows_as_written(out) == rows
    assert build(manifest, out, "--fresh").returncode == 0
    assert rows_as_written(out) == rows


def test_a_second_build_on_one_folder_is_refused_while_the_first_runs(tmp_path):
    out = tmp_path / "out"
    claim_folder(out, BUILD)  # what the first build did before taking its lock
    with RunLock(RunFolder(out)):
        proc = build(SAMPLE / "manifest.jsonl", out)
    assert proc.returncode == 2
    assert f"another build is running (pid {os.getpid()})" in proc.stderr
    assert not (out / "state").exists()


def test_fresh_starts_over_but_keeps_pdfs_and_checksums(tmp_path):
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    assert build(manifest, out).returncode == 0
    rows = rows_as_written(out)
    (out / "pdfs").mkdir()
    (out / "pdfs" / "kept.pdf").write_bytes(b"%PDF-1.4 a downloaded file")
    proc = build(manifest, out, "--fresh")
    assert proc.returncode == 0
    assert "starting: 11 documents to do" in proc.stderr
    assert (out / "pdfs" / "kept.pdf").exists()
    assert (out / "state" / "pdf-checksums.sqlite").exists()
    assert rows_as_written(out) == rows


def test_bad_options_and_settings_are_one_line_and_touch_nothing(tmp_path):
    out = tmp_path / "out"
    conf = tmp_path / "c.yaml"
    conf.write_text("rows_per_shard: 0\n")
    for args in (["--workers", "0"], ["--limit", "-1"], ["--config", str(conf)],
                 ["--retry", "corrupted"], ["--shard", "2", "--num-shards", "2"]):
        proc = build(SAMPLE / "manifest.jsonl", out, *args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert not out.exists(), args
    missing = loralay("build", "--source", "local", "--manifest", str(tmp_path / "no.jsonl"),
                      "--out", str(out))
    assert missing.returncode == 2 and "no.jsonl: not found" in missing.stderr
    assert not out.exists()


def test_extract_refuses_two_pdfs_that_would_write_one_file(tmp_path):
    pdf = next((SAMPLE / "pdf").glob("*.pdf"))
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(pdf, tmp_path / d / "x.pdf")
    proc = loralay("extract", str(tmp_path / "a" / "x.pdf"), str(tmp_path / "b" / "x.pdf"),
                   "--out-dir", str(tmp_path / "o"))
    assert proc.returncode == 2 and "would both write" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_raising_a_limit_redoes_nothing_that_succeeded(tmp_path):
    """`worker_memory_mb` and `document_timeout_s` were hashed as if they changed a result:
    raising them redid every document, the 11 of the sample included."""
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    assert build(manifest, out).returncode == 0
    rows = rows_as_written(out)
    raised = config(tmp_path, worker_memory_mb=9000, document_timeout_s=1200.0,
                    extract_timeout_s=240.0, extract_memory_mb=4096)
    rerun = build(manifest, out, "--config", str(raised))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "resuming: all 11 documents done; nothing to redo" in rerun.stderr
    assert rows_as_written(out) == rows


def test_a_failure_by_a_limit_is_retried_when_raised_or_asked(tmp_path):
    """A document that ran over `document_timeout_s` stays a timeout under the same limit,
    is done again with `--retry timeout` (which PDF sources accepted and ignored), and by
    itself once the limit is raised; the result then equals a fresh build's."""
    manifest = SAMPLE / "manifest.jsonl"
    out = tmp_path / "out"
    tiny = config(tmp_path, document_timeout_s=0.001)
    first = build(manifest, out, "--config", str(tiny))
    assert first.returncode == 2 and "no document kept of 11" in first.stderr
    report = json.loads((out / "report.json").read_text())
    assert {d["class"] for d in report["documents"].values()} == {"timeout"}
    again = build(manifest, out, "--config", str(tiny))
    assert "resuming: all 11 documents done; nothing to redo" in again.stderr
    asked = build(manifest, out, "--config", str(tiny), "--retry", "timeout")
    assert "0 of 11 done; 11 to do, of which 11 retried as asked (--retry timeout)" \
        in asked.stderr
    raised = build(manifest, out)
    assert raised.returncode == 0, raised.stderr[-2000:]
    assert "11 retried because `document_timeout_s` was raised" in raised.stderr
    fresh = tmp_path / "fresh"
    assert build(manifest, fresh).returncode == 0
    assert rows_as_written(out) == rows_as_written(fresh)
