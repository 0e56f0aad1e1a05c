"""`diff.json`: what a refresh changed since the version before, as one typed record.

The refresh writes it and `publish` reads it back for its commit message; both go through
`DatasetDiff`, so the file's shape, its check and its one-line summary are written once. A
`schema_version` is written with it: a file of another version is refused in one line,
never misread. Files written before the version existed (schema 1) lack `schema_version`,
`pdf_changed` and `split_moves_refused`; they read as schema 1 with both lists empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .jsonfile import read_json

SCHEMA_VERSION = 2
_SHAPE = "docs/publishing.md gives diff.json's shape"


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _counts(per: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {n:,}" for k, n in per.items())


@dataclass
class Untaken:
    """What the source now says of old documents that their rows, kept as they are, do not
    take (`pdf_changed` and `split_moves_refused`), each list by id."""

    pdf_changed: list[dict[str, str]] = field(default_factory=list)  # id, old/new sha256
    split_moves_refused: list[dict[str, str]] = field(default_factory=list)  # id, kept, asked

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        return {"pdf_changed": self.pdf_changed,
                "split_moves_refused": self.split_moves_refused}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Untaken:
        """`None` or missing lists: a base or diff written before they were recorded."""
        data = data or {}
        return cls([dict(e) for e in data.get("pdf_changed", [])],
                   [dict(e) for e in data.get("split_moves_refused", [])])

    def within(self, other: Untaken) -> bool:
        """Every entry already in `other` (what the base's version said)."""
        theirs = {(k, _dump(e)) for k, v in other.to_json().items() for e in v}
        return all((k, _dump(e)) in theirs for k, v in self.to_json().items() for e in v)

    def parts(self) -> list[str]:
        """The changelog's counts."""
        n, m = len(self.pdf_changed), len(self.split_moves_refused)
        return ([f"{n:,} changed PDFs not taken"] if n else []) + \
            ([f"{m:,} split moves refused"] if m else [])


@dataclass
class DatasetDiff:
    """One refresh's changes: ids added per split, duplicates dropped (their records),
    kept ids the source no longer offers, new drops counted by class, what was not taken."""

    version_before: int | None  # None: a diff.json that did not say
    version: int
    added: dict[str, list[str]]
    duplicates: list[dict[str, Any]]
    missing_upstream: list[str]
    dropped: dict[str, int]
    untaken: Untaken = field(default_factory=Untaken)

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION,
                "version_before": self.version_before, "version": self.version,
                "added": self.added, "duplicates": self.duplicates,
                "missing_upstream": self.missing_upstream, "dropped": self.dropped,
                **self.untaken.to_json()}

    @classmethod
    def from_json(cls, data: Any, where: str = "diff.json") -> DatasetDiff:
        """The record of a `diff.json`, or a `ConfigError` naming `where` and what is wrong."""
        def bad(what: str) -> ConfigError:
            return ConfigError(f"{where}: {what} ({_SHAPE})")

        if not isinstance(data, dict):
            raise bad("not a JSON object")
        schema = data.get("schema_version", 1)
        if schema not in (1, SCHEMA_VERSION):
            raise bad(f"schema_version {schema!r}; this loralay reads 1 and {SCHEMA_VERSION}")
        version, before = data.get("version"), data.get("version_before")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise bad(f"'version' is {version!r}, not a whole number >= 1")
        if before is not None and (isinstance(before, bool) or not isinstance(before, int)):
            raise bad(f"'version_before' is {before!r}, not a whole number or null")
        added = data.get("added", {})
        if not isinstance(added, dict) or not all(
                isinstance(v, list) and all(isinstance(i, str) for i in v)
                for v in added.values()):
            raise bad("'added' is not {split: [ids]}")
        dropped = data.get("dropped", {})
        if not isinstance(dropped, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in dropped.values()):
            raise bad("'dropped' is not {class: count}")
        lists: dict[str, list[Any]] = {}
        for key in ("duplicates", "missing_upstream", "pdf_changed", "split_moves_refused"):
            value = data.get(key, [])
            if not isinstance(value, list):
                raise bad(f"'{key}' is not a list")
            lists[key] = value
        for key in ("duplicates", "pdf_changed", "split_moves_refused"):
            if not all(isinstance(e, dict) for e in lists[key]):
                raise bad(f"'{key}' is not a list of objects")
        return cls(before, version, {s: list(v) for s, v in added.items()},
                   lists["duplicates"], [str(i) for i in lists["missing_upstream"]],
                   dict(dropped), Untaken.from_json(lists))

    @classmethod
    def read(cls, path: Path) -> DatasetDiff:
        data = read_json(path)
        return cls.from_json(data, str(path))

    def write_text(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def summary(self) -> str:
        """What this version changed, in one line: the changelog's and the commit's."""
        total = sum(len(v) for v in self.added.values())
        per = _counts({s: len(v) for s, v in self.added.items()})
        parts = [f"{total:,} added" + (f" ({per})" if per else "")]
        if self.duplicates:
            parts.append(f"{len(self.duplicates):,} duplicates dropped")
        if self.missing_upstream:
            parts.append(f"{len(self.missing_upstream):,} missing upstream")
        if self.dropped:
            parts.append("dropped: " + _counts(self.dropped))
        return ", ".join(parts + self.untaken.parts())

    def since(self) -> str:
        """The commit message's tail: the version this one was refreshed from."""
        return "" if self.version_before is None else f" since v{self.version_before}"

    def line(self) -> str:
        """The changelog's line for this version."""
        return f"v{self.version}: {self.summary()}"
