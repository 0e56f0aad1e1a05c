"""Nothing the user owns is lost or misread (issue 24), tried as a careless or unlucky user
would: folders the tool does not own, names from the data used as paths, readers given bad
datasets, two writers at once, full and read-only disks, limits that were misclassed, and
stale reads through `datasets`. Every refusal is one line on stderr, never a traceback.

Full and read-only disks are real: each such test runs the CLI in a private mount namespace
(`unshare --user --mount`, no root needed) over a small tmpfs; where the kernel refuses
user namespaces they skip, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from loralay_build.dataset import Dataset
from loralay_build.errors import ConfigError
from loralay_build.owned import BUILD, check_folder

from .conftest import REPO, SAMPLE, build_local, config, copy_run, loralay, rows_as_written

pytestmark = pytest.mark.e2e


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The command failed with exactly one error line, naming every word given."""
    assert proc.returncode != 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith(("loralay: ", "Error:"))]
    assert len(errors) == 1, proc.stderr[-2000:]
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# --- 1. folders the tool does not own -----------------------------------------------------

def test_fresh_on_the_manifests_own_folder_touches_nothing(tmp_path):
    """`--fresh` deleted everything in --out but pdfs/ and state/: pointed at the manifest's
    folder it deleted the manifest and every PDF."""
    folder = tmp_path / "sample"
    shutil.copytree(SAMPLE.parent, folder)
    before = tree(folder)
    proc = build_local(folder / "manifest.jsonl", folder, "--fresh")
    one_line_error(proc, str(folder), "not a folder this tool made", "manifest.jsonl")
    assert tree(folder) == before


def test_a_folder_holding_someone_elses_files_is_refused(tmp_path):
    out = tmp_path / "theirs"
    (out / "data").mkdir(parents=True)
    (out / "data" / "train.parquet").write_bytes(b"their data")
    (out / "images").mkdir()
    (out / "README.md").write_text("their card")
    before = tree(out)
    for extra in ((), ("--fresh",), ("--shard", "0", "--num-shards", "2")):
        one_line_error(build_local(SAMPLE, out, *extra), "not a folder this tool made")
    assert tree(out) == before
    dry = build_local(SAMPLE, out, "--dry-run")
    one_line_error(dry, "not a folder this tool made")


def test_a_folder_another_build_is_claiming_is_not_someone_elses(tmp_path):
    """Two shards started at once: one saw the folder the other had just made, holding only
    its marker's temporary file, and stopped with "not a folder this tool made"."""
    out = tmp_path / "ds"
    out.mkdir()
    (out / ".part-x3ra7c0q").write_text('{"tool": "loralay-build"')
    assert check_folder(out, BUILD).status == "empty"
    (out / "README.md").write_text("their card")
    with pytest.raises(ConfigError, match="not a folder this tool made"):
        check_folder(out, BUILD)


def test_empty_out_dev_null_and_a_file_are_one_line(tmp_path):
    empty = loralay("build", "--source", "local", "--manifest", str(SAMPLE), "--out", "",
                    cwd=tmp_path)
    assert empty.returncode == 2 and "an empty path" in empty.stderr
    assert list(tmp_path.iterdir()) == []
    one_line_error(build_local(SAMPLE, Path("/dev/null")), "/dev/null", "not a folder")
    afile = tmp_path / "afile"
    afile.write_text("mine")
    one_line_error(build_local(SAMPLE, afile), "a file")
    assert afile.read_text() == "mine"


def test_an_empty_folder_is_used_and_marked(tmp_path):
    out = tmp_path / "made-by-hand"
    out.mkdir()
    assert build_local(SAMPLE, out).returncode == 0
    assert json.loads((out / ".loralay").read_text())["kind"] == "build"


