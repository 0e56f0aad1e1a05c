"""The Slurm executor (`--executor slurm`): a pipeline's shards as one Slurm job array, the
finish as one job after it (`afterok`), and only what is missing on a re-submission.

The submitter does what must happen once and what is cheap: it checks everything, claims the
shard count (a different `--num-shards` than the run used is refused, as for `--shard`),
fetches (unless `--fetch-job`), asks the pipeline which shards still have work (the plan a
shard makes itself: done when every one of its documents has a current ledger entry), then
submits with `sbatch` (`jobscript.py` says why not submitit) and lets go of the run folder.
The jobs run the ordinary `--shard K --num-shards N` and `--finish` commands, so the
dataset is the one a single machine builds; a `--refresh` is carried to every job (the fetch
asks only for what is new, a shard leaves the dataset's documents as they are, the finish
grows the dataset), so it is the one a refresh on a single machine makes.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import yaml

from ..atomic import write_atomic
from ..conf import CommonSettings
from ..errors import BuildStopped, ConfigError, RunLocked
from ..locks import RunLock
from ..machinery.interfaces import Pipeline, start_over
from ..machinery.request import BuildRequest, BuildResult
from ..owned import BUILD, claim_folder
from ..runfolder import RunFolder, recorded_shards
from .jobscript import Job, SlurmDir, array_spec, script, shard_count_words
from .slurmwait import Submission, wait_for
from .squeue import queued

log = logging.getLogger("loralay.slurm")
DEFAULT_SHARDS = 2  # one per CPU of the smallest node worth submitting to
SHARED_FS = ("nfs", "nfs4", "lustre", "gpfs", "beegfs", "cephfs", "ceph", "fuse.glusterfs",
             "glusterfs", "panfs", "wekafs", "fuse.sshfs", "9p", "virtiofs")


def check_slurm() -> None:
    for tool in ("sbatch", "squeue", "scancel"):
        if shutil.which(tool) is None:
            raise ConfigError(f"--executor slurm: `{tool}` not found on PATH (run this on a "
                              "Slurm login node)")


def filesystem_of(path: Path) -> str:
    """The type of the mount holding `path` (the longest mount point above it)."""
    path = path.resolve()
    best, kind = "", "unknown"
    for line in Path("/proc/mounts").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 3 and path.is_relative_to(parts[1]) and len(parts[1]) > len(best):
            best, kind = parts[1], parts[2]
    return kind


def warn_unshared(out: Path) -> None:
    kind = filesystem_of(out if out.exists() else out.parent)
    if kind not in SHARED_FS:
        log.warning("%s is on a %s filesystem: every node running a shard must see this "
                    "folder (fine on a one-node cluster; elsewhere use a shared one)",
                    out, kind)


def sbatch(path: Path) -> str:
    proc = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).strip().splitlines()
        raise BuildStopped(f"sbatch {path}: {reason[-1] if reason else 'failed'}")
    return proc.stdout.strip().split(";")[0]


def refuse_if_queued(where: SlurmDir) -> None:
    """A second submission while the last one's jobs wait or run would do shards twice."""
    if not where.jobs_file.exists():
        return
    ids = [i for i in json.loads(where.jobs_file.read_text())["jobs"].values() if i]
    still = sorted(queued(ids))
    if still:
        raise RunLocked(f"{where.root.parent}: jobs {', '.join(still)} of the last submission "
                        f"are still queued or running; follow them with `squeue -j "
                        f"{','.join(ids)}`, or `scancel` them first")


def base_argv(req_source: str, out: Path, where: SlurmDir, sub: str) -> list[str]:
    return [sys.executable, "-m", "loralay_build.cli", sub, "--source", req_source,
            "--out", str(out), "--config", str(where.settings_file)]


