"""What a user asks of `loralay build` (`BuildRequest`) and what a build answers
(`BuildResult`): plain records shared by the pipelines and the executors.

The request checks only what holds for every pipeline and executor (a count below one, a
`--shard` without `--num-shards`); each pipeline and executor checks the options it takes
(`run/pipeline.py` calls them in turn)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..conf import CommonSettings
from ..errors import ConfigError
from ..failures import check_retry

# how the verdict of a refresh that found nothing new begins: its one line, which a
# submitted finish's log carries back to `--wait` (no report is written again)
NOTHING_NEW = "refresh: nothing new since"


@dataclass
class BuildRequest:
    settings: CommonSettings
    out: Path
    limit: int | None = None
    workers: int = 1
    shard: int | None = None
    num_shards: int | None = None
    finish_only: bool = False
    fresh: bool = False
    retry: frozenset[str] = field(default_factory=frozenset)
    executor: str = "local"  # where the shards run: a name of run/pipeline.py's EXECUTORS
    wait: bool = False  # slurm: stay attached until the finish is done
    fetch_job: bool = False  # slurm: fetch in a job of its own, not on this machine
    fetched: bool = False  # a shard of a submitted run: the submitter already fetched
    refresh: bool = False  # add what is new to the dataset already built (pdf/refresh.py)

    @property
    def sharded(self) -> bool:
        return self.num_shards is not None

    @property
    def one_shard(self) -> bool:
        """This command does one shard's documents only (`--shard K`)."""
        return self.shard is not None and not self.finish_only

    def check(self) -> None:
        """Options every build reads; each wrong one is a ConfigError naming it."""
        if self.workers < 1:
            raise ConfigError(f"--workers {self.workers}: must be 1 or more")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit {self.limit}: must be 1 or more")
        if self.num_shards is not None and self.num_shards < 1:
            raise ConfigError(f"--num-shards {self.num_shards}: must be 1 or more")
        if self.refresh and self.fresh:
            raise ConfigError("--refresh with --fresh: a refresh adds to the dataset that "
                              "--fresh would delete; give one of them")
        self.retry = check_retry(tuple(self.retry))


@dataclass(frozen=True)
class BuildResult:
    out: Path
    kept: dict[str, int]
    documents: int
    verdict: str

    def line(self) -> str:
        splits = ", ".join(f"{name} {n}" for name, n in self.kept.items())
        return (f"{self.verdict}; {splits}; dataset {self.out}, report "
                f"{self.out / 'report.md'}")
