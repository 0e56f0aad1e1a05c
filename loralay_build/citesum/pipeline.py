"""The CiteSum pipeline (`--source citesum`) behind the project's `Pipeline` interface:
no fetch (the S2ORC shards are on disk), one "shard" that is the three passes (their own
unit of work is an S2ORC shard file, run in the bounded worker pool), then the finish.
--limit, --shard and --finish mean nothing here and are refused; it runs locally only."""

from __future__ import annotations

from pathlib import Path

from ..conf import CiteSumSettings
from ..errors import BuildStopped, ConfigError
from ..machinery.pool import TaskLimits
from ..machinery.request import BuildRequest, BuildResult
from ..runfolder import RunFolder
from ..store.citesum import CiteSumState
from .build import Work, inputs, run_passes, write_outputs
from .stages import StageRun


def _settings(req: BuildRequest) -> CiteSumSettings:
    s = req.settings
    assert isinstance(s, CiteSumSettings)
    return s


class CiteSumPipeline:
    name = "citesum"
    executors = frozenset({"local"})
    fetches = False

    @staticmethod
    def state_path(layout: RunFolder) -> str:
        return str(layout.state_dir / "citesum.sqlite")

    def check(self, req: BuildRequest) -> None:
        if req.limit is not None or req.sharded or req.finish_only or req.refresh:
            raise ConfigError("--source citesum takes --workers, --fresh and --retry; not "
                              "--limit, --shard/--num-shards, --finish or --refresh")
        inputs(_settings(req))

    def fresh_deletions(self, layout: RunFolder) -> list[Path]:
        """The passes' files and their state; the dataset, card and report are rewritten
        by the finish, and nothing else in the folder is CiteSum's to remove."""
        return [entry for entry in (layout.work_dir, Path(self.state_path(layout)))
                if entry.exists() or entry.is_symlink()]

    def would_do(self, req: BuildRequest) -> list[str]:
        s = _settings(req)
        citing, cited = inputs(s)
        shards = ", ".join(f"{len(paths)} {kind}" for kind, paths in cited.items())
        return [f"would read {len(citing)} citing S2ORC shard(s) and {shards} shard(s) "
                f"({s.s2orc_format} format), fetching nothing, then run the three passes "
                f"with {req.workers} worker(s)"]

    def claim_shards(self, layout: RunFolder, num_shards: int) -> None:
        """One unit of work: the passes (never split across commands)."""

    def fetch(self, req: BuildRequest, layout: RunFolder) -> str | None:
        return None

    def shards_to_do(self, req: BuildRequest, layout: RunFolder, num_shards: int
                     ) -> list[int]:
        return [0]

    def run_shard(self, req: BuildRequest, layout: RunFolder, shard: int,
                  num_shards: int) -> None:
        s = _settings(req)
        run = StageRun(req.workers, TaskLimits(s.shard_timeout_s, s.worker_memory_mb),
                       req.retry)
        with CiteSumState(self.state_path(layout)) as state:
            run_passes(s, Work(layout.work_dir), state, run)

    def finish(self, req: BuildRequest, layout: RunFolder, stopped: str | None
               ) -> BuildResult:
        with CiteSumState(self.state_path(layout)) as state:
            report = write_outputs(_settings(req), layout.out, Work(layout.work_dir), state)
        counts = report["splits"]
        papers = report["funnel"][0]["count"]
        if not any(counts.values()):
            raise BuildStopped(f"{req.out}: no example kept of {papers} papers; "
                               f"{req.out / 'report.md'} says why each was dropped")
        return BuildResult(req.out, counts, papers, report["verdict"])