class SlurmExecutor:
    """The shards as one job array, the finish as one job after it (see the module doc)."""

    name = "slurm"

    def check(self, req: BuildRequest) -> None:
        if req.shard is not None or req.finish_only:
            raise ConfigError(f"--executor {self.name} runs every shard and the finish "
                              "itself: give --num-shards N, not --shard or --finish")
        if req.workers != 1:
            raise ConfigError(f"--workers {req.workers}: a submitted shard has one worker per "
                              "CPU Slurm gives it; set --slurm-cpus-per-task instead")
        if req.fetched:
            raise ConfigError("--fetched is for one shard (--shard K --num-shards N) of a "
                              "submitted run")
        check_slurm()

    def run(self, pipeline: Pipeline, req: BuildRequest) -> BuildResult:
        out = req.out.resolve()
        layout = RunFolder(out)
        where = SlurmDir(layout.slurm_dir)
        refuse_if_queued(where)  # first: running shards hold the run lock, this says more
        claim_folder(out, BUILD, fresh=req.fresh)
        with RunLock(layout):
            sub = _submit_locked(pipeline, replace(req, out=out), layout, where)
        log.info(sub.follow_line())
        if not req.wait:
            return BuildResult(req.out, {}, 0, "submitted")
        return wait_for(sub, req.settings.slurm_poll_s)


def _submit_locked(pipeline: Pipeline, req: BuildRequest, layout: RunFolder,
                   where: SlurmDir) -> Submission:
    refuse_if_queued(where)
    if req.fresh:
        start_over(pipeline, layout)
    n = req.num_shards or recorded_shards(layout) or DEFAULT_SHARDS
    req = replace(req, num_shards=n)
    pipeline.claim_shards(layout, n)  # before fetching: a mismatch must cost nothing
    warn_unshared(layout.out)
    for d in (where.logs, where.status):
        d.mkdir(parents=True, exist_ok=True)
    write_atomic(where.settings_file, yaml.safe_dump(
        req.settings.user_view(), sort_keys=True, allow_unicode=True).encode("utf-8"))
    if not req.fetch_job:
        stopped = pipeline.fetch(req, layout)
        if stopped:
            raise BuildStopped(f"{stopped}; nothing submitted")
        shards = pipeline.shards_to_do(req, layout, n)
    else:
        shards = list(range(n))
    return _submit_jobs(req, layout, where, n, shards)


def _retry_words(req: BuildRequest) -> list[str]:
    """`--retry CLASS` for every job, so a shard retries what its plan was made with."""
    return [w for r in sorted(req.retry) for w in ("--retry", r)]


def _refresh_words(req: BuildRequest) -> list[str]:
    """`--refresh` for every job: the submitter planned the shards as a refresh's."""
    return ["--refresh"] if req.refresh else []


def _submit_jobs(req: BuildRequest, layout: RunFolder, where: SlurmDir, n: int,
                 shards: Sequence[int]) -> Submission:
    """Each id is recorded as soon as Slurm gives it: a failure half-way still leaves what
    was submitted known to the next submission (which waits for it)."""
    src, out, s = req.settings.source, layout.out, req.settings
    sub = Submission(where, n, list(shards), {"fetch": None, "shards": None, "finish": None})
    after = None
    if req.fetch_job:
        extra = _retry_words(req) + _refresh_words(req) + (
            ["--limit", str(req.limit)] if req.limit else [])
        after = _submit(sub, Job("fetch", base_argv(src, out, where, "fetch") + extra), s)
    if shards:
        argv = (base_argv(src, out, where, "build") + shard_count_words(n) + _retry_words(req)
                + _refresh_words(req))
        after = _submit(sub, Job("shards", argv, array_spec(shards, s.slurm_max_parallel),
                                 after), s)
    _submit(sub, Job("finish", base_argv(src, out, where, "build") + ["--finish"]
                     + _refresh_words(req), None, after), s)
    return sub


def _submit(sub: Submission, job: Job, settings: CommonSettings) -> str:
    path = sub.where.root / f"{job.name}.sbatch"
    write_atomic(path, script(settings.slurm(), job, sub.where, Path.cwd()).encode("utf-8"))
    sub.jobs[job.name] = job_id = sbatch(path)
    write_atomic(sub.where.jobs_file, json.dumps(sub.to_json(), indent=1).encode("utf-8"))
    return job_id
