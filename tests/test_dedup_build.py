"""Duplicates through `loralay build`: one paper under several ids is kept once, in one
split, whatever the copy (the same bytes, a re-saved file, a new cover page); a paper of an
`--exclude-dataset` dataset is left out; the choice is made again on every run.

The copies are made at test time from a real PDF of ../shared with qpdf; the abstracts
are the corpus's true ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .conftest import build_local, config, loralay, rows_as_written, shared_path

pytestmark = pytest.mark.e2e

NO_FILTERS = {"max_pages_percentile": None, "min_summary_percentile": None}


def entry(doc_id: str) -> dict:
    lines = shared_path("corpus", "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    return next(json.loads(x) for x in lines if json.loads(x)["id"] == doc_id)


def qpdf(*args: str | Path) -> None:
    if shutil.which("qpdf") is None:
        pytest.skip("qpdf is not installed")
    proc = subprocess.run(["qpdf", *map(str, args)], capture_output=True, text=True)
    assert proc.returncode in (0, 3), proc.stderr  # 3: warnings only


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> dict[str, Path]:
    """en_ieee_reqprio as given, its bytes under another name, re-saved by qpdf (other
    bytes, the same words), and with another paper's first page put before its own (a
    repository's cover page); en_bmc_trauma, a distinct paper."""
    src = shared_path("corpus", "pdf", "en_ieee_reqprio.pdf")
    donor = shared_path("corpus", "pdf", "es_scielo_malaga.pdf")
    tmp = tmp_path_factory.mktemp("copies")
    out = {name: tmp / f"{name}.pdf" for name in ("orig", "bytes", "resaved", "cover", "other")}
    shutil.copyfile(src, out["orig"])
    shutil.copyfile(src, out["bytes"])
    qpdf("--object-streams=generate", src, out["resaved"])
    qpdf("--empty", "--pages", donor, "1", src, "1-z", "--", out["cover"])
    shutil.copyfile(shared_path("corpus", "pdf", "en_bmc_trauma.pdf"), out["other"])
    return out


def manifest(path: Path, docs: list[tuple[str, Path, str, str]]) -> Path:
    """(id, PDF, corpus id of its true abstract, date) per line."""
    lines = [json.dumps({"id": i, "file": str(pdf), "language": "en",
                         "abstracts": entry(truth)["abstracts"], "publication_date": date})
             for i, pdf, truth, date in docs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def kept_ids(out: Path) -> list[str]:
    return [r["article_id"] for _, rows in rows_as_written(out) for r in rows]


def test_one_paper_under_four_ids_is_kept_once(tmp_path, copies):
    """The earliest dated copy stays; every other is `duplicate` naming it, by the
    strongest evidence: the same bytes, the same words, or most of the words."""
    m = manifest(tmp_path / "m.jsonl", [
        ("p-cover", copies["cover"], "en_ieee_reqprio", "2013"),
        ("p-bytes", copies["bytes"], "en_ieee_reqprio", "2011"),
        ("p-orig", copies["orig"], "en_ieee_reqprio", "2010"),
        ("p-resaved", copies["resaved"], "en_ieee_reqprio", "2012"),
        ("other", copies["other"], "en_bmc_trauma", "2015")])
    out = tmp_path / "ds"
    build_local(m, out, "--config", str(config(tmp_path, **NO_FILTERS)), check=True)
    assert sorted(kept_ids(out)) == ["other", "p-orig"]  # each once, in one split
    rep = report(out)
    docs = rep["documents"]
    dropped = {i: (o["class"], o["stage"], o["message"]) for i, o in docs.items()
               if o["status"] == "dropped"}
    near = next(p for p in rep["duplicates"]["pairs"] if p["id"] == "p-cover")["similarity"]
    assert 0.5 <= near < 1.0
    assert dropped == {
        "p-bytes": ("duplicate", "duplicates", "same PDF as p-orig, which is kept"),
        "p-resaved": ("duplicate", "duplicates", "same text as p-orig, which is kept"),
        "p-cover": ("duplicate", "duplicates",
                    f"near-duplicate (estimated Jaccard {near:.2f}) of p-orig, which is kept")}
    assert rep["duplicates"]["count"] == 3
    assert rep["duplicates"]["by_kind"] == {"near": 1, "same_pdf": 1, "same_text": 1}
    assert sorted((p["id"], p["kept"], p["kind"]) for p in rep["duplicates"]["pairs"]) == [
        ("p-bytes", "p-orig", "same_pdf"), ("p-cover", "p-orig", "near"),
        ("p-resaved", "p-orig", "same_text")]
    assert [(f["stage"], f["count"]) for f in rep["funnel"]] == [
        ("proposed", 5), ("fetched", 5), ("processed", 5), ("distinct", 2), ("filtered", 2),
        ("kept", 2)]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Duplicates" in md and "| p-cover | p-orig | near |" in md


def test_a_paper_of_an_excluded_dataset_is_left_out_and_a_rerun_decides_again(tmp_path,
                                                                             copies):
    """Dataset A holds the paper; B, built with `--exclude-dataset A`, drops its re-saved
    copy and names A; B built again without the exclusion is what a fresh build gives."""
    a = tmp_path / "a"
    build_local(manifest(tmp_path / "a.jsonl", [
        ("a-orig", copies["orig"], "en_ieee_reqprio", "2010"),
        ("a-other", copies["other"], "en_bmc_trauma", "2015")]), a,
        "--config", str(config(tmp_path, **NO_FILTERS)), check=True)
    m = manifest(tmp_path / "b.jsonl", [
        ("b-resaved", copies["resaved"], "en_ieee_reqprio", "2012"),
        ("b-cover", copies["cover"], "en_ieee_reqprio", "2013"),
        ("b-third", shared_path("corpus", "pdf", "en_arxiv_beyond_summ.pdf"),
         "en_arxiv_beyond_summ", "2023-04-05")])
    b = tmp_path / "b"
    cfg = config(tmp_path, **NO_FILTERS)
    build_local(m, b, "--config", str(cfg), "--exclude-dataset", str(a), check=True)
    assert kept_ids(b) == ["b-third"]
    docs = report(b)["documents"]
    assert {i: (o["class"], o["message"]) for i, o in docs.items() if i != "b-third"} == {
        "b-resaved": ("duplicate", f"same text as a-orig of the excluded dataset {a}"),
        "b-cover": ("duplicate", docs["b-cover"]["message"])}
    assert docs["b-cover"]["message"].endswith(f"of a-orig of the excluded dataset {a}")

    build_local(m, b, "--config", str(cfg), check=True)  # the same run, no exclusion
    fresh = tmp_path / "fresh"
    build_local(m, fresh, "--config", str(cfg), check=True)
    assert kept_ids(b) == ["b-resaved", "b-third"]
    assert rows_as_written(b) == rows_as_written(fresh)
    assert report(b)["duplicates"] == report(fresh)["duplicates"]


@pytest.mark.parametrize("what", ["own", "missing", "not_a_dataset"])
def test_a_bad_exclude_dataset_is_one_line_before_any_work(tmp_path, copies, what):
    out = tmp_path / "ds"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("not a dataset")
    folder = {"own": out, "missing": tmp_path / "nowhere", "not_a_dataset": notes}[what]
    m = manifest(tmp_path / "m.jsonl", [("p", copies["orig"], "en_ieee_reqprio", "2010")])
    proc = build_local(m, out, "--exclude-dataset", str(folder))
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    reason = {"own": "this run's own --out", "missing": "not found",
              "not_a_dataset": "no data/ folder and no *.parquet below it"}[what]
    assert str(folder) in last and reason in last, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "data").exists() and not (out / "state").exists()


