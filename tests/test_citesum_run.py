"""The CiteSum build as a run: memory flat in the number of cited papers, shard tasks bounded
by the project's worker pool (a shard over its time or memory, or crashing, is a recorded
failure the rest of the run survives, retried by a rerun), and a run SIGKILLed in any stage
resumes to the very bytes of a fresh build.

Inputs made here are MADE (labelled so in each helper): generated in the test from the real
S2ORC records of ../shared/fixtures/s2orc with new ids, or from the made fixtures' spec."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loralay_build.citesum import index, read2020
from loralay_build.citesum.sentences import pysbd_splitter, split_sentences
from loralay_build.citesum.steps import classify

from .conftest import REPO, loralay
from .helpers.citesum import build_citesum, cfg_2020, config, synthetic_2020

REAL = REPO.parent / "shared" / "fixtures" / "s2orc"
if not REAL.is_dir():
    REAL = Path("/work/shared/fixtures/s2orc")
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures/s2orc absent")]


def parquet_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "data").glob("*.parquet"))}


# --- memory -------------------------------------------------------------------------------
def real_single_citation_sentences() -> list[tuple[str, list[tuple[int, int, str]]]]:
    """The real paper 18980380's sentences that cite one linked paper: (text, spans)."""
    record = json.loads((REAL / "s2orc_20200705_paper_18980380.json").read_text())
    paper = read2020.citing_paper(record)
    found = []
    for p in paper.paragraphs:
        for s in split_sentences(p.text, p.spans, pysbd_splitter()):
            if classify(s) is None:
                found.append((s.text, [(x.start, x.end) for x in s.spans]))
    return found


def made_from_real(root: Path, papers: int) -> int:
    """MADE: `papers` citing papers whose Related Work paragraph is the real paper's
    single-citation sentences, each citing a new paper of its own, and a `metadata` record
    per new cited paper copying the real metadata record (its abstract repeated ten times,
    so that holding cited papers in memory would show). Returns the bytes of cited text."""
    meta = json.loads((REAL / "s2orc_2020_metadata_18980380.jsonl").read_text().splitlines()[0])
    sentences = real_single_citation_sentences()
    (root / "pdf_parses").mkdir(parents=True)
    (root / "metadata").mkdir()
    cited_bytes = 0
    with open(root / "pdf_parses" / "pdf_parses_0.jsonl", "w") as parses, \
            open(root / "metadata" / "metadata_0.jsonl", "w") as metadata:
        for k in range(papers):
            text, spans, bib = "", [], {}
            for j, (sentence, cites) in enumerate(sentences):
                start, end = cites[0]
                spans.append({"start": len(text) + start, "end": len(text) + end,
                              "text": sentence[start:end], "ref_id": f"BIBREF{j}"})
                bib[f"BIBREF{j}"] = {"title": "made", "link": f"9{k:05d}{j:03d}"}
                text += sentence + " "
                line = json.dumps({**meta, "paper_id": f"9{k:05d}{j:03d}",
                                   "abstract": " ".join([meta["abstract"]] * 10)}) + "\n"
                metadata.write(line)
                cited_bytes += len(line)
            parses.write(json.dumps({"paper_id": f"m{k}", "body_text": [
                {"section": "Related Work", "text": text, "cite_spans": spans}],
                "bib_entries": bib}) + "\n")
    return cited_bytes


def peak_rss_mb(cfg: Path, out: Path) -> float:
    """The largest peak RSS of any process of one build (its driver or a worker): the
    build runs under a wrapper whose RUSAGE_CHILDREN counts every waited-for descendant."""
    code = ("import resource, subprocess, sys; "
            "rc = subprocess.run([sys.executable, '-m', 'loralay_build.cli', 'build', "
            "'--source', 'citesum', '--config', sys.argv[1], '--out', sys.argv[2], "
            "'--workers', '2'], capture_output=True).returncode; "
            "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", code, str(cfg), str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=900, check=True)
    rc, kb = proc.stdout.split()
    assert rc == "2", proc.stdout  # BuildStopped: no example kept (every abstract too short)
    return int(kb) / 1024


