"""`--executor slurm` and the shard contract under it, on the sample and the shared corpus.

The tests marked `cluster` submit to a real Slurm (`../shared/tools/slurm-local.sh start`
makes a one-node one) and skip, saying why, where `sinfo` does not answer. The others check
what the submitter decides before Slurm is involved, and the lock that lets shards run side
by side.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loralay_build.conf import ConfigError, load_settings
from loralay_build.run.jobscript import Job, SlurmDir, array_spec, script

from .conftest import REPO, SAMPLE, config, copy_run, loralay, shared_path

pytestmark = pytest.mark.e2e


def build_sample(out: Path, *extra: str, manifest: Path = SAMPLE, env: dict | None = None
                 ) -> subprocess.CompletedProcess:
    return loralay("build", "--source", "local", "--manifest", str(manifest), "--out",
                   str(out), *extra, env=env)


def parquet_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "data").glob("*.parquet"))}


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def plain_sample(built_sample) -> Path:
    """The sample built on this machine in one go: what every other way must equal."""
    return built_sample[0]


# --- without Slurm ---------------------------------------------------------------------

def test_mixed_shard_counts_are_refused(plain_sample, tmp_path):
    """A plain run then `--shard 0 --num-shards 2` once reported "13 kept of 11"."""
    out = tmp_path / "ds"
    shutil.copytree(plain_sample, out)
    proc = build_sample(out, "--shard", "0", "--num-shards", "2")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"loralay: {out}: this run was processed with the plain command (no --shard), not "
        f"--num-shards 2; go on with the plain command (no --shard), or start over with --fresh")
    assert not list((out / "state").glob("shard-*-of-00002.sqlite"))
    ok(build_sample(out, "--finish"))
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"].startswith("OK: 8 kept of 11;")
    assert parquet_bytes(out) == parquet_bytes(plain_sample)


def test_shards_of_one_run_work_side_by_side(plain_sample, tmp_path):
    """Both shards started at once: the second used to stop with "another build is running"."""
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(SAMPLE), "--out", str(out), "--num-shards", "2", "--shard"]
    procs = [subprocess.Popen([*cmd, str(k)], cwd=REPO, stderr=subprocess.PIPE, text=True)
             for k in (0, 1)]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    ok(build_sample(out, "--finish"))
    assert parquet_bytes(out) == parquet_bytes(plain_sample)


def test_a_plain_build_waits_for_no_running_shard(tmp_path):
    """While a shard holds the run (shared), the whole-run commands are refused at once."""
    from loralay_build.errors import RunLocked
    from loralay_build.locks import RunLock, ShardLock
    from loralay_build.runfolder import RunFolder

    layout = RunFolder(tmp_path / "ds")
    with ShardLock(layout, 0, 2):
        with ShardLock(layout, 1, 2):
            pass
        with pytest.raises(RunLocked, match="shard 0 of 2 is already running"), \
                ShardLock(layout, 0, 2):
            pass
        with pytest.raises(RunLocked, match="another build is running"), RunLock(layout):
            pass
    with RunLock(layout), pytest.raises(RunLocked, match="another build holds the whole run"), \
            ShardLock(layout, 1, 2):
        pass


def test_slurm_settings_never_change_a_documents_fingerprint():
    base = load_settings("local")
    moved = load_settings("local", None, {"slurm_partition": "long", "slurm_time": "2-00:00:00",
                                          "slurm_cpus_per_task": 8,
                                          "slurm_extra_sbatch": ["--qos=short"]})
    assert moved.document() == base.document()
    assert moved.slurm().slurm_partition == "long"


@pytest.mark.parametrize(("override", "message"), [
    ({"slurm_time": "an hour"}, "slurm_time: 'an hour' is not valid"),
    ({"slurm_extra_sbatch": ["--qos=short\nrm -rf ~"]}, "slurm_extra_sbatch"),
    ({"slurm_extra_sbatch": ["--comment=$(id)"]}, "slurm_extra_sbatch"),
    ({"slurm_cpus_per_task": 0}, "slurm_cpus_per_task: 0 is not valid"),
])
def test_bad_slurm_settings_are_one_line(override, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as e:
        load_settings("local", None, override)
    assert "\n" not in str(e.value)


def test_job_script_runs_the_shard_command_and_records_how_it_ended(tmp_path):
    s = load_settings("local", None, {"slurm_partition": "debug", "slurm_account": "lab",
                                      "slurm_extra_sbatch": ["--qos=short"]}).slurm()
    where = SlurmDir(tmp_path / "my run" / "slurm")
    text = script(s, Job("shards", ["python3", "-m", "x", "--shard", "$SLURM_ARRAY_TASK_ID"],
                         array_spec([0, 2, 3], 2), "41"), where, tmp_path)
    header = [ln for ln in text.splitlines() if ln.startswith("#SBATCH")]
    assert "#SBATCH --array=0,2,3%2" in header
    assert "#SBATCH --dependency=afterok:41" in header
    assert "#SBATCH --partition=debug" in header and "#SBATCH --account=lab" in header
    assert header[-1] == "#SBATCH --qos=short"
    # run by bash without Slurm: the status file appears under the path with a space
    fake = text.replace("python3 -m x", "exit_with() { return 3; }; exit_with")
    env = {"SLURM_ARRAY_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "2", "PATH": "/usr/bin:/bin"}
    where.status.mkdir(parents=True)
    proc = subprocess.run(["bash", "-c", fake], env=env, capture_output=True, text=True)
    assert proc.returncode == 3
    assert where.rc_file("7_2").read_text().strip() == "3"


@pytest.mark.parametrize(("args", "message"), [
    (("--executor", "slurm", "--shard", "0", "--num-shards", "2"),
     "--executor slurm runs every shard and the finish itself"),
    (("--wait",), "--wait and --fetch-job go with --executor slurm"),
    (("--executor", "slurm", "--num-shards", "0"), "--num-shards 0: must be 1 or more"),
    (("--fetched",), "--fetched is for one shard"),
    (("--executor", "slurm", "--workers", "4"), "set --slurm-cpus-per-task instead"),
    (("--executor", "slurm", "--slurm-sbatch", "--qos=a b"),
     "slurm_extra_sbatch: '--qos=a b' is not valid: one option like --qos=short"),
])
def test_executor_options_are_checked_first(tmp_path, args, message):
    proc = build_sample(tmp_path / "ds", *args)
    assert proc.returncode == 2 and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "ds").exists()


def test_no_sbatch_is_one_line_before_any_work(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = build_sample(tmp_path / "ds", "--executor", "slurm",
                        env={**os.environ, "PATH": str(empty)})
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("loralay: --executor slurm: `sbatch` not found on PATH "
                                   "(run this on a Slurm login node)")
    assert not (tmp_path / "ds").exists()


# --- on a real Slurm -------------------------------------------------------------------

def _slurm_reason() -> str | None:
    """None when a Slurm answers here; else why the cluster tests cannot run."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "no Slurm here (sinfo/sbatch not on PATH; `../shared/tools/slurm-local.sh start`)"
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"sinfo does not answer: {e}"
    states = proc.stdout.split()
    if proc.returncode != 0 or not any(s.rstrip("*") in ("idle", "mixed", "allocated")
                                       for s in states):
        return f"no usable Slurm node (sinfo: {(proc.stderr or proc.stdout).strip()[:200]})"
    return None