def test_fresh_removes_a_linked_state_as_a_link_and_only_what_the_tool_wrote(
        built_sample, tmp_path):
    """A `state/` that was a symlink led `--fresh` to delete a file outside the run folder;
    files of the user's inside the run folder were deleted too."""
    out = copy_run(built_sample[0], tmp_path / "run")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.sqlite").write_text("not ours")
    shutil.rmtree(out / "state")
    (out / "state").symlink_to(outside, target_is_directory=True)
    shutil.rmtree(out / "report")  # a link --fresh removes is no refusal (issue 32, 7)
    (out / "report").symlink_to(outside, target_is_directory=True)
    (out / "notes.txt").write_text("the user's notes")
    dry = build_local(SAMPLE, out, "--fresh", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = [ln.strip() for ln in dry.stdout.splitlines() if ln.startswith("  ")]
    assert str(out / "state") in listed and str(out / "data") in listed
    assert str(out / "notes.txt") not in listed and str(out / "pdfs") not in listed
    assert (out / "data").exists()  # a dry run deletes nothing
    assert build_local(SAMPLE, out, "--fresh").returncode == 0
    assert (outside / "precious.sqlite").read_text() == "not ours"
    assert [p.name for p in outside.iterdir()] == ["precious.sqlite"]
    assert (out / "notes.txt").read_text() == "the user's notes"
    assert not (out / "state").is_symlink() and (out / "state" / "fetch.sqlite").exists()
    assert rows_as_written(out) == rows_as_written(built_sample[0])


def outside_things(tmp: Path) -> Path:
    """A folder and a file outside the run folder, for links to point at."""
    outside = tmp / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "theirs.txt").write_text("their folder")
    (outside / "file").write_text("their file")
    return outside


@pytest.mark.parametrize("entry", ["report", "report.md", ".lock", "data", "images", "state"])
def test_a_link_in_the_run_folder_is_refused_never_written_through(built_sample, tmp_path,
                                                                    entry):
    """Issue 32, 7: a `report` link was written through (a file outside --out overwritten,
    PNGs added there), a `.lock` link followed and its target truncated."""
    out = copy_run(built_sample[0], tmp_path / "run")
    outside = outside_things(tmp_path)
    link = out / entry
    if link.is_dir():
        shutil.rmtree(link)
    link.unlink(missing_ok=True)
    is_dir = entry in ("report", "data", "images", "state")
    link.symlink_to(outside / ("dir" if is_dir else "file"), target_is_directory=is_dir)
    before, inside = tree(outside), tree(out)
    for extra in ((), ("--dry-run",), ("--shard", "0", "--num-shards", "1")):
        proc = build_local(SAMPLE, out, *extra)
        assert tree(outside) == before, f"written outside --out through {link}"
        one_line_error(proc, str(link), "symbolic link", "never writes through a link")
    assert tree(out) == inside and link.is_symlink()


def test_every_writer_of_the_run_folder_refuses_a_link_made_after_the_check(built_sample,
                                                                             tmp_path):
    """The claim's check is not the only guard: a link made while a command runs (or one
    the claim does not look at) is refused by the writer itself, before it opens anything:
    the atomic files, the report's plots, the lock, the run state, the shard folders."""
    from loralay_build.atomic import write_atomic, write_text_atomic
    from loralay_build.locks import RunLock, ShardLock
    from loralay_build.runfolder import RunFolder
    from loralay_build.store.fetch import FetchState
    from loralay_build.write.plots import make_plots
    from loralay_build.write.shards import ShardFolder

    out = copy_run(built_sample[0], tmp_path / "run")
    outside = outside_things(tmp_path)
    for name in ("report", "state", "data"):
        shutil.rmtree(out / name)
        (out / name).symlink_to(outside / "dir", target_is_directory=True)
    (out / ".lock").unlink()
    (out / ".lock").symlink_to(outside / "file")
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(outside / "file")
    before = tree(outside)
    writes = [lambda: write_atomic(out / "report" / "funnel.png", b"png"),
              lambda: make_plots(out / "report", {}, None),  # not swallowed as a plot's error
              lambda: write_text_atomic(out / "report.md", "report"),
              lambda: RunLock(out).__enter__(),
              lambda: ShardLock(RunFolder(out), 0, 1).__enter__(),
              lambda: FetchState(out / "state" / "fetch.sqlite"),
              lambda: ShardFolder(out, "data").__enter__()]
    for write in writes:
        with pytest.raises(ConfigError, match="never writes through a link"):
            write()
    assert tree(outside) == before
    # outside the tool's folders, a link on the way is the user's business
    elsewhere = tmp_path / "linked"
    elsewhere.symlink_to(outside / "dir", target_is_directory=True)
    write_text_atomic(elsewhere / "page.png", "png")
    assert (outside / "dir" / "page.png").read_text() == "png"