@pytest.fixture(scope="module")
def finished(tmp_path_factory, copies) -> tuple[Path, Path, Path]:
    """A finished build: (its manifest, its config, its --out)."""
    tmp = tmp_path_factory.mktemp("finished")
    m = manifest(tmp / "m.jsonl", [("p-orig", copies["orig"], "en_ieee_reqprio", "2010"),
                                   ("other", copies["other"], "en_bmc_trauma", "2015")])
    cfg = config(tmp, **NO_FILTERS)
    out = tmp / "runs" / "ds"
    build_local(m, out, "--config", str(cfg), check=True)
    return m, cfg, out


def _as_found(out: Path) -> tuple[object, ...]:
    return (rows_as_written(out), (out / "report.json").read_bytes(),
            sorted(p.relative_to(out).as_posix() for p in out.rglob("*")))


@pytest.mark.parametrize("what", ["own_data", "above", "link_to_data", "link_to_own",
                                  "fifo", "fifo_shard"])
def test_the_run_s_own_dataset_or_a_fifo_is_refused_before_anything_is_written(
        tmp_path, finished, what):
    """Issue 32: `--exclude-dataset` naming the run's own data/, a folder above --out or a
    link to either dropped every document as a duplicate of itself and replaced the
    finished dataset by an empty one (`--dry-run` said nothing); a FIFO named *.parquet
    hung the build. Each is one line naming the folder and the reason, from the build
    and from `--dry-run`, and the finished dataset is left as it was."""
    m, cfg, out = finished
    if what == "own_data":
        folder, reason = out / "data", "inside this run's --out"
    elif what == "above":
        folder, reason = out.parent, "holds this run's --out"
    elif what.startswith("link_to"):
        folder = tmp_path / "link"
        folder.symlink_to(out / "data" if what == "link_to_data" else out)
        reason = "inside this run's --out" if what == "link_to_data" else "this run's own --out"
    else:
        folder = tmp_path / "other"
        (folder / "data").mkdir(parents=True)
        name = "train-00000-of-00001.parquet" if what == "fifo_shard" else "x.parquet"
        os.mkfifo(folder / "data" / name)
        if what == "fifo":  # no data/ shard: the Hub's layout, every *.parquet below
            (folder / "data" / name).rename(folder / name)
            (folder / "data").rmdir()
        reason = "not a regular file"
    before = _as_found(out)
    for dry in ([], ["--dry-run"]):
        proc = loralay("build", "--source", "local", "--manifest", str(m), "--out", str(out),
                       "--config", str(cfg), "--exclude-dataset", str(folder), *dry,
                       timeout=120)
        assert proc.returncode == 2, (dry, proc.stdout, proc.stderr)
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith(f"loralay: exclude_datasets: {folder}") and reason in last, \
            (dry, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert _as_found(out) == before


def test_the_exclusion_is_a_setting_too(tmp_path, copies):
    """`exclude_datasets:` in --config does what the flag does."""
    a = tmp_path / "a"
    build_local(manifest(tmp_path / "a.jsonl", [
        ("a-orig", copies["orig"], "en_ieee_reqprio", "2010")]), a,
        "--config", str(config(tmp_path, **NO_FILTERS)), check=True)
    b = tmp_path / "b"
    cfg = tmp_path / "b.yaml"
    cfg.write_text(yaml.safe_dump({**NO_FILTERS, "exclude_datasets": [str(a)]}))
    build_local(manifest(tmp_path / "b.jsonl", [
        ("b-bytes", copies["bytes"], "en_ieee_reqprio", "2011"),
        ("b-other", copies["other"], "en_bmc_trauma", "2015")]), b, "--config", str(cfg),
        check=True)
    assert kept_ids(b) == ["b-other"]
    assert report(b)["documents"]["b-bytes"]["message"] == \
        f"same text as a-orig of the excluded dataset {a}"
