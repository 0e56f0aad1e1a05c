"""Files written whole or not at all, with their sha256, and the mode any file would get.

Why: a run can be killed at any instant; a PDF, a report or an extracted file must never be
left half-written under its final name (a rerun would take it for done), and `mkstemp`'s
0600 must not leak into a dataset folder other people read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import shutil
import stat
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Download:
    path: Path
    sha256: str
    size: int


_UMASK_LOCK = threading.Lock()


def process_umask() -> int:
    """The process umask, read without changing it where /proc allows (setting it to
    read it back is racy in a threaded process, so that fallback holds a lock)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


TEMP_PREFIX = ".part-"  # every half-written file of the tool: what a killed run leaves
MARKER = ".loralay"  # the marker of a folder the tool owns (`owned.py`)


def link_in_folder(path: str | Path) -> tuple[Path, Path] | None:
    """The symbolic link on the way from the tool's folder to `path` (`path` itself
    included), and that folder: the nearest folder above `path` that carries the tool's
    marker. None when there is no such link, or `path` is in no folder of the tool's.

    Each component is looked at with lstat, so a link is seen and never followed; the
    link named is the outermost one (the entry of the folder a user replaced)."""
    path = Path(os.path.abspath(path))
    link = None
    for entry in (path, *path.parents):
        try:
            mode = os.lstat(entry).st_mode
        except OSError:  # not there yet: made by the write itself
            continue
        if stat.S_ISLNK(mode):
            link = entry
        elif stat.S_ISDIR(mode) and os.path.lexists(entry / MARKER):
            return (link, entry) if link is not None else None
    return None


def refuse_link(path: str | Path) -> Path:
    """The one rule of every write into the tool's folder: never through a symbolic link.
    A link on the way to `path` below the folder (a `report/`, a `.lock`, a `state/` the
    user replaced by a link) is a ConfigError naming it, raised before anything is opened;
    its target is left alone. Returns `path`."""
    found = link_in_folder(path)
    if found is not None:
        raise ConfigError(link_refusal(*found))
    return Path(path)


def link_refusal(link: Path, folder: Path) -> str:
    try:
        target = f" (to {os.readlink(link)})"
    except OSError:
        target = ""
    return (f"{link}: a symbolic link{target} in the tool's folder {folder}; the tool "
            "never writes through a link in its folder: remove the link (its target is "
            "not touched) and rerun; nothing was written through it")


class AtomicFile:
    """Write to a temporary name beside `dest`, fsync, then rename; nothing half-written stays."""

    def __init__(self, dest: Path) -> None:
        self.dest = Path(dest)

    def __enter__(self) -> tuple[Any, Any]:
        refuse_link(self.dest)
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=self.dest.parent)
        self.tmp = Path(tmp)
        self.fh = os.fdopen(fd, "wb")
        return self.fh, hashlib.sha256()

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.fh.flush()
            # mkstemp makes the file 0600; the finished file gets the mode any other file
            # of the process would get, so a shared dataset folder stays readable
            os.fchmod(self.fh.fileno(), 0o666 & ~process_umask())
            os.fsync(self.fh.fileno())
            self.fh.close()
            os.replace(self.tmp, self.dest)
        else:
            self.fh.close()
            self.tmp.unlink(missing_ok=True)


def utc_now_iso() -> str:
    """Now in UTC, ISO 8601 to the second (`2024-05-01T12:00:00Z`): the one timestamp
    format of records (`retrieved_at`) and reports (`built_at`)."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def file_digest(path: str | Path, algo: str = "sha256") -> str:
    """The hex digest of a file's bytes, read in 1 MiB chunks (`algo` as `hashlib.new`
    names it; the digest identifies content, it secures nothing)."""
    h = hashlib.new(algo, usedforsecurity=False)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_atomic(dest: Path, body: bytes) -> Download:
    with AtomicFile(dest) as (fh, digest):
        fh.write(body)
        digest.update(body)
    return Download(Path(dest), digest.hexdigest(), len(body))


def place(tmp: Path, dest: Path) -> None:
    """A file finished under a temporary name (a SQLite index, a Parquet part) put in
    place: flushed to disk, given the mode any file of the process gets, then renamed."""
    refuse_link(dest)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o666 & ~process_umask())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, dest)


def swap_folder(out_dir: Path, tmp: Path, folder: str) -> None:
    """Replace `out_dir/folder` by the complete folder `tmp` (renames within one
    filesystem): a reader sees the old folder or the new one, never a mix."""
    data = refuse_link(out_dir / folder)
    old = out_dir / f".{folder}-old-{uuid.uuid4().hex[:8]}"
    if data.exists():
        os.replace(data, old)
    os.replace(tmp, data)
    shutil.rmtree(old, ignore_errors=True)


def clean_swaps(out_dir: Path, folder: str) -> None:
    """Undo what a killed `swap_folder` left: its temporary folder, or an old folder moved
    aside for good. Only the instant between its two renames can leave no `folder`; then the
    previous one is still whole in `.{folder}-old-*` and is put back."""
    for tmp in out_dir.glob(f".{folder}-tmp-*"):
        shutil.rmtree(tmp, ignore_errors=True)
    olds = sorted(out_dir.glob(f".{folder}-old-*"))
    if not (out_dir / folder).exists() and len(olds) == 1:
        os.replace(olds.pop(), out_dir / folder)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def write_text_atomic(dest: Path, text: str) -> Download:
    return write_atomic(dest, text.encode("utf-8"))


@contextmanager
def atomic_text(dest: Path) -> Iterator[TextIO]:
    """A UTF-8 text file written in pieces and put in place whole, or not at all."""
    with AtomicFile(dest) as (fh, _):
        text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        try:
            yield text
            text.flush()
        finally:
            text.detach()  # the binary file stays open for AtomicFile to fsync and rename
