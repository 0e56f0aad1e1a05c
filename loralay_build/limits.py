"""What one extraction may cost and what makes its PDF unusable, with the defaults in one
place: the build's settings (`conf/common.py`), `loralay extract` and `api.extract`
take theirs from here, so the four can never disagree (they once were four literals)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    timeout_s: float = 120.0
    memory_mb: int = 2048
    max_pages: int = 1000
    scanned_min_words_per_page: float = 5.0
    # a 157 KB PDF of 1,000 dense pages holds 16.7M words (265 s, 5.1 GB when read whole);
    # 2M words is ~10x the longest thesis in the corpus
    max_words: int = 2_000_000


DEFAULT_LIMITS = ExtractLimits()
