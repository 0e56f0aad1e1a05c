"""Every block's category: VILA's S2-VL layout labels from rules on the grouped page.

`label_words(doc)` takes a grouped document (words, boxes, pages, line ids, block ids and
page sizes: `group_layout`'s output, or Poppler's groups) and gives each word the label of
its block, as an int8 code into `LABELS`; the codes are VILA's S2-VL ids (its
`datasets/s2-vl-utils/config.json`, `selected_categories` in order; default `Paragraph`).

The rules, in order of precedence (a block keeps the first label it gets; the rest are
paragraphs), each from what the page already tells (docs/layout-groups.md, "Labels"):

1. header / footer: a block in the page's top or bottom band or side margins whose text
   (letters only) recurs at about the same height on other pages, or a page number there
   (a number alone whose offset from its page the document's page numbers share);
2. caption: a block starting with a caption prefix in any language of the corpora
   ("Figure 3:", "Fig. 2.", "Table II", "Tabela 1 -", "Quadro 2", "그림 1", "<표 2>", ...);
   algorithm: the blocks an algorithm's caption ("Algorithm 2:", "Algoritmo 1.") heads,
   below it in its column up to the float's end (a gap of two lines, or running text),
   and a block opening with "Algorithm N" that holds pseudocode (Require:, Input:, ←);
3. table: a block most of whose lines hold cell gaps (spaces of >= 1.5 heights);
4. equation: a short block dense in mathematical symbols, or ending in an equation
   number "(12)" with some;
5. figure: text set sideways inside the page (an axis title);
6. section: a short isolated block, numbered or set larger than the body, or a known
   heading's name ("Introduction", "References", "Referências", "참고문헌", ...);
7. bibliography: the blocks after a reference-list heading, up to a heading that closes
   it or a page without entries, and runs of blocks shaped like entries ("[12] ...",
   "Smith, J. (2001)") in the document's latter part;
8. footnote: a block set smaller than the body at the foot of its column;
9. first page: keywords (by prefix), title (the largest type in its upper part), authors
   (after the title), abstract (after its heading, or the first block of running text);
10. list: a block starting with a bullet or an item label ("•", "(a)", "1)", "i)").

Everything is per block (a few dozen per page), mostly NumPy over the blocks; text is read
only from the first words of each block and from short blocks. Deterministic: no sets or
dicts iterated for a result, every sort stable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import compress

import numpy as np

from ..labels import CODE, LABELS
from ..records import Document
from .geometry import expand, run_sizes, run_starts
from .regions import GROUPINGS, Grouped, group_columns, poppler_groups, words_matching

PARAGRAPH = CODE["paragraph"]
# in the tool version the run state fingerprints (as GROUP_RULE): bump when any rule changes
LABEL_RULE = "labels3"

# share of the page height that is the top (bottom) band where running headers (footers) are
BAND = 0.14
# share of the page width that is a side margin (running titles set sideways, page numbers)
SIDE = 0.08
# a header's text must recur on this many other pages (at least), within this many heights
REPEAT_PAGES = 1
REPEAT_SLACK = 2.0
# a short block wholly in the page's top (bottom) edge is a running header (footer) by its
# place alone: what layout programs put there is the running head and the page number
# (issue 43: these two shares reach header F1 0.94 and footer recall 0.91 on held-out files)
TOP_EDGE = 0.075
BOTTOM_EDGE = 0.08
# ... when set apart from the page's other text by this many of its own heights (a body
# line running into the edge has only its leading to the next line; checked on the
# tuning half: IRS body lines at 3.7 % of the page, a Word sheet's at 93 %)
EDGE_GAP = 1.0
# a line holding a space this many heights wide is a table row (blocks.CELL_GAP)
CELL_GAP = 1.5


def _any_word(*words: str) -> str:
    """An expression matching any of `words` (expressions, each opening with a letter),
    behind a lookahead on their initials: a text that opens with none fails at its first
    character instead of at each word in turn (under IGNORECASE the engine skips no word
    by its first letter), so the scan of every block's first word for a caption's costs
    half, and a heading's name is tested in half the time."""
    if not all(w[:1].isalpha() for w in words):
        raise ValueError(f"a word not opening with a letter: {words}")
    return rf"(?=[{''.join(sorted({w[0] for w in words}))}])(?:{'|'.join(words)})"


_CAPTION_WORDS = (r"fig(?:ure|\.|s\.?)?", "figura", r"gr[áa]fico", "graph", "chart", "table",
                  r"tab\.?", "tableau", "tabla", "tabela", "cuadro", "quadro", "plate", "scheme",
                  r"sch[ée]ma", "esquema", "mapa", "map", "imagem", "imagen", "illustration",
                  r"ilustra[çc][ãa]o", "photo", "foto", "exhibit", "box", "algorithm",
                  "algoritmo", "listing", "planche", "carte", r"gráf\.", "diagrama", "diagram")
_CAPTION_WORDS_KO = ("그림", "표", "도표", "사진", "그래프")
# the prefix and its number: "Figure 3:", "Fig. 2.", "TABLE IV", "Tabela 1 -", "Fig.3"
CAPTION = re.compile(rf"[<\[(]?{_any_word(*_CAPTION_WORDS)}\s*(?:[A-Z]?\d+(?:[.\-–]\d+)*[a-z]?|"
                     r"[IVXLC]+|[A-Z])(?P<mark>\s*[.:|—–\-)>\]])?(?:\s|$)", re.IGNORECASE)
# a first word a caption may open with ("Figure", "Fig.3:", "TABLE", "<표", "그림1.")
CAPTION_FIRST = re.compile(rf"^[<\[(]?{_any_word(*_CAPTION_WORDS, *_CAPTION_WORDS_KO)}"
                           r"[\w.:\-–>\]]*$", re.IGNORECASE | re.MULTILINE)
CAPTION_KO = re.compile(rf"[<\[(]?(?:{'|'.join(_CAPTION_WORDS_KO)})\s*\d")

