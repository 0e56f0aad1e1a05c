"""Leakage audit: how much of each abstract is still in the body after removal.

Measured as the share of the abstract's word n-grams (folded alphanumeric tokens) that
occur anywhere in the body. Hyphens inside words and at line ends are removed on both
sides first, so "pro-" + "ducing" in the body and "producing" in the abstract, or
"automatically-" + "detected" and "automatically-detected", give the same tokens.
Authors sometimes repeat an abstract sentence in the introduction, which is why the
driver compares the share with a threshold rather than with zero.
"""

from __future__ import annotations

import re

from ..records import Document
from .normalise import tokens

_HYPHENS = "-\u2010\u2011\u00ad"
_INNER_HYPHEN = re.compile(rf"(?<=\w)[{_HYPHENS}](?=\w)")


def body_text(doc: Document) -> str:
    """The body as one text, line-end hyphenation undone (the next word is on another line)."""
    out: list[str] = []
    words, lines = doc.words, doc.line_ids
    for i, w in enumerate(words):
        if (len(w) > 1 and w[-1] in _HYPHENS and i + 1 < len(words)
                and lines[i + 1] != lines[i]):
            out.append(w[:-1])  # glued to the next word
        else:
            out.append(w)
            out.append(" ")
    return "".join(out)


def _tokens(text: str) -> list[str]:
    return tokens(_INNER_HYPHEN.sub("", text))


def leakage(doc: Document, abstracts: dict[str, str], n: int) -> dict[str, float]:
    """Per language, the share of the abstract's n-grams found in the body (0.0 to 1.0).

    An abstract shorter than n tokens is measured with one n-gram of its own length.
    """
    body = _tokens(body_text(doc))
    grams_by_size: dict[int, set[tuple[str, ...]]] = {}
    result: dict[str, float] = {}
    for lang, text in abstracts.items():
        toks = _tokens(text)
        if not toks:
            result[lang] = 0.0
            continue
        m = min(n, len(toks))
        if m not in grams_by_size:
            grams_by_size[m] = {tuple(body[i:i + m]) for i in range(len(body) - m + 1)}
        grams = [tuple(toks[i:i + m]) for i in range(len(toks) - m + 1)]
        result[lang] = sum(g in grams_by_size[m] for g in grams) / len(grams)
    return result