def test_a_run_folder_of_an_earlier_version_is_resumed(built_sample, tmp_path):
    out = copy_run(built_sample[0], tmp_path / "old")
    (out / ".loralay").unlink()  # as a version before the marker left it
    again = build_local(SAMPLE, out)
    assert again.returncode == 0, again.stderr
    assert "resuming: all 11 documents done" in again.stderr
    assert (out / ".loralay").exists()


# --- 2. names from the data used as paths -----------------------------------------------------

@pytest.fixture(scope="module")
def odd_ids(tmp_path_factory) -> Path:
    """Two of the sample's French papers under ids a file name must not be built from
    (two papers: one paper under two ids would be kept once)."""
    tmp = tmp_path_factory.mktemp("ids")
    lines = {x["id"]: x for x in map(json.loads, SAMPLE.read_text().splitlines())}
    manifest = tmp / "m.jsonl"
    with open(manifest, "w", encoding="utf-8") as fh:
        for doc_id, paper in (("/abs/id", "fr_hal_cover_glaciers"),
                              ("x" * 5000, "fr_twocol_acoustique")):
            line = {**lines[paper], "id": doc_id}
            line["file"] = str(SAMPLE.parent / line["file"])
            fh.write(json.dumps(line) + "\n")
    out = tmp / "ds"
    assert build_local(manifest, out).returncode == 0
    return out


@pytest.mark.parametrize("doc_id", ["/abs/id", "x" * 5000])
def test_show_names_its_picture_safely_in_the_current_folder(odd_ids, tmp_path, doc_id):
    cwd = tmp_path / "here"
    cwd.mkdir()
    proc = loralay("show", str(odd_ids), doc_id, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (written,) = cwd.iterdir()
    assert written.suffix == ".png" and len(written.name) < 120
    assert Path(proc.stdout.strip()) == written.relative_to(cwd)
    assert not Path("/abs/id-p2.png").exists() and not Path("/abs").exists()


# --- 3. readers on bad datasets ----------------------------------------------------------------

def damaged(built: Path, tmp: Path, how: str) -> Path:
    ds = copy_run(built, tmp / how)
    shard = sorted((ds / "data").glob("train-*.parquet"))[0]
    if how == "truncated":
        shard.write_bytes(shard.read_bytes()[:-500])
    elif how == "garbage":
        shard.write_bytes(b"PAR1" + os.urandom(4000))
    elif how == "unfinished":  # a build killed before its finish: no data/ yet
        shutil.rmtree(ds / "data")
    elif how == "missing-shard":
        shard.rename(shard.with_name(shard.name.replace("-00000-of-00001", "-00000-of-00002")))
    return ds


@pytest.mark.parametrize("how", ["truncated", "garbage", "unfinished", "missing-shard"])
def test_readers_say_what_is_wrong_with_a_damaged_dataset(built_sample, tmp_path, how):
    ds = damaged(built_sample[0], tmp_path, how)
    export = loralay("export", "vila", str(ds), "--out", str(tmp_path / "vila"))
    one_line_error(export, str(ds))
    show = loralay("show", str(ds), "fr_hal_cover_glaciers", "--out", str(tmp_path / "p.png"))
    one_line_error(show, str(ds))
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    ev = loralay("eval", str(ds), "--split", "train", "--predictions", str(preds))
    one_line_error(ev, str(ds))
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("split,words", [("*", "not a split name"),
                                         ("../x", "not a split name"),
                                         ("dev", "no split 'dev'")])
def test_a_split_is_a_name_never_a_pattern_or_a_path(built_sample, tmp_path, split, words):
    """`--split '*'` silently scored every split together."""
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    one_line_error(loralay("eval", str(built_sample[0]), "--split", split, "--predictions",
                           str(preds)), words)


def _predictions(built: Path) -> list[str]:
    return [r["article_id"] for p in sorted((built / "data").glob("test-*.parquet"))
            for r in pq.read_table(p, columns=["article_id"]).to_pylist()]


@pytest.mark.parametrize("case,words", [
    ("not-utf8", "line 1: not UTF-8"), ("deep", "line 1: JSON nested too deep"),
    ("missing", "not found"), ("folder", "not a file"), ("not-an-object", "line 1: not {"),
])
def test_a_bad_predictions_file_is_one_line(built_sample, tmp_path, case, words):
    path = tmp_path / "preds.jsonl"
    if case == "not-utf8":
        path.write_bytes(b'{"id": "a", "prediction": "caf\xe9"}\n')
    elif case == "deep":
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    elif case == "folder":
        path.mkdir()
    elif case == "not-an-object":
        path.write_text("[1, 2]\n")
    one_line_error(loralay("eval", str(built_sample[0]), "--predictions", str(path)),
                   str(path), words)


def test_good_predictions_are_scored(built_sample, tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps({"id": i, "prediction": "a summary"}) + "\n"
                            for i in _predictions(built_sample[0])))
    ds = copy_run(built_sample[0], tmp_path / "ds")
    proc = loralay("eval", str(ds), "--predictions", str(path), "--out", str(tmp_path / "s.json"))
    assert proc.returncode == 0 and "predictions" in proc.stdout, proc.stderr
    inside = loralay("eval", str(ds), "--predictions", str(path), "--out", str(ds / "s.json"))
    one_line_error(inside, "inside the dataset")