@pytest.mark.stress
def test_memory_does_not_grow_with_the_number_of_cited_papers(tmp_path):
    # pass 2 holds one batch of `index.BATCH` cited records: both sizes fill it, so that the
    # difference is what grows with the cited papers, not a batch filling up (5 papers cite
    # ~85, under one batch: the batch alone made 4-5.5 MB of difference, a flaky margin)
    small, large = made_from_real(tmp_path / "x1", 15), made_from_real(tmp_path / "x20", 300)
    assert large - small > 45 * 2**20  # 20x the cited papers: 45 MB more of cited text
    peaks, looked_up = {}, {}
    for name in ("x1", "x20"):
        # a floor above every made abstract: all are looked up, none needs ROUGE (speed)
        cfg = config(tmp_path, s2orc_format="2020", pdf_parses=f"{tmp_path / name}/pdf_parses/*",
                     metadata=f"{tmp_path / name}/metadata/*", min_cited_abstract_chars=100_000)
        peaks[name] = peak_rss_mb(cfg, tmp_path / f"out-{name}")
        report = json.loads((tmp_path / f"out-{name}" / "report.json").read_text())
        looked_up[name] = report["drops"]["short_abstract"]["count"]  # found, then dropped
    assert looked_up["x1"] > index.BATCH and looked_up["x20"] == 20 * looked_up["x1"]
    # the in-memory version this replaced (cited ids in a set, every cited abstract loaded in
    # the driver and each worker) peaked 15 MB higher at x20 than at x1 (5 and 100 papers)
    assert peaks["x20"] - peaks["x1"] < 5, peaks


# --- failed shards ----------------------------------------------------------------------
def test_a_shard_over_its_time_is_recorded_and_retried_when_the_limit_is_raised(tmp_path):
    root = synthetic_2020(tmp_path / "in", shards=2, papers=5)
    fresh = tmp_path / "fresh"
    build_citesum(cfg_2020(tmp_path, root), fresh)
    keys = dict(s2orc_format="2020", pdf_parses=f"{root}/pdf_parses/*",
                metadata=f"{root}/metadata/*")
    out = tmp_path / "out"
    proc = loralay("build", "--source", "citesum", "--config",
                   str(config(tmp_path, **keys, shard_timeout_s=0.01)), "--out", str(out))
    assert proc.returncode != 0
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "incomplete: 3 shard(s) failed"
    shards = ["citing/pdf_parses_0.jsonl.gz", "citing/pdf_parses_1.jsonl.gz",
              "metadata/metadata_0.jsonl"]
    assert [(f["id"], f["class"], f["message"]) for f in report["failed_shards"]] == [
        (key, "timeout", f"{key}: ran over shard_timeout_s (0.01 s)") for key in shards]
    assert "citing/pdf_parses_0.jsonl.gz" in (out / "report.md").read_text()
    again = loralay("build", "--source", "citesum", "--config",
                    str(config(tmp_path, **keys, shard_timeout_s=0.01)), "--out", str(out))
    assert "citesum-pass1: 2 of 2 shards done; 0 to do" in again.stderr  # same limit: settled
    build_citesum(config(tmp_path, **keys, shard_timeout_s=600), out)
    assert parquet_bytes(out) == parquet_bytes(fresh)
    assert json.loads((out / "report.json").read_text())["verdict"] == "complete"


