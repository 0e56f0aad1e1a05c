"""Language of a body, with pycld2: the share of the document's main language.

cld2 reports up to three languages with their percentage of the text; the paper's
Table 5 is the mean of the main language's share per split. cld2 refuses control
characters and invalid UTF-8, so the text is cleaned first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pycld2

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ufffe\uffff]")
# cld2 names some languages with region or script variants
_ALIASES = {"zh-Hant": "zh", "iw": "he", "jw": "jv"}


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    top: str | None  # ISO 639-1 code of the most present language, None when unknown
    shares: dict[str, float]  # code -> share of the text (0..1)
    reliable: bool

    def share(self, lang: str) -> float:
        return self.shares.get(lang, 0.0)


def detect(text: str) -> LanguageGuess:
    clean = _CONTROL.sub(" ", text).encode("utf-8", "ignore").decode("utf-8", "ignore")
    if not clean.strip():
        return LanguageGuess(None, {}, False)
    try:
        reliable, _, details = pycld2.detect(clean, bestEffort=True)
    except pycld2.error:
        return LanguageGuess(None, {}, False)
    shares: dict[str, float] = {}
    for _name, code, percent, _score in details:
        if code != "un" and percent > 0:
            code = _ALIASES.get(code, code)
            shares[code] = shares.get(code, 0.0) + percent / 100.0
    top = max(shares, key=shares.__getitem__) if shares else None
    return LanguageGuess(top, shares, bool(reliable))
