"""Shard files: globs in the settings, JSON lines, plain or gzipped."""

from __future__ import annotations

import glob
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class BadLine(ValueError):
    """One line that is not a JSON object; the shard goes on, the line is a classed failure."""

    def __init__(self, lineno: int, reason: str) -> None:
        super().__init__(f"line {lineno}: {reason}")
        self.lineno, self.reason = lineno, reason


def expand(pattern: str | None) -> list[Path]:
    """The files a glob names, sorted (the order fixes which record wins a tie)."""
    if not pattern:
        return []
    return [Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if Path(p).is_file()]


def _open(path: Path) -> IO[bytes]:
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")  # noqa: SIM115 - returned to a with-block


# a JSON escape of a UTF-16 surrogate: legal JSON, but alone it is no character, and the
# record could never be written out as UTF-8
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_line(lineno: int, raw: bytes) -> dict[str, Any] | BadLine:
    """One JSON-lines record, or why it is not one (never an exception: the shard goes on)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return BadLine(lineno, f"not UTF-8 (byte {e.start})")
    try:
        obj = json.loads(line)
    except RecursionError:
        return BadLine(lineno, "JSON nested too deep")
    except ValueError as e:
        return BadLine(lineno, f"not JSON ({getattr(e, 'msg', str(e))[:80]})")
    if not isinstance(obj, dict):
        return BadLine(lineno, "not a JSON object")
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return BadLine(lineno, "a lone UTF-16 surrogate (\\ud800-\\udfff) in a string")
    return obj


def records(path: Path) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """(line number, object) for each non-blank line; a bad line is yielded, not raised,
    so one broken record never costs the rest of a 1 GB shard."""
    with _open(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            if raw.strip():
                yield lineno, parse_line(lineno, raw)


def shard_key(path: Path) -> str:
    """A shard's name in the run state: its file name without .gz/.jsonl, unique per kind."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name
