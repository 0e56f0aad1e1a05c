"""The run folder's locks, so two commands never write one folder at once.

`RunLock` is exclusive, for a command that works on the whole folder (a plain build,
`--finish`, `--fresh`, a submission, an export). A shard (`--shard K`) holds the run lock
*shared* and its own shard's lock exclusively, so the shards of one run work side by side
(a Slurm array of N tasks on one folder), the same shard twice is refused, and a
whole-folder command waits for no shard and is refused while one runs. All are `flock`s,
released by the kernel when the process dies, so a killed run never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from .atomic import refuse_link
from .errors import ConfigError, RunLocked
from .owned import LOCK_NAME
from .runfolder import RunFolder


class RunLock:
    """An exclusive lock on a folder the tool writes (a run folder, an export folder) for
    the whole command; released by the kernel when the process dies, so a killed run never
    leaves a stale lock. The loser is told who holds it."""

    def __init__(self, folder: RunFolder | Path, what: str = "another build") -> None:
        out = folder.out if isinstance(folder, RunFolder) else Path(folder)
        self.path = out / LOCK_NAME
        self.what = what
        self.fh: IO[str] | None = None

    def __enter__(self) -> RunLock:
        fh = _open_lock(self.path)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            pid = fh.read().strip() or "?"
            fh.close()
            raise RunLocked(f"{self.path.parent}: {self.what} is running (pid {pid})") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self.fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()


def _open_lock(path: Path) -> IO[str]:
    """The lock file, opened for the caller to hold: never through a symbolic link (a
    `.lock` linked to a file elsewhere is refused, and O_NOFOLLOW holds if one appears
    meanwhile), so the pid written into it never truncates someone else's file."""
    refuse_link(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    return os.fdopen(fd, "r+", encoding="utf-8")


def _flock(path: Path, mode: int, busy: str) -> IO[str]:
    fh = _open_lock(path)
    try:
        fcntl.flock(fh, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise RunLocked(busy) from None
    return fh


class ReadLock:
    """A reader of a whole run folder (`publish`): the run lock held *shared*, so a build
    or a `--finish` (which hold it exclusively while they rewrite the dataset) is waited
    for by no one and refused meanwhile, and readers never exclude each other. A folder
    without a `.lock` (never built here, or copied without it) is read without one: the
    lock file is opened, never created, so a reader writes nothing into the folder."""

    def __init__(self, folder: Path, what: str = "a build") -> None:
        self.path = Path(folder) / LOCK_NAME
        self.what = what
        self.fh: IO[str] | None = None

    def __enter__(self) -> ReadLock:
        refuse_link(self.path)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):  # no lock; the reader says what is
            return self                                 # wrong with the folder, if anything
        except OSError as e:  # a link (O_NOFOLLOW), a folder, no permission
            raise ConfigError(f"{self.path}: the folder's lock cannot be opened "
                              f"({e.strerror})") from None
        fh = os.fdopen(fd, "r", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = fh.read().strip() or "?"
            fh.close()
            raise RunLocked(f"{self.path.parent}: {self.what} is running (pid {pid}); "
                            "run this again when it is done") from None
        self.fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()


class ShardLock:
    def __init__(self, layout: RunFolder, shard: int, num_shards: int) -> None:
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
