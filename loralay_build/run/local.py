"""The local executor: a pipeline's shards on this machine, in this command.

A plain build holds the run folder and does everything (fetch, the one shard, the finish);
`--shard K --num-shards N` does only shard K, side by side with the others (each holds the
run lock shared and its own shard's lock: `locks.py`), and `--finish` only the finish, so
any launcher that can run those commands on a shared folder builds the same dataset.
"""

from __future__ import annotations

import logging

from ..errors import ConfigError
from ..locks import RunLock, ShardLock
from ..machinery.interfaces import Pipeline, start_over
from ..machinery.request import BuildRequest, BuildResult
from ..owned import BUILD, claim_folder
from ..runfolder import RunFolder

log = logging.getLogger("loralay.build")


class LocalExecutor:
    name = "local"

    def check(self, req: BuildRequest) -> None:
        if req.wait or req.fetch_job:
            raise ConfigError("--wait and --fetch-job go with --executor slurm")
        if (req.shard is None) != (req.num_shards is None) or (
                req.shard is not None and req.num_shards is not None
                and not 0 <= req.shard < req.num_shards):
            raise ConfigError("--shard K and --num-shards N go together, with 0 <= K < N")
        if req.fresh and (req.finish_only or req.sharded):
            raise ConfigError("--fresh starts the whole run over: use it without --shard/--finish")
        if req.fetched and (not req.sharded or req.finish_only):
            raise ConfigError("--fetched is for one shard (--shard K --num-shards N) of a "
                              "submitted run")

    def run(self, pipeline: Pipeline, req: BuildRequest) -> BuildResult:
        layout = RunFolder(req.out)
        claim_folder(req.out, BUILD, fresh=req.fresh)
        if req.one_shard:
            assert req.shard is not None and req.num_shards is not None
            with ShardLock(layout, req.shard, req.num_shards):
                pipeline.claim_shards(layout, req.num_shards)
                pipeline.fetch(req, layout)
                pipeline.run_shard(req, layout, req.shard, req.num_shards)
            log.info("shard %d of %d done; when all are, run the same command with --finish",
                     req.shard, req.num_shards)
            return BuildResult(req.out, {}, 0, "shard done")
        with RunLock(layout):
            if req.fresh:
                start_over(pipeline, layout)
            stopped = None
            if not req.finish_only:
                pipeline.claim_shards(layout, 1)
                stopped = pipeline.fetch(req, layout)
                pipeline.run_shard(req, layout, 0, 1)
            return pipeline.finish(req, layout, stopped)

    def fetch_only(self, pipeline: Pipeline, req: BuildRequest) -> str | None:
        """`loralay fetch`: the harvest alone (shards and the finish come later)."""
        if not pipeline.fetches:
            raise ConfigError(f"--source {req.settings.source} has nothing to fetch: "
                              "`loralay build` reads its inputs from disk")
        req.check()
        pipeline.check(req)
        claim_folder(req.out, BUILD)
        with RunLock(RunFolder(req.out)):
            return pipeline.fetch(req, RunFolder(req.out))
