"""Step 6: train / validation / test by cited paper.

Why a hash of the cited id: every example of one cited paper lands in one split (no test
abstract is seen in training), the choice needs no pass over the corpus and does not depend
on shard order, workers or on what else was kept, so a rerun or a larger run keeps each
paper where it was.
"""

from __future__ import annotations

import hashlib

from ..splits import SPLITS

_SCALE = 1 << 64


def split_of(cited_id: str, proportions: list[float]) -> str:
    """The split of a cited paper: sha256 of its id as a point in [0, 1)."""
    point = int.from_bytes(hashlib.sha256(cited_id.encode("utf-8")).digest()[:8], "big") / _SCALE
    edge = 0.0
    for name, share in zip(SPLITS, proportions):
        edge += share
        if point < edge:
            return name
    return SPLITS[-1]
