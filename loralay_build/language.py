"""Language of a body, with pycld2: the share of the document's main language.

cld2 reports up to three languages with their percentage of the text; the paper's
Table 5 is the mean of the main language's share per split. cld2 refuses control
characters and invalid UTF-8, so the text is cleaned first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import pycld2

# What cld2 refuses, each made a space: C0 and C1 controls, U+FFFD-U+FFFF. Done on the
# UTF-8 bytes (a translate table, one pattern anchored on the C1 lead byte, three
# replaces) because a character-class regex over a 300k-character body cost four times
# cld2's own time; the bytes are the same as the class applied to the text.
_C0_TO_SPACE = bytes(range(256)).translate(
    bytes.maketrans(bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]), b" " * 30))
_C1 = re.compile(b"\xc2[\x80-\x9f]")
_SPECIALS = (b"\xef\xbf\xbd", b"\xef\xbf\xbe", b"\xef\xbf\xbf")
# cld2 names some languages with region or script variants
_ALIASES = {"zh-Hant": "zh", "iw": "he", "jw": "jv"}


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    top: str | None  # ISO 639-1 code of the most present language, None when unknown
    shares: dict[str, float]  # code -> share of the text (0..1)
    reliable: bool

    def share(self, lang: str) -> float:
        return self.shares.get(lang, 0.0)


def cld2_bytes(text: str) -> bytes:
    """The text as cld2 accepts it: UTF-8 without lone surrogates, refused characters
    made spaces."""
    raw = text.encode("utf-8", "ignore").translate(_C0_TO_SPACE)
    if b"\xc2" in raw:
        raw = _C1.sub(b" ", raw)
    if b"\xef\xbf" in raw:
        for seq in _SPECIALS:
            raw = raw.replace(seq, b" ")
    return raw


def detect(text: str) -> LanguageGuess:
    clean = cld2_bytes(text)
    if not (clean.strip() if clean.isascii() else clean.decode("utf-8").strip()):
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


def main_language(abstracts: Mapping[str, str], stated: Iterable[str] = (),
                  body: LanguageGuess | None = None,
                  kept: Collection[str] | None = None) -> str | None:
    """The paper's own language, whose abstract is the summary: every source and the body
    step pick it by this one rule (docs/abstract-matching.md), never by the order of the
    languages a run keeps, which only filter papers (`kept`; None: any).

    1. the body's language, when cld2 is sure of it and the paper has an abstract in it:
       the text itself outweighs a record that states no language or another one;
    2. else the first language the record states that has an abstract;
    3. else the first abstract, in the record's order, in a kept language; else the first.
    None only without any abstract."""
    if body is not None and body.reliable and body.top in abstracts:
        return body.top
    for lang in stated:
        if lang in abstracts:
            return lang
    return next((lang for lang in abstracts if kept is None or lang in kept),
                next(iter(abstracts), None))
