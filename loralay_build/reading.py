"""Clean text from a dataset row: `text(row, by="block")`.

Why a helper: the words stay exactly as Poppler extracted them (their boxes are the
layout models' input), so a line-end hyphen is a word of its own line ("Cita-" then
"tion"), and small capitals can come as two words ("S CIENCE"). Rebuilding readable text
from the word, line and block columns is what every user of a summarization dataset does
first, and doing it five lines at a time in each notebook gets the hyphens wrong.

The rule for a line-end hyphen: the word ending in "-" and the first word of the next line
of the same block, which starts in lower case, are one word. Joined without the hyphen
("Citation"), unless the document itself writes that compound with a hyphen mid-line and
never without ("well-known"), in which case the hyphen stays. A soft hyphen (U+00AD) is
always a break. The same hyphen inside one line (two visual lines the grouping made one)
is mended only when the document writes the word whole elsewhere. Small capitals: a
single capital letter followed, on the same line and closer than a quarter of its height,
by a word in capitals is one word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ConfigError

BY = ("line", "block", "section")
_HYPHENS = ("-", "\u2010")
_SOFT_HYPHEN = "\u00ad"


def _column(row: Mapping[str, Any], name: str, n: int | None) -> Sequence[Any]:
    value = row.get(name)
    if value is None:
        raise ConfigError(f"text: the row has no {name!r} column (a `--features published` "
                          "row? the helper needs the compact columns)")
    if n is not None and len(value) != n:
        raise ConfigError(f"text: {name!r} has {len(value)} values for {n} words")
    return value


def _small_caps(words: list[str], boxes: Sequence[Sequence[float]] | None) -> list[str]:
    """One line's words with "S CIENCE" made "SCIENCE" (see the module docstring)."""
    if boxes is None or len(words) < 2:
        return words
    out: list[str] = []
    box_of: list[Sequence[float]] = []
    for word, box in zip(words, boxes, strict=True):
        if out and len(out[-1]) == 1 and out[-1].isupper() and len(word) > 1 \
                and word.isupper() and word.isalpha():
            prev = box_of[-1]
            gap, height = float(box[0]) - float(prev[2]), float(prev[3]) - float(prev[1])
            if height >= 0 and gap < 0.25 * height:
                out[-1] += word
                box_of[-1] = [prev[0], min(prev[1], box[1]), box[2], max(prev[3], box[3])]
                continue
        out.append(word)
        box_of.append(box)
    return out


def _hyphenated(words: Sequence[str]) -> tuple[set[str], set[str]]:
    """The document's own spellings: compounds written with a hyphen mid-line, and every
    word, both lower-cased (what decides whether a line-end hyphen stays)."""
    lower = [w.lower() for w in words]
    compounds = {w for w in lower if any(h in w[1:-1] for h in _HYPHENS)}
    return compounds, set(lower)


def _join(end: str, start: str, compounds: set[str], vocabulary: set[str]) -> str | None:
    """`end` + `start` as one word when `end`'s hyphen breaks a word at a line end."""
    if len(end) < 2 or not start[:1].islower():
        return None
    if end.endswith(_SOFT_HYPHEN):
        return end[:-1] + start
    if not end.endswith(_HYPHENS) or not end[-2].isalpha():
        return None
    whole, kept = (end[:-1] + start).lower(), (end + start).lower()
    if kept in compounds and whole not in vocabulary:
        return end + start
    return end[:-1] + start


def _mid_line(words: list[str], vocabulary: set[str]) -> list[str]:
    """"intermé- diaire" inside one line (two visual lines grouped as one) is one word
    when the document writes it whole elsewhere; "pre- and post-" is left alone."""
    out: list[str] = []
    for word in words:
        if out and len(out[-1]) > 1 and out[-1].endswith(_HYPHENS) and out[-1][-2].isalpha() \
                and word[:1].islower() and (out[-1][:-1] + word).lower() in vocabulary:
            out[-1] = out[-1][:-1] + word
            continue
        out.append(word)
    return out


def _lines(row: Mapping[str, Any]) -> list[tuple[Any, Any, list[str], list[Any] | None]]:
    """(section, block, words, boxes) per visual line, in the row's word order."""
    words = _column(row, "article_words", None)
    n = len(words)
    line_ids = _column(row, "article_line_ids", n)
    block_ids = _column(row, "article_block_ids", n)
    sections = row.get("article_section_ids")
    boxes = row.get("article_bboxes")
    if boxes is not None and len(boxes) != n:
        boxes = None
    out: list[tuple[Any, Any, list[str], list[Any] | None]] = []
    key = None
    for i, word in enumerate(words):
        section = sections[i] if sections is not None and len(sections) == n else None
        here = (section, block_ids[i], line_ids[i])
        if here != key:
            out.append((section, block_ids[i], [], [] if boxes is not None else None))
            key = here
        out[-1][2].append(word)
        box_list = out[-1][3]
        if box_list is not None and boxes is not None:
            box_list.append(boxes[i])
    return out


def text(row: Mapping[str, Any], by: str = "block") -> str:
    """The row's body as text: lines joined with a space (a line-end hyphen mended),
    blocks apart by a blank line (`by="block"`), each line on its own (`by="line"`), or
    blocks apart and sections apart by two blank lines (`by="section"`, rows that have
    `article_section_ids`). The row's columns are not changed."""
    if by not in BY:
        raise ConfigError(f"text: by={by!r}: one of {', '.join(BY)}")
    if by == "section" and row.get("article_section_ids") is None:
        raise ConfigError("text: by='section' needs the 'article_section_ids' column")
    compounds, vocabulary = _hyphenated(_column(row, "article_words", None))
    blocks: list[tuple[Any, Any, list[list[str]]]] = []
    for section, block, words, boxes in _lines(row):
        words = _mid_line(_small_caps(words, boxes), vocabulary)
        if blocks and blocks[-1][:2] == (section, block):
            lines = blocks[-1][2]
            joined = _join(lines[-1][-1], words[0], compounds, vocabulary) if lines[-1] \
                else None
            if joined is not None:  # the word goes whole onto the line it began on
                lines[-1][-1], words = joined, words[1:]
            if words:
                lines.append(words)
        else:
            blocks.append((section, block, [words]))
    line_break = "\n" if by == "line" else " "
    out: list[str] = []
    for k, (section, _, lines) in enumerate(blocks):
        if k:
            out.append("\n\n\n" if by == "section" and blocks[k - 1][0] != section
                       else "\n\n")
        out.append(line_break.join(" ".join(line) for line in lines))
    return "".join(out)
