"""Train/validation/test assignment.

Chronological (the paper's rule for HAL, SciELO, KoreaScience): oldest documents go to
train, newest to test, in the given proportions of the documents that survived the
filters. Ties are broken by id so the result never depends on input order or on the
number of workers. A date of lower precision sorts as the start of its period
("2014" before "2014-03-02"). Documents without a date go to train (`undated: train`,
never into evaluation, where their position in time is unknown) or are dropped
(`undated: drop`). Given splits (arXiv, PubMed: Cohan et al.'s) are kept as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SPLITS = ("train", "validation", "test")
_ALIASES = {"train": "train", "val": "validation", "valid": "validation",
            "validation": "validation", "dev": "validation", "test": "test"}


@dataclass(frozen=True, slots=True)
class Dated:
    id: str
    date: str | None  # ISO 8601, any precision: YYYY, YYYY-MM, YYYY-MM-DD
    given_split: str | None = None


class SplitError(ValueError):
    pass


def chronological_key(d: Dated) -> tuple[str, str]:
    parts = (d.date or "").split("-") + ["00", "00"]
    return ("-".join(p.zfill(2) for p in parts[:3]), d.id)


def chronological(docs: Sequence[Dated], proportions: Sequence[float],
                  undated: str = "train") -> dict[str, str | None]:
    """id -> split name; None for an undated document when `undated` is 'drop'."""
    if len(proportions) != 3 or abs(sum(proportions) - 1.0) > 1e-6:
        raise SplitError(f"split proportions must be three numbers summing to 1: {proportions}")
    if undated not in ("train", "drop"):
        raise SplitError(f"undated must be 'train' or 'drop', not {undated!r}")
    dated = sorted((d for d in docs if d.date), key=chronological_key)
    out: dict[str, str | None] = {d.id: (None if undated == "drop" else "train")
                                  for d in docs if not d.date}
    n = len(dated)
    n_test = round(n * proportions[2])
    n_val = round(n * proportions[1])
    n_train = max(n - n_val - n_test, 0)
    for i, d in enumerate(dated):
        out[d.id] = "train" if i < n_train else "validation" if i < n_train + n_val else "test"
    return out


def given(docs: Sequence[Dated]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for d in docs:
        name = _ALIASES.get((d.given_split or "").strip().lower())
        if name is None:
            raise SplitError(f"{d.id}: split {d.given_split!r} is not train/validation/test")
        out[d.id] = name
    return out
