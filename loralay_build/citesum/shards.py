"""Shard files: globs in the settings, JSON lines, plain or gzipped."""

from __future__ import annotations

import glob
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class BadLine(ValueError):
    """One line that is not a JSON object; the shard goes on, the line is a classed failure."""

    def __init__(self, lineno: int, reason: str) -> None:
        super().__init__(f"line {lineno}: {reason}")
        self.lineno = lineno


def expand(pattern: str | None) -> list[Path]:
    """The files a glob names, sorted (the order fixes which record wins a tie)."""
    if not pattern:
        return []
    return [Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if Path(p).is_file()]


def _open(path: Path) -> IO[str]:
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")  # noqa: SIM115 - returned to a with-block


def records(path: Path) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """(line number, object) for each non-blank line; a bad line is yielded, not raised,
    so one broken record never costs the rest of a 1 GB shard."""
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                yield lineno, BadLine(lineno, f"not JSON ({e.msg})")
                continue
            if not isinstance(obj, dict):
                yield lineno, BadLine(lineno, "not a JSON object")
                continue
            yield lineno, obj


def shard_key(path: Path) -> str:
    """A shard's name in the run state: its file name without .gz/.jsonl, unique per kind."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name