# reference-list headings in the corpora's languages
REFERENCES = re.compile(
    r"^(?:[\dIVX]+\.?\s*)?"
    + _any_word(r"references?(?:\s+cited)?", "bibliography", r"literature(?:\s+cited)?",
                r"literatura\s+citada", r"works\s+cited",
                r"refer[êe]ncias(?:\s+bibliogr[áa]ficas)?",
                r"r[ée]f[ée]rences(?:\s+bibliographiques)?", "bibliographie",
                r"referencias(?:\s+bibliogr[áa]ficas)?", r"bibliograf[íi]a", r"obras\s+citadas",
                r"참고\s*문헌", "참고문헌", "인용문헌")
    + r"\s*:?$", re.IGNORECASE)
# headings that close a reference list (what may follow it)
AFTER_REFERENCES = re.compile(
    r"^(?:[A-Z\d]+[.:]?\s*)?(?:appendix|appendices|annex|anexo|annexe|ap[êe]ndice|"
    r"supplementary|supporting|acknowledg|agradecimento|remerciement|agradecimiento|"
    r"biograph|about the author|notes?$|부록|감사)", re.IGNORECASE)
# section headings known by name (unnumbered ones included)
HEADING_WORDS = re.compile(
    r"^(?:[\dIVX]+(?:\.\d+)*\.?\s+)?"
    + _any_word("abstract", "introduction", "conclusions?", "discussion", "results?", "methods?",
                "methodology", r"materials\s+and\s+methods", r"related\s+work", "background",
                "acknowledg(?:e)?ments?", "appendix", "summary", "resumo", "resumen",
                "r[ée]sum[ée]", "introdu[çc][ãa]o", "introducci[óo]n", "conclus[ãa]o",
                "conclusiones?", "conclusi[óo]n", "discuss[ãa]o", "discusi[óo]n", "metodologia",
                "metodolog[íi]a", "m[ée]thodologie", "résultats", "resultados",
                "agradecimentos", "서론", "결론", "요약", "초록", "연구방법", r"연구\s*방법",
                "논의", "고찰")
    + r"\b", re.IGNORECASE)
ABSTRACT_HEAD = re.compile(r"^(?:abstract|summary|resumo|resumen|r[ée]sum[ée]|초록|요약|"
                           r"국문\s*초록|영문\s*초록)\b[\s.:—–-]*", re.IGNORECASE)
KEYWORDS = re.compile(r"^(?:key\s*-?\s*words?|index\s+terms|palavras[\s-]*chave|"
                      r"palabras\s+clave|mots[\s-]*cl[ée]s|descriptores|descritores|"
                      r"키워드|주제어|핵심어|keywords)\b", re.IGNORECASE)
# a numbered heading: "1", "2.3", "IV.", "A.", "3.2.1." before a capitalised word
NUMBERED = re.compile(r"^(?:\d+(?:\.\d+){0,3}\.?|[IVX]+\.|[A-H]\.)$")
# a reference entry's start: "[12]", "12.", "(3)", or "Surname, I." / "SURNAME, I."
ENTRY = re.compile(r"^(?:\[\d+[a-z]?\]|\d+\.$|\(\d+\)$|[A-ZÀ-Ý][\w'’\-]+,$)")
# an entry's start in two words: "19 S." (a number, then an initial), "Smith J" / "Smith, J."
ENTRY2 = re.compile(r"^(?:\d{1,3}\.?\s+(?:[A-ZÀ-Ý]\.|[A-ZÀ-Ý][\w'’\-]+,)|"
                    r"[A-ZÀ-Ý][\w'’\-]+,?\s+(?:[A-ZÀ-Ý]\.|&))")
# a year, as reference entries hold one
YEAR = re.compile(r"\b(?:1[5-9]|20)\d\d[a-z]?\b")
# a list item's label
BULLET = re.compile(r"^(?:[•●◦▪▫■□‣∙·–—\-*∗⋆★►▶➢✓]|\(?[a-z]\)|\(?[ivx]+\)|\(?\d+\))$",
                    re.MULTILINE)
# an equation number at a line's end
EQUATION_NUMBER = re.compile(r"^\([A-Za-z]{0,3}[.\-]?\d[\w.\-′']{0,6}\)[.,]?$", re.MULTILINE)
# the characters of mathematics: operators, relations, Greek, brackets, scripts
MATH = re.compile(r"[=+−×÷·∑∏∫∮∂∇√∞≤≥≈≠≡∼∝∈∉⊂⊆∪∩∀∃→←↔⇒⇔^_|/<>()\[\]{}\u0391-\u03c9"
                  r"\u2200-\u22ff\U0001d400-\U0001d7ff]")
# a one-letter Latin word (a variable), with the space before it: searched in a text with
# a space put first, the scan jumps from space to space (a lookbehind, `(?<!\S)`, would be
# tried at every character: twice the cost of the whole count)
ONE_LETTER = re.compile(r"\s[A-Za-z](?!\S)")
# a footnote's mark opening its line: "3)", "(3)", "*", "†", "b", "12"
FOOTNOTE_MARK = re.compile(r"^(?:\(?\d{1,3}\)|[*†‡§¶]+\S*|[a-z]|\d{1,2})$")
PAGE_NUMBER = re.compile(
    r"^(?:p(?:age|ág|ag|\.)?\.?\s*)?(\d{1,4})(?:\s*(?:/|of|de|sur)\s*\d+)?$", re.IGNORECASE)
NOT_LETTERS = re.compile(r"[\W\d_]+")
_ASCII_NOT_LETTERS = bytes(c for c in range(128) if NOT_LETTERS.match(chr(c)))
# an algorithm float's caption, in the corpora's languages ("Algorithm 2:", "Algoritmo 1.")
ALGORITHM = re.compile(r"^(?:algorithm|algoritmo|algorithme|algorithmus|procedure|"
                       r"pseudo-?code|알고리즘)\s*\d+", re.IGNORECASE)
