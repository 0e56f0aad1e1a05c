"""The two small interfaces a build is made of: a `Pipeline` (what is built) and an
`Executor` (where its shards run); `run/pipeline.py` pairs them (see its docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..owned import remove
from ..runfolder import RunFolder
from .request import BuildRequest, BuildResult


class Pipeline(Protocol):
    """A kind of build, in the steps an executor calls (each under the run folder's lock
    the executor holds)."""

    name: str
    executors: frozenset[str]  # the executors that can run it
    fetches: bool  # has a harvest of its own (`loralay fetch`)

    def check(self, req: BuildRequest) -> None:
        """Its own options and inputs, before anything is written."""

    def fresh_deletions(self, layout: RunFolder) -> list[Path]:
        """`--fresh`: what earlier runs of it wrote in the run folder and a new start
        removes; `--dry-run --fresh` lists the same entries that `start_over` deletes."""

    def would_do(self, req: BuildRequest) -> list[str]:
        """`--dry-run`: one line per thing a run would read or fetch, then process."""

    def claim_shards(self, layout: RunFolder, num_shards: int) -> None:
        """Record the shard count the run is done in, or refuse another one (before any
        work, so a mismatch costs nothing)."""

    def fetch(self, req: BuildRequest, layout: RunFolder) -> str | None:
        """What happens once before the shards (the harvest); the one-line reason when it
        stopped early (what it got is kept, a rerun resumes)."""

    def shards_to_do(self, req: BuildRequest, layout: RunFolder, num_shards: int
                     ) -> list[int]:
        """The shards with work left (for an executor that submits only those)."""

    def run_shard(self, req: BuildRequest, layout: RunFolder, shard: int,
                  num_shards: int) -> None:
        """One shard's work, resumable: what is current is not done again."""

    def finish(self, req: BuildRequest, layout: RunFolder, stopped: str | None
               ) -> BuildResult:
        """The corpus-wide part: the dataset, its card and the report."""


class Executor(Protocol):
    name: str

    def check(self, req: BuildRequest) -> None:
        """The options it takes."""

    def run(self, pipeline: Pipeline, req: BuildRequest) -> BuildResult:
        """Run the request's work of `pipeline`."""


def start_over(pipeline: Pipeline, layout: RunFolder) -> None:
    """`--fresh`, for every executor: exactly the entries the pipeline says it removes."""
    for entry in pipeline.fresh_deletions(layout):
        remove(entry)
