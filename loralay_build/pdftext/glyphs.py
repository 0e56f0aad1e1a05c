"""Repair words broken by TeX fonts that carry no Unicode map (dvips Type 3 bitmap fonts).

Such fonts hand Poppler raw character codes, so a ligature comes out as a control code:
`de\\x1cnition`, `di\\x1berent`. The documented extraction rule turns every such code into
U+FFFD, which is noise for a summarisation model and breaks the abstract match.

Why the encoding is decided per document from evidence, not assumed: the same codes mean
different things in different fonts (T1 puts ff, fi, fl, ffi, ffl at 0x1B-0x1F, where OT1
has the letters oe, o-slash, AE, OE, O-slash; OT1's ligatures sit at 0x0B-0x0F; a math font
puts Greek letters there). An encoding's ligatures are applied only when decoding with it
gives words the same document also prints unbroken (in another font, in typewriter text,
in the abstract handed in as `evidence`), more often than the rival reading does. No
evidence, no repair: the codes stay U+FFFD and the word counts as unrepaired. Counting
evidence in the document itself, not an English word list, keeps this working in every
language of the corpus.

Why a code is repaired only between letters, or at the start of a word (or of a hyphenated
part) before a letter: a
ligature is always part of a word, while a lone code or one beside digits or punctuation
is far more likely a math symbol. At the end of a word ("o\\x1b" for "off") the decoded word
itself must also be found elsewhere.

Poppler's own behaviour limits what can be seen: with OT1 bitmap fonts it turns 0x0B-0x0D
into white space (the word is split in two, or loses its first letters) and 0x0E into "Æ";
only 0x0F (ffl) reaches us as a code. Those split words are not repaired here.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ..records import Document

# part of the tool version the run state fingerprints: bump when repaired words change
GLYPH_RULE = "glyphs1"
# the encodings' ligatures, by character code
ENCODINGS: dict[str, dict[int, str]] = {
    "T1": {0x1B: "ff", 0x1C: "fi", 0x1D: "fl", 0x1E: "ffi", 0x1F: "ffl"},
    "OT1": {0x0B: "ff", 0x0C: "fi", 0x0D: "fl", 0x0E: "ffi", 0x0F: "ffl"},
}
# what the same codes would be read as under the rival encoding, when that is a letter
RIVAL_LETTERS: dict[str, dict[int, str]] = {
    "T1": {0x1B: "œ", 0x1C: "ø", 0x1D: "Æ", 0x1E: "Œ", 0x1F: "Ø"},  # OT1's letters there
    "OT1": {},  # T1 has accents and quotes at 0x0B-0x0F, never inside a word
}
# distinct evidenced words an encoding needs (fewer when the document has fewer broken words)
MIN_EVIDENCE = 2
# the characters parse.py turns into U+FFFD; each is carried as a private-use placeholder
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
PLACE = 0xF0000  # supplementary private use area: untouched by NFKC, not white space
PLACEHOLDER = re.compile("[\U000F0000-\U000FFFFF]")
# stripped from both ends of a word before it is looked up as evidence
PUNCTUATION = string.punctuation + "«»“”„‘’‚‹›–—…·¡¿"


@dataclass(frozen=True, slots=True)
class RepairCounts:
    """What the repair did to one document (the report shows both per document)."""

    repaired: int  # words whose ligature codes were replaced
    unrepaired: int  # words still holding U+FFFD afterwards
    encodings: tuple[str, ...]  # the encodings the evidence accepted


def coded_form(raw: bytes) -> str:
    """Poppler's raw word under parse.py's documented rule, but with each forbidden code
    kept as a placeholder instead of U+FFFD, so the repair still knows which code it was."""
    text = raw.decode("utf-8", "replace")
    if b"&" in raw:
        text = html.unescape(text)
    text = FORBIDDEN.sub(lambda m: chr(PLACE + ord(m.group()) % 0x10000), text)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return text.strip()


def plain_form(coded: str) -> str:
    """What parse.py made of the word: every placeholder left is U+FFFD."""
    return PLACEHOLDER.sub("\ufffd", coded)


def _code(ch: str) -> int | None:
    n = ord(ch) - PLACE
    return n if 0 <= n < 0x10000 else None


def _core_bounds(word: str) -> tuple[int, int]:
    """The word without leading and trailing punctuation (placeholders belong to it)."""
    def inner(ch: str) -> bool:
        return ch.isalnum() or _code(ch) is not None
    start, end = 0, len(word)
    while start < end and not inner(word[start]):
        start += 1
    while end > start and not inner(word[end - 1]):
        end -= 1
    return start, end


def decode(coded: str, table: dict[int, str], vocab: frozenset[str] = frozenset()) -> str:
    """Replace the codes of `table` that stand where a ligature can; the rest stay codes.

    Between letters, or at the start of the word (or of a part after a hyphen, as in
    "control-flow") before a letter: always. At the word's end
    after a letter: only when the decoded word is in `vocab`."""
    start, end = _core_bounds(coded)
    out, tail = [], []
    for i, ch in enumerate(coded):
        code = _code(ch)
        if code is None or code not in table:
            out.append(ch)
            continue
        before = coded[i - 1].isalpha() if i > start else False
        after = coded[i + 1].isalpha() if i + 1 < end else False
        if after and (before or i == start or coded[i - 1] == "-"):
            out.append(table[code])
        elif before and i + 1 == end:
            tail.append(len(out))
            out.append(table[code])
        else:
            out.append(ch)
    if tail and _key("".join(out)) not in vocab:
        for j in tail:  # `out` holds one entry per character of `coded`
            out[j] = coded[j]
    return "".join(out)


def _key(word: str) -> str:
    return word.strip(PUNCTUATION).lower()


def vocabulary(words: list[str], evidence: Iterable[str] = ()) -> frozenset[str]:
    """The document's unbroken words (and the evidence texts'), case-folded. Each distinct
    word is looked at once: a per-word loop cost 0.4 s on a 72k-word thesis."""
    keys = {_key(w) for w in set(words) if "\ufffd" not in w}
    for text in evidence:
        keys.update(_key(w) for w in text.split())
    keys.discard("")
    return frozenset(keys)


def accepted_encodings(coded: Iterable[str], vocab: frozenset[str]) -> tuple[str, ...]:
    """The encodings whose ligatures make words found elsewhere in the document, in more
    distinct words than the rival reading of the same codes does."""
    coded = set(coded)
    accepted = []
    for name, table in ENCODINGS.items():
        mine = {w for w in coded if any(_code(c) in table for c in w)}
        support = {w for w in mine if _evidenced(decode(w, table, vocab), vocab)}
        rival = {w for w in mine if RIVAL_LETTERS[name]
                 and _evidenced(decode(w, RIVAL_LETTERS[name], vocab), vocab)}
        if support and len(support) >= min(MIN_EVIDENCE, len(mine)) \
                and len(support) > len(rival):
            accepted.append(name)
    return tuple(accepted)


def _evidenced(decoded: str, vocab: frozenset[str]) -> bool:
    return PLACEHOLDER.search(decoded) is None and _key(decoded) in vocab


def _fixed(form: str, names: tuple[str, ...], vocab: frozenset[str]) -> str:
    for name in names:
        form = decode(form, ENCODINGS[name], vocab)
    return plain_form(form)


def repair_document(doc: Document, raw_words: dict[int, bytes],
                    evidence: Iterable[str] = ()) -> RepairCounts:
    """Repair `doc.words` in place. `raw_words` maps a word index to Poppler's raw bytes
    for every word the parser left holding U+FFFD (so the count of words still holding
    it needs no pass over the whole document); a word whose raw form does not give back
    the parsed word exactly is left alone (never change what we cannot account for)."""
    forms = {raw: coded_form(raw) for raw in set(raw_words.values())}  # each once
    coded = {i: forms[raw] for i, raw in raw_words.items()
             if plain_form(forms[raw]) == doc.words[i]}
    if not coded:
        return RepairCounts(0, len(raw_words), ())
    vocab = vocabulary(doc.words, evidence)
    names = accepted_encodings(coded.values(), vocab)
    fixed = {form: _fixed(form, names, vocab) for form in set(coded.values())}
    repaired = 0
    for i, form in coded.items():
        if fixed[form] != doc.words[i]:
            doc.words[i] = fixed[form]
            repaired += 1
    unrepaired = sum(1 for i in raw_words if "\ufffd" in doc.words[i])
    return RepairCounts(repaired, unrepaired, names)


def repair_glyphs(doc: Document, evidence: Iterable[str] = ()) -> RepairCounts:
    """Repair from the raw words the parser kept and record the counts on the document.

    The raw bytes are let go once an encoding was accepted; while none is, they stay, so
    that a later call with more evidence (the abstracts of the source's metadata, known
    only to the per-document stage) can still decide."""
    if not doc.raw_broken:
        return RepairCounts(0, doc.words_unrepaired, ())
    counts = repair_document(doc, doc.raw_broken, evidence)
    doc.words_repaired, doc.words_unrepaired = counts.repaired, counts.unrepaired
    if counts.encodings or not counts.unrepaired:
        doc.raw_broken = {}
    return counts
