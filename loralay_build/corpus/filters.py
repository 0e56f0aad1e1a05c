"""Length filters whose bounds come from the run's own documents.

The original printed the percentiles and had them typed in by hand; here they are
computed over the documents that survived the per-document stages, recorded in the
report, and each filter returns keep + reason (datatrove's habit).

A percentile of a handful of papers measures nothing (p95 of two papers of 5 and 6 pages
drops the second, a good one), so below `percentile_min_candidates` documents the bounds
are not applied, and the thresholds say so (`not_applied`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..failures import Failure, FailureClass


@dataclass(frozen=True, slots=True)
class Thresholds:
    max_pages: float | None  # keep documents with at most this many pages
    min_summary_words: float | None  # keep summaries with at least this many words
    max_pages_percentile: float | None
    min_summary_percentile: float | None
    not_applied: str | None = None  # why the percentiles asked for bound nothing

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_pages": self.max_pages,
            "max_pages_percentile": self.max_pages_percentile,
            "min_summary_words": self.min_summary_words,
            "min_summary_percentile": self.min_summary_percentile,
        }
        if self.not_applied is not None:  # absent otherwise: the reports stay as they were
            out["not_applied"] = self.not_applied
        return out

    @classmethod
    def from_json(cls, t: dict[str, Any]) -> Thresholds:
        """The thresholds a report or a refresh base recorded (`to_json`)."""
        return cls(t.get("max_pages"), t.get("min_summary_words"),
                   t.get("max_pages_percentile"), t.get("min_summary_percentile"),
                   t.get("not_applied"))


def _percentile(values: Sequence[int], q: float | None) -> float | None:
    if q is None or not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q))


def compute_thresholds(pages: Sequence[int], summary_words: Sequence[int],
                       qp: float | None, qs: float | None, *, min_candidates: int
                       ) -> Thresholds:
    """Bounds at percentiles `qp` (pages, upper) and `qs` (summary words, lower); None: off.
    Fewer than `min_candidates` documents: no bound, and `not_applied` says why."""
    if (qp is not None or qs is not None) and len(pages) < min_candidates:
        return Thresholds(None, None, qp, qs, f"{len(pages)} candidates < {min_candidates} "
                                              f"(percentile_min_candidates)")
    return Thresholds(
        max_pages=_percentile(pages, qp),
        min_summary_words=_percentile(summary_words, qs),
        max_pages_percentile=qp,
        min_summary_percentile=qs,
    )


def check_document(num_pages: int, summary_words: int, t: Thresholds) -> Failure | None:
    """None keeps the document; a Failure says which bound it broke."""
    if t.max_pages is not None and num_pages > t.max_pages:
        return Failure(FailureClass.TOO_MANY_PAGES,
                       f"{num_pages} pages > {t.max_pages:g} (p{t.max_pages_percentile:g})")
    if t.min_summary_words is not None and summary_words < t.min_summary_words:
        return Failure(FailureClass.SUMMARY_TOO_SHORT,
                       f"summary of {summary_words} words < {t.min_summary_words:g} "
                       f"(p{t.min_summary_percentile:g})")
    return None
