"""The one failure taxonomy of the project.

Every stage that gives up on a document returns a `Failure` instead of raising,
so that the run state, the report and the user all see the same class names.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
    DUPLICATE = "duplicate"
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


# fetch failures that say nothing about the paper: a rerun of the run tries them again
RETRIED_ON_RERUN = frozenset({FailureClass.UNREACHABLE.value})
# classes a user may ask a rerun to try again (`--retry CLASS`): what a host, the network
# or the machine decided, never what the paper is (no abstract, scanned, wrong language)
RETRYABLE_ON_REQUEST = frozenset(c.value for c in (
    FailureClass.FORBIDDEN, FailureClass.UNAVAILABLE, FailureClass.UNREACHABLE,
    FailureClass.TIMEOUT, FailureClass.MEMORY,
))


class StageError(Exception):
    """Raised inside a stage's helpers and turned into a `Failure` at the stage edge."""

    def __init__(self, cls: FailureClass, message: str) -> None:
        super().__init__(message)
        self.failure = Failure(cls, message)
