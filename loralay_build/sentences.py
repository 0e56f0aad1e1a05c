"""A text's sentences, by one rule for every language: pysbd where it has rules, else a
split after . ! ? and their CJK forms (pt, ko). `eval`'s baselines and `export cohan`
both split with it, so a sentence is the same unit in both, and one segmenter per language
is built once per process (pysbd's are slow to make)."""

from __future__ import annotations

import functools
import re
from typing import Any

_PYSBD = frozenset({"en", "fr", "es", "de", "it", "nl"})
_ENDS = re.compile(r"(?<=[.!?。！？])\s+")


@functools.lru_cache(maxsize=8)
def _segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


def sentences_of(text: str, language: str = "en") -> list[str]:
    """The non-empty sentences of `text`, stripped, in order ([] for a blank text)."""
    if not text.strip():
        return []
    if language in _PYSBD:
        found = [s.strip() for s in _segmenter(language).segment(text)]
    else:
        found = [s.strip() for s in _ENDS.split(text)]
    return [s for s in found if s]
