"""Shard files: globs in the settings, JSON lines, plain or gzipped, read by the one
JSON-lines reader (`sources/kit/jsonl.py`: a bad line is yielded, never raised, so one
broken record never costs the rest of a 1 GB shard)."""

from __future__ import annotations

import glob
from pathlib import Path

from ..sources.kit.jsonl import BadLine, parse_line, records

__all__ = ["BadLine", "expand", "parse_line", "records", "shard_key"]


def expand(pattern: str | None) -> list[Path]:
    """The files a glob names, sorted (the order fixes which record wins a tie)."""
    if not pattern:
        return []
    return [Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if Path(p).is_file()]


def shard_key(path: Path) -> str:
    """A shard's name in the run state: its file name without .gz/.jsonl, unique per kind."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name
