"""Each executor against a stub pipeline that records what it is asked: the order of the
calls, the shard numbers, the run folder claimed and locked, and (for Slurm) the jobs
submitted, with `sbatch`/`squeue`/`scancel` replaced by recording scripts on PATH.

The real pipelines are exercised end to end elsewhere (test_build, test_slurm); these pin
the contract between an executor and any pipeline, so a third pipeline can rely on it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from loralay_build.conf import load_settings
from loralay_build.errors import BuildStopped
from loralay_build.locks import RunLock
from loralay_build.machinery.request import BuildRequest, BuildResult
from loralay_build.owned import MARKER
from loralay_build.run.local import LocalExecutor
from loralay_build.run.slurm import SlurmExecutor
from loralay_build.runfolder import RunFolder

SETTINGS = load_settings("local", None, {"manifest": "unused.jsonl"})


class StubPipeline:
    """Records each call; `stopped` is what its fetch answers, `todo` its shards left."""

    name = "stub"
    executors = frozenset({"local", "slurm"})
    fetches = True

    def __init__(self, stopped: str | None = None, todo: list[int] | None = None) -> None:
        self.calls: list[tuple] = []
        self.stopped, self.todo = stopped, todo

    def _locked(self, layout: RunFolder) -> bool:
        """Whether the run folder is held: a second RunLock must be refused."""
        try:
            with RunLock(layout):
                return False
        except Exception:
            return True

    def check(self, req: BuildRequest) -> None:
        self.calls.append(("check",))

    def fresh_deletions(self, layout: RunFolder) -> list[Path]:
        self.calls.append(("fresh_deletions", self._locked(layout)))
        return []

    def would_do(self, req: BuildRequest) -> list[str]:
        return []

    def claim_shards(self, layout: RunFolder, num_shards: int) -> None:
        self.calls.append(("claim_shards", num_shards))

    def fetch(self, req: BuildRequest, layout: RunFolder) -> str | None:
        self.calls.append(("fetch", (layout.out / MARKER).is_file()))
        return self.stopped

    def shards_to_do(self, req: BuildRequest, layout: RunFolder, num_shards: int) -> list[int]:
        self.calls.append(("shards_to_do", num_shards))
        return list(range(num_shards)) if self.todo is None else self.todo

    def run_shard(self, req: BuildRequest, layout: RunFolder, shard: int,
                  num_shards: int) -> None:
        self.calls.append(("run_shard", shard, num_shards))

    def finish(self, req: BuildRequest, layout: RunFolder, stopped: str | None
               ) -> BuildResult:
        self.calls.append(("finish", stopped, self._locked(layout)))
        return BuildResult(req.out, {"train": 1}, 1, "OK")


def request(out: Path, **kw) -> BuildRequest:
    return BuildRequest(SETTINGS, out, **kw)


# --- local -------------------------------------------------------------------------------

def test_local_plain_build_claims_then_fetches_one_shard_and_finishes_under_the_lock(tmp_path):
    p = StubPipeline(stopped="limit reached")
    result = LocalExecutor().run(p, request(tmp_path / "o"))
    assert p.calls == [("claim_shards", 1), ("fetch", True), ("run_shard", 0, 1),
                       ("finish", "limit reached", True)]
    assert result.verdict == "OK" and (tmp_path / "o" / MARKER).is_file()


def test_local_fresh_wipes_first_under_the_lock(tmp_path):
    p = StubPipeline()
    LocalExecutor().run(p, request(tmp_path / "o", fresh=True))
    assert p.calls == [("fresh_deletions", True), ("claim_shards", 1), ("fetch", True),
                       ("run_shard", 0, 1), ("finish", None, True)]


def test_local_one_shard_does_its_shard_and_no_finish(tmp_path):
    p = StubPipeline()
    result = LocalExecutor().run(p, request(tmp_path / "o", shard=2, num_shards=3))
    assert p.calls == [("claim_shards", 3), ("fetch", True), ("run_shard", 2, 3)]
    assert result.verdict == "shard done" and result.kept == {}


def test_local_finish_only_runs_the_finish_alone(tmp_path):
    p = StubPipeline()
    LocalExecutor().run(p, request(tmp_path / "o", finish_only=True))
    assert p.calls == [("finish", None, True)]


# --- slurm, with recording stand-ins for its three commands --------------------------------

@pytest.fixture
def fake_slurm(tmp_path, monkeypatch) -> Path:
    """`sbatch --parsable FILE` appends FILE to a log and answers 100, 101, ...; `squeue`
    knows no job (so nothing is still queued)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "sbatch.log"
    bin_dir.mkdir()
    scripts = {
        "sbatch": f'#!/bin/sh\necho "$2" >> {log}\nn=$(wc -l < {log})\necho $((99 + n))\n',
        "squeue": "#!/bin/sh\nexit 0\n",
        "scancel": "#!/bin/sh\nexit 0\n",
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_slurm_submits_only_the_shards_left_then_the_finish_after_them(tmp_path, fake_slurm):
    p = StubPipeline(todo=[0, 2])
    req = request(tmp_path / "o", num_shards=3)
    SlurmExecutor().check(req)
    result = SlurmExecutor().run(p, req)
    assert p.calls == [("claim_shards", 3), ("fetch", True), ("shards_to_do", 3)]
    assert result.verdict == "submitted"
    submitted = [Path(x).name for x in fake_slurm.read_text().split()]
    assert submitted == ["shards.sbatch", "finish.sbatch"]
    where = tmp_path / "o" / "slurm"
    assert json.loads((where / "jobs.json").read_text())["jobs"] == {
        "fetch": None, "shards": "100", "finish": "101"}
    shards = (where / "shards.sbatch").read_text()
    assert "--array=0,2" in shards and "--num-shards 3" in shards
    finish = (where / "finish.sbatch").read_text()
    assert "--dependency=afterok:100" in finish and "--finish" in finish


def test_slurm_stops_before_submitting_when_the_fetch_stops(tmp_path, fake_slurm):
    p = StubPipeline(stopped="the service answered 503 five times")
    with pytest.raises(BuildStopped, match="503 five times; nothing submitted"):
        SlurmExecutor().run(p, request(tmp_path / "o", num_shards=2))
    assert p.calls == [("claim_shards", 2), ("fetch", True)]
    assert not fake_slurm.exists()
