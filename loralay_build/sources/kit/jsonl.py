"""One reader of JSON-lines files, plain or gzipped, for every input that is one: the CiteSum
shards, the Cohan et al. id files, the arXiv metadata snapshot, a local manifest.

- gzip is told by its magic bytes, not by the name (a `.gz` that is not gzip is read as it
  is; a gzipped file named `.jsonl` is still read);
- lines are read as bytes, numbered from 1; blank lines are skipped;
- a line is a JSON object or a `BadLine` saying why not (not UTF-8, not JSON, nested too
  deep, not an object, a lone UTF-16 surrogate): never an exception, so one broken line
  never costs the rest of a file of gigabytes;
- a bad line is one of the report's bad input records (`bad_record`: a `Rejection` with
  `bad_record=True`, counted by the driver), not a line in a log nobody reads.

A reader with a documented message of its own per fault (the local manifest names the
field at fault) reads its lines here and decodes them itself.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ...failures import FailureClass
from ...records import Rejection

GZIP_MAGIC = b"\x1f\x8b"
# a JSON escape of a UTF-16 surrogate: legal JSON, but alone it is no character, and the
# record could never be written out as UTF-8
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadLine(ValueError):
    """One line that is not a JSON object; the file goes on, the line is a bad record."""

    def __init__(self, lineno: int, reason: str, path: Path | None = None) -> None:
        super().__init__(f"line {lineno}: {reason}")
        self.lineno, self.reason, self.path = lineno, reason, path

    @property
    def where(self) -> str:
        """`file:line`, the name a bad record goes by."""
        return f"{self.path.name if self.path else '?'}:{self.lineno}"

    @property
    def message(self) -> str:
        return f"{self.path}:{self.lineno}: {self.reason}"


@contextmanager
def open_lines(path: str | Path) -> Iterator[IO[bytes]]:
    """The file's bytes, gunzipped when they start with gzip's magic (opened once and
    peeked at, not read twice)."""
    with open(path, "rb") as fh:
        if fh.peek(2)[:2] == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                yield gz  # type: ignore[misc]
        else:
            yield fh


def numbered_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of every non-blank line."""
    with open_lines(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            if raw.strip():
                yield lineno, raw


def parse_line(lineno: int, raw: bytes, path: Path | None = None) -> dict[str, Any] | BadLine:
    """One JSON-lines record, or why it is not one (never an exception)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return BadLine(lineno, f"not UTF-8 (byte {e.start})", path)
    try:
        obj = json.loads(line)
    except RecursionError:
        return BadLine(lineno, "JSON nested too deep", path)
    except ValueError as e:
        return BadLine(lineno, f"not JSON ({getattr(e, 'msg', str(e))[:80]})", path)
    if not isinstance(obj, dict):
        return BadLine(lineno, "not a JSON object", path)
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return BadLine(lineno, "a lone UTF-16 surrogate (\\ud800-\\udfff) in a string", path)
    return obj


def records(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """(line number, object or `BadLine`) for each non-blank line."""
    path = Path(path)
    for lineno, raw in numbered_lines(path):
        yield lineno, parse_line(lineno, raw, path)


def bad_record(bad: BadLine, source: str) -> Rejection:
    """A bad line as one of the report's bad input records (named `file:line`)."""
    return Rejection(bad.where, source, FailureClass.BAD_METADATA.value, bad.message,
                     bad_record=True)