@pytest.mark.stress
def test_a_shard_over_its_memory_or_crashing_leaves_the_others_and_is_retried(tmp_path):
    root = synthetic_2020(tmp_path / "in", shards=3, papers=5)
    keys = dict(s2orc_format="2020", pdf_parses=f"{root}/pdf_parses/*",
                metadata=f"{root}/metadata/*", worker_memory_mb=512)
    cfg = config(tmp_path, **keys)
    fresh = tmp_path / "fresh"
    build_citesum(cfg, fresh)
    good = parquet_bytes(fresh)
    shard, other = root / "pdf_parses" / "pdf_parses_1.jsonl.gz", \
        root / "pdf_parses" / "pdf_parses_2.jsonl.gz"
    whole, whole_other = shard.read_bytes(), other.read_bytes()
    with gzip.open(shard, "wt", compresslevel=1) as fh:  # one 600 MB line: over 512 MB
        fh.write('{"paper_id": "1", "pad": "')
        for _ in range(600):
            fh.write("a" * 2**20)
        fh.write('"}\n')
    other.write_bytes(whole_other[:-40])  # a truncated download
    out = tmp_path / "out"
    build_citesum(cfg, out, "--workers", "2")
    report = json.loads((out / "report.json").read_text())
    failed = {f["id"]: (f["class"], f["message"]) for f in report["failed_shards"]}
    assert failed["citing/pdf_parses_1.jsonl.gz"][0] == "memory"
    assert failed["citing/pdf_parses_1.jsonl.gz"][1] == \
        "citing/pdf_parses_1.jsonl.gz: ran over worker_memory_mb (512 MB)"
    assert failed["citing/pdf_parses_2.jsonl.gz"][0] == "internal_error"
    assert "EOFError" in failed["citing/pdf_parses_2.jsonl.gz"][1]
    assert sum(report["splits"].values()) == 5  # shard 0's papers went on
    again = build_citesum(cfg, out)  # internal_error is retried (and fails again); memory is not
    assert "citesum-pass1: 1 of 3 shards done; 2 to do" not in again.stderr
    assert "citesum-pass1: 2 of 3 shards done; 1 to do" in again.stderr
    other.write_bytes(whole_other)  # downloaded again
    again = build_citesum(cfg, out)
    assert "citesum-pass1: 2 of 3 shards done; 1 to do" in again.stderr
    report = json.loads((out / "report.json").read_text())
    assert sum(report["splits"].values()) == 10, (report["failed_shards"], again.stderr[-3000:])
    shard.write_bytes(whole)  # a changed input is redone, whatever its outcome was
    again = build_citesum(cfg, out)
    assert "citesum-pass1: 2 of 3 shards done; 1 to do" in again.stderr
    assert parquet_bytes(out) == good
    # the `--retry` classes are one set for every source: a class no shard failed with
    # retries nothing, one that no rerun can change is refused
    proc = loralay("build", "--source", "citesum", "--config", str(cfg), "--out", str(out),
                   "--retry", "forbidden")
    assert proc.returncode == 0 and "citesum-pass1: 3 of 3 shards done; 0 to do" in proc.stderr
    proc = loralay("build", "--source", "citesum", "--config", str(cfg), "--out", str(out),
                   "--retry", "scanned")
    assert proc.returncode == 2 and "--retry scanned: not a class a rerun can retry" \
        in proc.stderr


# --- SIGKILL in each stage --------------------------------------------------------------
def padded_2020(root: Path) -> Path:
    """MADE: `synthetic_2020` with its metadata cut into 12 shards padded with papers
    nobody cites (so pass 2 lasts long enough to be killed in)."""
    synthetic_2020(root, shards=12, papers=30)
    lines = (root / "metadata" / "metadata_0.jsonl").read_text().splitlines(keepends=True)
    (root / "metadata" / "metadata_0.jsonl").unlink()
    for k in range(12):
        pad = "".join(json.dumps({"paper_id": f"p{k}-{i}", "abstract": "x " * 200}) + "\n"
                      for i in range(4000))
        (root / "metadata" / f"metadata_{k:02d}.jsonl").write_text("".join(lines[k::12]) + pad)
    return root


@pytest.mark.stress
@pytest.mark.parametrize("stage", ["citesum-pass1", "citesum-pass2", "citesum-score"])
def test_sigkill_in_each_stage_then_rerun_equals_a_fresh_build(tmp_path, stage):
    cfg = cfg_2020(tmp_path, padded_2020(tmp_path / "in"))
    fresh = tmp_path / "fresh"
    build_citesum(cfg, fresh)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                             "citesum", "--config", str(cfg), "--out", str(out)], cwd=REPO,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    db, done, deadline = out / "state" / "citesum.sqlite", 0, time.time() + 300
    while time.time() < deadline and proc.poll() is None and done < 2:
        try:
            with sqlite3.connect(db) as con:
                done = con.execute("SELECT COUNT(*) FROM ledger WHERE kind=?",
                                   (stage,)).fetchone()[0]
        except sqlite3.Error:
            done = 0
        time.sleep(0.02)
    assert proc.poll() is None, "the build ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "data").exists()
    again = build_citesum(cfg, out)
    resumed = re.search(rf"{stage}: (\d+) of 12 shards done", again.stderr)
    assert resumed and 2 <= int(resumed.group(1)) < 12, again.stderr  # it went on, not over
    assert parquet_bytes(out) == parquet_bytes(fresh)
    assert json.loads((out / "report.json").read_text())["funnel"] == \
        json.loads((fresh / "report.json").read_text())["funnel"]


