"""`loralay build --source citesum` end to end on made fixtures (tests/fixtures/citesum):
both formats give the same dataset, load_dataset reads it, the card and report tell what
they must, the split is disjoint by cited paper (resuming after SIGKILL, failed shards and
memory: test_citesum_run.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from .conftest import loralay
from .helpers.citesum import FIX, build_citesum, cfg_2020, config, synthetic_2020

pytestmark = pytest.mark.e2e


def cfg_api(tmp: Path) -> Path:
    root = FIX / "api"
    return config(tmp, s2orc_format="datasets-api", s2orc=f"{root}/s2orc/*",
                  abstracts=f"{root}/abstracts/*", papers=f"{root}/papers/*")


def rows(out: Path) -> list[tuple[str, list[dict]]]:
    return [(p.name, pq.read_table(p).to_pylist()) for p in sorted((out / "data").glob("*"))]


def test_fixtures_are_what_make_py_writes(tmp_path):
    sys.path.insert(0, str(FIX))
    try:
        import make  # noqa: PLC0415
    finally:
        sys.path.remove(str(FIX))
    make.main(tmp_path)
    for made in tmp_path.rglob("*.json*"):
        assert made.read_bytes() == (FIX / made.relative_to(tmp_path)).read_bytes(), made


def test_both_formats_give_the_same_dataset(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    build_citesum(cfg_2020(tmp_path), a, "--workers", "2")
    build_citesum(cfg_api(tmp_path), b)
    assert rows(a) == rows(b) and rows(a)
    (_, train), = rows(a)
    assert [(r["id"], r["paper_id"], r["tgt"][:25]) for r in train] == [
        ("1001-0-0", "2001", "REF proposed DeepFace, a "),
        ("1002-0-0", "2001", "The verification network "),
        ("1002-1-0", "2005", "REF introduce a transform")]
    assert train[0]["discipline"] == {"venue": "CVPR", "journal": None,
                                      "mag_field_of_study": ["Computer Science"]}
    assert train[0]["sentence"].startswith("Taigman et al. [8] proposed")
    ds = load_dataset(str(a))
    assert ds["train"].num_rows == 3 and ds["train"][2]["title"] == "Long document summarization"
    report = json.loads((a / "report.json").read_text())
    assert [r["count"] for r in report["funnel"]] == [3, 2, 8, 7, 4, 3]
    assert {d: v["count"] for d, v in report["drops"].items()} == {
        "no_related_work": 1, "several_citations": 1, "unlinked": 1, "no_abstract": 1,
        "short_abstract": 1, "low_rouge": 1}
    assert "92,946" in (a / "report.md").read_text()
    card = (a / "README.md").read_text()
    for key in json.loads((a / "report.json").read_text())["settings"]:
        assert f'"{key}"' in card
    assert "not in the released code" in card


def test_split_is_disjoint_by_cited_paper_and_bad_lines_are_classed(tmp_path):
    root = synthetic_2020(tmp_path / "in", shards=4, papers=60, bad_line=True)
    out = tmp_path / "out"
    build_citesum(cfg_2020(tmp_path, root), out, "--workers", "2")
    ds = load_dataset(str(out))
    ids = {s: set(ds[s]["paper_id"]) for s in ds}
    assert set(ids) == {"train", "validation", "test"}
    assert not (ids["train"] & ids["test"]) and not (ids["train"] & ids["validation"])
    assert sum(len(v) for v in ids.values()) == 240
    report = json.loads((out / "report.json").read_text())
    bad = report["bad_records"]
    assert bad["counts"] == {"bad_metadata": 1} and report["verdict"] == \
        "complete, 1 bad records"
    (example,) = bad["examples"]["bad_metadata"]
    assert example.split("/")[-1].startswith("pdf_parses_0.jsonl.gz:1: not JSON ("), example


def test_missing_inputs_are_one_line(tmp_path):
    proc = loralay("build", "--source", "citesum", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "set `pdf_parses`" in proc.stderr
    cfg = config(tmp_path, pdf_parses=str(tmp_path / "none*"), metadata="x")
    proc = loralay("build", "--source", "citesum", "--config", str(cfg), "--out",
                   str(tmp_path / "o"), "--limit", "3")
    assert proc.returncode == 2 and "loralay:" in proc.stderr


@pytest.mark.parametrize("setting", ["licenses", "exclude_datasets", "--exclude-dataset"])
def test_settings_citesum_cannot_apply_are_refused_not_recorded(tmp_path, setting):
    """Issue 32, 10: `licenses:` and `--exclude-dataset` were accepted, written into the
    card's and the report's settings, and applied to nothing."""
    other = tmp_path / "other-dataset"  # refused before anything reads it
    other.mkdir()
    keys = {"licenses": ["cc-by-4.0"], "exclude_datasets": [str(other)]}
    base: dict = {"s2orc_format": "2020", "pdf_parses": f"{FIX}/2020/pdf_parses/*",
                  "metadata": f"{FIX}/2020/metadata/*"}
    extra: tuple[str, ...] = ()
    if setting.startswith("--"):
        extra, key = (setting, str(other)), "exclude_datasets"
    else:
        base[setting], key = keys[setting], setting
    cfg = config(tmp_path, **base)
    out = tmp_path / "o"
    for dry in ((), ("--dry-run",)):
        proc = loralay("build", "--source", "citesum", "--config", str(cfg), "--out",
                       str(out), *extra, *dry)
        lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("loralay: ")]
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-2000:]
        assert f"{key}: " in lines[0] and "not applied by --source citesum, refused" \
            in lines[0] and "Traceback" not in proc.stderr
        assert not out.exists()
    # the defaults (null, empty) are what every CiteSum build has, and build
    build_citesum(config(tmp_path, **{**base, "licenses": None, "exclude_datasets": []}), out)


def test_a_killed_task_s_half_files_are_swept_by_the_next_run(tmp_path):
    """A task writes through AtomicFile (`.part-*`); the sweep looked for the names the
    passes used before (`.*.tmp-*`), so a killed task's half file stayed in work/ for good."""
    out = tmp_path / "out"
    build_citesum(cfg_2020(tmp_path), out)
    before = rows(out)
    half = [out / "work" / "pass1" / ".part-k1ll3d", out / "work" / "scored" / ".part-x",
            out / "work" / ".part-cited.sqlite-4242"]
    for path in half:
        path.write_bytes(b'{"half": ')
    build_citesum(cfg_2020(tmp_path), out)
    assert [p.name for p in half if p.exists()] == []
    assert rows(out) == before


