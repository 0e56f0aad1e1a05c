"""ISO 639-1 language codes, from pycountry's copy of the ISO tables.

Manifests, the HAL filter and the card all speak two-letter codes; "english" or "en-US"
is refused with a message rather than carried into a dataset's `language` column.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def iso639_1_codes() -> frozenset[str]:
    import pycountry

    return frozenset(lang.alpha_2 for lang in pycountry.languages if hasattr(lang, "alpha_2"))


def is_iso639_1(code: object) -> bool:
    return isinstance(code, str) and code in iso639_1_codes()
