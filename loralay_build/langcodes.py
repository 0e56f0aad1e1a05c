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


def to_iso639_1(code: object) -> str | None:
    """The ISO 639-1 code a repository's language label names, None when it names none:
    `en`, `en_US`, `en-GB`, ISO 639-2/B or /T and 639-3 (`eng`, `ger`, `deu`, `por`); `other`,
    `und`, "en fr" and scripts alone (`ja-Kana` is `ja`) are read as far as they go."""
    if not isinstance(code, str):
        return None
    head = code.strip().replace("_", "-").split("-")[0].lower()
    if len(head) == 2:
        return head if head in iso639_1_codes() else None
    if len(head) != 3:
        return None
    return _alpha3().get(head)


@lru_cache(maxsize=1)
def _alpha3() -> dict[str, str]:
    import pycountry

    out: dict[str, str] = {}
    for lang in pycountry.languages:
        two = getattr(lang, "alpha_2", None)
        if not two:
            continue
        for attr in ("alpha_3", "bibliographic"):
            three = getattr(lang, attr, None)
            if three:
                out[three] = two
    return out