# what pseudocode holds and prose does not: its keywords and the assignment arrow
PSEUDOCODE = re.compile(r"(?:^|\s)(?:require|ensure|input|output|entrada|sa[íi]da|"
                        r"entr[ée]e|sortie):|←|:=", re.IGNORECASE)
# a display equation's block has at most this many lines
EQUATION_LINES = 6
# an algorithm's float ends at a gap this many body heights tall (after its caption, which
# a rule may follow: this many)
FLOAT_GAP = 2.0
CAPTION_GAP = 3.0


@dataclass
class Blocks:
    """Per block (contiguous runs of one block id), its extent and numbers."""

    start: np.ndarray  # first word
    count: np.ndarray  # words
    page: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    height: np.ndarray  # mean word height (font size proxy)
    lines: np.ndarray  # visual lines
    gap_lines: np.ndarray  # lines holding a cell gap
    short: np.ndarray  # words no wider than high (one or two characters: a formula's symbols)
    width: np.ndarray  # page width
    page_h: np.ndarray  # page height
    first_run: np.ndarray  # the block's first run (`Grouped`'s runs)

    def __len__(self) -> int:
        return len(self.start)


def blocks_of(g: Grouped) -> Blocks:
    """The blocks of `g`: runs of one block id (a block's words are contiguous and its
    id unique in the document, as every grouping gives them; a block is on one page)."""
    n = len(g)
    b, read_sizes = g.frame()  # a turned page as it was read, as the grouping saw it
    run_start = g.run_starts()
    block_run = run_starts(g.run_block)  # the runs that start a block
    line_run = run_starts(g.run_line)
    starts = run_start[block_run]
    count = run_sizes(starts, n)
    h = b[:, 3] - b[:, 1]
    line_start = run_start[line_run]
    is_line = np.zeros(len(g.run_count), dtype=np.int64)
    is_line[line_run] = 1
    # each line's widest space between consecutive words, in its own height
    gap = np.full(n, -np.inf)
    gap[1:] = b[1:, 0] - b[:-1, 2]
    gap[line_start] = -np.inf
    widest = np.maximum.reduceat(gap, line_start)
    line_h = np.maximum.reduceat(h, line_start)
    gapped = np.zeros(len(g.run_count), dtype=np.int64)
    gapped[line_run] = widest >= CELL_GAP * np.maximum(line_h, 1e-6)
    # a word of one or two characters, by its box: not wider than its height
    short = ((b[:, 2] - b[:, 0]) <= h).astype(np.int64)
    sizes = np.array([(0.0, 0.0), *read_sizes])
    page = g.run_page[block_run]
    known = np.where((page > 0) & (page < len(sizes)), page, 0)  # a bad page: size 0
    return Blocks(start=starts, count=count, page=page,
                  x0=np.minimum.reduceat(b[:, 0], starts),
                  y0=np.minimum.reduceat(b[:, 1], starts),
                  x1=np.maximum.reduceat(b[:, 2], starts),
                  y1=np.maximum.reduceat(b[:, 3], starts),
                  height=np.add.reduceat(h, starts) / count,
                  lines=np.add.reduceat(is_line, block_run),
                  gap_lines=np.add.reduceat(gapped, block_run),
                  short=np.add.reduceat(short, starts),
                  width=sizes[known, 0], page_h=sizes[known, 1],
                  first_run=block_run)


def label_words(doc: Document, cut: np.ndarray | None = None) -> np.ndarray:
    """Each word's label code (int8 into LABELS) from its block's label. `cut` marks the
    words a build removed as an abstract (they are labelled `abstract`, and place the
    title, authors and keywords around them)."""
    return _label_words(Grouped.of(doc), cut)


def _label_words(g: Grouped, cut: np.ndarray | None = None) -> np.ndarray:
    if len(g) == 0:
        return np.zeros(0, dtype=np.int8)
    return _word_labels(g, blocks_of(g), cut)


def _word_labels(g: Grouped, blocks: Blocks, cut: np.ndarray | None = None) -> np.ndarray:
    """Each word's label code, its block's (`label_blocks`)."""
    return label_blocks(g, blocks, cut).repeat(blocks.count).astype(np.int8)


def labels_of(doc: Document) -> np.ndarray:
    """`doc.labels` as int8 codes; a document the group step did not label (one made by
    hand, a test's) is labelled here from its groups."""
    if len(doc.labels) == len(doc.words):
        return np.asarray(doc.labels, dtype=np.int8)
    return label_words(doc)


def label_counts(doc: Document) -> dict[str, int]:
    """Words per label (labels with none left out), in LABELS' order."""
    counts = np.bincount(labels_of(doc).astype(np.int64), minlength=len(LABELS))
    return {LABELS[k]: int(c) for k, c in enumerate(counts.tolist()) if c}


