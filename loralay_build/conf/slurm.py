"""How `--executor slurm` asks Slurm for resources: the keys of the generated job scripts.

Kept apart from `DocumentSettings` on purpose: where a shard runs never changes its result,
so none of these keys enters the staleness hash (changing the partition redoes nothing).
Defaults suit a small test node (2 CPUs, partition `debug`); a real cluster sets its own.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

_SBATCH_OPTION = re.compile(r"^--[a-z][a-z0-9-]*(=[^\s'\"`$;&|<>\\]+)?$")


def _sbatch_option(value: str) -> str:
    """One `#SBATCH` option: a newline or shell syntax would end the script's header or run
    as a command in the job."""
    if not _SBATCH_OPTION.match(value):
        raise ValueError("one option like --qos=short (no spaces, quotes or shell characters)")
    return value


SbatchOption = Annotated[str, AfterValidator(_sbatch_option)]


class SlurmFields(BaseModel):
    """Resources of the shard array and the finish job (both take the same)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_default=True)

    slurm_partition: str | None = Field(
        None, pattern=r"^[\w.-]+$", description="partition (null: the cluster's default)")
    slurm_time: str = Field("01:00:00", pattern=r"^(\d+-)?\d{1,3}(:\d{2}){0,2}$",
                            description="wall-clock limit of one shard, Slurm's [D-]HH:MM:SS")
    slurm_mem_per_cpu_mb: int = Field(2048, ge=64, description="memory per allocated CPU")
    slurm_cpus_per_task: int = Field(1, ge=1, le=1024,
                                     description="CPUs of one shard (= its worker processes)")
    slurm_account: str | None = Field(None, pattern=r"^[\w.-]+$",
                                      description="account to charge (null: your default)")
    slurm_max_parallel: int | None = Field(
        None, ge=1, description="shards running at once (the array's %N; null: no cap)")
    slurm_extra_sbatch: list[SbatchOption] = Field(
        [], description="more `#SBATCH` options, e.g. ['--qos=short', '--constraint=amd']")
    slurm_poll_s: float = Field(5, gt=0, le=3600, allow_inf_nan=False,
                                description="how often --wait asks squeue")