def test_rouge_s_imports_are_the_worker_s_not_the_shard_s(tmp_path):
    """ROUGE's first use imports nltk (and SciPy, scikit-learn, pandas through it): ~450 MB
    of address space counted against the first scoring task's cap, so at a few hundred MB
    every scored shard failed as `memory` (and at 512 MB, now and then, under load)."""
    fresh = tmp_path / "fresh"
    build_citesum(cfg_2020(tmp_path), fresh)
    root = FIX / "2020"
    capped = config(tmp_path, s2orc_format="2020", pdf_parses=f"{root}/pdf_parses/*",
                    metadata=f"{root}/metadata/*", worker_memory_mb=300)
    out = tmp_path / "out"
    build_citesum(capped, out)
    assert json.loads((out / "report.json").read_text())["failed_shards"] == []
    assert rows(out) == rows(fresh)


def test_fresh_dry_run_lists_what_fresh_removes_and_harvests_nothing(tmp_path):
    """Issue 42, 8: `--fresh --dry-run` asked the PDF pipeline what `--fresh` deletes (6
    entries: the dataset, report, marker's siblings) while CiteSum's `--fresh` removed 2,
    and said "would harvest" for a pipeline that fetches nothing."""
    out = tmp_path / "out"
    cfg = cfg_2020(tmp_path)
    build_citesum(cfg, out)
    dry = loralay("build", "--source", "citesum", "--config", str(cfg), "--out", str(out),
                  "--fresh", "--dry-run")
    assert dry.returncode == 0, dry.stderr[-2000:]
    said = dry.stdout.splitlines()
    head = next(i for i, ln in enumerate(said) if ln.startswith("--fresh would delete"))
    listed = [ln.strip() for ln in said[head + 1:] if ln.startswith("  ")]
    assert said[head] == f"--fresh would delete {len(listed)} entries:"
    assert listed == [str(out / "work"), str(out / "state" / "citesum.sqlite")]
    assert not any("harvest" in ln for ln in said)
    assert any(ln.startswith("would read 2 citing S2ORC shard(s) and 1 metadata shard(s) "
                             "(2020 format), fetching nothing") for ln in said), said
    before = {p for p in out.rglob("*")}
    fresh = loralay("build", "--source", "citesum", "--config", str(cfg), "--out", str(out),
                    "--fresh", "--limit", "1")  # refused before anything is removed
    assert fresh.returncode == 2
    assert {p for p in out.rglob("*")} == before
    from loralay_build.citesum.pipeline import CiteSumPipeline  # noqa: PLC0415
    from loralay_build.machinery.interfaces import start_over  # noqa: PLC0415
    from loralay_build.runfolder import RunFolder  # noqa: PLC0415

    start_over(CiteSumPipeline(), RunFolder(out))  # what both executors call for --fresh
    assert [p for p in listed if Path(p).exists()] == []
    assert sorted(str(p) for p in out.iterdir()) == sorted(
        str(p) for p in before if p.parent == out and str(p) not in listed)