@pytest.fixture(scope="module")
def slurm() -> None:
    reason = _slurm_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def poll_config(tmp_path_factory) -> Path:
    """Settings of the submitted runs: --wait asks squeue every second (tests are short)."""
    path = tmp_path_factory.mktemp("cfg") / "poll.yaml"
    path.write_text("slurm_poll_s: 1\n", encoding="utf-8")
    return path


def on_slurm(out: Path, config: Path, *extra: str, manifest: Path = SAMPLE
             ) -> subprocess.CompletedProcess:
    return build_sample(out, "--config", str(config), "--executor", "slurm", *extra,
                 manifest=manifest)


def submitted(stderr: str) -> str:
    return next(ln for ln in stderr.splitlines() if "submitted" in ln).split("slurm: ", 1)[1]


@pytest.mark.cluster
def test_sample_on_slurm_equals_one_machine(slurm, plain_sample, poll_config, tmp_path):
    out = tmp_path / "ds"
    proc = ok(on_slurm(out, poll_config, "--num-shards", "4", "--wait"))
    assert submitted(proc.stderr).startswith("submitted shards 0,1,2,3 of 4 as array job ")
    done = sorted(int(m) for m in re.findall(r"shard (\d) of 4 done", proc.stderr))
    assert done == [0, 1, 2, 3]
    assert "done: OK: 8 kept of 11;" in proc.stderr.splitlines()[-1]
    assert parquet_bytes(out) == parquet_bytes(plain_sample)
    # the same command again: every shard is done, only the finish is submitted
    again = ok(on_slurm(out, poll_config, "--num-shards", "4", "--wait"))
    assert submitted(again.stderr).startswith("submitted no shard (all 4 done), the finish")
    assert parquet_bytes(out) == parquet_bytes(plain_sample)
    # the fetch as a job of its own, then the shards after it: the same dataset
    fetched = tmp_path / "fetch-job"
    proc = ok(on_slurm(fetched, poll_config, "--num-shards", "2", "--fetch-job", "--wait"))
    assert submitted(proc.stderr).startswith("submitted fetch as job ")
    assert parquet_bytes(fetched) == parquet_bytes(plain_sample)
    # another shard count on this run is refused before anything is submitted
    other = on_slurm(out, poll_config, "--num-shards", "3")
    assert other.returncode == 2 and "processed with --num-shards 4, not --num-shards 3" \
        in other.stderr.strip().splitlines()[-1]
    assert "submitted" not in other.stderr