# --- 4. two writers at once ----------------------------------------------------------------------

def test_a_second_export_into_one_folder_is_refused_naming_the_holder(built_sample, tmp_path):
    from loralay_build.locks import RunLock
    from loralay_build.owned import EXPORT, claim_folder

    out = tmp_path / "vila"
    claim_folder(out, EXPORT)
    with RunLock(out, what="another export"):
        proc = loralay("export", "vila", str(built_sample[0]), "--out", str(out))
    one_line_error(proc, str(out), f"another export is running (pid {os.getpid()})")
    assert sorted(p.name for p in out.iterdir()) == [".lock", ".loralay"]


def test_two_exports_at_once_leave_one_whole_export(built_sample, tmp_path):
    out = tmp_path / "vila"
    procs = [subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "export", "vila",
                               str(built_sample[0]), "--out", str(out)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert sorted(rc for rc, _ in results)[0] == 0
    for rc, err in results:
        assert rc == 0 or ("another export is running" in err and "Traceback" not in err)
    alone = tmp_path / "alone"
    assert loralay("export", "vila", str(built_sample[0]), "--out", str(alone)).returncode == 0
    def files(folder: Path) -> dict[str, bytes]:
        return {k: v for k, v in tree(folder).items() if k != ".lock"}  # it holds a pid

    assert files(out) == files(alone)
    json.loads((out / "train-token.json").read_text())  # whole, valid JSON


def test_a_reader_keeps_its_shards_while_a_build_replaces_data(built_sample, tmp_path):
    """An export while a build rewrote `data/` sometimes crashed on a vanished shard: the
    shards are opened when the dataset is, and read from the open files."""
    ds = copy_run(built_sample[0], tmp_path / "ds")
    opened = Dataset.open(ds)
    want = list(Dataset.open(built_sample[0]).rows("train", ("article_id",)))
    done = threading.Event()

    def rebuild() -> None:
        assert build_local(SAMPLE, ds, "--fresh").returncode == 0
        done.set()

    worker = threading.Thread(target=rebuild)
    worker.start()
    worker.join(timeout=600)
    assert done.is_set()
    assert list(opened.rows("train", ("article_id",))) == want


# --- 5. bad records ------------------------------------------------------------------------------

@pytest.mark.stress
def test_a_manifest_of_a_million_bad_lines_costs_neither_memory_nor_report_size(tmp_path):
    """1,000,000 lines that name no document (not JSON, a repeated id) took the driver to
    657 MB and wrote a 200 MB report.json: they are counted by class with five examples;
    a bad line that names its document is still that document's outcome; `--dry-run`
    printed every one of them."""
    lines = {x["id"]: x for x in map(json.loads, SAMPLE.read_text().splitlines())}
    good = {**lines["en_onecol_timing_note"]}
    good["file"] = str(SAMPLE.parent / good["file"])
    manifest = tmp_path / "m.jsonl"
    with open(manifest, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(good) + "\n" + json.dumps(good) + "\n")  # the id again
        fh.write(json.dumps({**good, "id": "named", "language": "xx"}) + "\n")
        fh.write("x\n" * 999_997)
    out = tmp_path / "out"
    code = ("import resource, subprocess, sys; "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "sys.stderr.write(p.stderr); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, p.returncode)")
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(manifest), "--out", str(out)]
    run = subprocess.run([sys.executable, "-c", code, *cmd], cwd=REPO, capture_output=True,
                         text=True, timeout=900, check=True)
    peak_mb, rc = map(int, run.stdout.split())
    assert rc == 0 and peak_mb < 600, (run.stdout, run.stderr[-2000:])
    report = json.loads((out / "report.json").read_text())
    bad = report["bad_records"]
    assert bad["counts"] == {"bad_metadata": 999_997, "duplicate": 1}
    assert bad["examples"] == {
        "bad_metadata": [f"{manifest}:{n}: not valid JSON (Expecting value: line 1 column 1 "
                         "(char 0))" for n in range(4, 9)],
        "duplicate": [f"{manifest}:2: id 'en_onecol_timing_note' is already on line 1"]}
    assert {i: (o["status"], o.get("class")) for i, o in report["documents"].items()} == {
        "named": ("dropped", "bad_metadata"), "en_onecol_timing_note": ("kept", None)}
    assert report["verdict"].endswith("; 999,998 bad input records")
    assert (out / "report.json").stat().st_size < 50_000
    warnings = [x for x in run.stderr.splitlines() if " WARNING " in x]
    assert [x.split(": ", 1)[1] for x in warnings if " loralay.finish: " in x] == [
        "validation and test are empty (1 documents in train): nothing to evaluate on"]
    warnings = [x for x in warnings if " loralay.finish: " not in x]
    assert len(warnings) == 8, warnings  # 5 + 1 examples, the named line, the total
    assert warnings[-1].endswith("999,998 bad input records in all (bad_metadata 999,997, "
                                 "duplicate 1); the report shows the first 5 of each class")
    assert "## Bad records (999,998)" in (out / "report.md").read_text()
    # --dry-run shows them as the report does: five of each class, then how many more
    dry = subprocess.run([*cmd, "--dry-run"], cwd=REPO, capture_output=True, text=True,
                         timeout=900)
    assert dry.returncode == 1
    assert dry.stdout.splitlines()[2:-1] == [
        f"{manifest}:2: id 'en_onecol_timing_note' is already on line 1 [duplicate]",
        f"{manifest}:3: 'language' \"xx\" is not an ISO 639-1 code (two letters, e.g. 'en') "
        "[bad_metadata]",
        *(f"{manifest}:{n}: not valid JSON (Expecting value: line 1 column 1 (char 0)) "
          "[bad_metadata]" for n in range(4, 9)),
        f"{manifest}: 999,992 more lines naming no document not shown (the first 5 of each "
        "class are)",
        f"{manifest}: 1,000,000 lines, 1 ready to build; bad_metadata 999,998, duplicate 1"]


