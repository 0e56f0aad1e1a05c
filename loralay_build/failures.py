"""The one failure taxonomy of the project, and the one rule of which failures a rerun
tries again.

Every stage that gives up on a document returns a `Failure` instead of raising, so that
the run state, the report and the user all see the same class names. A failure is done
again when a rerun can change it: always for classes that say nothing about the input
(`internal_error`, `unreachable`); for the classes a user names with `--retry CLASS` (the
same classes for every source, fetch and processing alike); and by itself for a failure by
a limit (`timeout`, `memory`) once that limit has been raised (`RetryRule`).
"""

from __future__ import annotations

import enum
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError


class FailureClass(str, enum.Enum):
    # fetch / extract
    UNAVAILABLE = "unavailable"  # missing, empty, not a PDF (e.g. an HTML page), HTTP error
    UNREACHABLE = "unreachable"  # network error, timeout or 429/5xx after retries: a rerun retries
    FORBIDDEN = "forbidden"  # the PDF host answered 403: not retried unless asked (--retry)
    CORRUPTED = "corrupted"  # Poppler cannot open it
    ENCRYPTED = "encrypted"  # needs a password
    SCANNED = "scanned"  # no text layer
    TIMEOUT = "timeout"  # Poppler ran past its wall-clock budget
    MEMORY = "memory"  # Poppler ran past its memory cap
    TOO_MANY_PAGES = "too_many_pages"  # hard cap before extraction, or p95 filter
    TOO_LARGE = "too_large"  # more words than max_words_per_document (extraction stops)
    # metadata from the source
    NO_ABSTRACT = "no_abstract"  # the source gives no abstract in the wanted language
    BAD_METADATA = "bad_metadata"  # a record the source sent cannot be used
    # strip / language / filters
    IRRETRIEVABLE_ABSTRACT = "irretrievable_abstract"
    WRONG_LANGUAGE = "wrong_language"
    SUMMARY_TOO_SHORT = "summary_too_short"
    UNDATED = "undated"  # no publication date, with `undated: drop`
    DUPLICATE = "duplicate"  # an id already proposed, or the same paper as a kept one
    LICENSE_EXCLUDED = "license_excluded"  # a licence outside the `licenses:` allow-list
    INTERNAL_ERROR = "internal_error"  # a bug: the message carries the traceback's last line

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one document was given up, in one line a user can act on."""

    cls: FailureClass
    message: str

    def line(self, subject: str) -> str:
        return f"{subject}: {self.cls.value}: {self.message}"


def internal_error(e: BaseException) -> Failure:
    """An exception met where bugs become a class: `internal_error`, with the last line of
    its traceback (cut to 300 characters) as the message."""
    last = traceback.format_exception_only(type(e), e)[-1].strip()
    return Failure(FailureClass.INTERNAL_ERROR, last[:300])


# failures that say nothing about the document or shard: every rerun tries them again
ALWAYS_RETRIED = frozenset({FailureClass.INTERNAL_ERROR.value, FailureClass.UNREACHABLE.value})
# classes a user may ask a rerun to try again (`--retry CLASS`): what a host, the network or
# the machine decided, never what the paper is (no abstract, scanned, wrong language)
RETRYABLE_ON_REQUEST = frozenset(c.value for c in (
    FailureClass.FORBIDDEN, FailureClass.UNAVAILABLE, FailureClass.UNREACHABLE,
    FailureClass.TIMEOUT, FailureClass.MEMORY,
))
# the limits whose raise retries a failure of the class by itself
RAISED_BY: dict[str, tuple[str, ...]] = {
    FailureClass.TIMEOUT.value: ("extract_timeout_s", "document_timeout_s", "shard_timeout_s"),
    FailureClass.MEMORY.value: ("extract_memory_mb", "worker_memory_mb"),
}


def check_retry(classes: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """`--retry CLASS` values: the same classes for every source."""
    bad = sorted(set(classes) - RETRYABLE_ON_REQUEST)
    if bad:
        raise ConfigError(f"--retry {bad[0]}: not a class a rerun can retry (one of: "
                          f"{', '.join(sorted(RETRYABLE_ON_REQUEST))})")
    return frozenset(classes)


@dataclass(frozen=True, slots=True)
class RetryRule:
    """Which recorded failures this run does again (see the module docstring)."""

    requested: frozenset[str] = frozenset()  # --retry CLASS
    limits: Mapping[str, float] = field(default_factory=dict)  # the limits in force now

    def classes(self) -> frozenset[str]:
        """The classes retried whatever their limits (for the fetch's skip lists)."""
        return ALWAYS_RETRIED | self.requested

    def why_again(self, failure: str | None, limits_then: Mapping[str, float]) -> str | None:
        """None when the failure (or success) stands; else the reason it is done again."""
        if failure is None:
            return None
        if failure in ALWAYS_RETRIED:
            return f"retried after {failure}"
        if failure in self.requested:
            return f"retried as asked (--retry {failure})"
        for key in RAISED_BY.get(failure, ()):
            if key in limits_then and key in self.limits and self.limits[key] > limits_then[key]:
                return f"retried because `{key}` was raised"
        return None


@dataclass
class BadRecords:
    """An input's records that cannot be used, counted by class with the first few examples
    (`path:line: reason`): memory and the report stay flat in the number of bad lines (a
    shard of a million broken lines once took the driver to 2 GB and the report to 200 MB)."""

    keep: int = 5  # examples kept per class
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, cls: str, where: str) -> None:
        self.counts[cls] = self.counts.get(cls, 0) + 1
        kept = self.examples.setdefault(cls, [])
        if len(kept) < self.keep:
            kept.append(where[:300])

    def merge(self, other: BadRecords) -> None:
        for cls, n in other.counts.items():
            self.counts[cls] = self.counts.get(cls, 0) + n
            kept = self.examples.setdefault(cls, [])
            kept.extend(other.examples.get(cls, [])[:max(0, self.keep - len(kept))])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def shown(self, cls: str) -> bool:
        """Whether the latest record of `cls` added is one of the examples kept (so said
        where it is met); the rest are only counted."""
        return self.counts[cls] <= self.keep

    @property
    def hidden(self) -> int:
        """The records counted but not among the examples kept."""
        return self.total - sum(len(v) for v in self.examples.values())

    def to_json(self) -> dict[str, Any]:
        return {"counts": dict(sorted(self.counts.items())),
                "examples": {k: self.examples[k] for k in sorted(self.examples)}}

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None, keep: int = 5) -> BadRecords:
        out = cls(keep)
        if d:
            out.counts = {str(k): int(v) for k, v in d.get("counts", {}).items()}
            out.examples = {str(k): list(v)[:keep] for k, v in d.get("examples", {}).items()}
        return out


class StageError(Exception):
    """Raised inside a stage's helpers and turned into a `Failure` at the stage edge."""

    def __init__(self, cls: FailureClass, message: str) -> None:
        super().__init__(message)
        self.failure = Failure(cls, message)
