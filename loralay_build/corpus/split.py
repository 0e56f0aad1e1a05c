"""Train/validation/test assignment.

Chronological (the paper's rule for HAL, SciELO, KoreaScience): oldest documents go to
train, newest to test, in the given proportions of the documents that survived the
filters. Ties are broken by id so the result never depends on input order or on the
number of workers. A date of lower precision sorts as the start of its period
("2014" before "2014-03-02"). Documents without a date go to train (`undated: train`,
never into evaluation, where their position in time is unknown) or are dropped
(`undated: drop`). Given splits (arXiv, PubMed: Cohan et al.'s) are kept as they are.

Small runs: rounding 5 % of a handful of documents gives 0, which would leave a user's
first build (the demo, a pilot on a few PDFs) with empty evaluation splits. So every
split whose proportion is non-zero gets at least one document once there are at least
as many dated documents as such splits; the extra ones come from train.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..conf.fields import check_proportions

_ALIASES = {"train": "train", "val": "validation", "valid": "validation",
            "validation": "validation", "dev": "validation", "test": "test"}


class SplitError(ValueError):
    pass


def date_key(date: str | None) -> str:
    """A date of any precision as a string that sorts chronologically ("2014" first)."""
    parts = (date or "").split("-") + ["00", "00"]
    return "-".join(p.zfill(2) for p in parts[:3])


def check_rule(proportions: Sequence[float], undated: str) -> None:
    try:
        check_proportions(list(proportions))
    except ValueError as e:
        raise SplitError(f"split_proportions {list(proportions)}: {e}") from None
    if undated not in ("train", "drop"):
        raise SplitError(f"undated must be 'train' or 'drop', not {undated!r}")


def chronological_fates(dates: Sequence[str | None], order: Sequence[int],
                        proportions: Sequence[float], undated: str = "train"
                        ) -> list[str | None]:
    """The split of each document of `order` (positions into `dates`, already sorted by
    (`date_key`, id); other positions are not counted), without a dict keyed by id."""
    check_rule(proportions, undated)
    n_train, n_val, _ = split_sizes(sum(1 for j in order if dates[j]), proportions)
    fates: list[str | None] = []
    rank = 0
    for j in order:
        if not dates[j]:
            fates.append(None if undated == "drop" else "train")
            continue
        fates.append("train" if rank < n_train else
                     "validation" if rank < n_train + n_val else "test")
        rank += 1
    return fates


def chronological_fates_by(groups: Sequence[str], dates: Sequence[str | None],
                           order: Sequence[int], proportions: Sequence[float],
                           undated: str = "train") -> list[str | None]:
    """`chronological_fates` within each group (`split_mode: chronological_by_language`,
    the groups being languages), in `order`'s order: 5 % of a run in which one language
    has few papers would otherwise give the test split none of them, or only them."""
    parts: dict[str, list[int]] = {}
    for j in order:
        parts.setdefault(groups[j], []).append(j)
    fate: dict[int, str | None] = {}
    for part in parts.values():
        fate.update(zip(part, chronological_fates(dates, part, proportions, undated),
                        strict=True))
    return [fate[j] for j in order]


def split_sizes(n: int, proportions: Sequence[float]) -> tuple[int, int, int]:
    """Document counts per split: rounded shares, at least one per non-empty share
    when n allows it (see the module docstring)."""
    sizes = [0, round(n * proportions[1]), round(n * proportions[2])]
    wanted = [p > 0 for p in proportions]
    if n >= sum(wanted):
        for i in (1, 2):
            if wanted[i] and sizes[i] == 0:
                sizes[i] = 1
    while sizes[1] + sizes[2] > n or (wanted[0] and n >= sum(wanted)
                                      and sizes[1] + sizes[2] == n):
        sizes[1 if sizes[1] >= sizes[2] else 2] -= 1
    sizes[0] = n - sizes[1] - sizes[2]
    return sizes[0], sizes[1], sizes[2]


def given_name(doc_id: str, given_split: str | None) -> str:
    """The split a source published a document in, under its canonical name."""
    name = _ALIASES.get((given_split or "").strip().lower())
    if name is None:
        raise SplitError(f"{doc_id}: split {given_split!r} is not train/validation/test")
    return name