def label_blocks(g: Grouped, k: Blocks, cut: np.ndarray | None = None) -> np.ndarray:
    """One label code per block (`blocks_of`), by the rules in the module's docstring."""
    nb = len(k)
    words = g.words
    label = np.full(nb, -1, dtype=np.int64)
    read, _ = g.frame()
    body_h = float(np.median(read[:, 3] - read[:, 1]))
    first = list(map(words.__getitem__, k.start.tolist()))
    # the first words of the blocks a caption prefix may open (one scan of all first words)
    head = _heads(words, k, words_matching(CAPTION_FIRST, first))

    def give(mask: np.ndarray, name: str) -> None:
        label[mask & (label < 0)] = CODE[name]

    captions = _captions(k, head, body_h)
    # a caption repeated over a table's pages at the same place is still a caption
    give(_running(words, k) & ~captions, "header")
    # below the page's middle is a footer, but in a side margin (a running title set
    # sideways, a page number beside the text) only at the foot of the page
    low = (k.y0 + k.y1) / 2 > k.page_h / 2
    foot = k.y0 >= (1 - BAND) * k.page_h
    footers = (label == CODE["header"]) & np.where(_side_margin(k), foot, low)
    label[footers] = CODE["footer"]
    if cut is not None and len(cut) == len(words):
        cut_share = np.add.reduceat(cut.astype(np.int64), k.start) / k.count
        give(cut_share > 0.5, "abstract")
    give(_algorithms(words, k, head, captions, body_h) & ~captions, "algorithm")
    give(captions, "caption")
    free = label < 0  # what is still to label: the rules below give only to these
    # an equation number counts only in a block short enough to be an equation's (a
    # paragraph's last word is not read)
    numbered_eq = _ends_in_number(words, k, free & (k.lines <= EQUATION_LINES))
    math = _math_share(words, k, numbered_eq, free)
    give((k.gap_lines >= np.maximum(2, 0.5 * k.lines)) & (math < 0.35), "table")
    give(_equations(k, math, numbered_eq), "equation")
    # text set sideways inside the page (an axis title): a figure's
    sideways = ((k.y1 - k.y0) > 3 * (k.x1 - k.x0)) & (k.lines == 1) & ~_side_margin(k)
    give(sideways, "figure")
    heading = _headings(words, k, body_h, label < 0)
    refs_head = _matching(REFERENCES, words, k, heading)
    bib = _bibliography(words, k, heading, refs_head, label, body_h)
    label[bib & heading & ~refs_head] = CODE["bibliography"]
    give(heading, "section")
    give(bib, "bibliography")
    give(_footnotes(k, body_h, label), "footnote")
    first_page = k.page == (k.page.min() if nb else 0)
    _front_matter(words, k, _heads(words, k, first_page), body_h, label, cut)
    give(_matching_words(BULLET, first, (label < 0) & (k.lines <= 12)), "list")
    label[label < 0] = PARAGRAPH
    return label


def _matching(pattern: re.Pattern[str], words: list[str], k: Blocks, which: np.ndarray
              ) -> np.ndarray:
    """Which of the blocks `which` marks `pattern` matches, by their texts stripped."""
    out = np.zeros(len(k), dtype=bool)
    idx = which.nonzero()[0]
    out[idx] = [pattern.match(text.strip()) is not None
                for text in _joined(words, k.start[idx], k.count[idx])]
    return out


def _joined(words: list[str], start: np.ndarray, count: np.ndarray) -> list[str]:
    """The texts of the words start[i]..start[i]+count[i]-1, joined by spaces (mapped in
    C: a Python loop per text costs more than the join)."""
    starts = start.tolist()
    return list(map(" ".join, map(words.__getitem__,
                                  map(slice, starts, (start + count).tolist()))))


def _heads(words: list[str], k: Blocks, which: np.ndarray) -> list[str]:
    """The first four words of the blocks `which` marks ("" for the others)."""
    out = [""] * len(k)
    idx = which.nonzero()[0]
    for i, text in zip(idx.tolist(), _joined(words, k.start[idx], np.minimum(k.count[idx], 4))):
        out[i] = text
    return out


def _opened(head: list[str]) -> Iterator[int]:
    """The blocks `_heads` read (a few in a page's dozens: picked in C, not by a Python
    loop over them all)."""
    return compress(range(len(head)), head)


def _running(words: list[str], k: Blocks) -> np.ndarray:
    """Running headers and footers: blocks in the top or bottom band whose text, digits
    masked, recurs on another page at about the same height (a journal's name, the
    authors, 'Page # of #'); a lone page number in the band; and a one-line block set
    apart in the page's very edge (TOP_EDGE, BOTTOM_EDGE), where a running head stands on
    pages whose head recurs nowhere (a one-page file, a first page's imprint), unless it
    reads as a footnote's line (`_note_like`); a body paragraph's last two lines can
    stand at the edge too, hence one line."""
    band = ((k.y1 <= BAND * k.page_h) | (k.y0 >= (1 - BAND) * k.page_h)
            | _side_margin(k)) & (k.lines <= 2)
    out = _apart_at_edge(k, band & (k.lines == 1))
    out[out] = ~_note_like(words, k, out.nonzero()[0])
    idx = band.nonzero()[0]
    if not len(idx):
        return out
    texts = _joined(words, k.start[idx], k.count[idx])
    out[idx[_recurs(k, idx, _text_keys(texts))]] = True
    out[idx[_page_numbers(k, idx, texts)]] = True
    return out


def _apart_at_edge(k: Blocks, which: np.ndarray) -> np.ndarray:
    """Which of the blocks `which` marks lie wholly in the page's top (bottom) edge with
    no other block of the page beside or below (above) them within EDGE_GAP of their
    height: a running head by its place (`_running`). A few blocks per page are at an
    edge: a loop over those, each against its page's blocks (blocks come page by page)."""
    top = k.y1 <= TOP_EDGE * k.page_h
    bottom = k.y0 >= (1 - BOTTOM_EDGE) * k.page_h
    out = which & (top | bottom)
    first = np.searchsorted(k.page, k.page, side="left")
    last = np.searchsorted(k.page, k.page, side="right")
    for i in out.nonzero()[0].tolist():
        j = np.arange(first[i], last[i])
        j = j[(j != i) & (k.x0[j] < k.x1[i]) & (k.x1[j] > k.x0[i])]  # across from it
        reach = EDGE_GAP * k.height[i]
        near = ((k.y0[j] < k.y1[i] + reach) & (k.y1[j] > k.y0[i] - reach))
        out[i] = not near.any()
    return out


def _note_like(words: list[str], k: Blocks, idx: np.ndarray) -> np.ndarray:
    """Which of the blocks `idx` below the page's middle read as a footnote's line, not
    a running foot: opening with a note mark ("3)", "*", "b") or ending a sentence
    (one-line footnotes stand in the bottom edge too: a Korean SSRN paper's, SciELO's)."""
    low = (k.y0[idx] + k.y1[idx]) / 2 > k.page_h[idx] / 2
    first = [words[i] for i in k.start[idx].tolist()]
    last = [words[i] for i in (k.start[idx] + k.count[idx] - 1).tolist()]
    note = np.array([FOOTNOTE_MARK.match(f) is not None or (n > 1 and w.endswith("."))
                     for f, w, n in zip(first, last, k.count[idx].tolist())], dtype=bool)
    return low & note


