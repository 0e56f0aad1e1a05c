"""What Slurm still holds of our jobs, from `squeue` alone.

Why not `sacct`: accounting is an optional daemon that small clusters (and the one-node test
cluster) do not run; a job's end is read from the status file it writes (`jobscript.py`).
"""

from __future__ import annotations

import getpass
import subprocess
from collections.abc import Iterable

from ..errors import BuildStopped


def queue() -> dict[str, str]:
    """Our jobs in the queue, one entry per array task (`123_4`) or job (`124`): state."""
    proc = subprocess.run(["squeue", "-h", "--array", "-u", getpass.getuser(), "-o", "%i|%T"],
                          capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise BuildStopped(f"squeue: {(proc.stderr or proc.stdout).strip() or 'failed'}")
    rows = (line.split("|", 1) for line in proc.stdout.splitlines() if "|" in line)
    return {job.strip(): state.strip() for job, state in rows}


def queued(job_ids: Iterable[str]) -> dict[str, str]:
    """The queued tasks and jobs among `job_ids` (an array id stands for all its tasks)."""
    wanted = {str(i) for i in job_ids if i}
    return {job: state for job, state in queue().items() if job.split("_")[0] in wanted}