def forty_documents(tmp_path: Path) -> Path:
    """The shared corpus (21 PDFs) and 19 of them again under new ids: 40 documents."""
    corpus = shared_path("corpus", "manifest.jsonl")
    rows = [json.loads(x) for x in corpus.read_text().splitlines() if x.strip()]
    for r in rows:
        r["file"] = str(corpus.parent / r["file"])
    copies = [{**r, "id": f"{r['id']}-copy"} for r in rows[:40 - len(rows)]]
    path = tmp_path / "forty.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + copies), encoding="utf-8")
    return path


def running_task(array_id: str, deadline_s: float = 600) -> str:
    """The first task of the array Slurm runs (we cancel it while it works)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        q = subprocess.run(["squeue", "-h", "--array", "-j", array_id, "-o", "%i %T"],
                           capture_output=True, text=True).stdout.split("\n")
        running = [ln.split()[0] for ln in q if ln.endswith("RUNNING")]
        if running:
            return running[0]
        time.sleep(0.5)
    raise AssertionError(f"no task of array {array_id} ran in {deadline_s} s")


@pytest.mark.cluster
def test_a_cancelled_shard_is_rerun_by_the_same_command(slurm, poll_config, tmp_path):
    manifest = forty_documents(tmp_path)
    plain = tmp_path / "plain"
    ok(build_sample(plain, "--workers", "2", manifest=manifest))
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(manifest), "--out", str(out), "--config", str(poll_config),
           "--executor", "slurm", "--num-shards", "4", "--wait"]
    waiting = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.PIPE, text=True)
    while not (out / "slurm" / "jobs.json").exists():
        assert waiting.poll() is None, waiting.communicate()[1]
        time.sleep(0.2)
    array_id = json.loads((out / "slurm" / "jobs.json").read_text())["jobs"]["shards"]
    task = running_task(array_id)
    # cancelled at once: a shard of ten small papers can end within the seconds a second
    # command takes to start (the race this test lost once the machine was idle)
    subprocess.run(["scancel", task], check=True)
    early = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert early.returncode == 2 and "of the last submission are still queued or running" \
        in early.stderr.strip().splitlines()[-1]
    _, err = waiting.communicate(timeout=900)
    shard = int(task.split("_")[1])
    assert waiting.returncode == 1, err
    log = out / "slurm" / "logs" / f"shard-{shard}.{array_id}.log"
    assert f"shard {shard} (cancelled or killed; log {log})" in err.strip().splitlines()[-1]
    assert not (out / "data").exists()
    # the same command: only the cancelled shard, then the finish
    again = ok(subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900))
    assert submitted(again.stderr).startswith(f"submitted shards {shard} of 4 as array job")
    assert parquet_bytes(out) == parquet_bytes(plain)
    report = json.loads((out / "report.json").read_text())
    assert len(report["documents"]) == 40


def test_the_submitter_plans_the_missing_shards_as_the_shards_do(tmp_path):
    """Only shard 1 of 2 has work left after shard 0 ran; a changed per-document setting
    makes both stale again, a changed Slurm setting or a raised limit does not, and a
    `--retry` class only the shards that hold such a failure."""
    from loralay_build.machinery.request import BuildRequest
    from loralay_build.pdf.pipeline import PdfPipeline
    from loralay_build.runfolder import RunFolder

    out = tmp_path / "ds"
    ok(build_sample(out, "--shard", "0", "--num-shards", "2"))
    layout, pipeline = RunFolder(out), PdfPipeline()
    settings = load_settings("local", None, {"manifest": str(SAMPLE)})

    def to_do(s=settings, retry=frozenset()):
        return pipeline.shards_to_do(BuildRequest(s, out, retry=retry), layout, 2)

    assert to_do() == [1]
    ok(build_sample(out, "--shard", "1", "--num-shards", "2"))
    assert to_do() == []
    assert to_do(settings.replace(slurm_partition="long")) == []
    assert to_do(settings.replace(worker_memory_mb=9000, document_timeout_s=900)) == []
    assert to_do(retry=frozenset({"timeout"})) == []  # no shard holds a timeout
    assert to_do(settings.replace(max_edits=59)) == [0, 1]


@pytest.mark.cluster
def test_the_readme_sbatch_recipe_builds_the_same_dataset(slurm, plain_sample, tmp_path):
    text = (REPO / "docs" / "cluster.md").read_text(encoding="utf-8")
    block = text.split("```bash\n# a network source first fetches once", 1)[1]
    block = block.split("\n", 1)[1].split("```", 1)[0]
    out = tmp_path / "ds"
    block = (block.replace("loralay build", f"{sys.executable} -m loralay_build.cli build")
             .replace("m.jsonl", str(SAMPLE)).replace("/shared/ds", str(out)))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["bash", "-euc", block], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    finish = proc.stdout.split()[-1]
    end = time.monotonic() + 600
    while subprocess.run(["squeue", "-h", "-j", finish], capture_output=True,
                         text=True).stdout.strip() and time.monotonic() < end:
        time.sleep(1)
    assert parquet_bytes(out) == parquet_bytes(plain_sample), (tmp_path / "finish.log").read_text()


@pytest.mark.cluster
def test_a_refresh_on_slurm_equals_a_local_one(slurm, tmp_path):
    """test_refresh's v1 built here with images, then refreshed with v2 (new papers, copies
    of old ones, an id gone) on this machine and through Slurm, the fetch on the submitter
    and as a job: the same data and page files, card and diff.json; then nothing new."""
    from .helpers.images import dataset_files
    from .helpers.refresh import make_manifests

    (tmp_path / "m").mkdir()
    v1, v2 = make_manifests(tmp_path / "m")
    conf = config(tmp_path, images=True, slurm_poll_s=1)
    first = tmp_path / "v1"
    ok(build_sample(first, "--config", str(conf), manifest=v1))
    local = copy_run(first, tmp_path / "local")
    ok(build_sample(local, "--refresh", "--config", str(conf), manifest=v2))
    assert json.loads((local / "diff.json").read_text())["version"] == 2

    def files(out: Path) -> dict[str, bytes]:
        return {k: v[2] for k, v in dataset_files(out).items()
                if not k.startswith("report")}

    for how in ((), ("--fetch-job",)):
        out = copy_run(first, tmp_path / f"slurm{len(how)}")
        proc = ok(on_slurm(out, conf, "--refresh", "--wait", *how, manifest=v2))
        verdict = json.loads((local / "report.json").read_text())["verdict"]
        assert f"done: {verdict};" in proc.stderr.splitlines()[-1]
        assert files(out) == files(local), how
        for job in ("shards", "finish", *(["fetch"] if how else [])):
            command = (out / "slurm" / f"{job}.sbatch").read_text().splitlines()[-4]
            assert command.endswith(" --refresh") or " --refresh " in command, job
    before = dataset_files(out)
    again = ok(on_slurm(out, conf, "--refresh", "--wait", manifest=v2))
    assert submitted(again.stderr).startswith("submitted no shard (all 1 done), the finish")
    assert again.stderr.strip().splitlines()[-1].endswith(
        "done: refresh: nothing new since v2; no file rewritten")
    assert dataset_files(out) == before
