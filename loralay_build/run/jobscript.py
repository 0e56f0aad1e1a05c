"""The batch scripts `--executor slurm` hands to `sbatch`: plain text a user can read and rerun.

Why scripts and not pickled callables (submitit): a job runs the very command a user could
type (`python -m loralay_build.cli build ... --shard K --num-shards N`), with the submitter's
interpreter and environment (`--export=ALL`), so a job can be inspected, re-submitted by
hand with `sbatch`, or run without Slurm at all. Each job writes its exit status to
`status/<job id>.rc` last: `--wait` then knows how a job ended without Slurm accounting
(`sacct` is often absent on small clusters); a job killed by `scancel` writes none.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..conf.slurm import SlurmFields


@dataclass(frozen=True)
class SlurmDir:
    """Where a submission keeps its scripts, logs and exit statuses, inside the run folder
    (every node must see it anyway)."""

    root: Path

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def status(self) -> Path:
        return self.root / "status"

    @property
    def jobs_file(self) -> Path:
        return self.root / "jobs.json"

    @property
    def settings_file(self) -> Path:
        """The submitter's effective settings: every job reads these, not the user's files."""
        return self.root / "settings.yaml"

    def shard_log(self, array_id: str, shard: int) -> Path:
        return self.logs / f"shard-{shard}.{array_id}.log"

    def job_log(self, name: str, job_id: str) -> Path:
        return self.logs / f"{name}.{job_id}.log"

    def rc_file(self, job_id: str) -> Path:
        """`job_id` is `ARRAY_TASK` for an array task (Slurm's `%A_%a`)."""
        return self.status / f"{job_id}.rc"


@dataclass(frozen=True)
class Job:
    name: str  # fetch | shards | finish
    argv: Sequence[str]  # the command; `$VAR` words are left for the job's shell
    array: str | None = None  # e.g. "0,2,3%2"
    depends_on: str | None = None  # a job id: start after it ended well


def _word(arg: str) -> str:
    """Quote for the shell, but let `$SLURM_...` words expand in the job."""
    return f'"{arg}"' if arg.startswith("$") else shlex.quote(arg)


def header(fields: SlurmFields, job: Job, where: SlurmDir, workdir: Path) -> list[str]:
    log = where.logs / ("shard-%a.%A.log" if job.array else f"{job.name}.%j.log")
    opts = [f"--job-name=loralay-{job.name}", f"--output={log}", f"--chdir={workdir}",
            "--export=ALL", f"--time={fields.slurm_time}",
            f"--cpus-per-task={fields.slurm_cpus_per_task}",
            f"--mem-per-cpu={fields.slurm_mem_per_cpu_mb}M"]
    if fields.slurm_partition:
        opts.append(f"--partition={fields.slurm_partition}")
    if fields.slurm_account:
        opts.append(f"--account={fields.slurm_account}")
    if job.array:
        opts.append(f"--array={job.array}")
    if job.depends_on:
        opts += [f"--dependency=afterok:{job.depends_on}", "--kill-on-invalid-dep=yes"]
    opts += fields.slurm_extra_sbatch
    return [f"#SBATCH {shlex.quote(o)}" for o in opts]


def script(fields: SlurmFields, job: Job, where: SlurmDir, workdir: Path) -> str:
    job_id = "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" if job.array else "${SLURM_JOB_ID}"
    rc = shlex.quote(str(where.status)) + f'/"{job_id}.rc"'
    lines = ["#!/bin/bash", f"# loralay {job.name}: written by `loralay build --executor slurm`",
             *header(fields, job, where, workdir), "",
             " ".join(_word(a) for a in job.argv), "rc=$?",
             f"echo \"$rc\" > {rc}.tmp && mv {rc}.tmp {rc}", 'exit "$rc"', ""]
    return "\n".join(lines)


def shard_count_words(num_shards: int, cpus_env: str = "SLURM_CPUS_PER_TASK") -> list[str]:
    """Task K of the array is shard K, with one worker per CPU Slurm gave it."""
    return ["--shard", "$SLURM_ARRAY_TASK_ID", "--num-shards", str(num_shards), "--fetched",
            "--workers", f"${{{cpus_env}:-1}}"]


def array_spec(shards: Sequence[int], max_parallel: int | None) -> str:
    spec = ",".join(str(k) for k in shards)
    return f"{spec}%{max_parallel}" if max_parallel else spec
