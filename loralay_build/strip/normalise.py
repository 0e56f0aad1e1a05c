"""Text normalisation shared by the matcher and the leakage audit, and char -> word mapping.

The abstract comes from metadata and the body from a PDF text layer, so the two disagree
on everything that is not the words themselves: Unicode forms and ligatures, case, quotes
and dashes, accents built from combining marks (LaTeX's "ı́"), end-of-line hyphenation,
spaces that a text layer inserts inside words (macOS Quartz, Korean line ends) or drops
between them. Matching therefore compares only *letters and digits*: each word is reduced
to its alphanumeric key and the keys are concatenated without separators. Punctuation,
spacing and hyphenation then cost nothing, and what is left for the edit budget is real
disagreement (a lost "fi", a footnote mark, an OCR slip).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

# Joins words for one pass of normalisation over a whole document (much faster than one
# call per word); it is neither alphanumeric nor touched by NFKC/NFKD, so it survives.
_SEP = "\x01"
_NON_KEY = re.compile(r"[^\w\x01]|_")
# what `_NON_KEY` removes from lowercased ASCII: all but letters, digits and the separator
_ASCII_DROP = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) == _SEP))
# Letters that have no decomposition but that text layers and metadata disagree on.
_FOLD = {"ı": "i", "ȷ": "j", "ø": "o", "đ": "d", "ł": "l", "æ": "ae", "œ": "oe", "þ": "th"}
_FOLD_RE = re.compile("[" + "".join(_FOLD) + "]")
# Regexes rather than str.translate: a dict-driven translate costs ~60 ns per character,
# a character class that rarely matches ~5 ns.
_MARKS = re.compile("[" + "".join(re.escape(chr(c)) for c in range(0x300, 0x10000)
                                  if unicodedata.combining(chr(c))) + "]+")
_TOKEN = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Compatibility forms, case and accents folded; what stays comparable across sources.

    NFKD then NFC drops combining marks (so "é" and "e" + U+0301 agree, as do "ı́" and "í")
    while Hangul syllables, which NFKD splits into jamo, are put back together.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii():
        return text
    text = _FOLD_RE.sub(lambda m: _FOLD[m.group()], text)
    text = _MARKS.sub("", unicodedata.normalize("NFKD", text))
    return unicodedata.normalize("NFC", text)


def word_keys(words: list[str]) -> list[str]:
    """The alphanumeric key of each word ("" for pure punctuation), in one pass.

    ASCII words (most of any paper) take a byte path: for them `fold` is `lower` and the
    key keeps [a-z0-9], which one `bytes.translate` does at ~1 ns a character, where the
    Unicode path (NFKC, casefold, NFKD, NFC, two regexes) costs ~130 ns; only the other
    words are folded. Both give `_word_key(w)` of every word (a test checks it on every
    word of the real PDFs)."""
    if not words:
        return []
    odd = [i for i, w in enumerate(words) if not w.isascii()]
    plain = list(words)
    for i in odd:
        plain[i] = ""
    ascii_keys = _SEP.join(plain).lower().encode("ascii").translate(None, _ASCII_DROP)
    keys = ascii_keys.decode("ascii").split(_SEP)
    folded = _NON_KEY.sub("", fold(_SEP.join([words[i] for i in odd]))).split(_SEP)
    if len(keys) != len(words) or (odd and len(folded) != len(odd)):
        # a word holding the separator, or whose folding made one
        return [_word_key(w) for w in words]
    for i, key in zip(odd, folded):
        keys[i] = key
    return keys


def _word_key(word: str) -> str:
    """The definition `word_keys` computes in bulk."""
    return _NON_KEY.sub("", fold(word))


def text_key(text: str) -> str:
    """The alphanumeric key of a free text (an abstract): what `word_keys` would give, joined."""
    return _NON_KEY.sub("", fold(text)).replace(_SEP, "")


def tokens(text: str) -> list[str]:
    """Folded alphanumeric tokens of a text; punctuation splits tokens the same on both sides."""
    return _TOKEN.findall(fold(text))


class KeyedText:
    """A document's words as one key string, with the word index of every character.

    Positions found in `text` are turned back into word indices here, so the cut is
    decided on whole words by one documented rule (see `words_covered`).
    """

    def __init__(self, keys: list[str], words: list[str] | None = None) -> None:
        self.keys = keys
        self.words = words  # the raw words, to see where punctuation splits a glued word
        lengths = np.array(list(map(len, keys)), dtype=np.int64)
        self.text = "".join(keys)
        self.word_of_char = np.repeat(np.arange(len(keys), dtype=np.int64), lengths)
        self.word_start = np.concatenate(([0], np.cumsum(lengths)))  # char offset of word i
        self.lengths = lengths

    def words_covered(self, start: int, end: int) -> tuple[int, int]:
        """Word range [first, last) removed for the character span [start, end).

        A word that the span only partly covers is removed when the span covers at least
        half of its key characters, or when the span's edge falls where punctuation splits
        the printed word ("Resumen—El", "Abstract:We": a label glued to the first word of
        the abstract; the label goes with it). So a match that starts or ends inside a word
        never shifts the cut by a whole word. Words with an empty key (a lone dash or
        bullet) between two removed words go with them. Returns (first, first) when no
        word qualifies.
        """
        if end <= start:
            return 0, 0
        first, last = int(self.word_of_char[start]), int(self.word_of_char[end - 1])
        head = int(start - self.word_start[first])  # key chars of `first` before the span
        if head and 2 * head > self.lengths[first] and not self._splits_at(first, head):
            first += 1
        tail = int(end - self.word_start[last])  # key chars of `last` inside the span
        if tail < self.lengths[last] and 2 * tail < self.lengths[last] \
                and not self._splits_at(last, tail):
            last -= 1
        if last < first:
            return first, first
        return first, last + 1

    def _splits_at(self, word: int, offset: int) -> bool:
        """Whether the printed word has a punctuation break after `offset` key characters."""
        if self.words is None:
            return False
        ends = np.cumsum([len(t) for t in tokens(self.words[word])])
        return offset in ends[:-1]


# An abstract's heading in the languages the tool builds, as keys: "ABSTRACT:",
# "a b s t r a c t" and "요 약" all give one of these; the plurals head the first of a
# paper's abstracts ("RÉSUMÉS"), the Korean ones may name the language ("영문 요약:").
ABSTRACT_HEADINGS = ("Abstract", "Abstracts", "Summary", "Résumé", "Résumés", "Resumo",
                     "Resumos", "Resumen", "Resúmenes", "Zusammenfassung", "요약", "초록",
                     "국문초록", "영문초록", "한글초록", "국문요약", "영문요약", "한글요약")
_HEADING_KEYS = frozenset(text_key(h) for h in ABSTRACT_HEADINGS)


def is_heading(key: str) -> bool:
    """Whether a key text is an abstract's heading and nothing else."""
    return key in _HEADING_KEYS
