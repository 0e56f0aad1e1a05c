"""The lock a `--shard K` run holds, so the shards of one run can work side by side.

Why not `RunLock`: it is exclusive, so shard 1 started while shard 0 ran stopped with
"another build is running" — the README's "for K in 0..N-1, anywhere" could only run one
shard at a time, and a Slurm array of N tasks on one run folder would have failed N-1 times.
A shard holds the run lock *shared* (a plain build, `--fresh`, `--finish` or a submission,
which hold it exclusively, wait for no shard and are refused while one runs) and its own
shard's lock exclusively (the same shard twice is refused). Both are `flock`s, released by
the kernel when the process dies.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

from ..errors import RunLocked
from .layout import RunLayout


def _flock(path: Path, mode: int, busy: str) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held by the caller
    try:
        fcntl.flock(fh, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise RunLocked(busy) from None
    return fh


class ShardLock:
    def __init__(self, layout: RunLayout, shard: int, num_shards: int) -> None:
        self.run_lock = layout.lock_file
        self.shard_lock = layout.shard_db(shard, num_shards).with_suffix(".lock")
        self.what = f"shard {shard} of {num_shards}"
        self.held: list[IO[str]] = []

    def __enter__(self) -> ShardLock:
        out = self.run_lock.parent
        self.held.append(_flock(self.run_lock, fcntl.LOCK_SH,
                                f"{out}: another build holds the whole run folder"))
        try:
            self.held.append(_flock(self.shard_lock, fcntl.LOCK_EX,
                                    f"{out}: {self.what} is already running"))
        except RunLocked:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        while self.held:
            self.held.pop().close()