# --- 6. full and read-only disks -------------------------------------------------------------

def in_namespace(script: str) -> subprocess.CompletedProcess:
    """Run `script` (bash) in a private user and mount namespace; skip where refused."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) not installed")
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"user and mount namespaces refused here: {probe.stderr.strip()}")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "bash", "-euc",
                           script], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env=env)


def test_a_full_disk_at_every_moment_is_one_line_and_a_rerun_completes(built_sample, tmp_path):
    """Every ENOSPC (state, Parquet, report) was a traceback. At each size the build stops in
    one line or completes; with space again, the same command completes to the rows of a
    build that never ran out."""
    mnt, keep = tmp_path / "mnt", tmp_path / "keep"
    mnt.mkdir()
    keep.mkdir()
    cmd = f"{sys.executable} -m loralay_build.cli build --source local --manifest {SAMPLE}"
    script = ""
    for k, size in enumerate(("400k", "560k", "640k", "700k", "760k")):
        script += (f"mount -t tmpfs -o size={size} tmpfs {mnt}\n"
                   f"set +e; {cmd} --out {mnt}/ds --workers 2 2> {keep}/err-{k}; "
                   f"echo $? > {keep}/rc-{k}; set -e\n"
                   f"mount -o remount,size=64m {mnt}\n"
                   f"{cmd} --out {mnt}/ds --workers 2 2> {keep}/again-{k}\n"
                   f"cp -r {mnt}/ds/data {keep}/data-{k}\n"
                   f"umount {mnt}\n")
    proc = in_namespace(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stopped = 0
    for k in range(5):
        rc, err = int((keep / f"rc-{k}").read_text()), (keep / f"err-{k}").read_text()
        assert "Traceback" not in err, err[-3000:]
        if rc:
            stopped += 1
            assert err.strip().splitlines()[-1].startswith(f"loralay: cannot write {mnt}"), err
        got = [(p.name, pq.read_table(p).to_pylist())
               for p in sorted((keep / f"data-{k}").glob("*.parquet"))]
        assert got == rows_as_written(built_sample[0]), k
    assert stopped >= 3  # most sizes ran out somewhere (state, Parquet, report)


def test_a_read_only_out_and_a_full_export_are_one_line(built_sample, tmp_path):
    mnt, keep = tmp_path / "mnt", tmp_path / "keep"
    mnt.mkdir()
    keep.mkdir()
    script = (f"mount -t tmpfs -o size=64m tmpfs {mnt}\nmkdir {mnt}/ro\n"
              f"mount -o remount,ro {mnt}\n"
              f"set +e\n{sys.executable} -m loralay_build.cli build --source local --manifest "
              f"{SAMPLE} --out {mnt}/ro/ds 2> {keep}/build.err; echo $? > {keep}/build.rc\n"
              f"mount -o remount,rw,size=40k {mnt}\n"
              f"{sys.executable} -m loralay_build.cli export vila {built_sample[0]} --out "
              f"{mnt}/vila 2> {keep}/export.err; echo $? > {keep}/export.rc\n")
    proc = in_namespace(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name, words in (("build", "read-only file system"), ("export", "no space left")):
        err = (keep / f"{name}.err").read_text()
        assert int((keep / f"{name}.rc").read_text()) == 2, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert words in err and err.startswith("loralay: "), err


def test_eval_on_a_read_only_dataset_prints_the_scores_then_one_line(built_sample, tmp_path):
    mnt, keep = tmp_path / "mnt", tmp_path / "keep"
    mnt.mkdir()
    keep.mkdir()
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "prediction": "a summary"}) + "\n"
                             for i in _predictions(built_sample[0])))
    script = (f"mount -t tmpfs -o size=64m tmpfs {mnt}\ncp -r {built_sample[0]} {mnt}/ds\n"
              f"mount -o remount,ro {mnt}\nset +e\n"
              f"{sys.executable} -m loralay_build.cli eval {mnt}/ds --predictions {preds} "
              f"--out {mnt}/scores.json > {keep}/out 2> {keep}/err; echo $? > {keep}/rc\n")
    proc = in_namespace(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    err = (keep / "err").read_text()
    assert int((keep / "rc").read_text()) == 2 and "Traceback" not in err, err
    assert one_line_error(subprocess.CompletedProcess([], 2, "", err)) == (
        f"loralay: cannot write {mnt}/scores.json (read-only file system); "
        "the scores are above")
    assert "predictions" in (keep / "out").read_text()


# --- 7. limits misclassed ------------------------------------------------------------------------

def test_a_page_too_large_to_render_is_memory_not_internal_error(tmp_path):
    """`image_dpi: 600` on an A0 page ran out of memory and was recorded `internal_error`,
    so every rerun burnt the memory again; it is `memory`, retried once the limit is raised."""
    src = SAMPLE.parent / "pdf" / "en_onecol_timing_note.pdf"
    qdf = tmp_path / "q.pdf"
    subprocess.run(["qpdf", "--qdf", "--object-streams=disable", str(src), str(qdf)],
                   check=True)
    import re
    a0 = re.sub(rb"/MediaBox \[[^\]]*\]", b"/MediaBox [ 0 0 2384 3370 ]", qdf.read_bytes())
    pdf = tmp_path / "a0.pdf"
    pdf.write_bytes(subprocess.run(["fix-qdf"], input=a0, capture_output=True,
                                   check=True).stdout)
    line = next(json.loads(x) for x in SAMPLE.read_text().splitlines()
                if "timing_note" in x)
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({**line, "id": "a0", "file": str(pdf)}) + "\n")
    out = tmp_path / "ds"
    cfg = config(tmp_path, images=True, image_dpi=600, worker_memory_mb=1024)
    build_local(manifest, out, "--config", str(cfg))
    doc = json.loads((out / "report.json").read_text())["documents"]["a0"]
    assert (doc["class"], doc["stage"]) == ("memory", "render"), doc
    again = build_local(manifest, out, "--config", str(cfg))
    assert "resuming: all 1 documents done; nothing to redo" in again.stderr


def test_the_smallest_memory_setting_builds_a_real_paper(tmp_path):
    """At worker_memory_mb: 256 (the least the settings accept) this paper failed in one
    build of two (`internal_error: store: ArrowMemoryError`): the duplicate print's first
    use imported datasketch inside the capped task (~160 MB of address space). A worker
    now loads it before its cap (tests/test_pool.py has the deterministic case)."""
    line = next(json.loads(x) for x in SAMPLE.read_text().splitlines()
                if "twocol_graphs" in x)
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({**line, "file": str(SAMPLE.parent / line["file"])}) + "\n")
    out = tmp_path / "ds"
    build_local(manifest, out, "--config", str(config(tmp_path, worker_memory_mb=256)))
    doc = json.loads((out / "report.json").read_text())["documents"][line["id"]]
    assert doc["status"] == "kept", doc


# --- 8. stale reads through `datasets` -----------------------------------------------------------

def load_in_fresh_process(folder: Path, cache: Path) -> dict[str, list[str]]:
    code = ("import json, sys, datasets; ds = datasets.load_dataset(sys.argv[1]); "
            "print(json.dumps({s: list(ds[s]['article_id']) for s in ds}))")
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True, timeout=300, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ids_as_written(folder: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, rows in rows_as_written(folder):
        out.setdefault(name.split("-")[0], []).extend(r["article_id"] for r in rows)
    return out


def test_load_dataset_never_serves_an_earlier_builds_rows(built_sample, tmp_path):
    """`load_dataset(DIR)` keyed its cache on the folder's name and the card: another corpus
    built into a folder of the same name, or a folder rebuilt after the manifest changed,
    came back with the old rows."""
    cache = tmp_path / "hf-cache"
    x, y = tmp_path / "x" / "ds", tmp_path / "y" / "ds"
    copy_run(built_sample[0], x)
    assert load_in_fresh_process(x, cache) == ids_as_written(x)
    manifest = tmp_path / "two.jsonl"
    lines = SAMPLE.read_text().splitlines()
    keep = [ln for ln in lines if json.loads(ln)["id"] in ("fr_hal_cover_glaciers",
                                                           "en_twocol_graphs",
                                                           "es_scielo_suelos")]
    manifest.write_text("\n".join(
        json.dumps({**json.loads(ln), "file": str(SAMPLE.parent / json.loads(ln)["file"])})
        for ln in keep) + "\n")
    assert build_local(manifest, y).returncode == 0
    assert load_in_fresh_process(y, cache) == ids_as_written(y) != ids_as_written(x)
    assert build_local(manifest, x, "--fresh").returncode == 0
    assert load_in_fresh_process(x, cache) == ids_as_written(x) == ids_as_written(y)


def test_the_dataset_reader_refuses_a_folder_without_shards(tmp_path):
    (tmp_path / "data").mkdir()
    with pytest.raises(ConfigError, match="no dataset shards"):
        Dataset.open(tmp_path)


@pytest.mark.stress
def test_ctrl_c_is_one_line_exit_130_and_the_rerun_equals_a_fresh_build(built_sample,
                                                                         tmp_path):
    """Issue 46, 7: Ctrl-C (SIGINT to the terminal's process group: the command and its
    workers) printed click's `Aborted!` and exited 1, though the rerun resumes."""
    import signal  # noqa: PLC0415
    import time  # noqa: PLC0415

    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                             "local", "--manifest", str(SAMPLE), "--out", str(out),
                             "--workers", "2"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    shard = out / "state" / "shard-00000-of-00001.sqlite"
    while proc.poll() is None and not shard.exists():  # the documents' work has begun
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert err.splitlines()[-1] == ("loralay: build interrupted; run the same command to "
                                    "resume"), err[-2000:]
    assert "Traceback" not in err and "Aborted!" not in err, err[-3000:]
    build_local(SAMPLE, out, check=True)
    assert rows_as_written(out) == rows_as_written(built_sample[0])


def test_ctrl_c_in_a_command_that_does_not_resume_says_only_interrupted(monkeypatch):
    from click.testing import CliRunner  # noqa: PLC0415

    import loralay_build.extract_cli as extract_cli  # noqa: PLC0415
    from loralay_build.cli import main  # noqa: PLC0415

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(extract_cli, "extract_files", interrupted)
    result = CliRunner().invoke(main, ["extract", str(REPO / "data" / "sample" / "pdf" /
                                                      "en_twocol_graphs.pdf")])
    assert result.exit_code == 130
    assert result.output.splitlines() == ["loralay: extract interrupted"]
