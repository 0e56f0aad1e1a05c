"""The paper's structure as data (issue 45): a section tree, each word's section, and the
reference list, read from the labelled words the group step gave.

Why from the labelled columns: the writer holds exactly these (words, boxes, pages, block
ids, labels) for every dataset, so the structure is derived where the row is made, with no
new run state; the rules are the labels' own (`section`, `bibliography`) refined by what
the page tells:

- a heading is a block labelled `section` that is not a reference entry's shape, set in a
  type no smaller than the body; a heading's number ("2.3.1", "IV.", "B.") gives its level
  (the count of its parts; a Roman numeral is a top level, a capital letter below it);
  an unnumbered heading takes the level of the numbered headings of its type size, or,
  with none of its size numbered, the rank of its type size among the headings';
- a heading's parent is the last heading of a smaller level before it;
- each word belongs to the last heading at or before it (−1 before the first);
- the reference list is the words labelled `bibliography`, split into entries where a line
  opens with an entry's number ("[12]", "12.", "12"), or, without numbers, at a line set
  left of its neighbours (a hanging indent), or at a line that opens like an author
  ("Smith, J.", "Smith J") after a line that ended an entry.

Everything is per block or per line of the few words concerned; the body is read only
through NumPy over its heights.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..labels import CODE

# in the tool version the run state fingerprints (pdf/preflight.STEP_RULES, as
# group.GROUP_RULE): the `sections`, `article_section_ids` and `references` columns follow
# it; 2: the PDF's outline read in the build, running heads and the title block dropped;
# 3: a list of an entry a block splits inside a block only at an author's initials; a
# heading the outline does not name, below its depth, needs a parent one level up;
# headings match outline entries NFKC-folded
SECTIONS_RULE = "sections3"

SECTION, BIBLIOGRAPHY, PARAGRAPH = CODE["section"], CODE["bibliography"], CODE["paragraph"]
# a heading set smaller than this share of the body's type is no heading (a table's, a
# figure's text labelled as one)
LEAST_HEADING = 0.9
# type sizes closer than this share count as one size when heading levels are ranked
SAME_SIZE = 0.06
# at most this many words in a heading (a longer `section` block is a run-on paragraph)
MOST_WORDS = 20
# a heading text on this many pages or more is a running head (its largest one, when
# clearly larger than the rest, is the real heading: a chapter title its pages repeat)
RUNNING_PAGES = 3
# an outline is the paper's tree when at least this share of the printed headings match it
OUTLINE_SHARE = 0.5

_ARABIC = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?$")
_ROMAN = re.compile(r"^(?=[IVXLC])M{0,3}(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})\.?$")
_LETTER = re.compile(r"^[A-H](?:\.\d{1,2})*\.$")
# a reference entry's number at a line's start
_ENTRY_NUMBER = re.compile(r"^(?:\[\d{1,4}\]|\(\d{1,4}\)|\d{1,4}\.|\d{1,4})$")
# an author's name at a line's start: "Smith," "Smith" "van der Berg," "O'Neil,"
_AUTHOR = re.compile(r"^[A-Z][\w'’\-]+,?$")
# an author's initials after the surname: "A.", "A.J.,", "B-C.;"
_INITIALS = re.compile(r"^[A-Z][a-z]?(?:[.\-][A-Z]?)+\.?[,;]?$")
# an entry runs to at most this many lines (a block of more holds several)
ENTRY_LINES = 5
_ENDS_ENTRY = re.compile(r"(?:\.|\d{4}[a-z]?\)?\.?|\d+\s*[-–]\s*\d+\.?)$")


@dataclass(frozen=True, slots=True)
class Section:
    title: str  # as printed, numbering included
    level: int  # 1 = top
    parent: int  # index into the document's sections, -1 for a top one


def number_level(first: str) -> int | None:
    """A heading number's level: "2.3.1" 3, "IV." 1, "B." 2, "B.1." 3; None if `first`
    is no heading number."""
    m = _ARABIC.match(first)
    if m:
        return m.group(1).count(".") + 1
    if first.rstrip(".") and _ROMAN.match(first):
        return 1
    if _LETTER.match(first):
        return 2 + first.count(".") - 1
    return None


def _block_starts(block_ids: np.ndarray) -> np.ndarray:
    """The first word of each block (a block's words are contiguous)."""
    if not len(block_ids):
        return np.zeros(0, dtype=np.int64)
    change = np.ones(len(block_ids), dtype=bool)
    change[1:] = block_ids[1:] != block_ids[:-1]
    return change.nonzero()[0]


def _heights(boxes: np.ndarray) -> np.ndarray:
    return boxes[:, 3] - boxes[:, 1]


def _body_height(h: np.ndarray, labels: np.ndarray) -> float:
    """The body's type size: the median word height of paragraphs (of all words when none)."""
    body = h[labels == PARAGRAPH]
    if not len(body):
        body = h
    return float(np.median(body)) if len(body) else 0.0


def heading_blocks(words: list[str], boxes: np.ndarray, block_ids: np.ndarray,
                   labels: np.ndarray) -> list[tuple[int, int, float]]:
    """The headings as (first word, word count, mean height), in reading order."""
    starts = _block_starts(block_ids)
    if not len(starts):
        return []
    counts = np.diff(np.append(starts, len(words)))
    h = _heights(boxes)
    body_h = _body_height(h, labels)
    mean_h = np.add.reduceat(h, starts) / counts
    cand = ((labels[starts] == SECTION) & (counts <= MOST_WORDS)
            & (mean_h >= LEAST_HEADING * body_h)).nonzero()[0]
    out = []
    for s, n, mh in zip(starts[cand].tolist(), counts[cand].tolist(), mean_h[cand].tolist()):
        text = words[s:s + n]
        if not any(c.isalpha() for w in text for c in w):
            continue  # a number alone, a symbol
        out.append((s, n, mh))
    return out


def _running_key(text: list[str]) -> str:
    """A heading's text as its pages repeat it: a page number at either end of a text of
    two words or more aside, its numbering kept ("1.4 Conclusion" and "2.6 Conclusion",
    "Chapitre 1" and "Chapitre 2" are two headings each)."""
    if len(text) > 2 and text[0].isdigit():
        text = text[1:]
    if len(text) > 2 and text[-1].isdigit():
        text = text[:-1]
    return "".join(c for c in " ".join(text).lower() if c.isalnum() or c == ".")


def _drop_running_heads(words: list[str], pages: np.ndarray,
                        heads: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The headings without running heads: a text found as a heading on RUNNING_PAGES
    pages or more is the page's head, not the paper's, but for its one occurrence set
    clearly larger than all the others (the chapter's own title)."""
    by_key: dict[str, list[int]] = {}
    for i, (s, n, _) in enumerate(heads):
        by_key.setdefault(_running_key(words[s:s + n]), []).append(i)
    drop: set[int] = set()
    for idx in by_key.values():
        if len({int(pages[heads[i][0]]) for i in idx}) < RUNNING_PAGES:
            continue
        sizes = sorted((heads[i][2], i) for i in idx)
        keep = sizes[-1][1] if sizes[-1][0] > sizes[-2][0] * (1 + SAME_SIZE) else -1
        drop.update(i for i in idx if i != keep)
    return [h for i, h in enumerate(heads) if i not in drop]


def _drop_title(pages: np.ndarray, heads: list[tuple[int, int, float]]
                ) -> list[tuple[int, int, float]]:
    """The headings without the title block: the first page's leading headings set
    clearly larger than every heading of the later pages are the paper's title (and its
    translation), which belongs before the first section (`article_section_ids` -1), not
    in the tree."""
    first = int(pages[heads[0][0]]) if heads else 0
    later = [h[2] for h in heads if int(pages[h[0]]) != first]
    if not later:
        return heads  # a one-page note's largest heading is its heading
    top = max(later) * (1 + SAME_SIZE)
    k = 0
    while k < len(heads) and int(pages[heads[k][0]]) == first and heads[k][2] > top:
        k += 1
    return heads[k:]


def _levels(words: list[str], heads: list[tuple[int, int, float]]) -> list[int]:
    """Each heading's level: its number's; else the level of the numbered headings of its
    type size (within SAME_SIZE); else its size's rank among all the headings' sizes."""
    numbered = [number_level(words[s]) if n >= 2 else None for s, n, _ in heads]
    sizes = [mh for _, _, mh in heads]
    known = [(sizes[i], lv) for i, lv in enumerate(numbered) if lv is not None]
    ranks: list[float] = []  # distinct sizes, largest first
    for size in sorted(sizes, reverse=True):
        if not ranks or size < ranks[-1] * (1 - SAME_SIZE):
            ranks.append(size)
    out = []
    for i, lv in enumerate(numbered):
        if lv is None:
            near = [k for k in known if abs(k[0] - sizes[i]) <= SAME_SIZE * k[0]]
            if near:  # nearest numbered size; ties go to the shallower level
                lv = min(near, key=lambda k: (abs(k[0] - sizes[i]), k[1]))[1]
            else:
                lv = 1 + next(k for k, r in enumerate(ranks)
                              if sizes[i] >= r * (1 - SAME_SIZE))
        out.append(lv)
    return out


def parents_of(levels: list[int]) -> list[int]:
    """Each heading's parent: the last heading before it of a smaller level (-1: none)."""
    stack: list[int] = []
    out = []
    for i, lv in enumerate(levels):
        while stack and levels[stack[-1]] >= lv:
            stack.pop()
        out.append(stack[-1] if stack else -1)
        stack.append(i)
    return out


def outline_of(pdf_path: str) -> list[tuple[str, int]]:
    """The PDF's bookmarks as (title, level from 1), [] when it has none or they cannot
    be read (pypdfium2, a dependency: the outline is the author's own tree)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(pdf_path)
    except (pdfium.PdfiumError, OSError):  # unreadable, encrypted, gone: no outline
        return []
    try:
        return [(item.get_title(), item.level + 1) for item in pdf.get_toc()]
    except (pdfium.PdfiumError, ValueError):
        return []
    finally:
        pdf.close()


_NUMBERING = re.compile(r"^\s*(?:(?i:chapter|appendix|part|section|chapitre|annexe|cap[ií]tulo|"
                        r"anexo|ap[eê]ndice)\s+)?"
                        r"(?:[\dIVXLC]+(?:\.\d+)*|[A-H](?:\.\d+)*)[.)]?\s+")


def title_key(title: str) -> str:
    """A heading's text for matching an outline entry or a tagged heading: numbering,
    punctuation, spaces and case aside, compatibility forms folded (NFKC: a math italic
    "𝑱" is "J", a ligature "ﬁ" is "fi")."""
    text = unicodedata.normalize("NFKC", title)
    return "".join(c for c in _NUMBERING.sub("", text).lower() if c.isalnum())


def _outline_matches(words: list[str], heads: list[tuple[int, int, float]],
                     outline: list[tuple[str, int]]) -> dict[int, int]:
    """Heading index -> outline entry index, matched in order by their texts (numbering,
    punctuation and case aside)."""
    keys = [title_key(" ".join(words[s:s + n])) for s, n, _ in heads]
    okeys = [title_key(t) for t, _ in outline]
    out: dict[int, int] = {}
    j = 0
    for i, k in enumerate(keys):
        for jj in range(j, len(outline)):
            if k and okeys[jj] == k:
                out[i], j = jj, jj + 1
                break
    return out


_PREFIXES = frozenset({"chapter", "appendix", "part", "section", "chapitre", "annexe",
                       "capítulo", "capitulo", "anexo", "apêndice", "apendice"})


def _find_entry(words: list[str], keys: dict[int, str], starts: np.ndarray, want: str,
                lo: int) -> tuple[int, int]:
    """The first block-starting run of words at or after word `lo` whose text is `want`
    (`title_key`: its numbering aside, as printed "Appendix A One-term ..." is the entry
    "A One-term ..."): (first word, count), (-1, 0) when none is (MOST_WORDS at most)."""
    for s in starts[np.searchsorted(starts, lo):].tolist():
        first = words[s]
        if not (keys[s] and want.startswith(keys[s])) and not _NUMBERING.match(first + " ") \
                and first.lower() not in _PREFIXES:
            continue
        for e in range(s + 1, min(len(words), s + MOST_WORDS) + 1):
            text = " ".join(words[s:e])
            if _NUMBERING.fullmatch(text + " ") or text.lower() in _PREFIXES:
                continue  # the numbering alone so far
            got = title_key(text)
            if got == want:
                return s, e - s
            if len(got) > len(want) or not want.startswith(got):
                break
    return -1, 0


def _with_outline(words: list[str], boxes: np.ndarray, block_ids: np.ndarray,
                  heads: list[tuple[int, int, float]], levels: list[int],
                  outline: list[tuple[str, int]]
                  ) -> tuple[list[tuple[int, int, float]], list[int]]:
    """The headings and levels as the outline gives them, when it is the paper's tree
    (OUTLINE_SHARE of the printed headings match its entries; a journal's bookmarks of
    its issue, or of the PDF's attachments, are not): every entry printed at a block's
    start is a heading at the entry's level (one the labels missed too); a labelled
    heading no entry names is kept only below the outline's depth (an outline of the
    top levels alone says nothing of the deeper ones) and under a heading one level up
    (a title page's line set small is not a level-4 heading under a chapter), or where
    it is set in the type of
    a matched top-level heading, at the top (the outline's "Table of Contents" printed as
    "Contents"; the type of deeper levels is too common to tell a heading by)."""
    match = _outline_matches(words, heads, outline)
    if not heads or len(match) < OUTLINE_SHARE * len(heads):
        return heads, levels
    depth = max(lv for _, lv in outline)
    starts = _block_starts(block_ids)
    keys = {s: title_key(words[s]) for s in starts.tolist()}  # a block's first word's
    h = _heights(boxes)
    sized = [(heads[i][2], 1) for i, j in match.items() if outline[j][1] == 1]
    picked: dict[int, tuple[tuple[int, int, float], int]] = {}
    deeper: set[int] = set()
    for i, hd in enumerate(heads):
        near = [k for k in sized if abs(k[0] - hd[2]) <= SAME_SIZE * k[0]]
        if i in match:
            picked[hd[0]] = (hd, outline[match[i]][1])
        elif levels[i] > depth:
            picked[hd[0]] = (hd, levels[i])
            deeper.add(hd[0])
        elif near:
            picked[hd[0]] = (hd, min(near, key=lambda k: (abs(k[0] - hd[2]), k[1]))[1])
    lo = 0
    found_at = {j: heads[i][0] for i, j in match.items()}
    for jj, (title, lv) in enumerate(outline):
        if jj in found_at:
            lo = found_at[jj] + 1
            continue
        if not title_key(title):
            continue
        s, n = _find_entry(words, keys, starts, title_key(title), lo)
        if s >= 0 and s not in picked:
            picked[s] = ((s, n, float(h[s:s + n].mean())), lv)
            lo = s + n
    order: list[int] = []
    for s in sorted(picked):
        lv = picked[s][1]
        if s in deeper and (not order or picked[order[-1]][1] < lv - 1):
            continue
        order.append(s)
    return [picked[s][0] for s in order], [picked[s][1] for s in order]


def sections_of(words: list[str], boxes: np.ndarray, block_ids: np.ndarray,
                labels: np.ndarray, outline: Sequence[tuple[str, int]] | None = None,
                pages: np.ndarray | None = None) -> tuple[list[Section], np.ndarray]:
    """The section tree (reading order) and each word's section index (int32, -1 before
    the first heading); `outline` (`outline_of`), where its entries match the printed
    headings, gives the headings and their levels; `pages` (each word's) finds running
    heads and the title block."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    block_ids = np.asarray(block_ids, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    heads = heading_blocks(words, boxes, block_ids, labels)
    if pages is not None and len(pages) == len(words):
        pages = np.asarray(pages, dtype=np.int64)
        heads = _drop_title(pages, _drop_running_heads(words, pages, heads))
    levels = _levels(words, heads)
    if outline:
        heads, levels = _with_outline(words, boxes, block_ids, heads, levels, list(outline))
    # a level never jumps more than one below its parent ("3.1.1" under a "3" alone)
    parents = parents_of(levels)
    sections = [Section(" ".join(words[s:s + n]), lv, p)
                for (s, n, _), lv, p in zip(heads, levels, parents)]
    first = np.array([s for s, _, _ in heads], dtype=np.int64)
    ids = np.searchsorted(first, np.arange(len(words)), side="right") - 1
    return sections, ids.astype(np.int32)


def _lines(line_ids: np.ndarray, which: np.ndarray) -> list[np.ndarray]:
    """The words of `which` (indices, reading order) split into their visual lines."""
    if not len(which):
        return []
    lid = line_ids[which]
    cut = (np.diff(lid) != 0).nonzero()[0] + 1
    return np.split(which, cut)


def references_of(words: list[str], boxes: np.ndarray, line_ids: np.ndarray,
                  block_ids: np.ndarray, labels: np.ndarray) -> list[str]:
    """The bibliography's entries, one string each, in order (see the module's doc)."""
    labels = np.asarray(labels, dtype=np.int64)
    which = (labels == BIBLIOGRAPHY).nonzero()[0]
    if not len(which):
        return []
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    line_ids = np.asarray(line_ids, dtype=np.int64)
    block_ids = np.asarray(block_ids, dtype=np.int64)
    lines = _lines(line_ids, which)
    firsts = [words[int(ln[0])] for ln in lines]
    numbered = [_ENTRY_NUMBER.match(f) is not None for f in firsts]
    if sum(numbered) >= max(2, 0.2 * len(lines)):
        starts = _numbered_starts(firsts, numbered)
    else:
        starts = _unnumbered_starts(words, boxes, block_ids, lines)
    starts[0] = True
    out: list[str] = []
    for ln, new in zip(lines, starts):
        text = " ".join(words[int(i)] for i in ln)
        if new or not out:
            out.append(text)
        elif out[-1].endswith("-") and not out[-1].endswith(" -"):
            out[-1] = out[-1][:-1] + text  # a word broken at the line's end
        else:
            out[-1] += " " + text
    return out


def _number(first: str) -> int:
    return int(first.strip("[]().") or 0)


def _numbered_starts(firsts: list[str], numbered: list[bool]) -> list[bool]:
    """Entry starts of a numbered list: a line whose number follows the last entry's (a
    bare number that does not is a page or volume number at a line's start)."""
    out = [False] * len(firsts)
    last = 0
    for i, (f, num) in enumerate(zip(firsts, numbered)):
        if not num:
            continue
        k = _number(f)
        bracketed = f[0] in "[("
        if k == last + 1 or (bracketed and last < k <= last + 3) or (last == 0 and k <= 5):
            out[i], last = True, k
    return out


def _unnumbered_starts(words: list[str], boxes: np.ndarray, block_ids: np.ndarray,
                       lines: list[np.ndarray]) -> list[bool]:
    """Entry starts of a list without numbers: per block, a hanging indent's outdented
    lines; a block without indents splits where a line opens like an author after a line
    that ended like an entry, or is one entry per block. NumPy over the lines' first
    words (a list has thousands of lines)."""
    out = [False] * len(lines)
    first = np.array([int(ln[0]) for ln in lines])
    last = [int(ln[-1]) for ln in lines]
    x0 = boxes[first, 0]
    hgt = boxes[first, 3] - boxes[first, 1]
    blk = block_ids[first]
    cut = (np.diff(blk) != 0).nonzero()[0] + 1
    groups = np.split(np.arange(len(lines)), cut)
    # blocks of an entry's few lines each: the grouping set the entries apart (by the
    # space between them), so inside one a new entry needs its author's initials too
    # ("Schiff A.J.,", "Rovelli, L."): a journal's name opening a line ("Scientometrics,
    # v. 106 ...", "Disponível em:") is no new entry
    per_entry = len(groups) >= 3 and float(np.median([len(g) for g in groups])) <= ENTRY_LINES
    for group in groups:
        gx = x0[group]
        indent = gx > float(gx.min()) + 0.6 * float(np.median(hgt[group]))
        out[int(group[0])] = True
        if indent.any():
            for g in group[~indent].tolist():
                out[g] = True
            continue
        strict = per_entry and len(group) <= ENTRY_LINES
        for g in group[1:].tolist():
            f = int(first[g])
            head = words[f]
            if (_AUTHOR.match(head) and _ENDS_ENTRY.search(words[last[g - 1]])
                    and head not in ("In", "Proceedings", "Journal", "The")
                    and (not strict or (f + 1 < len(words) and _INITIALS.match(words[f + 1])))):
                out[g] = True
    return out
