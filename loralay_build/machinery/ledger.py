"""The one record of what is done and still current: documents, CiteSum shard tasks, and
through them page images and Slurm shards.

Two rules, written once here and nowhere else:

- **Staleness.** A result carries the fingerprint of exactly what can change it (its
  inputs, the settings its steps read, the tool versions), by part so a rerun can say why
  it redoes something. Limits (time, memory), worker counts and executor settings are not
  in it: a result reached under one limit is the result under any other.
- **Retry.** A failure is done again when a rerun can change it: always for classes that
  say nothing about the input (`internal_error`, `unreachable`); for the classes a user
  names with `--retry CLASS` (the same classes for every source); and by itself for a
  failure by a limit (`timeout`, `memory`) once that limit has been raised.

A page image is tied to the fingerprint digest of the document result it was rendered for;
a Slurm shard is done when every document of it is current here; the fetch keeps its own
records (what was harvested) but asks `RetryRule` which of its failures to try again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..failures import RetryRule
from ..store.ledger import HoldsLedger, StoredEntry

DOCUMENT = "document"  # the ledger kind of per-document results (CiteSum's: its stages)
def digest(obj: Any) -> str:
    """A short stable hash of a JSON-able value (key order does not matter)."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a result depends on, part by part (`candidate`, `pdf`, `settings`, ...)."""

    parts: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, **parts: str) -> Fingerprint:
        return cls(tuple(parts.items()))

    def digest(self) -> str:
        return digest(self.parts)

    def changed(self, old: Fingerprint) -> list[str]:
        """The parts whose value differs, in this fingerprint's order (a part added or
        removed since counts as changed)."""
        before = dict(old.parts)
        names = [n for n, v in self.parts if before.get(n) != v]
        return names + [n for n in before if n not in dict(self.parts)]

    def part(self, name: str) -> str | None:
        return dict(self.parts).get(name)

    def to_json(self) -> str:
        return json.dumps([list(p) for p in self.parts])

    @classmethod
    def from_json(cls, text: str) -> Fingerprint:
        return cls(tuple((str(n), str(v)) for n, v in json.loads(text)))


@dataclass(frozen=True, slots=True)
class Entry:
    """One recorded result: done well (`failure` None) or a classed failure."""

    key: str
    fingerprint: Fingerprint
    failure: str | None = None
    stage: str | None = None  # the step that failed
    message: str | None = None
    limits: Mapping[str, float] = field(default_factory=dict)  # in force when it ran
    durations: Mapping[str, float] = field(default_factory=dict)  # seconds per step

    @property
    def ok(self) -> bool:
        return self.failure is None


def stale_reason(entry: Entry | None, now: Fingerprint, rule: RetryRule,
                 name_changes: Any = None) -> str | None:
    """None when `entry` is current under `now` and `rule`; else why it is (re)done.
    `name_changes(part, old_value, new_value) -> list[str]` may name what changed inside a
    part (the settings keys)."""
    if entry is None:
        return "new"
    again = rule.why_again(entry.failure, entry.limits)
    if again is not None:
        return again
    changed = now.changed(entry.fingerprint)
    if not changed:
        return None
    first = changed[0]
    if name_changes is not None:
        keys = name_changes(first, entry.fingerprint.part(first), now.part(first))
        if keys:
            return "because " + ", ".join(f"`{k}`" for k in keys) + " changed"
    return PART_REASONS.get(first, f"because their {first} changed")


PART_REASONS = {
    "candidate": "because their metadata changed",
    "pdf": "because their PDF changed",
    "settings": "because settings changed",
    "versions": "because loralay-build, Poppler or pdfium changed",
    "input": "because their input file changed",
}


class Ledger:
    """Entries of one kind (`document`, `citesum-pass1`, ...) in a state file that holds
    the ledger's tables (a shard's, CiteSum's).

    Writes join the caller's transaction (`state.transaction()`), so an entry lands with
    the result it describes or not at all."""

    def __init__(self, state: HoldsLedger, kind: str) -> None:
        self.table = state.ledger_table(kind)
        self.kind = kind

    def put(self, e: Entry) -> None:
        self.table.put(StoredEntry(e.key, e.fingerprint.to_json(), e.failure, e.stage,
                                   e.message, dict(e.limits), dict(e.durations)))

    def get(self, key: str) -> Entry | None:
        row = self.table.get(key)
        return _entry(row) if row else None

    def entries(self) -> Iterator[Entry]:
        return (_entry(row) for row in self.table.entries())

    def durations(self) -> Iterator[tuple[str, dict[str, float]]]:
        """(key, seconds per stage) of every entry, in `entries()`'s order; nothing else
        is decoded."""
        return self.table.durations()

    def forget(self, key: str) -> None:
        self.table.forget(key)

    def remember_part(self, value_digest: str, body: str) -> None:
        """What a part's digest was made of (the settings' JSON), to name changed keys."""
        self.table.remember_part(value_digest, body)

    def part_body(self, value_digest: str | None) -> str | None:
        return None if value_digest is None else self.table.part_body(value_digest)


def _entry(row: StoredEntry) -> Entry:
    return Entry(row.key, Fingerprint.from_json(row.fingerprint), row.failure, row.stage,
                 row.message, row.limits, row.durations)


def changed_keys(old_json: str | None, new_json: str | None) -> list[str]:
    """The top-level keys whose values differ between two JSON objects."""
    if old_json is None or new_json is None:
        return []
    old, new = json.loads(old_json), json.loads(new_json)
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