# --- the bench behind the README's "How long" ---------------------------------------------
@pytest.mark.parametrize("fmt", ["2020", "datasets-api"])
def test_bench_times_what_it_claims_on_shards_made_from_real_records(tmp_path, fmt):
    """The made shards hold what the README's table says (the share with a Related Work
    section, ten abstracts per citing record) and every stage runs on them."""
    import bench_citesum as bench

    make = bench.made_2020 if fmt == "2020" else bench.made_api
    keys = make(tmp_path / "in", 84, 0.024, 2)
    t = bench.time_stages(keys, tmp_path / "out", 1)
    assert (t["papers_read"], t["with_related_work"]) == (84, 2)  # records 0 and 42
    assert t["candidates"] > 0 and all(t[k] > 0 for k in ("pass1_s", "pass2_s", "score_s"))
    cited = "metadata" if fmt == "2020" else "abstracts"
    lines = sum(len(p.read_text().splitlines()) for p in (tmp_path / "in" / cited).iterdir())
    assert lines == 840


# --- bad records ---------------------------------------------------------------------------
def with_bad_lines(root: Path, lines: list[bytes]) -> None:
    """MADE: the first citing shard of `synthetic_2020` with `lines` put before its records."""
    shard = root / "pdf_parses" / "pdf_parses_0.jsonl.gz"
    good = gzip.decompress(shard.read_bytes())
    shard.write_bytes(gzip.compress(b"\n".join(lines) + b"\n" + good))


def test_a_bad_record_is_that_records_class_and_the_shard_goes_on(tmp_path):
    """A non-UTF-8 byte, a lone surrogate escape (valid JSON) and a 100,000-deep line each
    failed the whole shard as `internal_error`: its good records were lost and every
    rerun failed again."""
    clean = synthetic_2020(tmp_path / "clean", shards=2, papers=5)
    fresh = tmp_path / "fresh"
    build_citesum(cfg_2020(tmp_path, clean), fresh)
    root = synthetic_2020(tmp_path / "in", shards=2, papers=5)
    with_bad_lines(root, [b'{"paper_id": "x\xff"}', b'{"paper_id": "\\ud800"}',
                          b"[" * 100_000 + b"]" * 100_000])
    out = tmp_path / "out"
    proc = build_citesum(cfg_2020(tmp_path, root), out)
    report = json.loads((out / "report.json").read_text())
    assert report["failed_shards"] == [] and report["verdict"] == "complete, 3 bad records"
    examples = [e.split("/")[-1] for e in report["bad_records"]["examples"]["bad_metadata"]]
    assert examples == ["pdf_parses_0.jsonl.gz:1: not UTF-8 (byte 15)",
                        "pdf_parses_0.jsonl.gz:2: a lone UTF-16 surrogate (\\ud800-\\udfff) "
                        "in a string", "pdf_parses_0.jsonl.gz:3: JSON nested too deep"]
    assert parquet_bytes(out) == parquet_bytes(fresh)
    again = build_citesum(cfg_2020(tmp_path, root), out)
    assert "citesum-pass1: 2 of 2 shards done; 0 to do" in again.stderr, proc.stderr[-500:]


@pytest.mark.stress
def test_a_million_bad_lines_cost_neither_memory_nor_report_size(tmp_path):
    """1,000,000 bad lines (2 MB) took the driver to 2.07 GB and wrote a 200 MB report."""
    root = synthetic_2020(tmp_path / "in", shards=1, papers=3)
    with_bad_lines(root, [b"x"] * 1_000_000)
    out = tmp_path / "out"
    code = ("import resource, subprocess, sys; "
            "p = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, p.returncode)")
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "citesum",
           "--config", str(cfg_2020(tmp_path, root)), "--out", str(out)]
    run = subprocess.run([sys.executable, "-c", code, *cmd], cwd=REPO, capture_output=True,
                         text=True, timeout=900, check=True)
    peak_mb, rc = map(int, run.stdout.split())
    assert rc == 0 and peak_mb < 600, run.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["bad_records"]["counts"] == {"bad_metadata": 1_000_000}
    assert len(report["bad_records"]["examples"]["bad_metadata"]) == 5
    assert (out / "report.json").stat().st_size < 50_000