def _text_keys(texts: list[str]) -> np.ndarray:
    """Each text's key, a number shared by the texts of the same letters (in lower case:
    a page number on the left of even pages and the right of odd ones, or another number,
    leaves the same letters); fewer than four letters are no evidence: a key of its own."""
    number: dict[str, int] = {}
    keys = []
    for j, text in enumerate(texts):
        letters = _letters(text)
        key = letters if len(letters) >= 4 else f"\x00{j}"  # "\x00" is no letter
        keys.append(number.setdefault(key, len(number)))
    return np.array(keys, dtype=np.int64)


def _letters(text: str) -> str:
    """`text` in lower case less NOT_LETTERS; an ASCII text through a bytes table, a
    third of the cost of the expression (whose class tests each character by category)."""
    low = text.lower()
    if low.isascii():
        return low.encode().translate(None, _ASCII_NOT_LETTERS).decode()
    return NOT_LETTERS.sub("", low)


def _recurs(k: Blocks, idx: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """For each of the blocks `idx` (their text `keys`), whether blocks of its key on
    REPEAT_PAGES other pages or more stand at its height, within REPEAT_SLACK of its
    height (plus 1 % of the page): the pairs of every key's blocks at once (a loop over
    the keys cost a dozen NumPy calls each)."""
    out = np.zeros(len(idx), dtype=bool)
    shared = (np.bincount(keys)[keys] > 1).nonzero()[0]
    if not len(shared):
        return out
    by_key = shared[keys[shared].argsort(kind="stable")]  # positions in idx, key by key
    group = run_starts(keys[by_key])
    group_size = run_sizes(group, len(by_key))
    size = group_size.repeat(group_size)  # each member's
    # every (member a, member b) pair of one key
    a = np.arange(len(by_key)).repeat(size)
    b = expand(group.repeat(group_size), size)
    blocks = idx[by_key]
    mid = (k.y0[blocks] + k.y1[blocks]) / 2
    page = k.page[blocks]
    slack = REPEAT_SLACK * k.height[blocks] + 0.01 * k.page_h[blocks]
    near = (np.abs(mid[b] - mid[a]) <= slack[a]) & (page[b] != page[a])
    # the other pages each member has a near partner on, each counted once
    pages = int(page.max()) + 1
    pairs = np.sort(a[near] * pages + page[b[near]])  # nearly sorted: by a already
    new_page = np.ones(len(pairs), dtype=bool)
    new_page[1:] = pairs[1:] != pairs[:-1]
    out[by_key] = np.bincount(pairs[new_page] // pages, minlength=len(by_key)) >= REPEAT_PAGES
    return out


def _side_margin(k: Blocks) -> np.ndarray:
    """Blocks in the page's left or right margin (a running title set sideways, a page
    number beside the text)."""
    return (k.x1 <= SIDE * k.width) | (k.x0 >= (1 - SIDE) * k.width)


def _page_numbers(k: Blocks, idx: np.ndarray, texts: list[str]) -> np.ndarray:
    """Which band blocks `idx` (their `texts`) are page numbers: a number alone ("12",
    "- 12 -", "Page 12", "12 / 20") whose value minus its page is the offset most such
    numbers of the document share (two at least; any number on a one-page document)."""
    value = np.full(len(idx), -1, dtype=np.int64)
    for j in (k.count[idx] <= 4).nonzero()[0].tolist():
        m = PAGE_NUMBER.match(texts[j].strip(" -–—|"))
        if m is not None:
            value[j] = int(m.group(1))
    found = value >= 0
    # numbers in a side margin: a page number there stands alone on its page, line
    # numbers (a preprint's) come by the dozen
    side = found & _side_margin(k)[idx]
    if side.any():
        per_page = np.bincount(k.page[idx][side], minlength=int(k.page.max()) + 1)
        found &= ~side | (per_page[k.page[idx]] <= 2)
    if not found.any():
        return found
    if k.page.min() == k.page.max():  # one page
        return found
    offset = value - k.page[idx]
    least = int(offset[found].min())
    counts = np.bincount(offset[found] - least)
    best = int(counts.argmax())  # ties: the smallest offset
    if counts[best] < 2:
        return np.zeros(len(idx), dtype=bool)
    return found & (offset == least + best)


def _captions(k: Blocks, head: list[str], body_h: float) -> np.ndarray:
    """Blocks that open with a caption prefix and its number; a prefix followed by a
    number without punctuation only when the block is not set like running text."""
    out = np.zeros(len(k), dtype=bool)
    for i in _opened(head):  # no caption word first: neither pattern can match
        text = head[i]
        m = CAPTION.match(text)
        if m is None:
            m = CAPTION_KO.match(text)
            if m is not None:
                out[i] = True
            continue
        # the number with a caption's punctuation after it (else "Figure 3 shows" may be
        # a sentence), or nothing after it
        marked = m.group("mark") is not None or m.end() >= len(text.rstrip())
        small = k.height[i] < 0.95 * body_h
        out[i] = marked or small or (k.lines[i] <= 1 and k.count[i] <= 12)
    return out


def _algorithms(words: list[str], k: Blocks, head: list[str], captions: np.ndarray,
                body_h: float) -> np.ndarray:
    """The blocks of algorithm floats: those below an algorithm's caption on its page and
    in its column, up to a gap taller than `FLOAT_GAP` body heights (the float's end) or
    another caption, and a block that opens with "Algorithm N" and holds pseudocode (a
    float whose caption and body are one block)."""
    out = np.zeros(len(k), dtype=bool)
    for i in _opened(head):
        if ALGORITHM.match(head[i]) is None:
            continue
        if not captions[i]:
            out[i] = k.lines[i] >= 2 and PSEUDOCODE.search(_text(words, k, i)) is not None
            continue
        bottom = float(k.y1[i])
        for j in range(i + 1, len(k)):
            below = k.y0[j] >= k.y1[i] - 0.5 * body_h
            in_column = k.x1[i] > k.x0[j] >= k.x0[i] - 2 * body_h
            gap = CAPTION_GAP if bottom == float(k.y1[i]) else FLOAT_GAP
            near = k.y0[j] - bottom <= gap * body_h
            if k.page[j] != k.page[i] or captions[j] or not (below and in_column and near) \
                    or _prose(words, k, j) and PSEUDOCODE.search(_text(words, k, j)) is None:
                break  # the float ended: the page goes on, or running text follows it
            out[j] = True
            bottom = max(bottom, float(k.y1[j]))
    return out


def _text(words: list[str], k: Blocks, i: int) -> str:
    s = int(k.start[i])
    return " ".join(words[s:s + int(k.count[i])])


def _math_share(words: list[str], k: Blocks, numbered: np.ndarray, free: np.ndarray
                ) -> np.ndarray:
    """Share of mathematical characters (and one-letter Latin words) among the characters
    of the `free` blocks of EQUATION_LINES lines or fewer of which a third of the words or
    more are one or two characters long (a formula's symbols; running text has fewer), or
    that end in an equation number; 0 for the others."""
    out = np.zeros(len(k))
    symbols = 3 * k.short >= k.count
    idx = (free & (k.lines <= EQUATION_LINES) & (symbols | numbered)).nonzero()[0]
    share = []
    for text, n in zip(_joined(words, k.start[idx], k.count[idx]), k.count[idx].tolist()):
        chars = len(text) - (n - 1)
        hits = len(MATH.findall(text)) + len(ONE_LETTER.findall(" " + text))
        share.append(hits / chars if chars > 0 else 0.0)
    out[idx] = share
    return out


def _ends_in_number(words: list[str], k: Blocks, which: np.ndarray) -> np.ndarray:
    """Which of the blocks `which` marks end in an equation number."""
    out = np.zeros(len(k), dtype=bool)
    idx = which.nonzero()[0]
    last = list(map(words.__getitem__, (k.start[idx] + k.count[idx] - 1).tolist()))
    out[idx] = words_matching(EQUATION_NUMBER, last)
    return out


def _matching_words(pattern: re.Pattern[str], ws: list[str], which: np.ndarray
                    ) -> np.ndarray:
    """`words_matching` over the words `which` marks (False for the others)."""
    out = np.zeros(len(ws), dtype=bool)
    idx = which.nonzero()[0]
    out[idx] = words_matching(pattern, list(map(ws.__getitem__, idx.tolist())))
    return out


def _equations(k: Blocks, math: np.ndarray, numbered: np.ndarray) -> np.ndarray:
    """Display equations: short blocks dense in mathematics, or ending in an equation
    number with some mathematics."""
    short = k.lines <= EQUATION_LINES
    return short & ((math >= 0.3) | (numbered & (math >= 0.1)))


def _headings(words: list[str], k: Blocks, body_h: float, free: np.ndarray) -> np.ndarray:
    """Section headings among the `free` blocks: blocks of one or two lines and few words
    that are numbered, or set larger than the body, or a known heading's name; never
    ending like a sentence."""
    out = np.zeros(len(k), dtype=bool)
    large = k.height >= 1.12 * body_h
    # what can be a heading: large type, or one line; and at most 6 words unless
    # numbered or large (a known name, a reference list's heading, capitals)
    cand = (free & (k.lines <= 2) & (k.count <= 16) & (large | (k.lines == 1))).nonzero()[0]
    hits = []
    for s, n, big in zip(k.start[cand].tolist(), k.count[cand].tolist(), large[cand].tolist()):
        last = words[s + n - 1]
        if last.endswith((",", ";")) or (n > 4 and last.endswith(".")):
            hits.append(False)
        elif big or (n >= 2 and _numbered(words[s], words[s + 1])):
            hits.append(True)
        else:
            hits.append(n <= 8 and _heading_text(" ".join(words[s:s + n]), n))
    out[cand] = hits
    return out


def _heading_text(text: str, n: int) -> bool:
    """A heading's text of `n` words: a known heading's name (of six words at most), a
    reference list's heading, or capitals (four letters or more)."""
    return ((n <= 6 and HEADING_WORDS.match(text) is not None)
            or REFERENCES.match(text) is not None
            or (text.isupper() and sum(c.isalpha() for c in text) >= 4))


def _numbered(first: str, second: str) -> bool:
    """A heading's number ("2", "3.1.", "IV.", "B.") before a word that is not lower case."""
    return (NUMBERED.match(first) is not None and second[:1].isalpha()
            and not second[:1].islower())


def _bibliography(words: list[str], k: Blocks, heading: np.ndarray, refs_head: np.ndarray,
                  label: np.ndarray, body_h: float) -> np.ndarray:
    """The blocks after a reference-list heading up to the next heading that closes it (a
    known closing heading, or a heading set larger than the entries); and runs of three or
    more blocks shaped like entries ("[12] ...", "12. ...", "19 S. Name", "Name, A.")."""
    out = _after_references(words, k, heading, refs_head, label, body_h)
    # without a heading, entries are looked for in the document's latter part only (a
    # first page's numbered affiliations are no reference list)
    last_page = int(k.page.max()) if len(k) else 0
    entry = (((label < 0) | heading) & ((k.page >= 0.4 * last_page) | (last_page <= 2))
             & (k.count >= 5) & ~out)
    idx = entry.nonzero()[0]
    entry[idx] = [ENTRY.match(words[s]) is not None
                  or ENTRY2.match(" ".join(words[s:s + 2])) is not None
                  for s in k.start[idx].tolist()]
    entry |= out
    # runs of three entries or more (the list's own blocks count as entries)
    return (out | _in_runs(entry, 3)) & ((label < 0) | heading)


def _in_runs(mask: np.ndarray, least: int) -> np.ndarray:
    """Which elements of `mask` lie in a run of at least `least` consecutive True."""
    padded = np.zeros(len(mask) + 2, dtype=np.int8)
    padded[1:-1] = mask
    edge = padded[1:] - padded[:-1]
    starts, ends = (edge == 1).nonzero()[0], (edge == -1).nonzero()[0]
    long = ends - starts >= least
    mark = np.zeros(len(mask) + 1, dtype=np.int64)
    mark[starts[long]] = 1
    mark[ends[long]] = -1
    return mark[:-1].cumsum() > 0


def _after_references(words: list[str], k: Blocks, heading: np.ndarray,
                      refs_head: np.ndarray, label: np.ndarray, body_h: float) -> np.ndarray:
    """The blocks after a reference-list heading, up to the next heading that closes it
    (a known closing heading, or one set larger than the entries), skipping blocks in a
    column left of the list and ending at a page without entries."""
    out = np.zeros(len(k), dtype=bool)
    heads = refs_head.nonzero()[0]
    if not len(heads):
        return out
    # the blocks from the first heading on (a list is at a document's end), as lists
    tail = slice(int(heads[0]), len(k))
    refs, taken = refs_head[tail].tolist(), (label[tail] >= 0).tolist()
    is_heading, page = heading[tail].tolist(), k.page[tail].tolist()
    x0, x1, height = k.x0[tail].tolist(), k.x1[tail].tolist(), k.height[tail].tolist()
    start, count = k.start[tail].tolist(), k.count[tail].tolist()
    inside = False
    ref_h = body_h
    last = -1  # the heading or the last entry
    for i in range(len(refs)):  # block tail.start + i
        if refs[i]:
            inside, ref_h, last = True, 0.0, i
            continue
        if not inside or taken[i]:
            continue
        if page[i] == page[last] and x1[i] <= x0[last]:
            continue  # the order went back to a column left of the list: not of it
        if page[i] != page[last] and not _entries_page(words, k, label, page[i]):
            inside = False  # a page without entries (a back cover, an appendix)
            continue
        s = start[i]
        if is_heading[i]:
            text = " ".join(words[s:s + count[i]])
            if AFTER_REFERENCES.match(text) or (height[i] > 1.08 * ref_h and ref_h > 0
                                                 and not ENTRY.match(words[s])):
                inside = False
                continue
        if ref_h == 0.0:
            ref_h = height[i]
        out[tail.start + i] = True
        last = i
    return out


def _entries_page(words: list[str], k: Blocks, label: np.ndarray, page: int) -> bool:
    """Whether most unlabelled blocks of `page` look like reference entries: they start
    like one or hold a year."""
    on = ((k.page == page) & (label < 0)).nonzero()[0]
    if not len(on):
        return True
    hits = 0
    for i in on.tolist():
        s = int(k.start[i])
        ws = words[s:s + int(k.count[i])]
        hits += bool(ENTRY.match(ws[0]) or ENTRY2.match(" ".join(ws[:2]))
                     or YEAR.search(" ".join(ws)))
    return 2 * hits >= len(on)


def _footnotes(k: Blocks, body_h: float, label: np.ndarray) -> np.ndarray:
    """Blocks set smaller than the body in the page's lower part with no block of body
    text below them in their column (footers aside)."""
    small = ((k.height < 0.9 * body_h) & (k.y0 > 0.5 * k.page_h) & (label < 0)
             & (k.count >= 3)).nonzero()[0]
    out = np.zeros(len(k), dtype=bool)
    body = ((k.height >= 0.95 * body_h) & (label < 0) & (k.count >= 4)).nonzero()[0]
    body_page = k.page[body]  # blocks come page by page
    # every (small block, body block of its page) pair
    lo = body_page.searchsorted(k.page[small], side="left")
    hi = body_page.searchsorted(k.page[small] + 1, side="left")
    i = small.repeat(hi - lo)
    b = body[expand(lo, hi - lo)]
    below = (k.y0[b] > k.y1[i]) & (np.minimum(k.x1[b], k.x1[i]) > np.maximum(k.x0[b], k.x0[i]))
    out[small] = True
    out[i[below]] = False
    return out


def _front_matter(words: list[str], k: Blocks, head: list[str], body_h: float,
                  label: np.ndarray, cut: np.ndarray | None) -> None:
    """On the first page holding text: keywords (by their prefix); the title (the largest
    type in the page's upper 40 %, larger than the body); after it, in reading order, the
    authors (short blocks: names, affiliations, dates), then the abstract (after its
    heading, a block opening with its name, or the first block of three lines or more
    before the first section heading); the first other heading ends the front matter."""
    if not len(k):
        return
    p = k.page.min()
    on = (k.page == p).nonzero()[0]
    for i in on.tolist():
        if KEYWORDS.match(head[i]) and (label[i] < 0 or label[i] == CODE["section"]):
            label[i] = CODE["keywords"]
    free = on[(label[on] < 0) | (label[on] == CODE["section"])]
    upper = free[(k.y0[free] < 0.4 * k.page_h[free]) & (k.count[free] >= 2)]
    # a numbered or known heading is no title ("1 Introduction", "References")
    upper = upper[[not (NUMBERED.match(head[i].split(" ", 1)[0]) or HEADING_WORDS.match(head[i])
                        or REFERENCES.match(head[i])) for i in upper.tolist()]]
    if not len(upper):
        return
    title_h = k.height[upper].max()
    if title_h < 1.12 * body_h:
        return
    title = upper[(k.height[upper] >= 0.9 * title_h) & (k.count[upper] <= 40)]
    if not len(title):
        return
    label[title] = CODE["title"]
    for i in on[on > title.max()].tolist():
        if label[i] == CODE["abstract"]:  # the cut abstract
            break
        if label[i] == CODE["section"]:
            if not ABSTRACT_HEAD.match(head[i]):
                break  # the first section: no abstract found before it
            label[i] = CODE["abstract"]
            # its paragraphs: the blocks after it set to the first one's width
            nxt, first = i + 1, i + 1
            while (nxt < len(k) and k.page[nxt] == p and label[nxt] < 0 and k.lines[nxt] > 1
                   and abs(k.x0[nxt] - k.x0[first]) <= 2 and abs(k.x1[nxt] - k.x1[first]) <= 2):
                label[nxt] = CODE["abstract"]
                nxt += 1
            break
        if label[i] >= 0:
            continue
        if ABSTRACT_HEAD.match(head[i]) or _prose(words, k, i):
            label[i] = CODE["abstract"]
            break
        label[i] = CODE["author"]


def _prose(words: list[str], k: Blocks, i: int) -> bool:
    """Block i reads as running text: three lines or more, forty words or more, most of
    its words in lower case (a list of authors and affiliations is mostly capitals)."""
    if k.lines[i] < 3 or k.count[i] < 40:
        return False
    s = int(k.start[i])
    ws = words[s:s + int(k.count[i])]
    lower = sum(w[:1].islower() for w in ws)
    return 2 * lower >= sum(w[:1].isalpha() for w in ws)


def known_abstract(before: Document, after: Document) -> Document:
    """`after` (`before` less the words a build cut as abstracts and cover page) with the
    rules' guess of the abstract corrected by what the build found: a block the rules
    called `abstract` that lost none of its words to the cut is not the abstract (a "how
    to cite" box, an introduction's first paragraph), so it is running text again. A
    block the cut took words from keeps its label (the abstract's heading, a leftover)."""
    if len(after.labels) != len(after.words) or not after.words:
        return after
    labels = np.asarray(after.labels, dtype=np.int8)
    guessed = labels == CODE["abstract"]
    if not guessed.any():
        return after
    key_after = _block_keys(after)
    blocks_before, n_before = np.unique(_block_keys(before), return_counts=True)
    blocks_after, n_after = np.unique(key_after, return_counts=True)
    # every block left was a block before: the ones with all their words left lost none
    whole = n_before[np.searchsorted(blocks_before, blocks_after)] == n_after
    relabel = guessed & np.isin(key_after, blocks_after[whole])
    if not relabel.any():
        return after
    labels[relabel] = PARAGRAPH
    return replace(after, labels=labels.tolist())


def _block_keys(doc: Document) -> np.ndarray:
    """A key per word naming its block (its page and block id)."""
    pages = np.asarray(doc.word_pages, dtype=np.int64)
    return pages * (1 << 32) + np.asarray(doc.block_ids, dtype=np.int64)


def furniture_to_page_ends(g: Grouped, codes: np.ndarray, blocks: Blocks
                           ) -> tuple[Grouped, np.ndarray]:
    """The words reordered so that on every page the running headers come first and the
    running footers (page numbers included) last, each keeping its own block, every other
    block in its reading order; line and block ids renumbered to increase in the new order.

    Why after the labels: the page cut reads a header or footer line split by a gutter
    (a journal name left, a page number right) with the column each half sits over, so a
    page number came back between the left and the right column. Only labels tell page
    furniture from a column's last line; the words and boxes stay Poppler's. `blocks`
    are `g`'s (`blocks_of`)."""
    label = codes[blocks.start]
    rank = np.where(label == CODE["header"], 0, np.where(label == CODE["footer"], 2, 1))
    # pages in the order they come (a block is on one page: each block ranked by its
    # page's first block), then header/body/footer, then the reading order: a stable
    # sort of the blocks
    order = np.lexsort((rank, _page_ranks(blocks.page)))  # stable: the reading order within
    if (order == np.arange(len(order))).all():
        return g, codes
    runs_per_block = run_sizes(blocks.first_run, len(g.run_count))
    words = expand(blocks.start[order], blocks.count[order])
    moved = g.reordered(expand(blocks.first_run[order], runs_per_block[order]), words)
    return replace(moved, run_line=_renumbered(moved.run_line),
                   run_block=_renumbered(moved.run_block)), codes[words]


def _page_ranks(page: np.ndarray) -> np.ndarray:
    """A rank per block that orders pages as they first come: the page itself when the
    pages come in order (as every grouping gives them; np.unique's first indices cost
    ~50 us a document), else its first block."""
    if (page[1:] >= page[:-1]).all():
        return page
    _, first_seen, page_of = np.unique(page, return_index=True, return_inverse=True)
    return first_seen[page_of]


def _renumbered(ids: np.ndarray) -> np.ndarray:
    """Runs of one id numbered 0, 1, ... in their new order."""
    change = np.ones(len(ids), dtype=np.int64)
    change[1:] = ids[1:] != ids[:-1]
    return change.cumsum() - 1


Detector = Callable[[Document, np.ndarray], np.ndarray]


def group_and_label(doc: Document, how: str = "geometry",
                    detect: Detector | None = None) -> Document:
    """The one way a document gets its groups and labels (a build's group step,
    `loralay extract`, `api.extract`): regrouped (`layout.regroup`), then labelled
    (`label_groups`). `groups: poppler` keeps Poppler's order and ids."""
    return label_groups(group_for_labels(doc, how), how, detect)


def group_for_labels(doc: Document, how: str = "geometry") -> Grouped:
    """`group_and_label`'s first half, the grouping (`layout.regroup`'s, as columns):
    apart so that the benches time the grouping and the labels each."""
    if how == "geometry" and doc.words:
        return group_columns(doc)
    if how in ("geometry", "poppler"):
        return Grouped.of(poppler_groups(doc))
    raise ValueError(f"unknown grouping {how!r}: expected one of {GROUPINGS}")


def label_groups(g: Grouped, how: str = "geometry", detect: Detector | None = None
                 ) -> Document:
    """`group_and_label`'s second half, on the grouping `group_for_labels(doc, how)` gave:
    each block labelled (`detect` may relabel, `labels: rules+detector`), then, for our
    own grouping, page furniture to its page's ends; the document made once, at the
    end. The boxes as read are not carried on (read by the grouping and the labels)."""
    if len(g) == 0:
        return replace(g, read_boxes=None).document([])
    blocks = blocks_of(g)
    codes = _word_labels(g, blocks)
    if detect is not None:
        codes = detect(g.document(), codes)
    if how == "geometry":
        g, codes = furniture_to_page_ends(g, codes, blocks)
    return replace(g, read_boxes=None).document(codes.tolist())
