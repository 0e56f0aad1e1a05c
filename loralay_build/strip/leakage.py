"""Leakage audit: how much of each abstract is still in the body after removal.

The share of the abstract's word n-grams (folded alphanumeric tokens) that still occur in
the body. An n-gram counts as present when its tokens, concatenated, occur in the body's
key text (normalise.py), i.e. with the same tolerance as the matcher: line-end hyphens
("pro-" + "ducing"), spaces a text layer puts inside words (Korean line ends, macOS
Quartz) or punctuation do not hide a leftover sentence. Authors sometimes repeat an
abstract sentence in the introduction, which is why the driver compares the share with
a threshold rather than with zero.
"""

from __future__ import annotations

from collections import Counter

import ahocorasick

from ..records import Document
from .normalise import tokens, word_keys


def leakage(doc: Document, abstracts: dict[str, str], n: int,
            keys: list[str] | None = None) -> dict[str, float]:
    """Per language, the share of the abstract's n-grams found in the body (0.0 to 1.0).

    An abstract shorter than n tokens is measured with one n-gram of its own length; an
    abstract with no letters or digits has nothing to leak (0.0). `keys`: the body's
    `word_keys`, when the caller has them already (`strip_document`).
    """
    body = "".join(word_keys(doc.words) if keys is None else keys)
    result: dict[str, float] = {}
    for lang, text in abstracts.items():
        toks = tokens(text)
        if not toks:
            result[lang] = 0.0
            continue
        m = min(n, len(toks))
        grams = Counter("".join(toks[i:i + m]) for i in range(len(toks) - m + 1))
        found = sum(grams[gram] for gram in grams_in(body, grams))
        result[lang] = found / sum(grams.values())
    return result


def grams_in(body: str, grams: Counter[str]) -> set[str]:
    """The grams that occur in `body`, anywhere (`gram in body` for each): one
    Aho-Corasick pass over the body instead of one scan per gram, which on a 300k-character
    thesis was 23 ms against 9.5 ms."""
    automaton = ahocorasick.Automaton()
    for gram in grams:
        automaton.add_word(gram, gram)
    automaton.make_automaton()
    return {gram for _, gram in automaton.iter(body)}
