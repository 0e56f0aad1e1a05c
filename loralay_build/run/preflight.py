"""Checks made before a run touches anything: tools, inputs, the run folder's lock and shape.

Why up front: a missing Poppler used to be recorded as `internal_error` for every document
(and a rerun then found nothing to do); a second build on the same folder deleted the first
one's temporary files; a sharded run mixed with a plain one wrote every document twice.
Each of these is now one line and exit status 2, with nothing written.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .. import __version__
from ..errors import ConfigError, RunLocked, RunMismatch
from ..extract.glyphs import GLYPH_RULE
from ..extract.poppler import INSTALL_HINT, poppler_version  # noqa: F401 - see below
from ..failures import RETRYABLE_ON_REQUEST
from ..settings import CommonSettings, check_contact
from ..state import RunState
from .layout import RunLayout

# poppler_version lives in extract/poppler.py (re-exported here): `loralay extract` then
# checks Poppler without importing the settings package (~0.5 s of start-up)
SHARDS_KEY = "run.num_shards"


@dataclass(frozen=True, slots=True)
class ToolVersions:
    """What, besides inputs and settings, decides a per-document result."""

    loralay_build: str
    poppler: str

    def __str__(self) -> str:
        return f"loralay-build {self.loralay_build}; poppler {self.poppler}"


def tool_versions() -> ToolVersions:
    # the glyph-repair rule changes extracted words: a run made before it is redone
    return ToolVersions(f"{__version__}+{GLYPH_RULE}", poppler_version())


def check_retry(classes: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    bad = sorted(set(classes) - RETRYABLE_ON_REQUEST)
    if bad:
        raise ConfigError(f"--retry {bad[0]}: not a class a rerun can retry (one of: "
                          f"{', '.join(sorted(RETRYABLE_ON_REQUEST))})")
    return frozenset(classes)


def check_inputs(settings: CommonSettings) -> None:
    """The files a source is told to read exist; a network source has a real contact."""
    check_contact(settings)
    for key in ("manifest", "ids_dir", "metadata_path"):
        value = getattr(settings, key, None)
        if value is not None and not Path(value).exists():
            raise ConfigError(f"{key}: {value}: not found")
    if settings.source == "local" and getattr(settings, "manifest", None) is None:
        raise ConfigError("--source local needs --manifest PATH (or `manifest:` in --config)")


class RunLock:
    """An exclusive lock on the run folder for the whole command (released by the kernel
    when the process dies, so a killed run never leaves a stale lock)."""

    def __init__(self, layout: RunLayout) -> None:
        self.path = layout.lock_file
        self.fh: IO[str] | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until __exit__
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            pid = fh.read().strip() or "?"
            fh.close()
            raise RunLocked(f"{self.path.parent}: another build is running (pid {pid})") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self.fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()


def wipe_run(layout: RunLayout) -> None:
    """`--fresh`: the run folder starts over, keeping downloaded PDFs and their checksums."""
    keep = {layout.pdf_dir, layout.checksums_db, layout.lock_file, layout.state_dir}
    for path in sorted(layout.out.iterdir()) if layout.out.exists() else []:
        if path not in keep:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    for path in sorted(layout.state_dir.glob("*")) if layout.state_dir.exists() else []:
        if not path.name.startswith(layout.checksums_db.name):
            path.unlink()


def recorded_shards(layout: RunLayout) -> int | None:
    """The shard count this run folder was processed with (None: not processed yet)."""
    if layout.fetch_db.exists():
        with RunState(layout.fetch_db) as st:
            value = st.get_checkpoint(SHARDS_KEY)
        if isinstance(value, int):
            return value
    counts = sorted({n for _, n in layout.shard_files()})
    if len(counts) > 1:
        raise RunMismatch(f"{layout.state_dir}: states of different shard counts "
                          f"({', '.join(map(str, counts))}); start over with --fresh")
    return counts[0] if counts else None


def claim_shards(layout: RunLayout, num_shards: int) -> None:
    """Record the shard count, or refuse one that differs from what the run already used."""
    used = recorded_shards(layout)
    if used is not None and used != num_shards:
        how = "the plain command (no --shard)" if used == 1 else f"--num-shards {used}"
        asked = "no shards" if num_shards == 1 else f"--num-shards {num_shards}"
        raise RunMismatch(f"{layout.out}: this run was processed with {how}, not {asked}; "
                          f"go on with {how}, or start over with --fresh")
    with RunState(layout.fetch_db) as st:
        st.set_checkpoint(SHARDS_KEY, num_shards)
